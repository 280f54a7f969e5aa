//! Evaluating native drawing parts ([`voml_ir::NativeRender`]) without calling Scheme: every
//! value is worked out by the engine's own primitives (steel's `+`, `=`, `vector-ref`..., the
//! prelude's `nth`, the host's reading of a line and its style), and what the forms change is
//! kept aside: structures assigned, primitives to draw, beeps. Only when every form was
//! evaluated as the engine would evaluate it are the changes made, in the order the forms
//! made them. A primitive that fails, a value the forms do not model (a loop over what is not
//! a list of pairs), or the watchdog firing makes [`Renders::run`] change nothing and answer
//! [`Outcome::Scheme`]: the runtime then calls the part's procedure, which does it all in
//! Scheme and raises its errors where they belong.

use steel::primitives::lists::{car, cdr};
use steel::primitives::numbers;
use steel::primitives::vectors::vec_ref;
use steel::rvals::{number_equality, SteelVal};
use steel::steel_vm::engine::Engine;
use steel::steel_vm::primitives::{gt_primitive, gte_primitive, lt_primitive, lte_primitive};
use steel::SteelErr;
use voml_ir::{Form, NativeRender, RenderOp as Op, HERE_GLOBAL};
use voml_llvo::{Primitive, Style, ViewId};

use crate::boundary;
use crate::host::{Host, SoundCommand};
use crate::memory::{self, Meter};
use crate::watchdog::Watchdog;

/// A native part made ready to evaluate in one engine: literals made into values once,
/// structures found by their place among the engine's globals.
pub(crate) struct Prepared {
    nodes: Vec<Node>,
    locals: usize,
    /// The engine's place of each global the nodes name ([`Node::Global`] indexes this).
    globals: Vec<usize>,
    /// The engine's place of [`HERE_GLOBAL`].
    here: Option<usize>,
}

/// A form made ready (see [`Form`]).
enum Node {
    Const(SteelVal),
    Local(usize),
    Global(usize),
    Set(usize, Box<Node>),
    Here(SteelVal),
    If(Box<Node>, Box<Node>, Option<Box<Node>>),
    Begin(Vec<Node>),
    And(Vec<Node>),
    Or(Vec<Node>),
    Let(usize, Vec<Node>, Vec<Node>),
    ForEachEntry(usize, usize, Box<Node>, Vec<Node>),
    Call(Op, Vec<Node>),
}

impl Prepared {
    /// `native` ready for `engine`; `None` when a global it names is not defined there (the
    /// procedure then runs, and fails as it does).
    pub(crate) fn new(native: &NativeRender, engine: &Engine) -> Option<Prepared> {
        let mut p = Preparer {
            engine,
            names: Vec::new(),
            globals: Vec::new(),
        };
        let nodes = p.nodes(&native.forms)?;
        Some(Prepared {
            nodes,
            locals: native.locals as usize,
            globals: p.globals,
            here: engine.global_index(HERE_GLOBAL),
        })
    }
}

/// Makes forms ready, noting the globals they name.
struct Preparer<'a, 'e> {
    engine: &'e Engine,
    names: Vec<&'a str>,
    /// The engine's place of each of `names`.
    globals: Vec<usize>,
}

