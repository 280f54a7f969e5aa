//! Live instrumentation of MPI programs: the PMPI library (`instrument/mpi/voml_pmpi.c`,
//! built by `scripts/build-pmpi` with `mpicc`) loaded with `LD_PRELOAD` into the four
//! ranks of a small MPI program (`tests/mpi/exchange.c`) sends every send, receive, wait
//! and collective to a `voml run --listen` socket, one connection per rank: the visual
//! object counts exactly what the program says it did, and the program prints the same with
//! and without the library, with a listener or with none.
//!
//! Open MPI's `mpirun` (Debian: openmpi-bin, libopenmpi-dev) runs the ranks on this machine,
//! over shared memory and loopback only. Without it the tests print a note and do nothing,
//! unless `VOML_REQUIRE_TOOLS` is set (as in CI), where that is a failure.

mod support;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::mpi::{build, mpirun, mpirun_rounds, said, COUNT, LIMIT, MPIRUN_FLAGS};

fn scratch(name: &str) -> support::Scratch {
    support::Scratch::new("mpi", name)
}

/// `voml run` on the counting VO, listening on `listen` for 4 producers; its child, the
/// address it listens on, and what it says (on a TCP socket), once it has ended.
fn listening(
    dir: &Path,
    listen: &str,
) -> (
    std::process::Child,
    String,
    Option<std::thread::JoinHandle<String>>,
) {
    let spec = dir.join("count.voml");
    std::fs::write(&spec, COUNT).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_voml"));
    cmd.env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"))
        .arg("run")
        .arg(&spec)
        .args([
            "--listen",
            listen,
            "--producers",
            "4",
            "--headless",
            "--out",
        ])
        .arg(dir.join("out"))
        .arg("--dump-state")
        .arg(dir.join("state.json"));
    if let Some(path) = listen.strip_prefix("unix:") {
        // A Unix socket: listening once the socket file is there.
        let child = cmd.stderr(Stdio::null()).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !Path::new(path).exists() {
            assert!(Instant::now() < deadline, "voml did not listen on {listen}");
            std::thread::sleep(Duration::from_millis(20));
        }
        return (child, listen.to_string(), None);
    }
    let (child, mut stderr, addr) = support::listening(&mut cmd);
    // What it says after is read as it comes, so that it can go on writing.
    let said = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    (child, format!("tcp://{addr}"), Some(said))
}

/// Waits (bounded) for the run to end once all 4 ranks have closed, and reads what it
/// counted: sends, receives, collectives, waits, and the ranks that began tracing.
fn counted(mut child: std::process::Child, dir: &Path) -> [i64; 5] {
    let Some(status) = support::wait_bounded(&mut child, LIMIT) else {
        panic!("voml run did not end after the 4 ranks closed");
    };
    assert!(status.success());
    let text = std::fs::read_to_string(dir.join("state.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    ["sends", "receives", "collectives", "waits", "ranks"].map(|name| {
        v["infos"][name]
            .as_i64()
            .unwrap_or_else(|| panic!("{name}: {v}"))
    })
}

#[test]
fn a_visual_object_counts_every_send_and_receive_of_an_mpi_program() {
    let dir = scratch("tcp");
    let Some((library, program)) = build(&dir) else {
        return;
    };
    let plain = mpirun(&program, &[]);
    let (voml, addr, summary) = listening(&dir, "tcp://127.0.0.1:0");
    let traced = mpirun(
        &program,
        &[
            ("LD_PRELOAD", library.to_str().unwrap()),
            ("VOML_LISTEN", &addr),
        ],
    );
    let counts = counted(voml, &dir);
    // Every line the library sent was a record, of four producers.
    let summary = summary.unwrap().join().unwrap();
    assert!(!summary.contains("bad line"), "{summary}");
    assert!(!summary.contains("error"), "{summary}");
    assert!(summary.contains(" records from tcp://"), "{summary}");
    // The program's output is unchanged, and says what it did.
    assert_eq!(
        String::from_utf8_lossy(&traced.stdout),
        String::from_utf8_lossy(&plain.stdout)
    );
    let complaints = String::from_utf8_lossy(&traced.stderr);
    assert!(!complaints.contains("voml-pmpi"), "{complaints}");
    let [sends, receives, collectives, waits] = said(&plain.stdout);
    assert_eq!(sends, 4 * 5 * 20);
    assert_eq!(counts, [sends, receives, collectives, waits, 4]);
}

