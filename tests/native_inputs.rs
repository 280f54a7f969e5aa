//! Native input parts as forms: an `<input>` part that is not plain updates of structures
//! (the paper's line plot keeps an association list of vectors with `id-get`, `id-put`,
//! `vector` and a procedure of its utility code) is evaluated by the runtime without Scheme,
//! exactly as the Scheme would evaluate it, or left to Scheme. Runs with and without the
//! forms end in the same structures, pixels and faults.

mod support;

use std::path::Path;

use support::{compile_spec, compile_text, lineplot_trace, start_runtime, Ended};
use voml_ir::{CompiledVo, Form, RenderOp};

/// The same visual object with every input part's forms left to Scheme.
fn without_forms(vo: &CompiledVo) -> CompiledVo {
    let mut vo = vo.clone();
    for input in vo.ep_components.iter_mut().flat_map(|c| &mut c.inputs) {
        input.forms = None;
    }
    vo
}

/// Runs `vo` over `trace` with its input parts' forms and without them: what each run ended
/// with, and how many parts each carried out natively.
fn both_ways(vo: &CompiledVo, trace: &[u8], names: &[&str]) -> [(Ended, u64); 2] {
    [vo.clone(), without_forms(vo)].map(|vo| {
        let (ended, stats) = support::run_to_end(vo, trace, names);
        (ended, stats.native)
    })
}

