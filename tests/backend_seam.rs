//! The back-end seam: what the runtime asks of a back end is a stream of plain values
//! (`voml_llvo::Command`), serialisable, that replays into another back end to the same
//! pixels; and the stream says which component drew what, so that a back end keeping what
//! was drawn (a vector display list, a page) removes exactly an undrawn frame.

mod support;

use std::collections::HashMap;
use std::path::Path;

use support::{compile_spec, replay_file, root};
use voml_llvo::{Backend, Command, DrawCmd, Mark, RasterBackend, Recorder, ViewId};
use voml_runtime::{Config, Runtime};

/// Runs `spec` over `trace` drawing through a recorder in front of the raster back end;
/// returns the runtime and the commands as JSON lines.
fn recorded_run(spec: &Path, trace: &Path) -> (Runtime, Vec<String>) {
    support::quiet_steel();
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = lines.clone();
    let backend = Recorder::new(RasterBackend::new(), move |c: &Command| {
        sink.lock()
            .unwrap()
            .push(serde_json::to_string(c).expect("a command serialises"));
    });
    // Every round drawn, as for a recorded page: the stream of each frame.
    let config = Config {
        defer_displays: false,
        ..Config::default()
    };
    let mut rt = Runtime::new(compile_spec(spec), Box::new(backend), config)
        .expect("the visual object loads");
    let replayed = replay_file(&mut rt, trace);
    assert!(!replayed.summary.stopped, "{:?}", rt.faults());
    let lines = lines.lock().unwrap().clone();
    (rt, lines)
}

/// The same commands, read back from JSON, carried out on a fresh raster back end.
fn replay_into_raster(lines: &[String]) -> RasterBackend {
    let mut raster = RasterBackend::new();
    for line in lines {
        let command: Command = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("a recorded command does not read back ({e}): {line}"));
        command.apply(&mut raster).expect("the command applies");
    }
    raster
}

#[test]
fn a_recorded_command_stream_replays_to_the_same_pixels() {
    let cases = [
        (
            "examples/paper/bandwidth.voml",
            "examples/paper/bandwidth.trf",
        ),
        // Scrolling and adaptive rescaling: shifts and resampled areas.
        (
            "examples/paper/lineplot.voml",
            "examples/paper/lineplot.trf",
        ),
        // Undraw (refresh="update").
        ("tests/render/refresh-update.voml", "tests/render/steps.trf"),
        // Off-screen buffers.
        ("tests/render/buffer.voml", "tests/render/steps.trf"),
    ];
    for (spec, trace) in cases {
        let (mut rt, lines) = recorded_run(&root().join(spec), &root().join(trace));
        assert!(lines.len() > 10, "{spec}: only {} commands", lines.len());
        let mut replayed = replay_into_raster(&lines);
        let views = rt.vo().views.len();
        for view in 0..views {
            let direct = support::view_pixels(&mut rt, view);
            let again = replayed.snapshot(ViewId(view as u32)).unwrap();
            assert_eq!(
                (direct.width, direct.height),
                (again.width, again.height),
                "{spec}"
            );
            let differing = direct
                .data
                .chunks_exact(4)
                .zip(again.data.chunks_exact(4))
                .filter(|(a, b)| a != b)
                .count();
            assert_eq!(
                differing, 0,
                "{spec}: view {view} differs in {differing} pixels"
            );
        }
        // The recorder changes nothing: a plain headless run gives the same PNGs.
        let mut plain =
            Runtime::headless(compile_spec(&root().join(spec)), Config::default()).unwrap();
        replay_file(&mut plain, &root().join(trace));
        assert_eq!(rt.pngs(), plain.pngs(), "{spec}");
    }
}

/// A display list that keeps every command with its mark and removes an undrawn frame
/// exactly: the least a vector back end does.
#[derive(Default)]
struct DisplayList {
    items: HashMap<ViewId, Vec<(Option<Mark>, DrawCmd)>>,
}

