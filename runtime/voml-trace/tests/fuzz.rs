//! A bounded property test of the PICL reader: arbitrary bytes and mutated real lines, line by
//! line and through the streaming reader, never panic, and every error points at a line and a
//! column within it.

use std::io::Cursor;
use std::time::{Duration, Instant};

use voml_trace::{parse_line, ReadOptions, TraceReader};

/// xorshift64*: reproducible cases without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn corpus() -> Vec<Vec<u8>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut lines = Vec::new();
    for file in [
        "tests/data/small.trf",
        "tests/data/bad_lines.trf",
        "tests/data/crlf.trf",
        "../../examples/paper/bandwidth.trf",
        "../../examples/paper/lineplot.trf",
    ] {
        let text = std::fs::read(root.join(file)).expect("a corpus trace");
        lines.extend(text.split(|&b| b == b'\n').take(200).map(<[u8]>::to_vec));
    }
    lines.push(b"-101 -1 0.115758 0 0 2 \"%d%lf\" -22 0.000060 -27 0.000330".to_vec());
    lines
}

const PIECES: &[&[u8]] = &[
    b" ",
    b"\t",
    b"\"",
    b"-",
    b"+",
    b".",
    b"e",
    b"E",
    b"1e309",
    b"nan",
    b"inf",
    b"\r",
    b"\0",
    b"99999999999999999999999",
    b"-0",
    b"\xff",
    b"\xc3",
    b"#",
    b"%",
    b"0.5",
    b"\"\"",
];

fn mutate(rng: &mut Rng, line: &[u8]) -> Vec<u8> {
    let mut out = line.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(5) {
            0 => {
                let piece = PIECES[rng.below(PIECES.len())];
                out.splice(at..at, piece.iter().copied());
            }
            1 if !out.is_empty() => {
                let end = (at + rng.below(8)).min(out.len());
                out.drain(at.min(end)..end);
            }
            2 if at < out.len() => out[at] = rng.next() as u8,
            3 => out.truncate(at),
            _ => {
                let n = rng.below(6);
                out.splice(at..at, (0..n).map(|_| rng.next() as u8));
            }
        }
    }
    out
}

fn check_line(bytes: &[u8], problems: &mut Vec<String>) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    if let Err((column, message)) = parse_line(text, 1) {
        if column == 0 || column > text.len() + 1 || message.is_empty() {
            problems.push(format!("{text:?}: column {column} ({message})"));
        }
    }
}

fn check_stream(bytes: &[u8], problems: &mut Vec<String>) {
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let reader = TraceReader::new(
        Cursor::new(bytes.to_vec()),
        "fuzz.trf".into(),
        ReadOptions { strict: false },
    );
    for item in reader {
        let Err(e) = item else { continue };
        let Some(line) = lines.get((e.line as usize).wrapping_sub(1)) else {
            problems.push(format!(
                "error on line {} of {} lines: {e}",
                e.line,
                lines.len()
            ));
            continue;
        };
        if e.column == 0 || e.column > line.len() + 1 {
            problems.push(format!(
                "column {} on a line of {} bytes: {e}",
                e.column,
                line.len()
            ));
        }
    }
}

#[test]
fn the_reader_never_panics_and_always_locates() {
    let corpus = corpus();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut problems = Vec::new();
    let started = Instant::now();
    let mut cases = 0;
    while cases < 20_000 && started.elapsed() < Duration::from_secs(10) {
        let bytes = if rng.below(4) == 0 {
            (0..rng.below(80)).map(|_| rng.next() as u8).collect()
        } else {
            let pick = rng.below(corpus.len());
            mutate(&mut rng, &corpus[pick])
        };
        check_line(&bytes, &mut problems);
        if cases % 8 == 0 {
            // A few lines together, through the streaming reader, invalid UTF-8 and all.
            let mut text = bytes.clone();
            for _ in 0..rng.below(4) {
                text.push(b'\n');
                let pick = rng.below(corpus.len());
                text.extend(mutate(&mut rng, &corpus[pick]));
            }
            check_stream(&text, &mut problems);
        }
        cases += 1;
    }
    assert!(cases >= 2_000, "only {cases} cases in the time allowed");
    assert!(
        problems.is_empty(),
        "{} problems, e.g.:\n{}",
        problems.len(),
        problems[..problems.len().min(10)].join("\n")
    );
}

