//! Bombs: visual-object code that tries to exhaust time, memory or the stack in one native
//! call, over many events, or at load. Each one must end quickly with a fault located in
//! the `.voml` file (or a load error), never hang, abort or panic, and the process's heap
//! must stay under the documented ceiling (1 GiB resident at the peak). One test runs them in turn, so that the heap's
//! peak is theirs alone.

mod support;

use std::time::{Duration, Instant};

use support::{compile_text, quiet_steel, replay_bytes};
use voml_runtime::{Config, FaultKind, Runtime};

fn spec(utility: &str, code: &str) -> String {
    support::one_part_spec("bomb", "hoard", utility, code)
}

struct Outcome {
    /// Load error or faults, rendered.
    report: String,
    kinds: Vec<FaultKind>,
    took: Duration,
    /// The variable the code sets, at the end.
    hoard: Option<String>,
}

fn detonate(utility: &str, code: &str, records: usize, config: Config) -> Outcome {
    quiet_steel();
    let vo = compile_text("bomb.voml", &spec(utility, code));
    let started = Instant::now();
    let mut rt = match Runtime::headless(vo, config) {
        Ok(rt) => rt,
        Err(e) => {
            return Outcome {
                report: format!("load error: {e}"),
                kinds: Vec::new(),
                took: started.elapsed(),
                hoard: None,
            }
        }
    };
    let trace: String = (0..records)
        .map(|i| format!("-3 1 {}.5 0 0 0\n", i))
        .collect();
    replay_bytes(&mut rt, trace.as_bytes(), "bomb.trf", false);
    Outcome {
        report: rt
            .faults()
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        kinds: rt.faults().iter().map(|f| f.kind).collect(),
        took: started.elapsed(),
        hoard: rt.variable("hoard"),
    }
}

#[test]
fn bombs_end_quickly_with_located_faults_and_bounded_memory() {
    let small = || Config {
        budget: Duration::from_secs(3),
        memory_limit: 64 << 20,
        ..Config::default()
    };
    let mut problems = Vec::new();
    // (what, utility code, input part, records, config, expected words in the report)
    let cases: Vec<(&str, &str, &str, usize, Config, &str)> = vec![
        ("expt", "", "(set! $0 (expt 3 200000000))", 1, Config::default(), "expt"),
        ("expt with a huge exponent", "", "(set! $0 (expt 7 99999999999999999999))", 1, Config::default(), "expt"),
        ("make-vector", "", "(set! $0 (make-vector 1000000000 0))", 1, Config::default(), "make-vector"),
        ("make-string", "", "(set! $0 (make-string 1000000000 #\\a))", 1, Config::default(), "make-string"),
        ("range", "", "(set! $0 (range 0 1000000000))", 1, Config::default(), "range"),
        ("vector-append", "", "(set! $0 (let ((v (make-vector 4000000 0))) (vector-append v v v)))", 1, Config::default(), "vector-append"),
        ("arithmetic-shift", "", "(set! $0 (arithmetic-shift 1 100))", 1, Config::default(), "arithmetic-shift"),
        ("string doubling", "", "(set! $0 (let loop ((s \"x\")) (loop (string-append s s))))", 1, Config::default(), "string-append"),
        ("list doubling", "", "(set! $0 (let loop ((l (list 1))) (loop (append l l))))", 1, Config::default(), "bomb.voml"),
        ("bignum to text", "", "(set! $0 (number->string (let loop ((n 3) (i 0)) (if (= i 20) n (loop (* n n) (+ i 1))))))", 1, small(), "number->string"),
        ("consing without end", "", "(set! $0 (let loop ((l '())) (loop (cons (vector 1 2 3) l))))", 1, small(), "memory ceiling"),
        ("hoarding over many events", "", "(set! $0 (cons (make-vector 1000000 0) $0))", 200, small(), "memory ceiling"),
        ("deep recursion", "(define (deep n) (if (= n 0) 0 (+ 1 (deep (- n 1)))))", "(set! $0 (deep 100000000))", 1, small(), "bomb.voml"),
        ("an endless loop in utility code", "(define stuck (let loop ((i 0)) (loop (+ i 1))))", "(set! $0 1)", 1, Config { budget: Duration::from_millis(300), ..Config::default() }, "budget"),
        ("a hash key that contains itself", "", "(set! $0 (let ((v (vector 1))) (vector-set! v 0 v) (hash-insert (hash) v 1)))", 1, Config::default(), "hash key"),
        ("a deep hash key", "", "(set! $0 (hash (let loop ((i 0) (k '())) (if (= i 100000) k (loop (+ i 1) (list k)))) 1))", 1, Config::default(), "hash key"),
        ("string-join with a huge separator", "", "(set! $0 (string-join (range 0 1000) (make-string 1000000 #\\a)))", 1, Config::default(), "string-join"),
        ("string-replace blow-up", "", "(set! $0 (string-replace (make-string 1000000 #\\a) \"a\" (make-string 1000 #\\b)))", 1, Config::default(), "string-replace"),
        ("reading standard input", "", "(set! $0 (read-line))", 1, Config::default(), "`read-line` is not defined"),
        ("read", "", "(set! $0 (read))", 1, Config::default(), "`read` is not defined"),
        ("read-char", "", "(set! $0 (read-char))", 1, Config::default(), "`read-char` is not defined"),
    ];
    for (what, utility, code, records, config, expected) in cases {
        let outcome = detonate(utility, code, records, config);
        println!("{what} ({:?}): {}", outcome.took, outcome.report);
        if outcome.took > Duration::from_secs(5) {
            problems.push(format!("{what}: took {:?}", outcome.took));
        }
        if outcome.report.is_empty() {
            problems.push(format!("{what}: no fault"));
        } else if !outcome.report.contains(expected) || !outcome.report.contains("bomb.voml:") {
            problems.push(format!(
                "{what}: the report does not say `{expected}` at a place in bomb.voml:\n{}",
                outcome.report
            ));
        }
        if expected == "memory ceiling" && !outcome.kinds.contains(&FaultKind::Memory) {
            problems.push(format!("{what}: not a memory fault: {:?}", outcome.kinds));
        }
    }
    let peak = voml_runtime::memory::peak_resident().expect("the peak resident memory");
    if peak > 1 << 30 {
        problems.push(format!("the process held {} MiB at its peak", peak >> 20));
    }
    support::finish(problems);
}

