//! The part of steel's prelude a program can reach.
//!
//! Building an engine compiled all of steel's prelude: its procedure definitions took about
//! three quarters of a run's start (each costs millions of instructions to compile, in
//! proportion to the thousands of globals the engine holds), though a visual object names a
//! few of them or none. A run's engine compiles every macro of the prelude (they are cheap,
//! and steel may insert some itself) but only the definitions reachable from the texts the
//! engine will compile: a definition is reached when a reached text or definition names it,
//! or when one of the macros VO code may use names it in its templates (none does today).
//! Nothing a program names is missing, so it compiles and runs as with the whole prelude, and
//! a name it may not use is refused as before (the confinement rebinds what is defined).
//!
//! VO code cannot define macros, nor write syntax objects (`#'x` and `` #`x `` are
//! refused by the screen), so the macros that name definitions out of VO code's reach
//! (continuations, syntax objects, help) count only when a text names them.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::OnceLock;

use voml_ir::tokens::{Token, Tokens};

/// A top-level form of the prelude.
struct Form {
    range: Range<usize>,
    kind: Kind,
    /// The names it holds (every atom; quoted data included, to be safe).
    atoms: Vec<&'static str>,
}

enum Kind {
    /// `(define NAME ...)` or `(define (NAME ...) ...)`.
    Define(&'static str),
    /// `(define-syntax NAME ...)`.
    Syntax(&'static str),
    /// `(provide NAME ...)`: the names it lists must be defined.
    Provide,
    /// Anything else, kept as it is.
    Other,
}

/// steel's prelude, its top-level forms read once.
fn forms() -> &'static [Form] {
    static FORMS: OnceLock<Vec<Form>> = OnceLock::new();
    FORMS.get_or_init(|| read(steel::stdlib::PRELUDE))
}

fn read(text: &'static str) -> Vec<Form> {
    let mut forms = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut atoms: Vec<&'static str> = Vec::new();
    for tok in Tokens::new(text) {
        match tok {
            Token::Open(r) => {
                if depth == 0 {
                    start = r.start;
                    atoms.clear();
                }
                depth += 1;
            }
            Token::Close(r) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    forms.push(Form {
                        range: start..r.end,
                        kind: kind(&atoms),
                        atoms: std::mem::take(&mut atoms),
                    });
                }
            }
            Token::Atom(r) if depth > 0 => atoms.push(&text[r]),
            _ => {}
        }
    }
    forms
}

