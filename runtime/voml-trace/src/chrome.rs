//! The Chrome adapter: reads a trace in the Chrome Trace Event Format (JSON, as Chrome,
//! Perfetto's exporters and many tracers write it) and gives its slices, flows, counters,
//! async intervals and instants as PICL-layout records (see [`crate::layout`] and
//! `docs/formats.md`).
//!
//! The trace is streamed, never loaded whole: a small scanner finds each element of the
//! top-level array (the bare array form `[...]`, or the `traceEvents` array of the object
//! form `{"traceEvents": [...], ...}`), tracking strings, escapes and nesting, and hands that
//! element alone to serde_json. Memory stays flat whatever the size of the file: one element
//! (at most [`MAX_EVENT_LEN`] bytes), the reorder buffer ([`crate::REORDER_BOUND`] records),
//! the open slices and flows, and the names seen. As Chrome allows, the array may lack its
//! closing `]` (a trace cut when its writer stopped).
//!
//! Chrome writers flush each thread's buffer in turn, so events do not come in time order;
//! every record passes through the reorder buffer, which gives them out in time order as
//! long as no event comes more than its bound of records late.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use crate::error::{TraceError, TraceErrorKind};
use crate::layout::{self, Fill, States, ENTRY, EVENT, EXIT, MARK, RECEIVE, SEND, VALUE};
use crate::names::{Codes, Names};
use crate::outgoing::{self, Adapter, Outgoing};
use crate::reader::ReadOptions;
use crate::record::Record;
use crate::reorder::Tie;
use crate::AdapterStats;

/// Longest event accepted: a longer one is skipped (to its end) and reported.
pub const MAX_EVENT_LEN: usize = 16 << 20;

/// Most slices open on one thread, async intervals open under one id, and flows waiting for
/// their next step at once.
pub const MAX_OPEN: usize = 1 << 16;

