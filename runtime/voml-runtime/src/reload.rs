//! Re-initialisation while running (seed 004 §2.2): a newer compilation of a visual object
//! takes over from the running one between two records. The info and control structures whose
//! declarations did not change (name, type and initial value) keep their values; the others
//! start from their initial values. The new visual object takes the old one's trace time and
//! counts, initialises its views, and draws once at once, so that its pictures show the state
//! it took over.

use steel::rvals::SteelVal;
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
    /// reset).
    pub fn adopt(&mut self, old: &Runtime) -> Result<Adopted, Stop> {
        let mut adopted = Adopted::default();
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
                .filter(is_data);
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
        let mut host = self.host.borrow_mut();
        for id in host.views.clone() {
            host.llvo.backend_mut().destroy_surface(id);
        }
        std::mem::replace(
            host.llvo.backend_mut(),
            Box::new(voml_llvo::NullBackend::new()),
        )
    }
}

/// A value made of data only (numbers, strings, lists, vectors, hash tables ...), which means
/// the same in another engine.
fn is_data(value: &SteelVal) -> bool {
    match value {
        SteelVal::BoolV(_)
        | SteelVal::NumV(_)
        | SteelVal::IntV(_)
        | SteelVal::BigNum(_)
        | SteelVal::Rational(_)
        | SteelVal::CharV(_)
        | SteelVal::StringV(_)
        | SteelVal::SymbolV(_)
        | SteelVal::Void => true,
        SteelVal::ListV(items) => items.iter().all(is_data),
        SteelVal::VectorV(items) => items.iter().all(is_data),
        SteelVal::MutableVector(v) => v.get().iter().all(is_data),
        SteelVal::HashMapV(map) => map.iter().all(|(k, v)| is_data(k) && is_data(v)),
        SteelVal::HashSetV(set) => set.iter().all(is_data),
        SteelVal::Pair(p) => is_data(p.car_ref()) && is_data(p.cdr_ref()),
        _ => false,
    }
}
