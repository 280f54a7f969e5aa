//! Conditions of `<before>` and `<after>` parts that are simple tests of the event, recognised
//! so that the runtime can decide them without calling Scheme for every event
//! ([`voml_ir::NativeCondition`]).
//!
//! Recognised, and nothing else (docs/ir.md lists the same):
//!
//! ```text
//! test    := #t | #f | (and test ...) | (or test ...) | (not test)
//!          | (OP operand operand)          at least one operand an element of the event
//!          | (let ((VAR event)) test)      VAR then stands for the event (also [VAR event])
//! OP      := = < > <= >= eqv? eq? equal? gt lt ge le
//! operand := integer | finite real | string | element
//! element := (car event) | (cadr event) | (caddr event) | (cadddr event)
//!          | (list-ref event N)            N an integer from 0 to MAX_FIELD_POSITION
//! event   := (current-event) | VAR
//! ```
//!
//! The code is read with steel's own lexer, so literals mean what the engine reads them as
//! (`#x10`, `1e3`, `"a\nb"`); rationals, big integers, characters, quoted data and every other
//! form stay Scheme-only. A test names globals (`car`, `=`, `gt`, `current-event`...) whose
//! meaning the program could change by defining or assigning them: [`bound_names`] finds the
//! names a program binds, and a test that rests on one of them is not used.

use std::collections::{BTreeSet, HashMap};

use steel_parser::lexer::TokenStream;
use steel_parser::tokens::{IntLiteral, NumberLiteral, Paren, RealLiteral, TokenType};
use voml_ir::{CompareOp, Operand, Test};

/// A condition recognised as a native test, and the global names its meaning rests on.
#[derive(Clone, Debug, PartialEq)]
pub struct Recognised {
    pub test: Test,
    pub names: BTreeSet<String>,
}

/// Every name the recogniser gives a meaning besides the event's ([`voml_ir::names_the_event`]): a
/// `let` variable spelled like one of them would change that meaning inside the `let`, so such
/// a `let` is left to Scheme.
const KNOWN: &[&str] = &[
    "and", "or", "not", "=", "<", ">", "<=", ">=", "eqv?", "eq?", "equal?", "gt", "lt", "ge", "le",
];

/// A datum as steel's lexer reads it, as far as recognition needs.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Datum {
    List(Vec<Datum>),
    Ident(String),
    Int(i64),
    Real(f64),
    Str(String),
    Bool(bool),
    /// The `let` keyword (a token of its own in steel's lexer).
    Let,
    /// `set!` (a token of its own too).
    Set,
    /// `if`, `begin` and `lambda` (tokens of their own as well).
    If,
    Begin,
    Lambda,
    /// `define`.
    Define,
}

/// The native test `text` (one Scheme expression) is, if it is one.
pub fn recognise(text: &str) -> Option<Recognised> {
    let datum = read(text)?;
    let mut names = BTreeSet::new();
    let test = test(&datum, &[], &mut names)?;
    Some(Recognised { test, names })
}

/// Reads exactly one datum of the recognised kinds, or `None`.
fn read(text: &str) -> Option<Datum> {
    let mut all = read_all(text)?;
    if all.len() == 1 {
        all.pop()
    } else {
        None
    }
}

