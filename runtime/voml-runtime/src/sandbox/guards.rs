//! Caps on the built-ins that could allocate or compute without bound in one native call,
//! where the watchdog cannot interrupt them (it stops the engine between instructions only):
//! each guard checks its arguments and refuses with a located Scheme error before the
//! original runs.

use std::sync::Arc;

use steel::rerrs::ErrorKind;
use steel::rvals::SteelVal;
use steel::steel_vm::engine::Engine;
use steel::SteelErr;

/// Most elements one call may create (vectors, strings in characters, ranges, appended
/// lists): 4 Mi, i.e. 64 MiB of vector slots.
pub const MAX_ELEMENTS: usize = 1 << 22;
/// Most bytes a string built by one call may hold: 16 MiB.
pub const MAX_STRING_BYTES: usize = 1 << 24;
/// Most bits of an exact integer that `expt` may compute or `number->string` may print:
/// 1 Mi bits, about 315,000 decimal digits.
pub const MAX_BITS: u64 = 1 << 20;

fn refuse(name: &str, why: String) -> SteelErr {
    SteelErr::new(
        ErrorKind::Generic,
        format!("{name}: {why} (visual objects are limited so that one call cannot exhaust the machine)"),
    )
}

/// A native built-in, as something a guard may hold (steel values are not `Send`).
#[derive(Clone)]
enum Native {
    Plain(steel::rvals::FunctionSignature),
    Mut(steel::rvals::MutFunctionSignature),
    Boxed(BoxedNative),
}

type BoxedNative = Arc<dyn Fn(&[SteelVal]) -> Result<SteelVal, SteelErr> + Send + Sync>;

impl Native {
    fn of(v: &SteelVal) -> Option<Native> {
        match v {
            SteelVal::FuncV(f) => Some(Native::Plain(*f)),
            SteelVal::MutFunc(f) => Some(Native::Mut(*f)),
            SteelVal::BoxedFunction(f) => Some(Native::Boxed(f.function.clone())),
            _ => None,
        }
    }

    fn call(&self, args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
        match self {
            Native::Plain(f) => f(args),
            Native::Mut(f) => f(&mut args.to_vec()),
            Native::Boxed(f) => f(args),
        }
    }
}

/// Bits of an exact integer's magnitude (0 for anything else).
fn bits(v: &SteelVal) -> u64 {
    match v {
        SteelVal::IntV(i) => u64::from(isize::BITS - i.unsigned_abs().leading_zeros()),
        SteelVal::BigNum(b) => b.bits(),
        _ => 0,
    }
}

fn is_exact(v: &SteelVal) -> bool {
    matches!(
        v,
        SteelVal::IntV(_) | SteelVal::BigNum(_) | SteelVal::Rational(_) | SteelVal::BigRational(_)
    )
}

fn count(name: &str, v: Option<&SteelVal>, what: &str) -> Result<(), SteelErr> {
    if let Some(SteelVal::IntV(n)) = v {
        if *n < 0 {
            return Err(refuse(
                name,
                format!("{n} {what}: a count cannot be negative"),
            ));
        }
        if *n > MAX_ELEMENTS as isize {
            return Err(refuse(
                name,
                format!("{n} {what} is more than the {MAX_ELEMENTS} one call may create"),
            ));
        }
    }
    if let Some(SteelVal::BigNum(_)) = v {
        return Err(refuse(
            name,
            format!("a {what} count this large is not allowed"),
        ));
    }
    Ok(())
}

fn expt(args: &[SteelVal]) -> Result<(), SteelErr> {
    let [base, exponent] = args else {
        return Ok(());
    };
    if !is_exact(base) {
        return Ok(());
    }
    // 0, 1 and -1 stay small whatever the exponent.
    if matches!(base, SteelVal::IntV(-1..=1)) {
        return Ok(());
    }
    let base_bits = match base {
        SteelVal::Rational(r) => {
            let n = r.numer().unsigned_abs().max(r.denom().unsigned_abs());
            u64::from(u32::BITS - n.leading_zeros())
        }
        SteelVal::BigRational(r) => r.numer().bits().max(r.denom().bits()),
        other => bits(other),
    };
    let too_big = match exponent {
        SteelVal::IntV(e) => base_bits.saturating_mul(e.unsigned_abs() as u64) > MAX_BITS,
        SteelVal::BigNum(_) => true,
        _ => false,
    };
    if too_big {
        return Err(refuse(
            "expt",
            format!("the exact result would have more than {MAX_BITS} bits; use an inexact base (e.g. 3.0)"),
        ));
    }
    Ok(())
}

