//! Replay at the speed of the machine, measured side by side with references in the same run:
//! `cargo bench --bench replay`.
//!
//! Each workload runs the real `voml` binary in its own process under `/usr/bin/time`, so
//! CPU time (user + system, every thread) and peak resident memory are the operating
//! system's figures; each reference (`mawk` on the same count, a plain line splitter,
//! tiny-skia drawing the same segments) runs in the same session. The workload files are
//! generated under the target directory:
//!
//! - `big.trf`: `mpicl-trace3-bcast10.trf` (from `../shared`) ten times over with shifted
//!   timestamps, about 38 MB and 1.2 M records; without `../shared`, the cases on it are skipped;
//! - `lineplot-1m-inside.trf`: one million samples of three scalars for the paper's line plot;
//! - `counter-100k.trf`: 100,000 records for an asynchronous counter shown as text;
//! - `lineplot-100k.trf`: the first 100,000 of the line plot's samples, recorded with
//!   `--record` (peak memory against the page's size).
//!
//! `VOML_BENCH_QUICK=1` runs each case once instead of taking the best of three;
//! `VOML_BENCH_ONLY=flat` runs only the memory cases (records fed to standard input).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

mod support;

use support::{measure, measure_pair, Cost};

fn row(case: &str, what: &str, voml: &str, reference: &str, ratio: &str) {
    println!("{case:<46} {what:>16} {voml:>14} {reference:>14} {ratio:>8}");
}

fn mib(kb: u64) -> String {
    format!("{:.0} MiB", kb as f64 / 1024.0)
}

/// `trace3` ten times over, each copy's timestamps shifted past the previous copy's.
fn big_trace(trace3: &Path, out: &Path) -> std::io::Result<()> {
    if out.is_file() {
        return Ok(());
    }
    let text = std::fs::read_to_string(trace3)?;
    let span = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2)?.parse::<f64>().ok())
        .fold(0.0f64, f64::max)
        + 1.0;
    let mut w = std::io::BufWriter::new(std::fs::File::create(out)?);
    for copy in 0..10 {
        for line in text.lines() {
            let mut it = line.split_whitespace();
            let (Some(r), Some(e), Some(ts)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            let ts: f64 = ts.parse().unwrap_or(0.0);
            write!(w, "{r} {e} {:.6}", ts + copy as f64 * span)?;
            for rest in it {
                write!(w, " {rest}")?;
            }
            writeln!(w)?;
        }
    }
    w.flush()
}

/// One million samples of three scalars (key 0, 1, 2) in the line plot's record layout: random
/// walks that stay inside the view's 0..100, so that the plot scrolls without rescaling.
fn lineplot_trace(out: &Path, n: usize) -> std::io::Result<()> {
    if out.is_file() {
        return Ok(());
    }
    let mut w = std::io::BufWriter::new(std::fs::File::create(out)?);
    let mut x = 1u64;
    let mut values = [40.0f64, 20.0, 78.0];
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let key = i % 3;
        let step = (x % 1000) as f64 / 100.0 - 5.0;
        values[key] = (values[key] + step).clamp(5.0, 95.0);
        writeln!(
            w,
            "-3 3000 {:.6} {key} {:.3}",
            0.25 + (i / 3) as f64 * 0.15,
            values[key]
        )?;
    }
    w.flush()
}

fn counter_trace(out: &Path, n: usize) -> std::io::Result<()> {
    if out.is_file() {
        return Ok(());
    }
    let mut w = std::io::BufWriter::new(std::fs::File::create(out)?);
    for i in 0..n {
        writeln!(w, "-3 1 {:.6} {}", i as f64 * 1e-4, i % 8)?;
    }
    w.flush()
}

/// Counts records of one declared type per processor: the data-event form.
const COUNT_DATA: &str = r#"<voml><body><visual-object name="count-data">
  <event-declarations>
    <data-event name="enter" rtype="entry" etype="-785"><data-field name="ts" type="real"/><data-field name="proc" type="int"/></data-event>
  </event-declarations>
  <info-structures><variable name="counts" type="vector" init="(0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0)"/></info-structures>
  <event-processing>
    <ep-component name="count" inputs="enter.ts.proc" infos="counts">
      <input name="^0">(vector-set! $0 ^0/1 (+ 1 (vector-ref $0 ^0/1)))</input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;
const COUNT_DATA_AWK: &str =
    "$1 == -3 && $2 == -785 { c[$4]++ } END { for (p in c) print p, c[p] }";

