//! The plot library (`stdlib-components/plots.voml`): the paper's line plot made of library
//! components draws what the paper's own example draws, and the lengths of waits in
//! receives, kept and counted by the library, are those read from each trace's text, on
//! traces of different sizes; the pictures show them.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use support::{compile_spec, compile_text, replay_file, root, start_runtime, view_pixels};
use voml_runtime::state::to_json;

/// The paper's line plot (examples/paper/lineplot.voml) glued from the library.
const LINEPLOT: &str = r#"<?xml version="1.0"?>
<voml><head><import href="voml:plots.voml"/></head>
<body><visual-object name="lineplot">
  <event-declarations>
    <data-event name="onescalar" rtype="entry" etype="3000">
      <data-field name="ts" type="real"/><data-field name="key" type="int"/>
      <data-field name="value" type="real"/>
    </data-event>
  </event-declarations>
  <info-structures>
    <variable name="currenttime" type="real"/>
    <variable name="assoclist" type="list"/>
    <variable name="palette" type="list" init='("red" "blue" "green" "orange" "purple")'/>
  </info-structures>
  <control-structures><variable name="beepcount" type="int" init="0"/></control-structures>
  <view-initializations>
    <view name="lineplotview" title="Multi-scalar line-plot" window="600 400"
          world="0 10 0 100" margins="40 10 10 30" adapt="x+:scroll y+:rescale"/>
  </view-initializations>
  <event-processing>
    <ep-component name="keep" use="scalar-history" inputs="onescalar.ts.key.value"
                  infos="currenttime assoclist"/>
  </event-processing>
  <info-rendition>
    <ir-component name="plot" use="multi-scalar-lineplot" views="lineplotview"
                  infos="currenttime assoclist palette" controls="beepcount"/>
  </info-rendition>
</visual-object></body></voml>
"#;

#[test]
fn the_library_line_plot_draws_what_the_papers_example_draws() {
    let trace = root().join("examples/paper/lineplot.trf");
    let mut paper = start_runtime(
        compile_spec(&root().join("examples/paper/lineplot.voml")),
        true,
        10_000,
    );
    replay_file(&mut paper, &trace);
    let mut library = start_runtime(compile_text("lineplot.voml", LINEPLOT), true, 10_000);
    replay_file(&mut library, &trace);
    assert!(library.faults().is_empty(), "{:?}", library.faults());
    assert_eq!(
        library.variable("assoclist"),
        paper.variable("assoclist"),
        "the samples kept"
    );
    let beeps = library.beeps();
    assert!(beeps.len() >= 5, "{} beeps", beeps.len());
    assert_eq!(beeps, paper.beeps());
    assert!(
        view_pixels(&mut library, 0) == view_pixels(&mut paper, 0),
        "the pictures differ"
    );
}

/// The traces, with the event whose intervals are measured: waits in receives (-52) in the
/// examples' own and the first real MPICL trace beside the repository, broadcasts (-785)
/// in the third.
fn traces() -> Vec<(PathBuf, &'static str)> {
    let mut traces = vec![(root().join("examples/mpicl/ring.trf"), "-52")];
    for (name, etype) in [
        ("mpicl-trace1.trf", "-52"),
        ("mpicl-trace3-bcast10.trf", "-785"),
    ] {
        traces.extend(support::shared_trace(name).map(|path| (path, etype)));
    }
    traces
}

/// The intervals of event `etype` (from its entry to its exit) of a trace text, in the
/// order they end: (end time, processor, length).
fn waits(text: &str, etype: &str) -> Vec<(f64, i64, f64)> {
    let mut since = BTreeMap::new();
    let mut out = Vec::new();
    for f in text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
    {
        if f.len() < 4 || f[1] != etype {
            continue;
        }
        let (t, p): (f64, i64) = (f[2].parse().unwrap(), f[3].parse().unwrap());
        match f[0] {
            "-3" => {
                since.insert(p, t);
            }
            "-4" => {
                if let Some(start) = since.remove(&p) {
                    out.push((t, p, t - start));
                }
            }
            _ => {}
        }
    }
    out
}

