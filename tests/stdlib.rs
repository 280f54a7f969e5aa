//! The auralization library (`stdlib-components/auralization.voml`) through its examples
//! (`examples/auralization/*.voml`) over a real MPICL trace: the sound commands of every
//! mapping are checked against what the trace text says, computed here independently (send
//! tones per send record at Trace2au's pitch 100·35^(p/7), held notes from a blocked
//! receive to its end, the idle-burst swell, the utilisation meter's notes, the grapevine's
//! hops, Trace2au's mix volumes and its pitch proportional to the messages in flight). One
//! example also runs through the CLI into a WAV file. The trace lives outside the repository
//! (`../shared/traces/picl/`); without it the tests say so and pass.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use support::{compile_spec, replay_file, root, start_runtime, view_pixels, world_to_px};
use voml_runtime::host::{SoundCommand, TimedSound};

const TRACES: &str = "../shared/traces/picl";
const TRACE: &str = "../shared/traces/picl/mpicl-trace1.trf";
const EXAMPLES: &[&str] = &[
    "examples/auralization/messages.voml",
    "examples/auralization/idle-busy.voml",
    "examples/auralization/trace2au.voml",
];

/// The trace, or `None` (with a note) when it is not there.
fn trace_text() -> Option<String> {
    if !root().join(TRACES).is_dir() {
        eprintln!("note: {TRACES} is not there; skipping the auralization library tests");
        return None;
    }
    Some(std::fs::read_to_string(root().join(TRACE)).expect("the trace is readable"))
}

// ---------------------------------------------------------------------------------------
// The trace, read by hand.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// An MPI send or buffered send begins (`-3 -27`, `-3 -22`): `other` is the receiver.
    Send,
    /// A receive completes (`-4 -51`, `-4 -52`): `other` is the sender.
    Receive,
    /// A receive blocks (`-3 -52`).
    Block,
    /// Any other record.
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Rec {
    kind: Kind,
    /// Also true for the `-4 -52` receive that ends a blocked receive.
    unblock: bool,
    ts: f64,
    proc: i64,
    other: i64,
}

fn parse_trace(text: &str) -> Vec<Rec> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let int = |i: usize| -> i64 {
                f[i].parse()
                    .unwrap_or_else(|_| panic!("field {i} of `{line}`"))
            };
            let (kind, unblock) = match (f[0], f[1]) {
                ("-3", "-27") | ("-3", "-22") => (Kind::Send, false),
                ("-4", "-51") => (Kind::Receive, false),
                ("-4", "-52") => (Kind::Receive, true),
                ("-3", "-52") => (Kind::Block, false),
                _ => (Kind::Other, false),
            };
            Rec {
                kind,
                unblock,
                ts: f[2].parse().expect("a timestamp"),
                proc: int(3),
                other: if matches!(kind, Kind::Send | Kind::Receive) {
                    int(9)
                } else {
                    -1
                },
            }
        })
        .collect()
}

/// Trace2au's logarithmic map for 8 processors: 100 Hz to 3500 Hz.
fn trace2au_hz(p: i64) -> f64 {
    100.0 * 35f64.powf(p as f64 / 7.0)
}

fn midi_hz(note: i64) -> f64 {
    440.0 * 2f64.powf((note as f64 - 69.0) / 12.0)
}

