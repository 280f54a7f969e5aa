//! The dynamic-system library (`stdlib-components/dynamics.voml`) through its example,
//! `examples/library/dynamics.voml`, on traces of different sizes: what it keeps (each
//! processor's computing time, the bytes every processor sent every other one) must be what
//! the trace text says, read here by hand; the simulation must be deterministic and
//! physically sane (friction calms it when the messages stop; processors that talk end up
//! closer than processors that do not); and the picture must show each body where the
//! simulation put it, as large as its mass says.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use support::{compile_spec, replay_bytes, root, start_runtime, view_pixels, world_to_px};
use voml_runtime::state::to_json;

const SPEC: &str = "examples/library/dynamics.voml";

/// The traces: the examples' own ring (8 processors, 0.1 s) and the real MPICL traces beside
/// the repository (8 processors exchanging with every other), when they are there.
fn traces() -> Vec<PathBuf> {
    support::ring_and_shared(&["mpicl-trace1.trf", "mpicl-trace2.trf"])
}

/// What the trace text says: the processors seen, each one's computing time (outside the
/// MPI calls the example declares, counted from the end of its first call), the bytes each
/// sent each other one (sends, and broadcasts as sends from their root), and whether each is
/// in a call at the end.
struct Expected {
    nprocs: usize,
    busy: Vec<f64>,
    volume: Vec<Vec<i64>>,
    calls: Vec<i64>,
}

