//! The OTF2 adapter: reads an OTF2 archive (as Score-P writes it) through the `otf2-print`
//! tool of the OTF2 distribution, and gives its regions, MPI messages and metrics as
//! PICL-layout records (see [`crate::layout`] and `docs/formats.md`).
//!
//! An OTF2 trace is not one stream but an archive: an anchor file (`run.otf2`), global
//! definitions (`run.def`) and a directory of event files, one per location, in a binary
//! format that only the OTF2 library reads. Rather than link that library (a C library
//! with a callback API, needed then by every build), the adapter runs `otf2-print -A
//! ANCHOR` as a child process and reads what it prints: the global definitions (the clock,
//! the location groups and locations, the regions' paradigms, the metrics' units), then the
//! events of every location merged in time order by the library's global event reader. The
//! build stays free of C; a trace the library cannot read stops the child, not the run;
//! and the tool is needed only by those who read OTF2 traces. `VOML_OTF2_PRINT` names
//! another program to run in its place.
//!
//! `otf2-print` prints names between `"` without escaping them, so a name may hold a `"`, a
//! `<` or even a line break: every name is taken from where the line's fixed words put it
//! (`Region: "NAME" <ID>`), not by scanning for quotes, and a printed line whose first word
//! is not a record's name continues the record before it.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::error::{TraceError, TraceErrorKind};
use crate::layout::{self, Fill, States, ENTRY, EXIT, MARK, RECEIVE, SEND, VALUE};
use crate::lines::read_line;
use crate::names::{Codes, FastMap};
use crate::reader::{ReadOptions, MAX_LINE_LEN};
use crate::record::Record;
use crate::AdapterStats;

/// The environment variable that names the program run in place of `otf2-print`.
pub const OTF2_PRINT_VAR: &str = "VOML_OTF2_PRINT";

/// Lines of the child's standard error kept to explain a failure.
const STDERR_LINES: usize = 8;

/// Where in `otf2-print`'s output the reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    /// Before the definitions (the anchor file's content), or a section the adapter skips
    /// (mappings, clock offsets).
    Other,
    Definitions,
    Events,
}

/// A record of `otf2-print`'s output: its first line's number and its text, continuation
/// lines joined with `\n`.
struct Printed {
    line: u64,
    text: String,
}

/// The `otf2-print` process an [`Otf2Reader`] reads, with what it wrote to its standard
/// error so far (the first [`STDERR_LINES`] lines).
struct Tool {
    child: Child,
    program: String,
    stderr: Arc<Mutex<Vec<String>>>,
    stderr_thread: Option<JoinHandle<()>>,
}

impl Tool {
    /// Waits for the tool to end and says why it failed, if it did.
    /// `complaints`: what it said on its standard output about stopping.
    fn finish(&mut self, complaints: &[String]) -> Option<String> {
        let status = self.child.wait();
        if let Some(t) = self.stderr_thread.take() {
            let _ = t.join();
        }
        let mut said = complaints.to_vec();
        if let Ok(lines) = self.stderr.lock() {
            said.extend(lines.iter().cloned());
        }
        let said = said.join(" / ");
        match status {
            Ok(s) if s.success() => None,
            Ok(s) => Some(format!(
                "{} could not read the whole trace ({s}){}{}",
                self.program,
                if said.is_empty() { "" } else { ": " },
                said
            )),
            Err(e) => Some(format!("waiting for {}: {e}", self.program)),
        }
    }
}

