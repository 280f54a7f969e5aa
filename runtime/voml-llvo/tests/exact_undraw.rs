//! Views with exact undrawing (`Undraw::Exact`): undrawing a frame leaves the picture the
//! other drawings make, pixel for pixel, whatever lay beneath or on top of it, after
//! scrolling too, on the raster and on the lazy raster; the list a view keeps is bounded,
//! and past its bound the view paints over, with a warning.

use voml_llvo::{
    Backend, ClipMode, Color, FontSpec, HAlign, LazyRaster, Llvo, LlvoError, OwnerId, Point,
    Primitive, RasterBackend, Style, Undraw, VAlign, ViewId, ViewSpec,
};

fn c(name: &str) -> Color {
    Color::parse(name).expect("colour")
}

fn line(from: (f64, f64), to: (f64, f64)) -> Primitive {
    Primitive::Line {
        from: from.into(),
        to: to.into(),
    }
}

fn spec(undraw: Undraw) -> ViewSpec {
    ViewSpec::new("x")
        .window(160, 120)
        .margins(20, 0, 0, 20)
        .world(0.0, 14.0, 0.0, 10.0)
        .background(c("lightyellow"))
        .undraw(undraw)
}

mod support;

use support::Rng;

/// A number between `lo` and `hi`, in steps of a ten-thousandth of the range.
fn real(rng: &mut Rng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * (rng.below(10_000) as f64 / 10_000.0)
}

/// A random primitive and style: lines, boxes, circles, text, half transparent or not,
/// some in the margins. `central` ones stay well inside the window even after the
/// scene's scrolls: a shape the raster draws across the window's edge is anti-aliased a
/// little differently from the same shape drawn inside it, so only those compare pixel
/// for pixel after scrolling (the area's own edges are another matter: they are tested
/// apart).
fn shape(rng: &mut Rng, central: bool) -> (Primitive, Style) {
    const COLOURS: [&str; 6] = ["red", "blue", "black", "green", "orange", "purple"];
    let colour = c(COLOURS[rng.below(6) as usize]);
    let (x, y) = if central {
        (real(rng, 5.0, 11.0), real(rng, 3.0, 7.0))
    } else {
        (real(rng, -2.0, 15.0), real(rng, -2.0, 11.0))
    };
    // How far a shape reaches from (x, y), in world units.
    let reach = if central { 1.5 } else { 6.0 };
    let mut style = match rng.below(4) {
        0 => Style::stroke(colour, real(rng, 0.5, if central { 4.0 } else { 9.0 })),
        1 => Style::filled(colour),
        2 => Style {
            fill: Some(colour),
            ..Style::stroke(c("black"), 1.5)
        },
        _ => Style::stroke(colour, 1.0),
    };
    if rng.below(3) == 0 {
        style.alpha = 0.5;
    }
    if rng.below(5) == 0 {
        style = style.clip(ClipMode::Margin);
    }
    let prim = match rng.below(4) {
        0 => line(
            (x, y),
            (x + real(rng, -reach, reach), y + real(rng, -reach, reach)),
        ),
        1 => Primitive::Circle {
            center: Point::new(x, y),
            radius: real(rng, 0.3, reach / 2.0),
        },
        2 => Primitive::Rectangle {
            from: Point::new(x, y),
            to: Point::new(x + real(rng, 0.5, reach), y + real(rng, 0.5, reach)),
        },
        _ => Primitive::Text {
            at: Point::new(x, y),
            content: "w42".into(),
            font: FontSpec::default(),
            halign: HAlign::Left,
            valign: VAlign::Baseline,
        },
    };
    (prim, style)
}

/// What each owner draws per frame, and which frames get undrawn.
struct Scene {
    /// (owner index, primitive, style) in drawing order, per step.
    steps: Vec<Step>,
}

enum Step {
    Draw(usize, Primitive, Style),
    /// The owner undraws its last frame and starts a new one (`refresh="update"`).
    Update(usize),
    /// The owner starts a new frame without undrawing.
    Frame(usize),
    Scroll(f64, f64),
}

