//! The web back end's speed: `cargo bench --bench web` (`VOML_BENCH_ONLY=streaming`, or
//! `joining`, `serving`, `latency`, runs one kind of case alone, to profile it).
//!
//! - **Streaming**: the web back end (`WebBackend`, its hub and server, on loopback) given a
//!   million line primitives as fast as it takes them, a present every 64 (a record's worth),
//!   with one and with four WebSocket clients reading the stream: primitives per second from
//!   the first drawn to the last received by every client (none may be dropped for falling
//!   behind; when one is, the offered rate is lowered). The back end draws each primitive on
//!   its own raster too (the picture kept for pages that join later), on the engine's thread.
//! - **Joining**: the same million primitives drawn first, then one or four clients join at
//!   once and receive them all, as pages opened late do: what the hub, the server and
//!   loopback WebSockets carry per second, apart from drawing.
//! - **Serving**: `voml serve --listen` of the paper's line plot fed 200,000 generated
//!   samples by one producer, with one and four clients: the primitives the clients receive
//!   per second of the run, the visual object's code included.
//! - **Latency**: `voml serve --listen` of a visual object that writes each record's number
//!   as text; a producer sends 10,000 records a second for five seconds over TCP and a client
//!   notes when each record's text arrives: the delay from sending the record to receiving
//!   its command, at the 50th and 99th percentiles and at most.
//!
//! `VOML_BENCH_QUICK=1` makes the workloads a tenth as long.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use voml_llvo::{
    Backend, Color, DrawCmd, LineCap, LineJoin, PaintMode, PathSeg, PxPath, PxRect, Status,
    StrokeStyle, ViewId,
};
use voml_web::{Hub, Server, WebBackend};

type Socket = tungstenite::WebSocket<TcpStream>;

fn quick() -> bool {
    std::env::var_os("VOML_BENCH_QUICK").is_some()
}

/// Whether to run the cases named `case` (`streaming`, `joining`, `serving`, `latency`):
/// all of them, unless `VOML_BENCH_ONLY` names one (to profile it alone).
fn runs(case: &str) -> bool {
    std::env::var("VOML_BENCH_ONLY").map_or(true, |only| only == case)
}

fn connect(addr: SocketAddr) -> Socket {
    let stream = TcpStream::connect(addr).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    tungstenite::client(format!("ws://{addr}/ws"), stream)
        .expect("a WebSocket")
        .0
}

/// What one client saw: drawing commands, and when the run's finished status came (or why
/// it stopped reading).
struct Seen {
    draws: u64,
    end: Result<Instant, String>,
}

/// Reads the stream until the finished status, counting drawing commands by their `op`
/// (without parsing the rest: what is measured is what the server delivers, not the
/// client's JSON parser, on a machine whose cores the clients share with the server).
fn read_until_finished(mut socket: Socket) -> Seen {
    let mut draws = 0;
    loop {
        let message = match socket.read() {
            Ok(m) => m,
            Err(e) => {
                return Seen {
                    draws,
                    end: Err(format!("the stream stopped: {e}")),
                }
            }
        };
        let tungstenite::Message::Text(text) = message else {
            continue;
        };
        for line in text.as_str().lines() {
            if line.starts_with(r#"{"op":"draw"#) {
                draws += 1;
            } else if line.starts_with(r#"{"op":"status""#) && line.contains(r#""finished":true"#) {
                return Seen {
                    draws,
                    end: Ok(Instant::now()),
                };
            }
        }
    }
}

fn line(i: u64) -> DrawCmd {
    let x = (i % 997) as f32;
    let y = (i % 389) as f32;
    DrawCmd::Stroke {
        path: PxPath {
            segs: vec![PathSeg::MoveTo(x, y), PathSeg::LineTo(x + 7.5, y + 3.25)].into(),
        },
        style: StrokeStyle {
            width: 1.0,
            cap: LineCap::Butt,
            join: LineJoin::Miter,
            dash: Vec::new(),
            dash_offset: 0.0,
        },
        color: Color::rgb((i % 200) as u8, 60, 200),
        clip: PxRect::new(0, 0, 1000, 400),
        mode: PaintMode::Blend,
    }
}

