//! The EPIRA runtime: a compiled visual object comes alive.
//!
//! For each event (seed 004 §3.1): the condition `before` parts of every EP component whose
//! condition holds, then the event parts of every EP component that takes the event (after
//! its `preprocess-inputs` glue), then the `after` parts; then, in asynchronous mode, phase 1
//! of every enabled IR component in order and phase 2 (`end-with`) of those that ran. In
//! synchronous mode the rendering runs on a clock tick of trace time instead.
//!
//! The runtime does no I/O of its own: records come from the caller, drawing goes to the
//! low-level layer ([`voml_llvo::Llvo`]) whose back end decides where pixels go.
//!
//! Faults are contained: a Scheme error or runaway code in a component is reported with the
//! `.voml` location, the component and the record, and the component is disabled (or the run
//! stops in strict mode).

mod boundary;
mod changes;
mod deferred;
mod edit;
mod event_reads;
pub mod fault;
pub mod host;
mod literals;
pub mod memory;
pub mod names;
mod native_body;
mod native_render;
pub mod prelude;
pub mod profile;
mod reload;
pub mod sandbox;
pub mod state;
mod watchdog;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use steel::rvals::SteelVal;
use steel::steel_vm::engine::Engine;
use steel::SteelErr;
use voml_ir::{CompiledVo, FieldType, RenderMode, Span};
use voml_llvo::{
    AdaptMode, Adaptation, Backend, BackendEvent, Color, LazyRaster, Llvo, OwnerId, Status,
    ViewSpec,
};
use voml_trace::{Record, Value};

pub use edit::EditError;
pub use fault::{Action, DrawingNote, EventRef, Fault, FaultKind};
use host::Host;
pub use host::{Snapshot, SoundCommand, TimedSound};
pub use profile::ProfileRow;
pub use reload::Adopted;

/// Record type of the runtime's callback events (start and end of input, clock ticks,
/// view resizes), so that EP components can take them like data events.
pub const CALLBACK_RTYPE: i64 = voml_ir::vocabulary::CALLBACK_RECORD_TYPE;
/// Event types of callback events: fields are listed beside each.
pub mod callback {
    /// Start of input: `ts`.
    pub const START: i64 = 1;
    /// End of input: `ts records bad-lines`.
    pub const END: i64 = 2;
    /// A clock tick in synchronous mode: `ts`.
    pub const TICK: i64 = 3;
    /// A view was resized: `ts view width height`.
    pub const RESIZE: i64 = 4;
    /// A key was pressed: `ts view key` (view -1 when unknown; the key as a string).
    pub const KEY: i64 = 5;
    /// A click in a view: `ts view x y button` (world coordinates; 1 left, 2 middle, 3 right).
    pub const CLICK: i64 = 6;
    /// The wall-clock timer (`timer`): `ts wall-seconds` (trace time now; since the start).
    pub const TIMER: i64 = 7;
}

/// How to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Stop at the first fault instead of disabling the faulty component.
    pub strict: bool,
    /// The time all the code run for one event may take before it is interrupted.
    pub budget: Duration,
    /// Whether `<snapshot>` may take pictures (the driver has a sink for them); if not, it
    /// fails with a message.
    pub snapshots: bool,
    /// The most heap the VO's code may hold (net bytes allocated while it runs) before the
    /// running part is interrupted and disabled.
    pub memory_limit: usize,
    /// Time every part of every component (see [`Runtime::profile`]).
    pub profile: bool,
    /// Draw a display that only shows the state of its moment (`refresh="update changed"`,
    /// alone in its views) when a picture is needed rather than in every round (see
    /// [`Runtime::settle`]). Off, every round draws every display, as the paper's runtime.
    /// In asynchronous mode a round follows every event, so that a display drawn later
    /// draws the state of its last round; in synchronous mode records change the state
    /// between rounds, so displays are deferred only with `pictures_at_end`.
    pub defer_displays: bool,
    /// No picture is looked at before the run ends ([`Runtime::finish`] draws the last
    /// round): a headless run that writes no frame files and takes no commands. Displays are
    /// then deferred in synchronous mode too.
    pub pictures_at_end: bool,
}

/// The inputs (EP component, input) that take one (record type, event type).
type Targets = Rc<[(usize, usize)]>;

/// Which inputs take each (record type, event type): a sorted table searched without
/// hashing, since a visual object declares few event types and every record is looked up.
struct Dispatch {
    keys: Vec<(i64, i64)>,
    targets: Vec<Targets>,
}

impl Dispatch {
    fn new(map: HashMap<(i64, i64), Vec<(usize, usize)>>) -> Dispatch {
        let mut entries: Vec<_> = map.into_iter().collect();
        entries.sort_by_key(|e| e.0);
        Dispatch {
            keys: entries.iter().map(|e| e.0).collect(),
            targets: entries.into_iter().map(|e| e.1.into()).collect(),
        }
    }

    fn get(&self, rtype: i64, etype: i64) -> Option<&Targets> {
        let i = self.keys.binary_search(&(rtype, etype)).ok()?;
        Some(&self.targets[i])
    }
}

/// What faults are grouped by when the log counts repeats: kind, component, part.
type FaultKey = (FaultKind, Option<String>, Option<String>);

/// Pairs of record types whose skipping [`Runtime::skips`] remembers at once.
const SKIPPING: usize = 64;

/// A pair of record types, and whether its records skip the visual object.
type Skip = ((i64, i64), bool);

/// At most this many faults are kept in full by a runtime; the rest are counted.
pub const MAX_FAULTS_KEPT: usize = 1000;
/// At most this many faults of one kind from one part are kept in full.
pub const MAX_REPEATS_KEPT: usize = 3;
/// At most this many distinct drawing notes are kept; the rest are counted.
pub const MAX_DRAWING_NOTES: usize = 64;

/// The default [`Config::memory_limit`]: 512 MiB.
pub const DEFAULT_MEMORY_LIMIT: usize = 512 << 20;

impl Default for Config {
    fn default() -> Config {
        Config {
            strict: false,
            budget: Duration::from_millis(250),
            snapshots: false,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            profile: false,
            defer_displays: true,
            pictures_at_end: false,
        }
    }
}

/// Counters of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Records given to [`Runtime::process`].
    pub records: u64,
    /// Records some EP component took.
    pub matched: u64,
    /// Renders (rounds of IR phase 1 and 2).
    pub renders: u64,
    /// Rounds IR components skipped because nothing they read had changed
    /// (`refresh="changed"`).
    pub unchanged: u64,
    /// Rounds deferred displays skipped, to draw when a picture is needed.
    pub deferred: u64,
    /// Records or parts skipped because of bad fields.
    pub skipped: u64,
    /// Input and condition parts carried out without Scheme ([`voml_ir::NativeBody`]).
    pub native: u64,
    /// IR components' phase-1 rounds evaluated without Scheme ([`voml_ir::NativeRender`]).
    pub native_renders: u64,
    /// The timestamp of the first record: where trace time starts for sound and pictures.
    pub first_ts: Option<f64>,
}

/// The run cannot go on (strict mode, or the engine cannot be used any more).
#[derive(Debug)]
pub struct Stop(pub Box<Fault>);

/// A visual object's request to pause the replay (`<pause>`): seed 003's pseudo-meters.
#[derive(Clone, Debug, PartialEq)]
pub struct Trigger {
    /// The reason the VO gave (may be empty).
    pub reason: String,
    /// The record after which to pause (counted from 1).
    pub record: u64,
    /// Its trace time.
    pub at: f64,
}

/// The visual object could not be loaded into the engine.
#[derive(Debug)]
pub struct LoadError {
    pub message: String,
    pub span: Option<Span>,
    pub location: Option<String>,
    /// The name the program uses and defines nowhere, when that is why it does not load (the
    /// engine's structured error, not its message text).
    pub unbound: Option<String>,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.location {
            Some(loc) => write!(f, "{loc}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

struct EpState {
    name: String,
    handlers: Vec<Option<SteelVal>>,
    /// Per input: its part's native forms, ready for this engine ([`native_render`]).
    forms: Vec<Option<native_render::Prepared>>,
    /// Per input: (record position, declared type, field name) of each argument.
    plans: Vec<Vec<(u32, FieldType, String)>>,
    before: Vec<ConditionState>,
    after: Vec<ConditionState>,
    disabled: bool,
}

/// A condition part's procedures: the part, which tests its condition in Scheme, and, when
/// the IR has a native test for the condition, the part's code alone.
struct ConditionState {
    entry: SteelVal,
    body: Option<SteelVal>,
    /// For a pure condition (see [`voml_ir::ConditionPart::pure`]): when it was last found
    /// false.
    false_at: Option<u64>,
}

struct IrState {
    name: String,
    enable: Option<SteelVal>,
    phase1: Option<SteelVal>,
    phase2: Option<SteelVal>,
    /// `phase1`'s native forms, ready for this engine ([`native_render`]).
    native: Option<native_render::Prepared>,
    owner: OwnerId,
    disabled: bool,
    /// When it last ran to the end, and its views then (see [`changes`]).
    drawn: Option<changes::Drawn>,
    /// For a pure `enable` (see [`voml_ir::IrComponent::enable_pure`]): when it was last
    /// evaluated, and what it gave.
    enabled: Option<(u64, bool)>,
    /// What rounds may do with it: skip it while nothing it reads changed, wait for a
    /// picture to be needed (see [`deferred`]).
    rounds: deferred::Rounds,
    /// It skipped a round since it last ran: the round's record.
    pending: Option<deferred::Pending>,
}

/// The record being processed, for fault reports: borrowed while it runs, copied into an
/// [`EventRef`] only when a fault is recorded.
#[derive(Clone, Copy)]
struct At<'a> {
    record: u64,
    source: &'a str,
    line: u64,
}

impl At<'_> {
    fn owned(self) -> EventRef {
        EventRef {
            record: self.record,
            source: self.source.to_string(),
            line: self.line,
        }
    }
}

/// Where the code that is running came from, for fault reports. Named in words only when a
/// fault is recorded: the code runs for every record, a fault is rare.
#[derive(Clone)]
struct Who {
    part: Part,
    span: Span,
    /// Index for disabling (EP or IR component), and whose name a fault reports.
    target: Target,
}

/// Which part of its component (or view) the running code is.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Part {
    /// The initialisation code of the view of that name.
    ViewInit(String),
    Input(usize),
    Before(usize),
    After(usize),
    Enable,
    Phase1,
    Phase2,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Ep(usize),
    Ir(usize),
    None,
}

