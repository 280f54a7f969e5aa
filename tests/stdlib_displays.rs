//! The display library (`stdlib-components/displays.voml`) on traces of different sizes: a
//! visual object made only of library components counts a trace's commonest entry event per
//! processor; the counts must be those read from the trace text here, and the picture must
//! show one bar per processor, the tallest reaching the top of the plot, whatever the
//! number of processors and the time range.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use support::{compile_text, replay_file, start_runtime, view_pixels, world_to_px};

/// The traces: the examples' own (8 processors, 0.1 s) and the real MPICL traces beside the
/// repository (8 and 10 processors, other time ranges), when they are there.
fn traces() -> Vec<PathBuf> {
    support::ring_and_shared(&["mpicl-trace1.trf", "mpicl-trace3-bcast10.trf"])
}

/// The commonest entry event type of a trace, and its count per processor, read by hand.
fn commonest_entry(text: &str) -> (i64, BTreeMap<i64, i64>) {
    let records: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() >= 4 && f[0] == "-3")
        .collect();
    let mut by_type: BTreeMap<i64, usize> = BTreeMap::new();
    for f in &records {
        *by_type.entry(f[1].parse().unwrap()).or_default() += 1;
    }
    let etype = by_type
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(t, _)| *t)
        .unwrap();
    let mut counts = BTreeMap::new();
    for f in records
        .iter()
        .filter(|f| f[1].parse::<i64>().unwrap() == etype)
    {
        *counts.entry(f[3].parse::<i64>().unwrap()).or_default() += 1;
    }
    (etype, counts)
}

/// A visual object of library components only; it renders a hundred times over the trace's
/// time range (`tick`), which the test reads from the trace as a user would.
fn spec(etype: i64, tick: f64) -> String {
    format!(
        r#"<?xml version="1.0"?>
<voml><head><import href="voml:displays.voml"/></head>
<body><visual-object name="calls" mode="synchronous" tick="{tick}">
  <event-declarations>
    <data-event name="call" rtype="entry" etype="{etype}">
      <data-field name="ts" type="real"/><data-field name="proc" type="int"/>
    </data-event>
  </event-declarations>
  <info-structures>
    <variable name="counts" type="list"/>
    <variable name="most" type="int"/>
    <variable name="nprocs" type="int"/>
  </info-structures>
  <view-initializations>
    <view name="bars" window="400 240" margins="10 10 10 24" world="0 1 0 1.1"/>
    <view name="lights" window="400 80" margins="10 10 4 20" world="0 1 0 1.1"/>
  </view-initializations>
  <event-processing>
    <ep-component name="count" use="count-per-processor" inputs="call.ts.proc"
                  infos="counts most nprocs"/>
  </event-processing>
  <info-rendition>
    <ir-component name="show" use="processor-bars" views="bars" infos="counts most nprocs"/>
    <ir-component name="glow" use="processor-lights" views="lights"
                  infos="counts most nprocs"/>
  </info-rendition>
</visual-object></body></voml>
"#
    )
}

