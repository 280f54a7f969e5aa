//! Finding out whether windows can be opened at all, before committing the
//! process's one and only event loop to it.

/// On X11 desktops: a connection to the X server named by `DISPLAY` can be
/// opened. The probe uses x11rb's pure-Rust client (already part of the
/// window stack), so it needs no system library and cannot abort the
/// process the way a failed Xlib call can.
#[cfg(all(
    unix,
    not(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "android",
        target_os = "redox",
        target_family = "wasm"
    ))
))]
pub(crate) fn probe() -> Result<(), String> {
    #[cfg(feature = "wayland")]
    if wayland_reachable() {
        return Ok(());
    }
    let display = std::env::var("DISPLAY").unwrap_or_default();
    if display.is_empty() {
        return Err(match std::env::var("WAYLAND_DISPLAY") {
            Ok(w) if !w.is_empty() && cfg!(feature = "wayland") => {
                format!("cannot connect to the Wayland display {w:?}, and DISPLAY is not set")
            }
            Ok(w) if !w.is_empty() => {
                "only WAYLAND_DISPLAY is set, and this build supports X11 (XWayland) only".into()
            }
            _ => "neither DISPLAY nor WAYLAND_DISPLAY is set".into(),
        });
    }
    // The probe runs before anything is on screen; a panic inside a
    // third-party connection routine must not take the caller down with it.
    // A server that is starting, or resetting as its last client leaves, drops
    // a connection mid-handshake: the probe tries again a few times.
    let mut last = String::new();
    for attempt in 0..3 {
        if attempt > 0 {
            std::thread::sleep(std::time::Duration::from_millis(150));
        }
        let opened = std::panic::catch_unwind(|| {
            x11rb::rust_connection::RustConnection::connect(Some(&display)).map(|_| ())
        });
        match opened {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => last = format!("cannot open X display {display:?}: {e}"),
            Err(_) => last = format!("cannot open X display {display:?}"),
        }
    }
    Err(last)
}

/// A Wayland compositor listens on `$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY`
/// (or an absolute `WAYLAND_DISPLAY`); a socket handed over in
/// `WAYLAND_SOCKET` is taken on trust, since probing it would consume it.
#[cfg(all(
    feature = "wayland",
    unix,
    not(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "android",
        target_os = "redox",
        target_family = "wasm"
    ))
))]
fn wayland_reachable() -> bool {
    if std::env::var_os("WAYLAND_SOCKET").is_some_and(|s| !s.is_empty()) {
        return true;
    }
    let Some(name) = std::env::var_os("WAYLAND_DISPLAY").filter(|s| !s.is_empty()) else {
        return false;
    };
    let name = std::path::PathBuf::from(name);
    let path = if name.is_absolute() {
        name
    } else {
        match std::env::var_os("XDG_RUNTIME_DIR") {
            Some(dir) => std::path::Path::new(&dir).join(name),
            None => return false,
        }
    };
    std::os::unix::net::UnixStream::connect(path).is_ok()
}

/// Elsewhere (Windows, macOS) a desktop session is the normal case and
/// there is no cheap, side-effect-free probe; the event loop reports the
/// rare failure itself.
#[cfg(not(all(
    unix,
    not(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "android",
        target_os = "redox",
        target_family = "wasm"
    ))
)))]
pub(crate) fn probe() -> Result<(), String> {
    Ok(())
}
