//! `voml serve`: runs a visual object with the driver, as a window run does, drawing through
//! the web back end, and serves the page that shows its views in a browser.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use voml_driver::{Outcome, Sink, StateDump, Terminal};
use voml_runtime::{Runtime, TimedSound};
use voml_web::{Hub, Server, WebBackend};

use crate::run::RunArgs;

/// What `voml serve` was asked to do beyond a run's arguments.
pub struct ServeArgs {
    pub run: RunArgs,
    /// Where the page is served.
    pub http: SocketAddr,
    /// Whether the token is required on loopback too (elsewhere it always is).
    pub token: bool,
    /// The history's limit, in bytes.
    pub history: usize,
}

pub fn serve(args: &ServeArgs) -> ExitCode {
    let run = &args.run;
    let Some((vo, _inputs, _db)) = crate::run::load(run, true) else {
        return ExitCode::from(1);
    };
    if vo.views.is_empty() {
        eprintln!(
            "error: the visual object has no views to show; run it with `voml run --headless`"
        );
        return ExitCode::from(1);
    }
    if let Some(trace) = &run.trace {
        if let Err(e) = crate::run::trace_is_readable(trace) {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    }
    // Anything but loopback is reachable by others: every request must carry the token.
    let token = if args.token || voml_web::needs_token(&args.http) {
        match voml_web::new_token() {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("error: cannot make an access token: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        None
    };
    let hub = Arc::new(Mutex::new(Hub::new(args.history)));
    let server = match Server::start(args.http, token.clone(), hub.clone()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot serve on {}: {e}", args.http);
            return ExitCode::from(1);
        }
    };
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "serving {} on {}", run.spec.display(), server.addr());
        if token.is_some() {
            let _ = writeln!(out, "access token required: the page's address carries it");
        }
        let _ = writeln!(out, "open {}", server.url());
        let _ = writeln!(out, "Ctrl-C ends the run");
        let _ = out.flush();
    }
    let mut runtime =
        match crate::run::load_runtime(run, vo, Box::new(WebBackend::new(hub.clone()))) {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("error: the visual object cannot be loaded: {e}");
                return ExitCode::from(1);
            }
        };
    let Some(mut source) = crate::run::open_source(run) else {
        return ExitCode::from(1);
    };
    let mut reporter = Terminal::new(runtime.vo(), run.color);
    let mut sinks: Vec<Box<dyn Sink>> = vec![
        Box::new(Inspector::new(hub.clone())),
        Box::new(SoundToPages { hub: hub.clone() }),
    ];
    if let Some(path) = &run.dump_state {
        sinks.push(Box::new(StateDump::new(path)));
    }
    // A seek back (← or Home on the page) runs the visual object again from the start of
    // the trace, drawing through the same back end.
    let mut restart = |old: &mut voml_runtime::Runtime| {
        let source = crate::run::reopen(run)?;
        let vo = old.vo().clone();
        let runtime = crate::run::load_runtime(run, vo, old.take_backend()).ok()?;
        Some((runtime, source))
    };
    let code = crate::run::drive(
        run,
        run.speed,
        &mut runtime,
        &mut source,
        voml_driver::Hooks {
            restart: Some(&mut restart),
            reload: None,
        },
        &mut sinks,
        &mut reporter,
    );
    eprintln!("stopped serving");
    code
}

/// A value longer than this (as JSON) is shown cut, and cannot be edited in the page.
const SHOWN_BYTES: usize = 4096;
/// The inspector's values are looked at no more often than this ...
const INSPECT_EVERY: Duration = Duration::from_millis(100);
/// ... nor more than this share of the time (the values of a large visual object take long
/// to convert).
const INSPECT_SHARE: u32 = 20;

/// The page's inspector, fed as `--dump-state` is: the visual object's info and control
/// structures with their declared types and their values (`voml_runtime::state`), sent to
/// the pages when they change. The page edits control structures with `set` commands,
/// which the driver carries out.
struct Inspector {
    hub: Arc<Mutex<Hub>>,
    last: String,
    next: Instant,
}

impl Inspector {
    fn new(hub: Arc<Mutex<Hub>>) -> Inspector {
        Inspector {
            hub,
            last: String::new(),
            next: Instant::now(),
        }
    }

    fn look(&mut self, runtime: &Runtime, now: bool) {
        let start = Instant::now();
        if !now && start < self.next {
            return;
        }
        let line = inspector_line(runtime);
        let took = start.elapsed();
        self.next = Instant::now() + INSPECT_EVERY.max(took * INSPECT_SHARE);
        if line != self.last {
            self.hub
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .set_inspector(line.clone());
            self.last = line;
        }
    }
}

impl Sink for Inspector {
    fn progress(&mut self, runtime: &mut Runtime) -> Result<(), String> {
        self.look(runtime, false);
        Ok(())
    }

    fn end(&mut self, runtime: &mut Runtime, _outcome: &Outcome) -> Result<Vec<String>, String> {
        self.look(runtime, true);
        Ok(Vec::new())
    }
}

/// `{"op": "inspector", "visual-object": NAME, "infos": [STRUCTURE...], "controls": [...]}`,
/// each structure `{"name", "type", "text"}` (its value as JSON text) with `"value"` when the
/// text is whole, or `"cut": true` when it is not.
fn inspector_line(runtime: &Runtime) -> String {
    let state = voml_runtime::state::of(runtime);
    let vo = runtime.vo();
    let section = |vars: &[voml_ir::Variable], key: &str| -> Value {
        let values = &state[key];
        Value::Array(
            vars.iter()
                .map(|v| {
                    let value = values.get(&v.name).cloned().unwrap_or(Value::Null);
                    let text = value.to_string();
                    let mut entry = json!({ "name": v.name, "type": v.ty.word() });
                    if text.len() <= SHOWN_BYTES {
                        entry["text"] = Value::String(text);
                        entry["value"] = value;
                    } else {
                        let mut cut = SHOWN_BYTES;
                        while !text.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        entry["text"] = Value::String(format!("{}…", &text[..cut]));
                        entry["cut"] = Value::Bool(true);
                    }
                    entry
                })
                .collect(),
        )
    };
    // `op` first, as in the drawing commands' lines.
    format!(
        r#"{{"op":"inspector","visual-object":{},"infos":{},"controls":{}}}"#,
        Value::String(vo.name.clone()),
        section(&vo.infos, "infos"),
        section(&vo.controls, "controls"),
    )
}

/// The visual object's sound commands, to the pages connected (which play them with
/// WebAudio when their sound is on), as `{"op": "sound", "at": T, "sound": COMMAND}`.
struct SoundToPages {
    hub: Arc<Mutex<Hub>>,
}

impl Sink for SoundToPages {
    fn sounds(&mut self, _runtime: &mut Runtime, sounds: &[TimedSound]) -> Result<(), String> {
        // One message for what a step made, a line each.
        let mut lines = String::new();
        for sound in sounds {
            if let Ok(command) = serde_json::to_string(&sound.command) {
                let at = Value::from(sound.at);
                if !lines.is_empty() {
                    lines.push('\n');
                }
                lines.push_str(&format!(r#"{{"op":"sound","at":{at},"sound":{command}}}"#));
            }
        }
        if !lines.is_empty() {
            let mut hub = self.hub.lock().unwrap_or_else(PoisonError::into_inner);
            hub.broadcast_now(lines);
        }
        Ok(())
    }
}