/// A pitch as a key: millihertz (the map is computed in Scheme and here, a few ulps apart).
fn key(hz: f64) -> i64 {
    (hz * 1000.0).round() as i64
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

// ---------------------------------------------------------------------------------------
// Sound commands, per channel.

#[derive(Clone, Debug)]
enum Note {
    Tone { at: f64, hz: f64, len: f64 },
    On { at: f64, hz: f64, volume: f64 },
    Off { at: f64, hz: f64 },
    Volume { at: f64, hz: f64, volume: f64 },
}

impl Note {
    fn same(&self, other: &Note) -> bool {
        use Note::*;
        match (self, other) {
            (
                Tone { at, hz, len },
                Tone {
                    at: a,
                    hz: h,
                    len: l,
                },
            ) => close(*at, *a) && close(*hz, *h) && close(*len, *l),
            (
                On { at, hz, volume },
                On {
                    at: a,
                    hz: h,
                    volume: v,
                },
            )
            | (
                Volume { at, hz, volume },
                Volume {
                    at: a,
                    hz: h,
                    volume: v,
                },
            ) => close(*at, *a) && close(*hz, *h) && close(*volume, *v),
            (Off { at, hz }, Off { at: a, hz: h }) => close(*at, *a) && close(*hz, *h),
            _ => false,
        }
    }
    fn at(&self) -> f64 {
        match self {
            Note::Tone { at, .. }
            | Note::On { at, .. }
            | Note::Off { at, .. }
            | Note::Volume { at, .. } => *at,
        }
    }
}

/// The notes played on `channel`, in order (channel settings left out).
fn notes_on(sounds: &[TimedSound], channel: i64) -> Vec<Note> {
    sounds
        .iter()
        .filter_map(|s| match &s.command {
            SoundCommand::Tone {
                hz,
                duration,
                channel: Some(c),
                ..
            } if *c == channel => Some(Note::Tone {
                at: s.at,
                hz: *hz,
                len: *duration,
            }),
            SoundCommand::NoteOn {
                channel: c,
                hz,
                volume,
            } if *c == channel => Some(Note::On {
                at: s.at,
                hz: *hz,
                volume: *volume,
            }),
            SoundCommand::NoteOff { channel: c, hz } if *c == channel => {
                Some(Note::Off { at: s.at, hz: *hz })
            }
            SoundCommand::NoteVolume {
                channel: c,
                hz,
                volume,
            } if *c == channel => Some(Note::Volume {
                at: s.at,
                hz: hz.expect("a volume change names its note"),
                volume: *volume,
            }),
            _ => None,
        })
        .collect()
}

/// Fails with the first difference between two note sequences.
fn same_notes(what: &str, actual: &[Note], expected: &[Note]) {
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!(a.same(e), "{what}: note {i} is {a:?}, expected {e:?}");
    }
    assert_eq!(
        actual.len(),
        expected.len(),
        "{what}: {} notes, expected {}",
        actual.len(),
        expected.len()
    );
}

/// The held notes of `notes` sounding (pitch → volume) after all those at or before each
/// timestamp of `times`, by applying the commands in order.
fn held_at(notes: &[Note], times: &[f64]) -> Vec<BTreeMap<i64, f64>> {
    let mut sounding: BTreeMap<i64, f64> = BTreeMap::new();
    let mut next = 0;
    let mut out = Vec::new();
    for &t in times {
        while next < notes.len() && notes[next].at() <= t {
            match &notes[next] {
                Note::On { hz, volume, .. } => {
                    sounding.insert(key(*hz), *volume);
                }
                Note::Off { hz, .. } => {
                    sounding.remove(&key(*hz));
                }
                Note::Volume { hz, volume, .. } => {
                    if let Some(v) = sounding.get_mut(&key(*hz)) {
                        *v = *volume;
                    }
                }
                Note::Tone { .. } => {}
            }
            next += 1;
        }
        out.push(sounding.clone());
    }
    assert_eq!(next, notes.len(), "notes after the last record");
    out
}

// ---------------------------------------------------------------------------------------
// A run of an example.

struct Run {
    sounds: Vec<TimedSound>,
    runtime: voml_runtime::Runtime,
    /// Control and info values before the replay.
    initial: BTreeMap<String, String>,
}

impl Run {
    fn int(&self, name: &str) -> i64 {
        self.initial[name]
            .parse()
            .unwrap_or_else(|_| panic!("{name}"))
    }
    fn real(&self, name: &str) -> f64 {
        self.initial[name]
            .parse()
            .unwrap_or_else(|_| panic!("{name}"))
    }
}

fn run(example: &str) -> Run {
    let vo = compile_spec(&root().join(example));
    let mut runtime = start_runtime(vo, false, 10_000);
    let names = [
        "nprocs",
        "sr-chan",
        "by-receiver",
        "note-len",
        "held-chan",
        "idle-chan",
        "swell",
        "meter-chan",
        "meter-low",
        "meter-high",
        "vine-chan",
        "vine-holder",
        "send-chan",
        "mix-chan",
        "num-chan",
        "num-step",
    ];
    let initial = names
        .iter()
        .map(|n| {
            let v = runtime
                .variable(n)
                .unwrap_or_else(|| panic!("{example} has no variable `{n}`"));
            (n.to_string(), v)
        })
        .collect();
    let replayed = replay_file(&mut runtime, &root().join(TRACE));
    assert!(replayed.bad_lines.is_empty(), "{:?}", replayed.bad_lines);
    assert!(
        runtime.faults().is_empty(),
        "{example}: {:#?}",
        runtime
            .faults()
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
    );
    assert!(runtime.disabled_components().is_empty());
    let sounds = runtime.take_sounds();
    Run {
        sounds,
        runtime,
        initial,
    }
}

