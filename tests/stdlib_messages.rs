//! The message library (`stdlib-components/messages.voml`) on traces of different sizes: a
//! visual object made only of library components keeps the messages of a trace, their
//! volumes and the queues of messages waiting; what it keeps must be what the trace text
//! says, read here by hand, and its pictures must show it (message lines between the right
//! rows, cells and bars of the colours and heights the numbers imply), at the end of the
//! trace and at its busiest moment, whatever the number of processors and the time range.

mod support;

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;

use support::{compile_text, replay_bytes, start_runtime, view_pixels, world_to_px};
use voml_runtime::state::to_json;

/// The traces: the examples' own (8 processors, 0.1 s, a ring) and the real MPICL traces
/// beside the repository (8 processors, every processor sending to every other), when they
/// are there.
fn traces() -> Vec<PathBuf> {
    support::ring_and_shared(&["mpicl-trace1.trf", "mpicl-trace2.trf"])
}

/// A send (the entry of MPICL's -27, -22 or -21) or the end of a receive (the exit of -51
/// or -52), as the trace text says.
#[derive(Clone, Copy, Debug)]
enum Rec {
    Send {
        t: f64,
        from: i64,
        to: i64,
        tag: i64,
        bytes: i64,
    },
    Recv {
        t: f64,
        at: i64,
        from: i64,
        tag: i64,
    },
}

/// The sends and receives of a trace text, in trace order; and the time of its last record.
fn parse(text: &str) -> (Vec<Rec>, f64) {
    let mut recs = Vec::new();
    let mut last = 0.0;
    for f in text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
    {
        if f.len() < 4 {
            continue;
        }
        last = f[2].parse().unwrap();
        let int = |i: usize| f[i].parse::<i64>().unwrap();
        match (f[0], f[1]) {
            ("-3", "-27" | "-22" | "-21") => recs.push(Rec::Send {
                t: last,
                from: int(3),
                to: int(9),
                tag: int(8),
                bytes: int(7),
            }),
            ("-4", "-51" | "-52") => recs.push(Rec::Recv {
                t: last,
                at: int(3),
                from: int(9),
                tag: int(8),
            }),
            _ => {}
        }
    }
    (recs, last)
}

/// A message: (send time, sender, receive time, receiver).
type Message = (f64, i64, f64, i64);

/// The messages, each receive matched with the oldest unmatched send from its source to its
/// receiver with its tag; and how many sends are left unmatched.
fn messages(recs: &[Rec]) -> (Vec<Message>, usize) {
    let mut pending: BTreeMap<(i64, i64, i64), VecDeque<f64>> = BTreeMap::new();
    let mut out = Vec::new();
    for r in recs {
        match *r {
            Rec::Send {
                t, from, to, tag, ..
            } => pending.entry((from, to, tag)).or_default().push_back(t),
            Rec::Recv { t, at, from, tag } => {
                if let Some(sent) = pending
                    .get_mut(&(from, at, tag))
                    .and_then(|q| q.pop_front())
                {
                    out.push((sent, from, t, at));
                }
            }
        }
    }
    (out, pending.values().map(VecDeque::len).sum())
}

/// The processors seen: the highest processor a send or receive names, plus one.
fn processors(recs: &[Rec]) -> i64 {
    recs.iter()
        .map(|r| match *r {
            Rec::Send { from, to, .. } => from.max(to),
            Rec::Recv { at, from, .. } => at.max(from),
        })
        .max()
        .unwrap()
        + 1
}

