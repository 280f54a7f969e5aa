//! `voml run A.voml B.voml ...`: several visual objects on one input. The input is read once
//! and every record goes to each visual object, which runs on its own thread with its own
//! outputs: pictures in `--out/NAME/`, and `--dump-state` and `--audio` files named with
//! `-NAME` before their extension, NAME being the spec's file name without extension. In
//! windows, theirs open side by side and the replay keys drive them all.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use voml_driver::{Source, Terminal};

use crate::run::{headless, load, open_source, outputs_are_not_inputs, trace_is_readable, RunArgs};

pub fn run(args: &RunArgs, specs: &[PathBuf]) -> ExitCode {
    // Every spec is compiled first, and every problem shown, before anything runs.
    let mut loaded = Vec::new();
    let mut failed = false;
    for spec in specs {
        let one = RunArgs {
            spec: spec.clone(),
            ..args.clone()
        };
        match load(&one, false) {
            Some(l) => loaded.push(l),
            None => failed = true,
        }
    }
    if failed {
        return ExitCode::from(1);
    }
    if let Some(trace) = &args.trace {
        if let Err(e) = trace_is_readable(trace) {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    }
    let mut runs = Vec::new();
    for ((spec, (vo, mut inputs, db)), label) in specs.iter().zip(loaded).zip(labels(specs)) {
        if let Some(trace) = &args.trace {
            inputs.add(trace);
        }
        let one = RunArgs {
            spec: spec.clone(),
            out: args.out.join(&label),
            dump_state: args.dump_state.as_deref().map(|p| suffixed(p, &label)),
            audio: args.audio.as_deref().map(|p| suffixed(p, &label)),
            ..args.clone()
        };
        if let Err(e) = outputs_are_not_inputs(&one, &vo, &inputs) {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
        runs.push((label, (one, vo, inputs, db)));
    }
    // One script for all: read once (standard input cannot be read by each).
    if let Some(path) = &args.control {
        match read_script(path) {
            Ok(text) => {
                for (_, (one, ..)) in &mut runs {
                    one.control_text = Some(text.clone());
                }
            }
            Err(e) => {
                eprintln!("error: cannot read the commands `{}`: {e}", path.display());
                return ExitCode::from(1);
            }
        }
    }
    let Some(source) = open_source(args) else {
        return ExitCode::from(1);
    };
    if args.window {
        // The replay keys (or one script) drive them all.
        let runs = runs
            .into_iter()
            .map(|(label, (args, vo, _, db))| {
                let sources = db.as_ref().map(crate::watch::sources).unwrap_or_default();
                (label, crate::window::One { args, vo, sources })
            })
            .collect();
        return crate::window::run_several(runs, source);
    }
    side_by_side(
        runs,
        source,
        |first, label, (one, vo, inputs, db), source| {
            let reporter = Terminal::new(&vo, one.color).one_of_several(label, first);
            headless(&one, vo, inputs, db, source, reporter)
        },
    )
}

/// Runs `each` for every visual object of `runs` (with its label, and whether it is the
/// first), each on its own thread over its copy of `source`'s records; exit status 1 when
/// any of them failed.
pub(crate) fn side_by_side<T: Send>(
    runs: Vec<(String, T)>,
    source: Source,
    each: impl Fn(bool, &str, T, Source) -> ExitCode + Sync,
) -> ExitCode {
    let sources = source.fan_out(runs.len());
    let each = &each;
    let codes: Vec<ExitCode> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .into_iter()
            .zip(sources)
            .enumerate()
            .map(|(i, ((label, run), source))| {
                std::thread::Builder::new()
                    .name(format!("voml-{label}"))
                    .spawn_scoped(scope, move || each(i == 0, &label, run, source))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or(ExitCode::from(1)),
                Err(e) => {
                    eprintln!("error: cannot start a thread for a visual object: {e}");
                    ExitCode::from(1)
                }
            })
            .collect()
    });
    if codes.iter().all(|c| *c == ExitCode::SUCCESS) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Each spec's name for its outputs: its file name without extension, numbered when two
/// specs share one (`count`, `count-2`).
fn labels(specs: &[PathBuf]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for spec in specs {
        let stem = spec
            .file_stem()
            .map_or("vo".to_string(), |s| s.to_string_lossy().into_owned());
        let mut label = stem.clone();
        let mut n = 1;
        while labels.contains(&label) {
            n += 1;
            label = format!("{stem}-{n}");
        }
        labels.push(label);
    }
    labels
}

/// `state.json` for the visual object `count`: `state-count.json`.
fn suffixed(path: &Path, label: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or(String::new(), |s| s.to_string_lossy().into_owned());
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{label}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{label}"),
    };
    path.with_file_name(name)
}

fn read_script(path: &Path) -> std::io::Result<String> {
    if path.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_named_after_their_specs() {
        let specs: Vec<PathBuf> = ["a/count.voml", "b/count.voml", "plot.vo"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(labels(&specs), ["count", "count-2", "plot"]);
        assert_eq!(
            suffixed(Path::new("out/state.json"), "plot"),
            PathBuf::from("out/state-plot.json")
        );
        assert_eq!(suffixed(Path::new("state"), "a"), PathBuf::from("state-a"));
    }
}
