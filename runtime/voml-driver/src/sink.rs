//! Where a run's outputs go. The driver owns its sinks and tells each of them what happens:
//! frame times (`--frames-every`), pictures the visual object asked for (`<snapshot>`),
//! sound commands, progress, and the end of the input. Pictures and state are written here;
//! sound sinks are in [`crate::audio`].

use std::path::{Path, PathBuf};

use voml_runtime::{Runtime, Snapshot, TimedSound};

use crate::Outcome;

/// One destination of a run's outputs. Every method has a default that ignores the news, so a
/// sink implements only what it cares about. An `Err` is reported by the driver and makes the
/// run's outcome a failure; the run goes on.
pub trait Sink {
    /// Frame time `n` (from 1) has come: the pictures as they are now.
    fn frame(&mut self, runtime: &mut Runtime, n: u32) -> Result<(), String> {
        let _ = (runtime, n);
        Ok(())
    }

    /// The visual object took a picture with `<snapshot>`.
    fn snapshot(&mut self, snapshot: &Snapshot) -> Result<(), String> {
        let _ = snapshot;
        Ok(())
    }

    /// Sound commands issued since the last call, in trace-time order.
    fn sounds(&mut self, runtime: &mut Runtime, sounds: &[TimedSound]) -> Result<(), String> {
        let _ = (runtime, sounds);
        Ok(())
    }

    /// A replay command asked for the pictures under `name` (`snapshot NAME`).
    fn picture(&mut self, runtime: &mut Runtime, name: &str) -> Result<(), String> {
        let _ = (runtime, name);
        Ok(())
    }

    /// Whether the run may start over (a `seek` back): a sink that cannot take back what it
    /// wrote (sound) says no.
    fn can_restart(&self) -> bool {
        true
    }

    /// Whether the sink hears of every record taken ([`Sink::after_record`]); asked once,
    /// when the run starts (the others cost nothing per record).
    fn follows_records(&self) -> bool {
        false
    }

    /// A record stamped `ts` was taken and what it made delivered (for sinks that
    /// [follow records](Sink::follows_records)).
    fn after_record(&mut self, runtime: &mut Runtime, ts: f64) -> Result<(), String> {
        let _ = (runtime, ts);
        Ok(())
    }

    /// The run goes on (a few times a second at most): a chance to catch up with it.
    fn progress(&mut self, runtime: &mut Runtime) -> Result<(), String> {
        let _ = runtime;
        Ok(())
    }

    /// The input has ended (or the run stopped): write what is left. Returns lines for the
    /// user (`wrote FILE`, warnings).
    fn end(&mut self, runtime: &mut Runtime, outcome: &Outcome) -> Result<Vec<String>, String> {
        let _ = (runtime, outcome);
        Ok(Vec::new())
    }
}

/// A check that a file may be written (it is not one of the run's inputs).
pub type Guard = Box<dyn Fn(&Path) -> Result<(), String>>;

/// The pictures of a headless run, as PNG files in a directory: every view at the end
/// (`VIEW.png`), frames (`frames/VIEW-000001.png`) and snapshots under the names the
/// visual object gave.
pub struct Pictures {
    dir: PathBuf,
    guard: Option<Guard>,
    frames: u32,
    snapshots: Vec<PathBuf>,
    /// Whether the views' last pictures are written at the end.
    finals: bool,
}

impl Pictures {
    /// Writes into `dir`, which must exist.
    pub fn new(dir: &Path) -> Pictures {
        Pictures {
            dir: dir.to_path_buf(),
            guard: None,
            frames: 0,
            snapshots: Vec::new(),
            finals: true,
        }
    }

    /// Writes only the pictures asked for (`snapshot NAME`, the VO's `<snapshot>`), not the
    /// views' last pictures at the end: for windows, where the pictures are on screen.
    pub fn snapshots_only(mut self) -> Pictures {
        self.finals = false;
        self
    }

