//! A bounded property test of the format adapters: the hand-made Pajé, Chrome and Paraver
//! traces, cut, spliced and sprinkled with the characters their syntaxes turn on, read in
//! every format (told by content and forced), never panic, always end, and place every error
//! on a line of the input (or of the Paraver `.pcf`) at a column within it.

use std::io::Cursor;
use std::time::{Duration, Instant};

use voml_trace::{Format, FormatReader, ReadOptions};

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

const PIECES: &[&[u8]] = &[
    b"\"",
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\n",
    b"%",
    b"#",
    b" ",
    b"\t",
    b"-1",
    b"1e309",
    b"99999999999999999999999",
    b"0",
    b"\xff",
    b"\xc3",
    b"\0",
    b"%EventDef",
    b"%EndEventDef",
    b"\"ph\":\"X\"",
    b"\"ph\":\"E\"",
    b"\"dur\":-1",
    b"\"ts\":1e400",
    b"\"id\":{\"local\":1}",
    b"1:1:1:1:1",
    b"3:",
    b"\"traceEvents\":[",
];

fn corpus() -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/formats");
    [
        "two-ranks.paje",
        "two-ranks-old-names.paje",
        "bad.paje",
        "small.json",
        "small-object.json",
        "bad.json",
        "small.prv",
        "bad.prv",
    ]
    .iter()
    .map(|f| std::fs::read(dir.join(f)).expect("a fixture"))
    .collect()
}

fn mutate(rng: &mut Rng, text: &[u8]) -> Vec<u8> {
    let mut out = text.to_vec();
    for _ in 0..=rng.below(6) {
        let at = rng.below(out.len() + 1);
        match rng.below(5) {
            0 => {
                let piece = PIECES[rng.below(PIECES.len())];
                out.splice(at..at, piece.iter().copied());
            }
            1 if !out.is_empty() => {
                let end = (at + rng.below(40)).min(out.len());
                out.drain(at.min(end)..end);
            }
            2 if at < out.len() => out[at] = rng.next() as u8,
            3 => out.truncate(at),
            _ => {
                // A copy of another stretch: duplicated events, links, definitions.
                let from = rng.below(out.len() + 1);
                let end = (from + rng.below(200)).min(out.len());
                let copy = out[from..end].to_vec();
                out.splice(at..at, copy);
            }
        }
    }
    out
}

/// Reads `bytes` in `format` (`None`: told by content) and checks every error's place.
fn check(bytes: &[u8], format: Option<Format>, problems: &mut Vec<String>) {
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let reader = FormatReader::from_input(
        Cursor::new(bytes.to_vec()),
        "fuzz".into(),
        ReadOptions::default(),
        format,
        None,
    );
    // Every record comes from at least one byte of input; a reader that gives more than
    // this is in a loop.
    let most = 8 * bytes.len() + 16;
    for (n, item) in reader.enumerate() {
        if n > most {
            problems.push(format!("more than {most} items from {} bytes", bytes.len()));
            return;
        }
        let Err(e) = item else { continue };
        if e.line == 1 && e.column == 1 {
            continue;
        }
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
fn the_adapters_never_panic_and_always_locate() {
    let corpus = corpus();
    let mut rng = Rng(0x5eed_f0a7_5eed_f0a7);
    let mut problems = Vec::new();
    let started = Instant::now();
    let mut cases = 0;
    while cases < 30_000 && started.elapsed() < Duration::from_secs(20) {
        let bytes = if rng.below(8) == 0 {
            (0..rng.below(300)).map(|_| rng.next() as u8).collect()
        } else {
            let pick = rng.below(corpus.len());
            mutate(&mut rng, &corpus[pick])
        };
        let format = match rng.below(5) {
            0 => None,
            k => Some(Format::ALL[k - 1]),
        };
        check(&bytes, format, &mut problems);
        cases += 1;
    }
    assert!(cases >= 3_000, "only {cases} cases in the time allowed");
    assert!(
        problems.is_empty(),
        "{} problems, e.g.:\n{}",
        problems.len(),
        problems[..problems.len().min(10)].join("\n")
    );
}
