//! Tests of the `voml` binary: exit statuses, JSON diagnostics, the search path, the files
//! and programs `compile` writes, and `explain`. Every command runs with the repository root
//! as its working directory and without the caller's `VOML_PATH` and `VOML_CACHE`.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn voml(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_voml"));
    cmd.args(args)
        .current_dir(root())
        .env_remove("VOML_PATH")
        .env_remove("VOML_CACHE")
        .env("NO_COLOR", "1");
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("the voml binary runs")
}

fn status(out: &Output) -> i32 {
    out.status.code().expect("voml exits normally")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh, empty directory for one test's outputs.
fn scratch(name: &str) -> support::Scratch {
    support::Scratch::new("cli", name)
}

fn paper_examples() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("examples/paper"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "voml"))
        .map(|p| {
            p.strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no examples in examples/paper");
    files
}

/// A spec whose entity lives in another directory, and that directory.
const SEARCH_SPEC: &str = "tests/check/search/spec/sendcounts.voml";
const SEARCH_DIR: &str = "tests/check/search/lib";

#[test]
fn check_accepts_the_paper_examples() {
    let files = paper_examples();
    let mut args = vec!["check"];
    args.extend(files.iter().map(String::as_str));
    let out = run(&mut voml(&args));
    assert_eq!(status(&out), 0, "stderr:\n{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    for file in &files {
        assert!(
            stderr.contains(&format!("{file}: ok")),
            "no summary for {file}:\n{stderr}"
        );
    }
}

#[test]
fn check_fails_on_a_broken_spec() {
    let out = run(&mut voml(&["check", "tests/check/unknown-event.voml"]));
    assert_eq!(status(&out), 1);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error[E0021]"), "{stderr}");
    assert!(
        stderr.contains("tests/check/unknown-event.voml:"),
        "{stderr}"
    );
}

#[test]
fn warnings_pass_unless_denied() {
    let spec = "tests/check/unused-info.voml";
    let out = run(&mut voml(&["check", spec]));
    assert_eq!(status(&out), 0, "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("warning[W0001]"));
    let out = run(&mut voml(&["check", "--deny-warnings", spec]));
    assert_eq!(status(&out), 1);
}

#[test]
fn usage_errors_exit_2() {
    let out = run(&mut voml(&[
        "check",
        "--no-such-flag",
        "examples/paper/lineplot.voml",
    ]));
    assert_eq!(status(&out), 2, "{}", text(&out.stderr));
    let out = run(&mut voml(&["check"]));
    assert_eq!(status(&out), 2, "{}", text(&out.stderr));
    let out = run(&mut voml(&[]));
    assert_eq!(status(&out), 2, "{}", text(&out.stderr));
}

#[test]
fn json_messages_are_one_object_per_line() {
    let spec = "tests/check/multi-names.voml";
    let out = run(&mut voml(&["check", "--message-format", "json", spec]));
    assert_eq!(status(&out), 1);
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.len() >= 2, "expected several diagnostics:\n{stdout}");
    let mut codes = Vec::new();
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON object ({e}): {line}"));
        assert_eq!(v["file"], spec, "{line}");
        assert!(v["line_start"].as_u64().is_some_and(|n| n > 0), "{line}");
        assert!(v["column_start"].as_u64().is_some_and(|n| n > 0), "{line}");
        assert!(
            v["severity"].is_string() && v["message"].is_string(),
            "{line}"
        );
        codes.push(v["code"].as_str().expect("a code").to_string());
    }
    assert!(codes.iter().any(|c| c == "E0021"), "{codes:?}");
    // The human summary is not mixed into machine output.
    assert!(
        !stdout.contains(": ok") && !stdout.contains("error["),
        "{stdout}"
    );
}

