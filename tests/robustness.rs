//! The compiler never panics or hangs, whatever it is given: a property test over arbitrary
//! bytes and over mutations of the valid specs (examples and test specs), run for a bounded
//! time, plus every input that ever broke it (`tests/robustness/regressions/`), replayed on
//! every run.
//!
//! `VOML_FUZZ_SECONDS` sets the time budget (default 20 s; CI uses the default);
//! `VOML_FUZZ_SEED` fixes the seed to reproduce a run. A failing input is written to
//! `tests/robustness/found-<hash>.voml` and its path printed: keep it as a regression case.

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::{files_with_ext, root, Rng};
use voml_compiler::{MemoryFs, Options};

/// Pieces that make mutations reach deep into the compiler rather than stop at the XML.
const FRAGMENTS: &[&str] = &[
    "<",
    ">",
    "/>",
    "</",
    "&",
    "&lt;",
    "&amp;",
    "&#x41;",
    "&#99999999;",
    "&undeclared;",
    "\"",
    "'",
    "(",
    ")",
    "$0",
    "%1",
    "^0",
    "^0/1",
    "^9/9",
    "$99999999999",
    "#\\",
    "\"unterminated",
    ";",
    "#|",
    "|#",
    "<![CDATA[",
    "]]>",
    "<!--",
    "-->",
    "<line view=\"^0\" from=\"1 2\" to=\"3\"/>",
    "<input name=\"^0\">",
    "</input>",
    "<end-with>",
    "<description>",
    "é",
    "\u{0}",
    "\u{feff}",
    "<!DOCTYPE voml [<!ENTITY a SYSTEM \"a.voml\">]>",
    "<!ENTITY b \"&b;\">",
    "&a;",
    "&b;",
    " index=\"-5\"",
    " window=\"1e999 2\"",
    " world=\"0 0 0 0\"",
    " init=\"(\"",
    " rtype=\"-3\"",
    "<import href=\"https://x.example/y.voml\"/>",
    " use=\"nothing\"",
    "inputs=\"a.b.c.d\"",
];

/// Text that stays well-formed XML inside element content or attribute values.
const CODE: &[&str] = &[
    "(",
    ")",
    "$0 ",
    "$7 ",
    "%0 ",
    "%3 ",
    "^0 ",
    "^0/0 ",
    "^0/9 ",
    "^4 ",
    "^1/1 ",
    "\"",
    "#\\a ",
    ";",
    "#|",
    "|#",
    "'(1 . 2) ",
    "(define x) ",
    "(let ((a 1)) a) ",
    "#(1 2) ",
    "&lt;",
    "&amp;",
    "nodes ",
    "x.y ",
    "1e400 ",
    "-0 ",
    "NaN ",
    "red ",
    "blu ",
    "update ",
    "yes ",
    "^0/1 ^0/1 ",
];

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(out.len() + 1);
        match rng.below(8) {
            // Mutations that keep the XML well-formed, to reach the later phases: Scheme
            // fragments inside text or attribute values.
            6 | 7 => {
                let anchors: Vec<usize> = out
                    .windows(2)
                    .enumerate()
                    .filter(|(_, w)| {
                        (w[0] == b'>' && w[1] != b'<') || (w[0] == b'=' && w[1] == b'"')
                    })
                    .map(|(i, _)| i + 2)
                    .collect();
                if !anchors.is_empty() {
                    let at = anchors[rng.below(anchors.len())];
                    let frag = CODE[rng.below(CODE.len())].as_bytes();
                    out.splice(at..at, frag.iter().copied());
                }
            }
            0 => {
                let end = (at + 1 + rng.below(40)).min(out.len());
                out.drain(at..end);
            }
            1 => {
                let frag = FRAGMENTS[rng.below(FRAGMENTS.len())].as_bytes();
                out.splice(at..at, frag.iter().copied());
            }
            2 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] = rng.next() as u8;
            }
            3 if !out.is_empty() => {
                // Duplicate a slice (repeats elements, attributes, parentheses).
                let start = rng.below(out.len());
                let end = (start + 1 + rng.below(200)).min(out.len());
                let piece: Vec<u8> = out[start..end].to_vec();
                out.splice(at..at, piece);
            }
            4 => out.truncate(at),
            _ => {
                let len = rng.below(16);
                let junk: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                out.splice(at..at, junk);
            }
        }
    }
    out
}

