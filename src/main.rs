//! `voml`: the command line of the VOML compiler and runtime.
//!
//! Exit status: 0 success, 1 when a spec has errors (or a run failed), 2 on usage errors.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod cache;
mod components;
mod download;
mod fetch;
mod paths;
mod record;
mod run;
mod send;
mod serve;
mod several;
mod watch;
mod window;
use voml_compiler::{diag, Code, Options, RealFs};

#[derive(Parser)]
#[command(
    name = "voml",
    version,
    about = "Compile and run visual objects (VOML) over performance event traces"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check specs and report every problem; exit 1 if any has errors.
    Check {
        /// The .voml files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        common: CommonArgs,
        /// Treat warnings as errors.
        #[arg(long)]
        deny_warnings: bool,
    },
    /// Compile a spec into a self-contained visual object (.vo), or print its IR or Scheme.
    Compile {
        file: PathBuf,
        /// Where to write the compiled visual object (default: FILE with extension .vo).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Print the IR (JSON) or the tangled Scheme program instead of writing a .vo file.
        #[arg(long, value_enum)]
        emit: Option<Emit>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Replay a trace through a visual object and write its pictures.
    Run(Box<RunCli>),
    /// Run a visual object and show its views in a browser: serves a page and streams the
    /// drawing to it over a WebSocket.
    ///
    /// The page draws each view on a canvas; a page that opens later gets the current
    /// picture at once, and several may watch. Its buttons, seek bar and keys drive the
    /// replay as a window's keys and --control do (space pause/resume, → step, ← back, Home
    /// start, + faster, - slower); in a view, the wheel zooms, a drag pans and a click goes
    /// to the visual object, as in a window; its inspector shows the info and control
    /// structures as they change and edits control structures. The input is a trace or,
    /// with --listen, live producers. The server
    /// listens on loopback unless given another address; then it prints an access token,
    /// part of the page's address, without which every request is refused. Ctrl-C or
    /// SIGTERM ends it.
    Serve(Box<ServeCli>),
    /// Send a trace to a `voml run --listen` socket as a live producer would, or publish
    /// it on a NATS JetStream server (--nats, --subject) for `voml run --nats` to consume.
    Send {
        /// The trace (`-` for standard input): PICL, Pajé, Chrome JSON, Paraver or an OTF2
        /// anchor file, told by its content; records of the other formats are sent as PICL
        /// lines.
        trace: PathBuf,
        /// Read the trace in this format instead of telling it by its content.
        #[arg(long, value_enum, value_name = "FORMAT")]
        format: Option<TraceFormat>,
        /// Where `voml run --listen` listens: tcp://HOST:PORT, :PORT, or unix:PATH.
        #[arg(
            long,
            value_name = "ADDR",
            required_unless_present = "nats",
            conflicts_with = "nats"
        )]
        to: Option<String>,
        /// Publish on this NATS JetStream server instead (nats://HOST:PORT): each record
        /// stored by the server before the next batch goes, through a server restart. Needs
        /// a build with the `nats` feature.
        #[arg(long, value_name = "URL", requires = "subject")]
        nats: Option<String>,
        /// With --nats: the run's subject; the records go on SUBJECT.NAME.
        #[arg(long, value_name = "SUBJECT", requires = "nats")]
        subject: Option<String>,
        /// With --nats: the producer's name (default: one made of this process and moment).
        #[arg(long, value_name = "NAME", requires = "nats")]
        name: Option<String>,
        /// Send at this many trace seconds per second (default: as fast as possible).
        #[arg(long, value_name = "FACTOR")]
        speed: Option<f64>,
        /// Open one connection per processor (the record's fourth field), as monitors of the
        /// processes of a real program do.
        #[arg(long)]
        split_by_processor: bool,
    },
    /// Download the pinned remote components of specs into the component cache.
    ///
    /// Walks each spec's entities and imports (and the files they bring, which may name
    /// remote components of their own), downloads every `https://` component the cache
    /// lacks, checks it against its sha256 pin and stores it named by that digest. A
    /// download that does not match its pin is refused and nothing is stored. Files are
    /// limited to 16 MiB; plain `http` is fetched only from this machine (localhost,
    /// 127.0.0.1, [::1]). `voml check`, `compile` and `run` read the cache and never
    /// download. Exit status 1 when anything could not be fetched, or a reference could not
    /// be followed (every problem is reported, at its place in the spec).
    ///
    /// The cache is `--cache DIR`, else `VOML_CACHE`, else `$XDG_CACHE_HOME/voml/components`,
    /// else `~/.cache/voml/components`.
    Fetch {
        /// The .voml files whose components to fetch.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        search: SearchArgs,
        /// Colour in diagnostics.
        #[arg(long, value_enum, default_value = "auto")]
        color: ColorChoice,
    },
    /// List the standard component library (`voml:NAME` imports), or show one component's
    /// interface.
    Components {
        /// A component's name: show its interface and description.
        name: Option<String>,
    },
    /// Explain a diagnostic code (e.g. `voml explain E0021`), or print the whole catalogue.
    Explain {
        /// A code such as E0021 or a name such as unknown-event.
        code: Option<String>,
        /// Print every code (Markdown).
        #[arg(long)]
        all: bool,
    },
}