/// Reads the data of the recognised kinds `text` holds, in order, or `None`.
pub(super) fn read_all(text: &str) -> Option<Vec<Datum>> {
    // The lexer is third-party code: whatever it does with odd text must not stop the
    // compiler, and recognising is only ever an optimisation.
    let text = text.to_string();
    std::panic::catch_unwind(move || {
        let mut stack: Vec<Vec<Datum>> = vec![Vec::new()];
        for token in TokenStream::new(&text, true, None) {
            let token = token.ok()?;
            let datum = match token.ty {
                TokenType::OpenParen(Paren::Round | Paren::Square, None) => {
                    // Bounded: conditions this deep are not simple tests.
                    if stack.len() > 64 {
                        return None;
                    }
                    stack.push(Vec::new());
                    continue;
                }
                TokenType::CloseParen(Paren::Round | Paren::Square) => {
                    let items = stack.pop()?;
                    if stack.is_empty() {
                        return None;
                    }
                    Datum::List(items)
                }
                TokenType::Identifier(name) => Datum::Ident(name.resolve().to_string()),
                TokenType::Number(n) => number(&n.resolve())?,
                TokenType::StringLiteral(s) => Datum::Str(s.to_string()),
                TokenType::BooleanLiteral(b) => Datum::Bool(b),
                TokenType::Let => Datum::Let,
                TokenType::Set => Datum::Set,
                TokenType::If => Datum::If,
                TokenType::Begin => Datum::Begin,
                TokenType::Lambda => Datum::Lambda,
                TokenType::Define => Datum::Define,
                TokenType::Comment => continue,
                _ => return None,
            };
            stack.last_mut()?.push(datum);
        }
        match <[Vec<Datum>; 1]>::try_from(stack) {
            Ok([top]) => Some(top),
            _ => None,
        }
    })
    .ok()
    .flatten()
}

/// Integers that fit a fixnum and finite reals; other numbers stay Scheme-only.
pub(super) fn number(n: &NumberLiteral) -> Option<Datum> {
    match n {
        NumberLiteral::Real(RealLiteral::Int(IntLiteral::Small(i))) => {
            Some(Datum::Int(i64::try_from(*i).ok()?))
        }
        NumberLiteral::Real(RealLiteral::Float(f)) if f.is_finite() => Some(Datum::Real(f.0)),
        _ => None,
    }
}

fn test(d: &Datum, vars: &[&str], names: &mut BTreeSet<String>) -> Option<Test> {
    match d {
        Datum::Bool(value) => Some(Test::Constant { value: *value }),
        Datum::List(items) => match items.as_slice() {
            [Datum::Let, Datum::List(bindings), body] => {
                let [Datum::List(binding)] = bindings.as_slice() else {
                    return None;
                };
                let [Datum::Ident(var), value] = binding.as_slice() else {
                    return None;
                };
                if KNOWN.contains(&var.as_str())
                    || voml_ir::names_the_event(var)
                    || !event(value, vars, names)
                {
                    return None;
                }
                let mut inner = vars.to_vec();
                inner.push(var);
                test(body, &inner, names)
            }
            [Datum::Ident(head), args @ ..] => {
                let tests = |names: &mut BTreeSet<String>| -> Option<Vec<Test>> {
                    args.iter().map(|a| test(a, vars, names)).collect()
                };
                let result = match (head.as_str(), args) {
                    ("and", _) => Test::And {
                        tests: tests(names)?,
                    },
                    ("or", _) => Test::Or {
                        tests: tests(names)?,
                    },
                    ("not", [a]) => Test::Not {
                        test: Box::new(test(a, vars, names)?),
                    },
                    (op, [a, b]) => {
                        let op = compare_op(op)?;
                        let (left, right) = (operand(a, vars, names)?, operand(b, vars, names)?);
                        let is_field = |o: &Operand| matches!(o, Operand::Field(_));
                        let is_string = |o: &Operand| matches!(o, Operand::String(_));
                        let numeric =
                            !matches!(op, CompareOp::Eqv | CompareOp::Eq | CompareOp::Equal);
                        // A comparison of literals alone is the engine's to fold; a number
                        // compared with a string literal is always an error.
                        if !(is_field(&left) || is_field(&right))
                            || (numeric && (is_string(&left) || is_string(&right)))
                        {
                            return None;
                        }
                        Test::Compare { op, left, right }
                    }
                    _ => return None,
                };
                names.insert(head.clone());
                Some(result)
            }
            _ => None,
        },
        _ => None,
    }
}

