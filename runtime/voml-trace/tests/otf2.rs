//! The OTF2 adapter on traces written by the OTF2 library itself: `tests/data/otf2/
//! make_trace.c`, compiled here with `cc` against Debian's `libotf2-trace-dev`, writes them,
//! and the adapter reads them through `otf2-print` (Debian's `otf2-tools`). Every record of
//! a small trace is checked to the letter; a ring's every message is paired with its
//! receive; a broken archive, a missing tool and a stream are reported, not panicked on.
//!
//! Without a C compiler, the OTF2 headers or `otf2-print` the tests print a note and do
//! nothing, unless `VOML_REQUIRE_TOOLS` is set (as in CI), where that is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use voml_trace::{
    Format, FormatReader, Otf2Reader, ReadOptions, Record, TraceError, TraceErrorKind, Value,
};

/// A fresh directory for `name` in Cargo's scratch directory for tests (inside the target
/// directory, so nothing is left in the system's temp directory); emptied when made.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("otf2-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Skips (with a note) or, with `VOML_REQUIRE_TOOLS` set, fails.
fn missing(why: &str) -> Option<PathBuf> {
    assert!(
        std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
        "{why} (required because VOML_REQUIRE_TOOLS is set)"
    );
    eprintln!("note: {why}; the OTF2 test is skipped");
    None
}

/// The trace generator, compiled once; `None` (with a note) when the tools are missing.
fn generator() -> Option<PathBuf> {
    static GENERATOR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = GENERATOR.get_or_init(|| {
        if Command::new("otf2-print")
            .arg("--version")
            .output()
            .is_err()
        {
            return Err("otf2-print (Debian: otf2-tools) is not installed".into());
        }
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/otf2/make_trace.c");
        let out = scratch("generator").join("make_trace");
        let built = Command::new("cc")
            .arg("-o")
            .arg(&out)
            .arg(&source)
            .arg("-lotf2")
            .output();
        match built {
            Err(e) => Err(format!("no C compiler (cc): {e}")),
            Ok(o) if !o.status.success() => Err(format!(
                "cannot build the OTF2 trace generator (Debian: libotf2-trace-dev): {}",
                String::from_utf8_lossy(&o.stderr)
            )),
            Ok(_) => Ok(out),
        }
    });
    match built {
        Ok(p) => Some(p.clone()),
        Err(why) => missing(why),
    }
}

