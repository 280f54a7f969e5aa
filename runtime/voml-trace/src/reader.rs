//! Streaming reader of trace files: one record at a time from any `BufRead`, with bad lines
//! reported in place rather than aborting the whole trace.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use crate::error::{excerpt, LineError, TraceError, TraceErrorKind};
use crate::interest::{is_plain, Interest, Reading};
use crate::lines::{find_newline, read_line, RawLine};
use crate::parse::{is_comment_or_blank_bytes, parse_record, parse_record_into};
use crate::record::{Record, Value};
use std::sync::Arc;

/// Longest line accepted by default. Real trace lines are under 100 bytes; the cap keeps a
/// corrupt or binary input from growing the line buffer without bound.
pub const MAX_LINE_LEN: usize = 1 << 20;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Stop after the first bad line (it is still yielded). When false, bad lines are yielded
    /// as errors and reading goes on.
    pub strict: bool,
}

/// What the reader has seen so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceStats {
    pub records: u64,
    pub bad_lines: u64,
    pub comment_or_blank: u64,
}

/// Iterator over the records of a PICL trace.
///
/// Lines are read into one reused buffer, so memory stays bounded by the longest line (at most
/// the length limit) whatever the size of the input. Lines are separated by `\n`; a `\r` before
/// it is whitespace. A final line without `\n` is read like any other.
///
/// Truncated input: PICL has no end-of-record marker and `ndata` is unreliable, so a record cut
/// short cannot be told from a short record. A partial last line is parsed as it is: if it still
/// has three tokens, integer type codes and no open quote it is returned as a (shorter, possibly
/// with a cut number) record, otherwise it is a bad line. Callers that care, such as one
/// following a file being written, can check [`TraceReader::missing_final_newline`].
///
/// A read error from the underlying reader is yielded as a [`TraceErrorKind::Io`] error and
/// ends the iteration, strict or not.
pub struct TraceReader<R> {
    inner: R,
    source_name: String,
    options: ReadOptions,
    max_line_len: usize,
    cut_last_line_is_bad: bool,
    buf: Vec<u8>,
    scratch: Vec<Value>,
    line_no: u64,
    stats: TraceStats,
    done: bool,
    missing_final_newline: bool,
    /// Records parsed whole (all when `None`); see [`Interest`].
    interest: Option<Arc<Interest>>,
    /// Bytes at the head of the read buffer known to end with a whole line (through the
    /// buffer's last `\n`); 0 when not known.
    whole: usize,
    /// Those bytes are all ASCII, so that their lines need no UTF-8 check of their own.
    ascii: bool,
    /// Those bytes hold no quote and no exponent (see [`is_plain`]); checked only when
    /// there is an interest.
    plain: bool,
}

impl TraceReader<BufReader<File>> {
    /// Opens a file, naming it by its path in diagnostics.
    pub fn open(path: impl AsRef<Path>, options: ReadOptions) -> io::Result<Self> {
        let path = path.as_ref();
        let file = File::open(path)?;
        Ok(Self::new(
            BufReader::with_capacity(64 * 1024, file),
            path.display().to_string(),
            options,
        ))
    }
}

impl<R: BufRead> TraceReader<R> {
    pub fn new(reader: R, source_name: String, options: ReadOptions) -> Self {
        Self {
            inner: reader,
            source_name,
            options,
            max_line_len: MAX_LINE_LEN,
            cut_last_line_is_bad: false,
            buf: Vec::with_capacity(256),
            scratch: Vec::with_capacity(32),
            line_no: 0,
            stats: TraceStats::default(),
            done: false,
            missing_final_newline: false,
            interest: None,
            whole: 0,
            ascii: false,
            plain: false,
        }
    }

    /// From now on, records `interest` does not want are parsed only up to their timestamp
    /// (`None`: every record whole). A reader's lines are reported bad as before.
    pub fn set_interest(&mut self, interest: Option<Arc<Interest>>) {
        self.interest = interest;
    }

    /// Replaces the [`MAX_LINE_LEN`] limit (in bytes, terminator excluded).
    pub fn with_max_line_len(mut self, max_line_len: usize) -> Self {
        self.max_line_len = max_line_len;
        self
    }

    /// Makes a last line without its `\n` a bad line ([`TraceErrorKind::CutLine`]) instead of
    /// reading what there is of it: on a socket, it means the producer went away mid-line.
    pub fn cut_last_line_is_bad(mut self) -> Self {
        self.cut_last_line_is_bad = true;
        self
    }