impl DisplayList {
    fn apply(&mut self, command: &Command) {
        match command {
            Command::Draw { view, cmd } => self
                .items
                .entry(*view)
                .or_default()
                .push((None, cmd.clone())),
            Command::DrawOwned { view, mark, cmd } => self
                .items
                .entry(*view)
                .or_default()
                .push((Some(*mark), cmd.clone())),
            Command::Undraw { mark, .. } => {
                for list in self.items.values_mut() {
                    list.retain(|(m, _)| *m != Some(*mark));
                }
            }
            _ => {}
        }
    }
}

#[test]
fn the_stream_says_who_drew_what_so_an_undrawn_frame_can_be_removed_exactly() {
    let (rt, lines) = recorded_run(
        &root().join("tests/render/refresh-update.voml"),
        &root().join("tests/render/steps.trf"),
    );
    let commands: Vec<Command> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let undraws: Vec<Mark> = commands
        .iter()
        .filter_map(|c| match c {
            Command::Undraw { mark, .. } => Some(*mark),
            _ => None,
        })
        .collect();
    let records = rt.stats().records as usize;
    assert!(records >= 3, "the trace has {records} records");
    // The square (refresh="update") undraws its last frame before each new one: one undraw
    // per render after the first, each of the frame drawn just before.
    assert!(
        undraws.len() >= records - 1,
        "{} undraws for {records} records",
        undraws.len()
    );
    assert!(undraws
        .windows(2)
        .all(|w| w[0].owner == w[1].owner && w[1].frame == w[0].frame + 1));
    let square = undraws[0].owner;
    let mut list = DisplayList::default();
    for c in &commands {
        list.apply(c);
    }
    let items = &list.items[&ViewId(0)];
    let frames: Vec<u64> = items
        .iter()
        .filter_map(|(m, _)| m.filter(|m| m.owner == square).map(|m| m.frame))
        .collect();
    // Only the last square is left, and all of it (its fill and outline).
    assert!(!frames.is_empty());
    assert!(frames.iter().all(|&f| f == frames[0]), "{frames:?}");
    assert_eq!(frames[0], undraws.last().unwrap().frame + 1);
    // The trail, drawn by a component without update, keeps every step.
    let trail = items
        .iter()
        .filter(|(m, c)| m.is_none() && matches!(c, DrawCmd::Fill { .. }))
        .count();
    assert!(
        trail >= records,
        "{trail} trail circles for {records} records"
    );
}

#[test]
fn commands_and_sound_commands_are_plain_values_in_json() {
    let command = Command::Undraw {
        mark: Mark {
            owner: voml_llvo::OwnerId(2),
            frame: 7,
        },
        erase: vec![(
            ViewId(0),
            DrawCmd::Clear {
                rect: voml_llvo::PxRect::new(1, 2, 3, 4),
                color: voml_llvo::Color::rgb(1, 2, 3),
            },
        )],
    };
    let json = serde_json::to_string(&command).unwrap();
    assert!(json.contains(r#""op":"undraw""#), "{json}");
    assert_eq!(serde_json::from_str::<Command>(&json).unwrap(), command);
    let sound = voml_runtime::TimedSound {
        at: 1.5,
        command: voml_runtime::SoundCommand::Tone {
            hz: 440.0,
            duration: 0.25,
            volume: 0.8,
            pan: -0.5,
            voice: voml_sound::Voice::Marimba,
            channel: None,
        },
    };
    let json = serde_json::to_string(&sound).unwrap();
    assert!(json.contains(r#""voice":"marimba""#), "{json}");
    assert_eq!(
        serde_json::from_str::<voml_runtime::TimedSound>(&json).unwrap(),
        sound
    );
    // An unknown voice is refused when read, not played as another one.
    let bad = json.replace("marimba", "kazoo");
    assert!(serde_json::from_str::<voml_runtime::TimedSound>(&bad).is_err());
}
