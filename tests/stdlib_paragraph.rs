//! ParaGraph's displays of the library (`concurrency-profile` and `kiviat` in
//! `displays.voml`, `paragraph.voml`'s tasks, statistics and critical path) on traces of
//! different sizes, through the example made of them (`examples/library/paragraph.voml`):
//! every number a display holds is computed here again from the trace text, by other means
//! (a sweep over the blocking intervals, the statistics records read field by field, a
//! backward walk for the critical path), and the pictures must show those numbers.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{compile_spec, replay_file, root, start_runtime, view_pixels, world_to_px};
use voml_runtime::Runtime;

/// The views of the example, in its order.
const PROFILE: usize = 0;
const KIVIAT: usize = 1;
const TASKS: usize = 2;
const BLOCKED_STAT: usize = 3;
const SENT_STAT: usize = 4;
const CRITICAL: usize = 5;

/// A trace beside the repository, or `None` (with a note) when it is not there.
fn shared(name: &str) -> Option<PathBuf> {
    support::shared_trace(name)
}

/// One record of a trace: its place in the file, type codes, time, processor and its
/// fields as written.
struct Rec {
    index: usize,
    rtype: i64,
    etype: i64,
    t: f64,
    p: i64,
    f: Vec<String>,
}

impl Rec {
    fn int(&self, i: usize) -> i64 {
        self.f[i].parse().unwrap()
    }
}

fn records(text: &str) -> Vec<Rec> {
    text.lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|f| f.len() >= 4)
        .enumerate()
        .map(|(index, f)| Rec {
            index,
            rtype: f[0].parse().unwrap(),
            etype: f[1].parse().unwrap(),
            t: f[2].parse().unwrap(),
            p: f[3].parse().unwrap(),
            f,
        })
        .collect()
}

