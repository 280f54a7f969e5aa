//! Runtime throughput and memory: `cargo bench --bench runtime`.
//!
//! Reports events/s for (a) EP components only and (b) EP + IR + raster, on the paper's
//! bandwidth VO (a synthetic stream of joins and profiles) and on VOs over the real
//! `mpicl-trace3-bcast10.trf` (120,426 records; skipped when `../shared` is absent), each next
//! to a hand-written Rust loop doing the same updates; the time of a full replay of trace3 to
//! a PNG; and the resident memory over a 10 M-event stream. `VOML_BENCH_QUICK=1` shortens it.

use std::path::Path;
use std::time::Instant;

use voml_runtime::{Config, Runtime};
use voml_trace::{ReadOptions, Record, TraceReader, Value};

fn compile(path: &str) -> voml_ir::CompiledVo {
    let out = voml_compiler::compile(Path::new(path), &voml_compiler::RealFs, &Default::default());
    out.vo
        .unwrap_or_else(|| panic!("{path} does not compile: {:?}", out.diagnostics))
}

fn compile_str(name: &str, text: &str) -> voml_ir::CompiledVo {
    let out = voml_compiler::compile_str(name, text, &voml_compiler::RealFs, &Default::default());
    out.vo
        .unwrap_or_else(|| panic!("{name} does not compile: {:?}", out.diagnostics))
}

fn runtime(vo: voml_ir::CompiledVo) -> Runtime {
    Runtime::headless(vo, Config::default()).expect("loads")
}

/// Feeds records to a runtime; returns events per second.
fn feed(rt: &mut Runtime, records: &[Record]) -> f64 {
    rt.start(0.0).unwrap();
    let t = Instant::now();
    for r in records {
        rt.process(r, "bench").unwrap();
    }
    let rate = records.len() as f64 / t.elapsed().as_secs_f64();
    assert!(rt.faults().is_empty(), "faults: {:?}", rt.faults());
    rate
}

fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / (1024.0 * 1024.0)
}

fn m(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.2} M/s", rate / 1e6)
    } else {
        format!("{:.0} k/s", rate / 1e3)
    }
}

fn row(case: &str, voml: f64, rust: Option<f64>) {
    match rust {
        Some(r) => println!("{case:<58} {:>12} {:>12} {:>7.0}x", m(voml), m(r), r / voml),
        None => println!("{case:<58} {:>12} {:>12} {:>8}", m(voml), "-", "-"),
    }
}

/// Per-processor counters: the simplest useful EP component.
const COUNTER: &str = r#"<voml><body><visual-object name="counter">
  <event-declarations>
    <data-event name="enter" rtype="entry" etype="-785"><data-field name="ts" type="real"/><data-field name="proc" type="int"/></data-event>
    <data-event name="leave" rtype="exit" etype="-785"><data-field name="ts" type="real"/><data-field name="proc" type="int"/></data-event>
  </event-declarations>
  <info-structures><variable name="counts" type="vector" init="(0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0)"/></info-structures>
  <event-processing>
    <ep-component name="count" inputs="enter.ts.proc leave.ts.proc" infos="counts">
      <input name="^0">(vector-set! $0 ^0/1 (+ 1 (vector-ref $0 ^0/1)))</input>
      <input name="^1">(vector-set! $0 ^1/1 (+ 1 (vector-ref $0 ^1/1)))</input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;

/// One short line per event, scrolling through a fixed world: a long-running drawing VO.
const STRIPES: &str = r#"<voml><body><visual-object name="stripes">
  <event-declarations>
    <data-event name="sample" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="value" type="real"/></data-event>
  </event-declarations>
  <info-structures><variable name="n" type="int"/><variable name="value" type="real"/></info-structures>
  <view-initializations><view name="v" window="1000 700" world="0 1000 0 1"/></view-initializations>
  <event-processing>
    <ep-component name="take" inputs="sample.ts.value" infos="n value">
      <input name="^0">(set! $0 (+ $0 1)) (set! $1 ^0/1)</input>
    </ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="draw" views="v" infos="n value">
      (let ((x (modulo $0 1000)))
        <line view="^0" from="x 0" to="x $1" color="(if (even? $0) &quot;red&quot; &quot;blue&quot;)"/>)
    </ir-component>
  </info-rendition>
</visual-object></body></voml>"#;

