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

/// What `expr` reads and rests on, when it is pure; `own` tells the globals of the
/// component's infos and controls.
pub fn rests_on(expr: &str, own: &dyn Fn(&str) -> bool) -> Option<Purity> {
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
                Atom::Name(name) if PURE.contains(&name) => {
                    purity.names.insert(name.to_string());
                }
                Atom::Name(_) => return None,
            },
        }
    }
    Some(purity)
}

/// Whether code copied from the sources names an info or control structure's global itself
/// (`info/NAME`, `control/NAME`), as only the compiler's own text should.
pub fn names_structures_directly(program: &Program) -> bool {
    Tokens::new(&program.text).any(|token| {
        let Token::Atom(r) = token else {
            return false;
        };
        let atom = &program.text[r.clone()];
        (atom.starts_with("info/") || atom.starts_with("control/")) && program.verbatim(r.start)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

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
    fn pure_expressions_rest_on_names_the_program_must_not_bind() {
        let rests = rests_on("(min info/idle 1)", &own).unwrap().names;
        assert!(sound(&rests, &HashSet::from(["info/idle".to_string()])));
        assert!(!sound(&rests, &HashSet::from(["min".to_string()])));
    }
}