impl Drop for Tool {
    fn drop(&mut self) {
        // A run that stops early does not leave the tool printing to a closed pipe.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Reads an OTF2 trace, as `otf2-print -A` prints it, as PICL-layout records; see the
/// module documentation.
pub struct Otf2Reader<R> {
    inner: R,
    source_name: String,
    options: ReadOptions,
    tool: Option<Tool>,
    buf: Vec<u8>,
    line_no: u64,
    /// A line read ahead: the first of the next record.
    ahead: Option<Printed>,
    /// Strings of lines done with, to read the next ones into.
    free: Vec<String>,
    ended: bool,
    stopped: bool,
    section: Section,
    /// Clock ticks per second, and the time that is 0.
    ticks: f64,
    offset: u64,
    clock_seen: bool,
    /// Process number of each location group, in the order they are defined.
    groups: FastMap<u64, i64>,
    /// Processor and process of each location, in the order they are defined (a location
    /// no definition names is numbered after them as it comes).
    locations: FastMap<u64, (i64, i64)>,
    /// The paradigm of each region (`MPI`, `USER`, ...).
    paradigms: FastMap<u64, String>,
    /// The unit of each metric member.
    units: FastMap<u64, String>,
    states: States,
    keys: Codes,
    out: VecDeque<Result<Record, TraceError>>,
    spare: Vec<Record>,
    stats: AdapterStats,
    /// What the tool said on its output (`==ERROR== ...`) about why it stopped.
    complaints: Vec<String>,
}

impl Otf2Reader<BufReader<ChildStdout>> {
    /// Runs `otf2-print -A` (or the program `VOML_OTF2_PRINT` names) on the anchor file
    /// `anchor` and reads what it prints. Errors name the source `source_name`, at the line
    /// of the tool's output.
    pub fn spawn(anchor: &Path, source_name: String, options: ReadOptions) -> io::Result<Self> {
        let program: OsString =
            std::env::var_os(OTF2_PRINT_VAR).unwrap_or_else(|| "otf2-print".into());
        Self::spawn_with(&program, anchor, source_name, options)
    }

    /// Runs `program` in place of `otf2-print` (see [`Otf2Reader::spawn`]).
    pub fn spawn_with(
        program: &std::ffi::OsStr,
        anchor: &Path,
        source_name: String,
        options: ReadOptions,
    ) -> io::Result<Self> {
        let shown = program.to_string_lossy().into_owned();
        let mut child = Command::new(program)
            .arg("-A")
            .arg("--")
            .arg(anchor)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                let hint = if e.kind() == io::ErrorKind::NotFound {
                    " (OTF2 traces are read with `otf2-print`, of the OTF2 tools: Debian's package otf2-tools)"
                } else {
                    ""
                };
                io::Error::new(e.kind(), format!("cannot run `{shown}`: {e}{hint}"))
            })?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let kept = Arc::new(Mutex::new(Vec::new()));
        let keep = kept.clone();
        let stderr_thread = std::thread::Builder::new()
            .name("voml-otf2-stderr".into())
            .spawn(move || collect_stderr(stderr, &keep))
            .ok();
        let mut reader = Otf2Reader::new(
            BufReader::with_capacity(64 * 1024, stdout),
            source_name,
            options,
        );
        reader.tool = Some(Tool {
            child,
            program: shown,
            stderr: kept,
            stderr_thread,
        });
        Ok(reader)
    }
}

/// Keeps the first lines of the tool's standard error that say something (its `[OTF2]`
/// prefixes and source places dropped), and drains the rest.
fn collect_stderr(stderr: impl Read, keep: &Mutex<Vec<String>>) {
    let mut lines = BufReader::new(stderr);
    let mut buf = Vec::new();
    while let Ok(Some(_)) = read_line(&mut lines, &mut buf, 4096) {
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim();
        // `[OTF2] src/OTF2_Reader.c:177: error: Archive creation failed!`
        let said = text
            .split_once(": error: ")
            .map_or(text, |(_, said)| said)
            .trim();
        if said.is_empty() {
            continue;
        }
        if let Ok(mut kept) = keep.lock() {
            if kept.len() < STDERR_LINES {
                kept.push(crate::error::excerpt(said, 200));
            }
        }
    }
}

impl<R: BufRead> Otf2Reader<R> {
    /// Reads `otf2-print -A`'s output from `reader` (no child process: the caller ran the
    /// tool, or holds its output).
    pub fn new(reader: R, source_name: String, options: ReadOptions) -> Self {
        Otf2Reader {
            inner: reader,
            source_name,
            options,
            tool: None,
            buf: Vec::with_capacity(256),
            line_no: 0,
            ahead: None,
            free: Vec::new(),
            ended: false,
            stopped: false,
            section: Section::Other,
            ticks: 1.0,
            offset: 0,
            clock_seen: false,
            groups: FastMap::default(),
            locations: FastMap::default(),
            paradigms: FastMap::default(),
            units: FastMap::default(),
            states: States::starting_at(1),
            keys: Codes::starting_at(0),
            out: VecDeque::new(),
            spare: Vec::new(),
            stats: AdapterStats::default(),
            complaints: Vec::new(),
        }
    }

    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    pub fn stats(&self) -> AdapterStats {
        self.stats
    }