fn json(rt: &Runtime, name: &str) -> Value {
    voml_runtime::state::to_json(&rt.variable_value(name).unwrap())
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn rgb(rt: &mut Runtime, view: usize, x: f64, y: f64) -> [u8; 3] {
    let pixels = view_pixels(rt, view);
    let (px, py) = world_to_px(rt, view, x, y);
    let p = pixels.pixel(px as u32, py as u32).unwrap();
    [p[0], p[1], p[2]]
}

/// The highest row (in pixels) of colour `ink` in column `x` (world) of a view.
fn top_of(rt: &mut Runtime, view: usize, x: f64, ink: [u8; 3]) -> Option<u32> {
    let pixels = view_pixels(rt, view);
    let (px, _) = world_to_px(rt, view, x, 0.0);
    (0..pixels.height).find(|&y| {
        pixels
            .pixel(px as u32, y)
            .is_some_and(|p| p[..3] == ink[..])
    })
}

fn run(trace: &Path) -> (Runtime, Vec<Rec>) {
    let vo = compile_spec(&root().join("examples/library/paragraph.voml"));
    let mut rt = start_runtime(vo, true, 10_000);
    replay_file(&mut rt, trace);
    assert!(
        rt.faults().is_empty(),
        "{}: {:?}",
        trace.display(),
        rt.faults()
    );
    let text = std::fs::read_to_string(trace).unwrap();
    (rt, records(&text))
}

/// The concurrency profile and the Kiviat diagram against the blocking intervals (-52).
fn check_utilisation(name: &str, rt: &mut Runtime, recs: &[Rec]) {
    let waits: Vec<&Rec> = recs
        .iter()
        .filter(|r| r.etype == -52 && (r.rtype == -3 || r.rtype == -4))
        .collect();
    let (first, last) = (waits[0].t, waits.last().unwrap().t);
    let span = last - first;
    // Each processor's intervals, entry to the next exit.
    let mut since = BTreeMap::new();
    let mut intervals = Vec::new();
    for r in &waits {
        if r.rtype == -3 {
            since.insert(r.p, r.t);
        } else if let Some(start) = since.remove(&r.p) {
            intervals.push((start, r.t));
        }
    }
    // A sweep over every boundary: the time during which exactly k were blocked.
    let mut cuts: Vec<f64> = intervals.iter().flat_map(|&(a, b)| [a, b]).collect();
    cuts.extend([first, last]);
    cuts.sort_by(f64::total_cmp);
    let mut expected: BTreeMap<usize, f64> = BTreeMap::new();
    for w in cuts.windows(2) {
        let mid = (w[0] + w[1]) / 2.0;
        if w[1] > w[0] {
            let k = intervals
                .iter()
                .filter(|&&(a, b)| a < mid && mid < b)
                .count();
            *expected.entry(k).or_default() += w[1] - w[0];
        }
    }
    let profile = json(rt, "profile");
    let got: Vec<f64> = profile.as_array().unwrap().iter().map(num).collect();
    for k in 0..got.len().max(expected.len()) {
        let want = expected.get(&k).copied().unwrap_or(0.0);
        let have = got.get(k).copied().unwrap_or(0.0);
        assert!(
            (have - want).abs() <= 1e-9 * span.max(1.0),
            "{name}: {have} s with {k} blocked, the trace says {want} s"
        );
    }
    let nprocs = recs.iter().map(|r| r.p).max().unwrap() + 1;
    assert_eq!(rt.variable("nprocs"), Some(nprocs.to_string()), "{name}");
    // The profile's bars: k busy is nprocs - k blocked; the tallest reaches the top.
    let share = |busy: i64| expected.get(&((nprocs - busy) as usize)).unwrap_or(&0.0) / span;
    let most = (0..=nprocs).map(share).fold(0.0, f64::max);
    let slot = 1.0 / (nprocs + 1) as f64;
    let green = [0, 176, 0];
    for busy in 0..=nprocs {
        let x = (busy as f64 + 0.5) * slot;
        let height = share(busy) / most;
        let top = top_of(rt, PROFILE, x, green);
        if height < 0.02 {
            // Too short to tell from its outline; at least no taller than that.
            assert!(
                top.is_none_or(|y| f64::from(y) >= world_to_px(rt, PROFILE, x, 0.05).1),
                "{name}: profile bar {busy}"
            );
            continue;
        }
        let (_, want) = world_to_px(rt, PROFILE, x, height);
        let top = top.unwrap_or_else(|| panic!("{name}: no bar for {busy} busy"));
        assert!(
            (f64::from(top) - want).abs() <= 2.0,
            "{name}: the bar for {busy} busy starts at row {top}, its share says {want:.1}"
        );
    }
    // The Kiviat diagram: on each spoke, green up to the busy share and not beyond.
    let mut blocked = vec![0.0; nprocs as usize];
    let mut open = BTreeMap::new();
    for r in &waits {
        if r.rtype == -3 {
            open.insert(r.p, r.t);
        } else if let Some(start) = open.remove(&r.p) {
            blocked[r.p as usize] += r.t - start;
        }
    }
    let turn = std::f64::consts::TAU / nprocs as f64;
    let pixels = view_pixels(rt, KIVIAT);
    let greenish = |x: f64, y: f64| {
        let (px, py) = world_to_px(rt, KIVIAT, x, y);
        pixels
            .pixel(px as u32, py as u32)
            .is_some_and(|c| c[1] > c[0].saturating_add(40) && c[1] > c[2].saturating_add(40))
    };
    for p in 0..nprocs {
        let busy = 1.0 - blocked[p as usize] / span;
        let (sin, cos) = (p as f64 * turn).sin_cos();
        // Out along the spoke, the last green point.
        let reach = (0..=120)
            .map(|i| f64::from(i) / 100.0)
            .filter(|&r| greenish(r * sin, r * cos))
            .fold(0.0, f64::max);
        assert!(
            reach <= busy + 0.05 && (busy < 0.1 || reach >= busy - 0.1),
            "{name}: processor {p} is busy {busy:.3} of the time; the polygon reaches {reach:.2}"
        );
    }
}

/// Task intervals of the user's event types 1 to 5, read by hand: per processor and type
/// the time inside closed tasks, and every task with its depth (open ones end at `tnow`).
#[allow(clippy::type_complexity)]
fn tasks(
    recs: &[Rec],
) -> (
    BTreeMap<(i64, i64), f64>,
    Vec<(i64, i64, f64, f64, usize)>,
    f64,
    f64,
) {
    let mine: Vec<&Rec> = recs
        .iter()
        .filter(|r| (1..=5).contains(&r.etype) && (r.rtype == -3 || r.rtype == -4))
        .collect();
    let (first, last) = (mine[0].t, mine.iter().map(|r| r.t).fold(f64::MIN, f64::max));
    let mut open: BTreeMap<i64, Vec<(i64, f64, usize)>> = BTreeMap::new();
    let mut totals = BTreeMap::new();
    let mut all = Vec::new();
    for r in &mine {
        let stack = open.entry(r.p).or_default();
        if r.rtype == -3 {
            let depth = stack.len();
            stack.push((r.etype, r.t, depth));
        } else if let Some(i) = stack.iter().rposition(|o| o.0 == r.etype) {
            let (ty, start, depth) = stack.remove(i);
            *totals.entry((r.p, ty)).or_insert(0.0) += r.t - start;
            all.push((r.p, ty, start, r.t, depth));
        }
    }
    for (p, stack) in open {
        for (ty, start, depth) in stack {
            all.push((p, ty, start, last, depth));
        }
    }
    (totals, all, first, last)
}

fn check_tasks(name: &str, rt: &mut Runtime, recs: &[Rec]) {
    let (totals, all, first, last) = tasks(recs);
    let done = json(rt, "done");
    let mut got: BTreeMap<(i64, i64), f64> = BTreeMap::new();
    for entry in done.as_array().unwrap() {
        // ["p type depth", total, bars...]
        let key = entry[0].as_str().unwrap();
        let parts: Vec<i64> = key.split(' ').map(|s| s.parse().unwrap()).collect();
        *got.entry((parts[0], parts[1])).or_default() += num(&entry[1]);
    }
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        totals.keys().collect::<Vec<_>>(),
        "{name}: processors and task types"
    );
    for (key, want) in &totals {
        assert!(
            close(got[key], *want),
            "{name}: {key:?} inside tasks {} s, the trace says {want} s",
            got[key]
        );
    }
    // The picture: in the middle of each long task, the colour of the innermost task open
    // there, by its type's rank among the types.
    let palette: [[u8; 3]; 8] = [
        [0x1f, 0x77, 0xb4],
        [0xff, 0x7f, 0x0e],
        [0x2c, 0xa0, 0x2c],
        [0x94, 0x67, 0xbd],
        [0x8c, 0x56, 0x4b],
        [0xe3, 0x77, 0xc2],
        [0x17, 0xbe, 0xcf],
        [0xbc, 0xbd, 0x22],
    ];
    let mut types: Vec<i64> = all.iter().map(|t| t.1).collect();
    types.sort();
    types.dedup();
    let nprocs = recs.iter().map(|r| r.p).max().unwrap() + 1;
    let span = last - first;
    let mut checked = 0;
    for &(p, _, a, b, _) in &all {
        if b - a < 0.05 * span {
            continue;
        }
        let mid = (a + b) / 2.0;
        let innermost = all
            .iter()
            .filter(|t| t.0 == p && t.2 <= mid && mid <= t.3)
            .max_by_key(|t| t.4)
            .unwrap();
        let rank = types.iter().position(|&t| t == innermost.1).unwrap();
        let y = (p as f64 + 0.5) / nprocs as f64;
        assert_eq!(
            rgb(rt, TASKS, (mid - first) / span, y),
            palette[rank % 8],
            "{name}: processor {p} at {mid} is in task {}",
            innermost.1
        );
        checked += 1;
    }
    assert!(checked >= nprocs as usize, "{name}: {checked} tasks seen");
}

