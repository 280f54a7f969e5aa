//! The one loop that runs a visual object: records from a [`Source`] (a file, standard
//! input; sockets next), paced by a [`Pacer`] (trace time to wall time at a speed factor, or
//! as fast as possible), through the [`Runtime`], whose back end (headless raster, native
//! window, a page) draws; outputs go to [`Sink`]s the driver owns (pictures, sound, state),
//! news to a [`Reporter`]. Headless runs and windows use the same loop: a window is only a
//! back end that is [interactive](voml_llvo::Backend::interactive), so the loop shows it
//! pictures, passes it the user's input and, after the input ends, keeps answering the user
//! until they quit.
//!
//! Synchronous visual objects render on clock ticks of trace time. In a paced run the clock
//! follows the wall clock, so while the input stalls (a gap in the trace, a quiet producer)
//! the visual object keeps ticking and its pictures keep refreshing.

pub mod audio;
pub mod control;
pub mod listen;
#[cfg(feature = "nats")]
pub mod nats;
mod pacer;
pub mod report;
pub mod sink;
mod source;

use std::time::{Duration, Instant};

use voml_llvo::{BackendEvent, Status};
use voml_runtime::{Runtime, Stop};

pub use pacer::Pacer;
pub use report::{Progress, Reporter, Terminal};
pub use sink::{Pictures, Profiler, Sink, StateDump};
pub use source::{request_stop, stop_requested, Next, Share, Source};

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Trace seconds per wall second; `None` = as fast as possible.
    pub speed: Option<f64>,
    /// Tell the sinks of a frame each time trace time passes a multiple of this (showing the
    /// state before the first record past it), and once at the end.
    pub frames_every: Option<f64>,
    /// Stop at the first bad trace line or fault.
    pub strict: bool,
    /// How often an interactive back end is shown the pictures and asked for input, and
    /// progress is reported.
    pub frame_interval: Duration,
    /// With an interactive back end: after the input ends, keep the pictures and answer the
    /// user (zooms, drags) until they quit, instead of returning at once.
    pub stay_until_quit: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            speed: None,
            frames_every: None,
            strict: false,
            frame_interval: Duration::from_millis(16),
            stay_until_quit: true,
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Records processed.
    pub records: u64,
    /// Trace lines that were not records.
    pub bad_lines: u64,
    /// Inputs whose reading failed (a file that could not be read on, a producer's
    /// connection lost): not lines, so not among `bad_lines`.
    pub read_errors: u64,
    /// The run stopped early: strict mode, or the engine could not go on.
    pub stopped: bool,
    /// The user quit before the input ended.
    pub quit: bool,
    /// Frames told to the sinks.
    pub frames: u32,
    /// The last timestamp seen.
    pub last_ts: f64,
    /// Wall time from the start to the end of the input.
    pub elapsed: Duration,
    /// A sink failed (it was reported).
    pub sink_failed: bool,
    /// Times the visual object paused the run (`<pause>`).
    pub triggers: u32,
    /// What the sinks said at the end (`wrote FILE`, warnings), for the user to read after
    /// the summary.
    pub notes: Vec<String>,
}

/// Records between two looks at the clock (for pictures, input and progress): reading the
/// clock for every record would cost more than some records do.
const RECORDS_PER_LOOK: u32 = 256;

/// Runs `runtime` over `source` until the input ends, the run stops or the user quits;
/// then, for an interactive back end, until the user quits. Sinks are told everything and
/// finish at the end of the input.
pub fn run(
    runtime: &mut Runtime,
    source: &mut Source,
    options: &Options,
    sinks: &mut [Box<dyn Sink>],
    reporter: &mut dyn Reporter,
) -> Outcome {
    run_controlled(
        runtime,
        source,
        options,
        None,
        Hooks::default(),
        sinks,
        reporter,
    )
}

/// Starts a run over again, for seeking backwards: a fresh runtime and source, given the
/// current runtime (which may hand its back end over, [`Runtime::take_backend`]).
pub type Restart<'a> = &'a mut RestartFn<'a>;

/// What a [`Restart`] calls.
pub type RestartFn<'a> = dyn FnMut(&mut Runtime) -> Option<(Runtime, Source)> + 'a;

/// Replay commands ([`control`]), each with where it was written.
pub type Commands<'a> = &'a mut dyn Iterator<Item = Result<control::Located, String>>;

/// What a run may do besides taking records: start over (a seek backwards) and take a
/// changed spec (`--watch`).
#[derive(Default)]
pub struct Hooks<'a> {
    /// How to start over; without it a seek backwards is refused with a message.
    pub restart: Option<Restart<'a>>,
    /// Where a changed spec comes from.
    pub reload: Option<Box<dyn Reload>>,
}

/// A newer visual object to swap in while the run goes on (`--watch`).
pub trait Reload {
    /// Asked between records, every frame interval or so: a fresh runtime to take over from
    /// `current` (the driver makes it [`Runtime::adopt`] the state), when the spec changed and
    /// compiled. Problems go to `reporter`; `current` may hand over its back end
    /// ([`Runtime::take_backend`]) to the new one.
    fn poll(&mut self, current: &mut Runtime, reporter: &mut dyn Reporter) -> Option<Runtime>;
}

