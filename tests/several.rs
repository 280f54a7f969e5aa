//! `voml run A.voml B.voml ...`: several visual objects on one input, read once. Each ends
//! exactly as it would alone (pictures and dumped state byte for byte), live input included;
//! one broken spec stops all of them before anything runs.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::root;

fn voml(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_voml"));
    cmd.args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"));
    cmd
}

fn scratch(name: &str) -> support::Scratch {
    support::Scratch::new("several", name)
}

fn ok(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

fn read(path: PathBuf) -> Vec<u8> {
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `specs` together over the ring trace, headless, with their pictures under `out` and
/// their state in `state`; what voml said.
fn together(specs: &[&str], out: &Path, state: &Path, extra: &[&str]) -> String {
    let mut args = vec!["run"];
    args.extend_from_slice(specs);
    args.extend_from_slice(&[
        "--trace",
        "examples/mpicl/ring.trf",
        "--headless",
        "--out",
        out.to_str().unwrap(),
        "--dump-state",
        state.to_str().unwrap(),
    ]);
    args.extend_from_slice(extra);
    ok(voml(&args).output().unwrap())
}

/// `spec` alone, as [`together`].
fn alone(spec: &str, out: &Path, state: &Path, extra: &[&str]) {
    together(&[spec], out, state, extra);
}

const SPECS: [(&str, &str); 2] = [
    ("examples/mpicl/count-events.voml", "bars"),
    ("examples/mpicl/sends-and-receives.voml", "spacetime"),
];

#[test]
fn each_visual_object_ends_as_it_would_alone() {
    let dir = scratch("file");
    let out = dir.join("together");
    let state = dir.join("state.json");
    let stderr = together(&[SPECS[0].0, SPECS[1].0, SPECS[0].0], &out, &state, &[]);
    // Every line says which visual object it is about; the same spec twice is numbered.
    for label in ["count-events", "sends-and-receives", "count-events-2"] {
        assert!(
            stderr.contains(&format!(
                "{label}: 1360 records from examples/mpicl/ring.trf"
            )),
            "{stderr}"
        );
    }
    for (i, (spec, view)) in SPECS.iter().enumerate() {
        let alone_dir = dir.join(format!("alone-{i}"));
        std::fs::create_dir_all(&alone_dir).unwrap();
        alone(spec, &alone_dir, &alone_dir.join("state.json"), &[]);
        let alone = alone_dir;
        let label = Path::new(spec).file_stem().unwrap().to_str().unwrap();
        assert_eq!(
            read(alone.join(format!("{view}.png"))),
            read(out.join(label).join(format!("{view}.png"))),
            "{label}'s picture"
        );
        assert_eq!(
            read(alone.join("state.json")),
            read(dir.join(format!("state-{label}.json"))),
            "{label}'s state"
        );
    }
    assert_eq!(
        read(out.join("count-events/bars.png")),
        read(out.join("count-events-2/bars.png"))
    );
}

#[test]
fn one_script_drives_them_all() {
    let dir = scratch("until");
    together(
        &[SPECS[0].0, SPECS[1].0],
        &dir.join("out"),
        &dir.join("s.json"),
        &["--until", "0.05"],
    );
    alone(
        SPECS[0].0,
        &dir.join("alone"),
        &dir.join("alone.json"),
        &["--until", "0.05"],
    );
    assert_eq!(
        read(dir.join("alone.json")),
        read(dir.join("s-count-events.json"))
    );
}

#[test]
fn live_records_reach_every_visual_object() {
    let dir = scratch("live");
    let (mut child, mut stderr, addr) = support::listening(&mut voml(&[
        "run",
        SPECS[0].0,
        SPECS[0].0,
        "--listen",
        ":0",
        "--producers",
        "8",
        "--headless",
        "--out",
        dir.join("out").to_str().unwrap(),
        "--dump-state",
        dir.join("live.json").to_str().unwrap(),
    ]));
    ok(voml(&[
        "send",
        "examples/mpicl/ring.trf",
        "--to",
        &addr,
        "--split-by-processor",
    ])
    .output()
    .unwrap());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert!(child.wait().unwrap().success(), "{rest}");
    alone(SPECS[0].0, &dir.join("file"), &dir.join("file.json"), &[]);
    let counts = |f: &str| support::dumped_counts(&dir.join(f));
    let file = counts("file.json");
    assert_eq!(counts("live-count-events.json"), file, "{rest}");
    assert_eq!(counts("live-count-events-2.json"), file, "{rest}");
}

#[test]
fn a_broken_spec_stops_them_all_before_anything_runs() {
    let dir = scratch("broken");
    let out = voml(&[
        "run",
        SPECS[0].0,
        "tests/check/bad-timer.voml",
        "--trace",
        "examples/mpicl/ring.trf",
        "--headless",
        "--out",
        dir.join("out").to_str().unwrap(),
    ])
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("tests/check/bad-timer.voml:5:40"),
        "{stderr}"
    );
    assert!(!stderr.contains("records from"), "{stderr}");
    assert!(!dir.join("out").exists());
}
