//! Ingest speed of the OTF2 adapter beside the tool it reads through: `cargo bench -p
//! voml-trace --bench otf2`.
//!
//! The adapter runs `otf2-print -A` on the anchor file and parses what it prints, so its
//! speed is at most the tool's; this bench shows how near it comes. A ring of 64 ranks
//! (2,000 rounds: regions, sends, receives and a metric each round, about 1.15 M events) is
//! written with the OTF2 library (the tests' generator, `tests/data/otf2/make_trace.c`,
//! compiled here with `cc -lotf2`); then, the fastest of three runs each, `otf2-print -A` alone
//! writing to `/dev/null`, and the adapter reading every record (the tool and the parsing
//! run side by side, on two cores when there are two), and the adapter's parsing alone, of
//! the tool's output saved to a file. Events/s are the events the tool prints per second of
//! wall time.
//!
//! Without `cc`, the OTF2 library or `otf2-print`, the bench says so and does nothing.
//! `VOML_BENCH_QUICK=1` runs each once.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use voml_trace::{Otf2Reader, ReadOptions};

/// The best of `times` runs of `f`, in seconds, and what it returned.
fn best<T>(times: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut fastest = f64::INFINITY;
    let mut out = None;
    for _ in 0..times {
        let started = Instant::now();
        let v = f();
        fastest = fastest.min(started.elapsed().as_secs_f64());
        out = Some(v);
    }
    (fastest, out.expect("at least one run"))
}

fn rate(n: f64, secs: f64) -> String {
    format!("{:.2} M/s", n / secs / 1e6)
}

/// Builds the generator and writes the ring; its anchor file, or why not.
fn ring(work: &Path) -> Result<PathBuf, String> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/otf2/make_trace.c");
    let generator = work.join("make_trace");
    let built = Command::new("cc")
        .arg("-O2")
        .arg("-o")
        .arg(&generator)
        .arg(&source)
        .arg("-lotf2")
        .output()
        .map_err(|e| format!("no C compiler: {e}"))?;
    if !built.status.success() {
        return Err(format!(
            "cannot build the generator (libotf2-trace-dev?): {}",
            String::from_utf8_lossy(&built.stderr)
        ));
    }
    let archive = work.join("ring");
    let _ = std::fs::remove_dir_all(&archive);
    let made = Command::new(&generator)
        .arg(&archive)
        .args(["ring", "64", "2000"])
        .status()
        .map_err(|e| e.to_string())?;
    if !made.success() {
        return Err("the generator failed".into());
    }
    Ok(archive.join("run.otf2"))
}

fn main() {
    let times = if std::env::var_os("VOML_BENCH_QUICK").is_some() {
        1
    } else {
        3
    };
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-otf2");
    std::fs::create_dir_all(&work).unwrap();
    if Command::new("otf2-print")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("note: otf2-print (Debian: otf2-tools) not found; nothing to measure");
        return;
    }
    let anchor = match ring(&work) {
        Ok(a) => a,
        Err(e) => {
            println!("note: {e}; nothing to measure");
            return;
        }
    };
    let (tool, _) = best(times, || {
        Command::new("otf2-print")
            .arg("-A")
            .arg(&anchor)
            .stdout(Stdio::null())
            .status()
            .unwrap()
    });
    // The events the tool prints: its lines after the events' heading and rule.
    let printed = Command::new("otf2-print")
        .arg(&anchor)
        .output()
        .unwrap()
        .stdout;
    let events = printed
        .split(|&b| b == b'\n')
        .filter(|l| l.first().is_some_and(u8::is_ascii_uppercase) && !l.starts_with(b"Event "))
        .count() as f64;
    let (ours, records) = best(times, || {
        let mut reader = Otf2Reader::spawn(&anchor, "ring".into(), ReadOptions::default()).unwrap();
        let mut records = 0u64;
        let mut spare = None;
        while let Some(item) = reader.next_reusing(spare.take()) {
            if let Ok(r) = item {
                records += 1;
                spare = Some(r);
            }
        }
        records
    });
    // The parsing alone: the tool's output, saved, read from the file.
    let saved = work.join("ring.printed");
    let out = std::fs::File::create(&saved).unwrap();
    Command::new("otf2-print")
        .arg("-A")
        .arg(&anchor)
        .stdout(out)
        .status()
        .unwrap();
    let (parsing, _) = best(times, || {
        let file = std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(&saved).unwrap());
        let mut reader = Otf2Reader::new(file, "saved".into(), ReadOptions::default());
        let mut spare = None;
        while let Some(item) = reader.next_reusing(spare.take()) {
            spare = item.ok();
        }
    });
    println!(
        "machine: {} cores",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("ring.otf2: 64 ranks, {events} events, {records} records");
    println!("{:<34} {:>12} {:>10}", "reader", "events/s", "seconds");
    println!(
        "{:<34} {:>12} {:>10.2}",
        "otf2-print -A > /dev/null",
        rate(events, tool),
        tool
    );
    println!(
        "{:<34} {:>12} {:>10.2}",
        "voml-trace Otf2Reader (records)",
        rate(events, ours),
        ours
    );
    println!(
        "{:<34} {:>12} {:>10.2}",
        "  its parsing alone (saved output)",
        rate(events, parsing),
        parsing
    );
    println!("adapter / tool alone: {:.2}x the time", ours / tool);
}