/// Where specs find the files they name.
#[derive(clap::Args)]
struct SearchArgs {
    /// Add a directory to the component search path (after the spec's own directory).
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    include: Vec<PathBuf>,
    /// The component cache, where pinned remote components are kept (files named by their
    /// sha256) [default: $VOML_CACHE, else $XDG_CACHE_HOME/voml/components, else
    /// ~/.cache/voml/components].
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
}

#[derive(clap::Args)]
struct CommonArgs {
    #[command(flatten)]
    search: SearchArgs,
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value = "human")]
    message_format: MessageFormat,
    /// Colour in human diagnostics.
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorChoice,
}

/// The `--format` words: the trace formats `voml_trace` reads.
#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum TraceFormat {
    /// PICL "new" format (MPICL's), one record a line.
    Picl,
    /// Pajé (PajeNG, SimGrid, Poti).
    Paje,
    /// Chrome Trace Event Format (JSON).
    Chrome,
    /// Paraver `.prv`, with its `.pcf` beside it.
    Paraver,
    /// OTF2, named by its anchor file (read through `otf2-print`).
    Otf2,
}

impl From<TraceFormat> for voml_trace::Format {
    fn from(f: TraceFormat) -> Self {
        match f {
            TraceFormat::Picl => voml_trace::Format::Picl,
            TraceFormat::Paje => voml_trace::Format::Paje,
            TraceFormat::Chrome => voml_trace::Format::Chrome,
            TraceFormat::Paraver => voml_trace::Format::Paraver,
            TraceFormat::Otf2 => voml_trace::Format::Otf2,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Emit {
    /// The compiled visual object as JSON (what a .vo file holds).
    Ir,
    /// The tangled Scheme program.
    Scheme,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum MessageFormat {
    Human,
    /// One JSON object per diagnostic, one per line.
    Json,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// glibc's allocator raises the size from which it maps a block on its own each time such a
/// block is freed; larger blocks then come from the heap, whose pages stay with the process
/// once they are freed, and checking or compiling a large spec (whose document tree, program
/// and maps grow and are freed in turn) kept a tenth more memory than it ever used at once.
/// A fixed threshold gives large blocks back when they are freed, and lets a growing one be
/// moved by remapping instead of copying. Only for checking and compiling: a replay, which
/// allocates batches of records over and over, would map and unmap each.
fn fixed_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of the allocator, before any thread is started.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

fn main() -> ExitCode {
    // The Scheme engine wants a home directory for its packages; VO code never installs any,
    // so a temporary one keeps it from creating directories in the user's home.
    if std::env::var_os("STEEL_HOME").is_none() {
        std::env::set_var("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"));
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {
        Command::Check {
            files,
            common,
            deny_warnings,
        } => {
            fixed_mmap_threshold();
            check(&files, &common, deny_warnings)
        }
        Command::Compile {
            file,
            output,
            emit,
            common,
        } => {
            fixed_mmap_threshold();
            compile(&file, output, emit, &common)
        }
        Command::Fetch {
            files,
            search,
            color,
        } => fetch::fetch(&files, &options(&search), use_color(color)),
        Command::Explain { code, all } => explain(code.as_deref(), all),
        Command::Components { name } => components::show(name.as_deref()),
        Command::Send {
            trace,
            format,
            to,
            nats,
            subject,
            name,
            speed,
            split_by_processor,
        } => {
            let to = match (to, nats, subject) {
                (Some(to), _, _) => match voml_driver::listen::ListenAddr::parse(&to) {
                    Ok(a) => send::Destination::Socket(a),
                    Err(e) => {
                        eprintln!("error: --to: {e}");
                        return ExitCode::from(2);
                    }
                },
                (None, Some(url), Some(subject)) => send::Destination::Nats { url, subject, name },
                _ => {
                    eprintln!("error: name a --to socket, or a --nats server and its --subject");
                    return ExitCode::from(2);
                }
            };
            if speed.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
                eprintln!("error: --speed needs a positive factor");
                return ExitCode::from(2);
            }
            send::send(&send::SendArgs {
                trace,
                format: format.map(Into::into),
                to,
                speed,
                split_by_processor,
            })
        }
        Command::Serve(cli) => serve_command(*cli),
        Command::Run(run_cli) => {
            let RunCli {
                specs,
                trace,
                format,
                listen,
                nats,
                subject,
                producers,
                reorder_window_ms,
                control,
                until,
                from,
                headless,
                speed,
                exit_when_finished,
                watch,
                no_watch,
                audio,
                dump_state,
                record,
                max_audio_seconds,
                profile,
                every_round,
                out,
                frames_every,
                strict,
                budget_ms,
                common,
            } = *run_cli;
            if !(max_audio_seconds.is_finite() && max_audio_seconds > 0.0) {
                eprintln!("error: --max-audio-seconds needs a positive number of seconds");
                return ExitCode::from(2);
            }
            if record.is_some() && !headless {
                eprintln!("error: --record writes the drawing of a headless run: add --headless");
                return ExitCode::from(2);
            }
            if record.is_some() && specs.len() > 1 {
                eprintln!("error: --record records one visual object; give one spec");
                return ExitCode::from(2);
            }
            if audio.is_some() && !headless {
                eprintln!("error: --audio writes a WAV file in a headless run: add --headless (live sound output comes later)");
                return ExitCode::from(2);
            }
            let Ok(listen) = listen_addr(listen.as_deref()) else {
                return ExitCode::from(2);
            };
            if producers.is_some() && listen.is_none() && nats.is_none() {
                eprintln!("error: --producers goes with --listen or --nats");
                return ExitCode::from(2);
            }
            if !headless && !voml_window::display_available() {
                let input = match (&trace, &listen, &nats) {
                    (Some(t), _, _) => format!("--trace {}", t.display()),
                    (None, Some(a), _) => format!("--listen {a}"),
                    (None, None, Some(url)) => format!(
                        "--nats {url} --subject {}",
                        subject.as_deref().unwrap_or("")
                    ),
                    (None, None, None) => String::new(),
                };
                eprintln!(
                    "error: there is no display here (DISPLAY is unset or unreachable); run headless instead: voml run {} {input} --headless --out DIR",
                    specs
                        .iter()
                        .map(|s| s.display().to_string())
                        .collect::<Vec<_>>()
                        .join(" "),
                );
                return ExitCode::from(2);
            }
            if let Some(s) = speed {
                if !(s.is_finite() && s > 0.0) {
                    eprintln!("error: --speed needs a positive factor");
                    return ExitCode::from(2);
                }
            }
            if let Some(every) = frames_every {
                if every.is_nan() || every <= 0.0 {
                    eprintln!("error: --frames-every needs a positive number of seconds");
                    return ExitCode::from(2);
                }
            }
            // Ctrl-C or SIGTERM ends the input: what was accepted is processed and the outputs
            // written. A second one ends at once.
            let _ = ctrlc::set_handler(|| {
                if voml_driver::stop_requested() {
                    std::process::exit(130);
                }
                eprintln!("\nstopping: finishing what was read and writing the outputs (again to quit at once)");
                voml_driver::request_stop();
            });
            let args = run::RunArgs {
                spec: specs[0].clone(),
                trace,
                format: format.map(Into::into),
                listen,
                nats: nats.zip(subject),
                producers,
                reorder_window: std::time::Duration::from_millis(reorder_window_ms),
                control,
                control_text: None,
                until,
                from,
                out,
                frames_every,
                strict,
                budget: std::time::Duration::from_millis(budget_ms.max(1)),
                color: use_color(common.color),
                compile_options: options(&common.search),
                window: !headless,
                speed,
                exit_when_finished,
                audio,
                max_audio_s: max_audio_seconds,
                dump_state,
                record,
                profile,
                every_round,
                watch: if headless { watch } else { !no_watch },
            };
            if specs.len() > 1 {
                several::run(&args, &specs)
            } else {
                run::run(&args)
            }
        }
    }
}

fn serve_command(cli: ServeCli) -> ExitCode {
    let ServeCli {
        spec,
        trace,
        format,
        listen,
        producers,
        reorder_window_ms,
        http,
        token,
        speed,
        history_kib,
        dump_state,
        strict,
        budget_ms,
        common,
    } = cli;
    let http: std::net::SocketAddr = match http.parse() {
        Ok(a) => a,
        Err(_) => {
            eprintln!(
                "error: --http needs an address and port, such as 127.0.0.1:8080 (got `{http}`)"
            );
            return ExitCode::from(2);
        }
    };
    if speed.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
        eprintln!("error: --speed needs a positive factor");
        return ExitCode::from(2);
    }
    if history_kib == 0 {
        eprintln!("error: --history-kib needs a positive number");
        return ExitCode::from(2);
    }
    // Ctrl-C or SIGTERM ends the run; a second one ends at once.
    let _ = ctrlc::set_handler(|| {
        if voml_driver::stop_requested() {
            std::process::exit(130);
        }
        eprintln!("\nstopping (again to quit at once)");
        voml_driver::request_stop();
    });
    let Ok(listen) = listen_addr(listen.as_deref()) else {
        return ExitCode::from(2);
    };
    let run = run::RunArgs {
        spec,
        trace,
        format: format.map(Into::into),
        listen,
        nats: None,
        producers,
        reorder_window: std::time::Duration::from_millis(reorder_window_ms),
        control: None,
        control_text: None,
        until: None,
        from: None,
        out: PathBuf::from("."),
        frames_every: None,
        strict,
        budget: std::time::Duration::from_millis(budget_ms.max(1)),
        color: use_color(common.color),
        compile_options: options(&common.search),
        window: true,
        speed,
        exit_when_finished: false,
        audio: None,
        max_audio_s: voml_driver::audio::DEFAULT_MAX_AUDIO_S,
        dump_state,
        record: None,
        profile: false,
        every_round: false,
        watch: false,
    };
    serve::serve(&serve::ServeArgs {
        run,
        http,
        token,
        history: usize::try_from(history_kib.saturating_mul(1024)).unwrap_or(usize::MAX),
    })
}

/// The address of `--listen`, if given; a bad one is said (and is `Err`).
fn listen_addr(listen: Option<&str>) -> Result<Option<voml_driver::listen::ListenAddr>, ()> {
    match listen.map(voml_driver::listen::ListenAddr::parse) {
        None => Ok(None),
        Some(Ok(addr)) => Ok(Some(addr)),
        Some(Err(e)) => {
            eprintln!("error: --listen: {e}");
            Err(())
        }
    }
}

fn options(search: &SearchArgs) -> Options {
    let mut search_path = search.include.clone();
    if let Some(path) = std::env::var_os("VOML_PATH") {
        search_path.extend(std::env::split_paths(&path).filter(|p| !p.as_os_str().is_empty()));
    }
    Options {
        search_path,
        cache_dir: cache::dir(search.cache.as_deref()),
    }
}

fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    }
}

/// Prints diagnostics; returns (errors, warnings).
fn report(out: &voml_compiler::Output, common: &CommonArgs) -> (usize, usize) {
    let errors = out.diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = out.diagnostics.len() - errors;
    match common.message_format {
        MessageFormat::Human => {
            let text = diag::render(&out.db, &out.diagnostics, use_color(common.color));
            eprint!("{text}");
        }
        MessageFormat::Json => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            for d in &out.diagnostics {
                let _ = writeln!(lock, "{}", diag::to_json(&out.db, d));
            }
        }
    }
    (errors, warnings)
}

