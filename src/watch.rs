//! `--watch`: the spec and every file it includes are looked at a few times a second; when
//! one changes, the spec is compiled again and, when it compiles, the new visual object takes
//! over between two records (the driver's [`voml_driver::Reload`]). An edit with errors is
//! reported with its diagnostics, and the visual object keeps running as it was.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use voml_driver::report::Reporter;
use voml_ir::CompiledVo;
use voml_llvo::LazyRaster;
use voml_runtime::Runtime;

use crate::run::{compile_spec, load_runtime, Compiled, RunArgs};

/// How often the files are looked at.
const EVERY: Duration = Duration::from_millis(200);

/// A file's last modification and size: either changing means the file changed.
type Stamp = Option<(SystemTime, u64)>;

fn stamp(path: &PathBuf) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

pub struct Watch {
    args: RunArgs,
    files: Vec<(PathBuf, Stamp)>,
    next: Instant,
}

impl Watch {
    /// Watches the spec and `files` (what the compiler read for it: entities, imports).
    pub fn new(args: &RunArgs, files: Vec<PathBuf>) -> Watch {
        let mut watch = Watch {
            args: args.clone(),
            files: Vec::new(),
            next: Instant::now() + EVERY,
        };
        watch.watch(files);
        watch
    }

    fn watch(&mut self, files: Vec<PathBuf>) {
        let mut paths = vec![self.args.spec.clone()];
        for path in files {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        self.files = paths
            .into_iter()
            .map(|p| {
                let s = stamp(&p);
                (p, s)
            })
            .collect();
    }

    /// The spec compiled again: the visual object, or the diagnostics to show.
    fn compile(&mut self) -> Result<CompiledVo, String> {
        let Compiled { vo, shown, db } = compile_spec(&self.args, true);
        // Whatever happens, the files it read now are the ones to watch.
        if let Some(db) = &db {
            self.watch(sources(db));
        }
        match vo {
            Some(vo) => {
                eprint!("{shown}");
                Ok(vo)
            }
            None => Err(shown.trim_end().to_string()),
        }
    }
}

impl voml_driver::Reload for Watch {
    fn poll(&mut self, current: &mut Runtime, reporter: &mut dyn Reporter) -> Option<Runtime> {
        let now = Instant::now();
        if now < self.next {
            return None;
        }
        self.next = now + EVERY;
        let changed = self.files.iter().any(|(p, s)| stamp(p) != *s);
        if !changed {
            return None;
        }
        for (path, s) in &mut self.files {
            *s = stamp(path);
        }
        let spec = self.args.spec.display().to_string();
        let vo = match self.compile() {
            Ok(vo) => vo,
            Err(shown) => {
                reporter.line(&format!(
                    "{shown}\n{spec}: the edit has errors; the visual object runs on as it was"
                ));
                return None;
            }
        };
        // A window goes over to the new visual object only once it is known to load.
        let backend: Box<dyn voml_llvo::Backend> = if current.interactive() {
            if let Err(e) = load_runtime(&self.args, vo.clone(), Box::new(LazyRaster::new())) {
                reporter.line(&format!(
                    "{spec}: the edit cannot be loaded ({e}); the visual object runs on as it was"
                ));
                return None;
            }
            current.take_backend()
        } else {
            Box::new(LazyRaster::new())
        };
        match load_runtime(&self.args, vo, backend) {
            Ok(rt) => Some(rt),
            Err(e) => {
                reporter.line(&format!(
                    "{spec}: the edit cannot be loaded ({e}); the visual object runs on as it was"
                ));
                None
            }
        }
    }
}

/// The files the compiler read for a spec.
pub fn sources(db: &voml_compiler::SourceDb) -> Vec<PathBuf> {
    (0..db.len() as u32)
        .map(|f| db.path(f).to_path_buf())
        .collect()
}
