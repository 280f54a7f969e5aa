//! `voml run`: replays a trace through a visual object and writes its pictures.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use voml_driver::audio::WavSink;
use voml_driver::sink::file_name;
use voml_driver::{Hooks, Pictures, Profiler, Sink, Source, StateDump, Terminal};
use voml_ir::CompiledVo;
use voml_llvo::{Backend, LazyRaster};
use voml_runtime::{Config, Runtime};
use voml_trace::ReadOptions;

/// Everything `voml run` was asked to do.
#[derive(Clone)]
pub struct RunArgs {
    pub spec: PathBuf,
    /// The trace file (`-` for standard input), unless listening.
    pub trace: Option<PathBuf>,
    /// The trace's format, when forced (`None`: told by its content).
    pub format: Option<voml_trace::Format>,
    /// Where live producers connect, instead of a trace.
    pub listen: Option<voml_driver::listen::ListenAddr>,
    /// Records from producers publishing on a NATS server: its URL and the run's subject,
    /// instead of a trace.
    pub nats: Option<(String, String)>,
    /// With `listen` or `nats`: end after this many producers.
    pub producers: Option<usize>,
    /// With `listen`: how long a record may wait for earlier ones.
    pub reorder_window: Duration,
    /// Replay commands from this file (`-`: standard input).
    pub control: Option<PathBuf>,
    /// The commands of `control`, read already (several visual objects follow one script).
    pub control_text: Option<String>,
    /// Shortcut: run to this trace time, then end.
    pub until: Option<f64>,
    /// Shortcut: go as fast as possible to this trace time, then go on.
    pub from: Option<f64>,
    pub out: PathBuf,
    pub frames_every: Option<f64>,
    pub strict: bool,
    pub budget: Duration,
    pub color: bool,
    pub compile_options: voml_compiler::Options,
    /// Show the views in windows instead of writing PNGs.
    pub window: bool,
    /// Replay at this many trace seconds per wall second (windows only); `None` = as fast
    /// as possible.
    pub speed: Option<f64>,
    /// Close the windows at the end of the trace.
    pub exit_when_finished: bool,
    /// Write the visual object's sound to this WAV file.
    pub audio: Option<PathBuf>,
    /// The longest sound written to `audio`, in seconds.
    pub max_audio_s: f64,
    /// Write the info and control structures' values here at the end.
    pub dump_state: Option<PathBuf>,
    /// Write the run as one HTML page that replays it (headless).
    pub record: Option<PathBuf>,
    /// Show where the time went at the end.
    pub profile: bool,
    /// Run every display in every round (no deferred displays).
    pub every_round: bool,
    /// Recompile and swap in the spec when it or a file it includes changes.
    pub watch: bool,
}

