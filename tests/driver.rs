//! The one driver: a paced replay holds records to their trace time, and a synchronous visual
//! object keeps refreshing on the clock while its input stalls; frames, snapshots and state
//! go to the sinks the driver owns.

mod support;

use std::io::Write;
use std::time::{Duration, Instant};

use support::{compile_text, Collect};
use voml_driver::{Options, Pictures, Sink, Source, StateDump};
use voml_runtime::{Config, Runtime};
use voml_trace::ReadOptions;

/// A synchronous VO (one tick every `tick` trace seconds) that counts records and ticks; its
/// IR component draws the count, so every render shows up in the stats.
fn ticking_vo(tick: f64) -> voml_ir::CompiledVo {
    compile_text(
        "ticks.voml",
        &format!(
            r#"<?xml version="1.0"?>
<voml><body><visual-object name="ticks" mode="synchronous" tick="{tick}">
  <event-declarations>
    <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event>
    <data-event name="tick" rtype="callback" etype="3"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures>
    <variable name="records" type="int" init="0"/>
    <variable name="ticks" type="int" init="0"/>
  </info-structures>
  <view-initializations><view name="v" window="60 20" world="0 1 0 1"/></view-initializations>
  <event-processing>
    <ep-component name="count" inputs="e.ts tick.ts" infos="records ticks">
      <input name="^0">(set! $0 (+ $0 1))</input>
      <input name="^1">(set! $1 (+ $1 1))</input>
    </ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="show" views="v" infos="ticks" refresh="update">
      <text view="^0" coords="0.1 0.2" content="(number->string $0)"/>
    </ir-component>
  </info-rendition>
</visual-object></body></voml>
"#
        ),
    )
}

fn int(rt: &Runtime, name: &str) -> i64 {
    rt.variable(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} = {:?}", rt.variable(name)))
}

#[test]
fn a_paced_replay_keeps_a_synchronous_vo_ticking_through_a_gap_in_the_trace() {
    // Two records a trace second apart, replayed at twice real time: half a second of
    // wall time with no record, in which 20 ticks of 0.05 s fall.
    let trace = "-3 1 10.0\n-3 1 11.0\n";
    let mut rt = Runtime::headless(ticking_vo(0.05), Config::default()).unwrap();
    let mut source = Source::reader(
        "gap.trf".into(),
        std::io::Cursor::new(trace),
        ReadOptions::default(),
    );
    let options = Options {
        speed: Some(2.0),
        ..Options::default()
    };
    let started = Instant::now();
    let outcome = voml_driver::run(
        &mut rt,
        &mut source,
        &options,
        &mut [],
        &mut Collect::default(),
    );
    let wall = started.elapsed();
    assert_eq!(outcome.records, 2);
    assert!(wall >= Duration::from_millis(480), "not paced: {wall:?}");
    let ticks = int(&rt, "ticks");
    assert!(
        (18..=22).contains(&ticks),
        "{ticks} ticks in a 1 s gap with a 0.05 s tick"
    );
    // The picture was redrawn for each tick: the stats count the renders.
    assert!(rt.stats().renders >= 18, "{} renders", rt.stats().renders);

    // As fast as possible, the gap is jumped over: one tick at each record (and the tick of
    // the first), as before.
    let mut rt = Runtime::headless(ticking_vo(0.05), Config::default()).unwrap();
    let mut source = Source::reader(
        "gap.trf".into(),
        std::io::Cursor::new(trace),
        ReadOptions::default(),
    );
    voml_driver::run(
        &mut rt,
        &mut source,
        &Options::default(),
        &mut [],
        &mut Collect::default(),
    );
    assert_eq!(int(&rt, "ticks"), 2);
}

#[test]
fn a_producer_that_pauses_does_not_stop_the_clock() {
    // A live producer sends one record, is quiet for 0.6 s, then sends another: at speed 1
    // the VO ticks through the silence as the records' trace time says it passes.
    let (mut producer, reader) = std::os::unix::net::UnixStream::pair().unwrap();
    let writer = std::thread::spawn(move || {
        producer.write_all(b"-3 1 0.0\n").unwrap();
        std::thread::sleep(Duration::from_millis(600));
        producer.write_all(b"-3 1 0.6\n").unwrap();
    });
    let mut rt = Runtime::headless(ticking_vo(0.1), Config::default()).unwrap();
    let mut source = Source::reader("live".into(), reader, ReadOptions::default());
    let options = Options {
        speed: Some(1.0),
        ..Options::default()
    };
    let outcome = voml_driver::run(
        &mut rt,
        &mut source,
        &options,
        &mut [],
        &mut Collect::default(),
    );
    writer.join().unwrap();
    assert_eq!(outcome.records, 2);
    assert_eq!(int(&rt, "records"), 2);
    let ticks = int(&rt, "ticks");
    assert!(
        (5..=8).contains(&ticks),
        "{ticks} ticks in 0.6 s with a 0.1 s tick"
    );
}

