//! VOML patch (see PATCHES.md): plain global names bound to steel's built-ins.
//!
//! An engine built without steel's module system binds `car`, `+`, `vector-ref`… as plain
//! globals, so its code calls them as procedures, never through the instructions steel has
//! for them (`CAR`, `ADD`, `VECTORREF`…), which it uses only for the `#%prim.` names its
//! module system writes. [`Compiler::builtin_aliases`](super::compiler::Compiler) lists the
//! plain names the embedder vouches for; a unit that binds one of them at the top level or
//! assigns it gives it up (see [`rebound`]).

use crate::compiler::passes::analysis::is_a_builtin_definition;
use crate::parser::{
    ast::{Atom, Define, ExprKind},
    interner::InternedString,
    tokens::TokenType,
};
use rustc_hash::FxHashMap;

/// The built-in a plain global name stands for in calls: the built-in's `#%prim.` name, and
/// the only number of arguments it stands for it with (any number when `None`).
#[derive(Clone, Copy, Debug)]
pub struct Alias {
    pub prim: InternedString,
    pub arity: Option<usize>,
}

/// Plain global names and the built-ins they stand for.
pub type Aliases = FxHashMap<InternedString, Alias>;

/// The name a call of `ident` with `arity` arguments is specialised as.
pub fn resolve(aliases: &Aliases, ident: InternedString, arity: usize) -> InternedString {
    match aliases.get(&ident) {
        Some(alias) if alias.arity.is_none_or(|n| n == arity) => alias.prim,
        _ => ident,
    }
}

/// The names in `aliases` that `exprs` define or `set!` anywhere (a local binding of the same
/// name counts too: the rule is kept simple, and only costs the specialisation).
pub fn rebound(
    exprs: &[ExprKind],
    aliases: &Aliases,
) -> Vec<InternedString> {
    let mut found = Vec::new();
    let mut stack: Vec<&ExprKind> = exprs.iter().collect();
    let mut note = |target: &ExprKind, found: &mut Vec<InternedString>| {
        if let ExprKind::Atom(Atom { syn }) = target {
            if let TokenType::Identifier(name) = syn.ty {
                if aliases.contains_key(&name) && !found.contains(&name) {
                    found.push(name);
                }
            }
        }
    };
    while let Some(expr) = stack.pop() {
        match expr {
            ExprKind::Atom(_) | ExprKind::Quote(_) | ExprKind::SyntaxRules(_) => {}
            ExprKind::Macro(_) | ExprKind::Require(_) => {}
            ExprKind::If(f) => stack.extend([&f.test_expr, &f.then_expr, &f.else_expr]),
            ExprKind::Let(l) => {
                for (name, value) in &l.bindings {
                    note(name, &mut found);
                    stack.push(value);
                }
                stack.push(&l.body_expr);
            }
            ExprKind::Define(d) => {
                if !binds_the_builtin(d) {
                    note(&d.name, &mut found);
                }
                stack.push(&d.body);
            }
            ExprKind::LambdaFunction(l) => {
                for arg in &l.args {
                    note(arg, &mut found);
                }
                stack.push(&l.body);
            }
            ExprKind::Begin(b) => stack.extend(b.exprs.iter()),
            ExprKind::Return(r) => stack.push(&r.expr),
            ExprKind::List(l) => stack.extend(l.args.iter()),
            ExprKind::Vector(v) => stack.extend(v.args.iter()),
            ExprKind::Set(s) => {
                note(&s.variable, &mut found);
                stack.push(&s.expr);
            }
        }
    }
    found
}

/// Whether `define` binds its name to the built-in of that name, as `(require-builtin …)`
/// does: `(define car (%module-get% <module> 'car))`.
fn binds_the_builtin(define: &Define) -> bool {
    if !is_a_builtin_definition(define) {
        return false;
    }
    let (ExprKind::Atom(name), ExprKind::List(body)) = (&define.name, &define.body) else {
        return false;
    };
    match (name.ident(), body.args.get(2)) {
        (Some(name), Some(ExprKind::Quote(q))) => q.expr.atom_identifier() == Some(name),
        _ => false,
    }
}