impl<'a> Preparer<'a, '_> {
    fn global(&mut self, name: &'a str) -> Option<usize> {
        if let Some(at) = self.names.iter().position(|n| *n == name) {
            return Some(at);
        }
        self.globals.push(self.engine.global_index(name)?);
        self.names.push(name);
        Some(self.names.len() - 1)
    }

    fn nodes(&mut self, forms: &'a [Form]) -> Option<Vec<Node>> {
        forms.iter().map(|f| self.node(f)).collect()
    }

    fn node(&mut self, f: &'a Form) -> Option<Node> {
        Some(match f {
            Form::Int { value } => Node::Const(SteelVal::IntV(isize::try_from(*value).ok()?)),
            Form::Real { value } => Node::Const(SteelVal::NumV(*value)),
            // (One string for every round: strings are immutable in steel.)
            Form::Str { value } => Node::Const(SteelVal::StringV(value.as_str().into())),
            Form::Bool { value } => Node::Const(SteelVal::BoolV(*value)),
            Form::Local { slot } => Node::Local(*slot as usize),
            Form::Global { name } | Form::Style { name } => Node::Global(self.global(name)?),
            Form::Set { global, value } => {
                Node::Set(self.global(global)?, Box::new(self.node(value)?))
            }
            Form::Here { offset } => Node::Here(SteelVal::IntV(isize::try_from(*offset).ok()?)),
            Form::If {
                test,
                then,
                otherwise,
            } => Node::If(
                Box::new(self.node(test)?),
                Box::new(self.node(then)?),
                match otherwise {
                    Some(o) => Some(Box::new(self.node(o)?)),
                    None => None,
                },
            ),
            Form::Begin { forms } => Node::Begin(self.nodes(forms)?),
            Form::And { forms } => Node::And(self.nodes(forms)?),
            Form::Or { forms } => Node::Or(self.nodes(forms)?),
            Form::Let {
                first,
                values,
                body,
            } => Node::Let(*first as usize, self.nodes(values)?, self.nodes(body)?),
            Form::ForEachEntry {
                key,
                value,
                list,
                body,
            } => Node::ForEachEntry(
                *key as usize,
                *value as usize,
                Box::new(self.node(list)?),
                self.nodes(body)?,
            ),
            // (Each with the arguments it takes: the runtime validated the IR.)
            Form::Call { op, args } => Node::Call(*op, self.nodes(args)?),
        })
    }
}

/// The storage native parts reuse from round to round.
#[derive(Default)]
pub(crate) struct Renders {
    slots: Vec<SteelVal>,
    stack: Vec<SteelVal>,
    /// The globals' values as the forms see them this round (read, or assigned).
    known: Vec<Option<SteelVal>>,
}

/// How a native part ended.
pub(crate) enum Outcome {
    /// Evaluated and its changes made.
    Done,
    /// Nothing changed: the part's procedure must run.
    Scheme,
    /// Evaluated, and making its changes failed at this drawing primitive: the changes before
    /// it are made, as the Scheme would have made them.
    Failed(SteelErr),
}

/// A change the forms make.
enum Effect {
    /// A global (by its place among [`Prepared::globals`]) assigned.
    Set(usize, SteelVal),
    Draw(ViewId, Primitive, Style),
    Beep,
}

/// One round's evaluation.
struct Round<'r> {
    engine: &'r Engine,
    host: &'r mut Host,
    watchdog: &'r Watchdog,
    globals: &'r [usize],
    slots: &'r mut Vec<SteelVal>,
    stack: &'r mut Vec<SteelVal>,
    known: &'r mut Vec<Option<SteelVal>>,
    effects: Vec<Effect>,
    here: Option<&'r SteelVal>,
}

/// An argument of a primitive: where it is, or its value.
enum Operand<'r> {
    Slot(usize),
    Const(&'r SteelVal),
    Value(SteelVal),
}

/// Why evaluation stopped: the part goes to Scheme.
struct ToScheme;

type Value = Result<SteelVal, ToScheme>;

/// A primitive's result, its error taken as a reason to leave the part to Scheme.
fn engine_says<T>(r: Result<T, SteelErr>) -> Result<T, ToScheme> {
    r.map_err(|_| ToScheme)
}

impl Renders {
    /// Evaluates `native` and makes its changes, or changes nothing (see [`Outcome`]). What
    /// the forms hold is charged to `meter` as the Scheme's would be; the host's work is not
    /// (as for the host's procedures called from Scheme).
    pub(crate) fn run(
        &mut self,
        native: &Prepared,
        engine: &mut Engine,
        host: &mut Host,
        watchdog: &Watchdog,
        meter: &Meter,
    ) -> Outcome {
        let (slots, stack, known) = (&mut self.slots, &mut self.stack, &mut self.known);
        // Whatever the forms make or let go of is charged: the values of the slots too, let
        // go of when the round ends, and the list of changes when they are made.
        let evaluated = boundary::call(meter, || {
            slots.resize(native.locals, SteelVal::Void);
            known.resize(native.globals.len(), None);
            let mut round = Round {
                engine,
                host: &mut *host,
                watchdog,
                globals: &native.globals,
                slots,
                stack,
                known,
                effects: Vec::new(),
                here: None,
            };
            let done = native.nodes.iter().all(|n| round.eval(n).is_ok());
            let Round { effects, here, .. } = round;
            let here = here.cloned();
            slots.clear();
            stack.clear();
            known.clear();
            Ok(done.then_some((effects, here)))
        });
        // A panic inside a primitive is left to happen again in Scheme, and be reported.
        let Ok(Some((effects, here))) = evaluated else {
            return Outcome::Scheme;
        };
        // Every form was evaluated: the changes are made in the order the forms made them.
        if let (Some(at), Some(here)) = (native.here, here) {
            engine.update_global_at(at, here);
        }
        let mut effects = effects;
        let made = make(&mut effects, native, engine, host, meter);
        let _charged = meter.enter();
        drop(effects);
        made
    }
}

