//! Native tests of condition parts decide what the Scheme condition would. A property test
//! compiles random conditions (of the shapes the compiler recognises, and others it must
//! leave to Scheme) and holds every native decision to the value the sandboxed steel engine
//! computes for the same condition text on random records (integers, reals, strings, records
//! too short for the fields read); whole runs with and without the native tests count the
//! same, report the same faults at the same places, and `.vo` files written before native
//! tests existed still load.
//!
//! `VOML_FUZZ_SEED` fixes the property test's seed to reproduce a run.

mod support;

use std::fmt::Write as _;

use support::{compile_text, start_runtime, Rng};
use voml_ir::{CompiledVo, Decision};
use voml_runtime::host::{self, Host};
use voml_trace::{Record, Value};

/// Writes random conditions; `native` says whether the one written must be recognised.
struct Conditions {
    rng: Rng,
}

const OPS: &[&str] = &[
    "=", "<", ">", "<=", ">=", "eqv?", "eq?", "equal?", "gt", "lt", "ge", "le",
];
// Literals and record values come from small pools, so that they meet often: integers and
// reals that are equal, and the integer just past 2^53 beside the real it rounds to.
const INTS: &[&str] = &["-3", "0", "1", "2", "#x10", "9007199254740993"];
const REALS: &[&str] = &["1.0", "2.", "-0.0", "0.5", "1e3", "9007199254740992.0"];
const STRINGS: &[&str] = &["\"a\"", "\"b\"", "\"\"", "\"1\""];

impl Conditions {
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.rng.below(from.len())]
    }

    /// An element of the event, `ev` being how the event is written here.
    fn field(&mut self, ev: &str) -> String {
        match self.rng.below(6) {
            0 => format!("(car {ev})"),
            1 => format!("(cadr {ev})"),
            2 => format!("(caddr {ev})"),
            3 => format!("(cadddr {ev})"),
            _ => format!("(list-ref {ev} {})", self.rng.below(10)),
        }
    }

    fn operand(&mut self, ev: &str, numeric_op: bool) -> String {
        match self.rng.below(8) {
            0..=3 => self.field(ev),
            4 | 5 => self.pick(INTS).to_string(),
            6 => self.pick(REALS).to_string(),
            // A string literal compared by a numeric operator is left to Scheme.
            _ if numeric_op => self.pick(INTS).to_string(),
            _ => self.pick(STRINGS).to_string(),
        }
    }

    /// A condition of a recognised shape.
    fn native(&mut self, depth: usize, ev: &str) -> String {
        let leaf = depth == 0 || self.rng.below(3) == 0;
        if leaf {
            if self.rng.below(12) == 0 {
                return self.pick(&["#t", "#f"]).to_string();
            }
            let op = self.pick(OPS);
            let numeric = !op.ends_with('?');
            // One operand at least is an element of the event.
            let (mut a, mut b) = (self.field(ev), self.operand(ev, numeric));
            if self.rng.below(2) == 0 {
                std::mem::swap(&mut a, &mut b);
            }
            return format!("({op} {a} {b})");
        }
        match self.rng.below(5) {
            0 | 1 => {
                let word = self.pick(&["and", "or"]);
                let n = self.rng.below(4);
                let parts: Vec<String> = (0..n).map(|_| self.native(depth - 1, ev)).collect();
                format!("({word} {})", parts.join(" "))
            }
            2 => format!("(not {})", self.native(depth - 1, ev)),
            3 if ev == "(current-event)" => {
                let inner = self.native(depth - 1, "e");
                if self.rng.below(2) == 0 {
                    format!("(let ((e (current-event))) {inner})")
                } else {
                    format!("(let ([e (current-event)]) {inner})")
                }
            }
            _ => self.native(depth - 1, ev),
        }
    }

    /// A condition the compiler must leave to Scheme (somewhere inside it, a form it does not
    /// recognise).
    fn other(&mut self) -> String {
        let odd = match self.rng.below(8) {
            0 => "(pair? (current-event))".to_string(),
            1 => "(= (car (current-event)) 1/2)".to_string(),
            2 => "(string=? (list-ref (current-event) 4) \"a\")".to_string(),
            3 => "(memv (car (current-event)) '(-3 -4))".to_string(),
            4 => "(= 1 1)".to_string(),
            5 => "(if #t (= (car (current-event)) -3) #f)".to_string(),
            6 => "(= (cdr (current-event)) -3)".to_string(),
            _ => "(let ((car (current-event))) (= (car car) -3))".to_string(),
        };
        match self.rng.below(3) {
            0 => odd,
            1 => format!("(and {} {odd})", self.native(1, "(current-event)")),
            _ => format!("(or {odd} {})", self.native(1, "(current-event)")),
        }
    }
}

