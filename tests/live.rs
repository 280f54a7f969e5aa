//! Live input: `voml run --listen` takes records from producers on loopback sockets, merges
//! them in timestamp order, reports each producer's bad lines without disturbing the others,
//! slows producers down rather than dropping records, and on SIGTERM writes its outputs with
//! everything it accepted. `voml send` replays a trace as such a producer.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::root;

/// A counting VO: how many records, and how many came earlier than the one before.
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
      <input name="^0">(set! $0 (+ $0 1)) (if (lt ^0/0 $1) (set! $2 (+ $2 1))) (set! $1 ^0/0)
        (if (= $0 1000) <snapshot view="v" file="done.png"/>)</input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;

struct Listening {
    child: Child,
    addr: String,
    dir: std::path::PathBuf,
    stderr: BufReader<std::process::ChildStderr>,
}

/// Starts `voml run` on the counting VO, listening on a loopback port of the system's
/// choice.
fn listen(name: &str, extra: &[&str]) -> Listening {
    let dir = std::env::temp_dir().join(format!("voml-live-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("count.voml");
    std::fs::write(&spec, COUNT).unwrap();
    let (child, stderr, addr) = support::listening(
        Command::new(env!("CARGO_BIN_EXE_voml"))
            .args([
                "run",
                spec.to_str().unwrap(),
                "--listen",
                "tcp://127.0.0.1:0",
                "--headless",
            ])
            .arg("--out")
            .arg(dir.join("out"))
            .arg("--dump-state")
            .arg(dir.join("state.json"))
            .args(extra)
            .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home")),
    );
    Listening {
        child,
        addr,
        dir,
        stderr,
    }
}

impl Listening {
    /// Waits for the run to end (at most a minute); its state and everything it said.
    fn finish(mut self) -> (serde_json::Value, String) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("voml --listen did not end");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut said = String::new();
        let _ = std::io::Read::read_to_string(&mut self.stderr, &mut said);
        let state = std::fs::read_to_string(self.dir.join("state.json"))
            .unwrap_or_else(|e| panic!("no state ({e}); voml said:\n{said}"));
        let _ = std::fs::remove_dir_all(&self.dir);
        (serde_json::from_str(&state).unwrap(), said)
    }
}

/// Producer `k` of `of`: `n` records whose timestamps interleave with the other producers'.
fn records(k: usize, of: usize, n: usize) -> String {
    (0..n)
        .map(|i| format!("-3 1 {:.6} {k}\n", (i * of + k) as f64 * 1e-5))
        .collect()
}

fn produce(addr: &str, text: String) -> std::thread::JoinHandle<()> {
    let addr = addr.to_string();
    std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(text.as_bytes()).unwrap();
    })
}

#[test]
fn many_producers_are_merged_in_timestamp_order_without_loss() {
    // A window far longer than any producer lags here, even on a loaded machine.
    let run = listen(
        "merge",
        &["--producers", "8", "--reorder-window-ms", "10000"],
    );
    let producers: Vec<_> = (0..8)
        .map(|k| produce(&run.addr, records(k, 8, 20_000)))
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    let (state, said) = run.finish();
    assert_eq!(state["infos"]["n"], 160_000, "{said}");
    assert_eq!(state["infos"]["disorder"], 0, "out of order; {said}");
    assert!(said.contains("\n8 producer(s) connected\n"), "{said}");
}

/// A producer that comes later than the reordering window with records earlier than those
/// taken already: its records are taken out of order, and the run's end says how many.
#[test]
fn records_beyond_the_window_are_counted_and_told() {
    let run = listen("late", &["--producers", "2", "--reorder-window-ms", "50"]);
    let mut early = std::net::TcpStream::connect(&run.addr).unwrap();
    early.write_all(b"-3 1 10.0 0\n-3 1 11.0 0\n").unwrap();
    // Long past the window, a second producer with two records before those.
    std::thread::sleep(Duration::from_millis(600));
    produce(&run.addr, "-3 1 1.0 1\n-3 1 2.0 1\n".to_string())
        .join()
        .unwrap();
    drop(early);
    let (state, said) = run.finish();
    assert_eq!(state["infos"]["n"], 4, "{said}");
    assert_eq!(state["infos"]["disorder"], 1, "{said}");
    assert!(
        said.contains(
            "2 producer(s) connected; 2 records came after later ones had gone on (beyond the reordering window) and were taken out of order"
        ),
        "{said}"
    );
}

