//! Re-initialisation while running (seed 004 §2.2): a newer compilation of a visual object
//! takes over from the running one between two records. The info and control structures whose
//! declarations did not change (name, type and initial value) keep their values; the others
//! start from their initial values. The new visual object takes the old one's trace time and
//! counts, initialises its views, and draws once at once, so that its pictures show the state
//! it took over.

use steel::primitives::hashmaps::hm_construct;
use steel::primitives::lists::cons;
use steel::rvals::{SteelVal, SteelVector};
use steel::steel_vm::engine::Engine;
use voml_ir::Variable;

use crate::{Runtime, Stop};

/// What a reload kept and what it started afresh.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Adopted {
    /// Structures whose values were carried over.
    pub kept: Vec<String>,
    /// Structures that start from their initial value (new, or declared differently).
    pub reset: Vec<String>,
}

impl Runtime {
    /// Takes over from `old`, which stops being used: see the module's documentation. Values
    /// that are procedures belong to the old engine and are not carried (the structure is
    /// reset); the vectors a value holds are made again in this runtime's engine (a vector
    /// `vector-set!` may change lives in its engine's heap, which goes with the old one).
    pub fn adopt(&mut self, old: &Runtime) -> Result<Adopted, Stop> {
        let mut adopted = Adopted::default();
        let mut made = Made::default();
        let declared: Vec<Variable> = self
            .vo
            .infos
            .iter()
            .chain(&self.vo.controls)
            .cloned()
            .collect();
        for var in declared {
            let before = old
                .vo
                .infos
                .iter()
                .chain(&old.vo.controls)
                .find(|v| v.name == var.name);
            let same = before.is_some_and(|b| b.ty == var.ty && b.init == var.init);
            let value = before
                .filter(|_| same)
                .and_then(|b| old.engine.extract_value(&b.global).ok())
                .and_then(|v| Some(carried(&mut self.engine, &v, &mut made, 0)?.unwrap_or(v)));
            self.scheme_runs += 1;
            match value.and_then(|v| self.engine.update_value(&var.global, v)) {
                Some(_) => adopted.kept.push(var.name),
                None => adopted.reset.push(var.name),
            }
        }
        self.host.borrow_mut().now = old.trace_time();
        self.stats.records = old.stats.records;
        self.stats.matched = old.stats.matched;
        self.stats.skipped = old.stats.skipped;
        self.stats.first_ts = old.stats.first_ts;
        if self.is_synchronous() {
            self.next_tick = old.next_tick.or(self.next_tick);
        }
        if old.started {
            // The views are initialised as at the start; the start-of-input callback is not
            // delivered again (the input did not start again).
            self.init_views()?;
            self.started = true;
            self.guarded(|rt| rt.render(None))?;
        }
        Ok(adopted)
    }

    /// Hands over the back end (a window's) to a successor, closing this visual object's
    /// surfaces first; this one keeps drawing into nothing.
    pub fn take_backend(&mut self) -> Box<dyn voml_llvo::Backend> {
        let host = self.host.borrow();
        let mut llvo = host.drawing.llvo();
        for &id in &host.views {
            llvo.backend_mut().destroy_surface(id);
        }
        std::mem::replace(llvo.backend_mut(), Box::new(voml_llvo::NullBackend::new()))
    }
}

/// How deep a value is read for [`carried`] (deeper values are not carried).
const CARRIED_DEPTH: usize = 256;

/// The vectors [`carried`] made again: kept alive through a collection a later one may run,
/// and found again by the old vector they copy, so that a vector two structures (or two
/// places of one) share is still one vector.
#[derive(Default)]
struct Made {
    kept: Vec<SteelVal>,
    by_old: std::collections::HashMap<usize, SteelVal>,
}