/// A run driven by replay commands ([`control`]): each command takes records (or seeks,
/// changes the speed, takes pictures); when they run out the run ends where it stands, as at
/// the end of its input. Without commands, the run takes every record, or, with an
/// interactive back end, plays under the user's keys. `hooks` make seeking backwards and
/// taking a changed spec possible.
pub fn run_controlled(
    runtime: &mut Runtime,
    source: &mut Source,
    options: &Options,
    control: Option<Commands<'_>>,
    hooks: Hooks<'_>,
    sinks: &mut [Box<dyn Sink>],
    reporter: &mut dyn Reporter,
) -> Outcome {
    let Hooks {
        mut restart,
        reload,
    } = hooks;
    let mut run = Run {
        started: Instant::now(),
        pacer: Pacer::new(options.speed),
        options: options.clone(),
        interactive: runtime.interactive(),
        next_look: Instant::now(),
        ended: false,
        next_frame: None,
        outcome: Outcome::default(),
        share: source.share(),
        since_look: 0,
        held: None,
        free: false,
        timer: None,
        keys: runtime.interactive() && control.is_none(),
        keyed: std::collections::VecDeque::new(),
        paused: false,
        reload,
        next_reload: Instant::now(),
        keeps_time: false,
        earlier: None,
        snapshots: 0,
        span: None,
        follow: sinks.iter().any(|s| s.follows_records()),
    };
    // Timer callbacks belong to runs that keep time: a window, a paced replay, live input.
    // A replay as fast as possible has no wall clock to speak of.
    run.keeps_time = run.interactive || options.speed.is_some() || source.is_live();
    run.arm_timer(runtime);
    match control {
        None if run.keys => run.play(runtime, source, restart, sinks, reporter),
        None => {
            run.free = true;
            let flow = run.advance(runtime, source, sinks, reporter, &mut |_, _| Take::Yes);
            if flow == Flow::Paused && !run.interactive {
                reporter.line(
                    "the run ends at the pause; to go on past it, drive the replay with --control (`resume`)",
                );
            }
        }
        Some(commands) => {
            for command in commands {
                let command = match command {
                    Ok(c) => c,
                    Err(e) => {
                        reporter.line(&format!("error: {e}; the command is skipped"));
                        run.outcome.sink_failed = true;
                        continue;
                    }
                };
                let flow = run.command(
                    command,
                    runtime,
                    source,
                    restart.as_deref_mut(),
                    sinks,
                    reporter,
                );
                if flow == Flow::Halted {
                    break;
                }
            }
        }
    }
    run.end(runtime, sinks, reporter);
    run.outcome.notes.extend(source.producers_note());
    // Someone is looking: the pictures stay and answer zooms and drags until they quit.
    // (An interrupt or termination ends this too.)
    if run.interactive && options.stay_until_quit && !run.outcome.quit {
        while !stop_requested() && run.look(runtime, sinks, reporter).is_ok() {
            // The replay is over: its keys have nothing left to do.
            run.keyed.clear();
            std::thread::sleep(options.frame_interval);
        }
    }
    run.outcome
}

/// Whether a record is taken.
enum Take {
    /// Take it, and go on.
    Yes,
    /// Take it, then pause.
    Last,
    /// Leave it for later, and pause.
    No,
}

/// How taking records ended.
#[derive(PartialEq)]
enum Flow {
    /// The input ended.
    Ended,
    /// The taking rule paused.
    Paused,
    /// The run cannot go on (strict mode, the VO stopped, the user quit).
    Halted,
}

/// The state of one run.
struct Run {
    started: Instant,
    pacer: Pacer,
    options: Options,
    interactive: bool,
    /// When pictures, input and progress are next looked at.
    next_look: Instant,
    /// The input has ended: what the user sees now is final.
    ended: bool,
    /// The trace time of the next frame (`--frames-every`), once started.
    next_frame: Option<f64>,
    outcome: Outcome,
    share: Share,
    /// Records since the last look at the clock.
    since_look: u32,
    /// A record read but not taken yet (a command paused before it), with where it came from.
    held: Option<(String, voml_trace::Record)>,
    /// Whether the next `advance` is a free run, which a trigger pauses.
    free: bool,
    /// The next wall-clock timer callback and the interval, in runs that keep time.
    timer: Option<(Instant, Duration)>,
    /// The user drives the replay with the window's keys ([`control::key_command`]).
    keys: bool,
    /// Replay commands from keys and the device's command lines, not carried out yet, with
    /// who asked for the answer ([`BackendEvent::Command`]).
    keyed: std::collections::VecDeque<(control::Command, Option<u64>)>,
    /// The replay waits for the user (keys).
    paused: bool,
    /// Where a changed spec comes from (`--watch`), and when to ask next.
    reload: Option<Box<dyn Reload>>,
    next_reload: Instant,
    /// The run keeps time (a window, a paced replay, live input): timer callbacks come.
    keeps_time: bool,
    /// The timestamp of the moment before the last record's (for `back`).
    earlier: Option<f64>,
    /// Snapshots taken with the window's key.
    snapshots: u32,
    /// The first record's timestamp and the furthest the run has reached (a seek back
    /// keeps it), for the device's seek bar.
    span: Option<[f64; 2]>,
    /// Some sink hears of every record ([`Sink::follows_records`]).
    follow: bool,
}

