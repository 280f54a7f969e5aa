//! Component code recognised as forms the runtime can evaluate without calling Scheme
//! ([`voml_ir::NativeRender`]): IR components' phase-1 code, round after round, and input
//! parts that are not plain updates ([`super::bodies`]), event after event.
//!
//! Recognised, in the code as the program has it (structures as their globals, an input's
//! fields as the part's parameters, markup primitives as calls of the runtime's primitive
//! API), and nothing else (docs/ir.md lists the same):
//!
//! ```text
//! form  := integer | real | string | #t | #f | VAR | PARAMETER | STRUCTURE
//!        | (set! STRUCTURE form) | (set! voml/here integer)
//!        | (if form form) | (if form form form) | (begin form ...)
//!        | (and form ...) | (or form ...) | (when form form ...) | (unless form form ...)
//!        | (let ((VAR form) ...) form ...)
//!        | (alist-for-each (lambda (VAR VAR) form ...) form)
//!        | (PRIMITIVE form ...) | (PROCEDURE form ...)
//! PRIMITIVE := + - * = < > <= >= lt gt le ge quotient remainder modulo not vector-ref
//!        | length nth car cdr voml-line voml-style beep id-get id-put vector
//! ```
//!
//! with each primitive given the arguments it takes ([`voml_ir::RenderOp::arity`]), VAR a
//! variable bound by an enclosing `let` or `lambda`, and STRUCTURE one of the component's
//! structures. A PROCEDURE is one the utility code defines as `(define (NAME VAR ...) form
//! ...)` and calls with as many arguments: the call becomes a `let` of its parameters around
//! its body (which sees those parameters alone), so the program must define the name that
//! once and never assign it ([`super::conditions::defined_once`]); a procedure is not inlined
//! inside itself. Integer literals are those steel reads exactly in every position
//! ([`LITERAL_LIMIT`]). The names the forms call must keep the engine's meaning: a program
//! that binds one of them keeps the part in Scheme ([`super::conditions::sound`]).

use std::collections::{BTreeSet, HashMap};

use voml_ir::{Form, NativeRender, RenderOp};

use super::conditions::{read_all, Datum};

/// A part recognised as native forms, the global names their meaning rests on, and the
/// utility procedures inlined into them.
#[derive(Clone, Debug, PartialEq)]
pub struct Recognised {
    pub render: NativeRender,
    pub names: BTreeSet<String>,
    pub inlined: BTreeSet<String>,
}

/// A procedure of the utility code that calls may be inlined as: its parameters and body.
#[derive(Clone, Debug, PartialEq)]
pub struct Procedure {
    params: Vec<String>,
    body: Vec<Datum>,
}

/// The utility code's procedures by name (see [`procedures`]).
pub type Procedures = HashMap<String, Procedure>;

/// The procedures `(define (NAME VAR ...) form ...)` at the top of the utility code `code`
/// (a name defined twice is left out; code the reader does not know gives none).
pub fn procedures(code: &str, into: &mut Procedures) {
    let Some(data) = read_all(code) else {
        return;
    };
    let mut twice = Vec::new();
    for d in &data {
        let Datum::List(items) = d else { continue };
        let [Datum::Define, Datum::List(head), body @ ..] = items.as_slice() else {
            continue;
        };
        let Some((Datum::Ident(name), params)) = head.split_first() else {
            continue;
        };
        let params: Option<Vec<String>> = params
            .iter()
            .map(|p| match p {
                Datum::Ident(p) => Some(p.clone()),
                _ => None,
            })
            .collect();
        let Some(params) = params else { continue };
        let distinct = params
            .iter()
            .enumerate()
            .all(|(k, p)| !params[..k].contains(p));
        if body.is_empty() || !distinct {
            continue;
        }
        let procedure = Procedure {
            params,
            body: body.to_vec(),
        };
        if into.insert(name.clone(), procedure).is_some() {
            twice.push(name.clone());
        }
    }
    for name in twice {
        into.remove(&name);
    }
}

