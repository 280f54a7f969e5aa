//! The XML Schema (`schemas/voml.xsd`) accepts every example and test spec that compiles, and
//! rejects specs that break the language's structure, as `xmllint --schema` sees them.
//!
//! Needs `xmllint` (Debian: libxml2-utils; `scripts/test` installs it). Without it the test
//! is skipped with a note, unless `VOML_REQUIRE_TOOLS` is set (CI), where it fails.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{files_with_ext, finish, root};

fn xmllint_available() -> bool {
    let found = Command::new("xmllint").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "xmllint is missing; install libxml2-utils (scripts/test does)"
        );
        eprintln!("note: xmllint not found; schema test skipped (install libxml2-utils)");
    }
    found
}

fn validate(file: &Path) -> Result<(), String> {
    let out = Command::new("xmllint")
        .args([
            "--noout",
            "--noent",
            "--nonet",
            "--schema",
            "schemas/voml.xsd",
        ])
        .arg(file)
        .current_dir(root())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn specs(dirs: &[&str]) -> Vec<PathBuf> {
    dirs.iter()
        .map(|d| root().join(d))
        .filter(|d| d.is_dir())
        .flat_map(|d| files_with_ext(&d, "voml"))
        .collect()
}

#[test]
fn the_schema_accepts_every_example() {
    if !xmllint_available() {
        return;
    }
    let files = specs(&[
        "examples/paper",
        "examples/mpicl",
        "examples/auralization",
        "stdlib-components",
        "tests/compile",
    ]);
    assert!(files.len() >= 4, "examples missing: {files:?}");
    let problems: Vec<String> = files
        .iter()
        .filter_map(|f| validate(f).err().map(|e| format!("{}:\n{e}", f.display())))
        .collect();
    finish(problems);
}

#[test]
fn the_schema_rejects_structural_mistakes() {
    if !xmllint_available() {
        return;
    }
    // Specs the compiler rejects for structural reasons must fail the schema too.
    let broken = [
        "unknown-element",
        "misplaced-element",
        "unknown-attribute",
        "missing-attribute",
        "duplicate-element",
        "bad-value",
        "bad-number",
    ];
    let problems: Vec<String> = broken
        .iter()
        .map(|name| root().join(format!("tests/check/{name}.voml")))
        .filter(|f| validate(f).is_ok())
        .map(|f| {
            format!(
                "{} passes the schema but the compiler rejects it",
                f.display()
            )
        })
        .collect();
    finish(problems);
}