/// A hand-made `.vo` whose program nests quotes ten thousand deep would overflow steel's
/// reader (it recurses on each prefix): the runtime refuses it before reading.
#[test]
fn deeply_quoted_code_in_a_compiled_vo_is_refused_not_overflowed() {
    quiet_steel();
    for prefix in ["'", "`", ",", "#;", "'(", "`(,"] {
        let mut vo = compile_text("deep.voml", &spec("", "(set! $0 1)"));
        let deep = format!(
            "\n(define deep {}x{})\n",
            prefix.repeat(10_000),
            ")".repeat(if prefix.ends_with('(') { 10_000 } else { 0 },)
        );
        vo.program.text.push_str(&deep);
        // On a thread with a small stack, as a window's worker or a test runner may have.
        let handle = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                Runtime::headless(vo, Config::default())
                    .err()
                    .map(|e| e.to_string())
            })
            .unwrap();
        let error = handle.join().expect("no overflow or panic");
        let error = error.unwrap_or_else(|| panic!("`{prefix}` x 10000 was accepted"));
        assert!(
            error.contains("nests") && error.contains("1000 deep"),
            "{prefix}: {error}"
        );
    }
}

/// What the runtime keeps for a visual object (drawing, sounds) is not the VO's heap: a long
/// run that redraws and sounds on every record stays far below a small ceiling.
#[test]
fn a_long_run_of_drawing_and_sound_is_not_charged_as_the_vos_memory() {
    quiet_steel();
    let vo = compile_text(
        "busy.voml",
        r#"<?xml version="1.0"?>
<voml><body><visual-object name="busy">
  <event-declarations>
    <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures><variable name="n" type="int" init="0"/></info-structures>
  <view-initializations><view name="v" window="200 100" world="0 10 0 1"/></view-initializations>
  <event-processing>
    <ep-component name="count" inputs="e.ts" infos="n">
      <input name="^0">(set! $0 (+ $0 1)) <tone freq="440" duration="0.001"/></input>
    </ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="show" views="v" infos="n" refresh="update">
      (let loop ((i 0))
        (if (lt i 10)
            (begin
              <text view="^0" coords="i 0.5" content="(number->string (+ $0 i))"/>
              (loop (+ i 1)))))
    </ir-component>
  </info-rendition>
</visual-object></body></voml>"#,
    );
    let config = Config {
        memory_limit: 2 << 20,
        ..Config::default()
    };
    let mut rt = Runtime::headless(vo, config).unwrap();
    let trace: String = (0..5000).map(|i| format!("-3 1 {}.5 0\n", i)).collect();
    replay_bytes(&mut rt, trace.as_bytes(), "busy.trf", false);
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    assert_eq!(rt.variable("n").as_deref(), Some("5000"));
}