/// Makes the changes, in order, until a drawing primitive fails.
fn make(
    effects: &mut Vec<Effect>,
    native: &Prepared,
    engine: &mut Engine,
    host: &mut Host,
    meter: &Meter,
) -> Outcome {
    for effect in effects.drain(..) {
        match effect {
            Effect::Set(global, value) => {
                let _charged = meter.enter();
                engine.update_global_at(native.globals[global], value);
            }
            Effect::Draw(view, prim, style) => {
                if let Err(e) = host.draw("line", view, prim, &style) {
                    return Outcome::Failed(e);
                }
            }
            Effect::Beep => host.sound(SoundCommand::Beep),
        }
    }
    Outcome::Done
}

impl<'r> Round<'r> {
    fn eval_all(&mut self, nodes: &'r [Node]) -> Value {
        let mut last = SteelVal::Void;
        for n in nodes {
            last = self.eval(n)?;
        }
        Ok(last)
    }

    fn eval(&mut self, n: &'r Node) -> Value {
        match n {
            Node::Const(v) => Ok(v.clone()),
            Node::Local(slot) => Ok(self.slots[*slot].clone()),
            Node::Global(g) => self.global(*g),
            Node::Call(op, args) => self.call(*op, args),
            Node::If(test, then, otherwise) => {
                if truthy(&self.eval(test)?) {
                    self.eval(then)
                } else {
                    match otherwise {
                        Some(o) => self.eval(o),
                        None => Ok(SteelVal::Void),
                    }
                }
            }
            Node::Begin(nodes) => self.eval_all(nodes),
            Node::And(nodes) => {
                let mut last = SteelVal::BoolV(true);
                for n in nodes {
                    last = self.eval(n)?;
                    if !truthy(&last) {
                        break;
                    }
                }
                Ok(last)
            }
            Node::Or(nodes) => {
                for n in nodes {
                    let v = self.eval(n)?;
                    if truthy(&v) {
                        return Ok(v);
                    }
                }
                Ok(SteelVal::BoolV(false))
            }
            Node::Set(g, value) => self.set(*g, value),
            Node::Here(offset) => {
                self.here = Some(offset);
                Ok(SteelVal::Void)
            }
            Node::Let(first, values, body) => self.bind(*first, values, body),
            Node::ForEachEntry(key, value, list, body) => {
                self.for_each_entry(*key, *value, list, body)
            }
        }
    }

    /// A global's value: as assigned or read this round, else as the engine holds it.
    fn global(&mut self, g: usize) -> Value {
        if let Some(v) = &self.known[g] {
            return Ok(v.clone());
        }
        let v = self.engine.global_at(self.globals[g]).ok_or(ToScheme)?;
        self.known[g] = Some(v.clone());
        Ok(v)
    }

    #[inline(never)]
    fn set(&mut self, g: usize, value: &'r Node) -> Value {
        let value = self.eval(value)?;
        self.known[g] = Some(value.clone());
        self.effects.push(Effect::Set(g, value));
        Ok(SteelVal::Void)
    }

    /// `let`: the values worked out in order, then bound (they cannot see the new slots).
    #[inline(never)]
    fn bind(&mut self, first: usize, values: &'r [Node], body: &'r [Node]) -> Value {
        for (k, v) in values.iter().enumerate() {
            let value = self.eval(v)?;
            *self.slots.get_mut(first + k).ok_or(ToScheme)? = value;
        }
        self.eval_all(body)
    }

    /// The prelude's `alist-for-each`: `(proc (car entry) (cdr entry))` for every entry of
    /// the list, in order, then #t.
    #[inline(never)]
    fn for_each_entry(
        &mut self,
        key: usize,
        value: usize,
        list: &'r Node,
        body: &'r [Node],
    ) -> Value {
        let SteelVal::ListV(list) = self.eval(list)? else {
            return Err(ToScheme);
        };
        for entry in list.iter() {
            if self.watchdog.has_fired() {
                return Err(ToScheme);
            }
            self.slots[key] = engine_says(car(entry))?;
            self.slots[value] = engine_says(cdr(&mut entry.clone()))?;
            self.eval_all(body)?;
        }
        Ok(SteelVal::BoolV(true))
    }

