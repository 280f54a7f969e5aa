//! `voml serve`: the page over HTTP is self-contained, the WebSocket streams what the
//! runtime asks of its back end (the same commands the `Recorder` records), a page that
//! joins after the end gets the current picture (the headless PNGs, pixel for pixel, also
//! from a compacted history), and a server on a non-loopback address refuses requests
//! without its access token. A page's replay commands and edits of control structures draw
//! what the same `--control` commands draw headless; bad ones are answered with why and
//! change nothing. Every server is stopped at the end of its test.
//!
//! The browser tests drive headless Chromium with the scripts in `tests/web/`. With
//! `VOML_WEB_SCREENSHOTS=DIR` they write screenshots of the page there (the README's come
//! from `docs/images`); with `VOML_WEB_DIFF=DIR`, the pictures of a page and of the headless
//! run that differ; with `VOML_WEB_STDERR` set, what the servers say.

mod support;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{compile_spec, replay_file, root};
use voml_llvo::{Backend, Command, RasterBackend, Recorder, RgbaPixels, Status, ViewId};
use voml_runtime::{Config, Runtime};

const SPEC: &str = "examples/paper/bandwidth.voml";
const TRACE: &str = "examples/paper/bandwidth.trf";
/// How long anything here may take.
const LIMIT: Duration = Duration::from_secs(60);
/// The visual objects' time budget per event, in ms: the budget is wall time, and these tests
/// run several servers, headless runs and a browser at once; a component stopped as a
/// runaway on a loaded machine would change the pictures compared.
const BUDGET_MS: &str = "20000";

/// A `voml serve` process, stopped when dropped.
struct Served {
    child: Child,
    addr: SocketAddr,
    /// What it printed before serving.
    said: String,
}

impl Served {
    fn start(extra: &[&str]) -> Served {
        Served::of(SPEC, TRACE, extra)
    }

    /// Serves `spec` on `trace` (paths from the repository's root).
    fn of(spec: &str, trace: &str, extra: &[&str]) -> Served {
        let mut child = Process::new(env!("CARGO_BIN_EXE_voml"))
            .arg("serve")
            .arg(root().join(spec))
            .arg("--trace")
            .arg(root().join(trace))
            .args(["--budget-ms", BUDGET_MS])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(if std::env::var_os("VOML_WEB_STDERR").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()
            .expect("voml serve starts");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut said = String::new();
        let mut addr = None;
        for _ in 0..10 {
            let mut line = String::new();
            if out.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            said.push_str(&line);
            if let Some(rest) = line.strip_prefix("serving ") {
                addr = rest
                    .rsplit(" on ")
                    .next()
                    .and_then(|a| a.trim().parse().ok());
            }
            if line.starts_with("open ") {
                break;
            }
        }
        let Some(addr) = addr else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("voml serve did not say where it serves: {said}");
        };
        Served { child, addr, said }
    }