    /// The reader the tool's output is read from.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The next record, like [`Iterator::next`], built in `reuse`'s storage when given.
    pub fn next_reusing(&mut self, reuse: Option<Record>) -> Option<Result<Record, TraceError>> {
        if let Some(r) = reuse {
            if self.spare.len() < 64 {
                self.spare.push(r);
            }
        }
        loop {
            if let Some(item) = self.out.pop_front() {
                match &item {
                    Ok(_) => self.stats.records += 1,
                    Err(_) => {
                        self.stats.bad += 1;
                        if self.options.strict {
                            self.stopped = true;
                            self.out.clear();
                        }
                    }
                }
                return Some(item);
            }
            if self.stopped || self.ended {
                return None;
            }
            match self.next_printed() {
                Some(printed) => {
                    self.record(&printed);
                    if self.free.len() < 4 {
                        self.free.push(printed.text);
                    }
                }
                None => self.end(),
            }
        }
    }

    /// The input has ended: the tool's failure, if it failed, is the last error.
    fn end(&mut self) {
        self.ended = true;
        if let Some(mut tool) = self.tool.take() {
            if let Some(why) = tool.finish(&self.complaints) {
                let line = self.line_no + 1;
                self.error(line, TraceErrorKind::Io, why, "");
            }
        }
    }

    fn error(&mut self, line: u64, kind: TraceErrorKind, message: String, text: &str) {
        self.out.push_back(Err(TraceError::at(
            &self.source_name,
            line,
            1,
            kind,
            message,
            text,
        )));
    }

    /// The next line of the tool's output, or `None` at its end (a read error is reported
    /// and ends it).
    fn next_line(&mut self) -> Option<Printed> {
        match read_line(&mut self.inner, &mut self.buf, MAX_LINE_LEN) {
            Ok(Some(raw)) => {
                self.line_no += 1;
                if raw.overflow {
                    let line = self.line_no;
                    self.error(
                        line,
                        TraceErrorKind::LineTooLong,
                        format!("line longer than {MAX_LINE_LEN} bytes; the rest of it is skipped"),
                        "",
                    );
                }
                let buf = self.buf.strip_suffix(b"\r").unwrap_or(&self.buf);
                // Lines are read into strings used before (no allocation per line).
                let mut text = self.free.pop().unwrap_or_default();
                text.clear();
                match std::str::from_utf8(buf) {
                    Ok(t) => text.push_str(t),
                    // Names are printed as the trace holds them, in any encoding.
                    Err(_) => text.push_str(&String::from_utf8_lossy(buf)),
                }
                Some(Printed {
                    line: self.line_no,
                    text,
                })
            }
            Ok(None) => None,
            Err(e) => {
                let line = self.line_no + 1;
                self.error(line, TraceErrorKind::Io, format!("read error: {e}"), "");
                None
            }
        }
    }

    /// The next record of the output: a line that begins one, with the lines that continue
    /// it (a name that holds a line break). The tool's lines of additional attributes are
    /// left out.
    fn next_printed(&mut self) -> Option<Printed> {
        let mut printed = match self.ahead.take() {
            Some(p) => p,
            None => self.next_line()?,
        };
        loop {
            let Some(next) = self.next_line() else {
                return Some(printed);
            };
            if begins_record(&next.text) {
                self.ahead = Some(next);
                return Some(printed);
            }
            if !next.text.trim_start().starts_with("ADDITIONAL ATTRIBUTES:")
                && printed.text.len() < MAX_LINE_LEN
            {
                printed.text.push('\n');
                printed.text.push_str(&next.text);
            }
            if self.free.len() < 4 {
                self.free.push(next.text);
            }
        }
    }

