//! Ingest speed of the format adapters, side by side with references in the same run:
//! `cargo bench --bench formats`.
//!
//! - Pajé: the adapter (`voml_trace::PajeReader`) against PajeNG's `pj_dump` (Debian
//!   `pajeng`) on the same traces: every Pajé trace of `../shared/traces/paje` that `pj_dump`
//!   reads, and `big.paje`, generated here (64 containers, about 1.5 M events: pushed and
//!   popped states, variables, links). Records/s are the traces' event lines (what both
//!   read) per second. Each reader runs in its own process (this bench runs itself for the
//!   adapter, each record built in the storage of the one before, as the driver's reader
//!   thread does; `pj_dump` with `-n`, for the older field names some traces use, once
//!   dumping to `/dev/null` and once with `-q`, reading and simulating only), timed by the
//!   wall clock from start to exit, the fastest of several runs.
//! - Chrome: the adapter (`voml_trace::ChromeReader`) against a plain JSON parse of the same
//!   file (`serde_json::from_slice::<serde_json::Value>` after reading it whole), on every
//!   trace of `../shared/traces/chrome` and on `big.json`, generated here (about 65 MB,
//!   600 k events written thread by thread, as Chrome writes them). Each also runs in a
//!   child process under `/usr/bin/time` for its peak resident memory. With
//!   `VOML_BENCH_LARGE=1`, the adapter also reads a generated 1 GB trace, to show its
//!   memory stays flat.
//!
//! Without `pj_dump` or `../shared`, the cases that need them are skipped with a note.
//! `VOML_BENCH_QUICK=1` runs each case once instead of keeping the best of three;
//! `VOML_BENCH_ONLY=paje` or `chrome` runs only that format.

use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use voml_trace::{ChromeReader, PajeReader, ReadOptions, Record};

mod support;

/// CPU seconds and peak resident kilobytes of a child process (the cheapest of `times`).
fn measure(args: &[&str], times: usize) -> Result<(f64, u64), String> {
    support::measure(args, times).map(|c| (c.cpu, c.peak_kb))
}

/// Wall seconds of a child process (the fastest of `times`), output to `/dev/null`: finer
/// than `/usr/bin/time`'s hundredths for the small traces; start-up included.
fn wall(args: &[&str], times: usize) -> Result<f64, String> {
    let mut fastest = f64::INFINITY;
    for _ in 0..times {
        let t = Instant::now();
        let out = Command::new(args[0])
            .args(&args[1..])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", args[0]))?;
        let secs = t.elapsed().as_secs_f64();
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "{} failed: {}",
                args.join(" "),
                stderr.lines().next().unwrap_or("")
            ));
        }
        fastest = fastest.min(secs);
    }
    Ok(fastest)
}

/// The best of `times` runs of `f`, in seconds, and what it returned.
fn best<T>(times: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = None;
    let mut fastest = f64::INFINITY;
    for _ in 0..times {
        let t = Instant::now();
        let value = f();
        fastest = fastest.min(t.elapsed().as_secs_f64());
        out = Some(value);
    }
    (fastest, out.expect("run at least once"))
}

/// Reads every record of a Pajé trace through the adapter; (records, bad records).
fn read_paje(path: &Path) -> (u64, u64) {
    let mut reader = PajeReader::open(path, ReadOptions::default()).unwrap();
    drain(|spare| reader.next_reusing(spare))
}

/// Reads every record of a Chrome trace through the adapter; (records, bad records).
fn read_chrome(path: &Path) -> (u64, u64) {
    let mut reader = ChromeReader::open(path, ReadOptions::default()).unwrap();
    drain(|spare| reader.next_reusing(spare))
}

fn drain(
    mut next: impl FnMut(Option<Record>) -> Option<Result<Record, voml_trace::TraceError>>,
) -> (u64, u64) {
    let (mut records, mut bad) = (0, 0);
    let mut spare = None;
    while let Some(item) = next(spare.take()) {
        match item {
            Ok(r) => {
                records += 1;
                spare = Some(r);
            }
            Err(_) => bad += 1,
        }
    }
    (records, bad)
}

/// A plain JSON parse of the whole file; the number of events.
fn parse_value(path: &Path) -> usize {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .unwrap()
        .read_to_end(&mut bytes)
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    match &value {
        serde_json::Value::Array(a) => a.len(),
        serde_json::Value::Object(o) => o
            .get("traceEvents")
            .and_then(|e| e.as_array())
            .map_or(0, Vec::len),
        _ => 0,
    }
}

/// The event lines of a Pajé trace: not its header, comments or blank lines.
fn paje_events(path: &Path) -> u64 {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !t.is_empty() && !t.starts_with('%') && !t.starts_with('#')
        })
        .count() as u64
}

