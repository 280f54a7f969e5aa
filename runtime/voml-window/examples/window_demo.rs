//! Two views of moving bars, drawn through the low-level layer the way the VOML engine
//! draws: `cargo run -p voml-window --example window_demo [-- --seconds N]`.
//!
//! Wheel zooms the bars, dragging shifts them, other keys are printed. `--verbose` prints
//! every event from the windows. With `--seconds N` the drawing stops after N seconds and the
//! windows close by themselves; without it they stay until `q`.

use std::time::{Duration, Instant};

use voml_llvo::{
    Backend, BackendEvent, Color, Llvo, OwnerId, Point, Primitive, Status, Style, ViewId, ViewSpec,
};
use voml_window::{display_available, run, WindowBackend, WindowError, WindowOptions};

/// Bar colours of the first view; the screen-capture test looks for them,
/// so they are opaque and unlike any window-system default.
const BARS: [Color; 4] = [
    Color::rgb(230, 57, 70),
    Color::rgb(42, 157, 143),
    Color::rgb(233, 196, 106),
    Color::rgb(69, 123, 157),
];
/// Lane colours of the second view.
const LANES: [Color; 2] = [Color::rgb(244, 162, 97), Color::rgb(131, 56, 236)];
const BACKGROUND: Color = Color::rgb(24, 28, 40);

/// What the user has done to one view.
struct ViewState {
    id: ViewId,
    owner: OwnerId,
    zoom: f64,
    pan_x: f64,
    open: bool,
}

fn rect(llvo: &mut Llvo<WindowBackend>, s: &ViewState, r: [f64; 4], c: Color) {
    let prim = Primitive::Rectangle {
        from: Point::new(r[0], r[1]),
        to: Point::new(r[2], r[3]),
    };
    let _ = llvo.draw(s.id, s.owner, &prim, &Style::filled(c));
}

/// Vertical bars whose heights breathe with time, in a world of pixels (y up).
fn draw_bars(llvo: &mut Llvo<WindowBackend>, s: &ViewState, t: f64) {
    let (w, h) = llvo.view_spec(s.id).map_or((1, 1), |v| v.window);
    let slot = 60.0 * s.zoom;
    let n = (f64::from(w) / slot).ceil() as i64 + 2;
    let first = (-s.pan_x / slot).floor() as i64;
    for i in first..first + n {
        let x0 = i as f64 * slot + s.pan_x;
        let level = 0.55 + 0.4 * (t * 1.7 + i as f64 * 0.8).sin();
        let r = [
            x0 + slot * 0.15,
            10.0,
            x0 + slot * 0.85,
            f64::from(h) * level,
        ];
        rect(llvo, s, r, BARS[i.rem_euclid(4) as usize]);
    }
}

/// Horizontal lanes with segments sliding by, like a timeline.
fn draw_lanes(llvo: &mut Llvo<WindowBackend>, s: &ViewState, t: f64) {
    let (w, h) = llvo.view_spec(s.id).map_or((1, 1), |v| v.window);
    let lanes = 6;
    let lane_h = f64::from(h) / f64::from(lanes);
    for lane in 0..lanes {
        let speed = 40.0 + 25.0 * f64::from(lane);
        let period = 160.0 * s.zoom;
        let shift = (t * speed + s.pan_x).rem_euclid(period);
        let mut x = shift - period;
        while x < f64::from(w) {
            let y0 = f64::from(lane) * lane_h + lane_h * 0.2;
            let r = [x, y0, x + period * 0.6, y0 + lane_h * 0.6];
            rect(llvo, s, r, LANES[(lane % 2) as usize]);
            x += period;
        }
    }
}

fn open_view(llvo: &mut Llvo<WindowBackend>, name: &str, w: u32, h: u32) -> ViewState {
    let spec = ViewSpec::new(name)
        .window(w, h)
        .world(0.0, f64::from(w), 0.0, f64::from(h))
        .background(BACKGROUND);
    let id = llvo.create_view(spec).expect("a view opens");
    ViewState {
        id,
        owner: llvo.new_owner(true),
        zoom: 1.0,
        pan_x: 0.0,
        open: true,
    }
}

/// The engine's side: draws about 30 times a second until the time is up or the user quits.
fn animate(backend: WindowBackend, seconds: Option<f64>, verbose: bool) {
    let mut llvo = Llvo::new(backend);
    let mut views = [
        open_view(&mut llvo, "bars", 480, 320),
        open_view(&mut llvo, "lanes", 400, 320),
    ];
    let start = Instant::now();
    let mut frames = 0u64;
    loop {
        for event in llvo.poll_events() {
            if verbose {
                println!("{event:?}");
            }
            let state = |views: &mut [ViewState], id: ViewId| -> Option<usize> {
                views.iter().position(|v| v.id == id)
            };
            match event {
                BackendEvent::Quit => return,
                BackendEvent::Zoom { view, factor, .. } => {
                    if let Some(i) = state(&mut views, view) {
                        views[i].zoom = (views[i].zoom * factor).clamp(0.1, 20.0);
                    }
                }
                BackendEvent::Pan { view, dx, .. } => {
                    if let Some(i) = state(&mut views, view) {
                        views[i].pan_x += dx;
                    }
                }
                BackendEvent::Closed { view } => {
                    if let Some(i) = state(&mut views, view) {
                        views[i].open = false;
                    }
                }
                BackendEvent::Key { key, .. } if !verbose => println!("key: {key}"),
                // Resizes are applied to the views by the low-level layer itself.
                _ => {}
            }
        }
        let t = start.elapsed().as_secs_f64();
        if seconds.is_some_and(|s| t >= s) {
            return;
        }
        for (i, s) in views.iter().enumerate().filter(|(_, s)| s.open) {
            // Each picture replaces the last: the previous frame is undrawn first.
            let _ = llvo.begin_update(s.owner);
            if i == 0 {
                draw_bars(&mut llvo, s, t);
            } else {
                draw_lanes(&mut llvo, s, t);
            }
            let _ = llvo.present(s.id);
        }
        frames += 1;
        if frames.is_multiple_of(15) {
            let text = format!("{frames} frames — {:.0} fps", frames as f64 / t.max(1e-3));
            llvo.backend_mut().status(&Status {
                text,
                ..Status::default()
            });
        }
        std::thread::sleep(Duration::from_millis(33));
    }
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
    match run(WindowOptions::default(), move |backend| {
        animate(backend, seconds, verbose)
    }) {
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
