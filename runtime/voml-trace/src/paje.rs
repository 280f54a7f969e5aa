//! The Pajé adapter: reads a Pajé trace (the format of PajeNG, SimGrid, Poti and StarPU) and
//! gives its containers' states, links, variables and events as PICL-layout records (see
//! [`crate::layout`] and `docs/formats.md`).
//!
//! A Pajé trace defines its own events in its header: `%EventDef NAME ID`, one `% FIELD TYPE`
//! line per field, `%EndEventDef`. Each record line is the event's id followed by its fields
//! in the order the header gave, so the reader learns the field order from the header and
//! never assumes it. Field names are PajeNG's (`Type`, `StartContainer`, ...) or the older
//! Pajé names (`ContainerType`, `EntityType`, `SourceContainer`, `DestContainer`).
//!
//! Containers become processors numbered in creation order (the root container, `0`, is
//! processor -1). States, links and variables are kept per container as PajeNG keeps them:
//! a stack of states per container and state type, links matched by their type and key
//! (either end may come first), the current value of each variable.

use std::collections::{BinaryHeap, HashSet};
use std::fs::File;
use std::hash::BuildHasherDefault;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use crate::error::{TraceError, TraceErrorKind};
use crate::layout::{self, Fill, States, ENTRY, EVENT, EXIT, LIFE, MARK, RECEIVE, SEND, VALUE};
use crate::lines::{read_line, text_of};
use crate::names::{Codes, FastHasher, FastMap, NameMap};
use crate::outgoing::{self, Adapter, Outgoing};
use crate::parse::parse_real;
use crate::reader::{ReadOptions, MAX_LINE_LEN};
use crate::record::Record;
use crate::reorder::Tie;
use crate::AdapterStats;

/// Most links waiting for their other end at once, and most states pushed on one stack.
pub const MAX_OPEN: usize = 1 << 16;

/// Event ids below this, written as plain digits, are looked up by number.
const MAX_NUMBERED: usize = 4096;

/// What a Pajé event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    DefineContainerType,
    DefineStateType,
    DefineVariableType,
    DefineEventType,
    DefineLinkType,
    DefineEntityValue,
    CreateContainer,
    DestroyContainer,
    SetVariable,
    AddVariable,
    SubVariable,
    SetState,
    PushState,
    PopState,
    ResetState,
    StartLink,
    EndLink,
    NewEvent,
}

impl Kind {
    fn of(name: &str) -> Option<Kind> {
        use Kind::*;
        Some(match name {
            "PajeDefineContainerType" => DefineContainerType,
            "PajeDefineStateType" => DefineStateType,
            "PajeDefineVariableType" => DefineVariableType,
            "PajeDefineEventType" => DefineEventType,
            "PajeDefineLinkType" => DefineLinkType,
            "PajeDefineEntityValue" => DefineEntityValue,
            "PajeCreateContainer" => CreateContainer,
            "PajeDestroyContainer" => DestroyContainer,
            "PajeSetVariable" => SetVariable,
            "PajeAddVariable" => AddVariable,
            "PajeSubVariable" => SubVariable,
            "PajeSetState" => SetState,
            "PajePushState" => PushState,
            "PajePopState" => PopState,
            "PajeResetState" => ResetState,
            "PajeStartLink" => StartLink,
            "PajeEndLink" => EndLink,
            "PajeNewEvent" => NewEvent,
            _ => return None,
        })
    }

    /// The fields the event cannot do without.
    fn required(self) -> &'static [Field] {
        use Field::*;
        use Kind::*;
        match self {
            DefineContainerType | DefineStateType | DefineVariableType | DefineEventType
            | DefineEntityValue => &[Name, Type],
            DefineLinkType => &[Name, Type, StartContainerType, EndContainerType],
            CreateContainer => &[Time, Name, Type, Container],
            DestroyContainer => &[Time, Name, Type],
            SetVariable | AddVariable | SubVariable | SetState | PushState | NewEvent => {
                &[Time, Container, Type, Value]
            }
            PopState | ResetState => &[Time, Container, Type],
            StartLink => &[Time, Container, Type, StartContainer, Value, Key],
            EndLink => &[Time, Container, Type, EndContainer, Value, Key],
        }
    }
}

/// The fields the reader understands, by their PajeNG and older Pajé names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Time,
    Alias,
    Name,
    Type,
    Container,
    Value,
    StartContainer,
    EndContainer,
    StartContainerType,
    EndContainerType,
    Key,
    Size,
}

const FIELDS: usize = 12;