fn random_record(rng: &mut Rng) -> Record {
    let value = |rng: &mut Rng| match rng.below(10) {
        0..=3 => Value::Int([-3, 0, 1, 2, 16, 1000, 9007199254740993][rng.below(7)]),
        4..=6 => Value::Real(
            [
                1.0,
                2.0,
                -0.0,
                0.5,
                1000.0,
                9007199254740992.0,
                f64::NAN,
                f64::INFINITY,
            ][rng.below(8)],
        ),
        _ => Value::Str(["a", "b", "", "1"][rng.below(4)].to_string()),
    };
    let n = rng.below(9);
    Record {
        line: 1,
        rtype: [-3, -4, -1000, 1][rng.below(4)],
        etype: [1, 2, -901, 0, 16, 9007199254740993][rng.below(6)],
        fields: (0..n).map(|_| value(rng)).collect(),
    }
}

/// The condition as an XML attribute value.
fn attribute(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('"', "&quot;")
}

/// A visual object with one EP component per condition, each with one `before` part.
fn spec_with_conditions(conditions: &[String]) -> String {
    let mut body = String::new();
    for (k, c) in conditions.iter().enumerate() {
        let _ = writeln!(
            body,
            r#"<ep-component name="c{k}" infos="n"><before condition="{}">(set! $0 (+ $0 1))</before></ep-component>"#,
            attribute(c)
        );
    }
    format!(
        r#"<voml><body><visual-object name="conditions">
           <info-structures><variable name="n" type="int"/></info-structures>
           <event-processing>{body}</event-processing>
           </visual-object></body></voml>"#
    )
}

