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
const MPI_EXAMPLES: [&str; 15] = [
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
    "examples/mpicl/long-waits.voml",
    "examples/paper/entities.voml",
    "examples/auralization/messages.voml",
    "examples/auralization/idle-busy.voml",
    "examples/auralization/trace2au.voml",
];

/// Every example written for MPI traces runs over the ring trace without a fault, and sees
/// its events.
#[test]
fn the_mpi_examples_run_over_the_ring_trace() {
    run_all_over(&root().join("examples/mpicl/ring.trf"));
}

fn run_all_over(trace: &std::path::Path) {
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
            rt.stats().matched > 0 || rt.vo().events.is_empty(),
            "{spec}: no record matched"
        );
    }
}

/// The library dashboards draw their data on every PICL trace beside the repository (8 or 10
/// processors, 0.1 s or 11 s): no view is left blank.
#[test]
fn the_dashboards_draw_in_every_view_on_every_trace() {
    let traces = picl_traces();
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
        let pixels = support::view_pixels(&mut rt, view);
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
    let mut traces = picl_traces();
    traces.push(root().join("examples/library/rp3-counters.trf"));
    for trace in traces {
        let vo = support::compile_spec(&root().join("examples/library/rp3.voml"));
        let mut rt = support::start_runtime(vo, true, 10_000);
        support::replay_file(&mut rt, &trace);
        let name = trace.display();
        assert!(rt.faults().is_empty(), "{name}: {:?}", rt.faults());
        for view in 0..5 {
            let pixels = support::view_pixels(&mut rt, view);
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
    let traces = picl_traces();
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
            let pixels = support::view_pixels(&mut rt, view);
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

// ---------------------------------------------------------------------------------------
// Every MPI example draws inside its views, on every PICL trace.

/// The examples whose views the tests above check on every trace in their own way.
const CHECKED_APART: [&str; 3] = [
    "examples/library/dynamics.voml",
    "examples/library/paragraph.voml",
    "examples/library/rp3.voml",
];

/// The colours in which a view draws its data (not its axes, labels or guides).
#[derive(Clone, Copy)]
enum Ink {
    /// These colours, each channel within 24.
    Colours(&'static [[u8; 3]]),
    /// Any clearly coloured pixel (channels at least 60 apart): the library's palettes run
    /// from green or blue to red, and their axes and labels are black or grey.
    Coloured,
}

/// How a view lays out the processors.
#[derive(Clone, Copy)]
enum Bands {
    /// No per-processor layout is checked.
    None,
    /// A row (across y) for every processor named in the view's records.
    Rows,
    /// A Gantt chart's rows, dark where a processor is busy: a row for every processor up to
    /// the highest one the records name (field 4, or the partner at field 10 of a send or
    /// receive), except those blocked in receives (-52) for all but a five-hundredth of the
    /// time from the first record shown to the latest (under two pixels of a chart 840
    /// pixels wide), whose rows are white.
    BusyRows,
    /// A bar (across x) for every processor named in the view's records.
    Bars,
}

/// How a view's data fill it.
#[derive(Clone, Copy, PartialEq)]
enum Fit {
    /// Sized by the trace: bars up to the largest value, a row per processor.
    Sized,
    /// Sized, and time runs across the view from the first record shown to the latest: the
    /// data reach both side edges.
    TimeAcross,
    /// Only where the trace says: a communication matrix has cells only for the pairs of
    /// processors that exchanged messages.
    Sparse,
}

/// One view of an example, as the test sees it.
#[derive(Clone, Copy)]
struct Shown {
    ink: Ink,
    /// The records it shows, by their first two fields (`""`: every record). A trace with
    /// none of them leaves the view without data: only its axes and labels.
    records: &'static [&'static str],
    fit: Fit,
    bands: Bands,
}

const BLUE: [u8; 3] = [0, 0, 255];
const RED: [u8; 3] = [255, 0, 0];
const STEELBLUE: [u8; 3] = [70, 130, 180];
const MESSAGES: &[&str] = &["-3 -27", "-3 -22", "-4 -51", "-3 -52", "-4 -52"];
const SENDS: &[&str] = &["-3 -27", "-3 -22"];
const WAITS: &[&str] = &["-3 -52", "-4 -52"];
const BROADCASTS: &[&str] = &["-3 -785", "-4 -785"];
const ANY: &[&str] = &[""];

const fn shown(ink: Ink, records: &'static [&'static str], fit: Fit, bands: Bands) -> Shown {
    Shown {
        ink,
        records,
        fit,
        bands,
    }
}

/// What each MPI example shows in each of its views, in the order of its views.
fn shown_by(spec: &str) -> Vec<Shown> {
    use Bands::*;
    use Fit::*;
    use Ink::*;
    let library = |records, fit| shown(Coloured, records, fit, None);
    match spec {
        "examples/library/broadcasts.voml" => vec![
            library(BROADCASTS, TimeAcross),
            library(BROADCASTS, Sized),
            library(BROADCASTS, Sized),
        ],
        "examples/library/dashboard.voml" => vec![
            library(WAITS, TimeAcross),
            library(WAITS, TimeAcross),
            library(&["-3 -27", "-3 -785"], Sized),
            library(&["-3 -27", "-3 -785"], Sized),
        ],
        "examples/library/heard.voml" => {
            vec![library(WAITS, TimeAcross), library(WAITS, TimeAcross)]
        }
        // (The queues are empty at the end of a trace: what stays is the pale bar of the
        // longest each has been.)
        "examples/library/messages.voml" => vec![
            library(MESSAGES, TimeAcross),
            library(MESSAGES, Sparse),
            shown(
                Colours(&[[0xc6, 0xdb, 0xef], STEELBLUE, RED]),
                MESSAGES,
                Sized,
                None,
            ),
        ],
        "examples/mpicl/sends-and-receives.voml" => vec![shown(
            Colours(&[BLUE, RED, [0x99, 0x99, 0x99]]),
            MESSAGES,
            TimeAcross,
            Rows,
        )],
        "examples/mpicl/bcast-time.voml" => {
            vec![shown(Colours(&[STEELBLUE]), &["-4 -785"], Sized, Bars)]
        }
        "examples/mpicl/long-waits.voml" => {
            vec![shown(
                Colours(&[[0xcd, 0x5c, 0x5c]]),
                &["-4 -52"],
                Sized,
                Bars,
            )]
        }
        "examples/mpicl/count-events.voml" => vec![shown(Colours(&[STEELBLUE]), ANY, Sized, Bars)],
        // Figure 7 of the paper counts MPI send-begin records (-3 -27) only.
        "examples/paper/entities.voml" => {
            vec![shown(Colours(&[STEELBLUE]), &["-3 -27"], Sized, Bars)]
        }
        // (The grapevine's orange hops cross the rows; they are left out.)
        "examples/auralization/messages.voml" => vec![shown(
            Colours(&[BLUE, RED, [0xaa, 0xaa, 0xaa]]),
            MESSAGES,
            TimeAcross,
            Rows,
        )],
        "examples/auralization/idle-busy.voml" => vec![
            shown(
                Colours(&[[0x34, 0x49, 0x5e]]),
                MESSAGES,
                TimeAcross,
                BusyRows,
            ),
            shown(Colours(&[[46, 139, 87], [178, 34, 34]]), ANY, Sized, None),
        ],
        "examples/auralization/trace2au.voml" => vec![
            shown(Colours(&[STEELBLUE]), SENDS, TimeAcross, None),
            shown(
                Colours(&[STEELBLUE, [255, 140, 0], [128, 128, 128]]),
                SENDS,
                Sized,
                Bars,
            ),
        ],
        other => panic!("{other}: say what it shows"),
    }
}

/// The PICL traces the examples are tried on: the ring trace the examples carry, and the
/// real MPICL traces beside the repository when they are there.
fn picl_traces() -> Vec<std::path::PathBuf> {
    support::every_picl_trace()
}

/// The processors a view's records name: field 4, and with `partners` the other end of a
/// send or receive (field 10) too.
fn processors(text: &str, records: &[&str], partners: bool) -> std::collections::BTreeSet<i64> {
    let mut found = std::collections::BTreeSet::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 || !records.iter().any(|r| is_record(line, r)) {
            continue;
        }
        if let Ok(p) = f[3].parse() {
            found.insert(p);
        }
        if partners && f.len() >= 10 && matches!(f[1], "-27" | "-22" | "-51" | "-52") {
            if let Ok(p) = f[9].parse::<i64>() {
                if p >= 0 {
                    found.insert(p);
                }
            }
        }
    }
    found
}

/// How many processors a Gantt chart of `records` shows busy (see `Bands::BusyRows`).
fn busy_rows(text: &str, records: &[&str]) -> usize {
    let Some(&highest) = processors(text, records, true).last() else {
        return 0;
    };
    let shown: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| records.iter().any(|r| is_record(l, r)))
        .map(|l| l.split_whitespace().collect())
        .collect();
    let times = || shown.iter().map(|f| f[2].parse::<f64>().unwrap());
    let first = times().fold(f64::MAX, f64::min);
    let last = times().fold(f64::MIN, f64::max);
    let mut since = std::collections::HashMap::new();
    let mut blocked = vec![0.0; highest as usize + 1];
    for f in &shown {
        let (t, p): (f64, usize) = (f[2].parse().unwrap(), f[3].parse().unwrap());
        match (f[0], f[1]) {
            ("-3", "-52") => {
                since.insert(p, t);
            }
            ("-4", "-52") => blocked[p] += t - since.remove(&p).unwrap_or(t),
            _ => {}
        }
    }
    for (p, t) in since {
        blocked[p] += last - t;
    }
    blocked
        .iter()
        .filter(|&&b| (last - first) - b >= 0.002 * (last - first))
        .count()
}

