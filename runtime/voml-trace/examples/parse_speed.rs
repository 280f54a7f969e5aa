//! How fast the reader parses a trace file: `cargo run --release -p voml-trace --example
//! parse_speed -- FILE.trf`. Prints records, MB/s and ns per record (best of five), beside a
//! plain line splitter over the same bytes.

use std::io::{BufRead, BufReader};
use std::time::Instant;

use voml_trace::{ReadOptions, Record, TraceReader};

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: parse_speed FILE.trf");
    let bytes = std::fs::metadata(&path).expect("the file exists").len() as f64;
    let mut best = f64::INFINITY;
    let mut records = 0u64;
    for _ in 0..5 {
        let t = Instant::now();
        let mut reader = TraceReader::open(&path, ReadOptions::default()).unwrap();
        let mut spare: Option<Record> = None;
        let mut n = 0u64;
        while let Some(item) = reader.next_reusing(spare.take()) {
            if let Ok(r) = item {
                n += 1;
                spare = Some(r);
            }
        }
        best = best.min(t.elapsed().as_secs_f64());
        records = n;
    }
    let mut plain = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        let mut r = BufReader::with_capacity(1 << 16, std::fs::File::open(&path).unwrap());
        let mut line = Vec::new();
        let mut tokens = 0u64;
        while r.read_until(b'\n', &mut line).unwrap() > 0 {
            tokens += line
                .split(|b| b.is_ascii_whitespace())
                .filter(|t| !t.is_empty())
                .count() as u64;
            line.clear();
        }
        std::hint::black_box(tokens);
        plain = plain.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{records} records, {:.1} MB: reader {:.0} MB/s ({:.0} ns/record); plain splitter {:.0} MB/s",
        bytes / 1e6,
        bytes / 1e6 / best,
        best * 1e9 / records.max(1) as f64,
        bytes / 1e6 / plain
    );
}