fn compare_op(name: &str) -> Option<CompareOp> {
    Some(match name {
        "=" => CompareOp::NumEq,
        "<" | "lt" => CompareOp::Lt,
        ">" | "gt" => CompareOp::Gt,
        "<=" | "le" => CompareOp::Le,
        ">=" | "ge" => CompareOp::Ge,
        "eqv?" => CompareOp::Eqv,
        "eq?" => CompareOp::Eq,
        "equal?" => CompareOp::Equal,
        _ => return None,
    })
}

fn operand(d: &Datum, vars: &[&str], names: &mut BTreeSet<String>) -> Option<Operand> {
    match d {
        Datum::Int(i) => Some(Operand::Int(*i)),
        Datum::Real(r) => Some(Operand::Real(*r)),
        Datum::Str(s) => Some(Operand::String(s.clone())),
        Datum::List(items) => element(items, vars, names).map(Operand::Field),
        _ => None,
    }
}

/// The position of the event's element that the call `items` reads — `(car EV)` to
/// `(cadddr EV)` or `(list-ref EV N)`, `EV` the event (see [`event`]) — if it is one.
pub(super) fn element(items: &[Datum], vars: &[&str], names: &mut BTreeSet<String>) -> Option<u32> {
    let (accessor, ev, position) = match items {
        [Datum::Ident(a), ev] => (a, ev, voml_ir::element_reader(a)?),
        [Datum::Ident(a), ev, Datum::Int(n)] if a == "list-ref" => {
            let n = u32::try_from(*n)
                .ok()
                .filter(|&n| n <= voml_ir::MAX_FIELD_POSITION)?;
            (a, ev, n)
        }
        _ => return None,
    };
    if !event(ev, vars, names) {
        return None;
    }
    names.insert(accessor.clone());
    Some(position)
}

/// Whether `d` is the event: `(current-event)` or a `let` variable bound to it.
fn event(d: &Datum, vars: &[&str], names: &mut BTreeSet<String>) -> bool {
    match d {
        Datum::List(items) if matches!(items.as_slice(), [Datum::Ident(f)] if f == "current-event") =>
        {
            names.insert("current-event".to_string());
            true
        }
        Datum::Ident(v) => vars.contains(&v.as_str()),
        _ => false,
    }
}

/// How many times `program` may bind each global name: the name after each `define` (also
/// `(define (NAME ...`) and `set!`, wherever it stands, quoted data and local definitions
/// included.
pub type Bindings = HashMap<String, usize>;

/// The [`Bindings`] of `program`; `None` when steel's lexer cannot read the program (it will
/// not load then).
pub fn bound_names(program: &str) -> Option<Bindings> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut names = Bindings::new();
        let mut binding = false;
        for token in TokenStream::new(program, true, None) {
            let token = token.ok()?;
            match token.ty {
                TokenType::Define | TokenType::Set => binding = true,
                // `(define (name args) ...)`, `(define ((name a) b) ...)`.
                TokenType::OpenParen(..) if binding => {}
                TokenType::Identifier(name) if binding => {
                    *names.entry(name.resolve().to_string()).or_default() += 1;
                    binding = false;
                }
                TokenType::Comment => {}
                _ => binding = false,
            }
        }
        Some(names)
    }))
    .ok()
    .flatten()
}

/// Whether what rests on `names` keeps its meaning in a program that binds `bound` (see
/// [`bound_names`]).
pub fn sound(names: &BTreeSet<String>, bound: &Bindings) -> bool {
    names.iter().all(|n| !bound.contains_key(n))
}