    fn record(&mut self, printed: &Printed) {
        let text = printed.text.as_str();
        if let Some(said) = text.strip_prefix("==ERROR==") {
            // The tool says why it stops: kept for the error its exit status makes.
            if self.complaints.len() < STDERR_LINES {
                self.complaints
                    .push(crate::error::excerpt(said.trim(), 200));
            }
            return;
        }
        if text.starts_with("===") {
            self.section = if text.starts_with("=== Global Definitions") {
                Section::Definitions
            } else if text.starts_with("=== Events") {
                if !self.clock_seen {
                    self.error(
                        printed.line,
                        TraceErrorKind::Undefined,
                        "the trace defines no clock properties: times are taken as seconds"
                            .to_owned(),
                        "",
                    );
                }
                Section::Events
            } else {
                Section::Other
            };
            return;
        }
        let done = match self.section {
            Section::Other => Ok(()),
            Section::Definitions => self.definition(text),
            Section::Events => self.event(text, printed.line),
        };
        if let Err((kind, message)) = done {
            self.error(printed.line, kind, message, text);
        }
    }

    /// Reads what the adapter needs of a definition; the others are skipped.
    fn definition(&mut self, text: &str) -> Result<(), (TraceErrorKind, String)> {
        let (kind, rest) = word(text);
        if !is_record_name(kind) {
            // The column heads and the rule under them.
            return Ok(());
        }
        if kind == "CLOCK_PROPERTIES" {
            let ticks = number_after(rest, "Ticks per Seconds: ")
                .ok_or_else(|| syntax("expected `Ticks per Seconds: N` in CLOCK_PROPERTIES"))?;
            let offset = number_after(rest, "Global Offset: ")
                .ok_or_else(|| syntax("expected `Global Offset: N` in CLOCK_PROPERTIES"))?;
            if ticks == 0 {
                return Err(syntax("a clock of 0 ticks per second"));
            }
            self.ticks = ticks as f64;
            self.offset = offset;
            self.clock_seen = true;
            return Ok(());
        }
        if !matches!(
            kind,
            "LOCATION_GROUP" | "LOCATION" | "REGION" | "METRIC_MEMBER"
        ) {
            return Ok(());
        }
        let (id, attrs) = word(rest);
        let id: u64 = id
            .parse()
            .map_err(|_| syntax(&format!("expected the number of the {kind} definition")))?;
        match kind {
            "LOCATION_GROUP" => {
                let n = self.groups.len() as i64;
                self.groups.entry(id).or_insert(n);
            }
            "LOCATION" => {
                // `..., Group: "NAME" <ID>` or `Group: UNDEFINED`, last.
                let process = trailing_ref(attrs)
                    .and_then(|g| self.groups.get(&g).copied())
                    .unwrap_or(-1);
                let n = self.locations.len() as i64;
                self.locations.entry(id).or_insert((n, process));
            }
            "REGION" => {
                if let Some(p) = paradigm(attrs) {
                    self.paradigms.insert(id, p.to_owned());
                }
            }
            _ => {
                // METRIC_MEMBER: `..., Unit: "UNIT" <ID>`, last.
                if let Some(unit) = trailing_name(attrs, ", Unit: \"") {
                    self.units.insert(id, unit.to_owned());
                }
            }
        }
        Ok(())
    }

    /// The processor and process of a location, numbering one no definition named.
    fn location(&mut self, id: u64) -> (i64, i64) {
        let n = self.locations.len() as i64;
        *self.locations.entry(id).or_insert((n, -1))
    }