    /// The address to connect to (loopback when it listens on every address).
    fn local(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.addr.port()))
    }

    fn token(&self) -> Option<String> {
        self.said
            .lines()
            .find_map(|l| l.split_once("?token=").map(|(_, t)| t.trim().to_string()))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw HTTP/1.1 request; the status code and the body.
fn request(addr: SocketAddr, raw: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    stream.write_all(raw.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let code = answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (code, body)
}

fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    request(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
}

type Socket = tungstenite::WebSocket<TcpStream>;

fn connect(addr: SocketAddr, query: &str) -> Result<Socket, String> {
    let stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    tungstenite::client(format!("ws://{addr}/ws{query}"), stream)
        .map(|(socket, _)| socket)
        .map_err(|e| e.to_string())
}

/// Whether a streamed line is one of those only a page gets (the inspector, answers).
fn page_only(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line)
        .is_ok_and(|v| matches!(v["op"].as_str(), Some("inspector" | "answer")))
}

/// The command lines a page receives until the run's status says it has finished (the
/// status lines apart).
fn until_finished(socket: &mut Socket) -> Vec<String> {
    let start = Instant::now();
    let mut lines = Vec::new();
    loop {
        assert!(start.elapsed() < LIMIT, "the run did not finish in time");
        let message = socket.read().expect("the stream goes on until the end");
        let tungstenite::Message::Text(text) = message else {
            continue;
        };
        for line in text.as_str().lines() {
            // The inspector's values and answers are the page's, not drawing.
            if page_only(line) {
                continue;
            }
            let command: Command = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a streamed line is not a command ({e}): {line}"));
            match command {
                Command::Status { status } if status.finished => return lines,
                Command::Status { .. } => {}
                _ => lines.push(line.to_string()),
            }
        }
    }
}

/// What the `Recorder` records of the same visual object on the same trace, as JSON lines
/// (the presents apart: a page shows what it has at its next frame).
fn recorded() -> (Runtime, Vec<String>) {
    support::quiet_steel();
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = lines.clone();
    let backend = Recorder::new(RasterBackend::new(), move |c: &Command| {
        if !matches!(c, Command::Present { .. } | Command::Status { .. }) {
            sink.lock().unwrap().push(serde_json::to_string(c).unwrap());
        }
    });
    let mut rt = Runtime::new(
        compile_spec(&root().join(SPEC)),
        Box::new(backend),
        Config {
            budget: Duration::from_millis(BUDGET_MS.parse().unwrap()),
            ..Config::default()
        },
    )
    .expect("the visual object loads");
    replay_file(&mut rt, &root().join(TRACE));
    let lines = lines.lock().unwrap().clone();
    (rt, lines)
}

#[test]
fn the_page_is_self_contained_and_bad_requests_are_refused() {
    let served = Served::start(&["--http", "127.0.0.1:0"]);
    let addr = served.local();
    let (code, page) = get(addr, "/");
    assert_eq!(code, 200);
    assert!(page.contains("<canvas") || page.contains("createElement(\"canvas\")"));
    assert!(page.contains("new WebSocket("), "the page connects itself");
    for outside in ["http://", "https://", "<script src", "<link"] {
        assert!(!page.contains(outside), "the page fetches `{outside}`");
    }
    assert_eq!(get(addr, "/nothing-here").0, 404);
    assert_eq!(
        request(
            addr,
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
        )
        .0,
        405
    );
    assert_eq!(request(addr, "\x01\x02 garbage\r\n\r\n").0, 400);
    // A WebSocket address asked for as a page, and a WebSocket from another site.
    assert_eq!(get(addr, "/ws").0, 400);
    let (code, _) = request(
        addr,
        &format!("GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: http://elsewhere.example\r\n\r\n"),
    );
    assert_eq!(code, 403);
    // A client that goes away at once.
    drop(TcpStream::connect(addr).unwrap());
    // The server goes on.
    assert_eq!(get(addr, "/").0, 200);
}

#[test]
fn the_stream_is_what_the_recorder_records_and_a_late_page_gets_the_picture() {
    let (mut rt, expected) = recorded();
    assert!(expected.len() > 10);
    let pngs = rt.pngs();
    // The whole history, then a history compacted (into the views' pictures) long before
    // the end.
    for history in ["16384", "1"] {
        let served = Served::start(&["--http", "127.0.0.1:0", "--history-kib", history]);
        let addr = served.local();
        let mut first = connect(addr, "").expect("a page connects");
        let streamed = until_finished(&mut first);
        if history != "1" {
            assert_eq!(
                streamed.len(),
                expected.len(),
                "as many commands streamed as recorded"
            );
            for (i, (s, e)) in streamed.iter().zip(&expected).enumerate() {
                assert_eq!(s, e, "command {i} differs");
            }
        }
        // Pages that join after the end, until the history is compacted with the small
        // limit (the raster thread compacts it beside the run, so it may come after the
        // end); each gets the picture, compacted or not.
        let start = Instant::now();
        loop {
            let mut late = connect(addr, "").expect("a late page connects");
            let lines = until_finished(&mut late);
            let compacted = lines
                .iter()
                .any(|l| l.contains(&format!("\"image\":{}", u32::MAX)));
            let mut raster = RasterBackend::new();
            for line in &lines {
                let command: Command = serde_json::from_str(line).unwrap();
                command.apply(&mut raster).expect("the command applies");
            }
            for (view, (name, png)) in pngs.iter().enumerate() {
                let png = support::decode_png(png.as_ref().expect("a PNG")).unwrap();
                let got = raster.snapshot(ViewId(view as u32)).unwrap();
                assert_eq!((got.width, got.height), (png.width, png.height), "{name}");
                let differing = differing(&got, &png);
                assert_eq!(
                    differing, 0,
                    "view {name}: the late page's picture differs from the headless PNG in {differing} pixels (history {history} KiB, compacted: {compacted})"
                );
            }
            if history != "1" {
                assert!(!compacted, "a history within its limit was compacted");
                break;
            }
            if compacted {
                break;
            }
            assert!(
                start.elapsed() < LIMIT,
                "the history beyond its limit was never compacted"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Beyond loopback the token is always required (`voml_web::needs_token`); the test serves on
/// loopback (tests stay there) with `--token`, which requires it the same way.
#[test]
fn a_server_with_a_token_refuses_requests_without_it_and_stops_on_sigterm() {
    assert!(voml_web::needs_token(&"0.0.0.0:8080".parse().unwrap()));
    assert!(voml_web::needs_token(&"192.168.1.5:8080".parse().unwrap()));
    assert!(!voml_web::needs_token(&"127.0.0.1:8080".parse().unwrap()));
    assert!(!voml_web::needs_token(&"[::1]:8080".parse().unwrap()));
    let mut served = Served::start(&["--http", "127.0.0.1:0", "--token"]);
    let token = served
        .token()
        .unwrap_or_else(|| panic!("no token printed: {}", served.said));
    assert!(token.len() >= 32, "{token}");
    let addr = served.local();
    assert_eq!(get(addr, "/").0, 403);
    assert_eq!(get(addr, "/?token=wrong").0, 403);
    assert!(connect(addr, "").is_err(), "a WebSocket without the token");
    assert!(connect(addr, "?token=wrong").is_err());
    assert_eq!(get(addr, &format!("/?token={token}")).0, 200);
    let mut page = connect(addr, &format!("?token={token}")).expect("with the token");
    assert!(!until_finished(&mut page).is_empty());
    // SIGTERM ends it cleanly.
    let killed = Process::new("kill")
        .args(["-TERM", &served.child.id().to_string()])
        .status();
    if killed.is_ok_and(|s| s.success()) {
        let start = Instant::now();
        loop {
            if let Some(status) = served.child.try_wait().unwrap() {
                assert!(status.code().is_some(), "ended by the signal: {status:?}");
                break;
            }
            assert!(
                start.elapsed() < LIMIT,
                "voml serve did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn the_page_keys_pause_and_resume_the_replay() {
    // Paced: the trace's 4.75 s take about 20 s, time enough to pause it.
    let served = Served::start(&["--http", "127.0.0.1:0", "--speed", "0.25"]);
    let mut page = connect(served.local(), "").expect("a page connects");
    let start = Instant::now();
    let mut paused_seen = false;
    page.send(tungstenite::Message::text(r#"{"key":" "}"#))
        .unwrap();
    // A key too long and a message that is not JSON change nothing and break nothing.
    page.send(tungstenite::Message::text(format!(
        r#"{{"key":"{}"}}"#,
        "x".repeat(100)
    )))
    .unwrap();
    page.send(tungstenite::Message::text("not json")).unwrap();
    while start.elapsed() < LIMIT {
        let tungstenite::Message::Text(text) = page.read().expect("the stream goes on") else {
            continue;
        };
        for line in text.as_str().lines() {
            if let Ok(Command::Status { status }) = serde_json::from_str(line) {
                assert!(!status.finished, "the replay ran to its end while paused");
                if status.paused && !paused_seen {
                    paused_seen = true;
                    page.send(tungstenite::Message::text(r#"{"key":" "}"#))
                        .unwrap();
                } else if paused_seen && !status.paused {
                    return;
                }
            }
        }
    }
    panic!("the replay was not paused and resumed from the page (paused: {paused_seen})");
}

/// Where the browser test finds playwright-core (`scripts/test` installs it there).
fn playwright() -> Option<std::path::PathBuf> {
    let dir = root().join("target/web-browser/node_modules");
    (dir.join("playwright-core").is_dir() && Path::new("/usr/bin/chromium").exists()).then_some(dir)
}

/// The JSON lines a browser script (`tests/web/SCRIPT`) prints for the page at `url`, with
/// `extra` arguments; `None` (with a note) where there is no browser to run.
fn browser(script: &str, url: &str, extra: &[&str]) -> Option<Vec<Value>> {
    let Some(node_path) = playwright() else {
        let note = "the browser tests need /usr/bin/chromium and playwright-core in target/web-browser (scripts/test installs them)";
        assert!(std::env::var_os("VOML_REQUIRE_TOOLS").is_none(), "{note}");
        eprintln!("note: skipped: {note}");
        return None;
    };
    let profile = std::env::temp_dir().join(format!(
        "voml-web-chromium-{}-{}",
        std::process::id(),
        NEXT_RUN.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let out = Process::new("node")
        .arg(root().join("tests/web").join(script))
        .arg(url)
        .arg(&profile)
        .args(extra)
        .env("NODE_PATH", node_path)
        .output()
        .expect("node runs");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        out.status.success(),
        "the browser run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(
        lines.iter().all(|c| c.get("errors").is_none()),
        "the page reported errors: {text}"
    );
    Some(lines)
}

/// The canvases a browser script printed under `label`, in view order, as pixels.
fn canvases(lines: &[Value], label: &str) -> Vec<RgbaPixels> {
    use base64::Engine as _;
    lines
        .iter()
        .filter(|l| l["label"] == label)
        .map(|c| {
            let size = |k: &str| c[k].as_u64().unwrap() as u32;
            RgbaPixels {
                width: size("width"),
                height: size("height"),
                data: base64::engine::general_purpose::STANDARD
                    .decode(c["rgba"].as_str().unwrap())
                    .unwrap(),
            }
        })
        .collect()
}

/// How far a canvas is from the headless picture: the pixels off by more than 64 in a
/// channel, the pixels in all, and the mean difference of a channel.
fn distance(got: &RgbaPixels, png: &RgbaPixels) -> (usize, usize, f64) {
    let far = got
        .data
        .chunks_exact(4)
        .zip(png.data.chunks_exact(4))
        .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > 64))
        .count();
    let mean = got
        .data
        .iter()
        .zip(&png.data)
        .map(|(x, y)| f64::from(x.abs_diff(*y)))
        .sum::<f64>()
        / got.data.len() as f64;
    (far, got.data.len() / 4, mean)
}

/// Anti-aliasing and glyphs differ a little between the browser and the raster: a canvas
/// counts as the picture when at most 1% of its pixels are far off and the mean difference
/// is below 1.
fn close(got: &RgbaPixels, png: &RgbaPixels) -> bool {
    let (far, pixels, mean) = distance(got, png);
    far * 100 <= pixels && mean < 1.0
}

/// A canvas is the headless picture (`close`), which is not nearly blank.
fn like(got: &RgbaPixels, png: &RgbaPixels, what: &str) {
    assert_eq!(
        (got.width, got.height),
        (png.width, png.height),
        "{what}: the sizes differ"
    );
    let (far, pixels, mean) = distance(got, png);
    eprintln!("{what}: {far} of {pixels} pixels far off, mean difference {mean:.3}");
    let inked = png
        .data
        .chunks_exact(4)
        .filter(|p| p[..3] != [255, 255, 255])
        .count();
    assert!(
        inked > pixels / 100,
        "{what}: the headless picture is nearly blank"
    );
    assert!(
        close(got, png),
        "{what}: the page's canvas differs from the headless PNG: {far} of {pixels} pixels far off, mean {mean:.3}"
    );
}

/// Every canvas is like the headless picture of its view.
fn all_like(got: &[RgbaPixels], expected: &[(String, RgbaPixels)], when: &str) {
    assert_eq!(got.len(), expected.len(), "one canvas per view ({when})");
    for (canvas, (name, png)) in got.iter().zip(expected) {
        like(canvas, png, &format!("{name} ({when})"));
    }
}

/// Two pages open on one run, and each draws the headless pictures; the two pages' canvases
/// are the same, pixel for pixel.
#[test]
fn the_page_in_headless_chromium_draws_the_headless_pngs() {
    let expected = headless(SPEC, TRACE, "");
    let served = Served::start(&["--http", "127.0.0.1:0"]);
    let url = format!("http://{}/", served.local());
    let Some(lines) = browser("browser.cjs", &url, &["two"]) else {
        return;
    };
    let first = canvases(&lines, "first");
    let second = canvases(&lines, "second");
    all_like(&first, &expected, "the first page");
    all_like(&second, &expected, "the second page");
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(differing(a, b), 0, "the two pages differ");
    }
}

/// A view with `undraw="exact"`: on an undraw the page paints what the run gives it (the
/// pixels the shapes covered, cleared, and what lies there painted again), so its canvas is
/// the headless picture: the bands beneath the undrawn cursors whole in the exact view,
/// with gaps in the view that paints over.
#[test]
fn the_page_draws_a_view_with_exact_undraw_as_headless() {
    let (spec, trace) = ("tests/render/undraw-exact.voml", "tests/render/steps.trf");
    let expected = headless(spec, trace, "");
    assert!(
        differing(&expected[0].1, &expected[1].1) > 100,
        "the two views differ headless"
    );
    let served = Served::of(spec, trace, &["--http", "127.0.0.1:0"]);
    let url = format!("http://{}/", served.local());
    let Some(lines) = browser("browser.cjs", &url, &[]) else {
        return;
    };
    let got = canvases(&lines, "first");
    all_like(&got, &expected, "undraw paint and exact");
    // The exact canvas is not the painted one: the page did not paint over.
    assert!(
        !close(&got[1], &expected[0].1),
        "the exact view shows no gaps"
    );
}

#[test]
fn the_inspector_in_chromium_refuses_a_bad_value_and_an_edit_changes_the_picture() {
    let plain = headless(CHROME_SPEC, CHROME_TRACE, "");
    let edited = headless(CHROME_SPEC, CHROME_TRACE, &format!("resume\n{SET_RATE}\n"));
    let served = Served::of(CHROME_SPEC, CHROME_TRACE, &["--http", "127.0.0.1:0"]);
    let url = format!("http://{}/", served.local());
    let shot = std::env::var("VOML_WEB_SCREENSHOTS")
        .ok()
        .map(|dir| format!("{dir}/web-inspector.png"));
    let Some(lines) = browser(
        "inspector.cjs",
        &url,
        &shot.as_deref().into_iter().collect::<Vec<_>>(),
    ) else {
        return;
    };
    let before = canvases(&lines, "before");
    all_like(&before, &plain, "before the edits");
    let refused = canvases(&lines, "refused");
    for (a, b) in before.iter().zip(&refused) {
        assert_eq!(differing(a, b), 0, "a refused value changed the picture");
    }
    let after = canvases(&lines, "edited");
    all_like(&after, &edited, "after the edit");
    let counters = plain.iter().position(|(n, _)| n == "counters").unwrap();
    assert!(
        differing(&before[counters], &after[counters]) > 1000,
        "the edit changed the counters' canvas"
    );
    // The tolerance tells the two pictures apart.
    assert!(!close(&before[counters], &edited[counters].1));
    assert!(!close(&after[counters], &plain[counters].1));
    let notes = lines
        .iter()
        .find_map(|l| l.get("notes"))
        .expect("the notes");
    let refusal = notes["refused"].as_str().unwrap();
    assert!(
        refusal.contains("refused") && refusal.contains("at most 65536 bytes"),
        "{refusal}"
    );
    assert_eq!(notes["edited"], "set");
}

#[test]
fn the_replay_controls_in_chromium_seek_and_step_as_control_commands_do() {
    let served = Served::start(&["--http", "127.0.0.1:0", "--speed", "0.25"]);
    let url = format!("http://{}/", served.local());
    let shot = std::env::var("VOML_WEB_SCREENSHOTS")
        .ok()
        .map(|dir| format!("{dir}/web-replay.png"));
    let Some(lines) = browser(
        "replay.cjs",
        &url,
        &shot.as_deref().into_iter().collect::<Vec<_>>(),
    ) else {
        return;
    };
    all_like(
        &canvases(&lines, "seek"),
        &headless(SPEC, TRACE, "seek 1\n"),
        "after the seek bar",
    );
    all_like(
        &canvases(&lines, "step"),
        &headless(SPEC, TRACE, "seek 1\nstep\n"),
        "after the step button",
    );
    let at = lines
        .iter()
        .find(|l| l.get("seeked").is_some())
        .expect("where the replay stood");
    assert!(at["seeked"]["paused"] == true && at["stepped"]["paused"] == true);
    assert!(at["seeked"]["time"].as_f64().unwrap() <= 1.0);
}

/// A page as the tests see it: every drawing command carried out on a raster, the latest
/// status and inspector line, and the answers to its commands.
struct Page {
    socket: Socket,
    raster: RasterBackend,
    status: Option<Status>,
    inspector: Option<Value>,
    answers: HashMap<u64, Value>,
    next_id: u64,
}

impl Page {
    fn connect(addr: SocketAddr, query: &str) -> Page {
        Page {
            socket: connect(addr, query).expect("a page connects"),
            raster: RasterBackend::new(),
            status: None,
            inspector: None,
            answers: HashMap::new(),
            next_id: 1,
        }
    }

    /// Reads one message and takes in its lines.
    fn read(&mut self) {
        let message = self.socket.read().expect("the stream goes on");
        let tungstenite::Message::Text(text) = message else {
            return;
        };
        for line in text.as_str().lines() {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a streamed line is not JSON ({e}): {line}"));
            match value["op"].as_str() {
                Some("inspector") => self.inspector = Some(value),
                Some("answer") => {
                    let id = value["id"].as_u64().expect("an answer has an id");
                    self.answers.insert(id, value);
                }
                _ => match serde_json::from_value::<Command>(value) {
                    Ok(Command::Status { status }) => self.status = Some(status),
                    Ok(command) => command
                        .apply(&mut self.raster)
                        .expect("a streamed command applies"),
                    Err(e) => panic!("a streamed line is not a command ({e}): {line}"),
                },
            }
        }
    }

    /// Reads until `done` holds.
    fn until(&mut self, what: &str, mut done: impl FnMut(&Page) -> bool) {
        let start = Instant::now();
        while !done(self) {
            assert!(
                start.elapsed() < LIMIT,
                "the page waited too long for {what}"
            );
            self.read();
        }
    }

    fn finished(&mut self) {
        self.until("the end of the run", |p| {
            p.status.as_ref().is_some_and(|s| s.finished)
        });
    }

    /// Sends a raw message; the answer to `id`, once it has come (the picture the command
    /// made comes before it).
    fn send_raw(&mut self, text: &str, id: u64) -> Value {
        self.socket
            .send(tungstenite::Message::text(text.to_string()))
            .unwrap();
        self.until(&format!("the answer to {text}"), |p| {
            p.answers.contains_key(&id)
        });
        self.answers.remove(&id).unwrap()
    }

    /// Gives the driver a command line; its answer.
    fn command(&mut self, line: &str) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let text = serde_json::json!({ "command": line, "id": id }).to_string();
        self.send_raw(&text, id)
    }

    /// Gives a command that must be carried out.
    fn ok(&mut self, line: &str) {
        let answer = self.command(line);
        assert_eq!(answer["ok"], true, "`{line}` was refused: {answer}");
    }

    /// Gives a command that must be refused; the message.
    fn refused(&mut self, line: &str) -> String {
        let answer = self.command(line);
        assert_eq!(answer["ok"], false, "`{line}` was carried out");
        answer["message"]
            .as_str()
            .expect("a refusal says why")
            .to_string()
    }

    fn picture(&mut self, view: u32) -> RgbaPixels {
        self.raster
            .snapshot(ViewId(view))
            .expect("the view is drawn")
    }

    /// The value of a structure in the latest inspector line.
    fn value(&self, kind: &str, name: &str) -> Value {
        let inspector = self.inspector.as_ref().expect("the inspector came");
        inspector[kind]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["name"] == name))
            .unwrap_or_else(|| panic!("no {kind} `{name}` in {inspector}"))["value"]
            .clone()
    }
}

/// The views' pictures of a headless `voml run` of `spec` on `trace` driven by the
/// `--control` commands `script` (the whole trace when empty), in view order.
fn headless(spec: &str, trace: &str, script: &str) -> Vec<(String, RgbaPixels)> {
    let dir = std::env::temp_dir().join(format!(
        "voml-web-headless-{}-{}",
        std::process::id(),
        NEXT_RUN.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut run = Process::new(env!("CARGO_BIN_EXE_voml"));
    run.arg("run")
        .arg(root().join(spec))
        .arg("--trace")
        .arg(root().join(trace))
        .arg("--headless")
        .args(["--budget-ms", BUDGET_MS])
        .arg("--out")
        .arg(&dir);
    if !script.is_empty() {
        let path = dir.join("control.txt");
        std::fs::write(&path, script).unwrap();
        run.arg("--control").arg(path);
    }
    let out = run.output().expect("voml run runs");
    assert!(
        out.status.success(),
        "the headless run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pictures = compile_spec(&root().join(spec))
        .views
        .iter()
        .map(|v| {
            let png = std::fs::read(dir.join(format!("{}.png", v.name)))
                .unwrap_or_else(|e| panic!("no picture of {}: {e}", v.name));
            (v.name.clone(), support::decode_png(&png).unwrap())
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    pictures
}

static NEXT_RUN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// How many pixels differ.
fn differing(a: &RgbaPixels, b: &RgbaPixels) -> usize {
    assert_eq!((a.width, a.height), (b.width, b.height), "the sizes differ");
    a.data
        .chunks_exact(4)
        .zip(b.data.chunks_exact(4))
        .filter(|(x, y)| x != y)
        .count()
}

/// Every view of the page is, pixel for pixel, the headless picture.
fn same_pictures(page: &mut Page, expected: &[(String, RgbaPixels)], after: &str) {
    for (view, (name, want)) in expected.iter().enumerate() {
        let got = page.picture(view as u32);
        let n = differing(&got, want);
        if n > 0 {
            if let Some(dir) = std::env::var_os("VOML_WEB_DIFF") {
                let dir = Path::new(&dir);
                let _ = std::fs::write(
                    dir.join(format!("{name}-page.png")),
                    support::encode_png(&got),
                );
                let _ = std::fs::write(
                    dir.join(format!("{name}-headless.png")),
                    support::encode_png(want),
                );
            }
        }
        assert_eq!(
            n, 0,
            "after `{after}`, view {name} differs from the headless picture in {n} pixels"
        );
    }
}

const CHROME_SPEC: &str = "examples/formats/chrome.voml";
const CHROME_TRACE: &str = "examples/formats/ring.json";
/// The counter graphs of the Chrome dashboard: their control `how` is "mean" or "rate".
const SET_RATE: &str = r#"set how "rate""#;

#[test]
fn a_control_edited_from_a_page_changes_the_picture_as_the_same_edit_does_headless() {
    let plain = headless(CHROME_SPEC, CHROME_TRACE, "");
    let edited = headless(CHROME_SPEC, CHROME_TRACE, &format!("resume\n{SET_RATE}\n"));
    let counters = plain.iter().position(|(n, _)| n == "counters").unwrap();
    assert!(
        differing(&plain[counters].1, &edited[counters].1) > 1000,
        "the edit changes the counters' picture headless"
    );
    let served = Served::of(CHROME_SPEC, CHROME_TRACE, &["--http", "127.0.0.1:0"]);
    let mut page = Page::connect(served.local(), "");
    page.finished();
    same_pictures(&mut page, &plain, "the run");
    page.until("the inspector", |p| p.inspector.is_some());
    assert_eq!(page.value("controls", "how"), "mean");
    assert!(page.value("infos", "sampled").as_i64().unwrap() > 0);
    page.ok(SET_RATE);
    same_pictures(&mut page, &edited, SET_RATE);
    page.until("the value edited", |p| p.value("controls", "how") == "rate");
    // A page that joins now sees the edited picture and value.
    let mut late = Page::connect(served.local(), "");
    late.finished();
    late.until("the inspector", |p| p.inspector.is_some());
    same_pictures(&mut late, &edited, "joining after the edit");
    assert_eq!(late.value("controls", "how"), "rate");
}

#[test]
fn bad_edits_and_messages_are_refused_with_why_and_change_nothing() {
    let plain = headless(CHROME_SPEC, CHROME_TRACE, "");
    let served = Served::of(CHROME_SPEC, CHROME_TRACE, &["--http", "127.0.0.1:0"]);
    let mut page = Page::connect(served.local(), "");
    page.finished();
    for (line, why) in [
        ("set how 3", "expected a string"),
        ("set how [\"rate\"]", "expected a string"),
        ("set sums 1", "is an info structure"),
        ("set nothing 1", "no control structure `nothing`"),
        ("set how", "needs a value"),
        ("set how rate", "not a JSON value"),
        ("bogus", "unknown command `bogus`"),
        // After the end of the input the replay has nothing left to take.
        ("step", "the input has ended"),
    ] {
        let message = page.refused(line);
        assert!(message.contains(why), "`{line}`: {message}");
    }
    let long = format!("set how \"{}\"", "x".repeat(70_000));
    assert!(page.refused(&long).contains("at most 65536 bytes"));
    for (raw, id, why) in [
        ("not json", 0, "a message is a JSON object"),
        (r#"{"command": 5, "id": 41}"#, 41, "a command is a string"),
        (
            r#"{"command": "set how \"a\"\nset how \"b\"", "id": 42}"#,
            42,
            "one line",
        ),
        (r#"{"id": 43}"#, 43, "a `key`, an `input` or a `command`"),
        (r#"{"key": "", "id": 44}"#, 44, "a key is a name"),
        // Inputs are a view's zoom, drag or click, with numbers in bounds.
        (
            r#"{"input": {"event": "quit"}, "id": 45}"#,
            45,
            "an input is what a user does",
        ),
        (
            r#"{"input": {"event": "zoom", "view": 0, "factor": 1000, "x": 1, "y": 1}, "id": 46}"#,
            46,
            "F from 1/64 to 64",
        ),
        (
            r#"{"input": {"event": "pan", "view": 0, "dx": "far", "dy": 0}, "id": 47}"#,
            47,
            "an input is what a user does",
        ),
        (
            r#"{"input": {"event": "command", "from": 1, "line": "seek 0"}, "id": 48}"#,
            48,
            "an input is",
        ),
    ] {
        let answer = page.send_raw(raw, id);
        assert_eq!(answer["ok"], false, "{raw}");
        let message = answer["message"].as_str().unwrap();
        assert!(message.contains(why), "{raw}: {message}");
    }
    same_pictures(&mut page, &plain, "the bad edits");
    page.until("the inspector", |p| p.inspector.is_some());
    assert_eq!(page.value("controls", "how"), "mean");
    // The connection still works: a good edit is carried out.
    page.ok(r#"set how "mean""#);
}

/// With a token in force, a page without it cannot connect, so neither edits nor replay
/// commands reach the run; with it they do.
#[test]
fn without_the_token_no_edit_reaches_the_run() {
    let served = Served::of(
        CHROME_SPEC,
        CHROME_TRACE,
        &["--http", "127.0.0.1:0", "--token"],
    );
    let token = served.token().expect("a token printed");
    let addr = served.local();
    for query in ["", "?token=", "?token=0123456789abcdef0123456789abcdef"] {
        let refused = connect(addr, query);
        assert!(refused.is_err(), "a page connected with `{query}`");
        assert!(refused.unwrap_err().contains("403"));
    }
    let mut page = Page::connect(addr, &format!("?token={token}"));
    page.finished();
    page.until("the inspector", |p| p.inspector.is_some());
    assert_eq!(page.value("controls", "how"), "mean", "an edit got through");
    page.ok(SET_RATE);
    page.until("the value edited", |p| p.value("controls", "how") == "rate");
}

#[test]
fn pause_step_back_and_seek_from_a_page_draw_what_the_same_control_commands_draw() {
    // Paced: the trace's 4.75 s take about 20 s, time enough to pause it early.
    let served = Served::start(&["--http", "127.0.0.1:0", "--speed", "0.25"]);
    let mut page = Page::connect(served.local(), "");
    page.ok("pause");
    page.until("the pause", |p| p.status.as_ref().is_some_and(|s| s.paused));
    let at = page.status.as_ref().unwrap().trace_time.unwrap_or(0.0);
    assert!(at < 2.0, "the replay was not paused early: t = {at}");
    let mut script = String::new();
    for (line, headless_line) in [
        ("seek 2", "seek 2"),
        ("step 5", "step 5"),
        // Back, by running again from the start.
        ("seek 1", "seek 1"),
        ("back", "back"),
        ("step", "step"),
    ] {
        page.ok(line);
        script.push_str(headless_line);
        script.push('\n');
        let expected = headless(SPEC, TRACE, &script);
        same_pictures(&mut page, &expected, line);
    }
    // Refused: the page hears why, and the picture stays.
    assert!(page
        .refused("step-to nothing")
        .contains("declares no event `nothing`"));
    assert!(page.refused("seek").contains("needs a trace time"));
    assert!(page.refused("snapshot here").contains("writes no pictures"));
    let expected = headless(SPEC, TRACE, &script);
    same_pictures(&mut page, &expected, "the refused commands");
    // The status has the trace times seen, for the seek bar: the first record's and the
    // furthest (before the seek back).
    let span = page.status.as_ref().unwrap().span.expect("a span");
    assert!(span[0] <= 0.05 + 1e-9 && span[1] >= 2.0, "{span:?}");
    page.ok("speed max");
    page.ok("resume");
    page.finished();
    let (mut rt, _) = recorded();
    for (view, (name, png)) in rt.pngs().iter().enumerate() {
        let png = support::decode_png(png.as_ref().unwrap()).unwrap();
        let n = differing(&page.picture(view as u32), &png);
        assert_eq!(n, 0, "view {name} at the end differs in {n} pixels");
    }
}

/// A page's wheel, drag and click reach the run as a window's do: the view zooms and pans
/// (its components redraw) exactly as `Runtime::user_zoom` and `user_pan` make it headless.
#[test]
fn a_zoom_and_a_drag_from_a_page_draw_what_they_draw_headless() {
    let served = Served::start(&["--http", "127.0.0.1:0"]);
    let mut page = Page::connect(served.local(), "");
    page.finished();
    let (mut rt, _) = recorded();
    let before: Vec<RgbaPixels> = (0..).map_while(|v| rt.view_pixels(v)).collect();
    assert!(!before.is_empty());
    for (v, old) in before.iter().enumerate() {
        assert_eq!(
            differing(&page.picture(v as u32), old),
            0,
            "view {v} before"
        );
    }
    let inputs = [
        serde_json::json!({"event": "zoom", "view": 0, "factor": 2.0, "x": 120.0, "y": 90.0}),
        serde_json::json!({"event": "pan", "view": 0, "dx": 25.0, "dy": -12.0}),
        serde_json::json!({"event": "zoom", "view": 0, "factor": 0.8, "x": 400.0, "y": 300.0}),
        serde_json::json!({"event": "click", "view": 0, "x": 10.0, "y": 10.0, "button": 1}),
        // A view the run does not have: nothing happens.
        serde_json::json!({"event": "zoom", "view": 7, "factor": 2.0, "x": 1.0, "y": 1.0}),
    ];
    for input in &inputs {
        let text = serde_json::json!({ "input": input }).to_string();
        page.socket.send(tungstenite::Message::text(text)).unwrap();
    }
    // A command after them: its answer comes once the driver has taken them in order.
    page.refused("step");
    rt.user_zoom(0, 2.0, 120.0, 90.0).unwrap();
    rt.user_pan(0, 25.0, -12.0).unwrap();
    rt.user_zoom(0, 0.8, 400.0, 300.0).unwrap();
    let mut moved = 0;
    for (v, old) in before.iter().enumerate() {
        let want = rt.view_pixels(v).expect("a view");
        moved += differing(&want, old);
        let n = differing(&page.picture(v as u32), &want);
        assert_eq!(
            n, 0,
            "after the inputs, view {v} differs from headless in {n} pixels"
        );
    }
    assert!(
        moved > 1000,
        "zooming and panning changed only {moved} pixels"
    );
}

/// In Chromium, the wheel over a view and a drag send a zoom and pans that, made headless
/// by the runtime, draw the picture the page then shows.
#[test]
fn the_wheel_and_a_drag_in_chromium_zoom_and_pan_as_headless() {
    let served = Served::start(&["--http", "127.0.0.1:0"]);
    let url = format!("http://{}/", served.local());
    let Some(lines) = browser("pointer.cjs", &url, &[]) else {
        return;
    };
    let inputs = lines
        .iter()
        .find_map(|l| l.get("inputs"))
        .and_then(|i| i.as_array())
        .expect("the inputs the page sent");
    let (mut rt, _) = recorded();
    let before = rt.view_pixels(0).expect("a view");
    let (mut zooms, mut pans) = (0, 0);
    for input in inputs {
        let number = |k: &str| {
            input[k]
                .as_f64()
                .unwrap_or_else(|| panic!("{k} in {input}"))
        };
        assert_eq!(input["view"], 0, "{input}");
        match input["event"].as_str() {
            Some("zoom") => {
                zooms += 1;
                // One notch towards the screen: the window's step.
                assert!((number("factor") - 1.2).abs() < 1e-9, "{input}");
                rt.user_zoom(0, number("factor"), number("x"), number("y"))
                    .unwrap();
            }
            Some("pan") => {
                pans += 1;
                rt.user_pan(0, number("dx"), number("dy")).unwrap();
            }
            _ => panic!("a wheel and a drag sent {input}"),
        }
    }
    assert!(zooms == 1 && pans >= 1, "{inputs:?}");
    let want = rt.view_pixels(0).unwrap();
    assert!(differing(&want, &before) > 1000, "the zoom changed little");
    let got = canvases(&lines, "zoomed");
    all_like(
        &got,
        &[("BU-View".to_string(), want)],
        "after the wheel and the drag",
    );
}

/// On a screen with 2 device pixels per pixel (the browser's zoom, a high-density screen) the
/// page draws the commands at that density: seen at the view's size it is the headless
/// picture, and its lines and text have detail within each view pixel that a magnified
/// picture would not.
#[test]
fn a_denser_screen_gets_the_picture_drawn_at_its_density() {
    let served = Served::start(&["--http", "127.0.0.1:0"]);
    let url = format!("http://{}/", served.local());
    let Some(lines) = browser("dense.cjs", &url, &[]) else {
        return;
    };
    let expected = headless(SPEC, TRACE, "");
    all_like(
        &canvases(&lines, "plain"),
        &expected,
        "at 1 device pixel a pixel",
    );
    let dense = canvases(&lines, "dense");
    assert_eq!(dense.len(), expected.len(), "one canvas per view");
    for (got, (name, png)) in dense.iter().zip(&expected) {
        assert_eq!(
            (got.width, got.height),
            (2 * png.width, 2 * png.height),
            "{name}: the canvas is not at the density"
        );
        // Each 2x2 block: its mean, and whether its pixels differ (a magnified picture's
        // never do).
        let mut mean = RgbaPixels {
            width: png.width,
            height: png.height,
            data: vec![0; png.data.len()],
        };
        let mut detailed = 0;
        for y in 0..png.height as usize {
            for x in 0..png.width as usize {
                let at = |dx: usize, dy: usize| {
                    let i = ((2 * y + dy) * got.width as usize + 2 * x + dx) * 4;
                    &got.data[i..i + 4]
                };
                let block = [at(0, 0), at(1, 0), at(0, 1), at(1, 1)];
                for c in 0..4 {
                    let sum: u32 = block.iter().map(|p| u32::from(p[c])).sum();
                    mean.data[(y * png.width as usize + x) * 4 + c] = ((sum + 2) / 4) as u8;
                }
                if block
                    .iter()
                    .any(|p| p.iter().zip(block[0]).any(|(a, b)| a.abs_diff(*b) > 64))
                {
                    detailed += 1;
                }
            }
        }
        eprintln!("{name}: {detailed} pixels with detail within them");
        like(
            &mean,
            png,
            &format!("{name} at 2 device pixels a pixel, averaged"),
        );
        assert!(
            detailed > 2000,
            "{name}: only {detailed} pixels have detail within them: magnified, not drawn"
        );
    }
}

/// `voml run --headless --record run.html` writes a page that, opened from disk with
/// nothing fetched, replays to the run's final picture (the headless PNGs, within the
/// browser's tolerance) and seeks as `seek` does.
#[test]
fn a_recorded_run_replays_in_chromium_to_the_headless_pictures_and_seeks() {
    let dir = std::env::temp_dir().join(format!("voml-web-record-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("run.html");
    let out = Process::new(env!("CARGO_BIN_EXE_voml"))
        .arg("run")
        .arg(root().join(SPEC))
        .arg("--trace")
        .arg(root().join(TRACE))
        .args(["--headless", "--budget-ms", BUDGET_MS, "--out"])
        .arg(&dir)
        .arg("--record")
        .arg(&page)
        .output()
        .expect("voml run runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).expect("the page is written");
    for outside in ["http://", "https://", "<script src", "<link"] {
        assert!(!html.contains(outside), "the page fetches `{outside}`");
    }
    let expected: Vec<(String, RgbaPixels)> = compile_spec(&root().join(SPEC))
        .views
        .iter()
        .map(|v| {
            let png = std::fs::read(dir.join(format!("{}.png", v.name))).unwrap();
            (v.name.clone(), support::decode_png(&png).unwrap())
        })
        .collect();
    let shot = std::env::var("VOML_WEB_SCREENSHOTS")
        .ok()
        .map(|d| format!("{d}/web-recorded.png"));
    let url = format!("file://{}", page.display());
    let lines = browser(
        "recorded.cjs",
        &url,
        &shot.as_deref().into_iter().collect::<Vec<_>>(),
    );
    let _ = std::fs::remove_dir_all(&dir);
    let Some(lines) = lines else {
        return;
    };
    all_like(&canvases(&lines, "end"), &expected, "the recording's end");
    let seek = canvases(&lines, "seek");
    all_like(
        &seek,
        &headless(SPEC, TRACE, "seek 1\n"),
        "the recording at 1 s",
    );
    assert!(!close(&seek[0], &expected[0].1), "the seek changed nothing");
    let said = lines
        .iter()
        .find(|l| l.get("requests").is_some())
        .expect("the requests");
    assert_eq!(said["requests"], serde_json::json!([]), "the page fetched");
}

/// A streaming example: the paper's line plot, scrolling and rescaling, over a generated
/// trace of 3,000 samples (a peak two thirds of the way), paced so that the page joins while
/// it streams (450 trace seconds in 6 s); the page draws the headless picture.
#[test]
fn a_scrolling_line_plot_streams_into_chromium_as_it_draws_headless() {
    let dir = std::env::temp_dir().join(format!("voml-web-lineplot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("samples.trf");
    let samples: String = (0..3000)
        .map(|k| {
            let key = k % 3;
            let mut value = 50.0 + 30.0 * (f64::from(k) * 0.05 + f64::from(key)).sin();
            if k == 2000 {
                value = 300.0;
            }
            format!(
                "-3 3000 {:.6} {key} {value:.3}\n",
                0.25 + f64::from(k) * 0.15
            )
        })
        .collect();
    std::fs::write(&trace, samples).unwrap();
    let trace = trace.to_str().unwrap().to_string();
    let spec = "examples/paper/lineplot.voml";
    let expected = headless(spec, &trace, "");
    let served = Served::of(spec, &trace, &["--http", "127.0.0.1:0", "--speed", "75"]);
    let url = format!("http://{}/", served.local());
    let lines = browser("browser.cjs", &url, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    let Some(lines) = lines else {
        return;
    };
    all_like(&canvases(&lines, "first"), &expected, "the line plot");
}

/// The sound of a recorded run, rendered in Chromium by the page's WebAudio voices, follows
/// the WAV the synthesiser writes for the same run: the loudness over time (RMS in 50 ms
/// windows) of the sends (vibraphone), receives (marimba) and held waits (strings) of the
/// MPICL ring example correlates with the WAV's, at about the same level.
#[test]
fn a_recorded_runs_sound_plays_in_chromium_as_the_wav_sounds() {
    const SPEED: &str = "0.02";
    const WINDOW: f64 = 0.05;
    let dir = std::env::temp_dir().join(format!("voml-web-sound-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (page, wav) = (dir.join("run.html"), dir.join("run.wav"));
    let out = Process::new(env!("CARGO_BIN_EXE_voml"))
        .arg("run")
        .arg(root().join("examples/mpicl/sends-and-receives.voml"))
        .arg("--trace")
        .arg(root().join("examples/mpicl/ring.trf"))
        .args([
            "--headless",
            "--budget-ms",
            BUDGET_MS,
            "--speed",
            SPEED,
            "--out",
        ])
        .arg(&dir)
        .arg("--audio")
        .arg(&wav)
        .arg("--record")
        .arg(&page)
        .output()
        .expect("voml run runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut reader = hound::WavReader::open(&wav).unwrap();
    let spec = reader.spec();
    assert_eq!(spec.channels, 2);
    let samples: Vec<f32> = reader
        .samples::<i16>()
        .map(|s| f32::from(s.unwrap()) / 32768.0)
        .collect();
    let n = (WINDOW * f64::from(spec.sample_rate)).round() as usize * 2;
    let wav_rms: Vec<f64> = samples
        .chunks_exact(n)
        .map(|w| (w.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>() / n as f64).sqrt())
        .collect();
    let url = format!("file://{}", page.display());
    let lines = browser("recorded_sound.cjs", &url, &[SPEED, &WINDOW.to_string()]);
    let _ = std::fs::remove_dir_all(&dir);
    let Some(lines) = lines else {
        return;
    };
    let page_rms: Vec<f64> = lines[0]["rms"]
        .as_array()
        .expect("the page's loudness")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let len = wav_rms.len().min(page_rms.len());
    assert!(len > 40, "only {len} windows of sound");
    let (a, b) = (&wav_rms[..len], &page_rms[..len]);
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let (ma, mb) = (mean(a), mean(b));
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let var = |x: &[f64], m: f64| x.iter().map(|v| (v - m).powi(2)).sum::<f64>();
    let correlation = cov / (var(a, ma) * var(b, mb)).sqrt();
    let level_db = 20.0 * (mb / ma).log10();
    eprintln!(
        "sound: {len} windows, correlation {correlation:.3}, the page {level_db:+.1} dB against the WAV"
    );
    assert!(
        correlation > 0.9,
        "the page's sound does not follow the WAV's: correlation {correlation:.3}"
    );
    assert!(
        level_db.abs() < 3.0,
        "the page's sound is {level_db:+.1} dB from the WAV's"
    );
    // The comparison tells sounds apart: the WAV half a second later does not follow.
    let shift = (0.5 / WINDOW) as usize;
    let late: Vec<f64> = std::iter::repeat_n(0.0, shift)
        .chain(a.iter().copied())
        .take(len)
        .collect();
    let ml = mean(&late);
    let cov: f64 = late.iter().zip(b).map(|(x, y)| (x - ml) * (y - mb)).sum();
    assert!(cov / (var(&late, ml) * var(b, mb)).sqrt() < correlation - 0.1);
}

/// A served run's sound commands reach the pages connected as they are made (not the
/// history: what was heard is not played again), each a `SoundCommand` with its trace time.
#[test]
fn a_served_runs_sound_commands_reach_the_pages() {
    let spec = "examples/mpicl/sends-and-receives.voml";
    let trace = "examples/mpicl/ring.trf";
    // Paced: the trace's 0.1 s take 2 s, and the page is there from the start.
    let served = Served::of(spec, trace, &["--http", "127.0.0.1:0", "--speed", "0.05"]);
    let mut socket = connect(served.local(), "").expect("a page connects");
    let start = Instant::now();
    let mut sounds = Vec::new();
    'read: loop {
        assert!(start.elapsed() < LIMIT, "the run did not finish in time");
        let tungstenite::Message::Text(text) = socket.read().expect("the stream goes on") else {
            continue;
        };
        // Only the sound and status lines are read: the drawing (27 MB in this run) is
        // passed over unparsed, so that a test built without optimisation keeps up with the
        // stream and is not dropped as a page too slow for it.
        let wanted = |line: &str| {
            line.starts_with(r#"{"op":"sound""#) || line.starts_with(r#"{"op":"status""#)
        };
        for line in text.as_str().lines().filter(|l| wanted(l)) {
            let value: Value = serde_json::from_str(line).unwrap();
            match value["op"].as_str() {
                Some("sound") => {
                    let command: voml_runtime::SoundCommand =
                        serde_json::from_value(value["sound"].clone())
                            .unwrap_or_else(|e| panic!("not a sound command ({e}): {line}"));
                    sounds.push((value["at"].as_f64().expect("a time"), command));
                }
                Some("status") if value["status"]["finished"] == true => break 'read,
                _ => {}
            }
        }
    }
    // The headless run's commands, as a recording keeps them.
    let mut rt = support::start_runtime(compile_spec(&root().join(spec)), false, 20_000);
    let mut heard = Vec::new();
    let mut last = 0.0;
    for line in std::fs::read_to_string(root().join(trace)).unwrap().lines() {
        let Ok(record) = voml_trace::parse_line(line, 0) else {
            continue;
        };
        last = record.timestamp().unwrap_or(last);
        rt.process(&record, "ring.trf").unwrap();
        heard.extend(rt.take_sounds().into_iter().map(|s| (s.at, s.command)));
    }
    rt.finish(last, 0).unwrap();
    heard.extend(rt.take_sounds().into_iter().map(|s| (s.at, s.command)));
    assert!(heard.len() > 100, "{} sound commands headless", heard.len());
    assert!(
        sounds.len() * 10 >= heard.len() * 9,
        "the page heard {} of {} sound commands",
        sounds.len(),
        heard.len()
    );
    // What the page heard is the end of what was made, in order.
    assert_eq!(sounds[..], heard[heard.len() - sounds.len()..]);
}
