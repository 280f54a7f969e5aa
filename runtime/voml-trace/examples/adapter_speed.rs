//! How fast a trace of any format is read into records: `cargo run --release -p voml-trace
//! --example adapter_speed -- TRACE [REPEAT]`. The format is told by the content, as
//! `voml run --trace` tells it. Prints the records, the bad records and records per second
//! (the best of REPEAT readings, 3 by default), for profiling an adapter on its own.

use std::process::ExitCode;
use std::time::Instant;

use voml_trace::{FormatReader, ReadOptions, Record};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: adapter_speed TRACE [REPEAT]");
        return ExitCode::from(2);
    };
    let repeat: usize = match args.get(1).map(|r| r.parse()) {
        None => 3,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("REPEAT is a whole number above 0");
            return ExitCode::from(2);
        }
    };
    let mut best = f64::INFINITY;
    let (mut records, mut bad) = (0u64, 0u64);
    for _ in 0..repeat {
        let t = Instant::now();
        let mut reader = match FormatReader::open(path, ReadOptions::default(), None) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mut spare: Option<Record> = None;
        (records, bad) = (0, 0);
        while let Some(item) = reader.next_reusing(spare.take()) {
            match item {
                Ok(r) => {
                    records += 1;
                    spare = Some(r);
                }
                Err(_) => bad += 1,
            }
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{records} records, {bad} bad, {:.3} s, {:.2} M records/s",
        best,
        records as f64 / best / 1e6
    );
    ExitCode::SUCCESS
}