    pub fn stats(&self) -> TraceStats {
        self.stats
    }

    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// Number of the last line read (0 before the first).
    pub fn line(&self) -> u64 {
        self.line_no
    }

    /// Whether the input ended without a final `\n`, i.e. its last line may be cut short.
    pub fn missing_final_newline(&self) -> bool {
        self.missing_final_newline
    }

    pub fn into_inner(self) -> R {
        self.inner
    }

    /// The reader records are read from: a caller reading a pipe can look at what is
    /// buffered (`BufReader::buffer`) to learn whether the next record is already there.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Reads the next line into `buf`; `None` at end of input.
    fn read_raw_line(&mut self) -> io::Result<Option<RawLine>> {
        self.whole = 0;
        read_line(&mut self.inner, &mut self.buf, self.max_line_len)
    }

    /// Whether a whole line is known to wait in the read buffer, so that the next record
    /// needs no read (false when not known: look at the buffer).
    pub fn whole_line_buffered(&self) -> bool {
        self.whole > 0
    }

    fn bad_line(&mut self, e: LineError) -> TraceError {
        self.stats.bad_lines += 1;
        if self.options.strict {
            self.done = true;
        }
        let line = String::from_utf8_lossy(&self.buf);
        TraceError {
            source_name: self.source_name.clone(),
            line: self.line_no,
            column: e.column,
            kind: e.kind,
            message: e.message,
            text: excerpt(line.trim_end_matches('\r'), TraceError::TEXT_LIMIT),
        }
    }
}

impl<R: BufRead> TraceReader<R> {
    /// The next record, like [`Iterator::next`], but parsed into `reuse` (a record the
    /// caller is done with) when given, so that its storage serves again.
    pub fn next_reusing(&mut self, reuse: Option<Record>) -> Option<Result<Record, TraceError>> {
        self.next_as(&mut Reuse(reuse))
    }

    /// The next record parsed into `record` itself (whose storage serves again): nothing
    /// moves. At a bad line, the error (and `record` holds no record).
    pub fn next_into(&mut self, record: &mut Record) -> Option<Result<(), TraceError>> {
        self.next_as(&mut InPlace(record))
    }

    /// The next record, as `target` takes it.
    fn next_as<T: Target>(&mut self, target: &mut T) -> Option<Result<T::Out, TraceError>> {
        while !self.done {
            // Most lines lie whole in the reader's buffer: they are parsed where they are,
            // without a copy; the others (cut by the buffer's end, too long, the last one)
            // are gathered line by line below.
            let avail = match self.inner.fill_buf() {
                Ok(avail) => avail,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Some(Err(self.read_error(&e))),
            };
            if let Some(n) = find_newline(avail).filter(|&n| n <= self.max_line_len) {
                if self.whole == 0 {
                    // Once a buffer: where its whole lines end, and whether they are ASCII
                    // (checked at once, faster than line by line).
                    self.whole = avail.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                    self.ascii = avail[..self.whole].is_ascii();
                    self.plain = self.interest.is_some() && is_plain(&avail[..self.whole]);
                }
                self.whole -= n + 1;
                self.line_no += 1;
                let line = &avail[..n];
                let parsed = parse_raw(
                    line,
                    self.ascii,
                    self.line_no,
                    target,
                    &mut self.scratch,
                    self.interest.as_deref().map(|interest| Reading {
                        interest,
                        plain: self.plain,
                    }),
                );
                if let Parsed::Bad(_) = parsed {
                    self.buf.clear();
                    self.buf.extend_from_slice(line);
                }
                self.inner.consume(n + 1);
                if let Some(item) = self.counted(parsed) {
                    return Some(item);
                }
                continue;
            }
            let raw = match self.read_raw_line() {
                Ok(Some(raw)) => raw,
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Err(e) => return Some(Err(self.read_error(&e))),
            };
            self.line_no += 1;
            if !raw.terminated {
                self.missing_final_newline = true;
                if self.cut_last_line_is_bad && !is_comment_or_blank_bytes(&self.buf) {
                    let e = LineError {
                        column: self.buf.len() + 1,
                        kind: TraceErrorKind::CutLine,
                        message: "the input ended in the middle of this line (the producer went away?); the line is skipped".to_owned(),
                    };
                    return Some(Err(self.bad_line(e)));
                }
            }
            if raw.overflow && !is_comment_or_blank_bytes(&self.buf) {
                let e = LineError {
                    column: self.max_line_len + 1,
                    kind: TraceErrorKind::LineTooLong,
                    message: format!(
                        "line longer than {} bytes; the rest of it is skipped",
                        self.max_line_len
                    ),
                };
                return Some(Err(self.bad_line(e)));
            }
            let parsed = parse_raw(
                &self.buf,
                false,
                self.line_no,
                target,
                &mut self.scratch,
                self.interest.as_deref().map(|interest| Reading {
                    interest,
                    plain: false,
                }),
            );
            if let Some(item) = self.counted(parsed) {
                return Some(item);
            }
        }
        None
    }

