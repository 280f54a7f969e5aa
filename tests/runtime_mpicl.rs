//! `examples/mpicl/count-events.voml` over a real MPICL trace: the visual object's counts of
//! records per processor equal an independent count of the trace file, and its bars are
//! as high as the counts say. The trace lives outside the repository
//! (`../shared/traces/picl/`); without it the test says so and passes.

mod support;

use std::collections::BTreeMap;

use support::{compile_spec, replay_file, root, start_runtime, view_pixels, world_to_px};

const TRACE: &str = "../shared/traces/picl/mpicl-trace1.trf";

/// Records per processor, awk-style: every non-blank, non-comment line, split on
/// whitespace, field 4 (1-based) is the processor.
fn count_by_hand(text: &str) -> BTreeMap<i64, u64> {
    let mut counts = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() || fields[0].starts_with('#') || fields[0].starts_with('%') {
            continue;
        }
        let processor: i64 = fields[3]
            .parse()
            .unwrap_or_else(|_| panic!("no processor in `{line}`"));
        *counts.entry(processor).or_insert(0) += 1;
    }
    counts
}

/// An association list of integers as Scheme prints it: `((0 . 83) (6 . 89) ...)`.
fn parse_alist(text: &str) -> BTreeMap<i64, u64> {
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or_else(|| panic!("not a list: {text}"));
    let mut out = BTreeMap::new();
    for entry in inner.split(')').map(str::trim).filter(|e| !e.is_empty()) {
        let entry = entry.trim_start_matches('(');
        let (key, value) = entry
            .split_once(" . ")
            .unwrap_or_else(|| panic!("not a pair: ({entry})"));
        let key = key.trim().parse().expect("an integer key");
        let value = value.trim().parse().expect("an integer count");
        assert!(
            out.insert(key, value).is_none(),
            "key {key} twice in {text}"
        );
    }
    out
}

#[test]
fn count_events_counts_every_record_per_processor() {
    let trace = root().join(TRACE);
    let Ok(text) = std::fs::read_to_string(&trace) else {
        eprintln!("note: {TRACE} is not there; skipping the MPICL trace test");
        return;
    };
    let expected = count_by_hand(&text);
    assert!(expected.len() > 1, "the trace has several processors");

    let vo = compile_spec(&root().join("examples/mpicl/count-events.voml"));
    let mut rt = start_runtime(vo, false, 10_000);
    let replayed = replay_file(&mut rt, &trace);
    assert!(replayed.bad_lines.is_empty(), "{:?}", replayed.bad_lines);
    assert!(
        rt.faults().is_empty(),
        "{:#?}",
        rt.faults()
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
    );
    let total: u64 = expected.values().sum();
    assert_eq!(rt.stats().records, total);

    let counts = parse_alist(&rt.variable("counts").expect("the info structure exists"));
    assert_eq!(counts, expected);
    let most = expected.values().max().copied().unwrap();
    assert_eq!(rt.variable("most"), Some(most.to_string()));

    // The bars: processor p in slot p of (top processor + 1), as high as count / most.
    let pixels = view_pixels(&mut rt, 0);
    let slots = (expected.keys().max().unwrap() + 1) as f64;
    let (_, floor) = world_to_px(&rt, 0, 0.0, 0.0);
    let (_, top) = world_to_px(&rt, 0, 0.0, 1.0);
    let full = floor - top;
    let bar = |c: [u8; 4]| c[..3] == [0x46, 0x82, 0xb4];
    let mut heights = BTreeMap::new();
    for &p in expected.keys() {
        let (x, _) = world_to_px(&rt, 0, (p as f64 + 0.5) / slots, 0.0);
        let x = x.round() as u32;
        let rows: Vec<u32> = (0..pixels.height)
            .filter(|&y| pixels.pixel(x, y).is_some_and(bar))
            .collect();
        let (Some(lo), Some(hi)) = (rows.first(), rows.last()) else {
            panic!("no bar for processor {p}");
        };
        heights.insert(p, f64::from(hi - lo + 1));
    }
    for (&a, &ca) in &expected {
        let ha = heights[&a];
        let want = full * ca as f64 / most as f64;
        assert!(
            (ha - want).abs() <= 2.0,
            "processor {a}: bar {ha} px high, {want:.1} expected ({ca} of {most})"
        );
        for (&b, &cb) in &expected {
            let hb = heights[&b];
            if ca < cb {
                assert!(
                    ha < hb,
                    "processor {a} ({ca}) has a bar as high as {b} ({cb})"
                );
            } else if ca == cb {
                assert!(
                    (ha - hb).abs() <= 1.0,
                    "equal counts, unequal bars: {a} and {b}"
                );
            }
        }
    }
}
