//! `refresh="changed"`: an IR component that draws from its infos and controls only skips the
//! rounds in which nothing it reads may have changed, and the pictures are those of a run
//! that redraws it every round. (The components' texts are computed in a `let`, so that the
//! compiler does not find their phase 1 drawing-only, which would make `update` alone skip
//! rounds as `changed` does.) (Displays are drawn in every round here, not deferred until
//! a picture is needed, so that the rounds skipped are counted; `tests/deferred_displays.rs`
//! holds deferring to the same pictures.)

mod support;

use support::{compile_text, quiet_steel, replay_bytes, view_pixels};
use voml_runtime::{Config, Runtime};

/// A strict runtime drawing every display in every round.
fn start_runtime(vo: voml_ir::CompiledVo, strict: bool, budget_ms: u64) -> Runtime {
    quiet_steel();
    let config = Config {
        strict,
        budget: std::time::Duration::from_millis(budget_ms),
        defer_displays: false,
        ..Config::default()
    };
    Runtime::headless(vo, config).unwrap_or_else(|e| panic!("does not load: {e}"))
}

/// Two counts, of events 1 (every record but two) and 2 (two records); each shown as a bar
/// and its number by its own component. `SHARED` puts the second bar's view under a third
/// component that redraws every round; `REFRESH` is the two components' refresh.
const SPEC: &str = r#"<?xml version="1.0"?>
<voml><body><visual-object name="v" mode="synchronous" tick="1">
  <event-declarations>
    <data-event name="often" rtype="mark" etype="1"><data-field name="ts" type="real"/></data-event>
    <data-event name="rarely" rtype="mark" etype="2"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures>
    <variable name="a" type="int"/>
    <variable name="b" type="int"/>
  </info-structures>
  <view-initializations>
    <view name="left" window="120 100" world="0 100 0 10"/>
    <view name="right" window="120 100" world="0 100 0 10"/>
  </view-initializations>
  <event-processing>
    <ep-component name="count-a" inputs="often.ts" infos="a"><input name="^0">(set! $0 (+ $0 1))</input></ep-component>
    <ep-component name="count-b" inputs="rarely.ts" infos="b"><input name="^0">(set! $0 (+ $0 1))</input></ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="show-a" views="left" infos="a" refresh="REFRESH">
      <rectangle view="^0" from="0 2" to="$0 4" fill="blue"/>
      <text view="^0" coords="5 6" content="(let ((n $0)) (number->string n))"/>
    </ir-component>
    <ir-component name="show-b" views="right" infos="b" refresh="REFRESH">
      <rectangle view="^0" from="0 2" to="(* 40 $0) 4" fill="red"/>
      <text view="^0" coords="5 6" content="(let ((n $0)) (number->string n))"/>
    </ir-component>
    SHARED
  </info-rendition>
</visual-object></body></voml>
"#;

/// A third component drawing in the second view every round: a bar that grows with the
/// first count over the second's, so that its undrawing cuts into what is under it.
const SHARED: &str = r#"<ir-component name="over" views="right" infos="a" refresh="update">
      <rectangle view="^0" from="0 3" to="$0 3.5" fill="green"/>
    </ir-component>"#;

/// 100 records a second apart: event 1, but event 2 at seconds 10 and 50.
fn trace() -> String {
    (0..100)
        .map(|k| {
            let etype = if k == 10 || k == 50 { 2 } else { 1 };
            format!("-2 {etype} {k}.5 0 0 0\n")
        })
        .collect()
}

/// The run's pictures, renders and rounds skipped.
fn run(refresh: &str, shared: bool) -> (Vec<Vec<u8>>, u64, u64) {
    let spec = SPEC
        .replace("REFRESH", refresh)
        .replace("SHARED", if shared { SHARED } else { "" });
    let mut rt = start_runtime(compile_text("changed.voml", &spec), true, 1000);
    replay_bytes(&mut rt, trace().as_bytes(), "t.trf", true);
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    assert_eq!(rt.variable("a"), Some("98".into()));
    assert_eq!(rt.variable("b"), Some("2".into()));
    let pictures = (0..2).map(|v| view_pixels(&mut rt, v).data).collect();
    (pictures, rt.stats().renders, rt.stats().unchanged)
}

#[test]
fn a_component_redraws_only_after_what_it_reads_changed() {
    let (every_round, renders, skipped) = run("update", false);
    assert_eq!(skipped, 0, "without `changed` nothing is skipped");
    assert!(renders >= 99, "{renders} renders");
    let (changed, renders_too, skipped) = run("update changed", false);
    assert_eq!(renders_too, renders);
    // A render follows each record, and one more ends the run. The first count changes
    // before every render but those after the two records of event 2 and the last; the
    // second before the first render and the renders after its two records.
    let (a_runs, b_runs) = (renders - 3, 3);
    assert_eq!(skipped, (renders - a_runs) + (renders - b_runs));
    assert!(changed == every_round, "the pictures differ");
    // And they are the counts' pictures: the second bar is 80 units of 100 long.
    let right = &changed[1];
    let red = |x: usize| {
        let i = (70 * 120 + x) * 4;
        right[i..i + 3] == [255, 0, 0]
    };
    assert!(
        red(90) && !red(100),
        "the second bar ends at 80% of the view"
    );
}

