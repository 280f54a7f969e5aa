//! Displays drawn when a picture is needed: a component with `refresh="update changed"`,
//! alone in its views, runs its phase 1 once per picture instead of once per round, and the
//! pictures are those of a run that draws it every round (`docs/language.md` §8.3).

mod support;

use std::path::{Path, PathBuf};

use support::{compile_text, decode_png, quiet_steel};
use voml_runtime::{Config, Runtime};
use voml_trace::parse_line;

/// A count of records, shown as a bar and its number by `show` (REFRESH), and a square drawn
/// once by `frame` in a view of its own; SHARED may add a component to the bar's view.
const SPEC: &str = r#"<?xml version="1.0"?>
<voml><body><visual-object name="v">
  <event-declarations>
    <data-event name="e" rtype="mark" etype="1"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures><variable name="n" type="int" init="0"/></info-structures>
  <view-initializations>
    <view name="bar" window="200 60" world="0 200 0 6"/>
    <view name="box" window="60 60" world="0 1 0 1"/>
  </view-initializations>
  <event-processing>
    <ep-component name="count" inputs="e.ts" infos="n"><input name="^0">(set! $0 (+ $0 1))</input></ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="show" views="bar" infos="n" refresh="REFRESH">
      <rectangle view="^0" from="0 1" to="$0 3" fill="blue" color="blue"/>
      <text view="^0" coords="2 4" content="(number->string $0)" size="12"/>
    </ir-component>
    <ir-component name="frame" views="box" refresh="changed">
      <rectangle view="^0" from="0.25 0.25" to="0.75 0.75" fill="red" color="red"/>
    </ir-component>
    SHARED
  </info-rendition>
</visual-object></body></voml>
"#;

/// A profiled headless runtime for `vo`, deferring displays or not.
fn load(vo: voml_ir::CompiledVo, defer: bool) -> Runtime {
    load_with(vo, defer, false)
}

/// The same, told whether pictures are looked at only at the end (`voml run --headless`
/// without frame files or commands), which lets synchronous visual objects defer too.
fn load_with(vo: voml_ir::CompiledVo, defer: bool, pictures_at_end: bool) -> Runtime {
    quiet_steel();
    let config = Config {
        strict: false,
        profile: true,
        defer_displays: defer,
        pictures_at_end,
        ..Config::default()
    };
    Runtime::headless(vo, config).unwrap_or_else(|e| panic!("does not load: {e}"))
}

fn runtime(refresh: &str, shared: &str, defer: bool) -> Runtime {
    let mut spec = SPEC.replace("REFRESH", refresh).replace("SHARED", shared);
    if !refresh.contains("changed") {
        spec = spec.replace(
            r#"content="(number->string $0)""#,
            r#"content="(let ((n $0)) (number->string n))""#,
        );
    }
    load(compile_text("deferred.voml", &spec), defer)
}

/// Gives records `from..to` (event 1, one a second) to the runtime.
fn feed(rt: &mut Runtime, from: u32, to: u32) {
    for k in from..to {
        let record = parse_line(&format!("-2 1 {k}.5 0 0 0"), u64::from(k) + 1).unwrap();
        rt.process(&record, "t.trf").expect("not strict");
    }
}

/// How many times `component`'s phase 1 ran.
fn phase1_runs(rt: &Runtime, component: &str) -> u64 {
    rt.profile()
        .expect("profiled")
        .iter()
        .filter(|r| r.component == format!("IR component `{component}`") && r.part == "phase 1")
        .map(|r| r.calls)
        .sum()
}

/// Every view's PNG, decoded.
fn pictures(rt: &mut Runtime) -> Vec<Vec<u8>> {
    rt.pngs()
        .into_iter()
        .map(|(_, png)| decode_png(&png.expect("a picture")).unwrap().data)
        .collect()
}

/// How many pixels of the blue bar's row are blue, from the left (the view is 200 pixels
/// wide for 200 records).
fn bar_end(rt: &mut Runtime) -> u32 {
    let pixels = rt.view_pixels(0).expect("the bar's view");
    (0..pixels.width)
        .take_while(|&x| pixels.pixel(x, 40).is_some_and(|p| p[..3] == [0, 0, 255]))
        .count() as u32
}