/// Whether each of the procedures `inlined` is defined once in a program that binds `bound`:
/// by the definition that was inlined, nothing else assigning it.
pub fn defined_once(inlined: &BTreeSet<String>, bound: &Bindings) -> bool {
    inlined.iter().all(|n| bound.get(n) == Some(&1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_eq(p: u32, v: i64) -> Test {
        Test::Compare {
            op: CompareOp::NumEq,
            left: Operand::Field(p),
            right: Operand::Int(v),
        }
    }

    #[test]
    fn recognises_comparisons_of_elements_with_literals() {
        let r = recognise("(= (car (current-event)) -3)").unwrap();
        assert_eq!(r.test, field_eq(0, -3));
        assert_eq!(
            r.names.into_iter().collect::<Vec<_>>(),
            ["=", "car", "current-event"]
        );
        let r = recognise(
            "(and (gt (list-ref (current-event) 3) 2.5) [not (equal? \"a\\nb\" (cadddr (current-event)))])",
        )
        .unwrap();
        assert_eq!(
            r.test,
            Test::And {
                tests: vec![
                    Test::Compare {
                        op: CompareOp::Gt,
                        left: Operand::Field(3),
                        right: Operand::Real(2.5),
                    },
                    Test::Not {
                        test: Box::new(Test::Compare {
                            op: CompareOp::Equal,
                            left: Operand::String("a\nb".into()),
                            right: Operand::Field(3),
                        }),
                    },
                ],
            }
        );
        // Literals as the engine reads them.
        assert_eq!(
            recognise("(= (cadr (current-event)) #x10)").unwrap().test,
            field_eq(1, 16)
        );
        assert_eq!(
            recognise("#t").unwrap().test,
            Test::Constant { value: true }
        );
        assert_eq!(
            recognise("(or)").unwrap().test,
            Test::Or { tests: Vec::new() }
        );
    }

    #[test]
    fn recognises_a_let_of_the_event() {
        let r = recognise("(let ((e (current-event))) (and (= (car e) -1000) (= (cadr e) 1)))")
            .unwrap();
        assert_eq!(
            r.test,
            Test::And {
                tests: vec![field_eq(0, -1000), field_eq(1, 1)],
            }
        );
        assert!(r.names.contains("current-event"));
        // A variable spelled like a name the test rests on is left to Scheme.
        assert_eq!(
            recognise("(let ((car (current-event))) (= (car car) 1))"),
            None
        );
        // Only one binding, of the event, and one body.
        for text in [
            "(let ((e (current-event)) (f 1)) (= (car e) 1))",
            "(let ((e (list 1 2))) (= (car e) 1))",
            "(let ((e (current-event))) (display 1) (= (car e) 1))",
            "(= (car e) 1)",
        ] {
            assert_eq!(recognise(text), None, "{text}");
        }
    }

    #[test]
    fn leaves_everything_else_to_scheme() {
        for text in [
            "(pair? (current-event))",
            "(= (car (current-event)) 1/2)",
            "(= (car (current-event)) 99999999999999999999)",
            "(= (car (current-event)) +inf.0)",
            "(= (car (current-event)) +nan.0)",
            "(= (car (current-event)) \"x\")",
            "(< (car (current-event)) \"x\")",
            "(= 1 1)",
            "(= (car (current-event)) 1 2)",
            "(not #t #f)",
            "(= (car (current-event)) #\\a)",
            "(= (car '(1 2)) 1)",
            "(= (cdr (current-event)) 1)",
            "(= (list-ref (current-event) -1) 1)",
            "(= (list-ref (current-event) 1000000) 1)",
            "(= (list-ref (current-event) 1.0) 1)",
            "(= (current-time) 1)",
            "(= (car (current-event 1)) 1)",
            "(= (car info/x) 1)",
            "(if #t #t #f)",
            "#(1 2)",
            "(and #t",
            "#t #t",
            "1",
            "",
        ] {
            assert_eq!(recognise(text), None, "{text}");
        }
    }

    #[test]
    fn finds_the_names_a_program_binds() {
        let names = bound_names(
            "(define x 1) (define (car l) l) (defn ((gt a) b) #t) ; (define y 2)\n\
             (let () (set! |current-event| 3)) '(define z 1) (define\n w 2)",
        )
        .unwrap();
        let mut names: Vec<_> = names.into_keys().collect();
        names.sort();
        assert_eq!(names, ["car", "current-event", "gt", "w", "x", "z"]);
    }
}
