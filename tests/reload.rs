//! Re-initialisation while running (`--watch`): the spec is edited twice while records
//! stream in from a live producer. Every record is counted exactly once across the reloads
//! (the count, declared the same way, keeps its value), the new rendering shows, a structure
//! declared anew starts afresh, and a broken edit in between is reported while the running
//! visual object goes on.

mod support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::decode_png;

fn spec(color: &str, extra: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<voml><body><visual-object name="count">
  <event-declarations>
    <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures>
    <variable name="n" type="int" init="0"/>
    {extra}
  </info-structures>
  <view-initializations><view name="v" window="40 20" world="0 1 0 1"/></view-initializations>
  <event-processing>
    <ep-component name="count" inputs="e.ts" infos="n">
      <input name="^0">(set! $0 (+ $0 1))</input>
    </ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="show" views="v" infos="n" refresh="update">
      <rectangle view="^0" from="0 0" to="1 1" fill="{color}"/>
    </ir-component>
  </info-rendition>
</visual-object></body></voml>
"#
    )
}

/// Replaces the spec's text the way an editor saving it does.
/// `voml run SPEC --listen :0 --producers 1 --headless --watch --out DIR/out` with `extra`:
/// the child, what it says, and the port it listens on.
fn watch_live(
    spec: &Path,
    dir: &Path,
    extra: &[&str],
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStderr>,
    u16,
) {
    let (child, stderr, addr) = support::listening(
        Command::new(env!("CARGO_BIN_EXE_voml"))
            .arg("run")
            .arg(spec)
            .args([
                "--listen",
                ":0",
                "--producers",
                "1",
                "--headless",
                "--watch",
            ])
            .arg("--out")
            .arg(dir.join("out"))
            .args(extra)
            .env("NO_COLOR", "1")
            .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home")),
    );
    let port = addr.rsplit(':').next().unwrap().parse::<u16>().unwrap();
    (child, stderr, port)
}