#[test]
fn a_display_alone_in_its_views_runs_once_per_picture_and_draws_the_same() {
    let mut every = runtime("update changed", "", false);
    feed(&mut every, 0, 150);
    every.finish(150.0, 0).unwrap();
    let mut deferred = runtime("update changed", "", true);
    feed(&mut deferred, 0, 150);
    deferred.finish(150.0, 0).unwrap();
    assert!(every.faults().is_empty() && deferred.faults().is_empty());
    // 152 rounds: at the start, after each record, at the end. Drawn every round, the
    // display skips the last (nothing it reads changed) and runs 151 times; deferred, it
    // skips them all and runs once, for the picture at the end.
    assert_eq!(every.stats().renders, 152);
    assert_eq!(phase1_runs(&every, "show"), 151);
    assert_eq!(every.stats().deferred, 0);
    assert_eq!(phase1_runs(&deferred, "show"), 1);
    assert_eq!(deferred.stats().deferred, 152);
    // The other display is not deferred (it does not undraw what it drew): reading nothing,
    // it draws once, as `changed` lets it, either way.
    assert_eq!(phase1_runs(&deferred, "frame"), 1);
    assert_eq!(pictures(&mut deferred), pictures(&mut every));
    assert!((150..=151).contains(&bar_end(&mut deferred)));
}

#[test]
fn a_picture_taken_midway_shows_the_state_of_its_moment() {
    let mut rt = runtime("update changed", "", true);
    feed(&mut rt, 0, 40);
    // (Its outline reaches half a pixel beyond.)
    assert!((40..=41).contains(&bar_end(&mut rt)));
    feed(&mut rt, 40, 100);
    assert!((100..=101).contains(&bar_end(&mut rt)));
    // Two pictures looked at, two runs; the rounds between cost nothing.
    assert_eq!(phase1_runs(&rt, "show"), 2);
    // Nothing changed since the second picture: the end's round skips it, as `changed`
    // does, and the picture at the end is the one it drew.
    let before = rt.stats().clone();
    rt.finish(100.0, 0).unwrap();
    assert_eq!(rt.stats().deferred, before.deferred);
    assert!(rt.stats().unchanged > before.unchanged);
    assert_eq!(phase1_runs(&rt, "show"), 2);
    feed(&mut rt, 100, 101);
    assert!((101..=102).contains(&bar_end(&mut rt)));
    assert_eq!(phase1_runs(&rt, "show"), 3);
}

#[test]
fn displays_sharing_a_view_or_redrawn_without_undrawing_run_every_round() {
    // Another component drawing in the bar's view: the order of their drawings makes the
    // picture, so both run every round.
    let shared = r#"<ir-component name="over" views="bar" infos="n" refresh="update">
      <rectangle view="^0" from="0 2" to="(/ $0 2) 2.5" fill="green" color="green"/>
    </ir-component>"#;
    let mut rt = runtime("update changed", shared, true);
    feed(&mut rt, 0, 30);
    rt.finish(30.0, 0).unwrap();
    assert_eq!(rt.stats().deferred, 0);
    assert_eq!(phase1_runs(&rt, "show"), 32);
    // Without `changed`, a display whose phase 1 does more than draw (a `let`) promises
    // nothing of what it reads: every round.
    let mut rt = runtime("update", "", true);
    feed(&mut rt, 0, 30);
    rt.finish(30.0, 0).unwrap();
    assert_eq!(rt.stats().deferred, 0);
    assert_eq!(phase1_runs(&rt, "show"), 32);
}

#[test]
fn a_fault_of_a_deferred_display_names_the_round_it_draws() {
    // The display fails once the count passes 20: drawn every round, after record 21;
    // deferred, when its picture is needed, against the last record before it.
    let failing = SPEC
        .replace("REFRESH", "update changed")
        .replace("SHARED", "")
        .replace(
            r#"content="(number->string $0)""#,
            r#"content="(if (gt $0 20) (car '()) (number->string $0))""#,
        );
    let run = |defer: bool| {
        let mut rt = load(compile_text("failing.voml", &failing), defer);
        feed(&mut rt, 0, 50);
        let _ = rt.pngs();
        rt
    };
    let every = run(false);
    let deferred = run(true);
    for rt in [&every, &deferred] {
        assert_eq!(rt.faults().len(), 1, "{:?}", rt.faults());
        let fault = &rt.faults()[0];
        assert_eq!(fault.component.as_deref(), Some("IR component `show`"));
        assert_eq!(fault.part.as_deref(), Some("phase 1"));
        assert!(fault
            .location
            .as_deref()
            .is_some_and(|l| l.starts_with("failing.voml:")));
        assert_eq!(
            rt.disabled_components(),
            vec!["IR component `show`".to_string()]
        );
    }
    assert_eq!(every.faults()[0].event.as_ref().map(|e| e.record), Some(21));
    assert_eq!(
        deferred.faults()[0].event.as_ref().map(|e| e.record),
        Some(50)
    );
}