#[test]
fn native_decisions_are_the_scheme_conditions_values() {
    support::quiet_steel();
    let seed = support::fuzz_seed(0x5eed_c0de);
    let mut gen = Conditions { rng: Rng(seed | 1) };
    let mut records_rng = Rng(seed.rotate_left(17) | 1);
    let (batches, per_batch, records) = (10, 60, 150);
    let mut counts = [0usize; 5];
    let mut problems = Vec::new();
    for _ in 0..batches {
        // Three in four conditions of the recognised shapes.
        let conditions: Vec<(String, bool)> = (0..per_batch)
            .map(|_| {
                if gen.rng.below(4) == 0 {
                    (gen.other(), false)
                } else {
                    let depth = gen.rng.below(4);
                    (gen.native(depth, "(current-event)"), true)
                }
            })
            .collect();
        let texts: Vec<String> = conditions.iter().map(|c| c.0.clone()).collect();
        let vo = compile_text("conditions.voml", &spec_with_conditions(&texts));
        // The engine the runtime runs VO code in, with the same prelude, each condition
        // tested as the part's procedure tests it.
        let mut sandbox = voml_runtime::vo_sandbox().expect("the sandbox loads");
        let mut procedures = Vec::new();
        for (k, text) in texts.iter().enumerate() {
            let name = format!("voml-test/condition-{k}");
            sandbox
                .engine
                .run(format!("(define ({name}) (if {text} #t #f))"))
                .unwrap_or_else(|e| panic!("{text} does not compile: {e}"));
            procedures.push(sandbox.engine.extract_value(&name).unwrap());
        }
        let host = std::rc::Rc::new(std::cell::RefCell::new(Host::new(voml_llvo::Llvo::new(
            Box::new(voml_llvo::NullBackend::new()) as Box<dyn voml_llvo::Backend>,
        ))));
        let _entered = host::enter(&host);
        for (k, (text, must_be_native)) in conditions.iter().enumerate() {
            let native = &vo.ep_components[k].before[0].native;
            if native.is_some() != *must_be_native {
                problems.push(format!(
                    "{text}: recognised {}, expected {must_be_native}",
                    native.is_some()
                ));
            }
        }
        for _ in 0..records {
            let record = random_record(&mut records_rng);
            host.borrow_mut().set_event(&record);
            for (k, (text, _)) in conditions.iter().enumerate() {
                let Some(native) = &vo.ep_components[k].before[0].native else {
                    continue;
                };
                let decision = host.borrow().decide(&native.test);
                let scheme = sandbox
                    .engine
                    .call_function_with_args(procedures[k].clone(), Vec::new())
                    .map(|v| v.to_string() != "#false");
                let agrees = match (decision, &scheme) {
                    (Decision::Holds, Ok(true)) => {
                        counts[0] += 1;
                        true
                    }
                    (Decision::Fails, Ok(false)) => {
                        counts[1] += 1;
                        true
                    }
                    (Decision::Unsure, Err(_)) => {
                        counts[2] += 1;
                        true
                    }
                    // Allowed (Scheme decides), but rare: only `eq?` of two strings.
                    (Decision::Unsure, Ok(_)) => {
                        counts[3] += 1;
                        true
                    }
                    _ => false,
                };
                counts[4] += 1;
                if !agrees {
                    problems.push(format!(
                        "{text} on `{record}`: native {decision:?}, steel {:?}",
                        scheme.map_err(|e| e.to_string())
                    ));
                }
            }
        }
    }
    problems.truncate(20);
    assert!(problems.is_empty(), "seed {seed}:\n{}", problems.join("\n"));
    // The records exercise every outcome, and Scheme is needed seldom beyond its errors.
    let [holds, fails, errors, unsure, total] = counts;
    eprintln!("holds {holds}, fails {fails}, Scheme errors {errors}, unsure {unsure} of {total}");
    assert!(
        holds > total / 10 && fails > total / 10 && errors > total / 20,
        "{counts:?}"
    );
    assert!(unsure < total / 20, "{counts:?}");
}

/// The bench's condition part: entry records counted per processor.
const COUNT_ENTRIES: &str = r#"<voml><body><visual-object name="count-condition">
  <info-structures><variable name="counts" type="vector" init="(0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0)"/></info-structures>
  <event-processing>
    <ep-component name="count" infos="counts">
      <before condition="(= (car (current-event)) -3)">(let ((p (list-ref (current-event) 3))) (vector-set! $0 p (+ 1 (vector-ref $0 p))))</before>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;

/// The same visual object without native tests, as the compiler wrote it before them.
fn without_native(vo: &CompiledVo) -> CompiledVo {
    let mut vo = vo.clone();
    for c in &mut vo.ep_components {
        for p in c.before.iter_mut().chain(c.after.iter_mut()) {
            p.native = None;
        }
    }
    vo
}

#[test]
fn a_condition_part_counts_entries_as_before() {
    let vo = compile_text("count.voml", COUNT_ENTRIES);
    assert!(vo.ep_components[0].before[0].native.is_some());
    let trace = std::fs::read("examples/mpicl/ring.trf").unwrap();
    // What the trace holds: entry records per processor.
    let mut expected = [0u64; 16];
    for line in String::from_utf8_lossy(&trace).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.first() == Some(&"-3") {
            expected[f[3].parse::<usize>().unwrap()] += 1;
        }
    }
    let expected = format!("#({})", expected.map(|n| n.to_string()).to_vec().join(" "));
    for vo in [vo.clone(), without_native(&vo)] {
        let mut rt = start_runtime(vo, false, 1000);
        support::replay_bytes(&mut rt, &trace, "ring.trf", false);
        assert_eq!(rt.variable("counts").unwrap(), expected);
        assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    }
}

