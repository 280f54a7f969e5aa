//! The names a program uses and defines nowhere, found by reading it rather than compiling it.
//!
//! `voml check` loads the program into a Scheme engine so that a name defined nowhere is
//! reported before any replay; steel's compiler is most of the time of a check (about 0.6 s
//! per MB of program) and stops at the first such name. [`walk`] reads the program once,
//! knowing the special forms VO code may use and where they bind names, and gives
//!
//! - every use of a name that is neither bound around it, nor defined at the program's top
//!   level, nor a global of the engine, with its place;
//! - the program with only the top-level forms that must still run in an engine for the check
//!   to be what loading is: those that compute something when the program loads, and the
//!   definitions and assignments of what they read. Defining a procedure or a literal value
//!   cannot fail, so those forms are blanked out (the text keeps its length, and so every
//!   place in it).
//!
//! The walk vouches only for what it fully understands. A form it does not know the shape of
//! (`while`, a `do` variable without a step, a `define` where steel refuses one, an
//! application of a `lambda` whose arity steel checks, a dotted list), a token steel may read otherwise (`#:key`,
//! `|name|`, `+name`), a special form's name bound as a variable or redefined: any of these
//! and it returns `None`, and the caller loads the whole program as before. What it accepts
//! is therefore a part of what steel accepts, with the same names found undefined.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use voml_ir::tokens::{atom, Atom, Token, Tokens};

use crate::sandbox::allow;

/// A use of a name that is defined nowhere, by its place in the program text.
#[derive(Clone, Debug, PartialEq)]
pub struct Unbound {
    pub name: String,
    pub at: Range<usize>,
}

/// What [`walk`] found.
#[derive(Debug)]
pub struct Walk {
    /// Every use of a name defined nowhere, in the order of the text.
    pub unbound: Vec<Unbound>,
    /// The program's top-level names (what it defines).
    pub defined: HashSet<String>,
    /// The program with only the top-level forms that must run when it loads; every other
    /// form is blanked out with spaces (line breaks kept), so places are unchanged.
    pub top_level: String,
}

/// Reads `text`; `known` tells the engine's globals (the allowed built-ins, the VOML
/// primitives and prelude). `None` when the walk cannot vouch for the program.
pub fn walk(text: &str, known: &dyn Fn(&str) -> bool) -> Option<Walk> {
    let mut walker = Walker {
        text,
        known,
        globals: HashSet::new(),
        locals: Vec::new(),
        unbound: Vec::new(),
        reads: Vec::new(),
    };
    // Twice through the program, a top-level form at a time (a large program read whole
    // would take several times its size): its names first, then what each form does.
    let mut forms = Reader::new(text);
    while let Some(form) = forms.form()? {
        walker.declare(&form)?;
    }
    let mut forms = Reader::new(text);
    let mut tops = Vec::new();
    let mut defined_before: HashSet<&str> = HashSet::new();
    while let Some(form) = forms.form()? {
        let top = walker.top(&form, &defined_before)?;
        defined_before.extend(top.writes.iter().copied());
        tops.push(top);
    }
    let top_level = keep_what_runs(text, &tops);
    Some(Walk {
        unbound: walker.unbound,
        defined: walker.globals.iter().map(|s| s.to_string()).collect(),
        top_level,
    })
}

/// The program's text with every top-level form blanked out but those that must run: the
/// forms that are not inert, and, transitively, those that define or assign a name one of
/// them reads.
fn keep_what_runs(text: &str, tops: &[Top]) -> String {
    let mut writers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, t) in tops.iter().enumerate() {
        for w in &t.writes {
            writers.entry(w).or_default().push(i);
        }
    }
    let mut keep: Vec<bool> = tops.iter().map(|t| !t.inert).collect();
    let mut pending: Vec<usize> = (0..tops.len()).filter(|&i| keep[i]).collect();
    let mut seen: HashSet<&str> = HashSet::new();
    while let Some(i) = pending.pop() {
        for name in &tops[i].reads {
            if !seen.insert(name) {
                continue;
            }
            for &w in writers.get(name).map(Vec::as_slice).unwrap_or(&[]) {
                if !keep[w] {
                    keep[w] = true;
                    pending.push(w);
                }
            }
        }
    }
    let mut bytes = text.as_bytes().to_vec();
    for (top, kept) in tops.iter().zip(keep) {
        if !kept {
            for b in &mut bytes[top.at.clone()] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
    }
    // Whole tokens were replaced by ASCII spaces: still UTF-8.
    String::from_utf8(bytes).unwrap_or_default()
}