/// Whether `line` is a record of kind `kind`: its first two fields (record type and event
/// type), or any record for `""`.
fn is_record(line: &str, kind: &str) -> bool {
    kind.is_empty() || line.split_whitespace().take(2).eq(kind.split_whitespace())
}

/// The runs of consecutive lines (of pixels) that hold data, along one axis.
fn runs(has_data: impl Iterator<Item = bool>) -> usize {
    let mut count = 0;
    let mut inside = false;
    for here in has_data {
        if here && !inside {
            count += 1;
        }
        inside = here;
    }
    count
}

/// What is wrong with view `index` of `spec` after a run over a trace whose text is `text`,
/// if anything. The data pixels are those in the view's ink inside its scrollable area (the
/// plot area, without the margins where axes and labels go).
///
/// - A view whose records are in the trace is not blank: it has at least 50 data pixels.
/// - It is not clipped to a corner: the bounding box of its data spans at least a third of
///   the area's width and of its height, and reaches into the top sixth of the area (the
///   largest value, or the highest row, is sized to the top). With time across, the data
///   reach within 3 % of the area's left and right edges: time runs from the first record
///   shown to the latest, not over a fixed range.
/// - It has a row or a bar for every processor the trace names (separate runs of data
///   across the other axis): no processor is left out of a fixed number of rows.
/// - A view whose records the trace lacks shows no data at all.
fn misdrawn(
    rt: &mut voml_runtime::Runtime,
    index: usize,
    shown: &Shown,
    text: &str,
) -> Option<String> {
    let pixels = support::view_pixels(rt, index);
    let area = {
        let host = rt.host();
        let area = host.drawing.read().mapping(host.views[index]).unwrap().area;
        area
    };
    let is_data = |x: u32, y: u32| -> bool {
        let Some([r, g, b, _]) = pixels.pixel(x, y) else {
            return false;
        };
        match shown.ink {
            Ink::Colours(colours) => colours.iter().any(|c| {
                c[0].abs_diff(r) <= 24 && c[1].abs_diff(g) <= 24 && c[2].abs_diff(b) <= 24
            }),
            Ink::Coloured => r.max(g).max(b) - r.min(g).min(b) >= 60,
        }
    };
    let (x0, y0) = (area.x.max(0) as u32, area.y.max(0) as u32);
    let (w, h) = (area.w, area.h);
    let mut count = 0usize;
    let (mut left, mut right, mut top, mut bottom) = (u32::MAX, 0, u32::MAX, 0);
    let mut columns = vec![false; w as usize];
    let mut lines = vec![false; h as usize];
    for y in 0..h {
        for x in 0..w {
            if is_data(x0 + x, y0 + y) {
                count += 1;
                left = left.min(x);
                right = right.max(x);
                top = top.min(y);
                bottom = bottom.max(y);
                columns[x as usize] = true;
                lines[y as usize] = true;
            }
        }
    }
    let present = text
        .lines()
        .any(|l| shown.records.iter().any(|r| is_record(l, r)));
    if !present {
        return (count > 0).then(|| {
            format!(
                "the trace has none of its records ({:?}) but {count} pixels of data are drawn",
                shown.records
            )
        });
    }
    if count < 50 {
        return Some(format!("blank ({count} pixels of data)"));
    }
    if shown.fit == Fit::Sparse {
        return None;
    }
    let (spread_x, spread_y) = (right - left + 1, bottom - top + 1);
    let mut wrong = Vec::new();
    if spread_x * 3 < w || spread_y * 3 < h {
        wrong.push(format!(
            "clipped to a corner: its data span {spread_x}×{spread_y} of {w}×{h} pixels"
        ));
    }
    if top * 6 > h {
        wrong.push(format!(
            "its data stop {top} pixels below the top of {h}: not sized to the largest value"
        ));
    }
    if shown.fit == Fit::TimeAcross && (left * 100 > w * 3 || (w - 1 - right) * 100 > w * 3) {
        wrong.push(format!(
            "its time axis does not span the records: data from x = {left} to {right} of {w}"
        ));
    }
    let expected = match shown.bands {
        Bands::None => None,
        Bands::Rows | Bands::Bars => Some(processors(text, shown.records, false).len()),
        Bands::BusyRows => Some(busy_rows(text, shown.records)),
    };
    if let Some(expected) = expected {
        let found = match shown.bands {
            Bands::Bars => runs(columns.iter().copied()),
            _ => runs(lines.iter().copied()),
        };
        if found != expected {
            wrong.push(format!(
                "{found} processors drawn, {expected} in the trace's records {:?}",
                shown.records
            ));
        }
    }
    (!wrong.is_empty()).then(|| wrong.join("; "))
}

