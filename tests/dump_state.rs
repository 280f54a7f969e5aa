//! `voml run --dump-state FILE.json`: the values of every info and control structure at the
//! end of a run, as JSON — checked against counts computed from the trace, and for every
//! kind of Scheme value.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use support::root;

fn scratch(name: &str) -> support::Scratch {
    support::Scratch::new("state", name)
}

fn dump(spec: &Path, trace: &Path, dir: &Path) -> serde_json::Value {
    let state = dir.join("state.json");
    let out = Command::new(env!("CARGO_BIN_EXE_voml"))
        .arg("run")
        .arg(spec)
        .arg("--trace")
        .arg(trace)
        .arg("--headless")
        .arg("--out")
        .arg(dir)
        .arg("--dump-state")
        .arg(&state)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap()
}

/// Records per processor, as `count-events.voml` counts them, straight from the trace.
fn count(trace: &Path) -> BTreeMap<i64, u64> {
    let reader = voml_trace::TraceReader::new(
        std::io::BufReader::new(std::fs::File::open(trace).unwrap()),
        trace.display().to_string(),
        voml_trace::ReadOptions { strict: false },
    );
    let mut counts = BTreeMap::new();
    for record in reader.flatten() {
        if let Some(Some(p)) = record.get(3).map(voml_trace::Value::as_i64) {
            *counts.entry(p).or_default() += 1;
        }
    }
    counts
}

#[test]
fn the_dumped_counts_are_the_traces() {
    let spec = root().join("examples/mpicl/count-events.voml");
    let mut traces = vec![
        root().join("examples/paper/bandwidth.trf"),
        root().join("examples/paper/lineplot.trf"),
    ];
    let shared = root().join("../shared/traces/picl/mpicl-trace1.trf");
    if shared.exists() {
        traces.push(shared);
    }
    for (i, trace) in traces.iter().enumerate() {
        let dir = scratch(&format!("count-{i}"));
        let state = dump(&spec, trace, &dir);
        assert_eq!(state["visual-object"], "count-events");
        let dumped: BTreeMap<i64, u64> = state["infos"]["counts"]
            .as_array()
            .expect("counts is an association list")
            .iter()
            .map(|pair| (pair[0].as_i64().unwrap(), pair[1].as_u64().unwrap()))
            .collect();
        let expected = count(trace);
        assert!(!expected.is_empty(), "{}", trace.display());
        assert_eq!(dumped, expected, "{}", trace.display());
        assert_eq!(
            state["infos"]["most"].as_u64(),
            expected.values().max().copied(),
            "{}",
            trace.display()
        );
    }
}

#[test]
fn every_kind_of_value_has_its_json_form() {
    let dir = scratch("kinds");
    let spec = dir.join("kinds.voml");
    std::fs::write(
        &spec,
        r##"<?xml version="1.0"?>
<voml><body><visual-object name="kinds">
  <event-declarations>
    <data-event name="tick" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures>
    <variable name="n" type="int"/>
    <variable name="x" type="real"/>
    <variable name="word" type="string" init="hello"/>
    <variable name="flag" type="boolean"/>
    <variable name="names" type="list"/>
    <variable name="slots" type="vector" init="(1 2 3)"/>
    <variable name="table" type="any"/>
    <variable name="odd" type="any"/>
  </info-structures>
  <control-structures>
    <variable name="on" type="boolean" init="#t"/>
  </control-structures>
  <event-processing>
    <ep-component name="fill" inputs="tick.ts" infos="n x flag names slots table odd">
      <input name="^0">
        (set! $0 (+ $0 1))
        (set! $1 ^0/0)
        (set! $2 #t)
        (set! $3 (list "red" 'blue))
        (vector-set! $4 0 (list 1.5 "two"))
        (set! $5 (list (cons 'a 1) (cons "b" (vector 2 3))))
        (set! $6 (list (exp 1000) #\z void))
      </input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>
"##,
    )
    .unwrap();
    let trace = dir.join("t.trf");
    std::fs::write(&trace, "-3 1 0.5\n-3 1 0.75\n").unwrap();
    let state = dump(&spec, &trace, &dir);
    let expected = serde_json::json!({
        "visual-object": "kinds",
        "infos": {
            "n": 2,
            "x": 0.75,
            "word": "hello",
            "flag": true,
            "names": ["red", "blue"],
            "slots": [[1.5, "two"], 2, 3],
            "table": [["a", 1], ["b", [2, 3]]],
            "odd": ["+inf.0", "z", null],
        },
        "controls": { "on": true },
    });
    assert_eq!(state, expected, "{state:#}");
}
