//! The traces the examples carry are made here, deterministically, so that every command in
//! the README and the examples' READMEs runs from a clone: `examples/mpicl/ring.trf` is a
//! synthetic MPICL (PICL 2.0) trace of eight processes passing messages round a ring, with
//! blocking receives when a message is late and a broadcast every ten rounds, in the record
//! layout MPICL writes. `VOML_BLESS=1` rewrites it.

mod support;

use std::fmt::Write as _;

use support::{check_golden, root, Rng};

const PROCS: usize = 8;
const ROUNDS: usize = 40;

/// The ring trace, records sorted by time.
// A process number indexes its clock, its neighbours' and the messages sent to them.
#[allow(clippy::needless_range_loop)]
fn ring_trace() -> String {
    let mut rng = Rng(0x5249_4e47);
    // (time, line) for every record.
    let mut records: Vec<(u64, String)> = Vec::new();
    let mut clock = [0u64; PROCS]; // microseconds
    let mut push = |t: u64, line: String| records.push((t, line));
    let ts = |t: u64| format!("{}.{:06}", t / 1_000_000, t % 1_000_000);
    for (p, c) in clock.iter_mut().enumerate() {
        *c = 7 + rng.below(4) as u64;
        push(*c, format!("-3 -901 {} {p} 0 0", ts(*c)));
    }
    for round in 0..ROUNDS {
        // Work, then send to the right-hand neighbour.
        let mut sent = [0u64; PROCS];
        let mut sent_bytes = [0usize; PROCS];
        for p in 0..PROCS {
            clock[p] += 400 + rng.below(600) as u64 + if p == round % PROCS { 1500 } else { 0 };
            let dest = (p + 1) % PROCS;
            let bytes = 400 + 100 * rng.below(8);
            push(
                clock[p],
                format!("-3 -27 {} {p} 0 3 2 {bytes} {round} {dest}", ts(clock[p])),
            );
            clock[p] += 50 + rng.below(100) as u64;
            push(clock[p], format!("-4 -27 {} {p} 0 1 2 1", ts(clock[p])));
            sent[dest] = clock[p];
            sent_bytes[dest] = bytes;
        }
        // Receive from the left-hand neighbour: a blocking receive (-52) when the message is
        // not there yet, a plain one (-51) when it is. The entry carries the wildcards, the
        // exit the message's bytes, tag and source.
        for p in 0..PROCS {
            let source = (p + PROCS - 1) % PROCS;
            clock[p] += 20;
            let arrives = sent[p] + 200;
            let key = if arrives > clock[p] { -52 } else { -51 };
            push(
                clock[p],
                format!("-3 {key} {} {p} 0 2 2 -1 -2", ts(clock[p])),
            );
            clock[p] = clock[p].max(arrives) + 30;
            push(
                clock[p],
                format!(
                    "-4 {key} {} {p} 0 3 2 {} {round} {source}",
                    ts(clock[p]),
                    sent_bytes[p]
                ),
            );
        }
        // Every ten rounds, everybody meets in a broadcast from processor 0.
        if round % 10 == 9 {
            let start = clock.iter().copied().max().unwrap_or(0);
            for (p, c) in clock.iter_mut().enumerate() {
                let enter = *c + 1;
                push(enter, format!("-3 -785 {} {p} 0 3 2 -1 0 -1", ts(enter)));
                *c = start + 300 + 40 * p as u64;
                push(*c, format!("-4 -785 {} {p} 0 1 2 1024", ts(*c)));
            }
        }
    }
    for (p, c) in clock.iter().enumerate() {
        push(c + 10, format!("-4 -901 {} {p} 0 0", ts(c + 10)));
    }
    records.sort_by_key(|(t, _)| *t);
    let mut out = String::new();
    for (_, line) in records {
        let _ = writeln!(out, "{line}");
    }
    out
}

#[test]
fn the_ring_trace_is_as_generated() {
    let path = root().join("examples/mpicl/ring.trf");
    if let Some(diff) = check_golden(&path, &ring_trace()) {
        panic!("{diff}");
    }
}

/// The examples written for MPI traces.
const MPI_EXAMPLES: [&str; 14] = [
    "examples/library/broadcasts.voml",
    "examples/library/dashboard.voml",
    "examples/library/dynamics.voml",
    "examples/library/heard.voml",
    "examples/library/messages.voml",
    "examples/library/paragraph.voml",
    "examples/library/rp3.voml",
    "examples/mpicl/sends-and-receives.voml",
    "examples/mpicl/bcast-time.voml",
    "examples/mpicl/count-events.voml",
    "examples/paper/entities.voml",
    "examples/auralization/messages.voml",
    "examples/auralization/idle-busy.voml",
    "examples/auralization/trace2au.voml",
];