/// A datum as read, by its place in the text.
#[derive(Debug)]
enum Sx {
    /// An identifier, number, boolean or character.
    Atom(Range<usize>),
    String(Range<usize>),
    List(Vec<Sx>, Range<usize>),
    /// `'x`, `` `x ``, `,x`, `,@x` or `#(...)`, the prefix's place first.
    Prefixed(Prefix, Box<Sx>, Range<usize>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Prefix {
    Quote,
    Quasi,
    Unquote,
    Splice,
    Vector,
}

impl Sx {
    fn at(&self) -> Range<usize> {
        match self {
            Sx::Atom(r) | Sx::String(r) | Sx::List(_, r) | Sx::Prefixed(_, _, r) => r.clone(),
        }
    }
}

/// Reads the tokens of a program into data, a top-level form at a time, giving up on anything
/// steel may read otherwise.
struct Reader<'a> {
    text: &'a str,
    tokens: std::iter::Peekable<Tokens<'a>>,
    depth: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Reader {
            text,
            tokens: Tokens::new(text).peekable(),
            depth: 0,
        }
    }

    /// The next top-level form, `Some(None)` at the end.
    fn form(&mut self) -> Option<Option<Sx>> {
        while self.tokens.peek().is_some() {
            if let Some(form) = self.datum()? {
                return Some(Some(form));
            }
        }
        Some(None)
    }

    /// The next datum; `Some(None)` after a datum comment, which reads nothing.
    fn datum(&mut self) -> Option<Option<Sx>> {
        let token = self.tokens.next()?;
        Some(Some(match token {
            Token::Atom(r) => Sx::Atom(r),
            Token::String(r) => Sx::String(r),
            Token::Close(_) => return None,
            Token::Open(r) => {
                // steel reads `{` otherwise than `(`.
                if &self.text[r.clone()] == "{" {
                    return None;
                }
                self.depth += 1;
                if self.depth > voml_ir::MAX_NESTING {
                    return None;
                }
                let mut items = Vec::new();
                let end = loop {
                    if let Token::Close(c) = self.tokens.peek()? {
                        let end = c.end;
                        self.tokens.next();
                        break end;
                    }
                    if let Some(item) = self.datum()? {
                        items.push(item);
                    }
                };
                self.depth -= 1;
                Sx::List(items, r.start..end)
            }
            Token::Prefix(r) => {
                let prefix = match &self.text[r.clone()] {
                    "'" => Prefix::Quote,
                    "`" => Prefix::Quasi,
                    "," => Prefix::Unquote,
                    ",@" => Prefix::Splice,
                    "#" => Prefix::Vector,
                    "#;" => {
                        // A datum comment: the next datum is not read.
                        self.datum()??;
                        return Some(None);
                    }
                    _ => return None,
                };
                let inner = loop {
                    if let Some(inner) = self.datum()? {
                        break inner;
                    }
                };
                let end = inner.at().end;
                Sx::Prefixed(prefix, Box::new(inner), r.start..end)
            }
        }))
    }
}

/// Names the walk reads as forms, or that steel does: never a variable of VO code.
const SPECIAL: &[&str] = &[
    "quote",
    "quasiquote",
    "unquote",
    "unquote-splicing",
    "lambda",
    "fn",
    "λ",
    "define",
    "defn",
    "let",
    "begin",
    "if",
    "set!",
    "else",
    "...",
    ".",
];

fn is_special(name: &str) -> bool {
    SPECIAL.contains(&name)
        || allow::MACROS.contains(&name)
        || allow::RESERVED_FORMS.contains(&name)
}

/// A top-level form: whether it can be left out of the load, and the names it defines or
/// assigns and reads.
struct Top<'a> {
    /// Where it stands in the text.
    at: Range<usize>,
    inert: bool,
    writes: Vec<&'a str>,
    reads: Vec<&'a str>,
}

struct Walker<'a, 'k> {
    text: &'a str,
    known: &'k dyn Fn(&str) -> bool,
    /// The program's top-level definitions.
    globals: HashSet<&'a str>,
    /// Names bound around the datum being walked, innermost last.
    locals: Vec<&'a str>,
    unbound: Vec<Unbound>,
    /// The program's globals the current top-level form reads.
    reads: Vec<&'a str>,
}

type Walked = Option<()>;

