//! `voml send`: replays a trace as a live producer to a `voml run --listen` socket, or
//! publishes it on a NATS JetStream server for `voml run --nats`, paced by trace time or as
//! fast as possible, as one producer or one per processor (as monitors of real programs do).
//! A PICL trace goes as it is, line for line; a trace of another format is read by its
//! adapter and its records go as PICL lines.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use voml_driver::listen::ListenAddr;
use voml_trace::{Format, FormatReader, ReadOptions};

/// Where `voml send` sends.
pub enum Destination {
    /// A `voml run --listen` socket.
    Socket(ListenAddr),
    /// A NATS JetStream server: its URL, the run's subject, the producer's name.
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    Nats {
        url: String,
        subject: String,
        name: Option<String>,
    },
}

impl std::fmt::Display for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Destination::Socket(a) => write!(f, "{a}"),
            Destination::Nats { url, subject, .. } => write!(f, "{url} ({subject})"),
        }
    }
}

/// What `voml send` was asked to do.
pub struct SendArgs {
    pub trace: PathBuf,
    /// The trace's format, when forced (`None`: told by its content).
    pub format: Option<Format>,
    pub to: Destination,
    pub speed: Option<f64>,
    pub split_by_processor: bool,
}

type Conn = BufWriter<Box<dyn Write>>;

fn connect(to: &ListenAddr) -> std::io::Result<Conn> {
    let stream: Box<dyn Write> = match to {
        ListenAddr::Tcp(a) => {
            let s = std::net::TcpStream::connect(a)?;
            s.set_nodelay(true)?;
            Box::new(s)
        }
        ListenAddr::Unix(p) => Box::new(UnixStream::connect(p)?),
    };
    Ok(BufWriter::with_capacity(1 << 16, stream))
}

/// Where the lines go: a connection per producer, or a NATS publisher.
enum Out<'a> {
    Sockets {
        to: &'a ListenAddr,
        conns: HashMap<String, Conn>,
    },
    #[cfg(feature = "nats")]
    Nats(Box<voml_driver::nats::Publisher>),
}