pub struct Runtime {
    vo: CompiledVo,
    engine: Engine,
    host: Rc<RefCell<Host>>,
    eps: Vec<EpState>,
    irs: Vec<IrState>,
    /// What EP code may have written, for IR components that skip unchanged rounds.
    changes: changes::Changes,
    dispatch: Dispatch,
    /// Storage for the arguments of an input's handler, kept from call to call.
    args: Vec<SteelVal>,
    /// [`trampolines`], by their number of arguments.
    trampolines: Vec<SteelVal>,
    /// The arguments of a call through a trampoline, kept from call to call.
    call_args: Vec<SteelVal>,
    /// What native input parts keep between events.
    natives: native_body::Natives,
    /// Storage for IR components' native phase-1 forms.
    renders: native_render::Renders,
    /// The IR components a round found enabled, and those whose phase 1 ran (kept from
    /// round to round, see [`Runtime::render`]).
    render_lists: (Vec<usize>, Vec<usize>),
    /// Counts what may change the structures besides native parts (Scheme code run, values
    /// set from outside), so that native parts know when to read them again.
    scheme_runs: u64,
    has_conditions: bool,
    /// Whether anything hears of a resized or rescaled view: a condition part, an input of
    /// the resize callback, a component with `refresh="resize"` or `"rescale"` (when nothing
    /// does, a round does not ask the drawing layer, which would wait for every line handed
    /// over to it).
    resizes_heard: bool,
    /// When the record's types alone decide every condition part ([`decided_by_type`]): per
    /// (record type, event type) seen, sorted, whether every condition fails for them.
    conditions_by_type: Option<Vec<((i64, i64), bool)>>,
    /// Whether records of a pair of types skip the visual object ([`Runtime::skips`]), for
    /// the pairs seen last, by a hash of the pair.
    skipping: Box<[Option<Skip>; SKIPPING]>,
    /// Some code can see the record being processed: a condition part (natively tested or
    /// not), or code that names `current-event` (nothing else can reach it: VO code has no
    /// `eval`). When none can, the record is not copied for it.
    event_visible: bool,
    /// The highest element of a record the program's code reads (`None`: any, or the whole
    /// list), see [`event_reads::reach`].
    event_reach: Option<u32>,
    watchdog: watchdog::Watchdog,
    meter: memory::Meter,
    config: Config,
    faults: Vec<Fault>,
    /// Every fault recorded (kept or not), the last one, and per (kind, component, part) how
    /// many were kept and recorded.
    fault_total: u64,
    last_fault: Option<(Fault, bool)>,
    fault_tally: HashMap<FaultKey, (usize, u64)>,
    /// What the drawing layer adjusted, each message once per component, and how many
    /// notes past [`MAX_DRAWING_NOTES`] were only counted.
    drawing_notes: Vec<DrawingNote>,
    drawing_notes_dropped: u64,
    stats: Stats,
    /// Next trace time at which synchronous mode renders.
    next_tick: Option<f64>,
    started: bool,
    general_owner: OwnerId,
    /// With [`Config::profile`]: calls and time per part, and what loading took.
    /// Time per part, and whether the part ran natively (without Scheme).
    profile: Option<profile::Profile<(Target, Part, bool)>>,
    load_time: Duration,
}

impl Runtime {
    /// Loads a compiled visual object into a fresh sandboxed engine drawing in memory (the
    /// headless raster back end, rasterising only when a picture is taken; like every back
    /// end, driven by the drawing layer on a thread of its own).
    pub fn headless(vo: CompiledVo, config: Config) -> Result<Runtime, LoadError> {
        Runtime::new(vo, Box::new(LazyRaster::new()), config)
    }

    /// Loads a compiled visual object into a fresh sandboxed engine drawing through `backend`.
    pub fn new(
        vo: CompiledVo,
        backend: Box<dyn Backend>,
        config: Config,
    ) -> Result<Runtime, LoadError> {
        let loading = Instant::now();
        let mut vo = vo;
        let sandbox = confined(&vo, false)?;
        // The program the runtime keeps and the engine compiles reads single elements of
        // the event in place ([`event_reads`]); its text keeps every place, so the source map
        // and the places steel reports still hold. How far into the event it reads is then
        // known, when all its reads are of single elements.
        let event_reach = if let Some(text) = event_reads::rewrite(&vo.program.text, &sandbox) {
            let reach = event_reads::reach(&vo.program.text, &text);
            vo.program.text = text;
            reach
        } else {
            event_reads::reach(&vo.program.text, &vo.program.text)
        };
        // Nor does it let the engine cut large literals short ([`literals`]).
        if let Some(text) = literals::rewrite(&vo.program.text, &sandbox) {
            vo.program.text = text;
        }
        let Loaded {
            engine,
            host,
            meter,
            watchdog,
            general_owner,
            irs_owners,
        } = load(sandbox, &vo, backend, &config)?;
        let mut engine = engine;
        let trampolines = trampolines(&mut engine);

        let extract =
            |engine: &Engine, entry: &voml_ir::EntryPoint| -> Result<SteelVal, LoadError> {
                engine.extract_value(&entry.symbol).map_err(|e| LoadError {
                    unbound: None,
                    message: format!(
                        "the compiled program does not define `{}`: {e}",
                        entry.symbol
                    ),
                    span: Some(entry.span),
                    location: Some(vo.locate(entry.span)),
                })
            };
        let mut eps = Vec::new();
        let mut dispatch: HashMap<(i64, i64), Vec<(usize, usize)>> = HashMap::new();
        let mut has_conditions = false;
        for (ci, c) in vo.ep_components.iter().enumerate() {
            let mut handlers = Vec::new();
            let mut plans = Vec::new();
            for (k, input) in c.inputs.iter().enumerate() {
                let event = &vo.events[input.event];
                handlers.push(match &input.handler {
                    Some(h) => Some(extract(&engine, h)?),
                    None => None,
                });
                plans.push(
                    input
                        .fields
                        .iter()
                        .map(|&f| {
                            let field = &event.fields[f];
                            (
                                field.position,
                                field.ty,
                                format!("{}.{}", event.name, field.name),
                            )
                        })
                        .collect(),
                );
                if input.handler.is_some() {
                    dispatch
                        .entry((event.rtype, event.etype))
                        .or_default()
                        .push((ci, k));
                }
            }
            let condition = |p: &voml_ir::ConditionPart| -> Result<ConditionState, LoadError> {
                Ok(ConditionState {
                    false_at: None,
                    entry: extract(&engine, &p.entry)?,
                    body: match &p.native {
                        Some(n) => Some(extract(&engine, &n.body)?),
                        None => None,
                    },
                })
            };
            let before = c
                .before
                .iter()
                .map(condition)
                .collect::<Result<Vec<_>, _>>()?;
            let after = c
                .after
                .iter()
                .map(condition)
                .collect::<Result<Vec<_>, _>>()?;
            has_conditions |= !before.is_empty() || !after.is_empty();
            let forms = c
                .inputs
                .iter()
                .map(|i| {
                    let forms = i.forms.as_ref()?;
                    native_render::Prepared::new(forms, &engine)
                })
                .collect();
            eps.push(EpState {
                name: c.name.clone(),
                handlers,
                forms,
                plans,
                before,
                after,
                disabled: false,
            });
        }
        let mut irs = Vec::new();
        let rounds = deferred::rounds(&vo, &config);
        for ((c, owner), rounds) in vo.ir_components.iter().zip(irs_owners).zip(rounds) {
            let get = |e: &Option<voml_ir::EntryPoint>| -> Result<Option<SteelVal>, LoadError> {
                e.as_ref().map(|e| extract(&engine, e)).transpose()
            };
            irs.push(IrState {
                name: c.name.clone(),
                enable: get(&c.enable)?,
                phase1: get(&c.phase1)?,
                phase2: get(&c.phase2)?,
                native: c
                    .phase1_native
                    .as_ref()
                    .and_then(|n| native_render::Prepared::new(n, &engine)),
                owner,
                disabled: false,
                drawn: None,
                enabled: None,
                rounds,
                pending: None,
            });
        }
        let next_tick = match vo.mode {
            RenderMode::Synchronous { .. } => Some(f64::NEG_INFINITY),
            RenderMode::Asynchronous => None,
        };
        let changes = changes::Changes::new(vo.infos.len(), vo.controls.len());
        let config_profile = config.profile;
        let event_visible = has_conditions || reads_current_event(&vo);
        let conditions_by_type = (has_conditions && decided_by_type(&vo)).then(Vec::new);
        let dispatch = Dispatch::new(dispatch);
        let resizes_heard = has_conditions
            || dispatch.get(CALLBACK_RTYPE, callback::RESIZE).is_some()
            || vo
                .ir_components
                .iter()
                .any(|c| c.refresh.resize || c.refresh.rescale);
        Ok(Runtime {
            vo,
            engine,
            host,
            eps,
            irs,
            changes,
            dispatch,
            args: Vec::new(),
            trampolines,
            call_args: Vec::new(),
            natives: Default::default(),
            renders: Default::default(),
            render_lists: Default::default(),
            scheme_runs: 0,
            has_conditions,
            resizes_heard,
            conditions_by_type,
            skipping: Box::new([None; SKIPPING]),
            event_visible,
            event_reach,
            watchdog,
            meter,
            config,
            faults: Vec::new(),
            fault_total: 0,
            last_fault: None,
            fault_tally: HashMap::new(),
            drawing_notes: Vec::new(),
            drawing_notes_dropped: 0,
            stats: Stats::default(),
            next_tick,
            started: false,
            general_owner,
            profile: config_profile.then(profile::Profile::new),
            load_time: loading.elapsed(),
        })
    }

    pub fn vo(&self) -> &CompiledVo {
        &self.vo
    }