/// Every example written for MPI traces runs over the ring trace without a fault, and sees
/// its events.
#[test]
fn the_mpi_examples_run_over_the_ring_trace() {
    run_all_over(&root().join("examples/mpicl/ring.trf"), true);
}

/// And over a real MPICL trace of ten processes (the examples' own trace has eight): no
/// example may assume how many processors there are.
#[test]
fn the_mpi_examples_run_over_a_real_trace_of_ten_processes() {
    let trace = root().join("../shared/traces/picl/mpicl-trace3-bcast10.trf");
    if !trace.is_file() {
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "{} is missing",
            trace.display()
        );
        eprintln!("note: {} not found; skipped", trace.display());
        return;
    }
    // (The paper's entity example listens for events trace3 does not have.)
    run_all_over(&trace, false);
}

fn run_all_over(trace: &std::path::Path, every_example_matches: bool) {
    let trace = trace.to_path_buf();
    for spec in MPI_EXAMPLES {
        let vo = support::compile_spec(&root().join(spec));
        let mut rt = support::start_runtime(vo, true, 10_000);
        let replayed = support::replay_file(&mut rt, &trace);
        assert_eq!(replayed.summary.bad_lines, 0, "{spec}");
        assert!(!replayed.summary.stopped, "{spec}: {:?}", rt.faults());
        assert!(rt.faults().is_empty(), "{spec}: {:?}", rt.faults());
        // Components that take every record through condition parts declare no events.
        assert!(
            !every_example_matches || rt.stats().matched > 0 || rt.vo().events.is_empty(),
            "{spec}: no record matched"
        );
    }
}

/// The library dashboards draw their data on every PICL trace beside the repository (8 or 10
/// processors, 0.1 s or 11 s): no view is left blank.
#[test]
fn the_dashboards_draw_in_every_view_on_every_trace() {
    let dir = root().join("../shared/traces/picl");
    let mut traces: Vec<std::path::PathBuf> = vec![root().join("examples/mpicl/ring.trf")];
    if let Ok(entries) = std::fs::read_dir(&dir) {
        traces.extend(
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "trf")),
        );
    }
    // (The space-time diagram of a trace whose nine messages all come in its first tenth
    // draws less than a tenth of its view.)
    let dashboards: [(&str, &[usize]); 4] = [
        ("examples/library/dashboard.voml", &[10, 10, 10, 10]),
        ("examples/library/dynamics.voml", &[5]),
        ("examples/library/messages.voml", &[2, 10, 10]),
        ("examples/library/heard.voml", &[10, 10]),
    ];
    for (spec, shares) in dashboards {
        for trace in &traces {
            dashboard_draws(spec, shares, trace);
        }
    }
    // The broadcasts' example, on the traces with broadcasts (MPICL's event -785); on the
    // others it runs (see above) and has nothing to show.
    let mut with_broadcasts = 0;
    for trace in &traces {
        let text = std::fs::read_to_string(trace).unwrap();
        if text.lines().any(|l| l.starts_with("-3 -785 ")) {
            // (Most broadcasts are short: the histogram may be one tall bar.)
            dashboard_draws("examples/library/broadcasts.voml", &[10, 2, 10], trace);
            with_broadcasts += 1;
        }
    }
    assert!(with_broadcasts >= 1, "no trace with broadcasts");
}

/// Every view of `spec` run over `trace` has at least `shares[view]` per cent of its pixels
/// drawn.
fn dashboard_draws(spec: &str, shares: &[usize], trace: &std::path::Path) {
    let vo = support::compile_spec(&root().join(spec));
    let mut rt = support::start_runtime(vo, true, 10_000);
    support::replay_file(&mut rt, trace);
    assert!(
        rt.faults().is_empty(),
        "{spec} {}: {:?}",
        trace.display(),
        rt.faults()
    );
    for (view, &share) in shares.iter().enumerate() {
        let pixels = support::view_pixels(&rt, view);
        let white = [255, 255, 255, 255];
        let drawn = (0..pixels.height)
            .flat_map(|y| (0..pixels.width).map(move |x| (x, y)))
            .filter(|&(x, y)| pixels.pixel(x, y) != Some(white))
            .count();
        let all = (pixels.width * pixels.height) as usize;
        assert!(
            drawn * 100 > all * share,
            "{spec} {}: view {view} is nearly blank ({drawn} of {all} pixels drawn)",
            trace.display()
        );
    }
}