fn main() {
    let quick = std::env::var_os("VOML_BENCH_QUICK").is_some();
    std::env::set_var("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"));
    println!(
        "{:<58} {:>12} {:>12} {:>8}",
        "case", "VOML", "plain Rust", "ratio"
    );

    // --- bandwidth VO: 16 nodes join, then profiles round-robin.
    let n = if quick { 50_000 } else { 400_000 };
    let mut records = Vec::with_capacity(n + 16);
    for node in 1..=16i64 {
        records.push(Record {
            line: node as u64,
            rtype: -3,
            etype: -901,
            fields: vec![
                Value::Real(node as f64 * 0.001),
                Value::Int(node),
                Value::Int(0),
                Value::Int(0),
            ],
        });
    }
    for i in 0..n {
        let node = (i % 16) as i64 + 1;
        let ts = 1.0 + i as f64 * 1e-4;
        let f = |v: f64| Value::Real(v);
        records.push(Record {
            line: (i + 17) as u64,
            rtype: -3,
            etype: 3141,
            fields: vec![
                f(ts),
                Value::Int(node),
                Value::Int(0),
                Value::Int(1),
                f(1000.0),
                f(1000.0),
                f(300.0 + (i % 700) as f64),
                f(25.0),
                Value::Int(140),
                Value::Int(100),
            ],
        });
    }
    let bw = compile("examples/paper/bandwidth.voml");
    let mut ep_only = bw.clone();
    ep_only.ir_components.clear();
    let rate_ep = feed(&mut runtime(ep_only), &records);
    let rate_full = feed(&mut runtime(bw), &records);
    // The same updates by hand: an association list of (node, (previous, current)).
    let t = Instant::now();
    type Profiles = ([f64; 9], [f64; 9]);
    let mut nodes: Vec<(i64, Profiles)> = Vec::new();
    let mut nodeno = -1i64;
    for r in &records {
        let num = |p: usize| r.get(p).and_then(|v| v.as_f64()).unwrap_or(0.0);
        let id = num(3) as i64;
        match r.etype {
            -901 => nodes.push((id, ([num(2); 9], [num(2); 9]))),
            _ => {
                let new = [
                    num(2),
                    num(3),
                    num(5),
                    num(6),
                    num(7),
                    num(8),
                    num(9),
                    num(10),
                    num(11),
                ];
                if let Some(e) = nodes.iter_mut().find(|e| e.0 == id) {
                    e.1 = (e.1 .1, new);
                }
                nodeno = id;
            }
        }
    }
    std::hint::black_box((&nodes, nodeno));
    let rust = records.len() as f64 / t.elapsed().as_secs_f64();
    row("bandwidth VO (Fig. 8-13), EP only", rate_ep, Some(rust));
    row(
        "bandwidth VO, EP + IR + raster (700x700)",
        rate_full,
        Some(rust),
    );

    // --- trace3.
    let trace3 = "../shared/traces/picl/mpicl-trace3-bcast10.trf";
    if Path::new(trace3).exists() {
        let records: Vec<Record> = TraceReader::open(trace3, ReadOptions::default())
            .unwrap()
            .filter_map(Result::ok)
            .collect();
        let rate_count = feed(&mut runtime(compile_str("counter.voml", COUNTER)), &records);
        let t = Instant::now();
        let mut counts = [0u64; 16];
        for r in &records {
            if r.etype == -785 && (r.rtype == -3 || r.rtype == -4) {
                if let Some(p) = r.processor() {
                    counts[p as usize & 15] += 1;
                }
            }
        }
        std::hint::black_box(counts);
        let rust = records.len() as f64 / t.elapsed().as_secs_f64();
        row(
            "trace3: per-processor counter, EP only",
            rate_count,
            Some(rust),
        );

        let bcast = compile("examples/mpicl/bcast-time.voml");
        let mut bcast_ep = bcast.clone();
        bcast_ep.ir_components.clear();
        let rate_ep = feed(&mut runtime(bcast_ep), &records);
        let rate_full = feed(&mut runtime(bcast.clone()), &records);
        let t = Instant::now();
        let (mut entered, mut inside) = ([0.0f64; 16], [0.0f64; 16]);
        for r in &records {
            if r.etype != -785 {
                continue;
            }
            let (ts, p) = (
                r.timestamp().unwrap_or(0.0),
                r.processor().unwrap_or(0) as usize & 15,
            );
            if r.rtype == -3 {
                entered[p] = ts;
            } else if r.rtype == -4 {
                inside[p] += ts - entered[p];
            }
        }
        std::hint::black_box(inside);
        let rust = records.len() as f64 / t.elapsed().as_secs_f64();
        row("trace3: bcast-time VO, EP only", rate_ep, Some(rust));
        row(
            "trace3: bcast-time VO, EP + IR + raster (640x400)",
            rate_full,
            Some(rust),
        );

        // Full replay from the file to a PNG, as `voml run` does.
        let t = Instant::now();
        let mut rt = runtime(bcast);
        let mut source =
            voml_driver::Source::file(std::path::Path::new(trace3), ReadOptions::default())
                .unwrap();
        let summary = voml_driver::run(
            &mut rt,
            &mut source,
            &voml_driver::Options::default(),
            &mut [],
            &mut Quiet,
        );
        let png = rt.pngs().pop().unwrap().1.unwrap();
        println!(
            "{:<58} {:>12}",
            format!(
                "trace3: full replay to PNG ({} records, {} B PNG)",
                rt.stats().records,
                png.len()
            ),
            format!("{:.3} s", t.elapsed().as_secs_f64())
        );
        assert!(!summary.stopped);
    } else {
        println!("(skipping trace3 cases: {trace3} not found)");
    }

    // --- memory over a long stream.
    let total: u64 = if quick { 1_000_000 } else { 10_000_000 };
    for (name, text) in [
        ("counter VO, EP only", COUNTER),
        ("stripes VO: a line per event", STRIPES),
    ] {
        let mut rt = runtime(compile_str("mem.voml", text));
        rt.start(0.0).unwrap();
        let (rtype, etype) = if text == COUNTER { (-3, -785) } else { (-3, 1) };
        let mut record = Record {
            line: 0,
            rtype,
            etype,
            fields: vec![Value::Real(0.0), Value::Int(0)],
        };
        let t = Instant::now();
        let mut samples = Vec::new();
        for i in 0..total {
            record.line = i;
            record.fields[0] = Value::Real(i as f64 * 1e-6);
            record.fields[1] = if text == COUNTER {
                Value::Int((i % 10) as i64)
            } else {
                Value::Real((i % 997) as f64 / 997.0)
            };
            rt.process(&record, "stream").unwrap();
            if i == total / 10 || i == total / 2 || i == total - 1 {
                samples.push(format!("{:.1}", rss_mib()));
            }
        }
        println!(
            "{:<58} {:>12} RSS MiB at 10%/50%/100%: {}",
            format!("{total} events, {name}"),
            m(total as f64 / t.elapsed().as_secs_f64()),
            samples.join(" / ")
        );
    }
    dense_polyline(quick);
}