    /// The records this visual object reads, and how far, as [`interest`] tells from the
    /// compiled visual object; and when its code reads only single elements of the event
    /// (each `(event-ref K)`, see [`event_reads::reach`]), every record only up to the last
    /// element read, condition parts or not: a count over the type and processor of every
    /// record parses four elements of each.
    pub fn interest(&self) -> Option<voml_trace::Interest> {
        let Some(reach) = self.event_reach else {
            return interest(&self.vo);
        };
        let highest = reach.max(natively_read(&self.vo));
        Some(declared(&self.vo, false).reading_every_record(highest as usize - 1))
    }

    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }

    /// Faults recorded since the last call (for reporting them as they happen).
    pub fn take_new_faults(&mut self, since: usize) -> &[Fault] {
        &self.faults[since.min(self.faults.len())..]
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Calls `f` once everything drawn so far has reached the back end (the drawing layer
    /// works on a thread of its own): for what follows the back end's commands from the
    /// side, in their order.
    pub fn after_drawing(&self, f: impl FnOnce() + Send + 'static) {
        self.host.borrow().drawing.then(f);
    }

    /// Waits until everything drawn so far has reached the back end.
    pub fn catch_up_drawing(&self) {
        self.host.borrow().drawing.catch_up();
    }

    /// The shared host: the low-level layer and what VO code asked of it.
    pub fn host(&self) -> std::cell::RefMut<'_, Host> {
        self.host.borrow_mut()
    }

    /// Trace times of the beeps among the sound commands not yet taken.
    pub fn beeps(&self) -> Vec<f64> {
        let host = self.host.borrow();
        host.sounds
            .iter()
            .filter(|s| s.command == host::SoundCommand::Beep)
            .map(|s| s.at)
            .collect()
    }

    /// Takes the sound commands issued since the last call, in trace-time order.
    pub fn take_sounds(&mut self) -> Vec<host::TimedSound> {
        self.host.borrow_mut().sounds.drain(..).collect()
    }

    /// The current value of an info or control structure, as Scheme text.
    pub fn variable(&self, name: &str) -> Option<String> {
        self.variable_value(name).map(|v| v.to_string())
    }

    /// The current value of an info or control structure.
    pub fn variable_value(&self, name: &str) -> Option<SteelVal> {
        let var = self
            .vo
            .infos
            .iter()
            .chain(&self.vo.controls)
            .find(|v| v.name == name)?;
        self.engine.extract_value(&var.global).ok()
    }

    /// Runs the views' initialisation code and delivers the start-of-input callback.
    pub fn start(&mut self, ts: f64) -> Result<(), Stop> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        self.init_views()?;
        self.callback(callback::START, ts, &[])
    }

    /// Runs the views' initialisation code.
    fn init_views(&mut self) -> Result<(), Stop> {
        let inits: Vec<(String, voml_ir::EntryPoint)> = self
            .vo
            .views
            .iter()
            .filter_map(|v| v.init.clone().map(|e| (v.name.clone(), e)))
            .collect();
        for (name, entry) in inits {
            let f = match self.engine.extract_value(&entry.symbol) {
                Ok(f) => f,
                Err(_) => continue,
            };
            let who = Who {
                part: Part::ViewInit(name),
                span: entry.span,
                target: Target::None,
            };
            // The init code may draw: the native procedures need the host.
            self.guarded(|rt| rt.call(&f, &mut [], &who, None))?;
        }
        Ok(())
    }

    /// Delivers a callback event (start/end of input, tick, resize) to the EP components
    /// that declared it, then renders as after any event.
    pub fn callback(&mut self, etype: i64, ts: f64, extra: &[Value]) -> Result<(), Stop> {
        let record = callback_record(etype, ts, extra);
        self.process_inner(&record, None)
    }

    /// Processes one record: EP dispatch, then rendering as the mode says.
    pub fn process(&mut self, record: &Record, source: &str) -> Result<(), Stop> {
        if !self.started {
            self.start(record.timestamp().unwrap_or(0.0))?;
        }
        self.stats.records += 1;
        if self.stats.first_ts.is_none() {
            self.stats.first_ts = record.timestamp();
        }
        // A record that no input declares and no condition part can see, or every condition
        // part refuses by its types alone, never reaches the VO's code: it only moves trace
        // time on (and so may bring a synchronous VO's tick).
        if self.skips(record.rtype, record.etype) {
            let ts = record.timestamp().unwrap_or(0.0);
            let tick_due = matches!(self.next_tick, Some(next) if ts >= next);
            if !tick_due {
                self.host.borrow_mut().now = ts;
                return Ok(());
            }
        }
        let event = At {
            record: self.stats.records,
            source,
            line: record.line,
        };
        self.process_inner(record, Some(event))
    }

    /// Whether records of these types skip the visual object: no input declares them, and no
    /// condition part can see them. Decided once for a pair of types (the answer depends on
    /// the visual object alone), and remembered for the pairs seen last, so that a record
    /// costs one comparison rather than two searches.
    fn skips(&mut self, rtype: i64, etype: i64) -> bool {
        let slot = (rtype.wrapping_mul(31).wrapping_add(etype) as usize) % SKIPPING;
        if let Some((pair, skip)) = self.skipping[slot] {
            if pair == (rtype, etype) {
                return skip;
            }
        }
        let skip =
            self.dispatch.get(rtype, etype).is_none() && !self.seen_by_conditions(rtype, etype);
        self.skipping[slot] = Some(((rtype, etype), skip));
        skip
    }

    /// Whether a condition part may run for records of these types: false when there are
    /// none, or when the types alone make every condition fail ([`decided_by_type`]).
    fn seen_by_conditions(&mut self, rtype: i64, etype: i64) -> bool {
        /// Most pairs of types remembered: beyond, the tests are decided again each time.
        const MOST: usize = 4096;
        if !self.has_conditions {
            return false;
        }
        let (Some(known), vo) = (&mut self.conditions_by_type, &self.vo) else {
            return true;
        };
        let at = match known.binary_search_by_key(&(rtype, etype), |k| k.0) {
            Ok(at) => return !known[at].1,
            Err(at) => at,
        };
        let element = |p: u32| match p {
            0 => Some(voml_ir::Element::Int(rtype)),
            1 => Some(voml_ir::Element::Int(etype)),
            _ => None,
        };
        let all_fail = vo.ep_components.iter().all(|c| {
            c.before.iter().chain(&c.after).all(|part| {
                part.native
                    .as_ref()
                    .is_some_and(|n| n.test.decide(&element) == voml_ir::Decision::Fails)
            })
        });
        if known.len() < MOST {
            known.insert(at, ((rtype, etype), all_fail));
        }
        !all_fail
    }

    /// Ends the run: the end-of-input callback and a final render; returns once everything
    /// drawn has reached the back end.
    pub fn finish(&mut self, ts: f64, bad_lines: u64) -> Result<(), Stop> {
        if !self.started {
            self.start(ts)?;
        }
        let records = Value::Int(self.stats.records as i64);
        self.callback(callback::END, ts, &[records, Value::Int(bad_lines as i64)])?;
        if self.next_tick.is_some() {
            self.guarded(|rt| rt.render(None))?;
        }
        let settled = self.settle();
        // What was drawn reaches the back end before the run is over; a failure of the back
        // end in drawing what was handed over, which no primitive drawn since reported, is
        // noted.
        let failed = self.host.borrow().drawing.take_failure();
        if let Some(e) = failed {
            self.add_drawing_note(DrawingNote {
                kind: e.kind(),
                message: e.to_string(),
                component: None,
                part: None,
                location: None,
                event: None,
                count: 1,
            });
        }
        settled
    }

    /// Draws the displays that skipped rounds to draw when a picture is needed (see
    /// [`Config::defer_displays`]), each once, with the state of now: call it before looking
    /// at the pictures. [`Runtime::finish`], [`Runtime::present`], [`Runtime::pngs`] and
    /// [`Runtime::view_pixels`] do; a fault is reported against the record of the last
    /// round the display skipped.
    pub fn settle(&mut self) -> Result<(), Stop> {
        if !self.irs.iter().any(|ir| ir.pending.is_some()) {
            return Ok(());
        }
        self.guarded(|rt| {
            for i in 0..rt.irs.len() {
                let Some(pending) = rt.irs[i].pending.take() else {
                    continue;
                };
                if rt.irs[i].disabled {
                    continue;
                }
                rt.phase1(i, pending.at())?;
            }
            Ok(())
        })
    }

    /// Runs `f` as the VO's code runs in `process_inner`: the native procedures see the
    /// host, and the watchdog holds the code to its budget.
    fn guarded<T>(&mut self, f: impl FnOnce(&mut Runtime) -> Result<T, Stop>) -> Result<T, Stop> {
        let _guard = host::enter(&self.host);
        self.watchdog.arm();
        let result = f(self);
        self.watchdog.disarm();
        result
    }

    /// Records a fault that happened outside VO code (e.g. a bad trace line).
    pub fn report_trace_error(&mut self, message: String, event: EventRef) {
        self.record(Fault {
            kind: FaultKind::Trace,
            component: None,
            part: None,
            span: None,
            location: Some(format!("{}:{}", event.source, event.line)),
            event: None,
            message,
            action: Action::Skipped,
        });
    }

    fn process_inner(&mut self, record: &Record, event: Option<At<'_>>) -> Result<(), Stop> {
        let ts = record.timestamp().unwrap_or(0.0);
        {
            let mut host = self.host.borrow_mut();
            host.now = ts;
            // `(current-event)` may be asked by any part, not only by condition parts.
            if self.event_visible {
                host.set_event(record);
            }
        }
        let _guard = host::enter(&self.host);
        self.watchdog.arm();
        let result = self.dispatch(record, event);
        let result = result.and_then(|()| match self.next_tick {
            None => self.render(event),
            Some(_) => self.tick_if_due(ts, event),
        });
        self.watchdog.disarm();
        result
    }

    /// Synchronous mode: when trace time `ts` has reached the next tick, the clock tick at
    /// the latest tick boundary at or before `ts` reaches EP components as an event, then
    /// everything renders. Ticks passed over by a gap in trace time are not repeated.
    fn tick_if_due(&mut self, ts: f64, event: Option<At<'_>>) -> Result<(), Stop> {
        let Some(next) = self.next_tick else {
            return Ok(());
        };
        if ts < next {
            return Ok(());
        }
        let tick = match self.vo.mode {
            RenderMode::Synchronous { tick } => tick,
            RenderMode::Asynchronous => 0.0,
        };
        let tick_time = if next.is_finite() {
            next + tick * ((ts - next) / tick).floor().max(0.0)
        } else {
            ts
        };
        self.next_tick = Some(tick_time + tick);
        let tick_record = callback_record(callback::TICK, tick_time, &[]);
        // The tick's parts see the tick, not the record before it.
        if self.event_visible {
            self.host.borrow_mut().set_event(&tick_record);
        }
        self.dispatch(&tick_record, event)?;
        self.render(event)
    }

    /// Trace time has reached `ts` without a record: a paced replay waits for its next
    /// record, or a live source is quiet. A synchronous VO ticks when a tick is due, so that
    /// its pictures keep refreshing while its input stalls; an asynchronous VO renders only
    /// after events, so nothing happens. Nothing happens before the first record either (trace
    /// time has no origin yet), nor for a time earlier than the last record's.
    pub fn advance_clock(&mut self, ts: f64) -> Result<(), Stop> {
        let due = matches!(self.next_tick, Some(next) if ts >= next);
        if !self.started || !ts.is_finite() || !due || ts < self.host.borrow().now {
            return Ok(());
        }
        self.host.borrow_mut().now = ts;
        self.guarded(|rt| rt.tick_if_due(ts, None))
    }

    /// The trace time the VO has reached: the latest record's timestamp, or a later time
    /// given to [`Runtime::advance_clock`].
    pub fn trace_time(&self) -> f64 {
        self.host.borrow().now
    }

    /// True when the VO renders on clock ticks (`mode="synchronous"`).
    pub fn is_synchronous(&self) -> bool {
        self.next_tick.is_some()
    }

    /// Synchronous mode: the trace time of the next clock tick, once the first record has
    /// set the clock going.
    pub fn next_tick(&self) -> Option<f64> {
        self.next_tick.filter(|t| t.is_finite())
    }

    fn dispatch(&mut self, record: &Record, event: Option<At<'_>>) -> Result<(), Stop> {
        self.condition_parts(true, event)?;
        let Some(targets) = self.dispatch.get(record.rtype, record.etype).cloned() else {
            return self.condition_parts(false, event);
        };
        if event.is_some() {
            self.stats.matched += 1;
        }
        for &(ci, k) in targets.iter() {
            if self.eps[ci].disabled {
                continue;
            }
            // The arguments' storage serves from call to call.
            let mut args = std::mem::take(&mut self.args);
            args.clear();
            match self.arguments(record, ci, k, &mut args) {
                Ok(()) => {}
                Err(message) => {
                    self.stats.skipped += 1;
                    let input = &self.vo.ep_components[ci].inputs[k];
                    self.record(Fault {
                        kind: FaultKind::Field,
                        component: Some(format!("EP component `{}`", self.eps[ci].name)),
                        part: Some(format!("input ^{k}")),
                        span: Some(input.span),
                        location: Some(self.vo.locate(input.span)),
                        event: event.map(At::owned),
                        message,
                        action: Action::Skipped,
                    });
                    if self.config.strict {
                        return Err(self.stop_last());
                    }
                    continue;
                }
            };
            // A part the compiler found to be plain updates of structures is carried out here,
            // as the Scheme would; when it cannot be, its procedure runs.
            let handled =
                self.eps[ci].handlers[k].is_none() || self.run_native(ci, Part::Input(k), &args);
            let handler = match &self.eps[ci].handlers[k] {
                Some(handler) if !handled => handler.clone(),
                _ => {
                    args.clear();
                    self.args = args;
                    continue;
                }
            };
            let entry = self.vo.ep_components[ci].inputs[k]
                .handler
                .as_ref()
                .map_or(Span::default(), |h| h.span);
            let who = Who {
                part: Part::Input(k),
                span: entry,
                target: Target::Ep(ci),
            };
            let called = self.call(&handler, &mut args, &who, event);
            args.clear();
            self.args = args;
            called?;
        }
        self.condition_parts(false, event)
    }

    /// Carries out the native statements of `part` of EP component `ci`, if it has any (see
    /// [`native_body`]), with the part's arguments `args` (a condition part reads the record
    /// `(current-event)` shows): true when done, its writes noted, counted and timed; false
    /// when the part's procedure must run.
    fn run_native(&mut self, ci: usize, part: Part, args: &[SteelVal]) -> bool {
        let c = &self.vo.ep_components[ci];
        let condition = match part {
            Part::Before(i) => c.before.get(i),
            Part::After(i) => c.after.get(i),
            _ => None,
        };
        let (body, reads_event) = match (&part, condition) {
            (Part::Input(k), _) => (c.inputs[*k].native.as_ref(), false),
            (_, Some(p)) => (p.native.as_ref().and_then(|n| n.statements.as_ref()), true),
            _ => (None, false),
        };
        let Some(body) = body else {
            return match part {
                Part::Input(k) => self.run_native_forms(ci, k, args),
                _ => false,
            };
        };
        let timed = self.profile.is_some().then(Instant::now);
        let host = self.host.borrow();
        let event = if reads_event { host.event() } else { None };
        let done = self
            .natives
            .run(body, &mut self.engine, args, event, self.scheme_runs);
        drop(host);
        if !done {
            return false;
        }
        self.changes.written(&c.infos, &c.controls);
        self.stats.native += 1;
        if let (Some(profile), Some(t)) = (&mut self.profile, timed) {
            profile.add(&(Target::Ep(ci), part, true), t.elapsed());
        }
        true
    }

    /// Evaluates the native forms of input part `k` of EP component `ci`, if it has any (see
    /// [`native_render`]), its fields `args` in the first slots: true when done (its changes
    /// made, counted and timed), false when the part's procedure must run.
    fn run_native_forms(&mut self, ci: usize, k: usize, args: &[SteelVal]) -> bool {
        let Some(Some(forms)) = self.eps[ci].forms.get_mut(k) else {
            return false;
        };
        let timed = self.profile.is_some().then(Instant::now);
        let outcome = {
            let host = &mut *self.host.borrow_mut();
            self.renders.run(
                forms,
                args,
                &mut self.engine,
                host,
                &self.watchdog,
                &self.meter,
            )
        };
        match outcome {
            native_render::Outcome::Done => {}
            // (An input part draws nothing: a failed drawing is not among its outcomes.)
            native_render::Outcome::Scheme | native_render::Outcome::Failed(_) => return false,
        }
        let c = &self.vo.ep_components[ci];
        self.changes.written(&c.infos, &c.controls);
        self.scheme_runs += 1;
        self.stats.native += 1;
        if let (Some(profile), Some(t)) = (&mut self.profile, timed) {
            profile.add(&(Target::Ep(ci), Part::Input(k), true), t.elapsed());
        }
        true
    }

    /// Evaluates the native forms of IR component `i`'s phase 1, if it has any (see
    /// [`native_render`]): true when done (its changes made, counted and timed, a drawing
    /// primitive that failed reported as the Scheme's error would be), false when the part's
    /// procedure must run.
    fn run_native_render(
        &mut self,
        i: usize,
        who: &Who,
        event: Option<At<'_>>,
    ) -> Result<bool, Stop> {
        let c = &self.vo.ir_components[i];
        let Some(native) = &mut self.irs[i].native else {
            return Ok(false);
        };
        let timed = self.profile.is_some().then(Instant::now);
        let outcome = {
            let host = &mut *self.host.borrow_mut();
            self.renders.run(
                native,
                &[],
                &mut self.engine,
                host,
                &self.watchdog,
                &self.meter,
            )
        };
        if matches!(outcome, native_render::Outcome::Scheme) {
            return Ok(false);
        }
        // What the forms assigned, as a call of the procedure would have.
        self.changes.touched(&c.infos, &c.controls);
        self.scheme_runs += 1;
        self.stats.native_renders += 1;
        if let (Some(profile), Some(t)) = (&mut self.profile, timed) {
            profile.add(&(Target::Ir(i), Part::Phase1, true), t.elapsed());
        }
        let adjusted = self.host.borrow_mut().drawing.take_warnings();
        if !adjusted.is_empty() {
            self.note_drawing(adjusted, who, event);
        }
        if let native_render::Outcome::Failed(e) = outcome {
            self.part_failed(error_message(&e), who.span, FaultKind::Scheme, who, event)?;
        }
        Ok(true)
    }

    fn condition_parts(&mut self, before: bool, event: Option<At<'_>>) -> Result<(), Stop> {
        if !self.has_conditions {
            return Ok(());
        }
        for ci in 0..self.eps.len() {
            let count = if before {
                self.eps[ci].before.len()
            } else {
                self.eps[ci].after.len()
            };
            for i in 0..count {
                if self.eps[ci].disabled {
                    break;
                }
                let which = if before {
                    Part::Before(i)
                } else {
                    Part::After(i)
                };
                let c = &self.vo.ep_components[ci];
                let (part, state) = if before {
                    (&c.before[i], &self.eps[ci].before[i])
                } else {
                    (&c.after[i], &self.eps[ci].after[i])
                };
                // A native test decides on the record `(current-event)` shows, as the Scheme
                // condition would; when it cannot tell, the part tests its condition itself.
                let f = match (&part.native, &state.body) {
                    (Some(native), Some(_)) => {
                        let decision = self.host.borrow().decide(&native.test);
                        match decision {
                            // The part's code itself, when it is plain updates, is carried
                            // out here as the Scheme would; else its procedure runs.
                            voml_ir::Decision::Holds => {
                                if self.run_native(ci, which.clone(), &[]) {
                                    continue;
                                }
                                let state = if before {
                                    &self.eps[ci].before[i]
                                } else {
                                    &self.eps[ci].after[i]
                                };
                                state.body.clone().unwrap_or_else(|| state.entry.clone())
                            }
                            voml_ir::Decision::Fails => continue,
                            voml_ir::Decision::Unsure => state.entry.clone(),
                        }
                    }
                    // A pure condition found false is false still while nothing that may
                    // assign what it reads has run.
                    _ if part.kept_by().is_some_and(|reads| {
                        state.false_at.is_some_and(|at| {
                            !self
                                .changes
                                .touched_since(at, &reads.infos, &reads.controls)
                        })
                    }) =>
                    {
                        continue
                    }
                    _ => state.entry.clone(),
                };
                let c = &self.vo.ep_components[ci];
                let part = if before { &c.before[i] } else { &c.after[i] };
                let pure = part.kept_by().is_some();
                let who = Who {
                    part: which,
                    span: part.entry.span,
                    target: Target::Ep(ci),
                };
                let result = self.call(&f, &mut [], &who, event)?;
                if pure {
                    // The part's procedure gives #f when its condition is false; anything
                    // else means its code ran (or failed), and may have written.
                    let found_false = matches!(result, Some(SteelVal::BoolV(false)));
                    let c = &self.vo.ep_components[ci];
                    if !found_false {
                        self.changes.written(&c.infos, &c.controls);
                    }
                    let at = found_false.then(|| self.changes.now());
                    let state = if before {
                        &mut self.eps[ci].before[i]
                    } else {
                        &mut self.eps[ci].after[i]
                    };
                    state.false_at = at;
                }
            }
        }
        Ok(())
    }

    /// The arguments of input `k` of EP component `ci` for `record`.
    fn arguments(
        &self,
        record: &Record,
        ci: usize,
        k: usize,
        args: &mut Vec<SteelVal>,
    ) -> Result<(), String> {
        let plan = &self.eps[ci].plans[k];
        for (position, ty, name) in plan {
            let value = record.get(*position as usize).ok_or_else(|| {
                format!(
                    "the record has {} fields but `{name}` is at position {position}",
                    record.fields.len() + 2
                )
            })?;
            args.push(convert(value, *ty).ok_or_else(|| {
                format!(
                    "`{name}` should be {} but the record has `{value}` at position {position}",
                    type_word(*ty)
                )
            })?);
        }
        Ok(())
    }

    /// One round of rendering: phase 1 of every enabled IR component, then phase 2 of those.
    fn render(&mut self, event: Option<At<'_>>) -> Result<(), Stop> {
        self.stats.renders += 1;
        if self.irs.is_empty() {
            // No IR component draws; a resized view still brings its event to EP components.
            return self.redraw_resized(event);
        }
        // Every `enable` is evaluated first, so all components see the same control state.
        // (The lists of a round are kept from round to round: one is made for every record.)
        let (mut enabled, mut ran) = std::mem::take(&mut self.render_lists);
        enabled.clear();
        ran.clear();
        for i in 0..self.irs.len() {
            if self.irs[i].disabled {
                continue;
            }
            let comp = &self.vo.ir_components[i];
            // A pure `enable` gives what it gave while nothing that may assign what it reads
            // has run.
            let kept = self.irs[i].enabled.filter(|&(at, _)| {
                comp.enable_pure.as_ref().is_some_and(|reads| {
                    !self
                        .changes
                        .touched_since(at, &reads.infos, &reads.controls)
                })
            });
            let on = match (kept, self.irs[i].enable.clone()) {
                (_, None) => true,
                (Some((_, on)), Some(_)) => on,
                (None, Some(enable)) => {
                    let who = Who {
                        part: Part::Enable,
                        span: comp.enable.as_ref().map_or(comp.span, |e| e.span),
                        target: Target::Ir(i),
                    };
                    let pure = comp.enable_pure.is_some();
                    let value = self.call(&enable, &mut [], &who, event)?;
                    let on = matches!(&value, Some(v) if host::truthy(v));
                    self.irs[i].enabled =
                        (pure && value.is_some()).then(|| (self.changes.now(), on));
                    on
                }
            };
            if on {
                enabled.push(i);
            }
        }
        for &i in &enabled {
            if self.irs[i].disabled {
                continue;
            }
            if self.unchanged(i) {
                self.stats.unchanged += 1;
                continue;
            }
            if self.irs[i].rounds.deferrable {
                deferred::Pending::mark(&mut self.irs[i].pending, event);
                self.stats.deferred += 1;
                continue;
            }
            self.phase1(i, event)?;
            ran.push(i);
        }
        for &i in &ran {
            if self.irs[i].disabled {
                continue;
            }
            if let Some(f) = self.irs[i].phase2.clone() {
                let comp = &self.vo.ir_components[i];
                let who = Who {
                    part: Part::Phase2,
                    span: comp.phase2.as_ref().map_or(comp.span, |e| e.span),
                    target: Target::Ir(i),
                };
                self.call(&f, &mut [], &who, event)?;
            }
        }
        self.render_lists = (enabled, ran);
        self.redraw_resized(event)
    }

    /// Whether IR component `i` asked to skip rounds when nothing changed, and nothing did:
    /// its views are as it left them, and nothing it reads was written since it last ran, or
    /// what it reads is plain values that are as they were.
    fn unchanged(&self, i: usize) -> bool {
        let comp = &self.vo.ir_components[i];
        let Some(drawn) = self.irs[i]
            .drawn
            .as_ref()
            .filter(|_| self.irs[i].rounds.changed)
        else {
            return false;
        };
        if drawn.views != self.view_changes(comp) {
            return false;
        }
        !self.changes.since(drawn.at, comp)
            || drawn
                .values
                .as_ref()
                .is_some_and(|old| self.plain_values(comp).as_ref() == Some(old))
    }

    /// The values of `comp`'s infos and controls, when they are all plain values.
    fn plain_values(&self, comp: &voml_ir::IrComponent) -> Option<Vec<SteelVal>> {
        let infos = comp.infos.iter().map(|&i| self.vo.infos.get(i));
        let controls = comp.controls.iter().map(|&i| self.vo.controls.get(i));
        infos
            .chain(controls)
            .map(|var| {
                let v = self.engine.extract_value(&var?.global).ok()?;
                changes::plain(&v).then_some(v)
            })
            .collect()
    }

    /// Where each view of `comp` stands ([`voml_llvo::Llvo::changes`]).
    fn view_changes(&self, comp: &voml_ir::IrComponent) -> Vec<u64> {
        let host = self.host.borrow();
        let llvo = host.drawing.read();
        comp.views
            .iter()
            .map(|&v| host.views.get(v).map_or(0, |&id| llvo.changes(id)))
            .collect()
    }

    fn phase1(&mut self, i: usize, event: Option<At<'_>>) -> Result<(), Stop> {
        let owner = self.irs[i].owner;
        self.irs[i].pending = None;
        self.irs[i].drawn = None;
        // The component is looked at in place (not copied) on each side of its code's call.
        let span = {
            let comp = &self.vo.ir_components[i];
            let mut host = self.host.borrow_mut();
            // begin_update starts a new frame and erases the previous one.
            let _ = if comp.refresh.update {
                host.drawing.llvo().begin_update(owner)
            } else {
                host.drawing.begin_frame(owner)
            };
            if comp.buffer {
                let mut llvo = host.drawing.llvo();
                for &v in &comp.views {
                    if let Some(&id) = host.views.get(v) {
                        let _ = llvo.begin_buffer(id);
                    }
                }
            }
            host.owner = owner;
            comp.phase1.as_ref().map_or(comp.span, |e| e.span)
        };
        let result = match self.irs[i].phase1.clone() {
            Some(f) => {
                let who = Who {
                    part: Part::Phase1,
                    span,
                    target: Target::Ir(i),
                };
                // Forms the compiler found the runtime can evaluate are evaluated here, as
                // the Scheme would; when they cannot be, the procedure runs.
                match self.run_native_render(i, &who, event) {
                    Ok(true) => Ok(()),
                    Ok(false) => self.call(&f, &mut [], &who, event).map(|_| ()),
                    Err(stop) => Err(stop),
                }
            }
            None => Ok(()),
        };
        let comp = &self.vo.ir_components[i];
        {
            let mut host = self.host.borrow_mut();
            if comp.buffer {
                let mut llvo = host.drawing.llvo();
                for &v in &comp.views {
                    if let Some(&id) = host.views.get(v) {
                        let _ = llvo.flush(id);
                    }
                }
            }
            host.owner = self.general_owner;
        }
        if result.is_ok() && self.irs[i].rounds.changed {
            self.irs[i].drawn = Some(changes::Drawn {
                at: self.changes.now(),
                views: self.view_changes(comp),
                values: self.plain_values(comp),
            });
        }
        result
    }

    /// Components with `refresh="resize"`/`"rescale"` redraw in views that were resized or
    /// rescaled (raster content cannot be scaled without loss).
    fn redraw_resized(&mut self, event: Option<At<'_>>) -> Result<(), Stop> {
        if !self.resizes_heard {
            return Ok(());
        }
        let changed: Vec<usize> = {
            let host = &mut *self.host.borrow_mut();
            if host.views.is_empty() {
                return Ok(());
            }
            let mut llvo = host.drawing.llvo();
            (0..host.views.len())
                .filter(|&i| llvo.take_redraw(host.views[i]).unwrap_or(false))
                .collect()
        };
        if changed.is_empty() {
            return Ok(());
        }
        // A resize reaches EP components as an event: (ts view width height).
        for &v in &changed {
            let (now, size) = {
                let host = self.host.borrow();
                let info = host
                    .views
                    .get(v)
                    .and_then(|id| host.drawing.read().view_info(*id).ok());
                (host.now, info.map_or((0, 0), |i| (i.width, i.height)))
            };
            let extra = [
                Value::Int(v as i64),
                Value::Int(size.0 as i64),
                Value::Int(size.1 as i64),
            ];
            let record = callback_record(callback::RESIZE, now, &extra);
            self.dispatch(&record, event)?;
        }
        for i in 0..self.irs.len() {
            let comp = &self.vo.ir_components[i];
            let wants = (comp.refresh.resize || comp.refresh.rescale)
                && comp.views.iter().any(|v| changed.contains(v));
            if wants && !self.irs[i].disabled {
                self.phase1(i, event)?;
            }
        }
        Ok(())
    }

    /// Calls VO code; on an error reports a fault and applies the policy. `Ok(None)` means the
    /// code failed and the run goes on.
    fn call(
        &mut self,
        f: &SteelVal,
        args: &mut [SteelVal],
        who: &Who,
        event: Option<At<'_>>,
    ) -> Result<Option<SteelVal>, Stop> {
        match (who.target, &who.part) {
            // A pure condition changes nothing; its part's code, when it runs, stamps after
            // (`condition_parts`).
            (Target::Ep(c), Part::Before(i))
                if self.vo.ep_components[c].before[*i].kept_by().is_some() => {}
            (Target::Ep(c), Part::After(i))
                if self.vo.ep_components[c].after[*i].kept_by().is_some() => {}
            (Target::Ep(c), _) => {
                let c = &self.vo.ep_components[c];
                self.changes.written(&c.infos, &c.controls);
            }
            (Target::Ir(c), Part::Phase2) => {
                let c = &self.vo.ir_components[c];
                self.changes.written(&c.infos, &c.controls);
            }
            (Target::Ir(c), Part::Enable) if self.vo.ir_components[c].enable_pure.is_some() => {}
            (Target::Ir(c), _) => {
                let c = &self.vo.ir_components[c];
                self.changes.touched(&c.infos, &c.controls);
            }
            (Target::None, _) => self.changes.anything_runs(),
        }
        self.scheme_runs += 1;
        let engine = &mut self.engine;
        let timed = self.profile.is_some().then(Instant::now);
        let trampoline = match f {
            SteelVal::Closure(_) => self.trampolines.get(args.len()),
            _ => None,
        };
        let result = match trampoline {
            Some(t) => {
                let call_args = &mut self.call_args;
                call_args.clear();
                call_args.push(f.clone());
                call_args.extend(args.iter().cloned());
                let result = boundary::call(&self.meter, || {
                    engine.call_function_with_args_from_mut_slice(t.clone(), call_args)
                });
                call_args.clear();
                result
            }
            None => boundary::call(&self.meter, || {
                engine.call_function_with_args_from_mut_slice(f.clone(), args)
            }),
        };
        if let (Some(profile), Some(t)) = (&mut self.profile, timed) {
            profile.add(&(who.target, who.part.clone(), false), t.elapsed());
        }
        // What the drawing layer adjusted while this code drew is noted; the run goes on as
        // drawn.
        let adjusted = self.host.borrow_mut().drawing.take_warnings();
        if !adjusted.is_empty() {
            self.note_drawing(adjusted, who, event);
        }
        match result {
            Ok(v) => Ok(Some(v)),
            Err(failure) => {
                let fired = self.watchdog.take_fired();
                let runaway = fired.is_some();
                if runaway {
                    self.engine.get_thread_state_controller().resume();
                }
                let (message, span, kind) = match failure {
                    boundary::Failure::Scheme(e) if runaway => (
                        format!("{}; interrupted", overrun(fired, &self.config)),
                        locate_runaway(&self.engine, &self.vo, &e),
                        if fired == Some(watchdog::Reason::Memory) {
                            FaultKind::Memory
                        } else {
                            FaultKind::Runaway
                        },
                    ),
                    boundary::Failure::Scheme(e) => (
                        error_message(&e),
                        locate_error(&self.engine, &self.vo, &e),
                        FaultKind::Scheme,
                    ),
                    boundary::Failure::Panic(p) => (
                        format!("the Scheme engine failed inside a built-in ({p})"),
                        None,
                        FaultKind::Scheme,
                    ),
                };
                let span = span.unwrap_or(who.span);
                self.part_failed(message, span, kind, who, event)?;
                // The budget covers the whole event: after a runaway, give the rest a new one.
                if runaway {
                    self.watchdog.arm();
                }
                Ok(None)
            }
        }
    }

    /// Reports that the part `who` failed at `span` and applies the policy: the component is
    /// disabled, or the run stops (strict).
    fn part_failed(
        &mut self,
        message: String,
        span: Span,
        kind: FaultKind,
        who: &Who,
        event: Option<At<'_>>,
    ) -> Result<(), Stop> {
        let action = if self.config.strict {
            Action::Stopped
        } else if matches!(who.target, Target::None) {
            Action::Skipped
        } else {
            Action::Disabled
        };
        match who.target {
            Target::Ep(i) => self.eps[i].disabled = true,
            Target::Ir(i) => self.irs[i].disabled = true,
            Target::None => {}
        }
        let (component, part) = self.describe(who);
        self.record(Fault {
            kind,
            component,
            part: Some(part),
            span: Some(span),
            location: Some(self.vo.locate(span)),
            event: event.map(At::owned),
            message,
            action,
        });
        if self.config.strict {
            return Err(self.stop_last());
        }
        Ok(())
    }

    /// With [`Config::profile`]: every part that ran, with its calls and time, the longest
    /// first, and what loading the visual object took (the engine, the program and its top
    /// level).
    pub fn profile(&self) -> Option<Vec<ProfileRow>> {
        let profile = self.profile.as_ref()?;
        let mut rows = profile.rows(|(target, part, native)| {
            let who = Who {
                part: part.clone(),
                span: Span::default(),
                target: *target,
            };
            let (component, mut part) = self.describe(&who);
            if *native {
                part.push_str(" (native)");
            }
            (
                component.unwrap_or_else(|| "outside components".into()),
                part,
            )
        });
        rows.push(ProfileRow {
            component: "loading".into(),
            part: "(engine, program, top level)".into(),
            calls: 1,
            time: self.load_time,
        });
        Some(rows)
    }

    /// The component (or view) and the part a fault names.
    fn describe(&self, who: &Who) -> (Option<String>, String) {
        let component = match (&who.target, &who.part) {
            (Target::Ep(i), _) => Some(format!("EP component `{}`", self.eps[*i].name)),
            (Target::Ir(i), _) => Some(format!("IR component `{}`", self.irs[*i].name)),
            (Target::None, Part::ViewInit(name)) => Some(format!("view `{name}`")),
            (Target::None, _) => None,
        };
        let part = match &who.part {
            Part::ViewInit(_) => "initialisation".to_string(),
            Part::Input(k) => format!("input ^{k}"),
            Part::Before(i) => format!("before part {i}"),
            Part::After(i) => format!("after part {i}"),
            Part::Enable => "enable".to_string(),
            Part::Phase1 => "phase 1".to_string(),
            Part::Phase2 => "phase 2 (end-with)".to_string(),
        };
        (component, part)
    }

    /// Keeps a fault, unless [`MAX_REPEATS_KEPT`] of its kind from the same part are kept
    /// already or [`MAX_FAULTS_KEPT`] in all: then it is only counted, so that a run with
    /// millions of bad records holds a bounded log.
    fn record(&mut self, fault: Fault) {
        self.fault_total += 1;
        let key = (fault.kind, fault.component.clone(), fault.part.clone());
        let tally = self.fault_tally.entry(key).or_default();
        tally.1 += 1;
        let keep = tally.0 < MAX_REPEATS_KEPT && self.faults.len() < MAX_FAULTS_KEPT;
        if keep {
            tally.0 += 1;
            self.faults.push(fault.clone());
        }
        self.last_fault = Some((fault, keep));
    }

    /// Notes what the drawing layer adjusted while `who` drew: each message once per
    /// component, counted after.
    fn note_drawing(
        &mut self,
        adjusted: Vec<voml_llvo::LlvoError>,
        who: &Who,
        event: Option<At<'_>>,
    ) {
        let (component, part) = self.describe(who);
        for w in adjusted {
            self.add_drawing_note(DrawingNote {
                kind: w.kind(),
                message: w.to_string(),
                component: component.clone(),
                part: Some(part.clone()),
                location: Some(self.vo.locate(who.span)),
                event: event.map(At::owned),
                count: 1,
            });
        }
    }

    /// Notes `note`, or counts it with the note of its kind and component.
    fn add_drawing_note(&mut self, note: DrawingNote) {
        if let Some(n) = self
            .drawing_notes
            .iter_mut()
            .find(|n| n.kind == note.kind && n.component == note.component)
        {
            n.count += 1;
        } else if self.drawing_notes.len() >= MAX_DRAWING_NOTES {
            self.drawing_notes_dropped += 1;
        } else {
            self.drawing_notes.push(note);
        }
    }

    /// What the drawing layer adjusted or gave up while the run went on (a value clamped, an
    /// exact view that keeps too much), each message once per component; and how many more
    /// were only counted.
    pub fn drawing_notes(&self) -> (&[DrawingNote], u64) {
        (&self.drawing_notes, self.drawing_notes_dropped)
    }

    /// Every fault recorded, kept or only counted.
    pub fn fault_total(&self) -> u64 {
        self.fault_total
    }

    /// Faults that were counted but not kept, by what produced them: (kind, component, part,
    /// how many were not kept).
    pub fn unkept_faults(&self) -> Vec<(FaultKind, Option<String>, Option<String>, u64)> {
        let mut out: Vec<_> = self
            .fault_tally
            .iter()
            .filter(|(_, (kept, total))| *total > *kept as u64)
            .map(|((kind, component, part), (kept, total))| {
                (*kind, component.clone(), part.clone(), total - *kept as u64)
            })
            .collect();
        out.sort_by_key(|u| std::cmp::Reverse(u.3));
        out
    }

    fn stop_last(&mut self) -> Stop {
        let (mut fault, kept) = self.last_fault.clone().expect("a fault was just recorded");
        fault.action = Action::Stopped;
        if kept {
            if let Some(last) = self.faults.last_mut() {
                last.action = Action::Stopped;
            }
        }
        Stop(Box::new(fault))
    }

    /// Names of the components disabled by faults.
    pub fn disabled_components(&self) -> Vec<String> {
        self.eps
            .iter()
            .filter(|c| c.disabled)
            .map(|c| format!("EP component `{}`", c.name))
            .chain(
                self.irs
                    .iter()
                    .filter(|c| c.disabled)
                    .map(|c| format!("IR component `{}`", c.name)),
            )
            .collect()
    }

    /// The user resized view `view` (window back ends): the view gets the new size, EP
    /// components get a resize callback event and `refresh="resize"` components redraw.
    pub fn user_resize(&mut self, view: usize, width: u32, height: u32) -> Result<(), Stop> {
        self.user_view_change(view, |llvo, id| {
            let max = voml_ir::MAX_WINDOW;
            llvo.resize(id, width.clamp(1, max), height.clamp(1, max))
                .is_ok()
        })
    }

    /// The user zoomed view `view` by `factor` (> 1 zooms in) around pixel (`px`, `py`).
    pub fn user_zoom(&mut self, view: usize, factor: f64, px: f64, py: f64) -> Result<(), Stop> {
        if !(factor.is_finite() && factor > 0.0) {
            return Ok(());
        }
        self.user_view_change(view, |llvo, id| {
            let (Ok(map), Ok(info)) = (llvo.mapping(id), llvo.view_info(id)) else {
                return false;
            };
            let centre = map.to_world(px, py);
            let [x0, x1, y0, y1] = info.world;
            let world = [
                centre.x + (x0 - centre.x) / factor,
                centre.x + (x1 - centre.x) / factor,
                centre.y + (y0 - centre.y) / factor,
                centre.y + (y1 - centre.y) / factor,
            ];
            llvo.rescale(id, world).is_ok()
        })
    }

    /// The user dragged view `view` by (`dx`, `dy`) pixels: the content follows the pointer.
    pub fn user_pan(&mut self, view: usize, dx: f64, dy: f64) -> Result<(), Stop> {
        self.user_view_change(view, |llvo, id| {
            let Ok(map) = llvo.mapping(id) else {
                return false;
            };
            let (sx, sy) = map.scale();
            if sx == 0.0 || sy == 0.0 {
                return false;
            }
            // Dragging right moves the world window left; screen y grows downwards.
            llvo.scroll(id, -dx / sx, dy / sy).is_ok()
        })
    }

    fn user_view_change(
        &mut self,
        view: usize,
        change: impl FnOnce(&mut Llvo<Box<dyn Backend>>, voml_llvo::ViewId) -> bool,
    ) -> Result<(), Stop> {
        // The user changes the picture they see.
        self.settle()?;
        let changed = {
            let host = self.host.borrow();
            let Some(&id) = host.views.get(view) else {
                return Ok(());
            };
            let changed = change(&mut host.drawing.llvo(), id);
            changed
        };
        if !changed {
            return Ok(());
        }
        self.redraw_after_input()
    }

    /// The pixels of view `view` (RGBA, straight alpha) for a window back end.
    pub fn view_pixels(&mut self, view: usize) -> Option<voml_llvo::RgbaPixels> {
        let _ = self.settle();
        let host = self.host.borrow();
        let id = *host.views.get(view)?;
        let pixels = host.drawing.llvo().pixels(id).ok();
        pixels
    }

    /// What the user did in the back end's windows or pages since the last call, after
    /// acting on it: a resized view gets its new size, a zoom or a drag changes its world, and
    /// EP components get the resize callback and `refresh` components redraw as after any
    /// change of a view. Every event is returned, so that the driver can act on the rest
    /// (quit, keys).
    pub fn poll_input(&mut self) -> Result<Vec<BackendEvent>, Stop> {
        let events = {
            let host = self.host.borrow();
            // The low-level layer applies resizes to its views itself.
            let events = host.drawing.llvo().poll_events();
            events
        };
        let mut result = Ok(());
        for event in &events {
            let view_index =
                |id: &voml_llvo::ViewId| self.host.borrow().views.iter().position(|v| v == id);
            let done = match event {
                BackendEvent::Resized { .. } => self.redraw_after_input(),
                BackendEvent::Zoom { view, factor, x, y } => match view_index(view) {
                    Some(v) => self.user_zoom(v, *factor, *x, *y),
                    None => Ok(()),
                },
                BackendEvent::Pan { view, dx, dy } => match view_index(view) {
                    Some(v) => self.user_pan(v, *dx, *dy),
                    None => Ok(()),
                },
                BackendEvent::Click { view, x, y, button } => match view_index(view) {
                    Some(v) => self.click(v, *x, *y, *button),
                    None => Ok(()),
                },
                // Keys may be the driver's (replay control): it passes the others on
                // ([`Runtime::key`]).
                BackendEvent::Closed { .. }
                | BackendEvent::Key { .. }
                | BackendEvent::Command { .. }
                | BackendEvent::Quit => Ok(()),
            };
            if result.is_ok() {
                result = done;
            }
        }
        result.map(|()| events)
    }

    /// A key the user pressed, for the VO: the key callback (`ts view key`), at the current
    /// trace time.
    pub fn key(&mut self, view: Option<voml_llvo::ViewId>, key: &str) -> Result<(), Stop> {
        let view = view
            .and_then(|id| self.host.borrow().views.iter().position(|v| *v == id))
            .map_or(-1, |v| v as i64);
        self.input_callback(
            callback::KEY,
            &[Value::Int(view), Value::Str(key.to_string())],
        )
    }

    /// A click at pixel (`px`, `py`) of view `view`: the click callback in world coordinates.
    fn click(&mut self, view: usize, px: f64, py: f64, button: u8) -> Result<(), Stop> {
        let world = {
            let host = self.host.borrow();
            host.views
                .get(view)
                .and_then(|id| host.drawing.read().mapping(*id).ok())
                .map(|map| map.to_world(px, py))
        };
        let Some(w) = world else {
            return Ok(());
        };
        self.input_callback(
            callback::CLICK,
            &[
                Value::Int(view as i64),
                Value::Real(w.x),
                Value::Real(w.y),
                Value::Int(i64::from(button)),
            ],
        )
    }

    /// The wall-clock timer (`timer`): the timer callback, with the wall seconds since the
    /// start of the run.
    pub fn timer(&mut self, wall: f64) -> Result<(), Stop> {
        self.input_callback(callback::TIMER, &[Value::Real(wall)])
    }

    /// Wall time between timer callbacks, when the VO asks for them.
    pub fn timer_interval(&self) -> Option<Duration> {
        self.vo
            .timer
            .filter(|t| t.is_finite() && *t > 0.0)
            .map(Duration::from_secs_f64)
    }

    /// A callback the user or the clock caused, at the current trace time (the run starts
    /// first if no record has come yet).
    fn input_callback(&mut self, etype: i64, extra: &[Value]) -> Result<(), Stop> {
        let now = self.host.borrow().now;
        if !self.started {
            self.start(now)?;
        }
        self.callback(etype, now, extra)
    }

    fn redraw_after_input(&mut self) -> Result<(), Stop> {
        self.guarded(|rt| rt.redraw_resized(None))
    }

    /// Shows what has been drawn in every view (a window repaint; nothing headless).
    pub fn present(&mut self) {
        // A fault is recorded as any other (the driver reports new faults as it goes).
        let _ = self.settle();
        let host = self.host.borrow();
        let mut llvo = host.drawing.llvo();
        for &id in &host.views {
            let _ = llvo.present(id);
        }
    }

    /// Tells the back end where the run stands.
    pub fn show_status(&mut self, status: &Status) {
        self.host
            .borrow_mut()
            .drawing
            .llvo()
            .backend_mut()
            .status(status);
    }

    /// Tells the back end what became of the user's command `to`
    /// ([`BackendEvent::Command`]).
    pub fn answer(&mut self, to: u64, outcome: Result<(), &str>) {
        self.host
            .borrow_mut()
            .drawing
            .llvo()
            .backend_mut()
            .answer(to, outcome);
    }

    /// True when someone looks at the back end's pictures (a window, a page), so that a
    /// run stays alive after its input ends until the user quits.
    pub fn interactive(&self) -> bool {
        self.host.borrow().drawing.read().backend().interactive()
    }

    /// Whether the visual object asked the replay to pause (`<pause>`, a trigger) while it
    /// processed the last record, and why; asking clears it.
    pub fn take_pause(&mut self) -> Option<Trigger> {
        let reason = self.host.borrow_mut().pause.take()?;
        Some(Trigger {
            reason,
            record: self.stats.records,
            at: self.host.borrow().now,
        })
    }

    /// True when pictures `<snapshot>` asked for wait to be taken.
    pub fn has_snapshots(&self) -> bool {
        !self.host.borrow().snapshots.is_empty()
    }

    /// Takes the pictures `<snapshot>` asked for since the last call, oldest first.
    pub fn take_snapshots(&mut self) -> Vec<Snapshot> {
        let mut host = self.host.borrow_mut();
        if host.snapshots.is_empty() {
            return Vec::new();
        }
        host.snapshots.drain(..).collect()
    }

    /// True when sound commands wait to be taken ([`Runtime::take_sounds`]).
    pub fn has_sounds(&self) -> bool {
        !self.host.borrow().sounds.is_empty()
    }

    /// PNG bytes of every view, by view name.
    pub fn pngs(&mut self) -> Vec<(String, Result<Vec<u8>, String>)> {
        let _ = self.settle();
        let host = self.host.borrow();
        let ids = host.views.clone();
        self.vo
            .views
            .iter()
            .zip(ids)
            .map(|(v, id)| {
                (
                    v.name.clone(),
                    host.drawing.llvo().png(id).map_err(|e| e.to_string()),
                )
            })
            .collect()
    }
}