const SPEC: &str = r#"<?xml version="1.0"?>
<voml><head><import href="voml:messages.voml"/></head>
<body><visual-object name="messages" mode="synchronous" tick="TICK">
  <event-declarations>
    <data-event name="send" rtype="entry" etype="-27">
      <data-field name="ts" type="real"/><data-field name="proc" type="int"/>
      <data-field name="bytes" index="7" type="int"/><data-field name="tag" type="int"/>
      <data-field name="dest" type="int"/>
    </data-event>
    <data-event name="bsend" rtype="entry" etype="-22">
      <data-field name="ts" type="real"/><data-field name="proc" type="int"/>
      <data-field name="bytes" index="7" type="int"/><data-field name="tag" type="int"/>
      <data-field name="dest" type="int"/>
    </data-event>
    <data-event name="psend" rtype="entry" etype="-21">
      <data-field name="ts" type="real"/><data-field name="proc" type="int"/>
      <data-field name="bytes" index="7" type="int"/><data-field name="tag" type="int"/>
      <data-field name="dest" type="int"/>
    </data-event>
    <data-event name="recv" rtype="exit" etype="-51">
      <data-field name="ts" type="real"/><data-field name="proc" type="int"/>
      <data-field name="tag" index="8" type="int"/><data-field name="source" type="int"/>
    </data-event>
    <data-event name="brecv" rtype="exit" etype="-52">
      <data-field name="ts" type="real"/><data-field name="proc" type="int"/>
      <data-field name="tag" index="8" type="int"/><data-field name="source" type="int"/>
    </data-event>
  </event-declarations>
  <info-structures>
    <variable name="pending" type="any"/>
    <variable name="lines" type="any"/>
    <variable name="width" type="real" init="0"/>
    <variable name="t0" type="real" init="-1"/>
    <variable name="tnow" type="real" init="0"/>
    <variable name="nprocs" type="int" init="0"/>
    <variable name="matched" type="int" init="0"/>
    <variable name="volume" type="vector"/>
    <variable name="most-bytes" type="int"/>
    <variable name="senders" type="int"/>
    <variable name="queued" type="list"/>
    <variable name="longest" type="list"/>
    <variable name="most-queued" type="int"/>
    <variable name="receivers" type="int"/>
  </info-structures>
  <view-initializations>
    <view name="spacetime" window="600 240" margins="30 10 10 20" world="0 1 0 1"/>
    <view name="matrix" window="260 260" margins="24 10 20 20" world="0 1 0 1"/>
    <view name="queues" window="400 240" margins="10 10 10 24" world="0 1 0 1.1"/>
  </view-initializations>
  <event-processing>
    <ep-component name="l1" use="message-send" inputs="send.ts.proc.dest.tag"
                  infos="pending lines width t0 tnow nprocs matched"/>
    <ep-component name="l2" use="message-send" inputs="bsend.ts.proc.dest.tag"
                  infos="pending lines width t0 tnow nprocs matched"/>
    <ep-component name="l3" use="message-send" inputs="psend.ts.proc.dest.tag"
                  infos="pending lines width t0 tnow nprocs matched"/>
    <ep-component name="l4" use="message-receive" inputs="recv.ts.proc.source.tag"
                  infos="pending lines width t0 tnow nprocs matched"/>
    <ep-component name="l5" use="message-receive" inputs="brecv.ts.proc.source.tag"
                  infos="pending lines width t0 tnow nprocs matched"/>
    <ep-component name="v1" use="message-volume" inputs="send.ts.proc.dest.bytes"
                  infos="volume most-bytes senders"/>
    <ep-component name="v2" use="message-volume" inputs="bsend.ts.proc.dest.bytes"
                  infos="volume most-bytes senders"/>
    <ep-component name="v3" use="message-volume" inputs="psend.ts.proc.dest.bytes"
                  infos="volume most-bytes senders"/>
    <ep-component name="q1" use="queue-send" inputs="send.ts.proc.dest"
                  infos="queued longest most-queued receivers"/>
    <ep-component name="q2" use="queue-send" inputs="bsend.ts.proc.dest"
                  infos="queued longest most-queued receivers"/>
    <ep-component name="q3" use="queue-send" inputs="psend.ts.proc.dest"
                  infos="queued longest most-queued receivers"/>
    <ep-component name="q4" use="queue-receive" inputs="recv.ts.proc"
                  infos="queued longest most-queued receivers"/>
    <ep-component name="q5" use="queue-receive" inputs="brecv.ts.proc"
                  infos="queued longest most-queued receivers"/>
  </event-processing>
  <info-rendition>
    <ir-component name="diagram" use="spacetime-diagram" views="spacetime"
                  infos="pending lines width t0 tnow nprocs matched"/>
    <ir-component name="grid" use="communication-matrix" views="matrix"
                  infos="volume most-bytes senders"/>
    <ir-component name="waiting" use="queue-bars" views="queues"
                  infos="queued longest most-queued receivers"/>
  </info-rendition>
</visual-object></body></voml>
"#;

/// Runs the visual object over `text` (named `name`), rendering twenty times over its time
/// range.
fn run(name: &str, text: &str) -> voml_runtime::Runtime {
    let times: Vec<f64> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2)?.parse().ok())
        .collect();
    let span = times.iter().cloned().fold(f64::MIN, f64::max)
        - times.iter().cloned().fold(f64::MAX, f64::min);
    let spec = SPEC.replace("TICK", &(span / 20.0).max(1e-6).to_string());
    let mut rt = start_runtime(compile_text("messages.voml", &spec), true, 2000);
    replay_bytes(&mut rt, text.as_bytes(), name, false);
    assert!(rt.faults().is_empty(), "{name}: {:?}", rt.faults());
    rt
}