// ---------------------------------------------------------------------------------------
// The mappings.

/// send-receive and tr-send: a tone per send record at the sender's pitch, a tone per
/// completed receive at the receiver's.
fn check_send_tones(example: &str, run: &Run, recs: &[Rec]) {
    let len = run.real("note-len");
    let sends: Vec<&Rec> = recs.iter().filter(|r| r.kind == Kind::Send).collect();
    let receives: Vec<&Rec> = recs.iter().filter(|r| r.kind == Kind::Receive).collect();
    assert_eq!(sends.len(), 174, "80 MPI sends and 94 buffered sends");
    assert_eq!(receives.len(), 174);
    assert_eq!(run.initial["by-receiver"], "#false");

    let tone = |r: &&Rec, p: i64| Note::Tone {
        at: r.ts,
        hz: trace2au_hz(p),
        len,
    };
    let expected: Vec<Note> = sends.iter().map(|r| tone(r, r.proc)).collect();
    let sr = run.int("sr-chan");
    same_notes(
        &format!("{example}: send-receive sends"),
        &notes_on(&run.sounds, sr),
        &expected,
    );
    same_notes(
        &format!("{example}: tr-send"),
        &notes_on(&run.sounds, run.int("send-chan")),
        &expected,
    );
    let expected: Vec<Note> = receives.iter().map(|r| tone(r, r.proc)).collect();
    same_notes(
        &format!("{example}: send-receive receives"),
        &notes_on(&run.sounds, sr + 1),
        &expected,
    );
    // Every processor's pitch is Trace2au's map, from 100 Hz to 3500 Hz.
    let pitches: BTreeSet<u64> = notes_on(&run.sounds, run.int("send-chan"))
        .iter()
        .map(|n| match n {
            Note::Tone { hz, .. } => hz.round() as u64,
            _ => unreachable!(),
        })
        .collect();
    let expected: BTreeSet<u64> = (0..8).map(|p| trace2au_hz(p).round() as u64).collect();
    assert_eq!(pitches, expected);
    assert!(expected.contains(&100) && expected.contains(&3500));
}

/// held-until-received: a note from every blocked receive's start to its end.
fn check_held(example: &str, run: &Run, recs: &[Rec]) {
    let notes = notes_on(&run.sounds, run.int("held-chan"));
    let blocks: Vec<&Rec> = recs.iter().filter(|r| r.kind == Kind::Block).collect();
    assert_eq!(blocks.len(), 78);
    let ons: Vec<usize> = (0..notes.len())
        .filter(|&i| matches!(notes[i], Note::On { .. }))
        .collect();
    assert_eq!(
        ons.len(),
        blocks.len(),
        "{example}: a note per blocked receive"
    );
    for (&i, block) in ons.iter().zip(&blocks) {
        let Note::On { at, hz, .. } = notes[i] else {
            unreachable!()
        };
        assert!(close(at, block.ts) && close(hz, trace2au_hz(block.proc)));
        // The receive's end: the processor's next -4 -52 record.
        let end = recs
            .iter()
            .find(|r| r.unblock && r.proc == block.proc && r.ts >= block.ts)
            .expect("every blocked receive ends");
        let off = notes[i + 1..]
            .iter()
            .find(|n| matches!(n, Note::Off { hz: h, .. } if close(*h, hz)))
            .unwrap_or_else(|| panic!("{example}: no note-off for {:?}", notes[i]));
        assert!(
            close(off.at(), end.ts),
            "{example}: the note of P{} blocked at {} ends at {}, not at the receive's end {}",
            block.proc,
            block.ts,
            off.at(),
            end.ts
        );
    }
    assert_eq!(
        notes.len(),
        2 * blocks.len(),
        "{example}: only ons and offs"
    );
}

