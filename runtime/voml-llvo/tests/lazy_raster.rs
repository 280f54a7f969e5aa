//! The lazy raster back end paints exactly what the raster back end paints, and the raster,
//! which scrolls through a scroll store, exactly what a raster that moves the pixels of the
//! area paints: random streams of drawing, owned frames and their undrawing, clears,
//! scrolling (by a few pixels, past the stores' slack, and past the area), rescaling, buffers
//! and resizes, with the pictures compared byte for byte at random moments.

use std::collections::HashMap;

use voml_llvo::{
    Backend, Color, DrawCmd, FontFamily, FontSpec, LazyRaster, LineCap, LineJoin, Mark, OwnerId,
    PaintMode, PathSeg, PxPath, PxRect, PxRemap, RasterBackend, StrokeStyle, ViewId,
};

/// Per owner: its current frame number, and the view and bounds of what it drew in it.
type Frames = HashMap<u32, (u64, Vec<(ViewId, PxRect)>)>;

/// Starts a new frame of every owner without undrawing the last one (what the low-level
/// layer does with records whose pixels moved or were lost).
fn forget(frames: &mut Frames) {
    for (frame, drawn) in frames.values_mut() {
        *frame += 1;
        drawn.clear();
    }
}

mod support;

use support::Rng;

/// A coordinate in eighths of a pixel, from a quarter of `size` before the view to half of
/// it after.
fn coord(rng: &mut Rng, size: u32) -> f32 {
    (rng.below(u64::from(size) * 12) as f32) / 8.0 - size as f32 * 0.25
}

fn colour(rng: &mut Rng) -> Color {
    let palette = [
        Color::rgb(200, 30, 30),
        Color::rgb(20, 120, 200),
        Color::rgba(40, 160, 60, 140),
        Color::rgb(250, 250, 240),
        Color::rgba(90, 20, 160, 200),
    ];
    palette[rng.below(palette.len() as u64) as usize]
}

fn command(rng: &mut Rng, w: u32, h: u32) -> DrawCmd {
    let clip = if rng.below(3) == 0 {
        PxRect::new(0, 0, w, h)
    } else {
        PxRect::new(
            rng.below(u64::from(w) / 3) as i32,
            rng.below(u64::from(h) / 3) as i32,
            (w / 3) + rng.below(u64::from(w) / 2) as u32,
            (h / 3) + rng.below(u64::from(h) / 2) as u32,
        )
    };
    let (x0, y0, x1, y1) = (coord(rng, w), coord(rng, h), coord(rng, w), coord(rng, h));
    match rng.below(6) {
        0 => DrawCmd::Clear {
            rect: PxRect::new(
                x0 as i32,
                y0 as i32,
                rng.below(40) as u32,
                rng.below(30) as u32,
            ),
            color: colour(rng),
        },
        1 | 2 => DrawCmd::Fill {
            path: PxPath {
                segs: vec![
                    PathSeg::MoveTo(x0, y0),
                    PathSeg::LineTo(x1, y0),
                    PathSeg::LineTo(x1, y1),
                    PathSeg::LineTo(x0, y1),
                    PathSeg::Close,
                ]
                .into(),
            },
            color: colour(rng),
            clip,
            mode: if rng.below(5) == 0 {
                PaintMode::Erase
            } else {
                PaintMode::Blend
            },
        },
        3 => DrawCmd::Fill {
            path: PxPath {
                segs: vec![
                    PathSeg::MoveTo(x0, y0),
                    PathSeg::LineTo(x1, y1),
                    PathSeg::LineTo(x0, y1),
                    PathSeg::Close,
                ]
                .into(),
            },
            color: colour(rng),
            clip,
            mode: PaintMode::Blend,
        },
        4 => {
            let width = 0.5 + rng.below(8) as f32 / 2.0;
            segment((x0, y0), (x1, y1), width, colour(rng), clip)
        }
        _ => DrawCmd::Text {
            x: x0,
            baseline: y0,
            text: format!("{}", rng.below(100_000)),
            font: FontSpec {
                family: FontFamily::Sans,
                bold: false,
                size_px: 8.0 + rng.below(10) as f32,
            },
            color: colour(rng),
            clip,
        },
    }
}

