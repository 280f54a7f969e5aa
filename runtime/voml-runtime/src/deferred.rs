//! Displays drawn when a picture is needed, not in every round.
//!
//! An IR component with `refresh="update changed"` promises that its phase 1 draws from its
//! infos, controls and views alone (no other global, no `set!`, no sound, no
//! `(current-event)`; `docs/language.md` §8.3), and undraws its last frame before it draws
//! again: what it shows is a function of the state at its last run. When no other
//! component draws in its views either, the frames it would draw between two pictures are
//! never seen. Such a component is *deferred*: a round in which it would run only marks it
//! pending, and it runs once, with the state of that moment, when a picture is needed (a
//! frame on screen, a frame file, the pictures at the end, a user's resize or zoom). A
//! display redrawn after each of a million records costs one phase 1 per picture.
//!
//! Left out, and run in every round as before: components with an `enable` or an
//! `end-with` (they run code of their own each round), components sharing a view with
//! another component (the order of their drawings makes the picture), and every component
//! of a visual object that takes `<snapshot>`s (a snapshot takes the picture of its moment).
//! [`crate::Config::defer_displays`] turns deferring off.

use voml_ir::CompiledVo;

/// The round a deferred component skipped last, for the report of a fault when it runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pending {
    /// The record that round followed, if any (`record`, its source, its line).
    pub(crate) event: Option<(u64, String, u64)>,
}

impl Pending {
    /// Remembers the record of a skipped round in `slot`, reusing its storage.
    pub(crate) fn mark(slot: &mut Option<Pending>, event: Option<(u64, &str, u64)>) {
        let pending = slot.get_or_insert_with(Pending::default);
        match (event, &mut pending.event) {
            (Some((record, source, line)), Some(kept)) => {
                kept.0 = record;
                if kept.1 != source {
                    kept.1.clear();
                    kept.1.push_str(source);
                }
                kept.2 = line;
            }
            (Some((record, source, line)), kept) => {
                *kept = Some((record, source.to_owned(), line));
            }
            (None, kept) => *kept = None,
        }
    }
}

/// Which IR components of `vo` may be deferred (see the module documentation), by index.
pub(crate) fn deferrable(vo: &CompiledVo) -> Vec<bool> {
    let snapshots = vo.program.text.contains("(voml-snapshot ");
    let mut users = vec![0usize; vo.views.len()];
    for c in &vo.ir_components {
        let mut seen: Vec<usize> = c.views.clone();
        seen.sort_unstable();
        seen.dedup();
        for v in seen {
            if let Some(n) = users.get_mut(v) {
                *n += 1;
            }
        }
    }
    vo.ir_components
        .iter()
        .map(|c| {
            !snapshots
                && c.refresh.update
                && c.refresh.changed
                && c.enable.is_none()
                && c.phase2.is_none()
                && c.phase1.is_some()
                && !c.views.is_empty()
                && c.views.iter().all(|&v| users.get(v) == Some(&1))
        })
        .collect()
}
