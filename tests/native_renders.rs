//! Native drawing parts: an IR component's phase-1 code made of the forms the compiler
//! recognises (the paper's line plot: a loop over an association list, comparisons,
//! arithmetic, a control counted, a segment per scalar) is evaluated by the runtime without
//! Scheme, exactly as the Scheme would evaluate it, or left to Scheme. Whole runs with and
//! without the native forms draw the same pixels, beep at the same times, end in the same
//! structures and report the same faults at the same places, whatever the values, including
//! where Scheme fails (a primitive's error, a loop over what is not a list of pairs).

mod support;

use std::path::Path;

use support::{compile_spec, compile_text, lineplot_trace, Ended};
use voml_ir::{CompiledVo, Form};

/// The same visual object with every IR component's phase 1 left to Scheme.
fn without_native(vo: &CompiledVo) -> CompiledVo {
    let mut vo = vo.clone();
    for c in &mut vo.ir_components {
        c.phase1_native = None;
    }
    vo
}

/// Runs `vo` over `trace` with its drawing parts' forms and without them: what each run
/// ended with, and how many rounds each evaluated natively.
fn both_ways(vo: &CompiledVo, trace: &[u8], names: &[&str]) -> [(Ended, u64); 2] {
    [vo.clone(), without_native(vo)].map(|vo| {
        let (ended, stats) = support::run_to_end(vo, trace, names);
        (ended, stats.native_renders)
    })
}

/// The line plot's drawing part is native, every round of it runs natively, and the picture,
/// the beeps and the structures are the Scheme's.
#[test]
fn the_line_plot_draws_natively_what_scheme_draws() {
    let vo = compile_spec(Path::new("examples/paper/lineplot.voml"));
    let native = vo.ir_components[0]
        .phase1_native
        .as_ref()
        .expect("the line plot's phase 1 is native");
    assert!(matches!(native.forms[0], Form::Let { .. }));
    let trace = lineplot_trace(1500);
    let [(native, rounds), (scheme, none)] = both_ways(
        &vo,
        trace.as_bytes(),
        &["currenttime", "assoclist", "beepcount"],
    );
    assert_eq!(native, scheme);
    assert!(native.faults.is_empty(), "{:?}", native.faults);
    assert_eq!(native.beeps.len(), 300, "one beep per ten segments");
    assert!(rounds >= 1500, "{rounds} rounds ran natively");
    assert_eq!(none, 0);
    // Something was drawn: the plot is not blank.
    let white = native.pixels[0]
        .chunks(4)
        .filter(|p| p[..3] == [255, 255, 255])
        .count();
    assert!(
        white < native.pixels[0].len() / 4 - 500,
        "{white} white pixels"
    );
}

