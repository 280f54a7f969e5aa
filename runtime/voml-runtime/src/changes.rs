//! Whether an IR component with `refresh="changed"` may skip a round: nothing it reads may
//! have changed since it last ran, and its views still show what it drew.
//!
//! What it reads are its infos and controls; they may change only when code that names them
//! runs: an EP component naming one of them (any of its parts), the phase 2 of an IR
//! component naming one (where control structures are updated), or code outside every
//! component (utility code, view initialisation), which may change anything. Phase 1 does
//! not count: a component that asks to skip rounds promises to draw from its infos and
//! controls only, and IR components share infos without writing them in phase 1.
//!
//! Code that names a structure often leaves its value as it was (a condition part that runs
//! for every record and sets a utilisation to what it already is). So when what a component
//! reads is plain values (numbers, booleans, characters, strings, symbols), their values as it
//! last drew are kept, and a round in which they are all the same is skipped too.

use steel::rvals::SteelVal;
use voml_ir::IrComponent;

/// A clock of writes, and when each info and control was last written.
#[derive(Debug)]
pub(crate) struct Changes {
    clock: u64,
    /// By info, then by control.
    written: Vec<u64>,
    infos: usize,
    /// When code that may write anything last ran.
    anything: u64,
}

/// When a component last ran, how each of its views stood then, and the values of its infos
/// and controls when they were all plain values.
#[derive(Clone, Debug)]
pub(crate) struct Drawn {
    pub at: u64,
    pub views: Vec<u64>,
    pub values: Option<Vec<SteelVal>>,
}

/// A value compared by what it is, as cheaply as it is copied.
pub(crate) fn plain(v: &SteelVal) -> bool {
    matches!(
        v,
        SteelVal::IntV(_)
            | SteelVal::NumV(_)
            | SteelVal::BoolV(_)
            | SteelVal::CharV(_)
            | SteelVal::StringV(_)
            | SteelVal::SymbolV(_)
            | SteelVal::Void
    )
}

impl Changes {
    pub fn new(infos: usize, controls: usize) -> Changes {
        Changes {
            clock: 0,
            written: vec![0; infos + controls],
            infos,
            anything: 0,
        }
    }

    /// The time now, for a [`Drawn`].
    pub fn now(&self) -> u64 {
        self.clock
    }

    /// Code naming these infos and controls is running: they may change.
    pub fn written(&mut self, infos: &[usize], controls: &[usize]) {
        self.clock += 1;
        for &i in infos {
            if let Some(w) = self.written.get_mut(i) {
                *w = self.clock;
            }
        }
        for &i in controls {
            if let Some(w) = self.written.get_mut(self.infos + i) {
                *w = self.clock;
            }
        }
    }

    /// Code outside every component is running: anything may change.
    pub fn anything_runs(&mut self) {
        self.clock += 1;
        self.anything = self.clock;
    }

    /// Whether IR component `c`, which ran at `at`, may read something written since.
    pub fn since(&self, at: u64, c: &IrComponent) -> bool {
        let after = |i: usize| self.written.get(i).is_none_or(|&w| w > at);
        self.anything > at
            || c.infos.iter().any(|&i| after(i))
            || c.controls.iter().any(|&i| after(self.infos + i))
    }
}
