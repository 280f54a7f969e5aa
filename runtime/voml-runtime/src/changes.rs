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
//! A second clock, `touched`, counts phase 1 and `enable` too: a pure condition or `enable`
//! (`voml_ir::Reads`) found false, or evaluated, stands while no code that may assign what
//! it reads has run, whatever that code promised.
//!
//! Code that names a structure often leaves its value as it was (a condition part that runs
//! for every record and sets a utilisation to what it already is). So when what a component
//! reads is plain values (numbers, booleans, characters, strings, symbols), their values as it
//! last drew are kept, and a round in which they are all the same is skipped too.

use steel::rvals::SteelVal;
use voml_ir::IrComponent;

/// A clock of writes, and when each info and control was last written, and touched.
#[derive(Debug)]
pub(crate) struct Changes {
    clock: u64,
    /// By info, then by control.
    written: Vec<u64>,
    /// When code naming each one last ran, phase 1 included: what a pure condition or
    /// `enable` computes from may have been assigned since (`touched_since`).
    touched: Vec<u64>,
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
            touched: vec![0; infos + controls],
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
        self.touched(infos, controls);
        for i in self.slots(infos, controls) {
            if let Some(w) = self.written.get_mut(i) {
                *w = self.clock;
            }
        }
    }

    /// Phase 1 or an `enable` naming these infos and controls is running: they are not
    /// written there (see the module's notes), but nothing stops the code from assigning
    /// them.
    pub fn touched(&mut self, infos: &[usize], controls: &[usize]) {
        self.clock += 1;
        for i in self.slots(infos, controls) {
            if let Some(w) = self.touched.get_mut(i) {
                *w = self.clock;
            }
        }
    }

    /// Whether code that may have assigned one of these infos and controls ran after `at`.
    pub fn touched_since(&self, at: u64, infos: &[usize], controls: &[usize]) -> bool {
        self.anything > at
            || self
                .slots(infos, controls)
                .any(|i| self.touched.get(i).is_none_or(|&t| t > at))
    }

    /// The places of these infos and controls in the clocks.
    fn slots<'a>(
        &self,
        infos: &'a [usize],
        controls: &'a [usize],
    ) -> impl Iterator<Item = usize> + 'a {
        let first_control = self.infos;
        infos
            .iter()
            .copied()
            .chain(controls.iter().map(move |&i| first_control + i))
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
