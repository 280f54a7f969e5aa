//! Two views of moving bars, drawn by a producer thread the way the VOML
//! engine would: `cargo run -p voml-window --example window_demo [-- --seconds N]`.
//!
//! Wheel zooms the bars, dragging shifts them, other keys are printed.
//! `--verbose` prints every message from the windows. With `--seconds N` the producer finishes after N seconds and the windows
//! close by themselves; without it they stay until `q`.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use voml_window::{
    display_available, run, FromUi, ToUi, ViewWindowSpec, WindowError, WindowOptions,
};

/// Bar colours of the first view; the screen-capture test looks for them,
/// so they are opaque and unlike any window-system default.
const BARS: [[u8; 3]; 4] = [
    [230, 57, 70],
    [42, 157, 143],
    [233, 196, 106],
    [69, 123, 157],
];
/// Lane colours of the second view.
const LANES: [[u8; 3]; 2] = [[244, 162, 97], [131, 56, 236]];
const BACKGROUND: [u8; 3] = [24, 28, 40];

/// What the user has done to one view, as the engine would track it.
struct ViewState {
    width: u32,
    height: u32,
    zoom: f64,
    pan_x: f64,
    open: bool,
}

fn fill_rect(buf: &mut [u8], width: u32, height: u32, rect: (i64, i64, i64, i64), c: [u8; 3]) {
    let (x0, y0, x1, y1) = rect;
    let clamp = |v: i64, max: u32| v.clamp(0, i64::from(max)) as usize;
    let (x0, x1) = (clamp(x0, width), clamp(x1, width));
    let (y0, y1) = (clamp(y0, height), clamp(y1, height));
    for y in y0..y1 {
        let row = y * width as usize * 4;
        for px in buf[row + x0 * 4..row + x1 * 4].chunks_exact_mut(4) {
            px.copy_from_slice(&[c[0], c[1], c[2], 255]);
        }
    }
}

/// Vertical bars whose heights breathe with time.
fn draw_bars(s: &ViewState, t: f64) -> Vec<u8> {
    let (w, h) = (s.width, s.height);
    let mut buf = vec![0; (w * h * 4) as usize];
    fill_rect(&mut buf, w, h, (0, 0, w.into(), h.into()), BACKGROUND);
    let slot = 60.0 * s.zoom;
    let n = (f64::from(w) / slot).ceil() as i64 + 2;
    let first = (-s.pan_x / slot).floor() as i64;
    for i in first..first + n {
        let x0 = i as f64 * slot + s.pan_x;
        let level = 0.55 + 0.4 * (t * 1.7 + i as f64 * 0.8).sin();
        let top = f64::from(h) * (1.0 - level);
        let rect = (
            (x0 + slot * 0.15) as i64,
            top as i64,
            (x0 + slot * 0.85) as i64,
            i64::from(h) - 10,
        );
        fill_rect(&mut buf, w, h, rect, BARS[i.rem_euclid(4) as usize]);
    }
    buf
}

/// Horizontal lanes with segments sliding by, like a timeline.
fn draw_lanes(s: &ViewState, t: f64) -> Vec<u8> {
    let (w, h) = (s.width, s.height);
    let mut buf = vec![0; (w * h * 4) as usize];
    fill_rect(&mut buf, w, h, (0, 0, w.into(), h.into()), BACKGROUND);
    let lanes = 6;
    let lane_h = f64::from(h) / f64::from(lanes);
    for lane in 0..lanes {
        let speed = 40.0 + 25.0 * f64::from(lane);
        let period = 160.0 * s.zoom;
        let shift = (t * speed + s.pan_x).rem_euclid(period);
        let mut x = shift - period;
        while x < f64::from(w) {
            let y0 = f64::from(lane) * lane_h + lane_h * 0.2;
            let rect = (
                x as i64,
                y0 as i64,
                (x + period * 0.6) as i64,
                (y0 + lane_h * 0.6) as i64,
            );
            fill_rect(&mut buf, w, h, rect, LANES[(lane % 2) as usize]);
            x += period;
        }
    }
    buf
}