/// idle-busy: a bell and a held note per idle burst, whose volume starts at 0.1 and grows
/// with the time the processor has been idle, to 1 after `swell` seconds.
fn check_idle(example: &str, run: &Run, recs: &[Rec]) {
    let chan = run.int("idle-chan");
    let swell = run.real("swell");
    let notes = notes_on(&run.sounds, chan);
    // The bursts, by hand.
    let mut bursts: Vec<(i64, f64, f64)> = Vec::new();
    for b in recs.iter().filter(|r| r.kind == Kind::Block) {
        let end = recs
            .iter()
            .find(|r| r.unblock && r.proc == b.proc && r.ts >= b.ts)
            .unwrap();
        bursts.push((b.proc, b.ts, end.ts));
    }
    let bells: Vec<Note> = bursts
        .iter()
        .map(|&(p, t0, _)| Note::Tone {
            at: t0,
            hz: trace2au_hz(p),
            len: swell / 4.0,
        })
        .collect();
    same_notes(
        &format!("{example}: idle-busy bells"),
        &notes_on(&run.sounds, chan + 1),
        &bells,
    );
    let ons: Vec<&Note> = notes
        .iter()
        .filter(|n| matches!(n, Note::On { .. }))
        .collect();
    assert_eq!(ons.len(), bursts.len());
    for (on, &(p, t0, _)) in ons.iter().zip(&bursts) {
        assert!(
            on.same(&Note::On {
                at: t0,
                hz: trace2au_hz(p),
                volume: 0.1
            }),
            "{on:?}"
        );
    }
    // Each volume change belongs to the burst of its processor that covers its time, and
    // has the swell's value there; within a burst the volumes never fall.
    let mut last: BTreeMap<usize, f64> = BTreeMap::new();
    let mut changes = 0;
    for n in &notes {
        let Note::Volume { at, hz, volume } = n else {
            continue;
        };
        changes += 1;
        let (i, &(_, t0, _)) = bursts
            .iter()
            .enumerate()
            .find(|(_, (p, t0, t1))| close(trace2au_hz(*p), *hz) && t0 < at && at <= t1)
            .unwrap_or_else(|| panic!("{example}: {n:?} outside every idle burst"));
        let expected = (0.1 + 0.9 * (at - t0) / swell).min(1.0);
        assert!(close(*volume, expected), "{n:?}: expected {expected}");
        let before = last.insert(i, *volume).unwrap_or(0.1);
        assert!(*volume >= before, "{example}: the swell fell in {n:?}");
    }
    assert!(changes > 100, "{example}: {changes} volume changes");
    // Long bursts are heard at full volume.
    let long = bursts.iter().filter(|b| b.2 - b.1 > 2.0 * swell).count();
    let full = last.values().filter(|v| close(**v, 1.0)).count();
    assert!(
        long > 5 && full >= long,
        "{long} long bursts, {full} at full volume"
    );
}

/// utilisation-meter: the percentage of processors not blocked, as a held note moving
/// between meter-low (0 %) and meter-high (100 %).
fn check_meter(example: &str, run: &Run, recs: &[Rec]) {
    let (low, high) = (run.int("meter-low"), run.int("meter-high"));
    let mut idle = 0i64;
    let mut note: Option<i64> = None;
    let mut expected = Vec::new();
    for r in recs {
        if r.kind == Kind::Block {
            idle += 1;
        } else if r.unblock {
            idle -= 1;
        } else {
            continue;
        }
        let percent = 100.0 * (8 - idle) as f64 / 8.0;
        let n = (low as f64 + (high - low) as f64 * percent / 100.0).round_ties_even() as i64;
        if note != Some(n) {
            if let Some(old) = note {
                expected.push(Note::Off {
                    at: r.ts,
                    hz: midi_hz(old),
                });
            }
            expected.push(Note::On {
                at: r.ts,
                hz: midi_hz(n),
                volume: 0.35,
            });
            note = Some(n);
        }
    }
    let end = recs.last().unwrap().ts;
    expected.push(Note::Off {
        at: end,
        hz: midi_hz(note.unwrap()),
    });
    assert!(expected.len() > 50);
    same_notes(
        &format!("{example}: utilisation-meter"),
        &notes_on(&run.sounds, run.int("meter-chan")),
        &expected,
    );
    let utilisation: f64 = run
        .runtime
        .variable("utilisation")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(utilisation, 100.0, "all processors are busy at the end");
}

