//! Native input parts: the code of an `<input>` part that the compiler recognised as plain
//! updates of the component's structures from the event's fields (counting per processor,
//! keeping the latest time), which a runtime can carry out without calling Scheme for every
//! event.
//!
//! A runtime carries a [`NativeBody`] out exactly as the Scheme would, or not at all: it
//! works out every statement's place and value first, from the structures as they are, and
//! changes nothing unless all of them can be worked out the way the engine would (integers
//! that fit a fixnum, reals, vector indices in range, mutable vectors); otherwise it calls the part's
//! procedure, which does the same in Scheme and raises its errors where they belong. The
//! compiler accepts no statement that reads a structure an earlier statement of the part
//! changes, so working out first and changing afterwards is what the Scheme does.

use serde::{Deserialize, Serialize};

/// An input part's code as statements (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NativeBody {
    pub statements: Vec<Statement>,
}

/// One statement of a native input part. `global` is an info or control structure of the
/// component (its [`crate::Variable::global`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Statement {
    /// `(vector-set! global index value)`.
    VectorSet {
        global: String,
        index: Expr,
        value: Expr,
    },
    /// `(set! global value)`.
    Set { global: String, value: Expr },
}

/// A value a statement computes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Expr {
    /// An integer literal.
    Int { value: i64 },
    /// The input's field at this index of [`crate::Input::fields`] (the part's argument).
    Argument { index: u32 },
    /// Element `position` of `(current-event)`, the list `(rtype etype field ...)`, when it is
    /// a number (in a condition part's statements).
    Element { position: u32 },
    /// The structure's value.
    Global { name: String },
    /// `(vector-ref global index)`.
    VectorRef { global: String, index: Box<Expr> },
    /// `(+ term ...)`, of numbers, from the left.
    Add { terms: Vec<Expr> },
    /// `(- term ...)`, of numbers: the negation of a single term, else the first plus the
    /// negated sum of the others (as steel computes it).
    Sub { terms: Vec<Expr> },
}

impl NativeBody {
    /// Every structure the statements read or change, with the arguments and the event's
    /// elements they read: what [`crate::validate`] checks against the component and its
    /// input.
    pub fn reads(&self) -> Reads<'_> {
        let mut reads = Reads::default();
        let Reads {
            globals,
            arguments,
            elements,
        } = &mut reads;
        for s in &self.statements {
            match s {
                Statement::VectorSet {
                    global,
                    index,
                    value,
                } => {
                    globals.push(global.as_str());
                    index.collect(globals, arguments, elements);
                    value.collect(globals, arguments, elements);
                }
                Statement::Set { global, value } => {
                    globals.push(global.as_str());
                    value.collect(globals, arguments, elements);
                }
            }
        }
        reads
    }
}

/// What a [`NativeBody`] names (see [`NativeBody::reads`]).
#[derive(Debug, Default)]
pub struct Reads<'a> {
    pub globals: Vec<&'a str>,
    pub arguments: Vec<u32>,
    pub elements: Vec<u32>,
}

impl Expr {
    fn collect<'a>(
        &'a self,
        globals: &mut Vec<&'a str>,
        arguments: &mut Vec<u32>,
        elements: &mut Vec<u32>,
    ) {
        match self {
            Expr::Int { .. } => {}
            Expr::Argument { index } => arguments.push(*index),
            Expr::Element { position } => elements.push(*position),
            Expr::Global { name } => globals.push(name),
            Expr::VectorRef { global, index } => {
                globals.push(global);
                index.collect(globals, arguments, elements);
            }
            Expr::Add { terms } | Expr::Sub { terms } => {
                for t in terms {
                    t.collect(globals, arguments, elements);
                }
            }
        }
    }
}
