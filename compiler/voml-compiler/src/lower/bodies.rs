//! `<input>` parts whose code is plain updates of the component's structures from the event's
//! fields, recognised so that the runtime can carry them out without calling Scheme for every
//! event ([`voml_ir::NativeBody`]).
//!
//! Recognised, in the part's code as the program has it (structures as their globals, fields
//! as the part's parameters), and nothing else (docs/ir.md lists the same):
//!
//! ```text
//! body      := statement ... | (let ((VAR expr) ...) statement ...)
//! statement := (vector-set! STRUCTURE expr expr) | (set! STRUCTURE expr)
//! expr      := integer | PARAMETER | STRUCTURE | VAR | (vector-ref STRUCTURE expr)
//!            | (+ expr ...) | (- expr ...)      at least one term
//!            | element                          in condition parts
//! element   := (car EV) | (cadr EV) | (caddr EV) | (cadddr EV) | (list-ref EV N)
//! EV        := (current-event)
//! ```
//!
//! where STRUCTURE is one of the component's info or control structures, PARAMETER one of
//! the input's fields, and VAR stands for the expression it is bound to (expressions change
//! nothing, so reading one twice is reading it once). A statement may not read a structure an earlier statement changes (the
//! runtime works every value out before it changes anything). The procedures named
//! (`vector-set!`, `vector-ref`, `+`, `-`) must keep the engine's meaning: a program that
//! binds one of them keeps its parts in Scheme ([`super::conditions::sound`]).

use std::collections::{BTreeSet, HashSet};

use voml_ir::{Expr, NativeBody, Statement};

use super::conditions::{read_all, Datum};

/// A part recognised as a native body, and the global names its meaning rests on.
#[derive(Clone, Debug, PartialEq)]
pub struct Recognised {
    pub body: NativeBody,
    pub names: BTreeSet<String>,
}

/// Integer literals the engine reads exactly in every position (see [`Reader::expr`]).
const LITERAL_LIMIT: u64 = 1 << 23;

/// Every name the recogniser gives a meaning besides the event's: a `let` variable spelled
/// like one of them is left to Scheme.
const KNOWN: &[&str] = &["vector-set!", "vector-ref", "+", "-"];

/// The native body the code of an input part is, for a part with these parameters (the
/// input's fields, in order) and these structures (the component's globals), if it is one.
pub fn recognise(code: &str, params: &[String], structures: &[String]) -> Option<Recognised> {
    recognise_with(code, params, structures, false)
}

/// The native body the code of a condition part is (it may read the event's elements), for a
/// component with these structures, if it is one.
pub fn recognise_part(code: &str, structures: &[String]) -> Option<Recognised> {
    recognise_with(code, &[], structures, true)
}

fn recognise_with(
    code: &str,
    params: &[String],
    structures: &[String],
    events: bool,
) -> Option<Recognised> {
    let data = read_all(code)?;
    // The compiler ends each part with `#t`, the part's value.
    let data = match data.as_slice() {
        [rest @ .., Datum::Bool(true)] => rest,
        all => all,
    };
    let mut r = Reader {
        params,
        structures,
        events,
        vars: Vec::new(),
        used: HashSet::new(),
        names: BTreeSet::new(),
        reads: HashSet::new(),
        contents: HashSet::new(),
    };
    let statements = match data {
        [Datum::List(items)] if matches!(items.first(), Some(Datum::Let)) => {
            let [Datum::Let, Datum::List(bindings), body @ ..] = items.as_slice() else {
                return None;
            };
            let mut vars = Vec::with_capacity(bindings.len());
            for b in bindings {
                let Datum::List(b) = b else { return None };
                let [Datum::Ident(var), value] = b.as_slice() else {
                    return None;
                };
                let taken = KNOWN.contains(&var.as_str())
                    || voml_ir::names_the_event(var)
                    || params.contains(var)
                    || structures.contains(var)
                    || vars.iter().any(|(v, _)| v == var);
                if taken {
                    return None;
                }
                vars.push((var.clone(), r.expr(value)?));
            }
            r.vars = vars;
            body
        }
        all => all,
    };
    if statements.is_empty() {
        return None;
    }
    // Structures earlier statements assigned (`set!`), and vectors they changed.
    let (mut assigned, mut filled): (HashSet<String>, HashSet<String>) = Default::default();
    let mut out = Vec::with_capacity(statements.len());
    for d in statements {
        r.reads.clear();
        r.contents.clear();
        let s = r.statement(d)?;
        if r.reads.iter().any(|g| assigned.contains(g))
            || r.contents.iter().any(|g| filled.contains(g))
        {
            return None;
        }
        match &s {
            Statement::VectorSet { global, .. } => filled.insert(global.clone()),
            Statement::Set { global, .. } => assigned.insert(global.clone()),
        };
        out.push(s);
    }
    // Scheme works out every binding, used or not (and fails where one fails): a statement
    // reading each does the same here.
    if r.vars.iter().any(|(v, _)| !r.used.contains(v)) {
        return None;
    }
    Some(Recognised {
        body: NativeBody { statements: out },
        names: r.names,
    })
}

