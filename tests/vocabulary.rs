//! The language's words are written once (`voml_ir::vocabulary`): every word `voml check`
//! accepts the runtime acts on, and the reverse. These tests walk the tables: colours, record
//! types, voices, every primitive's procedure and arity, every enumerated word of every
//! attribute, and the prelude's defaults.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use voml_compiler::{colours, Code, MemoryFs, Options, RealFs};
use voml_ir::vocabulary::schema::{self, Arg, AttrSpec, ElementSpec, Kind, ELEMENTS};
use voml_ir::vocabulary::{self, limits};
use voml_llvo::Color;
use voml_runtime::host::SoundCommand;

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

// ---------------------------------------------------------------------------------------
// Specs made from the table.

/// A value of attribute `a` of `<e>` as a spec would write it, chosen so that drawing
/// primitives reach into the view's right margin (for `clip`) and text sits near it.
fn sample(e: &ElementSpec, a: &AttrSpec) -> String {
    let text = match a.kind {
        Kind::ViewRef => "^0",
        Kind::Colour => "red",
        Kind::Flag => "yes",
        Kind::Enum(words) | Kind::EnumSet(words) => words[0],
        Kind::Voice => "bell",
        Kind::StrOrExpr => match a.name {
            "filename" => "dot.png",
            "file" => "shot.png",
            _ => "Wg",
        },
        Kind::Exprs(n) => match (a.name, n) {
            ("points", _) => "(list 0.2 0.2 1.3 0.5 0.2 0.8)",
            ("dash", _) => "(list 4 2)",
            ("font", _) => r#"(getfontname 'table "helvetica" 12 "bold")"#,
            ("thick", _) => "9",
            ("alpha" | "volume", _) => "0.5",
            ("radius", _) => "0.4",
            ("radii", _) => "0.4 0.2",
            ("start", _) => "0",
            ("extent", _) => "270",
            ("size", 1) => "12",
            ("size", 2) => "90 70",
            ("by", _) => "0 0",
            ("world", _) => "0 1 0 1",
            ("from", _) => "0.5 0.5",
            ("to", _) => "1.3 0.6",
            ("center", _) => "0.8 0.5",
            ("coords", _) => "0.9 0.5",
            ("orig-origin" | "orig-extents", _) => "0 0",
            ("world-origin", _) => "0.1 0.1",
            ("world-extents", _) => "0.5 0.5",
            ("channel", _) => "3",
            ("pan", _) => "0.2",
            ("duration", _) => "0.5",
            ("factor", _) => "2",
            ("note", _) => "60",
            ("freq", _) => "440",
            (_, 1) => "1",
            (_, n) => return vec!["1"; n].join(" "),
        },
        other => panic!("<{}> `{}`: no sample for {other:?}", e.name, a.name),
    };
    text.to_string()
}

/// `text` as XML character data.
fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;")
}

/// `<e .../>` with the given attributes.
fn markup(e: &ElementSpec, attrs: &[(&str, String)]) -> String {
    let mut out = format!("<{}", e.name);
    for (name, value) in attrs {
        let value = xml_escape(value).replace('"', "&quot;");
        out.push_str(&format!(" {name}=\"{value}\""));
    }
    out + "/>"
}

/// A primitive with sample values: every attribute (`all`), or only the required ones, a
/// pitch and those of `overrides`, which replace samples; `freq` is left out for `note`
/// (they exclude each other).
fn primitive_markup(e: &ElementSpec, all: bool, overrides: &[(&str, &str)]) -> String {
    let pitched = e.call.is_some_and(|c| c.args.contains(&Arg::Pitch));
    let attrs: Vec<(&str, String)> = e
        .attrs
        .iter()
        .filter(|a| a.name != "freq")
        .filter(|a| {
            all || a.required
                || (a.name == "note" && schema::PITCHED.contains(&e.name))
                || overrides.iter().any(|(n, _)| *n == a.name)
        })
        .filter(|a| a.name != "note" || pitched)
        .map(|a| {
            let value = overrides
                .iter()
                .find(|(n, _)| *n == a.name)
                .map_or_else(|| sample(e, a), |(_, v)| v.to_string());
            (a.name, value)
        })
        .collect();
    markup(e, &attrs)
}

