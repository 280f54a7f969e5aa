//! The input parts of a library component that several EP components `use`, compiled once.
//!
//! Every instance of a library component has the library's code with its own structures and
//! fields put in for `$n`, `%n` and `^n/m`, and steel compiles each procedure of a program
//! anew: the six `thread-states` of `examples/library/rp3.voml` were six compilations of the
//! same code, two thirds of loading it. So the first instance's input part becomes a
//! procedure of its own, `voml/shared/N`, whose parameters are the input's fields and the
//! structures the code only reads, named as the first instance names them (its text and
//! source map are the first instance's code, unchanged: errors and runaways are reported in
//! the library's code as before). Each instance's input part calls it with its own fields
//! and structures, read when the call is made.
//!
//! A structure becomes a parameter only where its value at the call means what its global
//! means for the whole call: the code never `set!`s it and no utility code does; it is not
//! named inside a procedure the code makes (`lambda`, a procedure `define`, `delay`...,
//! which could outlive the call), nor in quoted data; the program defines no macros. The
//! structures that stay globals must be the same in the instances that share, and the rest
//! of the code the same token for token: an instance that differs otherwise gets its own
//! procedure, as every instance did before.

use std::collections::{HashMap, HashSet};

use voml_ir::tokens::{Token, Tokens};

/// Forms whose body may run after the call that made them.
const CLOSURES: &[&str] = &[
    "lambda",
    "λ",
    "fn",
    "case-lambda",
    "delay",
    "delay-force",
    "make-promise",
    "lazy",
    "stream-cons",
    "cons-stream",
];
/// Forms whose data is not evaluated.
const QUOTES: &[&str] = &["quote", "quasiquote", "syntax", "quasisyntax"];
/// Names that define macros: a program using them keeps a procedure per instance.
const MACROS: &[&str] = &[
    "define-syntax",
    "let-syntax",
    "letrec-syntax",
    "syntax-rules",
    "syntax-case",
    "defmacro",
    "define-macro",
];

/// The input parts shared so far, and what decides which may be.
#[derive(Default)]
pub(super) struct Sharing {
    /// How many EP components use each library component.
    pub uses: HashMap<String, usize>,
    /// By library component and input: the shared procedure.
    parts: HashMap<(String, usize), Shared>,
    /// Names the program's code before the components `set!`s (utility code, view
    /// initialisation), and whether it defines macros.
    written: (HashSet<String>, bool),
}

/// An input part compiled once for the instances of a library component.
struct Shared {
    symbol: String,
    /// The first instance's code, which the others are compared with, and its tokens with
    /// where each stands.
    text: String,
    places: Vec<(Token, Place)>,
    /// The first instance's field parameters.
    fields: Vec<String>,
    /// Its structures' globals (infos, then controls), by position in the lists.
    globals: Vec<Option<String>>,
    /// The positions passed as parameters, after the fields.
    passed: Vec<usize>,
}

/// What an instance's input part becomes.
pub(super) enum Plan {
    /// A procedure of its own, as without sharing.
    Own,
    /// The shared procedure is to be defined first, as `symbol` with `params` and the
    /// instance's code, and the part calls it with `call`'s arguments.
    First {
        symbol: String,
        params: String,
        call: String,
    },
    /// The part calls the shared procedure: `call` is the call.
    Call { call: String },
}

/// Where an atom of a text stands.
#[derive(Clone, Copy, Default)]
struct Place {
    set_target: bool,
    in_closure: bool,
    quoted: bool,
}

