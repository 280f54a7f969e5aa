//! Which records a reader parses whole: a visual object sees only the records its inputs
//! declare, so the others need no more than their timestamp (which moves trace time on).

/// The (record type, event type) pairs whose records are parsed whole; every other record is
/// parsed up to its timestamp, unless the rest of its line could hold an error (a quote, an
/// exponent, a very long token), so that the same lines are reported bad either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interest {
    pairs: Vec<(i64, i64)>,
}

impl Interest {
    /// Records of these (record type, event type) pairs are parsed whole.
    pub fn new(pairs: impl IntoIterator<Item = (i64, i64)>) -> Interest {
        let mut pairs: Vec<(i64, i64)> = pairs.into_iter().collect();
        pairs.sort_unstable();
        pairs.dedup();
        Interest { pairs }
    }

    /// Whether records of this type are parsed whole.
    pub fn wants(&self, rtype: i64, etype: i64) -> bool {
        self.pairs.binary_search(&(rtype, etype)).is_ok()
    }
}

/// Whether the rest of a line, after the timestamp of a record nobody wants whole, may be
/// left unread: nothing in it could make the line bad (an unterminated quote, or a number
/// too large for a float, which needs an exponent or more than 300 digits).
pub(crate) fn can_skip(rest: &str) -> bool {
    rest.len() <= 300 && !rest.bytes().any(|b| matches!(b, b'"' | b'e' | b'E'))
}