/// A visual object `v` whose component `keep` runs `part` for each record `-3 3000 F ...`:
/// the event `s` with these fields (name and type, in order), the structures `db` (a list)
/// and `last` (declared with the attributes `last`), and `utility` code.
fn keeper(fields: &[(&str, &str)], last: &str, utility: &str, part: &str) -> String {
    let declared: String = fields
        .iter()
        .map(|(name, ty)| format!(r#"<data-field name="{name}" type="{ty}"/>"#))
        .collect();
    let inputs: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
    format!(
        r#"<voml version="1.0"><body><visual-object name="v">
      <event-declarations>
        <data-event name="s" rtype="entry" etype="3000">{declared}</data-event>
      </event-declarations>
      <info-structures>
        <variable name="db" type="list"/>
        <variable name="last" {last}/>
      </info-structures>
      <utility-code>{utility}</utility-code>
      <event-processing>
        <ep-component name="keep" inputs="s.{}" infos="db last">
          <input name="^0">{part}</input>
        </ep-component>
      </event-processing>
    </visual-object></body></voml>"#,
        inputs.join(".")
    )
}

/// Whether `forms` call `op` anywhere.
fn calls(forms: &[Form], op: RenderOp) -> bool {
    forms.iter().any(|f| match f {
        Form::Call { op: o, args } => *o == op || calls(args, op),
        Form::Set { value, .. } => calls(std::slice::from_ref(value), op),
        Form::If {
            test,
            then,
            otherwise,
        } => {
            calls(std::slice::from_ref(test), op)
                || calls(std::slice::from_ref(then), op)
                || otherwise
                    .as_deref()
                    .is_some_and(|o| calls(std::slice::from_ref(o), op))
        }
        Form::Begin { forms } | Form::And { forms } | Form::Or { forms } => calls(forms, op),
        Form::Let { values, body, .. } => calls(values, op) || calls(body, op),
        Form::ForEachEntry { list, body, .. } => {
            calls(std::slice::from_ref(list), op) || calls(body, op)
        }
        _ => false,
    })
}

/// The line plot's input part becomes forms (its utility procedure inlined: the forms make
/// the vectors themselves), every event runs it natively, and the run ends as Scheme's does.
#[test]
fn the_line_plots_input_part_runs_natively_as_scheme_does() {
    let vo = compile_spec(Path::new("examples/paper/lineplot.voml"));
    let input = &vo.ep_components[0].inputs[0];
    assert!(input.native.is_none(), "not plain updates");
    let forms = input.forms.as_ref().expect("the input part is forms");
    for op in [RenderOp::IdGet, RenderOp::IdPut, RenderOp::Vector] {
        assert!(calls(&forms.forms, op), "{op:?} in {forms:?}");
    }
    let trace = lineplot_trace(1200);
    let [(native, done), (scheme, none)] = both_ways(
        &vo,
        trace.as_bytes(),
        &["currenttime", "assoclist", "beepcount"],
    );
    assert_eq!(native, scheme);
    assert!(native.faults.is_empty(), "{:?}", native.faults);
    assert_eq!(done, 1200, "every event's part ran natively");
    assert_eq!(none, 0);
    let list = native.values[1].as_deref().unwrap();
    assert!(
        list.starts_with("((0 . #(") && list.contains("(2 . #("),
        "{list}"
    );
}

/// A utility procedure is inlined only while the program defines it once and never assigns
/// it: a second definition or a `set!` anywhere keeps the part in Scheme, as does a name the
/// forms call that the program redefines.
#[test]
fn a_procedure_the_program_redefines_or_assigns_is_not_inlined() {
    let text = std::fs::read_to_string("examples/paper/lineplot.voml").unwrap();
    let vo = compile_text("examples/paper/lineplot.voml", &text);
    assert!(vo.ep_components[0].inputs[0].forms.is_some());
    for change in [
        "(set! advance-scalar (lambda (p t v) (vector t v t v)))",
        "(define (advance-scalar p t v) (vector 1 2 3 4))",
        "(define (id-put l k v) l)",
        "(define (vector . items) items)",
    ] {
        let changed = text.replace("</utility-code>", &format!("\n{change}\n</utility-code>"));
        let vo = compile_text("examples/paper/lineplot.voml", &changed);
        assert!(vo.ep_components[0].inputs[0].forms.is_none(), "{change}");
    }
}

/// Where Scheme fails (an `id-get` of what is not an association list), the forms change
/// nothing and the part runs in Scheme, which reports the error at the part; the events
/// before and after are carried out natively.
#[test]
fn a_failing_input_part_is_reported_as_schemes() {
    let spec = keeper(
        &[("k", "int"), ("x", "real")],
        r#"type="real""#,
        "(define (pair-of a b) (vector a b))",
        "(set! $1 ^0/1)
         (set! $0 (id-put $0 ^0/0 (pair-of ^0/1 (id-get $0 ^0/0))))",
    );
    let vo = compile_text("v.voml", &spec);
    assert!(vo.ep_components[0].inputs[0].forms.is_some());
    let trace = "-3 3000 1 1.5\n-3 3000 2 2.5\n-3 3000 1 3.5\n";
    let [(native, done), (scheme, _)] = both_ways(&vo, trace.as_bytes(), &["db", "last"]);
    assert_eq!(native, scheme);
    assert_eq!(done, 3);
    assert_eq!(
        native.values[0].as_deref(),
        Some("((1 . #(3.5 #(1.5 #false))) (2 . #(2.5 #false)))")
    );
    // A structure that is not an association list: `id-get` fails, in Scheme, at the part.
    let broken = spec.replace(
        r#"<variable name="db" type="list"/>"#,
        r#"<variable name="db" type="int" init="5"/>"#,
    );
    let broken = compile_text("v.voml", &broken);
    assert!(broken.ep_components[0].inputs[0].forms.is_some());
    let [(native, done), (scheme, _)] = both_ways(&broken, trace.as_bytes(), &["db", "last"]);
    assert_eq!(native, scheme);
    assert_eq!(done, 0, "each event went to Scheme");
    assert!(
        native.faults.iter().any(|f| f.contains("id-get")),
        "{:?}",
        native.faults
    );
}

/// The vectors a native part makes live in the engine's heap, which a full collection may
/// sweep: one that runs while a new vector is held only by the part (in a register while the
/// next is made, or assigned to a structure the part has not yet written) must keep it. Thousands of keys keep enough vectors
/// alive for full collections; every vector kept is read back at the end.
#[test]
fn native_vectors_survive_full_collections() {
    let spec = keeper(
        &[("k", "int"), ("x", "int")],
        r#"type="vector""#,
        "",
        "(set! $0 (id-put $0 ^0/0
           (vector (vector ^0/1) (vector ^0/1) (vector ^0/1) (vector ^0/1)
                   (vector ^0/1) (vector ^0/1) (vector ^0/1) (vector ^0/1))))
         (set! $1 (vector ^0/1 (id-get $0 ^0/0)))",
    );
    let vo = compile_text("v.voml", &spec);
    assert!(vo.ep_components[0].inputs[0].forms.is_some());
    // (Steel's heap starts with room for 25,600 vectors and collects in full when 95 % of
    // them are reachable, its weak collections having freed the rest.)
    let keys = 3600;
    let trace: String = (0..keys).map(|k| format!("-3 3000 {k} 7\n")).collect();
    let mut rt = start_runtime(vo, false, 1000);
    support::replay_bytes(&mut rt, trace.as_bytes(), "t.trf", false);
    assert_eq!(support::fault_lines(&rt), Vec::<String>::new());
    assert_eq!(rt.stats().native, keys as u64);
    // Every vector made holds its 7 still.
    let db = rt.variable("db").unwrap();
    let kept = " . #(#(7) #(7) #(7) #(7) #(7) #(7) #(7) #(7)))";
    assert_eq!(db.matches(kept).count(), keys, "{}", &db[..400]);
    assert_eq!(
        rt.variable("last").as_deref(),
        Some(&*format!("#(7 {})", &kept[3..kept.len() - 1]))
    );
}