const WAITS: &str = r#"<?xml version="1.0"?>
<voml><head><import href="voml:plots.voml"/></head>
<body><visual-object name="waits" MODE>
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
    <variable name="now" type="real"/>
    <variable name="samples" type="list"/>
    <variable name="palette" type="list"
              init='("red" "blue" "green" "orange" "purple" "brown" "magenta" "cyan")'/>
    <variable name="open" type="list"/>
    <variable name="bins" type="vector"/>
    <variable name="width" type="real"/>
    <variable name="count" type="int"/>
    <variable name="most" type="int"/>
  </info-structures>
  <control-structures><variable name="lines" type="int" init="0"/></control-structures>
  <view-initializations>
    <view name="plot" window="600 300" world="0 WORLD_X 0 WORLD_Y" margins="10 10 10 10"
          adapt="x+:scroll y+:rescale"/>
    <view name="histogram" window="400 200" world="0 1 0 1.1" margins="10 10 10 20"/>
  </view-initializations>
  <event-processing>
    <ep-component name="lengths" use="duration-history" inputs="blocked.ts.proc unblocked.ts.proc"
                  infos="since now samples"/>
    <ep-component name="counts" use="duration-histogram" inputs="blocked.ts.proc unblocked.ts.proc"
                  infos="open bins width count most"/>
  </event-processing>
  <info-rendition>
    <ir-component name="plot" use="multi-scalar-lineplot" views="plot"
                  infos="now samples palette" controls="lines" enable="PLOTTED"/>
    <ir-component name="bars" use="histogram-bars" views="histogram"
                  infos="bins width count most"/>
  </info-rendition>
</visual-object></body></voml>
"#;

/// The colours of the palette above, as the raster paints them.
const PALETTE: [[u8; 3]; 8] = [
    [255, 0, 0],
    [0, 0, 255],
    [0, 128, 0],
    [255, 165, 0],
    [128, 0, 128],
    [165, 42, 42],
    [255, 0, 255],
    [0, 255, 255],
];