/// The library's heaviest examples draw the same pictures deferred as drawn every round
/// (their displays are all `update changed`, each alone in its view). They are synchronous:
/// their displays are deferred only when the pictures are looked at only at the end, and
/// drawn every round otherwise (records change what they read between two rounds, so a
/// picture taken between them must be the last round's).
#[test]
fn the_library_examples_draw_the_same_deferred() {
    let Some(trace) = support::shared_trace("mpicl-trace3-bcast10.trf") else {
        return;
    };
    for name in ["paragraph", "broadcasts", "dashboard"] {
        let spec = support::root().join(format!("examples/library/{name}.voml"));
        let run = |defer: bool| {
            let mut rt = load_with(support::compile_spec(&spec), defer, true);
            support::replay_path(&mut rt, &trace);
            assert!(rt.faults().is_empty(), "{name}: {:?}", rt.faults());
            let deferred = rt.stats().deferred;
            (pictures(&mut rt), deferred)
        };
        let (every, none) = run(false);
        let (deferred, skipped) = run(true);
        assert_eq!(none, 0);
        // Pictures may be looked at before the end: every round.
        let mut rt = load_with(support::compile_spec(&spec), true, false);
        support::replay_path(&mut rt, &support::root().join("examples/mpicl/ring.trf"));
        assert!(rt.stats().renders >= 2, "{name}: {:?}", rt.stats());
        assert_eq!(rt.stats().deferred, 0, "{name}");
        assert!(skipped > 100, "{name}: {skipped} rounds deferred");
        assert!(every == deferred, "{name}: the pictures differ");
    }
}

/// A spec and a trace of 100 records (one a second) in a directory of their own, run by
/// the `voml` binary.
struct Cli {
    dir: PathBuf,
    spec: PathBuf,
    trace: PathBuf,
}

