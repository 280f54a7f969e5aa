//! Compiled visual objects (`.vo` files) are not trusted: thousands of mutated ones — flipped
//! bytes, numbers changed to extremes, fields removed, files cut short — are each refused
//! with a clean error or load and run without a panic. The validator is checked directly on
//! every case that still parses; a sample of those it accepts is loaded into the runtime and
//! fed records.

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use support::{quiet_steel, Rng};

const EXTREMES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "99",
    "4294967295",
    "18446744073709551615",
    "-9223372036854775808",
    "1e309",
    "-1e309",
    "0.0",
    "1e-300",
    "65535",
    "16385",
    "3",
];

fn mutate(rng: &mut Rng, json: &str) -> String {
    let mut text = json.to_string();
    for _ in 0..=rng.below(3) {
        match rng.below(5) {
            // A number somewhere becomes an extreme one.
            0 | 1 => {
                let numbers: Vec<(usize, usize)> = {
                    let b = text.as_bytes();
                    let mut spans = Vec::new();
                    let mut i = 0;
                    while i < b.len() {
                        if (b[i].is_ascii_digit() || b[i] == b'-')
                            && i > 0
                            && matches!(b[i - 1], b' ' | b':' | b'[' | b',' | b'\n')
                        {
                            let start = i;
                            i += 1;
                            while i < b.len() && (b[i].is_ascii_digit() || b"eE.+-".contains(&b[i]))
                            {
                                i += 1;
                            }
                            spans.push((start, i));
                        } else {
                            i += 1;
                        }
                    }
                    spans
                };
                if let Some(&(s, e)) = numbers.get(rng.below(numbers.len())) {
                    text.replace_range(s..e, EXTREMES[rng.below(EXTREMES.len())]);
                }
            }
            // A `"key": value` line goes.
            2 => {
                let lines: Vec<&str> = text.lines().collect();
                let drop = rng.below(lines.len());
                text = lines
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != drop)
                    .map(|(_, l)| *l)
                    .collect::<Vec<_>>()
                    .join("\n");
            }
            // The file is cut short.
            3 => {
                let mut at = rng.below(text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                text.truncate(at);
            }
            // A byte is flipped.
            _ => {
                let mut bytes = text.into_bytes();
                let at = rng.below(bytes.len());
                bytes[at] ^= 1 << rng.below(7);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
        }
    }
    text
}

/// Condition parts whose conditions the compiler decides natively.
const CONDITIONS: &str = r#"<voml><body><visual-object name="conditions">
  <info-structures><variable name="n" type="int"/></info-structures>
  <event-processing>
    <ep-component name="a" infos="n">
      <before condition="(and (= (car (current-event)) -3) (not (gt (list-ref (current-event) 3) 2.5)))">(set! $0 (+ $0 1))</before>
      <after condition="(let ((e (current-event))) (or (equal? (caddr e) &quot;x&quot;) (eqv? (cadr e) 7) #f))">(set! $0 (- $0 1))</after>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;

#[test]
fn mutated_compiled_visual_objects_never_make_voml_panic() {
    quiet_steel();
    let root = support::root();
    let mut seeds: Vec<(String, String)> = ["bandwidth", "lineplot", "entities"]
        .iter()
        .map(|name| {
            let json = std::fs::read_to_string(
                root.join(format!("tests/compile/out/examples-paper-{name}.ir.json")),
            )
            .unwrap();
            (name.to_string(), json)
        })
        .collect();
    // Condition parts with native tests of every kind, whose mutations the runtime meets too.
    seeds.push((
        "conditions".to_string(),
        support::compile_text("conditions.voml", CONDITIONS).to_json(),
    ));
    let trace = std::fs::read(root.join("examples/paper/bandwidth.trf")).unwrap();
    let trace: Vec<u8> = trace
        .split(|&b| b == b'\n')
        .take(200)
        .flat_map(|l| l.iter().copied().chain([b'\n']))
        .collect();
    let mut rng = Rng(0x0dd_ba11_5eed);
    let started = Instant::now();
    let (mut cases, mut parsed, mut refused, mut loaded) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    while cases < 6_000 && started.elapsed() < Duration::from_secs(40) {
        let (name, json) = &seeds[rng.below(seeds.len())];
        let text = mutate(&mut rng, json);
        cases += 1;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let Ok(vo) = voml_ir::CompiledVo::from_json(&text) else {
                return (false, false);
            };
            let valid = vo.validate().is_ok();
            // Locating any span, sound or not, must not panic either.
            let _ = vo.locate(vo.span);
            (true, valid)
        }));
        let (did_parse, valid) = match outcome {
            Ok(r) => r,
            Err(_) => {
                problems.push(format!("{name}: from_json or validate panicked"));
                continue;
            }
        };
        parsed += usize::from(did_parse);
        if did_parse && !valid {
            refused += 1;
        }
        // A sample of what parses goes through the runtime as `voml run` would take it.
        if did_parse && (loaded < 40) && (!valid || rng.below(4) == 0) {
            loaded += 1;
            let text = text.clone();
            let trace = trace.clone();
            let result = catch_unwind(AssertUnwindSafe(move || {
                let vo = voml_ir::CompiledVo::from_json(&text).unwrap();
                let was_valid = vo.validate().is_ok();
                match voml_runtime::Runtime::headless(vo, Default::default()) {
                    Ok(mut rt) => {
                        assert!(was_valid, "the runtime loaded an IR the validator refuses");
                        support::replay_bytes(&mut rt, &trace, "bandwidth.trf", false);
                        let _ = rt.pngs();
                    }
                    Err(e) => assert!(!e.message.is_empty()),
                }
            }));
            if let Err(p) = result {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                problems.push(format!("{name}: the runtime panicked: {why}"));
            }
        }
    }
    println!("{cases} cases: {parsed} parsed, {refused} refused by the validator, {loaded} loaded");
    assert!(cases >= 5_000, "only {cases} cases in the time allowed");
    assert!(
        refused > 100,
        "too few cases reached the validator: {refused}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The cases that made `voml run` panic or accept nonsense: an input referring to an event
/// that does not exist, a window of a billion pixels, a field index beyond its event.
#[test]
fn unsound_compiled_visual_objects_are_refused_with_the_reason() {
    quiet_steel();
    let json = std::fs::read_to_string(
        support::root().join("tests/compile/out/examples-paper-bandwidth.ir.json"),
    )
    .unwrap();
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit, &str); 7] = [
        (
            "event index",
            |v| v["ep_components"][0]["inputs"][0]["event"] = 99.into(),
            "refers to event 99",
        ),
        (
            "window",
            |v| v["views"][0]["window"][0] = 1_000_000_000u64.into(),
            "views[0].window",
        ),
        (
            "field index",
            |v| v["ep_components"][0]["inputs"][0]["fields"][0] = 42.into(),
            "refers to field 42",
        ),
        (
            "span",
            |v| v["ep_components"][0]["span"]["end"] = 4_000_000u64.into(),
            "outside the sources",
        ),
        (
            "what a pure enable reads",
            |v| {
                let irs = v["ir_components"].as_array_mut().unwrap();
                let c = irs
                    .iter_mut()
                    .find(|c| c["enable_pure"].is_object())
                    .unwrap();
                c["enable_pure"]["controls"] = serde_json::json!([77]);
            },
            "control structure 77",
        ),
        (
            "a native part's structure",
            |v| {
                v["ep_components"][0]["inputs"][0]["native"] = serde_json::json!({"statements": [
                    {"kind": "set", "global": "info/elsewhere", "value": {"kind": "int", "value": 1}}
                ]})
            },
            "`info/elsewhere` is not one of the component's structures",
        ),
        (
            "a native part's argument",
            |v| {
                let global = v["infos"]
                    [v["ep_components"][0]["infos"][0].as_u64().unwrap() as usize]["global"]
                    .clone();
                v["ep_components"][0]["inputs"][0]["native"] = serde_json::json!({"statements": [
                    {"kind": "set", "global": global, "value": {"kind": "argument", "index": 9}}
                ]})
            },
            "refers to argument 9",
        ),
    ];
    for (what, edit, expected) in edits {
        let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
        edit(&mut value);
        let vo = voml_ir::CompiledVo::from_json(&value.to_string()).unwrap();
        let errors = vo.validate().expect_err(what);
        assert!(
            errors.iter().any(|e| e.message.contains(expected)),
            "{what}: {errors:?}"
        );
        let e = voml_runtime::Runtime::headless(vo, Default::default())
            .err()
            .unwrap_or_else(|| panic!("{what}: loaded"));
        assert!(e.message.contains("not sound"), "{what}: {e}");
    }
}
