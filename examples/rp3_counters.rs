//! Writes `examples/library/rp3-counters.trf`, the trace of the RP3-style example
//! (`examples/library/rp3.voml`), to standard output, deterministically:
//!
//! ```text
//! cargo run --example rp3_counters > examples/library/rp3-counters.trf
//! ```
//!
//! It simulates 16 processors of a shared-memory machine like the RP3 running 60 iterations
//! of a loop: each computes, sends its result to its right-hand neighbour, waits for its
//! left-hand neighbour's, and every 20 iterations (the 15th of each 20) all meet in a broadcast. Processor 5 misses
//! the cache far more than the others, so it computes slowly and its neighbours wait for it.
//! Each processor's performance-measurement chip is read every 2 ms, as RP3's was.
//!
//! The records are PICL (MPICL) records, sorted by time, timestamps in seconds:
//!
//! - `-3 -901 T P 0 0` and `-4 -901 T P 0 0`: processor P starts and stops tracing;
//! - `-3 -27 T P 0 3 2 BYTES ITER DEST` and `-4 -27 T P 0 1 2 1`: a send begins and ends;
//! - `-3 -52 T P 0 2 2 -1 -2` and `-4 -52 T P 0 3 2 BYTES ITER SOURCE`: a blocked receive (the
//!   message had not arrived) begins and ends;
//! - `-3 -785 T P 0 3 2 -1 0 -1` and `-4 -785 T P 0 1 2 1024`: a broadcast from processor 0;
//! - `-2 700 T P 0 4 2 INSTR MISSES GLOBAL PHASE`: a counter sample, a mark record of the user
//!   event type 700 with four integers (descriptor 2): the instructions completed since the
//!   previous sample (thousands), the cache misses, the references to other processors'
//!   memory, and the annotation register (the phase of the loop: iteration / 20).
//!
//! A test (`tests/stdlib_rp3.rs`) runs this generator and compares its output with the
//! committed trace byte for byte.

use std::fmt::Write as _;

/// The number of processors simulated.
pub const PROCS: usize = 16;
/// Iterations of the loop.
const ITERATIONS: usize = 60;
/// The period of the counter samples, in microseconds.
const SAMPLE_US: u64 = 2000;
/// The processor that misses the cache.
const SLOW: usize = 5;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

fn ts(t: u64) -> String {
    format!("{}.{:06}", t / 1_000_000, t % 1_000_000)
}

/// The trace, one record a line.
#[allow(clippy::needless_range_loop)]
pub fn trace() -> String {
    let mut rng = Rng(0x0052_5033);
    let mut records: Vec<(u64, String)> = Vec::new();
    // Per processor: its clock (microseconds) and its computing stretches (from, to, phase).
    let mut clock = [0u64; PROCS];
    let mut computing: Vec<Vec<(u64, u64, usize)>> = vec![Vec::new(); PROCS];
    for (p, c) in clock.iter_mut().enumerate() {
        *c = 10 + rng.below(5);
        records.push((*c, format!("-3 -901 {} {p} 0 0", ts(*c))));
    }
    for iteration in 0..ITERATIONS {
        let phase = iteration / 20;
        let mut sent = [0u64; PROCS];
        for p in 0..PROCS {
            // Phase 1 computes longer; the slow processor takes twice as long.
            let mut work = 1500 + rng.below(700) + 400 * phase as u64;
            if p == SLOW {
                work *= 2;
            }
            computing[p].push((clock[p], clock[p] + work, phase));
            clock[p] += work;
            let dest = (p + 1) % PROCS;
            let bytes = 1024 * (1 + rng.below(4));
            records.push((
                clock[p],
                format!(
                    "-3 -27 {} {p} 0 3 2 {bytes} {iteration} {dest}",
                    ts(clock[p])
                ),
            ));
            clock[p] += 40 + rng.below(60);
            records.push((clock[p], format!("-4 -27 {} {p} 0 1 2 1", ts(clock[p]))));
            sent[dest] = clock[p] + 80;
        }
        for p in 0..PROCS {
            let source = (p + PROCS - 1) % PROCS;
            clock[p] += 10;
            if sent[p] > clock[p] {
                records.push((clock[p], format!("-3 -52 {} {p} 0 2 2 -1 -2", ts(clock[p]))));
                clock[p] = sent[p] + 20;
                records.push((
                    clock[p],
                    format!(
                        "-4 -52 {} {p} 0 3 2 4096 {iteration} {source}",
                        ts(clock[p])
                    ),
                ));
            } else {
                clock[p] += 20;
            }
        }
        if iteration % 20 == 14 {
            let start = clock.iter().copied().max().unwrap_or(0);
            for (p, c) in clock.iter_mut().enumerate() {
                let enter = *c + 5;
                records.push((enter, format!("-3 -785 {} {p} 0 3 2 -1 0 -1", ts(enter))));
                *c = start + 250 + 30 * p as u64;
                records.push((*c, format!("-4 -785 {} {p} 0 1 2 1024", ts(*c))));
            }
        }
    }
    let end = clock.iter().copied().max().unwrap_or(0);
    // The counters, read every SAMPLE_US: instructions from the time computed in the period
    // (a million a second waiting; computing, 40 million a second less 6 a phase, 16 on the
    // slow processor), cache
    // misses per thousand instructions by processor and phase, remote references from them.
    for p in 0..PROCS {
        let mut at = SAMPLE_US;
        while at <= end {
            let from = at - SAMPLE_US;
            let mut busy = 0u64;
            let mut phase = 0;
            for &(a, b, ph) in &computing[p] {
                busy += b.min(at).saturating_sub(a.max(from));
                if a < at {
                    phase = ph;
                }
            }
            let speed = if p == SLOW { 16 } else { 40 - 6 * phase as u64 };
            let instr =
                busy * speed / 1000 + (SAMPLE_US - busy.min(SAMPLE_US)) / 1000 + rng.below(3);
            let rate = if p == SLOW { 60 } else { 6 + 3 * phase as u64 };
            let misses = instr * rate / 10 + rng.below(5);
            let global = misses / 4 + rng.below(3);
            records.push((
                at,
                format!(
                    "-2 700 {} {p} 0 4 2 {instr} {misses} {global} {phase}",
                    ts(at)
                ),
            ));
            at += SAMPLE_US;
        }
    }
    for (p, c) in clock.iter().enumerate() {
        let last = end.max(*c) + 10 + p as u64;
        records.push((last, format!("-4 -901 {} {p} 0 0", ts(last))));
    }
    records.sort_by_key(|(t, _)| *t);
    let mut out = String::new();
    for (_, line) in records {
        let _ = writeln!(out, "{line}");
    }
    out
}

#[allow(dead_code)]
fn main() {
    print!("{}", trace());
}