impl Cli {
    fn new(name: &str, spec: &str) -> Cli {
        let dir = std::env::temp_dir().join(format!("voml-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (spec_path, trace) = (dir.join("spec.voml"), dir.join("t.trf"));
        std::fs::write(&spec_path, spec).unwrap();
        let records: String = (0..100).map(|k| format!("-2 1 {k}.5 0 0 0\n")).collect();
        std::fs::write(&trace, records).unwrap();
        Cli {
            dir,
            spec: spec_path,
            trace,
        }
    }

    /// Runs `voml run --headless --profile` with `extra`, into `out`: the output directory,
    /// and how many times the display `show` ran.
    fn run(&self, out: &str, extra: &[&str]) -> (PathBuf, u64) {
        let out = self.dir.join(out);
        let done = std::process::Command::new(env!("CARGO_BIN_EXE_voml"))
            .arg("run")
            .arg(&self.spec)
            .arg("--trace")
            .arg(&self.trace)
            .args(["--headless", "--profile", "--out"])
            .arg(&out)
            .args(extra)
            .env("NO_COLOR", "1")
            .output()
            .expect("voml runs");
        let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
        assert!(done.status.success(), "{stderr}");
        let runs = stderr
            .lines()
            .find(|l| l.contains("IR component `show`") && l.contains("phase 1"))
            .and_then(|l| {
                l.split("phase 1")
                    .nth(1)?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no profile row for the display:\n{stderr}"));
        (out, runs)
    }
}

impl Drop for Cli {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `voml run --frames-every`: each frame file shows the deferred display as it stood at its
/// frame time; `--every-round` draws it in every round, with the same frames.
#[test]
fn frame_files_show_each_moment() {
    let cli = Cli::new(
        "deferred",
        &SPEC
            .replace("REFRESH", "update changed")
            .replace("SHARED", ""),
    );
    let frames = |out: &str, every_round: bool| -> Vec<u32> {
        let mut extra = vec!["--frames-every", "25"];
        if every_round {
            extra.push("--every-round");
        }
        let (out, runs) = cli.run(out, &extra);
        // The display runs once per frame and once for the end, or once per round.
        if every_round {
            assert!(runs > 100, "{runs} runs");
        } else {
            assert!(runs <= 5, "{runs} runs");
        }
        let mut names: Vec<_> = walk(&out.join("frames"))
            .into_iter()
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("bar-"))
            .collect();
        names.sort();
        names
            .iter()
            .map(|p| {
                let pixels = decode_png(&std::fs::read(p).unwrap()).unwrap();
                (0..pixels.width)
                    .take_while(|&x| pixels.pixel(x, 40).is_some_and(|q| q[..3] == [0, 0, 255]))
                    .count() as u32
            })
            .collect()
    };
    let deferred = frames("deferred", false);
    // Frames at 25.5, 50.5 and 75.5 s, before the records of those times: 25, 50 and 75
    // records counted (the bar's outline reaches half a pixel beyond); then the end's.
    assert_eq!(deferred.len(), 4, "{deferred:?}");
    for (bar, n) in deferred.iter().zip([25, 50, 75, 100]) {
        assert!((n..=n + 1).contains(bar), "{deferred:?}");
    }
    assert_eq!(frames("every", true), deferred);
}

/// A phase 1 made only of drawing primitives with pure arguments keeps by construction the
/// promise `changed` makes: the compiler finds it (`phase1_pure`), and such a display with
/// `refresh="update"` alone is deferred too, with the same pictures. A phase 1 that does
/// anything else, or a program that redefines what its arguments rest on, is not.
#[test]
fn a_phase_1_that_only_draws_is_found_and_deferred() {
    let compiled = |refresh: &str, text: &str, utility: &str| {
        let spec = SPEC
            .replace("REFRESH", refresh)
            .replace("SHARED", "")
            .replace(
                r#"content="(number->string $0)""#,
                &format!("content=\"{text}\""),
            )
            .replace(
                "<view-initializations>",
                &format!("<utility-code>{utility}</utility-code><view-initializations>"),
            );
        compile_text("found.voml", &spec)
    };
    let vo = compiled("update", "(number->string $0)", "");
    let show = &vo.ir_components[0];
    assert!(!show.refresh.changed);
    assert_eq!(
        show.phase1_pure.as_ref().map(|r| r.infos.clone()),
        Some(vec![0])
    );
    for (text, utility) in [
        // A procedure of the program's own.
        ("(label $0)", "(define (label n) (number->string n))"),
        // A name its arguments rest on, bound by the program.
        ("(number->string $0)", "(define (number->string n) \"x\")"),
        // Something else than drawing at the top.
        ("(begin (set! $0 0) &quot;x&quot;)", ""),
    ] {
        let vo = compiled("update", text, utility);
        assert_eq!(vo.ir_components[0].phase1_pure, None, "{text} {utility}");
    }
    let run = |defer: bool| {
        let mut rt = load(compiled("update", "(number->string $0)", ""), defer);
        feed(&mut rt, 0, 80);
        rt.finish(80.0, 0).unwrap();
        assert!(rt.faults().is_empty(), "{:?}", rt.faults());
        let runs = phase1_runs(&rt, "show");
        (pictures(&mut rt), runs)
    };
    let (every, runs_every) = run(false);
    let (deferred, runs_deferred) = run(true);
    assert!(runs_every > 80, "{runs_every}");
    assert_eq!(runs_deferred, 1);
    assert_eq!(deferred, every);
}

/// A synchronous visual object renders on ticks of trace time, and records change what its
/// displays read between two ticks: a frame file must show the last tick's round, so with
/// frame files its displays are drawn every round, and the frames are those of
/// `--every-round`; without them (pictures only at the end) they wait for the end.
#[test]
fn a_synchronous_run_with_frame_files_draws_every_round() {
    let cli = Cli::new(
        "deferred-sync",
        &SPEC
            .replace("REFRESH", "update changed")
            .replace("SHARED", "")
            .replace(
                r#"<visual-object name="v">"#,
                r#"<visual-object name="v" mode="synchronous" tick="10">"#,
            ),
    );
    let files = |out: &Path| -> Vec<Vec<u8>> {
        let mut files = walk(out);
        files.sort();
        files.iter().map(|p| std::fs::read(p).unwrap()).collect()
    };
    let (framed, runs) = cli.run("framed", &["--frames-every", "25"]);
    let (every, _) = cli.run("every", &["--frames-every", "25", "--every-round"]);
    assert!(files(&framed).len() > 4);
    assert!(
        files(&framed) == files(&every),
        "the frames differ from every round's"
    );
    assert!(runs > 5, "{runs} runs");
    // Pictures only at the end: one run of the display, the same picture.
    let (at_end, runs) = cli.run("at-end", &[]);
    assert_eq!(runs, 1);
    let (at_end_every, _) = cli.run("at-end-every", &["--every-round"]);
    assert!(files(&at_end) == files(&at_end_every));
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
