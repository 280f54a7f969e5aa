//! The display library (`stdlib-components/displays.voml`) on traces of different sizes: a
//! visual object made only of library components counts a trace's commonest entry event per
//! processor; the counts must be those read from the trace text here, and the picture must
//! show one bar per processor, the tallest reaching the top of the plot, whatever the
//! number of processors and the time range.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use support::{compile_text, replay_file, root, start_runtime, view_pixels};

/// The traces: the examples' own (8 processors, 0.1 s) and the real MPICL traces beside the
/// repository (8 and 10 processors, other time ranges), when they are there.
fn traces() -> Vec<PathBuf> {
    let mut traces = vec![root().join("examples/mpicl/ring.trf")];
    for name in ["mpicl-trace1.trf", "mpicl-trace3-bcast10.trf"] {
        let path = root().join("../shared/traces/picl").join(name);
        if path.is_file() {
            traces.push(path);
        } else {
            assert!(
                std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
                "{} is missing",
                path.display()
            );
            eprintln!("note: {} not found; skipped", path.display());
        }
    }
    traces
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
        let pixels = view_pixels(&rt, 0);
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
        let lights = view_pixels(&rt, 1);
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