/// A vector an entry held is filled again by a later `(vector ...)` only when no other value
/// refers to it: the vectors another component keeps (in Scheme) from the entries, before the
/// native part replaces them, stay as they were, and every entry holds its own vector.
#[test]
fn a_replaced_vector_is_filled_again_only_when_nothing_else_holds_it() {
    let text = r#"<voml version="1.0"><body><visual-object name="v">
      <event-declarations>
        <data-event name="s" rtype="entry" etype="3000"><data-field name="k" type="int"/><data-field name="x" type="int"/></data-event>
      </event-declarations>
      <info-structures>
        <variable name="db" type="list"/>
        <variable name="kept" type="list"/>
      </info-structures>
      <event-processing>
        <ep-component name="put" inputs="s.k.x" infos="db">
          <input name="^0">(set! $0 (id-put $0 ^0/0 (vector ^0/1 ^0/0 (* 2 ^0/1))))</input>
        </ep-component>
        <ep-component name="keep" inputs="s.k.x" infos="db kept">
          <input name="^0">(if (= 0 (modulo ^0/1 5)) (set! $1 (cons (id-get $0 ^0/0) $1)))</input>
        </ep-component>
      </event-processing>
    </visual-object></body></voml>"#;
    let vo = compile_text("v.voml", text);
    assert!(vo.ep_components[0].inputs[0].forms.is_some());
    assert!(
        vo.ep_components[1].inputs[0].forms.is_none(),
        "`cons` is Scheme's"
    );
    // Three keys in turn; every fifth record kept by the other component.
    let trace: String = (0..600)
        .map(|r| format!("-3 3000 {} {r}\n", r % 3))
        .collect();
    let [(native, done), (scheme, _)] = both_ways(&vo, trace.as_bytes(), &["db", "kept"]);
    assert_eq!(native, scheme);
    assert_eq!(done, 600, "every put part ran natively");
    assert_eq!(
        native.values[0].as_deref(),
        Some("((0 . #(597 0 1194)) (1 . #(598 1 1196)) (2 . #(599 2 1198)))")
    );
    let kept = native.values[1].as_deref().unwrap();
    assert!(kept.starts_with("(#(595 1 1190) #(590 2 1180) "), "{kept}");
    assert_eq!(kept.matches("#(").count(), 120);
}

