//! Carrying out native input parts ([`voml_ir::NativeBody`]) without calling Scheme: every
//! statement's place and value is worked out first, from the structures as they are, the way
//! steel would (integers that fit a fixnum, reals, indices inside mutable vectors); only then
//! does anything change. Whatever steel would do differently (promote a sum to a big integer,
//! add a fraction, raise an error) makes [`Natives::run`] change nothing and answer false: the
//! runtime then calls the part's procedure, which does it in Scheme.

use steel::rvals::SteelVal;
use steel::steel_vm::engine::Engine;
use voml_ir::{Expr, NativeBody, Statement};
use voml_trace::{Record, Value};

/// What native parts keep between events: the structures' values as last read (a look-up
/// hashes the name twice), good while no Scheme has run since, and room for the changes
/// worked out.
#[derive(Default)]
pub(crate) struct Natives {
    /// The count of Scheme runs (see [`Natives::run`]) the values were read after.
    read_after: u64,
    values: Vec<Read>,
    /// Changes worked out, not yet made.
    changes: Vec<Change>,
}

/// A structure's value as last read, for one place that names it in the visual object's
/// IR: found again by where that name's text lies (the runtime holds its IR unchanged for
/// its whole life, so the place names one structure), without comparing names per event.
/// Places naming the same structure share its value (a vector is one vector; a `set!`
/// updates them all).
struct Read {
    place: *const u8,
    /// The first of the values read for this structure: the same for all its places.
    first: usize,
    name: String,
    value: SteelVal,
}

/// A change a statement makes.
struct Change {
    /// Which statement.
    statement: usize,
    /// The vector (where it is among the values read) and the element it changes; none for
    /// a `set!`.
    element: Option<(usize, usize)>,
    value: SteelVal,
}

impl Natives {
    /// Carries out `body` with the part's arguments `args` and the record `(current-event)`
    /// shows; false (and nothing changed) when it must be left to Scheme. `scheme_runs` counts
    /// what may have changed the structures other than native parts: Scheme code run, values
    /// set from outside.
    pub(crate) fn run(
        &mut self,
        body: &NativeBody,
        engine: &mut Engine,
        args: &[SteelVal],
        event: Option<&Record>,
        scheme_runs: u64,
    ) -> bool {
        if self.read_after != scheme_runs {
            self.values.clear();
            self.read_after = scheme_runs;
        }
        let inputs = Inputs { args, event };
        // One statement (the common part) changes what it worked out at once.
        if let [statement] = body.statements.as_slice() {
            let Some(change) = self.work_out_one(0, statement, engine, &inputs) else {
                return false;
            };
            self.make(change, body, engine);
            return true;
        }
        self.changes.clear();
        if self.work_out(body, engine, &inputs).is_none() {
            return false;
        }
        let mut changes = std::mem::take(&mut self.changes);
        for change in changes.drain(..) {
            self.make(change, body, engine);
        }
        self.changes = changes;
        true
    }

    /// Makes a change worked out.
    fn make(&mut self, change: Change, body: &NativeBody, engine: &mut Engine) {
        let Change {
            statement,
            element,
            value,
        } = change;
        match (element, &body.statements[statement]) {
            (Some((g, i)), _) => {
                // A mutable vector, and in range: checked when worked out, and nothing ran
                // since.
                if let SteelVal::MutableVector(v) = &self.values[g].value {
                    let _ = steel::primitives::vectors::mut_vec_set(v, i, value);
                }
            }
            (None, Statement::Set { global, .. }) => {
                engine.update_value(global, value.clone());
                for read in self.values.iter_mut().filter(|r| r.name == *global) {
                    read.value = value.clone();
                }
            }
            _ => {}
        }
    }

    /// Every change the statements make, from the structures as they are.
    fn work_out(&mut self, body: &NativeBody, engine: &Engine, args: &Inputs) -> Option<()> {
        for (at, s) in body.statements.iter().enumerate() {
            let change = self.work_out_one(at, s, engine, args)?;
            self.changes.push(change);
        }
        Some(())
    }

    /// The change statement `at`, `s`, makes.
    fn work_out_one(
        &mut self,
        at: usize,
        s: &Statement,
        engine: &Engine,
        args: &Inputs,
    ) -> Option<Change> {
        Some(match s {
            Statement::VectorSet {
                global,
                index,
                value,
            } => {
                let g = self.find(engine, global)?;
                let place = self.num(index, engine, args)?;
                let (i, current) = self.element(g, place, |v, i| Some((i, Num::of(&v[i]))))?;
                let value = match value {
                    // A count, `(vector-set! v i (+ ... (vector-ref v i) ...))`: the element
                    // is read once, where it was found.
                    Expr::Add { terms } => {
                        let mut sum: Option<Num> = None;
                        for term in terms {
                            let x = match term {
                                Expr::VectorRef {
                                    global: other,
                                    index: other_index,
                                } if **other_index == *index && self.same(g, engine, other)? => {
                                    current?
                                }
                                _ => self.num(term, engine, args)?,
                            };
                            sum = Some(match sum {
                                None => x,
                                Some(sum) => sum.add(x)?,
                            });
                        }
                        sum?.value()?
                    }
                    _ => self.eval(value, engine, args)?,
                };
                Change {
                    statement: at,
                    element: Some((g, i)),
                    value,
                }
            }
            Statement::Set { value, .. } => Change {
                statement: at,
                element: None,
                value: self.eval(value, engine, args)?,
            },
        })
    }

    /// Whether `name` names the structure at `g` among the values read.
    fn same(&mut self, g: usize, engine: &Engine, name: &str) -> Option<bool> {
        let other = self.find(engine, name)?;
        Some(self.values[other].first == self.values[g].first)
    }

