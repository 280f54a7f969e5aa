//! EPIRA semantics (seed 004 §3.1) on small specs: the order of condition and event parts,
//! `preprocess-inputs` glue on a library component, the two IR phases, `enable`, synchronous
//! rendering on a clock tick, and callback events.

use voml_runtime::{Config, Runtime};
use voml_trace::{Record, Value};

fn steel_home() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::env::set_var("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"))
    });
}

fn runtime(text: &str, fs: voml_compiler::MemoryFs) -> Runtime {
    steel_home();
    let out = voml_compiler::compile_str("spec.voml", text, &fs, &Default::default());
    let vo = out.vo.unwrap_or_else(|| {
        panic!(
            "{}",
            voml_compiler::diag::render(&out.db, &out.diagnostics, false)
        )
    });
    Runtime::headless(vo, Config::default()).expect("loads")
}

fn record(rtype: i64, etype: i64, ts: f64, rest: &[i64]) -> Record {
    let mut fields = vec![Value::Real(ts)];
    fields.extend(rest.iter().map(|v| Value::Int(*v)));
    Record {
        line: 1,
        rtype,
        etype,
        fields,
    }
}

fn spec(body: &str) -> String {
    format!("<voml><body><visual-object name=\"t\">{body}</visual-object></body></voml>")
}

