//! `voml run` in a window: the engine replays the trace on a worker thread (steel's engine is
//! not `Send`), and the main thread shows the views with `voml-window`, sending back resizes,
//! zooms, pans and quit.

use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

use voml_ir::CompiledVo;
use voml_runtime::Runtime;
use voml_trace::{ReadOptions, TraceReader};
use voml_window::{FromUi, ToUi, ViewWindowSpec, WindowOptions};

use crate::run::RunArgs;

/// Frames go to the screen at most this often while the trace is replayed.
const FRAME_INTERVAL: Duration = Duration::from_millis(16);

pub fn run(args: &RunArgs, vo: CompiledVo) -> ExitCode {
    let specs: Vec<ViewWindowSpec> = vo
        .views
        .iter()
        .enumerate()
        .map(|(i, v)| ViewWindowSpec {
            id: i as u32,
            title: v.title.clone(),
            width: v.window[0],
            height: v.window[1],
        })
        .collect();
    if specs.is_empty() {
        eprintln!("error: the visual object has no views to show; run it with --headless");
        return ExitCode::from(1);
    }
    let (to_ui, ui_in) = mpsc::channel();
    let (ui_out, from_ui) = mpsc::channel();
    let worker_args = args.clone();
    let worker = std::thread::Builder::new()
        .name("voml-engine".into())
        .spawn(move || replay(&worker_args, vo, to_ui, from_ui))
        .expect("a thread can be started");
    let options = WindowOptions {
        exit_when_finished: args.exit_when_finished,
        ..WindowOptions::default()
    };
    let shown = voml_window::run(specs, ui_in, ui_out, options);
    let code = worker.join().unwrap_or(1);
    match shown {
        Ok(()) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The engine's side: replays the trace, sends frames, obeys the user. Returns the exit code.
fn replay(args: &RunArgs, vo: CompiledVo, to_ui: Sender<ToUi>, from_ui: Receiver<FromUi>) -> u8 {
    let views = vo.views.len();
    let vo_for_faults = vo.clone();
    let Some((mut runtime, input, _)) = crate::run::start(args, vo) else {
        let _ = to_ui.send(ToUi::Finished);
        return 1;
    };
    let source = args.trace.display().to_string();
    let mut reader = TraceReader::new(
        input,
        source.clone(),
        ReadOptions {
            strict: args.strict,
        },
    );
    let started = Instant::now();
    let mut last_frame = Instant::now() - FRAME_INTERVAL;
    let mut first_ts: Option<f64> = None;
    let mut last_ts = 0.0;
    let mut shown_faults = 0;
    let mut failed = false;
    let mut bad_lines = 0u64;
    let mut quit = false;
    // Sound plays live when the replay follows the clock (--speed) and the build has it.
    #[cfg(feature = "live-audio")]
    let mut live = args.speed.and_then(crate::audio::LiveSound::start);
    let mut sound_noted = false;
    for item in reader.by_ref() {
        match item {
            Ok(record) => {
                let ts = record.timestamp().unwrap_or(last_ts);
                last_ts = ts;
                // With --speed, trace time follows the wall clock.
                if let Some(speed) = args.speed {
                    let origin = *first_ts.get_or_insert(ts);
                    let due = Duration::from_secs_f64(((ts - origin) / speed).max(0.0));
                    while started.elapsed() < due && !quit {
                        send_frames(&mut runtime, views, &to_ui, &mut last_frame, false);
                        quit = obey(&mut runtime, &from_ui, &to_ui, views);
                        std::thread::sleep(
                            due.saturating_sub(started.elapsed()).min(FRAME_INTERVAL),
                        );
                    }
                }
                let before = runtime.faults().len();
                let result = runtime.process(&record, &source);
                for fault in &runtime.faults()[before..] {
                    failed |= fault.kind != voml_runtime::FaultKind::Field;
                    if shown_faults < 20 {
                        eprint!("{}", fault.render(&vo_for_faults, false));
                        shown_faults += 1;
                    }
                }
                let sounds = runtime.take_sounds();
                #[cfg(feature = "live-audio")]
                let sounds = match live.as_mut() {
                    Some(l) => {
                        l.push(sounds);
                        Vec::new()
                    }
                    None => sounds,
                };
                // Without live sound in this build or without --speed, say once where the sound is.
                let live_possible = cfg!(feature = "live-audio") && args.speed.is_some();
                if !sounds.is_empty() && !sound_noted && !live_possible {
                    sound_noted = true;
                    eprintln!("note: this visual object makes sound, which plays live only with --speed in a build with the live-audio feature; `voml run ... --headless --audio FILE.wav` renders it");
                }
                if result.is_err() {
                    failed = true;
                    break;
                }
            }
            Err(e) => {
                bad_lines += 1;
                if bad_lines <= 20 {
                    eprintln!("warning: {e}");
                }
                if args.strict {
                    failed = true;
                    break;
                }
            }
        }
        if last_frame.elapsed() >= FRAME_INTERVAL {
            send_frames(&mut runtime, views, &to_ui, &mut last_frame, true);
            let status = format!("{} records", runtime.stats().records);
            let _ = to_ui.send(ToUi::Status(status));
            quit = quit || obey(&mut runtime, &from_ui, &to_ui, views);
        }
        if quit {
            break;
        }
    }
    if !quit && !failed {
        failed |= runtime.finish(last_ts, bad_lines).is_err();
    }
    if let Some(path) = &args.dump_state {
        failed |= !crate::run::dump_state(&runtime, path);
    }
    send_frames(&mut runtime, views, &to_ui, &mut last_frame, true);
    let summary = format!(
        "{} records in {:.1} s{} — done",
        runtime.stats().records,
        started.elapsed().as_secs_f64(),
        if bad_lines > 0 {
            format!(", {bad_lines} bad lines")
        } else {
            String::new()
        }
    );
    eprintln!("{summary}");
    let _ = to_ui.send(ToUi::Status(summary));
    let _ = to_ui.send(ToUi::Finished);
    #[cfg(feature = "live-audio")]
    if let Some(l) = live.take() {
        l.stop();
    }
    // The windows stay until the user closes them; keep answering resizes, zooms and pans.
    while !quit {
        match from_ui.recv_timeout(Duration::from_millis(50)) {
            Ok(message) => quit = handle(&mut runtime, message, &to_ui, views),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    u8::from(
        failed
            || runtime
                .faults()
                .iter()
                .any(|f| f.kind != voml_runtime::FaultKind::Field),
    )
}

fn send_frames(
    runtime: &mut Runtime,
    views: usize,
    to_ui: &Sender<ToUi>,
    last: &mut Instant,
    force: bool,
) {
    if !force && last.elapsed() < FRAME_INTERVAL {
        return;
    }
    *last = Instant::now();
    for view in 0..views {
        if let Some(p) = runtime.view_pixels(view) {
            let _ = to_ui.send(ToUi::Frame {
                view: view as u32,
                width: p.width,
                height: p.height,
                rgba: p.data,
            });
        }
    }
}

/// Handles every waiting message from the windows; true when the user quit.
fn obey(
    runtime: &mut Runtime,
    from_ui: &Receiver<FromUi>,
    to_ui: &Sender<ToUi>,
    views: usize,
) -> bool {
    loop {
        match from_ui.try_recv() {
            Ok(message) => {
                if handle(runtime, message, to_ui, views) {
                    return true;
                }
            }
            Err(TryRecvError::Empty) => return false,
            Err(TryRecvError::Disconnected) => return true,
        }
    }
}

fn handle(runtime: &mut Runtime, message: FromUi, to_ui: &Sender<ToUi>, views: usize) -> bool {
    let result = match message {
        FromUi::Quit => return true,
        FromUi::Resized {
            view,
            width,
            height,
        } => runtime.user_resize(view as usize, width, height),
        FromUi::Zoom { view, factor, x, y } => runtime.user_zoom(view as usize, factor, x, y),
        FromUi::Pan { view, dx, dy } => runtime.user_pan(view as usize, dx, dy),
        FromUi::Key(_) | FromUi::Closed { .. } => Ok(()),
    };
    let mut last = Instant::now() - FRAME_INTERVAL;
    send_frames(runtime, views, to_ui, &mut last, true);
    result.is_err()
}