    /// What a parsed line gives the caller, counted: nothing for a comment or a blank line.
    #[inline(always)]
    fn counted<O>(&mut self, parsed: Parsed<O>) -> Option<Result<O, TraceError>> {
        match parsed {
            Parsed::Nothing => {
                self.stats.comment_or_blank += 1;
                None
            }
            Parsed::Record(record) => {
                self.stats.records += 1;
                Some(Ok(record))
            }
            Parsed::Bad(e) => Some(Err(self.bad_line(e))),
        }
    }

    /// Ends the reading with a located error for a failed read.
    fn read_error(&mut self, e: &io::Error) -> TraceError {
        self.done = true;
        TraceError {
            source_name: self.source_name.clone(),
            line: self.line_no + 1,
            column: 1,
            kind: TraceErrorKind::Io,
            message: format!("read error: {e}"),
            text: String::new(),
        }
    }
}

/// What one line holds.
enum Parsed<O> {
    /// A comment or a blank line.
    Nothing,
    /// A record, as the [`Target`] gives it.
    Record(O),
    Bad(LineError),
}

/// Where the reader parses a record: what [`TraceReader::next_reusing`] and
/// [`TraceReader::next_into`] share.
trait Target {
    /// What a parsed record gives the caller.
    type Out;
    fn parse(
        &mut self,
        line: &[u8],
        line_no: u64,
        scratch: &mut Vec<Value>,
        reading: Option<Reading<'_>>,
    ) -> Result<Self::Out, LineError>;
}

/// A new record, in this one's storage when there is one.
struct Reuse(Option<Record>);

impl Target for Reuse {
    type Out = Record;
    fn parse(
        &mut self,
        line: &[u8],
        line_no: u64,
        scratch: &mut Vec<Value>,
        reading: Option<Reading<'_>>,
    ) -> Result<Record, LineError> {
        match self.0.take() {
            Some(mut record) => {
                parse_record_into(line, line_no, &mut record, reading).map(|()| record)
            }
            None => parse_record(line, line_no, scratch, reading),
        }
    }
}

/// This record, parsed where it is.
struct InPlace<'a>(&'a mut Record);

impl Target for InPlace<'_> {
    type Out = ();
    fn parse(
        &mut self,
        line: &[u8],
        line_no: u64,
        _scratch: &mut Vec<Value>,
        reading: Option<Reading<'_>>,
    ) -> Result<(), LineError> {
        parse_record_into(line, line_no, self.0, reading)
    }
}