fn check(files: &[PathBuf], common: &CommonArgs, deny_warnings: bool) -> ExitCode {
    let opts = options(&common.search);
    let mut failed = false;
    for file in files {
        let out = voml::compile_checked(file, &RealFs, &opts);
        let (errors, warnings) = report(&out, common);
        if common.message_format == MessageFormat::Human {
            eprintln!("{}: {}", file.display(), summary(errors, warnings));
        }
        failed |= errors > 0 || (deny_warnings && warnings > 0);
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn summary(errors: usize, warnings: usize) -> String {
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, 0) => "ok".to_string(),
        (0, w) => format!("ok, {}", plural(w, "warning")),
        (e, 0) => plural(e, "error"),
        (e, w) => format!("{}, {}", plural(e, "error"), plural(w, "warning")),
    }
}

fn compile(
    file: &Path,
    output: Option<PathBuf>,
    emit: Option<Emit>,
    common: &CommonArgs,
) -> ExitCode {
    let out = voml::compile_checked(file, &RealFs, &options(&common.search));
    let (errors, warnings) = report(&out, common);
    if errors == 0 && out.vo.is_none() {
        eprintln!("{}: a component library is checked, not compiled: its components become code in the specs that `use` them", file.display());
        return ExitCode::from(1);
    }
    let Some(vo) = out.vo.as_ref().filter(|_| errors == 0) else {
        if common.message_format == MessageFormat::Human {
            eprintln!(
                "{}: {}; nothing written",
                file.display(),
                summary(errors, warnings)
            );
        }
        return ExitCode::from(1);
    };
    match emit {
        Some(Emit::Ir) => println!("{}", vo.to_json()),
        Some(Emit::Scheme) => print!("{}", vo.program.text),
        None => {
            let path = output.unwrap_or_else(|| file.with_extension("vo"));
            let mut inputs = paths::Inputs::default();
            inputs.add(file);
            inputs.add_sources(&out.db);
            if let Err(e) = inputs.check_output(&path, "the output") {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
            if let Err(e) = std::fs::write(&path, vo.to_json()) {
                eprintln!("error: cannot write `{}`: {e}", path.display());
                return ExitCode::from(1);
            }
            if common.message_format == MessageFormat::Human {
                eprintln!(
                    "{}: {}; wrote {}",
                    file.display(),
                    summary(errors, warnings),
                    path.display()
                );
            }
        }
    }
    ExitCode::SUCCESS
}

fn explain(code: Option<&str>, all: bool) -> ExitCode {
    if all {
        print!("{}", diag::catalogue_markdown());
        return ExitCode::SUCCESS;
    }
    let Some(text) = code else {
        eprintln!("error: name a code (e.g. `voml explain E0021`) or pass --all");
        return ExitCode::from(2);
    };
    match Code::parse(text) {
        Some(code) => {
            println!("{} `{}`\n", code.as_str(), code.slug());
            for line in code.explanation().lines() {
                println!("{}", line.trim());
            }
            ExitCode::SUCCESS
        }
        None => {
            let names: Vec<&str> = Code::ALL.iter().map(|c| c.slug()).collect();
            let hint = diag::closest(text, names.iter().copied())
                .map(|b| format!(" (did you mean `{b}`?)"))
                .unwrap_or_default();
            eprintln!("error: no diagnostic code `{text}`{hint}; `voml explain --all` lists them");
            ExitCode::from(2)
        }
    }
}

/// The arguments of `voml serve`.
#[derive(clap::Args)]
struct ServeCli {
    /// The spec (.voml, compiled on the fly) or a compiled visual object (.vo).
    #[arg(value_name = "SPEC")]
    spec: PathBuf,
    /// The trace to replay (`-` for standard input): PICL, Pajé, Chrome JSON, Paraver or an
    /// OTF2 anchor file, told by its content.
    #[arg(long, short = 't', required_unless_present = "listen")]
    trace: Option<PathBuf>,
    /// Read the trace in this format instead of telling it by its content.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "listen")]
    format: Option<TraceFormat>,
    /// Take live records from producers that connect here instead of a trace, as
    /// `voml run --listen` does: tcp://HOST:PORT, :PORT (loopback), or unix:PATH.
    #[arg(long, value_name = "ADDR", conflicts_with = "trace")]
    listen: Option<String>,
    /// With --listen: end the input after this many producers have connected and closed.
    #[arg(long, value_name = "N", requires = "listen")]
    producers: Option<usize>,
    /// With --listen: how long a record may wait for earlier ones from other producers.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    reorder_window_ms: u64,
    /// Where to serve the page: loopback by default. Any other address must be given here
    /// and makes the server print an access token the page must present.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    http: String,
    /// Require the access token on loopback too (a machine others log in to can reach it).
    #[arg(long)]
    token: bool,
    /// Replay at this many trace seconds per second (default: as fast as possible).
    #[arg(long, value_name = "FACTOR")]
    speed: Option<f64>,
    /// The drawing kept for pages that open later: beyond this many KiB it is replaced by
    /// the current picture.
    #[arg(long, value_name = "KIB", default_value_t = 16384)]
    history_kib: u64,
    /// When the run ends, write the values of every info and control structure to this
    /// JSON file.
    #[arg(long, value_name = "FILE.json")]
    dump_state: Option<PathBuf>,
    /// Stop at the first bad trace line or failing component.
    #[arg(long)]
    strict: bool,
    /// Time the code for one event may run (CPU time on Linux) before it is interrupted.
    #[arg(long, value_name = "MS", default_value_t = 250)]
    budget_ms: u64,
    #[command(flatten)]
    common: CommonArgs,
}

/// The arguments of `voml run`.
#[derive(clap::Args)]
struct RunCli {
    /// The spec (.voml, compiled on the fly) or a compiled visual object (.vo); several
    /// run side by side on the same records (outputs under --out/NAME/).
    #[arg(required = true, num_args = 1.., value_name = "SPEC")]
    specs: Vec<PathBuf>,
    /// The trace to replay (`-` for standard input): PICL, Pajé, Chrome JSON, Paraver or an
    /// OTF2 anchor file, told by its content.
    #[arg(long, short = 't', required_unless_present_any = ["listen", "nats"])]
    trace: Option<PathBuf>,
    /// Read the trace in this format instead of telling it by its content.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "listen")]
    format: Option<TraceFormat>,
    /// Take live records from producers that connect here instead of a trace:
    /// tcp://HOST:PORT, :PORT (loopback), or unix:PATH. Runs until --producers have come
    /// and gone, or until interrupted (Ctrl-C, SIGTERM); the outputs are written either way.
    #[arg(long, value_name = "ADDR", conflicts_with = "trace")]
    listen: Option<String>,
    /// Take the records producers publish on a NATS JetStream server instead of a trace
    /// (nats://HOST:PORT), on the run's --subject; every record exactly once, through a
    /// server restart. Needs a build with the `nats` feature.
    #[arg(long, value_name = "URL", conflicts_with_all = ["trace", "listen", "format"], requires = "subject")]
    nats: Option<String>,
    /// With --nats: the run's subject (producers publish on SUBJECT.NAME).
    #[arg(long, value_name = "SUBJECT", requires = "nats")]
    subject: Option<String>,
    /// With --listen or --nats: end after this many producers have come and gone.
    #[arg(long, value_name = "N")]
    producers: Option<usize>,
    /// With --listen or --nats: how long a record may wait for earlier ones from other
    /// producers.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    reorder_window_ms: u64,
    /// Drive the replay with commands read from FILE (`-`: standard input): pause,
    /// resume, step [N], step-to EVENT, until T, seek T, speed F, snapshot NAME, set NAME
    /// VALUE (a control structure, the value in JSON). When they run out, the run ends
    /// where it stands and writes its outputs.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["until", "from"])]
    control: Option<PathBuf>,
    /// Replay up to trace time T (every record stamped at most T), then end.
    #[arg(long, value_name = "T")]
    until: Option<f64>,
    /// Go as fast as possible to trace time T, then on at --speed.
    #[arg(long, value_name = "T")]
    from: Option<f64>,
    /// Render without a window: write PNGs to --out.
    #[arg(long)]
    headless: bool,
    /// In a window, replay at this many trace seconds per second (default: as fast as
    /// possible).
    #[arg(long, value_name = "FACTOR")]
    speed: Option<f64>,
    /// Close the windows when the trace ends.
    #[arg(long)]
    exit_when_finished: bool,
    /// When the spec or a file it includes changes, compile it again and let the new
    /// visual object take over without stopping the input; structures declared as before
    /// keep their values, and an edit with errors leaves the running one as it was. The
    /// default in a window.
    #[arg(long, conflicts_with = "no_watch")]
    watch: bool,
    /// In a window: do not watch the spec for changes.
    #[arg(long)]
    no_watch: bool,
    /// Write the visual object's sound to a WAV file (headless), in step with trace time
    /// divided by --speed (default 1).
    #[arg(long, value_name = "FILE.wav")]
    audio: Option<PathBuf>,
    /// At the end of the run, write the values of every info and control structure
    /// to this JSON file.
    #[arg(long, value_name = "FILE.json")]
    dump_state: Option<PathBuf>,
    /// Write the run as one self-contained HTML page that replays its drawing (and keeps
    /// its sound commands) with pause, step, seek and speed (headless; a straight run: not
    /// with --control or --watch).
    #[arg(long, value_name = "FILE.html", conflicts_with_all = ["control", "watch"])]
    record: Option<PathBuf>,
    /// The longest sound --audio writes; sound after it is dropped with a warning.
    #[arg(long, value_name = "SECONDS", default_value_t = voml_driver::audio::DEFAULT_MAX_AUDIO_S)]
    max_audio_seconds: f64,
    /// At the end, show where the time went: how often each part of each component ran
    /// and the time it took (its drawing and sound included).
    #[arg(long)]
    profile: bool,
    /// Run every display in every round, even one that only shows the state of its moment
    /// (`refresh="update changed"`, alone in its views) and is otherwise drawn only when a
    /// picture is needed: its faults then point at the very record after which it failed.
    #[arg(long)]
    every_round: bool,
    /// Where the pictures go.
    #[arg(long, short = 'o', default_value = "out")]
    out: PathBuf,
    /// Also write numbered frames every SECONDS of trace time.
    #[arg(long, value_name = "SECONDS")]
    frames_every: Option<f64>,
    /// Stop at the first bad trace line or failing component.
    #[arg(long)]
    strict: bool,
    /// Time the code for one event may run (CPU time on Linux) before it is interrupted.
    #[arg(long, value_name = "MS", default_value_t = 250)]
    budget_ms: u64,
    #[command(flatten)]
    common: CommonArgs,
}
