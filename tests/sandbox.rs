//! Hostile visual objects: code that tries to read or write files, run programs, read the
//! environment, open network connections, escape through `eval`, fresh engines or
//! prefixed `require-builtin`s, or block where the watchdog cannot interrupt it. Every
//! probe runs as an `<input>` part on a one-record trace (or its `utility-code` at load)
//! and must fail, visibly (a fault, or a load error), and without effect: marker files in
//! a scratch directory must stay absent, secrets must not show up in any message.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::{compile_text, finish, quiet_steel, replay_bytes};
use voml_runtime::{Config, Runtime};

/// The probes' scratch directory, emptied once per run: in Cargo's scratch directory for
/// tests (inside the target directory), so nothing is left in the system's temp directory.
fn scratch() -> PathBuf {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sandbox-probes");
    ONCE.call_once(|| {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
    });
    dir
}

/// A path as a Scheme string literal.
fn lit(path: &Path) -> String {
    format!("{:?}", path.to_str().expect("a UTF-8 temp path"))
}

fn spec(utility: &str, code: &str) -> String {
    support::one_part_spec("probe", "loot", utility, &format!("(set! $0 {code})"))
}

/// What became of a probe.
struct Outcome {
    /// It failed: a load error or a fault.
    failed: bool,
    /// Every message it produced, and the value it stored.
    text: String,
    took: Duration,
}

fn run_probe(utility: &str, code: &str, budget_ms: u64) -> Outcome {
    quiet_steel();
    let vo = compile_text("probe.voml", &spec(utility, code));
    let config = Config {
        strict: false,
        budget: Duration::from_millis(budget_ms),
        ..Config::default()
    };
    let started = Instant::now();
    let mut rt = match Runtime::headless(vo, config) {
        Ok(rt) => rt,
        Err(e) => {
            return Outcome {
                failed: true,
                text: format!("load error: {e}"),
                took: started.elapsed(),
            }
        }
    };
    replay_bytes(&mut rt, b"-3 1 0.5 0 0 0\n", "one.trf", false);
    let took = started.elapsed();
    let mut text: Vec<String> = rt.faults().iter().map(|f| f.to_string()).collect();
    let loot = rt.variable("loot").unwrap_or_default();
    text.push(format!("loot: {loot}"));
    Outcome {
        failed: !rt.faults().is_empty() && loot == "#false",
        text: text.join("\n"),
        took,
    }
}

/// Runs a probe; a complaint unless it failed, left no `marker` and leaked no `secret`.
fn probe(
    problems: &mut Vec<String>,
    what: &str,
    utility: &str,
    code: &str,
    marker: Option<&Path>,
    secret: Option<&str>,
) {
    let outcome = run_probe(utility, code, 10_000);
    if !outcome.failed {
        problems.push(format!("{what}: did not fail\n{}", outcome.text));
    }
    if let Some(m) = marker {
        if m.exists() {
            problems.push(format!("{what}: created {}", m.display()));
        }
    }
    if let Some(s) = secret.filter(|s| !s.is_empty()) {
        if outcome.text.contains(s) {
            problems.push(format!("{what}: leaked `{s}`:\n{}", outcome.text));
        }
    }
}

const SECRET: &str = "voml-sandbox-secret-4f1c";

fn secret_file() -> PathBuf {
    let path = scratch().join("secret.txt");
    std::fs::write(&path, format!("(define leaked \"{SECRET}\")\n")).unwrap();
    path
}

#[test]
fn files_cannot_be_read() {
    let secret = secret_file();
    let s = lit(&secret);
    let mut problems = Vec::new();
    for (what, utility, code) in [
        (
            "open-input-file",
            String::new(),
            format!("(read-port-to-string (open-input-file {s}))"),
        ),
        (
            "#%prim.open-input-file",
            String::new(),
            format!("(#%prim.read-port-to-string (#%prim.open-input-file {s}))"),
        ),
        (
            "steel/ports as a prefix",
            "(require-builtin steel/ports as io.)".to_string(),
            format!("(io.read-port-to-string (io.open-input-file {s}))"),
        ),
        (
            "steel/filesystem",
            "(require-builtin steel/filesystem)".to_string(),
            format!("(read-dir {})", lit(&scratch())),
        ),
        (
            "require of a Scheme file",
            format!("(require {s})"),
            "leaked".to_string(),
        ),
    ] {
        probe(&mut problems, what, &utility, &code, None, Some(SECRET));
    }
    // `require` of a system file must not echo any of it.
    if let Ok(passwd) = std::fs::read_to_string("/etc/passwd") {
        let first = passwd.lines().next().unwrap_or("").to_string();
        probe(
            &mut problems,
            "require /etc/passwd",
            r#"(require "/etc/passwd")"#,
            "1",
            None,
            Some(&first),
        );
    }
    finish(problems);
}

