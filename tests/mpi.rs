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

use support::mpi::{build, mpirun, said, COUNT, LIMIT};

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