fn arithmetic_shift(args: &[SteelVal]) -> Result<(), SteelErr> {
    match args {
        [SteelVal::IntV(n), SteelVal::IntV(m)] => {
            let room = if *n == 0 {
                63
            } else {
                i64::from(n.unsigned_abs().leading_zeros()) - 1
            };
            if *m > room as isize || *m < -63 {
                return Err(refuse(
                    "arithmetic-shift",
                    format!("shifting {n} by {m} leaves the range of fixed-size integers"),
                ));
            }
            Ok(())
        }
        [_, _] => Ok(()),
        _ => Err(refuse(
            "arithmetic-shift",
            format!("expects 2 integers, got {} arguments", args.len()),
        )),
    }
}

fn string_append(args: &[SteelVal]) -> Result<(), SteelErr> {
    let total: usize = args
        .iter()
        .map(|a| match a {
            SteelVal::StringV(s) => s.len(),
            _ => 0,
        })
        .sum();
    if total > MAX_STRING_BYTES {
        return Err(refuse(
            "string-append",
            format!("the result would hold {total} bytes, more than {MAX_STRING_BYTES}"),
        ));
    }
    Ok(())
}

fn string_of(v: Option<&SteelVal>) -> Option<&str> {
    match v {
        Some(SteelVal::StringV(s)) => Some(s.as_str()),
        _ => None,
    }
}

fn string_join(args: &[SteelVal]) -> Result<(), SteelErr> {
    let Some(SteelVal::ListV(parts)) = args.first() else {
        return Ok(());
    };
    let separator = string_of(args.get(1)).map_or(0, str::len);
    let total = parts
        .iter()
        .map(|p| string_of(Some(p)).map_or(0, str::len))
        .sum::<usize>()
        .saturating_add(separator.saturating_mul(parts.len().saturating_sub(1)));
    if total > MAX_STRING_BYTES {
        return Err(refuse(
            "string-join",
            format!("the result would hold {total} bytes, more than {MAX_STRING_BYTES}"),
        ));
    }
    Ok(())
}

fn string_replace(args: &[SteelVal]) -> Result<(), SteelErr> {
    let (Some(text), Some(from), Some(to)) = (
        string_of(args.first()),
        string_of(args.get(1)),
        string_of(args.get(2)),
    ) else {
        return Ok(());
    };
    let times = if from.is_empty() {
        text.chars().count() + 1
    } else {
        text.matches(from).count()
    };
    let total = text
        .len()
        .saturating_add(times.saturating_mul(to.len()))
        .saturating_sub(times.saturating_mul(from.len()));
    if total > MAX_STRING_BYTES {
        return Err(refuse(
            "string-replace",
            format!("the result would hold {total} bytes, more than {MAX_STRING_BYTES}"),
        ));
    }
    Ok(())
}

fn append(args: &[SteelVal]) -> Result<(), SteelErr> {
    let total: usize = args
        .iter()
        .map(|a| match a {
            SteelVal::ListV(l) => l.len(),
            _ => 0,
        })
        .sum();
    if total > MAX_ELEMENTS {
        return Err(refuse(
            "append",
            format!("the result would hold {total} elements, more than {MAX_ELEMENTS}"),
        ));
    }
    Ok(())
}

fn range(args: &[SteelVal]) -> Result<(), SteelErr> {
    let (lo, hi) = match args {
        [SteelVal::IntV(hi)] => (0, *hi),
        [SteelVal::IntV(lo), SteelVal::IntV(hi)] => (*lo, *hi),
        _ => return Ok(()),
    };
    if hi.saturating_sub(lo) > MAX_ELEMENTS as isize {
        return Err(refuse(
            "range",
            format!(
                "{} elements is more than the {MAX_ELEMENTS} one call may create",
                hi.saturating_sub(lo)
            ),
        ));
    }
    Ok(())
}

fn number_to_string(args: &[SteelVal]) -> Result<(), SteelErr> {
    match args.first() {
        Some(v @ SteelVal::BigNum(_)) if bits(v) > MAX_BITS => Err(refuse(
            "number->string",
            format!(
                "the number has {} bits, more than the {MAX_BITS} that may be printed",
                bits(v)
            ),
        )),
        _ => Ok(()),
    }
}