/// A polyline of a million samples across 600 columns of pixels, drawn and rasterised: the
/// samples of each column are reduced to four points (`voml-llvo/src/lower.rs`) before they
/// reach the rasteriser; beside it, the same samples drawn as a million segments.
fn dense_polyline(quick: bool) {
    use voml_llvo::{Color, Llvo, OwnerId, Point, Primitive, Style, ViewSpec};
    let n = if quick { 200_000 } else { 1_000_000 };
    let samples: Vec<Point> = (0..n)
        .map(|i| {
            let x = i as f64 / n as f64;
            Point::new(x * 60.0, 5.0 + 4.0 * (x * 900.0).sin() * (x * 7.0).cos())
        })
        .collect();
    let style = Style::stroke(Color::rgb(0, 0, 0), 1.0);
    let draw = |each: bool| {
        let mut llvo = Llvo::headless();
        let view = llvo
            .create_view(
                ViewSpec::new("v")
                    .window(600, 300)
                    .world(0.0, 60.0, 0.0, 10.0),
            )
            .expect("view");
        let t = Instant::now();
        if each {
            for pair in samples.windows(2) {
                let line = Primitive::Line {
                    from: pair[0],
                    to: pair[1],
                };
                llvo.draw(view, OwnerId::NONE, &line, &style).expect("draw");
            }
        } else {
            let points = samples.clone();
            llvo.draw(view, OwnerId::NONE, &Primitive::Polyline { points }, &style)
                .expect("draw");
        }
        llvo.pixels(view).expect("pixels");
        t.elapsed().as_secs_f64()
    };
    let (whole, each) = (draw(false), draw(true));
    println!(
        "{:<58} {:>12} {:>12} {:>7.0}x",
        format!("polyline of {n} samples in 600 columns (samples/s)"),
        m(n as f64 / whole),
        m(n as f64 / each),
        each / whole
    );
}

/// A reporter that says nothing: the benchmark measures the run.
struct Quiet;

impl voml_driver::Reporter for Quiet {
    fn fault(&mut self, _: &voml_runtime::Fault) {}
    fn bad_line(&mut self, _: &voml_trace::TraceError, _: bool) {}
    fn progress(&mut self, _: &voml_driver::Progress) {}
    fn line(&mut self, _: &str) {}
}
