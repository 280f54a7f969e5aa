//! Measures the trace reader's throughput: reads a PICL trace (or `-` for stdin) and prints
//! the record count and records per second.
//!
//! `cargo run --release -p voml-trace --example read_speed -- TRACE [REPEAT]`
//!
//! REPEAT reads a file that many times in a row, so that small traces run long enough for a
//! stable figure.

use std::hint::black_box;
use std::io::{self, BufReader};
use std::process::ExitCode;
use std::time::Instant;

use voml_trace::{ReadOptions, TraceReader, TraceStats};

fn drain<R: io::BufRead>(mut reader: TraceReader<R>, fields: &mut u64) -> TraceStats {
    for item in reader.by_ref() {
        match item {
            // Touching the record keeps the optimiser from discarding the parse.
            Ok(record) => *fields += black_box(&record).fields.len() as u64,
            Err(e) => eprintln!("{e}"),
        }
    }
    reader.stats()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: read_speed TRACE|- [REPEAT]");
        return ExitCode::from(2);
    };
    let repeat: u32 = match args.get(1).map(|s| s.parse()) {
        None => 1,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("REPEAT must be a positive integer");
            return ExitCode::from(2);
        }
    };
    let options = ReadOptions::default();
    let mut total = TraceStats::default();
    let mut fields = 0u64;
    let start = Instant::now();
    for _ in 0..if path == "-" { 1 } else { repeat } {
        let stats = if path == "-" {
            let stdin = BufReader::with_capacity(64 * 1024, io::stdin().lock());
            drain(TraceReader::new(stdin, "-".into(), options), &mut fields)
        } else {
            match TraceReader::open(path, options) {
                Ok(reader) => drain(reader, &mut fields),
                Err(e) => {
                    eprintln!("{path}: {e}");
                    return ExitCode::FAILURE;
                }
            }
        };
        total.records += stats.records;
        total.bad_lines += stats.bad_lines;
        total.comment_or_blank += stats.comment_or_blank;
    }
    let secs = start.elapsed().as_secs_f64();
    println!("records: {}", total.records);
    println!("bad lines: {}", total.bad_lines);
    println!("comment or blank lines: {}", total.comment_or_blank);
    println!("fields: {fields}");
    println!("seconds: {secs:.4}");
    println!("records/s: {:.0}", total.records as f64 / secs);
    ExitCode::SUCCESS
}