#[test]
fn an_include_directory_makes_an_entity_resolvable() {
    let out = run(&mut voml(&["check", SEARCH_SPEC]));
    assert_eq!(status(&out), 1, "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("E0011"), "{}", text(&out.stderr));

    let out = run(&mut voml(&["check", "-I", SEARCH_DIR, SEARCH_SPEC]));
    assert_eq!(status(&out), 0, "{}", text(&out.stderr));
    let out = run(&mut voml(&["check", "--include", SEARCH_DIR, SEARCH_SPEC]));
    assert_eq!(status(&out), 0, "{}", text(&out.stderr));
}

#[test]
fn voml_path_makes_an_entity_resolvable() {
    let elsewhere = scratch("voml-path");
    let path = std::env::join_paths([elsewhere.as_path(), Path::new(SEARCH_DIR)]).unwrap();
    let out = run(voml(&["check", SEARCH_SPEC]).env("VOML_PATH", &path));
    assert_eq!(status(&out), 0, "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(elsewhere);
}

#[test]
fn compile_writes_a_visual_object() {
    let dir = scratch("compile");
    let vo = dir.join("lineplot.vo");
    let out = run(&mut voml(&[
        "compile",
        "examples/paper/lineplot.voml",
        "-o",
        vo.to_str().unwrap(),
    ]));
    assert_eq!(status(&out), 0, "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&vo).expect("the .vo file is written");
    let v: serde_json::Value = serde_json::from_str(&written).expect("a .vo file is JSON");
    assert_eq!(v["format"], 1);
    assert_eq!(v["name"], "lineplot");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn compile_writes_nothing_for_a_broken_spec() {
    let dir = scratch("compile-broken");
    let vo = dir.join("broken.vo");
    let out = run(&mut voml(&[
        "compile",
        "tests/check/scheme-syntax.voml",
        "-o",
        vo.to_str().unwrap(),
    ]));
    assert_eq!(status(&out), 1);
    assert!(!vo.exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn compile_emits_scheme_and_ir() {
    let out = run(&mut voml(&[
        "compile",
        "examples/paper/bandwidth.voml",
        "--emit",
        "scheme",
    ]));
    assert_eq!(status(&out), 0, "{}", text(&out.stderr));
    let scheme = text(&out.stdout);
    assert!(scheme.contains("(define (voml/ep/"), "{scheme}");

    let out = run(&mut voml(&[
        "compile",
        "examples/paper/bandwidth.voml",
        "--emit",
        "ir",
    ]));
    assert_eq!(status(&out), 0, "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the IR is JSON");
    assert_eq!(v["format"], 1);
}

#[test]
fn explain_prints_an_entry() {
    let out = run(&mut voml(&["explain", "E0021"]));
    assert_eq!(status(&out), 0);
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("E0021 `unknown-event`"), "{stdout}");
    assert!(stdout.contains("does not declare"), "{stdout}");
    // By name too.
    let out = run(&mut voml(&["explain", "unknown-event"]));
    assert_eq!(status(&out), 0);
    assert_eq!(text(&out.stdout), stdout);
}

#[test]
fn explain_rejects_an_unknown_code() {
    let out = run(&mut voml(&["explain", "nonsense"]));
    assert_eq!(status(&out), 2);
    assert!(text(&out.stdout).is_empty());
    assert!(text(&out.stderr).contains("nonsense"));
}

#[test]
fn components_lists_the_library_and_shows_an_interface() {
    let out = run(&mut voml(&["components"]));
    assert_eq!(status(&out), 0);
    let listing = text(&out.stdout);
    assert!(listing.contains("voml:auralization.voml"), "{listing}");
    for name in ["send-receive", "idle-busy", "tr-sendnum"] {
        assert!(
            listing.contains(&format!("  {name} ")),
            "{name} missing:\n{listing}"
        );
    }
    let out = run(&mut voml(&["components", "idle-busy"]));
    assert_eq!(status(&out), 0);
    let shown = text(&out.stdout);
    assert!(
        shown.contains("inputs    idle.ts.proc busy.ts.proc"),
        "{shown}"
    );
    assert!(
        shown.contains("<import href=\"voml:auralization.voml\"/>"),
        "{shown}"
    );
    let out = run(&mut voml(&["components", "send"]));
    assert_eq!(status(&out), 1);
    let said = text(&out.stderr);
    assert!(
        said.contains("no component `send`") && said.contains("send-receive"),
        "{said}"
    );
}

/// `voml run SPEC --trace TRACE --headless --out OUT --profile`, which must succeed: its
/// standard error, where the profile is.
fn run_profiled(spec: &str, trace: &str, out_dir: &Path) -> String {
    let out = run(&mut voml(&[
        "run",
        spec,
        "--trace",
        trace,
        "--headless",
        "--out",
        out_dir.to_str().unwrap(),
        "--profile",
    ]));
    let err = text(&out.stderr);
    assert_eq!(status(&out), 0, "{err}");
    err
}

/// The row of `--profile`'s table (in `err`) for `part`.
fn profile_row(err: &str, part: &str) -> String {
    err.lines()
        .map(str::trim_start)
        .find(|l| l.starts_with(part))
        .unwrap_or_else(|| panic!("no row for {part}:\n{err}"))
        .to_string()
}

/// How many times `part` ran, as `--profile`'s table says: the first column after its name.
fn profile_calls(err: &str, part: &str) -> usize {
    let line = profile_row(err, part);
    line[part.len()..]
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no count in `{line}`"))
}

/// A part the runtime carries out without Scheme says so in the profile, with its calls.
#[test]
fn run_profile_marks_native_parts() {
    let out_dir = scratch("profile-native");
    let spec = out_dir.join("count.voml");
    std::fs::write(
        &spec,
        r#"<voml><body><visual-object name="count">
  <event-declarations>
    <data-event name="enter" rtype="entry" etype="-27"><data-field name="ts" type="real"/><data-field name="proc" type="int"/></data-event>
  </event-declarations>
  <info-structures><variable name="counts" type="vector" init="(0 0 0 0 0 0 0 0)"/></info-structures>
  <event-processing>
    <ep-component name="count" inputs="enter.ts.proc" infos="counts">
      <input name="^0">(vector-set! $0 ^0/1 (+ 1 (vector-ref $0 ^0/1)))</input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#,
    )
    .unwrap();
    let trace = "examples/mpicl/ring.trf";
    let entries = std::fs::read_to_string(root().join(trace))
        .unwrap()
        .lines()
        .filter(|l| l.split_whitespace().take(2).eq(["-3", "-27"]))
        .count();
    let err = run_profiled(spec.to_str().unwrap(), trace, &out_dir);
    assert_eq!(
        profile_calls(&err, "EP component `count` input ^0 (native)"),
        entries
    );
    assert!(entries > 100);
}

/// `voml run --profile` ends with where the time went: each part that ran, as often as it
/// ran, and what was left outside the parts.
#[test]
fn run_profile_shows_each_part_and_its_calls() {
    let out_dir = scratch("profile");
    let trace = "examples/paper/lineplot.trf";
    let records = std::fs::read_to_string(root().join(trace))
        .unwrap()
        .lines()
        .filter(|l| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with('#') && !l.starts_with('%')
        })
        .count();
    let err = run_profiled("examples/paper/lineplot.voml", trace, &out_dir);
    assert!(err.contains("where the time went"), "{err}");
    let row = |part: &str| profile_row(&err, part);
    let calls = |part: &str| profile_calls(&err, part);
    // The EP component runs once per sample record; the IR component renders after each
    // record, and also at the start and the end of the input (both as forms, natively).
    assert_eq!(
        calls("EP component `onescalarprocess` input ^0 (native)"),
        records
    );
    assert!(calls("IR component `lineplotrender` phase 1 (native)") > records);
    assert!(row("everything else").ends_with('%'));
    assert!(err.contains("loading the visual object"), "{err}");
    // Without the flag there is no table.
    let out = run(&mut voml(&[
        "run",
        "examples/paper/lineplot.voml",
        "--trace",
        trace,
        "--headless",
        "--out",
        out_dir.to_str().unwrap(),
    ]));
    assert!(!text(&out.stderr).contains("where the time went"));
}
