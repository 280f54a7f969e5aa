//! `voml run` in a native window: under Xvfb the paper's bandwidth example opens its view,
//! and a capture of the screen shows its content (the red connections, blue bars and
//! globes), while the engine replays on its own thread; and a user (xdotool) clicks, types
//! and drives the replay with its keys.
//!
//! Needs `xvfb-run` (Debian: xvfb), `import` (imagemagick) and `xdotool`; `scripts/test`
//! installs them.
//! Without them the test is skipped with a note, unless `VOML_REQUIRE_TOOLS` is set (CI).

mod support;

use std::process::Command;

use support::{decode_png, root};

/// One X server at a time: `xvfb-run -a` picks a free display number, and two started at
/// once can pick the same one.
static ONE_SERVER: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn tools_available() -> bool {
    let have = |tool: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {tool}"))
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let found = have("xvfb-run") && have("import") && have("xdotool");
    if !found {
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "xvfb-run, import or xdotool missing; install xvfb, imagemagick and xdotool (scripts/test does)"
        );
        eprintln!("note: xvfb-run, import or xdotool not found; window test skipped");
    }
    found
}

#[test]
fn the_bandwidth_view_is_on_screen_in_a_window() {
    if !tools_available() {
        return;
    }
    let _server = ONE_SERVER.lock().unwrap_or_else(|e| e.into_inner());
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

/// Runs `script` (sh, in the repository, `$VOML` the binary, `$OUT` a fresh directory) on its
/// own Xvfb server; returns the directory.
fn on_x_server(name: &str, script: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("voml-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let status = Command::new("timeout")
        .args([
            "120",
            "xvfb-run",
            "-a",
            "-s",
            "-screen 0 1280x800x24 -noreset",
        ])
        .args(["sh", "-c", script])
        .current_dir(root())
        .env("VOML", env!("CARGO_BIN_EXE_voml"))
        .env("OUT", &dir)
        .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"))
        .status()
        .expect("xvfb-run runs");
    assert!(status.success(), "xvfb-run failed: {status}");
    dir
}

/// The pixels of a region of a capture, to compare two captures there.
fn region(png: &std::path::Path, x0: u32, y0: u32, w: u32, h: u32) -> Vec<[u8; 4]> {
    let bytes = std::fs::read(png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
    let p = decode_png(&bytes).unwrap();
    (y0..y0 + h)
        .flat_map(|y| (x0..x0 + w).map(move |x| (x, y)))
        .map(|(x, y)| p.pixel(x, y).unwrap_or([0; 4]))
        .collect()
}

#[test]
fn a_user_clicks_types_drives_the_replay_and_edits_the_spec() {
    if !tools_available() {
        return;
    }
    let _server = ONE_SERVER.lock().unwrap_or_else(|e| e.into_inner());
    // The ring trace (0.1 s) at 0.01: ten seconds of replay unless paused. The user clicks
    // twice (left, right), types `a`, pauses with space, waits, steps with the right arrow
    // and asks for help; the window alone is captured along the way (400 x 300 picture and
    // the status strip below it). Then the spec is edited (the clock hand turns orange) and
    // the window shows the new visual object with the old one's state. The run is stopped
    // with SIGTERM after twelve seconds, when it would have finished without the pause.
    let dir = on_x_server(
        "window-input",
        r#"
cp examples/interactive/clicks.voml "$OUT/clicks.voml"
"$VOML" run "$OUT/clicks.voml" --trace examples/mpicl/ring.trf --speed 0.01 \
    --dump-state "$OUT/state.json" --out "$OUT/shots" > "$OUT/voml.log" 2>&1 &
pid=$!
wid=$(timeout 30 xdotool search --sync --name "Click, press keys" | head -n 1)
[ -n "$wid" ] || { kill $pid; exit 1; }
sleep 1
xdotool windowfocus --sync "$wid"
xdotool mousemove --window "$wid" 200 150 click 1
sleep 0.2
xdotool mousemove --window "$wid" 100 75 click 3
sleep 0.2
xdotool key a
sleep 0.3
xdotool key space
sleep 0.5
import -window "$wid" "$OUT/paused-1.png"
sleep 1
import -window "$wid" "$OUT/paused-2.png"
xdotool key Right
sleep 0.5
import -window "$wid" "$OUT/stepped.png"
xdotool key h
sleep 0.3
import -window "$wid" "$OUT/help.png"
xdotool key s
sleep 0.3
sed -i 's/color="purple" thick="4"/color="orange" thick="8"/' "$OUT/clicks.voml"
sleep 1.5
import -window root "$OUT/reloaded.png"
sleep 5.5
kill $pid
wait $pid
"#,
    );
    let log = std::fs::read_to_string(dir.join("voml.log")).unwrap_or_default();
    let state = std::fs::read_to_string(dir.join("state.json"))
        .unwrap_or_else(|e| panic!("no dumped state ({e}); voml said:\n{log}"));
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    let infos = &state["infos"];
    // The key and the clicks reached the VO, the clicks in world coordinates: pixel (200,
    // 150) of the 400 x 300 view on the world [0, 100] x [0, 100] is (50, 50), y up.
    assert_eq!(infos["lastkey"], "a", "{state}\n{log}");
    assert_eq!(
        infos["dots"],
        serde_json::json!([[25.0, 75.0, 3], [50.0, 50.0, 1]]),
        "{state}\n{log}"
    );
    // The timer beat on the wall clock (4 per second) through the pause.
    let beats = infos["beats"].as_i64().unwrap();
    assert!(beats >= 20, "{beats} timer beats in 12 s; {log}");
    // The pause held the replay: ten seconds of trace were not all replayed in twelve.
    let records = infos["records"].as_i64().unwrap();
    assert!(
        records < 1360,
        "{records} records: the pause did not hold; {log}"
    );
    // Paused, the count (top left) stays; a step moves it on.
    let count = |name: &str| region(&dir.join(name), 0, 0, 200, 60);
    assert_eq!(count("paused-1.png"), count("paused-2.png"), "{log}");
    assert_ne!(count("paused-2.png"), count("stepped.png"), "{log}");
    // The status strip sits below the picture: a dark band with light text on it.
    for shot in ["paused-2.png", "help.png"] {
        let band = region(&dir.join(shot), 0, 302, 400, 14);
        let dark = band.iter().filter(|p| p[..3] == [24, 24, 32]).count();
        let light = band.iter().filter(|p| p[0] > 150 && p[1] > 150).count();
        assert!(
            dark > 2000 && light > 100,
            "{shot}: {dark} dark, {light} light; {log}"
        );
    }
    // The help replaced the status with a longer text.
    assert_ne!(
        region(&dir.join("paused-2.png"), 0, 302, 400, 14),
        region(&dir.join("help.png"), 0, 302, 400, 14)
    );
    // `s` wrote the view's picture, as shown (the paused count at the top left).
    let shot = dir.join("shots/snapshot-1-board.png");
    let png = decode_png(&std::fs::read(&shot).unwrap_or_else(|e| panic!("{e}; {log}"))).unwrap();
    assert_eq!((png.width, png.height), (400, 300));
    assert_eq!(
        region(&shot, 0, 0, 200, 60),
        count("stepped.png"),
        "the snapshot is not the picture shown; {log}"
    );
    // The edit took over (a window runs with --watch by default), and the state carried
    // over: the dots above were dumped at the end, after the reload.
    assert!(log.contains("reloaded `clicks`"), "{log}");
    let reloaded = region(&dir.join("reloaded.png"), 0, 0, 1280, 800);
    let orange = reloaded.iter().filter(|p| p[..3] == [255, 165, 0]).count();
    assert!(orange > 50, "{orange} orange pixels after the edit; {log}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn several_visual_objects_share_the_screen_and_the_replay_keys() {
    if !tools_available() {
        return;
    }
    let _server = ONE_SERVER.lock().unwrap_or_else(|e| e.into_inner());
    // Two visual objects on the ring trace (ten seconds at 0.01): their windows side by
    // side; a click goes to the one whose window it is, space pauses both.
    let dir = on_x_server(
        "window-several",
        r#"
"$VOML" run examples/interactive/clicks.voml examples/mpicl/count-events.voml \
    --trace examples/mpicl/ring.trf --speed 0.01 --dump-state "$OUT/state.json" \
    > "$OUT/voml.log" 2>&1 &
pid=$!
wid=$(timeout 30 xdotool search --sync --name "Click, press keys" | head -n 1)
[ -n "$wid" ] || { kill $pid; exit 1; }
timeout 30 xdotool search --sync --name "Records per processor" > /dev/null
sleep 1
xdotool windowfocus --sync "$wid"
xdotool mousemove --window "$wid" 200 150 click 1
sleep 0.2
xdotool key space
sleep 0.5
import -window root "$OUT/screen.png"
sleep 10.5
kill $pid
wait $pid
"#,
    );
    let log = std::fs::read_to_string(dir.join("voml.log")).unwrap_or_default();
    let state = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}; voml said:\n{log}"));
        serde_json::from_str(&text).unwrap()
    };
    let clicks = state("state-clicks.json");
    let counts = state("state-count-events.json");
    assert_eq!(
        clicks["infos"]["dots"],
        serde_json::json!([[50.0, 50.0, 1]]),
        "{log}"
    );
    // Both paused: neither got to the end of the trace in the ten seconds it would take.
    let counted: i64 = counts["infos"]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_i64().unwrap())
        .sum();
    let records = clicks["infos"]["records"].as_i64().unwrap();
    assert!(
        records < 1360 && counted < 1360,
        "{records}, {counted}; {log}"
    );
    assert!(
        log.contains("clicks: ") && log.contains("count-events: "),
        "{log}"
    );
    // Both windows are on screen: the bars (steel blue) and the click's red dot.
    let screen = region(&dir.join("screen.png"), 0, 0, 1280, 800);
    let bars = screen.iter().filter(|p| p[..3] == [70, 130, 180]).count();
    let dot = screen.iter().filter(|p| p[..3] == [255, 0, 0]).count();
    assert!(
        bars > 1000 && dot > 20,
        "{bars} bar pixels, {dot} dot pixels; {log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