/// An entry put in place is what `cons` makes of its key and value: a pair, or a list when
/// the value is a list, whichever the entry it replaces was.
#[test]
fn an_entry_put_in_place_is_as_cons_makes_it() {
    let spec = keeper(
        &[("k", "int"), ("x", "int")],
        r#"type="list" init="(1 2)""#,
        "",
        "(set! $0 (id-put $0 ^0/0 (if (= 0 (modulo ^0/1 3)) $1 (vector ^0/1))))",
    );
    let vo = compile_text("v.voml", &spec);
    assert!(vo.ep_components[0].inputs[0].forms.is_some());
    let trace: String = (0..40)
        .map(|r| format!("-3 3000 {} {r}\n", r % 2))
        .collect();
    let [(native, done), (scheme, _)] = both_ways(&vo, trace.as_bytes(), &["db", "last"]);
    assert_eq!(native, scheme);
    assert_eq!(done, 40);
    // Record 39 (key 1) a list; record 38 (key 0) a vector.
    assert_eq!(native.values[0].as_deref(), Some("((0 . #(38)) (1 1 2))"));
}

/// Writes random input parts over the structures `$0` (an association list of vectors), `$1`
/// and `$2` (anything), with the fields `^0/0` (a real), `^0/1` (an integer key) and `^0/2`
/// (anything: numbers, a string), and the utility procedures `advance` and `pick`.
struct Inputs {
    rng: support::Rng,
}

impl Inputs {
    fn leaf(&mut self) -> String {
        match self.rng.below(14) {
            0 => format!("{}", self.rng.below(7) as i64 - 3),
            1 => ["2.5", "-0.5", "#t", "#f"][self.rng.below(4)].into(),
            2..=4 => ["^0/0", "^0/1", "^0/2"][self.rng.below(3)].into(),
            5 | 6 => ["$1", "$2"][self.rng.below(2)].into(),
            7 => "(id-get $0 ^0/1)".into(),
            8 => format!("(id-get $0 {})", self.rng.below(4)),
            9 => format!("(vector-ref (id-get $0 ^0/1) {})", self.rng.below(3)),
            10 => "(length $0)".into(),
            _ => format!("{}", self.rng.below(3)),
        }
    }

    fn expr(&mut self, depth: usize) -> String {
        if depth == 0 || self.rng.below(3) == 0 {
            return self.leaf();
        }
        let d = depth - 1;
        match self.rng.below(12) {
            0 => format!("(+ {} {})", self.expr(d), self.expr(d)),
            1 => format!("(- {} {})", self.expr(d), self.expr(d)),
            2 => format!("(vector {} {})", self.expr(d), self.expr(d)),
            3 => format!("(vector-ref {} {})", self.expr(d), self.rng.below(3)),
            4 => format!("(advance {} {})", self.expr(d), self.expr(d)),
            5 => format!("(pick {} {} {})", self.expr(d), self.expr(d), self.expr(d)),
            6 => format!("(if {} {} {})", self.expr(d), self.expr(d), self.expr(d)),
            7 => format!(
                "(let ((a {}) (b {})) (vector b a))",
                self.expr(d),
                self.expr(d)
            ),
            8 => format!("(and {} {})", self.expr(d), self.expr(d)),
            9 => format!("(id-put $0 {} {})", self.expr(d), self.expr(d)),
            // A `let` binding another's variable, a field or a literal.
            10 => format!(
                "(let ((a {})) (let ((b a) (c {}) (d ^0/0)) (vector c b a d)))",
                self.expr(d),
                self.expr(d)
            ),
            _ => format!("(= {} {})", self.expr(d), self.expr(d)),
        }
    }

    fn statement(&mut self) -> String {
        match self.rng.below(5) {
            0 | 1 => format!(
                "(set! $0 (id-put $0 ^0/1 (advance (id-get $0 ^0/1) {})))",
                self.expr(2)
            ),
            2 => format!("(set! $1 {})", self.expr(3)),
            3 => format!("(set! $2 {})", self.expr(3)),
            _ => format!(
                "(when {} (set! $1 (vector $2 {})))",
                self.expr(2),
                self.expr(2)
            ),
        }
    }
}