/// Writes a trace with the generator (`args`: `small`, or `ring N ROUNDS`) into a scratch
/// directory; its anchor file.
fn make(name: &str, args: &[&str]) -> Option<PathBuf> {
    let generator = generator()?;
    let dir = scratch(name).join("archive");
    let out = Command::new(generator)
        .arg(&dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "make_trace {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(dir.join("run.otf2"))
}

fn read_all(anchor: &Path, format: Option<Format>) -> Vec<Result<Record, TraceError>> {
    FormatReader::open(anchor, ReadOptions::default(), format)
        .unwrap()
        .collect()
}

/// The time of tick `ts`: the generator's clock has 1,000,000 ticks a second from 500.
fn at(ts: u64) -> String {
    Value::Real((ts - 500) as f64 / 1e6).to_string()
}

/// A state's entry or exit (or a message's, with its numbers) as its PICL line.
fn rec(rtype: i64, etype: i64, ts: u64, proc: i64, nums: [i64; 3], names: [&str; 2]) -> String {
    format!(
        "{rtype} {etype} {} {proc} {proc} 5 \"%d%d%d%s%s\" {} {} {} \"{}\" \"{}\"",
        at(ts),
        nums[0],
        nums[1],
        nums[2],
        names[0],
        names[1]
    )
}

fn state(rtype: i64, etype: i64, ts: u64, proc: i64, name: &str, paradigm: &str) -> String {
    rec(rtype, etype, ts, proc, [0, -1, -1], [name, paradigm])
}

/// A message's entry and exit.
fn message(
    etype: i64,
    ts: u64,
    proc: i64,
    bytes: i64,
    tag: i64,
    peer: i64,
    kind: &str,
) -> [String; 2] {
    [-3, -4].map(|rtype| {
        rec(
            rtype,
            etype,
            ts,
            proc,
            [bytes, tag, peer],
            ["MPI_COMM_WORLD", kind],
        )
    })
}

fn metric(ts: u64, proc: i64, value: f64, key: i64, name: &str, unit: &str) -> String {
    format!(
        "-2 700 {} {proc} {proc} 5 \"%lf%d%d%s%s\" {} {key} -1 \"{name}\" \"{unit}\"",
        at(ts),
        Value::Real(value)
    )
}

#[test]
fn every_record_of_a_small_trace_is_as_the_mapping_says() {
    let Some(anchor) = make("small", &["small"]) else {
        return;
    };
    let records: Vec<String> = read_all(&anchor, None)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{e}")).to_string())
        .collect();
    // States get codes from 1 as their names first appear (main 1, MPI_Send 2, the quoted
    // one 3, MPI_Bcast 4); MPI_Recv waits (-52). Location 0 is processor 0, location 2^32
    // processor 1; their groups are processes 0 and 1. Metric keys: PAPI_TOT_INS 0, mem 1,
    // node 2. The requests' completions and the collectives' begin and end give nothing.
    let mut expected: Vec<String> = vec![
        state(-3, 1, 1000, 0, "main", "USER"),
        state(-3, 1, 1001, 1, "main", "USER"),
        state(-3, 2, 1010, 0, "MPI_Send", "MPI"),
        state(-3, -52, 1011, 1, "MPI_Recv", "MPI"),
    ];
    expected.extend(message(-27, 1020, 0, 1024, 42, 1, "MPI_SEND"));
    expected.extend(message(-51, 1021, 1, 1024, 42, 0, "MPI_RECV"));
    expected.push(state(-4, 2, 1030, 0, "MPI_Send", "MPI"));
    expected.push(state(-4, -52, 1031, 1, "MPI_Recv", "MPI"));
    // Rank 9 is no location: the partner is -1.
    expected.extend(message(-27, 1040, 0, 8, 3, -1, "MPI_SEND"));
    expected.push(state(-3, 3, 1041, 1, "say 'cheese'", "USER"));
    expected.push(metric(1050, 0, 5000.0, 0, "PAPI_TOT_INS", ""));
    expected.push(state(-4, 3, 1051, 1, "say 'cheese'", "USER"));
    expected.push(metric(1060, 0, 2.5, 1, "mem", "MiB"));
    expected.push(metric(1060, 0, -3.0, 2, "node", ""));
    expected.push(metric(1061, 1, 5001.0, 0, "PAPI_TOT_INS", ""));
    expected.extend(message(-27, 1070, 0, 8, 7, 1, "MPI_ISEND"));
    expected.push(metric(1071, 1, 2.5, 1, "mem", "MiB"));
    expected.push(metric(1071, 1, -4.0, 2, "node", ""));
    expected.extend(message(-27, 1081, 1, 8, 7, 0, "MPI_ISEND"));
    expected.extend(message(-51, 1100, 0, 8, 7, 1, "MPI_IRECV"));
    expected.push(state(-3, 4, 1110, 0, "MPI_Bcast", "MPI"));
    expected.extend(message(-51, 1111, 1, 8, 7, 0, "MPI_IRECV"));
    expected.push(state(-3, 4, 1121, 1, "MPI_Bcast", "MPI"));
    expected.push(state(-4, 4, 1140, 0, "MPI_Bcast", "MPI"));
    expected.push(state(-4, 1, 1150, 0, "main", "USER"));
    expected.push(state(-4, 4, 1151, 1, "MPI_Bcast", "MPI"));
    expected.push(state(-4, 1, 1161, 1, "main", "USER"));
    for (i, (got, want)) in records.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "record {i}");
    }
    assert_eq!(records.len(), expected.len(), "{records:#?}");

    // Every adapted record reads back the same from its PICL line.
    for (i, line) in records.iter().enumerate() {
        let back = voml_trace::parse_line(line, i as u64 + 1).unwrap();
        assert_eq!(back.to_string(), *line);
    }

    // The same, forced; and the adapter's own counts.
    let forced = read_all(&anchor, Some(Format::Otf2));
    assert_eq!(forced.len(), expected.len());
    let mut reader = Otf2Reader::spawn(&anchor, "t".into(), ReadOptions::default()).unwrap();
    assert_eq!(reader.by_ref().count(), expected.len());
    let stats = reader.stats();
    assert_eq!(stats.records, expected.len() as u64);
    assert_eq!(stats.bad, 0);
    assert_eq!(stats.ignored, 8);
}

#[test]
fn every_message_of_a_ring_meets_its_receive() {
    let (n, rounds) = (4i64, 25i64);
    let Some(anchor) = make("ring", &["ring", "4", "25"]) else {
        return;
    };
    let records: Vec<Record> = read_all(&anchor, None)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{e}")))
        .collect();
    // Per rank: main's entry and exit, and per round compute's, MPI_Send's and MPI_Recv's
    // entries and exits, the send's and the receive's, and a metric.
    assert_eq!(records.len() as i64, n * (2 + 11 * rounds));
    let int = |r: &Record, i: usize| r.get(i).and_then(Value::as_i64).unwrap();
    let time = |r: &Record| r.get(2).and_then(Value::as_f64).unwrap();
    assert!(records.windows(2).all(|w| time(&w[0]) <= time(&w[1])));
    let sends: Vec<&Record> = records
        .iter()
        .filter(|r| r.rtype == -3 && r.etype == -27)
        .collect();
    let receives: Vec<&Record> = records
        .iter()
        .filter(|r| r.rtype == -4 && r.etype == -51)
        .collect();
    assert_eq!(sends.len() as i64, n * rounds);
    assert_eq!(receives.len() as i64, n * rounds);
    for s in &sends {
        let (p, bytes, tag, dest) = (int(s, 3), int(s, 7), int(s, 8), int(s, 9));
        assert_eq!(dest, (p + 1) % n);
        assert_eq!(bytes, 64 * (p + 1));
        let matching: Vec<_> = receives
            .iter()
            .filter(|r| int(r, 3) == dest && int(r, 8) == tag && int(r, 9) == p)
            .collect();
        assert_eq!(matching.len(), 1, "the receive of {s}");
        assert_eq!(int(matching[0], 7), bytes);
        assert!(time(matching[0]) > time(s));
    }
    let waits = records
        .iter()
        .filter(|r| r.rtype == -3 && r.etype == -52)
        .count() as i64;
    assert_eq!(waits, n * rounds);
    let marks: Vec<&Record> = records.iter().filter(|r| r.rtype == -2).collect();
    assert_eq!(marks.len() as i64, n * rounds);
    for m in marks {
        let value = m.get(7).and_then(Value::as_f64).unwrap() as i64;
        assert_eq!(value % 1000, int(m, 3), "{m}");
        assert_eq!(int(m, 8), 0);
    }
}