/// The web back end alone: `n` primitives to `clients` clients, offered at `rate` a second
/// at most (`None`: as fast as the back end takes them); primitives per second per client.
/// A client that falls behind is dropped by the hub (the run never waits for a page): then
/// this fails.
fn streaming(n: u64, clients: usize, rate: Option<f64>) -> Result<f64, String> {
    let hub = Arc::new(Mutex::new(Hub::new(voml_web::DEFAULT_HISTORY)));
    let server = Server::start("127.0.0.1:0".parse().unwrap(), None, hub.clone())
        .map_err(|e| e.to_string())?;
    let readers: Vec<_> = (0..clients)
        .map(|_| {
            let socket = connect(server.addr());
            std::thread::spawn(move || read_until_finished(socket))
        })
        .collect();
    while hub.lock().unwrap().pages() < clients {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut web = WebBackend::new(hub.clone());
    let view = ViewId(0);
    let start = Instant::now();
    web.create_surface(view, "bench", 1000, 400, Color::WHITE)
        .map_err(|e| e.to_string())?;
    for i in 0..n {
        web.draw(view, &line(i)).map_err(|e| e.to_string())?;
        if i % 64 == 63 {
            web.present(view).map_err(|e| e.to_string())?;
            if let Some(rate) = rate {
                let due = start + Duration::from_secs_f64((i + 1) as f64 / rate);
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
        }
    }
    web.present(view).map_err(|e| e.to_string())?;
    web.status(&Status {
        finished: true,
        text: "done".into(),
        ..Status::default()
    });
    let mut last = start;
    for reader in readers {
        let seen = reader.join().map_err(|_| "a reader panicked")?;
        let end = seen.end?;
        if seen.draws != n {
            return Err(format!("a client got {} of {n} primitives", seen.draws));
        }
        last = last.max(end);
    }
    Ok(n as f64 / last.duration_since(start).as_secs_f64())
}

/// The stream alone: `n` primitives drawn beforehand (kept whole: no compaction), then
/// `clients` clients join at once and each receives them all, as a page opened late does;
/// primitives per second per client, from joining to the last client's end.
fn joining(n: u64, clients: usize) -> Result<f64, String> {
    let hub = Arc::new(Mutex::new(Hub::new(usize::MAX)));
    let server = Server::start("127.0.0.1:0".parse().unwrap(), None, hub.clone())
        .map_err(|e| e.to_string())?;
    let mut web = WebBackend::new(hub.clone());
    let view = ViewId(0);
    web.create_surface(view, "bench", 1000, 400, Color::WHITE)
        .map_err(|e| e.to_string())?;
    for i in 0..n {
        web.draw(view, &line(i)).map_err(|e| e.to_string())?;
        if i % 64 == 63 {
            web.present(view).map_err(|e| e.to_string())?;
        }
    }
    web.present(view).map_err(|e| e.to_string())?;
    web.status(&Status {
        finished: true,
        text: "done".into(),
        ..Status::default()
    });
    let start = Instant::now();
    let readers: Vec<_> = (0..clients)
        .map(|_| {
            let socket = connect(server.addr());
            std::thread::spawn(move || read_until_finished(socket))
        })
        .collect();
    let mut last = start;
    for reader in readers {
        let seen = reader.join().map_err(|_| "a reader panicked")?;
        last = last.max(seen.end?);
        if seen.draws != n {
            return Err(format!("a client got {} of {n} primitives", seen.draws));
        }
    }
    Ok(n as f64 / last.duration_since(start).as_secs_f64())
}

/// A `voml serve` child, killed when dropped, with the page's and the producers' addresses.
struct Served {
    child: Child,
    http: SocketAddr,
    listen: Option<SocketAddr>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(args: &[&str], listening: bool) -> Served {
    let mut child = Process::new(env!("CARGO_BIN_EXE_voml"))
        .arg("serve")
        .args(args)
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("voml serve starts");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut http = None;
    let mut line = String::new();
    while http.is_none() && out.read_line(&mut line).unwrap_or(0) > 0 {
        if let Some(rest) = line.strip_prefix("serving ") {
            http = rest
                .rsplit(" on ")
                .next()
                .and_then(|a| a.trim().parse().ok());
        }
        line.clear();
    }
    let mut listen = None;
    if listening {
        let mut err = BufReader::new(child.stderr.take().unwrap());
        while listen.is_none() && err.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(rest) = line.strip_prefix("listening on tcp://") {
                listen = rest.split_whitespace().next().and_then(|a| a.parse().ok());
            }
            line.clear();
        }
        // The rest of what it says is not read: keep the pipe from filling.
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    }
    Served {
        child,
        http: http.expect("voml serve says where it serves"),
        listen,
    }
}

/// `voml serve --listen` of the line plot, to `clients` clients joined before the first
/// record, `trace` sent by one producer: primitives per second of the run (per client, from
/// the first byte sent to the last client's end), and the primitives.
fn serving(trace: &Path, clients: usize) -> Result<(f64, u64), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let spec = root.join("examples/paper/lineplot.voml");
    let served = serve(
        &[
            spec.to_str().unwrap(),
            "--listen",
            "tcp://127.0.0.1:0",
            "--producers",
            "1",
        ],
        true,
    );
    let readers: Vec<_> = (0..clients)
        .map(|_| {
            let socket = connect(served.http);
            std::thread::spawn(move || read_until_finished(socket))
        })
        .collect();
    // The pages are there before the first record.
    std::thread::sleep(Duration::from_millis(300));
    let bytes = std::fs::read(trace).map_err(|e| e.to_string())?;
    let addr = served
        .listen
        .ok_or("voml serve did not say where it listens")?;
    let start = Instant::now();
    let mut producer = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    producer.write_all(&bytes).map_err(|e| e.to_string())?;
    drop(producer);
    let mut last = start;
    let mut draws = None;
    for reader in readers {
        let seen = reader.join().map_err(|_| "a reader panicked")?;
        last = last.max(seen.end?);
        if draws.is_some_and(|d| d != seen.draws) {
            return Err(format!(
                "the clients got {} and {draws:?} primitives",
                seen.draws
            ));
        }
        draws = Some(seen.draws);
    }
    let draws = draws.unwrap_or(0);
    Ok((
        draws as f64 / last.duration_since(start).as_secs_f64(),
        draws,
    ))
}

/// A visual object that writes each record's number (its fifth field) as text.
const LATENCY_SPEC: &str = r#"<?xml version="1.0"?>
<voml><body><visual-object name="latency">
  <event-declarations>
    <data-event name="tick" rtype="entry" etype="1">
      <data-field name="ts" type="real"/>
      <data-field name="proc" type="int"/>
      <data-field name="seq" type="int"/>
    </data-event>
  </event-declarations>
  <info-structures><variable name="last" type="int" init="-1"/></info-structures>
  <view-initializations>
    <view name="number" window="200 40" world="0 1 0 1"/>
  </view-initializations>
  <event-processing>
    <ep-component name="take" inputs="tick.seq" infos="last">
      <input name="^0">(set! $0 ^0/0)</input>
    </ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="show" views="number" infos="last" refresh="update">
      <text view="^0" coords="0.1 0.5" content="(number->string $0)" size="12"/>
    </ir-component>
  </info-rendition>
</visual-object></body></voml>
"#;

/// Milliseconds from sending each record to receiving its text: (p50, p99, max, received of
/// sent).
fn latency(work: &Path, rate: u64, seconds: u64) -> Result<(f64, f64, f64, usize, usize), String> {
    let spec = work.join("latency.voml");
    std::fs::write(&spec, LATENCY_SPEC).map_err(|e| e.to_string())?;
    let served = serve(
        &[
            spec.to_str().unwrap(),
            "--listen",
            "tcp://127.0.0.1:0",
            "--producers",
            "1",
        ],
        true,
    );
    let total = (rate * seconds) as usize;
    let sent: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; total]));
    let mut page = connect(served.http);
    let reader = std::thread::spawn(move || {
        let mut got: Vec<Option<Instant>> = vec![None; total];
        loop {
            let Ok(message) = page.read() else {
                return got;
            };
            let now = Instant::now();
            let tungstenite::Message::Text(text) = message else {
                continue;
            };
            for line in text.as_str().lines() {
                let value: serde_json::Value = match serde_json::from_str(line) {
                    Ok(v) => v,
                    Err(_) => continue,
                };
                if value["op"] == "status" && value["status"]["finished"] == true {
                    return got;
                }
                if let Some(n) = value["cmd"]["text"]
                    .as_str()
                    .and_then(|t| t.parse::<usize>().ok())
                {
                    if n < total && got[n].is_none() {
                        got[n] = Some(now);
                    }
                }
            }
        }
    });
    let addr = served
        .listen
        .ok_or("voml serve did not say where it listens")?;
    let mut producer = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    producer.set_nodelay(true).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut line = String::new();
    for seq in 0..total {
        // Paced: record `seq` is due at seq / rate seconds.
        let due = start + Duration::from_secs_f64(seq as f64 / rate as f64);
        while Instant::now() < due {
            std::hint::spin_loop();
        }
        line.clear();
        line.push_str(&format!("-3 1 {:.6} 0 {seq}\n", seq as f64 / rate as f64));
        producer
            .write_all(line.as_bytes())
            .map_err(|e| e.to_string())?;
        sent.lock().unwrap()[seq] = Some(Instant::now());
    }
    drop(producer);
    let got = reader.join().map_err(|_| "the reader panicked")?;
    let sent = sent.lock().unwrap();
    let mut delays: Vec<f64> = sent
        .iter()
        .zip(&got)
        .filter_map(|(s, g)| Some(g.as_ref()?.duration_since(*s.as_ref()?).as_secs_f64() * 1e3))
        .collect();
    if delays.is_empty() {
        return Err("no record's text arrived".into());
    }
    delays.sort_by(f64::total_cmp);
    let at = |q: f64| delays[((delays.len() - 1) as f64 * q).round() as usize];
    Ok((at(0.5), at(0.99), at(1.0), delays.len(), total))
}