/// Most nodes and depth of a value used as a hash key: steel hashes keys recursively, so a
/// deep or cyclic key (a vector that contains itself) would overflow the stack.
const MAX_KEY_NODES: usize = 4096;
const MAX_KEY_DEPTH: usize = 64;

/// Refuses a hash key that is deep, cyclic, huge or of a kind that cannot be hashed safely.
fn key(name: &str, key: &SteelVal) -> Result<(), SteelErr> {
    let bad = |why: &str| {
        Err(refuse(
            name,
            format!("a hash key must be a number, string, symbol, character or a small list or vector of them ({why})"),
        ))
    };
    if is_atom(key) {
        return Ok(());
    }
    let mut stack = vec![(key.clone(), 0usize)];
    let mut nodes = 0;
    while let Some((v, depth)) = stack.pop() {
        nodes += 1;
        if nodes > MAX_KEY_NODES {
            return bad("this one is too large");
        }
        if depth > MAX_KEY_DEPTH {
            return bad("this one nests too deep, or contains itself");
        }
        match &v {
            v if is_atom(v) => {}
            SteelVal::ListV(l) => stack.extend(l.iter().map(|x| (x.clone(), depth + 1))),
            SteelVal::VectorV(items) => stack.extend(items.iter().map(|x| (x.clone(), depth + 1))),
            SteelVal::MutableVector(items) => {
                items.borrow(|items| stack.extend(items.iter().map(|x| (x.clone(), depth + 1))))
            }
            SteelVal::Pair(p) => {
                stack.push((p.car(), depth + 1));
                stack.push((p.cdr(), depth + 1));
            }
            _ => return bad("not this kind of value"),
        }
    }
    Ok(())
}

fn is_atom(v: &SteelVal) -> bool {
    matches!(
        v,
        SteelVal::IntV(_)
            | SteelVal::NumV(_)
            | SteelVal::BoolV(_)
            | SteelVal::CharV(_)
            | SteelVal::StringV(_)
            | SteelVal::SymbolV(_)
            | SteelVal::BigNum(_)
            | SteelVal::Rational(_)
            | SteelVal::BigRational(_)
            | SteelVal::Void
    )
}

fn keys_at(
    name: &'static str,
    args: &[SteelVal],
    positions: impl Iterator<Item = usize>,
) -> Result<(), SteelErr> {
    for i in positions {
        if let Some(k) = args.get(i) {
            key(name, k)?;
        }
    }
    Ok(())
}

type Check = fn(&[SteelVal]) -> Result<(), SteelErr>;

/// Native built-ins with a check before the call.
const NATIVE: &[(&str, Check)] = &[
    ("expt", expt),
    ("arithmetic-shift", arithmetic_shift),
    ("string-append", string_append),
    ("append", append),
    ("range", range),
    ("number->string", number_to_string),
    ("make-string", |a| {
        count("make-string", a.first(), "characters")
    }),
    ("string-join", string_join),
    ("string-replace", string_replace),
    ("hash", |a| keys_at("hash", a, (0..a.len()).step_by(2))),
    ("hashset", |a| keys_at("hashset", a, 0..a.len())),
    ("hash-insert", |a| keys_at("hash-insert", a, 1..2)),
    ("hash-ref", |a| keys_at("hash-ref", a, 1..2)),
    ("hash-get", |a| keys_at("hash-get", a, 1..2)),
    ("hash-try-get", |a| keys_at("hash-try-get", a, 1..2)),
    ("hash-contains?", |a| keys_at("hash-contains?", a, 1..2)),
    ("hash-remove", |a| keys_at("hash-remove", a, 1..2)),
    ("hashset-insert", |a| keys_at("hashset-insert", a, 1..2)),
    ("hashset-contains?", |a| {
        keys_at("hashset-contains?", a, 1..2)
    }),
];