/// Parses one line (terminator excluded), into `reuse` when given; `ascii` when the line is
/// known to be ASCII.
#[inline(always)]
fn parse_raw<T: Target>(
    line: &[u8],
    ascii: bool,
    line_no: u64,
    target: &mut T,
    scratch: &mut Vec<Value>,
    reading: Option<Reading<'_>>,
) -> Parsed<T::Out> {
    // Comments are recognised on bytes first so that a comment in another encoding is still
    // only a comment.
    if is_comment_or_blank_bytes(line) {
        return Parsed::Nothing;
    }
    if !ascii {
        if let Err(err) = std::str::from_utf8(line) {
            let at = err.valid_up_to();
            return Parsed::Bad(LineError {
                column: at + 1,
                kind: TraceErrorKind::InvalidUtf8,
                message: format!("invalid UTF-8: unexpected byte 0x{:02X}", line[at]),
            });
        }
    }
    match target.parse(line, line_no, scratch, reading) {
        Ok(record) => Parsed::Record(record),
        Err(e) => Parsed::Bad(e),
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_reusing(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, Read};

    fn read(input: &[u8], strict: bool) -> (Vec<Result<Record, TraceError>>, TraceStats) {
        let mut r = TraceReader::new(input, "t.trf".to_owned(), ReadOptions { strict });
        let items: Vec<_> = r.by_ref().collect();
        (items, r.stats())
    }

    #[test]
    fn comments_blanks_and_counts() {
        let (items, stats) = read(
            b"# head\n\n-3 -901 0.1 0 0 0\n  % x\n   \n-4 -901 0.2 0 0 0\n",
            false,
        );
        let lines: Vec<u64> = items.iter().map(|r| r.as_ref().unwrap().line).collect();
        assert_eq!(lines, vec![3, 6]);
        assert_eq!(
            stats,
            TraceStats {
                records: 2,
                bad_lines: 0,
                comment_or_blank: 4
            }
        );
    }

    #[test]
    fn tolerant_continues_after_bad_line() {
        let input = b"-3 -901 0.1 0 0 0\nfoo 1 2\n-4 -901 0.2 0 0 0\n";
        let (items, stats) = read(input, false);
        assert_eq!(items.len(), 3);
        let e = items[1].as_ref().unwrap_err();
        assert_eq!(
            (e.line, e.column, e.kind),
            (2, 1, TraceErrorKind::RecordType)
        );
        assert_eq!(e.text, "foo 1 2");
        assert_eq!(
            e.to_string(),
            "t.trf:2:1: expected an integer record type, found `foo`"
        );
        assert_eq!(items[2].as_ref().unwrap().line, 3);
        assert_eq!((stats.records, stats.bad_lines), (2, 1));
    }

    #[test]
    fn strict_stops_after_bad_line() {
        let input = b"-3 -901 0.1 0 0 0\nfoo 1 2\n-4 -901 0.2 0 0 0\n";
        let mut r = TraceReader::new(&input[..], "t".into(), ReadOptions { strict: true });
        assert!(r.next().unwrap().is_ok());
        assert!(r.next().unwrap().is_err());
        assert!(r.next().is_none());
        assert!(r.next().is_none());
        assert_eq!((r.stats().records, r.stats().bad_lines), (1, 1));
    }

    #[test]
    fn crlf_and_missing_final_newline() {
        let mut r = TraceReader::new(
            &b"-3 -901 0.1 0 0 0\r\n\r\n-4 -901 0.2 0 0 0"[..],
            "t".into(),
            ReadOptions::default(),
        );
        let recs: Vec<Record> = r.by_ref().map(Result::unwrap).collect();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].fields.len(), 4);
        assert_eq!(recs[1].line, 3);
        assert!(r.missing_final_newline());
        assert_eq!(r.stats().comment_or_blank, 1);
    }

    #[test]
    fn crlf_error_text_has_no_carriage_return() {
        let (items, _) = read(b"-3 x 1\r\n", false);
        let e = items[0].as_ref().unwrap_err();
        assert_eq!(e.text, "-3 x 1");
        assert_eq!(e.column, 4);
    }

    #[test]
    fn invalid_utf8_is_a_bad_line() {
        let (items, stats) = read(
            b"-5 1 0.1 0 0 1 \"caf\xe9\"\n# caf\xe9\n-4 1 0.2 0 0 0\n",
            false,
        );
        assert_eq!(items.len(), 2);
        let e = items[0].as_ref().unwrap_err();
        assert_eq!(
            (e.line, e.column, e.kind),
            (1, 20, TraceErrorKind::InvalidUtf8)
        );
        assert_eq!(e.message, "invalid UTF-8: unexpected byte 0xE9");
        assert_eq!(e.text, "-5 1 0.1 0 0 1 \"caf\u{fffd}\"");
        assert_eq!(stats.comment_or_blank, 1);
        assert_eq!(items[1].as_ref().unwrap().line, 3);
    }

    #[test]
    fn long_line_is_skipped_to_its_end() {
        let mut input = b"-3 1 0.1 ".to_vec();
        input.extend(std::iter::repeat_n(b'7', 100));
        input.extend_from_slice(b" 8\n-4 1 0.2 0 0 0\n");
        // A tiny buffer makes the long line span many refills.
        let reader = io::BufReader::with_capacity(16, Cursor::new(input));
        let mut r =
            TraceReader::new(reader, "t".into(), ReadOptions::default()).with_max_line_len(50);
        let e = r.next().unwrap().unwrap_err();
        assert_eq!(
            (e.line, e.column, e.kind),
            (1, 51, TraceErrorKind::LineTooLong)
        );
        assert_eq!(
            e.message,
            "line longer than 50 bytes; the rest of it is skipped"
        );
        assert_eq!(e.text.len(), 50);
        let rec = r.next().unwrap().unwrap();
        assert_eq!((rec.line, rec.rtype), (2, -4));
        assert!(r.next().is_none());
        assert!(!r.missing_final_newline());
    }

    #[test]
    fn line_at_the_limit_is_accepted() {
        let line = b"-3 1 0.25 0 0 0";
        let mut r = TraceReader::new(&line[..], "t".into(), ReadOptions::default())
            .with_max_line_len(line.len());
        assert!(r.next().unwrap().is_ok());
    }

    #[test]
    fn error_text_is_truncated() {
        let input = format!("-3 x {}\n", "é".repeat(300));
        let (items, _) = read(input.as_bytes(), false);
        let e = items[0].as_ref().unwrap_err();
        assert_eq!(e.text.chars().count(), TraceError::TEXT_LIMIT);
    }

    #[test]
    fn truncated_last_line() {
        // Cut inside a number: still a valid, shorter record.
        let (items, _) = read(
            b"-3 -901 0.1 0 0 0\n-101 -1 0.115758 0 0 4 \"%d%lf\" -22 0.00",
            false,
        );
        let last = items[1].as_ref().unwrap();
        assert_eq!(last.fields.last(), Some(&Value::Real(0.0)));
        // Cut inside the descriptor, or before the timestamp: a bad line.
        let (items, _) = read(b"-102 -1 0.1 0 0 5 \"%d", false);
        assert_eq!(
            items[0].as_ref().unwrap_err().kind,
            TraceErrorKind::UnterminatedString
        );
        let (items, _) = read(b"-3 -9", false);
        assert_eq!(
            items[0].as_ref().unwrap_err().kind,
            TraceErrorKind::MissingFields
        );
    }

    /// Lines that lie whole in the reader's buffer are parsed in place, the others gathered
    /// first: both ways give the same records, errors (place, message, text) and counts.
    #[test]
    fn lines_are_checked_for_utf8_buffer_by_buffer() {
        // ASCII lines, then lines with valid and invalid UTF-8, read through buffers of
        // several sizes: whether a buffer is all ASCII is known once for all its lines, and
        // a buffer that is not has each line checked.
        let mut input = Vec::new();
        for i in 0..60 {
            input.extend_from_slice(match i % 6 {
                0..=2 => b"-3 -901 0.5 1 2 3\n".as_slice(),
                3 => "-5 1 0.25 0 0 1 \"caf\u{e9} cr\u{e8}me\" 7\n".as_bytes(),
                4 => "-4 1 0.1 na\u{ef}ve\n".as_bytes(),
                _ => b"-4 1 0.1 caf\xe9\n".as_slice(),
            });
        }
        for capacity in [1 << 16, 64, 30, 7] {
            let reader = io::BufReader::with_capacity(capacity, Cursor::new(input.clone()));
            let items: Vec<_> = TraceReader::new(reader, "t".into(), ReadOptions::default())
                .map(|item| item.map_err(|e| (e.line, e.column, e.kind)))
                .collect();
            assert_eq!(items.len(), 60, "capacity {capacity}");
            for (i, item) in items.iter().enumerate() {
                match (i % 6, item) {
                    (0..=2, Ok(r)) => assert_eq!(r.fields.len(), 4),
                    (3, Ok(r)) => {
                        assert_eq!(r.fields[4], Value::Str("caf\u{e9} cr\u{e8}me".into()))
                    }
                    (4, Ok(r)) => assert_eq!(r.fields[1], Value::Str("na\u{ef}ve".into())),
                    (5, Err(e)) => assert_eq!(*e, (i as u64 + 1, 13, TraceErrorKind::InvalidUtf8)),
                    _ => panic!("line {} read as {item:?} (capacity {capacity})", i + 1),
                }
            }
        }
    }

    #[test]
    fn lines_in_place_and_gathered_read_alike() {
        let mut input = Vec::new();
        for i in 0..400 {
            let line: &[u8] = match i % 11 {
                0 => b"# a comment \xe9\n",
                1 => b"\n",
                2 => b"-3 -901 0.5 1 2 3\r\n",
                3 => b"-5 1 0.25 0 0 1 \"two words\" 7\n",
                4 => b"-3 x 1\n",
                5 => b"-4 1 0.1 caf\xe9\n",
                6 => b"-101 -1 0.115758 0 0 4 \"%d%lf\" -22 0.5 1e400\n",
                7 => b"   -2 -904 -0.000001 2 0 3 2 1 1 1   \n",
                8 => b"-3 1 0.1 77777777777777777777777777777777777777777777777777777777777\n",
                9 => b"-3 -785 12.000001 5 6\n",
                _ => b"-3\n",
            };
            input.extend_from_slice(line);
        }
        input.extend_from_slice(b"-4 -785 13 1 2");
        let read = |capacity: usize| {
            let reader = io::BufReader::with_capacity(capacity, Cursor::new(input.clone()));
            let mut r =
                TraceReader::new(reader, "t".into(), ReadOptions::default()).with_max_line_len(64);
            let mut spare = None;
            let mut items = Vec::new();
            while let Some(item) = r.next_reusing(spare.take()) {
                match item {
                    Ok(record) => {
                        items.push(Ok(record.clone()));
                        spare = Some(record);
                    }
                    Err(e) => items.push(Err(e)),
                }
            }
            (items, r.stats(), r.missing_final_newline())
        };
        // The same, each record parsed into the one before it.
        let read_into = |capacity: usize| {
            let reader = io::BufReader::with_capacity(capacity, Cursor::new(input.clone()));
            let mut r =
                TraceReader::new(reader, "t".into(), ReadOptions::default()).with_max_line_len(64);
            let mut record = Record::default();
            let mut items = Vec::new();
            while let Some(item) = r.next_into(&mut record) {
                items.push(item.map(|()| record.clone()));
            }
            (items, r.stats(), r.missing_final_newline())
        };
        // Every line fits a 64 KiB buffer; a 7-byte one holds none whole.
        let (in_place, gathered) = (read(1 << 16), read(7));
        assert_eq!(in_place, gathered);
        assert_eq!(read_into(1 << 16), in_place);
        assert_eq!(read_into(7), in_place);
        let (items, stats, cut) = in_place;
        assert_eq!(stats.records + stats.bad_lines, items.len() as u64);
        assert_eq!(
            (stats.records, stats.bad_lines, stats.comment_or_blank, cut),
            (147, 180, 74, true)
        );
        let errors: Vec<&TraceError> = items.iter().filter_map(|i| i.as_ref().err()).collect();
        assert_eq!(
            errors[0].to_string(),
            "t:5:4: expected an integer event type, found `x`"
        );
        assert_eq!(errors[1].kind, TraceErrorKind::InvalidUtf8);
        assert_eq!(errors[2].kind, TraceErrorKind::NonFinite);
        assert_eq!(errors[3].kind, TraceErrorKind::LineTooLong);
        assert_eq!(errors[4].kind, TraceErrorKind::MissingFields);
    }

    /// The reader knows, without looking again, whether the next line waits whole in its
    /// buffer: through the buffer's last newline, not beyond.
    #[test]
    fn whole_lines_waiting_in_the_buffer_are_known() {
        let input = &b"-3 1 0.1\n-3 1 0.2\n-3 1 0.3"[..];
        let mut r = TraceReader::new(input, "t".into(), ReadOptions::default());
        assert!(!r.whole_line_buffered(), "nothing read yet");
        assert!(r.next().unwrap().is_ok());
        assert!(r.whole_line_buffered(), "the second line waits");
        assert!(r.next().unwrap().is_ok());
        assert!(!r.whole_line_buffered(), "only part of a line is left");
        let last = r.next().unwrap().unwrap();
        assert_eq!(last.line, 3);
        assert!(!r.whole_line_buffered());
        assert!(r.next().is_none());
    }

    struct FailAfter<'a> {
        data: &'a [u8],
    }

    impl Read for FailAfter<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.data.is_empty() {
                return Err(io::Error::other("device gone"));
            }
            let n = self.data.read(out)?;
            Ok(n)
        }
    }

    #[test]
    fn io_error_ends_reading() {
        let src = io::BufReader::new(FailAfter {
            data: b"-3 1 0.1 0 0 0\n-4 1",
        });
        let mut r = TraceReader::new(src, "t".into(), ReadOptions::default());
        assert!(r.next().unwrap().is_ok());
        let e = r.next().unwrap().unwrap_err();
        assert_eq!((e.line, e.kind), (2, TraceErrorKind::Io));
        assert_eq!(e.to_string(), "t:2:1: read error: device gone");
        assert!(r.next().is_none());
    }
}