/// What a form is, from its atoms (`(define (f x) ...)`: `define`, `f`, ...).
fn kind(atoms: &[&'static str]) -> Kind {
    match atoms {
        ["define", name, ..] => Kind::Define(name),
        ["define-syntax", name, ..] => Kind::Syntax(name),
        ["provide", ..] => Kind::Provide,
        _ => Kind::Other,
    }
}

/// steel's prelude without the definitions nothing in `texts` (and in the macros VO code may
/// use, `macros`) reaches, in its order.
pub(crate) fn prelude_for(texts: &[&str], macros: &[&str]) -> String {
    let forms = forms();
    let by_name: HashMap<&str, usize> = forms
        .iter()
        .enumerate()
        .filter_map(|(i, f)| match f.kind {
            Kind::Define(n) | Kind::Syntax(n) => Some((n, i)),
            _ => None,
        })
        .collect();
    let mut reached: HashSet<&str> = HashSet::new();
    let mut pending: Vec<&str> = Vec::new();
    let reach = |name: &str, reached: &mut HashSet<&str>, pending: &mut Vec<&str>| {
        if let Some((&n, _)) = by_name.get_key_value(name) {
            if reached.insert(n) {
                pending.push(n);
            }
        }
    };
    for text in texts {
        names(text, &mut |name| reach(name, &mut reached, &mut pending));
    }
    for name in macros {
        reach(name, &mut reached, &mut pending);
    }
    while let Some(name) = pending.pop() {
        for atom in &forms[by_name[name]].atoms {
            reach(atom, &mut reached, &mut pending);
        }
    }
    let prelude = steel::stdlib::PRELUDE;
    let mut out = String::with_capacity(prelude.len());
    for form in forms {
        match form.kind {
            Kind::Define(n) if !reached.contains(n) => continue,
            Kind::Provide => {
                let kept: Vec<&str> = form.atoms[1..]
                    .iter()
                    .copied()
                    .filter(|n| reached.contains(n) || !by_name.contains_key(n))
                    .collect();
                if !kept.is_empty() {
                    out.push_str(&format!("(provide {})", kept.join(" ")));
                }
            }
            _ => out.push_str(&prelude[form.range.clone()]),
        }
        out.push('\n');
    }
    out
}

/// Each name `text` holds, and those its quote-like prefixes stand for.
fn names<'t>(text: &'t str, each: &mut impl FnMut(&'t str)) {
    for tok in Tokens::new(text) {
        match tok {
            Token::Atom(r) => {
                each(&text[r.clone()]);
                // `#'x` and `` #`x `` read as syntax objects.
                if text[r.start..].starts_with("#'") || text[r.start..].starts_with("#`") {
                    each("syntax");
                    each("quasisyntax");
                }
            }
            Token::Prefix(r) => match &text[r] {
                "`" => each("quasiquote"),
                "," => each("unquote"),
                ",@" => each("unquote-splicing"),
                _ => {}
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definitions a prelude text holds.
    fn defined(prelude: String) -> Vec<&'static str> {
        read(Box::leak(prelude.into_boxed_str()))
            .iter()
            .filter_map(|f| match f.kind {
                Kind::Define(n) => Some(n),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_prelude_reads_into_definitions_macros_and_the_rest() {
        let forms = forms();
        let count = |pred: fn(&Kind) -> bool| forms.iter().filter(|f| pred(&f.kind)).count();
        assert!(count(|k| matches!(k, Kind::Define(_))) > 50);
        assert!(count(|k| matches!(k, Kind::Syntax(_))) > 20);
        assert_eq!(count(|k| matches!(k, Kind::Provide)), 1);
        let names: Vec<&str> = forms
            .iter()
            .filter_map(|f| match f.kind {
                Kind::Define(n) => Some(n),
                _ => None,
            })
            .collect();
        for n in ["map", "foldl", "filter", "assoc", "cadr", "for-each"] {
            assert!(names.contains(&n), "{n} is a definition of the prelude");
        }
    }

    #[test]
    fn a_program_gets_the_definitions_it_names_and_what_they_name() {
        let none = prelude_for(&["(define (f x) (+ x 1))"], &[]);
        // Every macro is kept.
        for m in [
            "(define-syntax cond",
            "(define-syntax case",
            "(define-syntax reset",
        ] {
            assert!(none.contains(m), "{m} is kept");
        }
        assert!(defined(none.clone()).is_empty(), "{:?}", defined(none));
        let got = defined(prelude_for(
            &["(define (f l) (map car (filter pair? l)))"],
            &[],
        ));
        assert!(got.contains(&"map") && got.contains(&"filter"), "{got:?}");
        assert!(!got.contains(&"foldl"), "{got:?}");
        // What a reached definition names is reached too; a name in a string is not.
        let text = "(define (g) (for-each display '(1 2)) \"assoc\")";
        let got = defined(prelude_for(&[text], &[]));
        assert!(
            got.contains(&"for-each") && got.contains(&"#%for-each"),
            "{got:?}"
        );
        assert!(!got.contains(&"assoc"), "{got:?}");
        // Two steps: `max` names `fold`, which names `foldl`.
        let got = defined(prelude_for(&["(max 1 2)"], &[]));
        assert!(got.contains(&"fold") && got.contains(&"foldl"), "{got:?}");
        // The macros given reach what they name, as the texts do.
        let got = defined(prelude_for(&[""], &["reset"]));
        assert!(got.contains(&"*reset"), "{got:?}");
        // A macro named reaches what its templates name.
        let got = defined(prelude_for(&["(reset 1)"], &[]));
        assert!(got.contains(&"*reset"), "{got:?}");
        let got = defined(prelude_for(&["(f #'x)"], &[]));
        assert!(got.contains(&"#%syntax-bindings"), "{got:?}");
    }

    #[test]
    fn the_whole_prelude_is_what_every_name_reaches() {
        let every: Vec<&str> = forms()
            .iter()
            .filter_map(|f| match f.kind {
                Kind::Define(n) | Kind::Syntax(n) => Some(n),
                _ => None,
            })
            .collect();
        let all = prelude_for(&[&every.join(" ")], &[]);
        let whole = steel::stdlib::PRELUDE;
        let strip = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let kept = strip(&all);
        // Comments aside, the same forms in the same order.
        let forms_text: Vec<String> = forms()
            .iter()
            .map(|f| strip(&whole[f.range.clone()]))
            .collect();
        assert!(kept.starts_with(&forms_text[0]), "{kept:.200}");
        assert_eq!(kept.len(), strip(&forms_text.join("\n")).len());
    }
}