#[test]
fn files_cannot_be_created() {
    let mut problems = Vec::new();
    let created = scratch().join("created.txt");
    probe(
        &mut problems,
        "open-output-file",
        "",
        &format!(
            "(let ((port (open-output-file {}))) (write-string \"x\" port) (close-output-port port))",
            lit(&created)
        ),
        Some(&created),
        None,
    );
    let dir = scratch().join("created-dir");
    probe(
        &mut problems,
        "create-directory!",
        "",
        &format!("(create-directory! {})", lit(&dir)),
        Some(&dir),
        None,
    );
    finish(problems);
}

#[test]
fn programs_cannot_be_run() {
    let mut problems = Vec::new();
    let touch = |name: &str| {
        let m = scratch().join(name);
        let cmd = format!("(command \"touch\" (list {}))", lit(&m));
        (m, cmd)
    };
    let (m, cmd) = touch("spawned-plain");
    probe(
        &mut problems,
        "spawn-process",
        "(require-builtin steel/process)",
        &format!("(wait (spawn-process {cmd}))"),
        Some(&m),
        None,
    );
    let (m, _) = touch("spawned-prim");
    probe(
        &mut problems,
        "#%prim.spawn-process",
        "",
        &format!(
            "(#%prim.wait (#%prim.spawn-process (#%prim.command \"touch\" (list {}))))",
            lit(&m)
        ),
        Some(&m),
        None,
    );
    let (m, _) = touch("spawned-prefixed");
    probe(
        &mut problems,
        "require-builtin steel/process as p.",
        "(require-builtin steel/process as p.)",
        &format!(
            "(p.wait (p.spawn-process (p.command \"touch\" (list {}))))",
            lit(&m)
        ),
        Some(&m),
        None,
    );
    let (m, cmd) = touch("spawned-eval");
    probe(
        &mut problems,
        "eval of a quoted spawn",
        "",
        &format!("(eval '(begin (require-builtin steel/process) (wait (spawn-process {cmd}))))"),
        Some(&m),
        None,
    );
    let (m, cmd) = touch("spawned-eval-string");
    probe(
        &mut problems,
        "eval! of a string",
        "(require-builtin steel/meta as m.)",
        &format!(
            "(m.eval! {:?})",
            format!("(require-builtin steel/process) (wait (spawn-process {cmd}))")
        ),
        Some(&m),
        None,
    );
    // A fresh engine is not sandboxed.
    for (what, utility, prefix, name) in [
        ("run! in a fresh engine", "", "", "spawned-engine"),
        (
            "run! in a fresh engine from steel/meta",
            "(require-builtin steel/meta as m.)",
            "m.",
            "spawned-engine-meta",
        ),
        (
            "run! in a fresh engine from steel/base",
            "(require-builtin steel/base as b.)",
            "b.",
            "spawned-engine-base",
        ),
    ] {
        let (m, cmd) = touch(name);
        let program = format!("(require-builtin steel/process) (wait (spawn-process {cmd}))");
        probe(
            &mut problems,
            what,
            utility,
            &format!("({prefix}run! ({prefix}Engine::new) {program:?})"),
            Some(&m),
            None,
        );
    }
    // git-clone runs the git program.
    let clone = scratch().join("cloned");
    probe(
        &mut problems,
        "git-clone",
        "(require-builtin steel/git)",
        &format!(
            "(git-clone {} {} #f)",
            lit(&scratch().join("no-such-repository")),
            lit(&clone)
        ),
        Some(&clone),
        None,
    );
    let (m, cmd) = touch("spawned-thread");
    probe(
        &mut problems,
        "spawn-native-thread",
        "(require-builtin steel/process)",
        &format!("(spawn-native-thread (lambda () (wait (spawn-process {cmd}))))"),
        Some(&m),
        None,
    );
    std::thread::sleep(Duration::from_millis(200));
    for name in [
        "spawned-plain",
        "spawned-prim",
        "spawned-prefixed",
        "spawned-eval",
        "spawned-eval-string",
        "spawned-engine",
        "spawned-engine-meta",
        "spawned-engine-base",
        "spawned-thread",
    ] {
        if scratch().join(name).exists() {
            problems.push(format!("{name} exists: a process ran"));
        }
    }
    finish(problems);
}

