//! `voml run`, `send` and `serve` take traces of any format the adapters read: told by
//! content, or forced with `--format`. The message dashboard written for MPICL traces
//! (`examples/library/messages.voml`) runs unchanged on the Pajé, Chrome and Paraver
//! versions of the examples' ring and matches every one of its 144 messages, and on an OTF2
//! ring written by the OTF2 library.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::root;

fn scratch(name: &str) -> support::Scratch {
    support::Scratch::new("cli-formats", name)
}

fn voml() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_voml"));
    cmd.env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"));
    cmd
}

/// `voml run messages.voml --trace TRACE --headless` with `extra` arguments; its output and
/// the number of messages it matched.
fn run_messages(trace: &Path, extra: &[&str], dir: &Path) -> (Output, i64) {
    let state = dir.join("state.json");
    let out = voml()
        .arg("run")
        .arg(root().join("examples/library/messages.voml"))
        .arg("--trace")
        .arg(trace)
        .args(["--headless", "--out"])
        .arg(dir.join("out"))
        .arg("--dump-state")
        .arg(&state)
        .args(extra)
        .output()
        .unwrap();
    (out, matched(&state))
}

fn matched(state: &Path) -> i64 {
    let text =
        std::fs::read_to_string(state).unwrap_or_else(|e| panic!("{}: {e}", state.display()));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["infos"]["matched"].as_i64().unwrap()
}

#[test]
fn voml_run_tells_each_format_by_its_content() {
    for trace in ["ring.paje", "ring.json", "ring.prv"] {
        let dir = scratch(trace);
        let path = root().join("examples/formats").join(trace);
        let (out, matched) = run_messages(&path, &[], &dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{trace}: {stderr}");
        assert!(!stderr.contains("warning"), "{trace}: {stderr}");
        assert_eq!(matched, 144, "{trace}: {stderr}");
        // The same, forced.
        let word = match trace {
            "ring.paje" => "paje",
            "ring.json" => "chrome",
            _ => "paraver",
        };
        let (out, forced) = run_messages(&path, &["--format", word], &dir);
        assert!(out.status.success());
        assert_eq!(forced, 144, "{trace} with --format {word}");
    }
}

#[test]
fn voml_run_format_forces_the_reader() {
    let dir = scratch("forced");
    // A Chrome trace read as PICL: every line is a bad line, reported in place, and the run
    // goes on to the end.
    let (out, matched) = run_messages(
        &root().join("examples/formats/ring.json"),
        &["--format", "picl"],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(matched, 0);
    assert!(
        stderr.contains(
            "ring.json:1:1: expected an integer record type, found `{\"displayTimeUnit\":`"
        ),
        "{stderr}"
    );
    // A word it does not know is a usage error, for every command that reads a trace.
    for args in [
        vec![
            "run",
            "x.voml",
            "--trace",
            "t",
            "--format",
            "otf",
            "--headless",
        ],
        vec!["serve", "x.voml", "--trace", "t", "--format", "otf"],
        vec!["send", "t", "--to", ":1", "--format", "otf"],
    ] {
        let out = voml().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("[possible values: picl, paje, chrome, paraver, otf2]"),
            "{stderr}"
        );
    }
}

#[test]
fn a_bad_record_is_reported_at_its_place_and_the_rest_runs() {
    let dir = scratch("bad");
    let trace = dir.join("cut.json");
    let mut text = std::fs::read_to_string(root().join("examples/formats/ring.json")).unwrap();
    // A broken flow start (the first): its time is not a number.
    let start = text.find("\"ph\": \"s\"").unwrap();
    let ts = start + text[start..].find("\"ts\": ").unwrap();
    text.replace_range(ts..ts + 6, "\"ts\": \"soon\", \"x\": ");
    let line = text[..ts].lines().count();
    std::fs::write(&trace, text).unwrap();
    let (out, matched) = run_messages(&trace, &[], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("cut.json:{line}:")), "{stderr}");
    assert!(
        stderr.contains("bad event: invalid type: string \"soon\""),
        "{stderr}"
    );
    // The event was a flow start: its message is lost, the others are all matched.
    assert_eq!(matched, 143, "{stderr}");
}

#[test]
fn voml_send_sends_other_formats_as_picl_records() {
    let dir = scratch("send");
    let state = dir.join("live.json");
    let (mut child, _stderr, addr) = support::listening(
        voml()
            .arg("run")
            .arg(root().join("examples/library/messages.voml"))
            .args(["--listen", ":0", "--producers", "1", "--headless", "--out"])
            .arg(dir.join("out"))
            .arg("--dump-state")
            .arg(&state),
    );
    let sent = voml()
        .arg("send")
        .arg(root().join("examples/formats/ring.paje"))
        .args(["--to", &addr])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&sent.stderr);
    assert!(sent.status.success(), "{said}");
    // Every record of the trace, as the adapter gives them.
    let records = voml_trace::FormatReader::open(
        root().join("examples/formats/ring.paje"),
        voml_trace::ReadOptions::default(),
        None,
    )
    .unwrap()
    .filter(Result::is_ok)
    .count();
    assert!(said.contains(&format!("sent {records} records")), "{said}");
    assert!(child.wait().unwrap().success());
    assert_eq!(matched(&state), 144);
}

#[test]
fn voml_run_and_send_read_an_otf2_archive_by_its_anchor_file() {
    let dir = scratch("otf2");
    let Some(anchor) = support::otf2_trace(&dir, &["ring", "6", "24"]) else {
        return;
    };
    // Told by content, and forced: every one of the 144 messages matched; and so in the
    // examples' ring (six ranks, 24 rounds too).
    let example = root().join("examples/formats/ring-otf2/ring.otf2");
    for (trace, extra) in [
        (&anchor, &[][..]),
        (&anchor, &["--format", "otf2"][..]),
        (&example, &[][..]),
    ] {
        let (out, matched) = run_messages(trace, extra, &dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(!stderr.contains("warning"), "{stderr}");
        assert_eq!(matched, 144, "{} {extra:?}: {stderr}", trace.display());
    }
    // Sent to a listening run as PICL lines: the same.
    let state = dir.join("live.json");
    let (mut child, _stderr, addr) = support::listening(
        voml()
            .arg("run")
            .arg(root().join("examples/library/messages.voml"))
            .args(["--listen", ":0", "--producers", "1", "--headless", "--out"])
            .arg(dir.join("live"))
            .arg("--dump-state")
            .arg(&state),
    );
    let sent = voml()
        .arg("send")
        .arg(&anchor)
        .args(["--to", &addr])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&sent.stderr);
    assert!(sent.status.success(), "{said}");
    // Per rank: main's entry and exit; per round 11 records.
    assert!(
        said.contains(&format!("sent {} records", 6 * (2 + 11 * 24))),
        "{said}"
    );
    assert!(child.wait().unwrap().success());
    assert_eq!(matched(&state), 144);
}
