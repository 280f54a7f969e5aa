//! Records through NATS JetStream (the `nats` feature): a real `nats-server -js` on
//! loopback, 8 producers (`voml send --nats`) and 2 consuming visual objects (`voml run
//! --nats`); the server is killed and started again in the middle of the run, and each
//! visual object still counts every record exactly once; a producer that waits through a
//! long outage connects again; a visual object whose connection goes silent (open, nothing
//! passing) connects again within seconds and loses nothing; a message that never comes is
//! waited for a bounded time, then named in a warning. A missing server is a clear error
//! for both commands. The PMPI library, built with the NATS C client, publishes an MPI
//! program's records on 4 ranks' subjects, and a visual object counts them all.
//!
//! Without `nats-server` (Debian: nats-server), or for the MPI test Open MPI and the NATS C
//! client (libnats-dev), the tests print a note and do nothing, unless `VOML_REQUIRE_TOOLS`
//! is set (as in CI), where that is a failure.

#![cfg(feature = "nats")]

mod support;

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Counts records, and those earlier than the one before.
const COUNT: &str = r#"<voml><body><visual-object name="count">
  <event-declarations>
    <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="p" type="int"/></data-event>
  </event-declarations>
  <info-structures>
    <variable name="n" type="int" init="0"/>
    <variable name="last" type="real" init="-1.0"/>
    <variable name="disorder" type="int" init="0"/>
  </info-structures>
  <view-initializations><view name="v" window="20 20"/></view-initializations>
  <event-processing>
    <ep-component name="count" inputs="e.ts.p" infos="n last disorder">
      <input name="^0">(set! $0 (+ $0 1)) (if (lt ^0/0 $1) (set! $2 (+ $2 1))) (set! $1 ^0/0)</input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;

const PRODUCERS: usize = 8;
const RECORDS: usize = 1500;
/// Longest any one process may take.
const LIMIT: Duration = Duration::from_secs(120);

fn scratch(name: &str) -> support::Scratch {
    support::Scratch::new("nats", name)
}

fn voml() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_voml"));
    cmd.env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"));
    cmd
}

/// A loopback port free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `nats-server -js` on loopback, storing its streams under a directory of its own;
/// killed when dropped.
struct Server {
    child: Option<Child>,
    port: u16,
    store: PathBuf,
}

impl Server {
    /// Starts one, or `None` (with a note) when `nats-server` is not installed.
    fn start(dir: &Path) -> Option<Server> {
        if Command::new("nats-server")
            .arg("--version")
            .output()
            .is_err()
        {
            let why = "nats-server (Debian: nats-server) is not installed";
            assert!(
                std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
                "{why} (required because VOML_REQUIRE_TOOLS is set)"
            );
            eprintln!("note: {why}; the NATS test is skipped");
            return None;
        }
        let mut server = Server {
            child: None,
            port: 0,
            store: dir.join("store"),
        };
        server.run();
        Some(server)
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again) and waits until it says it is ready. The first start lets
    /// the server choose a free port (`-p -1`) and learns it from the server's own log, so
    /// that no other process can hold that port in between; a restart asks for the same
    /// port again, as clients reconnect to it.
    fn run(&mut self) {
        let port = if self.port == 0 {
            "-1".to_string()
        } else {
            self.port.to_string()
        };
        let mut child = Command::new("nats-server")
            .args(["-js", "-a", "127.0.0.1", "-p", &port, "-sd"])
            .arg(&self.store)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut log = BufReader::new(child.stderr.take().unwrap());
        let mut said = String::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let mut line = String::new();
            if log.read_line(&mut line).unwrap_or(0) == 0 || Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("nats-server did not start: {said}");
            }
            said.push_str(&line);
            if let Some((_, at)) = line.split_once("Listening for client connections on ") {
                let listening = at.trim().rsplit(':').next().and_then(|p| p.parse().ok());
                self.port = listening.unwrap_or_else(|| panic!("nats-server said: {line}"));
            }
            if line.contains("Server is ready") {
                break;
            }
        }
        assert_ne!(self.port, 0, "nats-server did not say its port: {said}");
        // The rest of its log is read (and dropped) as it comes.
        std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));
        self.child = Some(child);
    }

    /// Kills the server at once (no orderly shutdown).
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits for `child` within [`LIMIT`] (killed and failed beyond it); its status and what it
/// said on standard error.
fn finish(mut child: Child, what: &str) -> (bool, String) {
    let mut stderr = child.stderr.take();
    let reading = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_string(&mut text);
        }
        text
    });
    let Some(status) = support::wait_bounded(&mut child, LIMIT) else {
        panic!("{what} took longer than {LIMIT:?}");
    };
    (status.success(), reading.join().unwrap())
}