    /// Refuses to write a file `guard` refuses.
    pub fn with_guard(mut self, guard: Guard) -> Pictures {
        self.guard = Some(guard);
        self
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> Result<(), String> {
        if let Some(guard) = &self.guard {
            guard(path)?;
        }
        std::fs::write(path, bytes).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
    }
}

/// A view name as a file name.
pub fn file_name(view: &str) -> String {
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

impl Sink for Pictures {
    fn frame(&mut self, runtime: &mut Runtime, n: u32) -> Result<(), String> {
        let dir = self.dir.join("frames");
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        for (view, png) in runtime.pngs() {
            let path = dir.join(format!("{}-{n:06}.png", file_name(&view)));
            self.write(&path, &png?)?;
        }
        self.frames = n;
        Ok(())
    }

    fn picture(&mut self, runtime: &mut Runtime, name: &str) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create `{}`: {e}", self.dir.display()))?;
        for (view, png) in runtime.pngs() {
            let path = self.dir.join(format!("{name}-{}.png", file_name(&view)));
            self.write(&path, &png?)?;
            self.snapshots.push(path);
        }
        Ok(())
    }

    fn snapshot(&mut self, snapshot: &Snapshot) -> Result<(), String> {
        // The runtime accepts only plain relative names ending in .png.
        let path = self.dir.join(&snapshot.file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
        }
        let png = voml_llvo::encode_png(&snapshot.pixels).map_err(|e| e.to_string())?;
        self.write(&path, &png)?;
        self.snapshots.push(path);
        Ok(())
    }

    fn end(&mut self, runtime: &mut Runtime, _outcome: &Outcome) -> Result<Vec<String>, String> {
        let mut lines = Vec::new();
        let mut failures = Vec::new();
        let finals = if self.finals {
            runtime.pngs()
        } else {
            Vec::new()
        };
        for (view, png) in finals {
            let path = self.dir.join(format!("{}.png", file_name(&view)));
            match png.and_then(|bytes| self.write(&path, &bytes)) {
                Ok(()) => lines.push(format!("wrote {}", path.display())),
                Err(e) => failures.push(e),
            }
        }
        if !self.snapshots.is_empty() {
            lines.push(format!(
                "wrote {} snapshot(s), e.g. {}",
                self.snapshots.len(),
                self.snapshots[0].display()
            ));
        }
        if self.frames > 0 {
            lines.push(format!(
                "wrote {} frame(s) per view to {}",
                self.frames,
                self.dir.join("frames").display()
            ));
        }
        if failures.is_empty() {
            Ok(lines)
        } else {
            Err(failures.join("\n"))
        }
    }
}

/// `--dump-state FILE.json`: the values of every info and control structure at the end.
pub struct StateDump {
    path: PathBuf,
}

impl StateDump {
    /// Writes to `path` at the end of the run.
    pub fn new(path: &Path) -> StateDump {
        StateDump {
            path: path.to_path_buf(),
        }
    }
}

impl Sink for StateDump {
    fn end(&mut self, runtime: &mut Runtime, _outcome: &Outcome) -> Result<Vec<String>, String> {
        let state = voml_runtime::state::of(runtime);
        let text = serde_json::to_string_pretty(&state).unwrap_or_default() + "\n";
        std::fs::write(&self.path, text)
            .map_err(|e| format!("cannot write `{}`: {e}", self.path.display()))?;
        Ok(vec![format!(
            "wrote {} (the state at the end of the run)",
            self.path.display()
        )])
    }
}

/// `--profile`: at the end, how often each part of each component ran and the time it took,
/// against the run's wall time.
pub struct Profiler;

impl Sink for Profiler {
    fn end(&mut self, runtime: &mut Runtime, outcome: &Outcome) -> Result<Vec<String>, String> {
        let Some(rows) = runtime.profile() else {
            return Ok(Vec::new());
        };
        let mut lines = vec![format!(
            "where the time went ({} records in {:.2} s, loading not included):",
            outcome.records,
            outcome.elapsed.as_secs_f64()
        )];
        let (loading, parts): (Vec<_>, Vec<_>) =
            rows.into_iter().partition(|r| r.component == "loading");
        lines.extend(
            voml_runtime::profile::table(&parts, outcome.elapsed)
                .into_iter()
                .map(|l| format!("  {l}")),
        );
        if let Some(l) = loading.first() {
            lines.push(format!(
                "  loading the visual object (engine, program, top level) took {:.2} s",
                l.time.as_secs_f64()
            ));
        }
        Ok(lines)
    }
}