impl<'a> Out<'a> {
    /// Ready to send to `to` (a NATS server is reached now; sockets as producers come).
    fn open(to: &'a Destination) -> Result<Out<'a>, String> {
        match to {
            Destination::Socket(to) => Ok(Out::Sockets {
                to,
                conns: HashMap::new(),
            }),
            #[cfg(feature = "nats")]
            Destination::Nats { url, subject, name } => {
                voml_driver::nats::Publisher::connect(url, subject, name.as_deref())
                    .map(|p| Out::Nats(Box::new(p)))
            }
            #[cfg(not(feature = "nats"))]
            Destination::Nats { .. } => Err("this voml was built without NATS: build it with `cargo build --release --features nats`".into()),
        }
    }

    /// Makes producer `key` ready to send, unless it is: connected to the socket, or
    /// known to the NATS server under a name not used on the run yet.
    fn producer(&mut self, key: &str) -> Result<(), String> {
        match self {
            Out::Sockets { to, conns } => {
                if !conns.contains_key(key) {
                    let c = connect(to).map_err(|e| format!("cannot connect to {to}: {e}"))?;
                    conns.insert(key.to_string(), c);
                }
                Ok(())
            }
            #[cfg(feature = "nats")]
            Out::Nats(p) => p.open(key),
        }
    }

    /// Sends `line` as producer `key`, made ready by [`Out::producer`]; `live`: at once, not when
    /// more have gathered.
    fn line(&mut self, key: &str, line: &[u8], live: bool) -> Result<(), String> {
        match self {
            Out::Sockets { to, conns } => {
                let Some(conn) = conns.get_mut(key) else {
                    return Err(format!("producer `{key}` was never opened"));
                };
                conn.write_all(line)
                    .and_then(|()| conn.write_all(b"\n"))
                    .and_then(|()| if live { conn.flush() } else { Ok(()) })
                    .map_err(|e| format!("{to} stopped taking records: {e}"))
            }
            #[cfg(feature = "nats")]
            Out::Nats(p) => {
                p.line(key, line)?;
                if live {
                    p.flush()?;
                }
                Ok(())
            }
        }
    }

    /// Sends what waits (before a paced sender sleeps).
    fn flush(&mut self) {
        match self {
            Out::Sockets { conns, .. } => {
                for c in conns.values_mut() {
                    let _ = c.flush();
                }
            }
            #[cfg(feature = "nats")]
            Out::Nats(p) => {
                let _ = p.flush();
            }
        }
    }

    /// Sends the rest and ends every producer; how many there were.
    fn finish(self) -> Result<usize, String> {
        match self {
            Out::Sockets { to, mut conns } => {
                let producers = conns.len();
                for (key, mut c) in conns.drain() {
                    c.flush().map_err(|e| {
                        format!("{to} stopped taking records of producer `{key}`: {e}")
                    })?;
                }
                Ok(producers)
            }
            #[cfg(feature = "nats")]
            Out::Nats(p) => p.finish(),
        }
    }
}

pub fn send(args: &SendArgs) -> ExitCode {
    let raw: Box<dyn Read> = if args.trace.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        match std::fs::File::open(&args.trace) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!(
                    "error: cannot open the trace `{}`: {e}",
                    args.trace.display()
                );
                return ExitCode::from(1);
            }
        }
    };
    let sniffed = match args.format {
        Some(f) => Ok((f, std::io::Cursor::new(Vec::new()).chain(raw))),
        None => voml_trace::sniff(raw),
    };
    let (format, raw) = match sniffed {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: reading `{}`: {e}", args.trace.display());
            return ExitCode::from(1);
        }
    };
    let picl = format == Format::Picl;
    let input: Box<dyn Iterator<Item = std::io::Result<Vec<u8>>>> = if picl {
        Box::new(BufReader::with_capacity(1 << 16, raw).split(b'\n'))
    } else {
        let path = (args.trace.as_os_str() != "-").then_some(args.trace.as_path());
        let reader = FormatReader::from_input(
            raw,
            args.trace.display().to_string(),
            ReadOptions::default(),
            Some(format),
            path,
        );
        // A bad record has no PICL line to send: it is reported here, and the rest goes on.
        Box::new(reader.filter_map(|item| match item {
            Ok(record) => Some(Ok(record.to_string().into_bytes())),
            Err(e) => {
                eprintln!("warning: {e}; not sent");
                None
            }
        }))
    };
    let live = args.trace.as_os_str() == "-";
    let speed = args.speed.filter(|s| s.is_finite() && *s > 0.0);
    let started = Instant::now();
    let mut origin: Option<f64> = None;
    let mut out = match Out::open(&args.to) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let mut sent = 0u64;
    let place = if picl { "line" } else { "record" };
    for (n, line) in input.enumerate() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: reading `{}`: {e}", args.trace.display());
                return ExitCode::from(1);
            }
        };
        let text = String::from_utf8_lossy(&line);
        let mut tokens = text.split_whitespace();
        let first = tokens.next();
        if first.is_none_or(|t| t.starts_with('#') || t.starts_with('%')) {
            continue;
        }
        let ts = tokens.nth(1).and_then(|t| t.parse::<f64>().ok());
        let key = if args.split_by_processor {
            tokens.next().unwrap_or("").to_string()
        } else {
            String::new()
        };
        // Paced: wait for the line's moment, with what was written already sent.
        if let (Some(speed), Some(ts)) = (speed, ts.filter(|t| t.is_finite())) {
            let t0 = *origin.get_or_insert(ts);
            let due = started + Duration::from_secs_f64(((ts - t0) / speed).clamp(0.0, 3.15e7));
            if due > Instant::now() {
                out.flush();
                std::thread::sleep(due - Instant::now());
            }
        }
        // From standard input a producer may be writing as it goes: each line goes on at
        // once rather than waiting in the buffer for more.
        // A producer that cannot be opened is not about its first line.
        if let Err(e) = out.producer(&key) {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
        if let Err(e) = out.line(&key, &line, live) {
            eprintln!(
                "error: {e} (at {place} {} of `{}`)",
                n + 1,
                args.trace.display()
            );
            return ExitCode::from(1);
        }
        sent += 1;
    }
    let producers = match out.finish() {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    eprintln!(
        "sent {sent} records to {} {} in {:.2} s",
        args.to,
        match args.to {
            Destination::Socket(_) => format!("over {producers} connection(s)"),
            Destination::Nats { .. } => format!("as {producers} producer(s)"),
        },
        started.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}
