//! PICL-compatible event traces: typed records, record- and event-type names, a tolerant
//! streaming reader, and adapters that read traces of other formats (Pajé, Chrome JSON,
//! Paraver, OTF2) as records in the same layout.
//!
//! A trace holds one record per line, in the PICL "new" layout:
//!
//! ```text
//! record_type event_type timestamp processor process ndata [descriptor data...]
//! -3 -27 0.000068 0 0 3 2 400 100 7
//! -101 -1 0.115758 0 0 4 "%d%lf" -22 0.000060 -27 0.000330
//! ```
//!
//! Only the two type codes are interpreted; everything after them is kept, in order, as typed
//! [`Value`]s, so that layouts other than PICL's (`ndata` 0 followed by a descriptor, statistics
//! records counting pairs, extension records such as the VOML paper's node profile) read without
//! loss. Lines that are blank or start with `#` or `%` are comments.
//!
//! ```
//! use voml_trace::{ReadOptions, TraceReader, Value};
//!
//! let input = "# two records\n-3 -901 -0.000001 2 0 0\n-4 -901 11.58 2 0 0\n";
//! let reader = TraceReader::new(input.as_bytes(), "demo".into(), ReadOptions::default());
//! let records: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
//! assert_eq!(records[0].get(2), Some(&Value::Real(-0.000001)));
//! assert_eq!(voml_trace::record_type_code("pg-exit"), Some(records[1].rtype));
//! ```
//!
//! [`FormatReader`] reads any of the formats ([`Format`]), told by the first bytes of the
//! input ([`detect`]) or forced; each adapter ([`PajeReader`], [`ChromeReader`],
//! [`ParaverReader`], [`Otf2Reader`], which reads what the OTF2 tools' `otf2-print` prints)
//! gives its format's constructs as records in the layout of
//! [`layout`], which `docs/formats.md` maps out per format. Like the PICL reader, they read
//! one record at a time (`next_reusing`), report bad records with their place and go on,
//! and never panic.

pub mod chrome;
mod error;
mod format;
mod interest;
pub mod layout;
mod lines;
mod names;
pub mod otf2;
mod outgoing;
pub mod paje;
pub mod paraver;
mod parse;
mod reader;
mod record;
mod reorder;

pub use chrome::ChromeReader;
pub use error::{TraceError, TraceErrorKind};
pub use format::{detect, sniff, Format, FormatReader, RecordSource, Sniffed, SNIFF_LIMIT};
pub use interest::Interest;
pub use otf2::Otf2Reader;
pub use paje::PajeReader;
pub use paraver::{ParaverReader, Pcf};
pub use parse::{is_comment_or_blank, parse_line};
pub use reader::{ReadOptions, TraceReader, TraceStats, MAX_LINE_LEN};
pub use record::{Record, Value};
pub use reorder::REORDER_BOUND;
pub use voml_vocab::{event_type_code, event_type_name, record_type_code, record_type_name};

/// What a format adapter has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AdapterStats {
    /// Records given out.
    pub records: u64,
    /// Errors given out (bad records, and ends that never met their other end).
    pub bad: u64,
    /// Constructs of the input read but not given as records (definitions, metadata, phases
    /// without a mapping).
    pub ignored: u64,
    /// Ends whose beginning never came, or beginnings whose end never came.
    pub unmatched: u64,
    /// Records given out after a later one: the input was more out of order than the
    /// reorder buffer holds.
    pub late: u64,
}