fn main() {
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-web");
    std::fs::create_dir_all(&work).unwrap();
    let scale = if quick() { 10 } else { 1 };
    println!(
        "web back end (release build; {} cores)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    // The fastest offered rate every client keeps up with: as fast as the back end goes,
    // then slower until none is dropped.
    let n = 1_000_000 / scale;
    for clients in [1, 4].into_iter().filter(|_| runs("streaming")) {
        let mut failures = Vec::new();
        for offered in [
            None,
            Some(2e6),
            Some(1e6),
            Some(750e3),
            Some(500e3),
            Some(250e3),
        ] {
            let shown = offered.map_or("as fast as it goes".into(), |r| {
                format!("{:.0} k/s", r / 1e3)
            });
            match streaming(n, clients, offered) {
                Ok(rate) => {
                    println!(
                        "streaming   {n} line primitives to {clients} client(s), offered {shown}: {:.0} k primitives/s per client ({:.0} k/s in all){}",
                        rate / 1e3,
                        rate * clients as f64 / 1e3,
                        if failures.is_empty() { String::new() } else { format!("; faster, a client fell behind ({})", failures.join(", ")) }
                    );
                    break;
                }
                Err(e) => failures.push(format!("{shown}: {e}")),
            }
        }
        if failures.len() == 6 {
            println!(
                "streaming   to {clients} client(s): FAILED: {}",
                failures.join("; ")
            );
        }
    }

    for clients in [1, 4].into_iter().filter(|_| runs("joining")) {
        match joining(n, clients) {
            Ok(rate) => println!(
                "joining     {clients} client(s) receiving {n} primitives drawn before: {:.0} k primitives/s per client ({:.0} k/s in all)",
                rate / 1e3,
                rate * clients as f64 / 1e3
            ),
            Err(e) => println!("joining     {clients} client(s): FAILED: {e}"),
        }
    }

    let samples = 200_000 / scale as usize;
    let trace = work.join(format!("lineplot-{samples}.trf"));
    if !trace.is_file() {
        let text: String = (0..samples)
            .map(|k| {
                let key = k % 3;
                let value = 50.0 + 30.0 * (k as f64 * 0.01 + key as f64).sin();
                format!("-3 3000 {:.6} {key} {value:.3}\n", 0.25 + k as f64 * 0.15)
            })
            .collect();
        std::fs::write(&trace, text).unwrap();
    }
    for clients in [1, 4].into_iter().filter(|_| runs("serving")) {
        match serving(&trace, clients) {
            Ok((rate, draws)) => println!(
                "serving     the line plot, {samples} samples, {draws} primitives, to {clients} client(s): {:.0} k primitives/s per client",
                rate / 1e3
            ),
            Err(e) => println!("serving     to {clients} client(s): FAILED: {e}"),
        }
    }

    if runs("latency") {
        let seconds = if quick() { 2 } else { 5 };
        match latency(&work, 10_000, seconds) {
            Ok((p50, p99, max, got, total)) => println!(
                "latency     record on the --listen socket to its command at the client, 10 k records/s for {seconds} s: p50 {p50:.1} ms, p99 {p99:.1} ms, max {max:.1} ms ({got} of {total} records' text received)"
            ),
            Err(e) => println!("latency     FAILED: {e}"),
        }
    }
}