/// A pid, tid or id: JSON numbers or strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Id {
    Num(i64),
    Text(String),
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
                Ok(Id::Num(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(i64::try_from(v).map_or_else(|_| Id::Text(v.to_string()), Id::Num))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Id, E> {
                Ok(Id::Text(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                Ok(Id::Text(v.to_owned()))
            }
            // `id2` is `{"local": ID}` or `{"global": ID}`: scoped ids, kept apart by scope.
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Id, A::Error> {
                let mut out = String::new();
                while let Some((k, v)) = map.next_entry::<String, Id>()? {
                    let v = match v {
                        Id::Num(n) => n.to_string(),
                        Id::Text(t) => t,
                    };
                    out.push_str(&format!("{k}:{v}"));
                }
                Ok(Id::Text(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// The fields of an event the adapter reads; the others (`args` too) are skipped unread.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(borrow)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cat: Option<Cow<'a, str>>,
    pid: Option<Id>,
    tid: Option<Id>,
    ts: Option<f64>,
    dur: Option<f64>,
    id: Option<Id>,
    id2: Option<Id>,
}

/// The `args` of a counter: its series and their values, in order (values that are not
/// numbers as `None`).
#[derive(Deserialize)]
struct Counter {
    #[serde(default)]
    args: Series,
}

#[derive(Default)]
struct Series(Vec<(String, Option<f64>)>);

impl<'de> Deserialize<'de> for Series {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Series, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Series;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of counter values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Series, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = map.next_value::<Number>()?;
                    if out.len() < 1024 {
                        out.push((key, value.0));
                    }
                }
                Ok(Series(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Any JSON value: its number, if it is one.
struct Number(Option<f64>);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Number, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Number, E> {
                Ok(Number(Some(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Number, E> {
                Ok(Number(Some(v)))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Number, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Number(None))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Number, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Number(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// Where the scanner is in the file's structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the first byte that matters.
    Start,
    /// Among the keys of the top-level object, looking for `traceEvents`.
    Keys,
    /// Among the elements of the events array.
    Events,
    /// Nothing more to read.
    Done,
}

/// A slice or async interval that is open: its state (name number and code), category and
/// processor.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// Its place among the intervals opened.
    begun: u64,
    name: u32,
    code: i64,
    cat: u32,
    processor: i64,
    process: i64,
}

/// The sending end of a flow, waiting for its next step.
#[derive(Debug, Clone, Copy)]
struct FlowEnd {
    time: f64,
    seq: u64,
    line: u64,
    processor: i64,
    process: i64,
    name: u32,
    cat: u32,
}

/// Reads a Chrome JSON trace as PICL-layout records; see the module documentation.
pub struct ChromeReader<R> {
    inner: R,
    source_name: String,
    phase: Phase,
    /// Line and column of the next byte.
    line: u64,
    column: usize,
    /// The element being read, and where it began.
    element: Vec<u8>,
    element_at: (u64, usize),
    /// Records and errors on their way out, and what is counted.
    out: Outgoing,
    processors: HashMap<(Option<Id>, Option<Id>), (i64, i64)>,
    slices: HashMap<i64, Vec<Open>>,
    asyncs: HashMap<(u32, Id), Vec<Open>>,
    flows: HashMap<(u32, Id), FlowEnd>,
    /// Flow finishes whose start has not come (yet), and how many.
    finishes: HashMap<(u32, Id), Vec<FlowEnd>>,
    finishes_waiting: usize,
    names: Names,
    states: States,
    value_keys: Codes,
    event_keys: Codes,
    messages: i64,
    /// Intervals opened so far.
    opened: u64,
    high: f64,
    seq: u64,
}

impl ChromeReader<BufReader<File>> {
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

/// Why a scan stopped early.
enum ScanError {
    Io(io::Error),
    /// The input ended inside a value.
    Cut,
}

impl From<io::Error> for ScanError {
    fn from(e: io::Error) -> Self {
        ScanError::Io(e)
    }
}

impl<R: BufRead> ChromeReader<R> {
    pub fn new(reader: R, source_name: String, options: ReadOptions) -> Self {
        ChromeReader {
            inner: reader,
            source_name,
            phase: Phase::Start,
            line: 1,
            column: 1,
            element: Vec::with_capacity(1024),
            element_at: (1, 1),
            out: Outgoing::new(options.strict),
            processors: HashMap::new(),
            slices: HashMap::new(),
            asyncs: HashMap::new(),
            flows: HashMap::new(),
            finishes: HashMap::new(),
            finishes_waiting: 0,
            names: Names::default(),
            states: States::starting_at(1),
            value_keys: Codes::starting_at(0),
            event_keys: Codes::starting_at(0),
            messages: 0,
            opened: 0,
            high: f64::NEG_INFINITY,
            seq: 0,
        }
    }

    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    pub fn stats(&self) -> AdapterStats {
        self.out.stats()
    }

    /// The reader records are read from.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The next record, like [`Iterator::next`], built in `reuse`'s storage when given.
    pub fn next_reusing(&mut self, reuse: Option<Record>) -> Option<Result<Record, TraceError>> {
        outgoing::next_reusing(self, reuse)
    }

    fn error(&mut self, line: u64, column: usize, kind: TraceErrorKind, message: String) {
        let text = String::from_utf8_lossy(
            &self.element[..self.element.len().min(4 * TraceError::TEXT_LIMIT)],
        )
        .into_owned();
        self.out.errors.push_back(TraceError::at(
            &self.source_name,
            line,
            column,
            kind,
            message,
            &text,
        ));
    }

    /// The next byte, without taking it; `None` at the end of the input.
    fn peek(&mut self) -> io::Result<Option<u8>> {
        loop {
            match self.inner.fill_buf() {
                Ok(b) => return Ok(b.first().copied()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Takes the byte `peek` gave.
    fn take(&mut self, b: u8) {
        self.inner.consume(1);
        if b == b'\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
    }

    /// Skips blanks; the next byte after them.
    fn skip_blanks(&mut self) -> io::Result<Option<u8>> {
        while let Some(b) = self.peek()? {
            // A byte-order mark may open the file.
            let bom = matches!(b, 0xef | 0xbb | 0xbf) && self.phase == Phase::Start;
            if matches!(b, b' ' | b'\t' | b'\r' | b'\n') || bom {
                self.take(b);
            } else {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }

    /// Reads the next element of the events array into `element`; false when there are no
    /// more.
    fn next_element(&mut self) -> Result<bool, ScanError> {
        loop {
            match self.phase {
                Phase::Done => return Ok(false),
                Phase::Start => match self.skip_blanks()? {
                    None => {
                        self.phase = Phase::Done;
                        return Ok(false);
                    }
                    Some(b'[') => {
                        self.take(b'[');
                        self.phase = Phase::Events;
                    }
                    Some(b'{') => {
                        self.take(b'{');
                        self.phase = Phase::Keys;
                    }
                    Some(_) => {
                        self.phase = Phase::Done;
                        self.element.clear();
                        let (line, column) = (self.line, self.column);
                        self.error(
                            line,
                            column,
                            TraceErrorKind::Syntax,
                            "a Chrome trace begins with `[` (an array of events) or `{` (an object with `traceEvents`)".to_owned(),
                        );
                        return Ok(false);
                    }
                },
                Phase::Keys => {
                    let b = self.skip_blanks()?;
                    match b {
                        Some(b',') => {
                            self.take(b',');
                            continue;
                        }
                        Some(b'}') | None => {
                            self.phase = Phase::Done;
                            self.element.clear();
                            let (line, column) = (self.line, self.column);
                            self.error(
                                line,
                                column,
                                TraceErrorKind::Syntax,
                                "the trace object has no `traceEvents` array".to_owned(),
                            );
                            return Ok(false);
                        }
                        Some(_) => {}
                    }
                    // A key, then its value.
                    self.element_at = (self.line, self.column);
                    self.scan_value(true)?;
                    let key = self.element.clone();
                    if self.skip_blanks()? == Some(b':') {
                        self.take(b':');
                    } else {
                        self.phase = Phase::Done;
                        let (line, column) = (self.line, self.column);
                        self.error(
                            line,
                            column,
                            TraceErrorKind::Syntax,
                            "expected `:` after a key of the trace object".to_owned(),
                        );
                        return Ok(false);
                    }
                    let value = self.skip_blanks()?;
                    if key == b"\"traceEvents\"" && value == Some(b'[') {
                        self.take(b'[');
                        self.phase = Phase::Events;
                    } else {
                        // Other keys' values (metadata, stack frames) are skipped unkept.
                        self.scan_value(false)?;
                    }
                }
                Phase::Events => match self.skip_blanks()? {
                    // The closing `]` may be missing: the trace was cut between events.
                    None => {
                        self.phase = Phase::Done;
                        return Ok(false);
                    }
                    Some(b',') => self.take(b','),
                    Some(b'}') => {
                        self.element.clear();
                        let (line, column) = (self.line, self.column);
                        self.take(b'}');
                        self.error(
                            line,
                            column,
                            TraceErrorKind::Syntax,
                            "unexpected `}` among the events".to_owned(),
                        );
                    }
                    Some(b']') => {
                        self.take(b']');
                        // What follows the array (the object's other keys) is not needed.
                        self.phase = Phase::Done;
                        return Ok(false);
                    }
                    Some(_) => {
                        self.element_at = (self.line, self.column);
                        self.scan_value(true)?;
                        return Ok(true);
                    }
                },
            }
        }
    }

    /// Reads one JSON value (an object, an array, a string, or a number or word up to the
    /// next `,`, `]`, `}` or blank) into `element` if `keep`, tracking strings, escapes and
    /// nesting without parsing it. At most [`MAX_EVENT_LEN`] bytes are kept: a longer value
    /// is read to its end and kept empty, and reported when parsed.
    fn scan_value(&mut self, keep: bool) -> Result<(), ScanError> {
        self.element.clear();
        let mut depth = 0u32;
        let mut in_string = false;
        let mut escape = false;
        let mut started = false;
        let mut overflow = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ScanError::Io(e)),
            };
            if chunk.is_empty() {
                // A word at the very end (`1` in `[1`) ends with the input.
                return if started && depth == 0 && !in_string {
                    Ok(())
                } else {
                    Err(ScanError::Cut)
                };
            }
            let mut end = None;
            let mut i = 0;
            while i < chunk.len() {
                let b = chunk[i];
                if in_string {
                    if escape {
                        escape = false;
                    } else if b == b'\\' {
                        escape = true;
                    } else if b == b'"' {
                        in_string = false;
                        if depth == 0 {
                            end = Some(i + 1);
                            break;
                        }
                    }
                } else {
                    match b {
                        b'"' => in_string = true,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            if depth == 0 {
                                // The end of the enclosing array or object: not ours.
                                end = Some(i);
                                break;
                            }
                            depth -= 1;
                            if depth == 0 {
                                end = Some(i + 1);
                                break;
                            }
                        }
                        b',' | b' ' | b'\t' | b'\r' | b'\n' if depth == 0 && started => {
                            end = Some(i);
                            break;
                        }
                        _ => {}
                    }
                }
                started = true;
                i += 1;
            }
            let used = end.unwrap_or(chunk.len());
            if keep && !overflow {
                if self.element.len() + used > MAX_EVENT_LEN {
                    overflow = true;
                    self.element.clear();
                } else {
                    self.element.extend_from_slice(&chunk[..used]);
                }
            }
            // Lines and columns of what was taken.
            let taken = &chunk[..used];
            match taken.iter().rposition(|&b| b == b'\n') {
                Some(last) => {
                    self.line += taken.iter().filter(|&&b| b == b'\n').count() as u64;
                    self.column = used - last;
                }
                None => self.column += used,
            }
            self.inner.consume(used);
            if end.is_some() {
                if overflow {
                    // Marks the value as too long for `event`.
                    self.element.clear();
                    self.element.push(0);
                }
                return Ok(());
            }
        }
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Turns the element just read into records.
    fn event(&mut self) {
        let (line, column) = self.element_at;
        if self.element == [0] {
            self.error(
                line,
                column,
                TraceErrorKind::LineTooLong,
                format!("event longer than {MAX_EVENT_LEN} bytes; it is skipped"),
            );
            return;
        }
        let element = std::mem::take(&mut self.element);
        if let Err((kind, message, at)) = self.act(&element, line) {
            self.element = element;
            let (line, column) = at.unwrap_or((line, column));
            self.error(line, column, kind, message);
        } else {
            self.element = element;
        }
    }

    /// The records of one event (the JSON text of `element`, which begins on `line`).
    #[allow(clippy::type_complexity)]
    fn act(
        &mut self,
        element: &[u8],
        line: u64,
    ) -> Result<(), (TraceErrorKind, String, Option<(u64, usize)>)> {
        let e: Event = serde_json::from_slice(element).map_err(|err| self.json_error(&err))?;
        let Some(ph) = e.ph.as_deref() else {
            return Err((
                TraceErrorKind::Syntax,
                "an event without its phase (`ph`)".to_owned(),
                None,
            ));
        };
        let ph = ph.to_owned();
        // Times in microseconds: divided by a million once, at the end, so that seconds are
        // correctly rounded.
        let needs_ts = |e: &Event| -> Result<f64, (TraceErrorKind, String, Option<(u64, usize)>)> {
            match e.ts {
                Some(ts) if ts.is_finite() => Ok(ts),
                _ => Err((
                    TraceErrorKind::Syntax,
                    format!("a `{ph}` event without its time (`ts`, in microseconds)"),
                    None,
                )),
            }
        };
        let name = e.name.as_deref().unwrap_or("");
        let cat = e.cat.as_deref().unwrap_or("");
        match ph.as_str() {
            "B" | "E" | "X" => {
                let micros = needs_ts(&e)?;
                let time = micros / 1e6;
                let (processor, process) = self.processor(&e);
                self.high = self.high.max(time);
                match ph.as_str() {
                    "B" => {
                        let stack_len = self.slices.get(&processor).map_or(0, Vec::len);
                        if stack_len >= MAX_OPEN {
                            return Err((
                                TraceErrorKind::Limit,
                                format!("more than {MAX_OPEN} slices open on one thread; this one is left out"),
                                None,
                            ));
                        }
                        let open = self.opening(name, cat, processor, process);
                        self.slices.entry(processor).or_default().push(open);
                        self.state(ENTRY, open, time, line, Tie::Input(0));
                    }
                    "E" => {
                        let Some(open) = self.slices.get_mut(&processor).and_then(Vec::pop) else {
                            self.out.stats.unmatched += 1;
                            return Err((
                                TraceErrorKind::Unmatched,
                                "an `E` event with no slice open (`B`) on its thread".to_owned(),
                                None,
                            ));
                        };
                        self.state(EXIT, open, time, line, Tie::Input(0));
                    }
                    _ => {
                        let dur = match e.dur {
                            Some(d) if d.is_finite() && d >= 0.0 => d,
                            _ => {
                                return Err((
                                    TraceErrorKind::Syntax,
                                    "an `X` event without its duration (`dur`, in microseconds, not negative)".to_owned(),
                                    None,
                                ))
                            }
                        };
                        let end = (micros + dur) / 1e6;
                        if !end.is_finite() {
                            return Err((
                                TraceErrorKind::Syntax,
                                "an `X` event that ends beyond the largest time".to_owned(),
                                None,
                            ));
                        }
                        let open = self.opening(name, cat, processor, process);
                        let seq = self.state(ENTRY, open, time, line, Tie::Input(0));
                        // Ends come before beginnings of the same time, the end of what began
                        // last first; an end at its own beginning comes right after it.
                        let tie = if dur > 0.0 {
                            Tie::End(std::cmp::Reverse(seq))
                        } else {
                            Tie::Input(0)
                        };
                        self.state(EXIT, open, end, line, tie);
                    }
                }
            }
            "b" | "e" | "S" | "F" => {
                let time = needs_ts(&e)? / 1e6;
                let Some(id) = e.id2.clone().or_else(|| e.id.clone()) else {
                    return Err((
                        TraceErrorKind::Syntax,
                        format!("an async `{ph}` event without its `id`"),
                        None,
                    ));
                };
                self.high = self.high.max(time);
                let key = (self.names.id(cat), id);
                if ph == "b" || ph == "S" {
                    let (processor, process) = self.processor(&e);
                    let open = self.opening(name, cat, processor, process);
                    let stack = self.asyncs.entry(key).or_default();
                    if stack.len() >= MAX_OPEN {
                        return Err((
                            TraceErrorKind::Limit,
                            format!("more than {MAX_OPEN} async intervals open under one id; this one is left out"),
                            None,
                        ));
                    }
                    stack.push(open);
                    self.state(ENTRY, open, time, line, Tie::Input(0));
                } else {
                    let name_id = (!name.is_empty()).then(|| self.states.state(name).0);
                    let found = self.asyncs.get_mut(&key).and_then(|stack| {
                        let at = match name_id {
                            Some(n) => stack.iter().rposition(|o| o.name == n),
                            None => stack.len().checked_sub(1),
                        }?;
                        Some(stack.remove(at))
                    });
                    if self.asyncs.get(&key).is_some_and(Vec::is_empty) {
                        self.asyncs.remove(&key);
                    }
                    let Some(open) = found else {
                        self.out.stats.unmatched += 1;
                        return Err((
                            TraceErrorKind::Unmatched,
                            format!("an async `{ph}` event whose beginning never came (no `b` or `S` with its category, id and name)"),
                            None,
                        ));
                    };
                    self.state(EXIT, open, time, line, Tie::Input(0));
                }
            }
            "s" | "t" | "f" => {
                let time = needs_ts(&e)? / 1e6;
                let Some(id) = e.id2.clone().or_else(|| e.id.clone()) else {
                    return Err((
                        TraceErrorKind::Syntax,
                        format!("a flow `{ph}` event without its `id`"),
                        None,
                    ));
                };
                self.high = self.high.max(time);
                let (processor, process) = self.processor(&e);
                let key = (self.names.id(cat), id);
                // Six places among records of this time: the entry and exit of the message
                // that ends here, then of the one that leaves (a step does both), then room
                // for the receive of a finish written before this start (see `message`).
                let seq = self.next_seq();
                self.seq += 5;
                let here = FlowEnd {
                    time,
                    seq,
                    line,
                    processor,
                    process,
                    name: self.names.id(name),
                    cat: key.0,
                };
                if self.flows.len() + self.finishes_waiting >= MAX_OPEN {
                    return Err((
                        TraceErrorKind::Limit,
                        format!("more than {MAX_OPEN} flow events wait for their other end; this one is left out"),
                        None,
                    ));
                }
                match ph.as_str() {
                    "s" => match self.take_finish(&key, time) {
                        // Its finish came first: the finishing thread's events were written
                        // before the starting thread's, as Chrome flushes thread by thread.
                        Some(to) => self.message(&here, &to),
                        None => {
                            if self.flows.insert(key, here).is_some() {
                                // A flow that began again before its end: the first never ends.
                                self.out.stats.unmatched += 1;
                            }
                        }
                    },
                    "t" => {
                        if let Some(from) = self.flows.remove(&key) {
                            self.message(&from, &here);
                        }
                        self.flows.insert(key, here);
                    }
                    _ => match self.flows.get(&key) {
                        Some(from) if from.time <= time => {
                            let from = *from;
                            self.flows.remove(&key);
                            self.message(&from, &here);
                        }
                        // Its start may come later in the file.
                        _ => {
                            self.finishes.entry(key).or_default().push(here);
                            self.finishes_waiting += 1;
                        }
                    },
                }
            }
            "C" => {
                let time = needs_ts(&e)? / 1e6;
                let counter: Counter =
                    serde_json::from_slice(element).map_err(|err| self.json_error(&err))?;
                let (processor, process) = self.processor(&e);
                self.high = self.high.max(time);
                for (series, value) in &counter.args.0 {
                    let Some(value) = value.filter(|v| v.is_finite()) else {
                        self.out.stats.ignored += 1;
                        continue;
                    };
                    let key = self.value_keys.code(&format!("{name}\u{1f}{series}"));
                    let mut r = layout::blank(&mut self.out.spare);
                    Fill::start(&mut r, line, MARK, VALUE, time, processor, process)
                        .real(value)
                        .int(key)
                        .int(-1)
                        .str(name)
                        .str(series)
                        .done();
                    let seq = self.next_seq();
                    self.out.reorder.push(time, Tie::Input(seq), r);
                }
            }
            "i" | "I" | "n" | "R" => {
                let time = needs_ts(&e)? / 1e6;
                let (processor, process) = self.processor(&e);
                self.high = self.high.max(time);
                let key = self.event_keys.code(name);
                let mut r = layout::blank(&mut self.out.spare);
                Fill::start(&mut r, line, MARK, EVENT, time, processor, process)
                    .int(0)
                    .int(key)
                    .int(-1)
                    .str(name)
                    .str(cat)
                    .done();
                let seq = self.next_seq();
                self.out.reorder.push(time, Tie::Input(seq), r);
            }
            // Metadata, objects, samples, clock syncs, memory dumps, contexts, async steps:
            // nothing a record stands for.
            _ => self.out.stats.ignored += 1,
        }
        Ok(())
    }

    /// Where a serde_json error on the current element lies in the file.
    fn json_error(
        &self,
        err: &serde_json::Error,
    ) -> (TraceErrorKind, String, Option<(u64, usize)>) {
        let (line, column) = self.element_at;
        let at = if err.line() <= 1 {
            (line, column + err.column().saturating_sub(1))
        } else {
            (line + err.line() as u64 - 1, err.column().max(1))
        };
        // serde_json's message ends with its own place in the element; ours replaces it.
        let text = err.to_string();
        let message = match text.rfind(" at line ") {
            Some(cut) => text[..cut].to_owned(),
            None => text,
        };
        (
            TraceErrorKind::Syntax,
            format!("bad event: {message}"),
            Some(at),
        )
    }

    /// The processor of an event's thread, numbered as threads first come, and its process
    /// (the pid when it is a number, else -1).
    fn processor(&mut self, e: &Event) -> (i64, i64) {
        let key = (e.pid.clone(), e.tid.clone());
        let next = self.processors.len() as i64;
        *self.processors.entry(key).or_insert_with(|| {
            let process = match &e.pid {
                Some(Id::Num(p)) => *p,
                _ => -1,
            };
            (next, process)
        })
    }

    fn opening(&mut self, name: &str, cat: &str, processor: i64, process: i64) -> Open {
        self.opened += 1;
        let (name, code) = self.states.state(name);
        Open {
            begun: self.opened,
            name,
            code,
            cat: self.names.id(cat),
            processor,
            process,
        }
    }

    /// An entry or exit record of `open` at `time`; with `Tie::Input`, in input order (its
    /// place is given here); returns that place.
    fn state(&mut self, rtype: i64, open: Open, time: f64, line: u64, tie: Tie) -> u64 {
        let seq = self.next_seq();
        let tie = match tie {
            Tie::Input(_) => Tie::Input(seq),
            end => end,
        };
        let mut r = layout::blank(&mut self.out.spare);
        Fill::start(
            &mut r,
            line,
            rtype,
            open.code,
            time,
            open.processor,
            open.process,
        )
        .int(0)
        .int(-1)
        .int(-1)
        .str(self.states.name(open.name))
        .str(self.names.get(open.cat))
        .done();
        self.out.reorder.push(time, tie, r);
        seq
    }

    /// Of the finishes waiting under `key`, the earliest at or after `time`.
    fn take_finish(&mut self, key: &(u32, Id), time: f64) -> Option<FlowEnd> {
        let waiting = self.finishes.get_mut(key)?;
        let at = waiting
            .iter()
            .enumerate()
            .filter(|(_, f)| f.time >= time)
            .min_by(|a, b| a.1.time.total_cmp(&b.1.time))
            .map(|(i, _)| i)?;
        let found = waiting.remove(at);
        if waiting.is_empty() {
            self.finishes.remove(key);
        }
        self.finishes_waiting -= 1;
        Some(found)
    }

    /// The four records of a message from one flow step to the next.
    fn message(&mut self, from: &FlowEnd, to: &FlowEnd) {
        let tag = self.messages;
        self.messages += 1;
        // The receive after the send, even when its finish was written first.
        let receive_at = if to.seq > from.seq {
            to.seq
        } else {
            from.seq + 4
        };
        for (side, etype, partner, seq) in [
            (from, SEND, to.processor, from.seq + 2),
            (to, RECEIVE, from.processor, receive_at),
        ] {
            for (rtype, seq) in [(ENTRY, seq), (EXIT, seq + 1)] {
                let mut r = layout::blank(&mut self.out.spare);
                Fill::start(
                    &mut r,
                    side.line,
                    rtype,
                    etype,
                    side.time,
                    side.processor,
                    side.process,
                )
                .int(0)
                .int(tag)
                .int(partner)
                .str(self.names.get(from.name))
                .str(self.names.get(from.cat))
                .done();
                self.out.reorder.push(side.time, Tie::Input(seq), r);
            }
        }
    }

    /// At the end of the input: slices and async intervals still open end at the latest
    /// time; flows still waiting never end (nor finishes whose start never came begin).
    fn close_open(&mut self) {
        let time = self.high;
        let line = self.line;
        let mut open: Vec<Open> = self
            .slices
            .drain()
            .flat_map(|(_, s)| s.into_iter().rev())
            .collect();
        open.extend(self.asyncs.drain().flat_map(|(_, s)| s.into_iter().rev()));
        // Hash order is not the input's: ends in a fixed order (by processor, the last begun
        // first), so that runs are the same.
        open.sort_by_key(|o| (o.processor, std::cmp::Reverse(o.begun)));
        for o in open {
            self.state(EXIT, o, time, line, Tie::Input(0));
        }
        self.out.stats.unmatched += (self.flows.len() + self.finishes_waiting) as u64;
        self.flows.clear();
        self.finishes.clear();
        self.finishes_waiting = 0;
    }
}

impl<R: BufRead> Iterator for ChromeReader<R> {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_reusing(None)
    }
}

impl<R: BufRead> Adapter for ChromeReader<R> {
    fn outgoing(&mut self) -> &mut Outgoing {
        &mut self.out
    }

    /// Chrome traces are not in time order: records go out only when the buffer is full,
    /// or at the end.
    fn due(&mut self) -> (f64, Tie) {
        (f64::NEG_INFINITY, Tie::Input(0))
    }

    fn read_more(&mut self) {
        match self.next_element() {
            Ok(true) => self.event(),
            Ok(false) => self.out.ended = true,
            Err(ScanError::Io(e)) => {
                self.out.ended = true;
                self.phase = Phase::Done;
                let (line, column) = (self.line, self.column);
                self.error(line, column, TraceErrorKind::Io, format!("read error: {e}"));
            }
            Err(ScanError::Cut) => {
                self.out.ended = true;
                self.phase = Phase::Done;
                let (line, column) = self.element_at;
                self.error(
                    line,
                    column,
                    TraceErrorKind::Syntax,
                    "the input ends inside this event".to_owned(),
                );
            }
        }
    }

    fn finish(&mut self) {
        self.close_open();
    }
}