struct Reader<'a> {
    params: &'a [String],
    structures: &'a [String],
    /// Whether the event's elements may be read (condition parts).
    events: bool,
    /// `let` variables and what they stand for, and whether the statements use each.
    vars: Vec<(String, Expr)>,
    used: HashSet<String>,
    /// Global procedures the body names.
    names: BTreeSet<String>,
    /// Structures the statement being read reads (what they hold: a number, or which
    /// vector), and vectors whose elements it reads.
    reads: HashSet<String>,
    contents: HashSet<String>,
}

impl Reader<'_> {
    fn structure(&self, d: &Datum) -> Option<String> {
        match d {
            Datum::Ident(g) if self.structures.contains(g) => Some(g.clone()),
            _ => None,
        }
    }

    fn statement(&mut self, d: &Datum) -> Option<Statement> {
        let Datum::List(items) = d else { return None };
        match items.as_slice() {
            [Datum::Ident(f), target, index, value] if f == "vector-set!" => {
                let global = self.structure(target)?;
                // Which vector the structure holds is read.
                self.reads.insert(global.clone());
                self.names.insert(f.clone());
                Some(Statement::VectorSet {
                    global,
                    index: self.expr(index)?,
                    value: self.expr(value)?,
                })
            }
            [Datum::Set, target, value] => Some(Statement::Set {
                global: self.structure(target)?,
                value: self.expr(value)?,
            }),
            _ => None,
        }
    }

    fn expr(&mut self, d: &Datum) -> Option<Expr> {
        match d {
            // steel 0.8.3 compiles `(+ x N)`, `(- x N)`, `(< x N)`... with N an immediate of
            // 24 bits and cuts larger literals short: the part stays in Scheme, to do there
            // what it does.
            Datum::Int(value) if value.unsigned_abs() < LITERAL_LIMIT => {
                Some(Expr::Int { value: *value })
            }
            Datum::Ident(name) => {
                if let Some((_, e)) = self.vars.iter().find(|(v, _)| v == name) {
                    // What a variable stands for was read where it was bound.
                    let e = e.clone();
                    self.used.insert(name.clone());
                    self.note_reads(&e);
                    return Some(e);
                }
                if let Some(at) = self.params.iter().position(|p| p == name) {
                    return Some(Expr::Argument {
                        index: u32::try_from(at).ok()?,
                    });
                }
                let name = self.structure(d)?;
                self.reads.insert(name.clone());
                Some(Expr::Global { name })
            }
            Datum::List(items) => match items.as_slice() {
                [Datum::Ident(f), target, index] if f == "vector-ref" => {
                    let global = self.structure(target)?;
                    self.reads.insert(global.clone());
                    self.contents.insert(global.clone());
                    self.names.insert(f.clone());
                    Some(Expr::VectorRef {
                        global,
                        index: Box::new(self.expr(index)?),
                    })
                }
                [Datum::Ident(f), terms @ ..] if (f == "+" || f == "-") && !terms.is_empty() => {
                    let terms = terms
                        .iter()
                        .map(|t| self.expr(t))
                        .collect::<Option<Vec<_>>>()?;
                    self.names.insert(f.clone());
                    Some(if f == "+" {
                        Expr::Add { terms }
                    } else {
                        Expr::Sub { terms }
                    })
                }
                // The event's elements, in condition parts.
                items if self.events => super::conditions::element(items, &[], &mut self.names)
                    .map(|position| Expr::Element { position }),
                _ => None,
            },
            _ => None,
        }
    }

    /// Notes the structures `e` reads, for the rule that no statement reads what an earlier
    /// one changed.
    fn note_reads(&mut self, e: &Expr) {
        match e {
            Expr::Global { name } => {
                self.reads.insert(name.clone());
            }
            Expr::VectorRef { global, index } => {
                self.reads.insert(global.clone());
                self.contents.insert(global.clone());
                self.note_reads(index);
            }
            Expr::Add { terms } | Expr::Sub { terms } => {
                for t in terms {
                    self.note_reads(t);
                }
            }
            Expr::Int { .. } | Expr::Argument { .. } | Expr::Element { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn recognise_in(code: &str) -> Option<Recognised> {
        recognise(
            code,
            &strings(&["input0/ts", "input0/proc"]),
            &strings(&["info/counts", "info/now", "control/n"]),
        )
    }

    #[test]
    fn counting_per_processor_is_recognised() {
        let r = recognise_in(
            "(vector-set! info/counts input0/proc (+ 1 (vector-ref info/counts input0/proc)))\n#t",
        )
        .unwrap();
        let index = Expr::Argument { index: 1 };
        assert_eq!(
            r.body.statements,
            [Statement::VectorSet {
                global: "info/counts".into(),
                index: index.clone(),
                value: Expr::Add {
                    terms: vec![
                        Expr::Int { value: 1 },
                        Expr::VectorRef {
                            global: "info/counts".into(),
                            index: Box::new(index),
                        },
                    ],
                },
            }]
        );
        assert_eq!(
            r.names.into_iter().collect::<Vec<_>>(),
            ["+", "vector-ref", "vector-set!"]
        );
        let r = recognise_in("(set! info/now input0/ts) (set! control/n (- control/n 1 -2))");
        assert_eq!(r.unwrap().body.statements.len(), 2);
    }

    #[test]
    fn everything_else_stays_in_scheme() {
        for code in [
            // Other procedures, forms and literals.
            "(vector-set! info/counts input0/proc (* 2 input0/proc))",
            "(set! info/now (max info/now input0/ts))",
            "(set! info/now 1.5)",
            "(set! info/now \"x\")",
            "(set! info/now (+))",
            "(set! info/now (+ input0/proc 16777217))",
            "(set! info/now (- input0/proc -9223372036854775808))",
            "(when #t (set! info/now input0/ts))",
            "(let ((p input0/proc)) (vector-set! info/counts p 0) #f)",
            // Names that are neither the component's structures nor the input's fields.
            "(set! info/other input0/ts)",
            "(set! info/now input1/ts)",
            "(vector-set! other input0/proc 0)",
            // A structure read after an earlier statement changed it.
            "(set! control/n 1) (set! info/now control/n)",
            "(vector-set! info/counts 0 1) (set! control/n (vector-ref info/counts 0))",
            // A vector changed after an earlier statement assigned its structure.
            "(set! info/counts info/now) (vector-set! info/counts 0 1)",
            // Nothing to do, or not code the lexer reads.
            "#t",
            "",
            "(set! info/now",
        ] {
            assert_eq!(recognise_in(code), None, "{code}");
        }
        // A structure read and changed by one statement is read first, as in Scheme.
        assert!(
            recognise_in("(set! control/n (+ control/n 1)) (set! info/now input0/ts)").is_some()
        );
        assert!(recognise_in("(let ((p input0/proc)) (vector-set! info/counts p 0))").is_some());
        // Two elements of one vector changed; a vector shared by assignment then changed.
        assert!(
            recognise_in("(vector-set! info/counts 0 1) (vector-set! info/counts 1 2)").is_some()
        );
        assert!(
            recognise_in("(set! info/now info/counts) (vector-set! info/counts 0 1)").is_some()
        );
        // The event's elements only in condition parts.
        assert_eq!(recognise_in("(set! control/n (car (current-event)))"), None);
    }

    #[test]
    fn condition_parts_read_the_event_and_bind_variables() {
        let structures = strings(&["info/counts", "control/n"]);
        let r = recognise_part(
            "(let ((p (list-ref (current-event) 3))) (vector-set! info/counts p (+ 1 (vector-ref info/counts p))))\n#t",
            &structures,
        )
        .unwrap();
        let p = Expr::Element { position: 3 };
        assert_eq!(
            r.body.statements,
            [Statement::VectorSet {
                global: "info/counts".into(),
                index: p.clone(),
                value: Expr::Add {
                    terms: vec![
                        Expr::Int { value: 1 },
                        Expr::VectorRef {
                            global: "info/counts".into(),
                            index: Box::new(p),
                        },
                    ],
                },
            }]
        );
        assert!(r.names.contains("list-ref") && r.names.contains("current-event"));
        assert!(recognise_part("(set! control/n (cadr (current-event)))", &structures).is_some());
        for code in [
            // A variable standing for a structure an earlier statement changed.
            "(let ((m control/n)) (set! control/n 1) (vector-set! info/counts 0 m))",
            // A binding no statement reads (Scheme works it out all the same).
            "(let ((p (list-ref (current-event) 9))) (set! control/n 1))",
            "(let ((car 1)) (set! control/n car))",
            "(let ((control/n 1)) (set! control/n 2))",
            "(let ((p 1) (p 2)) (set! control/n p))",
            "(let ((p (list-ref (current-event) -1))) (set! control/n p))",
            "(let ((e (current-event))) (set! control/n (car e)))",
            "(let loop ((i 0)) (set! control/n i))",
            "(set! control/n (list-ref (current-event) (car (current-event))))",
        ] {
            assert_eq!(recognise_part(code, &structures), None, "{code}");
        }
    }
}