/// Records whose types make every condition fail skip the runtime, as records nothing
/// declares do, when the types alone decide the conditions and no IR component renders after
/// each record: the count is the same, and only the entry records reached the runtime (one
/// render round each, as the runtime's start and end events). A condition reading the timestamp too, or an IR component, keeps
/// every record going through.
#[test]
fn records_every_condition_refuses_by_their_types_skip_the_runtime() {
    let trace = std::fs::read("examples/mpicl/ring.trf").unwrap();
    let lines = String::from_utf8_lossy(&trace);
    let records = lines.lines().filter(|l| !l.trim().is_empty()).count() as u64;
    let entries = lines.lines().filter(|l| l.starts_with("-3 ")).count() as u64;
    assert!(0 < entries && entries < records);
    let run = |text: &str| {
        let mut rt = start_runtime(compile_text("count.voml", text), false, 1000);
        support::replay_bytes(&mut rt, &trace, "ring.trf", false);
        assert!(rt.faults().is_empty(), "{:?}", rt.faults());
        (rt.variable("counts").unwrap(), rt.stats().renders)
    };
    // Every record, and the runtime's own start and end events, bring a round when they
    // reach the runtime.
    let by_time = COUNT_ENTRIES.replace(
        "(= (car (current-event)) -3)",
        "(and (= (car (current-event)) -3) (>= (caddr (current-event)) 0))",
    );
    let (counts, every) = run(&by_time);
    assert_eq!(every, records + 2);
    assert_eq!(run(COUNT_ENTRIES), (counts.clone(), entries + 2));
    let drawing = COUNT_ENTRIES.replace(
        "</event-processing>",
        r#"</event-processing>
  <view-initializations><view name="v" world="0 1 0 1"/></view-initializations>
  <info-rendition><ir-component name="r" views="v"><line view="^0" from="0 0" to="1 1"/></ir-component></info-rendition>"#,
    );
    assert_eq!(run(&drawing), (counts, records + 2));
}