/// A scroll of `area` by (dx, dy), exposing `fill`.
fn shift(area: PxRect, dx: i32, dy: i32, fill: Color) -> DrawCmd {
    DrawCmd::Shift { area, dx, dy, fill }
}

/// A solid segment from `a` to `b`, `width` pixels wide, blended within `clip`.
fn segment(a: (f32, f32), b: (f32, f32), width: f32, color: Color, clip: PxRect) -> DrawCmd {
    DrawCmd::Stroke {
        path: PxPath {
            segs: vec![PathSeg::MoveTo(a.0, a.1), PathSeg::LineTo(b.0, b.1)].into(),
        },
        style: StrokeStyle {
            width,
            cap: LineCap::Butt,
            join: LineJoin::Miter,
            dash: Vec::new(),
            dash_offset: 0.0,
        },
        color,
        clip,
        mode: PaintMode::Blend,
    }
}

/// The raster, and the back ends that must paint what it paints: the lazy raster and the
/// raster that moves its pixels. Every operation is applied to the three.
struct Pair {
    raster: RasterBackend,
    lazy: LazyRaster,
    moving: RasterBackend,
}

impl Pair {
    fn new() -> Pair {
        Pair {
            raster: RasterBackend::new(),
            lazy: LazyRaster::new(),
            moving: RasterBackend::moving_pixels(),
        }
    }

    fn both(&mut self, f: impl Fn(&mut dyn Backend)) {
        f(&mut self.raster);
        f(&mut self.lazy);
        f(&mut self.moving);
    }

    fn same(&mut self, view: ViewId, case: &str) {
        let a = self.raster.snapshot(view).unwrap();
        for (name, other) in [
            ("lazy raster", self.lazy.snapshot(view).unwrap()),
            ("raster moving pixels", self.moving.snapshot(view).unwrap()),
        ] {
            let differing = a
                .data
                .chunks_exact(4)
                .zip(other.data.chunks_exact(4))
                .filter(|(x, y)| x != y)
                .count();
            assert_eq!(
                differing, 0,
                "{case}: {differing} pixels of the {name} differ"
            );
        }
    }
}

/// A dot scrolled out of the area by one pixel is dropped from what waits; one whose last
/// column is still the area's first waits and is painted.
#[test]
fn a_dot_scrolled_out_of_the_area_is_dropped_and_one_at_its_edge_is_painted() {
    let (view, w, h) = (ViewId(0), 90u32, 70u32);
    let area = PxRect::new(10, 5, 75, 55);
    let bg = Color::rgb(255, 255, 255);
    let mut pair = Pair::new();
    pair.both(|b| b.create_surface(view, "t", w, h, bg).unwrap());
    let dot = |x, y, color| DrawCmd::Clear {
        rect: PxRect::new(x, y, 2, 2),
        color,
    };
    let (out, edge) = (
        dot(20, 10, Color::rgb(200, 30, 30)),
        dot(21, 20, Color::rgb(20, 120, 200)),
    );
    pair.both(|b| {
        b.draw(view, &out).unwrap();
        b.draw(view, &edge).unwrap();
        b.draw(view, &shift(area, -11, 0, bg)).unwrap();
    });
    // Enough else waiting (one-pixel dots along the top margin, each its own colour so
    // that none merges into another) that the next scroll looks for what scrolled out.
    for i in 0..80 {
        let tick = DrawCmd::Clear {
            rect: PxRect::new(i, 1 + i % 3, 1, 1),
            color: Color::rgb(i as u8, 0, 0),
        };
        pair.both(|b| b.draw(view, &tick).unwrap());
    }
    pair.both(|b| b.draw(view, &shift(area, -1, 0, bg)).unwrap());
    // The first dot's columns are now 8 and 9, outside the area; the second's 9 and 10.
    assert_eq!(
        pair.lazy.waiting(view),
        83,
        "84 commands less the dot scrolled out"
    );
    pair.same(view, "after the scrolls");
    let picture = pair.lazy.snapshot(view).unwrap();
    let at = |x: u32, y: u32| &picture.data[((y * w + x) * 4) as usize..][..3];
    assert_eq!(at(10, 20), &[20, 120, 200], "the edge's dot is painted");
    assert_eq!(at(9, 20), &[255, 255, 255], "the margin is not scrolled");
}