/// A producer that connects and stays silent holds the others back by the reordering
/// window only: the talker's last record is processed (its snapshot written) while the silent
/// one is still connected.
#[test]
fn a_silent_producer_delays_the_others_by_the_window_only() {
    let run = listen("silent", &["--reorder-window-ms", "200"]);
    let silent = std::net::TcpStream::connect(&run.addr).unwrap();
    let talker = produce(&run.addr, records(1, 2, 1_000));
    talker.join().unwrap();
    let done = run.dir.join("out").join("done.png");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done.is_file() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let seen = done.is_file();
    let pid = run.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let (state, said) = run.finish();
    assert!(
        seen,
        "the talker's records waited for the silent producer:\n{said}"
    );
    assert_eq!(state["infos"]["n"], 1_000, "{said}");
    drop(silent);
}

#[test]
fn a_producers_bad_lines_are_its_own_and_the_others_go_on() {
    let run = listen("bad", &["--producers", "4"]);
    let good: Vec<_> = (0..2)
        .map(|k| produce(&run.addr, records(k, 2, 10_000)))
        .collect();
    // Garbage, then a line of 3 MB, then good records again.
    let mut noisy = String::from("this is not a record\n-3 1 0.5 9 \"open\n");
    noisy.push_str(&"7".repeat(3 << 20));
    noisy.push('\n');
    noisy.push_str("-3 1 0.6 9\n");
    let noisy = produce(&run.addr, noisy);
    // One that goes away in the middle of a line.
    let cut = produce(&run.addr, "-3 1 0.7 8\n-3 1 0.8 8 1".to_string());
    for p in good {
        p.join().unwrap();
    }
    noisy.join().unwrap();
    cut.join().unwrap();
    let (state, said) = run.finish();
    // 20,000 good records, one after the garbage, one before the cut.
    assert_eq!(state["infos"]["n"], 20_002, "{said}");
    assert!(
        said.contains(":1:1: expected an integer record type"),
        "the garbage is reported at its line:\n{said}"
    );
    assert!(
        said.contains("line longer than"),
        "the long line is reported:\n{said}"
    );
    assert!(
        said.contains("middle of this line"),
        "the cut line is reported:\n{said}"
    );
    assert!(
        said.contains("tcp://127.0.0.1:"),
        "lines are located by producer:\n{said}"
    );
}

/// More records than the queues between a socket and the VO hold (the kernel's buffers on
/// loopback take several megabytes): the producer's writes wait for the VO, and every record
/// is counted.
#[test]
fn a_producer_waits_for_a_slower_visual_object_and_nothing_is_lost() {
    let run = listen("slow", &["--producers", "1"]);
    let started = Instant::now();
    let producer = produce(&run.addr, records(0, 1, 1_000_000));
    producer.join().unwrap();
    let sent_in = started.elapsed();
    let (state, said) = run.finish();
    let took = started.elapsed();
    assert_eq!(state["infos"]["n"], 1_000_000, "{said}");
    // The producer finished writing only when the VO had taken much of its 30 MB.
    assert!(sent_in * 4 > took, "sent in {sent_in:?} of {took:?}");
}

#[test]
fn sigterm_ends_the_run_with_everything_accepted() {
    let run = listen("term", &[]);
    let mut s = std::net::TcpStream::connect(&run.addr).unwrap();
    s.write_all(records(0, 1, 5_000).as_bytes()).unwrap();
    s.flush().unwrap();
    // The producer stays connected; the run is stopped from outside once the records are in.
    std::thread::sleep(Duration::from_millis(1500));
    let pid = run.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let (state, said) = run.finish();
    assert_eq!(state["infos"]["n"], 5_000, "{said}");
    assert!(said.contains("stopping"), "{said}");
    drop(s);
}