/// xorshift64*: the generated traces are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A Pajé trace of 64 containers and about `events` events, PajeNG's definitions.
fn big_paje(out: &Path, events: usize) -> std::io::Result<()> {
    if out.is_file() {
        return Ok(());
    }
    let mut w = BufWriter::new(std::fs::File::create(out)?);
    for (name, id, fields) in [
        ("PajeDefineContainerType", 0, "Alias string|Type string|Name string"),
        ("PajeDefineVariableType", 1, "Alias string|Type string|Name string|Color color"),
        ("PajeDefineStateType", 2, "Alias string|Type string|Name string"),
        ("PajeDefineLinkType", 4, "Alias string|Type string|StartContainerType string|EndContainerType string|Name string"),
        ("PajeDefineEntityValue", 5, "Alias string|Type string|Name string|Color color"),
        ("PajeCreateContainer", 6, "Time date|Alias string|Type string|Container string|Name string"),
        ("PajeDestroyContainer", 7, "Time date|Type string|Name string"),
        ("PajeSetVariable", 8, "Time date|Container string|Type string|Value double"),
        ("PajePushState", 12, "Time date|Container string|Type string|Value string"),
        ("PajePopState", 14, "Time date|Container string|Type string"),
        ("PajeStartLink", 16, "Time date|Container string|Type string|StartContainer string|Value string|Key string"),
        ("PajeEndLink", 19, "Time date|Container string|Type string|EndContainer string|Value string|Key string"),
    ] {
        writeln!(w, "%EventDef {name} {id}")?;
        for field in fields.split('|') {
            writeln!(w, "%       {field}")?;
        }
        writeln!(w, "%EndEventDef")?;
    }
    writeln!(
        w,
        "0 R 0 \"Rank\"\n1 M R \"memory\" \"0 0 1\"\n2 S R \"MPI state\"\n4 L 0 R R \"message\""
    )?;
    writeln!(
        w,
        "5 c S \"compute\" \"0 1 0\"\n5 w S \"MPI_Wait\" \"1 0 0\""
    )?;
    const RANKS: u64 = 64;
    for r in 0..RANKS {
        writeln!(w, "6 0.000000000 r{r} R 0 \"rank {r}\"")?;
    }
    let mut rng = Rng(0x5041_4a45);
    let mut depth = [0u8; RANKS as usize];
    // Links started and not yet ended: (key, destination).
    let mut open: std::collections::VecDeque<(u64, u64)> = std::collections::VecDeque::new();
    let mut t = 0u64;
    let mut keys = 0u64;
    let mut written = 0;
    while written < events {
        t += 1 + rng.below(20);
        let time = format!("{}.{:09}", t / 1_000_000_000, t % 1_000_000_000);
        let r = rng.below(RANKS);
        match rng.below(10) {
            0..=3 => {
                let d = &mut depth[r as usize];
                if *d < 2 && (*d == 0 || rng.below(2) == 0) {
                    let value = if *d == 0 { "c" } else { "w" };
                    writeln!(w, "12 {time} r{r} S {value}")?;
                    *d += 1;
                } else {
                    writeln!(w, "14 {time} r{r} S")?;
                    *d -= 1;
                }
            }
            4..=6 => writeln!(
                w,
                "8 {time} r{r} M {}.{}",
                40 + rng.below(60),
                rng.below(10)
            )?,
            _ => {
                // Links end soon after they start, the oldest first (messages in flight).
                if open.len() > 8 || (!open.is_empty() && rng.below(2) == 0) {
                    let (key, dest) = open.pop_front().expect("not empty");
                    writeln!(w, "19 {time} 0 L r{dest} m k{key}")?;
                } else {
                    keys += 1;
                    open.push_back((keys, rng.below(RANKS)));
                    writeln!(w, "16 {time} 0 L r{r} m k{keys}")?;
                }
            }
        }
        written += 1;
    }
    t += 1000;
    let time = format!("{}.{:09}", t / 1_000_000_000, t % 1_000_000_000);
    for (key, dest) in open {
        writeln!(w, "19 {time} 0 L r{dest} m k{key}")?;
    }
    for r in 0..RANKS {
        for _ in 0..depth[r as usize] {
            writeln!(w, "14 {time} r{r} S")?;
        }
        writeln!(w, "7 {time} R r{r}")?;
    }
    w.flush()
}

