//! Compiler speed on large generated specs: `cargo bench --bench compile`.
//!
//! Generates specs of about 0.25, 0.5, 1 and 2 MB (hundreds of EP and IR components with
//! realistic code and primitives), compiles each several times and reports the median time
//! and the time per MB, which should stay flat (linear growth). Target: a 1 MB spec in under
//! 200 ms. Beside it, once per size, what `voml check` adds: loading the program into a
//! Scheme engine (`voml_runtime::check_program`), which finds the names defined nowhere.
//! Then the whole `voml check` of specs of about 2.6, 5 and 10 MB, each in its own process under
//! `/usr/bin/time`: wall time, MB per second and peak resident memory against the spec's size
//! (targets: 5 MB/s, under 20 times the spec's size). Last, `voml run` of visual objects
//! whose spec is mostly utility code (0.5, 1 and 2 MB of procedures) on an empty trace: the
//! time to load the program into its engine, whose time per MB should stay flat too.

use std::time::Instant;

mod support;

/// A spec with `components` EP and IR component pairs.
fn spec(components: usize) -> String {
    let mut s = String::from("<voml><head><title>generated</title></head><body><visual-object name=\"big\">\n<event-declarations>\n");
    for i in 0..components {
        s.push_str(&format!(
            "<data-event name=\"ev{i}\" rtype=\"entry\" etype=\"{i}\"><data-field name=\"ts\" type=\"real\"/><data-field name=\"node\" type=\"int\"/><data-field name=\"value\" index=\"6\" type=\"real\"/></data-event>\n"
        ));
    }
    s.push_str("</event-declarations>\n<info-structures>\n");
    for i in 0..components {
        s.push_str(&format!("<variable name=\"series{i}\" type=\"list\"/><variable name=\"last{i}\" type=\"real\" init=\"0.0\"/>\n"));
    }
    s.push_str("</info-structures>\n<control-structures>\n");
    for i in 0..components {
        s.push_str(&format!("<variable name=\"dirty{i}\" type=\"boolean\"/>\n"));
    }
    s.push_str("</control-structures>\n<view-initializations>\n");
    for i in 0..components / 10 + 1 {
        s.push_str(&format!("<view name=\"view{i}\" title=\"View {i}\" window=\"600 400\" world=\"0 100 0 1\" margins=\"40 10 10 30\" adapt=\"x+:scroll y+:rescale\"/>\n"));
    }
    s.push_str("</view-initializations>\n<event-processing>\n");
    for i in 0..components {
        s.push_str(&format!(
            r#"<ep-component name="ep{i}" inputs="ev{i}.ts.node.value" infos="series{i} last{i}" controls="dirty{i}">
  <description>Keeps the series of component {i}.</description>
  <input name="^0">
    ;; Keep the newest value per node and remember the time.
    (let ((old (id-get $0 ^0/1)))
      (set! $0 (id-put $0 ^0/1 (if old (+ old ^0/2) ^0/2)))
      (set! $1 ^0/0)
      (if (gt ^0/2 0.5) (set! %0 #t) (set! %0 #f)))
  </input>
</ep-component>
"#
        ));
    }
    s.push_str("</event-processing>\n<info-rendition>\n");
    for i in 0..components {
        let v = i / 10;
        s.push_str(&format!(
            r#"<ir-component name="ir{i}" views="view{v}" infos="series{i} last{i}" controls="dirty{i}" refresh="update resize" enable="%0">
  <description>Draws the series of component {i}.</description>
  (alist-for-each
    (lambda (node value)
      <line view="^0" from="$1 0" to="$1 (/ value 10)" color="(if (even? node) &quot;red&quot; &quot;blue&quot;)" thick="2" adapt="yes"/>
      <text view="^0" coords="$1 (/ value 10)" content="(number->string node)" halign="CENTER" size="10"/>)
    $0)
  <end-with>(set! %0 #f)</end-with>
</ir-component>
"#
        ));
    }
    s.push_str("</info-rendition>\n</visual-object></body></voml>\n");
    s
}

fn main() {
    // As `voml` does: steel wants a home directory, and says so when it has none.
    std::env::set_var("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"));
    let fs = voml_compiler::MemoryFs::new();
    let options = voml_compiler::Options::default();
    println!(
        "{:>10} {:>10} {:>12} {:>12} {:>16} {:>12}",
        "components", "size", "median", "per MB", "engine's check", "per MB"
    );
    for components in [125, 250, 500, 1000] {
        let text = spec(components);
        let mb = text.len() as f64 / 1e6;
        let mut times = Vec::new();
        let mut vo = None;
        for _ in 0..7 {
            let t = Instant::now();
            let out = voml_compiler::compile_str("big.voml", &text, &fs, &options);
            times.push(t.elapsed().as_secs_f64());
            assert!(
                out.vo.is_some(),
                "generated spec has errors: {:?}",
                out.diagnostics.first()
            );
            vo = out.vo;
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        // What `voml check` adds: the program loaded into a Scheme engine, once.
        let mut vo = vo.expect("compiled");
        let t = Instant::now();
        let checked = voml_runtime::check_program(&mut vo);
        let check = t.elapsed().as_secs_f64();
        assert!(checked.is_ok(), "the engine refuses the generated spec");
        println!(
            "{:>10} {:>8.2}MB {:>10.1}ms {:>10.1}ms {:>14.1}ms {:>10.1}ms",
            components * 2,
            mb,
            median * 1e3,
            median * 1e3 / mb,
            check * 1e3,
            check * 1e3 / mb
        );
    }
    whole_checks();
    code_loads();
}

/// `voml check` of generated specs in a process of its own: wall seconds and peak resident
/// kilobytes as `/usr/bin/time` gives them, the cheapest of three.
fn whole_checks() {
    let voml = env!("CARGO_BIN_EXE_voml");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("compile-bench");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    println!();
    println!(
        "{:>10} {:>10} {:>14} {:>10} {:>12} {:>16}",
        "components", "size", "voml check", "MB/s", "peak", "peak / size"
    );
    for components in [2000, 4000, 8000] {
        let text = spec(components);
        let path = dir.join(format!("big-{components}.voml"));
        std::fs::write(&path, &text).expect("the spec is written");
        let mb = text.len() as f64 / 1e6;
        let path = path.to_str().expect("a UTF-8 path");
        let cost = support::measure(&[voml, "check", path], 3).expect("voml check passes");
        let peak_mb = cost.peak_kb as f64 * 1024.0 / 1e6;
        println!(
            "{:>10} {:>8.2}MB {:>12.2} s {:>10.1} {:>9.0} MB {:>15.1}x",
            components * 2,
            mb,
            cost.wall,
            mb / cost.wall,
            peak_mb,
            peak_mb / mb
        );
    }
}

/// A spec whose bulk is `procedures` procedures of utility code (each with a loop, calls and
/// arithmetic, as analysts write helpers), and one component calling one of them.
fn code_spec(procedures: usize) -> String {
    let mut code = String::from("(define helper-seed 1.0)\n");
    for i in 0..procedures {
        code.push_str(&format!(
            "(define (helper-{i} v k)\n  ;; helper {i}: a weighted sum of a vector\n  \
             (let loop ((j 0) (acc 0.0))\n    (if (lt j (vector-length v))\n        \
             (loop (+ j 1) (+ acc (* k (vector-ref v j)) {}))\n        \
             (if (gt acc 1000.0) (- acc {i}) (+ acc helper-seed)))))\n",
            i % 97
        ));
    }
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<voml version="1.0">
  <head><title>helpers</title></head>
  <body>
    <visual-object name="helpers">
      <event-declarations>
        <data-event name="sample" rtype="entry" etype="3000">
          <data-field name="ts" type="real"/>
        </data-event>
      </event-declarations>
      <info-structures><variable name="total" type="real"/></info-structures>
      <utility-code>
{code}
      </utility-code>
      <event-processing>
        <ep-component name="acc" inputs="sample.ts" infos="total">
          <input name="^0">(set! $0 (+ $0 (helper-0 (vector 1.0 2.0) ^0/0)))</input>
        </ep-component>
      </event-processing>
    </visual-object>
  </body>
</voml>
"#
    )
}

/// `voml run` of [`code_spec`]s on an empty trace, each in its own process: what loading the
/// program into its engine costs per MB of code (the cheapest of three).
fn code_loads() {
    let voml = env!("CARGO_BIN_EXE_voml");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("compile-bench");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let empty = dir.join("empty.trf");
    std::fs::write(&empty, "").expect("the empty trace is written");
    println!();
    println!(
        "{:>10} {:>10} {:>14} {:>10} {:>12}",
        "procedures", "size", "voml run", "s per MB", "peak"
    );
    for procedures in [1500, 3000, 6000] {
        let text = code_spec(procedures);
        let path = dir.join(format!("helpers-{procedures}.voml"));
        std::fs::write(&path, &text).expect("the spec is written");
        let out = dir.join(format!("helpers-{procedures}"));
        let mb = text.len() as f64 / 1e6;
        let args = [
            voml,
            "run",
            path.to_str().expect("a UTF-8 path"),
            "--trace",
            empty.to_str().expect("a UTF-8 path"),
            "--headless",
            "--out",
            out.to_str().expect("a UTF-8 path"),
        ];
        let cost = support::measure(&args, 3).expect("voml run passes");
        println!(
            "{:>10} {:>8.2}MB {:>12.2} s {:>10.2} {:>9.0} MB",
            procedures,
            mb,
            cost.wall,
            cost.wall / mb,
            cost.peak_kb as f64 * 1024.0 / 1e6
        );
    }
}