#[test]
fn voml_send_replays_a_trace_as_producers_paced_or_not() {
    // Each processor of the ring trace on its own connection; the counts equal a replay of
    // the file.
    let dir = std::env::temp_dir().join(format!("voml-live-send-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = root().join("examples/mpicl/count-events.voml");
    let trace = root().join("examples/mpicl/ring.trf");
    let (mut child, _stderr, addr) = support::listening(
        Command::new(env!("CARGO_BIN_EXE_voml"))
            .args([
                "run",
                spec.to_str().unwrap(),
                "--listen",
                ":0",
                "--producers",
                "8",
                "--headless",
            ])
            .arg("--out")
            .arg(dir.join("out"))
            .arg("--dump-state")
            .arg(dir.join("live.json"))
            .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home")),
    );
    let sent = Command::new(env!("CARGO_BIN_EXE_voml"))
        .args([
            "send",
            trace.to_str().unwrap(),
            "--to",
            &addr,
            "--split-by-processor",
        ])
        .output()
        .unwrap();
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    assert!(child.wait().unwrap().success());
    let replay = Command::new(env!("CARGO_BIN_EXE_voml"))
        .args([
            "run",
            spec.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--headless",
        ])
        .arg("--out")
        .arg(dir.join("out2"))
        .arg("--dump-state")
        .arg(dir.join("file.json"))
        .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"))
        .output()
        .unwrap();
    assert!(replay.status.success());
    let counts = |f: &str| support::dumped_counts(&dir.join(f));
    assert_eq!(counts("live.json"), counts("file.json"));

    // Paced: a trace of one trace second at twice real time takes about half a second.
    let paced = dir.join("paced.trf");
    std::fs::write(&paced, "-3 1 10.0 0\n-3 1 10.5 0\n-3 1 11.0 0\n").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let reader = std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        BufReader::new(s).lines().count()
    });
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_voml"))
        .args([
            "send",
            paced.to_str().unwrap(),
            "--to",
            &format!(":{port}"),
            "--speed",
            "2",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let took = started.elapsed();
    assert_eq!(reader.join().unwrap(), 3);
    assert!(took >= Duration::from_millis(450), "not paced: {took:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn voml_send_from_standard_input_sends_each_line_as_it_comes() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (got, lines) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        for line in BufReader::new(s).lines() {
            let _ = got.send(line.unwrap());
        }
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_voml"))
        .args(["send", "-", "--to", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The producer writes one record and waits: it must arrive while standard input is
    // still open.
    stdin.write_all(b"-3 1 0.5 0\n").unwrap();
    stdin.flush().unwrap();
    let first = lines.recv_timeout(Duration::from_secs(10));
    assert_eq!(first.as_deref(), Ok("-3 1 0.5 0"));
    stdin.write_all(b"-3 1 0.6 0\n").unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
    assert_eq!(lines.recv().as_deref(), Ok("-3 1 0.6 0"));
}

/// A producer whose host vanishes without closing its connection (here: the loopback of a
/// network namespace of the test's own taken down under it, so that nothing answers any
/// more) is noticed by the system's keepalive probes: the run reports the lost connection
/// with the producer's name and ends with what came before, instead of waiting for ever.
/// Needs `unshare -n` (root or user namespaces) and `ip`; without them the test says so and
/// does nothing, unless `VOML_REQUIRE_TOOLS` is set (as in CI).
#[test]
fn a_producer_whose_host_vanishes_is_given_up_after_the_keepalive_probes() {
    if !support::network_namespaces("the vanishing host") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("voml-live-vanish-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("count.voml");
    std::fs::write(&spec, COUNT).unwrap();
    // Inside the namespace: the run listens, a producer (bash's /dev/tcp) sends 20 records
    // and stays connected without a word, and the loopback goes down under both.
    let script = r#"set -e
ip link set lo up
"$VOML" run "$DIR/count.voml" --listen tcp://127.0.0.1:7402 --producers 1 --headless \
    --out "$DIR/out" --dump-state "$DIR/state.json" 2> "$DIR/voml.err" &
run=$!
for _ in $(seq 200); do grep -q listening "$DIR/voml.err" && break; sleep 0.05; done
exec 3<>/dev/tcp/127.0.0.1/7402
printf '%s' "$RECORDS" >&3
sleep 1
ip link set lo down
set +e
wait $run
echo "exit $?"
"#;
    let started = Instant::now();
    let mut child = Command::new("unshare")
        .args(["-n", "bash", "-c", script])
        .env("VOML", env!("CARGO_BIN_EXE_voml"))
        .env("DIR", &dir)
        .env("RECORDS", records(0, 1, 20))
        .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The probes give up about 25 s after the producer last spoke.
    let deadline = started + Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = Command::new("pkill")
                .args(["-f", dir.to_str().unwrap()])
                .status();
            panic!("voml waited for a producer whose host had vanished");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let took = started.elapsed();
    let mut out = String::new();
    let _ = std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out);
    let said = std::fs::read_to_string(dir.join("voml.err")).unwrap_or_default();
    assert!(out.contains("exit 0"), "{out}\n{said}");
    assert!(
        said.contains("tcp://127.0.0.1:") && said.contains("timed out"),
        "{said}"
    );
    // A lost connection is not a bad line.
    assert!(said.contains("1 input ended by a read error"), "{said}");
    assert!(!said.contains("bad lines"), "{said}");
    // Ended by the probes (10 s of silence, then 3 probes 5 s apart), not by anything sooner.
    assert!(took >= Duration::from_secs(20), "{took:?}\n{said}");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["infos"]["n"], 20, "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `voml send` to an address where nothing listens says so plainly: the failure is the
/// producer's connection, not a line of the trace.
#[test]
fn voml_send_to_nothing_says_it_cannot_connect() {
    // A port that was just free: nothing listens there once the listener is gone.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let trace = root().join("examples/mpicl/ring.trf");
    let out = Command::new(env!("CARGO_BIN_EXE_voml"))
        .args(["send", trace.to_str().unwrap(), "--to"])
        .arg(format!("127.0.0.1:{port}"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!("error: cannot connect to tcp://127.0.0.1:{port}")),
        "{said}"
    );
    assert!(!said.contains("(at line"), "{said}");
}