/// MPICL's statistics records, read field by field: per processor, the value of `key` in
/// the latest record of type `rtype` (-1: the sum of its values).
fn statistic(recs: &[Rec], rtype: i64, key: i64) -> BTreeMap<i64, f64> {
    let mut out = BTreeMap::new();
    for r in recs.iter().filter(|r| r.rtype == rtype) {
        let pairs = r.int(5) as usize;
        let mut value = 0.0;
        for i in 0..pairs {
            let (k, v): (i64, f64) = (r.int(7 + 2 * i), r.f[8 + 2 * i].parse().unwrap());
            if key == -1 || k == key {
                value += v;
            }
        }
        out.insert(r.p, value);
    }
    out
}

fn check_statistics(name: &str, rt: &mut Runtime, recs: &[Rec]) {
    let nprocs = recs.iter().map(|r| r.p).max().unwrap() + 1;
    for (view, var, rtype, key) in [
        (BLOCKED_STAT, "blocked-times", -101, -52),
        (SENT_STAT, "sent-bytes", -103, -1),
    ] {
        let expected = statistic(recs, rtype, key);
        assert!(!expected.is_empty(), "{name}: no record {rtype}");
        let got: BTreeMap<i64, f64> = json(rt, var)
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| (pair[0].as_i64().unwrap(), num(&pair[1])))
            .collect();
        assert_eq!(got.len(), expected.len(), "{name}: {var}");
        for (p, want) in &expected {
            assert!(
                close(got[p], *want),
                "{name}: {var} of {p}: {} not {want}",
                got[p]
            );
        }
        let most = expected.values().cloned().fold(0.0, f64::max);
        let slot = 1.0 / nprocs as f64;
        for (p, v) in &expected {
            let x = (*p as f64 + 0.5) * slot;
            let height = v / most;
            let top = top_of(rt, view, x, [0x8c, 0x56, 0x4b]);
            if height < 0.02 {
                continue;
            }
            let (_, want) = world_to_px(rt, view, x, height);
            let top = top.unwrap_or_else(|| panic!("{name}: {var}: no bar for {p}"));
            assert!(
                (f64::from(top) - want).abs() <= 2.0,
                "{name}: {var}: processor {p}'s bar starts at row {top}, its value says {want:.1}"
            );
        }
    }
}