#[test]
fn the_environment_cannot_be_read() {
    let home = std::env::var("HOME").unwrap_or_default();
    let mut problems = Vec::new();
    for (what, utility, code) in [
        ("env-var", "", r#"(env-var "HOME")"#),
        ("#%prim.env-var", "", r#"(#%prim.env-var "HOME")"#),
        (
            "env-var from steel/base",
            "(require-builtin steel/base as b.)",
            r#"(b.env-var "HOME")"#,
        ),
    ] {
        probe(&mut problems, what, utility, code, None, Some(&home));
    }
    finish(problems);
}

#[test]
fn the_network_cannot_be_reached() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a local port");
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let mut problems = Vec::new();
    probe(
        &mut problems,
        "tcp-connect",
        "(require-builtin steel/tcp)",
        &format!("(tcp-connect {address:?})"),
        None,
        None,
    );
    probe(
        &mut problems,
        "#%prim.tcp-connect",
        "",
        &format!("(#%prim.tcp-connect {address:?})"),
        None,
        None,
    );
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((_, peer)) => problems.push(format!("a probe connected from {peer}")),
        Err(e) => problems.push(format!("accept failed: {e}")),
    }
    finish(problems);
}

#[test]
fn code_cannot_block_beyond_the_watchdog() {
    // The watchdog interrupts the engine between instructions: a native call that blocks
    // (sleeping, reading standard input, waiting on a channel) would hold the run.
    let mut problems = Vec::new();
    for (what, code) in [
        ("time/sleep-ms", "(time/sleep-ms 3000)"),
        ("stdin", "(read-line-from-port (stdin))"),
        (
            "current-input-port",
            "(read-line-from-port (current-input-port))",
        ),
        (
            "channel/recv",
            "(let* ((c (channels/new)) (s (channels-sender c))) (channel/recv (channels-receiver c)))",
        ),
    ] {
        // In a thread of its own, so that a probe that does block fails the test instead
        // of hanging it.
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = send.send(run_probe("", code, 100));
        });
        let Ok(outcome) = receive.recv_timeout(Duration::from_secs(20)) else {
            problems.push(format!("{what}: still blocked after 20 s"));
            continue;
        };
        if !outcome.failed {
            problems.push(format!("{what}: did not fail\n{}", outcome.text));
        }
        if outcome.took > Duration::from_millis(2500) {
            problems.push(format!("{what}: held the run for {:?}", outcome.took));
        }
    }
    finish(problems);
}

#[test]
fn expansion_evaluation_and_reflection_are_closed() {
    let secret = secret_file();
    let s = lit(&secret);
    let marker = scratch().join("expanded-touch");
    let spawn = format!(
        "(begin (require-builtin steel/process) (wait (spawn-process (command \"touch\" (list {})))))",
        lit(&marker)
    );
    let mut problems = Vec::new();
    for (what, utility, code) in [
        (
            "emit-expanded",
            String::new(),
            format!("(emit-expanded {s})"),
        ),
        (
            "load-expanded",
            String::new(),
            format!("(load-expanded {s})"),
        ),
        (
            "maybe-get-env-var",
            String::new(),
            "(maybe-get-env-var \"HOME\")".to_string(),
        ),
        (
            "eval of text read from a string",
            String::new(),
            format!("(eval (read (open-input-string {spawn:?})))"),
        ),
        (
            "eval-string",
            String::new(),
            format!("(eval-string {spawn:?})"),
        ),
        (
            "a symbol made from a string",
            String::new(),
            "((string->symbol \"spawn-process\") 1)".to_string(),
        ),
        (
            "a builtin rebound under another name",
            "(define run-it spawn-process)".to_string(),
            "(run-it (command \"true\" (list)))".to_string(),
        ),
        (
            "a local that captures a refused builtin",
            String::new(),
            "(let ((spawn-process spawn-process)) (spawn-process (command \"true\" (list))))"
                .to_string(),
        ),
        (
            "a user macro",
            "(define-syntax m (syntax-rules () ((_ x) x)))".to_string(),
            "(m 1)".to_string(),
        ),
        (
            "defmacro",
            "(defmacro (m x) x)".to_string(),
            "1".to_string(),
        ),
        (
            "a module",
            "(module m (provide x) (define x 1))".to_string(),
            "1".to_string(),
        ),
        (
            "a struct",
            "(struct point (x y))".to_string(),
            "(point 1 2)".to_string(),
        ),
        (
            "displayln",
            String::new(),
            "(displayln \"out\")".to_string(),
        ),
        (
            "current-milliseconds",
            String::new(),
            "(current-milliseconds)".to_string(),
        ),
    ] {
        probe(
            &mut problems,
            what,
            &utility,
            &code,
            Some(&marker),
            Some(SECRET),
        );
    }
    std::thread::sleep(Duration::from_millis(100));
    if marker.exists() {
        problems.push("a process ran".into());
    }
    if Path::new("fully-expanded.bin").exists() {
        problems.push("fully-expanded.bin was written".into());
    }
    finish(problems);
}