impl<'a> Walker<'a, '_> {
    fn str(&self, r: &Range<usize>) -> &'a str {
        &self.text[r.clone()]
    }

    /// The identifier `sx` is, if it is a plain one.
    fn name(&self, sx: &Sx) -> Option<&'a str> {
        match sx {
            Sx::Atom(r) => match atom(self.str(r))? {
                Atom::Name(n) => Some(n),
                Atom::Literal => None,
            },
            _ => None,
        }
    }

    /// A name a form binds: a plain identifier that is no form's name.
    fn binder(&self, sx: &Sx) -> Option<&'a str> {
        self.name(sx).filter(|n| !is_special(n))
    }

    /// The head of a list as a form's name, when it is not bound locally.
    fn keyword(&self, items: &[Sx]) -> Option<&'a str> {
        let head = self.name(items.first()?)?;
        (!self.locals.contains(&head)).then_some(head)
    }

    /// Collects the names a top-level form defines (`begin` splices its forms).
    fn declare(&mut self, form: &Sx) -> Walked {
        let Sx::List(items, _) = form else {
            return Some(());
        };
        match self.keyword(items) {
            Some("define" | "defn") => {
                let name = self.defined_name(items)?;
                if (self.known)(name) {
                    // A redefined built-in: steel's rules for that are not the walk's.
                    return None;
                }
                self.globals.insert(name);
            }
            Some("begin") => {
                for item in &items[1..] {
                    self.declare(item)?;
                }
            }
            _ => {}
        }
        Some(())
    }

    /// The name `(define name value)` or `(define (name params...) body...)` defines.
    fn defined_name(&self, items: &[Sx]) -> Option<&'a str> {
        match items.get(1)? {
            Sx::List(signature, _) => self.binder(signature.first()?),
            other if items.len() == 3 => self.binder(other),
            _ => None,
        }
    }

    /// Walks a top-level form: whether it is inert, what it defines or assigns, and the
    /// program's globals it reads.
    fn top(&mut self, form: &Sx, defined_before: &HashSet<&'a str>) -> Option<Top<'a>> {
        self.reads.clear();
        let (inert, writes) = match form {
            Sx::List(items, _) => match self.keyword(items) {
                Some("define" | "defn") => {
                    let name = self.defined_name(items)?;
                    self.definition(items)?;
                    let inert = match &items[1] {
                        Sx::List(..) => true,
                        _ => self.is_lambda(&items[2]) || self.constant(&items[2], defined_before),
                    };
                    (inert, vec![name])
                }
                Some("set!") if items.len() == 3 => {
                    self.expr(form)?;
                    let name = self.name(&items[1])?;
                    (self.constant(&items[2], defined_before), vec![name])
                }
                Some("begin") => {
                    let mut writes = Vec::new();
                    for item in &items[1..] {
                        match item {
                            Sx::List(inner, _)
                                if matches!(self.keyword(inner), Some("define" | "defn")) =>
                            {
                                writes.push(self.defined_name(inner)?);
                                self.definition(inner)?;
                            }
                            _ => self.expr(item)?,
                        }
                    }
                    (false, writes)
                }
                _ => {
                    self.expr(form)?;
                    (false, Vec::new())
                }
            },
            _ => {
                self.expr(form)?;
                (self.constant(form, defined_before), Vec::new())
            }
        };
        Some(Top {
            at: form.at(),
            inert,
            writes,
            reads: std::mem::take(&mut self.reads),
        })
    }

    /// Whether evaluating `sx` at the top level can neither fail nor do anything: a literal,
    /// quoted data, or a global already defined.
    fn constant(&self, sx: &Sx, defined_before: &HashSet<&'a str>) -> bool {
        match sx {
            Sx::String(_) => true,
            Sx::Prefixed(Prefix::Quote, ..) => true,
            Sx::Atom(r) => match atom(self.str(r)) {
                Some(Atom::Literal) => true,
                Some(Atom::Name(n)) => {
                    defined_before.contains(n) || (!self.globals.contains(n) && (self.known)(n))
                }
                None => false,
            },
            Sx::List(items, _) => matches!(self.keyword(items), Some("quote")) && items.len() == 2,
            Sx::Prefixed(..) => false,
        }
    }

    fn is_lambda(&self, sx: &Sx) -> bool {
        matches!(sx, Sx::List(items, _) if matches!(self.keyword(items), Some("lambda" | "fn" | "λ")))
    }

    /// `(define name value)` or `(define (name params...) body...)`, where a definition may
    /// stand; its name is already bound by the caller.
    fn definition(&mut self, items: &[Sx]) -> Walked {
        match items.get(1)? {
            Sx::List(signature, _) => {
                self.binder(signature.first()?)?;
                self.lambda_rest(&signature[1..], &items[2..])
            }
            _ if items.len() == 3 => self.expr(&items[2]),
            _ => None,
        }
    }

    /// Parameters and body of a procedure.
    fn lambda_rest(&mut self, params: &[Sx], body: &[Sx]) -> Walked {
        let mark = self.locals.len();
        let mut i = 0;
        while i < params.len() {
            if self.name(&params[i]) == Some(".") {
                // `(a . rest)`: exactly one name after the dot.
                if i + 2 != params.len() {
                    return None;
                }
            } else {
                let p = self.binder(&params[i])?;
                self.locals.push(p);
            }
            i += 1;
        }
        let walked = self.body(body);
        self.locals.truncate(mark);
        walked
    }

    /// A body: definitions (bound throughout it) and expressions, at least one expression.
    fn body(&mut self, items: &[Sx]) -> Walked {
        let mark = self.locals.len();
        let mut definitions = Vec::new();
        for item in items {
            if let Sx::List(inner, _) = item {
                if matches!(self.keyword(inner), Some("define" | "defn")) {
                    let name = self.defined_name(inner)?;
                    self.locals.push(name);
                    definitions.push(inner);
                }
            }
        }
        if definitions.len() == items.len() {
            return None;
        }
        let mut walked = Some(());
        for item in items {
            walked = match item {
                Sx::List(inner, _) if definitions.iter().any(|d| std::ptr::eq(*d, inner)) => {
                    self.definition(inner)
                }
                _ => self.expr(item),
            };
            if walked.is_none() {
                break;
            }
        }
        self.locals.truncate(mark);
        walked
    }

    fn reference(&mut self, name: &'a str, at: Range<usize>) -> Walked {
        if is_special(name) {
            return None;
        }
        if self.locals.contains(&name) {
            return Some(());
        }
        if self.globals.contains(name) {
            self.reads.push(name);
        } else if !(self.known)(name) {
            self.unbound.push(Unbound {
                name: name.to_string(),
                at,
            });
        }
        Some(())
    }

    fn exprs(&mut self, items: &[Sx]) -> Walked {
        items.iter().try_for_each(|i| self.expr(i))
    }

    fn expr(&mut self, sx: &Sx) -> Walked {
        match sx {
            Sx::String(_) => Some(()),
            Sx::Atom(r) => match atom(self.str(r))? {
                Atom::Literal => Some(()),
                Atom::Name(n) => self.reference(n, r.clone()),
            },
            Sx::Prefixed(Prefix::Quote, ..) => Some(()),
            Sx::Prefixed(Prefix::Quasi, inner, _) => self.quasi(inner),
            // Whether steel evaluates a vector literal's items is steel's business.
            Sx::Prefixed(Prefix::Vector | Prefix::Unquote | Prefix::Splice, ..) => None,
            Sx::List(items, _) => self.form(items),
        }
    }

    /// Quasiquoted data: only what is unquoted is code (one level; nested quasiquotes are
    /// left to steel).
    fn quasi(&mut self, sx: &Sx) -> Walked {
        match sx {
            Sx::Prefixed(Prefix::Unquote | Prefix::Splice, inner, _) => self.expr(inner),
            Sx::Prefixed(Prefix::Quasi, ..) => None,
            Sx::Prefixed(_, inner, _) => self.quasi(inner),
            Sx::List(items, _) => {
                match self.name(items.first().unwrap_or(sx)) {
                    Some("unquote" | "unquote-splicing" | "quasiquote") => return None,
                    Some(".") => return None,
                    _ => {}
                }
                items.iter().try_for_each(|i| self.quasi(i))
            }
            Sx::Atom(r) if self.str(r) == "." => None,
            _ => Some(()),
        }
    }

    fn form(&mut self, items: &[Sx]) -> Walked {
        let head = items.first()?;
        let n = items.len();
        match self.keyword(items) {
            Some("quote") => (n == 2).then_some(()),
            Some("quasiquote") if n == 2 => self.quasi(&items[1]),
            Some("lambda" | "fn" | "λ") if n >= 3 => match &items[1] {
                Sx::List(params, _) => self.lambda_rest(params, &items[2..]),
                single => {
                    let p = self.binder(single)?;
                    self.locals.push(p);
                    let walked = self.body(&items[2..]);
                    self.locals.pop();
                    walked
                }
            },
            Some("if") if n == 3 || n == 4 => self.exprs(&items[1..]),
            Some("when" | "unless") if n >= 3 => self.exprs(&items[1..]),
            Some("and" | "or") => self.exprs(&items[1..]),
            Some("begin") if n >= 2 => {
                // A definition inside is steel's business.
                for item in &items[1..] {
                    if let Sx::List(inner, _) = item {
                        if matches!(self.keyword(inner), Some("define" | "defn")) {
                            return None;
                        }
                    }
                }
                self.exprs(&items[1..])
            }
            Some("set!") if n == 3 => {
                let target = self.name(&items[1])?;
                // steel refuses to assign its built-ins.
                let built_in = (self.known)(target) || is_special(target);
                if built_in && !self.locals.contains(&target) && !self.globals.contains(target) {
                    return None;
                }
                self.reference(target, items[1].at())?;
                self.expr(&items[2])
            }
            Some("let") if n >= 3 => match &items[1] {
                Sx::List(bindings, _) => self.let_form(bindings, &items[2..], Scope::Parallel),
                name => {
                    // Named let: the loop's name is bound in the body only.
                    let name = self.binder(name)?;
                    let Some(Sx::List(bindings, _)) = items.get(2) else {
                        return None;
                    };
                    if n < 4 {
                        return None;
                    }
                    let pairs = self.bindings(bindings)?;
                    for (_, init) in &pairs {
                        self.expr(init)?;
                    }
                    let mark = self.locals.len();
                    self.locals.push(name);
                    self.locals.extend(pairs.iter().map(|(p, _)| *p));
                    let walked = self.body(&items[3..]);
                    self.locals.truncate(mark);
                    walked
                }
            },
            Some("let*") if n >= 3 => match &items[1] {
                Sx::List(bindings, _) => self.let_form(bindings, &items[2..], Scope::Sequential),
                _ => None,
            },
            Some("letrec" | "letrec*") if n >= 3 => match &items[1] {
                Sx::List(bindings, _) => self.let_form(bindings, &items[2..], Scope::Recursive),
                _ => None,
            },
            Some("cond") if n >= 2 => {
                for (i, clause) in items[1..].iter().enumerate() {
                    let Sx::List(parts, _) = clause else {
                        return None;
                    };
                    let last = i + 2 == n;
                    // `(test => receiver)` is steel's to read.
                    if parts.get(1).and_then(|p| self.name(p)) == Some("=>") {
                        return None;
                    }
                    match self.keyword(parts) {
                        Some("else") if last && parts.len() >= 2 => self.exprs(&parts[1..])?,
                        _ if parts.len() >= 2 => self.exprs(parts)?,
                        _ => return None,
                    }
                }
                Some(())
            }
            // (do ((var init step) ...) (test result ...) command ...): the inits outside,
            // the rest where the variables are bound.
            Some("do") if n >= 3 => {
                let (Sx::List(specs, _), Sx::List(exit, _)) = (&items[1], &items[2]) else {
                    return None;
                };
                if exit.is_empty() {
                    return None;
                }
                let mut vars = Vec::new();
                for spec in specs {
                    let Sx::List(parts, _) = spec else {
                        return None;
                    };
                    if parts.len() != 3 {
                        return None;
                    }
                    self.expr(&parts[1])?;
                    vars.push(self.binder(&parts[0])?);
                }
                let mark = self.locals.len();
                self.locals.extend(vars);
                let walked = specs
                    .iter()
                    .try_for_each(|spec| match spec {
                        Sx::List(parts, _) => self.expr(&parts[2]),
                        _ => None,
                    })
                    .and_then(|_| self.exprs(exit))
                    .and_then(|_| self.exprs(&items[3..]));
                self.locals.truncate(mark);
                walked
            }
            // (case-lambda (formals body ...) ...)
            Some("case-lambda") if n >= 2 => items[1..].iter().try_for_each(|clause| {
                let Sx::List(parts, _) = clause else {
                    return None;
                };
                match parts.first()? {
                    Sx::List(params, _) if parts.len() >= 2 => {
                        self.lambda_rest(params, &parts[1..])
                    }
                    _ => None,
                }
            }),
            Some("delay") if n == 2 => self.expr(&items[1]),
            Some("case") if n >= 3 => {
                self.expr(&items[1])?;
                for (i, clause) in items[2..].iter().enumerate() {
                    let Sx::List(parts, _) = clause else {
                        return None;
                    };
                    let last = i + 3 == n;
                    if parts.len() < 2 {
                        return None;
                    }
                    match (&parts[0], self.keyword(parts)) {
                        (_, Some("else")) if last => {}
                        (Sx::List(..), _) => {}
                        _ => return None,
                    }
                    self.exprs(&parts[1..])?;
                }
                Some(())
            }
            Some(name) if is_special(name) => None,
            _ => {
                // An application. steel checks the arity of a `lambda` applied on the spot.
                if self.is_lambda(head) {
                    return None;
                }
                for item in items {
                    if self.name(item) == Some(".") {
                        return None;
                    }
                }
                self.exprs(items)
            }
        }
    }

    /// `((name init) ...)`: each binding a name and one expression.
    fn bindings<'s>(&self, bindings: &'s [Sx]) -> Option<Vec<(&'a str, &'s Sx)>> {
        bindings
            .iter()
            .map(|b| match b {
                Sx::List(pair, _) if pair.len() == 2 => Some((self.binder(&pair[0])?, &pair[1])),
                _ => None,
            })
            .collect()
    }

    fn let_form(&mut self, bindings: &[Sx], body: &[Sx], scope: Scope) -> Walked {
        let pairs = self.bindings(bindings)?;
        let mark = self.locals.len();
        let mut walked = Some(());
        match scope {
            Scope::Parallel => {
                for (_, init) in &pairs {
                    walked = walked.and_then(|_| self.expr(init));
                }
                self.locals.extend(pairs.iter().map(|(p, _)| *p));
            }
            Scope::Sequential => {
                for (p, init) in &pairs {
                    walked = walked.and_then(|_| self.expr(init));
                    self.locals.push(p);
                }
            }
            Scope::Recursive => {
                self.locals.extend(pairs.iter().map(|(p, _)| *p));
                for (_, init) in &pairs {
                    walked = walked.and_then(|_| self.expr(init));
                }
            }
        }
        let walked = walked.and_then(|_| self.body(body));
        self.locals.truncate(mark);
        walked
    }
}