#[test]
fn faults_of_condition_parts_stay_where_they_were() {
    // A condition that fails on short records (in Scheme: the native test is unsure), one
    // whose part fails on one record, and one that reads a string as a number.
    let text = r#"<voml><body><visual-object name="faults">
      <info-structures><variable name="n" type="int"/><variable name="log" type="list"/></info-structures>
      <event-processing>
        <ep-component name="short" infos="n">
          <before condition="(and (= (car (current-event)) -3) (= (list-ref (current-event) 6) 1))">(set! $0 (+ $0 1))</before>
        </ep-component>
        <ep-component name="body" infos="log">
          <after condition="(and (= (car (current-event)) -3) (gt (caddr (current-event)) 0.5))">
            (set! $0 (cons (vector-ref (vector 1 2) (cadddr (current-event))) $0))
          </after>
        </ep-component>
        <ep-component name="strings" infos="n">
          <before condition="(and (eqv? (car (current-event)) -3) (or (= (cadr (current-event)) 9) (&lt; (list-ref (current-event) 4) 1)))">(set! $0 (+ $0 1))</before>
        </ep-component>
      </event-processing>
    </visual-object></body></voml>"#;
    let vo = compile_text("faults.voml", text);
    for c in &vo.ep_components {
        assert!(c.before.iter().chain(&c.after).all(|p| p.native.is_some()));
    }
    let trace = "-3 1 0.1 0 0 1 1\n-4 1 0.2 1 0 1\n-3 9 0.6 1 \"x\" 1 1\n-3 2 0.7 3 0 1 1\n-3 8 0.8 0 \"y\"\n";
    let runs: Vec<(Vec<String>, Option<String>, Option<String>)> =
        [vo.clone(), without_native(&vo)]
            .into_iter()
            .map(|vo| {
                let mut rt = start_runtime(vo, false, 1000);
                support::replay_bytes(&mut rt, trace.as_bytes(), "t.trf", false);
                (
                    support::fault_lines(&rt),
                    rt.variable("n"),
                    rt.variable("log"),
                )
            })
            .collect();
    assert_eq!(runs[0], runs[1]);
    let (faults, n, log) = &runs[0];
    // The part's code on record 4; the conditions themselves, where Scheme raised the
    // error, on record 5.
    let places: Vec<(&str, &str)> = faults
        .iter()
        .map(|f| {
            let at = f.split("faults.voml:").nth(1).unwrap_or("");
            (
                &f[..f.find(')').unwrap_or(0)],
                at.split(':').next().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            ("Scheme Some(\"EP component `body`\"", "9"),
            ("Scheme Some(\"EP component `short`\"", "5"),
            ("Scheme Some(\"EP component `strings`\"", "13"),
        ],
        "{faults:#?}"
    );
    assert!(faults[1].contains("record: 5") && faults[2].contains("record: 5"));
    assert_eq!((n.as_deref(), log.as_deref()), (Some("6"), Some("(2)")));
}

#[test]
fn a_program_that_rebinds_a_name_keeps_its_conditions_in_scheme() {
    let spec = |utility: &str| {
        format!(
            r#"<voml><body><visual-object name="rebind">
              <info-structures><variable name="n" type="int"/></info-structures>
              <utility-code>{utility}</utility-code>
              <event-processing>
                <ep-component name="a" infos="n">
                  <before condition="(gt (cadr (current-event)) 1)">(set! $0 (+ $0 1))</before>
                  <after condition="(= (car (current-event)) -3)">(set! $0 (+ $0 10))</after>
                </ep-component>
              </event-processing>
            </visual-object></body></voml>"#
        )
    };
    let native = |vo: &CompiledVo| {
        let c = &vo.ep_components[0];
        (c.before[0].native.is_some(), c.after[0].native.is_some())
    };
    assert_eq!(native(&compile_text("r.voml", &spec(""))), (true, true));
    let vo = compile_text("r.voml", &spec("(define (gt a b) (&lt; a b))"));
    assert_eq!(native(&vo), (false, true));
    // The redefined `gt` is what counts.
    let mut rt = start_runtime(vo, false, 1000);
    support::replay_bytes(&mut rt, b"-3 0 0.1 0\n-3 5 0.2 0\n", "t.trf", false);
    assert_eq!(rt.variable("n").unwrap(), "21");
    let vo = compile_text(
        "r.voml",
        &spec("(define (f) (set! current-event (lambda () (list 1 2))))"),
    );
    assert_eq!(native(&vo), (false, false));
    // A part whose own code defines a name its condition uses keeps one procedure, where the
    // definition shares the condition's scope as it always did.
    let vo = compile_text(
        "r.voml",
        r#"<voml><body><visual-object name="own">
          <info-structures><variable name="n" type="any"/></info-structures>
          <event-processing><ep-component name="a" infos="n">
            <before condition="(= (car (current-event)) -3)">(define (car l) 7) (set! $0 (car 1))</before>
          </ep-component></event-processing>
        </visual-object></body></voml>"#,
    );
    assert!(vo.ep_components[0].before[0].native.is_none());
    assert!(!vo.program.text.contains("/body"));
}

#[test]
fn vo_files_without_native_tests_still_load() {
    let vo = compile_text("count.voml", COUNT_ENTRIES);
    let json = vo.to_json();
    assert!(json.contains("\"native\""));
    // As the compiler wrote condition parts before: no `native` field at all.
    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    for c in value["ep_components"].as_array_mut().unwrap() {
        for p in c["before"].as_array_mut().unwrap() {
            p.as_object_mut().unwrap().remove("native");
        }
    }
    let old = CompiledVo::from_json(&value.to_string()).expect("loads");
    assert_eq!(old, without_native(&vo));
    let mut rt = start_runtime(old, false, 1000);
    support::replay_bytes(
        &mut rt,
        b"-3 1 0.1 2\n-4 1 0.2 2\n-3 1 0.3 2\n",
        "t.trf",
        false,
    );
    assert_eq!(
        rt.variable("counts").unwrap(),
        "#(0 0 2 0 0 0 0 0 0 0 0 0 0 0 0 0)"
    );
}

#[test]
fn unsound_native_tests_are_refused() {
    support::quiet_steel();
    let json = compile_text("count.voml", COUNT_ENTRIES).to_json();
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit, &str); 3] = [
        (
            "position",
            |v| {
                v["ep_components"][0]["before"][0]["native"]["test"]["left"]["field"] =
                    2_000_000.into()
            },
            "reads position 2000000",
        ),
        (
            "body name",
            |v| v["ep_components"][0]["before"][0]["native"]["body"]["symbol"] = "a b".into(),
            "`a b` is not a procedure name",
        ),
        (
            "body missing",
            |v| {
                v["ep_components"][0]["before"][0]["native"]["body"]["symbol"] =
                    "voml/nowhere".into()
            },
            "does not define `voml/nowhere`",
        ),
    ];
    for (what, edit, expected) in edits {
        let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
        edit(&mut value);
        let vo = CompiledVo::from_json(&value.to_string()).unwrap();
        let e = voml_runtime::Runtime::headless(vo, Default::default())
            .err()
            .unwrap_or_else(|| panic!("{what}: loaded"));
        assert!(e.message.contains(expected), "{what}: {e}");
    }
}