#[test]
fn frames_snapshots_and_state_go_to_the_sinks() {
    let vo = compile_text(
        "sinks.voml",
        r#"<?xml version="1.0"?>
<voml><body><visual-object name="sinks">
  <event-declarations>
    <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event>
  </event-declarations>
  <info-structures><variable name="n" type="int" init="0"/></info-structures>
  <view-initializations><view name="v" window="40 30" world="0 10 0 1"/></view-initializations>
  <event-processing>
    <ep-component name="count" inputs="e.ts" infos="n">
      <input name="^0">(set! $0 (+ $0 1)) (if (= $0 3) <snapshot view="v" file="third.png"/>)</input>
    </ep-component>
  </event-processing>
  <info-rendition>
    <ir-component name="bar" views="v" infos="n">
      <line view="^0" from="$0 0" to="$0 1" color="red"/>
    </ir-component>
  </info-rendition>
</visual-object></body></voml>
"#,
    );
    let dir = std::env::temp_dir().join(format!("voml-driver-sinks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = Config {
        snapshots: true,
        ..Config::default()
    };
    let mut rt = Runtime::headless(vo, config).unwrap();
    let trace: String = (0..5).map(|i| format!("-3 1 {i}.0\n")).collect();
    let mut source = Source::reader(
        "five.trf".into(),
        std::io::Cursor::new(trace),
        ReadOptions::default(),
    );
    let options = Options {
        frames_every: Some(2.0),
        ..Options::default()
    };
    let state = dir.join("state.json");
    let mut sinks: Vec<Box<dyn Sink>> = vec![
        Box::new(Pictures::new(&dir)),
        Box::new(StateDump::new(&state)),
    ];
    let outcome = voml_driver::run(
        &mut rt,
        &mut source,
        &options,
        &mut sinks,
        &mut Collect::default(),
    );
    assert!(!outcome.stopped && !outcome.sink_failed, "{outcome:?}");
    // Frames at t = 2 and 4 (before those records) and at the end.
    assert_eq!(outcome.frames, 3);
    for n in 1..=3 {
        assert!(
            dir.join(format!("frames/v-{n:06}.png")).is_file(),
            "frame {n}"
        );
    }
    assert!(dir.join("third.png").is_file(), "the snapshot");
    assert!(dir.join("v.png").is_file(), "the final picture");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(json["infos"]["n"], 5);
    assert!(
        outcome.notes.iter().any(|n| n.contains("state.json")),
        "{:?}",
        outcome.notes
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A VO that keeps what the user and the clock did: the last key, the last click (world
/// coordinates and button) and how many timer callbacks came.
fn input_vo(timer: Option<f64>) -> voml_ir::CompiledVo {
    let timer = timer.map_or(String::new(), |t| format!(r#" timer="{t}""#));
    compile_text(
        "input.voml",
        &format!(
            r#"<?xml version="1.0"?>
<voml><body><visual-object name="input"{timer}>
  <event-declarations>
    <data-event name="e" rtype="entry" etype="1"><data-field name="ts" type="real"/></data-event>
    <data-event name="key" rtype="callback" etype="5">
      <data-field name="ts" type="real"/><data-field name="view" type="int"/>
      <data-field name="key" type="string"/>
    </data-event>
    <data-event name="click" rtype="callback" etype="6">
      <data-field name="ts" type="real"/><data-field name="view" type="int"/>
      <data-field name="x" type="real"/><data-field name="y" type="real"/>
      <data-field name="button" type="int"/>
    </data-event>
    <data-event name="timer" rtype="callback" etype="7">
      <data-field name="ts" type="real"/><data-field name="wall" type="real"/>
    </data-event>
  </event-declarations>
  <info-structures>
    <variable name="key" type="any" init="&quot;none&quot;"/>
    <variable name="click" type="any" init="'()"/>
    <variable name="timers" type="int" init="0"/>
  </info-structures>
  <view-initializations><view name="v" window="100 100" world="0 10 0 10"/></view-initializations>
  <event-processing>
    <ep-component name="note" inputs="key.view.key click.view.x.y.button timer.wall" infos="key click timers">
      <input name="^0">(set! $0 ^0/1)</input>
      <input name="^1">(set! $1 (list ^1/0 ^1/1 ^1/2 ^1/3))</input>
      <input name="^2">(set! $2 (+ $2 1))</input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>
"#
        ),
    )
}

/// An interactive back end drawing in memory, whose user is `script`: given the first view
/// (once it exists), the events of one look; once the replay is over, the user quits.
/// `on_status` hears every status the driver shows.
struct FakeUser {
    inner: voml_llvo::LazyRaster,
    view: Option<voml_llvo::ViewId>,
    finished: bool,
    script: Box<dyn FnMut(voml_llvo::ViewId) -> Vec<voml_llvo::BackendEvent> + Send>,
    on_status: Box<dyn FnMut(&voml_llvo::Status) + Send>,
}

impl FakeUser {
    fn new(
        script: impl FnMut(voml_llvo::ViewId) -> Vec<voml_llvo::BackendEvent> + Send + 'static,
        on_status: impl FnMut(&voml_llvo::Status) + Send + 'static,
    ) -> FakeUser {
        FakeUser {
            inner: voml_llvo::LazyRaster::new(),
            view: None,
            finished: false,
            script: Box::new(script),
            on_status: Box::new(on_status),
        }
    }
}

impl voml_llvo::Backend for FakeUser {
    fn create_surface(
        &mut self,
        view: voml_llvo::ViewId,
        title: &str,
        width: u32,
        height: u32,
        background: voml_llvo::Color,
    ) -> Result<(), voml_llvo::LlvoError> {
        self.view.get_or_insert(view);
        self.inner
            .create_surface(view, title, width, height, background)
    }
    fn resize_surface(
        &mut self,
        view: voml_llvo::ViewId,
        width: u32,
        height: u32,
        background: voml_llvo::Color,
    ) -> Result<(), voml_llvo::LlvoError> {
        self.inner.resize_surface(view, width, height, background)
    }
    fn destroy_surface(&mut self, view: voml_llvo::ViewId) {
        self.inner.destroy_surface(view)
    }
    fn add_image(
        &mut self,
        image: voml_llvo::ImageId,
        pixels: &voml_llvo::RgbaPixels,
    ) -> Result<(), voml_llvo::LlvoError> {
        self.inner.add_image(image, pixels)
    }
    fn draw(
        &mut self,
        view: voml_llvo::ViewId,
        cmd: &voml_llvo::DrawCmd,
    ) -> Result<(), voml_llvo::LlvoError> {
        self.inner.draw(view, cmd)
    }
    fn begin_buffer(&mut self, view: voml_llvo::ViewId) -> Result<(), voml_llvo::LlvoError> {
        self.inner.begin_buffer(view)
    }
    fn flush(&mut self, view: voml_llvo::ViewId) -> Result<(), voml_llvo::LlvoError> {
        self.inner.flush(view)
    }
    fn present(&mut self, view: voml_llvo::ViewId) -> Result<(), voml_llvo::LlvoError> {
        self.inner.present(view)
    }
    fn snapshot(
        &mut self,
        view: voml_llvo::ViewId,
    ) -> Result<voml_llvo::RgbaPixels, voml_llvo::LlvoError> {
        self.inner.snapshot(view)
    }
    fn poll_events(&mut self) -> Vec<voml_llvo::BackendEvent> {
        match self.view {
            _ if self.finished => vec![voml_llvo::BackendEvent::Quit],
            Some(view) => (self.script)(view),
            None => Vec::new(),
        }
    }
    fn status(&mut self, status: &voml_llvo::Status) {
        self.finished |= status.finished;
        (self.on_status)(status);
    }
    fn interactive(&self) -> bool {
        true
    }
}

#[test]
fn keys_and_clicks_reach_the_visual_object_in_world_coordinates() {
    // The user presses `k` and clicks the right button at pixel (50, 25), once.
    let mut done = false;
    let backend = FakeUser::new(
        move |view| {
            if std::mem::replace(&mut done, true) {
                return Vec::new();
            }
            vec![
                voml_llvo::BackendEvent::Key {
                    view: Some(view),
                    key: "k".into(),
                },
                voml_llvo::BackendEvent::Click {
                    view,
                    x: 50.0,
                    y: 25.0,
                    button: 3,
                },
            ]
        },
        |_| {},
    );
    let mut rt = Runtime::new(input_vo(None), Box::new(backend), Config::default()).unwrap();
    // Two records 0.3 s apart in wall time, so the driver looks at the window between them.
    let (mut producer, reader) = std::os::unix::net::UnixStream::pair().unwrap();
    let writer = std::thread::spawn(move || {
        producer.write_all(b"-3 1 0.0\n").unwrap();
        std::thread::sleep(Duration::from_millis(300));
        producer.write_all(b"-3 1 0.3\n").unwrap();
    });
    let mut source = Source::reader("live".into(), reader, ReadOptions::default());
    let outcome = voml_driver::run(
        &mut rt,
        &mut source,
        &Options::default(),
        &mut [],
        &mut Collect::default(),
    );
    writer.join().unwrap();
    assert_eq!(outcome.records, 2);
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    assert_eq!(rt.variable("key").as_deref(), Some("\"k\""));
    // Pixel (50, 25) of a 100 x 100 window on the world [0, 10] x [0, 10]: x 5, y 7.5 (y up).
    assert_eq!(rt.variable("click").as_deref(), Some("(0 5.0 7.5 3)"));
    // No `timer` attribute: no timer callbacks.
    assert_eq!(int(&rt, "timers"), 0);
}

#[test]
fn a_run_that_keeps_time_calls_the_timer_on_the_wall_clock() {
    // Half a second of trace replayed at speed 1 with a 0.1 s timer: about five callbacks.
    let trace = "-3 1 0.0\n-3 1 0.5\n";
    let replay = |speed: Option<f64>| {
        let mut rt = Runtime::headless(input_vo(Some(0.1)), Config::default()).unwrap();
        let mut source = Source::reader(
            "timer.trf".into(),
            std::io::Cursor::new(trace),
            ReadOptions::default(),
        );
        let options = Options {
            speed,
            ..Options::default()
        };
        voml_driver::run(
            &mut rt,
            &mut source,
            &options,
            &mut [],
            &mut Collect::default(),
        );
        assert!(rt.faults().is_empty(), "{:?}", rt.faults());
        int(&rt, "timers")
    };
    let paced = replay(Some(1.0));
    assert!((3..=6).contains(&paced), "{paced} timer callbacks in 0.5 s");
    // As fast as possible there is no wall clock to keep: no timer callbacks.
    assert_eq!(replay(None), 0);
}

#[test]
fn window_keys_pause_step_and_seek_back() {
    support::quiet_steel();
    let spec = support::root().join("examples/mpicl/count-events.voml");
    let vo = support::compile_spec(&spec);
    let trace = support::root().join("examples/mpicl/ring.trf");
    let paused_at = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    // Pause (at the first look), step, back to the start, three steps, back one moment
    // (the first eight records share their time: to the start), then play to the end; one
    // key a look. The record count is noted each time the replay shows as paused anew.
    let mut keys: std::collections::VecDeque<&str> = [
        "Space",
        "ArrowRight",
        "Home",
        "ArrowRight",
        "ArrowRight",
        "ArrowRight",
        "ArrowLeft",
        "Space",
    ]
    .into();
    let noted = paused_at.clone();
    let mut last = None;
    let backend = FakeUser::new(
        move |view| {
            keys.pop_front()
                .map(|key| voml_llvo::BackendEvent::Key {
                    view: Some(view),
                    key: key.into(),
                })
                .into_iter()
                .collect()
        },
        move |status| {
            let now = (status.paused, status.records);
            if status.paused && last != Some(now) {
                noted.lock().unwrap().push(status.records);
            }
            last = Some(now);
        },
    );
    let mut rt = Runtime::new(vo.clone(), Box::new(backend), Config::default()).unwrap();
    let mut source = Source::file(&trace, ReadOptions::default()).unwrap();
    let mut restart = |old: &mut Runtime| {
        let fresh = Runtime::new(vo.clone(), old.take_backend(), Config::default()).ok()?;
        Some((fresh, Source::file(&trace, ReadOptions::default()).ok()?))
    };
    let outcome = voml_driver::run_controlled(
        &mut rt,
        &mut source,
        &Options::default(),
        None,
        voml_driver::Hooks {
            restart: Some(&mut restart),
            reload: None,
        },
        &mut [],
        &mut Collect::default(),
    );
    // The first pause comes at the first look, wherever the reader has got to.
    let paused_at = paused_at.lock().unwrap().clone();
    let p = paused_at[0];
    assert_eq!(paused_at, [p, p + 1, 0, 1, 2, 3, 0]);
    assert_eq!(outcome.records, 1360);
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    // After starting over, the counts are those of one straight replay.
    let mut alone = Runtime::headless(support::compile_spec(&spec), Config::default()).unwrap();
    voml_driver::run(
        &mut alone,
        &mut Source::file(&trace, ReadOptions::default()).unwrap(),
        &Options::default(),
        &mut [],
        &mut Collect::default(),
    );
    assert_eq!(rt.variable("counts"), alone.variable("counts"));
}
