//! The Paraver adapter: reads a Paraver trace (`.prv`, as Extrae writes it) with the names of
//! its states and events from the `.pcf` beside it, and gives its states, events and
//! communications as PICL-layout records (see [`crate::layout`] and `docs/formats.md`).
//!
//! A `.prv` opens with a header naming its time unit and its applications, tasks and threads
//! (`#Paraver (date):FTIME_ns:NODES(CPUS):NAPPL:NTASKS(NTHREADS:NODE,...)`); then one record a
//! line, fields separated by `:`:
//!
//! ```text
//! 1:cpu:appl:task:thread:begin:end:state                      a state
//! 2:cpu:appl:task:thread:time:type:value[:type:value...]      events
//! 3:cpu:appl:task:thread:lsend:psend:cpu:appl:task:thread:lrecv:precv:size:tag
//! ```
//!
//! Threads become processors numbered in the header's order (application, task, thread);
//! the task is the process. Records come in time order; the ends of states and the receives
//! of messages, which lie ahead, wait in the reorder buffer until the input passes them.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use crate::error::{TraceError, TraceErrorKind};
use crate::layout::{self, Fill, ENTRY, EXIT, MARK, RECEIVE, SEND};
use crate::lines::{read_line, text_of};
use crate::outgoing::{self, Adapter, Outgoing};
use crate::parse::parse_int;
use crate::reader::{ReadOptions, MAX_LINE_LEN};
use crate::record::Record;
use crate::reorder::Tie;
use crate::AdapterStats;

/// Most threads a header may declare.
const MAX_THREADS: u64 = 1 << 20;

/// The names a `.pcf` gives states, event types and event values.
#[derive(Debug, Clone, Default)]
pub struct Pcf {
    pub states: HashMap<i64, String>,
    pub event_types: HashMap<i64, String>,
    pub event_values: HashMap<i64, HashMap<i64, String>>,
}

/// A line of a `.pcf` that could not be read: its line and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcfProblem {
    pub line: u64,
    pub message: String,
    pub text: String,
}

impl Pcf {
    /// Reads the `STATES`, `EVENT_TYPE` and `VALUES` sections of a `.pcf`; the other
    /// sections (options, colours) are skipped. Lines of those sections that are not
    /// `NUMBER NAME` (or `GRADIENT TYPE NAME` for event types) are reported and skipped.
    pub fn parse(text: &str) -> (Pcf, Vec<PcfProblem>) {
        #[derive(PartialEq)]
        enum Section {
            None,
            States,
            Types,
            Values,
        }
        let mut pcf = Pcf::default();
        let mut problems = Vec::new();
        let mut section = Section::None;
        // The event types of the current EVENT_TYPE block, which its VALUES name.
        let mut current: Vec<i64> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() {
                if section != Section::Types {
                    section = Section::None;
                }
                continue;
            }
            match trimmed {
                "STATES" => {
                    section = Section::States;
                    continue;
                }
                "EVENT_TYPE" => {
                    section = Section::Types;
                    current.clear();
                    continue;
                }
                "VALUES" => {
                    section = Section::Values;
                    continue;
                }
                _ => {}
            }
            if trimmed.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
                // Another section (DEFAULT_OPTIONS, STATES_COLOR, ...).
                section = Section::None;
                continue;
            }
            let mut words = trimmed.splitn(2, char::is_whitespace);
            let first = words.next().unwrap_or("");
            let rest = words.next().unwrap_or("").trim();
            let number = first.parse::<i64>().ok();
            let problem = |what: &str| PcfProblem {
                line: i as u64 + 1,
                message: format!("expected {what}"),
                text: line.to_owned(),
            };
            match section {
                Section::None => {}
                Section::States | Section::Values => match number {
                    Some(n) if !rest.is_empty() => {
                        if section == Section::States {
                            pcf.states.insert(n, rest.to_owned());
                        } else {
                            for t in &current {
                                pcf.event_values
                                    .entry(*t)
                                    .or_default()
                                    .insert(n, rest.to_owned());
                            }
                        }
                    }
                    _ => problems.push(problem("a number and a name")),
                },
                Section::Types => {
                    let mut words = rest.splitn(2, char::is_whitespace);
                    let ty = words.next().and_then(|w| w.parse::<i64>().ok());
                    let name = words.next().unwrap_or("").trim();
                    match (number, ty) {
                        (Some(_), Some(ty)) if !name.is_empty() => {
                            pcf.event_types.insert(ty, name.to_owned());
                            current.push(ty);
                        }
                        _ => problems.push(problem("a gradient, an event type and a name")),
                    }
                }
            }
        }
        (pcf, problems)
    }
}