/// The same visual object with no condition or `enable` marked pure: every one is called
/// for every event, as before they were kept.
fn without_pure(vo: &CompiledVo) -> CompiledVo {
    let mut vo = vo.clone();
    for c in &mut vo.ep_components {
        for p in c.before.iter_mut().chain(c.after.iter_mut()) {
            p.pure = None;
        }
    }
    for c in &mut vo.ir_components {
        c.enable_pure = None;
    }
    vo
}

/// The pictures, the state at the end, the faults, the sound commands, and the calls of VO
/// code counted by part, of a headless run of `vo` over `trace`.
fn outcome(
    vo: CompiledVo,
    trace: &std::path::Path,
) -> (Vec<Vec<u8>>, String, Vec<String>, String, u64) {
    support::quiet_steel();
    let config = voml_runtime::Config {
        strict: false,
        profile: true,
        budget: std::time::Duration::from_secs(20),
        ..Default::default()
    };
    let mut rt = voml_runtime::Runtime::headless(vo, config).expect("the example loads");
    let mut source = voml_driver::Source::file(trace, voml_trace::ReadOptions::default())
        .expect("the trace opens");
    let mut collect = support::Collect::default();
    voml_driver::run(
        &mut rt,
        &mut source,
        &voml_driver::Options::default(),
        &mut [],
        &mut collect,
    );
    let calls = rt
        .profile()
        .unwrap_or_default()
        .iter()
        .map(|r| r.calls)
        .sum();
    let pngs = rt
        .pngs()
        .into_iter()
        .map(|(name, png)| png.unwrap_or_else(|e| panic!("no picture of {name}: {e}")))
        .collect();
    let state = voml_runtime::state::of(&rt).to_string();
    let sounds = format!("{:?}", rt.take_sounds());
    (pngs, state, support::fault_lines(&rt), sounds, calls)
}

