//! `voml serve`: runs a visual object with the driver, as a window run does, drawing through
//! the web back end, and serves the page that shows its views in a browser.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use voml_driver::{Sink, StateDump, Terminal};
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
    let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
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
