//! The format examples: `examples/formats/ring.{paje,json,prv,pcf}` and the OTF2 archive
//! `examples/formats/ring-otf2/ring.otf2` are one run of a small message-passing program
//! (six ranks passing messages round a ring, waiting in receives when a message is late,
//! meeting at a barrier every eight rounds, sampling their memory and instruction counters)
//! written in each format as its tools write it, made here, deterministically
//! (`VOML_BLESS=1` rewrites them; the OTF2 archive is written by the OTF2 library, through
//! the adapter tests' generator, and compared by what `otf2-print` prints of it, since the
//! library gives every archive an identifier of its own). Each format's dashboard of library
//! components (`examples/formats/*.voml`) runs headless on its trace and must draw in every
//! view; its picture is `docs/images/formats-*.png` (`VOML_BLESS=1` rewrites it too). When
//! the shared trace collection is beside the repository, each dashboard also runs on a real
//! trace of its format.

mod support;

use std::fmt::Write as _;
use std::path::Path;

use support::{check_golden, root, Rng};

const RANKS: usize = 6;
const ROUNDS: usize = 24;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Compute,
    Receive,
    Barrier,
}

/// A rank in a state, microseconds.
struct Interval {
    rank: usize,
    kind: Kind,
    from: u64,
    to: u64,
}

struct Message {
    number: usize,
    from: usize,
    to: usize,
    sent: u64,
    /// When the receive was posted, when the message arrived, when the receive returned.
    posted: u64,
    arrived: u64,
    done: u64,
    bytes: usize,
}

/// The instructions a compute phase ran, counted at its end.
struct Sample {
    rank: usize,
    time: u64,
    instructions: u64,
}

struct Run {
    intervals: Vec<Interval>,
    messages: Vec<Message>,
    samples: Vec<Sample>,
    /// (rank, time, tenths of a megabyte): each rank's memory, sampled every 250 us.
    memory: Vec<(usize, u64, u64)>,
    end: u64,
}

/// One run of the ring: each round every rank computes (one of them longer), sends to its
/// right-hand neighbour, then receives from its left-hand one, waiting if the message is
/// not there yet; every eighth round all meet at a barrier.
fn simulate() -> Run {
    let mut rng = Rng(0x464f_524d_4154);
    let mut run = Run {
        intervals: Vec::new(),
        messages: Vec::new(),
        samples: Vec::new(),
        memory: Vec::new(),
        end: 0,
    };
    let mut clock: Vec<u64> = (0..RANKS).map(|_| 10 + rng.below(20) as u64).collect();
    for round in 0..ROUNDS {
        // (time, bytes) of the message sent to each rank this round.
        let mut sent = [(0u64, 0usize); RANKS];
        for (rank, c) in clock.iter_mut().enumerate() {
            let work = 300 + rng.below(500) as u64 + if rank == round % RANKS { 1200 } else { 0 };
            run.intervals.push(Interval {
                rank,
                kind: Kind::Compute,
                from: *c,
                to: *c + work,
            });
            *c += work;
            run.samples.push(Sample {
                rank,
                time: *c,
                instructions: work * (900 + rng.below(200) as u64),
            });
            sent[(rank + 1) % RANKS] = (*c, 1024 * (1 + rng.below(8)));
            // The send itself.
            *c += 15;
        }
        for (rank, c) in clock.iter_mut().enumerate() {
            let (time, bytes) = sent[rank];
            let arrived = time + 60 + bytes as u64 / 64;
            let posted = *c;
            let done = posted.max(arrived) + 5;
            run.intervals.push(Interval {
                rank,
                kind: Kind::Receive,
                from: posted,
                to: done,
            });
            run.messages.push(Message {
                number: run.messages.len(),
                from: (rank + RANKS - 1) % RANKS,
                to: rank,
                sent: time,
                posted,
                arrived,
                done,
                bytes,
            });
            *c = done + 10;
        }
        if round % 8 == 7 {
            let all = clock.iter().copied().max().unwrap_or(0) + 30;
            for (rank, c) in clock.iter_mut().enumerate() {
                run.intervals.push(Interval {
                    rank,
                    kind: Kind::Barrier,
                    from: *c,
                    to: all,
                });
                *c = all + 5;
            }
        }
    }
    run.end = clock.iter().copied().max().unwrap_or(0) + 10;
    // Memory grows while a rank computes (its buffers fill) and drops when it sends.
    for rank in 0..RANKS {
        let computing: Vec<&Interval> = run
            .intervals
            .iter()
            .filter(|i| i.rank == rank && i.kind == Kind::Compute)
            .collect();
        for t in (0..run.end).step_by(250) {
            let grown = computing
                .iter()
                .find(|i| i.from <= t && t < i.to)
                .map_or(0, |i| 120 * (t - i.from) / (i.to - i.from));
            run.memory.push((rank, t, 400 + 40 * rank as u64 + grown));
        }
    }
    run
}