#[test]
fn another_component_drawing_in_its_view_makes_it_redraw() {
    let (every_round, renders, skipped_none) = run("update", true);
    assert_eq!(skipped_none, 0);
    let (changed, _, skipped) = run("update changed", true);
    // The first component skips as before; the second's view is drawn in by another
    // component every round, so it never skips.
    assert_eq!(skipped, 3, "{renders} renders");
    assert!(changed == every_round, "the pictures differ");
}

/// Phase 2 is where control structures are updated: a control one component changes there
/// makes another component that reads it redraw.
#[test]
fn a_control_changed_in_phase_2_makes_its_readers_redraw() {
    let spec = r#"<?xml version="1.0"?>
<voml><body><visual-object name="v" mode="synchronous" tick="1">
  <event-declarations>
    <data-event name="tick-ish" rtype="mark" etype="1"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <control-structures><variable name="rounds" type="int" init="0"/></control-structures>
  <view-initializations>
    <view name="left" window="120 100" world="0 100 0 10"/>
    <view name="right" window="120 100" world="0 100 0 10"/>
  </view-initializations>
  <event-processing>
    <ep-component name="nothing" inputs="tick-ish.ts"><input name="^0">#t</input></ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="counter" views="left" controls="rounds" refresh="update">
      <rectangle view="^0" from="0 0" to="1 1" fill="black"/>
      <end-with>(set! %0 (+ %0 1))</end-with>
    </ir-component>
    <ir-component name="shown" views="right" controls="rounds" refresh="update changed">
      <rectangle view="^0" from="0 2" to="%0 4" fill="red"/>
    </ir-component>
  </info-rendition>
</visual-object></body></voml>
"#;
    let mut rt = start_runtime(compile_text("phase2.voml", spec), true, 1000);
    let trace: String = (0..20).map(|k| format!("-2 1 {k}.5 0 0 0\n")).collect();
    replay_bytes(&mut rt, trace.as_bytes(), "t.trf", true);
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    let renders = rt.stats().renders;
    assert_eq!(rt.variable("rounds"), Some(renders.to_string()));
    assert_eq!(rt.stats().unchanged, 0, "the reader skipped a round");
    // The bar is as long as the rounds before the last phase 2.
    let right = view_pixels(&mut rt, 1);
    let red = |x: u32| right.pixel(x, 70).is_some_and(|p| p[..3] == [255, 0, 0]);
    let end = (renders - 1) as f64 * 1.2;
    assert!(
        red(end as u32 - 2) && !red(end as u32 + 2),
        "the bar ends at {end}"
    );
}

/// Code that names a structure on every record but leaves its value as it was does not make
/// its readers redraw: a level set for each record to 1 or 2 (by the record's event type)
/// changes only where the event type does, and the bar that shows it redraws only then.
#[test]
fn a_structure_rewritten_with_the_same_value_does_not_make_its_readers_redraw() {
    let spec = r#"<?xml version="1.0"?>
<voml><body><visual-object name="v">
  <event-declarations>
    <data-event name="one" rtype="mark" etype="1"><data-field name="ts" type="real"/></data-event>
    <data-event name="two" rtype="mark" etype="2"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures><variable name="level" type="int" init="0"/><variable name="label" type="string" init="none"/></info-structures>
  <view-initializations><view name="v" window="120 100" world="0 3 0 10"/></view-initializations>
  <event-processing>
    <ep-component name="levels" inputs="one.ts two.ts" infos="level label">
      <input name="^0">(set! $0 1) (set! $1 "one")</input>
      <input name="^1">(set! $0 2) (set! $1 "two")</input>
    </ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="bar" views="v" infos="level label" refresh="REFRESH">
      <rectangle view="^0" from="0 2" to="$0 4" fill="blue"/>
      <text view="^0" coords="0.1 6" content="(let ((label $1)) label)"/>
    </ir-component>
  </info-rendition>
</visual-object></body></voml>
"#;
    // Event type 2 for records 30 to 59, 1 otherwise: the level changes three times.
    let trace: String = (0..100)
        .map(|k| {
            format!(
                "-2 {} {k}.5 0 0 0\n",
                if (30..60).contains(&k) { 2 } else { 1 }
            )
        })
        .collect();
    let run = |refresh: &str| {
        let mut rt = start_runtime(
            compile_text("same.voml", &spec.replace("REFRESH", refresh)),
            true,
            1000,
        );
        replay_bytes(&mut rt, trace.as_bytes(), "t.trf", true);
        assert!(rt.faults().is_empty(), "{:?}", rt.faults());
        let stats = rt.stats().clone();
        (view_pixels(&mut rt, 0).data, stats.renders, stats.unchanged)
    };
    let (every_round, renders, none) = run("update");
    assert_eq!(none, 0);
    let (changed, renders_too, skipped) = run("update changed");
    assert_eq!(renders, renders_too);
    // The bar draws at the start of input (level 0), for the first record (1), then where
    // the level goes to 2 and back to 1.
    assert_eq!(skipped, renders - 4, "{renders} renders");
    assert!(changed == every_round, "the pictures differ");
}