#[test]
fn over_a_unix_socket_and_with_no_listener_the_program_runs_the_same() {
    let dir = scratch("unix");
    let Some((library, program)) = build(&dir) else {
        return;
    };
    let plain = mpirun(&program, &[]);
    // No one listening: each rank says so once on standard error, and sends nothing; the
    // program's output is unchanged.
    let nowhere = format!("unix:{}", dir.join("nobody.sock").display());
    let alone = mpirun(
        &program,
        &[
            ("LD_PRELOAD", library.to_str().unwrap()),
            ("VOML_LISTEN", &nowhere),
        ],
    );
    assert_eq!(alone.stdout, plain.stdout);
    let complaints = String::from_utf8_lossy(&alone.stderr);
    assert_eq!(
        complaints.matches("cannot connect to VOML_LISTEN").count(),
        4,
        "{complaints}"
    );
    // A Unix socket.
    let socket = format!("unix:{}", dir.join("voml.sock").display());
    let (voml, addr, _) = listening(&dir, &socket);
    let traced = mpirun(
        &program,
        &[
            ("LD_PRELOAD", library.to_str().unwrap()),
            ("VOML_LISTEN", &addr),
        ],
    );
    let counts = counted(voml, &dir);
    assert_eq!(traced.stdout, plain.stdout);
    let [sends, receives, collectives, waits] = said(&plain.stdout);
    assert_eq!(counts, [sends, receives, collectives, waits, 4]);
}

/// Rounds enough for every rank to send several times what the sockets' buffers hold (about
/// 1 kB a rank a round).
const MANY_ROUNDS: &str = "20000";

/// A visual object that reads nothing for a while (paused, or slower than the program) is
/// waited for, however much longer than `VOML_SEND_TIMEOUT` that takes: the ranks block in
/// their sends while it does not read, and then every record of every rank arrives, up to
/// the last (MPI_Finalize's).
#[test]
fn a_listener_that_reads_nothing_for_a_while_slows_the_program_and_loses_nothing() {
    let dir = scratch("paused");
    let Some((library, program)) = build(&dir) else {
        return;
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("tcp://{}", listener.local_addr().unwrap());
    // Long enough for the ranks' window probes, answered, to come further apart than the
    // timeout (they back off from 0.2 s, doubling).
    let pause = Duration::from_secs(8);
    let reader = std::thread::spawn(move || {
        let ranks: Vec<_> = (0..4).map(|_| listener.accept().unwrap().0).collect();
        std::thread::sleep(pause);
        let readers: Vec<_> = ranks
            .into_iter()
            .map(|mut s| {
                std::thread::spawn(move || {
                    let mut text = String::new();
                    s.read_to_string(&mut text).unwrap();
                    text
                })
            })
            .collect();
        readers
            .into_iter()
            .map(|r| r.join().unwrap())
            .collect::<Vec<_>>()
    });
    let started = Instant::now();
    let traced = mpirun_rounds(
        &program,
        &[
            ("LD_PRELOAD", library.to_str().unwrap()),
            ("VOML_LISTEN", &addr),
            ("VOML_SEND_TIMEOUT", "1"),
        ],
        MANY_ROUNDS,
    );
    let took = started.elapsed();
    let streams = reader.join().unwrap();
    let complaints = String::from_utf8_lossy(&traced.stderr);
    assert!(!complaints.contains("voml-pmpi"), "{complaints}");
    // The program waited for the listener (its records did not fit in the buffers).
    assert!(
        took >= pause,
        "the program ended after {took:?}, before the pause did"
    );
    let [sends, ..] = said(&traced.stdout);
    let mut seen_sends = 0;
    for (rank, text) in streams.iter().enumerate() {
        let last = text.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("-4 -901 "),
            "rank {rank}'s stream ends with {last:?}, not MPI_Finalize's record"
        );
        seen_sends += text.lines().filter(|l| l.starts_with("-3 -27 ")).count() as i64;
    }
    assert_eq!(seen_sends, sends, "every send was recorded");
}