    fn call(&mut self, op: Op, args: &'r [Node]) -> Value {
        if let [a, b] = args {
            // Left to right; slots and literals are read where they are (nothing an operand
            // does changes them), the rest worked out.
            let a = self.operand(a)?;
            let b = self.operand(b)?;
            let (a, b) = (self.get(&a), self.get(&b));
            // Two numbers: worked out here where steel's answer is plain (fixnums that do
            // not overflow, reals); everything else by steel's own primitive.
            if let Some(v) = plain(op, a, b) {
                return Ok(v);
            }
            return match op {
                Op::NumEq => engine_says(number_equality(a, b)),
                Op::VectorRef => engine_says(vec_ref(a, b)),
                _ => {
                    let pair = [a.clone(), b.clone()];
                    self.apply(op, &pair)
                }
            };
        }
        let base = self.stack.len();
        for a in args {
            let v = match a {
                Node::Local(slot) => self.slots[*slot].clone(),
                Node::Const(v) => v.clone(),
                _ => self.eval(a)?,
            };
            self.stack.push(v);
        }
        let args = std::mem::take(self.stack);
        let result = self.apply(op, &args[base..]);
        *self.stack = args;
        self.stack.truncate(base);
        result
    }

    fn operand(&mut self, n: &'r Node) -> Result<Operand<'r>, ToScheme> {
        Ok(match n {
            Node::Local(slot) => Operand::Slot(*slot),
            Node::Const(v) => Operand::Const(v),
            _ => Operand::Value(self.eval(n)?),
        })
    }

    fn get<'x>(&'x self, o: &'x Operand<'r>) -> &'x SteelVal {
        match o {
            Operand::Slot(slot) => &self.slots[*slot],
            Operand::Const(v) => v,
            Operand::Value(v) => v,
        }
    }

    /// `op` of `a`.
    #[inline(never)]
    fn apply(&mut self, op: Op, a: &[SteelVal]) -> Value {
        match op {
            Op::Add => engine_says(numbers::add_primitive(a)),
            Op::Sub => engine_says(numbers::subtract_primitive(a)),
            Op::Mul => engine_says(numbers::multiply_primitive(a)),
            Op::NumEq => engine_says(number_equality(&a[0], &a[1])),
            Op::Lt => engine_says(lt_primitive(a)),
            Op::Gt => engine_says(gt_primitive(a)),
            Op::Le => engine_says(lte_primitive(a)),
            Op::Ge => engine_says(gte_primitive(a)),
            Op::Quotient => engine_says(numbers::quotient(a)),
            Op::Remainder => engine_says(numbers::remainder(a)),
            Op::Modulo => engine_says(numbers::modulo(a)),
            Op::Not => Ok(SteelVal::BoolV(matches!(a[0], SteelVal::BoolV(false)))),
            Op::VectorRef => engine_says(vec_ref(&a[0], &a[1])),
            Op::Length => match &a[0] {
                SteelVal::ListV(l) => Ok(SteelVal::IntV(l.len() as isize)),
                _ => Err(ToScheme),
            },
            Op::Nth => engine_says(crate::prelude::nth(a)),
            Op::Car => engine_says(car(&a[0])),
            Op::Cdr => engine_says(cdr(&mut a[0].clone())),
            Op::Line => {
                let host = &mut *self.host;
                let parts = memory::uncharged(|| host.line_parts(a));
                let (view, prim, style) = engine_says(parts)?;
                self.effects.push(Effect::Draw(view, prim, style));
                Ok(SteelVal::Void)
            }
            Op::Style => {
                let host = &mut *self.host;
                Ok(memory::uncharged(|| host.style_list(a)))
            }
            Op::Beep => {
                self.effects.push(Effect::Beep);
                Ok(SteelVal::Void)
            }
        }
    }
}

