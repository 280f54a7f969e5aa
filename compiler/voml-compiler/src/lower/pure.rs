//! Conditions and `enable` expressions that compute from their component's infos and controls
//! alone ([`voml_ir::ConditionPart::pure`], [`voml_ir::IrComponent::enable_pure`]): their
//! value stands until code naming one of those structures runs, so a runtime need not call
//! them for every event.
//!
//! Pure, and nothing else: literals (numbers, strings, booleans, characters, as
//! `voml_ir::tokens::atom` reads them), the component's own `$n` and `%n`, and calls of
//! [`PURE`] — procedures and forms that neither change anything nor look inside a value that
//! can change in place (a vector's items, a box's content), so that only assigning a
//! structure changes what they give. Quoted data, `let`, `(current-event)`, `(current-time)`
//! and every other name make an expression impure.
//!
//! Two conditions of the whole program complete it, checked once it is tangled
//! ([`super::Lowering`]): it defines or assigns none of the names an expression rests on (a
//! `min` of its own could do anything), and no code names a structure's global itself
//! (`info/NAME`) rather than through a component's lists, since only code naming a structure
//! through its lists is seen to run.

use std::collections::BTreeSet;

use voml_ir::tokens::{atom, Atom, Token, Tokens};
use voml_ir::Program;

use crate::schema;

/// Procedures and forms of a pure expression.
pub const PURE: &[&str] = &[
    "if",
    "and",
    "or",
    "not",
    "=",
    "<",
    ">",
    "<=",
    ">=",
    "eq?",
    "eqv?",
    "null?",
    "pair?",
    "zero?",
    "positive?",
    "negative?",
    "even?",
    "odd?",
    "number?",
    "integer?",
    "boolean?",
    "string?",
    "+",
    "-",
    "*",
    "/",
    "min",
    "max",
    "abs",
    "quotient",
    "remainder",
    "modulo",
    "round",
    "floor",
    "ceiling",
    "truncate",
    "exact",
    "inexact",
    "gt",
    "lt",
    "ge",
    "le",
];

/// What a pure expression reads and rests on.
#[derive(Debug, Default, PartialEq)]
pub struct Purity {
    /// The globals of the component's structures it reads.
    pub reads: BTreeSet<String>,
    /// The names of [`PURE`] it calls.
    pub names: BTreeSet<String>,
}

/// What a drawing-only phase 1 may compute its primitives' arguments with besides [`PURE`]
/// and the style procedure: procedures that make a new string or number from values, without
/// looking inside a value that can change in place.
pub const DRAWING_ARGUMENTS: &[&str] = &[
    "number->string",
    "number->fixed",
    "string-append",
    "exact->inexact",
    "inexact->exact",
];

/// The prefix of the styles of literals the compiler makes once per program (`code.rs`).
pub use voml_ir::STYLE_PREFIX;

/// An analysis of code: what it reads of its component's structures (told by the second
/// argument) and rests on, when it passes.
pub type Analysis = fn(&str, &dyn Fn(&str) -> bool) -> Option<Purity>;

/// What `expr` reads and rests on, when it is pure; `own` tells the globals of the
/// component's infos and controls.
pub fn rests_on(expr: &str, own: &dyn Fn(&str) -> bool) -> Option<Purity> {
    names_of(expr, own, &|name| PURE.contains(&name))
}

/// What a phase 1 reads and rests on when it only draws from its component's structures: a
/// sequence of calls of the drawing primitives ([`schema::DRAWING`]) whose arguments are pure
/// expressions (of [`PURE`], [`DRAWING_ARGUMENTS`] and the style procedure, the component's
/// structures, literals and the
/// compiler's styles). Such a phase 1 draws the same picture while none of those structures
/// is assigned, and does nothing else: the promise `refresh="changed"` makes, kept by
/// construction.
pub fn draws_only(body: &str, own: &dyn Fn(&str) -> bool) -> Option<Purity> {
    let mut depth = 0usize;
    let mut head = false;
    let mut calls = 0;
    for token in Tokens::new(body) {
        match token {
            Token::Open(_) => {
                head = depth == 0;
                depth += 1;
            }
            Token::Close(_) => depth = depth.checked_sub(1)?,
            Token::Atom(r) if head => {
                head = false;
                if !draws(&body[r]) {
                    return None;
                }
                calls += 1;
            }
            // Only calls stand at the top: no value, no quoted datum, no string.
            _ if depth == 0 || head => return None,
            _ => {}
        }
    }
    if depth != 0 || calls == 0 {
        return None;
    }
    names_of(body, own, &|name| {
        PURE.contains(&name)
            || draws(name)
            || DRAWING_ARGUMENTS.contains(&name)
            || name == schema::STYLE.name
    })
}

/// Whether `name` is a drawing primitive's procedure.
fn draws(name: &str) -> bool {
    schema::DRAWING.iter().any(|p| p.name == name)
}