/// grapevine: from the starting processor's first send, each message of the chain is a
/// note at the sender's pitch held until that very message is received (the n-th message
/// from a sender to a receiver is the receiver's n-th receive from that sender), then a
/// short note at the receiver's pitch; the receiver's next send continues the chain.
fn check_grapevine(example: &str, run: &Run, recs: &[Rec]) {
    let len = run.real("note-len");
    let mut holder = run.int("vine-holder");
    let mut expected = Vec::new();
    let mut hops = 0;
    let mut behind = 0;
    let mut i = 0;
    while let Some(send) = recs[i..]
        .iter()
        .position(|r| r.kind == Kind::Send && r.proc == holder)
        .map(|k| i + k)
    {
        let (s, d) = (recs[send].proc, recs[send].other);
        let nth = recs[..send]
            .iter()
            .filter(|r| r.kind == Kind::Send && r.proc == s && r.other == d)
            .count();
        let received = recs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.kind == Kind::Receive && r.proc == d && r.other == s)
            .nth(nth);
        expected.push(Note::On {
            at: recs[send].ts,
            hz: trace2au_hz(s),
            volume: 0.7,
        });
        let Some((k, r)) = received else { break };
        // Earlier messages of the same pair still in flight: the vine's is not the next one.
        let before = recs[..send]
            .iter()
            .filter(|r| r.kind == Kind::Receive && r.proc == d && r.other == s)
            .count();
        if before < nth {
            behind += 1;
        }
        expected.push(Note::Off {
            at: r.ts,
            hz: trace2au_hz(s),
        });
        expected.push(Note::Tone {
            at: r.ts,
            hz: trace2au_hz(d),
            len,
        });
        hops += 1;
        holder = d;
        i = k + 1;
    }
    assert!(
        hops >= 10 && behind >= 2,
        "{hops} hops, {behind} behind other messages"
    );
    same_notes(
        &format!("{example}: grapevine"),
        &notes_on(&run.sounds, run.int("vine-chan")),
        &expected,
    );
    let shown = run.runtime.variable("vine-hops").unwrap();
    assert_eq!(shown.matches('(').count(), hops + 1, "{shown}");
}

/// The timestamps of the records, without repeats, in order.
fn record_times(recs: &[Rec]) -> Vec<f64> {
    let mut times: Vec<f64> = recs.iter().map(|r| r.ts).collect();
    times.dedup();
    times
}

/// Messages in flight per sender after all the records of each timestamp.
fn in_flight(recs: &[Rec]) -> Vec<BTreeMap<i64, i64>> {
    let mut pending: BTreeMap<i64, i64> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        match r.kind {
            Kind::Send => *pending.entry(r.proc).or_default() += 1,
            Kind::Receive => *pending.entry(r.other).or_default() -= 1,
            _ => {}
        }
        pending.retain(|_, c| *c != 0);
        assert!(
            pending.values().all(|c| *c > 0),
            "a receive before its send"
        );
        if recs.get(i + 1).is_none_or(|n| n.ts != r.ts) {
            out.push(pending.clone());
        }
    }
    out
}

/// tr-sendmix: after each moment, exactly the senders with messages in flight sound, each
/// with the volume of Trace2au's formula for n of 8 sounding: 1 / (n (1 + 7 (8 - n) / 8)).
fn check_sendmix(example: &str, run: &Run, recs: &[Rec]) {
    let notes = notes_on(&run.sounds, run.int("mix-chan"));
    let times = record_times(recs);
    let actual = held_at(&notes, &times);
    let expected = in_flight(recs);
    let mut levels = BTreeSet::new();
    for ((t, sounding), senders) in times.iter().zip(&actual).zip(&expected) {
        let pitches: BTreeSet<i64> = senders.keys().map(|p| key(trace2au_hz(*p))).collect();
        assert_eq!(
            sounding.keys().copied().collect::<BTreeSet<_>>(),
            pitches,
            "{example}: tr-sendmix at {t}"
        );
        let n = senders.len() as f64;
        for volume in sounding.values() {
            let want = 1.0 / (n * (1.0 + 7.0 * (8.0 - n) / 8.0));
            assert!(close(*volume, want), "{example}: at {t}, {volume} for {n}");
            levels.insert(n as u64);
        }
    }
    assert!(levels.len() >= 6, "loudness levels heard: {levels:?}");
}