/// A visual object whose drawing part draws a line per entry of an association list, its
/// style worked out per line from the entry's key: a colour of `colours` (a list written in
/// Scheme), a thickness, a dash every other key, an alpha every third, the clip `clip` (a
/// Scheme expression over the key `k`).
fn styled_lines(colours: &str, clip: &str) -> CompiledVo {
    over_entries(
        colours,
        &format!(
            r#"(set! %0 (+ %0 1))
               (voml-line 0 (- (vector-ref v 0) 1) (- (vector-ref v 1) (* 0.2 k)) $0 (vector-ref v 1)
                 (voml-style (nth (modulo k (length $2)) $2) (+ (quotient k (length $2)) 1) #t {clip}
                             (if (= (modulo k 2) 0) $3 #f) (if (= (modulo k 3) 0) 0.5 #f) "butt"))"#
        ),
    )
}

/// A visual object that keeps the latest time (`$0`) and, per key `k`, the latest
/// `#(time y)` (`v`, in the association list `$1`), and whose drawing part runs `body` for
/// every entry; `$2` is `colours` (a list written in Scheme), `$3` the dash `(3 2)`, `%0` a
/// count from 0.
fn over_entries(colours: &str, body: &str) -> CompiledVo {
    let text = format!(
        r#"<voml><body><visual-object name="entries">
          <event-declarations>
            <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="k" type="int"/><data-field name="y" type="real"/></data-event>
          </event-declarations>
          <info-structures>
            <variable name="t" type="real"/>
            <variable name="alist" type="list"/>
            <variable name="colours" type="list" init='{colours}'/>
            <variable name="dash" type="list" init="(3 2)"/>
          </info-structures>
          <control-structures>
            <variable name="n" type="int" init="0"/>
          </control-structures>
          <view-initializations>
            <view name="v" window="120 80" world="0 10 -5 5"/>
          </view-initializations>
          <event-processing>
            <ep-component name="keep" inputs="e.ts.k.y" infos="t alist">
              <input name="^0">(set! $0 ^0/0) (set! $1 (id-put $1 ^0/1 (vector ^0/0 ^0/2)))</input>
            </ep-component>
          </event-processing>
          <info-rendition>
            <ir-component name="draw" views="v" infos="t alist colours dash" controls="n">
              (alist-for-each (lambda (k v) {body}) $1)
            </ir-component>
          </info-rendition>
        </visual-object></body></voml>"#
    );
    compile_text("entries.voml", &text)
}

/// `n` records of up to `keys` keys, interleaved, a key more every 20 records, the values
/// moving about.
fn keyed_trace(keys: usize, n: usize) -> String {
    let mut rng = support::Rng(0x5eed_1e55);
    (0..n)
        .map(|i| {
            let y = rng.below(90) as f64 / 10.0 - 4.5;
            let key = (i * 7) % keys.min(2 + i / 20);
            format!("-3 1 {:.2} {key} {y}\n", i as f64 * 0.05)
        })
        .collect()
}

/// Lines whose styles are worked out per line draw natively what Scheme draws: styles that
/// come in turn, more of them than a line keeps read; a colour or clip that is not one makes
/// the round Scheme's, which reports the error as it does without native parts.
#[test]
fn styled_lines_draw_natively_what_scheme_draws() {
    let good = r#"("red" "blue" "green")"#;
    for (keys, colours, clip, error) in [
        // 3 colours by 2 thicknesses.
        (6, good, r#""margin""#, None),
        // 3 colours by 14 thicknesses: more styles than a line keeps.
        (40, good, r#"(if (= (modulo k 4) 1) "area" "margin")"#, None),
        // The key that reads a wrong part comes after 60 records, 120 for the clip.
        (
            8,
            r#"("red" "blue" "green" "orange" "nocolour")"#,
            r#""margin""#,
            Some("unknown colour `nocolour`"),
        ),
        (
            8,
            r#"("red" "blue" "green" "orange" 5)"#,
            r#""area""#,
            Some("a colour must be a string"),
        ),
        (
            9,
            good,
            r#"(if (= k 7) "nowhere" "margin")"#,
            Some("clip must be one of"),
        ),
    ] {
        let vo = styled_lines(colours, clip);
        assert!(
            vo.ir_components[0].phase1_native.is_some(),
            "{colours} {clip}: native"
        );
        let trace = keyed_trace(keys, 800);
        let [(native, rounds), (scheme, _)] = both_ways(&vo, trace.as_bytes(), &["t", "n"]);
        assert_eq!(native, scheme, "{colours} {clip}");
        match error {
            None => {
                assert!(native.faults.is_empty(), "{:?}", native.faults);
                assert!(rounds >= 800, "{rounds} rounds ran natively");
            }
            Some(e) => {
                assert_eq!(native.faults.len(), 1, "{:?}", native.faults);
                assert!(native.faults[0].contains(e), "{:?}", native.faults);
                assert!(rounds >= 60, "{rounds}: the rounds before ran natively");
            }
        }
        let inked = native.pixels[0]
            .chunks(4)
            .filter(|p| p[..3] != [255, 255, 255])
            .count();
        assert!(inked > 100, "{colours} {clip}: {inked} pixels drawn");
    }
}

/// A line's operands are worked out before its style's parts, as Scheme works them out: a
/// style that assigns a structure the line reads does not change what the line read. The
/// same pixels and structures either way.
#[test]
fn a_style_that_assigns_is_worked_out_after_the_line() {
    let vo = over_entries(
        r#"("red" "blue" "green")"#,
        r#"(voml-line 0 (modulo %0 10) (vector-ref v 1) (+ 1 (modulo %0 10)) (- (vector-ref v 1) 1)
             (voml-style (begin (set! %0 (+ %0 3)) (nth (modulo k 3) $2)) 1 #f "margin" #f #f "butt"))
           (voml-line 0 (vector-ref v 0) 0 (modulo %0 10) (vector-ref v 1)
             (voml-style (nth (modulo k 3) $2) 2 #f "margin" #f #f "butt"))"#,
    );
    assert!(vo.ir_components[0].phase1_native.is_some());
    let trace = keyed_trace(4, 300);
    let [(native, rounds), (scheme, _)] = both_ways(&vo, trace.as_bytes(), &["t", "n"]);
    assert_eq!(native, scheme);
    assert!(native.faults.is_empty(), "{:?}", native.faults);
    assert!(rounds >= 300, "{rounds} rounds ran natively");
    let inked = native.pixels[0]
        .chunks(4)
        .filter(|p| p[..3] != [255, 255, 255])
        .count();
    assert!(inked > 100, "{inked} pixels drawn");
}

/// A program that gives a name the forms call another meaning keeps its drawing in Scheme.
#[test]
fn a_program_that_redefines_a_primitive_keeps_its_drawing_in_scheme() {
    let text = std::fs::read_to_string("examples/paper/lineplot.voml").unwrap();
    for (name, definition) in [
        ("nth", "(define (nth n l) (list-ref l 0))"),
        ("alist-for-each", "(define (alist-for-each f l) #t)"),
        ("length", "(define (length l) 1)"),
    ] {
        let changed = text.replace("<utility-code>", &format!("<utility-code>\n{definition}\n"));
        let vo = compile_text("examples/paper/lineplot.voml", &changed);
        assert!(
            vo.ir_components[0].phase1_native.is_none(),
            "{name} redefined"
        );
    }
}

/// An IR component's forms that read or assign what is not the component's, use slots they
/// do not declare, or call a primitive with the wrong arguments are refused with the `.vo`.
#[test]
fn a_native_part_outside_its_component_is_refused() {
    let vo = compile_spec(Path::new("examples/paper/lineplot.voml"));
    assert!(vo.validate().is_ok());
    let broken = |change: &dyn Fn(&mut Vec<Form>, &mut u32)| {
        let mut vo = vo.clone();
        let native = vo.ir_components[0].phase1_native.as_mut().unwrap();
        change(&mut native.forms, &mut native.locals);
        vo.validate()
            .expect_err("refused")
            .iter()
            .map(|e| e.message.clone())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let e = broken(&|forms, _| {
        forms.push(Form::Global {
            name: "info/other".into(),
        })
    });
    assert!(
        e.contains("`info/other` is not one of the component's structures"),
        "{e}"
    );
    let e = broken(&|_, locals| *locals = 2);
    assert!(e.contains("refers to slot 2, but there are 2"), "{e}");
    let e = broken(&|forms, _| {
        forms.push(Form::Call {
            op: voml_ir::RenderOp::Beep,
            args: vec![Form::Int { value: 1 }],
        })
    });
    assert!(e.contains("count of arguments"), "{e}");
    let e = broken(&|forms, _| {
        let mut deep = Form::Int { value: 1 };
        for _ in 0..100 {
            deep = Form::Begin { forms: vec![deep] };
        }
        forms.push(deep)
    });
    assert!(e.contains("nests forms more than"), "{e}");
}

/// Writes random drawing parts over the structures: `$0` (the latest time), `$1` (an
/// association list of vectors the EP component keeps), `$2` (a vector), `$3` (a list of
/// colours), `%0` and `%1` (controls the parts assign).
struct Parts {
    rng: support::Rng,
}

impl Parts {
    fn leaf(&mut self) -> String {
        match self.rng.below(24) {
            0 => format!("{}", self.rng.below(9) as i64 - 4),
            1 => ["2.5", "-0.5", "0.0", "1e300"][self.rng.below(4)].into(),
            2 => ["\"red\"", "\"s\"", "#t", "#f"][self.rng.below(4)].into(),
            3 | 4 => ["$0", "%0", "%1"][self.rng.below(3)].into(),
            5 => format!("(vector-ref $2 {})", self.rng.below(6) as i64 - 1),
            6 => "(length $1)".into(),
            7 => "(length $3)".into(),
            8 => format!("(nth {} $3)", self.rng.below(5) as i64 - 1),
            9 => "(car $1)".into(),
            10 => "(cdr $3)".into(),
            11 => "(car (cdr $3))".into(),
            12 => "8388607".into(),
            // Mostly values every primitive takes.
            13..=17 => format!("{}", self.rng.below(4)),
            _ => ["$0", "2.5", "(vector-ref $2 1)"][self.rng.below(3)].into(),
        }
    }

    fn expr(&mut self, depth: usize) -> String {
        if depth == 0 || self.rng.below(3) == 0 {
            return self.leaf();
        }
        let d = depth - 1;
        match self.rng.below(12) {
            // A structure read by an argument before a later one assigns it.
            11 => format!("(+ %0 (begin (set! %0 {}) {}))", self.expr(d), self.expr(d)),
            9 => format!("(and {} {})", self.expr(d), self.expr(d)),
            10 => format!("(or {} {} {})", self.expr(d), self.expr(d), self.expr(d)),
            0 => format!("(+ {} {})", self.expr(d), self.expr(d)),
            1 => format!("(- {} {} {})", self.expr(d), self.expr(d), self.expr(d)),
            2 => format!("(* {} {})", self.expr(d), self.expr(d)),
            3 => {
                // (`<` written as XML wants it.)
                let op =
                    ["=", "&lt;", ">", "&lt;=", ">=", "lt", "gt", "le", "ge"][self.rng.below(9)];
                format!("({op} {} {})", self.expr(d), self.expr(d))
            }
            4 => {
                let op = ["quotient", "remainder", "modulo"][self.rng.below(3)];
                format!("({op} {} {})", self.expr(d), self.expr(d))
            }
            5 => format!("(not {})", self.expr(d)),
            6 => format!("(if {} {} {})", self.expr(d), self.expr(d), self.expr(d)),
            7 => format!("(let ((u {}) (w {})) (+ u w))", self.expr(d), self.expr(d)),
            _ => format!("(- {})", self.expr(d)),
        }
    }

    fn form(&mut self) -> String {
        match self.rng.below(12) {
            10 => format!(
                "(when {} (set! %0 {}) (set! %1 {}))",
                self.expr(2),
                self.expr(2),
                self.expr(1)
            ),
            11 => format!("(set! %0 (unless {} {}))", self.expr(2), self.expr(2)),
            0..=3 => format!("(set! %{} {})", self.rng.below(2), self.expr(3)),
            4 => "(if (= (modulo (length $1) 2) 0) (beep))".into(),
            5 | 6 => {
                // (Strings in attributes written as XML wants them.)
                let mut attr = || self.expr(1).replace('"', "&quot;");
                let (x0, y0, y1) = (attr(), attr(), attr());
                // A style worked out per line: mostly a colour of the list, now and then
                // anything (a colour that is not one, a number); thicknesses by a control.
                let anything = attr();
                let color = match self.rng.below(4) {
                    0 => anything,
                    _ => "(nth (modulo %1 3) $3)".into(),
                };
                let thick = match self.rng.below(3) {
                    0 => "(+ 1 (modulo %1 2))".to_string(),
                    _ => format!("{}", 1 + self.rng.below(3)),
                };
                format!(
                    "<line view=\"^0\" from=\"{x0} {y0}\" to=\"$0 {y1}\" color=\"{color}\" thick=\"{thick}\"/>"
                )
            }
            _ => format!(
                "(alist-for-each (lambda (k v) (set! %1 (+ %1 k)) (if (= $0 (vector-ref v 0)) <line view=\"^0\" from=\"0 0\" to=\"$0 (vector-ref v 1)\"/> (set! %0 {}))) $1)",
                self.expr(2)
            ),
        }
    }
}

/// Random drawing parts hold to what Scheme makes of them over random records: the same
/// pixels, beeps, structures and faults, with a good number of rounds evaluated natively.
/// (Most parts fail sooner or later, which disables the component: over 60 parts, 99–341
/// rounds of 1,080 run natively, depending on the seed, and 44–57 parts fail.)
#[test]
fn random_drawing_parts_end_as_scheme_does() {
    support::quiet_steel();
    let seed = support::fuzz_seed(0x0d2a_3e55);
    let mut gen = Parts {
        rng: support::Rng(seed | 1),
    };
    let (mut native_parts, mut ran_natively, mut faults) = (0, 0, 0);
    for round in 0..60 {
        let n = 1 + gen.rng.below(4);
        let body: Vec<String> = (0..n).map(|_| gen.form()).collect();
        let text = format!(
            r#"<voml><body><visual-object name="random">
              <event-declarations>
                <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="k" type="int"/><data-field name="y" type="any"/></data-event>
              </event-declarations>
              <info-structures>
                <variable name="t" type="real"/>
                <variable name="alist" type="list"/>
                <variable name="xs" type="vector" init="(1 2.5 -3 7)"/>
                <variable name="colours" type="list" init='("red" "blue" "green")'/>
              </info-structures>
              <control-structures>
                <variable name="n" type="any" init="0"/>
                <variable name="m" type="any" init="1"/>
              </control-structures>
              <view-initializations>
                <view name="v" window="60 40" world="0 10 -5 5"/>
              </view-initializations>
              <event-processing>
                <ep-component name="keep" inputs="e.ts.k.y" infos="t alist">
                  <input name="^0">(set! $0 ^0/0) (set! $1 (id-put $1 ^0/1 (vector ^0/0 ^0/2)))</input>
                </ep-component>
              </event-processing>
              <info-rendition>
                <ir-component name="draw" views="v" infos="t alist xs colours" controls="n m">{}</ir-component>
              </info-rendition>
            </visual-object></body></voml>"#,
            body.join("\n")
        );
        let vo = compile_text("random.voml", &text);
        if vo.ir_components[0].phase1_native.is_some() {
            native_parts += 1;
        } else if std::env::var("SHOW").is_ok() {
            eprintln!("NOT NATIVE:\n{}", body.join("\n"));
        }
        let trace = support::random_records(&mut gen.rng);
        let [(native, rounds), (scheme, _)] = both_ways(&vo, trace.as_bytes(), &["t", "n", "m"]);
        assert_eq!(
            native, scheme,
            "seed {seed}, round {round}:\n{text}\n{trace}"
        );
        ran_natively += rounds;
        faults += native.faults.len();
    }
    eprintln!(
        "{native_parts} native parts of 60; {ran_natively} rounds ran natively; {faults} faults"
    );
    assert!(native_parts >= 50, "{native_parts}");
    assert!(ran_natively > 50, "{ran_natively}");
    assert!(
        faults > 3,
        "{faults}: the parts fail now and then, as Scheme does"
    );
}
