//! The language's words are written once (`voml_ir::vocabulary`): every word `voml check`
//! accepts the runtime acts on, and the reverse. These tests walk the tables.

use voml_compiler::{colours, Options, RealFs};
use voml_llvo::Color;

/// Ways of writing a colour name that both sides must treat alike.
fn spellings(name: &str) -> Vec<String> {
    let mut out = vec![name.to_string(), name.to_ascii_uppercase()];
    if name.len() > 4 {
        let (a, b) = name.split_at(name.len() / 2);
        out.push(format!("{a}-{b}"));
        out.push(format!("{a} {b}"));
        out.push(format!("{a}_{b}"));
    }
    out
}

#[test]
fn every_colour_the_compiler_accepts_the_runtime_draws_and_the_reverse() {
    let mut problems = Vec::new();
    for name in colours::names().chain(Color::names()) {
        for written in spellings(name) {
            let compiler = colours::is_literal(&written);
            let runtime = Color::parse(&written).is_some();
            if compiler != runtime {
                problems.push(format!(
                    "`{written}`: compiler {compiler}, runtime {runtime}"
                ));
            }
        }
    }
    for word in ["font", "rojo", "#12", "#zzzzzz", "blue2", ""] {
        if colours::is_literal(word) != Color::parse(word).is_some() {
            problems.push(format!("`{word}` is judged differently"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(colours::names().count(), Color::names().count());
}

/// The drift cases that were found: `navyblue` refused by `voml check` yet drawn, and
/// `light-blue` drawn but warned about.
#[test]
fn navyblue_and_light_blue_check_cleanly() {
    let spec = r#"<?xml version="1.0"?>
<voml><body><visual-object name="colours">
  <view-initializations><view name="v" window="40 30"/></view-initializations>
  <info-rendition>
    <ir-component name="draw" views="v">
      <line view="^0" from="0 0" to="1 1" color="navyblue"/>
      <line view="^0" from="0 1" to="1 0" color="light-blue"/>
    </ir-component>
  </info-rendition>
</visual-object></body></voml>
"#;
    let out = voml_compiler::compile_str("colours.voml", spec, &RealFs, &Options::default());
    assert!(
        out.diagnostics.is_empty(),
        "{}",
        voml_compiler::diag::render(&out.db, &out.diagnostics, false)
    );
    assert_eq!(Color::parse("navyblue"), Some(Color::rgb(0, 0, 128)));
    assert_eq!(
        Color::parse("light-blue"),
        Some(Color::rgb(0xad, 0xd8, 0xe6))
    );
}

/// Every record-type name the trace reader knows, `voml check` takes in `rtype`, with the
/// same code; callback events are the runtime's record type.
#[test]
fn record_type_names_mean_the_same_to_the_compiler_and_the_trace_reader() {
    let mut problems = Vec::new();
    for name in voml_ir::vocabulary::record_type_names() {
        let spec = format!(
            r#"<?xml version="1.0"?>
<voml><body><visual-object name="rt">
  <event-declarations>
    <data-event name="e" rtype="{}" etype="1"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures><variable name="n" type="int"/></info-structures>
  <event-processing>
    <ep-component name="c" inputs="e.ts" infos="n"><input name="^0">(set! $0 1)</input></ep-component>
  </event-processing>
</visual-object></body></voml>
"#,
            name.to_ascii_uppercase()
        );
        let out = voml_compiler::compile_str("rt.voml", &spec, &RealFs, &Options::default());
        let compiled = out.vo.as_ref().map(|vo| vo.events[0].rtype);
        let read = voml_trace::record_type_code(name);
        if compiled.is_none() || compiled != read {
            problems.push(format!(
                "`{name}`: compiler {compiled:?}, trace reader {read:?}\n{}",
                voml_compiler::diag::render(&out.db, &out.diagnostics, false)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(
        voml_trace::record_type_code("callback"),
        Some(voml_runtime::CALLBACK_RTYPE)
    );
    assert_eq!(voml_trace::record_type_code("evententry"), Some(-3));
}
