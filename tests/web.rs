//! `voml serve`: the page over HTTP is self-contained, the WebSocket streams what the
//! runtime asks of its back end (the same commands the `Recorder` records), a page that
//! joins after the end gets the current picture (the headless PNGs, pixel for pixel, also
//! from a compacted history), and a server on a non-loopback address refuses requests
//! without its access token. Every server is stopped at the end of its test.

mod support;

use std::cell::RefCell;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command as Process, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use support::{compile_spec, replay_file, root};
use voml_llvo::{Backend, Command, RasterBackend, Recorder, ViewId};
use voml_runtime::{Config, Runtime};

const SPEC: &str = "examples/paper/bandwidth.voml";
const TRACE: &str = "examples/paper/bandwidth.trf";
/// How long anything here may take.
const LIMIT: Duration = Duration::from_secs(60);

/// A `voml serve` process, stopped when dropped.
struct Served {
    child: Child,
    addr: SocketAddr,
    /// What it printed before serving.
    said: String,
}

impl Served {
    fn start(extra: &[&str]) -> Served {
        let mut child = Process::new(env!("CARGO_BIN_EXE_voml"))
            .arg("serve")
            .arg(root().join(SPEC))
            .arg("--trace")
            .arg(root().join(TRACE))
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
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
    let lines = Rc::new(RefCell::new(Vec::new()));
    let sink = lines.clone();
    let backend = Recorder::new(RasterBackend::new(), move |c: &Command| {
        if !matches!(c, Command::Present { .. } | Command::Status { .. }) {
            sink.borrow_mut().push(serde_json::to_string(c).unwrap());
        }
    });
    let mut rt = Runtime::new(
        compile_spec(&root().join(SPEC)),
        Box::new(backend),
        Config::default(),
    )
    .expect("the visual object loads");
    replay_file(&mut rt, &root().join(TRACE));
    let lines = lines.borrow().clone();
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
        // A page that joins after the end.
        let mut late = connect(addr, "").expect("a second page connects");
        let lines = until_finished(&mut late);
        let compacted = lines
            .iter()
            .any(|l| l.contains(&format!("\"image\":{}", u32::MAX)));
        assert_eq!(compacted, history == "1", "history {history} KiB");
        let mut raster = RasterBackend::new();
        for line in &lines {
            let command: Command = serde_json::from_str(line).unwrap();
            command.apply(&mut raster).expect("the command applies");
        }
        for (view, (name, png)) in pngs.iter().enumerate() {
            let png = support::decode_png(png.as_ref().expect("a PNG")).unwrap();
            let got = raster.snapshot(ViewId(view as u32)).unwrap();
            assert_eq!((got.width, got.height), (png.width, png.height), "{name}");
            let differing = got
                .data
                .chunks_exact(4)
                .zip(png.data.chunks_exact(4))
                .filter(|(a, b)| a != b)
                .count();
            assert_eq!(
                differing, 0,
                "view {name}: the late page's picture differs from the headless PNG in {differing} pixels (history {history} KiB)"
            );
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

#[test]
fn the_page_in_headless_chromium_draws_the_headless_pngs() {
    let Some(node_path) = playwright() else {
        let note = "the browser test needs /usr/bin/chromium and playwright-core in target/web-browser (scripts/test installs them)";
        assert!(std::env::var_os("VOML_REQUIRE_TOOLS").is_none(), "{note}");
        eprintln!("note: skipped: {note}");
        return;
    };
    let (mut rt, _) = recorded();
    let pngs = rt.pngs();
    let served = Served::start(&["--http", "127.0.0.1:0"]);
    let url = format!("http://{}/", served.local());
    let profile = std::env::temp_dir().join(format!("voml-web-chromium-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let out = Process::new("node")
        .arg(root().join("tests/web/browser.cjs"))
        .arg(&url)
        .arg(&profile)
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
    let canvases: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(
        canvases.iter().all(|c| c.get("errors").is_none()),
        "the page reported errors: {text}"
    );
    assert_eq!(canvases.len(), pngs.len(), "one canvas per view");
    for (canvas, (name, png)) in canvases.iter().zip(&pngs) {
        use base64::Engine as _;
        let png = support::decode_png(png.as_ref().expect("a PNG")).unwrap();
        let size = |k: &str| canvas[k].as_u64().unwrap() as u32;
        assert_eq!(
            (size("width"), size("height")),
            (png.width, png.height),
            "{name}"
        );
        let rgba = base64::engine::general_purpose::STANDARD
            .decode(canvas["rgba"].as_str().unwrap())
            .unwrap();
        assert_eq!(rgba.len(), png.data.len());
        // Anti-aliasing and glyphs differ a little between the browser and the raster; a
        // pixel counts as different when a channel is off by more than 64.
        let pixels = rgba.len() / 4;
        let far = rgba
            .chunks_exact(4)
            .zip(png.data.chunks_exact(4))
            .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > 64))
            .count();
        let mean = rgba
            .iter()
            .zip(&png.data)
            .map(|(x, y)| f64::from(x.abs_diff(*y)))
            .sum::<f64>()
            / rgba.len() as f64;
        eprintln!("{name}: {far} of {pixels} pixels far off, mean difference {mean:.3}");
        let inked = png
            .data
            .chunks_exact(4)
            .filter(|p| p[..3] != [255, 255, 255])
            .count();
        assert!(
            inked > pixels / 100,
            "{name}: the headless picture is nearly blank"
        );
        assert!(
            far * 100 <= pixels && mean < 1.0,
            "{name}: the page's canvas differs from the headless PNG: {far} of {pixels} pixels far off, mean {mean:.3}"
        );
    }
}
