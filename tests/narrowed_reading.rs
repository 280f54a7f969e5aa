//! A run reads of each record only what the visual object can see (`Runtime::interest`:
//! the records its inputs declare, up to the last field they name; the others up to their
//! timestamp; every record up to the last element its code reads, when it reads only single
//! elements). What it draws, dumps and reports must not change: every example that takes a
//! PICL trace, on a real MPICL trace and on the examples' ring, run reading every record
//! whole and run narrowed, draws the same pictures byte for byte, ends with the same info and
//! control structures (dumped in one order: hash tables by their keys), and reports the same
//! bad lines and faults.

mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use support::{compile_spec, compile_text, fault_lines, root, start_runtime, Collect};

/// What a run made: the pictures (PNG bytes), the state at the end, the bad lines, the
/// faults.
type Made = (Vec<Vec<u8>>, serde_json::Value, Vec<String>, Vec<String>);

fn run(spec: &Path, trace: &Path, narrow: bool) -> Made {
    run_vo(compile_spec(spec), trace, narrow)
}

/// A file that gives no byte before it is opened: the reader's thread waits for it, so that
/// what it is told before counts from the first record.
struct Gate {
    file: std::fs::File,
    open: Arc<AtomicBool>,
}

impl Read for Gate {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while !self.open.load(Ordering::Acquire) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        self.file.read(buf)
    }
}

fn run_vo(vo: voml_ir::CompiledVo, trace: &Path, narrow: bool) -> Made {
    let mut runtime = start_runtime(vo, false, 20_000);
    let file = std::fs::File::open(trace)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", trace.display()));
    let open = Arc::new(AtomicBool::new(false));
    let gate = Gate {
        file,
        open: open.clone(),
    };
    let name = trace.display().to_string();
    let source = voml_driver::Source::reader(name, gate, voml_trace::ReadOptions::default());
    if narrow {
        source.narrow(runtime.interest());
    }
    open.store(true, Ordering::Release);
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
    assert_eq!(collect.faults, runtime.faults().len());
    (pngs, state, collect.bad_lines, fault_lines(&runtime))
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
        // Specs whose code may see the whole of every record are read whole anyway.
        if start_runtime(vo, false, 20_000).interest().is_none() {
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
            if (&whole.2, &whole.3) != (&narrow.2, &narrow.3) {
                problems.push(format!(
                    "{name}: the reports differ ({} bad lines and {} faults, then {} and {})",
                    whole.2.len(),
                    whole.3.len(),
                    narrow.2.len(),
                    narrow.3.len()
                ));
            }
        }
    }
    assert!(narrowed >= 5, "only {narrowed} examples are read narrowed");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Condition parts see every record, but where the code reads only single elements of it,
/// every record is parsed only up to the last one read: a native test and native statements
/// over element 3, Scheme code over element 5, and records of every length, more of them than
/// the reader reads ahead before it is told.
#[test]
fn condition_parts_reading_single_elements_read_records_only_that_far() {
    let dir = std::env::temp_dir().join(format!("voml-narrowed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("mixed.trf");
    let mut text = String::new();
    for i in 0..60_000 {
        // Records of type -901 have the element 5 the second part reads, the others may
        // be shorter.
        let etype = -900 - (i % 3);
        let extras = if etype == -901 { 2 + i % 5 } else { i % 7 };
        let extra: Vec<String> = (0..extras).map(|k| (k * i % 13).to_string()).collect();
        text.push_str(&format!("-3 {etype} {i}.5 {} {}\n", i % 4, extra.join(" ")));
    }
    std::fs::write(&trace, text).unwrap();
    let spec = r#"<voml><body><visual-object name="reach">
  <info-structures>
    <variable name="counts" type="vector" init="(0 0 0 0)"/>
    <variable name="sum" type="int" init="0"/>
  </info-structures>
  <event-processing>
    <ep-component name="count" infos="counts sum">
      <before condition="(= (car (current-event)) -3)">(vector-set! $0 (list-ref (current-event) 3) (+ 1 (vector-ref $0 (list-ref (current-event) 3))))</before>
      <after condition="(= (cadr (current-event)) -901)">(set! $1 (+ $1 (list-ref (current-event) 5)))</after>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;
    let vo = || compile_text("reach.voml", spec);
    let interest = start_runtime(vo(), false, 20_000)
        .interest()
        .expect("the records are read narrowed");
    assert_eq!((interest.fields(-3, -900), interest.fields(7, 7)), (4, 4));
    let (whole, narrow) = (run_vo(vo(), &trace, false), run_vo(vo(), &trace, true));
    assert_eq!(whole.1, narrow.1);
    assert_eq!(
        whole.1["infos"]["counts"],
        serde_json::json!([15000, 15000, 15000, 15000])
    );
    assert_eq!((whole.3.len(), narrow.3.len()), (0, 0));
    // Code that reads the whole list sees whole records.
    let whole_list = spec.replace("(list-ref (current-event) 5)", "(length (current-event))");
    assert!(
        start_runtime(compile_text("reach.voml", &whole_list), false, 20_000)
            .interest()
            .is_none()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