/// Tenths as a decimal: 452 is `45.2`.
fn tenths(v: u64) -> String {
    format!("{}.{}", v / 10, v % 10)
}

/// Seconds with six decimals, from microseconds.
fn secs(us: u64) -> String {
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

/// The run as Pajé writes it: PajeNG's header, then the events in time order.
fn paje(run: &Run) -> String {
    let mut out =
        String::from("# A ring of six ranks, as a Pajé trace (PajeNG's event definitions).\n");
    for (name, id, fields) in [
        ("PajeDefineContainerType", 0, "Alias string|Type string|Name string"),
        ("PajeDefineVariableType", 1, "Alias string|Type string|Name string|Color color"),
        ("PajeDefineStateType", 2, "Alias string|Type string|Name string"),
        ("PajeDefineLinkType", 4, "Alias string|Type string|StartContainerType string|EndContainerType string|Name string"),
        ("PajeDefineEntityValue", 5, "Alias string|Type string|Name string|Color color"),
        ("PajeCreateContainer", 6, "Time date|Alias string|Type string|Container string|Name string"),
        ("PajeDestroyContainer", 7, "Time date|Type string|Name string"),
        ("PajeSetVariable", 8, "Time date|Container string|Type string|Value double"),
        ("PajePushState", 12, "Time date|Container string|Type string|Value string"),
        ("PajePopState", 14, "Time date|Container string|Type string"),
        ("PajeStartLink", 16, "Time date|Container string|Type string|StartContainer string|Value string|Key string|Size double"),
        ("PajeEndLink", 19, "Time date|Container string|Type string|EndContainer string|Value string|Key string"),
    ] {
        let _ = writeln!(out, "%EventDef {name} {id}");
        for field in fields.split('|') {
            let _ = writeln!(out, "%       {field}");
        }
        out.push_str("%EndEventDef\n");
    }
    out.push_str(
        "0 R 0 \"Rank\"\n\
         1 M R \"memory\" \"0 0 1\"\n\
         2 S R \"MPI state\"\n\
         4 L 0 R R \"message\"\n\
         5 c S \"compute\" \"0 1 0\"\n\
         5 w S \"MPI_Recv\" \"1 0 0\"\n\
         5 b S \"MPI_Barrier\" \"1 0.5 0\"\n\
         5 p S \"pack\" \"0 0 1\"\n",
    );
    // (time, order among events of that time, line): ends before beginnings.
    let mut events: Vec<(u64, u8, String)> = Vec::new();
    for rank in 0..RANKS {
        events.push((0, 0, format!("6 {} r{rank} R 0 \"rank {rank}\"", secs(0))));
        events.push((run.end, 3, format!("7 {} R r{rank}", secs(run.end))));
    }
    for i in &run.intervals {
        let value = match i.kind {
            Kind::Compute => "c",
            Kind::Receive => "w",
            Kind::Barrier => "b",
        };
        events.push((
            i.from,
            2,
            format!("12 {} r{} S {value}", secs(i.from), i.rank),
        ));
        events.push((i.to, 1, format!("14 {} r{} S", secs(i.to), i.rank)));
        if i.kind == Kind::Compute {
            // The last 40 us of a compute phase pack the message, a state inside it.
            let pack = i.to - 40;
            events.push((pack, 2, format!("12 {} r{} S p", secs(pack), i.rank)));
            events.push((i.to, 0, format!("14 {} r{} S", secs(i.to), i.rank)));
        }
    }
    for m in &run.messages {
        events.push((
            m.sent,
            2,
            format!(
                "16 {} 0 L r{} m m{} {}",
                secs(m.sent),
                m.from,
                m.number,
                m.bytes
            ),
        ));
        events.push((
            m.done,
            2,
            format!("19 {} 0 L r{} m m{}", secs(m.done), m.to, m.number),
        ));
    }
    for &(rank, time, mb) in &run.memory {
        events.push((
            time,
            2,
            format!("8 {} r{rank} M {}", secs(time), tenths(mb)),
        ));
    }
    events.sort_by_key(|(t, order, _)| (*t, *order));
    for (_, _, line) in events {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The run as Chrome writes it: the object form, each thread's events in turn (so not in
/// time order overall), compute as complete events, MPI calls as begin and end, messages as
/// flows, memory as a counter, the thread names last.
fn chrome(run: &Run) -> String {
    let mut out = String::from("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    let mut lines: Vec<String> = Vec::new();
    for rank in 0..RANKS {
        let tid = rank + 1;
        let mut events: Vec<(u64, u8, String)> = Vec::new();
        for i in run.intervals.iter().filter(|i| i.rank == rank) {
            match i.kind {
                Kind::Compute => {
                    events.push((
                        i.from,
                        1,
                        format!(
                            "{{\"name\": \"compute\", \"cat\": \"app\", \"ph\": \"X\", \"pid\": 1, \"tid\": {tid}, \"ts\": {}, \"dur\": {}}}",
                            i.from,
                            i.to - i.from
                        ),
                    ));
                    // Packing the message, a slice inside the compute slice.
                    events.push((
                        i.to - 40,
                        1,
                        format!(
                            "{{\"name\": \"pack\", \"cat\": \"app\", \"ph\": \"X\", \"pid\": 1, \"tid\": {tid}, \"ts\": {}, \"dur\": 40}}",
                            i.to - 40
                        ),
                    ));
                }
                kind => {
                    let name = if kind == Kind::Receive {
                        "MPI_Recv"
                    } else {
                        "MPI_Barrier"
                    };
                    events.push((i.from, 1, format!("{{\"name\": \"{name}\", \"cat\": \"mpi\", \"ph\": \"B\", \"pid\": 1, \"tid\": {tid}, \"ts\": {}}}", i.from)));
                    events.push((i.to, 0, format!("{{\"name\": \"{name}\", \"cat\": \"mpi\", \"ph\": \"E\", \"pid\": 1, \"tid\": {tid}, \"ts\": {}}}", i.to)));
                }
            }
        }
        for m in &run.messages {
            if m.from == rank {
                events.push((m.sent, 2, format!("{{\"name\": \"message\", \"cat\": \"mpi\", \"ph\": \"s\", \"id\": {}, \"pid\": 1, \"tid\": {tid}, \"ts\": {}, \"args\": {{\"bytes\": {}}}}}", m.number, m.sent, m.bytes)));
            }
            if m.to == rank {
                events.push((m.done, 0, format!("{{\"name\": \"message\", \"cat\": \"mpi\", \"ph\": \"f\", \"bp\": \"e\", \"id\": {}, \"pid\": 1, \"tid\": {tid}, \"ts\": {}}}", m.number, m.done)));
            }
        }
        for &(_, time, mb) in run.memory.iter().filter(|m| m.0 == rank) {
            events.push((time, 2, format!("{{\"name\": \"memory\", \"ph\": \"C\", \"pid\": 1, \"tid\": {tid}, \"ts\": {time}, \"args\": {{\"MB\": {}}}}}", tenths(mb))));
        }
        events.sort_by_key(|(t, order, _)| (*t, *order));
        lines.extend(events.into_iter().map(|(_, _, l)| l));
    }
    for rank in 0..RANKS {
        lines.push(format!(
            "{{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": {}, \"args\": {{\"name\": \"rank {rank}\"}}}}",
            rank + 1
        ));
    }
    out.push_str(&lines.join(",\n"));
    out.push_str("\n]}\n");
    out
}

/// The run as Extrae writes a Paraver trace (times in nanoseconds): a thread per rank in
/// states Running (1), Waiting a message (3) and Synchronization (5), the instructions of
/// each compute phase as a hardware counter event, each message as a communication record.
fn paraver(run: &Run) -> String {
    let ns = |us: u64| us * 1000;
    let tasks = ["1:1"; RANKS].join(",");
    let mut out = format!(
        "#Paraver (01/01/2024 at 12:00):{}_ns:1({RANKS}):1:{RANKS}({tasks})\n",
        ns(run.end)
    );
    // (time, line): records sorted by their first time, as Paraver sorts them.
    let mut records: Vec<(u64, u8, String)> = Vec::new();
    for i in &run.intervals {
        let state = match i.kind {
            Kind::Compute => 1,
            Kind::Receive => 3,
            Kind::Barrier => 5,
        };
        let t = i.rank + 1;
        records.push((
            ns(i.from),
            0,
            format!("1:{t}:1:{t}:1:{}:{}:{state}", ns(i.from), ns(i.to)),
        ));
    }
    for s in &run.samples {
        let t = s.rank + 1;
        records.push((
            ns(s.time),
            1,
            format!("2:{t}:1:{t}:1:{}:42000050:{}", ns(s.time), s.instructions),
        ));
    }
    for m in &run.messages {
        let (a, b) = (m.from + 1, m.to + 1);
        records.push((
            ns(m.sent),
            2,
            format!(
                "3:{a}:1:{a}:1:{}:{}:{b}:1:{b}:1:{}:{}:{}:{}",
                ns(m.sent),
                ns(m.sent),
                ns(m.posted),
                ns(m.arrived.max(m.posted)),
                m.bytes,
                m.number % 4
            ),
        ));
    }
    records.sort_by_key(|(t, order, _)| (*t, *order));
    for (_, _, line) in records {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

const PCF: &str = "DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC
LOOK_BACK           100
SPEED               1
FLAG_ICONS          ENABLED


STATES
0    Idle
1    Running
2    Not created
3    Waiting a message
4    Blocking Send
5    Synchronization


STATES_COLOR
0    {117,195,255}
1    {0,0,255}
2    {255,255,255}
3    {255,0,0}
4    {255,0,174}
5    {179,0,0}


EVENT_TYPE
7  42000050 PAPI_TOT_INS [Instr completed]
";

/// The run as the OTF2 trace writer's event list (`make_trace DIR from FILE`): each rank's
/// regions (compute, MPI_Send, MPI_Recv, MPI_Barrier), sends and receives (tagged with the
/// message's number) and its instruction counter at the end of each compute phase, in
/// microseconds.
fn otf2_events(run: &Run) -> String {
    let mut out = format!("ranks {RANKS}\n");
    for rank in 0..RANKS {
        // (time, order of making, line)
        let mut events: Vec<(u64, usize, String)> = Vec::new();
        let mut add = |t: u64, line: String| {
            let n = events.len();
            events.push((t, n, line));
        };
        for i in run.intervals.iter().filter(|i| i.rank == rank) {
            let region = match i.kind {
                Kind::Compute => "compute",
                Kind::Receive => "MPI_Recv",
                Kind::Barrier => "MPI_Barrier",
            };
            add(i.from, format!("E {rank} {} {region}", i.from));
            if i.kind == Kind::Receive {
                let m = run
                    .messages
                    .iter()
                    .find(|m| m.to == rank && m.posted == i.from)
                    .expect("each receive has its message");
                add(
                    i.to - 2,
                    format!("R {rank} {} {} {} {}", i.to - 2, m.from, m.number, m.bytes),
                );
            }
            add(i.to, format!("L {rank} {} {region}", i.to));
        }
        for s in run.samples.iter().filter(|s| s.rank == rank) {
            add(s.time, format!("M {rank} {} {}", s.time, s.instructions));
        }
        for m in run.messages.iter().filter(|m| m.from == rank) {
            add(m.sent, format!("E {rank} {} MPI_Send", m.sent));
            add(
                m.sent + 5,
                format!("S {rank} {} {} {} {}", m.sent + 5, m.to, m.number, m.bytes),
            );
            add(m.sent + 10, format!("L {rank} {} MPI_Send", m.sent + 10));
        }
        events.sort();
        for (_, _, line) in events {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// What `otf2-print -A` prints of an archive, less the identifier the library gives each
/// archive.
fn otf2_printed(anchor: &Path) -> String {
    let out = std::process::Command::new("otf2-print")
        .arg("-A")
        .arg(anchor)
        .output()
        .unwrap();
    assert!(out.status.success(), "otf2-print {}", anchor.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with("Trace identifier"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The OTF2 archive of the ring is what the OTF2 library writes of it (`VOML_BLESS=1`
/// writes it again).
#[test]
fn the_otf2_sample_archive_is_as_generated() {
    let dir = support::Scratch::new("format-otf2", "ring");
    let events = dir.join("ring.events");
    std::fs::write(&events, otf2_events(&simulate())).unwrap();
    let Some(made) = support::otf2_archive(&dir, &["from", events.to_str().unwrap()]) else {
        return;
    };
    let committed = root().join("examples/formats/ring-otf2");
    if support::blessing() {
        let _ = std::fs::remove_dir_all(&committed);
        std::fs::create_dir_all(committed.join("ring")).unwrap();
        for name in ["ring.otf2", "ring.def"] {
            std::fs::copy(made.join(name), committed.join(name)).unwrap();
        }
        for entry in std::fs::read_dir(made.join("ring")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), committed.join("ring").join(entry.file_name())).unwrap();
        }
        return;
    }
    let expected = otf2_printed(&made.join("ring.otf2"));
    let actual = otf2_printed(&committed.join("ring.otf2"));
    assert!(
        expected == actual,
        "examples/formats/ring-otf2 is not what the OTF2 library writes of the ring (VOML_BLESS=1 writes it again)"
    );
}

#[test]
fn the_format_sample_traces_are_as_generated() {
    let run = simulate();
    let dir = root().join("examples/formats");
    let mut problems = Vec::new();
    for (name, text) in [
        ("ring.paje", paje(&run)),
        ("ring.json", chrome(&run)),
        ("ring.prv", paraver(&run)),
        ("ring.pcf", PCF.to_string()),
    ] {
        problems.extend(check_golden(&dir.join(name), &text));
    }
    support::finish(problems);
}

/// A format's dashboard, the trace it is shown on, and its picture's layout: columns of
/// views (by index), each column's views one above the other; and the tool reading the
/// trace needs, if any.
struct Dashboard {
    spec: &'static str,
    trace: &'static str,
    picture: &'static str,
    columns: &'static [&'static [usize]],
    tool: Option<&'static str>,
}

const DASHBOARDS: [Dashboard; 4] = [
    Dashboard {
        spec: "examples/formats/paje.voml",
        trace: "examples/formats/ring.paje",
        picture: "docs/images/formats-paje.png",
        columns: &[&[0, 1], &[2]],
        tool: None,
    },
    Dashboard {
        spec: "examples/formats/chrome.voml",
        trace: "examples/formats/ring.json",
        picture: "docs/images/formats-chrome.png",
        columns: &[&[0, 1], &[2, 3]],
        tool: None,
    },
    Dashboard {
        spec: "examples/formats/paraver.voml",
        trace: "examples/formats/ring.prv",
        picture: "docs/images/formats-paraver.png",
        columns: &[&[0, 1], &[2, 3]],
        tool: None,
    },
    Dashboard {
        spec: "examples/formats/otf2.voml",
        trace: "examples/formats/ring-otf2/ring.otf2",
        picture: "docs/images/formats-otf2.png",
        columns: &[&[0, 1], &[2, 3]],
        tool: Some("otf2-print"),
    },
];

/// The share (per cent) of a view's pixels that are not white.
fn drawn_share(p: &voml_llvo::RgbaPixels) -> f64 {
    let white = p
        .data
        .chunks(4)
        .filter(|px| px[0] == 255 && px[1] == 255 && px[2] == 255)
        .count();
    let all = (p.width * p.height) as usize;
    100.0 * (all - white) as f64 / all.max(1) as f64
}

/// Runs `spec` over `trace` as `voml run --headless` does; the runtime after the run.
fn run_over(spec: &str, trace: &Path) -> voml_runtime::Runtime {
    let vo = support::compile_spec(&root().join(spec));
    let mut rt = support::start_runtime(vo, true, 10_000);
    let replayed = support::replay_path(&mut rt, trace);
    assert!(
        rt.faults().is_empty(),
        "{spec} on {}: {:?}",
        trace.display(),
        rt.faults()
    );
    assert!(!replayed.summary.stopped, "{spec} on {}", trace.display());
    rt
}

/// The views side by side in columns, on white, 10 pixels apart.
fn compose(views: &[voml_llvo::RgbaPixels], columns: &[&[usize]]) -> voml_llvo::RgbaPixels {
    const GAP: u32 = 10;
    let widths: Vec<u32> = columns
        .iter()
        .map(|c| c.iter().map(|&v| views[v].width).max().unwrap_or(0))
        .collect();
    let heights: Vec<u32> = columns
        .iter()
        .map(|c| c.iter().map(|&v| views[v].height + GAP).sum::<u32>() - GAP)
        .collect();
    let width = widths.iter().sum::<u32>() + GAP * (columns.len() as u32 - 1);
    let height = heights.iter().copied().max().unwrap_or(0);
    let mut out = voml_llvo::RgbaPixels {
        width,
        height,
        data: vec![255; (width * height * 4) as usize],
    };
    let mut x0 = 0;
    for (c, column) in columns.iter().enumerate() {
        let mut y0 = 0;
        for &v in *column {
            let view = &views[v];
            for y in 0..view.height {
                let from = (y * view.width * 4) as usize;
                let to = (((y0 + y) * width + x0) * 4) as usize;
                out.data[to..to + (view.width * 4) as usize]
                    .copy_from_slice(&view.data[from..from + (view.width * 4) as usize]);
            }
            y0 += view.height + GAP;
        }
        x0 += widths[c] + GAP;
    }
    out
}

/// Each format's dashboard draws in every view on its ring trace (at least a twentieth of
/// each view), and its picture is the one in the docs.
#[test]
fn each_format_dashboard_draws_its_ring_trace() {
    let mut problems = Vec::new();
    for d in &DASHBOARDS {
        if let Some(tool) = d.tool {
            if std::process::Command::new(tool)
                .arg("--version")
                .output()
                .is_err()
            {
                assert!(
                    std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
                    "{tool} is not installed (required because VOML_REQUIRE_TOOLS is set)"
                );
                eprintln!("note: {tool} is not installed; {} skipped", d.spec);
                continue;
            }
        }
        let mut rt = run_over(d.spec, &root().join(d.trace));
        let count = rt.vo().views.len();
        let views: Vec<voml_llvo::RgbaPixels> = (0..count)
            .map(|v| support::view_pixels(&mut rt, v))
            .collect();
        for (v, pixels) in views.iter().enumerate() {
            let share = drawn_share(pixels);
            if share < 5.0 {
                problems.push(format!(
                    "{}: view {v} is nearly blank ({share:.1}% drawn)",
                    d.spec
                ));
            }
        }
        let picture = compose(&views, d.columns);
        let png = voml_llvo::encode_png(&picture).expect("a picture encodes");
        problems.extend(check_picture(&root().join(d.picture), &png, &picture));
    }
    support::finish(problems);
}

/// Compares a picture with the committed one at `path` (each channel within
/// `support::PIXEL_TOLERANCE`); with `VOML_BLESS=1` writes it instead.
fn check_picture(path: &Path, png: &[u8], actual: &voml_llvo::RgbaPixels) -> Option<String> {
    if support::blessing() {
        std::fs::write(path, png)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return None;
    }
    let Ok(bytes) = std::fs::read(path) else {
        return Some(format!(
            "{}: picture missing; run with VOML_BLESS=1 to make it",
            path.display()
        ));
    };
    let expected = match support::decode_png(&bytes) {
        Ok(p) => p,
        Err(e) => return Some(format!("{}: {e}", path.display())),
    };
    if (expected.width, expected.height) != (actual.width, actual.height) {
        return Some(format!(
            "{}: {}x{} instead of {}x{}",
            path.display(),
            actual.width,
            actual.height,
            expected.width,
            expected.height
        ));
    }
    let off = actual
        .data
        .iter()
        .zip(&expected.data)
        .filter(|(a, e)| a.abs_diff(**e) > support::PIXEL_TOLERANCE)
        .count();
    (off > 0).then(|| {
        format!(
            "{}: {off} channel values differ from the picture (VOML_BLESS=1 rewrites it)",
            path.display()
        )
    })
}

/// Each dashboard runs without a fault on a real trace of its format from the shared
/// collection, when it is there, and draws in its first view.
#[test]
fn each_format_dashboard_draws_a_real_trace() {
    let shared = root().join("../shared/traces");
    for (spec, trace) in [
        (
            "examples/formats/paje.voml",
            "paje/pajeng_native_sample.trace",
        ),
        ("examples/formats/chrome.voml", "chrome/catapult_flow.json"),
        (
            "examples/formats/paraver.voml",
            "paraver/zumsehen_1MB.test.prv",
        ),
    ] {
        let path = shared.join(trace);
        if !path.is_file() {
            assert!(
                std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
                "{} is missing",
                path.display()
            );
            eprintln!("note: {} not found; skipped", path.display());
            continue;
        }
        let mut rt = run_over(spec, &path);
        let share = drawn_share(&support::view_pixels(&mut rt, 0));
        assert!(share > 5.0, "{spec} on {trace}: {share:.1}% drawn");
    }
}