fn scene(seed: u64, scrolls: bool) -> Scene {
    let mut rng = Rng(seed);
    let mut steps = Vec::new();
    let mut scrolled = 0;
    for _ in 0..60 {
        let owner = rng.below(4) as usize;
        match rng.below(10) {
            0 | 1 => steps.push(Step::Update(owner)),
            2 => steps.push(Step::Frame(owner)),
            // At most three scrolls, of 7 pixels left and 5 up at most.
            3 if scrolls && scrolled < 3 => {
                scrolled += 1;
                steps.push(Step::Scroll(
                    rng.below(2) as f64 * 0.7,
                    rng.below(2) as f64 * -0.5,
                ));
            }
            _ => {
                let (p, s) = shape(&mut rng, scrolls);
                steps.push(Step::Draw(owner, p, s));
            }
        }
    }
    Scene { steps }
}

/// Plays the scene in an exact view: owner 0 never undraws (a template), the others can.
fn play<B: Backend>(llvo: &mut Llvo<B>, view: ViewId, scene: &Scene) {
    let owners: Vec<OwnerId> = (0..4).map(|i| llvo.new_owner(i != 0)).collect();
    for step in &scene.steps {
        match step {
            Step::Draw(o, p, s) => llvo.draw(view, owners[*o], p, s).unwrap(),
            Step::Update(o) => llvo.begin_update(owners[*o]).unwrap(),
            Step::Frame(o) => llvo.begin_frame(owners[*o]).unwrap(),
            Step::Scroll(dx, dy) => llvo.scroll(view, *dx, *dy).unwrap(),
        }
    }
}

/// The same drawings with what got undrawn left out: each drawing is kept unless its
/// frame was undrawn later. Scrolls are kept.
fn survivors(scene: &Scene) -> Vec<&Step> {
    // Frame number of each step's drawing, per owner, and the frames undrawn.
    let mut frame = [1u64; 4];
    let mut last = [0u64; 4];
    let mut undrawn: Vec<(usize, u64)> = Vec::new();
    let mut tagged = Vec::new();
    for step in &scene.steps {
        match step {
            Step::Draw(o, ..) => tagged.push((Some((*o, frame[*o])), step)),
            Step::Update(o) | Step::Frame(o) => {
                last[*o] = frame[*o];
                frame[*o] += 1;
                if matches!(step, Step::Update(_)) && *o != 0 {
                    undrawn.push((*o, last[*o]));
                }
            }
            Step::Scroll(..) => tagged.push((None, step)),
        }
    }
    tagged
        .into_iter()
        .filter(|(f, _)| f.is_none_or(|f| !undrawn.contains(&f)))
        .map(|(_, s)| s)
        .collect()
}

fn fresh<B: Backend>(llvo: &mut Llvo<B>, view: ViewId, steps: &[&Step]) {
    for step in steps {
        match step {
            Step::Draw(_, p, s) => llvo.draw(view, OwnerId::NONE, p, s).unwrap(),
            Step::Scroll(dx, dy) => llvo.scroll(view, *dx, *dy).unwrap(),
            _ => {}
        }
    }
}

fn compare<B: Backend>(make: impl Fn() -> B, scrolls: bool) {
    for seed in 1..=40u64 {
        let scene = scene(seed * 7919, scrolls);
        let mut a = Llvo::new(make());
        let va = a.create_view(spec(Undraw::Exact)).unwrap();
        play(&mut a, va, &scene);
        let mut b = Llvo::new(make());
        let vb = b.create_view(spec(Undraw::Paint)).unwrap();
        fresh(&mut b, vb, &survivors(&scene));
        let (pa, pb) = (a.pixels(va).unwrap(), b.pixels(vb).unwrap());
        let differ = pa
            .data
            .chunks_exact(4)
            .zip(pb.data.chunks_exact(4))
            .filter(|(x, y)| x != y)
            .count();
        let worst = pa
            .data
            .iter()
            .zip(&pb.data)
            .map(|(x, y)| x.abs_diff(*y))
            .max()
            .unwrap_or(0);
        // Without scrolling the pictures are the same to the bit. After scrolling, what is
        // painted again is painted where the content now is: the raster anti-aliases a
        // shape moved by whole pixels very slightly differently at a few edge pixels. A
        // shape left behind, or one painted where it had scrolled out of sight, differs
        // by hundreds of pixels.
        let (most, worst_allowed) = if scrolls { (24, 64) } else { (0, 0) };
        assert!(
            differ <= most && worst <= worst_allowed,
            "seed {seed}: {differ} pixels differ (by {worst} at most) from the picture of \
             what was not undrawn"
        );
    }
}

