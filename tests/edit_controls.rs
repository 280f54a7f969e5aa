//! Edits of control structures (`Runtime::set_control`, the `set` replay command): a value of
//! the declared type takes the structure's place between records and a rendering round
//! shows it at once, even to a component that skips unchanged rounds; a vector set so stays
//! updatable by the visual object; a value of another type, an unknown name, an info
//! structure or a value beyond the limits is refused with why and changes nothing.

mod support;

use serde_json::json;
use support::{compile_text, replay_bytes, start_runtime, view_pixels};
use voml_runtime::{EditError, Runtime};

/// A control of every type; an EP component that updates the vector in place and copies the
/// others into an info; an IR component, skipping unchanged rounds, whose bar is `n` long.
const SPEC: &str = r##"<?xml version="1.0"?>
<voml><body><visual-object name="edits">
  <event-declarations>
    <data-event name="tick" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures>
    <variable name="seen" type="any"/>
  </info-structures>
  <control-structures>
    <variable name="n" type="int" init="1"/>
    <variable name="x" type="real" init="0.5"/>
    <variable name="on" type="boolean" init="#f"/>
    <variable name="label" type="string" init="a"/>
    <variable name="items" type="list" init="(1 2)"/>
    <variable name="slots" type="vector" init="#(0 0)"/>
    <variable name="anything" type="any" init="#f"/>
  </control-structures>
  <view-initializations>
    <view name="bar" window="100 20" world="0 10 0 1" margins="0 0 0 0"/>
  </view-initializations>
  <event-processing>
    <ep-component name="use" inputs="tick.ts" infos="seen"
                  controls="n x on label items slots anything">
      <input name="^0">
        (vector-set! %5 0 (+ (vector-ref %5 0) 1))
        (set! $0 (list %0 %1 %2 %3 %4 %5 %6))
      </input>
    </ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="show" views="bar" controls="n" refresh="update changed">
      <rectangle view="^0" from="0 0" to="%0 1" fill="blue"/>
    </ir-component>
  </info-rendition>
</visual-object></body></voml>
"##;

fn ticks(n: usize) -> Vec<u8> {
    (0..n)
        .map(|k| format!("-3 1 {k}.0 0 0 0\n"))
        .collect::<String>()
        .into_bytes()
}

fn started() -> Runtime {
    let mut rt = start_runtime(compile_text("edits.voml", SPEC), false, 5000);
    replay_bytes(&mut rt, &ticks(2), "ticks", false);
    rt
}

/// How many pixels of the bar's view are blue.
fn blue(rt: &mut Runtime) -> usize {
    view_pixels(rt, 0)
        .data
        .chunks_exact(4)
        .filter(|p| p[2] > 200 && p[0] < 50)
        .count()
}

#[test]
fn values_of_the_declared_types_are_set_and_shown_at_once() {
    let mut rt = started();
    let before = blue(&mut rt);
    let renders = rt.stats().renders;
    rt.set_control("n", &json!(7)).unwrap();
    assert_eq!(rt.variable("n").as_deref(), Some("7"));
    assert!(
        rt.stats().renders > renders,
        "no rendering round after the edit"
    );
    // (Edges are anti-aliased: about seven times as long.)
    let after = blue(&mut rt);
    assert!(
        before > 0 && after > before * 6 && after < before * 8,
        "the bar did not grow from 1 to 7: {before} -> {after} pixels"
    );
    for (name, value, scheme) in [
        ("x", json!(2), "2.0"),
        ("x", json!(0.25), "0.25"),
        ("on", json!(true), "#true"),
        ("label", json!("two words"), "\"two words\""),
        (
            "items",
            json!([3, "four", [5.5, false]]),
            "(3 \"four\" (5.5 #false))",
        ),
        ("anything", json!("text"), "\"text\""),
        ("anything", json!([1, null]), "(1 #<void>)"),
    ] {
        rt.set_control(name, &value).unwrap();
        assert_eq!(
            rt.variable(name).as_deref(),
            Some(scheme),
            "{name} = {value}"
        );
    }
    // A vector set from outside is one the visual object may still update in place.
    rt.set_control("slots", &json!([10, 20, 30])).unwrap();
    replay_bytes(&mut rt, &ticks(1), "ticks", false);
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    assert_eq!(rt.variable("slots").as_deref(), Some("#(11 20 30)"));
    let seen = rt.variable("seen").unwrap();
    assert!(seen.starts_with("(7 0.25 #true \"two words\""), "{seen}");
}

