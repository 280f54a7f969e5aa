//! PICL-compatible event traces: typed records, record- and event-type names, and a tolerant
//! streaming reader.
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

mod error;
mod parse;
mod reader;
mod record;

pub use error::{TraceError, TraceErrorKind};
pub use parse::{is_comment_or_blank, parse_line};
pub use reader::{ReadOptions, TraceReader, TraceStats, MAX_LINE_LEN};
pub use record::{Record, Value};
pub use voml_vocab::{event_type_code, event_type_name, record_type_code, record_type_name};
