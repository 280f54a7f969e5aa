//! Replay control: `--control` commands and the `--until`/`--from` shortcuts. Seeking is exact: the
//! pictures and the state at trace time T are byte-identical whether T is reached straight,
//! by seeking back and forth, or by steps.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::root;

/// Runs `voml run SPEC --trace TRACE --headless` with `extra` arguments; returns the output
/// directory's files (name → bytes), the state JSON and what voml said.
fn run(
    name: &str,
    spec: &str,
    trace: &str,
    extra: &[&str],
) -> (Vec<(String, Vec<u8>)>, String, String, bool) {
    let dir = std::env::temp_dir().join(format!("voml-control-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_voml"))
        .current_dir(root())
        .args(["run", spec, "--trace", trace, "--headless"])
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--dump-state")
        .arg(dir.join("state.json"))
        .args(extra)
        .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join("out"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_file())
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let state = std::fs::read_to_string(dir.join("state.json")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    (files, state, said, out.status.success())
}

fn script(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("voml-control-{name}-{}.txt", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

/// The timestamps of a trace's records.
fn timestamps(trace: &Path) -> Vec<f64> {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2)?.parse().ok())
        .collect()
}

#[test]
fn seeking_is_exact_straight_back_and_forth_or_by_steps() {
    let cases = [
        ("examples/mpicl/bcast-time.voml", "examples/mpicl/ring.trf"),
        (
            "examples/mpicl/sends-and-receives.voml",
            "examples/mpicl/ring.trf",
        ),
        (
            "examples/mpicl/count-events.voml",
            "examples/mpicl/ring.trf",
        ),
        (
            "examples/paper/lineplot.voml",
            "examples/paper/lineplot.trf",
        ),
        (
            "examples/paper/bandwidth.voml",
            "examples/paper/bandwidth.trf",
        ),
    ];
    for (spec, trace) in cases {
        let ts = timestamps(&root().join(trace));
        let last = ts.iter().copied().fold(f64::MIN, f64::max);
        // A time in the middle, and how many records come up to it.
        let t = ts[ts.len() / 2];
        let steps = ts.iter().filter(|&&x| x <= t).count();
        let next = ts
            .iter()
            .copied()
            .filter(|&x| x > t)
            .fold(f64::MAX, f64::min);
        let tag = Path::new(spec)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let straight = run(
            &format!("{tag}-straight"),
            spec,
            trace,
            &["--until", &t.to_string()],
        );
        assert!(straight.3, "{spec}: {}", straight.2);
        assert!(!straight.1.is_empty(), "{spec}: no state");
        let ways = [
            ("back", format!("until {last}\nseek {t}\n")),
            ("forth-back", format!("seek {last}\nseek 0\nseek {t}\n")),
            (
                "steps",
                format!("step {}\nstep {}\n", steps / 2, steps - steps / 2),
            ),
            ("seek", format!("seek {t}\n")),
            // To the next moment, then one moment back.
            ("one-back", format!("seek {next}\nback\n")),
        ];
        // `--from` hurries to a time, then goes on: nothing is skipped on the way.
        let from = run(
            &format!("{tag}-from"),
            spec,
            trace,
            &["--from", &(t / 2.0).to_string(), "--until", &t.to_string()],
        );
        assert!(from.3, "{spec} --from: {}", from.2);
        assert_eq!(from.1, straight.1, "{spec}: the state differs with --from");
        assert!(
            from.0 == straight.0,
            "{spec}: the pictures differ with --from"
        );
        for (way, text) in ways {
            let path = script(&format!("{tag}-{way}"), &text);
            let other = run(
                &format!("{tag}-{way}"),
                spec,
                trace,
                &["--control", path.to_str().unwrap()],
            );
            let _ = std::fs::remove_file(&path);
            assert!(other.3, "{spec} {way}: {}", other.2);
            assert_eq!(
                other.1, straight.1,
                "{spec}: the state differs when reached by {way}"
            );
            assert!(
                other.0 == straight.0,
                "{spec}: the pictures differ when reached by {way}"
            );
        }
    }
}

#[test]
fn commands_take_pictures_step_to_events_and_say_what_is_wrong() {
    let spec = "examples/mpicl/bcast-time.voml";
    let trace = "examples/mpicl/ring.trf";
    let path = script(
        "mixed",
        "# first broadcast, a picture, then a typo\nstep-to bcast-enter\nsnapshot first\njump 3\nstep-to no-such-event\nstep 10\nsnapshot later\n",
    );
    let (files, state, said, ok) =
        run("mixed", spec, trace, &["--control", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"first-bcast.png"), "{names:?}\n{said}");
    assert!(names.contains(&"later-bcast.png"), "{names:?}\n{said}");
    assert!(said.contains(":4: unknown command `jump`"), "{said}");
    assert!(
        said.contains(":5: `step-to no-such-event`: the visual object declares no event"),
        "{said}"
    );
    assert!(!ok, "a bad command makes the run fail");
    assert!(!state.is_empty());
}

#[test]
fn a_seek_back_needs_a_file_and_cannot_take_sound_back() {
    let spec = "examples/mpicl/sends-and-receives.voml";
    let trace = "examples/mpicl/ring.trf";
    let path = script("audio", "until 0.05\nseek 0.01\n");
    let wav = std::env::temp_dir().join(format!("voml-control-{}.wav", std::process::id()));
    let (_, _, said, ok) = run(
        "audio",
        spec,
        trace,
        &[
            "--control",
            path.to_str().unwrap(),
            "--audio",
            wav.to_str().unwrap(),
        ],
    );
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&wav);
    assert!(!ok);
    assert!(said.contains(":2: `seek` back cannot take back"), "{said}");
}