/// Integer literals steel reads exactly in every position: it compiles `(+ x N)`, `(< x N)`
/// ... with N an immediate of 24 bits and cuts larger literals short.
const LITERAL_LIMIT: u64 = 1 << 23;

/// The control forms recognised by name (steel's macros and the prelude's loop): a variable
/// of that name would hide them.
const CONTROL: &[&str] = &["alist-for-each", "and", "or", "when", "unless"];

/// Forms nested deeper than this are left to Scheme.
const DEPTH_LIMIT: usize = voml_ir::MAX_RENDER_DEPTH;

/// The native forms the code `code` of a part is, if it is made of them: a part with these
/// parameters (an input's fields, bound to the first slots; none for phase 1) of a component
/// with these structures (its infos' and controls' globals), in a program with these utility
/// procedures.
pub fn recognise(
    code: &str,
    params: &[String],
    structures: &[String],
    procedures: &Procedures,
) -> Option<Recognised> {
    let data = read_all(code)?;
    let mut r = Reader {
        structures,
        procedures,
        vars: Vec::new(),
        locals: 0,
        names: BTreeSet::new(),
        inlining: Vec::new(),
        inlined: BTreeSet::new(),
        depth: 0,
    };
    for p in params {
        let bound = r.bind_name(p)?;
        r.vars.push(bound);
    }
    let forms = r.forms(&data)?;
    if forms.is_empty() {
        return None;
    }
    Some(Recognised {
        render: NativeRender {
            locals: r.locals,
            forms,
        },
        names: r.names,
        inlined: r.inlined,
    })
}

struct Reader<'a> {
    structures: &'a [String],
    procedures: &'a Procedures,
    /// Variables in scope and their slots, innermost last.
    vars: Vec<(String, u32)>,
    /// Slots handed out.
    locals: u32,
    /// Global names the forms call.
    names: BTreeSet<String>,
    /// The procedures being inlined, innermost last.
    inlining: Vec<String>,
    /// The procedures inlined.
    inlined: BTreeSet<String>,
    depth: usize,
}