/// `value` for `engine`, when it is made of data only (numbers, strings, lists, vectors, hash
/// tables ...), which means the same in another engine: `Some(None)` when it can be taken as
/// it is, `Some(Some(copy))` when it holds vectors a program may change (steel's mutable
/// vectors, which live in their engine's heap), made again in `engine` (see [`Made`]).
/// `None` for anything else, a value nested deeper than [`CARRIED_DEPTH`] (a vector that
/// holds itself), and hash tables whose keys, or sets whose elements, are or hold mutable
/// vectors.
fn carried(
    engine: &mut Engine,
    value: &SteelVal,
    made: &mut Made,
    depth: usize,
) -> Option<Option<SteelVal>> {
    if depth > CARRIED_DEPTH {
        return None;
    }
    let mut all = |items: &mut dyn Iterator<Item = &SteelVal>, made: &mut Made| {
        carried_all(engine, items, made, depth + 1)
    };
    match value {
        SteelVal::BoolV(_)
        | SteelVal::NumV(_)
        | SteelVal::IntV(_)
        | SteelVal::BigNum(_)
        | SteelVal::Rational(_)
        | SteelVal::CharV(_)
        | SteelVal::StringV(_)
        | SteelVal::SymbolV(_)
        | SteelVal::Void => Some(None),
        SteelVal::MutableVector(v) => {
            if let Some(vector) = made.by_old.get(&v.as_ptr_usize()) {
                return Some(Some(vector.clone()));
            }
            let items = v.get();
            let items = all(&mut items.iter(), made)?.unwrap_or(items);
            let vector = engine.make_mutable_vector(items, || made.kept.clone());
            made.kept.push(vector.clone());
            made.by_old.insert(v.as_ptr_usize(), vector.clone());
            Some(Some(vector))
        }
        SteelVal::ListV(items) => {
            let copy = all(&mut items.iter(), made)?;
            Some(copy.map(|c| SteelVal::ListV(c.into_iter().collect())))
        }
        SteelVal::Pair(p) => match all(&mut [p.car_ref(), p.cdr_ref()].into_iter(), made)? {
            None => Some(None),
            Some(parts) => {
                let [mut car, mut cdr] = <[SteelVal; 2]>::try_from(parts).ok()?;
                Some(Some(cons(&mut car, &mut cdr).ok()?))
            }
        },
        SteelVal::VectorV(items) => {
            let copy = all(&mut items.iter(), made)?;
            Some(copy.map(|c| SteelVal::VectorV(c.into_iter().collect::<SteelVector>())))
        }
        // A table's values are made again where they must be; a key or a set's element that
        // must be is not carried (a table finds its keys by what they are, and a vector made
        // again is another vector).
        SteelVal::HashMapV(map) => {
            if all(&mut map.iter().map(|(k, _)| k), made)?.is_some() {
                return None;
            }
            let Some(values) = all(&mut map.iter().map(|(_, v)| v), made)? else {
                return Some(None);
            };
            let pairs: Vec<SteelVal> = map
                .iter()
                .zip(values)
                .flat_map(|((k, _), v)| [k.clone(), v])
                .collect();
            Some(Some(hm_construct(&pairs).ok()?))
        }
        SteelVal::HashSetV(set) => all(&mut set.iter(), made)?.is_none().then_some(None),
        _ => None,
    }
}

/// [`carried`] of every one of `items`: `Some(None)` when all are taken as they are, else
/// all of them, those made again in place of the others.
fn carried_all(
    engine: &mut Engine,
    items: &mut dyn Iterator<Item = &SteelVal>,
    made: &mut Made,
    depth: usize,
) -> Option<Option<Vec<SteelVal>>> {
    let mut read: Vec<(&SteelVal, Option<SteelVal>)> = Vec::new();
    for item in items {
        read.push((item, carried(engine, item, made, depth)?));
    }
    if read.iter().all(|(_, again)| again.is_none()) {
        return Some(None);
    }
    Some(Some(
        read.into_iter()
            .map(|(item, again)| again.unwrap_or_else(|| item.clone()))
            .collect(),
    ))
}