/// Random input parts hold to what Scheme makes of them over random records: the same
/// structures and faults, with most events carried out natively.
#[test]
fn random_input_parts_end_as_scheme_does() {
    support::quiet_steel();
    let seed = support::fuzz_seed(0x51a7_e0b1);
    let mut gen = Inputs {
        rng: support::Rng(seed | 1),
    };
    let (mut native_parts, mut done, mut faults) = (0, 0, 0);
    for round in 0..60 {
        let n = 1 + gen.rng.below(3);
        let body: Vec<String> = (0..n).map(|_| gen.statement()).collect();
        let text = format!(
            r#"<voml><body><visual-object name="random">
              <event-declarations>
                <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="k" type="int"/><data-field name="y" type="any"/></data-event>
              </event-declarations>
              <info-structures>
                <variable name="db" type="list"/>
                <variable name="a" type="any" init="0"/>
                <variable name="b" type="any" init="1"/>
              </info-structures>
              <utility-code>
                (define (advance old x) (if old (vector (vector-ref old 1) x) (vector x x)))
                (define (pick c x y) (if c x y))
              </utility-code>
              <event-processing>
                <ep-component name="keep" inputs="e.ts.k.y" infos="db a b">
                  <input name="^0">{}</input>
                </ep-component>
              </event-processing>
            </visual-object></body></voml>"#,
            body.join("\n")
        );
        let vo = compile_text("random.voml", &text);
        if vo.ep_components[0].inputs[0].forms.is_some() {
            native_parts += 1;
        }
        let trace = support::random_records(&mut gen.rng);
        let [(native, events), (scheme, _)] = both_ways(&vo, trace.as_bytes(), &["db", "a", "b"]);
        assert_eq!(
            native, scheme,
            "seed {seed}, round {round}:\n{text}\n{trace}"
        );
        done += events;
        faults += native.faults.len();
    }
    eprintln!(
        "{native_parts} native parts of 60; {done} events carried out natively; {faults} faults"
    );
    assert!(native_parts >= 50, "{native_parts}");
    assert!(done > 100, "{done}");
    assert!(
        faults > 3,
        "{faults}: the parts fail now and then, as Scheme does"
    );
}

/// An entry put in place (`(set! S (id-put S key value))` of a list nothing else holds) is
/// taken back when a later statement of the part fails: the part then runs in Scheme from
/// the structures as they were, and ends as Scheme alone would.
#[test]
fn an_entry_put_in_place_is_taken_back_when_the_part_fails() {
    let spec = keeper(
        &[("k", "int"), ("x", "int"), ("y", "any")],
        r#"type="any" init="0""#,
        "(define (advance old x) (if old (vector (+ (vector-ref old 0) 1) x) (vector 0 x)))",
        "(set! $0 (id-put $0 ^0/0 (advance (id-get $0 ^0/0) ^0/1)))
         (set! $1 (+ ^0/2 1))",
    );
    let vo = compile_text("v.voml", &spec);
    assert!(vo.ep_components[0].inputs[0].forms.is_some());
    let trace = "-3 3000 1 10 1\n-3 3000 2 20 1\n-3 3000 1 11 \"s\"\n-3 3000 1 12 2\n";
    let [(native, done), (scheme, _)] = both_ways(&vo, trace.as_bytes(), &["db", "last"]);
    assert_eq!(native, scheme);
    assert_eq!(done, 2, "the failing event went to Scheme");
    // Key 1 advanced once more by the failing event's put, as Scheme made it (taken back
    // from the native round, then made again by the procedure); the fault disables the
    // component, so the last record changes nothing.
    assert_eq!(
        native.values[0].as_deref(),
        Some("((1 . #(1 11)) (2 . #(0 20)))")
    );
    assert_eq!(native.values[1].as_deref(), Some("2"));
    assert_eq!(native.faults.len(), 1, "{:?}", native.faults);
}