impl Reader<'_> {
    fn forms(&mut self, data: &[Datum]) -> Option<Vec<Form>> {
        data.iter().map(|d| self.form(d)).collect()
    }

    fn form(&mut self, d: &Datum) -> Option<Form> {
        self.depth += 1;
        let form = if self.depth > DEPTH_LIMIT {
            None
        } else {
            self.form_inner(d)
        };
        self.depth -= 1;
        form
    }

    fn var(&self, name: &str) -> Option<u32> {
        self.vars
            .iter()
            .rev()
            .find(|(v, _)| v == name)
            .map(|(_, s)| *s)
    }

    fn structure(&self, d: &Datum) -> Option<String> {
        match d {
            Datum::Ident(g) if self.var(g).is_none() && self.structures.contains(g) => {
                Some(g.clone())
            }
            _ => None,
        }
    }

    /// A new variable's slot; `None` for a name the forms give a meaning (a primitive, a
    /// structure), which the variable would hide.
    fn bind(&mut self, name: &Datum) -> Option<(String, u32)> {
        let Datum::Ident(name) = name else {
            return None;
        };
        self.bind_name(name)
    }

    /// [`Reader::bind`] of a name.
    fn bind_name(&mut self, name: &str) -> Option<(String, u32)> {
        if RenderOp::named(name).is_some()
            || CONTROL.contains(&name)
            || name == voml_ir::HERE_GLOBAL
            || self.structures.iter().any(|s| s == name)
        {
            return None;
        }
        let slot = self.locals;
        self.locals = self.locals.checked_add(1)?;
        Some((name.to_string(), slot))
    }

    fn form_inner(&mut self, d: &Datum) -> Option<Form> {
        match d {
            Datum::Int(value) if value.unsigned_abs() < LITERAL_LIMIT => {
                Some(Form::Int { value: *value })
            }
            Datum::Real(value) => Some(Form::Real { value: *value }),
            Datum::Str(value) => Some(Form::Str {
                value: value.clone(),
            }),
            Datum::Bool(value) => Some(Form::Bool { value: *value }),
            Datum::Ident(name) => match self.var(name) {
                Some(slot) => Some(Form::Local { slot }),
                // (Read where the program keeps it: code could assign it.)
                None if voml_ir::is_style_global(name) => Some(Form::Style { name: name.clone() }),
                None => Some(Form::Global {
                    name: self.structure(d)?,
                }),
            },
            Datum::List(items) => self.list(items),
            _ => None,
        }
    }

    fn list(&mut self, items: &[Datum]) -> Option<Form> {
        match items {
            [Datum::Set, Datum::Ident(here), Datum::Int(offset)]
                if here == voml_ir::HERE_GLOBAL && self.var(here).is_none() =>
            {
                // (The program assigns it everywhere: what rests on it is the runtime's.)
                Some(Form::Here {
                    offset: u64::try_from(*offset).ok()?,
                })
            }
            [Datum::Set, target, value] => Some(Form::Set {
                global: self.structure(target)?,
                value: Box::new(self.form(value)?),
            }),
            [Datum::If, test, then, rest @ ..] if rest.len() <= 1 => Some(Form::If {
                test: Box::new(self.form(test)?),
                then: Box::new(self.form(then)?),
                otherwise: match rest {
                    [o] => Some(Box::new(self.form(o)?)),
                    _ => None,
                },
            }),
            [Datum::Begin, forms @ ..] if !forms.is_empty() => Some(Form::Begin {
                forms: self.forms(forms)?,
            }),
            [Datum::Let, Datum::List(bindings), body @ ..] if !body.is_empty() => {
                // The values are worked out where the `let` stands, then bound together.
                let mut values = Vec::with_capacity(bindings.len());
                let mut names = Vec::with_capacity(bindings.len());
                for b in bindings {
                    let Datum::List(b) = b else { return None };
                    let [name, value] = b.as_slice() else {
                        return None;
                    };
                    values.push(self.form(value)?);
                    names.push(name);
                }
                let first = self.locals;
                let scope = self.vars.len();
                for (k, name) in names.into_iter().enumerate() {
                    let bound = self.bind(name)?;
                    // A name bound twice in one `let` is an error in Scheme.
                    if self.vars[scope..].iter().any(|(v, _)| *v == bound.0) {
                        return None;
                    }
                    debug_assert_eq!(bound.1, first + k as u32);
                    self.vars.push(bound);
                }
                let body = self.forms(body);
                self.vars.truncate(scope);
                Some(Form::Let {
                    first,
                    values,
                    body: body?,
                })
            }
            [Datum::Ident(f), forms @ ..] if (f == "and" || f == "or") && self.var(f).is_none() => {
                self.names.insert(f.clone());
                let forms = self.forms(forms)?;
                Some(if f == "and" {
                    Form::And { forms }
                } else {
                    Form::Or { forms }
                })
            }
            [Datum::Ident(f), test, body @ ..]
                if (f == "when" || f == "unless") && !body.is_empty() && self.var(f).is_none() =>
            {
                self.names.insert(f.clone());
                let test = Box::new(self.form(test)?);
                let body = Box::new(Form::Begin {
                    forms: self.forms(body)?,
                });
                let nothing = Box::new(Form::Begin { forms: Vec::new() });
                Some(if f == "when" {
                    Form::If {
                        test,
                        then: body,
                        otherwise: None,
                    }
                } else {
                    Form::If {
                        test,
                        then: nothing,
                        otherwise: Some(body),
                    }
                })
            }
            [Datum::Ident(f), proc, list] if f == "alist-for-each" && self.var(f).is_none() => {
                let Datum::List(lambda) = proc else {
                    return None;
                };
                let [Datum::Lambda, Datum::List(params), body @ ..] = lambda.as_slice() else {
                    return None;
                };
                let [key, value] = params.as_slice() else {
                    return None;
                };
                if body.is_empty() || key == value {
                    return None;
                }
                self.names.insert(f.clone());
                let list = self.form(list)?;
                let scope = self.vars.len();
                let key = self.bind(key)?;
                let value = self.bind(value)?;
                let (key_slot, value_slot) = (key.1, value.1);
                self.vars.push(key);
                self.vars.push(value);
                let body = self.forms(body);
                self.vars.truncate(scope);
                Some(Form::ForEachEntry {
                    key: key_slot,
                    value: value_slot,
                    list: Box::new(list),
                    body: body?,
                })
            }
            [Datum::Ident(f), args @ ..]
                if self.var(f).is_none()
                    && RenderOp::named(f).is_none()
                    && self.procedures.contains_key(f) =>
            {
                self.inline(f, args)
            }
            [Datum::Ident(f), args @ ..] if self.var(f).is_none() => {
                let op = RenderOp::named(f)?;
                let (min, max) = op.arity();
                if args.len() < min || args.len() > max {
                    return None;
                }
                self.names.insert(f.clone());
                Some(Form::Call {
                    op,
                    args: self.forms(args)?,
                })
            }
            _ => None,
        }
    }
}

