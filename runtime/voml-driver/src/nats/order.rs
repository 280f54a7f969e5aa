//! The order a producer's messages are taken in, whatever order they arrive in.
//!
//! A producer numbers its messages (`Nats-Msg-Id: NAME-N`, N from 1) and publishes each only
//! when the server has stored the one before, so the stream holds them in order. They do not
//! always arrive in order: a message delivered on a connection that then died unnoticed is
//! delivered again later (when its acknowledgement is overdue), after messages that came
//! behind it. Each producer's messages are therefore handed over by number: the next one at
//! once, a later one held until those before it have come, one already taken dropped. Its end
//! message says how many messages came before it (`Voml-End: K`); the producer has ended once
//! all K are handed over, not when its end arrives.
//!
//! A message that never comes (a producer that skipped a number, a stream that lost one) is
//! waited for a bounded time, not for ever: [`Producer::skip`] then gives up on it, hands
//! over what came after it, and says which messages were missed.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The number a message id `NAME-N` gives its message: the digits after its last `-`.
pub(crate) fn number(msg_id: &str) -> Option<u64> {
    let (_, n) = msg_id.rsplit_once('-')?;
    n.parse().ok().filter(|&n| n > 0)
}

/// One producer's messages: what has been handed over, what waits.
pub(crate) struct Producer<T> {
    /// The number of the next message to hand over.
    next: u64,
    /// Messages that came before their turn, by number.
    held: BTreeMap<u64, T>,
    /// How many messages came before the end, once the end has come.
    end: Option<u64>,
    /// Since when a message has been missing (one came after it, or the end did).
    missing_since: Option<Instant>,
}

impl<T> Default for Producer<T> {
    fn default() -> Self {
        Producer {
            next: 1,
            held: BTreeMap::new(),
            end: None,
            missing_since: None,
        }
    }
}

impl<T> Producer<T> {
    /// Takes message `n` (`None`: a message without a number, from a producer that does not
    /// number them: handed over as it comes), and puts in `ready` what is to be handed over
    /// now, in order. A copy of a message taken already is given back.
    pub(crate) fn message(&mut self, n: Option<u64>, message: T, ready: &mut Vec<T>) -> Option<T> {
        let Some(n) = n else {
            ready.push(message);
            return None;
        };
        if n < self.next || self.held.contains_key(&n) {
            return Some(message);
        }
        if n > self.next {
            self.held.insert(n, message);
            return None;
        }
        ready.push(message);
        self.next += 1;
        self.hand_over_held(ready);
        None
    }

    /// Hands over the held messages that are next in turn.
    fn hand_over_held(&mut self, ready: &mut Vec<T>) {
        while let Some(m) = self.held.remove(&self.next) {
            ready.push(m);
            self.next += 1;
        }
    }

    /// Takes the producer's end, which says how many messages came before it (`None`: it
    /// does not say; the producer ends with what has been handed over).
    pub(crate) fn end(&mut self, before: Option<u64>) {
        if self.end.is_none() {
            self.end = Some(before.unwrap_or(self.next - 1));
        }
    }

    /// Whether a message is missing: one after it or the end has come.
    fn missing(&self) -> bool {
        !self.held.is_empty() || (self.end.is_some() && !self.ended())
    }

    /// Notes at `now` whether a message is missing, and answers whether one has been missing
    /// for longer than `patience`.
    pub(crate) fn overdue(&mut self, now: Instant, patience: Duration) -> bool {
        if !self.missing() {
            self.missing_since = None;
            return false;
        }
        let since = *self.missing_since.get_or_insert(now);
        now.duration_since(since) > patience
    }

    /// Gives up on the messages missing before the first held one (or, with none held,
    /// before the end), puts in `ready` what came after them, in order, and answers their
    /// numbers, first and last.
    pub(crate) fn skip(&mut self, ready: &mut Vec<T>) -> Option<(u64, u64)> {
        let upto = match self.held.first_key_value() {
            Some((&first, _)) => first,
            None => self.end.filter(|&k| self.next <= k)? + 1,
        };
        let missed = (self.next, upto - 1);
        self.next = upto;
        self.hand_over_held(ready);
        self.missing_since = None;
        Some(missed)
    }

    /// Whether the end has come and every message before it has been handed over.
    pub(crate) fn ended(&self) -> bool {
        self.end.is_some_and(|k| self.next > k)
    }