/// Counts entry records of any event type per processor: the condition-part form.
const COUNT_CONDITION: &str = r#"<voml><body><visual-object name="count-condition">
  <info-structures><variable name="counts" type="vector" init="(0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0)"/></info-structures>
  <event-processing>
    <ep-component name="count" infos="counts">
      <before condition="(= (car (current-event)) -3)">(let ((p (list-ref (current-event) 3))) (vector-set! $0 p (+ 1 (vector-ref $0 p))))</before>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;
const COUNT_CONDITION_AWK: &str = "$1 == -3 { c[$4]++ } END { for (p in c) print p, c[p] }";

/// `voml run SPEC --trace TRACE --headless --out OUT`, as arguments.
fn voml_run<'a>(voml: &'a str, spec: &'a Path, trace: &'a Path, out: &'a Path) -> Vec<&'a str> {
    vec![
        voml,
        "run",
        spec.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--headless",
        "--out",
        out.to_str().unwrap(),
    ]
}

/// Nothing but events: what reading and parsing cost.
const EMPTY: &str = r#"<voml><body><visual-object name="empty">
  <event-declarations>
    <data-event name="enter" rtype="entry" etype="-785"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
</visual-object></body></voml>"#;

/// Each record increments a number that one text shows, redrawn after every record.
const COUNTER_TEXT: &str = r#"<voml><body><visual-object name="counter-text">
  <event-declarations>
    <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures><variable name="n" type="int" init="0"/></info-structures>
  <view-initializations><view name="v" window="200 60" world="0 1 0 1"/></view-initializations>
  <event-processing>
    <ep-component name="count" inputs="e.ts" infos="n"><input name="^0">(set! $0 (+ $0 1))</input></ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="show" views="v" infos="n" refresh="update">
      <text view="^0" coords="0.1 0.3" content="(number->string $0)" size="20"/>
    </ir-component>
  </info-rendition>
</visual-object></body></voml>"#;

/// A plain Rust reader of the same file: lines split into whitespace tokens, the first two
/// parsed as integers. What parsing a trace can cost at least.
fn plain_splitter(path: &Path) -> (u64, f64) {
    let t = Instant::now();
    let mut r = BufReader::with_capacity(1 << 16, std::fs::File::open(path).unwrap());
    let mut line = Vec::new();
    let mut sum = 0i64;
    let mut n = 0u64;
    while r.read_until(b'\n', &mut line).unwrap() > 0 {
        let mut it = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty());
        for _ in 0..2 {
            if let Some(tok) = it.next() {
                sum += std::str::from_utf8(tok)
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                    .unwrap_or(0);
            }
        }
        n += it.count() as u64;
        line.clear();
    }
    std::hint::black_box((sum, n));
    (
        std::fs::metadata(path).unwrap().len(),
        t.elapsed().as_secs_f64(),
    )
}