/// A consuming visual object (number `k`, of `producers` producers), once it says it
/// consumes; its child, what it said first, and the thread that reads what it says after.
fn consumer(
    dir: &Path,
    spec: &Path,
    url: &str,
    subject: &str,
    k: usize,
    producers: usize,
) -> (Child, String, std::thread::JoinHandle<String>) {
    let mut child = voml()
        .arg("run")
        .arg(spec)
        .args(["--nats", url, "--subject", subject])
        .args(["--producers", &producers.to_string(), "--headless", "--out"])
        .arg(dir.join(format!("out{k}")))
        .arg("--dump-state")
        .arg(dir.join(format!("state{k}.json")))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap_or(0) == 0 || Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("voml run --nats did not start consuming: {said}{line}");
        }
        said.push_str(&line);
        if line.starts_with("consuming ") {
            break;
        }
    }
    // The rest is read as it comes, so that it can go on writing, and given back when the
    // returned thread is joined.
    let rest = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    (child, said, rest)
}

/// Producer `i`'s trace: [`RECORDS`] records over 3 s of trace time, on processor `i`.
fn trace(dir: &Path, i: usize) -> PathBuf {
    let path = dir.join(format!("p{i}.trf"));
    let text: String = (0..RECORDS)
        .map(|k| format!("-3 1 {:.6} {i} 0\n", k as f64 * 3.0 / RECORDS as f64))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// `voml send` of `trace` as producer `p{i}`, paced at the trace's speed (about 3 s).
fn producer(trace: &Path, url: &str, subject: &str, i: usize) -> Child {
    voml()
        .arg("send")
        .arg(trace)
        .args(["--nats", url, "--subject", subject, "--speed", "1"])
        .args(["--name", &format!("p{i}")])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn dumped(state: &Path) -> (i64, i64) {
    let text =
        std::fs::read_to_string(state).unwrap_or_else(|e| panic!("{}: {e}", state.display()));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    (
        v["infos"]["n"].as_i64().unwrap(),
        v["infos"]["disorder"].as_i64().unwrap(),
    )
}

#[test]
fn eight_producers_two_visual_objects_and_a_server_restart_lose_nothing() {
    let dir = scratch("restart");
    let Some(mut server) = Server::start(&dir) else {
        return;
    };
    let url = server.url();
    let subject = format!("runs.test-{}", std::process::id());
    let spec = dir.join("count.voml");
    std::fs::write(&spec, COUNT).unwrap();
    let traces: Vec<PathBuf> = (0..PRODUCERS).map(|i| trace(&dir, i)).collect();
    let consumers: Vec<_> = (0..2)
        .map(|k| consumer(&dir, &spec, &url, &subject, k, PRODUCERS))
        .collect();
    // All at once.
    let producers: Vec<Child> = traces
        .iter()
        .enumerate()
        .map(|(i, trace)| producer(trace, &url, &subject, i))
        .collect();
    // In the middle of the run the server dies, and comes back a second later.
    std::thread::sleep(Duration::from_millis(1200));
    let mut producers = producers;
    for p in &mut producers {
        assert!(
            p.try_wait().unwrap().is_none(),
            "a producer ended before the restart"
        );
    }
    server.kill();
    std::thread::sleep(Duration::from_millis(1000));
    server.run();
    for (i, p) in producers.into_iter().enumerate() {
        let (ok, said) = finish(p, "voml send --nats");
        assert!(ok, "producer {i}: {said}");
        assert!(
            said.contains(&format!(
                "sent {RECORDS} records to {url} ({subject}) as 1 producer(s)"
            )),
            "producer {i}: {said}"
        );
    }
    for (k, (c, first, _)) in consumers.into_iter().enumerate() {
        let (ok, _) = finish(c, "voml run --nats");
        assert!(ok, "consumer {k}: {first}");
        let (n, _disorder) = dumped(&dir.join(format!("state{k}.json")));
        assert_eq!(n as usize, PRODUCERS * RECORDS, "consumer {k}");
    }
}

/// A server down for longer than a producer waits for three acknowledgements: the producer
/// connects again (and says so), and its records arrive once each.
#[test]
fn a_producer_connects_again_after_a_long_outage_and_loses_nothing() {
    let dir = scratch("outage");
    let Some(mut server) = Server::start(&dir) else {
        return;
    };
    let url = server.url();
    let subject = format!("runs.outage-{}", std::process::id());
    let spec = dir.join("count.voml");
    std::fs::write(&spec, COUNT).unwrap();
    let trace = trace(&dir, 0);
    let (run, _, _) = consumer(&dir, &spec, &url, &subject, 0, 1);
    let producer = producer(&trace, &url, &subject, 0);
    std::thread::sleep(Duration::from_millis(1200));
    server.kill();
    // Three unacknowledged sends take about 15 s.
    std::thread::sleep(Duration::from_secs(17));
    server.run();
    let (ok, said) = finish(producer, "voml send --nats");
    assert!(ok, "{said}");
    assert!(said.contains("connecting again"), "{said}");
    assert!(
        said.contains(&format!(
            "sent {RECORDS} records to {url} ({subject}) as 1 producer(s)"
        )),
        "{said}"
    );
    let (ok, said) = finish(run, "voml run --nats");
    assert!(ok, "{said}");
    let (n, _) = dumped(&dir.join("state0.json"));
    assert_eq!(n as usize, RECORDS);
}

/// A relay on loopback to a server's port: it relays every connection it accepts, both ways,
/// until [`Relay::silence`]; then the connections it had go silent (still open, nothing
/// relayed either way: a link that died without a word, as a dropped network path or a
/// firewall forgetting the connection leaves it), while those it accepts later are relayed.
struct Relay {
    port: u16,
    /// Bumped by each silence: a connection is relayed while this is its own.
    epoch: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Relay {
    fn to(port: u16) -> Relay {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::Arc;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let relay = Relay {
            port: listener.local_addr().unwrap().port(),
            epoch: Arc::new(AtomicUsize::new(0)),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (epoch, stop) = (relay.epoch.clone(), relay.stop.clone());
        listener.set_nonblocking(true).unwrap();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                };
                let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
                    continue;
                };
                let own = epoch.load(Ordering::SeqCst);
                for (from, to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let (epoch, stop) = (epoch.clone(), stop.clone());
                    std::thread::spawn(move || pump(from, to, own, &epoch, &stop));
                }
            }
        });
        relay
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    fn silence(&self) {
        self.epoch.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Relays what `from` sends to `to` while the relay's epoch is `own`; afterwards reads and
/// drops it (the connection stays open and silent), until the relay stops or `from` closes.
fn pump(
    mut from: std::net::TcpStream,
    mut to: std::net::TcpStream,
    own: usize,
    epoch: &std::sync::atomic::AtomicUsize,
    stop: &std::sync::atomic::AtomicBool,
) {
    use std::io::Write;
    use std::sync::atomic::Ordering;
    from.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut buf = [0u8; 16 * 1024];
    while !stop.load(Ordering::Relaxed) {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if epoch.load(Ordering::SeqCst) == own && to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

/// A visual object whose connection to the server goes silent in the middle of the run (no
/// error, no close: nothing arrives any more) notices within seconds, connects again, and
/// counts every record once; the producer, on a connection of its own, is not disturbed.
#[test]
fn a_visual_object_whose_connection_goes_silent_connects_again_and_loses_nothing() {
    let dir = scratch("silent");
    let Some(server) = Server::start(&dir) else {
        return;
    };
    let relay = Relay::to(server.port);
    let subject = format!("runs.silent-{}", std::process::id());
    let spec = dir.join("count.voml");
    std::fs::write(&spec, COUNT).unwrap();
    let trace = trace(&dir, 0);
    let (mut run, _, _) = consumer(&dir, &spec, &relay.url(), &subject, 0, 1);
    let producer = producer(&trace, &server.url(), &subject, 0);
    std::thread::sleep(Duration::from_millis(1200));
    relay.silence();
    let silenced = Instant::now();
    let (ok, said) = finish(producer, "voml send --nats");
    assert!(ok, "{said}");
    // Well within the minutes a client takes to give up on a silent connection by default.
    let within = Duration::from_secs(45);
    let status = support::wait_bounded(&mut run, within).unwrap_or_else(|| {
        panic!("voml run --nats did not end within {within:?} of its connection going silent")
    });
    assert!(status.success());
    let (n, _) = dumped(&dir.join("state0.json"));
    assert_eq!(n as usize, RECORDS);
    eprintln!(
        "the visual object ended {:.1} s after its connection went silent",
        silenced.elapsed().as_secs_f64()
    );
}

/// Publishes `messages` (headers, payload) on `subject` through the NATS protocol itself, as
/// a producer other than `voml send` might, and waits until the server has taken them.
fn publish_raw(port: u16, subject: &str, messages: &[(Vec<(&str, String)>, String)]) {
    use std::io::Write;
    let stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("INFO "), "{line}");
    let mut out = stream;
    let mut wire = String::from("CONNECT {\"verbose\":false,\"headers\":true}\r\n");
    for (headers, payload) in messages {
        let mut head = String::from("NATS/1.0\r\n");
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        wire.push_str(&format!(
            "HPUB {subject} {} {}\r\n{head}{payload}\r\n",
            head.len(),
            head.len() + payload.len()
        ));
    }
    wire.push_str("PING\r\n");
    out.write_all(wire.as_bytes()).unwrap();
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the server hung up"
        );
        assert!(!line.starts_with("-ERR"), "{line}");
        if line.starts_with("PONG") {
            break;
        }
    }
}

/// A producer's message that never comes (here one that numbers its messages 1, 3 and says
/// it sent 3): the visual object waits for it a bounded time, then says which message of
/// which producer it missed, counts the records of the others, and ends.
#[test]
fn a_message_that_never_comes_is_waited_for_a_while_then_reported() {
    let dir = scratch("gap");
    let Some(server) = Server::start(&dir) else {
        return;
    };
    let url = server.url();
    let subject = format!("runs.gap-{}", std::process::id());
    let spec = dir.join("count.voml");
    std::fs::write(&spec, COUNT).unwrap();
    // (The visual object makes the run's stream.)
    let (mut run, _, rest) = consumer(&dir, &spec, &url, &subject, 0, 1);
    let records = |from: usize| -> String {
        (from..from + 10)
            .map(|k| format!("-3 1 {:.3} 0 0\n", k as f64 * 0.01))
            .collect()
    };
    let id = |n: &str| vec![("Nats-Msg-Id", format!("p0-{n}"))];
    let mut end = id("end");
    end.push(("Voml-End", "3".to_string()));
    publish_raw(
        server.port,
        &format!("{subject}.p0"),
        &[
            (id("1"), records(0)),
            (id("3"), records(20)),
            (end, String::new()),
        ],
    );
    let status = support::wait_bounded(&mut run, LIMIT).expect("voml run --nats ends");
    let said = rest.join().unwrap();
    assert!(status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "warning: NATS: message 2 of producer `p0` ({subject}.p0) never came (waited 30s)"
        )),
        "{said}"
    );
    assert!(said.contains("\n1 producer(s) connected\n"), "{said}");
    let (n, disorder) = dumped(&dir.join("state0.json"));
    assert_eq!((n, disorder), (20, 0), "{said}");
}