/// A callback event as a record of type [`CALLBACK_RTYPE`].
fn callback_record(etype: i64, ts: f64, extra: &[Value]) -> Record {
    let mut fields = vec![Value::Real(ts)];
    fields.extend_from_slice(extra);
    Record {
        line: 0,
        rtype: CALLBACK_RTYPE,
        etype,
        fields,
    }
}

/// Element `position` of the record as `(current-event)` holds it, for native tests.
pub(crate) fn element(record: &Record, position: u32) -> Option<voml_ir::Element<'_>> {
    match position {
        0 => Some(voml_ir::Element::Int(record.rtype)),
        1 => Some(voml_ir::Element::Int(record.etype)),
        p => Some(match record.get(p as usize)? {
            Value::Int(i) => voml_ir::Element::Int(*i),
            Value::Real(r) => voml_ir::Element::Real(*r),
            Value::Str(s) => voml_ir::Element::Str(s),
        }),
    }
}

/// The record as a Scheme list `(rtype etype field ...)`, for `(current-event)`.
pub(crate) fn record_value(record: &Record) -> SteelVal {
    let mut items = Vec::with_capacity(2 + record.fields.len());
    items.push(SteelVal::IntV(record.rtype as isize));
    items.push(SteelVal::IntV(record.etype as isize));
    items.extend(record.fields.iter().map(element_value));
    SteelVal::ListV(items.into_iter().collect())
}