/// Why the run cannot go on: the user quit or the visual object stopped it.
struct Halt;

/// Replay commands from the device waiting at most: more are refused.
const MAX_QUEUED: usize = 256;

/// A reporter that passes everything on and keeps the errors reported, for the answer to
/// the device's command ([`Runtime::answer`]).
struct Heard<'a> {
    inner: &'a mut dyn Reporter,
    errors: Vec<String>,
}

impl<'a> Heard<'a> {
    fn new(inner: &'a mut dyn Reporter) -> Heard<'a> {
        Heard {
            inner,
            errors: Vec::new(),
        }
    }

    /// Carried out, or refused with the errors reported (without their `error: page: `).
    fn outcome(&self) -> Result<(), &str> {
        match self.errors.first() {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }
}

impl Reporter for Heard<'_> {
    fn fault(&mut self, fault: &voml_runtime::Fault) {
        self.inner.fault(fault)
    }
    fn bad_line(&mut self, error: &voml_trace::TraceError, strict: bool) {
        self.inner.bad_line(error, strict)
    }
    fn progress(&mut self, progress: &Progress) {
        self.inner.progress(progress)
    }
    fn line(&mut self, text: &str) {
        if let Some(error) = text.strip_prefix("error: ") {
            let error = error.strip_prefix("page: ").unwrap_or(error);
            self.errors.push(error.to_string());
        }
        self.inner.line(text)
    }
}

impl Run {
    /// Takes records while `take` says so.
    fn advance(
        &mut self,
        runtime: &mut Runtime,
        source: &mut Source,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
        take: &mut dyn FnMut(&voml_trace::Record, &Runtime) -> Take,
    ) -> Flow {
        // Only a free run (`resume`, or no commands) stops at a trigger: the other commands
        // say where they stop, and go there.
        let triggers = self.free;
        self.free = false;
        loop {
            // The user pressed a replay key: it is carried out before the next record.
            if !self.keyed.is_empty() {
                return Flow::Paused;
            }
            if let Some((from, record)) = self.held.take() {
                let verdict = take(&record, runtime);
                if let Take::No = verdict {
                    self.held = Some((from, record));
                    return Flow::Paused;
                }
                match self.one(runtime, sinks, reporter, &from, &record) {
                    Err(Halt) => return Flow::Halted,
                    Ok(ref t) if self.triggered(t.as_ref(), triggers, &from, &record, reporter) => {
                        return Flow::Paused
                    }
                    Ok(_) => {}
                }
                if let Take::Last = verdict {
                    return Flow::Paused;
                }
                continue;
            }
            let wait = self.idle_wait(runtime);
            let (from, item) = match source.next(wait) {
                Next::End => return Flow::Ended,
                Next::Idle => {
                    if self.idle(runtime, sinks, reporter, None).is_err() {
                        return Flow::Halted;
                    }
                    continue;
                }
                Next::Item(from, item) => (from, item),
            };
            let record = match item {
                Ok(record) => record,
                Err(e) => {
                    if e.kind == voml_trace::TraceErrorKind::Io {
                        self.outcome.read_errors += 1;
                    } else {
                        self.outcome.bad_lines += 1;
                    }
                    reporter.bad_line(e, self.options.strict);
                    if self.options.strict {
                        self.outcome.stopped = true;
                        return Flow::Halted;
                    }
                    continue;
                }
            };
            let verdict = take(record, runtime);
            if let Take::No = verdict {
                self.held = Some((from.to_string(), record.clone()));
                return Flow::Paused;
            }
            match self.one(runtime, sinks, reporter, from, record) {
                Err(Halt) => return Flow::Halted,
                Ok(ref t) if self.triggered(t.as_ref(), triggers, from, record, reporter) => {
                    return Flow::Paused
                }
                Ok(_) => {}
            }
            if let Take::Last = verdict {
                return Flow::Paused;
            }
        }
    }