#[derive(Clone, Copy)]
enum Scope {
    /// `let`: the inits see the names around.
    Parallel,
    /// `let*`: each init sees the names bound before it.
    Sequential,
    /// `letrec`, `letrec*`: every init sees every name.
    Recursive,
}

#[cfg(test)]
mod tests {
    use steel::rerrs::ErrorKind;

    use super::*;

    fn program(code: &str) -> String {
        format!("(define (never)\n  {code}\n)\n")
    }

    fn unbound(w: &Walk) -> Vec<&str> {
        w.unbound.iter().map(|u| u.name.as_str()).collect()
    }

    /// Snippets (each the body of a procedure), and the names the walk finds defined nowhere
    /// in them, or `None` where it must leave the program to the engine.
    const CASES: &[(&str, Option<&[&str]>)] = &[
        ("(if 1 2)", Some(&[])),
        ("(let loop ((i 0)) (if (< i 3) (loop (+ i 1)) i))", Some(&[])),
        ("(let* ((a 1) (b a)) b)", Some(&[])),
        (
            "(letrec ((ev (lambda (n) (if (= n 0) #t (od (- n 1))))) (od (lambda (n) (if (= n 0) #f (ev (- n 1)))))) (ev 4))",
            Some(&[]),
        ),
        ("(lambda args args)", Some(&[])),
        ("(lambda (a . rest) (cons a rest))", Some(&[])),
        ("(cond ((= 1 2) 3) (else 4))", Some(&[])),
        ("(case 1 ((1 2) 'a) (else 'b))", Some(&[])),
        ("`(1 ,(+ 1 2) ,@(list 3))", Some(&[])),
        ("(let () (define a 1) (define (b) a) (b))", Some(&[])),
        ("(when #t 1 2)", Some(&[])),
        ("(unless #f (and) (or 1 2))", Some(&[])),
        ("(set! never never)", Some(&[])),
        ("'(names (in data) are not looked up)", Some(&[])),
        ("\"nor (in strings)\"", Some(&[])),
        ("(list #\\a #\\( 1.5 -2 1/2 1e3 #t #false)", Some(&[])),
        ("(let ((x 1)) (set! x 2) x) ; a (comment)", Some(&[])),
        ("#;(a datum comment) (vector-ref (vector 1 2) 0)", Some(&[])),
        ("(car rset)", Some(&["rset"])),
        ("(let ((a 1)) (+ a b c))", Some(&["b", "c"])),
        ("(let ((a 1) (b a)) b)", Some(&["a"])),
        ("(letrec ((a (lambda () b))) a)", Some(&["b"])),
        ("(lambda (x) (f x))", Some(&["f"])),
        ("(set! zzz 1)", Some(&["zzz"])),
        ("(let loop ((i 0)) (lop i))", Some(&["lop"])),
        ("(cond (1 => car) (else 2))", None),
        ("`(1 ,q)", Some(&["q"])),
        ("(let () (define (inner) outer) (inner))", Some(&["outer"])),
        ("(do ((i 0 (+ i 1)) (acc '() (cons i acc))) ((= i 3) acc) (list i))", Some(&[])),
        ("(do ((i 0 (+ i 1))) ((= i 3)) (displayln i))", Some(&["displayln"])),
        ("(do ((i j (+ i 1))) ((= i 3)) i)", Some(&["j"])),
        ("(do ((i 0)) ((= i 3)) i)", None),
        ("(case-lambda ((x) x) ((x y) (+ x y)) ((x . rest) rest))", Some(&[])),
        ("(case-lambda ((x) y))", Some(&["y"])),
        ("(force (delay (+ 1 2)))", Some(&[])),
        ("(delay q)", Some(&["q"])),
        ("(while #f 1)", None),
        ("((lambda (x) x))", None),
        ("(+ 1 (define y 2))", None),
        ("(set! car 1)", None),
        ("()", None),
        ("#(1 2)", None),
        ("(lambda (#:a 1) a)", None),
        ("(+a 1)", None),
        ("(cond)", None),
        ("(let ((when 1)) when)", None),
        ("(when)", None),
        ("(+ . 1)", None),
        ("(begin (define zz 1) zz)", None),
        ("(list |a b|)", None),
        ("(let ((x 1)))", None),
    ];