fn main() {
    let mut seconds = None;
    let mut verbose = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seconds" => seconds = args.next().and_then(|s| s.parse::<f64>().ok()),
            "--verbose" => verbose = true,
            _ => {
                eprintln!("usage: demo [--seconds N] [--verbose]");
                std::process::exit(2);
            }
        }
    }
    if !display_available() {
        // Not an error for the demo itself: `run` below says why, in the
        // words a user of the real program would see.
        eprintln!("demo: no window system reachable");
    }
    let specs = vec![
        ViewWindowSpec {
            id: 1,
            title: "bars".into(),
            width: 480,
            height: 320,
        },
        ViewWindowSpec {
            id: 2,
            title: "lanes".into(),
            width: 400,
            height: 320,
        },
    ];
    let (to_ui, ui_rx) = mpsc::channel();
    let (ui_tx, from_ui) = mpsc::channel::<FromUi>();
    let sizes: Vec<(u32, u32, u32)> = specs.iter().map(|s| (s.id, s.width, s.height)).collect();
    let producer = std::thread::spawn(move || {
        let mut views: Vec<ViewState> = sizes
            .iter()
            .map(|&(_, width, height)| ViewState {
                width,
                height,
                zoom: 1.0,
                pan_x: 0.0,
                open: true,
            })
            .collect();
        let start = Instant::now();
        let mut frames = 0u64;
        let mut last_status = start;
        loop {
            loop {
                let msg = match from_ui.try_recv() {
                    Ok(msg) => msg,
                    Err(mpsc::TryRecvError::Empty) => break,
                    // The windows are gone (an error, or the user quit).
                    Err(mpsc::TryRecvError::Disconnected) => return,
                };
                if verbose {
                    println!("{msg:?}");
                }
                let state = |v: u32| (v as usize).checked_sub(1).filter(|&i| i < 2);
                match msg {
                    FromUi::Quit => return,
                    FromUi::Resized {
                        view,
                        width,
                        height,
                    } => {
                        if let Some(i) = state(view) {
                            views[i].width = width;
                            views[i].height = height;
                        }
                    }
                    FromUi::Zoom { view, factor, .. } => {
                        if let Some(i) = state(view) {
                            views[i].zoom = (views[i].zoom * factor).clamp(0.1, 20.0);
                        }
                    }
                    FromUi::Pan { view, dx, .. } => {
                        if let Some(i) = state(view) {
                            views[i].pan_x += dx;
                        }
                    }
                    FromUi::Closed { view } => {
                        if let Some(i) = state(view) {
                            views[i].open = false;
                        }
                    }
                    FromUi::Key(k) if !verbose => println!("key: {k}"),
                    FromUi::Key(_) => {}
                }
            }
            let t = start.elapsed().as_secs_f64();
            if seconds.is_some_and(|s| t >= s) {
                let _ = to_ui.send(ToUi::Finished);
                return;
            }
            for (i, s) in views.iter().enumerate().filter(|(_, s)| s.open) {
                let rgba = if i == 0 {
                    draw_bars(s, t)
                } else {
                    draw_lanes(s, t)
                };
                let frame = ToUi::Frame {
                    view: i as u32 + 1,
                    width: s.width,
                    height: s.height,
                    rgba,
                };
                if to_ui.send(frame).is_err() {
                    return;
                }
            }
            frames += 1;
            // Twice a second: a title that changes faster cannot be read.
            if last_status.elapsed() >= Duration::from_millis(500) {
                last_status = Instant::now();
                let status = format!("{frames} frames — {:.0} fps", frames as f64 / t.max(1e-3));
                let _ = to_ui.send(ToUi::Status(status));
            }
            std::thread::sleep(Duration::from_millis(33));
        }
    });
    let options = WindowOptions {
        exit_when_finished: seconds.is_some(),
        ..WindowOptions::default()
    };
    let result = run(specs, ui_rx, ui_tx, options);
    // The producer stops on Quit, on finishing, or when its frames have
    // nowhere to go; joining keeps its last output in order.
    let _ = producer.join();
    match result {
        Ok(()) => {}
        Err(e @ WindowError::NoDisplay { .. }) => {
            eprintln!("demo: {e}");
            std::process::exit(2);
        }
        Err(e) => {
            eprintln!("demo: {e}");
            std::process::exit(1);
        }
    }
}