/// A stretch of the critical path: processor, from, to.
type Stretch = (i64, f64, f64);

/// The critical path by a backward walk: from the processor whose latest event is latest,
/// back through the waits that a later message or collective root ended.
fn critical_path(recs: &[Rec]) -> Vec<Stretch> {
    let send = |r: &Rec| r.rtype == -3 && [-21, -22, -27].contains(&r.etype);
    let mine: Vec<&Rec> = recs
        .iter()
        .filter(|r| {
            send(r)
                || (r.etype == -52 && (r.rtype == -3 || r.rtype == -4))
                || (r.etype == -51 && r.rtype == -4)
                || (r.etype == -785 && (r.rtype == -3 || r.rtype == -4))
        })
        .collect();
    // The first and latest times of each processor.
    let mut first: BTreeMap<i64, f64> = BTreeMap::new();
    let mut latest: BTreeMap<i64, f64> = BTreeMap::new();
    for r in &mine {
        first.entry(r.p).or_insert(r.t);
        latest.insert(r.p, r.t);
    }
    // Jumps: (processor, index of the record, its time) -> (processor, index, time) the
    // path comes from.
    type At = (i64, usize, f64);
    let mut jumps: Vec<(At, At)> = Vec::new();
    // Messages in MPI order: the first unreceived one from the source with the tag.
    let mut queues: BTreeMap<(i64, i64, i64), std::collections::VecDeque<&Rec>> = BTreeMap::new();
    let mut began: BTreeMap<i64, f64> = BTreeMap::new();
    // Collectives: the k-th entry of each processor, and each root's.
    let mut entered: BTreeMap<i64, Vec<&Rec>> = BTreeMap::new();
    let mut roots: BTreeMap<usize, &Rec> = BTreeMap::new();
    let mut left: BTreeMap<i64, usize> = BTreeMap::new();
    for r in &mine {
        if send(r) {
            queues
                .entry((r.p, r.int(9), r.int(8)))
                .or_default()
                .push_back(r);
        } else if r.etype == -52 && r.rtype == -3 {
            began.insert(r.p, r.t);
        } else if r.rtype == -4 && (r.etype == -52 || r.etype == -51) {
            let sent = queues
                .get_mut(&(r.int(9), r.p, r.int(8)))
                .and_then(|q| q.pop_front());
            if let (Some(s), true) = (sent, r.etype == -52) {
                if began.get(&r.p).is_some_and(|&b| s.t > b) {
                    jumps.push(((r.p, r.index, r.t), (s.p, s.index, s.t)));
                }
            }
        } else if r.etype == -785 && r.rtype == -3 {
            let list = entered.entry(r.p).or_default();
            if r.int(8) == r.p {
                roots.insert(list.len(), r);
            }
            list.push(r);
        } else if r.etype == -785 && r.rtype == -4 {
            let k = entered.get(&r.p).map_or(0, Vec::len);
            let n = left.entry(r.p).or_default();
            *n += 1;
            // The collective left is the latest entered.
            if k == 0 {
                continue;
            }
            let mine_in = entered[&r.p][k - 1];
            if let Some(root) = roots.get(&(k - 1)) {
                if root.t > mine_in.t {
                    jumps.push(((r.p, r.index, r.t), (root.p, root.index, root.t)));
                }
            }
        }
    }
    // The processor of the latest event (the first record to reach the latest time).
    let end = latest.values().cloned().fold(f64::MIN, f64::max);
    let last = mine.iter().find(|r| r.t == end).unwrap().p;
    let mut path = Vec::new();
    let (mut p, mut index, mut to) = (last, usize::MAX, end);
    loop {
        let jump = jumps
            .iter()
            .filter(|(at, _)| at.0 == p && at.1 < index)
            .max_by_key(|(at, _)| at.1);
        match jump {
            Some(&(at, from)) => {
                path.push((p, at.2, to));
                (p, index, to) = from;
            }
            None => {
                path.push((p, first[&p], to));
                break;
            }
        }
    }
    path.reverse();
    path
}

