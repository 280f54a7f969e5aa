//! Faults during a run are contained and reported where they come from: Scheme errors and
//! runaway code in components (the `.voml` location, the component, the record), bad
//! trace lines (their line numbers; the good records around them still count), bad fields
//! of an event, and errors steel finds only when the program loads. Also through
//! `voml run`: its exit status and what it prints.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::{compile_text, quiet_steel, replay_bytes, start_runtime};
use voml_runtime::{Action, EventRef, FaultKind, Runtime};

/// `name:line:col` (1-based) of the first occurrence of `needle` in `text`.
fn locate(name: &str, text: &str, needle: &str) -> String {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` is not in the spec"));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = at - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("{name}:{line}:{col}")
}

/// Records `-3 1 <ts> 0 0 1 <n>` for n = 1..=count, after a comment line (so that record
/// k is on line k + 1).
fn steps(count: u32) -> String {
    let mut text = String::from("# steps\n");
    for n in 1..=count {
        text.push_str(&format!("-3 1 {n}.0 0 0 1 {n}\n"));
    }
    text
}

fn records(trace: &str) -> Vec<voml_trace::Record> {
    trace
        .lines()
        .enumerate()
        .filter(|(_, l)| !voml_trace::is_comment_or_blank(l))
        .map(|(i, l)| voml_trace::parse_line(l, i as u64 + 1).expect("a good line"))
        .collect()
}

fn var(rt: &Runtime, name: &str) -> String {
    rt.variable(name)
        .unwrap_or_else(|| panic!("no variable `{name}`"))
}

fn summaries(rt: &Runtime) -> Vec<String> {
    rt.faults().iter().map(|f| f.to_string()).collect()
}

const STEP_EVENT: &str = r#"
      <event-declarations>
        <data-event name="step" rtype="entry" etype="1">
          <data-field name="ts" type="real"/>
          <data-field name="n" index="6" type="int"/>
        </data-event>
      </event-declarations>"#;

/// A spec whose EP component `fragile` fails on step 3 and whose IR component `fragile-ir`
/// fails once `steady` has seen 4 steps; `steady` and `steady-ir` never fail.
fn scheme_faults_spec() -> String {
    format!(
        r#"<?xml version="1.0"?>
<voml>
  <body>
    <visual-object name="faults">{STEP_EVENT}
      <info-structures>
        <variable name="fragile-runs" type="int"/>
        <variable name="steady-runs" type="int"/>
      </info-structures>
      <control-structures>
        <variable name="fragile-renders" type="int"/>
        <variable name="steady-renders" type="int"/>
      </control-structures>
      <view-initializations>
        <view name="v" window="40 30"/>
      </view-initializations>
      <event-processing>
        <ep-component name="fragile" inputs="step.n" infos="fragile-runs">
          <input name="^0">
            (set! $0 (+ $0 1))
            (if (= ^0/0 3)
                (vector-ref (vector 1 2) ^0/0))
          </input>
        </ep-component>
        <ep-component name="steady" inputs="step.n" infos="steady-runs">
          <input name="^0">(set! $0 (+ $0 1))</input>
        </ep-component>
      </event-processing>
      <info-rendition>
        <ir-component name="fragile-ir" views="v" infos="steady-runs" controls="fragile-renders">
          (set! %0 (+ %0 1))
          <line view="^0" from="0 0" to="1 1"/>
          (if (= $0 4)
              (car (list)))
        </ir-component>
        <ir-component name="steady-ir" views="v" controls="steady-renders">
          (set! %0 (+ %0 1))
          <line view="^0" from="0 1" to="1 0"/>
        </ir-component>
      </info-rendition>
    </visual-object>
  </body>
</voml>
"#
    )
}

const FAULTS_NAME: &str = "tests/faults/scheme-faults.voml";

#[test]
fn a_scheme_error_disables_its_component_and_says_where() {
    let spec = scheme_faults_spec();
    let mut rt = start_runtime(compile_text(FAULTS_NAME, &spec), false, 10_000);
    let trace = steps(6);
    let mut frozen = None;
    for record in records(&trace) {
        rt.process(&record, "steps.trf").expect("not strict");
        if record.line == 5 {
            frozen = Some(var(&rt, "fragile-renders"));
        }
    }
    rt.finish(6.0, 0).expect("not strict");

    let faults = rt.faults();
    assert_eq!(faults.len(), 2, "{:#?}", summaries(&rt));
    let ep = &faults[0];
    assert_eq!(ep.kind, FaultKind::Scheme);
    assert_eq!(ep.component.as_deref(), Some("EP component `fragile`"));
    assert_eq!(ep.part.as_deref(), Some("input ^0"));
    assert_eq!(
        ep.location.as_deref(),
        Some(locate(FAULTS_NAME, &spec, "vector-ref (vector 1 2)").as_str())
    );
    assert_eq!(
        ep.event,
        Some(EventRef {
            record: 3,
            source: "steps.trf".into(),
            line: 4
        })
    );
    assert_eq!(ep.action, Action::Disabled);

    let ir = &faults[1];
    assert_eq!(ir.kind, FaultKind::Scheme);
    assert_eq!(ir.component.as_deref(), Some("IR component `fragile-ir`"));
    assert_eq!(ir.part.as_deref(), Some("phase 1"));
    assert_eq!(
        ir.location.as_deref(),
        Some(locate(FAULTS_NAME, &spec, "car (list)").as_str())
    );
    assert_eq!(ir.event.as_ref().map(|e| (e.record, e.line)), Some((4, 5)));
    assert_eq!(ir.action, Action::Disabled);

    assert_eq!(
        rt.disabled_components(),
        ["EP component `fragile`", "IR component `fragile-ir`"]
    );
    // The failing EP component ran for steps 1 to 3 only; the other one for all six.
    assert_eq!(var(&rt, "fragile-runs"), "3");
    assert_eq!(var(&rt, "steady-runs"), "6");
    // The failing IR component did not run after step 4; the other one went on rendering.
    let frozen = frozen.unwrap();
    assert_eq!(var(&rt, "fragile-renders"), frozen);
    let steady: u32 = var(&rt, "steady-renders").parse().unwrap();
    assert!(steady >= frozen.parse::<u32>().unwrap() + 2);
}

#[test]
fn strict_mode_stops_at_the_first_scheme_error() {
    let spec = scheme_faults_spec();
    let mut rt = start_runtime(compile_text(FAULTS_NAME, &spec), true, 10_000);
    let replayed = replay_bytes(&mut rt, steps(6).as_bytes(), "steps.trf", true);
    assert!(replayed.summary.stopped);
    assert_eq!(rt.stats().records, 3);
    assert_eq!(rt.faults().len(), 1, "{:#?}", summaries(&rt));
    assert_eq!(rt.faults()[0].action, Action::Stopped);
    assert_eq!(rt.faults()[0].event.as_ref().map(|e| e.record), Some(3));
    assert_eq!(var(&rt, "fragile-runs"), "3");
    // `steady` comes after `fragile` in the document: it never saw step 3.
    assert_eq!(var(&rt, "steady-runs"), "2");
}

#[test]
fn runaway_code_is_interrupted_and_the_run_goes_on() {
    let name = "tests/faults/runaway.voml";
    let spec = format!(
        r#"<?xml version="1.0"?>
<voml>
  <body>
    <visual-object name="runaway">{STEP_EVENT}
      <info-structures>
        <variable name="spins" type="int"/>
        <variable name="steps" type="int"/>
      </info-structures>
      <utility-code>
        (define (deeper n) (+ 1 (deeper (+ n 1))))
      </utility-code>
      <view-initializations>
        <view name="v" window="40 30"/>
      </view-initializations>
      <event-processing>
        <ep-component name="spinner" inputs="step.n" infos="spins">
          <input name="^0">
            (set! $0 (+ $0 1))
            (if (= ^0/0 2)
                (let forever () (forever)))
          </input>
        </ep-component>
        <ep-component name="counter" inputs="step.n" infos="steps">
          <input name="^0">(set! $0 (+ $0 1))</input>
        </ep-component>
      </event-processing>
      <info-rendition>
        <ir-component name="recursive" views="v" infos="steps">
          <line view="^0" from="0 0" to="1 1"/>
          (if (= $0 4)
              (deeper 0))
        </ir-component>
      </info-rendition>
    </visual-object>
  </body>
</voml>
"#
    );
    let vo = compile_text(name, &spec);
    let started = Instant::now();
    let mut rt = start_runtime(vo, false, 100);
    let replayed = replay_bytes(&mut rt, steps(6).as_bytes(), "steps.trf", false);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "the run took {took:?}");
    assert!(!replayed.summary.stopped);

    let faults = rt.faults();
    assert_eq!(faults.len(), 2, "{:#?}", summaries(&rt));
    assert_eq!(faults[0].kind, FaultKind::Runaway, "{}", faults[0]);
    assert_eq!(
        faults[0].component.as_deref(),
        Some("EP component `spinner`")
    );
    assert_eq!(faults[0].event.as_ref().map(|e| e.record), Some(2));
    assert_eq!(faults[1].kind, FaultKind::Runaway, "{}", faults[1]);
    assert_eq!(
        faults[1].component.as_deref(),
        Some("IR component `recursive`")
    );
    assert_eq!(faults[1].event.as_ref().map(|e| e.record), Some(4));
    assert_eq!(rt.stats().records, 6);
    assert_eq!(var(&rt, "steps"), "6");
    assert_eq!(var(&rt, "spins"), "2");
}

/// A spec whose EP components `spin0` .. `spin{count-1}` each run `body(k)` on every step,
/// on the line after `(set! $0 (+ $0 1))` (so that the start of the part is on another line
/// than the code that runs away), with `utility` code.
fn runaway_spec(utility: &str, count: usize, body: impl Fn(usize) -> String) -> String {
    let mut components = String::new();
    for k in 0..count {
        components.push_str(&format!(
            r#"
        <ep-component name="spin{k}" inputs="step.n" infos="spins">
          <input name="^0"><![CDATA[
            (set! $0 (+ $0 1))
            {}
          ]]></input>
        </ep-component>"#,
            body(k)
        ));
    }
    format!(
        r#"<?xml version="1.0"?>
<voml>
  <body>
    <visual-object name="runaways">{STEP_EVENT}
      <info-structures>
        <variable name="spins" type="int"/>
      </info-structures>
      <utility-code><![CDATA[
{utility}
      ]]></utility-code>
      <event-processing>{components}
      </event-processing>
    </visual-object>
  </body>
</voml>
"#
    )
}

/// Runs one step through `spec` with a 100 ms budget (loading the program must fit in it
/// too): every component runs away once. Checks
/// that each fault is a runaway that names the budget and is placed inside one of `loops`
/// (each written on one line of `spec`); returns the locations.
fn runaways_are_placed_in(name: &str, spec: &str, count: usize, loops: &[&str]) -> Vec<String> {
    let mut rt = start_runtime(compile_text(name, spec), false, 100);
    let record = &records(&steps(1))[0];
    rt.process(record, "steps.trf").expect("not strict");
    let faults = rt.faults();
    assert_eq!(faults.len(), count, "{:#?}", summaries(&rt));
    // (line, first column, last column) of each loop.
    let places: Vec<(usize, usize, usize)> = loops
        .iter()
        .map(|needle| {
            assert!(!needle.contains('\n'));
            let at = locate(name, spec, needle);
            let mut parts = at.rsplit(':');
            let col: usize = parts.next().unwrap().parse().unwrap();
            let line: usize = parts.next().unwrap().parse().unwrap();
            (line, col, col + needle.len() - 1)
        })
        .collect();
    faults
        .iter()
        .map(|f| {
            assert_eq!(f.kind, FaultKind::Runaway, "{f}");
            assert!(
                f.message.contains("per-event budget of 100ms"),
                "{}",
                f.message
            );
            assert_eq!(f.action, Action::Disabled);
            let location = f.location.clone().expect("a runaway has a location");
            let rest = location
                .strip_prefix(&format!("{name}:"))
                .unwrap_or_else(|| panic!("{location} is not in {name}"));
            let (line, col) = rest.split_once(':').unwrap();
            let (line, col): (usize, usize) = (line.parse().unwrap(), col.parse().unwrap());
            assert!(
                places
                    .iter()
                    .any(|&(l, c0, c1)| l == line && (c0..=c1).contains(&col)),
                "{} ({location}) is not inside any of {loops:?}",
                f.component.as_deref().unwrap_or("?")
            );
            location
        })
        .collect()
}

/// A tight named `let` stops wherever steel's VM happens to be, often on an instruction steel
/// gives no place: the fault still names the loop, never the start of the part. Sixteen
/// components make a lucky pass without that unlikely.
#[test]
fn a_runaway_named_let_is_reported_at_the_loop() {
    let name = "tests/faults/named-let.voml";
    let spec = runaway_spec("", 16, |k| format!("(let loop{k} () (loop{k}))"));
    let loops: Vec<String> = (0..16)
        .map(|k| format!("(let loop{k} () (loop{k}))"))
        .collect();
    let loops: Vec<&str> = loops.iter().map(String::as_str).collect();
    let at = runaways_are_placed_in(name, &spec, 16, &loops);
    // Each component is reported at its own loop.
    for (k, location) in at.iter().enumerate() {
        let line = locate(name, &spec, loops[k]);
        assert_eq!(
            location.rsplit_once(':').unwrap().0,
            line.rsplit_once(':').unwrap().0
        );
    }
}

#[test]
fn a_runaway_do_loop_is_reported_at_the_loop() {
    let name = "tests/faults/do-loop.voml";
    let body = |k: usize| format!("(do ((i{k} 0 (+ i{k} 1))) ((< i{k} 0)) (set! $0 i{k}))");
    let spec = runaway_spec("", 16, body);
    let loops: Vec<String> = (0..16).map(body).collect();
    let loops: Vec<&str> = loops.iter().map(String::as_str).collect();
    runaways_are_placed_in(name, &spec, 16, &loops);
}

/// A part calls a utility procedure that loops: the fault points into the procedure's loop,
/// not at the call.
#[test]
fn a_runaway_in_utility_code_is_reported_in_the_procedure() {
    let name = "tests/faults/utility-loop.voml";
    let spin = "(do ((i 0 (+ i 1))) ((< i 0)) (set! n i))";
    let utility = format!("        (define (spin-forever n)\n          {spin})");
    let spec = runaway_spec(&utility, 16, |k| format!("(spin-forever {k})"));
    runaways_are_placed_in(name, &spec, 16, &[spin]);
}

/// Recursion, mutual or not, and a loop that spends its time in built-ins are placed in the
/// procedures or the loop that ran.
#[test]
fn runaway_recursion_and_loops_around_built_ins_are_reported_where_they_run() {
    let name = "tests/faults/recursion.voml";
    let ping = "(define (ping n) (pong (+ n 1)))";
    let pong = "(define (pong n) (ping (+ n 1)))";
    let deeper = "(define (deeper n) (+ 1 (deeper (+ n 1))))";
    let utility = format!("        {ping}\n        {pong}\n        {deeper}");
    let native =
        |k: usize| format!("(let native{k} () (abs -3) (vector-ref (vector 1 2) 1) (native{k}))");
    let spec = runaway_spec(&utility, 12, |k| match k % 3 {
        0 => "(ping 0)".to_string(),
        1 => "(deeper 0)".to_string(),
        _ => native(k),
    });
    let natives: Vec<String> = (0..12).filter(|k| k % 3 == 2).map(native).collect();
    let at = runaways_are_placed_in(
        name,
        &spec,
        12,
        &[ping, pong, deeper]
            .into_iter()
            .chain(natives.iter().map(String::as_str))
            .collect::<Vec<_>>(),
    );
    let line_of = |needle: &str| {
        locate(name, &spec, needle)
            .rsplit_once(':')
            .unwrap()
            .0
            .to_string()
    };
    for (k, location) in at.iter().enumerate() {
        let line = location.rsplit_once(':').unwrap().0;
        match k % 3 {
            0 => assert!(line == line_of(ping) || line == line_of(pong), "{location}"),
            1 => assert_eq!(line, line_of(deeper)),
            _ => assert_eq!(line, line_of(&native(k))),
        }
    }
}

/// Counts the records of the step event.
fn counting_spec() -> String {
    format!(
        r#"<?xml version="1.0"?>
<voml>
  <body>
    <visual-object name="count">{STEP_EVENT}
      <info-structures>
        <variable name="seen" type="int"/>
        <variable name="last" type="int"/>
      </info-structures>
      <event-processing>
        <ep-component name="counter" inputs="step.n" infos="seen last">
          <input name="^0">(set! $0 (+ $0 1)) (set! $1 ^0/0)</input>
        </ep-component>
      </event-processing>
    </visual-object>
  </body>
</voml>
"#
    )
}

/// Good steps on lines 1, 2, 5 and 7; a binary line, a word for a number and an
/// unterminated string on lines 3, 4 and 6.
fn garbled_trace() -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(b"-3 1 1.0 0 0 1 1\n");
    t.extend_from_slice(b"-3 1 2.0 0 0 1 2\n");
    t.extend_from_slice(b"\xff\xfe\x00\x01\x9c\x07junk\xc3\x28\n");
    t.extend_from_slice(b"-3 one 3.0 0 0 1 3\n");
    t.extend_from_slice(b"-3 1 4.0 0 0 1 4\n");
    t.extend_from_slice(b"-3 1 5.0 0 0 1 \"five\n");
    t.extend_from_slice(b"-3 1 6.0 0 0 1 6\n");
    t
}

#[test]
fn bad_trace_lines_are_skipped_and_reported_with_their_line() {
    let mut rt = start_runtime(compile_text("count.voml", &counting_spec()), false, 10_000);
    let replayed = replay_bytes(&mut rt, &garbled_trace(), "garbled.trf", false);
    assert_eq!(replayed.bad_line_numbers, [3, 4, 6]);
    assert_eq!(replayed.summary.bad_lines, 3);
    assert!(!replayed.summary.stopped);
    assert!(
        replayed.bad_lines[1].starts_with("garbled.trf:4:4: "),
        "{}",
        replayed.bad_lines[1]
    );
    assert_eq!(rt.stats().records, 4);
    assert_eq!(var(&rt, "seen"), "4");
    assert_eq!(var(&rt, "last"), "6");
    assert!(rt.faults().is_empty(), "{:#?}", summaries(&rt));
}

#[test]
fn strict_mode_stops_at_the_first_bad_line() {
    let mut rt = start_runtime(compile_text("count.voml", &counting_spec()), true, 10_000);
    let replayed = replay_bytes(&mut rt, &garbled_trace(), "garbled.trf", true);
    assert!(replayed.summary.stopped);
    assert_eq!(replayed.bad_line_numbers, [3]);
    assert_eq!(var(&rt, "seen"), "2");
}

#[test]
fn a_cut_last_line_is_a_bad_line_and_the_records_before_it_count() {
    let mut rt = start_runtime(compile_text("count.voml", &counting_spec()), false, 10_000);
    let mut trace = steps(5);
    trace.push_str("-3 1");
    let replayed = replay_bytes(&mut rt, trace.as_bytes(), "cut.trf", false);
    assert_eq!(replayed.bad_line_numbers, [7]);
    assert!(replayed.bad_lines[0].starts_with("cut.trf:7:"));
    assert_eq!(var(&rt, "seen"), "5");
    assert_eq!(var(&rt, "last"), "5");
}

#[test]
fn an_event_without_a_declared_field_is_skipped() {
    let name = "tests/faults/fields.voml";
    let spec = r#"<?xml version="1.0"?>
<voml>
  <body>
    <visual-object name="fields">
      <event-declarations>
        <data-event name="sample" rtype="entry" etype="1">
          <data-field name="n" index="6" type="int"/>
          <data-field name="extra" index="7" type="int"/>
        </data-event>
      </event-declarations>
      <info-structures>
        <variable name="total" type="int"/>
        <variable name="seen" type="int"/>
      </info-structures>
      <event-processing>
        <ep-component name="adder" inputs="sample.n.extra" infos="total seen">
          <input name="^0">(set! $0 (+ $0 ^0/1)) (set! $1 (+ $1 1))</input>
        </ep-component>
      </event-processing>
    </visual-object>
  </body>
</voml>
"#;
    let mut rt = start_runtime(compile_text(name, spec), false, 10_000);
    let trace = "-3 1 1.0 0 0 2 1 10\n\
                 -3 1 2.0 0 0 2 2\n\
                 -3 1 3.0 0 0 2 three 30\n\
                 -3 1 4.0 0 0 2 4 40\n";
    let replayed = replay_bytes(&mut rt, trace.as_bytes(), "fields.trf", false);
    assert!(replayed.bad_lines.is_empty());
    let faults = rt.faults();
    assert_eq!(faults.len(), 2, "{:#?}", summaries(&rt));
    for (fault, line) in faults.iter().zip([2, 3]) {
        assert_eq!(fault.kind, FaultKind::Field, "{fault}");
        assert_eq!(fault.action, Action::Skipped);
        assert_eq!(fault.component.as_deref(), Some("EP component `adder`"));
        assert_eq!(fault.event.as_ref().map(|e| e.line), Some(line));
    }
    assert!(faults[0].message.contains("extra"), "{}", faults[0].message);
    assert!(faults[1].message.contains("three"), "{}", faults[1].message);
    assert!(rt.disabled_components().is_empty());
    assert_eq!(rt.stats().skipped, 2);
    assert_eq!(var(&rt, "seen"), "2");
    assert_eq!(var(&rt, "total"), "50");
}

/// A million faults of one kind must not mean a million stored reports: the log keeps a few
/// of each kind from each part, and counts the rest.
#[test]
fn the_fault_log_is_bounded_and_counts_what_it_does_not_keep() {
    let spec = r#"<?xml version="1.0"?>
<voml><body><visual-object name="bounded">
  <event-declarations>
    <data-event name="sample" rtype="entry" etype="1"><data-field name="n" index="6" type="int"/></data-event>
  </event-declarations>
  <info-structures><variable name="seen" type="int"/></info-structures>
  <event-processing>
    <ep-component name="counter" inputs="sample.n" infos="seen">
      <input name="^0">(set! $0 (+ $0 1))</input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>
"#;
    let mut rt = start_runtime(
        compile_text("tests/faults/bounded.voml", spec),
        false,
        10_000,
    );
    // Every record has a word where the component takes an integer, and every tenth line
    // is not a record at all.
    let trace: String = (0..20_000)
        .map(|i| {
            if i % 10 == 9 {
                "garbage\n".to_string()
            } else {
                format!("-3 1 {i}.0 0 0 2 many\n")
            }
        })
        .collect();
    let replayed = replay_bytes(&mut rt, trace.as_bytes(), "bounded.trf", false);
    // Bad lines are reported by the reader and counted by the replay, not logged as faults.
    assert_eq!(replayed.summary.bad_lines, 2_000);
    assert_eq!(rt.fault_total(), 18_000);
    assert_eq!(
        rt.faults().len(),
        voml_runtime::MAX_REPEATS_KEPT,
        "{:#?}",
        summaries(&rt)
    );
    let unkept = rt.unkept_faults();
    assert_eq!(unkept.len(), 1, "{unkept:?}");
    assert_eq!(unkept[0].0, FaultKind::Field);
    assert_eq!(unkept[0].1.as_deref(), Some("EP component `counter`"));
    assert_eq!(unkept[0].3, 18_000 - voml_runtime::MAX_REPEATS_KEPT as u64);
    assert_eq!(var(&rt, "seen"), "0");
}

/// `Runtime::new` fails; returns its error's location and message.
fn load_error(name: &str, spec: &str) -> (Option<String>, String) {
    quiet_steel();
    let vo = compile_text(name, spec);
    match Runtime::headless(vo, voml_runtime::Config::default()) {
        Ok(_) => panic!("{name} loaded"),
        Err(e) => (e.location, e.message),
    }
}

#[test]
fn an_unbound_identifier_is_reported_at_load_with_its_location() {
    let name = "tests/faults/unbound-utility.voml";
    let spec = r#"<voml><body><visual-object name="unbound">
  <utility-code>
    (define (helper x)
      (no-such-helper x))
  </utility-code>
</visual-object></body></voml>"#;
    let (location, message) = load_error(name, spec);
    assert_eq!(location, Some(locate(name, spec, "no-such-helper")));
    assert!(message.contains("no-such-helper"), "{message}");

    let name = "tests/faults/unbound-component.voml";
    let spec = format!(
        r#"<voml><body><visual-object name="unbound">{STEP_EVENT}
  <info-structures><variable name="seen" type="int"/></info-structures>
  <event-processing>
    <ep-component name="counter" inputs="step.n" infos="seen">
      <input name="^0">(set! $0 (no-such-procedure ^0/0))</input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#
    );
    let (location, message) = load_error(name, &spec);
    assert_eq!(location, Some(locate(name, &spec, "no-such-procedure")));
    assert!(message.contains("no-such-procedure"), "{message}");
}

// ---------------------------------------------------------------------------------------
// The same through `voml run`.

fn scratch(name: &str) -> support::Scratch {
    support::Scratch::new("faults", name)
}

fn voml_run(dir: &std::path::Path, spec: &str, trace: &str) -> (i32, String) {
    quiet_steel();
    let out = Command::new(env!("CARGO_BIN_EXE_voml"))
        .args(["run", spec, "--trace", trace, "--headless", "--out", "out"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("VOML_PATH")
        .output()
        .expect("voml runs");
    (
        out.status.code().expect("voml exits"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn voml_run_reports_bad_lines_and_goes_on() {
    let dir = scratch("bad-lines");
    std::fs::write(dir.join("count.voml"), counting_spec()).unwrap();
    std::fs::write(dir.join("garbled.trf"), garbled_trace()).unwrap();
    let (status, stderr) = voml_run(&dir, "count.voml", "garbled.trf");
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("garbled.trf:4:4:"), "{stderr}");
    assert!(stderr.contains("garbled.trf:6:"), "{stderr}");
    assert!(stderr.contains("4 records"), "{stderr}");
    assert!(dir.join("out").is_dir());
}

#[test]
fn voml_run_shows_a_scheme_fault_at_its_voml_location_and_fails() {
    let dir = scratch("scheme-fault");
    let spec = scheme_faults_spec();
    std::fs::write(dir.join("faults.voml"), &spec).unwrap();
    std::fs::write(dir.join("steps.trf"), steps(6)).unwrap();
    let (status, stderr) = voml_run(&dir, "faults.voml", "steps.trf");
    assert_eq!(status, 1, "{stderr}");
    let ep = locate("faults.voml", &spec, "vector-ref (vector 1 2)");
    let ir = locate("faults.voml", &spec, "car (list)");
    assert!(stderr.contains(&ep), "no {ep} in:\n{stderr}");
    assert!(stderr.contains(&ir), "no {ir} in:\n{stderr}");
    assert!(stderr.contains("fragile"), "{stderr}");
}

/// A line thickness that grows past what the drawing layer draws: clamped, the run goes on,
/// and the clamping is told once, at the component that drew it, with the first record and
/// how often; not a fault.
fn too_thick_spec() -> String {
    format!(
        r#"<voml><body><visual-object name="thick">{STEP_EVENT}
      <info-structures><variable name="n" type="int" init="0"/></info-structures>
      <view-initializations><view name="v" window="100 50"/></view-initializations>
      <event-processing>
        <ep-component name="count" inputs="step.n" infos="n"><input name="^0">(set! $0 ^0/0)</input></ep-component>
      </event-processing>
      <info-rendition>
        <ir-component name="wide" views="v" infos="n">
          <line view="^0" from="0 0.5" to="1 0.5" thick="(if (gt $0 2) (* 1000000 $0) 1)"/>
        </ir-component>
      </info-rendition>
    </visual-object></body></voml>"#
    )
}

#[test]
fn a_value_the_drawing_layer_clamps_is_told_once_with_its_place() {
    let spec = too_thick_spec();
    let mut rt = start_runtime(compile_text("thick.voml", &spec), false, 1000);
    replay_bytes(&mut rt, steps(6).as_bytes(), "steps.trf", false);
    assert!(rt.faults().is_empty(), "{:?}", summaries(&rt));
    let (notes, more) = rt.drawing_notes();
    assert_eq!((notes.len(), more), (1, 0), "{notes:?}");
    let note = &notes[0];
    assert_eq!(
        note.component.as_deref(),
        Some("IR component `wide`"),
        "{note}"
    );
    assert_eq!(note.part.as_deref(), Some("phase 1"));
    assert_eq!(
        note.location.as_deref(),
        Some(locate("thick.voml", &spec, "<ir-component name=\"wide\"").as_str())
    );
    // Steps 3 to 6 drew too thick a line, and the last round after the input drew step 6's.
    assert_eq!(note.event.as_ref().map(|e| e.record), Some(3));
    assert_eq!(note.count, 5);
    assert!(note.message.contains("3000000"), "{note}");

    let dir = scratch("too-thick");
    std::fs::write(dir.join("thick.voml"), &spec).unwrap();
    std::fs::write(dir.join("steps.trf"), steps(6)).unwrap();
    let (status, stderr) = voml_run(&dir, "thick.voml", "steps.trf");
    assert_eq!(status, 0, "{stderr}");
    let told: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(told.len(), 1, "{stderr}");
    assert!(
        told[0].contains("clamped to")
            && told[0].contains("IR component `wide` phase 1")
            && told[0].contains("first at record 3 (steps.trf:4)")
            && told[0].ends_with("5 times"),
        "{stderr}"
    );
}

/// Code reading one element of `(current-event)` runs on the record itself (`event-ref`,
/// see `voml-runtime/src/event_reads.rs`): the values are the list's, a string the same
/// string, and an element the record lacks fails where the expression is written, on the
/// record that lacks it.
#[test]
fn reading_one_element_of_the_event_gives_the_lists_values_and_fails_in_place() {
    let name = "tests/faults/event-reads.voml";
    let spec = r#"<voml><body><visual-object name="event-reads">
      <info-structures>
        <variable name="sum" type="int" init="0"/>
        <variable name="types" type="list"/>
        <variable name="same" type="list"/>
        <variable name="seen" type="list"/>
      </info-structures>
      <event-processing>
        <ep-component name="reads" infos="sum types same">
          <before condition="(= (car (current-event)) -3)">(set! $0 (+ $0 (list-ref (current-event) 6)))
            (set! $1 (cons (list (cadr (current-event)) (caddr (current-event)) (cadddr (current-event))) $1))
            (set! $2 (cons (eq? (list-ref (current-event) 7) (list-ref (current-event) 7)) $2))</before>
        </ep-component>
        <ep-component name="beyond" infos="seen">
          <before condition="(= (car (current-event)) -4)">(set! $0 (cons (list-ref (current-event) 6) $0))</before>
        </ep-component>
      </event-processing>
    </visual-object></body></voml>"#;
    let mut rt = start_runtime(compile_text(name, spec), false, 10_000);
    // Each element read, in the bodies and the conditions, is read in place (the list
    // `(current-event)` gives is not made).
    let program = &rt.vo().program.text;
    assert_eq!(program.matches("(event-ref ").count(), 9, "{program}");
    assert!(!program.contains("(list-ref (current-event)"));
    let trace =
        "-3 5 0.5 2 0 2 10 \"a b\"\n-3 6 1.5 3 0 2 32 \"c\"\n-4 6 2.0 3 0 2 7\n-4 6 2.5 3 0 0\n";
    for record in records(trace) {
        rt.process(&record, "reads.trf").expect("not strict");
    }
    rt.finish(3.0, 0).expect("not strict");
    assert_eq!(var(&rt, "sum"), "42");
    assert_eq!(var(&rt, "types"), "((6 1.5 3) (5 0.5 2))");
    assert_eq!(var(&rt, "same"), "(#true #true)");
    // The fourth record has no element 6: the part fails there, at the expression (where
    // steel places the failing call of `list-ref` when the list is made).
    assert_eq!(var(&rt, "seen"), "(7)");
    let faults = rt.faults();
    assert_eq!(faults.len(), 1, "{:#?}", summaries(&rt));
    assert_eq!(
        faults[0].component.as_deref(),
        Some("EP component `beyond`")
    );
    assert_eq!(
        faults[0].location.as_deref(),
        Some(locate(name, spec, "list-ref (current-event) 6) $0").as_str())
    );
    assert_eq!(faults[0].event.as_ref().map(|e| e.line), Some(4));
}

/// Steel's compiler does not stop when the watchdog fires: a program that outgrows the
/// memory ceiling while it is compiled finishes compiling first. The load error says that
/// compiling went over, not that the top level (which has not run) did.
#[test]
fn a_program_that_outgrows_the_ceiling_while_compiled_is_told_so() {
    quiet_steel();
    let mut utility = String::new();
    for i in 0..2000 {
        utility.push_str(&format!(
            "(define (helper-{i} v k) (let loop ((j 0) (acc 0.0)) (if (lt j (vector-length v)) (loop (+ j 1) (+ acc (* k (vector-ref v j)) {i})) acc)))\n"
        ));
    }
    let spec = support::one_part_spec(
        "big",
        "total",
        &utility,
        "(set! $0 (helper-1 (vector 1.0) 2.0))",
    );
    let vo = compile_text("big.voml", &spec);
    let config = voml_runtime::Config {
        memory_limit: 1 << 20,
        ..voml_runtime::Config::default()
    };
    let message = match Runtime::headless(vo, config) {
        Ok(_) => panic!("a program of 2,000 procedures compiled under a 1 MiB ceiling"),
        Err(e) => e.to_string(),
    };
    assert!(
        message.contains("memory ceiling of 1 MiB compiling the program"),
        "{message}"
    );
    assert!(!message.contains("top level"), "{message}");
    assert!(
        message.starts_with("big.voml:"),
        "located in the spec: {message}"
    );
}