/// The table's default of `<element>` `attr`, or `fallback` when it has none.
fn default_or(element: &str, attr: &str, fallback: &str) -> String {
    schema::element(element)
        .and_then(|e| e.attr(attr))
        .and_then(|a| a.default)
        .unwrap_or(fallback)
        .to_string()
}

/// A whole spec whose first IR component holds `code`; `slots` set the enumerated
/// attributes of the structure (by `element.attribute`), the others take the table's
/// defaults.
fn spec(code: &str, slots: &[(&str, &str)]) -> String {
    let slot = |key: &str, fallback: &str| -> String {
        if let Some((_, v)) = slots.iter().find(|(k, _)| *k == key) {
            return v.to_string();
        }
        let (element, attr) = key.split_once('.').unwrap();
        default_or(element, attr, fallback)
    };
    format!(
        r#"<?xml version="1.0"?>
<voml><body><visual-object name="words" mode="{mode}">
  <event-declarations>
    <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="{field}"/></data-event>
  </event-declarations>
  <info-structures><variable name="x" type="{var}"/></info-structures>
  <view-initializations><view name="v" window="80 60" margins="10 10 10 10" undraw="{undraw}"/></view-initializations>
  <event-processing>
    <ep-component name="c" inputs="e.ts" infos="x"><input name="^0">(set! $0 $0)</input></ep-component>
  </event-processing>
  <info-rendition order="{order}">
    <ir-component name="a" views="v" infos="x" refresh="{refresh}" buffer="{buffer}">(begin $0 {code})</ir-component>
    <ir-component name="b">(+ 1 1)</ir-component>
  </info-rendition>
</visual-object></body></voml>
"#,
        mode = slot("visual-object.mode", ""),
        field = slot("data-field.type", ""),
        var = slot("variable.type", ""),
        order = slot("info-rendition.order", ""),
        refresh = slot("ir-component.refresh", "update"),
        buffer = slot("ir-component.buffer", ""),
        undraw = slot("view.undraw", ""),
    )
}

/// A spec with one IR component `p<i>` per piece of code, drawing in the view of [`spec`].
fn components_spec(codes: &[String]) -> String {
    let components: String = codes
        .iter()
        .enumerate()
        .map(|(i, code)| format!("<ir-component name=\"p{i}\" views=\"v\">{code}</ir-component>\n"))
        .collect();
    format!(
        r#"<?xml version="1.0"?>
<voml><body><visual-object name="words">
  <view-initializations><view name="v" window="80 60" margins="10 10 10 10"/></view-initializations>
  <info-rendition>
{components}  </info-rendition>
</visual-object></body></voml>
"#
    )
}

/// A tiny PNG for `<figure filename="dot.png">`.
fn dot_png() -> Vec<u8> {
    let mut llvo = voml_llvo::Llvo::headless();
    let view = llvo
        .create_view(voml_llvo::ViewSpec::new("dot").window(3, 3))
        .unwrap();
    llvo.png(view).unwrap()
}

/// What `voml check` says of `text`, and the compiled visual object when it has no error.
fn check(
    text: &str,
) -> (
    Vec<voml_compiler::Diagnostic>,
    Option<voml_ir::CompiledVo>,
    String,
) {
    let fs = MemoryFs::new()
        .with("spec.voml", text)
        .with("dot.png", dot_png());
    let out = voml::compile_checked(Path::new("spec.voml"), &fs, &Options::default());
    let rendered = voml_compiler::diag::render(&out.db, &out.diagnostics, false);
    (out.diagnostics, out.vo, rendered)
}