#[test]
fn values_that_do_not_fit_are_refused_with_why_and_change_nothing() {
    let mut rt = started();
    let state = voml_runtime::state::of(&rt);
    let pixels = view_pixels(&mut rt, 0);
    let renders = rt.stats().renders;
    let long = "x".repeat(64 * 1024 + 1);
    let many: Vec<u32> = (0..10_001).collect();
    let mut deep = json!(1);
    for _ in 0..40 {
        deep = json!([deep]);
    }
    for (name, value, why) in [
        ("n", json!(1.5), "expected an integer"),
        ("n", json!("3"), "expected an integer"),
        ("n", json!(1e30), "expected an integer"),
        ("x", json!("0.5"), "expected a number"),
        ("on", json!(1), "expected true or false"),
        ("label", json!(3), "expected a string"),
        ("label", json!(long), "at most 65536 bytes"),
        ("items", json!({"a": 1}), "expected a list"),
        ("items", json!(many), "at most 10000 elements"),
        ("items", deep, "nest at most 32 deep"),
        ("items", json!([{"a": 1}]), "objects have no Scheme value"),
        ("slots", json!(3), "expected a vector"),
        ("seen", json!(1), "`seen` is an info structure"),
        ("nothing", json!(1), "no control structure `nothing`"),
    ] {
        match rt.set_control(name, &value) {
            Err(EditError::Refused(message)) => {
                assert!(message.contains(why), "{name}: {message}")
            }
            other => panic!("{name} = {value}: not refused: {other:?}"),
        }
    }
    assert_eq!(
        voml_runtime::state::of(&rt),
        state,
        "a refused edit changed a value"
    );
    assert_eq!(
        view_pixels(&mut rt, 0),
        pixels,
        "a refused edit changed the picture"
    );
    assert_eq!(rt.stats().renders, renders, "a refused edit rendered");
}

/// The `set` replay command does what the runtime's edit does, between records, and a
/// refused one is reported at its line and the run goes on.
#[test]
fn the_set_command_edits_between_records() {
    use voml_driver::control::Commands;
    let mut rt = start_runtime(compile_text("edits.voml", SPEC), false, 5000);
    let mut source = voml_driver::Source::reader(
        "ticks".into(),
        std::io::Cursor::new(ticks(4)),
        voml_trace::ReadOptions::default(),
    );
    let mut commands = Commands::from_text(
        "script",
        "step 2\nset n 4\nset n \"four\"\nset label \"b\"\nresume\n",
    );
    let mut heard = Lines::default();
    let outcome = voml_driver::run_controlled(
        &mut rt,
        &mut source,
        &voml_driver::Options::default(),
        Some(&mut commands),
        voml_driver::Hooks::default(),
        &mut [],
        &mut heard,
    );
    assert_eq!(outcome.records, 4);
    let errors: Vec<&String> = heard.0.iter().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{:?}", heard.0);
    assert!(
        errors[0].starts_with("error: script:3: `\"four\"` is not a value for `n`"),
        "{}",
        errors[0]
    );
    assert_eq!(rt.variable("n").as_deref(), Some("4"));
    assert_eq!(rt.variable("label").as_deref(), Some("\"b\""));
    // The records after the edits saw them.
    let seen = rt.variable("seen").unwrap();
    assert!(seen.starts_with("(4 0.5 #false \"b\""), "{seen}");
}

/// A reporter that keeps the lines for the user.
#[derive(Default)]
struct Lines(Vec<String>);

impl voml_driver::Reporter for Lines {
    fn fault(&mut self, fault: &voml_runtime::Fault) {
        panic!("a fault: {fault:?}");
    }
    fn bad_line(&mut self, error: &voml_trace::TraceError, _strict: bool) {
        panic!("a bad line: {error}");
    }
    fn progress(&mut self, _progress: &voml_driver::Progress) {}
    fn line(&mut self, text: &str) {
        self.0.push(text.to_string());
    }
}