fn check_critical_path(name: &str, rt: &mut Runtime, recs: &[Rec]) {
    let expected = critical_path(recs);
    // The EP's: the path of the processor of the latest event.
    let p: i64 = rt.variable("latest").unwrap().parse().unwrap();
    let end = num(&json(rt, "cp-tnow"));
    let paths = json(rt, "paths");
    let path = paths
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e[0].as_i64() == Some(p))
        .unwrap()
        .as_array()
        .unwrap();
    let mut got: Vec<Stretch> = vec![(p, num(&path[1]), end)];
    got.extend(
        path[2..]
            .iter()
            .map(|s| (s[0].as_i64().unwrap(), num(&s[1]), num(&s[2]))),
    );
    got.reverse();
    assert_eq!(
        got.len(),
        expected.len(),
        "{name}: stretches of the critical path"
    );
    for (g, e) in got.iter().zip(&expected) {
        assert!(
            g.0 == e.0 && close(g.1, e.1) && close(g.2, e.2),
            "{name}: the critical path has {g:?} where the trace says {e:?}"
        );
    }
    // The picture: the path's long stretches in red on their processors' rows.
    let t0 = num(&json(rt, "cp-t0"));
    let span = num(&json(rt, "cp-tnow")) - t0;
    let nprocs = recs.iter().map(|r| r.p).max().unwrap() + 1;
    let mut checked = 0;
    let width = world_to_px(rt, CRITICAL, 1.0, 0.0).0 - world_to_px(rt, CRITICAL, 0.0, 0.0).0;
    for &(q, a, b) in &expected {
        // Stretches at least 8 pixels long.
        if (b - a) / span * width < 8.0 {
            continue;
        }
        let (x, y) = ((a + b) / 2.0 - t0, (q as f64 + 0.5) / nprocs as f64);
        let px = rgb(rt, CRITICAL, x / span, y);
        assert!(
            px[0] >= 0xc0 && px[1] < 0x40 && px[2] < 0x40,
            "{name}: the critical path's stretch on {q} from {a} to {b} shows {px:?}"
        );
        checked += 1;
    }
    assert!(checked > 0, "{name}: no long stretch on the critical path");
}

#[test]
fn on_the_ring_trace() {
    let trace = root().join("examples/mpicl/ring.trf");
    let (mut rt, recs) = run(&trace);
    check_utilisation("ring", &mut rt, &recs);
    check_critical_path("ring", &mut rt, &recs);
    // No tasks, no statistics: the displays say so.
    assert_eq!(rt.variable("done"), Some("()".into()));
    for view in [TASKS, BLOCKED_STAT, SENT_STAT] {
        let pixels = view_pixels(&mut rt, view);
        let grey = (0..pixels.height)
            .flat_map(|y| (0..pixels.width).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                pixels
                    .pixel(x, y)
                    .is_some_and(|p| p[0] == p[1] && p[1] == p[2] && p[0] < 200)
            })
            .count();
        assert!(grey > 20, "ring: view {view} has no note");
    }
}

#[test]
fn on_mpicl_trace1() {
    if let Some(trace) = shared("mpicl-trace1.trf") {
        let (mut rt, recs) = run(&trace);
        check_utilisation("trace1", &mut rt, &recs);
        check_tasks("trace1", &mut rt, &recs);
        check_statistics("trace1", &mut rt, &recs);
        check_critical_path("trace1", &mut rt, &recs);
    }
}

#[test]
fn on_mpicl_trace2() {
    if let Some(trace) = shared("mpicl-trace2.trf") {
        let (mut rt, recs) = run(&trace);
        check_utilisation("trace2", &mut rt, &recs);
        check_tasks("trace2", &mut rt, &recs);
        check_statistics("trace2", &mut rt, &recs);
        check_critical_path("trace2", &mut rt, &recs);
    }
}

/// Ten processors, 120,426 records, 11 s.
#[test]
fn on_mpicl_trace3() {
    if let Some(trace) = shared("mpicl-trace3-bcast10.trf") {
        let (mut rt, recs) = run(&trace);
        check_utilisation("trace3", &mut rt, &recs);
        check_tasks("trace3", &mut rt, &recs);
        check_statistics("trace3", &mut rt, &recs);
        check_critical_path("trace3", &mut rt, &recs);
    }
}