/// Replaces each guarded native built-in by its guard. Built-ins that need the VM itself
/// (`make-vector`, `vector-append`) are guarded in Scheme by [`SCHEME`] instead.
pub fn install(engine: &mut Engine) {
    for (name, check) in NATIVE {
        let Some(original) = engine
            .extract_value(name)
            .ok()
            .as_ref()
            .and_then(Native::of)
        else {
            // A steel that made it something else: better refused than unguarded.
            engine.register_value(name, super::denial(name));
            continue;
        };
        let check = *check;
        let guarded = SteelVal::anonymous_boxed_function(Arc::new(move |args: &[SteelVal]| {
            check(args)?;
            original.call(args)
        }));
        engine.register_value(name, guarded);
    }
    engine.register_value("#%voml-check-count", SteelVal::FuncV(check_count));
    // The guarded `abs` ([`install_abs`]) for the visual object's code.
    match engine.extract_value(ABS) {
        Ok(abs) => engine.register_value("abs", abs),
        Err(_) => engine.register_value("abs", super::denial("abs")),
    };
}

/// The guarded `abs`, under an internal name the standard library's `gcd` and `lcm` call.
const ABS: &str = "#%voml-abs";

/// steel's `abs` overflows on the most negative fixnum and on a rational whose numerator
/// is the most negative 32-bit integer: a release build answers the argument itself (a
/// negative absolute value, and `gcd` and `lcm`, written with `abs`, wrong too), a debug
/// build panics. Those two are negated by `-`, which promotes to a big number; the rest go
/// to the original. Bound to [`ABS`] before the standard library is compiled (see
/// [`mend_library`]), and to `abs` by [`install`].
pub fn install_abs(engine: &mut Engine) {
    let native = |engine: &Engine, name: &str| {
        engine
            .extract_value(name)
            .ok()
            .as_ref()
            .and_then(Native::of)
    };
    let (Some(abs), Some(minus)) = (native(engine, "abs"), native(engine, "-")) else {
        engine.register_value(ABS, super::denial("abs"));
        return;
    };
    let guarded =
        SteelVal::anonymous_boxed_function(Arc::new(move |args: &[SteelVal]| match args {
            [SteelVal::IntV(isize::MIN)] => minus.call(args),
            [SteelVal::Rational(r)] if *r.numer() == i32::MIN => minus.call(args),
            _ => abs.call(args),
        }));
    engine.register_value(ABS, guarded);
}

/// steel's standard library (or the part of it a run compiles) with `gcd` and `lcm`
/// calling the guarded `abs`: compiled after the library's `(require-builtin steel/base)`,
/// a call to `abs` is a call to steel's own function, whatever `abs` is bound to later.
pub fn mend_library(text: &str) -> String {
    text.replace("[(= b 0) (abs a)]", &format!("[(= b 0) ({ABS} a)]"))
        .replace("(abs (* b (floor", &format!("({ABS} (* b (floor"))
}

/// `(#%voml-check-count name n)`: refuses counts above [`MAX_ELEMENTS`].
fn check_count(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    let name = match args.first() {
        Some(SteelVal::SymbolV(s)) => s.as_str().to_string(),
        _ => "?".into(),
    };
    count(&name, args.get(1), "elements")?;
    Ok(SteelVal::Void)
}