#[test]
fn a_broken_archive_and_a_missing_tool_are_reported() {
    let Some(anchor) = make("broken", &["ring", "3", "400"]) else {
        return;
    };
    // Location 1's events cut short: what comes before is read, then the tool's complaint.
    let events = anchor.parent().unwrap().join("run/4294967296.evt");
    let len = std::fs::metadata(&events).unwrap().len();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&events)
        .unwrap();
    file.set_len(len / 2).unwrap();
    let items = read_all(&anchor, None);
    let errors: Vec<&TraceError> = items.iter().filter_map(|i| i.as_ref().err()).collect();
    assert!(items.len() > 100, "{} items", items.len());
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = errors[0];
    assert_eq!(e.kind, TraceErrorKind::Io);
    assert!(
        e.message
            .contains("otf2-print could not read the whole trace"),
        "{e}"
    );
    assert!(
        e.to_string().starts_with(&anchor.display().to_string()),
        "{e}"
    );
    assert!(items.last().unwrap().is_err());

    // Strict: the first error ends the reading.
    let strict = FormatReader::open(&anchor, ReadOptions { strict: true }, None)
        .unwrap()
        .collect::<Vec<_>>();
    assert!(strict.last().unwrap().is_err());

    // A PICL trace read as OTF2: the tool refuses it.
    let dir = scratch("not-otf2");
    let picl = dir.join("t.trf");
    std::fs::write(&picl, "-3 -901 0.1 0 0 0\n").unwrap();
    let items = read_all(&picl, Some(Format::Otf2));
    assert_eq!(items.len(), 1);
    assert!(items[0]
        .as_ref()
        .unwrap_err()
        .message
        .contains("otf2-print"));

    // No tool.
    let err = Otf2Reader::spawn_with(
        std::ffi::OsStr::new("voml-no-such-otf2-print"),
        &anchor,
        "t".into(),
        ReadOptions::default(),
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("otf2-tools"), "{err}");

    // A stream: an OTF2 archive is named by its anchor file.
    let bytes = std::fs::read(&anchor).unwrap();
    let items: Vec<_> = FormatReader::from_input(
        std::io::Cursor::new(bytes),
        "-".into(),
        ReadOptions::default(),
        None,
        None,
    )
    .collect();
    assert_eq!(items.len(), 1);
    assert!(items[0]
        .as_ref()
        .unwrap_err()
        .message
        .contains("anchor file"));
}

/// A small xorshift generator: the fuzz cases are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn garbled_tool_output_is_reported_in_place_never_panicked_on() {
    let Some(anchor) = make("fuzz", &["small"]) else {
        return;
    };
    let printed = Command::new("otf2-print")
        .arg("-A")
        .arg(&anchor)
        .output()
        .unwrap()
        .stdout;
    let lines: Vec<&[u8]> = printed.split(|&b| b == b'\n').collect();
    let mut rng = Rng(0x07f2_5eed_07f2_5eed);
    for case in 0..3_000 {
        // Lines dropped, repeated, cut, or their bytes changed.
        let mut out = Vec::new();
        for line in &lines {
            match rng.below(12) {
                0 => continue,
                1 => out.extend_from_slice(&line[..rng.below(line.len() + 1)]),
                2 => {
                    let mut l = line.to_vec();
                    for _ in 0..3 {
                        if !l.is_empty() {
                            let at = rng.below(l.len());
                            l[at] = b" \"<>(),;:0123456789-AZ\xff"[rng.below(23)];
                        }
                    }
                    out.extend_from_slice(&l);
                }
                3 => {
                    out.extend_from_slice(line);
                    out.push(b'\n');
                    out.extend_from_slice(line);
                }
                _ => out.extend_from_slice(line),
            }
            out.push(b'\n');
        }
        let total = out.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        let reader = Otf2Reader::new(
            std::io::Cursor::new(out),
            "fuzz".into(),
            ReadOptions::default(),
        );
        for item in reader {
            if let Err(e) = item {
                assert!(
                    e.line >= 1 && e.line <= total && e.column == 1,
                    "case {case}: {e}"
                );
            }
        }
    }
}
