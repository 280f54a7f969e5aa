//! `voml run` in a native window: under Xvfb the paper's bandwidth example opens its view,
//! and a capture of the screen shows its content (the red connections, blue bars and
//! globes), while the engine replays on its own thread.
//!
//! Needs `xvfb-run` (Debian: xvfb) and `import` (imagemagick); `scripts/test` installs them.
//! Without them the test is skipped with a note, unless `VOML_REQUIRE_TOOLS` is set (CI).

mod support;

use std::process::Command;

use support::{decode_png, root};

fn tools_available() -> bool {
    let have = |tool: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {tool}"))
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let found = have("xvfb-run") && have("import");
    if !found {
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "xvfb-run or import missing; install xvfb and imagemagick (scripts/test does)"
        );
        eprintln!("note: xvfb-run or import not found; window test skipped");
    }
    found
}

#[test]
fn the_bandwidth_view_is_on_screen_in_a_window() {
    if !tools_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("voml-window-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let capture = dir.join("screen.png");
    // The replay is slowed down (--speed) so that the window is still up when captured;
    // the capture is taken once the trace has been replayed (2.4 s of wall time) or nearly.
    let script = format!(
        "{voml} run examples/paper/bandwidth.voml --trace examples/paper/bandwidth.trf --speed 2 > {log} 2>&1 & \
         pid=$!; sleep 6; import -window root {capture}; kill $pid; wait $pid; true",
        voml = env!("CARGO_BIN_EXE_voml"),
        log = dir.join("voml.log").display(),
        capture = capture.display(),
    );
    let status = Command::new("xvfb-run")
        .args([
            "-a",
            "-s",
            "-screen 0 1280x800x24 -noreset",
            "sh",
            "-c",
            &script,
        ])
        .current_dir(root())
        .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"))
        .status()
        .expect("xvfb-run runs");
    assert!(status.success(), "xvfb-run failed: {status}");
    let log = std::fs::read_to_string(dir.join("voml.log")).unwrap_or_default();
    let bytes =
        std::fs::read(&capture).unwrap_or_else(|e| panic!("no capture ({e}); voml said:\n{log}"));
    let screen = decode_png(&bytes).unwrap();
    let count = |want: fn([u8; 4]) -> bool| {
        (0..screen.height)
            .flat_map(|y| (0..screen.width).map(move |x| (x, y)))
            .filter(|&(x, y)| want(screen.pixel(x, y).unwrap()))
            .count()
    };
    let red = count(|p| p[0] > 200 && p[1] < 60 && p[2] < 60);
    let blue = count(|p| p[2] > 200 && p[0] < 60 && p[1] < 60);
    let white = count(|p| p[0] > 245 && p[1] > 245 && p[2] > 245);
    assert!(
        white > 300_000,
        "the 700x700 view is not on screen ({white} white pixels); voml said:\n{log}"
    );
    assert!(
        red > 2_000,
        "no red connections on screen ({red} pixels); voml said:\n{log}"
    );
    assert!(
        blue > 500,
        "no blue utilisation bars on screen ({blue} pixels); voml said:\n{log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