/// A field of the record as `(current-event)` holds it.
pub(crate) fn element_value(value: &Value) -> SteelVal {
    convert(value, FieldType::Any).unwrap_or(SteelVal::BoolV(false))
}

/// A trace value as the Scheme value its declared type asks for.
fn convert(value: &Value, ty: FieldType) -> Option<SteelVal> {
    match (ty, value) {
        (FieldType::Int, Value::Int(i)) => Some(SteelVal::IntV(*i as isize)),
        (FieldType::Int, Value::Real(r)) if r.fract() == 0.0 && r.abs() < 9.0e15 => {
            Some(SteelVal::IntV(*r as isize))
        }
        (FieldType::Int, _) => None,
        (FieldType::Real, Value::Int(i)) => Some(SteelVal::NumV(*i as f64)),
        (FieldType::Real, Value::Real(r)) => Some(SteelVal::NumV(*r)),
        (FieldType::Real, _) => None,
        (FieldType::String, v) => Some(SteelVal::StringV(match v {
            Value::Str(s) => s.as_str().into(),
            other => other.to_string().into(),
        })),
        (FieldType::Any, Value::Int(i)) => Some(SteelVal::IntV(*i as isize)),
        (FieldType::Any, Value::Real(r)) => Some(SteelVal::NumV(*r)),
        (FieldType::Any, Value::Str(s)) => Some(SteelVal::StringV(s.as_str().into())),
    }
}