fn expected(text: &str) -> Expected {
    const CALLS: [&str; 6] = ["-27", "-22", "-21", "-51", "-52", "-785"];
    let mut busy: BTreeMap<usize, f64> = BTreeMap::new();
    let mut depth: BTreeMap<usize, i64> = BTreeMap::new();
    let mut since: BTreeMap<usize, f64> = BTreeMap::new();
    let mut root_of: BTreeMap<usize, usize> = BTreeMap::new();
    let mut sent: BTreeMap<(usize, usize), i64> = BTreeMap::new();
    let mut nprocs = 0;
    for f in text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
    {
        if f.len() < 4 || !CALLS.contains(&f[1]) {
            continue;
        }
        let t: f64 = f[2].parse().unwrap();
        let p: usize = f[3].parse().unwrap();
        let int = |i: usize| f[i].parse::<i64>().unwrap();
        nprocs = nprocs.max(p + 1);
        let d = depth.entry(p).or_insert(0);
        match f[0] {
            "-3" => {
                if *d == 0 {
                    if let Some(start) = since.remove(&p) {
                        *busy.entry(p).or_insert(0.0) += (t - start).max(0.0);
                    }
                }
                since.remove(&p);
                *d += 1;
                if ["-27", "-22", "-21"].contains(&f[1]) {
                    let (to, bytes) = (int(9) as usize, int(7));
                    nprocs = nprocs.max(to + 1);
                    if bytes > 0 && to != p {
                        *sent.entry((p, to)).or_insert(0) += bytes;
                    }
                }
                if f[1] == "-785" && int(8) >= 0 {
                    let root = int(8) as usize;
                    nprocs = nprocs.max(root + 1);
                    root_of.insert(p, root);
                }
            }
            "-4" => {
                *d = (*d - 1).max(0);
                if *d == 0 {
                    since.entry(p).or_insert(t);
                }
                if f[1] == "-785" {
                    if let Some(root) = root_of.remove(&p) {
                        let bytes = int(7);
                        if bytes > 0 && root != p {
                            *sent.entry((root, p)).or_insert(0) += bytes;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut volume = vec![vec![0; nprocs]; nprocs];
    for ((s, r), b) in sent {
        volume[s][r] = b;
    }
    Expected {
        nprocs,
        busy: (0..nprocs)
            .map(|p| busy.get(&p).copied().unwrap_or(0.0))
            .collect(),
        volume,
        calls: (0..nprocs)
            .map(|p| depth.get(&p).copied().unwrap_or(0))
            .collect(),
    }
}

/// Runs the example over `text` (named `name`).
fn run(name: &str, text: &str) -> voml_runtime::Runtime {
    let mut rt = start_runtime(compile_spec(&root().join(SPEC)), true, 5000);
    replay_bytes(&mut rt, text.as_bytes(), name, false);
    assert!(rt.faults().is_empty(), "{name}: {:?}", rt.faults());
    rt
}

fn info(rt: &voml_runtime::Runtime, name: &str) -> Value {
    to_json(&rt.variable_value(name).unwrap())
}

/// A body as the state holds it: position, velocity, mass, load.
#[derive(Clone, Copy, Debug)]
struct Body {
    x: f64,
    y: f64,
    vx: f64,
    vy: f64,
    mass: f64,
    load: f64,
}

fn bodies(rt: &voml_runtime::Runtime) -> Vec<Body> {
    // Seven vectors by processor: x, y, vx, vy, mass, load, broadcast root.
    let b = info(rt, "bodies");
    let column = |k: usize| -> Vec<f64> {
        b[k].as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let (x, y, vx, vy, mass, load) = (
        column(0),
        column(1),
        column(2),
        column(3),
        column(4),
        column(5),
    );
    assert_eq!(b.as_array().unwrap().len(), 7);
    (0..x.len())
        .map(|p| Body {
            x: x[p],
            y: y[p],
            vx: vx[p],
            vy: vy[p],
            mass: mass[p],
            load: load[p],
        })
        .collect()
}

fn distance(a: &Body, b: &Body) -> f64 {
    ((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt()
}

fn kinetic(bodies: &[Body]) -> f64 {
    bodies
        .iter()
        .map(|b| 0.5 * b.mass * (b.vx * b.vx + b.vy * b.vy))
        .sum()
}

fn read(trace: &PathBuf) -> (String, String) {
    (
        trace.file_name().unwrap().to_string_lossy().into_owned(),
        std::fs::read_to_string(trace).unwrap(),
    )
}

/// The computing times and the volumes kept are the trace's, processor by processor and pair
/// by pair; the loads and masses are within their documented ranges.
#[test]
fn the_loads_and_volumes_kept_are_the_traces() {
    for trace in traces() {
        let (name, text) = read(&trace);
        let want = expected(&text);
        let rt = run(&name, &text);
        assert_eq!(
            info(&rt, "nprocs"),
            Value::from(want.nprocs as i64),
            "{name}"
        );
        let busy: Vec<f64> = info(&rt, "busy")
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(busy.len(), want.nprocs, "{name}");
        for (p, (got, want)) in busy.iter().zip(&want.busy).enumerate() {
            assert!(
                (got - want).abs() < 1e-9,
                "{name}: processor {p} computed {got} s, the trace says {want} s"
            );
        }
        assert!(
            want.busy.iter().all(|&b| b > 0.0),
            "{name}: every processor computes"
        );
        let volume: Vec<Vec<i64>> = info(&rt, "volume")
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                row.as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_i64().unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(
            volume, want.volume,
            "{name}: bytes sent, by sender and receiver"
        );
        assert!(
            want.volume.iter().flatten().filter(|&&b| b > 0).count() >= want.nprocs,
            "{name}: the trace has messages between many pairs"
        );
        let calls: Vec<i64> = info(&rt, "calls")
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(calls, want.calls, "{name}: calls open at the end");
        let bodies = bodies(&rt);
        assert_eq!(bodies.len(), want.nprocs, "{name}: one body per processor");
        for b in &bodies {
            assert!((0.0..=1.0).contains(&b.load), "{name}: {b:?}");
            assert!(
                (b.mass - (1.0 + 3.0 * b.load)).abs() < 1e-9,
                "{name}: {b:?}"
            );
        }
        // Ticks happened, and the springs follow the bytes: a pair that never exchanged has
        // no spring, a pair that did has one.
        let links = info(&rt, "links");
        for s in 0..want.nprocs {
            for r in 0..want.nprocs {
                let w = links[s][r].as_f64().unwrap();
                let talked = want.volume[s][r] + want.volume[r][s] > 0;
                assert_eq!(
                    w > 0.0,
                    talked,
                    "{name}: spring {s}-{r} weighs {w}, talked: {talked}"
                );
            }
        }
    }
}

/// The same trace gives the same picture and the same state, and the bodies did move.
#[test]
fn the_simulation_is_deterministic() {
    for trace in traces().into_iter().take(2) {
        let (name, text) = read(&trace);
        let mut a = run(&name, &text);
        let mut b = run(&name, &text);
        assert_eq!(info(&a, "bodies"), info(&b, "bodies"), "{name}");
        assert_eq!(info(&a, "clock"), info(&b, "clock"), "{name}");
        let (pa, pb) = (view_pixels(&mut a, 0), view_pixels(&mut b, 0));
        assert!(
            pa.data == pb.data,
            "{name}: two runs drew different pictures"
        );
        // Not a still picture: every body left the place it was born at.
        for (p, body) in bodies(&a).iter().enumerate() {
            let angle = p as f64 * 2.399963229728653;
            assert!(
                (body.x - angle.cos()).abs() + (body.y - angle.sin()).abs() > 1e-3,
                "{name}: body {p} never moved"
            );
        }
    }
}

/// The ring trace followed by two quiet seconds (records of a kind the example does not
/// take: time goes on, no message comes): friction takes the kinetic energy away, and the
/// bodies come to rest.
#[test]
fn friction_calms_the_system_when_the_messages_stop() {
    let (name, text) = read(&root().join("examples/mpicl/ring.trf"));
    let last: f64 = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2)?.parse().ok())
        .fold(0.0, f64::max);
    let quiet = |seconds: f64| {
        let mut out = text.clone();
        let mut t = last;
        while t < last + seconds {
            t += 0.005;
            out.push_str(&format!("-3 2 {t:.6} 0 0 0\n"));
        }
        out
    };
    let at_end = kinetic(&bodies(&run(&name, &text)));
    let later = kinetic(&bodies(&run(&name, &quiet(0.5))));
    let latest = kinetic(&bodies(&run(&name, &quiet(2.0))));
    assert!(
        at_end > 1e-4,
        "the ring is still moving when its messages stop: {at_end}"
    );
    assert!(later < at_end, "{later} after 0.5 s, {at_end} at the end");
    assert!(
        latest < at_end * 1e-3,
        "{latest} after 2 s of quiet, {at_end} at the end"
    );
}

/// Processors that exchange bytes end up closer than processors that do not: on the ring,
/// each processor's neighbours are closer than the processor opposite (processor 0 is left
/// out: its broadcasts reach everybody); and on a trace made here, the more two processors
/// exchange, the closer they end up.
#[test]
fn partners_end_up_closer_than_strangers() {
    let (name, text) = read(&root().join("examples/mpicl/ring.trf"));
    let bodies = bodies(&run(&name, &text));
    assert_eq!(bodies.len(), 8);
    let neighbours: Vec<f64> = (1..7)
        .map(|p| distance(&bodies[p], &bodies[p + 1]))
        .collect();
    let opposite: Vec<f64> = (1..4)
        .map(|p| distance(&bodies[p], &bodies[p + 4]))
        .collect();
    let far_neighbours = neighbours.iter().cloned().fold(0.0, f64::max);
    let near_opposite = opposite.iter().cloned().fold(f64::MAX, f64::min);
    assert!(
        far_neighbours < near_opposite,
        "neighbours {neighbours:?}, opposite {opposite:?}"
    );
    // (On the real traces every processor sends every other one, so they have no strangers.)
    // Four processors: 0 and 1 talk a lot, so do 2 and 3, 0 sends 2 less, and 1 and 3
    // never talk: the pairs that talk most end up closest, the strangers farthest.
    let rt = run("pairs.trf", &pairs_trace());
    let b = self::bodies(&rt);
    let d = |i: usize, j: usize| distance(&b[i], &b[j]);
    assert!(
        d(0, 1).max(d(2, 3)) < d(0, 2) && d(0, 2) < d(1, 3).min(d(0, 3)).min(d(1, 2)),
        "0-1 {:.3}, 2-3 {:.3}, 0-2 {:.3}, 1-3 {:.3}, 0-3 {:.3}, 1-2 {:.3}",
        d(0, 1),
        d(2, 3),
        d(0, 2),
        d(1, 3),
        d(0, 3),
        d(1, 2)
    );
}

/// A trace of four processors over 0.3 s: every millisecond 0 sends 1 and 2 sends 3 a
/// kilobyte, and 0 sends 2 a quarter of that; each send is received (MPICL layout).
fn pairs_trace() -> String {
    let mut records: Vec<(u64, String)> = Vec::new();
    let ts = |us: u64| format!("{}.{:06}", us / 1_000_000, us % 1_000_000);
    let mut message = |t: u64, from: u64, to: u64, bytes: u64, tag: u64| {
        records.push((
            t,
            format!("-3 -27 {} {from} 0 3 2 {bytes} {tag} {to}", ts(t)),
        ));
        records.push((t + 100, format!("-4 -27 {} {from} 0 0", ts(t + 100))));
        records.push((t + 200, format!("-3 -51 {} {to} 0 2 2 -1 -2", ts(t + 200))));
        records.push((
            t + 300,
            format!("-4 -51 {} {to} 0 3 2 {bytes} {tag} {from}", ts(t + 300)),
        ));
    };
    for k in 0..300u64 {
        let t = 1000 * k + 10;
        message(t, 0, 1, 1000, 1);
        message(t + 20, 2, 3, 1000, 1);
        message(t + 500, 0, 2, 250, 2);
    }
    records.sort_by_key(|(t, _)| *t);
    records.into_iter().map(|(_, l)| l + "\n").collect()
}

/// Each body is a disc drawn where the state says, after centring and scaling, of radius
/// 0.03 × √mass, in the colour of its processor's state.
#[test]
fn each_body_is_drawn_at_its_place_and_size() {
    for trace in traces() {
        let (name, text) = read(&trace);
        let mut rt = run(&name, &text);
        let bodies = bodies(&rt);
        let calls = info(&rt, "calls");
        let n = bodies.len() as f64;
        let cx = bodies.iter().map(|b| b.x).sum::<f64>() / n;
        let cy = bodies.iter().map(|b| b.y).sum::<f64>() / n;
        let reach = bodies
            .iter()
            .map(|b| (b.x - cx).abs().max((b.y - cy).abs()))
            .fold(0.0, f64::max);
        let scale = 0.38 / reach;
        let pixels = view_pixels(&mut rt, 0);
        let place = |b: &Body| {
            let (wx, wy) = (0.5 + scale * (b.x - cx), 0.5 + scale * (b.y - cy));
            let (px, py) = world_to_px(&rt, 0, wx, wy);
            let (ex, _) = world_to_px(&rt, 0, wx + 0.03 * b.mass.sqrt(), wy);
            (px, py, ex - px)
        };
        let mut measured = Vec::new();
        for (p, b) in bodies.iter().enumerate() {
            let (px, py, r) = place(b);
            // Discs that overlap another are not measured.
            if bodies.iter().enumerate().any(|(q, o)| {
                let (ox, oy, or) = place(o);
                q != p && ((ox - px).powi(2) + (oy - py).powi(2)).sqrt() < r + or + 4.0
            }) {
                continue;
            }
            let fill = if calls[p].as_i64().unwrap() > 0 {
                [0xf2, 0x8c, 0x28, 255]
            } else {
                [0x2c, 0xa2, 0x5f, 255]
            };
            let at = |x: f64, y: f64| pixels.pixel(x.round() as u32, y.round() as u32);
            assert_eq!(
                at(px, py),
                Some(fill),
                "{name}: body {p} is not at ({px}, {py})"
            );
            // The radius: how far the fill goes from the centre, in the directions the
            // number (up and right) does not cover; the median of them.
            let mut runs: Vec<f64> = [90.0f64, 135.0, 180.0, 225.0, 270.0, 315.0]
                .iter()
                .map(|deg| {
                    let (dx, dy) = (deg.to_radians().cos(), deg.to_radians().sin());
                    let mut k = 0.0;
                    while at(px + dx * (k + 1.0), py - dy * (k + 1.0)) == Some(fill) {
                        k += 1.0;
                    }
                    k
                })
                .collect();
            runs.sort_by(f64::total_cmp);
            let got = (runs[2] + runs[3]) / 2.0;
            // (The outline and the smoothed edge take the last pixel or so.)
            assert!(
                (0.3..=2.0).contains(&(r - got)),
                "{name}: body {p} of mass {} is filled {got} px from its centre, for a \
                 radius of {r} px",
                b.mass
            );
            measured.push((b.mass, got));
        }
        assert!(
            measured.len() * 2 >= bodies.len(),
            "{name}: only {} of {} bodies apart",
            measured.len(),
            bodies.len()
        );
        // The heavier, the larger, wherever the masses are far enough apart to tell.
        for &(m1, r1) in &measured {
            for &(m2, r2) in &measured {
                let (e1, e2) = (m1.sqrt(), m2.sqrt());
                if e1 > e2 * 1.1 {
                    assert!(
                        r1 > r2,
                        "{name}: mass {m1} drawn {r1} px, mass {m2} {r2} px"
                    );
                }
            }
        }
    }
}