    /// How many messages wait for one before them.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(p: &mut Producer<u64>, n: u64) -> Vec<u64> {
        let mut ready = Vec::new();
        let copy = p.message(Some(n), n, &mut ready);
        assert!(copy.is_none() || ready.is_empty());
        ready
    }

    #[test]
    fn numbers_of_message_ids() {
        assert_eq!(number("p0-17"), Some(17));
        assert_eq!(number("run-a-b-3"), Some(3));
        assert_eq!(number("p0-end"), None);
        assert_eq!(number("p0-0"), None);
        assert_eq!(number("plain"), None);
    }

    /// Messages redelivered after later ones: each handed over once, in number order; the
    /// end that arrives before the last messages waits for them.
    #[test]
    fn late_messages_are_handed_over_in_order_once_and_the_end_waits_for_them() {
        let mut p = Producer::default();
        assert_eq!(take(&mut p, 1), [1]);
        assert_eq!(take(&mut p, 2), [2]);
        // 3 and 4 went down a dead connection; 5, 6 and the end come first.
        assert!(take(&mut p, 5).is_empty());
        assert!(take(&mut p, 6).is_empty());
        p.end(Some(6));
        assert!(!p.ended());
        assert_eq!(p.waiting(), 2);
        assert_eq!(
            p.message(Some(5), 5, &mut Vec::new()),
            Some(5),
            "held already"
        );
        assert_eq!(take(&mut p, 3), [3]);
        assert!(!p.ended());
        assert_eq!(take(&mut p, 4), [4, 5, 6]);
        assert!(p.ended());
        assert_eq!(
            p.message(Some(2), 2, &mut Vec::new()),
            Some(2),
            "handed over already"
        );
        assert_eq!(
            p.message(Some(6), 6, &mut Vec::new()),
            Some(6),
            "handed over already"
        );
        assert_eq!(p.waiting(), 0);
    }

    /// Whatever order the messages come in, with copies, they are handed over in order, each
    /// once, and the producer ends after the last.
    #[test]
    fn any_arrival_order_gives_the_published_order() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..200 {
            let count = 1 + round % 40;
            let mut arrivals: Vec<u64> = (1..=count).chain((1..=count).step_by(3)).collect();
            for i in (1..arrivals.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                arrivals.swap(i, (x % (i as u64 + 1)) as usize);
            }
            let mut p = Producer::default();
            let mut handed = Vec::new();
            let mut copies = 0;
            let end_at = (x % (arrivals.len() as u64 + 1)) as usize;
            for (i, n) in arrivals.iter().enumerate() {
                if i == end_at {
                    p.end(Some(count));
                }
                if let Some(copy) = p.message(Some(*n), *n, &mut handed) {
                    assert_eq!(copy, *n);
                    copies += 1;
                }
            }
            p.end(Some(count));
            assert_eq!(handed, (1..=count).collect::<Vec<_>>(), "round {round}");
            assert_eq!(copies, arrivals.len() - count as usize, "round {round}");
            assert!(p.ended());
        }
    }

    /// A message that never comes is waited for `patience`, then skipped: what came after it
    /// is handed over, and the producer's end is reached; messages missing at the end too.
    #[test]
    fn a_message_that_never_comes_is_skipped_after_a_while() {
        let patience = Duration::from_secs(30);
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut p = Producer::default();
        assert_eq!(take(&mut p, 1), [1]);
        assert!(!p.overdue(at(0), patience), "nothing missing");
        // 2 never comes.
        assert!(take(&mut p, 3).is_empty());
        assert!(take(&mut p, 4).is_empty());
        p.end(Some(6));
        assert!(!p.overdue(at(1), patience));
        assert!(!p.overdue(at(30), patience));
        assert!(p.overdue(at(32), patience));
        let mut ready = Vec::new();
        assert_eq!(p.skip(&mut ready), Some((2, 2)));
        assert_eq!(ready, [3, 4]);
        assert!(!p.ended(), "5 and 6 are still to come");
        // Neither does 5 or 6: the end waits as long, then gives up on them.
        assert!(!p.overdue(at(40), patience));
        assert!(p.overdue(at(71), patience));
        let mut ready = Vec::new();
        assert_eq!(p.skip(&mut ready), Some((5, 6)));
        assert!(ready.is_empty());
        assert!(p.ended());
        assert!(!p.overdue(at(200), patience));
        assert_eq!(p.skip(&mut ready), None);
    }

    /// A gap that fills in time is not skipped.
    #[test]
    fn a_gap_that_fills_in_time_is_not_overdue() {
        let patience = Duration::from_secs(30);
        let t0 = Instant::now();
        let mut p = Producer::default();
        assert!(take(&mut p, 2).is_empty());
        assert!(!p.overdue(t0, patience));
        assert_eq!(take(&mut p, 1), [1, 2]);
        assert!(!p.overdue(t0 + Duration::from_secs(60), patience));
    }

    /// A producer that does not number its messages or say its count: messages as they come,
    /// ended by its end.
    #[test]
    fn unnumbered_messages_come_as_they_come() {
        let mut p = Producer::default();
        let mut ready = Vec::new();
        p.message(None, 7, &mut ready);
        p.message(None, 3, &mut ready);
        assert_eq!(ready, [7, 3]);
        assert!(!p.ended());
        p.end(None);
        assert!(p.ended());
    }
}