fn type_word(ty: FieldType) -> &'static str {
    match ty {
        FieldType::Int => "an integer",
        FieldType::Real => "a number",
        FieldType::String => "a string",
        FieldType::Any => "a value",
    }
}

/// What the watchdog stopped: the time budget or the memory ceiling.
fn overrun(reason: Option<watchdog::Reason>, config: &Config) -> String {
    match reason {
        Some(watchdog::Reason::Memory) => format!(
            "held more than the memory ceiling of {} MiB",
            config.memory_limit >> 20
        ),
        _ => format!(
            "still ran after the per-event budget of {:?} (an endless loop or unbounded recursion?)",
            config.budget
        ),
    }
}

/// The error's message without steel's own decoration.
fn error_message(e: &SteelErr) -> String {
    let text = e.to_string();
    let text = text.trim();
    let text = text.strip_prefix("Error: ").unwrap_or(text);
    // steel prefixes the error kind ("Generic: ", "TypeMismatch: "); keep it only when it
    // says something the message does not.
    let kind = format!("{:?}: ", e.kind());
    let text = if kind == "Generic: " {
        text.strip_prefix(&kind).unwrap_or(text)
    } else {
        text
    };
    text.to_string()
}

/// Procedures that call their first argument with the others, by number of arguments (0 to
/// 8): steel makes a span for every instruction of the procedure it is asked to call from
/// Rust (a part's procedure can have hundreds), and none for a procedure called from Scheme.
fn trampolines(engine: &mut Engine) -> Vec<SteelVal> {
    const MOST: usize = 8;
    let text: String = (0..=MOST)
        .map(|n| {
            let p: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
            format!("(define (voml/call/{n} f {p}) (f {p}))\n", p = p.join(" "))
        })
        .collect();
    // Defined in one program, compiled once; none when the engine refuses them (calls then
    // go to the procedures directly).
    if engine.compile_and_run_raw_program(text).is_err() {
        return Vec::new();
    }
    (0..=MOST)
        .map_while(|n| engine.extract_value(&format!("voml/call/{n}")).ok())
        .collect()
}