    #[test]
    fn names_defined_nowhere_are_found_as_the_engine_finds_them() {
        let sandbox = crate::test_sandbox();
        let known = sandbox.global_names();
        let mut engine = sandbox.engine;
        for (code, expected) in CASES {
            let text = program(code);
            let walked = walk(&text, &|n| known.contains(n));
            assert_eq!(
                walked.as_ref().map(unbound),
                expected.map(|e| e.to_vec()),
                "walking {code}"
            );
            let Some(walked) = walked else { continue };
            // What the walk vouches for, the engine accepts; what it finds undefined, the
            // engine refuses for a name defined nowhere.
            // (steel finds free identifiers as it links the program, before running it.)
            let compiled = engine
                .emit_raw_program_no_path(text.clone())
                .and_then(|program| engine.run_raw_program(program));
            match (walked.unbound.first(), compiled) {
                (None, Ok(_)) => {}
                (None, Err(e)) => panic!("{code}: the walk vouched for it, the engine says {e}"),
                (Some(u), Ok(_)) => panic!("{code}: the engine accepts `{}`", u.name),
                // (steel may name another use: for `(let ((a 1) (b a)) b)` it says `b` is
                // referenced before its definition.)
                (Some(_), Err(e)) => assert_eq!(e.kind(), ErrorKind::FreeIdentifier, "{code}: {e}"),
            }
            // Every place is that of the name.
            for u in &walked.unbound {
                assert_eq!(&text[u.at.clone()], u.name, "{code}");
            }
        }
    }