    /// A replay the user drives with the window's keys: it plays until a key or a trigger
    /// pauses it, then waits for the next key, until the input ends or the user quits.
    fn play(
        &mut self,
        runtime: &mut Runtime,
        source: &mut Source,
        mut restart: Option<Restart<'_>>,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) {
        use control::Command as C;
        let mut playing = true;
        loop {
            if playing {
                self.paused = false;
                self.free = true;
                match self.advance(runtime, source, sinks, reporter, &mut |_, _| Take::Yes) {
                    Flow::Ended | Flow::Halted => return,
                    Flow::Paused => {}
                }
            }
            let (command, asked) = match self.keyed.pop_front() {
                Some(queued) => queued,
                None => {
                    // Paused (a key or a trigger): the pictures stay live until the next key.
                    self.paused = true;
                    playing = false;
                    loop {
                        if stop_requested() || self.look(runtime, sinks, reporter).is_err() {
                            return;
                        }
                        if let Some(queued) = self.keyed.pop_front() {
                            break queued;
                        }
                        std::thread::sleep(self.options.frame_interval);
                    }
                }
            };
            let now = Instant::now();
            let at = (self.outcome.records > 0).then(|| runtime.trace_time());
            let mut heard = Heard::new(reporter);
            let from = if asked.is_some() {
                "page"
            } else {
                "window key"
            };
            let mut halted = false;
            match command {
                C::Pause => playing = false,
                C::Resume => {
                    self.pacer.resume(self.pacer.speed(), at, now);
                    playing = true;
                }
                C::Snapshot(name) => {
                    // A picture is taken where the replay stands; it goes on as it was.
                    self.pictures(&name, from, runtime, sinks, &mut heard);
                    heard.line(&format!(
                        "snapshot: each view's picture written as {name}-VIEW.png"
                    ));
                }
                C::Speed(speed) => {
                    self.pacer.resume(speed, at, now);
                    heard.line(&match speed {
                        Some(s) => format!("speed ×{s}"),
                        None => "speed: as fast as possible".to_string(),
                    });
                }
                // An edit changes the visual object, not where the replay stands.
                C::Set(name, value) => {
                    halted = self
                        .set(&name, &value, from, runtime, sinks, &mut heard)
                        .is_err();
                }
                other => {
                    // A step is taken at once, not at its moment: the user asked for it.
                    let speed = self.pacer.speed();
                    self.pacer = Pacer::new(None);
                    let flow = self.command(
                        control::Located {
                            at: from.into(),
                            command: other,
                        },
                        runtime,
                        source,
                        restart.as_deref_mut(),
                        sinks,
                        &mut heard,
                    );
                    let at = (self.outcome.records > 0).then(|| runtime.trace_time());
                    self.pacer.resume(speed, at, Instant::now());
                    halted = flow != Flow::Paused;
                    playing = false;
                }
            }
            if let Some(to) = asked {
                // The picture the command made goes out before its answer.
                self.settle(runtime, &mut heard);
                runtime.present();
                runtime.answer(to, heard.outcome());
            }
            if halted {
                return;
            }
        }
    }

    /// `set NAME VALUE`: the user's edit of a control structure, between records. A refused
    /// value is reported (`error: AT: ...`) and changes nothing.
    fn set(
        &mut self,
        name: &str,
        value: &serde_json::Value,
        at: &str,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) -> Result<(), Halt> {
        let before = runtime.faults().len();
        match runtime.set_control(name, value) {
            Ok(()) => {
                reporter.line(&format!("{at}: set {name} to {value}"));
                self.after_callback(Ok(()), before, runtime, sinks, reporter)
            }
            Err(voml_runtime::EditError::Refused(why)) => {
                reporter.line(&format!("error: {at}: {why}; the value is refused"));
                Ok(())
            }
            Err(voml_runtime::EditError::Stop(stop)) => {
                self.after_callback(Err(stop), before, runtime, sinks, reporter)
            }
        }
    }

    /// Whether a trigger the last record fired pauses the run (and says so).
    fn triggered(
        &mut self,
        trigger: Option<&voml_runtime::Trigger>,
        honoured: bool,
        from: &str,
        record: &voml_trace::Record,
        reporter: &mut dyn Reporter,
    ) -> bool {
        let Some(trigger) = trigger else {
            return false;
        };
        if !honoured {
            return false;
        }
        let why = if trigger.reason.is_empty() {
            String::new()
        } else {
            format!(": {}", trigger.reason)
        };
        reporter.line(&format!(
            "paused by the visual object after {from}:{} (record {}, t={}){why}",
            record.line, trigger.record, trigger.at
        ));
        self.outcome.triggers += 1;
        true
    }

    /// Takes one record: paced, framed, processed, its products delivered; with the trigger
    /// the visual object fired on it, if any.
    fn one(
        &mut self,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
        from: &str,
        record: &voml_trace::Record,
    ) -> Result<Option<voml_runtime::Trigger>, Halt> {
        let ts = record.timestamp().unwrap_or(self.outcome.last_ts);
        // Paced: wait for the record's moment, ticking and answering the user meanwhile.
        // (Unpaced runs read no clock per record.)
        if self.pacer.speed().is_some() {
            if let Some(due) = self.pacer.due(ts, Instant::now()) {
                while Instant::now() < due {
                    self.idle(runtime, sinks, reporter, Some((ts, due)))?;
                }
            }
        }
        self.frame_before(ts, runtime, sinks, reporter);
        if self.outcome.records > 0 && ts > self.outcome.last_ts {
            self.earlier = Some(self.outcome.last_ts);
        }
        self.span = Some(match self.span {
            None => [ts, ts],
            Some([first, furthest]) => [first, furthest.max(ts)],
        });
        self.outcome.last_ts = ts;
        let before = runtime.faults().len();
        let result = runtime.process(record, from);
        self.outcome.records += 1;
        self.after_callback(result, before, runtime, sinks, reporter)?;
        if self.follow {
            for sink in sinks.iter_mut() {
                if let Err(e) = sink.after_record(runtime, ts) {
                    self.sink_error(reporter, e);
                }
            }
        }
        let trigger = runtime.take_pause();
        self.since_look += 1;
        if self.since_look >= RECORDS_PER_LOOK {
            self.since_look = 0;
            if Instant::now() >= self.next_look {
                self.look(runtime, sinks, reporter)?;
            }
        }
        Ok(trigger)
    }

