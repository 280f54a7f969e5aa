//! What the format adapters share on their way out: the records waiting in time order, the
//! errors waiting their turn, what is counted, and the one loop that gives out the next of
//! them, reading on when nothing can go out yet.

use std::collections::VecDeque;

use crate::error::TraceError;
use crate::record::Record;
use crate::reorder::{Reorder, Tie, REORDER_BOUND};
use crate::AdapterStats;

/// An adapter's records and errors on their way out.
pub(crate) struct Outgoing {
    pub(crate) reorder: Reorder,
    /// Records handed back, to build new ones in (a few).
    pub(crate) spare: Vec<Record>,
    pub(crate) errors: VecDeque<TraceError>,
    pub(crate) stats: AdapterStats,
    /// The input has ended.
    pub(crate) ended: bool,
    /// What was still open when it ended has gone in.
    pub(crate) finished: bool,
    /// Strict, and an error went out: nothing more.
    pub(crate) stopped: bool,
    strict: bool,
}

impl Outgoing {
    pub(crate) fn new(strict: bool) -> Outgoing {
        Outgoing {
            reorder: Reorder::new(REORDER_BOUND),
            spare: Vec::new(),
            errors: VecDeque::new(),
            stats: AdapterStats::default(),
            ended: false,
            finished: false,
            stopped: false,
            strict,
        }
    }

    /// What was counted, records given out late included.
    pub(crate) fn stats(&self) -> AdapterStats {
        AdapterStats {
            late: self.reorder.late(),
            ..self.stats
        }
    }
}

/// A format adapter, as the loop that gives out its records sees it.
pub(crate) trait Adapter {
    fn outgoing(&mut self) -> &mut Outgoing;

    /// Records up to this time and place can go out: the input has passed it.
    fn due(&mut self) -> (f64, Tie);

    /// Reads on (a line, an event), queueing what it makes; at the end of the input, sets
    /// `ended`.
    fn read_more(&mut self);

    /// The input has ended: what is still open is closed (once).
    fn finish(&mut self) {}
}

/// The next record or error of `adapter`, built in `reuse`'s storage when given: errors first
/// (a strict reader stops after one), then a record whose time the input has passed, then,
/// at the end of the input, every record left in time order; otherwise it reads on.
pub(crate) fn next_reusing<A: Adapter>(
    adapter: &mut A,
    reuse: Option<Record>,
) -> Option<Result<Record, TraceError>> {
    if let Some(r) = reuse {
        let out = adapter.outgoing();
        if out.spare.len() < 64 {
            out.spare.push(r);
        }
    }
    loop {
        let out = adapter.outgoing();
        if let Some(e) = out.errors.pop_front() {
            out.stats.bad += 1;
            if out.strict {
                out.stopped = true;
                out.errors.clear();
            }
            return Some(Err(e));
        }
        if out.stopped {
            return None;
        }
        let due = adapter.due();
        let out = adapter.outgoing();
        if let Some(r) = out.reorder.pop_ready(due) {
            out.stats.records += 1;
            return Some(Ok(r));
        }
        if out.ended {
            if !out.finished {
                out.finished = true;
                adapter.finish();
                continue;
            }
            let r = out.reorder.pop()?;
            out.stats.records += 1;
            return Some(Ok(r));
        }
        adapter.read_more();
    }
}