/// The records of `ring.trf` after which `long-waits.voml` must pause: the exits of blocked
/// receives (-4 -52) that end a wait of more than 5 ms on their processor, as line numbers.
fn long_waits(trace: &Path) -> Vec<usize> {
    let mut since = std::collections::HashMap::new();
    let mut lines = Vec::new();
    for (i, line) in std::fs::read_to_string(trace).unwrap().lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 || f[1] != "-52" {
            continue;
        }
        let (ts, proc): (f64, i64) = (f[2].parse().unwrap(), f[3].parse().unwrap());
        match f[0] {
            "-3" => {
                since.insert(proc, ts);
            }
            "-4" => {
                if let Some(began) = since.remove(&proc) {
                    if ts - began > 0.005 {
                        lines.push(i + 1);
                    }
                }
            }
            _ => {}
        }
    }
    lines
}

#[test]
fn a_trigger_pauses_a_free_run_at_the_right_record() {
    let spec = "examples/mpicl/long-waits.voml";
    let trace = "examples/mpicl/ring.trf";
    let expected = long_waits(&root().join(trace));
    assert!(expected.len() >= 4, "{expected:?}");
    let count = |state: &str| -> i64 {
        let v: serde_json::Value = serde_json::from_str(state).unwrap();
        v["infos"]["long-waits"].as_i64().unwrap()
    };
    let pauses = |said: &str| -> Vec<usize> {
        said.lines()
            .filter_map(|l| l.strip_prefix("paused by the visual object after "))
            .map(|l| {
                let at = l.split_whitespace().next().unwrap();
                at.rsplit(':').next().unwrap().parse().unwrap()
            })
            .collect()
    };

    // A plain run stops at the first long wait and writes the state of that moment.
    let (_, state, said, ok) = run("trigger-plain", spec, trace, &[]);
    assert!(ok, "{said}");
    assert_eq!(pauses(&said), expected[..1], "{said}");
    assert!(
        said.contains(&format!("{} records from", expected[0])),
        "{said}"
    );
    assert_eq!(count(&state), 1);

    // Each `resume` goes on to the next one.
    let path = script("trigger-resume", "resume\nresume\nresume\n");
    let (_, state, said, ok) = run(
        "trigger-resume",
        spec,
        trace,
        &["--control", path.to_str().unwrap()],
    );
    let _ = std::fs::remove_file(&path);
    assert!(ok, "{said}");
    assert_eq!(pauses(&said), expected[..3], "{said}");
    assert_eq!(count(&state), 3);

    // Commands that say where they stop go there: `until` the end passes every trigger.
    let (_, state, said, ok) = run("trigger-until", spec, trace, &["--until", "1e9"]);
    assert!(ok, "{said}");
    assert!(pauses(&said).is_empty(), "{said}");
    assert_eq!(count(&state), expected.len() as i64);
}