    /// Carries out one replay command: how taking records ended (`Halted`: the run cannot go
    /// on; a command that takes none, or is refused, counts as `Paused`).
    fn command(
        &mut self,
        located: control::Located,
        runtime: &mut Runtime,
        source: &mut Source,
        restart: Option<&mut RestartFn<'_>>,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) -> Flow {
        use control::Command as C;
        let at = located.at;
        match located.command {
            C::Pause => Flow::Paused,
            C::Resume => {
                self.free = true;
                self.advance(runtime, source, sinks, reporter, &mut |_, _| Take::Yes)
            }
            C::Step(0) => Flow::Paused,
            C::Step(n) => {
                let mut left = n;
                self.advance(runtime, source, sinks, reporter, &mut |_, _| {
                    left -= 1;
                    if left == 0 {
                        Take::Last
                    } else {
                        Take::Yes
                    }
                })
            }
            C::StepTo(name) => {
                let Some(codes) = runtime
                    .vo()
                    .events
                    .iter()
                    .find(|e| e.name == name)
                    .map(|e| (e.rtype, e.etype))
                else {
                    let names: Vec<&str> = runtime
                        .vo()
                        .events
                        .iter()
                        .map(|e| e.name.as_str())
                        .collect();
                    reporter.line(&format!(
                        "error: {at}: `step-to {name}`: the visual object declares no event `{name}` (it declares: {}); the command is skipped",
                        names.join(", ")
                    ));
                    self.outcome.sink_failed = true;
                    return Flow::Paused;
                };
                self.advance(runtime, source, sinks, reporter, &mut |r, _| {
                    if (r.rtype, r.etype) == codes {
                        Take::Last
                    } else {
                        Take::Yes
                    }
                })
            }
            C::Until(t) => self.until(t, runtime, source, sinks, reporter),
            C::Seek(t) => self.seek(t, &at, runtime, source, restart, sinks, reporter),
            // Back to the moment before the last record's: as after every record stamped at
            // most then. From the first moment, back to before any record.
            C::Back if self.outcome.records == 0 => Flow::Paused,
            C::Back => {
                let t = self.earlier.unwrap_or(f64::NEG_INFINITY);
                self.seek(t, &at, runtime, source, restart, sinks, reporter)
            }
            C::Speed(speed) => {
                self.pacer = Pacer::new(speed);
                Flow::Paused
            }
            C::Snapshot(name) => {
                self.pictures(&name, &at, runtime, sinks, reporter);
                Flow::Paused
            }
            C::Set(name, value) => match self.set(&name, &value, &at, runtime, sinks, reporter) {
                Ok(()) => Flow::Paused,
                Err(Halt) => Flow::Halted,
            },
        }
    }

    /// `snapshot NAME`: every view's picture, to the sinks that keep pictures.
    fn pictures(
        &mut self,
        name: &str,
        at: &str,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) {
        for sink in sinks.iter_mut() {
            if let Err(e) = sink.picture(runtime, name) {
                self.sink_error(reporter, format!("{at}: {e}"));
            }
        }
    }

    /// `seek T`: forwards, an `until`; backwards, the run starts over and goes to T again
    /// (visual objects are deterministic).
    #[allow(clippy::too_many_arguments)]
    fn seek(
        &mut self,
        t: f64,
        at: &str,
        runtime: &mut Runtime,
        source: &mut Source,
        restart: Option<&mut RestartFn<'_>>,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) -> Flow {
        let behind = self.outcome.records > 0 && t < self.outcome.last_ts;
        if behind {
            if sinks.iter().any(|s| !s.can_restart()) {
                reporter.line(&format!("error: {at}: `seek` back cannot take back what a sink wrote (sound); the command is skipped"));
                self.outcome.sink_failed = true;
                return Flow::Paused;
            }
            let Some((fresh, again)) = restart.and_then(|r| r(runtime)) else {
                reporter.line(&format!(
                    "error: {at}: `seek` back needs a trace file to read again; the command is skipped"
                ));
                self.outcome.sink_failed = true;
                return Flow::Paused;
            };
            *runtime = fresh;
            *source = again;
            self.held = None;
            self.outcome.records = 0;
            self.outcome.last_ts = 0.0;
            self.earlier = None;
            self.next_frame = None;
            self.share = source.share();
        }
        self.until(t, runtime, source, sinks, reporter)
    }