/// The identifier a free-identifier error is about: the program's text at the error's span
/// (steel reports unbound names at their use, at compile time).
fn unbound_name(engine: &Engine, vo: &CompiledVo, e: &SteelErr) -> Option<String> {
    if e.kind() != steel::rerrs::ErrorKind::FreeIdentifier {
        return None;
    }
    let s = e.span()?;
    let program = &vo.program.text;
    let text = engine.get_source(&s.source_id?)?;
    if text.len() != program.len() || text.as_ref() != program {
        return None;
    }
    let name = program.get(s.start as usize..s.end as usize)?.trim();
    (!name.is_empty() && !name.contains(char::is_whitespace)).then(|| name.to_string())
}

/// Where in the sources an error happened: its own span if it is in the VO's program, else
/// the innermost frame of the stack trace that is.
fn locate_error(engine: &Engine, vo: &CompiledVo, e: &SteelErr) -> Option<Span> {
    let mut candidates = Vec::new();
    if let Some(s) = e.span() {
        candidates.push(s);
    }
    if let Some(trace) = e.stack_trace() {
        candidates.extend(trace.trace().iter().filter_map(|frame| *frame.span()));
    }
    candidates
        .into_iter()
        .find_map(|s| program_span(engine, vo, s))
}

/// Where code stopped by the watchdog was running. steel gives its interrupt error the span
/// of the instruction it stopped at, which is the most precise answer when that instruction
/// has one in the VO's program; the instructions steel's expander adds to a loop have none,
/// and the other frames of its stack trace are unreliable (each caller's return address is
/// read in the callee's span table). Then the program's own mark says which loop or
/// procedure body it entered last (see [`voml_ir::HERE_GLOBAL`]); a program compiled without
/// marks falls back on [`locate_error`].
fn locate_runaway(engine: &Engine, vo: &CompiledVo, e: &SteelErr) -> Option<Span> {
    e.span()
        .and_then(|s| program_span(engine, vo, s))
        .or_else(|| last_mark(engine, vo))
        .or_else(|| locate_error(engine, vo, e))
}

/// The loop or procedure body the VO's program entered last, by its mark.
fn last_mark(engine: &Engine, vo: &CompiledVo) -> Option<Span> {
    let SteelVal::IntV(at) = engine.extract_value(voml_ir::HERE_GLOBAL).ok()? else {
        return None;
    };
    // The VO's code can set the global to anything: only an opening parenthesis of the
    // program that maps to the sources is a place.
    let at = usize::try_from(at).ok()?;
    if !matches!(vo.program.text.as_bytes().get(at), Some(b'(' | b'[')) {
        return None;
    }
    vo.program
        .source_of_range(at, at + 1)
        .filter(|span| *span != Span::default())
}

/// A span steel reports, in the sources, if it is in the VO's program (not the prelude's or
/// steel's own code) and maps to them.
fn program_span(engine: &Engine, vo: &CompiledVo, s: steel::parser::span::Span) -> Option<Span> {
    let program = &vo.program.text;
    let id = s.source_id?;
    let in_program = engine
        .get_source(&id)
        .is_some_and(|text| text.len() == program.len() && text.as_ref() == program);
    if !in_program {
        return None;
    }
    vo.program
        .source_of_range(s.start as usize, (s.end as usize).max(s.start as usize + 1))
        .filter(|span| *span != Span::default())
}

/// Whether the record's types alone decide every condition part of `vo`, so that a record
/// whose types make them all fail can skip the runtime as a record nothing declares does:
/// every condition has a native test reading no element past the event type, and `vo` has
/// no IR component (a record that reaches the runtime is followed by a render round, which
/// the records nothing sees do not bring).
fn decided_by_type(vo: &CompiledVo) -> bool {
    vo.ir_components.is_empty()
        && vo.ep_components.iter().all(|c| {
            c.before.iter().chain(&c.after).all(|part| {
                part.native
                    .as_ref()
                    .is_some_and(|n| n.test.fields().iter().all(|&p| p <= 1))
            })
        })
}

/// Whether some code of `vo` may ask for `(current-event)` (the record as a list): its
/// program names it.
fn reads_current_event(vo: &CompiledVo) -> bool {
    let text = &vo.program.text;
    text.contains("current-event") || text.contains("event-ref")
}

/// The records `vo` reads, and how far, for a reader that may parse the others only up to
/// their timestamp ([`voml_trace::Interest`]): those its inputs declare, up to the last field
/// an input names (whole when some code reads `(current-event)`). `None` when a condition part
/// can look at any record. A loaded runtime knows more ([`Runtime::interest`]).
pub fn interest(vo: &CompiledVo) -> Option<voml_trace::Interest> {
    if vo
        .ep_components
        .iter()
        .any(|c| !c.before.is_empty() || !c.after.is_empty())
    {
        return None;
    }
    // Code that reads `(current-event)` sees whole records.
    Some(declared(vo, reads_current_event(vo)))
}

/// The highest element of the event a native part or test of `vo` reads (2 when none).
fn natively_read(vo: &CompiledVo) -> u32 {
    let mut highest = 2;
    for c in &vo.ep_components {
        for native in c.inputs.iter().filter_map(|i| i.native.as_ref()) {
            highest = native.reads().elements.into_iter().fold(highest, u32::max);
        }
        for native in c
            .before
            .iter()
            .chain(&c.after)
            .filter_map(|p| p.native.as_ref())
        {
            highest = native.test.fields().into_iter().fold(highest, u32::max);
            if let Some(statements) = &native.statements {
                highest = statements
                    .reads()
                    .elements
                    .into_iter()
                    .fold(highest, u32::max);
            }
        }
    }
    highest
}

/// The records `vo`'s inputs declare, up to the last field each names (whole: all fields).
fn declared(vo: &CompiledVo, whole: bool) -> voml_trace::Interest {
    voml_trace::Interest::with_fields(vo.ep_components.iter().flat_map(|c| {
        c.inputs.iter().filter_map(|input| {
            let event = vo.events.get(input.event)?;
            // The fields from the timestamp (position 2) up to the last one the input
            // names.
            let last = input
                .fields
                .iter()
                .filter_map(|&f| event.fields.get(f))
                .map(|f| f.position as usize)
                .max()
                .unwrap_or(2);
            let read = if whole {
                usize::MAX
            } else {
                last.saturating_sub(1).max(1)
            };
            Some(((event.rtype, event.etype), read))
        })
    }))
}

/// The engine VO code runs in: confined to the allowlist (see [`sandbox`]), with the VOML
/// primitives and prelude, and the whole of steel's prelude.
pub fn vo_sandbox() -> Result<sandbox::Sandbox, SteelErr> {
    vo_sandbox_with(sandbox::Prelude::Whole)
}

/// [`vo_sandbox`] with only the part of steel's prelude `program` and the VOML prelude reach
/// (what a run compiles).
pub fn vo_sandbox_for(program: &str) -> Result<sandbox::Sandbox, SteelErr> {
    vo_sandbox_with(sandbox::Prelude::For(&[program, prelude::SCHEME]))
}

fn vo_sandbox_with(steel_prelude: sandbox::Prelude<'_>) -> Result<sandbox::Sandbox, SteelErr> {
    let _reading = voml_ir::steel_parse_lock();
    sandbox::Sandbox::with_prelude(steel_prelude, |engine| {
        prelude::register(engine);
        host::register(engine);
        engine.run(prelude::SCHEME).map(|_| ())
    })
}

/// The VO engine for unit tests, steel's home directory set as `voml` sets it (else steel
/// says it cannot create one).
#[cfg(test)]
pub(crate) fn test_sandbox() -> sandbox::Sandbox {
    static HOME: std::sync::Once = std::sync::Once::new();
    HOME.call_once(|| {
        std::env::set_var("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"));
    });
    vo_sandbox().expect("the VO engine builds")
}