/// A VOML host that stops answering while the ranks send to it (its network gone: the
/// loopback taken down inside a network namespace of its own) is given up after
/// `VOML_SEND_TIMEOUT` seconds, with a word on standard error, and the program goes on; TCP
/// alone would keep the rank blocked for some 15 minutes.
#[test]
fn a_rank_gives_up_a_voml_host_that_stops_answering() {
    let dir = scratch("vanish");
    let Some((library, program)) = build(&dir) else {
        return;
    };
    if !support::network_namespaces("the silent host") {
        return;
    }
    std::fs::write(dir.join("count.voml"), COUNT).unwrap();
    // Inside the namespace: the run listens, the ranks connect and send, the loopback goes
    // down under them until one rank gives up, then comes back for the rest of the run.
    let script = r#"set -e
ip link set lo up
"$VOML" run "$DIR/count.voml" --listen tcp://127.0.0.1:7404 --producers 4 --headless \
    --out "$DIR/out" 2> "$DIR/voml.err" &
run=$!
for _ in $(seq 200); do grep -q listening "$DIR/voml.err" && break; sleep 0.05; done
mpirun --mca orte_tmpdir_base "$DIR/session" $MPIRUN_FLAGS -x LD_PRELOAD="$LIB" \
    -x VOML_LISTEN=tcp://127.0.0.1:7404 -x VOML_SEND_TIMEOUT=3 "$PROGRAM" "$ROUNDS" \
    > "$DIR/mpi.out" 2> "$DIR/mpi.err" &
mpi=$!
sleep 1.5
ip link set lo down
down=$(date +%s%N)
for _ in $(seq 600); do grep -q "no longer sent" "$DIR/mpi.err" && break; sleep 0.1; done
echo "gave up after $(( ($(date +%s%N) - down) / 1000000 )) ms"
ip link set lo up
set +e
wait $mpi
echo "mpirun exit $?"
wait $run
echo "voml exit $?"
"#;
    std::fs::create_dir_all(dir.join("session")).unwrap();
    let mut child = Command::new("unshare")
        .args(["-n", "bash", "-c", script])
        .env("VOML", env!("CARGO_BIN_EXE_voml"))
        .env("DIR", dir.as_path())
        .env("LIB", &library)
        .env("PROGRAM", &program)
        .env("ROUNDS", MANY_ROUNDS)
        .env("MPIRUN_FLAGS", MPIRUN_FLAGS.join(" "))
        .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let Some(status) = support::wait_bounded(&mut child, LIMIT) else {
        let _ = Command::new("pkill")
            .args(["-f", dir.to_str().unwrap()])
            .status();
        panic!("the run with a silent host did not end");
    };
    assert!(status.success());
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let complaints = std::fs::read_to_string(dir.join("mpi.err")).unwrap_or_default();
    let said_voml = std::fs::read_to_string(dir.join("voml.err")).unwrap_or_default();
    let context = format!("{out}\nmpirun: {complaints}\nvoml: {said_voml}");
    assert!(
        complaints.contains("the VOML host has not answered for 3 s; records are no longer sent"),
        "{context}"
    );
    // Given up within the timeout and a few looks, not when TCP would.
    let after: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("gave up after "))
        .and_then(|l| l.strip_suffix(" ms"))
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("{context}"));
    assert!(
        (3_000..20_000).contains(&after),
        "gave up after {after} ms: {context}"
    );
    // The program went on and ended as usual; so did the run, with what it was sent.
    assert!(out.contains("mpirun exit 0"), "{context}");
    assert!(out.contains("voml exit 0"), "{context}");
    let text = std::fs::read_to_string(dir.join("mpi.out")).unwrap_or_default();
    assert!(text.contains("checksum"), "{context}");
}