/// A streaming plot's stream: short strokes drawn at the right of a scrolled area, the area
/// scrolled left by a few pixels (and now and then up or down, right, or past its size),
/// a label redrawn in the margin. The three back ends paint the same pixels, pictures being
/// taken often in some streams and seldom in others; and in those, what waits in the lazy
/// one stays bounded by what the area shows: the commands scrolled out of it are dropped,
/// the scrolls between them merged, and the margin's redrawn label replaces the one before.
#[test]
fn a_scrolling_stream_paints_what_the_raster_paints_and_keeps_only_what_it_shows() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (view, w, h) = (ViewId(0), 90u32, 70u32);
    let area = PxRect::new(10, 5, 75, 55);
    let bg = Color::rgb(255, 255, 255);
    for stream in 0..8 {
        let mut pair = Pair::new();
        pair.both(|b| b.create_surface(view, "t", w, h, bg).unwrap());
        let seldom = stream % 2 == 1;
        let mut most_waiting = 0;
        let mut label = 0u64;
        let (mut x, mut y) = (70.0f32, 30.0f32);
        for step in 0..4000 {
            let case = format!("stream {stream} step {step}");
            if rng.below(if seldom { 5000 } else { 150 }) == 0 {
                pair.same(view, &case);
            }
            match rng.below(100) {
                0..=9 => {
                    // A dot, whose bounds are exactly the pixels it paints.
                    let dot = DrawCmd::Clear {
                        rect: PxRect::new(x as i32, y as i32, 1 + rng.below(3) as u32, 2),
                        color: colour(&mut rng),
                    };
                    pair.both(|b| b.draw(view, &dot).unwrap());
                }
                10..=54 => {
                    let (nx, ny) = (
                        x + rng.below(24) as f32 / 8.0,
                        (y + rng.below(81) as f32 / 8.0 - 5.0).clamp(6.0, 58.0),
                    );
                    let width = 1.0 + rng.below(3) as f32;
                    let cmd = segment((x, y), (nx, ny), width, colour(&mut rng), area);
                    pair.both(|b| b.draw(view, &cmd).unwrap());
                    (x, y) = (nx, ny);
                }
                55..=89 => {
                    let (dx, dy) = match rng.below(40) {
                        0 => (rng.below(12) as i32, 0),
                        1 => (0, rng.below(7) as i32 - 3),
                        2 => (-(w as i32) - 5, 0),
                        _ => (-(1 + rng.below(4) as i32), 0),
                    };
                    let shift = shift(area, dx, dy, bg);
                    pair.both(|b| b.draw(view, &shift).unwrap());
                    // New samples come in at the right.
                    x = if x + (dx as f32) < 55.0 {
                        70.0
                    } else {
                        (x + dx as f32).min(82.0)
                    };
                    y = (y + dy as f32).clamp(6.0, 58.0);
                }
                _ => {
                    // A label in the bottom margin, erased and redrawn.
                    let rect = PxRect::new(0, 62, w, 8);
                    label += 1;
                    let text = DrawCmd::Text {
                        x: 12.0,
                        baseline: 69.0,
                        text: format!("{label}"),
                        font: FontSpec {
                            family: FontFamily::Sans,
                            bold: false,
                            size_px: 8.0,
                        },
                        color: Color::rgb(0, 0, 0),
                        clip: rect,
                    };
                    let clear = DrawCmd::Clear { rect, color: bg };
                    pair.both(|b| {
                        b.draw(view, &clear).unwrap();
                        b.draw(view, &text).unwrap();
                    });
                }
            }
            most_waiting = most_waiting.max(pair.lazy.waiting(view));
        }
        pair.same(view, &format!("stream {stream} at its end"));
        eprintln!("PROBE stream {stream} seldom {seldom} most {most_waiting}");
        if seldom {
            // The area shows some 75 columns of a stream that moves about 1.3 pixels a
            // stroke: far fewer commands than the 4000 steps, or the 4096 that may wait (about
            // 2200 when nothing is dropped).
            assert!(
                most_waiting < 400,
                "stream {stream}: {most_waiting} commands waited at once"
            );
        }
    }
}