#[test]
fn interval_lengths_are_plotted_and_counted_on_every_trace() {
    for (trace, etype) in traces() {
        let name = trace.display().to_string();
        let text = std::fs::read_to_string(&trace).unwrap();
        let waits = waits(&text, etype);
        assert!(waits.len() >= 10, "{name}: {} waits", waits.len());
        let longest = waits.iter().map(|w| w.2).fold(0.0, f64::max);
        let end = waits.last().unwrap().0;
        // The plot shows the whole run, and the longest wait fits. (Sixty thousand
        // broadcasts would make a plot too dense to check line by line, and slow in a
        // debug build: there the plot is not drawn, the samples are checked alone, and
        // the histogram is drawn a hundred times over the run, not after every record.)
        let plotted = waits.len() < 1000;
        let spec = WAITS
            .replace("PLOTTED", if plotted { "#t" } else { "#f" })
            .replace(
                "MODE",
                &if plotted {
                    String::new()
                } else {
                    format!(r#"mode="synchronous" tick="{}""#, end / 100.0)
                },
            )
            .replace("-52", etype)
            .replace("WORLD_X", &format!("{}", end * 1.05))
            .replace("WORLD_Y", &format!("{}", longest * 1.2));
        let mut rt = start_runtime(compile_text("waits.voml", &spec), true, 10_000);
        replay_file(&mut rt, &trace);
        assert!(rt.faults().is_empty(), "{name}: {:?}", rt.faults());

        // The last two waits of every processor, as the line plot keeps them.
        let mut last: BTreeMap<i64, Vec<(f64, f64)>> = BTreeMap::new();
        for &(t, p, length) in &waits {
            last.entry(p).or_default().push((t, length));
        }
        let samples = to_json(&rt.variable_value("samples").unwrap());
        let kept: BTreeMap<i64, Vec<f64>> = samples
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let v = e[1].as_array().unwrap();
                (
                    e[0].as_i64().unwrap(),
                    v.iter().map(|x| x.as_f64().unwrap()).collect(),
                )
            })
            .collect();
        assert_eq!(
            kept.keys().collect::<Vec<_>>(),
            last.keys().collect::<Vec<_>>(),
            "{name}"
        );
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        for (p, seq) in &last {
            let (new, old) = (seq[seq.len() - 1], seq[seq.len().saturating_sub(2)]);
            let got = &kept[p];
            assert!(
                close(got[0], old.0)
                    && close(got[1], old.1)
                    && close(got[2], new.0)
                    && close(got[3], new.1),
                "{name}: processor {p} keeps {got:?}, the trace's last waits {old:?} {new:?}"
            );
        }
        // Every line is on the plot, from a processor's wait to its next; most in their
        // colour, some covered by other processors' lines on the same path (lines of a few
        // pixels are left out).
        let plot = view_pixels(&mut rt, 0);
        let (mut checked, mut covered) = (0, Vec::new());
        for (p, seq) in last.iter().filter(|_| plotted) {
            let colour = PALETTE[*p as usize % PALETTE.len()];
            for pair in seq.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                let at = |k: f64| {
                    let (x, y) =
                        support::world_to_px(&rt, 0, a.0 + k * (b.0 - a.0), a.1 + k * (b.1 - a.1));
                    (x.round() as u32, y.round() as u32)
                };
                let ((x0, y0), (x1, y1)) = (at(0.0), at(1.0));
                if x0.abs_diff(x1) + y0.abs_diff(y1) < 10 {
                    continue;
                }
                checked += 1;
                // (Thin lines are antialiased: the colour at full strength on one of the
                // pixels around.)
                let around = |(x, y): (u32, u32), like: &dyn Fn([u8; 4]) -> bool| {
                    (x.saturating_sub(1)..=x + 1).any(|x| {
                        (y.saturating_sub(1)..=y + 1).any(|y| plot.pixel(x, y).is_some_and(like))
                    })
                };
                let points: Vec<(u32, u32)> = (1..20).map(|k| at(f64::from(k) / 20.0)).collect();
                let own = points
                    .iter()
                    .filter(|&&pt| {
                        around(pt, &|px| {
                            px[..3].iter().zip(colour).all(|(a, b)| a.abs_diff(b) <= 24)
                        })
                    })
                    .count();
                let inked = points
                    .iter()
                    .filter(|&&pt| around(pt, &|px| px[..3] != [255, 255, 255]))
                    .count();
                assert!(
                    inked >= 17,
                    "{name}: processor {p}'s line from {:?} to {:?} is missing",
                    (x0, y0),
                    (x1, y1)
                );
                if own < 5 {
                    covered.push((p, (x0, y0), (x1, y1)));
                }
            }
        }
        assert!(
            !plotted || (checked >= 10 && covered.len() * 5 <= checked),
            "{name}: of {checked} lines, these are not drawn: {covered:?}"
        );

        // The histogram: bins a tenth of the first positive wait wide, doubled until the
        // longest fits in twenty; each wait in the bin of its length.
        let first = waits.iter().map(|w| w.2).find(|&l| l > 0.0).unwrap();
        let mut width = first / 10.0;
        while longest >= 20.0 * width {
            width *= 2.0;
        }
        let mut bins = [0i64; 20];
        for w in &waits {
            bins[((w.2 / width).floor() as usize).min(19)] += 1;
        }
        let got_width: f64 = rt.variable("width").unwrap().parse().unwrap();
        assert!(
            close(got_width, width),
            "{name}: width {got_width}, {width}"
        );
        let got_bins: Vec<i64> = to_json(&rt.variable_value("bins").unwrap())
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(got_bins, bins, "{name}: the bins");
        assert_eq!(rt.variable("count"), Some(waits.len().to_string()));
        let most = *bins.iter().max().unwrap();
        assert_eq!(rt.variable("most"), Some(most.to_string()));
        // Each bar's height is its count over the fullest's.
        let histogram = view_pixels(&mut rt, 1);
        let bar = [0x6a, 0x5a, 0xcd];
        for (i, &n) in bins.iter().enumerate() {
            let (x, _) = support::world_to_px(&rt, 1, (i as f64 + 0.5) / 20.0, 0.0);
            let column: Vec<u32> = (0..histogram.height)
                .filter(|&y| {
                    histogram
                        .pixel(x as u32, y)
                        .is_some_and(|px| px[..3] == bar)
                })
                .collect();
            let (_, bottom) = support::world_to_px(&rt, 1, 0.0, 0.0);
            let (_, top) = support::world_to_px(&rt, 1, 0.0, 1.0);
            let want = (bottom - top) * n as f64 / most as f64;
            assert!(
                (column.len() as f64 - want).abs() <= 2.0,
                "{name}: bin {i} ({n} of {most}) is {} pixels high, not {want:.1}",
                column.len()
            );
        }
    }
}