#[test]
fn undrawing_leaves_the_picture_of_the_rest_on_the_raster() {
    compare(RasterBackend::new, false);
}

#[test]
fn undrawing_leaves_the_picture_of_the_rest_on_the_lazy_raster() {
    compare(LazyRaster::new, false);
}

#[test]
fn undrawing_after_scrolling_leaves_the_picture_of_the_rest() {
    compare(RasterBackend::new, true);
    compare(LazyRaster::new, true);
}

/// A thick red line drawn by `template`, then a blue bar over part of it drawn by `active`,
/// which then undraws it (`refresh="update"`). World (3, 5), pixel (50, 50), is under the bar.
fn bar_over_line(llvo: &mut Llvo, v: ViewId, template: OwnerId, active: OwnerId) {
    llvo.draw(
        v,
        template,
        &line((1.0, 5.0), (13.0, 5.0)),
        &Style::stroke(c("red"), 12.0),
    )
    .unwrap();
    llvo.draw(
        v,
        active,
        &line((1.0, 5.0), (6.0, 5.0)),
        &Style::stroke(c("blue"), 10.0),
    )
    .unwrap();
    llvo.begin_update(active).unwrap();
}

/// The paper's Figure 13 trick inverted: in an exact view, undrawing the blue bar leaves
/// the red line beneath it; in a paint view it goes too.
#[test]
fn what_lies_beneath_stays_only_in_an_exact_view() {
    for (undraw, red_left) in [(Undraw::Exact, true), (Undraw::Paint, false)] {
        let mut llvo = Llvo::headless();
        let v = llvo.create_view(spec(undraw)).unwrap();
        let template = llvo.new_owner(false);
        let active = llvo.new_owner(true);
        bar_over_line(&mut llvo, v, template, active);
        let px = llvo.pixels(v).unwrap();
        let at = |x: usize, y: usize| {
            let i = (y * px.width as usize + x) * 4;
            [px.data[i], px.data[i + 1], px.data[i + 2]]
        };
        // World (3, 5) is pixel (20 + 30, 100 - 50).
        let red = at(50, 50) == [255, 0, 0];
        assert_eq!(
            red,
            red_left,
            "{undraw:?}: pixel under the bar is {:?}",
            at(50, 50)
        );
        assert!(!px.data.chunks_exact(4).any(|p| p[..3] == [0, 0, 255]));
    }
}

/// Past its bound the list is given up with a warning, and the view paints over; a clear
/// makes it exact again.
#[test]
fn a_view_showing_too_much_paints_over_until_cleared() {
    let mut llvo = Llvo::headless();
    llvo.set_shown_cap(50);
    let v = llvo.create_view(spec(Undraw::Exact)).unwrap();
    let template = llvo.new_owner(false);
    let active = llvo.new_owner(true);
    let red_then_blue = |llvo: &mut Llvo| bar_over_line(llvo, v, template, active);
    let red_at_bar = |llvo: &mut Llvo| {
        let px = llvo.pixels(v).unwrap();
        let i = (50 * px.width as usize + 50) * 4;
        px.data[i..i + 3] == [255, 0, 0]
    };
    red_then_blue(&mut llvo);
    assert!(red_at_bar(&mut llvo), "exact while under the bound");
    assert!(llvo.take_warnings().is_empty());
    for k in 0..40 {
        let x = f64::from(k) * 0.3;
        llvo.draw(
            v,
            template,
            &line((x, 0.0), (x, 1.0)),
            &Style::stroke(c("green"), 1.0),
        )
        .unwrap();
    }
    let warnings = llvo.take_warnings();
    assert!(
        matches!(&warnings[..], [LlvoError::ShownGivenUp { view, cap: 50 }] if view == "x"),
        "{warnings:?}"
    );
    red_then_blue(&mut llvo);
    assert!(!red_at_bar(&mut llvo), "painted over once given up");
    llvo.clear(v).unwrap();
    red_then_blue(&mut llvo);
    assert!(red_at_bar(&mut llvo), "exact again after a clear");
}