/// The RP3-style example draws in every view on every PICL trace beside the repository and on
/// its own counter trace: each view has something drawn across it (its data, or, for data a
/// trace lacks such as hardware counters, its frame and a note), not left blank or in a corner.
#[test]
fn the_rp3_example_draws_across_every_view_on_every_trace() {
    let dir = root().join("../shared/traces/picl");
    let mut traces: Vec<std::path::PathBuf> = vec![
        root().join("examples/mpicl/ring.trf"),
        root().join("examples/library/rp3-counters.trf"),
    ];
    if let Ok(entries) = std::fs::read_dir(&dir) {
        traces.extend(
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "trf")),
        );
    }
    for trace in traces {
        let vo = support::compile_spec(&root().join("examples/library/rp3.voml"));
        let mut rt = support::start_runtime(vo, true, 10_000);
        support::replay_file(&mut rt, &trace);
        let name = trace.display();
        assert!(rt.faults().is_empty(), "{name}: {:?}", rt.faults());
        for view in 0..5 {
            let pixels = support::view_pixels(&rt, view);
            let white = [255, 255, 255, 255];
            let drawn: Vec<(u32, u32)> = (0..pixels.height)
                .flat_map(|y| (0..pixels.width).map(move |x| (x, y)))
                .filter(|&(x, y)| pixels.pixel(x, y) != Some(white))
                .collect();
            let across = |f: fn(&(u32, u32)) -> u32| {
                drawn.iter().map(f).max().unwrap_or(0) - drawn.iter().map(f).min().unwrap_or(0)
            };
            assert!(
                drawn.len() * 200 > (pixels.width * pixels.height) as usize
                    && across(|p| p.0) * 4 > pixels.width * 3
                    && across(|p| p.1) * 2 > pixels.height,
                "{name}: view {view} is blank or drawn in a corner ({} pixels)",
                drawn.len()
            );
        }
    }
}

/// The ParaGraph example draws inside every view on every PICL trace beside the repository
/// and on the ring trace: its displays have data, or (the ring trace has no user tasks and
/// no statistics records) say that they have none; nothing is drawn past a view's edge
/// into its neighbour, since each view is its own picture, so "inside" is: not blank.
#[test]
fn the_paragraph_example_draws_in_every_view_on_every_trace() {
    let dir = root().join("../shared/traces/picl");
    let mut traces: Vec<std::path::PathBuf> = vec![root().join("examples/mpicl/ring.trf")];
    if let Ok(entries) = std::fs::read_dir(&dir) {
        traces.extend(
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "trf")),
        );
    }
    for trace in traces {
        let text = std::fs::read_to_string(&trace).unwrap();
        let has = |rtype: &str| text.lines().any(|l| l.starts_with(rtype));
        let vo = support::compile_spec(&root().join("examples/library/paragraph.voml"));
        let mut rt = support::start_runtime(vo, true, 10_000);
        support::replay_file(&mut rt, &trace);
        assert!(
            rt.faults().is_empty(),
            "{}: {:?}",
            trace.display(),
            rt.faults()
        );
        // Views: profile, kiviat, tasks, two statistics, critical path.
        let has_tasks = text.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 2 && f[0] == "-3" && f[1].parse::<i64>().is_ok_and(|t| (1..=5).contains(&t))
        });
        let full = [true, true, has_tasks, has("-101 "), has("-103 "), true];
        for (view, &full) in full.iter().enumerate() {
            let pixels = support::view_pixels(&rt, view);
            let white = [255, 255, 255, 255];
            let drawn = (0..pixels.height)
                .flat_map(|y| (0..pixels.width).map(move |x| (x, y)))
                .filter(|&(x, y)| pixels.pixel(x, y) != Some(white))
                .count();
            let all = (pixels.width * pixels.height) as usize;
            // A display with data covers a twentieth of its view; a note, a little of it.
            let least = if full { all / 20 } else { 50 };
            assert!(
                drawn > least,
                "{}: view {view} is nearly blank ({drawn} of {all} pixels drawn)",
                trace.display()
            );
        }
    }
}