    fn event(&mut self, text: &str, line: u64) -> Result<(), (TraceErrorKind, String)> {
        let (kind, rest) = word(text);
        if !is_record_name(kind) {
            return Ok(());
        }
        let (location, rest) = word(rest);
        let (time, attrs) = word(rest);
        let (Ok(location), Ok(ticks)) = (location.parse::<u64>(), time.parse::<u64>()) else {
            return Err(syntax(&format!(
                "expected the location and the timestamp after {kind}"
            )));
        };
        let time = (i128::from(ticks) - i128::from(self.offset)) as f64 / self.ticks;
        let (processor, process) = self.location(location);
        match kind {
            "ENTER" | "LEAVE" => {
                let (region, name) = region_of(attrs).ok_or_else(|| {
                    syntax(&format!("expected `Region: \"NAME\" <ID>` in {kind}"))
                })?;
                let (_, code) = self.states.state(name);
                let paradigm = self.paradigms.get(&region).map_or("", String::as_str);
                let mut r = layout::blank(&mut self.spare);
                let rtype = if kind == "ENTER" { ENTRY } else { EXIT };
                Fill::start(&mut r, 0, rtype, code, time, processor, process)
                    .int(0)
                    .int(-1)
                    .int(-1)
                    .str(name)
                    .str(paradigm)
                    .done();
                self.out.push_back(Ok(r));
            }
            "MPI_SEND" | "MPI_ISEND" | "MPI_RECV" | "MPI_IRECV" => {
                let send = kind.ends_with("SEND");
                let message = message_of(attrs, if send { "Receiver: " } else { "Sender: " })
                    .ok_or_else(|| {
                        syntax(&format!(
                            "expected `{}: RANK (LOCATION), Communicator: \"NAME\" <ID>, Tag: N, Length: N` in {kind}",
                            if send { "Receiver" } else { "Sender" }
                        ))
                    })?;
                let partner = message.peer.map_or(-1, |p| self.location(p).0);
                let etype = if send { SEND } else { RECEIVE };
                for rtype in [ENTRY, EXIT] {
                    let mut r = layout::blank(&mut self.spare);
                    Fill::start(&mut r, 0, rtype, etype, time, processor, process)
                        .int(message.length)
                        .int(message.tag)
                        .int(partner)
                        .str(message.communicator)
                        .str(kind)
                        .done();
                    self.out.push_back(Ok(r));
                }
            }
            "METRIC" => {
                let values = metric_values(attrs).ok_or_else(|| {
                    syntax("expected `Metric: ID, N Values: (\"NAME\" <ID>; TYPE; VALUE), ...` in METRIC")
                })?;
                for (member, name, value) in values {
                    if !value.is_finite() {
                        self.out.push_back(Err(TraceError::at(
                            &self.source_name,
                            line,
                            1,
                            TraceErrorKind::NonFinite,
                            format!("the value of metric `{name}` is not a finite number"),
                            text,
                        )));
                        continue;
                    }
                    let key = self.keys.code(name);
                    let unit = self.units.get(&member).map_or("", String::as_str);
                    let mut r = layout::blank(&mut self.spare);
                    Fill::start(&mut r, 0, MARK, VALUE, time, processor, process)
                        .real(value)
                        .int(key)
                        .int(-1)
                        .str(name)
                        .str(unit)
                        .done();
                    self.out.push_back(Ok(r));
                }
            }
            _ => self.stats.ignored += 1,
        }
        Ok(())
    }
}

impl<R: BufRead> Iterator for Otf2Reader<R> {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_reusing(None)
    }
}

fn syntax(what: &str) -> (TraceErrorKind, String) {
    (
        TraceErrorKind::Syntax,
        format!("{what} (in otf2-print's output)"),
    )
}

/// Whether a printed line begins a record (or a section, or the column heads): a word of
/// capitals, digits and `_`, then up to the 40th byte (where the tool's first columns end:
/// a definition's number, an event's location begins there) only blanks and digits; a rule
/// of `=` or `-`; or the tool's own complaint (`==ERROR== ...`).
fn begins_record(line: &str) -> bool {
    if line.starts_with("==") || line.starts_with("---") {
        return true;
    }
    if line.starts_with("Definition ") || line.starts_with("Event ") {
        return true;
    }
    let head = &line.as_bytes()[..line.len().min(40)];
    let name = head.iter().position(|&b| b == b' ').unwrap_or(head.len());
    std::str::from_utf8(&head[..name]).is_ok_and(is_record_name)
        && head[name..]
            .iter()
            .all(|&b| b == b' ' || b.is_ascii_digit())
        && (name == line.len() || line[name..].starts_with("  "))
}