/// What `expr` reads (of `own`) and the names it rests on (of `allowed`), when it is made of
/// nothing else; the compiler's styles are read without resting on anything.
fn names_of(
    expr: &str,
    own: &dyn Fn(&str) -> bool,
    allowed: &dyn Fn(&str) -> bool,
) -> Option<Purity> {
    let mut purity = Purity::default();
    for token in Tokens::new(expr) {
        match token {
            Token::Open(r) | Token::Close(r) => {
                // steel reads braces otherwise.
                if matches!(&expr[r], "{" | "}") {
                    return None;
                }
            }
            Token::String(_) => {}
            Token::Prefix(_) => return None,
            Token::Atom(r) => match atom(&expr[r])? {
                Atom::Literal => {}
                Atom::Name(name) if own(name) => {
                    purity.reads.insert(name.to_string());
                }
                Atom::Name(name) if allowed(name) => {
                    purity.names.insert(name.to_string());
                }
                Atom::Name(name)
                    if name.strip_prefix(STYLE_PREFIX).is_some_and(|k| {
                        !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())
                    }) => {}
                Atom::Name(_) => return None,
            },
        }
    }
    Some(purity)
}

/// Whether code copied from the sources names an info or control structure's global itself
/// (`info/NAME`, `control/NAME`), or one of the compiler's styles (`voml/style/K`), as only
/// the compiler's own text should.
pub fn names_structures_directly(program: &Program) -> bool {
    Tokens::new(&program.text).any(|token| {
        let Token::Atom(r) = token else {
            return false;
        };
        let atom = &program.text[r.clone()];
        (atom.starts_with("info/")
            || atom.starts_with("control/")
            || atom.starts_with(STYLE_PREFIX))
            && program.verbatim(r.start)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::super::conditions::sound;
    use super::*;

    fn own(name: &str) -> bool {
        matches!(name, "info/idle" | "info/freq" | "control/on")
    }

    #[test]
    fn expressions_of_the_components_structures_and_pure_procedures_are_pure() {
        let names = |e: &str| rests_on(e, &own).map(|p| p.names.into_iter().collect::<Vec<_>>());
        let reads = rests_on("(not (eqv? info/freq (min control/on 3)))", &own)
            .unwrap()
            .reads;
        assert_eq!(
            reads.into_iter().collect::<Vec<_>>(),
            ["control/on", "info/freq"]
        );
        assert_eq!(
            names("(not (null? info/idle))"),
            Some(vec!["not".into(), "null?".into()])
        );
        assert_eq!(names("control/on"), Some(vec![]));
        assert_eq!(
            names("(not (eqv? info/freq (if (gt info/idle 0) (min 3500.0 (* control/on info/idle)) #f)))")
                .map(|n| n.len()),
            Some(6)
        );
        assert_eq!(
            names("(= info/idle \"a\" #\\b -1 .5)"),
            Some(vec!["=".into()])
        );
        for impure in [
            "(null? info/other)",
            "(vector-ref info/idle 0)",
            "(null? (current-event))",
            "(< (current-time) 3)",
            "(eq? info/idle '())",
            "(let ((x info/idle)) (null? x))",
            "(set! info/idle 1)",
            "(my-test info/idle)",
            "(null? {info/idle})",
            "(= info/idle 1+)",
        ] {
            assert_eq!(names(impure), None, "{impure}");
        }
    }

    #[test]
    fn a_phase_1_of_drawing_calls_with_pure_arguments_draws_only() {
        let reads = |b: &str| draws_only(b, &own).map(|p| p.reads.into_iter().collect::<Vec<_>>());
        assert_eq!(
            reads(
                "\n   (voml-text 0 0.1 0.3 (number->string info/idle) #f \"black\" 20 \"LEFT\" \"BASELINE\" voml/style/0)\n"
            ),
            Some(vec!["info/idle".to_string()])
        );
        assert_eq!(
            reads("(voml-rectangle 0 0 1 (* 2 control/on) 3 \"blue\" (voml-style \"blue\" 1 #f \"area\" #f 1 \"butt\")) (voml-line 0 0 0 1 1 voml/style/12)"),
            Some(vec!["control/on".to_string()])
        );
        for not_only in [
            "",
            "#t",
            "(voml-text 0 1 1 (number->string info/other) #f \"black\" 20 \"LEFT\" \"BASELINE\" voml/style/0)",
            "(voml-line 0 0 0 1 1 voml/style/0) (set! info/idle 1)",
            "(if (gt info/idle 0) (voml-line 0 0 0 1 1 voml/style/0))",
            "(let ((x info/idle)) (voml-line 0 0 0 x 1 voml/style/0))",
            "(voml-line 0 0 0 (vector-ref info/idle 0) 1 voml/style/0)",
            "(voml-snapshot 0 \"a.png\")",
            "(beep)",
            "(voml-scroll 0 1 0)",
            "(voml-line 0 0 0 1 1 voml/style/x)",
            "(voml-line 0 0 0 1 1 voml/style/0) \"left over\"",
            "(voml-line 0 0 0 (car (current-event)) 1 voml/style/0)",
        ] {
            assert_eq!(reads(not_only), None, "{not_only}");
        }
    }

    #[test]
    fn pure_expressions_rest_on_names_the_program_must_not_bind() {
        let rests = rests_on("(min info/idle 1)", &own).unwrap().names;
        assert!(sound(
            &rests,
            &HashMap::from([("info/idle".to_string(), 1)])
        ));
        assert!(!sound(&rests, &HashMap::from([("min".to_string(), 1)])));
    }
}
