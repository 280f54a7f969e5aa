//! Which records a reader parses, and how far: a visual object sees only the records its
//! inputs declare, and of those only the fields they name, so the others need no more than
//! their timestamp (which moves trace time on).

/// The (record type, event type) pairs whose records a visual object reads, and how many of
/// their fields (from the timestamp on) it reads; every other record is parsed up to its
/// timestamp, and a wanted one up to the fields read, unless the rest of its line could hold
/// an error (a quote, an exponent, a very long token), so that the same lines are reported
/// bad either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interest {
    /// Sorted by pair: the fields read, `usize::MAX` for all of them.
    pairs: Vec<((i64, i64), usize)>,
    /// The fields read of every record (of the pairs too), the timestamp at least.
    every: usize,
}

impl Interest {
    /// Records of these (record type, event type) pairs are parsed whole.
    pub fn new(pairs: impl IntoIterator<Item = (i64, i64)>) -> Interest {
        Interest::with_fields(pairs.into_iter().map(|p| (p, usize::MAX)))
    }

    /// Records of these (record type, event type) pairs are parsed up to this many fields
    /// from the timestamp on (the timestamp at least; a pair named twice, the more).
    pub fn with_fields(pairs: impl IntoIterator<Item = ((i64, i64), usize)>) -> Interest {
        let mut pairs: Vec<((i64, i64), usize)> = pairs.into_iter().collect();
        // The most fields first among equal pairs, so that dedup keeps them.
        pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        pairs.dedup_by_key(|p| p.0);
        Interest { pairs, every: 1 }
    }

    /// Every record is parsed up to this many fields from the timestamp on at least (for a
    /// visual object that looks at every record, but only at its first elements).
    pub fn reading_every_record(mut self, fields: usize) -> Interest {
        self.every = self.every.max(fields);
        self
    }

    /// Whether records of this type are wanted at all (more than their timestamp).
    pub fn wants(&self, rtype: i64, etype: i64) -> bool {
        self.fields(rtype, etype) > 1
    }

    /// How many fields, from the timestamp on, of a record of this type are parsed at least
    /// (`usize::MAX`: all of them).
    pub fn fields(&self, rtype: i64, etype: i64) -> usize {
        match self.pairs.binary_search_by(|p| p.0.cmp(&(rtype, etype))) {
            Ok(at) => self.pairs[at].1.max(self.every),
            Err(_) => self.every,
        }
    }
}

/// How far the reader reads a line: what the visual object wants of it, and whether the
/// line lies in a buffer known to hold none of the bytes [`can_skip`] looks for.
#[derive(Clone, Copy)]
pub(crate) struct Reading<'a> {
    pub interest: &'a Interest,
    pub plain: bool,
}

/// Whether a buffer of lines holds no byte that could make the unread rest of one of them
/// bad (see [`can_skip`]): checked once for the buffer, faster than line by line.
pub(crate) fn is_plain(buffer: &[u8]) -> bool {
    memchr::memchr3(b'"', b'e', b'E', buffer).is_none()
}

/// Whether the rest of a line, after the timestamp of a record nobody wants whole, may be
/// left unread: nothing in it could make the line bad (an unterminated quote, or a number
/// too large for a float, which needs an exponent or more than 300 digits). `plain`: the
/// line is known to hold no quote and no exponent.
pub(crate) fn can_skip(rest: &[u8], plain: bool) -> bool {
    rest.len() <= 300 && (plain || !rest.iter().any(|b| matches!(b, b'"' | b'e' | b'E')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_may_be_read_up_to_some_fields() {
        let pairs = [((-3, -901), usize::MAX), ((-4, 7), 2)];
        let some = Interest::with_fields(pairs);
        assert_eq!(
            (
                some.fields(-3, -901),
                some.fields(-4, 7),
                some.fields(-3, 1)
            ),
            (usize::MAX, 2, 1)
        );
        assert!(!some.wants(-3, 1));
        let every = Interest::with_fields(pairs).reading_every_record(3);
        assert_eq!(
            (
                every.fields(-3, -901),
                every.fields(-4, 7),
                every.fields(-3, 1)
            ),
            (usize::MAX, 3, 3)
        );
        assert!(every.wants(-3, 1));
        assert_eq!(every.clone().reading_every_record(1), every);
    }
}