/// An adaptive zoom moves the list with the pixels: a shape undrawn afterwards is gone,
/// and what lay beneath it is still there, where the zoom put it.
#[test]
fn undrawing_after_an_adaptive_zoom_removes_the_shape_where_it_now_is() {
    let mut llvo = Llvo::headless();
    let v = llvo
        .create_view(
            ViewSpec::new("z")
                .window(200, 100)
                .world(0.0, 10.0, 0.0, 5.0)
                .adapt(voml_llvo::Adaptation::parse("x+:rescale").unwrap())
                .undraw(Undraw::Exact),
        )
        .unwrap();
    let template = llvo.new_owner(false);
    let active = llvo.new_owner(true);
    llvo.draw(
        v,
        template,
        &line((1.0, 2.5), (9.0, 2.5)),
        &Style::stroke(c("red"), 14.0),
    )
    .unwrap();
    llvo.draw(
        v,
        active,
        &line((2.0, 2.5), (5.0, 2.5)),
        &Style::stroke(c("blue"), 8.0),
    )
    .unwrap();
    // A primitive at x = 20 makes the view zoom out to show it.
    let far = Style {
        adapt: true,
        ..Style::stroke(c("black"), 1.0)
    };
    llvo.draw(v, template, &line((19.0, 0.5), (20.0, 0.5)), &far)
        .unwrap();
    let world = llvo.view_spec(v).unwrap().world;
    assert!(world[1] >= 20.0, "the view zoomed out: {world:?}");
    llvo.begin_update(active).unwrap();
    let px = llvo.pixels(v).unwrap();
    let blue = px
        .data
        .chunks_exact(4)
        .filter(|p| p[2] > 150 && p[0] < 100)
        .count();
    assert_eq!(blue, 0, "the bar is gone after the zoom");
    // World (3.5, 2.5), where the bar was, shows the red line again.
    let map = llvo.mapping(v).unwrap();
    let (x, y) = map.to_px(Point::new(3.5, 2.5));
    let i = (y as usize * px.width as usize + x as usize) * 4;
    assert!(
        px.data[i] > 200 && px.data[i + 2] < 80,
        "red under the bar: {:?}",
        &px.data[i..i + 4]
    );
}

