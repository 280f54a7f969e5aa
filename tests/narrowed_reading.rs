//! A run reads of each record only what the visual object can see (`voml_runtime::interest`:
//! the records its inputs declare, up to the last field they name; the others up to their
//! timestamp). What it draws, dumps and reports must not change: every example that takes a
//! PICL trace, on a real MPICL trace and on the examples' ring, run reading every record
//! whole and run narrowed, draws the same pictures byte for byte, ends with the same info and
//! control structures (dumped in one order: hash tables by their keys), and reports the same
//! bad lines and faults.

mod support;

use std::path::{Path, PathBuf};

use support::{compile_spec, root, start_runtime, Collect};

/// The pictures (PNG bytes), the state at the end, and what was reported.
fn run(
    spec: &Path,
    trace: &Path,
    narrow: bool,
) -> (Vec<Vec<u8>>, serde_json::Value, Vec<String>, usize) {
    let vo = compile_spec(spec);
    let interest = voml_runtime::interest(&vo);
    let mut runtime = start_runtime(vo, false, 20_000);
    let source = voml_driver::Source::file(trace, voml_trace::ReadOptions::default())
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", trace.display()));
    if narrow {
        source.narrow(interest);
    }
    let mut source = source;
    let mut collect = Collect::default();
    voml_driver::run(
        &mut runtime,
        &mut source,
        &voml_driver::Options::default(),
        &mut [],
        &mut collect,
    );
    let pngs = runtime
        .pngs()
        .into_iter()
        .map(|(name, png)| png.unwrap_or_else(|e| panic!("no picture of {name}: {e}")))
        .collect();
    let state = voml_runtime::state::of(&runtime);
    (pngs, state, collect.bad_lines, collect.faults)
}

fn specs() -> Vec<PathBuf> {
    let mut specs = Vec::new();
    for dir in [
        "examples/mpicl",
        "examples/library",
        "examples/paper",
        "examples/auralization",
    ] {
        specs.extend(support::files_with_ext(&root().join(dir), "voml"));
    }
    specs
}

#[test]
fn narrowed_reading_changes_nothing_a_visual_object_makes() {
    let mut traces = vec![root().join("examples/mpicl/ring.trf")];
    traces.extend(support::shared_trace("mpicl-trace1.trf"));
    let mut narrowed = 0;
    let mut problems = Vec::new();
    for spec in specs() {
        let vo = compile_spec(&spec);
        // Specs whose conditions see every record are read whole anyway.
        if voml_runtime::interest(&vo).is_none() {
            continue;
        }
        narrowed += 1;
        for trace in &traces {
            let whole = run(&spec, trace, false);
            let narrow = run(&spec, trace, true);
            let name = format!(
                "{} on {}",
                spec.file_name().unwrap().to_string_lossy(),
                trace.file_name().unwrap().to_string_lossy()
            );
            if whole.0 != narrow.0 {
                problems.push(format!("{name}: the pictures differ"));
            }
            for kind in ["infos", "controls"] {
                let Some(structures) = whole.1[kind].as_object() else {
                    continue;
                };
                for (structure, value) in structures {
                    if narrow.1[kind][structure] != *value {
                        problems.push(format!("{name}: {structure} differs"));
                    }
                }
            }
            if (&whole.2, whole.3) != (&narrow.2, narrow.3) {
                problems.push(format!(
                    "{name}: the reports differ ({} bad lines and {} faults, then {} and {})",
                    whole.2.len(),
                    whole.3,
                    narrow.2.len(),
                    narrow.3
                ));
            }
        }
    }
    assert!(narrowed >= 5, "only {narrowed} examples are read narrowed");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
