//! `voml run`: replays a trace through a visual object and writes its pictures.

use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use voml_ir::CompiledVo;
use voml_llvo::Llvo;
use voml_runtime::{Config, ReplayEvent, Runtime};
use voml_trace::{ReadOptions, TraceReader};

/// Everything `voml run` was asked to do.
#[derive(Clone)]
pub struct RunArgs {
    pub spec: PathBuf,
    pub trace: PathBuf,
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
}

/// Writes the state of the visual object (`--dump-state`); reports a failure and says so.
pub fn dump_state(runtime: &Runtime, path: &Path) -> bool {
    let state = voml_runtime::state::of(runtime);
    let text = serde_json::to_string_pretty(&state).unwrap_or_default() + "\n";
    match std::fs::write(path, text) {
        Ok(()) => {
            eprintln!("wrote {} (the state at the end of the run)", path.display());
            true
        }
        Err(e) => {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            false
        }
    }
}

/// At most this many faults are shown in full; the rest are counted.
const SHOWN_FAULTS: usize = 20;

pub fn run(args: &RunArgs) -> ExitCode {
    let Some((vo, mut inputs)) = load(args) else {
        return ExitCode::from(1);
    };
    if let Err(e) = trace_is_readable(&args.trace) {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    inputs.add(&args.trace);
    if let Err(e) = outputs_are_not_inputs(args, &vo, &inputs) {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    if args.window {
        return crate::window::run(args, vo);
    }
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!(
            "error: cannot create the output directory `{}`: {e}",
            args.out.display()
        );
        return ExitCode::from(1);
    }
    let vo_for_faults = vo.clone();
    let Some((mut runtime, input, share)) = start(args, vo) else {
        return ExitCode::from(1);
    };
    let source_name = args.trace.display().to_string();
    let mut reader = TraceReader::new(
        input,
        source_name.clone(),
        ReadOptions {
            strict: args.strict,
        },
    );
    let mut audio = match &args.audio {
        Some(path) => match crate::audio::AudioOut::create(
            path,
            48_000,
            args.speed.unwrap_or(1.0),
            args.max_audio_s,
        ) {
            Ok(a) => Some(a),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        },
        None => None,
    };
    let mut audio_error: Option<String> = None;
    let started = Instant::now();
    let progress = Progress::new(share);
    let mut shown = 0usize;
    let mut shown_lines = 0usize;
    let summary =
        voml_runtime::replay(
            &mut runtime,
            &mut reader,
            args.frames_every,
            |event| match event {
                ReplayEvent::Fault(fault) => {
                    if shown < SHOWN_FAULTS {
                        progress.clear();
                        eprint!("{}", fault.render(&vo_for_faults, args.color));
                        shown += 1;
                    }
                }
                ReplayEvent::BadLine(e) => {
                    if shown_lines < SHOWN_FAULTS {
                        progress.clear();
                        eprintln!("warning: {e}\n  | {}", e.text);
                        shown_lines += 1;
                    }
                    if args.strict {
                        eprintln!("error: stopping at the first bad trace line (--strict)");
                    }
                }
                ReplayEvent::Frame(runtime, n) => write_frames(runtime, &args.out, n),
                ReplayEvent::Progress(runtime) => {
                    progress.tick(runtime.stats().records);
                    // Sound is rendered as the replay goes (or dropped without --audio).
                    let sounds = runtime.take_sounds();
                    if let Some(a) = audio.as_mut() {
                        if let Some(origin) = runtime.stats().first_ts {
                            a.mapper.set_origin(origin);
                        }
                        a.push(sounds);
                        let now = runtime.host().now;
                        if let Err(e) = a.advance(now) {
                            audio_error.get_or_insert(e);
                        }
                    }
                }
            },
        );
    progress.clear();
    let mut audio_written = None;
    if let Some(mut a) = audio.take() {
        if let Some(origin) = runtime.stats().first_ts {
            a.mapper.set_origin(origin);
        }
        a.push(runtime.take_sounds());
        let commands = a.mapper.commands;
        let late = a.late;
        let (cap, dropped) = (a.cap_s(), a.dropped);
        match a.finish(summary.last_ts) {
            Ok(seconds) if audio_error.is_none() => {
                if dropped > 0 || seconds >= cap {
                    eprintln!(
                        "warning: the sound was cut at {cap:.0} s (--max-audio-seconds){}",
                        if dropped > 0 {
                            format!("; {dropped} sound events after it were dropped")
                        } else {
                            String::new()
                        }
                    );
                }
                audio_written = Some((seconds, commands, late))
            }
            Ok(_) => {}
            Err(e) => {
                audio_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = &audio_error {
        eprintln!("error: {e}");
    }
    let bad_lines = summary.bad_lines;
    let stopped = summary.stopped;
    let frame_no = summary.frames;
    let mut written = Vec::new();
    let mut write_failed = false;
    for (view, png) in runtime.pngs() {
        let path = args.out.join(format!("{}.png", file_name(&view)));
        match png
            .map_err(|e| e.to_string())
            .and_then(|bytes| std::fs::write(&path, bytes).map_err(|e| e.to_string()))
        {
            Ok(()) => written.push(path),
            Err(e) => {
                eprintln!("error: cannot write `{}`: {e}", path.display());
                write_failed = true;
            }
        }
    }
    if let Some(path) = &args.dump_state {
        write_failed |= !dump_state(&runtime, path);
    }
    let stats = runtime.stats().clone();
    let elapsed = started.elapsed().as_secs_f64();
    let faults = runtime
        .faults()
        .iter()
        .filter(|f| f.kind != voml_runtime::FaultKind::Field)
        .count();
    let field_problems = stats.skipped;
    eprintln!(
        "{} records from {} in {:.2} s ({:.0} records/s){}{}",
        stats.records,
        source_name,
        elapsed,
        stats.records as f64 / elapsed.max(1e-9),
        if bad_lines > 0 {
            format!(", {bad_lines} bad lines skipped")
        } else {
            String::new()
        },
        if field_problems > 0 {
            format!(", {field_problems} events with bad fields skipped")
        } else {
            String::new()
        },
    );
    let total = runtime.fault_total();
    if (shown as u64) < total {
        eprintln!("({} more faults not shown)", total - shown as u64);
        for (kind, component, part, more) in runtime.unkept_faults().iter().take(10) {
            let place = [component.as_deref(), part.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            let place = if place.is_empty() {
                "the trace".into()
            } else {
                place
            };
            eprintln!("  {more} more {} in {place}", kind.summary_word());
        }
    }
    let disabled = runtime.disabled_components();
    if !disabled.is_empty() {
        eprintln!("disabled after errors: {}", disabled.join(", "));
    }
    for path in &written {
        eprintln!("wrote {}", path.display());
    }
    if let (Some(path), Some((seconds, commands, late))) = (&args.audio, audio_written) {
        let late = if late > 0 {
            format!(", {late} played late")
        } else {
            String::new()
        };
        eprintln!(
            "wrote {} ({seconds:.1} s of sound from {commands} sound commands{late})",
            path.display()
        );
    }
    if frame_no > 0 {
        eprintln!(
            "wrote {frame_no} frame(s) per view to {}",
            args.out.join("frames").display()
        );
    }
    if stopped || faults > 0 || write_failed || audio_error.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Loads the visual object into a runtime and opens the trace; reports why it cannot.
pub fn start(args: &RunArgs, vo: CompiledVo) -> Option<(Runtime, Box<dyn BufRead>, Share)> {
    let config = Config {
        strict: args.strict,
        budget: args.budget,
        snapshot_dir: Some(args.out.clone()),
        ..Config::default()
    };
    let runtime = match Runtime::new(vo, Llvo::headless(), config) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: the visual object cannot be loaded: {e}");
            return None;
        }
    };
    let mut share = Share::default();
    let input: Box<dyn BufRead> = if args.trace.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        match std::fs::File::open(&args.trace) {
            Ok(f) => {
                share.total = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
                let counted = Counted {
                    inner: f,
                    read: share.read.clone(),
                };
                Box::new(std::io::BufReader::with_capacity(1 << 16, counted))
            }
            Err(e) => {
                eprintln!(
                    "error: cannot open the trace `{}`: {e}",
                    args.trace.display()
                );
                return None;
            }
        }
    };
    Some((runtime, input, share))
}

/// The trace must be standard input or something that can be read as a stream: not a
/// directory, not a missing file.
fn trace_is_readable(trace: &Path) -> Result<(), String> {
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
fn outputs_are_not_inputs(
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

/// Compiles a `.voml` spec (showing its diagnostics) or reads a compiled `.vo`; with the
/// files read for it.
fn load(args: &RunArgs) -> Option<(CompiledVo, crate::paths::Inputs)> {
    let mut inputs = crate::paths::Inputs::default();
    inputs.add(&args.spec);
    let is_compiled = args.spec.extension().is_some_and(|e| e == "vo");
    if is_compiled {
        let text = match std::fs::read_to_string(&args.spec) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read `{}`: {e}", args.spec.display());
                return None;
            }
        };
        return match CompiledVo::from_json(&text) {
            Ok(vo) => Some((vo, inputs)),
            Err(e) => {
                eprintln!("error: `{}`: {e}", args.spec.display());
                None
            }
        };
    }
    let out = voml::compile_checked(&args.spec, &voml_compiler::RealFs, &args.compile_options);
    if !out.diagnostics.is_empty() {
        eprint!(
            "{}",
            voml_compiler::diag::render(&out.db, &out.diagnostics, args.color)
        );
    }
    if out.vo.is_none() {
        eprintln!(
            "{}: the spec has errors; nothing was run",
            args.spec.display()
        );
    }
    inputs.add_sources(&out.db);
    out.vo.map(|vo| (vo, inputs))
}

fn write_frames(runtime: &mut Runtime, out: &Path, n: u32) {
    let dir = out.join("frames");
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    for (view, png) in runtime.pngs() {
        if let Ok(bytes) = png {
            let path = dir.join(format!("{}-{n:06}.png", file_name(&view)));
            if let Err(e) = std::fs::write(&path, bytes) {
                eprintln!("error: cannot write `{}`: {e}", path.display());
            }
        }
    }
}

/// A view name as a file name.
fn file_name(view: &str) -> String {
    view.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// How much of a trace file has been read: bytes so far and the file's size.
#[derive(Clone, Default)]
pub struct Share {
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
    total: Option<u64>,
}

/// A reader that counts the bytes read through it.
struct Counted<R> {
    inner: R,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: std::io::Read> std::io::Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// The progress line: records, rate, and for a file of known size the share read and an
/// estimate of the time left.
fn progress_line(records: u64, elapsed_s: f64, read: u64, total: Option<u64>) -> String {
    let rate = records as f64 / elapsed_s.max(1e-9);
    let mut line = format!("{records} records ({rate:.0}/s)");
    if let Some(total) = total.filter(|&t| t > 0) {
        let share = (read as f64 / total as f64).min(1.0);
        line.push_str(&format!(
            ", {:.0}% of {:.1} MB",
            share * 100.0,
            total as f64 / 1e6
        ));
        if share > 0.0 && share < 1.0 {
            let left = elapsed_s * (1.0 - share) / share;
            line.push_str(&format!(", about {left:.0} s left"));
        }
    }
    line.push('…');
    line
}

/// A progress line on a terminal (not on a pipe), updated twice a second.
struct Progress {
    enabled: bool,
    start: Instant,
    last: std::cell::Cell<Instant>,
    share: Share,
}

impl Progress {
    fn new(share: Share) -> Progress {
        Progress {
            enabled: std::io::stderr().is_terminal(),
            start: Instant::now(),
            last: std::cell::Cell::new(Instant::now()),
            share,
        }
    }

    fn tick(&self, records: u64) {
        if !self.enabled || !records.is_multiple_of(4096) {
            return;
        }
        let now = Instant::now();
        if now.duration_since(self.last.get()) < Duration::from_millis(500) {
            return;
        }
        self.last.set(now);
        let read = self.share.read.load(std::sync::atomic::Ordering::Relaxed);
        let line = progress_line(
            records,
            self.start.elapsed().as_secs_f64(),
            read,
            self.share.total,
        );
        eprint!("\r\x1b[K{line}");
    }

    fn clear(&self) {
        if self.enabled && self.start.elapsed() > Duration::from_millis(500) {
            eprint!("\r\x1b[K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::progress_line;

    #[test]
    fn the_progress_line_says_the_share_read_and_the_time_left() {
        assert_eq!(
            progress_line(40_000, 2.0, 25_000_000, Some(100_000_000)),
            "40000 records (20000/s), 25% of 100.0 MB, about 6 s left…"
        );
        assert_eq!(progress_line(8192, 1.0, 0, None), "8192 records (8192/s)…");
    }
}