fn edit(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn a_spec_edited_under_live_load_takes_over_without_losing_a_record() {
    let dir = std::env::temp_dir().join(format!("voml-reload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("count.voml");
    std::fs::write(&path, spec("red", "")).unwrap();
    let state = dir.join("state.json");
    let (mut child, mut stderr, port) =
        watch_live(&path, &dir, &["--dump-state", state.to_str().unwrap()]);

    // 4000 records over about four seconds; the spec changes after one, two and three.
    const RECORDS: usize = 4000;
    let mut producer = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    for i in 0..RECORDS {
        writeln!(producer, "-3 1 {}", i as f64 * 0.001).unwrap();
        if i % 50 == 49 {
            producer.flush().unwrap();
            std::thread::sleep(Duration::from_millis(50));
        }
        match i {
            1000 => edit(&path, &spec("blue", "")),
            // Broken: a primitive with no `to`.
            2000 => edit(&path, &spec("red", "").replace(r#" to="1 1""#, "")),
            3000 => edit(
                &path,
                &spec("green", r#"<variable name="seen" type="int" init="7"/>"#),
            ),
            _ => {}
        }
    }
    drop(producer);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(child.wait().unwrap().success(), "{rest}");

    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["infos"]["n"], RECORDS, "{rest}");
    assert_eq!(state["infos"]["seen"], 7, "{rest}");
    assert_eq!(rest.matches("reloaded `count`").count(), 2, "{rest}");
    assert!(rest.contains("kept n; started afresh: none"), "{rest}");
    assert!(rest.contains("kept n; started afresh: seen"), "{rest}");
    assert!(
        rest.contains("the edit has errors; the visual object runs on as it was"),
        "{rest}"
    );
    assert!(rest.contains("count.voml:"), "the error is located: {rest}");
    assert!(rest.contains(&format!("{RECORDS} records from")), "{rest}");
    // The last rendering is the last edit's.
    let png = decode_png(&std::fs::read(dir.join("out/v.png")).unwrap()).unwrap();
    let p = png.pixel(20, 10).unwrap();
    assert_eq!(&p[..3], &[0, 128, 0], "{rest}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_edit_of_an_included_file_is_taken_too() {
    let dir = std::env::temp_dir().join(format!("voml-reload-entity-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("count.voml");
    let part = dir.join("show.part");
    // The IR component's body comes from an external entity.
    let text = spec("red", "").replace(
        r#"<rectangle view="^0" from="0 0" to="1 1" fill="red"/>"#,
        "&Show;",
    );
    let text = text.replacen(
        "<voml>",
        "<!DOCTYPE voml [ <!ENTITY Show SYSTEM \"show.part\"> ]>\n<voml>",
        1,
    );
    std::fs::write(&path, text).unwrap();
    std::fs::write(
        &part,
        r#"<rectangle view="^0" from="0 0" to="1 1" fill="red"/>"#,
    )
    .unwrap();
    let (mut child, mut stderr, port) = watch_live(&path, &dir, &[]);
    let mut producer = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    for i in 0..40 {
        writeln!(producer, "-3 1 {}", f64::from(i) * 0.001).unwrap();
        producer.flush().unwrap();
        std::thread::sleep(Duration::from_millis(25));
        if i == 10 {
            edit(
                &part,
                r#"<rectangle view="^0" from="0 0" to="1 1" fill="blue"/>"#,
            );
        }
    }
    drop(producer);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(child.wait().unwrap().success(), "{rest}");
    assert_eq!(rest.matches("reloaded `count`").count(), 1, "{rest}");
    let png = decode_png(&std::fs::read(dir.join("out/v.png")).unwrap()).unwrap();
    assert_eq!(&png.pixel(20, 10).unwrap()[..3], &[0, 0, 255], "{rest}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Takes `vo` over from a runtime that ran the first half of `trace` (the old runtime dropped
/// at once, as a reload drops it), runs the second half: what the structures `names` ended
/// with and the faults, beside a run of the whole trace without a reload.
fn taken_over(vo: voml_ir::CompiledVo, trace: &str, names: &[&str]) -> [support::Ended; 2] {
    let (first, second) = trace.split_at(trace[..trace.len() / 2].rfind('\n').unwrap() + 1);
    let mut old = support::start_runtime(vo.clone(), false, 1000);
    support::replay_bytes(&mut old, first.as_bytes(), "t.trf", false);
    let mut new = support::start_runtime(vo.clone(), false, 1000);
    let adopted = new.adopt(&old).unwrap();
    assert!(adopted.reset.is_empty(), "{adopted:?}");
    drop(old);
    support::replay_bytes(&mut new, second.as_bytes(), "t.trf", false);
    let ended = |rt: &voml_runtime::Runtime| support::Ended {
        values: names.iter().map(|n| rt.variable(n)).collect(),
        faults: support::fault_lines(rt),
        beeps: Vec::new(),
        pixels: Vec::new(),
    };
    let (whole, _) = support::run_to_end(vo, trace.as_bytes(), names);
    [
        ended(&new),
        support::Ended {
            beeps: Vec::new(),
            pixels: Vec::new(),
            ..whole
        },
    ]
}

/// A visual object whose one input part, `body`, sees records `-3 1 TS K` (`^0/1` is K) and
/// the info structures `structures` declares as `$0 ...` (`infos`).
fn counting(structures: &str, infos: &str, body: &str) -> voml_ir::CompiledVo {
    support::compile_text(
        "counting.voml",
        &format!(
            r#"<voml><body><visual-object name="counting">
          <event-declarations>
            <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="k" type="int"/></data-event>
          </event-declarations>
          <info-structures>
            {structures}
          </info-structures>
          <event-processing>
            <ep-component name="count" inputs="e.ts.k" infos="{infos}">
              <input name="^0">{body}</input>
            </ep-component>
          </event-processing>
        </visual-object></body></voml>"#
        ),
    )
}

/// Structures that hold vectors a program may change are carried over into the new engine's
/// own heap: after the old engine is gone, the line plot's association list of vectors reads
/// and grows as it would have without the reload, and vectors of counts that `vector-set!`
/// changes, alone or as a hash table's values, go on counting.
#[test]
fn vectors_are_carried_into_the_new_engine() {
    let lineplot = support::compile_spec(Path::new("examples/paper/lineplot.voml"));
    let trace = support::lineplot_trace(600);
    // (Not `beepcount`: taking over draws once at once, which counts lines.)
    let [reloaded, whole] = taken_over(lineplot, &trace, &["currenttime", "assoclist"]);
    assert_eq!(reloaded, whole);
    assert!(reloaded.faults.is_empty(), "{:?}", reloaded.faults);
    assert!(reloaded.values[1].as_deref().unwrap().contains("(2 . #("));

    let counts = counting(
        r#"<variable name="counts" type="vector" init="(0 0 0 0)"/>
            <variable name="nested" type="list" init="()"/>"#,
        "counts nested",
        "(vector-set! $0 ^0/1 (+ 1 (vector-ref $0 ^0/1)))
                (if (null? $1) (set! $1 (list (cons 'counts $0))))",
    );
    let trace: String = (0..400).map(|r| format!("-3 1 {r} {}\n", r % 4)).collect();
    let [reloaded, whole] = taken_over(counts, &trace, &["counts", "nested"]);
    assert_eq!(reloaded, whole);
    assert_eq!(reloaded.values[0].as_deref(), Some("#(100 100 100 100)"));

    // A hash table whose values are vectors of counts.
    let table = counting(
        r##"<variable name="table" type="any" init="#f"/>"##,
        "table",
        "(if (not $0) (set! $0 (hash 'even (vector 0 0) 'odd (vector 0))))
                (let ((counts (hash-ref $0 (if (even? ^0/1) 'even 'odd))))
                  (vector-set! counts 0 (+ 1 (vector-ref counts 0))))",
    );
    let [reloaded, whole] = taken_over(table, &trace, &["table"]);
    assert!(reloaded.faults.is_empty(), "{:?}", reloaded.faults);
    // (A table shows its entries in an order of its own: they are compared as a set.)
    let entries = |ended: &support::Ended| {
        let mut lines: Vec<String> = ended.values[0]
            .as_deref()
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim().trim_end_matches(',').to_string())
            .collect();
        lines.sort();
        lines
    };
    assert_eq!(entries(&reloaded), entries(&whole));
    let shown = entries(&reloaded).join(" ");
    assert!(
        shown.contains("'even: #(200 0)") && shown.contains("'odd: #(200)"),
        "{shown}"
    );
}