#[test]
fn the_lazy_raster_paints_what_the_raster_paints() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for stream in 0..40 {
        let mut pair = Pair::new();
        let views = [(ViewId(0), 90u32, 70u32), (ViewId(1), 64, 48)];
        let bg = Color::rgb(255, 255, 255);
        for &(v, w, h) in &views {
            pair.both(|b| b.create_surface(v, "t", w, h, bg).unwrap());
        }
        let mut sizes: HashMap<ViewId, (u32, u32)> =
            views.iter().map(|&(v, w, h)| (v, (w, h))).collect();
        // Each owner's current frame and the bounds of what it drew in it, per view.
        let mut frames: Frames = HashMap::new();
        let mut buffering: HashMap<ViewId, bool> = HashMap::new();
        for step in 0..400 {
            let case = format!("stream {stream} step {step}");
            let &(view, _, _) = &views[rng.below(2) as usize];
            let (w, h) = sizes[&view];
            let op = rng.below(20);
            if std::env::var_os("LAZY_TRACE").is_some() {
                eprintln!("{case}: op {op} view {view:?}");
            }
            match op {
                0..=8 => {
                    let cmd = command(&mut rng, w, h);
                    if std::env::var_os("LAZY_TRACE").is_some() {
                        eprintln!("{cmd:?}");
                    }
                    pair.both(|b| b.draw(view, &cmd).unwrap());
                }
                9..=12 => {
                    let owner = 1 + rng.below(3) as u32;
                    let cmd = command(&mut rng, w, h);
                    let entry = frames.entry(owner).or_insert((1, Vec::new()));
                    let mark = Mark {
                        owner: OwnerId(owner),
                        frame: entry.0,
                    };
                    entry.1.push((view, cmd.bounds()));
                    pair.both(|b| b.draw_owned(view, mark, &cmd).unwrap());
                }
                13 | 14 => {
                    // Undraw an owner's frame: erase a pixel beyond everything it painted.
                    let owner = 1 + rng.below(3) as u32;
                    let (frame, drawn) = frames.remove(&owner).unwrap_or((1, Vec::new()));
                    // (Frame numbers only grow, as the low-level layer gives them.)
                    let mut erase: Vec<(ViewId, DrawCmd)> = drawn
                        .iter()
                        .filter(|(_, r)| !r.is_empty())
                        .map(|&(v, r)| {
                            (
                                v,
                                DrawCmd::Clear {
                                    rect: r.inflate(1),
                                    color: bg,
                                },
                            )
                        })
                        .collect();
                    // Erasures are also hard-edged strokes and fills in the background colour,
                    // as the low-level layer queues them for lines and shapes.
                    if rng.below(2) == 0 {
                        let (x0, y0, x1, y1) = (
                            coord(&mut rng, w),
                            coord(&mut rng, h),
                            coord(&mut rng, w),
                            coord(&mut rng, h),
                        );
                        let (cmd, fill) = (command(&mut rng, w, h), rng.below(2) == 0);
                        let clip = cmd.clip().unwrap_or(PxRect::new(0, 0, w, h));
                        erase.push((
                            view,
                            if fill {
                                DrawCmd::Fill {
                                    path: PxPath {
                                        segs: vec![
                                            PathSeg::MoveTo(x0, y0),
                                            PathSeg::LineTo(x1, y0),
                                            PathSeg::LineTo(x1, y1),
                                            PathSeg::LineTo(x0, y1),
                                            PathSeg::Close,
                                        ]
                                        .into(),
                                    },
                                    color: bg,
                                    clip,
                                    mode: PaintMode::Erase,
                                }
                            } else {
                                DrawCmd::Stroke {
                                    path: PxPath {
                                        segs: vec![
                                            PathSeg::MoveTo(x0, y0),
                                            PathSeg::LineTo(x1, y1),
                                        ]
                                        .into(),
                                    },
                                    style: StrokeStyle {
                                        width: 2.0,
                                        cap: LineCap::Butt,
                                        join: LineJoin::Miter,
                                        dash: Vec::new(),
                                        dash_offset: 0.0,
                                    },
                                    color: bg,
                                    clip,
                                    mode: PaintMode::Erase,
                                }
                            },
                        ));
                    }
                    let mark = Mark {
                        owner: OwnerId(owner),
                        frame,
                    };
                    pair.both(|b| b.undraw(mark, &erase).unwrap());
                    frames.insert(owner, (frame + 1, Vec::new()));
                }
                15 => {
                    let area = PxRect::new(5, 5, w - 10, h - 10);
                    // Mostly a few pixels one way (as a streaming plot scrolls), so that the
                    // stores run out of slack and move back to their middle; sometimes more
                    // than the slack, or more than the area.
                    let (dx, dy) = match rng.below(10) {
                        0 => (rng.below(2 * w as u64) as i32 - w as i32, 0),
                        1 => (0, rng.below(2 * h as u64) as i32 - h as i32),
                        2..=4 => (rng.below(9) as i32 - 4, rng.below(5) as i32 - 2),
                        _ => (-(rng.below(9) as i32), 0),
                    };
                    let shift = shift(area, dx, dy, bg);
                    pair.both(|b| b.draw(view, &shift).unwrap());
                    // Frames that moved are erased where they were recorded: keep the test's
                    // erase honest by forgetting what could have moved.
                    forget(&mut frames);
                }
                16 => {
                    let area = PxRect::new(4, 4, w - 8, h - 8);
                    let map = PxRemap {
                        sx: 0.5 + rng.below(4) as f64 * 0.25,
                        ox: rng.below(10) as f64,
                        sy: 1.0,
                        oy: 0.0,
                    };
                    pair.both(|b| {
                        b.remap_area(view, area, map, bg).unwrap();
                    });
                    forget(&mut frames);
                }
                17 => {
                    let on = buffering.entry(view).or_default();
                    if *on {
                        pair.both(|b| b.flush(view).unwrap());
                    } else {
                        pair.both(|b| b.begin_buffer(view).unwrap());
                    }
                    *on = !*on;
                }
                18 if rng.below(8) == 0 => {
                    let (nw, nh) = (40 + rng.below(60) as u32, 30 + rng.below(50) as u32);
                    pair.both(|b| b.resize_surface(view, nw, nh, bg).unwrap());
                    sizes.insert(view, (nw, nh));
                    forget(&mut frames);
                }
                _ => pair.same(view, &case),
            }
            // LAZY_EVERY=1 compares after every operation, to find the one that differs.
            if std::env::var_os("LAZY_EVERY").is_some() {
                for &(v, _, _) in &views {
                    pair.same(v, &format!("{case} (after op {op} on {view:?}, {v:?})"));
                }
            }
        }
        for &(v, _, _) in &views {
            pair.same(v, &format!("stream {stream} end"));
        }
    }
}