#[test]
fn a_scheme_payload_in_the_trace_cannot_run() {
    quiet_steel();
    let marker = scratch().join("payload-touch");
    let spec = r#"<?xml version="1.0"?>
<voml>
  <body>
    <visual-object name="payload">
      <event-declarations>
        <data-event name="msg" rtype="entry" etype="1">
          <data-field name="ts" type="real"/>
          <data-field name="text" type="string" index="4"/>
        </data-event>
      </event-declarations>
      <info-structures>
        <variable name="seen" type="any"/>
      </info-structures>
      <event-processing>
        <ep-component name="reader" inputs="msg.text" infos="seen">
          <input name="^0"><![CDATA[
            (set! $0 (eval (read (open-input-string ^0))))
          ]]></input>
        </ep-component>
      </event-processing>
    </visual-object>
  </body>
</voml>
"#;
    let vo = compile_text("payload.voml", spec);
    let payload = format!(
        "(begin (require-builtin steel/process) (wait (spawn-process (command \"touch\" (list {})))))",
        lit(&marker)
    )
    .replace('"', "'");
    let trace = format!("-3 1 0.5 0 \"{payload}\"\n");
    let mut problems = Vec::new();
    match Runtime::headless(vo, Config::default()) {
        Err(e) => {
            if !e.to_string().contains("payload.voml:") {
                problems.push(format!("the load error is not located: {e}"));
            }
        }
        Ok(mut rt) => {
            replay_bytes(&mut rt, trace.as_bytes(), "payload.trf", false);
            if rt.faults().is_empty() {
                problems.push("no fault".into());
            }
        }
    }
    std::thread::sleep(Duration::from_millis(100));
    if marker.exists() {
        problems.push("the payload ran a process".into());
    }
    finish(problems);
}

/// `voml check` and `voml run` on a spec whose utility code tries to run a program: both
/// refuse with a located error and a non-zero exit, and nothing runs.
#[test]
fn the_cli_refuses_escapes_in_utility_code() {
    let dir = scratch().join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("touched-by-check");
    let utility = format!(
        "(define done (wait (spawn-process (command \"touch\" (list {})))))",
        lit(&marker)
    );
    let spec_path = dir.join("escape.voml");
    std::fs::write(&spec_path, spec(&utility, "1")).unwrap();
    let trace = dir.join("one.trf");
    std::fs::write(&trace, "-3 1 0.5 0 0 0\n").unwrap();
    let out_dir = dir.join("out");
    let mut problems = Vec::new();
    let runs: [Vec<&std::ffi::OsStr>; 2] = [
        vec!["check".as_ref(), spec_path.as_os_str()],
        vec![
            "run".as_ref(),
            spec_path.as_os_str(),
            "--trace".as_ref(),
            trace.as_os_str(),
            "--headless".as_ref(),
            "--out".as_ref(),
            out_dir.as_os_str(),
        ],
    ];
    for args in runs {
        let started = Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_voml"))
            .args(&args)
            .current_dir(&dir)
            .output()
            .expect("voml runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if out.status.success() {
            problems.push(format!("{args:?}: exit 0:\n{text}"));
        }
        if !text.contains("escape.voml:") || !text.contains("not available to visual objects") {
            problems.push(format!("{args:?}: no located refusal:\n{text}"));
        }
        if started.elapsed() > Duration::from_secs(5) {
            problems.push(format!("{args:?}: took {:?}", started.elapsed()));
        }
    }
    std::thread::sleep(Duration::from_millis(100));
    if marker.exists() {
        problems.push("a process ran".into());
    }
    finish(problems);
}