/// Compiles `text`, failing on any error (warnings are allowed).
fn accepted(text: &str) -> voml_ir::CompiledVo {
    let (diags, vo, rendered) = check(text);
    assert!(
        !diags.iter().any(|d| d.is_error()),
        "voml check refuses:\n{rendered}\n{text}"
    );
    vo.unwrap()
}

/// What a run of `vo` did: its faults, the view's pixels and the sound commands.
struct Run {
    faults: Vec<String>,
    pixels: Vec<u8>,
    sounds: Vec<SoundCommand>,
}

fn run(vo: voml_ir::CompiledVo) -> Run {
    support::quiet_steel();
    let config = voml_runtime::Config {
        snapshots: true,
        ..Default::default()
    };
    let mut rt = voml_runtime::Runtime::headless(vo, config)
        .unwrap_or_else(|e| panic!("does not load: {e}"));
    rt.start(0.0).unwrap();
    Run {
        faults: rt.faults().iter().map(|f| f.to_string()).collect(),
        pixels: rt.view_pixels(0).unwrap().data,
        sounds: rt.take_sounds().into_iter().map(|s| s.command).collect(),
    }
}

// ---------------------------------------------------------------------------------------
// Reading generated calls.

/// The top-level items of the list that starts `text` (a string literal, an atom, a quoted
/// datum or a nested list each count as one), as text.
fn list_items(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    assert_eq!(b[0], b'(');
    let (mut depth, mut i) = (0usize, 0usize);
    let mut items = Vec::new();
    let mut start: Option<usize> = None;
    let mut prefixed = false;
    while i < b.len() {
        let c = b[i];
        if depth == 1 && start.is_none() && !c.is_ascii_whitespace() && !matches!(c, b')' | b']') {
            start = Some(i);
        }
        match c {
            b'"' => {
                i += 1;
                while b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' | b'`' | b',' if depth == 1 => prefixed = true,
            b'(' | b'[' => depth += 1,
            b')' | b']' => {
                depth -= 1;
                if depth == 1 && !prefixed {
                    items.push(&text[start.take().unwrap()..=i]);
                }
                if depth == 1 && prefixed {
                    prefixed = false;
                    items.push(&text[start.take().unwrap()..=i]);
                }
                if depth == 0 {
                    if let Some(s) = start.take() {
                        items.push(&text[s..i]);
                    }
                    return items[1..].to_vec();
                }
            }
            c if c.is_ascii_whitespace() && depth == 1 => {
                if let Some(s) = start.take() {
                    items.push(&text[s..i]);
                }
                prefixed = false;
            }
            _ => {}
        }
        i += 1;
    }
    panic!("unbalanced call: {text}")
}

/// The arguments of every call of `name` in `program`.
fn calls<'t>(program: &'t str, name: &str) -> Vec<Vec<&'t str>> {
    let head = format!("({name}");
    program
        .match_indices(&head)
        .filter(|(i, _)| {
            matches!(
                program.as_bytes().get(i + head.len()),
                Some(b' ' | b')' | b'\n')
            )
        })
        .map(|(i, _)| list_items(&program[i..]))
        .collect()
}

#[test]
fn list_items_reads_strings_quotes_and_lists() {
    assert_eq!(
        list_items(r#"(f "a (b" 'x '(1 2) (g 1) #f 2.5) tail"#),
        vec![r#""a (b""#, "'x", "'(1 2)", "(g 1)", "#f", "2.5"]
    );
    assert_eq!(list_items("(beep)"), Vec::<&str>::new());
}

// ---------------------------------------------------------------------------------------
// Procedures and arities.

/// The runtime defines every procedure of the primitive API with the table's arity; the
/// other natives it defines are the prelude's.
#[test]
fn the_runtime_registers_every_procedure_with_its_arity() {
    let natives: BTreeMap<&str, usize> = voml_runtime::host::natives().collect();
    let mut problems = Vec::new();
    for p in schema::PROCEDURES {
        match natives.get(p.name) {
            Some(&n) if n == p.arity() => {}
            Some(&n) => problems.push(format!(
                "{} takes {n}, the table says {}",
                p.name,
                p.arity()
            )),
            None => problems.push(format!("{} is not registered", p.name)),
        }
    }
    let others: Vec<&str> = natives
        .keys()
        .copied()
        .filter(|n| schema::procedure_named(n).is_none())
        .collect();
    assert_eq!(others, ["current-event", "current-time", "event-ref"]);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(voml_ir::primitive_api::PROCEDURES, schema::PROCEDURES);
}

/// A spec with every primitive, once with every attribute and once with only the required
/// ones: the generated program calls each procedure with exactly its arity, and the runtime
/// runs all of it without a fault.
#[test]
fn the_lowering_calls_every_procedure_with_its_arity_and_the_runtime_runs_it() {
    let mut code = String::new();
    for e in schema::primitives() {
        code.push_str(&primitive_markup(e, true, &[]));
        code.push_str(&primitive_markup(e, false, &[]));
    }
    let vo = accepted(&spec(&code, &[]));
    let program = vo.program.text.clone();
    let mut problems = Vec::new();
    for p in schema::PROCEDURES {
        let found = calls(&program, p.name);
        if found.is_empty() {
            problems.push(format!("no call of {}", p.name));
        }
        for args in found {
            if args.len() != p.arity() {
                problems.push(format!(
                    "{} called with {} arguments, takes {}: {args:?}",
                    p.name,
                    args.len(),
                    p.arity()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let run = run(vo);
    assert!(run.faults.is_empty(), "{:#?}", run.faults);
    // Every sound primitive reached the sound queue.
    for what in [
        "Tone",
        "NoteOn",
        "NoteOff",
        "NoteVolume",
        "Channel",
        "Master",
        "Tempo",
        "Beep",
    ] {
        assert!(
            run.sounds
                .iter()
                .any(|s| format!("{s:?}").starts_with(what)),
            "no {what} in {:?}",
            run.sounds
        );
    }
}

/// The arguments of `e`'s call in `program` (the first call), by attribute: what the
/// compiler passes for each (style attributes inside the style call).
fn arguments_by_attribute(program: &str, e: &ElementSpec) -> BTreeMap<String, String> {
    let call = e.call.unwrap();
    let args = &calls(program, call.procedure.name)[0];
    let mut out = BTreeMap::new();
    let mut i = 0;
    for arg in call.args {
        let width = arg.width(e);
        let text = args[i..i + width].join(" ");
        match arg {
            Arg::Attr(name) => {
                out.insert(name.to_string(), text);
            }
            Arg::Pitch => {
                out.insert("pitch".into(), text);
            }
            Arg::Style => {
                let style = list_items(shared_style(program, &text));
                for (p, v) in schema::STYLE.params.iter().zip(style) {
                    out.insert(p.to_string(), v.to_string());
                }
            }
        }
        i += width;
    }
    out
}

/// A style argument as the compiler wrote it: a style of literals only is made once, in a
/// global the call names (`voml/style/0`), defined at the end of the program.
fn shared_style<'p>(program: &'p str, arg: &'p str) -> &'p str {
    if arg.starts_with('(') {
        return arg;
    }
    let define = format!("(define {arg} ");
    let at = program
        .find(&define)
        .unwrap_or_else(|| panic!("`{arg}` is not defined in\n{program}"));
    let rest = &program[at + define.len()..];
    &rest[..rest.find('\n').expect("one line") - 1]
}

// ---------------------------------------------------------------------------------------
// Enumerated words.

/// How the runtime shows that it acted on a word of an enumerated attribute.
#[derive(Clone, Copy, Debug)]
enum Effect {
    /// A drawing style or text word: each word draws a different picture with this
    /// primitive (and every primitive with the attribute draws without a fault).
    Drawn(&'static str),
    /// `mute`: the channel command the runtime queues mutes exactly for the true words.
    Mute,
    /// A word of the structure: the compiled visual object records it, as a runtime reads it.
    Structure,
}

fn effect(element: &str, attr: &str) -> Effect {
    match (element, attr) {
        (_, "clip" | "cap") => Effect::Drawn("line"),
        ("text", "halign" | "valign") => Effect::Drawn("text"),
        ("channel", "mute") => Effect::Mute,
        ("visual-object", "mode")
        | ("data-field", "type")
        | ("variable", "type")
        | ("info-rendition", "order")
        | ("ir-component", "refresh" | "buffer")
        | ("view", "undraw") => Effect::Structure,
        _ => panic!("nothing says how the runtime acts on <{element}> `{attr}`: add it here"),
    }
}

/// The enumerated attributes of the table, with their words.
fn enumerated() -> Vec<(
    &'static ElementSpec,
    &'static AttrSpec,
    &'static [&'static str],
)> {
    let mut out = Vec::new();
    for e in ELEMENTS {
        for a in e.attrs {
            if let Kind::Enum(words) | Kind::EnumSet(words) = a.kind {
                out.push((e, a, words));
            }
        }
    }
    out
}

/// The compiled visual object as JSON, the form a runtime reads.
fn ir_json(vo: &voml_ir::CompiledVo) -> serde_json::Value {
    serde_json::from_str(&vo.to_json()).unwrap()
}

/// What the compiled visual object records for `<e>` `a` (structure words).
fn recorded(vo: &voml_ir::CompiledVo, e: &str, a: &str) -> serde_json::Value {
    let ir = ir_json(vo);
    match (e, a) {
        ("visual-object", "mode") => ir["mode"]["kind"].clone(),
        ("data-field", "type") => ir["events"][0]["fields"][0]["ty"].clone(),
        ("variable", "type") => ir["infos"][0]["ty"].clone(),
        ("info-rendition", "order") => ir["ir_components"][0]["name"].clone(),
        ("view", "undraw") => ir["views"][0]["undraw"].clone(),
        ("ir-component", "refresh") => ir["ir_components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "a")
            .unwrap()["refresh"]
            .clone(),
        ("ir-component", "buffer") => ir["ir_components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "a")
            .unwrap()["buffer"]
            .clone(),
        _ => unreachable!(),
    }
}

/// For every enumerated attribute of the table and every one of its words, `voml check`
/// takes the word and the runtime acts on it.
#[test]
fn every_enumerated_word_is_taken_and_acted_on() {
    let mut problems = Vec::new();
    for (e, a, words) in enumerated() {
        match effect(e.name, a.name) {
            Effect::Drawn(shown_by) => {
                // Every primitive with the attribute takes every word and draws.
                for word in words {
                    let code = primitive_markup(e, false, &[(a.name, word)]);
                    let run = run(accepted(&spec(&code, &[])));
                    if !run.faults.is_empty() {
                        problems.push(format!(
                            "<{}> {}=\"{word}\": {:?}",
                            e.name, a.name, run.faults
                        ));
                    }
                }
                // On the primitive that shows it, every word draws a different picture.
                if e.name == shown_by {
                    let pictures: Vec<Vec<u8>> = words
                        .iter()
                        .map(|w| {
                            let code = primitive_markup(e, true, &[(a.name, w)]);
                            run(accepted(&spec(&code, &[]))).pixels
                        })
                        .collect();
                    for i in 0..words.len() {
                        for j in i + 1..words.len() {
                            if pictures[i] == pictures[j] {
                                problems.push(format!(
                                    "<{}> {}: `{}` and `{}` draw the same",
                                    e.name, a.name, words[i], words[j]
                                ));
                            }
                        }
                    }
                }
            }
            Effect::Mute => {
                for word in words {
                    let code = primitive_markup(e, false, &[(a.name, word)]);
                    let run = run(accepted(&spec(&code, &[])));
                    let muted = run.sounds.iter().find_map(|s| match s {
                        SoundCommand::Channel { mute, .. } => Some(*mute),
                        _ => None,
                    });
                    if muted != Some(schema::flag_value(word)) {
                        problems.push(format!("mute=\"{word}\" queued {muted:?}"));
                    }
                }
            }
            Effect::Structure => {
                let key = format!("{}.{}", e.name, a.name);
                for word in words {
                    let vo = accepted(&spec("", &[(&key, word)]));
                    let got = recorded(&vo, e.name, a.name);
                    let expected = match (e.name, a.name) {
                        ("info-rendition", "order") => {
                            serde_json::json!(if *word == "reverse" { "b" } else { "a" })
                        }
                        ("ir-component", "refresh") => {
                            let mut m = serde_json::Map::new();
                            for w in words.iter() {
                                m.insert(w.to_string(), serde_json::json!(w == word));
                            }
                            serde_json::Value::Object(m)
                        }
                        ("ir-component", "buffer") => {
                            serde_json::json!(schema::flag_value(word).unwrap())
                        }
                        _ => serde_json::json!(word),
                    };
                    if got != expected {
                        problems.push(format!(
                            "{key}=\"{word}\" compiles to {got}, not {expected}"
                        ));
                    }
                    // And a runtime loads it.
                    let run = run(vo);
                    if !run.faults.is_empty() {
                        problems.push(format!("{key}=\"{word}\": {:?}", run.faults));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Words near the table's but not in it: other cases, and spellings the runtime used to
/// take (`CENTRE`, `margins`, `projecting`).
fn outsiders(words: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = words
        .iter()
        .flat_map(|w| {
            [
                w.to_ascii_uppercase(),
                w.to_ascii_lowercase(),
                format!("{w}s"),
            ]
        })
        .chain(["CENTRE", "margins", "projecting", "maybe"].map(String::from))
        .filter(|w| !words.contains(&w.as_str()))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Code calling `e`'s procedure as the compiler calls it for its sample markup, with
/// attribute `attr`'s argument replaced by the string `word`: how VO code reaches the
/// runtime with a word computed at run time. The sample markup stands in dead code beside
/// it, so that a figure's file is embedded.
fn direct_call(e: &ElementSpec, attr: &str, word: &str) -> String {
    thread_local! {
        static ARGUMENTS: std::cell::RefCell<BTreeMap<&'static str, BTreeMap<String, String>>> =
            Default::default();
    }
    let sample = primitive_markup(e, true, &[]);
    let args = ARGUMENTS.with(|cache| {
        cache
            .borrow_mut()
            .entry(e.name)
            .or_insert_with(|| {
                let vo = accepted(&spec(&sample, &[]));
                arguments_by_attribute(&vo.program.text, e)
            })
            .clone()
    });
    let call = e.call.unwrap();
    let value = |name: &str| -> String {
        if name == attr {
            format!("\"{word}\"")
        } else {
            args[name].clone()
        }
    };
    let mut out = format!("({}", call.procedure.name);
    for arg in call.args {
        out.push(' ');
        match arg {
            Arg::Attr(name) => out.push_str(&value(name)),
            Arg::Pitch => out.push_str(&args["pitch"]),
            Arg::Style => {
                let style: Vec<String> = schema::STYLE.params.iter().map(|p| value(p)).collect();
                out.push_str(&format!("({} {})", schema::STYLE.name, style.join(" ")));
            }
        }
    }
    format!("(if #f {sample} #f) {}", xml_escape(&(out + ")")))
}

/// A word outside an attribute's words is refused by `voml check` where it is written, and
/// by the runtime when code computes it (or, for words of the structure, by the compiled
/// visual object's reader).
#[test]
fn words_outside_the_table_are_refused_by_both() {
    let mut problems = Vec::new();
    for (e, a, words) in enumerated() {
        for bad in outsiders(words) {
            let text = match effect(e.name, a.name) {
                Effect::Structure => spec("", &[(&format!("{}.{}", e.name, a.name), &bad)]),
                _ => spec(&primitive_markup(e, false, &[(a.name, &bad)]), &[]),
            };
            let (diags, _, rendered) = check(&text);
            if !diags.iter().any(|d| d.code == Code::BadValue) {
                problems.push(format!(
                    "voml check takes <{}> {}=\"{bad}\":\n{rendered}",
                    e.name, a.name
                ));
            }
            match effect(e.name, a.name) {
                Effect::Structure => {
                    let quoted = serde_json::json!(bad);
                    let read = match (e.name, a.name) {
                        ("data-field", "type") => {
                            serde_json::from_value::<voml_ir::FieldType>(quoted).is_ok()
                        }
                        ("variable", "type") => {
                            serde_json::from_value::<voml_ir::VarType>(quoted).is_ok()
                        }
                        ("visual-object", "mode") => serde_json::from_value::<voml_ir::RenderMode>(
                            serde_json::json!({"kind": bad, "tick": 1.0}),
                        )
                        .is_ok(),
                        // Order, refresh and buffer are compiled into order and booleans.
                        _ => false,
                    };
                    if read {
                        problems.push(format!("a .vo with {}.{} = {bad} is read", e.name, a.name));
                    }
                }
                Effect::Drawn(_) | Effect::Mute => {}
            }
        }
        // The runtime, given the words by code: one IR component per call, so that each
        // faults (and is disabled) on its own. Every outsider faults, naming the attribute
        // and the word; every word of the table runs cleanly.
        if !matches!(effect(e.name, a.name), Effect::Structure) {
            let bad = outsiders(words);
            let tried: Vec<&str> = bad
                .iter()
                .map(String::as_str)
                .chain(words.iter().copied())
                .collect();
            let codes: Vec<String> = tried.iter().map(|w| direct_call(e, a.name, w)).collect();
            let run = run(accepted(&components_spec(&codes)));
            for (i, w) in tried.iter().enumerate() {
                let component = format!("IR component `p{i}`");
                let faults: Vec<&String> = run
                    .faults
                    .iter()
                    .filter(|f| f.contains(&component))
                    .collect();
                let refused = faults
                    .iter()
                    .any(|f| f.contains(a.name) && f.contains(&format!("\"{w}\"")));
                let is_word = words.contains(w);
                if refused == is_word || (is_word && !faults.is_empty()) {
                    problems.push(format!(
                        "<{}> {}=\"{w}\" computed at run time: {faults:?}",
                        e.name, a.name
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

// ---------------------------------------------------------------------------------------
// Voices.

/// The synthesiser's voices are the vocabulary's, by name, both ways; a literal voice
/// `voml check` takes plays, and one it refuses (E0045) the runtime refuses too.
#[test]
fn voices_mean_the_same_to_the_compiler_and_the_synthesiser() {
    let synth: Vec<&str> = voml_sound::Voice::ALL.iter().map(|v| v.name()).collect();
    assert_eq!(synth, vocabulary::VOICES);
    let tone = schema::element("tone").unwrap();
    let mut problems = Vec::new();
    let mut written: Vec<String> = vocabulary::voice_names()
        .flat_map(|v| [v.to_string(), v.to_ascii_uppercase()])
        .collect();
    written.extend(["vibez", "strin", "voice", "sin"].map(String::from));
    for name in written {
        let compiler = {
            let (diags, _, _) = check(&spec(
                &primitive_markup(tone, false, &[("voice", &name)]),
                &[],
            ));
            let refused = diags.iter().any(|d| d.code == Code::UnknownVoice);
            assert_eq!(refused, diags.iter().any(|d| d.is_error()), "{name}");
            !refused
        };
        let synthesiser = name.parse::<voml_sound::Voice>().is_ok();
        let played = {
            let run = run(accepted(&spec(&direct_call(tone, "voice", &name), &[])));
            run.faults.is_empty()
                && run
                    .sounds
                    .iter()
                    .any(|s| matches!(s, SoundCommand::Tone { voice, .. } if name.parse::<voml_sound::Voice>().ok() == Some(*voice)))
        };
        if compiler != synthesiser || compiler != played {
            problems.push(format!(
                "`{name}`: voml check {compiler}, synthesiser {synthesiser}, runtime {played}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let explained = Code::UnknownVoice.explanation();
    for v in vocabulary::voice_names() {
        assert!(
            explained.contains(&format!("`{v}`")),
            "E0045 does not name {v}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The prelude and the limits.

/// The prelude's `draw-…` and `play-tone` procedures take options named as the primitives'
/// attributes, with the defaults the compiler fills in for those attributes.
#[test]
fn the_preludes_options_are_the_primitives_attributes_with_their_defaults() {
    let prelude = voml_runtime::prelude::SCHEME;
    let mut problems = Vec::new();
    let mut style_options = Vec::new();
    for block in prelude.split("(define (").skip(1) {
        let name = block.split([' ', ')']).next().unwrap();
        let primitive = match name {
            "voml-style-of" => "line",
            "play-tone" => "tone",
            n => match n.strip_prefix("draw-") {
                Some(p) => p,
                None => continue,
            },
        };
        let e = schema::element(primitive).unwrap_or_else(|| panic!("{name}: no <{primitive}>"));
        // What the compiler passes for each attribute left out.
        let vo = accepted(&spec(&primitive_markup(e, false, &[]), &[]));
        let defaults = arguments_by_attribute(&vo.program.text, e);
        for (key, default) in options(block) {
            if name == "voml-style-of" {
                style_options.push(key);
            }
            match defaults.get(key) {
                Some(d) if *d == default => {}
                Some(d) => problems.push(format!(
                    "{name} '{key} defaults to {default}, <{primitive}> to {d}"
                )),
                None => problems.push(format!(
                    "{name} takes '{key}, which <{primitive}> does not have"
                )),
            }
        }
    }
    style_options.sort();
    let mut style = schema::STYLE.params.to_vec();
    style.sort();
    assert_eq!(
        style_options, style,
        "voml-style-of passes every style attribute"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `(voml-option opts 'KEY DEFAULT)` in a prelude definition, where DEFAULT is one datum.
fn options(block: &str) -> Vec<(&str, String)> {
    let mut out = Vec::new();
    for (i, _) in block.match_indices("(voml-option opts '") {
        let items = list_items(&block[i..]);
        let key = items[1].trim_start_matches('\'');
        if !items[2].starts_with('(') {
            out.push((key, items[2].to_string()));
        }
    }
    out
}

/// The limits the runtime enforces at run time are the vocabulary's: a `<resize>` beyond
/// the window limit and a channel beyond the last are faults, the last ones are not.
#[test]
fn run_time_limits_are_the_vocabularys() {
    let resize = schema::element("resize").unwrap();
    let channel = schema::element("channel").unwrap();
    let max = limits::MAX_WINDOW;
    let last = limits::SOUND_CHANNELS - 1;
    for (code, ok) in [
        (
            primitive_markup(resize, true, &[("size", &format!("{max} 1"))]),
            true,
        ),
        (
            primitive_markup(resize, true, &[("size", &format!("{} 1", max + 1))]),
            false,
        ),
        (
            primitive_markup(channel, false, &[("channel", &last.to_string())]),
            true,
        ),
        (
            primitive_markup(channel, false, &[("channel", &(last + 1).to_string())]),
            false,
        ),
    ] {
        let run = run(accepted(&spec(&code, &[])));
        assert_eq!(run.faults.is_empty(), ok, "{code}: {:?}", run.faults);
    }
}