/// Reads a Paraver trace as PICL-layout records; see the module documentation.
pub struct ParaverReader<R> {
    inner: R,
    source_name: String,
    buf: Vec<u8>,
    line_no: u64,
    /// Records and errors on their way out, and what is counted.
    out: Outgoing,
    header_seen: bool,
    /// Units of the trace's times per second.
    per_second: f64,
    /// Processor and process of each (application, task, thread).
    threads: HashMap<(u64, u64, u64), (i64, i64)>,
    /// Tasks numbered so far (the next process number for a task not in the header).
    tasks: HashMap<(u64, u64), i64>,
    pcf: Pcf,
    /// A time no later record of the input comes before.
    high: f64,
    seq: u64,
    fields: Vec<(usize, std::ops::Range<usize>)>,
}

impl ParaverReader<BufReader<File>> {
    /// Opens a `.prv`, with the names of the `.pcf` of the same name beside it; a missing or
    /// bad `.pcf` is reported (as the first errors) and the trace read without its names.
    pub fn open(path: impl AsRef<Path>, options: ReadOptions) -> io::Result<Self> {
        let path = path.as_ref();
        let file = File::open(path)?;
        let mut reader = Self::new(
            BufReader::with_capacity(64 * 1024, file),
            path.display().to_string(),
            options,
        );
        reader.load_pcf(path);
        Ok(reader)
    }
}

impl<R: BufRead> ParaverReader<R> {
    /// A reader without names (see [`ParaverReader::with_pcf`], [`ParaverReader::load_pcf`]).
    pub fn new(reader: R, source_name: String, options: ReadOptions) -> Self {
        ParaverReader {
            inner: reader,
            source_name,
            buf: Vec::with_capacity(256),
            line_no: 0,
            out: Outgoing::new(options.strict),
            header_seen: false,
            per_second: 1e6,
            threads: HashMap::new(),
            tasks: HashMap::new(),
            pcf: Pcf::default(),
            high: f64::NEG_INFINITY,
            seq: 0,
            fields: Vec::with_capacity(16),
        }
    }

    /// Names states and events as `pcf` does.
    pub fn with_pcf(mut self, pcf: Pcf) -> Self {
        self.pcf = pcf;
        self
    }

