//! Running MPI programs in tests (tests/mpi.rs, tests/nats.rs): the PMPI library and the
//! test program built with Open MPI's `mpicc`, `mpirun` on 4 ranks of this machine only, and
//! a visual object that counts what the library sends.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use super::root;

/// Counts what the library sends: sends (entries of -27), receives (exits of -51, and of
/// -52 with a source: a receive that blocked, not a wait), waits (entries of -52 named
/// `MPI_Wait...`), collectives (entries of broadcasts, all-reduces, reductions, barriers).
pub const COUNT: &str = r#"<voml><body><visual-object name="mpi-count">
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
pub const ROUNDS: &str = "20";

/// Longest any one program or run may take.
pub const LIMIT: Duration = Duration::from_secs(120);

/// Runs `cmd` to its end, within [`LIMIT`] (killed and failed beyond it).
pub fn bounded(cmd: &mut Command) -> Output {
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
    let Some(status) = super::wait_bounded(&mut child, LIMIT) else {
        panic!("{cmd:?} took longer than {LIMIT:?}");
    };
    Output {
        status,
        stdout: reading.join().unwrap(),
        stderr: reading_err.join().unwrap(),
    }
}

/// The library and the program, built in `dir`; `None` (with a note) without Open MPI.
pub fn build(dir: &Path) -> Option<(PathBuf, PathBuf)> {
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
/// `env` set in every rank. Each run keeps its session files in a directory of its own: two
/// `mpirun`s started together (tests run in parallel) raced to create the same one under
/// `/tmp` ("A call to mkdir was unable to create the desired directory ... File exists").
pub fn mpirun(program: &Path, env: &[(&str, &str)]) -> Output {
    mpirun_rounds(program, env, ROUNDS)
}

/// How the tests run `mpirun`: 4 ranks on this machine only (shared memory, loopback), also
/// as root.
pub const MPIRUN_FLAGS: [&str; 10] = [
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
];

/// [`mpirun`] of `program` for `rounds` rounds.
pub fn mpirun_rounds(program: &Path, env: &[(&str, &str)], rounds: &str) -> Output {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let session = std::env::temp_dir().join(format!("voml-ompi-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&session).expect("a session directory for mpirun");
    let mut cmd = Command::new("mpirun");
    cmd.arg("--mca").arg("orte_tmpdir_base").arg(&session);
    cmd.args(MPIRUN_FLAGS);
    for (name, value) in env {
        cmd.env(name, value).args(["-x", name]);
    }
    let out = bounded(cmd.arg(program).arg(rounds));
    let _ = std::fs::remove_dir_all(&session);
    assert!(
        out.status.success(),
        "mpirun: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// What the program says it did: sends, receives, collectives and waits, over all ranks.
pub fn said(stdout: &[u8]) -> [i64; 4] {
    let text = String::from_utf8_lossy(stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("sends "))
        .unwrap_or_else(|| panic!("no counts in {text}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    [1, 3, 5, 7].map(|i| words[i].parse().unwrap())
}