/// tiny-skia drawing `n` thin anti-aliased segments into a 600 × 400 pixmap.
fn tiny_skia_segments(n: usize) -> f64 {
    let mut pixmap = tiny_skia::Pixmap::new(600, 400).unwrap();
    let mut paint = tiny_skia::Paint::default();
    paint.set_color_rgba8(200, 30, 30, 255);
    paint.anti_alias = true;
    let stroke = tiny_skia::Stroke {
        width: 1.0,
        ..Default::default()
    };
    let t = Instant::now();
    for i in 0..n {
        let x = (i % 560) as f32 + 40.0;
        let y0 = 50.0 + (i * 7 % 300) as f32;
        let mut pb = tiny_skia::PathBuilder::new();
        pb.move_to(x, y0);
        pb.line_to(x + 1.0, y0 + 3.0);
        if let Some(path) = pb.finish() {
            pixmap.stroke_path(
                &path,
                &paint,
                &stroke,
                tiny_skia::Transform::identity(),
                None,
            );
        }
    }
    n as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let quick = std::env::var_os("VOML_BENCH_QUICK").is_some();
    let repeat = if quick { 1 } else { 3 };
    std::env::set_var("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"));
    let voml = env!("CARGO_BIN_EXE_voml");
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-replay");
    std::fs::create_dir_all(&work).unwrap();
    let out = work.join("out");
    let write = |name: &str, text: &str| {
        let p = work.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let count_data = write("count-data.voml", COUNT_DATA);
    let count_condition = write("count-condition.voml", COUNT_CONDITION);
    let empty = write("empty.voml", EMPTY);
    let counter_text = write("counter-text.voml", COUNTER_TEXT);
    // `VOML_BENCH_ONLY=flat`: the memory cases alone.
    if std::env::var("VOML_BENCH_ONLY").as_deref() == Ok("flat") {
        memory_flat(voml, &work, &count_data);
        return;
    }
    let run = |spec: &Path, trace: &Path, extra: &[&str]| -> Result<Cost, String> {
        let mut args = voml_run(voml, spec, trace, &out);
        args.extend_from_slice(extra);
        measure(&args, repeat)
    };
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
    row("case", "measure", "voml", "reference", "ratio");

    let trace3 = Path::new("../shared/traces/picl/mpicl-trace3-bcast10.trf");
    let big = work.join("big.trf");
    if trace3.is_file() {
        big_trace(trace3, &big).unwrap();
        let size = std::fs::metadata(&big).unwrap().len();
        let mb = size as f64 / 1e6;
        let records = BufReader::new(std::fs::File::open(&big).unwrap())
            .lines()
            .count();
        println!("big.trf: {mb:.1} MB, {records} records");
        for (name, spec, awk) in [
            (
                "count per processor (data event)",
                &count_data,
                COUNT_DATA_AWK,
            ),
            (
                "count entries (condition part)",
                &count_condition,
                COUNT_CONDITION_AWK,
            ),
        ] {
            // The count and `mawk` in turn, seven times each (one when quick): their ratio
            // is the figure, and the machine's load moves it least this way.
            let voml_args = voml_run(voml, spec, &big, &out);
            let awk_args = ["mawk", awk, big.to_str().unwrap()];
            let times = if quick { 1 } else { 7 };
            match measure_pair(&voml_args, &awk_args, times) {
                Ok((v, a)) => {
                    row(
                        name,
                        "CPU s",
                        &format!("{:.2}", v.cpu),
                        &format!("mawk {:.2}", a.cpu),
                        &format!("{:.1}x", v.cpu / a.cpu),
                    );
                    row("", "peak memory", &mib(v.peak_kb), &mib(a.peak_kb), "");
                }
                Err(e) => println!("{name}: {e}"),
            }
        }
        match run(&empty, &big, &[]) {
            Ok(v) => {
                let (bytes, secs) = plain_splitter(&big);
                let plain = bytes as f64 / 1e6 / secs;
                row(
                    "no components: reading and parsing",
                    "MB/s (wall)",
                    &format!("{:.0}", mb / v.wall),
                    &format!("plain {plain:.0}"),
                    &format!("{:.1}x", plain / (mb / v.wall)),
                );
                row("", "CPU s", &format!("{:.2}", v.cpu), "", "");
            }
            Err(e) => println!("empty: {e}"),
        }
        let idle_busy = Path::new("examples/auralization/idle-busy.voml");
        let wav = work.join("idle-busy.wav");
        match run(idle_busy, trace3, &["--audio", wav.to_str().unwrap()]) {
            Ok(v) => {
                let reader = hound::WavReader::open(&wav).unwrap();
                let seconds = reader.duration() as f64 / f64::from(reader.spec().sample_rate);
                row(
                    "idle/busy auralization, trace3 + WAV",
                    "wall s",
                    &format!("{:.2}", v.wall),
                    &format!("{seconds:.1} s sound"),
                    &format!("{:.0}x rt", seconds / v.wall),
                );
            }
            Err(e) => println!("idle-busy: {e}"),
        }
        let mut all_examples = Vec::new();
        for dir in [
            "examples/mpicl",
            "examples/auralization",
            "examples/library",
        ] {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                if e.path().extension().is_some_and(|x| x == "voml") {
                    all_examples.push(e.path());
                }
            }
        }
        all_examples.sort();
        for spec in all_examples {
            match run(&spec, trace3, &[]) {
                Ok(v) => {
                    row(
                        &format!(
                            "{} on trace3 to PNG",
                            spec.file_name().unwrap().to_string_lossy()
                        ),
                        "wall s",
                        &format!("{:.2}", v.wall),
                        "",
                        "",
                    );
                    // The library dashboard's target includes its memory (issue: < 200 MB).
                    if spec.starts_with("examples/library") {
                        row("", "peak memory", &mib(v.peak_kb), "", "");
                    }
                }
                Err(e) => println!("{}: {e}", spec.display()),
            }
        }
    } else {
        println!(
            "(no {}: the cases on big.trf are skipped)",
            trace3.display()
        );
    }

    let lineplot = work.join("lineplot-1m-inside.trf");
    lineplot_trace(&lineplot, 1_000_000).unwrap();
    match run(Path::new("examples/paper/lineplot.voml"), &lineplot, &[]) {
        Ok(v) => {
            let skia = tiny_skia_segments(1_000_000);
            row(
                "line plot, 1 M samples of 3 scalars",
                "records/s",
                &format!("{:.0} k", 1e6 / v.wall / 1e3),
                &format!("skia {:.0} k", skia / 1e3),
                &format!("{:.1}x", skia / (1e6 / v.wall)),
            );
            row("", "peak memory", &mib(v.peak_kb), "", "");
            // A seek back runs again from the start to the time: what it costs beyond the
            // run to the end, against a straight replay to that time.
            let mid = format!("{}", 0.25 + (500_000 / 3) as f64 * 0.15);
            let script = write("seek-back.txt", &format!("until 1e12\nseek {mid}\n"));
            let back = run(
                Path::new("examples/paper/lineplot.voml"),
                &lineplot,
                &["--control", script.to_str().unwrap()],
            );
            let straight = run(
                Path::new("examples/paper/lineplot.voml"),
                &lineplot,
                &["--until", &mid],
            );
            match (back, straight) {
                (Ok(back), Ok(straight)) => row(
                    "seek back to the middle of the line plot",
                    "wall s",
                    &format!("{:.2}", back.wall - v.wall),
                    &format!("replay to it {:.2}", straight.wall),
                    &format!("{:.1}x", (back.wall - v.wall) / straight.wall),
                ),
                (b, s) => println!("seek: {b:?} {s:?}"),
            }
            // `--record` of 100 k samples: the page's size against the run's peak memory
            // (the page is written as it goes; the recording is held once).
            let samples = work.join("lineplot-100k.trf");
            lineplot_trace(&samples, 100_000).unwrap();
            let page = work.join("lineplot-100k.html");
            match run(
                Path::new("examples/paper/lineplot.voml"),
                &samples,
                &["--record", page.to_str().unwrap()],
            ) {
                Ok(r) => {
                    let kb = std::fs::metadata(&page).map_or(0, |m| m.len() / 1024);
                    row(
                        "line plot, 100 k samples, --record",
                        "peak memory",
                        &mib(r.peak_kb),
                        &format!("page {}", mib(kb)),
                        &format!("{:.1}x", r.peak_kb as f64 / kb.max(1) as f64),
                    );
                }
                Err(e) => println!("record: {e}"),
            }
        }
        Err(e) => println!("lineplot: {e}"),
    }
    let counter = work.join("counter-100k.trf");
    counter_trace(&counter, 100_000).unwrap();
    match run(&counter_text, &counter, &[]) {
        Ok(v) => row(
            "asynchronous counter as text, 100 k records",
            "records/s",
            &format!("{:.0} k", 1e5 / v.wall / 1e3),
            "",
            "",
        ),
        Err(e) => println!("counter: {e}"),
    }
    // Live: 8 producers of 250,000 records each over loopback into a counting VO, the best
    // of `repeat` runs and the slowest beside it (threads on two cores: runs differ widely).
    let rates: Result<Vec<f64>, String> = (0..repeat)
        .map(|_| live_load(voml, &work, 8, 250_000).map(|(n, secs)| n as f64 / secs))
        .collect();
    match rates {
        Ok(rates) => {
            let best = rates.iter().copied().fold(0.0, f64::max);
            let slowest = rates.iter().copied().fold(f64::INFINITY, f64::min);
            row(
                "live: 8 producers x 250 k records over loopback",
                "records/s",
                &format!("{:.0} k", best / 1e3),
                &format!("slowest {:.0} k", slowest / 1e3),
                "",
            )
        }
        Err(e) => println!("live: {e}"),
    }
    memory_flat(voml, &work, &count_data);
    // Reading the file once more keeps the page cache honest for whatever runs next.
    let mut sink = Vec::new();
    let _ = std::fs::File::open(&counter).and_then(|mut f| f.read_to_end(&mut sink));
}