/// The tokens of `text` with the place of each.
fn places(text: &str) -> Vec<(Token, Place)> {
    struct Frame {
        closure: bool,
        quoted: bool,
        /// The next token is the form's head.
        head: bool,
        /// A `define` whose next token says whether it makes a procedure.
        define: bool,
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut pending_quote = false;
    let mut after_set = false;
    let mut out = Vec::new();
    for tok in Tokens::new(text) {
        let (closure, quoted) = stack
            .last()
            .map_or((false, false), |f| (f.closure, f.quoted));
        let mut place = Place {
            set_target: false,
            in_closure: closure,
            quoted: quoted || pending_quote,
        };
        match &tok {
            Token::Prefix(_) => {
                pending_quote = true;
                after_set = false;
            }
            Token::Open(_) => {
                // `(define (f ...) ...)`: the whole form is a procedure made.
                let procedure = stack.last_mut().is_some_and(|f| {
                    let d = f.define;
                    f.define = false;
                    if d {
                        f.closure = true;
                    }
                    d
                });
                if let Some(f) = stack.last_mut() {
                    f.head = false;
                }
                stack.push(Frame {
                    closure: closure || procedure,
                    quoted: place.quoted,
                    head: true,
                    define: false,
                });
                pending_quote = false;
                after_set = false;
            }
            Token::Close(_) => {
                stack.pop();
                pending_quote = false;
                after_set = false;
            }
            Token::Atom(r) => {
                let atom = &text[r.clone()];
                place.set_target = after_set;
                after_set = false;
                if let Some(f) = stack.last_mut() {
                    f.define = false;
                    if f.head && !place.quoted {
                        if CLOSURES.contains(&atom) {
                            f.closure = true;
                        } else if QUOTES.contains(&atom) {
                            f.quoted = true;
                        } else if atom == "set!" {
                            after_set = true;
                        } else if atom == "define" || atom == "defn" {
                            f.define = true;
                        }
                    }
                    f.head = false;
                }
                pending_quote = false;
            }
            Token::String(_) => {
                if let Some(f) = stack.last_mut() {
                    f.head = false;
                    f.define = false;
                }
                pending_quote = false;
                after_set = false;
            }
        }
        out.push((tok, place));
    }
    out
}

/// The names `text` `set!`s, and whether it names a macro-defining form. `(set! x x)`, with
/// which the program's globals start (so that steel does not take them for constants),
/// changes nothing and does not count.
fn written(text: &str) -> (HashSet<String>, bool) {
    let mut set = HashSet::new();
    let mut macros = false;
    let toks = places(text);
    for (i, (tok, place)) in toks.iter().enumerate() {
        if let Token::Atom(r) = tok {
            let atom = &text[r.clone()];
            let unchanged = matches!(
                (toks.get(i + 1), toks.get(i + 2)),
                (Some((Token::Atom(v), _)), Some((Token::Close(_), _))) if &text[v.clone()] == atom
            );
            if place.set_target && !unchanged {
                set.insert(atom.to_string());
            }
            macros |= MACROS.contains(&atom);
        }
    }
    (set, macros)
}

impl Sharing {
    /// Counts the uses of library components among `components` and reads `before`, the
    /// program before them (what procedures the components' code may call `set!`s).
    pub(super) fn start<'e>(
        &mut self,
        components: impl Iterator<Item = &'e crate::xml::Element>,
        before: &str,
    ) {
        for el in components {
            if let Some(lib) = el.attr_text("use") {
                *self.uses.entry(lib.trim().to_string()).or_default() += 1;
            }
        }
        if self.uses.values().any(|&n| n > 1) {
            self.written = written(before);
        }
    }

    /// What the input part `k` of an instance of library component `library` becomes: its
    /// code `text`, its field parameters `fields` and its structures' globals `globals`
    /// (infos, then controls; `None` where a name did not resolve).
    pub(super) fn plan(
        &mut self,
        library: &str,
        k: usize,
        text: &str,
        fields: &[String],
        globals: &[Option<String>],
    ) -> Plan {
        if self.uses.get(library).copied().unwrap_or(0) < 2 {
            return Plan::Own;
        }
        let (outside, macros) = &self.written;
        if *macros {
            return Plan::Own;
        }
        let key = (library.to_string(), k);
        if let Some(shared) = self.parts.get(&key) {
            return match shared.call_for(text, fields, globals, outside) {
                Some(call) => Plan::Call { call },
                None => Plan::Own,
            };
        }
        let here = places(text);
        let mut set_here = HashSet::new();
        let mut named = HashSet::new();
        let mut bad = HashSet::new();
        for (tok, place) in &here {
            if let Token::Atom(r) = tok {
                let atom = &text[r.clone()];
                if MACROS.contains(&atom) {
                    return Plan::Own;
                }
                named.insert(atom);
                if place.set_target {
                    set_here.insert(atom);
                }
                if place.in_closure || place.quoted {
                    bad.insert(atom);
                }
            }
        }
        let count = |g: &str| globals.iter().flatten().filter(|h| *h == g).count();
        let passed: Vec<usize> = globals
            .iter()
            .enumerate()
            .filter_map(|(i, g)| {
                let g = g.as_deref()?;
                (named.contains(g)
                    && !set_here.contains(g)
                    && !bad.contains(g)
                    && !outside.contains(g)
                    && count(g) == 1
                    && !fields.iter().any(|f| f == g))
                .then_some(i)
            })
            .collect();
        let symbol = format!("voml/shared/{}", self.parts.len());
        let mut params: Vec<&str> = fields.iter().map(String::as_str).collect();
        params.extend(passed.iter().filter_map(|&i| globals[i].as_deref()));
        let shared = Shared {
            symbol: symbol.clone(),
            text: text.to_string(),
            places: here,
            fields: fields.to_vec(),
            globals: globals.to_vec(),
            passed,
        };
        let call = shared.call(fields, globals);
        self.parts.insert(key, shared);
        Plan::First {
            symbol,
            params: params.join(" "),
            call,
        }
    }
}

