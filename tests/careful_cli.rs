//! A careless command must not destroy the user's data: an output that is one of the
//! command's inputs (the spec, a compiled `.vo`, the trace, an entity file), however it is
//! spelt (`./x`, `dir/../x`, a symbolic or hard link), is refused before anything is
//! written; a trace that is a directory or missing is an error.

mod support;

use std::path::Path;
use std::process::Command;

const SPEC: &str = r#"<?xml version="1.0"?>
<!DOCTYPE voml [ <!ENTITY part SYSTEM "part.ent"> ]>
<voml>
  <body>
    <visual-object name="careful">
      <event-declarations>
        <data-event name="tick" rtype="entry" etype="1">
          <data-field name="ts" type="real"/>
        </data-event>
      </event-declarations>
      <info-structures>
        <variable name="n" type="int"/>
      </info-structures>
      <view-initializations>
        <view name="main" window="100 100" world="0 1 0 1"/>
      </view-initializations>
      <event-processing>
        &part;
      </event-processing>
    </visual-object>
  </body>
</voml>
"#;

const PART: &str = r#"<ep-component name="count" inputs="tick.ts" infos="n">
  <input name="^0">(set! $0 (+ $0 1))</input>
</ep-component>
"#;

const TRACE: &str = "-3 1 0.5 0 0 0\n-3 1 0.75 0 0 0\n";

fn scratch(name: &str) -> support::Scratch {
    let dir = support::Scratch::new("careful", name);
    std::fs::write(dir.join("careful.voml"), SPEC).unwrap();
    std::fs::write(dir.join("part.ent"), PART).unwrap();
    std::fs::write(dir.join("t.trf"), TRACE).unwrap();
    dir
}

/// Runs `voml` in `dir`; returns (exit code, stderr).
fn voml(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_voml"))
        .args(args)
        .current_dir(dir)
        .env_remove("VOML_PATH")
        .env("NO_COLOR", "1")
        .output()
        .expect("voml runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn unchanged(dir: &Path, file: &str, text: &str) {
    let now = std::fs::read_to_string(dir.join(file)).unwrap();
    assert_eq!(now, text, "{file} was changed");
}

#[test]
fn compile_refuses_to_write_over_its_inputs() {
    let dir = scratch("compile");
    std::os::unix::fs::symlink(dir.join("careful.voml"), dir.join("link.vo")).unwrap();
    std::fs::hard_link(dir.join("careful.voml"), dir.join("hard.vo")).unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    for output in [
        "careful.voml",
        "./careful.voml",
        "sub/../careful.voml",
        "link.vo",
        "hard.vo",
        "part.ent",
    ] {
        let (code, err) = voml(&dir, &["compile", "careful.voml", "-o", output]);
        assert_eq!(code, 1, "-o {output}: {err}");
        assert!(
            err.contains(output) && err.contains("which this command reads"),
            "-o {output}: {err}"
        );
        unchanged(&dir, "careful.voml", SPEC);
        unchanged(&dir, "part.ent", PART);
    }
    // An ordinary output is still written.
    let (code, err) = voml(&dir, &["compile", "careful.voml", "-o", "careful.vo"]);
    assert_eq!(code, 0, "{err}");
    assert!(dir.join("careful.vo").exists());
}

#[test]
fn run_refuses_outputs_that_are_inputs() {
    let dir = scratch("run");
    let (code, err) = voml(&dir, &["compile", "careful.voml"]);
    assert_eq!(code, 0, "{err}");
    let vo = std::fs::read_to_string(dir.join("careful.vo")).unwrap();
    for (spec, extra) in [
        ("careful.voml", vec!["--audio", "t.trf"]),
        ("careful.voml", vec!["--audio", "./part.ent"]),
        ("careful.voml", vec!["--audio", "careful.voml"]),
        ("careful.vo", vec!["--audio", "careful.vo"]),
        ("careful.voml", vec!["--out", "t.trf"]),
    ] {
        let mut args = vec!["run", spec, "--trace", "t.trf", "--headless"];
        if !extra.contains(&"--out") {
            args.extend(["--out", "pictures"]);
        }
        args.extend(extra.iter().copied());
        let (code, err) = voml(&dir, &args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains("which this command reads"), "{args:?}: {err}");
        assert!(!dir.join("pictures").exists(), "{args:?}: wrote pictures");
        unchanged(&dir, "t.trf", TRACE);
        unchanged(&dir, "careful.voml", SPEC);
        unchanged(&dir, "part.ent", PART);
        unchanged(&dir, "careful.vo", &vo);
    }
    // A picture of a view that would land on the trace.
    std::fs::write(dir.join("main.png"), TRACE).unwrap();
    let (code, err) = voml(
        &dir,
        &[
            "run",
            "careful.voml",
            "--trace",
            "main.png",
            "--headless",
            "--out",
            ".",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("main.png") && err.contains("which this command reads"),
        "{err}"
    );
    unchanged(&dir, "main.png", TRACE);
    // The same run with ordinary outputs works.
    let (code, err) = voml(
        &dir,
        &[
            "run",
            "careful.voml",
            "--trace",
            "t.trf",
            "--headless",
            "--out",
            "pictures",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(dir.join("pictures/main.png").exists(), "{err}");
}

#[test]
fn a_trace_that_is_a_directory_or_missing_is_an_error() {
    let dir = scratch("trace");
    std::fs::create_dir(dir.join("traces")).unwrap();
    let (code, err) = voml(
        &dir,
        &[
            "run",
            "careful.voml",
            "--trace",
            "traces",
            "--headless",
            "--out",
            "pictures",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("`traces` is a directory"), "{err}");
    let (code, err) = voml(
        &dir,
        &[
            "run",
            "careful.voml",
            "--trace",
            "missing.trf",
            "--headless",
            "--out",
            "pictures",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("missing.trf"), "{err}");
    assert!(!dir.join("pictures").exists());
}