#[test]
fn condition_parts_surround_the_event_parts_of_every_component() {
    let text = spec(
        r##"<event-declarations>
             <data-event name="a" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="v" type="int"/></data-event>
             <data-event name="b" rtype="entry" etype="2"><data-field name="ts" type="real"/></data-event>
           </event-declarations>
           <info-structures><variable name="log" type="list"/></info-structures>
           <event-processing>
             <ep-component name="first" inputs="a.ts.v" infos="log">
               <after condition="#t">(set! $0 (cons 'after1 $0))</after>
               <input name="^0">(set! $0 (cons (list 'first ^0/1) $0))</input>
               <before condition="(pair? (current-event))">(set! $0 (cons 'before1 $0))</before>
             </ep-component>
             <ep-component name="second" inputs="a.v b" infos="log">
               <before condition="#f">(set! $0 (cons 'never $0))</before>
               <input name="b">(set! $0 (cons 'second-b $0))</input>
               <input name="^0">(set! $0 (cons (list 'second ^0/0) $0))</input>
             </ep-component>
           </event-processing>"##,
    );
    let mut rt = runtime(&text, voml_compiler::MemoryFs::new());
    rt.process(&record(-3, 1, 0.5, &[7]), "t").unwrap();
    rt.process(&record(-3, 2, 0.6, &[]), "t").unwrap();
    rt.process(&record(-3, 99, 0.7, &[]), "t").unwrap();
    // Newest first: for every record the before parts, the event parts in document order,
    // the after parts; unmatched records still run the condition parts.
    assert_eq!(
        rt.variable("log").unwrap(),
        "(after1 before1 after1 second-b before1 after1 (second 7) (first 7) before1 after1 before1)"
    );
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
}

/// `(current-event)` is the record being processed in an event part too, in a visual object
/// without condition parts (it was `#f` there, so parts could not read a record's type or
/// its fields beyond those declared).
#[test]
fn an_event_part_sees_the_current_event_without_condition_parts() {
    let text = spec(
        r##"<event-declarations>
             <data-event name="a" rtype="entry" etype="7"><data-field name="ts" type="real"/></data-event>
           </event-declarations>
           <info-structures><variable name="seen" type="list"/></info-structures>
           <event-processing>
             <ep-component name="look" inputs="a.ts" infos="seen">
               <input name="^0">(set! $0 (cons (current-event) $0))</input>
             </ep-component>
           </event-processing>"##,
    );
    let mut rt = runtime(&text, voml_compiler::MemoryFs::new());
    rt.process(&record(-3, 7, 0.5, &[3, 0, 2, 11, 12]), "t")
        .unwrap();
    rt.process(&record(-3, 7, 0.75, &[4]), "t").unwrap();
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    assert_eq!(
        rt.variable("seen").unwrap(),
        "((-3 7 0.75 4) (-3 7 0.5 3 0 2 11 12))"
    );
}

#[test]
fn the_micro_database_gives_back_every_value_it_was_given() {
    // A key bound to the empty list (a one-element entry) reads back as the empty list, not
    // as "absent"; other values as they were stored.
    let text = spec(
        r##"<event-declarations><data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event></event-declarations>
           <info-structures><variable name="db" type="list"/><variable name="got" type="list"/></info-structures>
           <event-processing><ep-component name="c" inputs="e" infos="db got"><input name="^0">
             (set! $0 (id-put (id-put (id-put $0 1 '()) 2 '(a b)) 3 7))
             (set! $1 (list (id-get $0 1) (id-get $0 2) (id-get $0 3) (id-get $0 4)))
           </input></ep-component></event-processing>"##,
    );
    let mut rt = runtime(&text, voml_compiler::MemoryFs::new());
    rt.process(&record(-3, 1, 0.5, &[]), "t").unwrap();
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    assert_eq!(rt.variable("got").unwrap(), "(() (a b) 7 #false)");
}

#[test]
fn preprocess_inputs_glue_adapts_a_library_component_to_new_events() {
    // The paper's example: a line-plot EP component reused for a frame rate, where the glue
    // divides the frames in an interval by the interval's length (kept in an info structure).
    let library = r##"<voml-library>
      <ep-component name="onescalarprocess" inputs="onescalar.key.value" infos="currenttime assoclist">
        <input name="^0">(set! $1 (id-put $1 ^0/0 ^0/1))</input>
      </ep-component>
    </voml-library>"##;
    let text = r##"<voml><head><import href="lib.voml"/></head><body><visual-object name="t">
      <event-declarations>
        <data-event name="frames" rtype="entry" etype="7"><data-field name="ts" type="real"/><data-field name="stream" type="int"/><data-field name="count" type="int"/></data-event>
      </event-declarations>
      <info-structures>
        <variable name="now" type="real"/><variable name="rates" type="list"/><variable name="interval" type="real" init="0.5"/>
      </info-structures>
      <event-processing>
        <ep-component name="framerate" use="onescalarprocess" inputs="frames.stream.count" infos="now rates">
          <preprocess-inputs field="^0/1">(/ ^0/1 0.5)</preprocess-inputs>
        </ep-component>
      </event-processing>
    </visual-object></body></voml>"##;
    let fs = voml_compiler::MemoryFs::new().with("lib.voml", library);
    let mut rt = runtime(text, fs);
    rt.process(&record(-3, 7, 1.0, &[3, 12]), "t").unwrap();
    rt.process(&record(-3, 7, 1.5, &[4, 30]), "t").unwrap();
    assert_eq!(rt.variable("rates").unwrap(), "((3 . 24.0) (4 . 60.0))");
}

#[test]
fn phase_two_runs_after_every_phase_one_and_only_for_enabled_components() {
    let text = spec(
        r##"<event-declarations><data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event></event-declarations>
           <info-structures><variable name="seen" type="int"/></info-structures>
           <control-structures><variable name="log" type="list"/><variable name="on" type="boolean" init="#t"/></control-structures>
           <event-processing><ep-component name="count" inputs="e" infos="seen"><input name="^0">(set! $0 (+ $0 1))</input></ep-component></event-processing>
           <info-rendition>
             <ir-component name="a" controls="log on" enable="%1">
               (set! %0 (cons 'a1 %0))
               <end-with>(set! %0 (cons 'a2 %0)) (set! %1 #f)</end-with>
             </ir-component>
             <ir-component name="b" controls="log on">
               (set! %0 (cons (if %1 'b1-on 'b1-off) %0))
               <end-with>(set! %0 (cons 'b2 %0))</end-with>
             </ir-component>
           </info-rendition>"##,
    );
    let mut rt = runtime(&text, voml_compiler::MemoryFs::new());
    rt.start(0.0).unwrap();
    // The start callback renders once: a1 b1-on a2 b2; then `a` is disabled by its own phase 2.
    rt.process(&record(-3, 1, 0.1, &[]), "t").unwrap();
    assert_eq!(rt.variable("log").unwrap(), "(b2 b1-off b2 a2 b1-on a1)");
    assert_eq!(rt.variable("seen").unwrap(), "1");
}

#[test]
fn synchronous_mode_renders_on_ticks_of_trace_time_and_delivers_tick_events() {
    let text = r##"<voml><body><visual-object name="t" mode="synchronous" tick="1">
      <event-declarations>
        <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event>
        <data-event name="tick" rtype="callback" etype="3"><data-field name="ts" type="real"/></data-event>
        <data-event name="done" rtype="callback" etype="2"><data-field name="ts" type="real"/><data-field name="records" type="int"/></data-event>
      </event-declarations>
      <info-structures><variable name="ticks" type="list"/><variable name="total" type="int" init="-1"/></info-structures>
      <control-structures><variable name="renders" type="int"/></control-structures>
      <event-processing>
        <ep-component name="clock" inputs="tick.ts done.ts.records" infos="ticks total">
          <input name="tick">(set! $0 (cons ^0/0 $0))</input>
          <input name="done">(set! $1 ^1/1)</input>
        </ep-component>
      </event-processing>
      <info-rendition><ir-component name="r" controls="renders">(set! %0 (+ %0 1))</ir-component></info-rendition>
    </visual-object></body></voml>"##;
    let mut rt = runtime(text, voml_compiler::MemoryFs::new());
    for ts in [0.0, 0.2, 0.5, 1.1, 1.2, 3.5, 3.6] {
        rt.process(&record(-3, 1, ts, &[]), "t").unwrap();
    }
    rt.finish(3.6, 0).unwrap();
    // Ticks at 0, 1 and 3 (the clock jumps over the quiet second), plus the final round.
    assert_eq!(rt.variable("ticks").unwrap(), "(3.0 1.0 0.0)");
    assert_eq!(rt.variable("renders").unwrap(), "4");
    assert_eq!(rt.variable("total").unwrap(), "7");
}

#[test]
fn a_resize_reaches_ep_components_and_redraws_refresh_resize_components() {
    let text = spec(
        r##"<event-declarations>
             <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event>
             <data-event name="resized" rtype="callback" etype="4"><data-field name="ts" type="real"/><data-field name="view" type="int"/><data-field name="w" type="int"/><data-field name="h" type="int"/></data-event>
           </event-declarations>
           <info-structures><variable name="sizes" type="list"/><variable name="n" type="int"/></info-structures>
           <control-structures><variable name="draws" type="int"/></control-structures>
           <view-initializations><view name="v" window="100 80" world="0 1 0 1"/></view-initializations>
           <event-processing>
             <ep-component name="size" inputs="resized.view.w.h e" infos="sizes n">
               <input name="^0">(set! $0 (cons (list ^0/0 ^0/1 ^0/2) $0))</input>
               <input name="^1">(set! $1 (+ $1 1))</input>
             </ep-component>
           </event-processing>
           <info-rendition>
             <ir-component name="grow" views="v" infos="n" enable="(= $0 2)">
               <resize view="^0" size="200 160"/>
             </ir-component>
             <ir-component name="box" views="v" controls="draws" refresh="resize">
               (set! %0 (+ %0 1))
               <rectangle view="^0" from="0.25 0.25" to="0.75 0.75" fill="red"/>
             </ir-component>
           </info-rendition>"##,
    );
    let mut rt = runtime(&text, voml_compiler::MemoryFs::new());
    for ts in [0.1, 0.2, 0.3] {
        rt.process(&record(-3, 1, ts, &[]), "t").unwrap();
    }
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    assert_eq!(rt.variable("sizes").unwrap(), "((0 200 160))");
    // 4 rounds (start + 3 records) plus one redraw after the resize.
    assert_eq!(rt.variable("draws").unwrap(), "5");
    let png = rt.pngs().remove(0).1.unwrap();
    assert!(png.len() > 100);
    let host = rt.host();
    let info = host.drawing.read().view_info(host.views[0]).unwrap();
    assert_eq!((info.width, info.height), (200, 160));
}

#[test]
fn primitives_are_also_plain_procedures_with_options() {
    let text = spec(
        r##"<event-declarations><data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event></event-declarations>
           <view-initializations><view name="v" window="100 100" world="0 10 0 10"/></view-initializations>
           <event-processing>
             <ep-component name="draw" inputs="e">
               <input name="^0">
                 (draw-rectangle "v" 1 1 4 4 'fill "red" 'color "red")
                 (draw-line 0 6 1 6 9 'color "blue" 'thick 3)
                 (draw-text "v" 5 9 "label" 'size 8 'halign "CENTER")
                 (play-tone 440 'duration 0.5 'voice "bell")
               </input>
             </ep-component>
           </event-processing>"##,
    );
    let mut rt = runtime(&text, voml_compiler::MemoryFs::new());
    rt.process(&record(-3, 1, 0.5, &[]), "t").unwrap();
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    let sounds = rt.take_sounds();
    assert_eq!(sounds.len(), 1);
    assert!(
        matches!(&sounds[0].command, voml_runtime::host::SoundCommand::Tone { duration, voice, .. } if *duration == 0.5 && *voice == voml_sound::Voice::Bell)
    );
    let p = rt.view_pixels(0).unwrap();
    // (2.5, 2.5) in world is inside the red rectangle; x = 6 is the blue line.
    let px = |wx: f64, wy: f64| {
        p.pixel((wx * 10.0) as u32, (100.0 - wy * 10.0) as u32)
            .unwrap()
    };
    assert_eq!(&px(2.5, 2.5)[..3], &[255, 0, 0]);
    assert!(
        px(6.0, 5.0)[2] > 200 && px(6.0, 5.0)[0] < 80,
        "{:?}",
        px(6.0, 5.0)
    );
    // An odd option list is a fault that says why.
    let bad = text.replace("'thick 3)", "'thick)");
    let mut rt = runtime(&bad, voml_compiler::MemoryFs::new());
    rt.process(&record(-3, 1, 0.5, &[]), "t").unwrap();
    assert!(
        rt.faults()[0].message.contains("options come in pairs"),
        "{}",
        rt.faults()[0].message
    );
}

#[test]
fn snapshots_go_only_where_the_run_allows() {
    let dir = std::env::temp_dir().join(format!("voml-snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = spec(
        r##"<event-declarations><data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/><data-field name="n" type="int"/></data-event></event-declarations>
           <view-initializations><view name="v" window="60 40"/></view-initializations>
           <event-processing>
             <ep-component name="snap" inputs="e.ts.n">
               <input name="^0">
                 <line view="v" from="0 0" to="1 1" color="red" thick="4" cap="round"/>
                 (if (= ^0/1 1) <snapshot view="v" file="first.png"/> <snapshot view="v" file="../escape.png"/>)
               </input>
             </ep-component>
           </event-processing>"##,
    );
    steel_home();
    let out = voml_compiler::compile_str(
        "spec.voml",
        &text,
        &voml_compiler::MemoryFs::new(),
        &Default::default(),
    );
    let vo = out.vo.unwrap();
    let config = Config {
        snapshots: true,
        ..Config::default()
    };
    let mut rt = Runtime::headless(vo.clone(), config).unwrap();
    rt.process(&record(-3, 1, 0.5, &[1]), "t").unwrap();
    // The picture goes to the driver's sinks, not to a file of the runtime's choosing.
    let snaps = rt.take_snapshots();
    assert_eq!(snaps.len(), 1);
    assert_eq!(
        (snaps[0].view.as_str(), snaps[0].file.as_str(), snaps[0].at),
        ("v", "first.png", 0.5)
    );
    let mut pictures = voml_driver::Pictures::new(&dir);
    voml_driver::Sink::snapshot(&mut pictures, &snaps[0]).unwrap();
    let png = std::fs::read(dir.join("first.png")).expect("the snapshot is written");
    assert!(png.starts_with(b"\x89PNG"));
    rt.process(&record(-3, 1, 0.6, &[2]), "t").unwrap();
    assert!(rt.take_snapshots().is_empty());
    assert!(
        rt.faults()[0]
            .message
            .contains("relative .png file name inside the output directory"),
        "{:?}",
        rt.faults()
    );
    assert!(!dir.parent().unwrap().join("escape.png").exists());
    // Without an allowed directory, no snapshot at all.
    let mut rt = Runtime::headless(vo, Config::default()).unwrap();
    rt.process(&record(-3, 1, 0.5, &[1]), "t").unwrap();
    assert!(
        rt.faults()[0].message.contains("snapshots are not allowed"),
        "{:?}",
        rt.faults()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Compiling the program is not held to the per-event budget, running its top level is: a
/// large visual object (1,500 components) loads under a 20 ms budget, which its compilation
/// alone takes longer than.
#[test]
fn a_large_visual_object_loads_under_a_small_budget() {
    let mut decls = String::new();
    let mut infos = String::new();
    let mut eps = String::new();
    for i in 0..1500 {
        decls.push_str(&format!(
            r#"<data-event name="e{i}" rtype="entry" etype="{i}"><data-field name="ts" type="real"/><data-field name="p" type="int"/></data-event>"#
        ));
        infos.push_str(&format!(r#"<variable name="n{i}" type="int" init="0"/>"#));
        eps.push_str(&format!(
            r#"<ep-component name="c{i}" inputs="e{i}.ts.p" infos="n{i}"><input name="^0">(let loop ((k 0)) (if (lt k ^0/1) (loop (+ k 1)) (set! $0 (+ $0 k))))</input></ep-component>"#
        ));
    }
    let spec = format!(
        r#"<?xml version="1.0"?><voml><body><visual-object name="large"><event-declarations>{decls}</event-declarations><info-structures>{infos}</info-structures><event-processing>{eps}</event-processing></visual-object></body></voml>"#
    );
    steel_home();
    let out = voml_compiler::compile_str(
        "large.voml",
        &spec,
        &voml_compiler::MemoryFs::new(),
        &Default::default(),
    );
    let vo = out.vo.expect("the large spec compiles");
    let config = Config {
        budget: std::time::Duration::from_millis(20),
        ..Config::default()
    };
    let started = std::time::Instant::now();
    let mut rt = Runtime::headless(vo, config).unwrap_or_else(|e| panic!("does not load: {e}"));
    assert!(
        started.elapsed() > std::time::Duration::from_millis(20),
        "the program compiled within one budget: the test proves nothing"
    );
    rt.process(&record(-3, 1499, 0.5, &[3]), "t").unwrap();
    assert_eq!(rt.variable("n1499").as_deref(), Some("3"));
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
}