    fn until(
        &mut self,
        t: f64,
        runtime: &mut Runtime,
        source: &mut Source,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) -> Flow {
        self.advance(runtime, source, sinks, reporter, &mut |r, _| {
            if r.timestamp().is_none_or(|ts| ts <= t) {
                Take::Yes
            } else {
                Take::No
            }
        })
    }

    /// How long to wait for the next record before doing something else: for an interactive
    /// back end, until its next look; for a paced synchronous VO, until its next tick; else
    /// as long as it takes.
    fn idle_wait(&self, runtime: &Runtime) -> Option<Duration> {
        let paced_ticks = runtime.is_synchronous() && self.pacer.speed().is_some();
        if !self.interactive && !paced_ticks && self.timer.is_none() && self.reload.is_none() {
            // Nothing to do meanwhile: no clock to read.
            return None;
        }
        let mut wait: Option<Duration> = None;
        let now = Instant::now();
        if self.reload.is_some() {
            wait = Some(self.next_reload.saturating_duration_since(now));
        }
        if self.interactive {
            wait = Some(self.next_look.saturating_duration_since(now));
        }
        if let Some((next, _)) = self.timer {
            let timer = next.saturating_duration_since(now);
            wait = Some(wait.map_or(timer, |w| w.min(timer)));
        }
        if runtime.is_synchronous() {
            if let Some(at) = runtime.next_tick().and_then(|t| self.pacer.wall_time(t)) {
                let tick = at.saturating_duration_since(now);
                wait = Some(wait.map_or(tick, |w| w.min(tick)));
            }
        }
        wait
    }

    /// Nothing to process now (no record yet, or the next one is not due): the clock ticks
    /// for synchronous VOs, an interactive back end is shown the pictures and heard, and the
    /// driver sleeps until the next thing to do (at most until `next`'s due time).
    fn idle(
        &mut self,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
        next: Option<(f64, Instant)>,
    ) -> Result<(), Halt> {
        let now = Instant::now();
        if let Some(mut t) = self.pacer.trace_time(now) {
            // The clock never passes the record that is waiting.
            if let Some((ts, _)) = next {
                t = t.min(ts);
            }
            let before = runtime.faults().len();
            let result = runtime.advance_clock(t);
            self.after_callback(result, before, runtime, sinks, reporter)?;
        }
        if now >= self.next_look {
            self.look(runtime, sinks, reporter)?;
        }
        self.timers(runtime, sinks, reporter)?;
        self.reload(runtime, sinks, reporter)?;
        if let Some((_, due)) = next {
            let mut until = due;
            if self.interactive {
                until = until.min(self.next_look);
            }
            if let Some((timer, _)) = self.timer {
                until = until.min(timer);
            }
            if let Some(tick) = runtime.next_tick().and_then(|t| self.pacer.wall_time(t)) {
                until = until.min(tick.max(now + Duration::from_micros(100)));
            }
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
        }
        Ok(())
    }

    /// Hands the sinks what the last step produced: sound commands and snapshots. Without
    /// sinks, they stay with the runtime (which keeps a bounded number).
    fn deliver(
        &mut self,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) {
        if sinks.is_empty() {
            return;
        }
        if runtime.has_sounds() {
            let sounds = runtime.take_sounds();
            for sink in sinks.iter_mut() {
                if let Err(e) = sink.sounds(runtime, &sounds) {
                    self.sink_error(reporter, e);
                }
            }
        }
        if !runtime.has_snapshots() {
            return;
        }
        for snapshot in runtime.take_snapshots() {
            for sink in sinks.iter_mut() {
                if let Err(e) = sink.snapshot(&snapshot) {
                    self.sink_error(reporter, e);
                }
            }
        }
    }

    fn sink_error(&mut self, reporter: &mut dyn Reporter, e: String) {
        // One report per problem is enough: a failing disk would fail every frame.
        if !self.outcome.sink_failed {
            reporter.line(&format!("error: {e}"));
        }
        self.outcome.sink_failed = true;
    }

    /// `--frames-every`: when the record at `ts` passes a frame time, the sinks get a frame
    /// of the pictures as they are before it.
    fn frame_before(
        &mut self,
        ts: f64,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) {
        let Some(every) = self.options.frames_every else {
            return;
        };
        match self.next_frame {
            None => self.next_frame = Some(ts + every),
            Some(next) if ts >= next => {
                self.frame(runtime, sinks, reporter);
                self.next_frame = Some(next + every * (((ts - next) / every).floor() + 1.0));
            }
            Some(_) => {}
        }
    }

    fn frame(
        &mut self,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) {
        self.outcome.frames += 1;
        self.settle(runtime, reporter);
        for sink in sinks.iter_mut() {
            if let Err(e) = sink.frame(runtime, self.outcome.frames) {
                self.sink_error(reporter, e);
            }
        }
    }