/// A number redrawn a thousand times waits as one text, not a thousand.
#[test]
fn an_undrawn_frame_that_waits_is_never_painted() {
    let mut lazy = LazyRaster::new();
    let v = ViewId(0);
    let bg = Color::rgb(255, 255, 255);
    lazy.create_surface(v, "t", 100, 40, bg).unwrap();
    let font = FontSpec {
        family: FontFamily::Sans,
        bold: false,
        size_px: 14.0,
    };
    for frame in 1..=1000u64 {
        let mark = Mark {
            owner: OwnerId(1),
            frame,
        };
        let text = DrawCmd::Text {
            x: 10.0,
            baseline: 25.0,
            text: frame.to_string(),
            font,
            color: Color::BLACK,
            clip: PxRect::new(0, 0, 100, 40),
        };
        let erase_box = text.bounds().inflate(1);
        lazy.draw_owned(v, mark, &text).unwrap();
        lazy.undraw(
            mark,
            &[(
                v,
                DrawCmd::Clear {
                    rect: erase_box,
                    color: bg,
                },
            )],
        )
        .unwrap();
    }
    assert!(lazy.waiting(v) <= 8, "{} commands wait", lazy.waiting(v));
}

/// The outline of an upright bar from `x0` to `x1`, `top` to `bottom` (pixels).
fn bar(x0: f32, x1: f32, top: f32, bottom: f32) -> PxPath {
    PxPath {
        segs: vec![
            PathSeg::MoveTo(x0, top),
            PathSeg::LineTo(x1, top),
            PathSeg::LineTo(x1, bottom),
            PathSeg::LineTo(x0, bottom),
            PathSeg::Close,
        ]
        .into(),
    }
}