/// A trace and its prefix up to the moment the most messages were waiting at once: each
/// check runs on both (at the end of these traces every message has been received).
fn cases() -> Vec<(String, String)> {
    let mut cases = Vec::new();
    for trace in traces() {
        let text = std::fs::read_to_string(&trace).unwrap();
        let name = trace.file_name().unwrap().to_string_lossy().into_owned();
        // The line after which the most messages are waiting.
        let (mut waiting, mut most, mut cut) = (0i64, 0i64, 0usize);
        for (i, line) in text.lines().enumerate() {
            let f: Vec<&str> = line.split_whitespace().collect();
            match (f.first(), f.get(1)) {
                (Some(&"-3"), Some(&("-27" | "-22" | "-21"))) => waiting += 1,
                (Some(&"-4"), Some(&("-51" | "-52"))) => waiting -= 1,
                _ => continue,
            }
            if waiting > most {
                (most, cut) = (waiting, i + 1);
            }
        }
        let prefix: String = text.lines().take(cut).map(|l| format!("{l}\n")).collect();
        assert!(most > 0, "{name}: no message waits");
        cases.push((format!("{name} up to line {cut}"), prefix));
        cases.push((name, text));
    }
    cases
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn the_spacetime_diagram_draws_every_message_between_the_right_rows() {
    for (name, text) in cases() {
        let (recs, _) = parse(&text);
        let (expected, unmatched) = messages(&recs);
        let nprocs = processors(&recs);
        let mut rt = run(&name, &text);
        let int = |v: &str| rt.variable(v).unwrap().parse::<f64>().unwrap();
        assert_eq!(int("matched") as usize, expected.len(), "{name}: messages");
        assert_eq!(int("nprocs") as i64, nprocs, "{name}: processors");
        let pending = to_json(&rt.variable_value("pending").unwrap());
        let waiting: usize = pending.as_array().map_or(0, |entries| {
            entries.iter().map(|e| e[1].as_array().unwrap().len()).sum()
        });
        assert_eq!(waiting, unmatched, "{name}: sends not yet received");
        // The time axis: from the first send or receive to the last.
        let times = || {
            recs.iter().map(|r| match *r {
                Rec::Send { t, .. } | Rec::Recv { t, .. } => t,
            })
        };
        let first = times().fold(f64::MAX, f64::min);
        let last = times().fold(f64::MIN, f64::max);
        let (t0, width) = (int("t0"), int("width"));
        assert!(close(t0, first), "{name}: t0 {t0}, the trace {first}");
        // Every line kept stands for the messages one processor sent another in one
        // interval, and is the first of them sent.
        let lines = to_json(&rt.variable_value("lines").unwrap());
        let mut buckets: BTreeMap<(i64, i64, i64), Vec<Message>> = BTreeMap::new();
        for m in &expected {
            let i = ((m.0 - t0) / width).floor() as i64;
            assert!((0..200).contains(&i), "{name}: {m:?} in interval {i}");
            buckets.entry((m.1, m.3, i)).or_default().push(*m);
        }
        let kept: Vec<(Vec<i64>, Vec<f64>)> = lines
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let key = e[0].as_array().unwrap();
                let value = e[1].as_array().unwrap();
                (
                    key.iter().map(|k| k.as_i64().unwrap()).collect(),
                    value.iter().map(|v| v.as_f64().unwrap()).collect(),
                )
            })
            .collect();
        assert_eq!(kept.len(), buckets.len(), "{name}: lines kept");
        for (key, m) in &kept {
            let group = &buckets[&(key[0], key[1], key[2])];
            let earliest = group.iter().map(|g| g.0).fold(f64::MAX, f64::min);
            assert!(
                m[4] as usize == group.len()
                    && m[1] as i64 == key[0]
                    && m[3] as i64 == key[1]
                    && close(m[0], earliest)
                    && group.iter().any(|g| close(g.0, m[0]) && close(g.2, m[2])),
                "{name}: line {key:?} is {m:?}, the trace's messages {group:?}"
            );
        }
        // On the picture, each line kept joins its sender's row at the send to its
        // receiver's row at the receive: points along it are blue.
        let pixels = view_pixels(&mut rt, 0);
        let span = last - t0;
        let blue = |x: f64, y: f64| {
            (-1..=1).any(|dx| {
                (-1..=1).any(|dy| {
                    let (x, y) = (x.round() as i64 + dx, y.round() as i64 + dy);
                    (x >= 0 && y >= 0)
                        && pixels
                            .pixel(x as u32, y as u32)
                            .is_some_and(|p| i32::from(p[2]) - i32::from(p[0]) >= 60 && p[1] < 200)
                })
            })
        };
        for (key, m) in &kept {
            let row = |p: f64| (p + 0.5) / nprocs as f64;
            let (x0, y0) = world_to_px(&rt, 0, (m[0] - t0) / span, row(m[1]));
            let (x1, y1) = world_to_px(&rt, 0, (m[2] - t0) / span, row(m[3]));
            for k in 1..=4 {
                let f = f64::from(k) / 5.0;
                let (x, y) = (x0 + f * (x1 - x0), y0 + f * (y1 - y0));
                assert!(
                    blue(x, y),
                    "{name}: line {key:?} {m:?} is not drawn at ({x:.1}, {y:.1})"
                );
            }
        }
        // And nothing else is drawn in blue: every blue pixel lies on one of those lines.
        let segments: Vec<((f64, f64), (f64, f64))> = kept
            .iter()
            .map(|(_, m)| {
                let row = |p: f64| (p + 0.5) / nprocs as f64;
                (
                    world_to_px(&rt, 0, (m[0] - t0) / span, row(m[1])),
                    world_to_px(&rt, 0, (m[2] - t0) / span, row(m[3])),
                )
            })
            .collect();
        let near = |x: f64, y: f64| {
            segments.iter().any(|&((x0, y0), (x1, y1))| {
                let (dx, dy) = (x1 - x0, y1 - y0);
                let len = dx * dx + dy * dy;
                let f = if len == 0.0 {
                    0.0
                } else {
                    (((x - x0) * dx + (y - y0) * dy) / len).clamp(0.0, 1.0)
                };
                (x - x0 - f * dx).hypot(y - y0 - f * dy) <= 2.0
            })
        };
        for y in 0..pixels.height {
            for x in 0..pixels.width {
                let px = pixels.pixel(x, y).unwrap();
                if i32::from(px[2]) - i32::from(px[0]) >= 60 {
                    let (cx, cy) = (f64::from(x) + 0.5, f64::from(y) + 0.5);
                    assert!(near(cx, cy), "{name}: a stray blue pixel at ({x}, {y})");
                }
            }
        }
    }
}