    /// Draws the displays that wait for a picture to be needed ([`Runtime::settle`]),
    /// reporting their faults as those of any step.
    fn settle(&mut self, runtime: &mut Runtime, reporter: &mut dyn Reporter) {
        let before = runtime.faults().len();
        let result = runtime.settle();
        for fault in &runtime.faults()[before..] {
            reporter.fault(fault);
        }
        if result.is_err() {
            self.outcome.stopped = true;
        }
    }

    /// Shows the pictures, hears the user, reports progress and tells the back end where
    /// the run stands.
    fn look(
        &mut self,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) -> Result<(), Halt> {
        self.next_look = Instant::now() + self.options.frame_interval;
        reporter.progress(&Progress::of(
            self.outcome.records,
            self.started,
            &self.share,
            runtime.trace_time(),
        ));
        for sink in sinks.iter_mut() {
            if let Err(e) = sink.progress(runtime) {
                self.sink_error(reporter, e);
            }
        }
        self.reload(runtime, sinks, reporter)?;
        if !self.interactive {
            return self.timers(runtime, sinks, reporter);
        }
        self.settle(runtime, reporter);
        runtime.present();
        // After the end, the user keeps seeing that the run is done.
        runtime.show_status(&self.status(runtime, self.ended));
        let before = runtime.faults().len();
        let events = runtime.poll_input();
        for fault in &runtime.faults()[before..] {
            reporter.fault(fault);
        }
        let events = match events {
            Ok(events) => events,
            Err(Stop(_)) => {
                self.outcome.stopped = true;
                return Err(Halt);
            }
        };
        for event in events {
            match event {
                BackendEvent::Quit => {
                    self.outcome.quit = true;
                    return Err(Halt);
                }
                BackendEvent::Command { from, line } => {
                    self.device_command(from, &line, runtime, sinks, reporter)?;
                }
                BackendEvent::Key { view, key } => {
                    // A key typed in another visual object's window (several on one input)
                    // may still drive the replay, but is not this one's.
                    if self.replay_key(&key) || view.is_none() {
                        continue;
                    }
                    let before = runtime.faults().len();
                    let result = runtime.key(view, &key);
                    self.after_callback(result, before, runtime, sinks, reporter)?;
                }
                _ => {}
            }
        }
        // What the user's zooms, pans and clicks made the VO do.
        self.deliver(runtime, sinks, reporter);
        self.timers(runtime, sinks, reporter)
    }

    /// Queues the replay command of `key`, when the user drives the replay and the key is
    /// one of its keys ([`control::key_command`]).
    fn replay_key(&mut self, key: &str) -> bool {
        use control::Command as C;
        if !self.keys {
            return false;
        }
        let Some(mut command) = control::key_command(key, self.paused, self.pacer.speed()) else {
            return false;
        };
        if let C::Snapshot(name) = &mut command {
            self.snapshots += 1;
            *name = format!("{name}-{}", self.snapshots);
        }
        self.queue(command, None);
        true
    }

    fn queue(&mut self, command: control::Command, asked: Option<u64>) {
        use control::Command as C;
        match command {
            // Pause and resume flip at once, so that a second press flips back.
            C::Pause => self.paused = true,
            C::Resume => self.paused = false,
            _ => {}
        }
        self.keyed.push_back((command, asked));
    }

    /// A command line the user gave on the device ([`BackendEvent::Command`]): an edit is
    /// made at once (this is between records); a replay command waits its turn as a key's
    /// does. Whatever cannot be done is answered with why.
    fn device_command(
        &mut self,
        from: u64,
        line: &str,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) -> Result<(), Halt> {
        use control::Command as C;
        let command = match control::Command::parse(line) {
            Ok(Some(command)) => command,
            Ok(None) => {
                runtime.answer(from, Err("an empty command"));
                return Ok(());
            }
            Err(e) => {
                runtime.answer(from, Err(&e));
                return Ok(());
            }
        };
        if let C::Set(name, value) = &command {
            let mut heard = Heard::new(reporter);
            let result = self.set(name, value, "page", runtime, sinks, &mut heard);
            // The picture the edit made goes out before its answer.
            self.settle(runtime, &mut heard);
            runtime.present();
            runtime.answer(from, heard.outcome());
            return result;
        }
        let refused = if matches!(command, C::Snapshot(_)) {
            // A device that sends command lines is a page, whose canvases are the pictures;
            // its run writes no files.
            Some("a served run writes no pictures; save the page's canvases instead")
        } else if self.ended {
            Some("the input has ended: the replay has nothing left to take")
        } else if !self.keys {
            Some("the replay follows its --control commands")
        } else if self.keyed.len() >= MAX_QUEUED {
            Some("too many commands are waiting")
        } else {
            None
        };
        match refused {
            Some(why) => runtime.answer(from, Err(why)),
            None => self.queue(command, Some(from)),
        }
        Ok(())
    }

