//! Native drawing parts: the phase-1 code of an IR component that the compiler recognised as
//! forms a runtime can evaluate without calling Scheme for every round (the paper's line plot:
//! a loop over an association list, comparisons, arithmetic, `set!` of a control, a segment per
//! scalar).
//!
//! A runtime evaluates a [`NativeRender`] exactly as the Scheme would, or not at all: it works
//! every value out with the engine's own primitives, keeps what the forms change (structures
//! assigned, primitives drawn, beeps) aside while it goes, and makes those changes, in the
//! order the forms made them, only when every form was evaluated the way the engine would
//! (no error, no value it does not model). Otherwise it changes nothing and calls the part's
//! procedure, which does the same in Scheme and raises its errors where they belong.

use serde::{Deserialize, Serialize};

/// The deepest nesting of forms a [`NativeRender`] may have: a runtime evaluates forms by
/// recursion.
pub const MAX_RENDER_DEPTH: usize = 64;

/// An IR component's phase-1 code as forms (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NativeRender {
    /// How many local slots the forms use (`let` variables, loop variables): slots are
    /// numbered from 0, each bound by one form.
    pub locals: u32,
    pub forms: Vec<Form>,
}

/// One form. `global` and `name` are info or control structures of the component (their
/// [`crate::Variable::global`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Form {
    /// An integer literal (a fixnum).
    Int { value: i64 },
    /// A real literal.
    Real { value: f64 },
    /// A string literal.
    Str { value: String },
    /// `#t` or `#f`.
    Bool { value: bool },
    /// A local slot's value.
    Local { slot: u32 },
    /// A structure's value.
    Global { name: String },
    /// The value of a style global the compiler defines ([`crate::is_style_global`]).
    Style { name: String },
    /// `(set! global value)`.
    Set { global: String, value: Box<Form> },
    /// `(set! voml/here offset)`, as the compiler begins loop bodies with
    /// ([`crate::HERE_GLOBAL`]).
    Here { offset: u64 },
    /// `(if test then)` or `(if test then otherwise)`.
    If {
        test: Box<Form>,
        then: Box<Form>,
        otherwise: Option<Box<Form>>,
    },
    /// `(begin form ...)`: the last form's value (void for none: `when` and `unless` are
    /// written as an `if` with a `begin`).
    Begin { forms: Vec<Form> },
    /// `(and form ...)`: `#f` at the first form that gives `#f`, else the last form's value
    /// (`#t` for none).
    And { forms: Vec<Form> },
    /// `(or form ...)`: the first value that is not `#f`, else `#f`.
    Or { forms: Vec<Form> },
    /// `(let ((VAR value) ...) body ...)`: the values are worked out in order, then bound to
    /// the slots `first`, `first + 1`, ...
    Let {
        first: u32,
        values: Vec<Form>,
        body: Vec<Form>,
    },
    /// `(alist-for-each (lambda (KEY VALUE) body ...) list)`: the body for every entry
    /// `(key . value)` of the list, in order, `key` and `value` in their slots.
    ForEachEntry {
        key: u32,
        value: u32,
        list: Box<Form>,
        body: Vec<Form>,
    },
    /// A call of one of the engine's primitives ([`Op`]).
    Call { op: Op, args: Vec<Form> },
}

/// The primitives a [`Form::Call`] may call, by their Scheme names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// `+`, `-`, `*`: one term or more.
    Add,
    Sub,
    Mul,
    /// `=`: two numbers.
    NumEq,
    /// `<`, `>`, `<=`, `>=` (and their words `lt`, `gt`, `le`, `ge`): two numbers.
    Lt,
    Gt,
    Le,
    Ge,
    /// `quotient`, `remainder`, `modulo`: two integers.
    Quotient,
    Remainder,
    Modulo,
    /// `(not x)`.
    Not,
    /// `(vector-ref vector index)`.
    VectorRef,
    /// `(length list)`.
    Length,
    /// `(nth index list)` (the paper's argument order).
    Nth,
    /// `(car x)`, `(cdr x)`.
    Car,
    Cdr,
    /// `(voml-line view x0 y0 x1 y1 style)`.
    Line,
    /// `(voml-style color thick adapt clip dash alpha cap)`.
    Style,
    /// `(beep)`.
    Beep,
    /// `(id-get alist key)`, `(id-put alist key value)`: the prelude's micro-database.
    IdGet,
    IdPut,
    /// `(vector item ...)`: a new mutable vector.
    Vector,
}