#[test]
fn huge_lines_nul_bytes_and_a_cut_last_line_are_read_on() {
    let mut input = vec![b'7'; voml_trace::MAX_LINE_LEN + 10];
    input.extend_from_slice(b"\n-3 1 0.5 0\0 1\n-3 1 0.75 0 \"open");
    let reader = TraceReader::new(
        Cursor::new(input),
        "big.trf".into(),
        ReadOptions { strict: false },
    );
    let items: Vec<_> = reader.collect();
    assert_eq!(items.len(), 3, "{items:?}");
    let kind = |i: usize| items[i].as_ref().err().map(|e| e.kind);
    assert_eq!(kind(0), Some(voml_trace::TraceErrorKind::LineTooLong));
    // A NUL byte makes the token a word, not a number: a component that takes the field as
    // a number reports it.
    let record = items[1].as_ref().expect("line 2 is a record");
    assert_eq!(record.fields[1], voml_trace::Value::Str("0\0".into()));
    assert_eq!(
        kind(2),
        Some(voml_trace::TraceErrorKind::UnterminatedString)
    );
}

/// A reader told which records it must parse whole ([`voml_trace::Interest`]) reports exactly
/// the bad lines a reader parsing everything reports, gives the wanted records whole, and
/// gives the others their types and timestamp: over mutated streams, and over a real trace
/// where the others are really cut short.
#[test]
fn a_reader_parsing_only_wanted_records_whole_reports_the_same_lines() {
    use std::sync::Arc;
    use voml_trace::{Interest, Record, TraceError};

    let read = |bytes: &[u8], interest: Option<Interest>| -> Vec<Result<Record, TraceError>> {
        let mut reader = TraceReader::new(
            Cursor::new(bytes.to_vec()),
            "t.trf".into(),
            ReadOptions { strict: false },
        );
        reader.set_interest(interest.map(Arc::new));
        reader.collect()
    };
    // The corpus's own record types: some wanted whole, some up to a field, some not.
    let wanted = Interest::with_fields([
        ((-3, 3000), usize::MAX),
        ((-3, -901), usize::MAX),
        ((-4, -901), 2),
        ((-3, 1), 4),
        ((-3, 1), 3),
    ]);
    let compare = |bytes: &[u8], problems: &mut Vec<String>| -> usize {
        let whole = read(bytes, None);
        let narrow = read(bytes, Some(wanted.clone()));
        let mut cut = 0;
        if whole.len() != narrow.len() {
            problems.push(format!("{} items instead of {}", narrow.len(), whole.len()));
            return cut;
        }
        for (w, n) in whole.iter().zip(&narrow) {
            match (w, n) {
                (Err(a), Err(b)) if a == b => {}
                (Ok(a), Ok(b)) if wanted.fields(a.rtype, a.etype) == usize::MAX => {
                    if a != b {
                        problems.push(format!("a wanted record differs: {a} / {b}"));
                    }
                }
                (Ok(a), Ok(b)) if wanted.wants(a.rtype, a.etype) => {
                    // The fields asked for are all there and the same.
                    let n = wanted.fields(a.rtype, a.etype).min(a.fields.len());
                    if (a.line, a.rtype, a.etype, &a.fields[..n])
                        != (b.line, b.rtype, b.etype, b.fields.get(..n).unwrap_or(&[]))
                    {
                        problems.push(format!("a record wanted in part differs: {a} / {b}"));
                    }
                    cut += usize::from(b.fields.len() < a.fields.len());
                }
                (Ok(a), Ok(b)) => {
                    if (a.line, a.rtype, a.etype, a.fields.first())
                        != (b.line, b.rtype, b.etype, b.fields.first())
                    {
                        problems.push(format!("types or timestamp differ: {a} / {b}"));
                    }
                    cut += usize::from(b.fields.len() < a.fields.len());
                }
                _ => problems.push(format!("{w:?} / {n:?}")),
            }
        }
        cut
    };
    let corpus = corpus();
    let mut rng = Rng(0x51_7cc1_b727_220a);
    let mut problems = Vec::new();
    let started = Instant::now();
    let mut cases = 0;
    while cases < 5_000 && started.elapsed() < Duration::from_secs(10) {
        let mut text = Vec::new();
        for _ in 0..=rng.below(6) {
            let pick = rng.below(corpus.len());
            text.extend(mutate(&mut rng, &corpus[pick]));
            text.push(b'\n');
        }
        compare(&text, &mut problems);
        cases += 1;
    }
    assert!(cases >= 500, "only {cases} cases in the time allowed");
    // A real trace: its records of other types are cut to their timestamp.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let small = std::fs::read(root.join("tests/data/small.trf")).unwrap();
    let cut = compare(&small, &mut problems);
    assert!(cut > 0, "no record was cut short");
    // Wanted records are read up to the fields asked for, no further.
    let partial = read(&small, Some(wanted.clone()))
        .into_iter()
        .flatten()
        .filter(|r| (r.rtype, r.etype) == (-4, -901) && r.fields.len() == 2)
        .count();
    assert!(
        partial > 0,
        "no wanted record was read only as far as asked"
    );
    assert!(
        problems.is_empty(),
        "{} problems, e.g.:\n{}",
        problems.len(),
        problems[..problems.len().min(10)].join("\n")
    );
}