/// Content that scrolled out of the area, or was clipped out of it when drawn, is not
/// painted again by an undraw, in the area or in the margins; what the margins show of a
/// shape drawn across them stays where it was drawn.
#[test]
fn what_scrolled_out_of_the_area_stays_out() {
    let play = |llvo: &mut Llvo, v: ViewId, undraw: bool| {
        let template = llvo.new_owner(false);
        let active = llvo.new_owner(true);
        // Across the left margin and the area.
        llvo.draw(
            v,
            template,
            &line((-0.5, 2.0), (3.0, 8.0)),
            &Style::stroke(c("black"), 3.0).clip(ClipMode::Margin),
        )
        .unwrap();
        // Below the area, in the bottom margin's place: clipped out of the area.
        llvo.draw(
            v,
            template,
            &Primitive::Circle {
                center: Point::new(5.0, -0.7),
                radius: 1.0,
            },
            &Style::stroke(c("blue"), 2.0),
        )
        .unwrap();
        if undraw {
            // Across the area's left edge, and in the left margin.
            llvo.draw(
                v,
                active,
                &Primitive::Circle {
                    center: Point::new(0.8, 5.0),
                    radius: 1.0,
                },
                &Style::filled(c("orange")),
            )
            .unwrap();
            llvo.draw(
                v,
                active,
                &Primitive::Rectangle {
                    from: Point::new(-1.6, 3.0),
                    to: Point::new(-0.2, 6.0),
                },
                &Style::filled(c("green")).clip(ClipMode::Margin),
            )
            .unwrap();
            llvo.draw(
                v,
                active,
                &Primitive::Rectangle {
                    from: Point::new(4.0, 0.1),
                    to: Point::new(6.0, 0.8),
                },
                &Style::filled(c("purple")),
            )
            .unwrap();
        }
        llvo.scroll(v, 0.7, -0.5).unwrap();
        if undraw {
            // Over the strip the scroll exposed at the bottom of the area, where the blue
            // circle's unpainted part now is, and scattered dots: their boxes are more
            // than an undraw repaints one by one, so it repaints their union, margins and
            // area together.
            llvo.draw(
                v,
                active,
                &Primitive::Rectangle {
                    from: Point::new(3.5, -0.5),
                    to: Point::new(6.5, 0.2),
                },
                &Style::filled(c("purple")),
            )
            .unwrap();
            for k in 0..10 {
                let x = 2.0 + f64::from(k) * 1.1;
                llvo.draw(
                    v,
                    active,
                    &Primitive::Circle {
                        center: Point::new(x, 9.0 - f64::from(k % 3)),
                        radius: 0.2,
                    },
                    &Style::filled(c("red")),
                )
                .unwrap();
            }
            llvo.begin_update(active).unwrap();
        }
    };
    let mut a = Llvo::headless();
    let va = a.create_view(spec(Undraw::Exact)).unwrap();
    play(&mut a, va, true);
    let mut b = Llvo::headless();
    let vb = b.create_view(spec(Undraw::Exact)).unwrap();
    play(&mut b, vb, false);
    let (pa, pb) = (a.pixels(va).unwrap(), b.pixels(vb).unwrap());
    let differ: Vec<usize> = (0..pa.data.len() / 4)
        .filter(|i| pa.data[i * 4..i * 4 + 4] != pb.data[i * 4..i * 4 + 4])
        .collect();
    assert!(
        differ.len() <= 4,
        "{} pixels differ, the first at {:?}",
        differ.len(),
        differ.first().map(|i| (i % 160, i / 160))
    );
}

/// A view that scrolls forever keeps about what it shows: what scrolled out of sight is
/// dropped as the list grows, long before its bound, and undrawing stays exact.
#[test]
fn a_scrolling_exact_view_keeps_about_what_it_shows() {
    let mut llvo = Llvo::headless();
    let v = llvo
        .create_view(
            ViewSpec::new("stream")
                .window(200, 100)
                .world(0.0, 100.0, 0.0, 10.0)
                .adapt(voml_llvo::Adaptation::parse("x+:scroll").unwrap())
                .undraw(Undraw::Exact),
        )
        .unwrap();
    let plot = llvo.new_owner(false);
    let cursor = llvo.new_owner(true);
    let adapt = Style {
        adapt: true,
        ..Style::stroke(c("navy"), 1.0)
    };
    let mut most = 0;
    for k in 0..100_000u32 {
        let x = f64::from(k) * 0.5;
        let y = 5.0 + 4.0 * (f64::from(k) * 0.05).sin();
        llvo.draw(v, plot, &line((x, y), (x + 0.5, y)), &adapt)
            .unwrap();
        if k % 50 == 0 {
            llvo.begin_update(cursor).unwrap();
            llvo.draw(
                v,
                cursor,
                &line((x, 0.0), (x, 10.0)),
                &Style::stroke(c("red"), 1.0),
            )
            .unwrap();
        }
        most = most.max(llvo.shown_len(v));
    }
    // The window shows about 200 segments; what scrolled out goes whenever the list passes
    // a sixteenth of its bound (about 5,200 segments of three path points): 100,000 were
    // drawn.
    assert!(most <= 5_300, "the list held {most} commands");
    assert!(llvo.take_warnings().is_empty(), "never given up");
}