    /// Reads the names from the `.pcf` beside `prv` (the same name, extension `pcf`);
    /// reports it as the first errors if it is missing or has bad lines.
    pub fn load_pcf(&mut self, prv: &Path) {
        let pcf = prv.with_extension("pcf");
        let name = pcf.display().to_string();
        match std::fs::read(&pcf) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let (parsed, problems) = Pcf::parse(&text);
                self.pcf = parsed;
                for p in problems {
                    self.out.errors.push_back(TraceError::at(
                        &name,
                        p.line,
                        1,
                        TraceErrorKind::Companion,
                        format!("{} in this section of the .pcf; the line is skipped", p.message),
                        &p.text,
                    ));
                }
            }
            Err(e) => self.out.errors.push_back(TraceError::at(
                &self.source_name,
                1,
                1,
                TraceErrorKind::Companion,
                format!("cannot read the names of this trace's states and events from `{name}` ({e}); it is read without them"),
                "",
            )),
        }
    }

    /// Reports that the trace comes without its `.pcf` (from a stream, not a file): it is
    /// read without names.
    pub fn no_pcf(&mut self) {
        self.out.errors.push_back(TraceError::at(
            &self.source_name,
            1,
            1,
            TraceErrorKind::Companion,
            "a Paraver trace read from a stream has no `.pcf` beside it; it is read without the names of its states and events".to_owned(),
            "",
        ));
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

    fn read_one(&mut self) {
        let raw = match read_line(&mut self.inner, &mut self.buf, MAX_LINE_LEN) {
            Ok(Some(raw)) => raw,
            Ok(None) => {
                self.out.ended = true;
                return;
            }
            Err(e) => {
                self.out.ended = true;
                let line = self.line_no + 1;
                self.error(line, 1, TraceErrorKind::Io, format!("read error: {e}"), "");
                return;
            }
        };
        self.line_no += 1;
        let buf = std::mem::take(&mut self.buf);
        match text_of(&buf, &raw, MAX_LINE_LEN) {
            Ok(text) => {
                if let Err((column, kind, message)) = self.line(text) {
                    self.error(self.line_no, column, kind, message, text);
                }
            }
            Err(e) => {
                let text = String::from_utf8_lossy(&buf).into_owned();
                self.error(self.line_no, e.column, e.kind, e.message, &text);
            }
        }
        self.buf = buf;
    }

    fn error(
        &mut self,
        line: u64,
        column: usize,
        kind: TraceErrorKind,
        message: String,
        text: &str,
    ) {
        self.out.errors.push_back(TraceError::at(
            &self.source_name,
            line,
            column,
            kind,
            message,
            text,
        ));
    }

    fn line(&mut self, text: &str) -> Result<(), (usize, TraceErrorKind, String)> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(());
        }
        if !self.header_seen {
            self.header_seen = true;
            if trimmed.starts_with("#Paraver") {
                return self.header(text);
            }
            self.error(
                self.line_no,
                1,
                TraceErrorKind::Syntax,
                "expected the `#Paraver` header: times are taken as microseconds and threads numbered as they come".to_owned(),
                text,
            );
        }
        if trimmed.starts_with('#') {
            return Ok(());
        }
        let mut fields = std::mem::take(&mut self.fields);
        split_fields(text, &mut fields);
        let done = self.record(text, &fields);
        self.fields = fields;
        done
    }

    /// Reads the time unit and the applications' tasks and threads from the header.
    fn header(&mut self, text: &str) -> Result<(), (usize, TraceErrorKind, String)> {
        let bad = |at: usize, what: &str| {
            Err((
                at.min(text.len()) + 1,
                TraceErrorKind::Syntax,
                format!("{what} in the `#Paraver` header: times are taken as microseconds and threads numbered as they come"),
            ))
        };
        // The date holds `:`; what follows its `)` is the header proper.
        let Some(close) = text.find("):") else {
            return bad(0, "expected `(date):` after `#Paraver`");
        };
        let mut at = close + 2;
        let rest = &text[at..];
        let end = rest.find(':').unwrap_or(rest.len());
        let ftime = &rest[..end];
        self.per_second = if ftime.ends_with("_ns") {
            1e9
        } else if ftime.ends_with("_ms") {
            1e3
        } else if ftime.ends_with("_s") && !ftime.ends_with("_us") {
            1.0
        } else {
            1e6
        };
        at += end + 1;
        // The resources: NODES(CPUS,...), or 0.
        let Some(resources_end) = skip_group(text, at) else {
            return bad(at, "expected the nodes and their CPUs");
        };
        at = resources_end + 1;
        let rest = text.get(at..).unwrap_or("");
        let end = rest.find(':').unwrap_or(rest.len());
        let Ok(napps) = rest[..end].parse::<u64>() else {
            return bad(at, "expected the number of applications");
        };
        at += end + 1;
        let mut processor = 0i64;
        let mut task_number = 0i64;
        for appl in 1..=napps {
            // NTASKS(NTHREADS:NODE,...)
            let rest = text.get(at..).unwrap_or("");
            let Some(open) = rest.find('(') else {
                return bad(
                    at,
                    "expected an application's tasks, `NTASKS(NTHREADS:NODE,...)`",
                );
            };
            let Some(close) = rest[open..].find(')').map(|c| c + open) else {
                return bad(at, "expected `)` after an application's tasks");
            };
            for (t, spec) in rest[open + 1..close].split(',').enumerate() {
                let nthreads = spec
                    .split(':')
                    .next()
                    .and_then(|n| n.trim().parse::<u64>().ok());
                let Some(nthreads) = nthreads else {
                    return bad(at + open + 1, "expected `NTHREADS:NODE` for each task");
                };
                if processor as u64 + nthreads > MAX_THREADS {
                    return bad(at + open + 1, "more than a million threads declared");
                }
                let task = t as u64 + 1;
                self.tasks.insert((appl, task), task_number);
                for thread in 1..=nthreads {
                    self.threads
                        .insert((appl, task, thread), (processor, task_number));
                    processor += 1;
                }
                task_number += 1;
            }
            at += close + 2;
        }
        self.out.stats.ignored += 1;
        Ok(())
    }

    /// The processor and process of a thread; threads the header did not declare are
    /// numbered after those it did, as they come.
    fn thread(&mut self, appl: u64, task: u64, thread: u64) -> (i64, i64) {
        if let Some(&p) = self.threads.get(&(appl, task, thread)) {
            return p;
        }
        let next_task = self.tasks.len() as i64;
        let process = *self.tasks.entry((appl, task)).or_insert(next_task);
        let p = (self.threads.len() as i64, process);
        self.threads.insert((appl, task, thread), p);
        p
    }

    fn record(
        &mut self,
        text: &str,
        fields: &[(usize, std::ops::Range<usize>)],
    ) -> Result<(), (usize, TraceErrorKind, String)> {
        let field = |i: usize| &text[fields[i].1.clone()];
        let column = |i: usize| fields[i].0 + 1;
        let number = |i: usize| -> Result<u64, (usize, TraceErrorKind, String)> {
            let f = field(i);
            parse_int(f.as_bytes())
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| {
                    (
                        column(i),
                        TraceErrorKind::Syntax,
                        format!("expected a non-negative integer, found `{f}`"),
                    )
                })
        };
        let kind = field(0);
        let expect = |n: usize, what: &str| {
            if fields.len() == n {
                Ok(())
            } else {
                Err((
                    if fields.len() < n {
                        text.trim_end().len() + 1
                    } else {
                        column(n)
                    },
                    TraceErrorKind::Syntax,
                    format!(
                        "a {what} record has {n} fields separated by `:`, this one {}",
                        fields.len()
                    ),
                ))
            }
        };
        // A division, not a multiplication by 1e-9, so that times are correctly rounded.
        let per_second = self.per_second;
        let seconds = |t: u64| t as f64 / per_second;
        match kind {
            "1" => {
                expect(8, "state")?;
                let (appl, task, thread) = (number(2)?, number(3)?, number(4)?);
                let (begin, end, state) = (number(5)?, number(6)?, number(7)?);
                if end < begin {
                    return Err((
                        column(6),
                        TraceErrorKind::Syntax,
                        format!("the state ends ({end}) before it begins ({begin})"),
                    ));
                }
                let (processor, process) = self.thread(appl, task, thread);
                let (begin, end) = (seconds(begin), seconds(end));
                self.high = self.high.max(begin);
                let state = state as i64;
                let name = self
                    .pcf
                    .states
                    .get(&state)
                    .map_or("", String::as_str);
                let etype = if layout::is_waiting(name) {
                    layout::WAITING
                } else {
                    state
                };
                for (rtype, time) in [(ENTRY, begin), (EXIT, end)] {
                    let mut r = layout::blank(&mut self.out.spare);
                    Fill::start(&mut r, self.line_no, rtype, etype, time, processor, process)
                        .int(0)
                        .int(-1)
                        .int(-1)
                        .str(name)
                        .int(state)
                        .done();
                    self.seq += 1;
                    self.out.reorder.push(time, Tie::Input(self.seq), r);
                }
            }
            "2" => {
                if fields.len() < 8 || !fields.len().is_multiple_of(2) {
                    return Err((
                        text.trim_end().len() + 1,
                        TraceErrorKind::Syntax,
                        format!("an event record has 6 fields then type:value pairs, this one {} fields", fields.len()),
                    ));
                }
                let (appl, task, thread) = (number(2)?, number(3)?, number(4)?);
                let time = seconds(number(5)?);
                // Every pair is checked before any record goes out.
                let mut pairs = Vec::with_capacity((fields.len() - 6) / 2);
                for i in (6..fields.len()).step_by(2) {
                    let ty = number(i)? as i64;
                    let v = field(i + 1);
                    let value = parse_int(v.as_bytes()).map(crate::Value::Int).or_else(|| {
                        v.parse::<u64>().ok().map(|u| crate::Value::Real(u as f64))
                    });
                    let Some(value) = value else {
                        return Err((
                            column(i + 1),
                            TraceErrorKind::Syntax,
                            format!("expected an integer event value, found `{v}`"),
                        ));
                    };
                    pairs.push((ty, value));
                }
                let (processor, process) = self.thread(appl, task, thread);
                self.high = self.high.max(time);
                for (ty, value) in pairs {
                    let type_name = self.pcf.event_types.get(&ty).map_or("", String::as_str);
                    let value_name = match value {
                        crate::Value::Int(v) => self
                            .pcf
                            .event_values
                            .get(&ty)
                            .and_then(|names| names.get(&v))
                            .map_or("", String::as_str),
                        _ => "",
                    };
                    let mut r = layout::blank(&mut self.out.spare);
                    let fill = Fill::start(&mut r, self.line_no, MARK, ty, time, processor, process);
                    let fill = match value {
                        crate::Value::Int(v) => fill.int(v),
                        crate::Value::Real(v) => fill.real(v),
                        crate::Value::Str(_) => fill,
                    };
                    fill.int(-1).int(-1).str(type_name).str(value_name).done();
                    self.seq += 1;
                    self.out.reorder.push(time, Tie::Input(self.seq), r);
                }
            }
            "3" => {
                expect(15, "communication")?;
                let sender = (number(2)?, number(3)?, number(4)?);
                let (lsend, psend) = (number(5)?, number(6)?);
                let receiver = (number(8)?, number(9)?, number(10)?);
                let (lrecv, precv) = (number(11)?, number(12)?);
                let size = number(13)?;
                let tag = number(14)?;
                let (from, from_process) = self.thread(sender.0, sender.1, sender.2);
                let (to, to_process) = self.thread(receiver.0, receiver.1, receiver.2);
                let earliest = lsend.min(psend).min(lrecv).min(precv);
                self.high = self.high.max(seconds(earliest));
                let sides = [
                    (SEND, seconds(psend), seconds(lsend), from, from_process, to),
                    (RECEIVE, seconds(precv), seconds(lrecv), to, to_process, from),
                ];
                for (etype, time, logical, processor, process, partner) in sides {
                    for rtype in [ENTRY, EXIT] {
                        let mut r = layout::blank(&mut self.out.spare);
                        Fill::start(&mut r, self.line_no, rtype, etype, time, processor, process)
                            .int(size.min(i64::MAX as u64) as i64)
                            .int(tag.min(i64::MAX as u64) as i64)
                            .int(partner)
                            .real(logical)
                            .done();
                        self.seq += 1;
                        self.out.reorder.push(time, Tie::Input(self.seq), r);
                    }
                }
            }
            "c" => self.out.stats.ignored += 1,
            other => {
                return Err((
                    column(0),
                    TraceErrorKind::Undefined,
                    format!("unknown Paraver record type `{other}` (1 states, 2 events, 3 communications); the line is skipped"),
                ))
            }
        }
        Ok(())
    }
}