/// Runs a counting VO listening on loopback, feeds it from `producers` threads, and checks
/// that it counted every record; returns the records and the seconds from the first
/// connection to the end of the run.
fn live_load(voml: &str, work: &Path, producers: usize, each: usize) -> Result<(u64, f64), String> {
    let spec = work.join("live-count.voml");
    std::fs::write(&spec, COUNT_DATA.replace(r#"etype="-785""#, r#"etype="1""#))
        .map_err(|e| e.to_string())?;
    let state = work.join("live-state.json");
    let mut child = Command::new(voml)
        .args([
            "run",
            spec.to_str().unwrap(),
            "--listen",
            ":0",
            "--headless",
        ])
        .arg("--producers")
        .arg(producers.to_string())
        .arg("--out")
        .arg(work.join("out"))
        .arg("--dump-state")
        .arg(&state)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).map_err(|e| e.to_string())?;
    let addr = line
        .strip_prefix("listening on tcp://")
        .and_then(|r| r.split_whitespace().next())
        .ok_or_else(|| format!("voml said {line:?}"))?
        .to_string();
    let texts: Vec<String> = (0..producers)
        .map(|k| {
            (0..each)
                .map(|i| format!("-3 1 {:.6} {}\n", (i * producers + k) as f64 * 1e-6, k % 16))
                .collect()
        })
        .collect();
    let started = Instant::now();
    let threads: Vec<_> = texts
        .into_iter()
        .map(|text| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut s = std::net::TcpStream::connect(addr).unwrap();
                s.write_all(text.as_bytes()).unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().map_err(|_| "a producer failed".to_string())?;
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let secs = started.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!("voml run --listen failed: {status}"));
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    let counted: u64 = v["infos"]["counts"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c.as_u64()).sum())
        .unwrap_or(0);
    let total = (producers * each) as u64;
    if counted != total {
        return Err(format!("counted {counted} of {total} records"));
    }
    Ok((total, secs))
}