impl Op {
    /// The Scheme names that call the primitive, the first being its own.
    pub const NAMES: &'static [(&'static str, Op)] = &[
        ("+", Op::Add),
        ("-", Op::Sub),
        ("*", Op::Mul),
        ("=", Op::NumEq),
        ("<", Op::Lt),
        (">", Op::Gt),
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("lt", Op::Lt),
        ("gt", Op::Gt),
        ("le", Op::Le),
        ("ge", Op::Ge),
        ("quotient", Op::Quotient),
        ("remainder", Op::Remainder),
        ("modulo", Op::Modulo),
        ("not", Op::Not),
        ("vector-ref", Op::VectorRef),
        ("length", Op::Length),
        ("nth", Op::Nth),
        ("car", Op::Car),
        ("cdr", Op::Cdr),
        ("voml-line", Op::Line),
        ("voml-style", Op::Style),
        ("beep", Op::Beep),
        ("id-get", Op::IdGet),
        ("id-put", Op::IdPut),
        ("vector", Op::Vector),
    ];

    /// The primitive a Scheme name calls.
    pub fn named(name: &str) -> Option<Op> {
        Op::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, op)| *op)
    }

    /// How many arguments it takes: at least `.0`, at most `.1`.
    pub fn arity(self) -> (usize, usize) {
        match self {
            Op::Add | Op::Sub | Op::Mul => (1, usize::MAX),
            Op::NumEq | Op::Lt | Op::Gt | Op::Le | Op::Ge => (2, 2),
            Op::Quotient | Op::Remainder | Op::Modulo => (2, 2),
            Op::Not | Op::Length | Op::Car | Op::Cdr => (1, 1),
            Op::VectorRef | Op::Nth => (2, 2),
            Op::Line => (6, 6),
            Op::Style => (7, 7),
            Op::Beep => (0, 0),
            Op::IdGet => (2, 2),
            Op::IdPut => (3, 3),
            Op::Vector => (0, usize::MAX),
        }
    }
}

/// What a [`NativeRender`] names, for [`crate::validate`].
#[derive(Debug, Default)]
pub struct RenderReads<'a> {
    /// Structures read or assigned.
    pub globals: Vec<&'a str>,
    /// Style globals read.
    pub styles: Vec<&'a str>,
    /// Local slots read or bound.
    pub slots: Vec<u32>,
    /// Calls with a count of arguments their primitive does not take.
    pub bad_arity: Vec<Op>,
    /// The deepest nesting of forms.
    pub depth: usize,
    /// Whether the forms draw ([`Op::Line`]): an input part's may not.
    pub draws: bool,
}

impl NativeRender {
    /// Every structure and slot the forms name, the calls of wrong arity and the nesting.
    pub fn reads(&self) -> RenderReads<'_> {
        let mut reads = RenderReads::default();
        for f in &self.forms {
            f.collect(&mut reads, 1);
        }
        reads
    }
}

impl Form {
    fn collect<'a>(&'a self, r: &mut RenderReads<'a>, depth: usize) {
        r.depth = r.depth.max(depth);
        let all = |forms: &'a [Form], r: &mut RenderReads<'a>| {
            for f in forms {
                f.collect(r, depth + 1);
            }
        };
        match self {
            Form::Int { .. }
            | Form::Real { .. }
            | Form::Str { .. }
            | Form::Bool { .. }
            | Form::Here { .. } => {}
            Form::Style { name } => r.styles.push(name),
            Form::Local { slot } => r.slots.push(*slot),
            Form::Global { name } => r.globals.push(name),
            Form::Set { global, value } => {
                r.globals.push(global);
                value.collect(r, depth + 1);
            }
            Form::If {
                test,
                then,
                otherwise,
            } => {
                test.collect(r, depth + 1);
                then.collect(r, depth + 1);
                if let Some(o) = otherwise {
                    o.collect(r, depth + 1);
                }
            }
            Form::Begin { forms } | Form::And { forms } | Form::Or { forms } => all(forms, r),
            Form::Let {
                first,
                values,
                body,
            } => {
                for k in 0..values.len() as u32 {
                    r.slots.push(first.saturating_add(k));
                }
                all(values, r);
                all(body, r);
            }
            Form::ForEachEntry {
                key,
                value,
                list,
                body,
            } => {
                r.slots.push(*key);
                r.slots.push(*value);
                list.collect(r, depth + 1);
                all(body, r);
            }
            Form::Call { op, args } => {
                let (min, max) = op.arity();
                if args.len() < min || args.len() > max {
                    r.bad_arity.push(*op);
                }
                r.draws |= *op == Op::Line;
                all(args, r);
            }
        }
    }
}