impl Shared {
    /// The call of the shared procedure with an instance's fields and structures.
    fn call(&self, fields: &[String], globals: &[Option<String>]) -> String {
        let mut call = format!("({}", self.symbol);
        for name in fields
            .iter()
            .chain(self.passed.iter().filter_map(|&i| globals[i].as_ref()))
        {
            call.push(' ');
            call.push_str(name);
        }
        call.push(')');
        call
    }

    /// The call for an instance whose code is `text`, if its code is this one's with its
    /// own fields and passed structures in their places and nothing else changed.
    fn call_for(
        &self,
        text: &str,
        fields: &[String],
        globals: &[Option<String>],
        outside: &HashSet<String>,
    ) -> Option<String> {
        if fields.len() != self.fields.len() || globals.len() != self.globals.len() {
            return None;
        }
        // The names that are parameters in the shared code, and what stands for each here.
        let mut theirs: HashMap<&str, &str> = HashMap::new();
        for (a, b) in self.fields.iter().zip(fields) {
            theirs.insert(a, b);
        }
        for &i in &self.passed {
            let (a, b) = (self.globals[i].as_deref()?, globals[i].as_deref()?);
            if outside.contains(b) {
                return None;
            }
            theirs.insert(a, b);
        }
        let mut here = Tokens::new(text);
        for (tok, place) in &self.places {
            let other = here.next()?;
            let (a, b) = (&self.text[tok.range()], &text[other.range()]);
            let same_kind = std::mem::discriminant(tok) == std::mem::discriminant(&other);
            if !same_kind {
                return None;
            }
            match theirs.get(a) {
                // A parameter: this instance's name for it, and only where it is evaluated.
                Some(b_name) => {
                    if b != *b_name || (a != b && place.quoted) {
                        return None;
                    }
                }
                None => {
                    if a != b {
                        return None;
                    }
                }
            }
        }
        if here.next().is_some() {
            return None;
        }
        Some(self.call(fields, globals))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn globals(v: &[&str]) -> Vec<Option<String>> {
        v.iter().map(|s| Some(s.to_string())).collect()
    }

    fn sharing() -> Sharing {
        with_utility("")
    }

    /// Three uses of `lib`, after `utility`.
    fn with_utility(utility: &str) -> Sharing {
        let mut s = Sharing::default();
        s.uses.insert("lib".into(), 3);
        s.written = written(utility);
        s
    }

    #[test]
    fn read_structures_are_passed_and_written_ones_stay_globals() {
        let mut s = sharing();
        let fields = names(&["input0/ts"]);
        let a = "(set! info/n (+ info/n input0/ts control/a))";
        let Plan::First {
            symbol,
            params,
            call,
        } = s.plan("lib", 0, a, &fields, &globals(&["info/n", "control/a"]))
        else {
            panic!("the first instance does not share");
        };
        assert_eq!(symbol, "voml/shared/0");
        assert_eq!(params, "input0/ts control/a");
        assert_eq!(call, "(voml/shared/0 input0/ts control/a)");
        let b = "(set! info/n (+ info/n input0/ts control/b))";
        let Plan::Call { call } = s.plan("lib", 0, b, &fields, &globals(&["info/n", "control/b"]))
        else {
            panic!("the second instance does not share");
        };
        assert_eq!(call, "(voml/shared/0 input0/ts control/b)");
        // Another global written: its own procedure.
        let c = "(set! info/m (+ info/m input0/ts control/b))";
        assert!(matches!(
            s.plan("lib", 0, c, &fields, &globals(&["info/m", "control/b"])),
            Plan::Own
        ));
    }

    #[test]
    fn structures_in_closures_quotes_or_written_by_utility_code_stay_globals() {
        for (code, utility) in [
            ("(set! info/f (lambda () control/a))", ""),
            ("(begin (define (f) control/a) (f))", ""),
            ("(set! info/f (list 'control/a))", ""),
            ("(set! info/f (quote (control/a)))", ""),
            ("(set! info/f control/a)", "(define (g) (set! control/a 1))"),
            ("(set! info/f control/a)", "(set! control/a control/b)"),
        ] {
            let mut s = with_utility(utility);
            let g = globals(&["info/f", "control/a"]);
            let Plan::First { params, .. } = s.plan("lib", 0, code, &[], &g) else {
                panic!("{code}: not shared");
            };
            assert_eq!(params, "", "{code} with {utility}");
            // So another instance with another control has its own procedure.
            let other = code.replace("control/a", "control/b");
            let g = globals(&["info/f", "control/b"]);
            assert!(
                matches!(s.plan("lib", 0, &other, &[], &g), Plan::Own),
                "{other}"
            );
        }
    }

    #[test]
    fn a_loop_reads_a_passed_structure_and_macros_or_one_use_share_nothing() {
        let mut s = sharing();
        let code = "(let loop ((i 0)) (if (lt i control/a) (loop (+ i 1))))";
        let Plan::First { params, .. } = s.plan("lib", 0, code, &[], &globals(&["control/a"]))
        else {
            panic!("not shared");
        };
        assert_eq!(params, "control/a");
        // Globals that start as themselves are not written.
        let mut s = with_utility("(define control/a 1)\n(set! control/a control/a)");
        let Plan::First { params, .. } = s.plan("lib", 0, code, &[], &globals(&["control/a"]))
        else {
            panic!("not shared");
        };
        assert_eq!(params, "control/a");
        let mut s = with_utility("(define-syntax m (syntax-rules () ((_ x) x)))");
        assert!(matches!(
            s.plan("lib", 0, code, &[], &globals(&["control/a"])),
            Plan::Own
        ));
        let mut s = Sharing::default();
        s.uses.insert("lib".into(), 1);
        assert!(matches!(
            s.plan("lib", 0, code, &[], &globals(&["control/a"])),
            Plan::Own
        ));
    }

    #[test]
    fn an_instance_naming_a_passed_structure_of_the_first_itself_has_its_own_procedure() {
        let mut s = sharing();
        let a = "(set! info/n (+ control/a control/b))";
        let g = globals(&["info/n", "control/a", "control/b"]);
        let Plan::First { params, .. } = s.plan("lib", 0, a, &[], &g) else {
            panic!("not shared");
        };
        assert_eq!(params, "control/a control/b");
        // The second names control/a where the first's second control stands, as its own
        // first: the same text would read the wrong one.
        let b = "(set! info/n (+ control/c control/a))";
        let g2 = globals(&["info/n", "control/c", "control/a"]);
        let Plan::Call { call } = s.plan("lib", 0, b, &[], &g2) else {
            panic!("a renaming is shared");
        };
        assert_eq!(call, "(voml/shared/0 control/c control/a)");
        let c = "(set! info/n (+ control/a control/a))";
        let g3 = globals(&["info/n", "control/z", "control/a"]);
        assert!(matches!(s.plan("lib", 0, c, &[], &g3), Plan::Own));
    }
}