/// A red bar filled from `x` to `x + 3` and `top` to the bottom (100) of `clip`, and the
/// erasure that takes it out again (background `bg`).
fn bar_and_erasure(x: f32, top: f32, bg: Color, clip: PxRect) -> (DrawCmd, DrawCmd) {
    let fill = |color, mode| DrawCmd::Fill {
        path: bar(x, x + 3.0, top, 100.0),
        color,
        clip,
        mode,
    };
    (
        fill(Color::rgb(200, 40, 40), PaintMode::Blend),
        fill(bg, PaintMode::Erase),
    )
}

/// A bar redrawn after each of a thousand records, at heights that go up and down, leaves
/// its erasures merged: a few commands wait, not three thousand.
#[test]
fn erasures_of_a_redrawn_bar_merge() {
    let mut lazy = LazyRaster::new();
    let v = ViewId(0);
    let bg = Color::rgb(255, 255, 255);
    lazy.create_surface(v, "t", 80, 120, bg).unwrap();
    let clip = PxRect::new(0, 0, 80, 120);
    let rect = |top: f32| bar(20.0, 60.0, top, 110.0);
    let style = StrokeStyle {
        width: 1.0,
        cap: LineCap::Butt,
        join: LineJoin::Miter,
        dash: Vec::new(),
        dash_offset: 0.0,
    };
    for frame in 1..=1000u64 {
        let top = 10.0 + ((frame * 37) % 90) as f32;
        let mark = Mark {
            owner: OwnerId(1),
            frame,
        };
        let fill = DrawCmd::Fill {
            path: rect(top),
            color: Color::rgb(40, 160, 60),
            clip,
            mode: PaintMode::Blend,
        };
        let outline = DrawCmd::Stroke {
            path: rect(top),
            style: style.clone(),
            color: Color::rgb(40, 160, 60),
            clip,
            mode: PaintMode::Blend,
        };
        lazy.draw_owned(v, mark, &fill).unwrap();
        lazy.draw_owned(v, mark, &outline).unwrap();
        let erase = [
            (
                v,
                DrawCmd::Fill {
                    path: rect(top),
                    color: bg,
                    clip,
                    mode: PaintMode::Erase,
                },
            ),
            (
                v,
                DrawCmd::Stroke {
                    path: rect(top),
                    style: StrokeStyle {
                        width: 3.0,
                        ..style.clone()
                    },
                    color: bg,
                    clip,
                    mode: PaintMode::Erase,
                },
            ),
        ];
        lazy.undraw(mark, &erase).unwrap();
    }
    assert!(lazy.waiting(v) <= 4, "{} commands wait", lazy.waiting(v));
}

/// A display of many bars redrawn on every tick leaves erasures that merge into sets; what
/// waits stays bounded in commands, not only in sets (it held a million commands once).
#[test]
fn merged_erasures_count_towards_what_may_wait() {
    let mut lazy = LazyRaster::new();
    let v = ViewId(0);
    let bg = Color::rgb(255, 255, 255);
    lazy.create_surface(v, "t", 400, 100, bg).unwrap();
    let clip = PxRect::new(0, 0, 400, 100);
    let mut most = 0;
    for frame in 1..=800u64 {
        let mark = Mark {
            owner: OwnerId(1),
            frame,
        };
        let mut erase = Vec::new();
        for i in 0..100u64 {
            let (x, top) = (i as f32 * 4.0, 5.0 + ((frame * 7 + i * 13) % 90) as f32);
            let (fill, erasure) = bar_and_erasure(x, top, bg, clip);
            lazy.draw_owned(v, mark, &fill).unwrap();
            erase.push((v, erasure));
        }
        lazy.undraw(mark, &erase).unwrap();
        most = most.max(lazy.waiting_commands(v));
    }
    assert!(most <= 65_536 + 4_096, "{most} commands waited at once");
}

