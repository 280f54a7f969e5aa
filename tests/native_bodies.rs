//! Native input parts: `<input>` code that is plain updates of the component's structures
//! from the event's fields is carried out by the runtime without Scheme, exactly as the Scheme
//! would, or left to Scheme. Whole runs with and without the native parts end in the same
//! structures and report the same faults at the same places, whatever the records, including
//! where Scheme goes its own way (sums past a fixnum, indices out of range, reals where
//! integers are used) and where Scheme code of other components changes the same structures
//! between native parts.

mod support;

use support::{compile_text, start_runtime};
use voml_ir::CompiledVo;

/// The same visual object with every input part and condition part's code left to Scheme.
fn without_native(vo: &CompiledVo) -> CompiledVo {
    let mut vo = vo.clone();
    for c in &mut vo.ep_components {
        for input in &mut c.inputs {
            input.native = None;
        }
        for part in c.before.iter_mut().chain(c.after.iter_mut()) {
            if let Some(native) = &mut part.native {
                native.statements = None;
            }
        }
    }
    vo
}

/// Runs `vo` with and without its native parts over `trace`: the structures named and the
/// faults, each way, and how many parts ran natively.
fn both_ways(
    vo: &CompiledVo,
    trace: &[u8],
    names: &[&str],
) -> [(Vec<Option<String>>, Vec<String>, u64); 2] {
    [vo.clone(), without_native(vo)].map(|vo| {
        let mut rt = start_runtime(vo, false, 1000);
        support::replay_bytes(&mut rt, trace, "t.trf", false);
        let values = names.iter().map(|n| rt.variable(n)).collect();
        (values, support::fault_lines(&rt), rt.stats().native)
    })
}