/// tr-sendnum: one note at num-step Hz per message in flight (at most 3500 Hz), silent
/// when none is.
fn check_sendnum(example: &str, run: &Run, recs: &[Rec]) {
    let step = run.real("num-step");
    let notes = notes_on(&run.sounds, run.int("num-chan"));
    let times = record_times(recs);
    let actual = held_at(&notes, &times);
    let expected = in_flight(recs);
    let mut most = 0;
    for ((t, sounding), senders) in times.iter().zip(&actual).zip(&expected) {
        let count: i64 = senders.values().sum();
        most = most.max(count);
        let want: Vec<i64> = if count > 0 {
            vec![key((step * count as f64).min(3500.0))]
        } else {
            vec![]
        };
        assert_eq!(
            sounding.keys().copied().collect::<Vec<_>>(),
            want,
            "{example}: tr-sendnum at {t} with {count} in flight"
        );
    }
    assert!(most > 60, "at most {most} in flight");
}

// ---------------------------------------------------------------------------------------
// The tests.

#[test]
fn every_example_plays_every_mapping_as_the_trace_says() {
    let Some(text) = trace_text() else { return };
    let recs = parse_trace(&text);
    let procs: BTreeSet<i64> = recs.iter().map(|r| r.proc).collect();
    assert_eq!(procs.len(), 8);
    for example in EXAMPLES {
        let run = run(example);
        assert_eq!(run.int("nprocs"), procs.len() as i64);
        assert_eq!(run.runtime.stats().records, recs.len() as u64);
        check_send_tones(example, &run, &recs);
        check_held(example, &run, &recs);
        check_idle(example, &run, &recs);
        check_meter(example, &run, &recs);
        check_grapevine(example, &run, &recs);
        check_sendmix(example, &run, &recs);
        check_sendnum(example, &run, &recs);
        // Every channel a mapping plays on gets its voice at the start of the input.
        let start = recs[0].ts;
        for (name, offset, voice) in [
            ("sr-chan", 0, "vibes"),
            ("sr-chan", 1, "marimba"),
            ("held-chan", 0, "string"),
            ("idle-chan", 0, "string"),
            ("idle-chan", 1, "bell"),
            ("meter-chan", 0, "sine"),
            ("vine-chan", 0, "string"),
            ("send-chan", 0, "sine"),
            ("mix-chan", 0, "sine"),
            ("num-chan", 0, "sine"),
        ] {
            let chan = run.int(name) + offset;
            assert!(
                run.sounds.iter().any(|s| s.at == start
                    && matches!(&s.command, SoundCommand::Channel { channel, voice: Some(v), .. }
                        if *channel == chan && v.name() == voice)),
                "{example}: channel {chan} ({name}) is not set to {voice}"
            );
        }
    }
}

/// The fraction of the pixels of view `index` within 40 of `rgb` in every channel.
fn share_of_colour(rt: &mut voml_runtime::Runtime, index: usize, rgb: [u8; 3]) -> f64 {
    let pixels = view_pixels(rt, index);
    let near = pixels
        .data
        .chunks(4)
        .filter(|p| (0..3).all(|c| p[c].abs_diff(rgb[c]) <= 40))
        .count();
    near as f64 / (pixels.data.len() / 4) as f64
}