/// A frame of many bars redrawn on every tick on a part of the view nothing else painted: the
/// erasures of each undrawn frame would paint background over background, so none waits,
/// and only the latest frame does; on a part already painted, they are kept. Either way the
/// pictures are the raster's.
#[test]
fn erasures_over_what_is_their_colour_already_are_not_kept() {
    let v = ViewId(0);
    let bg = Color::rgb(255, 255, 255);
    let clip = PxRect::new(0, 0, 400, 100);
    let mut pair = Pair::new();
    pair.both(|b| b.create_surface(v, "t", 400, 100, bg).unwrap());
    // A band painted (and rasterised: the snapshot) under the bars on the right half.
    let band = DrawCmd::Fill {
        path: bar(200.0, 400.0, 40.0, 60.0),
        color: Color::rgb(30, 30, 200),
        clip,
        mode: PaintMode::Blend,
    };
    pair.both(|b| b.draw(v, &band).unwrap());
    pair.same(v, "the band");
    let mut most_left = 0;
    for frame in 1..=300u64 {
        let mark = Mark {
            owner: OwnerId(1),
            frame,
        };
        let mut erase = Vec::new();
        // Twenty bars on the left half, where nothing else is.
        for i in 0..20u64 {
            let (x, top) = (i as f32 * 8.0, 5.0 + ((frame * 7 + i * 13) % 90) as f32);
            let (fill, erasure) = bar_and_erasure(x, top, bg, clip);
            pair.both(|b| b.draw_owned(v, mark, &fill).unwrap());
            erase.push((v, erasure));
        }
        most_left = most_left.max(pair.lazy.waiting_commands(v));
        pair.both(|b| b.undraw(mark, &erase).unwrap());
    }
    assert_eq!(most_left, 20, "erasures of the left half waited");
    pair.same(v, "the bars on the left");
    // On the band, the erasures are needed: they take the band out where the bars were.
    for frame in 301..=310u64 {
        let mark = Mark {
            owner: OwnerId(1),
            frame,
        };
        let (fill, erasure) = bar_and_erasure(300.0, 30.0 + frame as f32 % 7.0, bg, clip);
        pair.both(|b| b.draw_owned(v, mark, &fill).unwrap());
        pair.both(|b| b.undraw(mark, &[(v, erasure.clone())]).unwrap());
    }
    assert!(
        pair.lazy.waiting_commands(v) > 0,
        "the band's erasures were dropped"
    );
    pair.same(v, "the bars on the band");
    let picture = pair.lazy.snapshot(v).unwrap();
    let at = |x: usize, y: usize| &picture.data[(y * 400 + x) * 4..(y * 400 + x) * 4 + 4];
    assert_eq!(at(301, 50), [255, 255, 255, 255], "the band was not erased");
}

/// A steady streaming plot (a line at the right edge, then a scroll left by its width, over
/// and over): what waits is what the area shows, at every step. The lines leave the area in
/// the order they were drawn, and each scroll drops those that have left from the front of
/// the queue (instead of letting the queue grow to twice that before looking at the whole of
/// it); the picture is the raster's.
#[test]
fn a_steady_stream_keeps_what_the_area_shows_at_every_step() {
    let (view, w, h) = (ViewId(0), 90u32, 70u32);
    let area = PxRect::new(10, 5, 75, 55);
    let bg = Color::rgb(255, 255, 255);
    let mut pair = Pair::new();
    pair.both(|b| b.create_surface(view, "t", w, h, bg).unwrap());
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut y = 30.0f32;
    let mut most = 0;
    for step in 0..3000 {
        let ny = (y + rng.below(81) as f32 / 8.0 - 5.0).clamp(6.0, 58.0);
        let cmd = segment((78.0, y), (83.0, ny), 1.0, colour(&mut rng), area);
        pair.both(|b| b.draw(view, &cmd).unwrap());
        let scroll = shift(area, -5, 0, bg);
        pair.both(|b| b.draw(view, &scroll).unwrap());
        y = ny;
        if step >= 100 {
            most = most.max(pair.lazy.waiting(view));
        }
    }
    // The area is 75 pixels wide: about 15 lines of 5 pixels (each with the scroll after
    // it) show. Looking at the whole queue only when it has doubled would let 30 and more
    // wait.
    assert!(most <= 34, "{most} commands waited at once");
    pair.same(view, "the steady stream at its end");
}