/// A second producer under a name that has published on the run already is refused, before
/// it sends anything: its messages would be numbered as the first's were, and a visual
/// object would take them for copies.
#[test]
fn a_producer_name_used_on_the_run_already_is_refused() {
    let dir = scratch("same-name");
    let Some(server) = Server::start(&dir) else {
        return;
    };
    let url = server.url();
    let subject = format!("runs.same-{}", std::process::id());
    let trace = trace(&dir, 0);
    let send = |name: &str| {
        voml()
            .arg("send")
            .arg(&trace)
            .args(["--nats", &url, "--subject", &subject, "--name", name])
            .output()
            .unwrap()
    };
    let first = send("p0");
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let again = send("p0");
    let said = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "error: a producer named `p0` has published on {subject}.p0 already"
        )),
        "{said}"
    );
    assert!(said.contains("name this one otherwise (--name)"), "{said}");
    // (The refusal is about the producer, not about a line of the trace.)
    assert!(!said.contains("(at line"), "{said}");
    // Another name is taken.
    let other = send("p1");
    assert!(
        other.status.success(),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );
}

#[test]
fn a_missing_server_is_a_clear_error() {
    let dir = scratch("missing");
    if Command::new("nats-server")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "nats-server is not installed (required because VOML_REQUIRE_TOOLS is set)"
        );
        eprintln!("note: nats-server is not installed; skipped");
        return;
    }
    let url = format!("nats://127.0.0.1:{}", free_port());
    let spec = dir.join("count.voml");
    std::fs::write(&spec, COUNT).unwrap();
    let trace = dir.join("t.trf");
    std::fs::write(&trace, "-3 1 0.5 0 0\n").unwrap();
    let started = Instant::now();
    let run = voml()
        .arg("run")
        .arg(&spec)
        .args(["--nats", &url, "--subject", "runs.x", "--headless", "--out"])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "error: cannot connect to the NATS server at {url}"
        )),
        "{said}"
    );
    let send = voml()
        .arg("send")
        .arg(&trace)
        .args(["--nats", &url, "--subject", "runs.x"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&send.stderr);
    assert_eq!(send.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "error: cannot connect to the NATS server at {url}"
        )),
        "{said}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    // A subject that cannot name a run is refused before anything is reached.
    let bad = voml()
        .arg("send")
        .arg(&trace)
        .args(["--nats", &url, "--subject", "runs.>"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot name a run"));
}

#[test]
fn an_mpi_program_publishes_through_nats() {
    let dir = scratch("mpi");
    let Some(server) = Server::start(&dir) else {
        return;
    };
    // The PMPI library publishes to NATS when built with the NATS C client (libnats).
    let have_libnats = Command::new("pkg-config")
        .args(["--exists", "libnats"])
        .status()
        .is_ok_and(|s| s.success());
    if !have_libnats {
        let why = "the NATS C client (Debian: libnats-dev) is not installed";
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "{why} (required because VOML_REQUIRE_TOOLS is set)"
        );
        eprintln!("note: {why}; the PMPI library's NATS test is skipped");
        return;
    }
    let Some((library, program)) = support::mpi::build(&dir) else {
        return;
    };
    let plain = support::mpi::mpirun(&program, &[]);
    let url = server.url();
    let subject = format!("runs.mpi-{}", std::process::id());
    let spec = dir.join("count.voml");
    std::fs::write(&spec, support::mpi::COUNT).unwrap();
    let (child, first, _) = consumer(&dir, &spec, &url, &subject, 0, 4);
    let traced = support::mpi::mpirun(
        &program,
        &[
            ("LD_PRELOAD", library.to_str().unwrap()),
            ("VOML_NATS", &url),
            ("VOML_SUBJECT", &subject),
        ],
    );
    let (ok, _) = finish(child, "voml run --nats");
    assert!(ok, "{first}");
    // The program's output is unchanged; the visual object counted what it says it did,
    // from the 4 ranks' subjects.
    assert_eq!(traced.stdout, plain.stdout);
    let complaints = String::from_utf8_lossy(&traced.stderr);
    assert!(!complaints.contains("voml-pmpi"), "{complaints}");
    let text = std::fs::read_to_string(dir.join("state0.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let counted = ["sends", "receives", "collectives", "waits", "ranks"]
        .map(|name| v["infos"][name].as_i64().unwrap());
    let [sends, receives, collectives, waits] = support::mpi::said(&plain.stdout);
    assert_eq!(counted, [sends, receives, collectives, waits, 4]);
    // Run again on the same subject, each rank finds its earlier messages, says so and
    // sends nothing; the program runs as it does untraced.
    let again = support::mpi::mpirun(
        &program,
        &[
            ("LD_PRELOAD", library.to_str().unwrap()),
            ("VOML_NATS", &url),
            ("VOML_SUBJECT", &subject),
        ],
    );
    assert_eq!(again.stdout, plain.stdout);
    let said = String::from_utf8_lossy(&again.stderr);
    for rank in 0..4 {
        assert!(
            said.contains(&format!(
                "voml-pmpi (rank {rank}): a rank of an earlier run has published on {subject}.rank{rank} already"
            )),
            "{said}"
        );
    }
}