/// Every MPI example, run unchanged over every PICL trace (eight or ten processors, 0.1 s or
/// 11.6 s), runs without a fault (no example may assume how many processors there are) and
/// draws its data inside each of its views: none is blank, clipped to a corner, or
/// short of processors (see `misdrawn`). Where a trace lacks what a view shows, the view
/// shows only its axes and labels: mpicl-trace1 and mpicl-trace2 have no broadcasts (-785);
/// mpicl-trace3-bcast10 has no MPI_Send begins (-27, -22: its nine sends are -21) and no
/// plain receives (-51), only nine blocked ones (-52), so the paper's send counts and
/// Trace2au's messages in flight are empty there.
#[test]
fn every_mpi_example_draws_inside_its_views_on_every_trace() {
    let mut problems = Vec::new();
    for trace in picl_traces() {
        let text = std::fs::read_to_string(&trace).unwrap();
        let name = trace.file_name().unwrap().to_string_lossy().into_owned();
        // (The RP3-style, ParaGraph and dynamic-system examples have tests of their own
        // above, on these traces and their own.)
        for spec in MPI_EXAMPLES
            .into_iter()
            .filter(|spec| !CHECKED_APART.contains(spec))
        {
            let path = root().join(spec);
            let vo = if spec.ends_with("long-waits.voml") {
                // Its trigger ends a plain run at the first long wait; with the limit out of
                // reach the run goes on to the end of the trace.
                let source = std::fs::read_to_string(&path).unwrap();
                let raised = source.replace(
                    r#"<variable name="limit" type="real" init="0.005"/>"#,
                    r#"<variable name="limit" type="real" init="1e9"/>"#,
                );
                assert_ne!(raised, source, "{spec}: no limit to raise");
                support::compile_text(spec, &raised)
            } else {
                support::compile_spec(&path)
            };
            let mut rt = support::start_runtime(vo, true, 10_000);
            let replayed = support::replay_file(&mut rt, &trace);
            assert_eq!(replayed.summary.bad_lines, 0, "{spec} {name}");
            assert!(
                !replayed.summary.stopped,
                "{spec} {name}: {:?}",
                rt.faults()
            );
            assert!(rt.faults().is_empty(), "{spec} {name}: {:?}", rt.faults());
            for (index, shown) in shown_by(spec).iter().enumerate() {
                if !text
                    .lines()
                    .any(|l| shown.records.iter().any(|r| is_record(l, r)))
                {
                    eprintln!(
                        "note: {name} has none of {:?}: {spec} shows only axes and labels in view {index}",
                        shown.records
                    );
                }
                if let Some(wrong) = misdrawn(&mut rt, index, shown, &text) {
                    problems.push(format!("{spec} on {name}, view {index}: {wrong}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}
