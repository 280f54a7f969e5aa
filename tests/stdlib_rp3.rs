//! The RP3 library (`stdlib-components/rp3.voml`) and its example
//! (`examples/library/rp3.voml`) on traces of different sizes: the numbers the components
//! keep are those computed here from the trace text (the samples per interval, the time each
//! processor spends in each state, the mean number of processors in each state), and the
//! pictures show them (a line in each processor's strip reaching the top at the peak, each
//! row's colour at a time of the sweep, the stacked heights).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{check_golden, compile_text, replay_file, root, start_runtime, view_pixels};

#[allow(dead_code)]
#[path = "../examples/rp3_counters.rs"]
mod generator;

const COUNTERS: &str = "examples/library/rp3-counters.trf";

/// The committed counter trace is what its generator writes.
#[test]
fn the_counter_trace_is_as_generated() {
    if let Some(diff) = check_golden(&root().join(COUNTERS), &generator::trace()) {
        panic!("{diff}");
    }
}

/// The traces: the generated counter trace (16 processors), the examples' ring (8) and the
/// real MPICL traces beside the repository (8 processors), when they are there.
fn traces() -> Vec<PathBuf> {
    let mut traces = vec![root().join(COUNTERS)];
    traces.extend(support::ring_and_shared(&[
        "mpicl-trace1.trf",
        "mpicl-trace2.trf",
    ]));
    traces
}

fn fields(text: &str) -> impl Iterator<Item = Vec<&str>> {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() >= 4)
}

fn json(rt: &voml_runtime::Runtime, name: &str) -> Value {
    voml_runtime::state::to_json(&rt.variable_value(name).unwrap())
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// History graphs of one sampled value per processor: `(rtype, etype, data position)`.
fn history_spec(rtype: i64, etype: i64, index: usize, how: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<voml><head><import href="voml:rp3.voml"/></head>
<body><visual-object name="history">
  <event-declarations>
    <data-event name="sample" rtype="{rtype}" etype="{etype}">
      <data-field name="ts" type="real"/><data-field name="proc" type="int"/>
      <data-field name="value" type="int" index="{index}"/>
    </data-event>
  </event-declarations>
  <info-structures>
    <variable name="sums" type="vector"/><variable name="counts" type="vector"/>
    <variable name="width" type="real"/><variable name="t0" type="real"/>
    <variable name="tnow" type="real"/><variable name="nprocs" type="int"/>
  </info-structures>
  <control-structures><variable name="how" type="string" init="{how}"/></control-structures>
  <view-initializations>
    <view name="graphs" window="600 300" margins="30 10 14 18" world="0 1 0 1"/>
  </view-initializations>
  <event-processing>
    <ep-component name="sample" use="sample-per-interval" inputs="sample.ts.proc.value"
                  infos="sums counts width t0 tnow nprocs"/>
  </event-processing>
  <info-rendition>
    <ir-component name="draw" use="history-graphs" views="graphs"
                  infos="sums counts width t0 tnow nprocs" controls="how"/>
  </info-rendition>
</visual-object></body></voml>
"#
    )
}