#[test]
fn processor_bars_count_and_size_themselves_on_every_trace() {
    for trace in traces() {
        let text = std::fs::read_to_string(&trace).unwrap();
        let (etype, expected) = commonest_entry(&text);
        let times: Vec<f64> = text
            .lines()
            .filter_map(|l| l.split_whitespace().nth(2)?.parse().ok())
            .collect();
        let span = times.iter().cloned().fold(f64::MIN, f64::max)
            - times.iter().cloned().fold(f64::MAX, f64::min);
        let tick = (span / 100.0).max(1e-6);
        let mut rt = start_runtime(compile_text("calls.voml", &spec(etype, tick)), true, 1000);
        replay_file(&mut rt, &trace);
        let name = trace.display();
        assert!(rt.faults().is_empty(), "{name}: {:?}", rt.faults());
        // The counts, as the trace text says.
        // An association list, written `((0 . 4) (1 . 4) ...)`.
        let counts = rt.variable("counts").unwrap();
        let got: BTreeMap<i64, i64> = counts
            .split(['(', ')'])
            .filter(|pair| pair.contains(" . "))
            .map(|pair| {
                let (p, n) = pair.split_once(" . ").unwrap();
                (p.trim().parse().unwrap(), n.trim().parse().unwrap())
            })
            .collect();
        assert_eq!(got, expected, "{name}: counts of entry event {etype}");
        let nprocs = expected.keys().max().unwrap() + 1;
        assert_eq!(rt.variable("nprocs"), Some(nprocs.to_string()), "{name}");
        // One bar per processor with the event, and the tallest reaching the top.
        let pixels = view_pixels(&mut rt, 0);
        let blue = |x: u32, y: u32| pixels.pixel(x, y).is_some_and(|p| p[..3] == [70, 130, 180]);
        let columns: Vec<bool> = (0..pixels.width)
            .map(|x| (0..pixels.height).any(|y| blue(x, y)))
            .collect();
        let bars = columns.windows(2).filter(|w| !w[0] && w[1]).count() + usize::from(columns[0]);
        // (A processor without the event has an empty slot.)
        assert_eq!(bars, expected.len(), "{name}: bars on the picture");
        let top = (0..pixels.height)
            .find(|&y| (0..pixels.width).any(|x| blue(x, y)))
            .unwrap();
        assert!(top < 40, "{name}: the tallest bar starts at row {top}");
        // The lights: in each processor's slot, the colour of its tenth of the largest
        // count, from blue to red, sampled in the light's upper part (clear of its text).
        let lights = view_pixels(&mut rt, 1);
        let most = *expected.values().max().unwrap();
        let (width, y) = (f64::from(lights.width - 20), 12);
        for p in 0..nprocs {
            let x = 10 + ((p as f64 + 0.2) / nprocs as f64 * width) as u32;
            let px = lights.pixel(x, y).unwrap();
            match expected.get(&p) {
                None => assert_eq!(px[..3], [255, 255, 255], "{name}: processor {p}"),
                Some(&n) => {
                    let level = ((10 * n) / most).min(9) as u8;
                    let red = (u32::from(level) * 255 / 9) as u8;
                    assert!(
                        px[0].abs_diff(red) <= 2
                            && px[1] == 0
                            && px[0].saturating_add(px[2]) >= 253,
                        "{name}: processor {p} ({n} of {most}) shows {px:?}"
                    );
                }
            }
        }
    }
}

/// Per processor, the time spent blocked in receives (from the entry of event -52 to its
/// exit), read by hand; and the time from the first such record to the last.
fn blocked_time(text: &str) -> (BTreeMap<i64, f64>, f64) {
    let mut since = BTreeMap::new();
    let mut total = BTreeMap::new();
    let (mut first, mut last) = (f64::MAX, f64::MIN);
    for f in text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
    {
        if f.len() < 4 || f[1] != "-52" || !(f[0] == "-3" || f[0] == "-4") {
            continue;
        }
        let (t, p): (f64, i64) = (f[2].parse().unwrap(), f[3].parse().unwrap());
        first = first.min(t);
        last = last.max(t);
        if f[0] == "-3" {
            since.insert(p, t);
        } else if let Some(start) = since.remove(&p) {
            *total.entry(p).or_insert(0.0) += t - start;
        }
    }
    (total, last - first)
}

const GANTT: &str = r#"<?xml version="1.0"?>
<voml><head><import href="voml:displays.voml"/></head>
<body><visual-object name="gantt" mode="synchronous" tick="TICK">
  <event-declarations>
    <data-event name="blocked" rtype="entry" etype="-52">
      <data-field name="ts" type="real"/><data-field name="proc" type="int"/>
    </data-event>
    <data-event name="unblocked" rtype="exit" etype="-52">
      <data-field name="ts" type="real"/><data-field name="proc" type="int"/>
    </data-event>
  </event-declarations>
  <info-structures>
    <variable name="since" type="list"/>
    <variable name="idle" type="vector"/>
    <variable name="width" type="real" init="0"/>
    <variable name="t0" type="real" init="-1"/>
    <variable name="tnow" type="real" init="0"/>
    <variable name="nprocs" type="int" init="0"/>
  </info-structures>
  <view-initializations>
    <view name="gantt" window="500 200" margins="30 10 10 10" world="0 1 0 1"/>
    <view name="count" window="500 100" world="0 1 0 1"/>
  </view-initializations>
  <event-processing>
    <ep-component name="waits" use="idle-per-interval" inputs="blocked.ts.proc unblocked.ts.proc"
                  infos="since idle width t0 tnow nprocs"/>
  </event-processing>
  <info-rendition>
    <ir-component name="chart" use="utilisation-gantt" views="gantt"
                  infos="idle width t0 tnow nprocs"/>
    <ir-component name="count" use="utilisation-count" views="count"
                  infos="idle width t0 tnow nprocs"/>
  </info-rendition>
