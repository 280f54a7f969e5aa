//! Native windows for VOML views: a back end of the low-level layer like the headless
//! raster, whose surfaces are windows.
//!
//! The visual-object engine is not `Send` and must keep its own thread, while window
//! systems want their event loop on the main thread. [`run`] starts the event loop here and
//! the engine on a worker thread, handing it a [`WindowBackend`]: the engine draws through
//! it as through any back end, and the LLVO core's commands ([`voml_llvo::Command`]) travel
//! to this thread, which carries them out on its own raster surfaces (one per window) and
//! shows them. What the user does (resizes, wheel zooms, drags, keys, quitting) goes back as
//! [`voml_llvo::BackendEvent`]s, which the engine reads with
//! [`Backend::poll_events`](voml_llvo::Backend::poll_events).
//!
//! ```no_run
//! use voml_llvo::{Backend, BackendEvent, Color, Llvo, OwnerId, Point, Primitive, Style, ViewSpec};
//! use voml_window::{run, WindowOptions};
//!
//! run(WindowOptions::default(), |backend| {
//!     let mut llvo = Llvo::new(backend);
//!     let view = llvo.create_view(ViewSpec::new("bars").window(400, 300)).unwrap();
//!     let bar = Primitive::Rectangle { from: Point::new(0.1, 0.0), to: Point::new(0.3, 0.7) };
//!     let style = Style::stroke(Color::BLACK, 1.0);
//!     llvo.draw(view, OwnerId::NONE, &bar, &style).unwrap();
//!     llvo.present(view).unwrap();
//!     // Until the user quits (q, Escape, closing the window).
//!     while !llvo.poll_events().contains(&BackendEvent::Quit) {
//!         std::thread::sleep(std::time::Duration::from_millis(16));
//!     }
//! })
//! .expect("windows");
//! ```
//!
//! Window systems: X11 on Linux and the BSDs (a Wayland desktop serves
//! these windows through XWayland), native Wayland with the `wayland`
//! feature, and the native ones on Windows and macOS.

#![warn(missing_docs)]

mod app;
mod backend;
mod display;
mod input;
mod overlay;
mod present;

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Duration;

pub use backend::WindowBackend;

/// How [`run`] behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowOptions {
    /// How long a window's size must stay unchanged before it is reported.
    pub resize_debounce: Duration,
    /// The colour shown before a view's first frame, and behind its
    /// transparent pixels.
    pub background: [u8; 3],
}

impl Default for WindowOptions {
    fn default() -> Self {
        WindowOptions {
            resize_debounce: Duration::from_millis(120),
            background: [255, 255, 255],
        }
    }
}

/// Why the windows could not be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowError {
    /// No window system can be reached from this process.
    NoDisplay {
        /// What was tried.
        reason: String,
    },
    /// The window system's event loop could not start (it must run on the
    /// main thread, at most once per process) or failed.
    EventLoop(String),
    /// A view's window could not be created.
    Window {
        /// The view.
        view: u32,
        /// The window system's message.
        message: String,
    },
    /// Pixels could not be shown in a view's window.
    Present {
        /// The view.
        view: u32,
        /// The window system's message.
        message: String,
    },
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowError::NoDisplay { reason } => {
                write!(
                    f,
                    "no display: set DISPLAY or run with --headless ({reason})"
                )
            }
            WindowError::EventLoop(m) => write!(f, "window event loop: {m}"),
            WindowError::Window { view, message } => {
                write!(f, "cannot open the window of view {view}: {message}")
            }
            WindowError::Present { view, message } => {
                write!(f, "cannot show view {view} in its window: {message}")
            }
        }
    }
}

impl std::error::Error for WindowError {}

/// Whether windows can be opened: on X11 systems, `DISPLAY` is set and a
/// connection to that X server really opens (with the `wayland` feature, a
/// reachable Wayland compositor also counts). Never panics and has no lasting
/// effect, so a program can call it to choose between windows and headless
/// output.
pub fn display_available() -> bool {
    display::probe().is_ok()
}

/// Runs the window system's event loop on this thread and `engine` on a worker thread,
/// drawing through the [`WindowBackend`] it is given: each surface it creates opens a window
/// (titled by the view), what it presents is shown, and the user's input reaches it as back-end
/// events. Returns what `engine` returned, once it has returned and its last pictures have
/// been shown; the windows close then. When the user quits (`q`, Escape, closing the last
/// window) the engine reads [`voml_llvo::BackendEvent::Quit`] and should return soon: until it
/// does, its drawing goes nowhere.
///
/// Must be called on the main thread, once per process (a limit of the window systems).
/// Fails without starting `engine` when no window system can be reached. `h` or `?` shows the
/// keys in the titles and prints them on stderr.
pub fn run<R: Send + 'static>(
    options: WindowOptions,
    engine: impl FnOnce(WindowBackend) -> R + Send + 'static,
) -> Result<R, WindowError> {
    run_many(options, 1, move |mut backends| {
        engine(backends.pop().expect("one back end"))
    })
}

/// View, image and owner numbers of the `k`th engine of [`run_many`] start at
/// `k * ENGINE_STRIDE` in the window thread.
pub(crate) const ENGINE_STRIDE: u32 = 1 << 24;

/// As [`run`], for `n` engines at once (several visual objects): `engine` gets one back end
/// for each, whose windows share the one event loop; what the user does in a window goes to
/// the engine that opened it, a quit and keys to all.
pub fn run_many<R: Send + 'static>(
    options: WindowOptions,
    n: usize,
    engine: impl FnOnce(Vec<WindowBackend>) -> R + Send + 'static,
) -> Result<R, WindowError> {
    display::probe().map_err(|reason| WindowError::NoDisplay { reason })?;
    let event_loop = app::event_loop()?;
    let (tx, rx) = mpsc::sync_channel(backend::IN_FLIGHT);
    let wake_pending = Arc::new(AtomicBool::new(false));
    let proxy = event_loop.create_proxy();
    let mut senders = Vec::with_capacity(n);
    let mut backends = Vec::with_capacity(n);
    for k in 0..n.max(1) {
        let (events_tx, events_rx) = mpsc::channel();
        senders.push(events_tx);
        backends.push(
            WindowBackend::new(tx.clone(), events_rx, proxy.clone(), wake_pending.clone())
                .nth(k as u32),
        );
    }
    drop(tx);
    let worker = std::thread::Builder::new()
        .name("voml-engine".into())
        .spawn(move || engine(backends))
        .map_err(|e| WindowError::EventLoop(format!("cannot start a thread: {e}")))?;
    let mut app = app::App::new(rx, senders, proxy, wake_pending, options);
    let result = event_loop.run_app(&mut app);
    let error = app.error.take();
    // The engine sees its windows gone (a quit) and returns.
    drop(app);
    let value = worker.join().map_err(|p| {
        WindowError::EventLoop(format!("the engine failed: {}", app::panic_text(p)))
    })?;
    if let Some(e) = error {
        return Err(e);
    }
    result.map_err(|e| WindowError::EventLoop(e.to_string()))?;
    Ok(value)
}