impl Reader<'_> {
    /// A call of the utility procedure `f` as a `let` of its parameters around its body. The
    /// arguments are worked out where the call stands; the body sees the parameters alone.
    fn inline(&mut self, f: &str, args: &[Datum]) -> Option<Form> {
        let procedures = self.procedures;
        let procedure = procedures.get(f)?;
        if procedure.params.len() != args.len() || self.inlining.iter().any(|p| p == f) {
            return None;
        }
        let values = self.forms(args)?;
        let first = self.locals;
        let outer = std::mem::take(&mut self.vars);
        let mut body = None;
        let bound: Option<Vec<_>> = procedure.params.iter().map(|p| self.bind_name(p)).collect();
        if let Some(bound) = bound {
            self.vars = bound;
            self.inlining.push(f.to_string());
            body = self.forms(&procedure.body);
            self.inlining.pop();
        }
        self.vars = outer;
        self.inlined.insert(f.to_string());
        Some(Form::Let {
            first,
            values,
            body: body?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase1(code: &str, structures: &[String]) -> Option<Recognised> {
        recognise(code, &[], structures, &Procedures::new())
    }

    fn structures() -> Vec<String> {
        ["info/t", "info/alist", "control/n"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn the_line_plots_loop_is_recognised() {
        let code = r#"(let ((len (length info/alist)))
            (alist-for-each
              (lambda (k v) (set! voml/here 17)
                (if (= info/t (vector-ref v 2))
                  (begin (set! control/n (+ control/n 1))
                         (if (= control/n 10) (begin (beep) (set! control/n 0)))
                         (voml-line 0 (vector-ref v 0) 1.5 info/t "x"
                            (voml-style (nth (modulo k len) info/alist) 1 #t "margin" #f 1 "butt")))))
              info/alist))"#;
        let r = phase1(code, &structures()).unwrap();
        assert_eq!(r.render.locals, 3);
        let Form::Let {
            first,
            values,
            body,
        } = &r.render.forms[0]
        else {
            panic!("{:?}", r.render.forms)
        };
        assert_eq!((*first, values.len()), (0, 1));
        let Form::ForEachEntry { key, value, .. } = &body[0] else {
            panic!("{body:?}")
        };
        assert_eq!((*key, *value), (1, 2));
        assert!(!r.names.contains("voml/here"));
        for name in ["alist-for-each", "voml-line", "nth", "beep", "="] {
            assert!(r.names.contains(name), "{name} in {:?}", r.names);
        }
    }

    #[test]
    fn and_or_when_unless_are_recognised_and_hidden_by_no_variable() {
        let s = structures();
        let r = phase1(
            "(when (and info/t (or #f 1)) (unless control/n (beep)))",
            &s,
        )
        .unwrap();
        assert!(matches!(
            r.render.forms[0],
            Form::If {
                otherwise: None,
                ..
            }
        ));
        for name in ["and", "or", "when", "unless"] {
            assert!(r.names.contains(name), "{name}");
            let code = format!("(let (({name} 1)) {name})");
            assert_eq!(phase1(&code, &s), None, "{code}");
        }
    }

    #[test]
    fn other_code_is_left_to_scheme() {
        let s = structures();
        for code in [
            // A global that is not one of the component's structures.
            "(voml-line 0 other 0 1 1 (voml-style \"red\" 1 #f \"area\" #f 1 \"butt\"))",
            // A procedure the forms do not know, or a primitive with the wrong arguments.
            "(display info/t)",
            "(length info/alist info/t)",
            "(beep 1)",
            // A lambda that is not the loop's, a named let, define.
            "(let ((f (lambda (x) x))) (f 1))",
            "(let loop ((i 0)) (if (< i 3) (loop (+ i 1))))",
            "(define x 1)",
            // A literal steel cuts short, quoted data.
            "(+ info/t 100000000)",
            "(car '(1 2))",
            // A variable hiding a primitive or a structure.
            "(let ((length 1)) length)",
            "(let ((info/t 1)) info/t)",
            "(alist-for-each (lambda (k k) k) info/alist)",
            // Assigning what is not a structure.
            "(set! other 1)",
        ] {
            assert_eq!(phase1(code, &s), None, "{code}");
        }
    }

    #[test]
    fn variables_are_found_innermost_first_and_let_values_outside() {
        let s = structures();
        let r = phase1("(let ((a 1)) (let ((a (+ a 1)) (b a)) (+ a b)))", &s).unwrap();
        let Form::Let { body, .. } = &r.render.forms[0] else {
            panic!()
        };
        let Form::Let {
            first,
            values,
            body,
        } = &body[0]
        else {
            panic!()
        };
        assert_eq!(*first, 1);
        // The values read the outer `a` (slot 0); the body the inner ones (1 and 2).
        assert_eq!(
            values[1],
            Form::Local { slot: 0 },
            "`b` is bound to the outer `a`"
        );
        assert_eq!(
            body[0],
            Form::Call {
                op: RenderOp::Add,
                args: vec![Form::Local { slot: 1 }, Form::Local { slot: 2 }]
            }
        );
    }

    /// A utility procedure's call becomes a `let` of its parameters around its body, which
    /// sees its parameters and not the caller's variables; a call of the wrong arity, a
    /// procedure calling itself, or one the utility code defines twice is not inlined.
    #[test]
    fn utility_procedures_are_inlined_in_their_own_scope() {
        let mut known = Procedures::new();
        procedures(
            "(define (twice x) (+ x x)) (define (leak y) (+ y k)) (define (loop n) (loop n))\n\
             (define (dup a) a) (define (dup b) b) (define (pair a a) a)",
            &mut known,
        );
        let procedures = known;
        assert!(procedures.contains_key("twice") && procedures.contains_key("loop"));
        assert!(!procedures.contains_key("dup") && !procedures.contains_key("pair"));
        let s = structures();
        let input = |code: &str| recognise(code, &["k".to_string()], &s, &procedures);
        let r = input("(set! info/t (twice k))").unwrap();
        assert_eq!(r.render.locals, 2, "k, then x");
        assert_eq!(r.inlined, BTreeSet::from(["twice".to_string()]));
        let Form::Set { value, .. } = &r.render.forms[0] else {
            panic!("{:?}", r.render.forms)
        };
        assert_eq!(
            **value,
            Form::Let {
                first: 1,
                values: vec![Form::Local { slot: 0 }],
                body: vec![Form::Call {
                    op: RenderOp::Add,
                    args: vec![Form::Local { slot: 1 }, Form::Local { slot: 1 }]
                }]
            }
        );
        // `k` is the caller's parameter, not the procedure's: its body reads a global.
        assert_eq!(input("(set! info/t (leak 1))"), None);
        assert_eq!(input("(set! info/t (twice 1 2))"), None);
        assert_eq!(input("(set! info/t (loop 1))"), None);
        assert_eq!(input("(set! info/t (dup 1))"), None);
    }
}