/// Conditions and `enable`s that compute from their component's structures alone are kept
/// while nothing that may assign those structures runs (`voml_ir::ConditionPart::pure`). The
/// examples that have them, run over a real trace with them kept and with every one called
/// for every event, draw the same pictures, end in the same state, report the same faults and
/// ask for the same sounds, with fewer calls of Scheme.
#[test]
fn pure_conditions_kept_while_nothing_changes_make_what_calling_them_makes() {
    let Some(trace) = support::shared_trace("mpicl-trace3-bcast10.trf") else {
        return;
    };
    let mut with_pure = 0;
    let mut calls = (0, 0);
    let mut problems = Vec::new();
    for dir in [
        "examples/auralization",
        "examples/library",
        "examples/mpicl",
    ] {
        for spec in support::files_with_ext(&support::root().join(dir), "voml") {
            let vo = support::compile_spec(&spec);
            let pure = vo
                .ep_components
                .iter()
                .flat_map(|c| c.before.iter().chain(&c.after))
                .any(|p| p.pure.is_some())
                || vo.ir_components.iter().any(|c| c.enable_pure.is_some());
            if !pure {
                continue;
            }
            with_pure += 1;
            let name = spec.file_name().unwrap().to_string_lossy().to_string();
            let called = outcome(without_pure(&vo), &trace);
            let kept = outcome(vo, &trace);
            if kept.0 != called.0 {
                problems.push(format!("{name}: the pictures differ"));
            }
            if kept.1 != called.1 {
                problems.push(format!("{name}: the state differs"));
            }
            if kept.2 != called.2 {
                problems.push(format!(
                    "{name}: the faults differ: {:?} / {:?}",
                    kept.2, called.2
                ));
            }
            if kept.3 != called.3 {
                problems.push(format!("{name}: the sounds differ"));
            }
            calls.0 += kept.4;
            calls.1 += called.4;
            if kept.4 > called.4 {
                problems.push(format!("{name}: more calls of VO code when kept"));
            }
        }
    }
    assert!(
        with_pure >= 2,
        "only {with_pure} examples have pure conditions"
    );
    // The idle/busy auralization alone tests its conditions some 120,000 times each.
    assert!(
        calls.0 + 100_000 < calls.1,
        "{} calls of VO code kept, {} called",
        calls.0,
        calls.1
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A condition both decided natively and pure (`#t`) runs its part's code as any other: what
/// the code writes is seen by a pure condition reading it.
#[test]
fn what_a_natively_decided_part_writes_wakes_a_pure_condition() {
    let vo = compile_text(
        "wake.voml",
        r##"<voml><body><visual-object name="wake">
  <event-declarations>
    <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures>
    <variable name="n" type="int" init="0"/>
    <variable name="hit" type="boolean" init="#f"/>
  </info-structures>
  <event-processing>
    <ep-component name="e" inputs="e.ts"><input name="^0">#t</input></ep-component>
    <ep-component name="count" infos="n"><after condition="#t">(set! $0 (+ $0 1))</after></ep-component>
    <ep-component name="watch" infos="n hit"><after condition="(> $0 5)">(set! $1 #t)</after></ep-component>
  </event-processing>
</visual-object></body></voml>"##,
    );
    let parts: Vec<_> = vo.ep_components.iter().flat_map(|c| &c.after).collect();
    assert!(
        parts[0].native.is_some() && parts[0].pure.is_some(),
        "{parts:?}"
    );
    assert!(parts[1].pure.is_some(), "{parts:?}");
    let mut rt = start_runtime(vo, true, 2000);
    let trace: String = (0..10).map(|i| format!("-3 1 {i}.0 0\n")).collect();
    support::replay_bytes(&mut rt, trace.as_bytes(), "wake.trf", true);
    // After each record, and after the start and end of the input.
    assert_eq!(rt.variable("n").as_deref(), Some("12"));
    assert_eq!(rt.variable("hit").as_deref(), Some("#true"));
}