/// Splits a record line at `:` into (byte offset, range) fields.
fn split_fields(text: &str, out: &mut Vec<(usize, std::ops::Range<usize>)>) {
    out.clear();
    let text = text.trim_end();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b':' {
            out.push((start, start..i));
            start = i + 1;
        }
    }
    out.push((start, start..text.len()));
}

/// The index of the `:` after a header group starting at `at` (`N(...)` or `N`), skipping
/// the parenthesis, which may hold `:` or `,`.
fn skip_group(text: &str, at: usize) -> Option<usize> {
    let rest = text.get(at..)?;
    let colon = rest.find(':')?;
    match rest.find('(') {
        Some(open) if open < colon => {
            let close = rest[open..].find(')')? + open;
            let after = rest[close..].find(':')? + close;
            Some(at + after)
        }
        _ => Some(at + colon),
    }
}

impl<R: BufRead> Iterator for ParaverReader<R> {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_reusing(None)
    }
}

impl<R: BufRead> Adapter for ParaverReader<R> {
    fn outgoing(&mut self) -> &mut Outgoing {
        &mut self.out
    }

    /// Paraver records are in time order: what is no later than the latest time read can go.
    fn due(&mut self) -> (f64, Tie) {
        (self.high, Tie::Input(u64::MAX))
    }

    fn read_more(&mut self) {
        self.read_one();
    }
}