/// A Chrome trace of about `bytes` bytes: 16 threads, each thread's events in turn (blocks
/// of 500), as Chrome flushes them: complete and nested slices, begin/end pairs, flows to
/// another thread, counters.
fn big_chrome(out: &Path, bytes: u64) -> std::io::Result<()> {
    if out.is_file() {
        return Ok(());
    }
    let mut w = BufWriter::new(std::fs::File::create(out)?);
    writeln!(w, "{{\"traceEvents\": [")?;
    let mut rng = Rng(0x4352_4f4d);
    let mut written = 0u64;
    let mut first = true;
    let mut block = 0u64;
    let mut flow = 0u64;
    while written < bytes {
        // A block of 500 events of one thread, starting where the block's time is.
        let tid = block % 16;
        let mut ts = (block / 16) * 100_000 + rng.below(1000);
        let mut events = Vec::with_capacity(500);
        while events.len() < 500 {
            let dur = 10 + rng.below(400);
            events.push(format!("{{\"name\":\"task{}\",\"cat\":\"toplevel\",\"ph\":\"X\",\"pid\":7,\"tid\":{tid},\"ts\":{ts},\"dur\":{dur},\"args\":{{\"src_file\":\"../../base/run_loop.cc\",\"src_func\":\"Run\"}}}}", rng.below(40)));
            events.push(format!("{{\"name\":\"inner\",\"cat\":\"toplevel\",\"ph\":\"X\",\"pid\":7,\"tid\":{tid},\"ts\":{},\"dur\":{}}}", ts + 2, dur / 2));
            events.push(format!("{{\"name\":\"WaitableEvent::Wait\",\"cat\":\"base\",\"ph\":\"B\",\"pid\":7,\"tid\":{tid},\"ts\":{}}}", ts + dur + 1));
            events.push(format!("{{\"name\":\"WaitableEvent::Wait\",\"cat\":\"base\",\"ph\":\"E\",\"pid\":7,\"tid\":{tid},\"ts\":{}}}", ts + dur + 20));
            flow += 1;
            events.push(format!("{{\"name\":\"post\",\"cat\":\"ipc\",\"ph\":\"s\",\"id\":{flow},\"pid\":7,\"tid\":{tid},\"ts\":{}}}", ts + 5));
            events.push(format!("{{\"name\":\"post\",\"cat\":\"ipc\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{flow},\"pid\":7,\"tid\":{tid},\"ts\":{}}}", ts + 30));
            events.push(format!("{{\"name\":\"queue\",\"ph\":\"C\",\"pid\":7,\"tid\":{tid},\"ts\":{ts},\"args\":{{\"length\":{}}}}}", rng.below(50)));
            ts += dur + 25;
        }
        for e in events {
            if !first {
                writeln!(w, ",")?;
            }
            first = false;
            written += e.len() as u64 + 2;
            w.write_all(e.as_bytes())?;
        }
        block += 1;
    }
    writeln!(w, "\n]}}")?;
    w.flush()
}

fn row(case: &str, what: &str, ours: &str, reference: &str, ratio: &str) {
    println!("{case:<40} {what:>14} {ours:>16} {reference:>24} {ratio:>8}");
}

fn mib(kb: u64) -> String {
    format!("{:.0} MiB", kb as f64 / 1024.0)
}

fn rate(n: f64, secs: f64) -> String {
    let r = n / secs;
    if r >= 1e6 {
        format!("{:.2} M/s", r / 1e6)
    } else {
        format!("{:.0} k/s", r / 1e3)
    }
}

/// The child processes this bench runs itself as, to measure one reader's memory alone.
fn child(args: &[String]) {
    let path = Path::new(&args[3]);
    match args[2].as_str() {
        "paje" => {
            let (records, _) = read_paje(path);
            println!("{records}");
        }
        "chrome" => {
            let (records, _) = read_chrome(path);
            println!("{records}");
        }
        "value" => println!("{}", parse_value(path)),
        other => panic!("no child case {other}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        child(&args);
        return;
    }
    let quick = std::env::var_os("VOML_BENCH_QUICK").is_some();
    let times = if quick { 1 } else { 3 };
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-formats");
    std::fs::create_dir_all(&work).unwrap();
    let me = std::env::current_exe().unwrap();
    let me = me.to_str().unwrap();
    println!(
        "machine: {} cores; {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(
                |c| c.lines().find(|l| l.starts_with("model name")).map(|l| l
                    .split(':')
                    .nth(1)
                    .unwrap_or("")
                    .trim()
                    .to_string())
            )
            .unwrap_or_default()
    );

    let only = std::env::var("VOML_BENCH_ONLY").ok();
    if only.as_deref().is_none_or(|o| o == "paje") {
        paje_beside_pj_dump(&work, me, times);
    }
    if only.as_deref().is_none_or(|o| o == "chrome") {
        chrome_beside_serde_json(&work, me, times);
    }
}