</visual-object></body></voml>
"#;

#[test]
fn the_gantt_chart_shows_each_processors_blocked_share_on_every_trace() {
    for trace in traces() {
        let text = std::fs::read_to_string(&trace).unwrap();
        let (expected, span) = blocked_time(&text);
        let name = trace.display();
        let spec = GANTT.replace("TICK", &(span / 20.0).max(1e-6).to_string());
        let mut rt = start_runtime(compile_text("gantt.voml", &spec), true, 1000);
        replay_file(&mut rt, &trace);
        assert!(rt.faults().is_empty(), "{name}: {:?}", rt.faults());
        // The blocked time of every processor, summed over the intervals, is the trace's.
        let idle = voml_runtime::state::to_json(&rt.variable_value("idle").unwrap());
        let rows = idle.as_array().unwrap();
        let nprocs = expected.keys().max().unwrap() + 1;
        assert_eq!(rt.variable("nprocs"), Some(nprocs.to_string()), "{name}");
        for (&p, &want) in &expected {
            let got: f64 = rows[p as usize]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .sum();
            assert!(
                (got - want).abs() <= 1e-9 * want.max(1.0),
                "{name}: processor {p} blocked {got} s, the trace says {want} s"
            );
        }
        // Each row's colours, from green (level 0) to red (9), say the blocked share of
        // the time shown: each stretch's level is its share in tenths, rounded down.
        let pixels = view_pixels(&mut rt, 0);
        for p in 0..nprocs {
            let (_, y) = world_to_px(&rt, 0, 0.5, (p as f64 + 0.5) / nprocs as f64);
            let (x0, _) = world_to_px(&rt, 0, 0.0, 0.0);
            let (x1, _) = world_to_px(&rt, 0, 1.0, 0.0);
            let levels: Vec<f64> = (x0.ceil() as u32..x1.floor() as u32)
                .map(|x| {
                    let px = pixels.pixel(x, y as u32).unwrap();
                    assert!(px[1] <= 176 && px[2] == 0, "{name}: row {p} pixel {px:?}");
                    (f64::from(px[0]) * 9.0 / 255.0).round()
                })
                .collect();
            let shown = levels.iter().map(|l| (l + 0.5) / 10.0).sum::<f64>() / levels.len() as f64;
            let share = expected.get(&p).copied().unwrap_or(0.0) / span;
            assert!(
                (shown - share).abs() <= 0.07,
                "{name}: row {p} shows a blocked share of {shown:.3}, the trace {share:.3}"
            );
        }
        // The utilisation count: the red share of its picture is the blocked share of all
        // the processors' time.
        let count = view_pixels(&mut rt, 1);
        let (mut red, mut green) = (0usize, 0usize);
        for y in 0..count.height {
            for x in 0..count.width {
                match count.pixel(x, y).map(|p| [p[0], p[1], p[2]]) {
                    Some([255, 0, 0]) => red += 1,
                    Some([0, 176, 0]) => green += 1,
                    _ => {}
                }
            }
        }
        let shown = red as f64 / (red + green) as f64;
        let share = expected.values().sum::<f64>() / (nprocs as f64 * span);
        assert!(
            red + green > (count.width * count.height) as usize * 9 / 10
                && (shown - share).abs() <= 0.03,
            "{name}: the count shows a blocked share of {shown:.3}, the trace {share:.3}"
        );
    }
}