/// steel keeps each self-recursive local procedure (a named `let`, an internal recursive
/// `define`, and `map`, `filter` and `sort`, written with them) in a heap box that its own
/// closure refers to; only the full collection frees it. Visual objects create them on every
/// record: over a long run the memory they hold stays flat, far below a small ceiling.
#[test]
fn recursive_local_procedures_made_on_every_record_do_not_pile_up() {
    quiet_steel();
    let utility = "(define (count-down x) (define (lp i) (if (> i 0) (lp (- i 1)) 0)) (lp x))";
    let code = "(set! $0 (let per ((k 0) (sum 0))
                  (if (= k 250)
                      (+ sum (length (filter odd? (map (lambda (x) (+ x 1)) (list 1 2 3)))))
                      (per (+ k 1) (+ sum (count-down 3) (letrec ((ev? (lambda (n) (if (= n 0) #t (od? (- n 1)))))
                                                                   (od? (lambda (n) (if (= n 0) #f (ev? (- n 1))))))
                                                            (if (ev? 4) 1 0)))))))";
    // 2,000 records, each making some 750 recursive local procedures and calling map and
    // filter: 1.5 million in all, some 200 MB if each were kept (steel 0.8.3 as released
    // passed the 24 MiB ceiling on record 306).
    assert_eq!(under_24_mib(utility, code, 2000), "251");
}

/// Runs `code` on `records` records under a 24 MiB ceiling: no fault, and what it left in
/// its variable.
fn under_24_mib(utility: &str, code: &str, records: usize) -> String {
    let config = Config {
        memory_limit: 24 << 20,
        ..Config::default()
    };
    let outcome = detonate(utility, code, records, config);
    assert!(outcome.report.is_empty(), "{}", outcome.report);
    outcome.hoard.expect("the variable")
}

/// Versions of a long list that differ in their first element — a path with a new head, a
/// queue without its first entry — share the rest: keeping one per record costs a few
/// bytes each, not a copy of the list's first node (which steel's lists grow to half the
/// list's length; the release of its list library copied it on every such `cons`).
#[test]
fn versions_of_a_long_list_share_what_they_have_in_common() {
    quiet_steel();
    let utility =
        "(define base (let up ((i 0) (l '())) (if (= i 20000) l (up (+ i 1) (cons i l)))))
                   (define kept '())";
    let code = "(set! kept (cons (cons ^0/0 (cdr base)) (cons (cons ^0/0 base) kept)))
                (set! $0 (list (length kept) (list-ref (car kept) 1) (list-ref (cadr kept) 1)))";
    // 3,000 records, each keeping two versions of a 20,000-element list: some 170 MB if
    // each copied the list's first node (the release passed the ceiling on record 194).
    assert_eq!(under_24_mib(utility, code, 3000), "(6000 19998 19999)");
}

/// A list whose element is a list held nowhere else, nested 200,000 deep, is dropped without
/// recursing down it (steel drops such lists with a queue; its shortcut for lists of plain
/// values, which drop without recursing, leaves them to the queue), and so is a long list of
/// plain values, and a list holding a chain of 200,000 pairs (its shortcut for entries of
/// association lists takes only pairs whose parts end there).
#[test]
fn lists_nested_deep_are_dropped_without_recursing() {
    quiet_steel();
    let code = "(set! $0 (let nest ((i 0) (l '())) (if (= i 200000) (length l) (nest (+ i 1) (list l)))))
                (set! $0 (+ $0 (length (let up ((i 0) (l '())) (if (= i 200000) l (up (+ i 1) (cons i l)))))))
                (set! $0 (+ $0 (length (list (let deep ((i 0) (p 0)) (if (= i 200000) p (deep (+ i 1) (cons p i))))))))";
    let config = Config {
        memory_limit: 24 << 20,
        budget: Duration::from_secs(5),
        ..Config::default()
    };
    let outcome = detonate("", code, 2, config);
    assert!(outcome.report.is_empty(), "{}", outcome.report);
    assert_eq!(outcome.hoard.as_deref(), Some("200002"));
}
