//! The bounded reorder buffer of the format adapters: records that happen later than the
//! input has come (the end of a Chrome `X` event, the receive of a Paraver communication),
//! and records of inputs that are not in time order (Chrome traces), wait in a min-heap
//! ordered by time and go out in time order.
//!
//! A record goes out when the adapter says the input has passed its time (nothing earlier can
//! come any more), or, whatever its time, when the buffer holds more than its bound: then the
//! earliest goes out. A record that arrives after a later one has gone out goes out at once,
//! out of time order (its time is not changed), and is counted as late.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::record::Record;

/// Records held at most by default: a few megabytes.
pub const REORDER_BOUND: usize = 1 << 16;

/// Where a record goes among records of the same time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tie {
    /// Ends made by the adapter (an `X` event's end): before what the input says at the same
    /// time, the end of what began last first (as nested intervals close).
    End(std::cmp::Reverse<u64>),
    /// Records in input order.
    Input(u64),
}

/// A record's place in time order, and where the record is.
struct Held<T> {
    time: f64,
    tie: Tie,
    what: T,
}

impl<T> Held<T> {
    /// Time order, then place among records of that time.
    fn order<U>(&self, other: &Held<U>) -> Ordering {
        self.time
            .total_cmp(&other.time)
            .then_with(|| self.tie.cmp(&other.tie))
    }
}

impl<T> PartialEq for Held<T> {
    fn eq(&self, other: &Self) -> bool {
        self.order(other) == Ordering::Equal
    }
}

impl<T> Eq for Held<T> {}

impl<T> PartialOrd for Held<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Held<T> {
    /// Reversed, so that the standard (max-)heap gives the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.order(self)
    }
}

/// Records waiting to go out in time order.
///
/// Records pushed in order (each no earlier than the one pushed before it, as most are when
/// the input is in time order) wait in a queue, the others in a min-heap; the earliest is the
/// earlier of the two heads. The heap holds only each record's time, place and slot in
/// `slots`, so that keeping it in order moves a few words, not records.
pub(crate) struct Reorder {
    queue: VecDeque<Held<Record>>,
    heap: BinaryHeap<Held<u32>>,
    slots: Vec<Option<Record>>,
    free: Vec<u32>,
    bound: usize,
    /// Time of the latest record given out.
    out: f64,
    late: u64,
}

impl Reorder {
    pub(crate) fn new(bound: usize) -> Reorder {
        Reorder {
            queue: VecDeque::new(),
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            bound: bound.max(1),
            out: f64::NEG_INFINITY,
            late: 0,
        }
    }

    /// Holds `record`, due at `time` (finite).
    pub(crate) fn push(&mut self, time: f64, tie: Tie, record: Record) {
        let held = Held {
            time,
            tie,
            what: record,
        };
        if self
            .queue
            .back()
            .is_some_and(|last| held.order(last).is_lt())
        {
            let slot = match self.free.pop() {
                Some(slot) => {
                    self.slots[slot as usize] = Some(held.what);
                    slot
                }
                None => {
                    self.slots.push(Some(held.what));
                    (self.slots.len() - 1) as u32
                }
            };
            self.heap.push(Held {
                time,
                tie,
                what: slot,
            });
        } else {
            self.queue.push_back(held);
        }
    }

    /// The time and place of the earliest record, and whether it is the queue's.
    fn earliest(&self) -> Option<(f64, Tie, bool)> {
        match (self.queue.front(), self.heap.peek()) {
            (None, None) => None,
            (Some(q), None) => Some((q.time, q.tie, true)),
            (None, Some(h)) => Some((h.time, h.tie, false)),
            (Some(q), Some(h)) if q.order(h).is_le() => Some((q.time, q.tie, true)),
            (_, Some(h)) => Some((h.time, h.tie, false)),
        }
    }

    /// The earliest record if it is due at or before `upto` (a time, and a place among
    /// records of that time), or if the buffer holds more than its bound.
    pub(crate) fn pop_ready(&mut self, upto: (f64, Tie)) -> Option<Record> {
        let (time, tie, _) = self.earliest()?;
        let due = time
            .total_cmp(&upto.0)
            .then_with(|| tie.cmp(&upto.1))
            .is_le();
        if due || self.queue.len() + self.heap.len() > self.bound {
            self.pop()
        } else {
            None
        }
    }

    /// The earliest record, whatever its time (at the end of the input).
    pub(crate) fn pop(&mut self) -> Option<Record> {
        let (time, _, in_queue) = self.earliest()?;
        let record = if in_queue {
            self.queue.pop_front()?.what
        } else {
            let slot = self.heap.pop()?.what;
            self.free.push(slot);
            self.slots[slot as usize].take()?
        };
        if time < self.out {
            self.late += 1;
        } else {
            self.out = time;
        }
        Some(record)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.queue.len() + self.heap.len()
    }

    /// Records given out after a later one.
    pub(crate) fn late(&self) -> u64 {
        self.late
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Value;

    fn rec(t: f64, line: u64) -> Record {
        Record {
            line,
            rtype: -3,
            etype: 1,
            fields: vec![Value::Real(t)],
        }
    }

    fn lines(r: &mut Reorder, upto: f64) -> Vec<u64> {
        let upto = (upto, Tie::Input(u64::MAX));
        std::iter::from_fn(|| r.pop_ready(upto).map(|r| r.line)).collect()
    }

    #[test]
    fn time_order_with_ties_in_input_order_and_ends_first() {
        let mut r = Reorder::new(100);
        r.push(2.0, Tie::Input(0), rec(2.0, 1));
        r.push(1.0, Tie::Input(1), rec(1.0, 2));
        r.push(2.0, Tie::Input(2), rec(2.0, 3));
        r.push(2.0, Tie::End(std::cmp::Reverse(0)), rec(2.0, 4));
        r.push(2.0, Tie::End(std::cmp::Reverse(1)), rec(2.0, 5));
        assert_eq!(lines(&mut r, 1.5), vec![2]);
        assert_eq!(lines(&mut r, 2.0), vec![5, 4, 1, 3]);
        assert_eq!(r.late(), 0);
        // A place among records of one time: up to the record after input 4.
        r.push(3.0, Tie::Input(5), rec(3.0, 6));
        r.push(3.0, Tie::Input(4), rec(3.0, 7));
        assert_eq!(r.pop_ready((3.0, Tie::Input(4))).map(|r| r.line), Some(7));
        assert!(r.pop_ready((3.0, Tie::Input(4))).is_none());
    }

    #[test]
    fn the_bound_lets_the_earliest_go_and_late_records_are_counted() {
        let mut r = Reorder::new(2);
        for (i, t) in [5.0, 4.0, 3.0].into_iter().enumerate() {
            r.push(t, Tie::Input(i as u64), rec(t, i as u64));
        }
        // Three held, bound two: the earliest goes although nothing is due.
        assert_eq!(lines(&mut r, f64::NEG_INFINITY), vec![2]);
        r.push(1.0, Tie::Input(9), rec(1.0, 9));
        assert_eq!(lines(&mut r, f64::NEG_INFINITY), vec![9]);
        assert_eq!(r.late(), 1);
        assert_eq!(r.len(), 2);
        assert_eq!(std::iter::from_fn(|| r.pop()).count(), 2);
    }
}