/// What loading a program leaves for its runtime.
struct Loaded {
    engine: Engine,
    host: Rc<RefCell<Host>>,
    meter: memory::Meter,
    watchdog: watchdog::Watchdog,
    general_owner: OwnerId,
    irs_owners: Vec<OwnerId>,
}

/// A fresh sandboxed engine for `vo`, once `vo` is checked sound and its program screened:
/// with the part of steel's prelude the program reaches when `whole` is false.
fn confined(vo: &CompiledVo, whole: bool) -> Result<sandbox::Sandbox, LoadError> {
    // Nothing in a `.vo` file is trusted before it is checked.
    if let Err(errors) = vo.validate() {
        let first = &errors[0];
        let more = match errors.len() {
            1 => String::new(),
            n => format!(" (and {} more problems)", n - 1),
        };
        return Err(LoadError {
            unbound: None,
            message: format!(
                "the compiled visual object is not sound: {}{more}; recompile it from its .voml file",
                first.message
            ),
            location: first.span.map(|s| vo.locate(s)),
            span: first.span,
        });
    }
    if vo.program.nesting_depth() > voml_ir::MAX_NESTING {
        return Err(LoadError {
            unbound: None,
            message: format!(
                "the program nests expressions more than {} deep; recompile it with this compiler",
                voml_ir::MAX_NESTING
            ),
            span: None,
            location: None,
        });
    }
    let sandbox = if whole {
        vo_sandbox()
    } else {
        vo_sandbox_for(&vo.program.text)
    };
    let sandbox = sandbox.map_err(|e| LoadError {
        unbound: None,
        message: format!("the runtime's prelude failed to load: {e}"),
        span: None,
        location: None,
    })?;
    // Names the engine would resolve outside its confined globals are refused before
    // anything is compiled.
    if let Err(refusal) = sandbox.screen.check(&vo.program.text) {
        let span = vo
            .program
            .source_of_range(refusal.start, refusal.end.max(refusal.start + 1))
            .filter(|s| *s != Span::default());
        return Err(LoadError {
            unbound: None,
            message: refusal.message,
            location: span.map(|s| vo.locate(s)),
            span,
        });
    }
    Ok(sandbox)
}

/// Makes `vo`'s views in `backend` and runs its program's top level in `sandbox`'s engine.
fn load(
    sandbox: sandbox::Sandbox,
    vo: &CompiledVo,
    backend: Box<dyn Backend>,
    config: &Config,
) -> Result<Loaded, LoadError> {
    let mut engine = sandbox.engine;
    let mut llvo = Llvo::new(backend);

    // Views first: the program's top level may already draw.
    let mut view_ids = Vec::new();
    for v in &vo.views {
        let mode = |a: voml_ir::Adapt| match a {
            voml_ir::Adapt::None => None,
            voml_ir::Adapt::Scroll => Some(AdaptMode::Scroll),
            voml_ir::Adapt::Rescale => Some(AdaptMode::Rescale),
        };
        let mut spec = ViewSpec::new(&v.name);
        spec.title = v.title.clone();
        spec.window = (v.window[0], v.window[1]);
        spec.world = v.world;
        spec.margins = v.margins;
        spec.background = Color::parse(&v.background).unwrap_or(Color::WHITE);
        spec.adapt = Adaptation {
            x_plus: mode(v.adapt[0]),
            x_minus: mode(v.adapt[1]),
            y_plus: mode(v.adapt[2]),
            y_minus: mode(v.adapt[3]),
        };
        spec.quality = v.quality;
        spec.undraw = v.undraw;
        let id = llvo.create_view(spec).map_err(|e| LoadError {
            unbound: None,
            message: format!("view `{}`: {e}", v.name),
            span: Some(v.span),
            location: Some(vo.locate(v.span)),
        })?;
        view_ids.push(id);
    }
    let general_owner = llvo.new_owner(false);
    let irs_owners: Vec<OwnerId> = vo
        .ir_components
        .iter()
        .map(|c| llvo.new_owner(c.refresh.update))
        .collect();
    let mut host = Host::new(llvo);
    host.views = view_ids;
    host.owner = general_owner;
    host.snapshots_allowed = config.snapshots;
    for asset in &vo.assets {
        if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&asset.base64) {
            host.assets.insert(asset.name.clone(), bytes);
        }
    }
    let host = Rc::new(RefCell::new(host));

    // The top level (info and control initial values, utility code) runs under the same
    // budget as the code for one event.
    let meter = memory::Meter::new();
    let watchdog = watchdog::Watchdog::new(
        engine.get_thread_state_controller(),
        config.budget,
        meter.clone(),
        config.memory_limit,
    );
    {
        let _guard = host::enter(&host);
        // Compiling is timed apart from running: a large visual object takes longer to
        // compile than its top level may take to run (two seconds, and one more per
        // 100 kB of program, at least eight budgets).
        let compile_time = (config.budget * 8)
            .max(Duration::from_secs(2))
            .saturating_add(Duration::from_secs_f64(vo.program.text.len() as f64 / 1e5));
        let reading = voml_ir::steel_parse_lock();
        watchdog.arm_for(compile_time);
        let compiled = boundary::call(&meter, || {
            engine.emit_raw_program_no_path(vo.program.text.clone())
        });
        watchdog.disarm();
        drop(reading);
        // Steel's compiler does not stop when the watchdog interrupts the engine: a compile
        // that outgrew its allowance ends first (the interruption then waits for the first
        // instruction run), and is told as what went over, not as the top level's doing.
        if let Some(reason) = watchdog.take_fired() {
            let kb = vo.program.text.len() / 1000;
            return Err(LoadError {
                unbound: None,
                message: match reason {
                    watchdog::Reason::Memory => format!(
                        "the Scheme engine held more than the memory ceiling of {} MiB compiling the program ({kb} kB); interrupted",
                        config.memory_limit >> 20
                    ),
                    watchdog::Reason::Time => format!(
                        "the Scheme engine took more than {compile_time:?} to compile the program ({kb} kB); interrupted"
                    ),
                },
                location: Some(vo.locate(vo.span)),
                span: Some(vo.span),
            });
        }
        watchdog.arm();
        let loaded =
            compiled.and_then(|program| boundary::call(&meter, || engine.run_raw_program(program)));
        watchdog.disarm();
        if let Err(failure) = loaded {
            let fired = watchdog.take_fired();
            let unbound = match &failure {
                boundary::Failure::Scheme(e) if fired.is_none() => unbound_name(&engine, vo, e),
                _ => None,
            };
            let (message, span) = match failure {
                boundary::Failure::Scheme(e) if fired.is_some() => (
                    format!(
                        "the program's top level (utility code, initial values) {}; interrupted",
                        overrun(fired, config)
                    ),
                    locate_runaway(&engine, vo, &e),
                ),
                boundary::Failure::Scheme(e) => (
                    match &unbound {
                        Some(name) => format!(
                            "`{name}` is not defined: visual objects have the spec's own definitions, the VOML primitives and prelude, and the Scheme built-ins listed in docs/language.md §7.5 (no files, ports, processes, network, environment, time or evaluation)"
                        ),
                        None => error_message(&e),
                    },
                    locate_error(&engine, vo, &e),
                ),
                boundary::Failure::Panic(p) => (
                    format!("the Scheme engine failed inside a built-in ({p})"),
                    None,
                ),
            };
            let span = span.or(Some(vo.span)).filter(|s| *s != Span::default());
            return Err(LoadError {
                unbound,
                message,
                location: span.map(|s| vo.locate(s)),
                span,
            });
        }
    }

    Ok(Loaded {
        engine,
        host,
        meter,
        watchdog,
        general_owner,
        irs_owners,
    })
}

/// Checks `vo`'s program as loading it into a fresh engine would, without running anything
/// but its top level: the check `voml check` makes so that a program the engine refuses is
/// reported before any replay. Every use of a name defined nowhere is reported, in the order
/// of the text. `vo` is as it was when this returns; its program's text is replaced while the
/// check runs.
///
/// The names are found by reading the program ([`names::walk`]), and only the top-level
/// forms that compute something as it loads (and what they read) are run in the engine;
/// a program the walk cannot vouch for is loaded whole, as a run loads it. Nothing is drawn
/// for anyone to see, so the views get no pixels (a spec with hundreds of views would
/// otherwise allocate a picture for each).
pub fn check_program(vo: &mut CompiledVo) -> Result<(), Vec<LoadError>> {
    // The whole prelude: the names it shows are those a check compares with.
    let sandbox = confined(vo, true).map_err(|e| vec![e])?;
    let known = sandbox.global_names();
    let walked = names::walk(&vo.program.text, &|name| known.contains(name));
    let load_top_level = |vo: &CompiledVo| {
        load(
            sandbox,
            vo,
            Box::new(voml_llvo::NullBackend::new()),
            &Config::default(),
        )
        .map(drop)
        .map_err(|e| vec![e])
    };
    match walked {
        Some(walk) if !walk.unbound.is_empty() => {
            let mut seen = HashSet::new();
            Err(walk
                .unbound
                .into_iter()
                .filter_map(|u| {
                    let span = vo
                        .program
                        .source_of_range(u.at.start, u.at.end)
                        .filter(|s| *s != Span::default());
                    seen.insert((u.name.clone(), span)).then(|| LoadError {
                        message: not_defined(&u.name),
                        location: span.map(|s| vo.locate(s)),
                        span,
                        unbound: Some(u.name),
                    })
                })
                .collect())
        }
        Some(walk) if vo.entry_points().all(|e| walk.defined.contains(&e.symbol)) => {
            // The program's text stands in for itself while it loads (a copy of a large
            // visual object would cost its size again).
            let whole = std::mem::replace(&mut vo.program.text, walk.top_level);
            let loaded = load_top_level(vo);
            vo.program.text = whole;
            loaded
        }
        _ => load_top_level(vo),
    }
}

/// What a refusal says of a name defined nowhere.
fn not_defined(name: &str) -> String {
    format!(
        "`{name}` is not defined: visual objects have the spec's own definitions, the VOML primitives and prelude, and the Scheme built-ins listed in docs/language.md §7.5 (no files, ports, processes, network, environment, time or evaluation)"
    )
}

#[cfg(test)]
mod trampoline_tests {
    use super::*;

    /// Each trampoline calls its first argument with the others, in order, and gives its
    /// value; errors are the called procedure's.
    #[test]
    fn trampolines_call_their_first_argument_with_the_others() {
        let mut sandbox = test_sandbox();
        let engine = &mut sandbox.engine;
        let all = trampolines(engine);
        assert_eq!(all.len(), 9);
        engine
            .compile_and_run_raw_program("(define (spell . xs) xs) (define (fail x) (car x))")
            .unwrap();
        let spell = engine.extract_value("spell").unwrap();
        for (n, t) in all.iter().enumerate() {
            let mut args = vec![spell.clone()];
            args.extend((0..n).map(|i| SteelVal::IntV(i as isize * 10)));
            let got = engine
                .call_function_with_args_from_mut_slice(t.clone(), &mut args)
                .unwrap();
            let want: Vec<String> = (0..n).map(|i| (i * 10).to_string()).collect();
            assert_eq!(
                got.to_string(),
                format!("({})", want.join(" ")),
                "{n} arguments"
            );
        }
        let fail = engine.extract_value("fail").unwrap();
        let mut args = vec![fail, SteelVal::IntV(3)];
        let e = engine
            .call_function_with_args_from_mut_slice(all[1].clone(), &mut args)
            .unwrap_err();
        assert!(e.to_string().contains("car"), "{e}");
    }
}