    /// VO-like code for the mutations below.
    const SEED: &str = r#"
(define (tally counts key n)
  (let loop ((rest counts) (seen '()))
    (cond ((null? rest) (cons (cons key n) seen))
          ((equal? (car (car rest)) key)
           (append (cons (cons key (+ n (cdr (car rest)))) seen) (cdr rest)))
          (else (loop (cdr rest) (cons (car rest) seen))))))
(define (widest counts)
  (let* ((sizes (map (lambda (c) (string-length (number->string (cdr c)))) counts))
         (best (if (null? sizes) 0 (apply max sizes))))
    (when (> best 10) (set! best 10))
    (letrec ((pad (lambda (s) (if (< (string-length s) best) (pad (string-append " " s)) s))))
      (case best ((0) "") (else (pad (number->string best)))))))
(define (shades n . more)
  (define base (vector "red" "green" "blue"))
  (define (pick i) (vector-ref base (modulo i 3)))
  (unless (null? more) (set! n (+ n (car more))))
  (do ((i 0 (+ i 1))) ((= i 2)) (set! n (+ n i)))
  `(,(pick n) ,@(map pick (list 1 2)) done))
"#;

    /// A small, repeatable generator.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Programs made from [`SEED`] by deleting, duplicating, swapping, replacing or misspelling
    /// tokens,
    /// each inside a procedure so that the engine only compiles it: whatever the walk
    /// vouches for the engine accepts, and where the walk finds a name defined nowhere the
    /// engine refuses the program for one.
    #[test]
    fn mutated_programs_are_judged_as_the_engine_judges_them() {
        let sandbox = crate::test_sandbox();
        let known = sandbox.global_names();
        let mut engine = sandbox.engine;
        let seed_tokens: Vec<&str> = Tokens::new(SEED).map(|t| &SEED[t.range()]).collect();
        let whole = format!("(define (never)\n{SEED}\n'done)\n");
        let walked = walk(&whole, &|n| known.contains(n)).expect("the seed is vouched for");
        assert!(walked.unbound.is_empty(), "{:?}", walked.unbound);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut clean, mut unbound_found, mut left) = (0, 0, 0);
        for case in 0..1500 {
            let mut toks = seed_tokens.clone();
            for _ in 0..rng.below(3) {
                let i = rng.below(toks.len());
                match rng.below(4) {
                    0 => {
                        toks.remove(i);
                    }
                    1 => toks.insert(i, toks[i]),
                    2 if i + 1 < toks.len() => toks.swap(i, i + 1),
                    _ => toks[i] = seed_tokens[rng.below(seed_tokens.len())],
                }
            }
            // Half the time, a name misspelt.
            let names: Vec<usize> = (0..toks.len())
                .filter(|&i| toks[i].starts_with(char::is_alphabetic))
                .collect();
            let misspelt;
            if rng.below(2) == 0 {
                let i = names[rng.below(names.len())];
                misspelt = format!("{}q", toks[i]);
                toks[i] = &misspelt;
            }
            // Prefixes stay glued to what follows them.
            let mut body = String::new();
            for t in &toks {
                body.push_str(t);
                if !matches!(*t, "'" | "`" | "," | ",@" | "#") {
                    body.push(' ');
                }
            }
            let text = format!("(define (never)\n{body}\n'done)\n");
            let Some(walked) = walk(&text, &|n| known.contains(n)) else {
                left += 1;
                continue;
            };
            let compiled = engine
                .emit_raw_program_no_path(text.clone())
                .and_then(|program| engine.run_raw_program(program));
            match (walked.unbound.is_empty(), compiled) {
                (true, Ok(_)) => clean += 1,
                (false, Err(e)) if e.kind() == ErrorKind::FreeIdentifier => unbound_found += 1,
                (true, Err(e)) => {
                    panic!("case {case}: the walk vouched, the engine says {e}:\n{text}")
                }
                (false, other) => panic!(
                    "case {case}: the walk finds {:?} undefined, the engine: {:?}\n{text}",
                    unbound(&walked),
                    other.err().map(|e| e.to_string())
                ),
            }
        }
        // Each kind of verdict is well represented.
        assert!(
            clean >= 100 && unbound_found >= 100 && left >= 100,
            "{clean} {unbound_found} {left}"
        );
    }

    #[test]
    fn only_the_top_level_that_computes_is_kept_with_what_it_reads() {
        let text = "\
(define a 1)
(define (f x) (+ x a))
(define (g) (car '()))
(define b (f 2))
(define c 'data)
(set! c c)
(define d \"é\")
(display-nothing)
";
        let known = |n: &str| ["+", "car"].contains(&n);
        let walked = walk(text, &known).expect("the walk vouches");
        assert_eq!(unbound(&walked), ["display-nothing"]);
        let top = &walked.top_level;
        assert_eq!(top.len(), text.len());
        assert_eq!(top.lines().count(), text.lines().count());
        let kept: Vec<&str> = top.lines().map(str::trim).collect();
        assert_eq!(
            kept,
            [
                "(define a 1)",
                "(define (f x) (+ x a))",
                "",
                "(define b (f 2))",
                "",
                "",
                "",
                "(display-nothing)"
            ]
        );
        for name in ["a", "f", "g", "b", "c", "d"] {
            assert!(walked.defined.contains(name), "{name}");
        }
    }

    #[test]
    fn redefining_a_built_in_or_an_unknown_token_leaves_the_program_to_the_engine() {
        let known = |n: &str| n == "car";
        assert!(walk("(define (car x) x)", &known).is_none());
        assert!(walk("(define x #x1F)", &known).is_none());
        assert!(walk("(define x {1 2})", &known).is_none());
        assert!(walk("(define x 1) (define y (car x))", &known).is_some());
    }
}

#[cfg(test)]
mod deep {
    use super::*;

    /// Code nested as deep as a program may be is walked on a thread's default stack.
    #[test]
    fn the_deepest_code_a_program_may_hold_is_walked_without_exhausting_the_stack() {
        // The define, and a let's bindings two deeper than its body.
        let depth = voml_ir::MAX_NESTING - 4;
        let mut text = String::from("(define (f)\n");
        for i in 0..depth {
            text.push_str(if i % 2 == 0 {
                "(list "
            } else {
                "(let ((x 1)) "
            });
        }
        text.push_str("zz");
        text.push_str(&")".repeat(depth));
        text.push_str(")\n");
        let walked = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || walk(&text, &|n| n == "list").map(|w| w.unbound))
            .unwrap()
            .join()
            .expect("the walk ends");
        let unbound = walked.expect("the walk vouches");
        assert_eq!(unbound.len(), 1);
        assert_eq!(unbound[0].name, "zz");
    }
}