/// Makes record `i` of a generated trace (with a generator's state).
type LineMaker = dyn Fn(usize, &mut u64) -> String;

/// Peak resident memory of `voml run` over records fed to its standard input as they are
/// made (no file): the counting VO over 1 M and 10 M records, the paper's line plot over
/// 0.3 M and 3 M samples (10 M with `VOML_BENCH_LARGE=1`; it draws about 85 k a second).
/// Memory stays flat when the larger run peaks where the smaller one does.
fn memory_flat(voml: &str, work: &Path, count_data: &Path) {
    let large = std::env::var_os("VOML_BENCH_LARGE").is_some();
    let out = work.join("out-flat");
    let _ = std::fs::create_dir_all(&out);
    let piped = |spec: &Path, n: usize, line: &LineMaker| {
        let mut child = support::timed(voml)
            .arg("run")
            .arg(spec)
            .args(["--trace", "-", "--headless", "--out"])
            .arg(&out)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("voml runs");
        {
            let mut w = std::io::BufWriter::new(child.stdin.take().expect("a pipe"));
            let mut x = 1u64;
            for i in 0..n {
                if w.write_all(line(i, &mut x).as_bytes()).is_err() {
                    break;
                }
            }
        }
        let done = child.wait_with_output().expect("voml ends");
        support::cost(&String::from_utf8_lossy(&done.stderr)).map(|c| c.peak_kb)
    };
    let count_line =
        |i: usize, _: &mut u64| format!("-3 -785 {:.6} {} 0 0\n", i as f64 * 1e-5, i % 16);
    let plot_line = |i: usize, x: &mut u64| {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        format!(
            "-3 3000 {:.6} {} {:.3}\n",
            0.25 + (i / 3) as f64 * 0.15,
            i % 3,
            5.0 + (*x % 9000) as f64 / 100.0
        )
    };
    let cases: [(&str, &Path, [usize; 2], &LineMaker); 2] = [
        (
            "counting VO, records from stdin",
            count_data,
            [1_000_000, 10_000_000],
            &count_line,
        ),
        (
            "line plot, samples from stdin",
            Path::new("examples/paper/lineplot.voml"),
            [300_000, if large { 10_000_000 } else { 3_000_000 }],
            &plot_line,
        ),
    ];
    for (case, spec, counts, line) in cases {
        let peaks: Vec<Result<u64, String>> =
            counts.iter().map(|&n| piped(spec, n, line)).collect();
        match (&peaks[0], &peaks[1]) {
            (Ok(small), Ok(big)) => row(
                case,
                "peak memory",
                &format!("{} M: {}", counts[1] / 1_000_000, mib(*big)),
                &format!("{:.1} M: {}", counts[0] as f64 / 1e6, mib(*small)),
                &format!("{:.2}x", *big as f64 / *small as f64),
            ),
            (a, b) => println!("{case}: {a:?} {b:?}"),
        }
    }
}