    /// Swaps in a changed visual object, when one is ready ([`Reload`]).
    fn reload(
        &mut self,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) -> Result<(), Halt> {
        let now = Instant::now();
        if now < self.next_reload {
            return Ok(());
        }
        self.next_reload = now + self.options.frame_interval;
        let Some(reload) = self.reload.as_mut() else {
            return Ok(());
        };
        let Some(mut fresh) = reload.poll(runtime, reporter) else {
            return Ok(());
        };
        // What the old one made is delivered first.
        self.deliver(runtime, sinks, reporter);
        let adopted = fresh.adopt(runtime);
        for fault in fresh.faults() {
            reporter.fault(fault);
        }
        let adopted = match adopted {
            Ok(a) => a,
            Err(Stop(_)) => {
                self.outcome.stopped = true;
                return Err(Halt);
            }
        };
        *runtime = fresh;
        let list = |names: &[String]| {
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        };
        reporter.line(&format!(
            "reloaded `{}` after record {}: kept {}; started afresh: {}",
            runtime.vo().name,
            self.outcome.records,
            list(&adopted.kept),
            list(&adopted.reset)
        ));
        self.arm_timer(runtime);
        self.deliver(runtime, sinks, reporter);
        Ok(())
    }

    /// Starts the visual object's wall-clock timer (`timer`), in runs that keep time.
    fn arm_timer(&mut self, runtime: &Runtime) {
        self.timer = runtime
            .timer_interval()
            .filter(|_| self.keeps_time)
            .map(|every| (Instant::now() + every, every));
    }

    /// Runs the wall-clock timer callbacks that are due (`timer`), in runs that keep time.
    fn timers(
        &mut self,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) -> Result<(), Halt> {
        let Some((next, every)) = self.timer else {
            return Ok(());
        };
        let now = Instant::now();
        if now < next {
            return Ok(());
        }
        // Late (a long step of the VO): one callback, and the next on the beat.
        let mut following = next + every;
        while following <= now {
            following += every;
        }
        self.timer = Some((following, every));
        let before = runtime.faults().len();
        let result = runtime.timer(self.started.elapsed().as_secs_f64());
        self.after_callback(result, before, runtime, sinks, reporter)
    }

    /// After a step of the visual object (a record, a callback, a clock tick): its faults
    /// reported, its products delivered.
    fn after_callback(
        &mut self,
        result: Result<(), Stop>,
        before: usize,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) -> Result<(), Halt> {
        for fault in &runtime.faults()[before..] {
            reporter.fault(fault);
        }
        if result.is_err() {
            self.outcome.stopped = true;
            return Err(Halt);
        }
        self.deliver(runtime, sinks, reporter);
        Ok(())
    }

    fn status(&self, runtime: &Runtime, finished: bool) -> Status {
        let records = self.outcome.records;
        let trace_time = (records > 0).then(|| runtime.trace_time());
        // Once ended, the time the run took (not the time since it began).
        let elapsed = if self.ended {
            self.outcome.elapsed.as_secs_f64()
        } else {
            self.started.elapsed().as_secs_f64()
        };
        let mut text = String::new();
        if self.paused && !finished {
            text.push_str("paused — ");
        }
        text.push_str(&format!("{records} records"));
        if let Some(t) = trace_time {
            text.push_str(&format!(" — trace time {}", report::trace_time(t)));
        }
        if let Some(speed) = self.pacer.speed() {
            text.push_str(&format!(" — ×{speed}"));
        }
        if finished {
            text.push_str(&format!(" in {elapsed:.1} s — done"));
        } else if elapsed > 0.0 && !self.paused {
            text.push_str(&format!(" — {:.0}/s", records as f64 / elapsed));
        }
        Status {
            records,
            trace_time,
            speed: self.pacer.speed(),
            finished,
            paused: self.paused && !finished,
            text,
            keys: if self.keys && !finished {
                control::KEYS_HELP.to_string()
            } else {
                String::new()
            },
            span: self.span,
        }
    }

    /// The end of the input: the end-of-input callback, the last frame, and every sink
    /// finishes.
    fn end(
        &mut self,
        runtime: &mut Runtime,
        sinks: &mut [Box<dyn Sink>],
        reporter: &mut dyn Reporter,
    ) {
        if !self.outcome.stopped && !self.outcome.quit {
            let before = runtime.faults().len();
            let result = runtime.finish(self.outcome.last_ts, self.outcome.bad_lines);
            for fault in &runtime.faults()[before..] {
                reporter.fault(fault);
            }
            self.outcome.stopped = result.is_err();
        }
        self.deliver(runtime, sinks, reporter);
        if self.options.frames_every.is_some() && !self.outcome.stopped {
            self.frame(runtime, sinks, reporter);
        }
        self.outcome.elapsed = self.started.elapsed();
        let outcome = self.outcome.clone();
        for sink in sinks.iter_mut() {
            match sink.end(runtime, &outcome) {
                Ok(lines) => self.outcome.notes.extend(lines),
                Err(e) => self.sink_error(reporter, e),
            }
        }
        self.ended = true;
        if self.interactive {
            runtime.present();
            runtime.show_status(&self.status(runtime, true));
        }
    }
}