impl Field {
    fn of(name: &str) -> Option<Field> {
        use Field::*;
        let n = name.to_ascii_lowercase();
        Some(match n.as_str() {
            "time" => Time,
            "alias" => Alias,
            "name" => Name,
            "type" | "containertype" | "entitytype" => Type,
            "container" => Container,
            "value" => Value,
            "startcontainer" | "sourcecontainer" => StartContainer,
            "endcontainer" | "destcontainer" => EndContainer,
            "startcontainertype" | "sourcecontainertype" => StartContainerType,
            "endcontainertype" | "destcontainertype" => EndContainerType,
            "key" => Key,
            "size" => Size,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        use Field::*;
        match self {
            Time => "Time",
            Alias => "Alias",
            Name => "Name",
            Type => "Type",
            Container => "Container",
            Value => "Value",
            StartContainer => "StartContainer",
            EndContainer => "EndContainer",
            StartContainerType => "StartContainerType",
            EndContainerType => "EndContainerType",
            Key => "Key",
            Size => "Size",
        }
    }
}

/// An event definition of the header.
#[derive(Debug, Clone)]
struct Def {
    kind: Option<Kind>,
    /// The event's name as the header gives it.
    name: String,
    /// Number of fields after the id.
    count: usize,
    /// Where each understood field is among them (small: it is copied for each record;
    /// a field beyond the 65,535th is not found).
    at: [Option<u16>; FIELDS],
    /// Line of the `%EventDef`.
    line: u64,
    /// Why its records cannot be read (reported once, at the definition).
    broken: bool,
}

impl Def {
    fn get(&self, f: Field) -> Option<usize> {
        self.at[f as usize].map(usize::from)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TypeKind {
    Container,
    State,
    Variable,
    Event,
    Link,
}

impl TypeKind {
    fn word(self) -> &'static str {
        match self {
            TypeKind::Container => "a container type",
            TypeKind::State => "a state type",
            TypeKind::Variable => "a variable type",
            TypeKind::Event => "an event type",
            TypeKind::Link => "a link type",
        }
    }
}

#[derive(Debug)]
struct PType {
    kind: TypeKind,
    name: String,
    /// Its entity values, by alias and by name: their names.
    values: NameMap<String>,
    /// The states of a state type met so far, by the value a record gives (an alias or a
    /// name): the state's number and code (forgotten when a value is defined).
    states: NameMap<(u32, i64)>,
}

#[derive(Debug)]
struct Container {
    name: String,
    /// Its type (`usize::MAX`: the root type).
    ty: usize,
    /// The state types it has a stack of states for (to end them when it is destroyed).
    state_types: Vec<usize>,
    /// The parent container, `None` for the root's children.
    parent: Option<usize>,
    processor: i64,
}

/// Link ends waiting for their other end, by link type and key: found by the key as read,
/// without copying it.
#[derive(Default)]
struct Waiting {
    by_type: FastMap<usize, NameMap<LinkEnd>>,
    len: usize,
}

impl Waiting {
    fn get(&self, ty: usize, key: &str) -> Option<&LinkEnd> {
        self.by_type.get(&ty)?.get(key)
    }

    fn remove(&mut self, ty: usize, key: &str) -> Option<LinkEnd> {
        let end = self.by_type.get_mut(&ty)?.remove(key)?;
        self.len -= 1;
        Some(end)
    }

    fn insert(&mut self, ty: usize, key: &str, end: LinkEnd) {
        self.by_type.entry(ty).or_default().insert(key, end);
        self.len += 1;
    }

    fn drain(&mut self) -> impl Iterator<Item = LinkEnd> + '_ {
        self.len = 0;
        self.by_type
            .drain()
            .flat_map(|(_, mut ends)| ends.drain_values().collect::<Vec<_>>())
    }
}

/// One end of a link waiting for the other.
#[derive(Debug)]
struct LinkEnd {
    time: f64,
    /// Its place among records of the same time.
    seq: u64,
    line: u64,
    column: usize,
    processor: i64,
    value: String,
    bytes: i64,
    text: String,
}

/// Reads a Pajé trace as PICL-layout records; see the module documentation.
pub struct PajeReader<R> {
    inner: R,
    source_name: String,
    buf: Vec<u8>,
    line_no: u64,
    /// Records and errors on their way out, and what is counted.
    out: Outgoing,
    defs: FastMap<String, Def>,
    /// The definitions of small numeric ids (as most traces number their events), by id:
    /// found without hashing.
    numbered: Vec<Option<Def>>,
    /// The definition being read (between `%EventDef` and `%EndEventDef`).
    open_def: Option<(String, Def)>,
    types: NameMap<usize>,
    type_list: Vec<PType>,
    containers: NameMap<usize>,
    container_list: Vec<Container>,
    /// Open states by (container, state type), innermost last: (name, code).
    stacks: FastMap<(usize, usize), Vec<(u32, i64)>>,
    states: States,
    variables: FastMap<(usize, usize), f64>,
    /// Link ends waiting for the other end, by (link type, key): starts and ends.
    starts: Waiting,
    ends: Waiting,
    /// Times of the waiting link ends, earliest first (entries whose end has come are
    /// skipped when they reach the top).
    waiting: BinaryHeap<std::cmp::Reverse<(u64, u64)>>,
    /// The places (`seq`) of the link ends still waiting.
    waiting_seqs: HashSet<u64, BuildHasherDefault<FastHasher>>,
    /// The top of `waiting` is known to be still waiting (no end has come since it was
    /// checked): `due` need not look it up again.
    top_waits: bool,
    variable_keys: Codes,
    event_keys: Codes,
    /// Messages matched so far: the next message's tag.
    messages: i64,
    /// Latest time read.
    high: f64,
    seq: u64,
    tokens: Vec<Token>,
}

impl PajeReader<BufReader<File>> {
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

/// Times as sortable integers (finite times only): the order of `f64::total_cmp`.
fn time_key(t: f64) -> u64 {
    let bits = t.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

fn time_of_key(k: u64) -> f64 {
    let bits = if k >> 63 == 1 { k & !(1 << 63) } else { !k };
    f64::from_bits(bits)
}

/// One token of a record line: its byte offset and its text (without quotes).
type Token = (usize, std::ops::Range<usize>);

/// Splits a record line into tokens: runs of non-blanks, or `"..."` (which may hold blanks).
fn tokenize(line: &str, out: &mut Vec<Token>) -> Result<(), (usize, String)> {
    out.clear();
    let b = line.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t' || b[i] == b'\r') {
            i += 1;
        }
        if i == b.len() {
            return Ok(());
        }
        let start = i;
        if b[i] == b'"' {
            match b[i + 1..].iter().position(|&c| c == b'"') {
                Some(n) => {
                    out.push((start, i + 1..i + 1 + n));
                    i += n + 2;
                }
                None => {
                    return Err((
                        start + 1,
                        "unterminated quoted string: expected a closing `\"` before the end of the line".to_owned(),
                    ))
                }
            }
        } else {
            while i < b.len() && !(b[i] == b' ' || b[i] == b'\t' || b[i] == b'\r') {
                i += 1;
            }
            out.push((start, start..i));
        }
    }
}

/// A problem with one record: where in its line, what kind, and what to say.
struct Bad(usize, TraceErrorKind, String);

impl<R: BufRead> PajeReader<R> {
    pub fn new(reader: R, source_name: String, options: ReadOptions) -> Self {
        PajeReader {
            inner: reader,
            source_name,
            buf: Vec::with_capacity(256),
            line_no: 0,
            out: Outgoing::new(options.strict),
            defs: FastMap::default(),
            numbered: Vec::new(),
            open_def: None,
            types: NameMap::default(),
            type_list: Vec::new(),
            containers: NameMap::default(),
            container_list: Vec::new(),
            stacks: FastMap::default(),
            states: States::starting_at(1),
            variables: FastMap::default(),
            starts: Waiting::default(),
            ends: Waiting::default(),
            waiting: BinaryHeap::new(),
            waiting_seqs: HashSet::default(),
            top_waits: false,
            variable_keys: Codes::starting_at(0),
            event_keys: Codes::starting_at(0),
            messages: 0,
            high: f64::NEG_INFINITY,
            seq: 0,
            tokens: Vec::with_capacity(8),
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

    /// Records up to this time (and place) can go out: the input has passed it, and no
    /// waiting link end is earlier.
    fn due(&mut self) -> (f64, Tie) {
        while let Some(std::cmp::Reverse((t, seq))) = self.waiting.peek().copied() {
            if self.top_waits || self.waiting_seqs.contains(&seq) {
                self.top_waits = true;
                return (time_of_key(t), Tie::Input(seq - 1));
            }
            self.waiting.pop();
        }
        (self.high, Tie::Input(u64::MAX))
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Reads and acts on one line of the input.
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
                if let Err(Bad(column, kind, message)) = self.line(text) {
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

    /// Acts on one line: a header line, a comment, or a record.
    fn line(&mut self, text: &str) -> Result<(), Bad> {
        let trimmed = text.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return Ok(());
        }
        if let Some(rest) = trimmed.strip_prefix('%') {
            let column = text.len() - rest.len() + 1;
            return self.header(rest, column);
        }
        self.record(text)
    }

    /// A header line (after its `%`, which is at `column - 1`).
    fn header(&mut self, rest: &str, column: usize) -> Result<(), Bad> {
        let mut words = rest.split_whitespace();
        let Some(first) = words.next() else {
            return Ok(());
        };
        match first {
            "EventDef" => {
                let name = words.next();
                let id = words.next();
                let (Some(name), Some(id)) = (name, id) else {
                    return Err(Bad(
                        column,
                        TraceErrorKind::Syntax,
                        "`%EventDef` needs an event name and an id".to_owned(),
                    ));
                };
                if let Some((_, open)) = &self.open_def {
                    let line = open.line;
                    self.open_def = None;
                    return Err(Bad(
                        column,
                        TraceErrorKind::Syntax,
                        format!("`%EventDef` inside the definition begun on line {line} (its `%EndEventDef` is missing); that definition is dropped"),
                    ));
                }
                let kind = Kind::of(name);
                let def = Def {
                    kind,
                    name: name.to_owned(),
                    count: 0,
                    at: [None; FIELDS],
                    line: self.line_no,
                    broken: false,
                };
                self.open_def = Some((id.to_owned(), def));
                if kind.is_none() {
                    return Err(Bad(
                        column + rest.find(name).unwrap_or(0),
                        TraceErrorKind::Undefined,
                        format!("unknown Pajé event `{name}`: its records are skipped"),
                    ));
                }
                Ok(())
            }
            "EndEventDef" => {
                let Some((id, mut def)) = self.open_def.take() else {
                    return Err(Bad(
                        column,
                        TraceErrorKind::Syntax,
                        "`%EndEventDef` without its `%EventDef`".to_owned(),
                    ));
                };
                let missing: Vec<&str> = def
                    .kind
                    .map(Kind::required)
                    .unwrap_or(&[])
                    .iter()
                    .filter(|f| def.get(**f).is_none())
                    .map(|f| f.name())
                    .collect();
                let problem = (!missing.is_empty()).then(|| {
                    format!(
                        "the definition of {} (event {id}, line {}) lacks the field(s) {}: its records are skipped",
                        def.name,
                        def.line,
                        missing.join(", ")
                    )
                });
                def.broken = def.kind.is_none() || problem.is_some();
                match id.parse::<usize>() {
                    Ok(n) if n < MAX_NUMBERED => {
                        if self.numbered.len() <= n {
                            self.numbered.resize(n + 1, None);
                        }
                        self.numbered[n] = Some(def);
                    }
                    _ => {
                        self.defs.insert(id, def);
                    }
                }
                match problem {
                    Some(message) => Err(Bad(column, TraceErrorKind::Syntax, message)),
                    None => Ok(()),
                }
            }
            field => {
                // A field of the definition being read; `%` lines elsewhere are comments.
                let Some((_, def)) = &mut self.open_def else {
                    return Ok(());
                };
                let index = def.count;
                def.count += 1;
                if let Some(f) = Field::of(field) {
                    if def.at[f as usize].is_none() {
                        def.at[f as usize] = u16::try_from(index).ok();
                    }
                }
                Ok(())
            }
        }
    }

    /// A record line.
    fn record(&mut self, text: &str) -> Result<(), Bad> {
        let mut tokens = std::mem::take(&mut self.tokens);
        let done = tokenize(text, &mut tokens)
            .map_err(|(c, m)| Bad(c, TraceErrorKind::Syntax, m))
            .and_then(|()| self.event(text, &tokens));
        self.tokens = tokens;
        done
    }

    /// Acts on a record line split into `tokens`.
    fn event(&mut self, text: &str, tokens: &[Token]) -> Result<(), Bad> {
        let tok = |i: usize| &text[tokens[i].1.clone()];
        let id = tok(0);
        let numbered = crate::parse::parse_int(id.as_bytes())
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n < MAX_NUMBERED && id.bytes().all(|b| b.is_ascii_digit()));
        let def = match numbered {
            Some(n) => self.numbered.get(n).and_then(Option::as_ref),
            None => self.defs.get(id),
        };
        let Some(def) = def else {
            return Err(Bad(
                tokens[0].0 + 1,
                TraceErrorKind::Undefined,
                format!("no `%EventDef` in the header defines event `{id}`"),
            ));
        };
        if def.broken {
            self.out.stats.ignored += 1;
            return Ok(());
        }
        let given = tokens.len() - 1;
        if given != def.count {
            let (column, what) = if given < def.count {
                (text.trim_end().len() + 1, "too few")
            } else {
                (tokens[def.count + 1].0 + 1, "too many")
            };
            return Err(Bad(
                column,
                TraceErrorKind::Syntax,
                format!(
                    "{what} fields: {} (event {id}, defined on line {}) has {}, this record {given}",
                    def.name, def.line, def.count
                ),
            ));
        }
        let (kind, at) = (
            def.kind.expect("definitions without a kind are broken"),
            def.at,
        );
        let field = |f: Field| {
            at[f as usize].map(|i| {
                let i = usize::from(i) + 1;
                (tokens[i].0 + 1, tok(i))
            })
        };
        let get = |f: Field| field(f).expect("required fields are checked at the definition");
        let time = match field(Field::Time) {
            Some((column, t)) => {
                let t = parse_real(t).filter(|t| t.is_finite()).ok_or_else(|| {
                    Bad(
                        column,
                        TraceErrorKind::Syntax,
                        format!("expected a time in seconds, found `{t}`"),
                    )
                })?;
                t
            }
            None => f64::NAN,
        };
        use Kind::*;
        match kind {
            DefineContainerType | DefineStateType | DefineVariableType | DefineEventType
            | DefineLinkType => {
                let kind = match kind {
                    DefineContainerType => TypeKind::Container,
                    DefineStateType => TypeKind::State,
                    DefineVariableType => TypeKind::Variable,
                    DefineEventType => TypeKind::Event,
                    _ => TypeKind::Link,
                };
                let (_, name) = get(Field::Name);
                self.type_of(get(Field::Type), None)?;
                if kind == TypeKind::Link {
                    self.type_of(get(Field::StartContainerType), None)?;
                    self.type_of(get(Field::EndContainerType), None)?;
                }
                let index = self.type_list.len();
                self.type_list.push(PType {
                    kind,
                    name: name.to_owned(),
                    values: NameMap::default(),
                    states: NameMap::default(),
                });
                if let Some((_, alias)) = field(Field::Alias) {
                    self.types.insert(alias, index);
                }
                self.types.get_or_insert_with(name, || index);
                self.out.stats.ignored += 1;
            }
            DefineEntityValue => {
                let (_, name) = get(Field::Name);
                let ty = self.type_of(get(Field::Type), None)?;
                // `0` (the root type) has no values to name.
                if let Some(ty) = self.type_list.get_mut(ty) {
                    if let Some((_, alias)) = field(Field::Alias) {
                        ty.values.insert(alias, name.to_owned());
                    }
                    ty.values.get_or_insert_with(name, || name.to_owned());
                    // A value met before as a bare word may now be an alias.
                    ty.states.clear();
                }
                self.out.stats.ignored += 1;
            }
            CreateContainer => {
                let (_, name) = get(Field::Name);
                let ty = self.type_of(get(Field::Type), Some(TypeKind::Container))?;
                let parent = self.container_of(get(Field::Container))?;
                self.high = self.high.max(time);
                let index = self.container_list.len();
                self.container_list.push(Container {
                    name: name.to_owned(),
                    ty,
                    state_types: Vec::new(),
                    parent,
                    processor: index as i64,
                });
                if let Some((_, alias)) = field(Field::Alias) {
                    self.containers.insert(alias, index);
                }
                self.containers.get_or_insert_with(name, || index);
                self.life(ENTRY, index, time);
            }
            DestroyContainer => {
                let (column, name) = get(Field::Name);
                self.type_of(get(Field::Type), Some(TypeKind::Container))?;
                let Some(c) = self.container_of((column, name))? else {
                    // Destroying the root ends the trace (SimGrid writes it last): its
                    // states end at the end of the input anyway.
                    self.high = self.high.max(time);
                    self.out.stats.ignored += 1;
                    return Ok(());
                };
                self.high = self.high.max(time);
                self.close_states(c, time, self.line_no);
                self.life(EXIT, c, time);
            }
            SetVariable | AddVariable | SubVariable => {
                let c = self.container_of(get(Field::Container))?;
                let ty = self.type_of(get(Field::Type), Some(TypeKind::Variable))?;
                let (column, v) = get(Field::Value);
                let v = parse_real(v).filter(|v| v.is_finite()).ok_or_else(|| {
                    Bad(
                        column,
                        TraceErrorKind::Syntax,
                        format!("expected a number value, found `{v}`"),
                    )
                })?;
                self.high = self.high.max(time);
                let key = (c.unwrap_or(usize::MAX), ty);
                let value = self.variables.entry(key).or_insert(0.0);
                *value = match kind {
                    SetVariable => v,
                    AddVariable => *value + v,
                    _ => *value - v,
                };
                let new = *value;
                let processor = self.processor(c);
                let name = &self.type_list[ty].name;
                let code = self.variable_keys.code(name);
                let mut r = layout::blank(&mut self.out.spare);
                Fill::start(&mut r, self.line_no, MARK, VALUE, time, processor, 0)
                    .real(new)
                    .int(code)
                    .int(-1)
                    .str(name)
                    .done();
                self.push(time, r);
            }
            SetState | PushState => {
                let c = self.container_of(get(Field::Container))?;
                let (type_column, type_name) = get(Field::Type);
                let ty = self.type_of((type_column, type_name), Some(TypeKind::State))?;
                let (_, value) = get(Field::Value);
                let (name_id, code) = self.state_of(ty, value);
                self.high = self.high.max(time);
                let key = (c.unwrap_or(usize::MAX), ty);
                if kind == SetState {
                    self.pop_states(key, time, self.line_no, usize::MAX);
                }
                let stack = self.stacks.entry(key).or_default();
                if kind == PushState && stack.len() >= MAX_OPEN {
                    return Err(Bad(
                        type_column,
                        TraceErrorKind::Limit,
                        format!("more than {MAX_OPEN} states pushed on one container; this one is left out"),
                    ));
                }
                if stack.is_empty() {
                    if let Some(c) = c {
                        let types = &mut self.container_list[c].state_types;
                        if !types.contains(&ty) {
                            types.push(ty);
                        }
                    }
                }
                stack.push((name_id, code));
                let processor = self.processor(c);
                let mut r = layout::blank(&mut self.out.spare);
                Fill::start(&mut r, self.line_no, ENTRY, code, time, processor, 0)
                    .int(0)
                    .int(-1)
                    .int(-1)
                    .str(self.states.name(name_id))
                    .str(&self.type_list[ty].name)
                    .done();
                self.push(time, r);
            }
            PopState | ResetState => {
                let c = self.container_of(get(Field::Container))?;
                let (type_column, type_name) = get(Field::Type);
                let ty = self.type_of((type_column, type_name), Some(TypeKind::State))?;
                self.high = self.high.max(time);
                let key = (c.unwrap_or(usize::MAX), ty);
                let open = self.stacks.get(&key).map_or(0, Vec::len);
                if kind == PopState && open == 0 {
                    return Err(Bad(
                        type_column,
                        TraceErrorKind::Unmatched,
                        format!("PajePopState with no state of type `{type_name}` pushed on this container"),
                    ));
                }
                let n = if kind == PopState { 1 } else { usize::MAX };
                self.pop_states(key, time, self.line_no, n);
            }
            StartLink | EndLink => {
                let (type_column, type_name) = get(Field::Type);
                let ty = self.type_of((type_column, type_name), Some(TypeKind::Link))?;
                self.container_of(get(Field::Container))?;
                let end_field = if kind == StartLink {
                    Field::StartContainer
                } else {
                    Field::EndContainer
                };
                let (end_column, end_name) = get(end_field);
                let end = self.container_of((end_column, end_name))?;
                let (_, value) = get(Field::Value);
                let (key_column, key) = get(Field::Key);
                let bytes = match field(Field::Size) {
                    Some((column, s)) => parse_real(s)
                        .filter(|s| s.is_finite() && s.abs() < 9.0e15)
                        .map(|s| s.round() as i64)
                        .ok_or_else(|| {
                            Bad(
                                column,
                                TraceErrorKind::Syntax,
                                format!("expected a number of bytes, found `{s}`"),
                            )
                        })?,
                    None => 0,
                };
                let waiting_here = if kind == StartLink {
                    &self.starts
                } else {
                    &self.ends
                };
                if let Some(old) = waiting_here.get(ty, key) {
                    return Err(Bad(
                        key_column,
                        TraceErrorKind::Unmatched,
                        format!(
                            "a link of type `{type_name}` with key `{key}` already waits for its other end (line {}); this one is left out",
                            old.line
                        ),
                    ));
                }
                let other = if kind == StartLink {
                    self.ends.remove(ty, key)
                } else {
                    self.starts.remove(ty, key)
                };
                if other.is_none() && self.starts.len + self.ends.len >= MAX_OPEN {
                    return Err(Bad(
                        key_column,
                        TraceErrorKind::Limit,
                        format!("more than {MAX_OPEN} links wait for their other end; this one is left out"),
                    ));
                }
                self.high = self.high.max(time);
                // Four places among records of its time: the entry and exit of its side of
                // the message, and room for the other side after them (see `message`).
                let seq = self.next_seq();
                self.seq += 3;
                let here = LinkEnd {
                    time,
                    seq,
                    line: self.line_no,
                    column: end_column,
                    processor: self.processor(end),
                    // Kept only while it waits, as the text below.
                    value: String::new(),
                    bytes,
                    // Kept only while it waits, for the error if its other end never comes.
                    text: String::new(),
                };
                match other {
                    Some(other) => {
                        self.waiting_seqs.remove(&other.seq);
                        self.top_waits = false;
                        let (start, end) = if kind == StartLink {
                            ((&here, value), (&other, other.value.as_str()))
                        } else {
                            ((&other, other.value.as_str()), (&here, value))
                        };
                        self.message(ty, key, start, end);
                        // Link ends take turns waiting: their texts' storage is kept.
                        layout::keep_string(other.value);
                        layout::keep_string(other.text);
                    }
                    None => {
                        let mut here = here;
                        here.text = layout::spare_string();
                        here.text.push_str(text);
                        here.value = layout::spare_string();
                        here.value.push_str(value);
                        self.waiting.push(std::cmp::Reverse((time_key(time), seq)));
                        self.waiting_seqs.insert(seq);
                        if kind == StartLink {
                            self.starts.insert(ty, key, here);
                        } else {
                            self.ends.insert(ty, key, here);
                        }
                    }
                }
            }
            NewEvent => {
                let c = self.container_of(get(Field::Container))?;
                let ty = self.type_of(get(Field::Type), Some(TypeKind::Event))?;
                let (_, value) = get(Field::Value);
                let type_name = &self.type_list[ty].name;
                let name = self.type_list[ty]
                    .values
                    .get(value)
                    .map_or(value, String::as_str);
                self.high = self.high.max(time);
                let processor = self.processor(c);
                let code = self.event_keys.code(type_name);
                let mut r = layout::blank(&mut self.out.spare);
                Fill::start(&mut r, self.line_no, MARK, EVENT, time, processor, 0)
                    .int(0)
                    .int(code)
                    .int(-1)
                    .str(type_name)
                    .str(name)
                    .done();
                self.push(time, r);
            }
        }
        Ok(())
    }

    fn push(&mut self, time: f64, record: Record) {
        let seq = self.next_seq();
        self.out.reorder.push(time, Tie::Input(seq), record);
    }

    /// The record of container `c` created (`ENTRY`) or destroyed (`EXIT`) at `time`.
    fn life(&mut self, rtype: i64, c: usize, time: f64) {
        let container = &self.container_list[c];
        let parent = container
            .parent
            .map_or("0", |p| self.container_list[p].name.as_str());
        let mut r = layout::blank(&mut self.out.spare);
        Fill::start(
            &mut r,
            self.line_no,
            rtype,
            LIFE,
            time,
            container.processor,
            0,
        )
        .int(0)
        .int(-1)
        .int(-1)
        .str(&container.name)
        .str(self.type_name(container.ty))
        .str(parent)
        .done();
        self.push(time, r);
    }

    /// The state a record of state type `ty` gives as `value` (an entity value's alias or
    /// name, or a name of its own): its number and code.
    fn state_of(&mut self, ty: usize, value: &str) -> (u32, i64) {
        let t = &mut self.type_list[ty];
        if let Some(&known) = t.states.get(value) {
            return known;
        }
        let name = t.values.get(value).map_or(value, String::as_str);
        let state = self.states.state(name);
        // Bounded as the names are: beyond, values are looked up each time.
        if t.states.len() < layout::MAX_CODES {
            t.states.insert(value, state);
        }
        state
    }

    /// The processor of a container (`None`: the root, -1).
    fn processor(&self, c: Option<usize>) -> i64 {
        c.map_or(-1, |c| self.container_list[c].processor)
    }

    /// The name of type `t` (`0` for the root type).
    fn type_name(&self, t: usize) -> &str {
        self.type_list.get(t).map_or("0", |t| t.name.as_str())
    }

    /// The type named (by alias or name) at `column`, which must be of `kind` if given;
    /// `0`, unless a trace defines a type so named, is the root type (`usize::MAX`), the
    /// parent of the top container types.
    fn type_of(&self, (column, name): (usize, &str), kind: Option<TypeKind>) -> Result<usize, Bad> {
        let Some(&t) = self.types.get(name) else {
            if name == "0" && kind.is_none_or(|k| k == TypeKind::Container) {
                return Ok(usize::MAX);
            }
            return Err(Bad(
                column,
                TraceErrorKind::Undefined,
                format!("no type `{name}` is defined"),
            ));
        };
        match kind {
            Some(k) if self.type_list[t].kind != k => Err(Bad(
                column,
                TraceErrorKind::Undefined,
                format!(
                    "`{name}` is {}, not {}",
                    self.type_list[t].kind.word(),
                    k.word()
                ),
            )),
            _ => Ok(t),
        }
    }

    /// The container named (by alias or name) at `column`; `None` for the root, `0`.
    fn container_of(&self, (column, name): (usize, &str)) -> Result<Option<usize>, Bad> {
        match self.containers.get(name) {
            Some(&c) => Ok(Some(c)),
            None if name == "0" => Ok(None),
            None => Err(Bad(
                column,
                TraceErrorKind::Undefined,
                format!("no container `{name}` has been created"),
            )),
        }
    }

    /// Ends up to `n` of the states open on `key`, innermost first, at `time`.
    fn pop_states(&mut self, key: (usize, usize), time: f64, line: u64, n: usize) {
        let processor = self.processor((key.0 != usize::MAX).then_some(key.0));
        for _ in 0..n {
            let Some((name, code)) = self.stacks.get_mut(&key).and_then(Vec::pop) else {
                return;
            };
            let mut r = layout::blank(&mut self.out.spare);
            Fill::start(&mut r, line, EXIT, code, time, processor, 0)
                .int(0)
                .int(-1)
                .int(-1)
                .str(self.states.name(name))
                .str(&self.type_list[key.1].name)
                .done();
            self.push(time, r);
        }
    }

    /// Ends every state open on container `c`.
    fn close_states(&mut self, c: usize, time: f64, line: u64) {
        let mut types = std::mem::take(&mut self.container_list[c].state_types);
        types.sort_unstable();
        for ty in types {
            self.pop_states((c, ty), time, line, usize::MAX);
            self.stacks.remove(&(c, ty));
        }
    }

    /// The records of a message: the send's entry and exit at the start, the receive's at
    /// the end, each in the place its end had among the records of its time; a receive
    /// written before its send comes after the send's records (in the room its start kept).
    fn message(
        &mut self,
        ty: usize,
        key: &str,
        (start, start_value): (&LinkEnd, &str),
        (end, end_value): (&LinkEnd, &str),
    ) {
        let tag = self.messages;
        self.messages += 1;
        let bytes = if start.bytes != 0 {
            start.bytes
        } else {
            end.bytes
        };
        let receive_at = if end.seq > start.seq {
            end.seq
        } else {
            start.seq + 2
        };
        for (side, value, etype, partner, seq) in [
            (start, start_value, SEND, end.processor, start.seq),
            (end, end_value, RECEIVE, start.processor, receive_at),
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
                    0,
                )
                .int(bytes)
                .int(tag)
                .int(partner)
                .str(&self.type_list[ty].name)
                .str(value)
                .str(key)
                .done();
                self.out.reorder.push(side.time, Tie::Input(seq), r);
            }
        }
    }

    /// At the end of the input: states still open end at the latest time, and links whose
    /// other end never came are reported.
    fn close_open(&mut self) {
        let mut keys: Vec<(usize, usize)> = self.stacks.keys().copied().collect();
        keys.sort_unstable();
        let (time, line) = (self.high, self.line_no);
        for key in keys {
            self.pop_states(key, time, line, usize::MAX);
        }
        self.stacks.clear();
        let mut lost: Vec<(LinkEnd, bool)> = self
            .starts
            .drain()
            .map(|e| (e, true))
            .chain(self.ends.drain().map(|e| (e, false)))
            .collect();
        lost.sort_by_key(|(e, _)| e.line);
        for (e, start) in lost {
            let message = if start {
                "this link never ends (no PajeEndLink of its type with its key)"
            } else {
                "this link never starts (no PajeStartLink of its type with its key)"
            };
            self.out.stats.unmatched += 1;
            self.error(
                e.line,
                e.column,
                TraceErrorKind::Unmatched,
                message.to_owned(),
                &e.text,
            );
        }
        self.waiting.clear();
        self.waiting_seqs.clear();
        self.top_waits = false;
    }
}

impl<R: BufRead> Iterator for PajeReader<R> {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_reusing(None)
    }
}

impl<R: BufRead> Adapter for PajeReader<R> {
    fn outgoing(&mut self) -> &mut Outgoing {
        &mut self.out
    }

    fn due(&mut self) -> (f64, Tie) {
        Self::due(self)
    }

    fn read_more(&mut self) {
        self.read_one();
    }

    fn finish(&mut self) {
        self.close_open();
    }
}
