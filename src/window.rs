//! `voml run` in windows: the window system's event loop keeps the main thread, the engine
//! runs the same driver as a headless run on a worker thread (steel's engine is not `Send`),
//! drawing through the window back end.

use std::process::ExitCode;

use voml_driver::{Pictures, Profiler, Sink, StateDump, Terminal};
use voml_ir::CompiledVo;

use crate::run::RunArgs;

pub fn run(args: &RunArgs, vo: CompiledVo, sources: Vec<std::path::PathBuf>) -> ExitCode {
    if vo.views.is_empty() {
        eprintln!("error: the visual object has no views to show; run it with --headless");
        return ExitCode::from(1);
    }
    let args = args.clone();
    let shown = voml_window::run(voml_window::WindowOptions::default(), move |backend| {
        let reporter = Terminal::new(&vo, args.color);
        engine(&args, vo, sources, Box::new(backend), None, reporter)
    });
    exit(shown)
}

/// One visual object of several on one input, in windows.
pub struct One {
    pub args: RunArgs,
    pub vo: CompiledVo,
    pub sources: Vec<std::path::PathBuf>,
}

/// Several visual objects on `source`, each on its own thread, their windows side by side;
/// the replay keys drive them all.
pub fn run_several(runs: Vec<(String, One)>, source: voml_driver::Source) -> ExitCode {
    if let Some((_, one)) = runs.iter().find(|(_, o)| o.vo.views.is_empty()) {
        eprintln!(
            "error: `{}` has no views to show; run it with --headless",
            one.args.spec.display()
        );
        return ExitCode::from(1);
    }
    let n = runs.len();
    let shown = voml_window::run_many(voml_window::WindowOptions::default(), n, move |backends| {
        let runs = runs
            .into_iter()
            .zip(backends)
            .map(|((label, one), backend)| (label, (one, backend)))
            .collect();
        crate::several::side_by_side(runs, source, |first, label, (one, backend), input| {
            let reporter = Terminal::new(&one.vo, one.args.color).one_of_several(label, first);
            engine(
                &one.args,
                one.vo,
                one.sources,
                Box::new(backend),
                Some(input),
                reporter,
            )
        })
    });
    exit(shown)
}

fn exit(shown: Result<ExitCode, voml_window::WindowError>) -> ExitCode {
    match shown {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The engine's side: the same driver as a headless run, paced by `--speed`, over `source`
/// (or the run's own input).
fn engine(
    args: &RunArgs,
    vo: CompiledVo,
    sources: Vec<std::path::PathBuf>,
    backend: Box<dyn voml_llvo::Backend>,
    source: Option<voml_driver::Source>,
    mut reporter: Terminal,
) -> ExitCode {
    let mut runtime = match crate::run::load_runtime(args, vo, backend) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: the visual object cannot be loaded: {e}");
            return ExitCode::from(1);
        }
    };
    let Some(mut source) = source.or_else(|| crate::run::open_source(args)) else {
        return ExitCode::from(1);
    };
    // The `s` key (and a script's `snapshot NAME`) writes the views' pictures to --out.
    let mut sinks: Vec<Box<dyn Sink>> = vec![Box::new(Pictures::new(&args.out).snapshots_only())];
    if let Some(path) = &args.dump_state {
        sinks.push(Box::new(StateDump::new(path)));
    }
    if args.profile {
        sinks.push(Box::new(Profiler));
    }
    // Sound plays live when the replay follows the clock (--speed) and the build has it;
    // otherwise the user hears of it once.
    sinks.push(live_sound(args).unwrap_or_else(|| Box::new(SoundNotice { told: false })));
    let reload: Option<Box<dyn voml_driver::Reload>> = args
        .watch
        .then(|| Box::new(crate::watch::Watch::new(args, sources)) as Box<dyn voml_driver::Reload>);
    // A seek back (← or Home) runs the visual object again from the start of the trace
    // file, in the same windows.
    let mut restart = |old: &mut voml_runtime::Runtime| {
        let source = crate::run::reopen(args)?;
        let vo = old.vo().clone();
        let runtime = crate::run::load_runtime(args, vo, old.take_backend()).ok()?;
        Some((runtime, source))
    };
    crate::run::drive(
        args,
        args.speed,
        &mut runtime,
        &mut source,
        voml_driver::Hooks {
            restart: Some(&mut restart),
            reload,
        },
        &mut sinks,
        &mut reporter,
    )
}

/// Tells the user, the first time the visual object makes a sound, how to hear it.
struct SoundNotice {
    told: bool,
}

impl Sink for SoundNotice {
    fn sounds(
        &mut self,
        _runtime: &mut voml_runtime::Runtime,
        _sounds: &[voml_runtime::TimedSound],
    ) -> Result<(), String> {
        if !self.told {
            self.told = true;
            eprintln!("note: this visual object makes sound, which plays live only with --speed in a build with the live-audio feature; `voml run ... --headless --audio FILE.wav` renders it");
        }
        Ok(())
    }
}

#[cfg(feature = "live-audio")]
fn live_sound(args: &RunArgs) -> Option<Box<dyn Sink>> {
    match voml_driver::audio::LiveSink::start(args.speed?) {
        Ok(sink) => Some(Box::new(sink)),
        Err(e) => {
            eprintln!("warning: {e}");
            None
        }
    }
}

#[cfg(not(feature = "live-audio"))]
fn live_sound(_args: &RunArgs) -> Option<Box<dyn Sink>> {
    None
}