/// `op` of two numbers where steel's answer is plain: two fixnums (a sum, difference or
/// product that fits; a quotient, remainder or modulo by a divisor other than 0 and -1), or
/// two reals (steel's arithmetic and comparisons of reals are IEEE's). `None` leaves the
/// answer to steel's primitive.
#[inline]
fn plain(op: Op, a: &SteelVal, b: &SteelVal) -> Option<SteelVal> {
    use SteelVal::{BoolV, IntV, NumV};
    Some(match (a, b) {
        (IntV(x), IntV(y)) => {
            let (x, y) = (*x, *y);
            match op {
                Op::Add => IntV(x.checked_add(y)?),
                // (steel: the first plus the negated second)
                Op::Sub => IntV(x.checked_add(y.checked_neg()?)?),
                Op::Mul => IntV(x.checked_mul(y)?),
                Op::NumEq => BoolV(x == y),
                Op::Lt => BoolV(x < y),
                Op::Gt => BoolV(x > y),
                Op::Le => BoolV(x <= y),
                Op::Ge => BoolV(x >= y),
                Op::Quotient if y != 0 && y != -1 => IntV(x / y),
                Op::Remainder if y != 0 && y != -1 => IntV(x % y),
                Op::Modulo if y != 0 && y != -1 => {
                    // The sign of the divisor.
                    let r = x % y;
                    IntV(if r != 0 && (r < 0) != (y < 0) {
                        r + y
                    } else {
                        r
                    })
                }
                _ => return None,
            }
        }
        (NumV(x), NumV(y)) => {
            let (x, y) = (*x, *y);
            match op {
                Op::Add => NumV(x + y),
                Op::Sub => NumV(x + -y),
                Op::Mul => NumV(x * y),
                Op::NumEq => BoolV(x == y),
                Op::Lt => BoolV(x < y),
                Op::Gt => BoolV(x > y),
                Op::Le => BoolV(x <= y),
                Op::Ge => BoolV(x >= y),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// Scheme's truth: everything but `#f`.
fn truthy(v: &SteelVal) -> bool {
    !matches!(v, SteelVal::BoolV(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where [`plain`] answers, it answers what steel's primitive answers, value and kind,
    /// at the fixnum limits, for negative divisors, for NaN and the infinities.
    #[test]
    fn plain_answers_are_steels() {
        let ints = [
            isize::MIN,
            isize::MIN + 1,
            -7,
            -2,
            -1,
            0,
            1,
            2,
            3,
            7,
            isize::MAX,
        ];
        let reals = [
            f64::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            0.5,
            3.0,
            f64::INFINITY,
            f64::NAN,
        ];
        let values: Vec<SteelVal> = ints
            .iter()
            .map(|&i| SteelVal::IntV(i))
            .chain(reals.iter().map(|&r| SteelVal::NumV(r)))
            .collect();
        let ops = [
            Op::Add,
            Op::Sub,
            Op::Mul,
            Op::NumEq,
            Op::Lt,
            Op::Gt,
            Op::Le,
            Op::Ge,
            Op::Quotient,
            Op::Remainder,
            Op::Modulo,
        ];
        let mut answered = 0;
        for op in ops {
            for a in &values {
                for b in &values {
                    let Some(mine) = plain(op, a, b) else {
                        continue;
                    };
                    answered += 1;
                    let args = [a.clone(), b.clone()];
                    let steel = match op {
                        Op::Add => numbers::add_primitive(&args),
                        Op::Sub => numbers::subtract_primitive(&args),
                        Op::Mul => numbers::multiply_primitive(&args),
                        Op::NumEq => number_equality(a, b),
                        Op::Lt => lt_primitive(&args),
                        Op::Gt => gt_primitive(&args),
                        Op::Le => lte_primitive(&args),
                        Op::Ge => gte_primitive(&args),
                        Op::Quotient => numbers::quotient(&args),
                        Op::Remainder => numbers::remainder(&args),
                        _ => numbers::modulo(&args),
                    }
                    .unwrap_or_else(|e| {
                        panic!("{op:?} {a} {b}: steel fails ({e}), plain gives {mine}")
                    });
                    let same = match (&mine, &steel) {
                        (SteelVal::NumV(x), SteelVal::NumV(y)) => x.to_bits() == y.to_bits(),
                        (SteelVal::IntV(x), SteelVal::IntV(y)) => x == y,
                        (SteelVal::BoolV(x), SteelVal::BoolV(y)) => x == y,
                        _ => false,
                    };
                    assert!(same, "{op:?} {a} {b}: plain {mine:?}, steel {steel:?}");
                }
            }
        }
        assert!(answered > 1000, "{answered}");
    }
}