pub fn run(args: &RunArgs) -> ExitCode {
    // A headless run loads the program into its engine once, and reports a refusal as
    // `voml check` would; a window run checks it first, on this thread.
    let Some((vo, mut inputs, db)) = load(args, args.window) else {
        return ExitCode::from(1);
    };
    if let Some(trace) = &args.trace {
        if let Err(e) = trace_is_readable(trace) {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
        inputs.add(trace);
    }
    if let Err(e) = outputs_are_not_inputs(args, &vo, &inputs) {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    let sources = db.as_ref().map(crate::watch::sources).unwrap_or_default();
    if args.window {
        return crate::window::run(args, vo, sources);
    }
    let Some(source) = open_source(args) else {
        return ExitCode::from(1);
    };
    // Records the visual object does not declare are parsed only up to their timestamp,
    // unless a new visual object may take over (one that may declare them).
    if !args.watch {
        source.narrow(voml_runtime::interest(&vo));
    }
    let reporter = Terminal::new(&vo, args.color);
    headless(args, vo, inputs, db, source, reporter)
}

/// A headless run of one visual object over `source`: pictures to `--out`, sound, state.
pub(crate) fn headless(
    args: &RunArgs,
    vo: CompiledVo,
    inputs: crate::paths::Inputs,
    db: Option<voml_compiler::SourceDb>,
    mut source: Source,
    mut reporter: Terminal,
) -> ExitCode {
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!(
            "error: cannot create the output directory `{}`: {e}",
            args.out.display()
        );
        return ExitCode::from(1);
    }
    let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
    let guard = move |path: &Path| inputs.check_output(path, "the snapshot");
    sinks.push(Box::new(
        Pictures::new(&args.out).with_guard(Box::new(guard)),
    ));
    if let Some(path) = &args.audio {
        match WavSink::create(path, args.speed.unwrap_or(1.0), args.max_audio_s) {
            Ok(sink) => sinks.push(Box::new(sink)),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        }
    }
    if let Some(path) = &args.dump_state {
        sinks.push(Box::new(StateDump::new(path)));
    }
    if args.profile {
        sinks.push(Box::new(Profiler));
    }
    let vo_for_refusal = db.as_ref().map(|_| vo.clone());
    // `--record`: the raster's commands are copied into the recording as it draws.
    let recording = args
        .record
        .as_ref()
        .map(|_| voml_web::Recording::new(voml_web::DEFAULT_RECORD_LIMIT));
    let backend: Box<dyn Backend> = match &recording {
        Some(r) => Box::new(voml_web::Recording::backend(r, LazyRaster::new())),
        None => Box::new(LazyRaster::new()),
    };
    let reload: Option<Box<dyn voml_driver::Reload>> = args.watch.then(|| {
        let sources = db.as_ref().map(crate::watch::sources).unwrap_or_default();
        Box::new(crate::watch::Watch::new(args, sources)) as Box<dyn voml_driver::Reload>
    });
    let title = vo.name.clone();
    let mut runtime = match load_runtime(args, vo, backend) {
        Ok(rt) => rt,
        Err(e) => {
            match (&db, &vo_for_refusal) {
                (Some(db), Some(vo)) => {
                    let d = voml::refusal(vo, &e);
                    eprint!("{}", voml_compiler::diag::render(db, &[d], args.color));
                    eprintln!(
                        "{}: the spec has errors; nothing was run",
                        args.spec.display()
                    );
                }
                _ => eprintln!("error: the visual object cannot be loaded: {e}"),
            }
            return ExitCode::from(1);
        }
    };
    // Loaded, the runtime knows how far into each record its code reads.
    if !args.watch {
        source.narrow(runtime.interest());
    }
    if let (Some(recording), Some(path)) = (recording, &args.record) {
        sinks.push(Box::new(crate::record::RecordSink::new(
            recording,
            path.clone(),
            title,
        )));
    }
    // A backwards seek runs the visual object again from the start of the trace file.
    let vo_again = runtime.vo().clone();
    let mut restart = |_: &mut Runtime| -> Option<(Runtime, Source)> {
        let backend = Box::new(LazyRaster::new());
        let runtime = load_runtime(args, vo_again.clone(), backend).ok()?;
        Some((runtime, reopen(args)?))
    };
    // A headless run is replayed as fast as possible; --speed only scales its sound.
    let code = drive(
        args,
        None,
        &mut runtime,
        &mut source,
        Hooks {
            restart: Some(&mut restart),
            reload,
        },
        &mut sinks,
        &mut reporter,
    );
    // The outputs are written and the sinks closed; the process ends once this run is over
    // (`voml run`, or each of `voml run`'s side-by-side runs on its own thread), and its exit
    // releases the Scheme engine's heap at once, where dropping it value by value took
    // several milliseconds.
    drop(sinks);
    std::mem::forget(runtime);
    code
}

/// The trace file opened again, for a run that starts over; `None` for standard input and
/// live producers, which cannot be read twice.
pub fn reopen(args: &RunArgs) -> Option<Source> {
    let trace = args.trace.as_ref().filter(|t| t.as_os_str() != "-")?;
    Source::file_as(
        trace,
        ReadOptions {
            strict: args.strict,
        },
        args.format,
    )
    .ok()
}

/// Runs the driver, paced at `speed`, and sums the run up; the exit status is 1 when the
/// run stopped, a component failed or an output could not be written.
pub fn drive(
    args: &RunArgs,
    speed: Option<f64>,
    runtime: &mut Runtime,
    source: &mut Source,
    hooks: Hooks<'_>,
    sinks: &mut [Box<dyn Sink>],
    reporter: &mut Terminal,
) -> ExitCode {
    let options = voml_driver::Options {
        speed,
        frames_every: args.frames_every,
        strict: args.strict,
        stay_until_quit: !args.exit_when_finished,
        ..voml_driver::Options::default()
    };
    let mut commands = match control_commands(args, speed) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let control = commands.as_mut().map(|c| c as &mut dyn Iterator<Item = _>);
    let outcome =
        voml_driver::run_controlled(runtime, source, &options, control, hooks, sinks, reporter);
    reporter.summary(&outcome, runtime, source.name());
    let failed = runtime.faults().iter().any(voml_driver::report::is_failure);
    if outcome.stopped || failed || outcome.sink_failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The replay commands of the run: `--control FILE` (or `-`), or what `--until` and `--from`
/// stand for; `None` for a plain run.
fn control_commands(
    args: &RunArgs,
    speed: Option<f64>,
) -> Result<Option<voml_driver::control::Commands>, String> {
    use voml_driver::control::Commands;
    if let (Some(path), Some(text)) = (&args.control, &args.control_text) {
        return Ok(Some(Commands::from_text(&path.display().to_string(), text)));
    }
    if let Some(path) = &args.control {
        return Commands::open(path)
            .map(Some)
            .map_err(|e| format!("cannot read the commands `{}`: {e}", path.display()));
    }
    let speed = speed.map_or("max".to_string(), |s| s.to_string());
    Ok(match (args.from, args.until) {
        (None, None) => None,
        (None, Some(until)) => Some(Commands::from_text("--until", &format!("until {until}"))),
        (Some(from), until) => Some(Commands::from_text(
            "--from",
            &format!(
                "speed max\nseek {from}\nspeed {speed}\n{}",
                until.map_or("resume".to_string(), |u| format!("until {u}"))
            ),
        )),
    })
}

/// Loads the visual object into a runtime drawing through `backend`.
pub fn load_runtime(
    args: &RunArgs,
    vo: CompiledVo,
    backend: Box<dyn Backend>,
) -> Result<Runtime, voml_runtime::LoadError> {
    let config = Config {
        strict: args.strict,
        budget: args.budget,
        // Snapshots go to the pictures' directory in headless runs.
        snapshots: !args.window,
        profile: args.profile,
        // A recorded page replays the drawing of every round.
        defer_displays: !args.every_round && args.record.is_none(),
        // Nobody looks before the end: no window or page, no frame files, no commands.
        pictures_at_end: !backend.interactive()
            && args.frames_every.is_none()
            && args.control.is_none()
            && args.control_text.is_none()
            && !args.watch,
        ..Config::default()
    };
    Runtime::new(vo, backend, config)
}

/// Opens the input: the trace (a file, or standard input for `-`) or the socket producers
/// connect to; reports why it cannot.
pub fn open_source(args: &RunArgs) -> Option<Source> {
    let options = ReadOptions {
        strict: args.strict,
    };
    if let Some((url, subject)) = &args.nats {
        return open_nats(url, subject, args, options);
    }
    if let Some(addr) = &args.listen {
        let listen = voml_driver::listen::ListenOptions {
            producers: args.producers,
            reorder_window: args.reorder_window,
            read: options,
        };
        return match Source::listen(addr, listen) {
            Ok((source, bound, _)) => {
                eprintln!(
                    "listening on {bound}{}",
                    match args.producers {
                        Some(n) => format!(" for {n} producer(s)"),
                        None => " (Ctrl-C ends the run)".to_string(),
                    }
                );
                Some(source)
            }
            Err(e) => {
                eprintln!("error: cannot listen on {addr}: {e}");
                None
            }
        };
    }
    let trace = args.trace.clone().unwrap_or_else(|| PathBuf::from("-"));
    if trace.as_os_str() == "-" {
        return Some(Source::stdin_as(options, args.format));
    }
    match Source::file_as(&trace, options, args.format) {
        Ok(source) => Some(source),
        Err(e) => {
            eprintln!("error: cannot open the trace `{}`: {e}", trace.display());
            None
        }
    }
}

/// Consumes the records published on `subject` at the NATS server `url`.
#[cfg(feature = "nats")]
fn open_nats(url: &str, subject: &str, args: &RunArgs, read: ReadOptions) -> Option<Source> {
    let options = voml_driver::nats::NatsOptions {
        url: url.to_string(),
        subject: subject.to_string(),
        producers: args.producers,
        reorder_window: args.reorder_window,
        read,
    };
    match Source::nats(options) {
        Ok((source, _)) => {
            eprintln!(
                "consuming {subject}.> from {url} (stream {}){}",
                voml_driver::nats::stream_name(subject),
                match args.producers {
                    Some(n) => format!(" until {n} producer(s) have ended"),
                    None => " (Ctrl-C ends the run)".to_string(),
                }
            );
            Some(source)
        }
        Err(e) => {
            eprintln!("error: {e}");
            None
        }
    }
}

#[cfg(not(feature = "nats"))]
fn open_nats(_: &str, _: &str, _: &RunArgs, _: ReadOptions) -> Option<Source> {
    eprintln!("error: this voml was built without NATS: build it with `cargo build --release --features nats`");
    None
}

/// The trace must be standard input or something that can be read as a stream: not a
/// directory, not a missing file.
pub(crate) fn trace_is_readable(trace: &Path) -> Result<(), String> {
    if trace.as_os_str() == "-" {
        return Ok(());
    }
    match std::fs::metadata(trace) {
        Err(e) => Err(format!("cannot open the trace `{}`: {e}", trace.display())),
        Ok(m) if m.is_dir() => Err(format!(
            "the trace `{}` is a directory; name a trace file (or `-` for standard input)",
            trace.display()
        )),
        Ok(_) => Ok(()),
    }
}

/// Refuses a run whose outputs (pictures, sound) would overwrite one of its inputs.
pub(crate) fn outputs_are_not_inputs(
    args: &RunArgs,
    vo: &CompiledVo,
    inputs: &crate::paths::Inputs,
) -> Result<(), String> {
    if let Some(audio) = &args.audio {
        inputs.check_output(audio, "--audio")?;
    }
    if let Some(state) = &args.dump_state {
        inputs.check_output(state, "--dump-state")?;
    }
    if let Some(page) = &args.record {
        inputs.check_output(page, "--record")?;
    }
    if args.window {
        return Ok(());
    }
    inputs.check_output(&args.out, "--out")?;
    for view in &vo.views {
        let png = args.out.join(format!("{}.png", file_name(&view.name)));
        inputs.check_output(&png, "the picture")?;
    }
    Ok(())
}

/// A spec compiled (`.voml`) or read (`.vo`): the visual object, unless there were errors;
/// what to show the user (diagnostics, warnings included, or why the file cannot be read);
/// and, for a `.voml`, the sources the compiler read.
pub(crate) struct Compiled {
    pub vo: Option<CompiledVo>,
    pub shown: String,
    pub db: Option<voml_compiler::SourceDb>,
}

/// Compiles `args.spec` or reads it; with `check`, the program is also loaded into an engine
/// now (as `voml check` does).
pub(crate) fn compile_spec(args: &RunArgs, check: bool) -> Compiled {
    let spec = &args.spec;
    if spec.extension().is_some_and(|e| e == "vo") {
        let read = std::fs::read_to_string(spec)
            .map_err(|e| format!("error: cannot read `{}`: {e}\n", spec.display()))
            .and_then(|text| {
                CompiledVo::from_json(&text)
                    .map_err(|e| format!("error: `{}`: {e}\n", spec.display()))
            });
        return match read {
            Ok(vo) => Compiled {
                vo: Some(vo),
                shown: String::new(),
                db: None,
            },
            Err(shown) => Compiled {
                vo: None,
                shown,
                db: None,
            },
        };
    }
    let out = if check {
        voml::compile_checked(spec, &voml_compiler::RealFs, &args.compile_options)
    } else {
        voml_compiler::compile(spec, &voml_compiler::RealFs, &args.compile_options)
    };
    Compiled {
        shown: voml_compiler::diag::render(&out.db, &out.diagnostics, args.color),
        vo: out.vo,
        db: Some(out.db),
    }
}

/// Compiles a `.voml` spec (showing its diagnostics) or reads a compiled `.vo`; with the
/// files read for it.
/// With `check`, the program is also loaded into an engine now (as `voml check` does); else
/// the sources are returned, for reporting the engine's refusal later.
pub(crate) fn load(
    args: &RunArgs,
    check: bool,
) -> Option<(
    CompiledVo,
    crate::paths::Inputs,
    Option<voml_compiler::SourceDb>,
)> {
    let mut inputs = crate::paths::Inputs::default();
    inputs.add(&args.spec);
    let Compiled { vo, shown, db } = compile_spec(args, check);
    eprint!("{shown}");
    if vo.is_none() && db.is_some() {
        eprintln!(
            "{}: the spec has errors; nothing was run",
            args.spec.display()
        );
    }
    if let Some(db) = &db {
        inputs.add_sources(db);
    }
    vo.map(|vo| (vo, inputs, db))
}
