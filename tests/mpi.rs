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
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::root;

/// Counts what the library sends: sends (entries of -27), receives (exits of -51, and of
/// -52 with a source: a receive that blocked, not a wait), waits (entries of -52 named
/// `MPI_Wait...`), collectives (entries of broadcasts, all-reduces, reductions, barriers).
const COUNT: &str = r#"<voml><body><visual-object name="mpi-count">
  <event-declarations>
    <data-event name="send" rtype="entry" etype="-27"><data-field name="ts" type="real"/></data-event>
    <data-event name="recv" rtype="exit" etype="-51"><data-field name="ts" type="real"/></data-event>
    <data-event name="brecv" rtype="exit" etype="-52"><data-field name="ts" type="real"/><data-field name="source" index="9" type="int"/></data-event>
    <data-event name="wait" rtype="entry" etype="-52"><data-field name="ts" type="real"/><data-field name="name" index="10" type="string"/></data-event>
    <data-event name="bcast" rtype="entry" etype="-785"><data-field name="ts" type="real"/></data-event>
    <data-event name="allreduce" rtype="entry" etype="-782"><data-field name="ts" type="real"/></data-event>
    <data-event name="reduce" rtype="entry" etype="-790"><data-field name="ts" type="real"/></data-event>
    <data-event name="barrier" rtype="entry" etype="-402"><data-field name="ts" type="real"/></data-event>
    <data-event name="any" rtype="entry" etype="-901"><data-field name="ts" type="real"/><data-field name="rank" type="int"/></data-event>
  </event-declarations>
  <info-structures>
    <variable name="sends" type="int" init="0"/>
    <variable name="receives" type="int" init="0"/>
    <variable name="collectives" type="int" init="0"/>
    <variable name="waits" type="int" init="0"/>
    <variable name="ranks" type="int" init="0"/>
  </info-structures>
  <view-initializations><view name="v" window="20 20"/></view-initializations>
  <event-processing>
    <ep-component name="count" inputs="send.ts recv.ts brecv.source wait.name bcast.ts allreduce.ts reduce.ts barrier.ts any.rank" infos="sends receives collectives waits ranks">
      <input name="^0">(set! $0 (+ $0 1))</input>
      <input name="^1">(set! $1 (+ $1 1))</input>
      <input name="^2">(if (&gt;= ^2/0 0) (set! $1 (+ $1 1)))</input>
      <input name="^3">(if (and (&gt;= (string-length ^3/0) 8) (string=? (substring ^3/0 0 8) "MPI_Wait")) (set! $3 (+ $3 1)))</input>
      <input name="^4">(set! $2 (+ $2 1))</input>
      <input name="^5">(set! $2 (+ $2 1))</input>
      <input name="^6">(set! $2 (+ $2 1))</input>
      <input name="^7">(set! $2 (+ $2 1))</input>
      <input name="^8">(set! $4 (+ $4 1))</input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;

/// Rounds of the program: 4 ranks make 16 sends and receives a round.
const ROUNDS: &str = "20";

/// Longest any one program or run may take.
const LIMIT: Duration = Duration::from_secs(120);

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("voml-mpi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `cmd` to its end, within [`LIMIT`] (killed and failed beyond it).
fn bounded(cmd: &mut Command) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reading = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = out.read_to_end(&mut text);
        text
    });
    let reading_err = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = err.read_to_end(&mut text);
        text
    });
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} took longer than {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: reading.join().unwrap(),
        stderr: reading_err.join().unwrap(),
    }
}

/// The library and the program, built in `dir`; `None` (with a note) without Open MPI.
fn build(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let have = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    };
    if !have("mpicc") || !have("mpirun") {
        let why = "mpicc and mpirun (Debian: openmpi-bin, libopenmpi-dev) are not installed";
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "{why} (required because VOML_REQUIRE_TOOLS is set)"
        );
        eprintln!("note: {why}; the MPI test is skipped");
        return None;
    }
    let built = bounded(Command::new(root().join("scripts/build-pmpi")).arg(dir.join("lib")));
    assert!(
        built.status.success(),
        "scripts/build-pmpi: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let library = dir.join("lib/libvoml-pmpi.so");
    assert!(library.is_file());
    let program = dir.join("exchange");
    let built = bounded(
        Command::new("mpicc")
            .args(["-O2", "-o"])
            .arg(&program)
            .arg(root().join("tests/mpi/exchange.c")),
    );
    assert!(
        built.status.success(),
        "mpicc exchange.c: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    Some((library, program))
}

/// `mpirun` on 4 ranks of `program`, on this machine only (shared memory, loopback), with
/// `env` set in every rank.
fn mpirun(program: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--mca",
        "btl",
        "self,vader",
        "--mca",
        "oob_tcp_if_include",
        "lo",
        "-np",
        "4",
    ]);
    for (name, value) in env {
        cmd.env(name, value).args(["-x", name]);
    }
    let out = bounded(cmd.arg(program).arg(ROUNDS));
    assert!(
        out.status.success(),
        "mpirun: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// What the program says it did: sends, receives, collectives and waits, over all ranks.
fn said(stdout: &[u8]) -> [i64; 4] {
    let text = String::from_utf8_lossy(stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("sends "))
        .unwrap_or_else(|| panic!("no counts in {text}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    [1, 3, 5, 7].map(|i| words[i].parse().unwrap())
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
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("voml run did not end after the 4 ranks closed");
        }
        std::thread::sleep(Duration::from_millis(20));
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
    assert_eq!(sends, 16 * 20);
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
