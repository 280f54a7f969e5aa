//! Displays drawn when a picture is needed, not in every round.
//!
//! An IR component with `refresh="update changed"` promises that its phase 1 draws from its
//! infos, controls and views alone (no other global, no `set!`, no sound, no
//! `(current-event)`; `docs/language.md` §8.3), or the compiler found it so
//! ([`voml_ir::IrComponent::phase1_pure`]), and it undraws its last frame before it draws
//! again (`update`): what it shows is a function of the state at its last run. When no other
//! component draws in its views either, the frames it would draw between two pictures are
//! never seen. Such a component is *deferred*: a round in which it would run only marks it
//! pending, and it runs once, with the state of that moment, when a picture is needed (a
//! frame on screen, a frame file, the pictures at the end, a user's resize or zoom). A
//! display redrawn after each of a million records costs one phase 1 per picture.
//!
//! Left out, and run in every round as before: components with an `enable` or an
//! `end-with` (they run code of their own each round), components sharing a view with
//! another component (the order of their drawings makes the picture) or drawing in a view
//! that adapts (a frame past its edge scrolls or rescales it), and every component of a
//! visual object that takes `<snapshot>`s (a snapshot takes the picture of its moment).
//! In synchronous mode records change what a display reads between two rounds, and a
//! picture taken between them must show the last round: displays are deferred there only
//! when nothing is looked at before the run's last round ([`crate::Config::pictures_at_end`]).
//! [`crate::Config::defer_displays`] turns deferring off.

use voml_ir::{Adapt, CompiledVo, RenderMode};

use crate::fault::EventRef;
use crate::{At, Config};

/// The round a deferred component skipped last, for the report of a fault when it runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pending {
    /// The record that round followed, if any.
    pub(crate) event: Option<EventRef>,
}

impl Pending {
    /// Remembers the record of a skipped round in `slot`, reusing its storage.
    pub(crate) fn mark(slot: &mut Option<Pending>, event: Option<At<'_>>) {
        let pending = slot.get_or_insert_with(Pending::default);
        match (event, &mut pending.event) {
            (Some(at), Some(kept)) => {
                kept.record = at.record;
                kept.line = at.line;
                if kept.source != at.source {
                    kept.source.clear();
                    kept.source.push_str(at.source);
                }
            }
            (Some(at), kept) => *kept = Some(at.owned()),
            (None, kept) => *kept = None,
        }
    }

    /// The record, as the runtime names the one being processed.
    pub(crate) fn at(&self) -> Option<At<'_>> {
        self.event.as_ref().map(|e| At {
            record: e.record,
            source: &e.source,
            line: e.line,
        })
    }
}

/// What a rendering round may do with each IR component of `vo`, by index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rounds {
    /// Phase 1 draws from the component's structures and views alone: a round in which
    /// none of them changed may be skipped (`refresh="changed"`, or found by the compiler
    /// where nothing else in its views depends on the frames between).
    pub(crate) changed: bool,
    /// It may wait for a picture to be needed (see the module documentation).
    pub(crate) deferrable: bool,
}

/// What rounds may do with each IR component of `vo`.
///
/// A phase 1 the compiler found drawing-only ([`voml_ir::IrComponent::phase1_pure`]) is
/// taken at its word only where skipping its frames cannot show: it undraws its last frame
/// (`update`), and its views are its own, with no drawing of their initialisation under it
/// (painting a frame over shows its gaps) and no adaptation (a frame past the edge would
/// have scrolled or rescaled the view). A component that says `changed` is taken at its
/// word; deferring it needs the same views.
pub(crate) fn rounds(vo: &CompiledVo, config: &Config) -> Vec<Rounds> {
    // A round follows every event in asynchronous mode; in synchronous mode only a picture
    // at the end is sure to show the last round's state.
    let defer = config.defer_displays
        && (matches!(vo.mode, RenderMode::Asynchronous) || config.pictures_at_end);
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
    let own_views = |c: &voml_ir::IrComponent, bare: bool| {
        !c.views.is_empty()
            && c.views.iter().all(|&v| {
                users.get(v) == Some(&1)
                    && vo.views.get(v).is_some_and(|view| {
                        view.adapt.iter().all(|a| *a == Adapt::None)
                            && (!bare || view.init.is_none())
                    })
            })
    };
    vo.ir_components
        .iter()
        .map(|c| {
            let found = c.phase1_pure.is_some() && c.refresh.update && own_views(c, true);
            let changed = c.refresh.changed || found;
            Rounds {
                changed,
                deferrable: changed
                    && defer
                    && !snapshots
                    && c.refresh.update
                    && c.enable.is_none()
                    && c.phase2.is_none()
                    && c.phase1.is_some()
                    && own_views(c, false),
            }
        })
        .collect()
}
