//! Golden tests of the compiler: rendered and JSON diagnostics for every spec in
//! `tests/check/`, and the IR and tangled Scheme for every spec in `tests/compile/` and
//! `examples/`. Regenerate with `VOML_BLESS=1 cargo test --test golden`. Beside them, the
//! check of every example's names by reading its program.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use support::{check_golden, files_with_ext, finish, root};
use voml_compiler::{diag, Code, Options, RealFs};

fn relative(path: &Path) -> PathBuf {
    path.strip_prefix(root()).unwrap_or(path).to_path_buf()
}

fn options() -> Options {
    Options {
        search_path: vec![PathBuf::from("tests/check/include")],
        cache_dir: Some(PathBuf::from("tests/check/cache")),
    }
}

#[test]
fn diagnostics_match_their_goldens_and_cover_every_code() {
    std::env::set_current_dir(root()).unwrap();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for spec in files_with_ext(Path::new("tests/check"), "voml") {
        let spec = relative(&spec);
        let out = voml::compile_checked(&spec, &RealFs, &options());
        if out.diagnostics.is_empty() {
            problems.push(format!(
                "{}: expected diagnostics, got none",
                spec.display()
            ));
        }
        seen.extend(out.diagnostics.iter().map(|d| d.code));
        let rendered = diag::render(&out.db, &out.diagnostics, false);
        let json: String = out
            .diagnostics
            .iter()
            .map(|d| diag::to_json(&out.db, d) + "\n")
            .collect();
        problems.extend(check_golden(&spec.with_extension("stderr"), &rendered));
        problems.extend(check_golden(&spec.with_extension("json"), &json));
        // An error-free spec with warnings still compiles; a spec with errors never does.
        if out.has_errors() != out.vo.is_none() {
            problems.push(format!("{}: errors and output disagree", spec.display()));
        }
    }
    let missing: Vec<&str> = Code::ALL
        .iter()
        .filter(|c| !seen.contains(c))
        .map(|c| c.as_str())
        .collect();
    if !missing.is_empty() {
        problems.push(format!(
            "no golden test produces these codes: {}",
            missing.join(", ")
        ));
    }
    finish(problems);
}

#[test]
fn ir_and_scheme_match_their_goldens() {
    std::env::set_current_dir(root()).unwrap();
    let mut problems = Vec::new();
    let mut specs = files_with_ext(Path::new("tests/compile"), "voml");
    specs.extend(files_with_ext(Path::new("examples/paper"), "voml"));
    for spec in specs {
        let spec = relative(&spec);
        let out = voml_compiler::compile(&spec, &RealFs, &Options::default());
        let Some(vo) = out.vo else {
            problems.push(format!(
                "{} does not compile:\n{}",
                spec.display(),
                diag::render(&out.db, &out.diagnostics, false)
            ));
            continue;
        };
        let stem = spec.file_stem().unwrap().to_string_lossy().to_string();
        let dir = spec
            .parent()
            .unwrap()
            .to_string_lossy()
            .replace(['/', '\\'], "-");
        let base = Path::new("tests/compile/out").join(format!("{dir}-{stem}"));
        problems.extend(check_golden(
            &base.with_extension("ir.json"),
            &(vo.to_json() + "\n"),
        ));
        problems.extend(check_golden(&base.with_extension("scm"), &vo.program.text));
        // The IR reads back as itself.
        match voml_ir::CompiledVo::from_json(&vo.to_json()) {
            Ok(back) if back == vo => {}
            Ok(_) => problems.push(format!("{}: IR does not round-trip", spec.display())),
            Err(e) => problems.push(format!("{}: IR does not read back: {e}", spec.display())),
        }
    }
    finish(problems);
}

#[test]
fn the_catalogue_in_docs_is_up_to_date() {
    std::env::set_current_dir(root()).unwrap();
    finish(
        check_golden(
            Path::new("docs/diagnostics.md"),
            &diag::catalogue_markdown(),
        )
        .into_iter()
        .collect(),
    );
}

/// `voml check` finds the names a program defines nowhere by reading it
/// (`voml_runtime::names`), and runs in an engine only the top-level forms that compute
/// something: the walk must vouch for every example's program (else the check falls back on
/// loading it whole, as slowly as before), find nothing undefined, and leave procedure
/// definitions out of what runs.
#[test]
fn the_names_of_every_examples_program_are_checked_by_reading_it() {
    std::env::set_current_dir(root()).unwrap();
    support::quiet_steel();
    let known = voml_runtime::vo_sandbox()
        .expect("the VO engine builds")
        .global_names();
    let mut problems = Vec::new();
    let mut dirs = vec![PathBuf::from("examples")];
    let mut specs = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.ends_with("components") {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "voml") {
                specs.push(path);
            }
        }
    }
    assert!(specs.len() >= 20, "examples: {specs:?}");
    for spec in specs {
        let out = voml_compiler::compile(&spec, &RealFs, &Options::default());
        let Some(mut vo) = out.vo else {
            problems.push(format!("{} does not compile", spec.display()));
            continue;
        };
        let text = &vo.program.text;
        let Some(walked) = voml_runtime::names::walk(text, &|n| known.contains(n)) else {
            problems.push(format!("{}: the walk gives up", spec.display()));
            continue;
        };
        if !walked.unbound.is_empty() {
            problems.push(format!("{}: {:?}", spec.display(), walked.unbound));
        }
        let definitions = |t: &str| t.matches("(define (voml/").count();
        if definitions(&walked.top_level) != 0 || definitions(text) == 0 {
            problems.push(format!(
                "{}: component parts left in the top level that runs",
                spec.display()
            ));
        }
        if let Err(refused) = voml_runtime::check_program(&mut vo) {
            problems.push(format!("{}: {}", spec.display(), refused[0]));
        }
    }
    finish(problems);
}