/// A visual object `name` whose one EP component `name` runs `body` for each entry record of
/// event type 1, taking its timestamp and one field of type `field` (`^0/1`), with the info
/// structures `infos` (name, type, initial value), `$0` first.
fn one_input(name: &str, field: &str, infos: &[(&str, &str, &str)], body: &str) -> String {
    let variables: String = infos
        .iter()
        .map(|(n, t, init)| format!(r#"<variable name="{n}" type="{t}" init="{init}"/>"#))
        .collect();
    let names: Vec<&str> = infos.iter().map(|v| v.0).collect();
    format!(
        r#"<voml><body><visual-object name="{name}">
      <event-declarations>
        <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="x" type="{field}"/></data-event>
      </event-declarations>
      <info-structures>{variables}</info-structures>
      <event-processing>
        <ep-component name="{name}" inputs="e.ts.x" infos="{}">
          <input name="^0">{body}</input>
        </ep-component>
      </event-processing>
    </visual-object></body></voml>"#,
        names.join(" ")
    )
}

/// A count reads its element once; an element of another vector at the same index is that
/// vector's, and of the same vector under another name, the same.
#[test]
fn a_count_from_another_vector_reads_that_vector() {
    let text = one_input(
        "counts",
        "int",
        &[
            ("v", "vector", "(0 0 0 0)"),
            ("w", "vector", "(10 20 30 40)"),
        ],
        "(vector-set! $0 ^0/1 (+ (vector-ref $0 ^0/1) (vector-ref $1 ^0/1) 1))",
    );
    let vo = compile_text("counts.voml", &text);
    assert!(vo.ep_components[0].inputs[0].native.is_some());
    let trace = "-3 1 0.1 1\n-3 1 0.2 2\n-3 1 0.3 1\n";
    let [native, scheme] = both_ways(&vo, trace.as_bytes(), &["v", "w"]);
    assert_eq!(native.0, scheme.0);
    assert_eq!(native.0[0].as_deref(), Some("#(0 42 31 0)"));
    assert_eq!(native.2, 3);
    // `w` made `v`'s vector by a part before: the same element, read through both names.
    let text = one_input(
        "shared-counts",
        "int",
        &[("v", "vector", "(0 0 0 0)"), ("w", "vector", "(10 20 30 40)")],
        "(set! $1 $0)",
    )
    .replace(
        "</ep-component>",
        r#"</ep-component><ep-component name="count" inputs="e.ts.x" infos="v w"><input name="^0">(vector-set! $0 ^0/1 (+ (vector-ref $1 ^0/1) (vector-ref $0 ^0/1) 1))</input></ep-component>"#,
    );
    let vo = compile_text("shared-counts.voml", &text);
    assert!(vo.ep_components[1].inputs[0].native.is_some());
    let [native, scheme] = both_ways(&vo, trace.as_bytes(), &["v", "w"]);
    assert_eq!(native.0, scheme.0);
    assert_eq!(native.0[0].as_deref(), Some("#(0 3 1 0)"));
    assert_eq!(native.0[0], native.0[1]);
}

const COUNT: &str = r#"<voml><body><visual-object name="count">
  <event-declarations>
    <data-event name="enter" rtype="entry" etype="-785"><data-field name="ts" type="real"/><data-field name="proc" type="int"/></data-event>
  </event-declarations>
  <info-structures>
    <variable name="counts" type="vector" init="(0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0)"/>
    <variable name="latest" type="real"/>
  </info-structures>
  <control-structures><variable name="seen" type="int" init="0"/></control-structures>
  <event-processing>
    <ep-component name="count" inputs="enter.ts.proc" infos="counts latest" controls="seen">
      <input name="^0">
        (vector-set! $0 ^0/1 (+ 1 (vector-ref $0 ^0/1)))
        (set! $1 ^0/0)
        (set! %0 (- %0 -1))
      </input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;

#[test]
fn counting_per_processor_is_native_and_counts_as_scheme_does() {
    let vo = compile_text("count.voml", COUNT);
    assert!(vo.ep_components[0].inputs[0].native.is_some());
    let trace = std::fs::read("../shared/traces/picl/mpicl-trace3-bcast10.trf")
        .or_else(|_| std::fs::read("examples/mpicl/ring.trf"))
        .unwrap();
    let [native, scheme] = both_ways(&vo, &trace, &["counts", "latest", "seen"]);
    assert_eq!(native.0, scheme.0);
    assert!(native.1.is_empty() && scheme.1.is_empty(), "{:?}", native.1);
    // What the trace holds: entry records of event type -785 per processor.
    let mut expected = [0u64; 16];
    for line in String::from_utf8_lossy(&trace).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() > 3 && f[0] == "-3" && f[1] == "-785" {
            expected[f[3].parse::<usize>().unwrap()] += 1;
        }
    }
    let expected = format!("#({})", expected.map(|n| n.to_string()).join(" "));
    assert_eq!(native.0[0].as_deref(), Some(expected.as_str()));
    let records = expected_total(&expected);
    assert!(records > 0);
    assert_eq!(native.0[2], Some(records.to_string()));
    assert_eq!((native.2, scheme.2), (records, 0), "every record natively");
}

fn expected_total(vector: &str) -> u64 {
    vector
        .trim_matches(|c| c == '#' || c == '(' || c == ')')
        .split_whitespace()
        .map(|n| n.parse::<u64>().unwrap())
        .sum()
}

#[test]
fn where_scheme_goes_its_own_way_the_part_runs_in_scheme() {
    // A sum past the largest fixnum (Scheme makes a big integer), an index out of range and a
    // real used as an index (Scheme errors, reported in place), a negative index.
    let text = one_input(
        "edges",
        "any",
        &[
            ("v", "vector", "(0 0 0 0)"),
            ("big", "int", "9223372036854775806"),
        ],
        "(vector-set! $0 ^0/1 (+ 1 (vector-ref $0 ^0/1))) (set! $1 (+ $1 1))",
    );
    let vo = compile_text("edges.voml", &text);
    assert!(vo.ep_components[0].inputs[0].native.is_some());
    let trace = "-3 1 0.1 0\n-3 1 0.2 3\n-3 1 0.3 7\n-3 1 0.4 1.5\n-3 1 0.5 -1\n-3 1 0.6 2\n-3 1 0.7 \"x\"\n-3 1 0.8 2\n";
    let [native, scheme] = both_ways(&vo, trace.as_bytes(), &["v", "big"]);
    assert_eq!(native.0, scheme.0);
    assert_eq!(native.1, scheme.1);
    assert!(!native.1.is_empty(), "the bad indices are reported");
    assert!(native.2 > 0, "the plain records ran natively");
}

#[test]
fn scheme_changing_the_structures_between_native_parts_is_seen() {
    // One component counts natively; another, in Scheme, replaces the vector and the counter
    // on some records: the native part must count into the new vector from then on.
    let text = r#"<voml><body><visual-object name="mixed">
      <event-declarations>
        <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="k" type="int"/></data-event>
        <data-event name="reset" rtype="exit" etype="1"><data-field name="ts" type="real"/><data-field name="k" type="int"/></data-event>
      </event-declarations>
      <info-structures>
        <variable name="v" type="vector" init="(0 0 0 0)"/>
        <variable name="n" type="int" init="0"/>
      </info-structures>
      <event-processing>
        <ep-component name="count" inputs="e.ts.k" infos="v n">
          <input name="^0">(vector-set! $0 ^0/1 (+ (vector-ref $0 ^0/1) 1)) (set! $1 (+ $1 1))</input>
        </ep-component>
        <ep-component name="reset" inputs="reset.ts.k" infos="v n">
          <input name="^0">(set! $0 (make-vector 4 ^0/1)) (set! $1 (* $1 10))</input>
        </ep-component>
      </event-processing>
    </visual-object></body></voml>"#;
    let vo = compile_text("mixed.voml", text);
    let natives: Vec<bool> = vo
        .ep_components
        .iter()
        .map(|c| c.inputs[0].native.is_some())
        .collect();
    assert_eq!(natives, [true, false]);
    let mut trace = String::new();
    for i in 0..200 {
        let kind = if i % 37 == 36 { -4 } else { -3 };
        trace.push_str(&format!("{kind} 1 {}.0 {}\n", i, i % 4));
    }
    let [native, scheme] = both_ways(&vo, trace.as_bytes(), &["v", "n"]);
    assert_eq!(native.0, scheme.0);
    assert!(native.1.is_empty(), "{:?}", native.1);
    assert!(native.2 > 150);
}

#[test]
fn a_program_that_redefines_a_procedure_keeps_its_parts_in_scheme() {
    let redefined = COUNT.replace(
        "<event-processing>",
        "<utility-code>(define (vector-ref v i) 0)</utility-code><event-processing>",
    );
    let vo = compile_text("redefined.voml", &redefined);
    assert!(vo.ep_components[0].inputs[0].native.is_none());
}

#[test]
fn condition_parts_counting_entries_are_native_and_fail_where_scheme_fails() {
    // The bench's condition part, and one reading an element some records lack or hold as a
    // string (Scheme fails there, in place) or as a real (Scheme fails as an index).
    let text = r#"<voml><body><visual-object name="entries">
      <info-structures>
        <variable name="counts" type="vector" init="(0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0)"/>
        <variable name="last" type="int" init="0"/>
      </info-structures>
      <event-processing>
        <ep-component name="count" infos="counts">
          <before condition="(= (car (current-event)) -3)">(let ((p (list-ref (current-event) 3))) (vector-set! $0 p (+ 1 (vector-ref $0 p))))</before>
        </ep-component>
        <ep-component name="short" infos="counts last">
          <after condition="(= (cadr (current-event)) 7)">(vector-set! $0 (list-ref (current-event) 5) (- (list-ref (current-event) 4))) (set! $1 (caddr (current-event)))</after>
        </ep-component>
        <ep-component name="string" infos="counts last">
          <after condition="(= (cadr (current-event)) 8)">(vector-set! $0 (list-ref (current-event) 5) (- (list-ref (current-event) 4))) (set! $1 (caddr (current-event)))</after>
        </ep-component>
        <ep-component name="real" infos="counts last">
          <after condition="(= (cadr (current-event)) 9)">(vector-set! $0 (list-ref (current-event) 5) (- (list-ref (current-event) 4))) (set! $1 (caddr (current-event)))</after>
        </ep-component>
      </event-processing>
    </visual-object></body></voml>"#;
    let vo = compile_text("entries.voml", text);
    for c in &vo.ep_components {
        let part = c.before.iter().chain(&c.after).next().unwrap();
        assert!(
            part.native.as_ref().unwrap().statements.is_some(),
            "{}",
            c.name
        );
    }
    let trace = "-3 1 1 2\n-4 1 2 3\n-3 7 3 4 5 6\n-3 8 3 4 5 6\n-3 9 3 4 5 6\n-3 7 4 5 6\n-3 8 5 6 \"x\" 1\n-3 9 6 7 8 2.5\n-3 7 7 1 2 9\n-3 1 8 15\n";
    let [native, scheme] = both_ways(&vo, trace.as_bytes(), &["counts", "last"]);
    assert_eq!(native.0, scheme.0);
    assert_eq!(native.1, scheme.1);
    assert_eq!(native.1.len(), 3, "{:?}", native.1);
    assert!(native.2 >= 6, "{}", native.2);
    assert_eq!(scheme.2, 0);
}

#[test]
fn statements_on_shared_and_twice_changed_vectors_do_what_scheme_does() {
    // `w` takes the vector `v` holds, then an element of `v` changes (seen through `w` too);
    // two elements of one vector change in one part.
    let text = one_input(
        "shared",
        "int",
        &[("v", "vector", "(0 0 0 0)"), ("w", "vector", "(9 9)")],
        "(set! $1 $0) (vector-set! $0 ^0/1 (+ (vector-ref $0 ^0/1) 1)) (vector-set! $0 0 ^0/1)",
    );
    let vo = compile_text("shared.voml", &text);
    assert!(vo.ep_components[0].inputs[0].native.is_some());
    let trace = "-3 1 0.1 1\n-3 1 0.2 2\n-3 1 0.3 3\n-3 1 0.4 2\n";
    let [native, scheme] = both_ways(&vo, trace.as_bytes(), &["v", "w"]);
    assert_eq!(native.0, scheme.0);
    assert_eq!(native.0[0].as_deref(), Some("#(2 1 2 1)"));
    assert_eq!(native.0[0], native.0[1], "w is v's vector");
    assert_eq!(native.2, 4);
}

/// Writes random native parts over the structures `v` and `w` (vectors of 4), `a` and `b`
/// (any values), reading the input's fields `^0/1` and `^0/2` (any values).
struct Parts {
    rng: support::Rng,
}

impl Parts {
    /// Small integers (the fixnum limits come from the fields and from `b`; larger literals
    /// stay in Scheme, which cuts them short: see `lower/bodies.rs`).
    fn literal(&mut self) -> String {
        match self.rng.below(8) {
            0 => "8388607".into(),
            1 => "-8388607".into(),
            _ => format!("{}", self.rng.below(9) as i64 - 4),
        }
    }

    fn expr(&mut self, depth: usize) -> String {
        let leaf = depth == 0 || self.rng.below(3) == 0;
        match if leaf {
            self.rng.below(4)
        } else {
            4 + self.rng.below(3)
        } {
            0 => self.literal(),
            1 => ["^0/1", "^0/2"][self.rng.below(2)].into(),
            2 => ["$1", "$2"][self.rng.below(2)].into(),
            // Now and then from `$3`, another vector (or `$0`'s, shared).
            3 => format!(
                "(vector-ref {} {})",
                ["$0", "$0", "$0", "$3"][self.rng.below(4)],
                self.index()
            ),
            4 => format!("(vector-ref $0 {})", self.expr(depth - 1)),
            _ => {
                let op = ["+", "-"][self.rng.below(2)];
                let n = 1 + self.rng.below(3);
                let terms: Vec<String> = (0..n).map(|_| self.expr(depth - 1)).collect();
                format!("({op} {})", terms.join(" "))
            }
        }
    }

    fn index(&mut self) -> String {
        match self.rng.below(6) {
            0 => "^0/1".into(),
            1 => "4".into(),
            _ => format!("{}", self.rng.below(4)),
        }
    }

    /// One statement; the recogniser refuses those that read what an earlier one changed.
    fn statement(&mut self) -> String {
        match self.rng.below(12) {
            0..=3 => format!("(set! $1 {})", self.expr(2)),
            4..=6 => format!("(set! $2 {})", self.expr(2)),
            // Structures sharing the vector, or holding another value.
            7 => [
                "(set! $1 $0)",
                "(set! $0 $1)",
                "(set! $0 $2)",
                "(set! $3 $0)",
            ][self.rng.below(4)]
            .into(),
            _ => format!("(vector-set! $0 {} {})", self.index(), self.expr(2)),
        }
    }
}

/// Random native parts hold to what Scheme makes of them, over random records: integers at
/// the fixnum limits, reals, strings, missing fields.
#[test]
fn random_native_parts_end_as_scheme_does() {
    support::quiet_steel();
    let seed = support::fuzz_seed(0x00b0_d1e5);
    let mut gen = Parts {
        rng: support::Rng(seed | 1),
    };
    let mut native_parts = 0;
    let mut ran_natively = 0;
    for round in 0..40 {
        let components: String = (0..6)
            .map(|c| {
                let n = 1 + gen.rng.below(3);
                let body: Vec<String> = (0..n).map(|_| gen.statement()).collect();
                format!(
                    r#"<ep-component name="c{c}" inputs="e.ts.x.y" infos="v a b w"><input name="^0">{}</input></ep-component>"#,
                    body.join(" ")
                )
            })
            .collect();
        let text = format!(
            r#"<voml><body><visual-object name="random">
              <event-declarations>
                <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="x" type="any"/><data-field name="y" type="any"/></data-event>
              </event-declarations>
              <info-structures>
                <variable name="v" type="vector" init="(0 1 2 3)"/>
                <variable name="a" type="any" init="0"/>
                <variable name="b" type="any" init="9223372036854775806"/>
                <variable name="w" type="vector" init="(5 6 7 8)"/>
              </info-structures>
              <event-processing>{components}</event-processing>
            </visual-object></body></voml>"#
        );
        let vo = compile_text("random.voml", &text);
        native_parts += vo
            .ep_components
            .iter()
            .filter(|c| c.inputs[0].native.is_some())
            .count();
        let mut trace = String::new();
        for i in 0..40 {
            let value = |rng: &mut support::Rng| match rng.below(10) {
                0 => "2.5".to_string(),
                1 => "\"s\"".to_string(),
                2 => "9223372036854775807".to_string(),
                3 => "0.1".to_string(),
                4 => "-1e308".to_string(),
                _ => format!("{}", rng.below(5)),
            };
            let (x, y) = (value(&mut gen.rng), value(&mut gen.rng));
            let line = match gen.rng.below(10) {
                0 => format!("-3 1 {i}.0 {x}\n"),
                _ => format!("-3 1 {i}.0 {x} {y}\n"),
            };
            trace.push_str(&line);
        }
        let [native, scheme] = both_ways(&vo, trace.as_bytes(), &["v", "a", "b", "w"]);
        assert_eq!(
            native.0, scheme.0,
            "seed {seed}, round {round}:\n{text}\n{trace}"
        );
        assert_eq!(
            native.1, scheme.1,
            "seed {seed}, round {round}:\n{text}\n{trace}"
        );
        ran_natively += native.2;
    }
    eprintln!("{native_parts} native parts of 240; {ran_natively} ran natively");
    assert!(native_parts > 100, "{native_parts}");
    assert!(ran_natively > 500, "{ran_natively}");
}

/// steel compiles `(+ x N)`, `(- x N)` and `(<= x N)` with `N` in 24 bits and cuts a larger
/// literal short (`(+ x 16777217)` added 1); the runtime quotes such literals in the program
/// it loads, and the arithmetic is right, in parts left to Scheme as in native ones.
#[test]
fn large_literals_are_not_cut_short() {
    let text = one_input(
        "large",
        "int",
        &[("a", "any", "0"), ("b", "any", "0"), ("c", "any", "0")],
        "(set! $0 (+ ^0/1 16777217)) (set! $1 (- ^0/1 16777217)) (set! $2 (if (&lt;= ^0/1 16777216) 1 0))",
    );
    let vo = compile_text("large.voml", &text);
    assert!(vo.ep_components[0].inputs[0].native.is_none());
    let [run, _] = both_ways(&vo, b"-3 1 0.1 1\n", &["a", "b", "c"]);
    assert!(run.1.is_empty(), "{:?}", run.1);
    let values: Vec<&str> = run.0.iter().map(|v| v.as_deref().unwrap()).collect();
    assert_eq!(values, ["16777218", "-16777216", "1"]);
}

/// Sums of reals and integers, as steel adds them (from the left, an integer with a real as
/// reals; `(- x y z)` as `x` plus the negated sum of `y` and `z`), run natively.
#[test]
fn sums_of_reals_are_native_and_as_scheme_adds() {
    let text = one_input(
        "reals",
        "real",
        &[("total", "real", "0.0"), ("spread", "any", "0")],
        "(set! $0 (+ $0 ^0/1 1)) (set! $1 (- ^0/0 ^0/1 2 $1))",
    );
    let vo = compile_text("reals.voml", &text);
    assert!(vo.ep_components[0].inputs[0].native.is_some());
    let mut trace = String::new();
    for i in 0..50 {
        trace.push_str(&format!(
            "-3 1 {}.{} {}.{}\n",
            i,
            i % 7,
            i % 5,
            i * 37 % 100
        ));
    }
    let [native, scheme] = both_ways(&vo, trace.as_bytes(), &["total", "spread"]);
    assert_eq!(native.0, scheme.0);
    assert!(native.1.is_empty(), "{:?}", native.1);
    assert_eq!((native.2, scheme.2), (50, 0));
}