/// A word of capitals, digits and `_`, beginning with a capital: `MPI_SEND`, `LOCATION`.
fn is_record_name(word: &str) -> bool {
    word.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
        && word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// The first word of `text` (after blanks) and what follows it (after blanks).
fn word(text: &str) -> (&str, &str) {
    let text = text.trim_start_matches(' ');
    let end = text.find(' ').unwrap_or(text.len());
    (&text[..end], text[end..].trim_start_matches(' '))
}

/// The unsigned number right after the first `label` in `text`.
fn number_after(text: &str, label: &str) -> Option<u64> {
    let at = text.find(label)? + label.len();
    let digits = &text[at..];
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// The number of a reference that ends `text`: `... <ID>`.
fn trailing_ref(text: &str) -> Option<u64> {
    let text = text.trim_end().strip_suffix('>')?;
    let open = text.rfind('<')?;
    text[open + 1..].parse().ok()
}

/// The name of a reference that ends `text`, after the last `label` (which ends with `"`):
/// `..., Unit: "NAME" <ID>`.
fn trailing_name<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    let text = text.trim_end();
    let at = text.rfind(label)? + label.len();
    let (name, _) = text[at..].rsplit_once("\" <")?;
    Some(name)
}

/// A region's paradigm: the word after `, Paradigm: ` that a `, Flags: ` follows (the name,
/// description and file, which may hold anything, come before and after it).
fn paradigm(attrs: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(at) = attrs[from..].find(", Paradigm: ") {
        let start = from + at + ", Paradigm: ".len();
        let rest = &attrs[start..];
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
        if let Some(end) = end {
            if end > 0 && rest[end..].starts_with(", Flags: ") {
                return Some(&rest[..end]);
            }
        }
        from = start;
    }
    None
}

/// `Region: "NAME" <ID>`: the region's number and name.
fn region_of(attrs: &str) -> Option<(u64, &str)> {
    let inner = attrs.trim_end().strip_prefix("Region: \"")?;
    let (name, id) = inner.rsplit_once("\" <")?;
    Some((id.strip_suffix('>')?.parse().ok()?, name))
}

/// What a message event says.
#[derive(Debug, PartialEq)]
struct Message<'a> {
    /// The partner's location (`None`: the tool could not tell it).
    peer: Option<u64>,
    communicator: &'a str,
    tag: i64,
    length: i64,
}

/// `Receiver: RANK ("NAME" <LOCATION>), Communicator: "NAME" <ID>, Tag: N, Length: N[,
/// Request: N]` (`Sender:` for receives; `(INVALID)` or `(UNDEFINED)` when the rank is no
/// location the tool knows).
fn message_of<'a>(attrs: &'a str, label: &str) -> Option<Message<'a>> {
    let rest = attrs.strip_prefix(label)?;
    let comm_at = rest.find(", Communicator: ")?;
    let partner = &rest[..comm_at];
    // `1 ("thread 1" <4294967296>)`
    let peer = partner
        .strip_suffix(">)")
        .and_then(|p| p.rsplit_once('<'))
        .and_then(|(_, id)| id.parse().ok());
    let after = &rest[comm_at + ", Communicator: ".len()..];
    let tag_at = after.rfind(", Tag: ")?;
    let communicator = match after[..tag_at].strip_prefix('"') {
        Some(c) => c.rsplit_once("\" <")?.0,
        None => "",
    };
    let numbers = &after[tag_at + ", Tag: ".len()..];
    let (tag, numbers) = numbers.split_once(", Length: ")?;
    let length = numbers.split(',').next()?.trim();
    Some(Message {
        peer,
        communicator,
        tag: tag.trim().parse().ok()?,
        length: length.parse().ok()?,
    })
}

/// `Metric: ID, N Value(s): ("NAME" <MEMBER>; TYPE; VALUE), ...`: each value's member,
/// name and value, read from the right (a name may hold anything but `("`).
fn metric_values(attrs: &str) -> Option<Vec<(u64, &str, f64)>> {
    let rest = attrs.strip_prefix("Metric: ")?;
    let (_, rest) = rest.split_once(", ")?;
    let (count, mut rest) = rest.split_once(' ')?;
    let count: usize = count.parse().ok()?;
    let mut values = Vec::with_capacity(count.min(256));
    rest = rest.trim_end();
    for i in 0..count {
        let inner = rest.strip_suffix(')')?;
        let (inner, value) = inner.rsplit_once("; ")?;
        let (inner, _type) = inner.rsplit_once("; ")?;
        let inner = inner.strip_suffix('>')?;
        let (inner, member) = inner.rsplit_once(" <")?;
        let inner = inner.strip_suffix('"')?;
        let open = inner.rfind("(\"")?;
        let name = &inner[open + 2..];
        values.push((member.parse().ok()?, name, parse_value(value)?));
        rest = &inner[..open];
        rest = if i + 1 < count {
            rest.strip_suffix(", ")?
        } else {
            rest.strip_suffix("Values: ")
                .or_else(|| rest.strip_suffix("Value: "))?
        };
    }
    rest.is_empty().then_some(())?;
    values.reverse();
    Some(values)
}