    /// Where the structure `name` (a name in the runtime's IR: see [`Read`]) is among the
    /// values read, reading it first if need be.
    fn find(&mut self, engine: &Engine, name: &str) -> Option<usize> {
        let place = name.as_ptr();
        if let Some(at) = self.values.iter().position(|r| r.place == place) {
            return Some(at);
        }
        let (first, value) = match self.values.iter().find(|r| r.name == name) {
            Some(read) => (read.first, read.value.clone()),
            None => (self.values.len(), engine.extract_value(name).ok()?),
        };
        self.values.push(Read {
            place,
            first,
            name: name.to_string(),
            value,
        });
        Some(self.values.len() - 1)
    }

    /// `then` of the vector at `g` among the values read and the element `index` names, when
    /// that is a mutable vector and `index` (a fixnum) one of its elements.
    fn element<T>(
        &self,
        g: usize,
        index: Num,
        then: impl FnOnce(&[SteelVal], usize) -> Option<T>,
    ) -> Option<T> {
        let (SteelVal::MutableVector(v), Num::Int(i)) = (&self.values[g].value, index) else {
            return None;
        };
        let i = usize::try_from(i).ok()?;
        v.borrow(|v| if i < v.len() { then(v, i) } else { None })
    }

    /// The value of `e`.
    fn eval(&mut self, e: &Expr, engine: &Engine, args: &Inputs) -> Option<SteelVal> {
        match e {
            Expr::Argument { index } => args.args.get(*index as usize).cloned(),
            Expr::Global { name } => {
                let g = self.find(engine, name)?;
                Some(self.values[g].value.clone())
            }
            Expr::VectorRef { global, index } => {
                let g = self.find(engine, global)?;
                let index = self.num(index, engine, args)?;
                self.element(g, index, |v, i| Some(v[i].clone()))
            }
            // The others are numbers.
            _ => self.num(e, engine, args)?.value(),
        }
    }

    /// The value of `e`, when it is a number `+` and `-` take here (a fixnum or a real), found
    /// without making a Scheme value on the way.
    fn num(&mut self, e: &Expr, engine: &Engine, args: &Inputs) -> Option<Num> {
        match e {
            Expr::Int { value } => Num::int(*value),
            Expr::Argument { index } => Num::of(args.args.get(*index as usize)?),
            Expr::Element { position } => {
                let record = args.event?;
                match *position {
                    0 => Num::int(record.rtype),
                    1 => Num::int(record.etype),
                    // Numbers only: a string element is a string of the event's list.
                    p => match record.get(p as usize)? {
                        Value::Int(i) => Num::int(*i),
                        Value::Real(r) => Some(Num::Real(*r)),
                        Value::Str(_) => None,
                    },
                }
            }
            Expr::Global { name } => {
                let g = self.find(engine, name)?;
                Num::of(&self.values[g].value)
            }
            Expr::VectorRef { global, index } => {
                let g = self.find(engine, global)?;
                let index = self.num(index, engine, args)?;
                self.element(g, index, |v, i| Num::of(&v[i]))
            }
            Expr::Add { terms } => self.sum(terms, engine, args),
            Expr::Sub { terms } => {
                // steel: the negation of one term, else the first plus the negated sum of
                // the others (not a subtraction from the left).
                let (first, rest) = terms.split_first()?;
                let x = self.num(first, engine, args)?;
                match rest {
                    [] => x.negate(),
                    _ => x.add(self.sum(rest, engine, args)?.negate()?),
                }
            }
        }
    }

    /// steel's `+` of `terms` (at least one), when they are all numbers: from the left.
    fn sum(&mut self, terms: &[Expr], engine: &Engine, args: &Inputs) -> Option<Num> {
        let (first, rest) = terms.split_first()?;
        let first = self.num(first, engine, args)?;
        rest.iter()
            .try_fold(first, |acc, t| acc.add(self.num(t, engine, args)?))
    }
}

/// A number as steel's `+` and `-` take it: a fixnum or a real (big integers, fractions and
/// the rest are left to Scheme).
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Real(f64),
}

impl Num {
    fn of(v: &SteelVal) -> Option<Num> {
        match v {
            SteelVal::IntV(i) => Some(Num::Int(i64::try_from(*i).ok()?)),
            SteelVal::NumV(r) => Some(Num::Real(*r)),
            _ => None,
        }
    }

    /// An integer as a fixnum would give it (`None` beyond a fixnum's range), without making
    /// the fixnum.
    fn int(i: i64) -> Option<Num> {
        isize::try_from(i).ok().map(|_| Num::Int(i))
    }

    fn value(self) -> Option<SteelVal> {
        match self {
            Num::Int(i) => fixnum(i),
            Num::Real(r) => Some(SteelVal::NumV(r)),
        }
    }

    /// steel's `add_two`: integers exactly (a sum past a fixnum is not modelled), an integer
    /// and a real as reals.
    fn add(self, other: Num) -> Option<Num> {
        Some(match (self, other) {
            (Num::Int(x), Num::Int(y)) => Num::Int(x.checked_add(y)?),
            (Num::Real(x), Num::Real(y)) => Num::Real(x + y),
            (Num::Real(x), Num::Int(y)) | (Num::Int(y), Num::Real(x)) => Num::Real(x + y as f64),
        })
    }

    fn negate(self) -> Option<Num> {
        Some(match self {
            Num::Int(x) => Num::Int(x.checked_neg()?),
            Num::Real(x) => Num::Real(-x),
        })
    }
}

/// What a part reads besides the structures.
struct Inputs<'a> {
    args: &'a [SteelVal],
    event: Option<&'a Record>,
}

fn fixnum(i: i64) -> Option<SteelVal> {
    Some(SteelVal::IntV(isize::try_from(i).ok()?))
}