#[test]
fn the_examples_draw_their_pictures() {
    let Some(_) = trace_text() else { return };
    // messages: the grapevine's hops in orange over the space-time diagram.
    let mut messages = run(EXAMPLES[0]);
    let orange = share_of_colour(&mut messages.runtime, 0, [255, 140, 0]);
    assert!(orange > 0.002, "orange share {orange}");
    // idle-busy: at the end everyone is busy, so the meter is full and green.
    let mut idle = run(EXAMPLES[1]);
    let (x, y) = world_to_px(&idle.runtime, 1, 0.5, 90.0);
    let pixels = view_pixels(&mut idle.runtime, 1);
    let at = (y as usize * pixels.width as usize + x as usize) * 4;
    assert_eq!(&pixels.data[at..at + 3], &[46, 139, 87], "seagreen at 90 %");
    // The Gantt chart shows idle time (white) in the processors' rows. Its world is 0 to 1
    // both ways: time from the first event to the latest, a row per processor seen.
    let extent: Vec<f64> = idle
        .runtime
        .variable("extent")
        .unwrap()
        .trim_matches(|c| c == '(' || c == ')')
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let [t0, t1, rows] = extent[..] else {
        panic!("extent {extent:?}")
    };
    assert_eq!(rows, 8.0, "rows of the Gantt chart");
    let at_time = |t: f64| (t - t0) / (t1 - t0);
    let at_row = |p: f64| (p + 0.5) / rows;
    let (x, y) = world_to_px(&idle.runtime, 0, at_time(0.08), at_row(0.0));
    let gantt = view_pixels(&mut idle.runtime, 0);
    let at = (y as usize * gantt.width as usize + x as usize) * 4;
    assert_eq!(
        &gantt.data[at..at + 3],
        &[255, 255, 255],
        "P0 idle at 0.08 s"
    );
    let (x, y) = world_to_px(&idle.runtime, 0, at_time(0.02), at_row(4.0));
    let at = (y as usize * gantt.width as usize + x as usize) * 4;
    assert_eq!(
        &gantt.data[at..at + 3],
        &[0x34, 0x49, 0x5e],
        "P4 busy at 0.02 s"
    );
    // trace2au: the step plot of the messages in flight.
    let mut t2a = run(EXAMPLES[2]);
    let blue = share_of_colour(&mut t2a.runtime, 0, [70, 130, 180]);
    assert!(blue > 0.003, "steelblue share {blue}");
}

#[test]
fn an_example_sounds_through_the_cli() {
    let Some(_) = trace_text() else { return };
    let dir = std::env::temp_dir().join(format!("voml-stdlib-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wav: PathBuf = dir.join("messages.wav");
    let out = Command::new(env!("CARGO_BIN_EXE_voml"))
        .args(["run", EXAMPLES[0], "--trace", TRACE, "--headless", "--out"])
        .arg(&dir)
        .arg("--audio")
        .arg(&wav)
        .args(["--speed", "0.02"])
        .current_dir(root())
        .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(dir.join("spacetime.png").exists());
    let (rate, samples) = read_wav(&wav);
    let seconds = samples.len() as f64 / 2.0 / f64::from(rate);
    // The trace lasts 0.1163 s: 5.8 s at speed 0.02, and the ringing tail.
    assert!((5.8..9.0).contains(&seconds), "{seconds} s of sound");
    let loud = samples.iter().filter(|s| s.abs() > 0.05).count();
    assert!(loud > rate as usize / 5, "the WAV is nearly silent: {loud}");
    assert!(samples.iter().all(|s| s.abs() < 1.0), "clipped samples");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sample rate and interleaved samples as f32.
fn read_wav(path: &Path) -> (u32, Vec<f32>) {
    let mut reader = hound::WavReader::open(path).unwrap();
    let spec = reader.spec();
    assert_eq!(spec.channels, 2);
    let samples = reader
        .samples::<i16>()
        .map(|s| f32::from(s.unwrap()) / 32768.0)
        .collect();
    (spec.sample_rate, samples)
}

#[test]
fn the_library_and_its_examples_are_clean() {
    // Compiled with no diagnostic at all, warnings included (the library's components are
    // compiled through the examples that use them).
    for example in EXAMPLES {
        let out = voml_compiler::compile(
            &root().join(example),
            &voml_compiler::RealFs,
            &voml_compiler::Options::default(),
        );
        assert!(
            out.vo.is_some() && out.diagnostics.is_empty(),
            "{example}:\n{}",
            voml_compiler::diag::render(&out.db, &out.diagnostics, false)
        );
    }
    // Valid against the schema, when xmllint is there.
    let mut files: Vec<PathBuf> = EXAMPLES.iter().map(|e| root().join(e)).collect();
    files.push(root().join("stdlib-components/auralization.voml"));
    let out = Command::new("xmllint")
        .args(["--noout", "--noent", "--schema"])
        .arg(root().join("schemas/voml.xsd"))
        .args(&files)
        .output();
    match out {
        Ok(out) => assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => eprintln!("note: xmllint is not installed; schema validation skipped"),
    }
}