/// A metric value as printed: an integer (kept exact where a real can be) or a real.
fn parse_value(text: &str) -> Option<f64> {
    let text = text.trim();
    if let Ok(i) = text.parse::<i64>() {
        return Some(i as f64);
    }
    if let Ok(u) = text.parse::<u64>() {
        return Some(u as f64);
    }
    text.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_begin_with_a_word_of_capitals() {
        assert!(begins_record(
            "ENTER                                          0                 1000  Region: \"main\" <0>"
        ));
        assert!(begins_record(
            "MPI_COLLECTIVE_BEGIN                           0  "
        ));
        assert!(begins_record("=== Events ====="));
        assert!(begins_record(
            "Event                                   Location"
        ));
        assert!(!begins_record("ine\" <14>, Class: \"node\" <4>"));
        assert!(!begins_record("Mach ine\" <14>"));
        assert!(!begins_record(
            "ONE  1\" <4294967296>), Communicator: \"MPI_COMM_WORLD\" <0>"
        ));
        assert!(begins_record(
            "STRING                                 0  \"a\""
        ));
        assert!(begins_record(
            "CLOCK_PROPERTIES                          Ticks per Seconds: 1000000"
        ));
        assert!(!begins_record(
            "                  ADDITIONAL ATTRIBUTES: (\"a\" <0>)"
        ));
    }

    #[test]
    fn messages_regions_and_metrics_are_read_from_their_fixed_words() {
        assert_eq!(
            message_of(
                "Receiver: 1 (\"thread \"1\" <2>\" <4294967296>), Communicator: \"MPI_COMM_WORLD\" <0>, Tag: 42, Length: 1024",
                "Receiver: "
            ),
            Some(Message {
                peer: Some(4294967296),
                communicator: "MPI_COMM_WORLD",
                tag: 42,
                length: 1024
            })
        );
        assert_eq!(
            message_of(
                "Sender: 9 (INVALID), Communicator: \"a, Tag: b\" <3>, Tag: 7, Length: 8, Request: 100",
                "Sender: "
            ),
            Some(Message {
                peer: None,
                communicator: "a, Tag: b",
                tag: 7,
                length: 8
            })
        );
        assert_eq!(
            region_of("Region: \"a \"b\" <1>\" <12>"),
            Some((12, "a \"b\" <1>"))
        );
        assert_eq!(
            metric_values(
                "Metric: 3, 2 Values: (\"PAPI_TOT_INS\" <0>; UINT64; 5000), (\"mem; x\" <1>; DOUBLE; 2.5)"
            ),
            Some(vec![(0, "PAPI_TOT_INS", 5000.0), (1, "mem; x", 2.5)])
        );
        assert_eq!(
            metric_values("Metric: 0, 1 Value: (\"t\" <4>; INT64; -3)"),
            Some(vec![(4, "t", -3.0)])
        );
        assert_eq!(
            metric_values("Metric: 0, 2 Value: (\"t\" <4>; INT64; -3)"),
            None
        );
        assert_eq!(
            paradigm("Name: \"x, Paradigm: Y\" <1> (Aka. \"x\" <1>), Descr.: \"\" <0>, Role: FUNCTION, Paradigm: MPI, Flags: NONE, File: \"\" <0>, Begin: 0, End: 0"),
            Some("MPI")
        );
        assert_eq!(
            trailing_name(
                "Name: \"mem\" <11>, Exponent: 20, Unit: \"MiB\" <13>",
                ", Unit: \""
            ),
            Some("MiB")
        );
        assert_eq!(
            trailing_ref("Name: \"t\" <8>, Type: CPU_THREAD, # Events: 13, Group: \"rank 1\" <1>"),
            Some(1)
        );
        assert_eq!(trailing_ref("Group: UNDEFINED"), None);
    }
}
