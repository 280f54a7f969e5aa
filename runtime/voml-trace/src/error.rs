//! Errors of trace reading: which line was bad, where, and why.

use std::fmt;

/// How a line failed; lets callers react without matching on message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TraceErrorKind {
    /// The first token is not an integer.
    RecordType,
    /// The second token is not an integer.
    EventType,
    /// Fewer than three tokens (record type, event type, timestamp).
    MissingFields,
    /// The timestamp (the third token) is not a number.
    Timestamp,
    /// A number too large for a 64-bit float (`1e309`): it would be read as infinity.
    NonFinite,
    /// A `"` with no closing `"` on the same line.
    UnterminatedString,
    /// The line is not valid UTF-8.
    InvalidUtf8,
    /// The line exceeds the reader's length limit; the rest of it was skipped.
    LineTooLong,
    /// The input ended in the middle of a line, where that means the line was cut (a
    /// producer that disconnected mid-line); see [`crate::TraceReader::cut_last_line_is_bad`].
    CutLine,
    /// The underlying reader failed; reading stops.
    Io,
    /// A record of another format ([`crate::Format`]) is not in that format's syntax: JSON
    /// that does not parse, a line with too few or too many fields, a number that is not one.
    Syntax,
    /// A record names something its trace never defined: a Pajé event, type or container, a
    /// Chrome event phase the reader does not know.
    Undefined,
    /// An end without its beginning (a Chrome `E` with no open slice, a Pajé `PopState` with
    /// no state pushed), or a beginning whose end never came (a Pajé link).
    Unmatched,
    /// A file the trace needs beside it (a Paraver `.pcf`) is missing or has bad lines.
    Companion,
    /// One of the adapters' bounds (open flows, nesting, reordering) was reached; what it
    /// could not keep is reported here and left out.
    Limit,
}

/// A line that could not be read as a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// The name the reader was given for its input (a file name, `-` for stdin, …).
    pub source_name: String,
    /// 1-based line number.
    pub line: u64,
    /// 1-based byte column of the offending token (just past the last token when one is
    /// missing).
    pub column: usize,
    pub kind: TraceErrorKind,
    /// What was expected and what was found.
    pub message: String,
    /// The line, without its line terminator, truncated to [`TraceError::TEXT_LIMIT`] chars.
    pub text: String,
}

impl TraceError {
    pub const TEXT_LIMIT: usize = 200;
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.source_name, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for TraceError {}

/// A parse failure before it is placed in a source; the reader adds name, line and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineError {
    pub column: usize,
    pub kind: TraceErrorKind,
    pub message: String,
}

/// `text` cut to at most `limit` chars, so huge lines do not flood diagnostics.
pub(crate) fn excerpt(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text.to_owned(),
    }
}

impl TraceError {
    /// An error at `line`:`column` of `source_name`, with the line's text cut to
    /// [`TraceError::TEXT_LIMIT`].
    pub(crate) fn at(
        source_name: &str,
        line: u64,
        column: usize,
        kind: TraceErrorKind,
        message: String,
        text: &str,
    ) -> TraceError {
        TraceError {
            source_name: source_name.to_owned(),
            line,
            column,
            kind,
            message,
            text: excerpt(text.trim_end_matches('\r'), TraceError::TEXT_LIMIT),
        }
    }
}
