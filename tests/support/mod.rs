//! Shared helpers for the data-driven tests: golden files with one switch to regenerate
//! them (`VOML_BLESS=1`) and a readable diff when they differ.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root (tests run with it as the working directory).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn blessing() -> bool {
    std::env::var_os("VOML_BLESS").is_some_and(|v| v != "0")
}

/// Compares `actual` with the golden file at `path`; with `VOML_BLESS=1` rewrites it instead.
/// Returns a description of the difference, if any.
pub fn check_golden(path: &Path, actual: &str) -> Option<String> {
    if blessing() {
        std::fs::write(path, actual)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return None;
    }
    let expected = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(_) => {
            return Some(format!(
                "{}: golden file missing; run with VOML_BLESS=1 to create it",
                path.display()
            ))
        }
    };
    if expected == actual {
        return None;
    }
    let diff = similar::TextDiff::from_lines(expected.as_str(), actual);
    let mut out = format!("{} differs (- expected, + actual):\n", path.display());
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push_str(&hunk.to_string());
    }
    Some(out)
}

/// Files in `dir` with extension `ext`, sorted.
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

/// Fails with every collected problem at once.
pub fn finish(problems: Vec<String>) {
    if !problems.is_empty() {
        panic!(
            "{} problem(s):\n\n{}",
            problems.len(),
            problems.join("\n\n")
        );
    }
}