/// Compiles `bytes` as `spec.voml` in an in-memory file system that also holds a few entity
/// files, and reports a panic or an overlong compilation.
fn compile_checked(bytes: &[u8]) -> Result<(), String> {
    let fs = MemoryFs::new()
        .with("spec.voml", bytes.to_vec())
        .with("a.voml", "<input name=\"^0\">(set! $0 1)</input>")
        .with("components/count-ep.voml", "&a;")
        .with("components/bars-ir.voml", "(display 1)");
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| {
        let out = voml_compiler::compile(Path::new("spec.voml"), &fs, &Options::default());
        // Rendering must not panic either (spans must be inside their files).
        let _ = voml_compiler::diag::render(&out.db, &out.diagnostics, false);
        for d in &out.diagnostics {
            let _ = voml_compiler::diag::to_json(&out.db, d);
        }
        out.diagnostics.len()
    }));
    let elapsed = started.elapsed();
    match result {
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("panicked: {msg}"))
        }
        Ok(_) if elapsed > Duration::from_secs(5) => Err(format!("took {elapsed:?}")),
        Ok(_) => Ok(()),
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut dirs = vec![root().join("examples/paper"), root().join("tests/check")];
    dirs.retain(|d| d.is_dir());
    let mut seeds: Vec<Vec<u8>> = dirs
        .iter()
        .flat_map(|d| files_with_ext(d, "voml"))
        .filter_map(|p| std::fs::read(p).ok())
        .collect();
    seeds.push(Vec::new());
    seeds
}

fn regression_files() -> Vec<PathBuf> {
    let dir = root().join("tests/robustness/regressions");
    if dir.is_dir() {
        files_with_ext(&dir, "voml")
    } else {
        Vec::new()
    }
}

#[test]
fn regressions_compile_without_panicking() {
    let mut problems = Vec::new();
    for path in regression_files() {
        let bytes = std::fs::read(&path).unwrap();
        if let Err(why) = compile_checked(&bytes) {
            problems.push(format!("{}: {why}", path.display()));
        }
    }
    support::finish(problems);
}

#[test]
fn arbitrary_and_mutated_specs_never_panic_or_hang() {
    // Keep the panic hook quiet: panics are caught and reported below.
    let budget = std::env::var("VOML_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20u64);
    let seed = std::env::var("VOML_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    println!("robustness: seed {seed}, {budget} s (VOML_FUZZ_SEED / VOML_FUZZ_SECONDS)");
    let mut rng = Rng(seed);
    let seeds = seeds();
    let deadline = Instant::now() + Duration::from_secs(budget);
    let mut cases = 0u64;
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut failure = None;
    while Instant::now() < deadline {
        let input = if rng.below(8) == 0 {
            let len = rng.below(2000);
            (0..len).map(|_| rng.next() as u8).collect()
        } else {
            let base = &seeds[rng.below(seeds.len())];
            mutate(&mut rng, base)
        };
        cases += 1;
        if let Err(why) = compile_checked(&input) {
            failure = Some((input, why));
            break;
        }
    }
    std::panic::set_hook(hook);
    println!("robustness: {cases} cases");
    if let Some((input, why)) = failure {
        let hash = input.iter().fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ *b as u64).wrapping_mul(0x100000001b3)
        });
        let path = root().join(format!("tests/robustness/found-{hash:016x}.voml"));
        let _ = std::fs::create_dir_all(path.parent().unwrap());
        let _ = std::fs::write(&path, &input);
        panic!(
            "the compiler {why} on an input saved as {} (seed {seed})",
            path.display()
        );
    }
    assert!(
        cases > 100,
        "only {cases} cases ran in {budget} s: the compiler is too slow"
    );
}
