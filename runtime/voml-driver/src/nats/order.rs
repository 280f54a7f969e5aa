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

use std::collections::BTreeMap;

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
}

impl<T> Default for Producer<T> {
    fn default() -> Self {
        Producer {
            next: 1,
            held: BTreeMap::new(),
            end: None,
        }
    }
}

impl<T> Producer<T> {
    /// Takes message `n` (`None`: a message without a number, from a producer that does not
    /// number them: handed over as it comes), and puts in `ready` what is to be handed over
    /// now, in order. A message taken already is dropped.
    pub(crate) fn message(&mut self, n: Option<u64>, message: T, ready: &mut Vec<T>) {
        let Some(n) = n else {
            ready.push(message);
            return;
        };
        if n < self.next || self.held.contains_key(&n) {
            return;
        }
        if n > self.next {
            self.held.insert(n, message);
            return;
        }
        ready.push(message);
        self.next += 1;
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
        p.message(Some(n), n, &mut ready);
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
        assert!(take(&mut p, 5).is_empty(), "held already");
        assert_eq!(take(&mut p, 3), [3]);
        assert!(!p.ended());
        assert_eq!(take(&mut p, 4), [4, 5, 6]);
        assert!(p.ended());
        assert!(take(&mut p, 2).is_empty(), "handed over already");
        assert!(take(&mut p, 6).is_empty(), "handed over already");
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
            let end_at = (x % (arrivals.len() as u64 + 1)) as usize;
            for (i, n) in arrivals.iter().enumerate() {
                if i == end_at {
                    p.end(Some(count));
                }
                p.message(Some(*n), *n, &mut handed);
            }
            p.end(Some(count));
            assert_eq!(handed, (1..=count).collect::<Vec<_>>(), "round {round}");
            assert!(p.ended());
        }
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