/// The originals of the built-ins guarded in Scheme, kept under internal names (a unit of
/// its own: a definition shadows its name in the whole unit it is compiled in).
pub const ORIGINALS: &str = r#"
(define #%voml-make-vector make-vector)
(define #%voml-vector-append vector-append)
"#;

/// Guards written in Scheme for built-ins that need the VM.
pub const SCHEME: &str = r#"
(define (make-vector n . fill)
  (#%voml-check-count 'make-vector n)
  (if (null? fill) (#%voml-make-vector n) (#%voml-make-vector n (car fill))))
(define (vector-append . vectors)
  (#%voml-check-count 'vector-append
                      (foldl (lambda (v total) (+ total (vector-length v))) 0 vectors))
  (apply #%voml-vector-append vectors))
;; Several values: a vector of this procedure (which VO code cannot name) and their list.
(define (#%voml-several-values) 'values)
(define (values . results)
  (if (and (pair? results) (null? (cdr results)))
      (car results)
      (vector #%voml-several-values results)))
(define (call-with-values producer consumer)
  (let ((results (producer)))
    (if (and (vector? results) (= (vector-length results) 2)
             (eq? (vector-ref results 0) #%voml-several-values))
        (apply consumer (vector-ref results 1))
        (consumer results))))
"#;

#[cfg(test)]
mod tests {
    use super::super::{Prelude, Sandbox};

    /// What `code` gives in the whole library's engine and in one a run builds for it.
    fn values(code: &str) -> [String; 2] {
        let _reading = voml_ir::steel_parse_lock();
        let whole = Sandbox::new(|_| Ok(())).expect("builds");
        let part = Sandbox::with_prelude(Prelude::For(&[code]), |_| Ok(())).expect("builds");
        [whole, part].map(|mut sandbox| {
            let values = sandbox
                .engine
                .compile_and_run_raw_program(code.to_owned())
                .unwrap_or_else(|e| panic!("{code}: {e}"));
            values.last().expect("a value").to_string()
        })
    }

    /// The absolute value of the most negative fixnum (and of a rational with the most
    /// negative numerator) is positive, and `gcd` and `lcm` written with it are right.
    #[test]
    fn abs_gcd_and_lcm_of_the_most_negative_numbers_are_right() {
        let min = "(- 0 9223372036854775807 1)";
        for (code, expected) in [
            (format!("(abs {min})"), "9223372036854775808"),
            (format!("(gcd {min} 0)"), "9223372036854775808"),
            (format!("(gcd 0 {min})"), "9223372036854775808"),
            (format!("(lcm {min} 3)"), "27670116110564327424"),
            ("(abs (/ -2147483648 3))".into(), "2147483648/3"),
            ("(abs -5)".into(), "5"),
            ("(abs 7)".into(), "7"),
            ("(abs (/ -1 3))".into(), "1/3"),
            ("(abs -2.5)".into(), "2.5"),
            ("(abs (- 0 (expt 2 70)))".into(), "1180591620717411303424"),
        ] {
            assert_eq!(values(&code), [expected; 2], "{code}");
        }
    }

    /// A list `take` cut where one of its nodes ends reverses to its elements, not to a
    /// list `pair?` and `for-each` find empty. (A list consed onto while shared grows nodes
    /// of a few elements: cut after 3, 6 and 9 of its 12, the released list library's
    /// `take` fails; mended in vendor/im-lists.)
    #[test]
    fn a_list_taken_where_a_node_ends_reverses_whole() {
        let build = "(define l '()) (define (grow! i) (if (< i 12) (begin (let ((shared l)) \
                     (set! l (cons i shared))) (grow! (+ i 1))))) (grow! 0)";
        let walk = "(define (walk x) (if (pair? x) (+ 1 (walk (cdr x))) 0))";
        for n in 0..=13 {
            let expected = n.min(12);
            let taken = format!("(take l {n})");
            let code = format!(
                "{build} {walk} (list (walk (reverse {taken})) (length (reverse {taken})) \
                 (null? (reverse {taken})) (let ((c 0)) (for-each (lambda (x) (set! c (+ c 1))) \
                 (reverse {taken})) c))"
            );
            let empty = if expected == 0 { "#true" } else { "#false" };
            let want = format!("({expected} {expected} {empty} {expected})");
            assert_eq!(values(&code), [want.as_str(); 2], "{taken}");
        }
    }

    /// `apply` puts leading arguments before a list that `cdr` or `list-tail` made (steel's
    /// lost the first leading argument and brought back an element the `cdr` had left, until
    /// its lists' `cons` was mended in vendor/im-lists),
    /// passes a lone list as it is, and still calls in tail position: a loop of 100,000
    /// rounds through `apply` ends.
    #[test]
    fn apply_puts_leading_arguments_before_any_list() {
        for (code, expected) in [
            ("(apply list -1 (cdr (list 1 2 3)))", "(-1 2 3)"),
            ("(apply + 100 (cdr (list 1 2 3)))", "105"),
            (
                "(apply list 'a 'b (list-tail (list 1 2 3 4) 2))",
                "(a b 3 4)",
            ),
            ("(apply list (cdr (list 1 2 3)))", "(2 3)"),
            ("(apply + 1 2 '())", "3"),
            ("(apply max 4 (list 9 2))", "9"),
            (
                "(define (down n) (if (= n 0) 'done (apply down (list (- n 1))))) (down 100000)",
                "done",
            ),
        ] {
            assert_eq!(values(code), [expected; 2], "{code}");
        }
    }
    /// Consing onto a list another list shares, at every point a `cdr` can leave it (inside
    /// a node and at its edges), gives the new element then the shared list, and leaves the
    /// shared list as it was; several versions made from one list stay apart. (steel's
    /// lists, im-lists, are patched to put a new node in front of a shared node instead of
    /// copying it: see vendor/im-lists/PATCHES.md.)
    #[test]
    fn consing_onto_a_shared_list_anywhere_gives_that_list_after_the_new_element() {
        let build =
            "(define base (let up ((i 39) (l '())) (if (< i 0) l (up (- i 1) (cons i l)))))";
        let walk = "(define (walk x) (if (pair? x) (+ 1 (walk (cdr x))) 0))";
        for k in 0..=40 {
            let rest: Vec<String> = (k..40).map(|i| i.to_string()).collect();
            let with = |head: &str| {
                std::iter::once(head.to_string())
                    .chain(rest.iter().cloned())
                    .collect::<Vec<_>>()
            };
            let code = format!(
                "{build} {walk} (define v (list-tail base {k})) (define a (cons 'a v)) \
                 (define b (cons 'b v)) (define c (cons 'c a)) \
                 (list a b c (reverse a) (length b) (walk c) (list->vector b) (apply list 'z v) \
                 (equal? base (range 0 40)))"
            );
            let a = with("a");
            let b = with("b");
            let c: Vec<String> = std::iter::once("c".to_string())
                .chain(a.iter().cloned())
                .collect();
            let reversed: Vec<String> = a.iter().rev().cloned().collect();
            let z = with("z");
            let want = format!(
                "(({}) ({}) ({}) ({}) {} {} #({}) ({}) #true)",
                a.join(" "),
                b.join(" "),
                c.join(" "),
                reversed.join(" "),
                b.len(),
                c.len(),
                b.join(" "),
                z.join(" ")
            );
            assert_eq!(values(&code), [want.as_str(); 2], "cut at {k}");
        }
    }
    /// Versions of a list of vectors that share its tail stay whole through the engine's
    /// full collections: 60,000 live vectors (the collector runs twice while they are made),
    /// a version kept every 2,000, each then summed. (steel's mark walks each
    /// list node once per collection, patched: see vendor/steel-core/PATCHES.md.)
    #[test]
    fn shared_list_tails_survive_full_collections() {
        let code = "(define (sum l) (let add ((l l) (s 0)) (if (null? l) s (add (cdr l) (+ s (vector-ref (car l) 0))))))
                    (define kept '())
                    (define base (let up ((i 0) (l '()))
                      (if (= i 60000) l
                          (let ((l (cons (vector i) l)))
                            (if (= (remainder (+ i 1) 2000) 0)
                                (set! kept (cons (cons (vector (- (quotient i 2000))) (cdr l)) kept)))
                            (up (+ i 1) l)))))
                    (list (length kept) (let total ((k kept) (s 0)) (if (null? k) s (total (cdr k) (+ s (sum (car k)))))) (sum base))";
        let total: i64 = (0..30i64)
            .map(|k| {
                let n = 2000 * (k + 1);
                -k + (n - 2) * (n - 1) / 2
            })
            .sum();
        let want = format!("(30 {total} {})", 59_999i64 * 60_000 / 2);
        assert_eq!(values(code), [want.as_str(); 2]);
    }
    /// `values` and `call-with-values` as R7RS has them: one value is that value, and a
    /// list a producer returns is one value, not several. (steel's `values` is `list`, and its
    /// `call-with-values` took a one-element result apart and any list for several values:
    /// `(call-with-values (lambda () (values 7)) list)` gave `7`.)
    #[test]
    fn call_with_values_passes_each_value_and_a_list_as_one() {
        for (code, expected) in [
            ("(call-with-values (lambda () (values 7)) list)", "(7)"),
            ("(call-with-values (lambda () (values 1 2)) list)", "(1 2)"),
            ("(call-with-values (lambda () (values 1 2 3)) +)", "6"),
            ("(call-with-values (lambda () (values)) list)", "()"),
            ("(call-with-values (lambda () (list 1 2)) list)", "((1 2))"),
            (
                "(call-with-values (lambda () 5) (lambda (x) (* x x)))",
                "25",
            ),
            ("(+ 1 (values 2))", "3"),
            (
                "(call-with-values (lambda () (values '(a) 'b)) cons)",
                "((a) . b)",
            ),
        ] {
            assert_eq!(values(code), [expected; 2], "{code}");
        }
    }
}