/// The history of send sizes (the mean of each interval) on the MPI traces, and of the
/// instruction counter (a rate) on the counter trace.
#[test]
fn history_graphs_sample_per_interval_and_draw_the_peak_on_every_trace() {
    for trace in traces() {
        let text = std::fs::read_to_string(&trace).unwrap();
        let counters = trace.ends_with("rp3-counters.trf");
        let (rtype, etype, index, how) = if counters {
            ("-2", "700", 7, "rate")
        } else {
            ("-3", "-27", 7, "mean")
        };
        let name = trace.display();
        // Samples by hand: (time, processor, value).
        let samples: Vec<(f64, usize, f64)> = fields(&text)
            .filter(|f| f[0] == rtype && f[1] == etype)
            .map(|f| {
                (
                    f[2].parse().unwrap(),
                    f[3].parse().unwrap(),
                    f[index].parse().unwrap(),
                )
            })
            .collect();
        if samples.is_empty() {
            eprintln!("note: {name} has no samples of {etype}; skipped");
            continue;
        }
        let spec = history_spec(rtype.parse().unwrap(), etype.parse().unwrap(), index, how);
        let mut rt = start_runtime(compile_text("history.voml", &spec), true, 2000);
        replay_file(&mut rt, &trace);
        assert!(rt.faults().is_empty(), "{name}: {:?}", rt.faults());
        let t0 = samples[0].0;
        let tnow = samples.iter().map(|s| s.0).fold(f64::MIN, f64::max);
        let nprocs = samples.iter().map(|s| s.1).max().unwrap() + 1;
        assert_eq!(rt.variable("nprocs"), Some(nprocs.to_string()), "{name}");
        assert_eq!(num(&json(&rt, "t0")), t0, "{name}");
        assert_eq!(num(&json(&rt, "tnow")), tnow, "{name}");
        // The intervals: the first is a 50th of the time to the second distinct time, then
        // they double until the span fits in 100.
        let second = samples.iter().map(|s| s.0).find(|&t| t > t0).unwrap();
        let mut width = (second - t0) / 50.0;
        while tnow - t0 > 100.0 * width {
            width *= 2.0;
        }
        let got_width = num(&json(&rt, "width"));
        assert!(
            (got_width - width).abs() <= 1e-12 * width,
            "{name}: width {got_width} vs {width}"
        );
        // Every sample in its interval (one at an interval's edge may round either way).
        let mut want = vec![vec![0.0f64; 100]; nprocs];
        let mut count = vec![vec![0u32; 100]; nprocs];
        let mut slack = vec![vec![0.0f64; 100]; nprocs];
        for &(t, p, v) in &samples {
            let x = (t - t0) / width;
            let i = (x.floor() as usize).min(99);
            want[p][i] += v;
            count[p][i] += 1;
            if (x - x.round()).abs() < 1e-6 {
                for j in [i.saturating_sub(1), i, (i + 1).min(99)] {
                    slack[p][j] += v.abs();
                }
            }
        }
        let sums = json(&rt, "sums");
        let counts = json(&rt, "counts");
        for p in 0..nprocs {
            let row = &sums[p];
            if count[p].iter().all(|&c| c == 0) {
                assert!(
                    row.is_null() || row == &Value::Bool(false),
                    "{name}: {p} {row}"
                );
                continue;
            }
            let total: f64 = row.as_array().unwrap().iter().map(num).sum();
            let total_n: f64 = counts[p].as_array().unwrap().iter().map(num).sum();
            assert_eq!(
                total,
                want[p].iter().sum::<f64>(),
                "{name}: processor {p}'s sum"
            );
            assert_eq!(
                total_n as u32,
                count[p].iter().sum::<u32>(),
                "{name}: {p}'s samples"
            );
            for i in 0..100 {
                let got = num(&row[i]);
                assert!(
                    (got - want[p][i]).abs() <= slack[p][i] + 1e-9,
                    "{name}: processor {p} interval {i}: {got}, the trace says {}",
                    want[p][i]
                );
            }
        }
        // The picture: a line in the strip of every processor with samples and in no other,
        // and the largest value drawn at the top of its strip.
        let span = tnow - t0;
        let value = |p: usize, i: usize| -> Option<f64> {
            if how == "rate" {
                Some(want[p][i] / width.min(span - i as f64 * width))
            } else {
                (count[p][i] > 0).then(|| want[p][i] / f64::from(count[p][i]))
            }
        };
        let n = if how == "rate" {
            ((span / width).floor() as usize).clamp(1, 100)
        } else {
            ((span / width).ceil() as usize).min(100)
        };
        let (mut peak, mut at) = (0.0, (0, 0));
        for p in 0..nprocs {
            for i in 0..n {
                if let Some(v) = value(p, i) {
                    if v > peak {
                        (peak, at) = (v, (p, i));
                    }
                }
            }
        }
        let pixels = view_pixels(&mut rt, 0);
        let line = |x: u32, y: u32| {
            pixels
                .pixel(x, y)
                .is_some_and(|c| c[2] > 120 && c[0] < 110 && c[1] < 140)
        };
        let (area_w, area_h) = (600.0 - 40.0, 300.0 - 32.0);
        let row_px = area_h / nprocs as f64;
        for (p, samples) in count.iter().enumerate() {
            let (top, bottom) = (
                14.0 + area_h - (p + 1) as f64 * row_px,
                14.0 + area_h - p as f64 * row_px,
            );
            let drawn = (top.ceil() as u32 + 1..bottom.floor() as u32)
                .flat_map(|y| (31..590).map(move |x| (x, y)))
                .filter(|&(x, y)| line(x, y))
                .count();
            let has = samples.iter().any(|&c| c > 0);
            assert_eq!(drawn > 0, has, "{name}: strip {p} drawn {drawn} pixels");
        }
        let (p, i) = at;
        let x = 30.0 + ((i as f64 + 0.5) * width / span).min(1.0) * area_w;
        let y = 14.0 + area_h - (p as f64 + 0.92) * row_px;
        let near = (y as u32 - 2..=y as u32 + 2)
            .any(|y| (x as u32 - 1..=x as u32 + 1).any(|x| line(x, y)));
        assert!(
            near,
            "{name}: the peak {peak} of processor {p} at interval {i} is not at ({x:.0}, {y:.0})"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Thread states, on the example itself.

/// The example's states, by event type: 1 sending, 2 blocked, 3 collective.
fn state_of(etype: &str) -> Option<usize> {
    match etype {
        "-27" | "-22" | "-21" => Some(1),
        "-52" => Some(2),
        "-785" | "-402" => Some(3),
        _ => None,
    }
}

/// Per processor, the closed intervals `(from, to, state)` of the trace, by hand: a processor
/// is in the innermost state it entered and has not left, else computing (0), from its first
/// state record on.
fn intervals(text: &str) -> BTreeMap<usize, Vec<(f64, f64, usize)>> {
    let mut now: BTreeMap<usize, (f64, Vec<usize>)> = BTreeMap::new();
    let mut out: BTreeMap<usize, Vec<(f64, f64, usize)>> = BTreeMap::new();
    for f in fields(text) {
        let Some(s) = state_of(f[1]) else { continue };
        if f[0] != "-3" && f[0] != "-4" {
            continue;
        }
        let (t, p): (f64, usize) = (f[2].parse().unwrap(), f[3].parse().unwrap());
        let (since, stack) = now.entry(p).or_insert((t, Vec::new()));
        let before = stack.last().copied().unwrap_or(0);
        if f[0] == "-3" {
            stack.push(s);
        } else if let Some(k) = stack.iter().rposition(|&x| x == s) {
            stack.remove(k);
        }
        let after = stack.last().copied().unwrap_or(0);
        if before != after {
            if t > *since {
                out.entry(p).or_default().push((*since, t, before));
            }
            *since = t;
        }
    }
    out
}

/// The intervals still open at the end of the trace: (since, state), by processor.
fn open(text: &str) -> Vec<(f64, usize)> {
    let mut now: BTreeMap<usize, (f64, Vec<usize>)> = BTreeMap::new();
    for f in fields(text) {
        let Some(s) = state_of(f[1]) else { continue };
        if f[0] != "-3" && f[0] != "-4" {
            continue;
        }
        let (t, p): (f64, usize) = (f[2].parse().unwrap(), f[3].parse().unwrap());
        let (since, stack) = now.entry(p).or_insert((t, Vec::new()));
        let before = stack.last().copied().unwrap_or(0);
        if f[0] == "-3" {
            stack.push(s);
        } else if let Some(k) = stack.iter().rposition(|&x| x == s) {
            stack.remove(k);
        }
        if before != stack.last().copied().unwrap_or(0) {
            *since = t;
        }
    }
    now.values()
        .map(|(since, stack)| (*since, stack.last().copied().unwrap_or(0)))
        .collect()
}

fn run_example(trace: &Path) -> voml_runtime::Runtime {
    let vo = support::compile_spec(&root().join("examples/library/rp3.voml"));
    let mut rt = start_runtime(vo, true, 10_000);
    replay_file(&mut rt, trace);
    assert!(
        rt.faults().is_empty(),
        "{}: {:?}",
        trace.display(),
        rt.faults()
    );
    rt
}

const COLOURS: [[u8; 3]; 4] = [
    [0x2c, 0xa0, 0x2c],
    [0xff, 0x7f, 0x0e],
    [0xd6, 0x27, 0x28],
    [0x1f, 0x77, 0xb4],
];

#[test]
fn thread_states_time_in_each_state_the_timing_diagram_and_the_stacked_graph() {
    for trace in traces() {
        let text = std::fs::read_to_string(&trace).unwrap();
        let name = trace.display();
        let expected = intervals(&text);
        let mut rt = run_example(&trace);
        // The time in each state, per processor.
        let totals = json(&rt, "totals");
        let nprocs = expected.keys().max().unwrap() + 1;
        assert_eq!(rt.variable("nprocs"), Some(nprocs.to_string()), "{name}");
        for (&p, spans) in &expected {
            let mut want = [0.0f64; 4];
            for &(a, b, s) in spans {
                want[s] += b - a;
            }
            for (s, &w) in want.iter().enumerate() {
                let got = totals[p].get(s).map_or(0.0, num);
                assert!(
                    (got - w).abs() <= 1e-9 * w.max(1.0),
                    "{name}: processor {p} in state {s} for {got} s, the trace says {w} s"
                );
            }
        }
        // The timing diagram: at several times of the latest sweep, each row has the colour of
        // the state its processor was in, where that state lasts a few pixels either side.
        let sweep = num(&json(&rt, "sweep"));
        let (t0, tnow) = (num(&json(&rt, "t0")), num(&json(&rt, "tnow")));
        assert!(sweep > 0.0 && sweep <= tnow - t0, "{name}: sweep {sweep}");
        let pixels = view_pixels(&mut rt, 1);
        let (area_w, area_h) = (640.0 - 40.0, 300.0 - 34.0);
        let row_px = area_h / nprocs as f64;
        let mut checked = 0;
        for k in 1..10 {
            let t = tnow - sweep * (k as f64 / 10.0 - 0.03);
            let x = 30.0 + ((t - t0) / sweep).rem_euclid(1.0) * area_w;
            let margin = 3.0 / area_w * sweep;
            for (&p, spans) in &expected {
                let Some(&(_, _, s)) = spans
                    .iter()
                    .find(|&&(a, b, _)| a + margin < t && t < b - margin && b - a >= sweep / 512.0)
                else {
                    continue;
                };
                let y = 16.0 + area_h - (p as f64 + 0.5) * row_px;
                let px = pixels.pixel(x as u32, y as u32).unwrap();
                assert_eq!(
                    px[..3],
                    COLOURS[s],
                    "{name}: processor {p} at t={t} (x {x:.0}) should be in state {s}"
                );
                checked += 1;
            }
        }
        assert!(
            checked >= nprocs * 3,
            "{name}: only {checked} points checked"
        );
        // The stacked graph: in the middle of an interval, each state's band is as tall as the
        // mean number of processors in that state over the interval.
        let width = num(&json(&rt, "width"));
        let span = tnow - t0;
        let graph = view_pixels(&mut rt, 2);
        let (gw, gh) = (640.0 - 40.0, 160.0 - 34.0);
        let n = ((span / width).ceil() as usize).min(100);
        for i in [n / 5, n / 2, 4 * n / 5] {
            let (from, to) = (
                t0 + i as f64 * width,
                (t0 + (i + 1) as f64 * width).min(tnow),
            );
            let mut mean = [0.0f64; 4];
            for spans in expected.values() {
                for &(a, b, s) in spans {
                    mean[s] += (b.min(to) - a.max(from)).max(0.0) / (to - from);
                }
            }
            // The intervals still open count to the latest time.
            for (a, s) in open(&text) {
                mean[s] += (tnow.min(to) - a.max(from)).max(0.0) / (to - from);
            }
            let x = (30.0 + ((i as f64 + 0.5) * width / span) * gw) as u32;
            for (s, &m) in mean.iter().enumerate() {
                let shown = (16..16 + gh as u32)
                    .filter(|&y| graph.pixel(x, y).is_some_and(|c| c[..3] == COLOURS[s]))
                    .count() as f64;
                let want = m / nprocs as f64 * gh;
                assert!(
                    (shown - want).abs() <= 2.5,
                    "{name}: interval {i}: state {s} {shown} pixels high, the trace says {want:.1} ({m:.2} processors)"
                );
            }
        }
    }
}