/// Pajé, beside pj_dump.
fn paje_beside_pj_dump(work: &Path, me: &str, times: usize) {
    println!();
    row(
        "Pajé trace (events)",
        "measure",
        "voml-trace",
        "pj_dump",
        "ratio",
    );
    let mut paje: Vec<PathBuf> = std::fs::read_dir("../shared/traces/paje")
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    paje.retain(|p| p.extension().is_some_and(|e| e == "trace"));
    paje.sort();
    if paje.is_empty() {
        println!("note: no Pajé traces in ../shared/traces/paje; only the generated one");
    }
    let big = work.join("big.paje");
    big_paje(&big, 1_500_000).unwrap();
    paje.push(big);
    let pj_dump = Command::new("pj_dump").arg("--version").output().is_ok();
    if !pj_dump {
        println!("note: pj_dump not found (Debian package pajeng); the adapter alone");
    }
    let (mut ours_all, mut theirs_all, mut quiet_all, mut events_all) = (0.0, 0.0, 0.0, 0u64);
    for path in &paje {
        let events = paje_events(path);
        let file = path.to_str().unwrap();
        // Small traces run more often: their times are milliseconds.
        let n = if events < 100_000 { 5 * times } else { times };
        let name = format!("{} ({events})", path.file_name().unwrap().to_string_lossy());
        // Both in their own process, timed the same way, one after the other.
        let ours = wall(&[me, "--child", "paje", file], n);
        let dumped = pj_dump.then(|| wall(&["pj_dump", "-n", file], n));
        let quiet = pj_dump.then(|| wall(&["pj_dump", "-n", "-q", file], n));
        let Ok(ours) = ours else {
            println!("{name}: {ours:?}");
            continue;
        };
        let e = events as f64;
        match (dumped, quiet) {
            (Some(Ok(dump)), Some(Ok(q))) => {
                row(
                    &name,
                    "events/s",
                    &rate(e, ours),
                    &format!("{} (-q {})", rate(e, dump), rate(e, q)),
                    &format!("{:.1}x", dump / ours),
                );
                ours_all += ours;
                theirs_all += dump;
                quiet_all += q;
                events_all += events;
            }
            (Some(Err(err)), _) | (_, Some(Err(err))) => {
                row(&name, "events/s", &rate(e, ours), "pj_dump fails", "");
                println!("  ({err})");
            }
            _ => row(&name, "events/s", &rate(e, ours), "", ""),
        }
    }
    if events_all > 0 {
        row(
            "all the traces pj_dump reads",
            "events/s",
            &rate(events_all as f64, ours_all),
            &format!(
                "{} (-q {})",
                rate(events_all as f64, theirs_all),
                rate(events_all as f64, quiet_all)
            ),
            &format!("{:.1}x", theirs_all / ours_all),
        );
    }
}

/// Chrome, beside serde_json's Value.
fn chrome_beside_serde_json(work: &Path, me: &str, times: usize) {
    println!();
    row(
        "Chrome trace (MB)",
        "measure",
        "voml-trace",
        "serde_json Value",
        "ratio",
    );
    let mut chrome: Vec<PathBuf> = std::fs::read_dir("../shared/traces/chrome")
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    chrome.retain(|p| p.extension().is_some_and(|e| e == "json"));
    chrome.sort();
    if chrome.is_empty() {
        println!("note: no Chrome traces in ../shared/traces/chrome; only the generated one");
    }
    let big = work.join("big.json");
    big_chrome(&big, 65_000_000).unwrap();
    chrome.push(big.clone());
    for path in &chrome {
        let mb = std::fs::metadata(path).unwrap().len() as f64 / 1e6;
        let (secs, (records, _)) = best(times, || read_chrome(path));
        let (value_secs, events) = best(times, || parse_value(path));
        row(
            &format!("{} ({mb:.2})", path.file_name().unwrap().to_string_lossy()),
            "MB/s",
            &format!("{:.0}", mb / secs),
            &format!("{:.0}", mb / value_secs),
            // As for Pajé: the adapter's speed over the reference's.
            &format!("{:.2}x", value_secs / secs),
        );
        if path == &big {
            row(
                "",
                "events/s",
                &rate(events as f64, secs),
                &rate(events as f64, value_secs),
                "",
            );
            row("", "records", &records.to_string(), "", "");
            let file = path.to_str().unwrap();
            let ours = measure(&[me, "--child", "chrome", file], 1);
            let theirs = measure(&[me, "--child", "value", file], 1);
            if let (Ok(o), Ok(t)) = (ours, theirs) {
                row("", "peak memory", &mib(o.1), &mib(t.1), "");
            }
        }
    }
    if std::env::var_os("VOML_BENCH_LARGE").is_some() {
        let large = work.join("large.json");
        big_chrome(&large, 1_000_000_000).unwrap();
        let gb = std::fs::metadata(&large).unwrap().len() as f64 / 1e9;
        let file = large.to_str().unwrap();
        match measure(&[me, "--child", "chrome", file], 1) {
            Ok((cpu, peak)) => row(
                &format!("large.json ({gb:.2} GB)"),
                "MB/s, memory",
                &format!("{:.0}, {}", gb * 1e3 / cpu, mib(peak)),
                "",
                "",
            ),
            Err(e) => println!("large.json: {e}"),
        }
    }
}
