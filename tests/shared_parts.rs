//! A library component used by several EP components has each input part compiled once: the
//! instances call one procedure with their own fields and the structures the code only reads,
//! and do what each did with a procedure of its own (their own controls, read when they run,
//! edits included; faults reported for the instance that ran, in the library's code).

mod support;

use std::path::Path;

use serde_json::json;
use voml_compiler::MemoryFs;
use voml_ir::CompiledVo;

/// A library component: adds the record's value times its control `%0` to its info `$0`
/// (fails when the value is 13), and keeps the last value seen in `$1` (written, so a global
/// the instances share).
const LIBRARY: &str = r#"<voml-library>
  <ep-component name="scaled-sum" inputs="sample.ts.v" infos="sum last" controls="scale">
    <input name="^0">
      (if (= ^0/1 13) (car '()))
      (vector-set! $0 0 (+ (vector-ref $0 0) (* ^0/1 %0)))
      (set! $1 ^0/1)
    </input>
  </ep-component>
</voml-library>
"#;

fn spec(uses: usize) -> String {
    let infos: String = (0..uses)
        .map(|i| format!(r#"<variable name="sum{i}" type="vector" init="(0)"/>"#))
        .collect();
    let controls: String = (0..uses)
        .map(|i| format!(r#"<variable name="scale{i}" type="int" init="{}"/>"#, i + 1))
        .collect();
    let components: String = (0..uses)
        .map(|i| {
            format!(
                r#"<ep-component name="c{i}" use="scaled-sum" inputs="e.ts.v" infos="sum{i} last" controls="scale{i}"/>"#
            )
        })
        .collect();
    format!(
        r#"<voml><head><import href="lib.voml"/></head><body><visual-object name="v">
      <event-declarations>
        <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="v" type="int"/></data-event>
      </event-declarations>
      <info-structures>{infos}<variable name="last" type="int" init="0"/></info-structures>
      <control-structures>{controls}</control-structures>
      <event-processing>{components}</event-processing>
    </visual-object></body></voml>"#
    )
}

fn compile(uses: usize) -> CompiledVo {
    let fs = MemoryFs::new()
        .with("/s/v.voml", spec(uses))
        .with("/s/lib.voml", LIBRARY);
    let out = voml_compiler::compile(
        Path::new("/s/v.voml"),
        &fs,
        &voml_compiler::Options::default(),
    );
    out.vo.unwrap_or_else(|| {
        panic!(
            "does not compile:\n{}",
            voml_compiler::diag::render(&out.db, &out.diagnostics, false)
        )
    })
}

fn record(ts: f64, v: i64) -> Vec<u8> {
    format!("-3 1 {ts} {v}\n").into_bytes()
}

#[test]
fn instances_share_one_procedure_and_each_reads_its_own_control_when_it_runs() {
    let vo = compile(3);
    let text = &vo.program.text;
    assert_eq!(
        text.matches("(define (voml/shared/").count(),
        1,
        "one shared procedure: {text}"
    );
    assert_eq!(
        text.matches("(* input0/v").count(),
        1,
        "the library's code is in the program once: {text}"
    );
    let mut rt = support::start_runtime(vo, false, 1000);
    support::replay_bytes(&mut rt, &record(1.0, 2), "t.trf", false);
    // Each instance's sum is the value times its own control (1, 2, 3).
    for (i, want) in ["#(2)", "#(4)", "#(6)"].iter().enumerate() {
        assert_eq!(rt.variable(&format!("sum{i}")).as_deref(), Some(*want));
    }
    // An edit of one control between records is what that instance reads next.
    rt.set_control("scale1", &json!(10)).unwrap();
    support::replay_bytes(&mut rt, &record(2.0, 5), "t.trf", false);
    for (i, want) in ["#(7)", "#(54)", "#(21)"].iter().enumerate() {
        assert_eq!(rt.variable(&format!("sum{i}")).as_deref(), Some(*want));
    }
    assert_eq!(rt.variable("last").as_deref(), Some("5"));
    assert!(support::fault_lines(&rt).is_empty());
}

#[test]
fn a_fault_in_shared_code_names_each_instance_and_the_librarys_line() {
    let mut rt = support::start_runtime(compile(2), false, 1000);
    support::replay_bytes(&mut rt, &record(1.0, 13), "t.trf", false);
    let faults = rt.faults();
    assert_eq!(faults.len(), 2, "{:?}", support::fault_lines(&rt));
    for (fault, name) in faults.iter().zip(["c0", "c1"]) {
        assert!(
            fault.component.as_deref().is_some_and(|c| c.contains(name)),
            "{:?}",
            fault.component
        );
        let location = fault.location.as_deref().expect("a place");
        assert!(location.starts_with("/s/lib.voml:4:"), "{location}");
    }
}

#[test]
fn one_use_keeps_its_own_procedure() {
    let vo = compile(1);
    assert!(!vo.program.text.contains("voml/shared/"));
    let mut rt = support::start_runtime(vo, false, 1000);
    support::replay_bytes(&mut rt, &record(1.0, 4), "t.trf", false);
    assert_eq!(rt.variable("sum0").as_deref(), Some("#(4)"));
}