#[test]
fn the_communication_matrix_holds_and_shows_the_bytes_sent() {
    for (name, text) in cases() {
        let (recs, _) = parse(&text);
        let mut expected: BTreeMap<(i64, i64), i64> = BTreeMap::new();
        let mut n = 0;
        for r in &recs {
            if let Rec::Send {
                from, to, bytes, ..
            } = *r
            {
                *expected.entry((from, to)).or_default() += bytes;
                n = n.max(from.max(to) + 1);
            }
        }
        let most = *expected.values().max().unwrap();
        let mut rt = run(&name, &text);
        assert_eq!(rt.variable("senders"), Some(n.to_string()), "{name}");
        assert_eq!(rt.variable("most-bytes"), Some(most.to_string()), "{name}");
        let volume = to_json(&rt.variable_value("volume").unwrap());
        let rows = volume.as_array().unwrap();
        assert_eq!(rows.len() as i64, n, "{name}: rows");
        for s in 0..n {
            let row = rows[s as usize].as_array().unwrap();
            assert_eq!(row.len() as i64, n, "{name}: row {s}");
            for r in 0..n {
                let want = expected.get(&(s, r)).copied().unwrap_or(0);
                assert_eq!(row[r as usize].as_i64(), Some(want), "{name}: {s} to {r}");
            }
        }
        // Each cell's colour: white when nothing was sent, else its tenth of the largest
        // cell, from blue (0) to red (9).
        let pixels = view_pixels(&mut rt, 1);
        for s in 0..n {
            for r in 0..n {
                let w = 1.0 / n as f64;
                let (x, y) = world_to_px(&rt, 1, (r as f64 + 0.5) * w, 1.0 - (s as f64 + 0.5) * w);
                let px = pixels.pixel(x as u32, y as u32).unwrap();
                match expected.get(&(s, r)) {
                    None => assert_eq!(px[..3], [255, 255, 255], "{name}: cell {s} {r}"),
                    Some(&v) => {
                        let level = ((10 * v) / most).min(9);
                        let red = (level * 255 / 9) as u8;
                        assert!(
                            px[0].abs_diff(red) <= 2
                                && px[1] == 0
                                && px[0].saturating_add(px[2]) >= 253,
                            "{name}: cell {s} to {r} ({v} of {most} bytes) shows {px:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_queues_are_the_messages_sent_and_not_yet_received() {
    for (name, text) in cases() {
        let (recs, _) = parse(&text);
        // In trace order: the messages waiting for each processor, and the most that ever
        // did.
        let mut queued: BTreeMap<i64, i64> = BTreeMap::new();
        let mut longest: BTreeMap<i64, i64> = BTreeMap::new();
        for r in &recs {
            match *r {
                Rec::Send { to, .. } => {
                    let q = queued.entry(to).or_default();
                    *q += 1;
                    let l = longest.entry(to).or_default();
                    *l = (*l).max(*q);
                }
                Rec::Recv { at, .. } => *queued.entry(at).or_default() -= 1,
            }
        }
        let most = *longest.values().max().unwrap();
        let nprocs = processors(&recs);
        let mut rt = run(&name, &text);
        let alist = |v: &str| -> BTreeMap<i64, i64> {
            to_json(&rt.variable_value(v).unwrap())
                .as_array()
                .unwrap()
                .iter()
                .map(|e| (e[0].as_i64().unwrap(), e[1].as_i64().unwrap()))
                .collect()
        };
        assert_eq!(alist("queued"), queued, "{name}: queues");
        assert_eq!(alist("longest"), longest, "{name}: longest queues");
        assert_eq!(rt.variable("most-queued"), Some(most.to_string()), "{name}");
        assert_eq!(rt.variable("receivers"), Some(nprocs.to_string()), "{name}");
        // The bars: as tall as the queue, in steel blue, over a pale bar up to the longest
        // queue, marked in red; white above.
        let pixels = view_pixels(&mut rt, 2);
        let slot = 1.0 / nprocs as f64;
        for p in 0..nprocs {
            let now = queued.get(&p).copied().unwrap_or(0).max(0);
            let top = longest.get(&p).copied().unwrap_or(0);
            let (x, bottom) = world_to_px(&rt, 2, (p as f64 + 0.5) * slot, 0.0);
            // (Off the middle, clear of the number written above the bar.)
            let (side, _) = world_to_px(&rt, 2, (p as f64 + 0.3) * slot, 0.0);
            let (_, height) = world_to_px(&rt, 2, 0.0, now as f64 / most as f64);
            let (_, mark) = world_to_px(&rt, 2, 0.0, top as f64 / most as f64);
            let at = |x: f64, y: f64| pixels.pixel(x as u32, y.round() as u32).unwrap();
            let (steel, pale, white) = ([70, 130, 180], [198, 219, 239], [255, 255, 255]);
            if now > 0 {
                for y in [bottom - 2.0, (bottom + height) / 2.0, height + 2.0] {
                    assert_eq!(at(x, y)[..3], steel, "{name}: bar {p} ({now}) at y {y}");
                }
            }
            if height - mark > 8.0 {
                let y = (height + mark) / 2.0;
                assert_eq!(at(x, y)[..3], pale, "{name}: {p}: {now} of at most {top}");
            }
            if top > 0 {
                let (mx, _) = world_to_px(&rt, 2, (p as f64 + 0.15) * slot, 0.0);
                let red = (-1..=1).any(|d| {
                    let px = at(mx, mark + f64::from(d));
                    px[0] == 255 && px[1] < 40 && px[2] < 40
                });
                assert!(red, "{name}: no mark at {top} for processor {p}");
            }
            let y = if top > 0 { mark - 4.0 } else { bottom - 2.0 };
            assert_eq!(
                at(side, y)[..3],
                white,
                "{name}: above processor {p}'s bars"
            );
        }
    }
}

/// The space-time diagram draws its lines in one order whatever the order of the hash table
/// that keeps them: where lines cross, the picture is the same on every run.
#[test]
fn the_spacetime_diagram_is_the_same_on_every_run() {
    for trace in traces() {
        let pictures: Vec<Vec<u8>> = (0..3)
            .map(|_| {
                let vo =
                    support::compile_spec(&support::root().join("examples/library/messages.voml"));
                let mut rt = start_runtime(vo, true, 10_000);
                support::replay_file(&mut rt, &trace);
                view_pixels(&mut rt, 0).data
            })
            .collect();
        assert!(
            pictures.windows(2).all(|w| w[0] == w[1]),
            "{}: the picture changes from run to run",
            trace.display()
        );
    }
}
