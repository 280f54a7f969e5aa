//! Render tests: each draws one behaviour and compares the picture with a
//! reference PNG in `tests/ref/`. `VOML_BLESS=1` rewrites the references;
//! on a mismatch the actual picture and a difference map are written next
//! to the test binary's scratch directory.

use std::path::PathBuf;

use voml_llvo::{
    Adaptation, ClipMode, Color, FontFamily, FontSpec, HAlign, LineCap, Llvo, OwnerId, Point,
    Primitive, Style, VAlign, ViewId, ViewSpec,
};

/// Per-channel difference tolerated, for float noise across platforms.
const TOLERANCE: u8 = 4;

fn c(name: &str) -> Color {
    Color::parse(name).expect("colour")
}

fn pt(x: f64, y: f64) -> Point {
    Point::new(x, y)
}

fn line(from: (f64, f64), to: (f64, f64)) -> Primitive {
    Primitive::Line {
        from: from.into(),
        to: to.into(),
    }
}

/// A view of `w` x `h` pixels whose world is 0..w/10 x 0..h/10 (10 px a unit).
fn setup(name: &str, w: u32, h: u32) -> (Llvo, ViewId) {
    let mut llvo = Llvo::headless();
    let view = llvo
        .create_view(ViewSpec::new(name).window(w, h).world(
            0.0,
            f64::from(w) / 10.0,
            0.0,
            f64::from(h) / 10.0,
        ))
        .expect("view");
    (llvo, view)
}

fn draw(llvo: &mut Llvo, view: ViewId, prim: Primitive, style: Style) {
    llvo.draw(view, OwnerId::NONE, &prim, &style).expect("draw");
}

fn ref_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("ref")
}

fn out_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("voml-llvo-render")
}

/// Compares the view with `tests/ref/<name>.png`.
fn check(name: &str, llvo: &mut Llvo, view: ViewId) {
    let png = llvo.png(view).expect("png");
    let ref_path = ref_dir().join(format!("{name}.png"));
    if std::env::var("VOML_BLESS").as_deref() == Ok("1") {
        std::fs::create_dir_all(ref_dir()).expect("ref dir");
        std::fs::write(&ref_path, &png).expect("write reference");
        return;
    }
    let expected = std::fs::read(&ref_path).unwrap_or_else(|_| {
        panic!(
            "no reference picture {}; run the tests with VOML_BLESS=1 to create it",
            ref_path.display()
        )
    });
    let want = image::load_from_memory(&expected)
        .expect("reference decodes")
        .to_rgba8();
    let got = image::load_from_memory(&png)
        .expect("actual decodes")
        .to_rgba8();
    let mut bad = 0usize;
    let mut diff = image::RgbaImage::new(got.width(), got.height());
    if want.dimensions() == got.dimensions() {
        for (x, y, g) in got.enumerate_pixels() {
            let w = want.get_pixel(x, y);
            let d = (0..4).map(|i| g[i].abs_diff(w[i])).max().unwrap_or(0);
            if d > TOLERANCE {
                bad += 1;
                diff.put_pixel(x, y, image::Rgba([255, 0, 0, 255]));
            } else {
                let grey = (g[0] as u16 + g[1] as u16 + g[2] as u16) / 3 / 4 + 190;
                diff.put_pixel(x, y, image::Rgba([grey as u8, grey as u8, grey as u8, 255]));
            }
        }
    }
    if want.dimensions() != got.dimensions() || bad > 0 {
        let dir = out_dir();
        std::fs::create_dir_all(&dir).expect("output dir");
        let actual = dir.join(format!("{name}.actual.png"));
        let diff_path = dir.join(format!("{name}.diff.png"));
        std::fs::write(&actual, &png).expect("write actual");
        diff.save(&diff_path).expect("write diff");
        panic!(
            "{name}: {} (reference {}x{}, actual {}x{}); see {} and {}",
            if bad > 0 {
                format!("{bad} pixels differ by more than {TOLERANCE}")
            } else {
                "size differs".to_string()
            },
            want.width(),
            want.height(),
            got.width(),
            got.height(),
            actual.display(),
            diff_path.display()
        );
    }
}

#[test]
fn line_thickness_and_colour() {
    let (mut llvo, v) = setup("lines", 120, 80);
    draw(
        &mut llvo,
        v,
        line((1.0, 1.0), (11.0, 7.0)),
        Style::stroke(c("red"), 12.0),
    );
    draw(
        &mut llvo,
        v,
        line((1.0, 7.0), (11.0, 1.0)),
        Style::stroke(c("blue"), 1.0),
    );
    let dashed = Style {
        dash: vec![6.0, 3.0],
        cap: LineCap::Round,
        ..Style::stroke(c("green"), 3.0)
    };
    draw(&mut llvo, v, line((1.0, 4.0), (11.0, 4.0)), dashed);
    let translucent = Style {
        alpha: 0.5,
        ..Style::stroke(c("black"), 8.0)
    };
    draw(&mut llvo, v, line((6.0, 0.5), (6.0, 7.5)), translucent);
    check("line_thickness_and_colour", &mut llvo, v);
}

#[test]
fn margins_clip_area_and_margin() {
    let mut llvo = Llvo::headless();
    let v = llvo
        .create_view(
            ViewSpec::new("m")
                .window(160, 120)
                .margins(30, 10, 10, 20)
                .world(0.0, 12.0, 0.0, 9.0)
                .background(c("lightyellow")),
        )
        .unwrap();
    // The whole world, to show where the scrollable area is.
    draw(
        &mut llvo,
        v,
        Primitive::Rectangle {
            from: pt(0.0, 0.0),
            to: pt(12.0, 9.0),
        },
        Style::filled(c("white")),
    );
    // Both lines overshoot the world; only the second may enter the margins.
    draw(
        &mut llvo,
        v,
        line((-5.0, 2.0), (20.0, 2.0)),
        Style::stroke(c("red"), 4.0),
    );
    draw(
        &mut llvo,
        v,
        line((-5.0, 6.0), (20.0, 6.0)),
        Style::stroke(c("blue"), 4.0).clip(ClipMode::Margin),
    );
    draw(
        &mut llvo,
        v,
        line((6.0, -10.0), (6.0, 20.0)),
        Style::stroke(c("green"), 2.0).clip(ClipMode::Margin),
    );
    check("margins_clip_area_and_margin", &mut llvo, v);
}

#[test]
fn primitive_polyline() {
    let (mut llvo, v) = setup("polyline", 80, 60);
    let points = [(1.0, 1.0), (3.0, 5.0), (5.0, 1.5), (7.0, 5.0)]
        .iter()
        .map(|p| Point::from(*p))
        .collect();
    draw(
        &mut llvo,
        v,
        Primitive::Polyline { points },
        Style::stroke(c("purple"), 4.0),
    );
    check("primitive_polyline", &mut llvo, v);
}

#[test]
fn primitive_polygon() {
    let (mut llvo, v) = setup("polygon", 80, 60);
    let points: Vec<Point> = [(1.0, 1.0), (4.0, 5.5), (7.0, 1.0), (4.0, 2.5)]
        .iter()
        .map(|p| Point::from(*p))
        .collect();
    let style = Style {
        fill: Some(c("orange")),
        ..Style::stroke(c("brown"), 2.0)
    };
    draw(&mut llvo, v, Primitive::Polygon { points }, style);
    check("primitive_polygon", &mut llvo, v);
}

#[test]
fn primitive_rectangle() {
    let (mut llvo, v) = setup("rectangle", 80, 60);
    draw(
        &mut llvo,
        v,
        Primitive::Rectangle {
            from: pt(1.0, 1.0),
            to: pt(4.0, 5.0),
        },
        Style::stroke(c("navy"), 2.0),
    );
    let filled = Style {
        fill: Some(c("cyan")),
        ..Style::stroke(c("black"), 1.0)
    };
    draw(
        &mut llvo,
        v,
        Primitive::Rectangle {
            from: pt(7.0, 1.0),
            to: pt(5.0, 4.0),
        },
        filled,
    );
    check("primitive_rectangle", &mut llvo, v);
}

#[test]
fn primitive_circle() {
    let (mut llvo, v) = setup("circle", 80, 60);
    draw(
        &mut llvo,
        v,
        Primitive::Circle {
            center: pt(2.5, 3.0),
            radius: 2.0,
        },
        Style::stroke(c("red"), 3.0),
    );
    draw(
        &mut llvo,
        v,
        Primitive::Circle {
            center: pt(6.0, 3.0),
            radius: 1.5,
        },
        Style::filled(c("magenta")),
    );
    check("primitive_circle", &mut llvo, v);
}

#[test]
fn primitive_ellipse() {
    let (mut llvo, v) = setup("ellipse", 80, 60);
    let style = Style {
        fill: Some(c("pink")),
        ..Style::stroke(c("grey"), 2.0)
    };
    draw(
        &mut llvo,
        v,
        Primitive::Ellipse {
            center: pt(4.0, 3.0),
            radii: (3.5, 1.5),
        },
        style,
    );
    check("primitive_ellipse", &mut llvo, v);
}

#[test]
fn primitive_arc() {
    let (mut llvo, v) = setup("arc", 80, 60);
    // Open arc: a quarter from +x counter-clockwise (up, since y is up).
    draw(
        &mut llvo,
        v,
        Primitive::Arc {
            center: pt(2.5, 2.0),
            radius: 2.0,
            start_deg: 0.0,
            extent_deg: 90.0,
        },
        Style::stroke(c("blue"), 3.0),
    );
    // Pie slice of 270 degrees, starting at the top, going clockwise.
    let pie = Style {
        fill: Some(c("yellow")),
        ..Style::stroke(c("black"), 1.0)
    };
    draw(
        &mut llvo,
        v,
        Primitive::Arc {
            center: pt(6.0, 3.0),
            radius: 1.5,
            start_deg: 90.0,
            extent_deg: -270.0,
        },
        pie,
    );
    check("primitive_arc", &mut llvo, v);
}

#[test]
fn text_alignment() {
    let (mut llvo, v) = setup("text", 300, 140);
    let font = FontSpec {
        family: FontFamily::Sans,
        bold: false,
        size_px: 14.0,
    };
    let anchors = [
        (HAlign::Left, VAlign::Baseline, (1.0, 11.5)),
        (HAlign::Center, VAlign::Top, (15.0, 11.5)),
        (HAlign::Right, VAlign::Bottom, (29.0, 11.5)),
        (HAlign::Left, VAlign::Center, (1.0, 6.5)),
        (HAlign::Center, VAlign::Baseline, (15.0, 6.5)),
        (HAlign::Right, VAlign::Top, (29.0, 6.5)),
    ];
    for (h, va, at) in anchors {
        // Cross-hair at the anchor.
        let red = Style::stroke(c("red"), 1.0);
        draw(
            &mut llvo,
            v,
            line((at.0 - 1.0, at.1), (at.0 + 1.0, at.1)),
            red.clone(),
        );
        draw(
            &mut llvo,
            v,
            line((at.0, at.1 - 1.0), (at.0, at.1 + 1.0)),
            red,
        );
        draw(
            &mut llvo,
            v,
            Primitive::Text {
                at: at.into(),
                content: format!("{h:?}/{va:?}"),
                font,
                halign: h,
                valign: va,
            },
            Style::stroke(c("black"), 1.0),
        );
    }
    let mono_bold = FontSpec::from_hints("courier", 13.0, "bold");
    draw(
        &mut llvo,
        v,
        Primitive::Text {
            at: pt(15.0, 1.5),
            content: "Bandwidth Utilization".into(),
            font: mono_bold,
            halign: HAlign::Center,
            valign: VAlign::Baseline,
        },
        Style::stroke(c("navy"), 1.0),
    );
    check("text_alignment", &mut llvo, v);
}

/// A 4 x 3 image: rows red/green/blue/white, yellow/black/..., distinct
/// corners so that orientation mistakes show.
fn test_png() -> Vec<u8> {
    let colours = [
        [255, 0, 0, 255],
        [0, 160, 0, 255],
        [0, 0, 255, 255],
        [255, 255, 255, 255],
        [255, 255, 0, 255],
        [0, 0, 0, 255],
        [0, 255, 255, 255],
        [255, 0, 255, 255],
        [128, 128, 128, 255],
        [255, 128, 0, 255],
        [128, 0, 255, 255],
        [0, 0, 0, 0],
    ];
    let img = image::RgbaImage::from_fn(4, 3, |x, y| image::Rgba(colours[(y * 4 + x) as usize]));
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .expect("encode test png");
    out
}

#[test]
fn figure_scaled_and_cropped() {
    let (mut llvo, v) = setup("figure", 120, 80);
    let img = llvo.load_image(&test_png()).expect("load");
    assert_eq!(llvo.image_size(img).unwrap(), (4, 3));
    // Whole image onto 4 x 3 world units (40 x 30 px), lower-left at (1, 1).
    draw(
        &mut llvo,
        v,
        Primitive::Figure {
            image: img,
            orig_origin: (0.0, 0.0),
            orig_extents: (0.0, 0.0),
            world_origin: pt(1.0, 1.0),
            world_extents: (4.0, 3.0),
        },
        Style::default(),
    );
    // Its right 2 x 2 pixels, stretched onto 5 x 5 world units.
    draw(
        &mut llvo,
        v,
        Primitive::Figure {
            image: img,
            orig_origin: (2.0, 1.0),
            orig_extents: (2.0, 2.0),
            world_origin: pt(6.0, 1.0),
            world_extents: (5.0, 5.0),
        },
        Style::default(),
    );
    check("figure_scaled_and_cropped", &mut llvo, v);
}

#[test]
fn undraw_leaves_background_clean() {
    let mut llvo = Llvo::headless();
    let bg = c("lightblue");
    let v = llvo
        .create_view(
            ViewSpec::new("u")
                .window(100, 80)
                .world(0.0, 10.0, 0.0, 8.0)
                .background(bg),
        )
        .unwrap();
    let owner = llvo.new_owner(true);
    let prims = [
        (line((1.0, 1.0), (9.0, 7.0)), Style::stroke(c("red"), 7.0)),
        (
            line((1.0, 7.0), (9.0, 2.0)),
            Style {
                dash: vec![5.0, 4.0],
                ..Style::stroke(c("black"), 2.5)
            },
        ),
        (
            Primitive::Circle {
                center: pt(5.0, 4.0),
                radius: 2.3,
            },
            Style {
                fill: Some(c("orange")),
                alpha: 0.7,
                ..Style::stroke(c("purple"), 1.5)
            },
        ),
        (
            Primitive::Text {
                at: pt(5.0, 0.5),
                content: "gone".into(),
                font: FontSpec::default(),
                halign: HAlign::Center,
                valign: VAlign::Baseline,
            },
            Style::stroke(c("black"), 1.0),
        ),
        (
            Primitive::Arc {
                center: pt(2.0, 5.0),
                radius: 1.3,
                start_deg: 10.0,
                extent_deg: 200.0,
            },
            Style::stroke(c("green"), 3.3),
        ),
    ];
    for (p, s) in &prims {
        llvo.draw(v, owner, p, s).unwrap();
    }
    llvo.begin_update(owner).unwrap();
    let px = llvo.pixels(v).unwrap();
    let stray = px
        .data
        .chunks_exact(4)
        .filter(|p| *p != [bg.r, bg.g, bg.b, 255])
        .count();
    assert_eq!(stray, 0, "pixels left after undraw");
    check("undraw_leaves_background_clean", &mut llvo, v);
}

/// The paper's Figure 13 trick: a component undraws its blue bar, and the
/// red line another component drew beneath it is erased too.
#[test]
fn undraw_erases_what_lies_beneath() {
    let (mut llvo, v) = setup("beneath", 120, 60);
    let template = llvo.new_owner(false);
    let active = llvo.new_owner(true);
    llvo.draw(
        v,
        template,
        &line((1.0, 3.0), (11.0, 3.0)),
        &Style::stroke(c("red"), 12.0),
    )
    .unwrap();
    llvo.draw(
        v,
        active,
        &line((1.0, 3.0), (6.0, 3.0)),
        &Style::stroke(c("blue"), 10.0),
    )
    .unwrap();
    llvo.begin_update(active).unwrap();
    check("undraw_erases_what_lies_beneath", &mut llvo, v);
}

#[test]
fn scroll_translates_content() {
    let scene = |llvo: &mut Llvo, v: ViewId, dx: f64| {
        draw(
            llvo,
            v,
            line((2.0 + dx, 1.0), (2.0 + dx, 5.0)),
            Style::stroke(c("red"), 4.0),
        );
        draw(
            llvo,
            v,
            Primitive::Circle {
                center: pt(5.0 + dx, 3.0),
                radius: 1.5,
            },
            Style::filled(c("blue")),
        );
        draw(
            llvo,
            v,
            line((-2.0, -1.0), (12.0, -1.0)),
            Style::stroke(c("black"), 2.0).clip(ClipMode::Margin),
        );
    };
    let spec = ViewSpec::new("s")
        .window(120, 80)
        .margins(20, 0, 0, 20)
        .world(0.0, 10.0, 0.0, 6.0);
    let mut a = Llvo::headless();
    let va = a.create_view(spec.clone()).unwrap();
    scene(&mut a, va, 0.0);
    // Scroll right by 2 world units (20 px): the content moves left.
    a.scroll(va, 2.0, 0.0).unwrap();
    assert_eq!(a.view_spec(va).unwrap().world, [2.0, 12.0, 0.0, 6.0]);

    // The same picture drawn directly in a view already showing x 2..12,
    // without the margin line (margins do not scroll: it stays as drawn).
    let mut b = Llvo::headless();
    let vb = b.create_view(spec.world(2.0, 12.0, 0.0, 6.0)).unwrap();
    draw(
        &mut b,
        vb,
        line((2.0, 1.0), (2.0, 5.0)),
        Style::stroke(c("red"), 4.0),
    );
    draw(
        &mut b,
        vb,
        Primitive::Circle {
            center: pt(5.0, 3.0),
            radius: 1.5,
        },
        Style::filled(c("blue")),
    );
    let (pa, pb) = (a.pixels(va).unwrap(), b.pixels(vb).unwrap());
    let area = a.mapping(va).unwrap().area;
    for y in area.y as u32..area.bottom() as u32 {
        for x in area.x as u32..area.right() as u32 {
            assert_eq!(pa.pixel(x, y), pb.pixel(x, y), "area pixel {x},{y}");
        }
    }
    check("scroll_translates_content", &mut a, va);
}

fn adaptive_view(name: &str, w: u32, h: u32, world: [f64; 4], adapt: &str) -> (Llvo, ViewId) {
    let mut llvo = Llvo::headless();
    let view = llvo
        .create_view(
            ViewSpec::new(name)
                .window(w, h)
                .world(world[0], world[1], world[2], world[3])
                .adapt(Adaptation::parse(adapt).expect("adapt")),
        )
        .expect("view");
    (llvo, view)
}

/// A deterministic generator for the plots.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A temporal plot in a view that scrolls towards x+: the window follows
/// the newest sample, older samples and the plain tick marks drawn with
/// them move left.
#[test]
fn adapt_scrolling_time_plot() {
    let (mut llvo, v) = adaptive_view("plot", 200, 100, [0.0, 10.0, -1.5, 1.5], "x+:scroll");
    let f = |t: f64| (t * 1.3).sin() * (0.6 + 0.4 * (t * 0.21).cos());
    let blue = Style::stroke(c("blue"), 2.0).adapt(true);
    for i in 1..=170 {
        let (t0, t1) = (f64::from(i - 1) * 0.1, f64::from(i) * 0.1);
        draw(&mut llvo, v, line((t0, f(t0)), (t1, f(t1))), blue.clone());
        if i % 10 == 5 {
            // Plain ticks at whole x, half a unit behind the newest sample:
            // drawn where the window is now, scrolled with it later.
            let x = t1 - 0.5;
            draw(
                &mut llvo,
                v,
                line((x, -1.5), (x, -1.2)),
                Style::stroke(c("gray"), 1.0),
            );
        }
    }
    assert_eq!(llvo.view_spec(v).unwrap().world, [7.0, 17.0, -1.5, 1.5]);
    check("adapt_scrolling_time_plot", &mut llvo, v);
}

/// The paper's peak in a temporal plot: x scrolls, y rescales. Values
/// about 50, one sample of 160 at x = 12. Before the peak the view shows
/// y 0..100; at the peak it has zoomed out to 0..160 (the older part of
/// the plot resampled, hence blurred); once x = 12 has scrolled out it
/// zooms back in to 0..100 (the part drawn at the small scale enlarged).
#[test]
fn adapt_rescale_peak_and_zoom_back() {
    let (mut llvo, v) = adaptive_view(
        "peak",
        200,
        120,
        [0.0, 10.0, 0.0, 100.0],
        "x+:scroll y+:rescale",
    );
    let value = |i: i32| {
        if i == 48 {
            160.0
        } else {
            50.0 + 20.0 * (f64::from(i) * 0.3).sin()
        }
    };
    let red = Style::stroke(c("red"), 2.0).adapt(true);
    let step = |llvo: &mut Llvo, i: i32| {
        let (x0, x1) = (f64::from(i - 1) * 0.25, f64::from(i) * 0.25);
        draw(
            llvo,
            v,
            line((x0, value(i - 1)), (x1, value(i))),
            red.clone(),
        );
    };
    for i in 1..=47 {
        step(&mut llvo, i);
    }
    assert_eq!(llvo.view_spec(v).unwrap().world, [1.75, 11.75, 0.0, 100.0]);
    check("adapt_rescale_peak_1_before", &mut llvo, v);
    for i in 48..=56 {
        step(&mut llvo, i);
    }
    assert_eq!(llvo.view_spec(v).unwrap().world, [4.0, 14.0, 0.0, 160.0]);
    assert!(llvo.take_redraw(v).unwrap());
    check("adapt_rescale_peak_2_at_peak", &mut llvo, v);
    for i in 57..=96 {
        step(&mut llvo, i);
        let w = llvo.view_spec(v).unwrap().world;
        let want = if i <= 88 { 160.0 } else { 100.0 };
        assert_eq!(w[3], want, "sample {i}, window {w:?}");
    }
    assert!(llvo.take_redraw(v).unwrap());
    check("adapt_rescale_peak_3_after", &mut llvo, v);
}

/// Quality 8 (four points for each of y+ and y-) over a thousand noisy
/// samples: extremes that have scrolled away (+-5) are forgotten, the
/// visible ones (3 and -2) are exactly at the window's edges.
#[test]
fn adapt_bounded_quality_keeps_extremes() {
    let mut llvo = Llvo::headless();
    let v = llvo
        .create_view(
            ViewSpec::new("quality")
                .window(200, 120)
                .world(0.0, 10.0, -1.0, 1.0)
                .adapt(Adaptation::parse("x+:scroll y+:rescale y-:rescale").unwrap())
                .quality(8),
        )
        .unwrap();
    let mut rng = Lcg(42);
    let sample = |i: i32, rng: &mut Lcg| match i {
        100 => 5.0,
        150 => -5.0,
        700 => 3.0,
        850 => -2.0,
        _ => {
            let r = rng.next();
            if r < 0.1 {
                (rng.next() - 0.5) * 3.8
            } else {
                (rng.next() - 0.5) * 1.6
            }
        }
    };
    let green = Style::stroke(c("darkgreen"), 1.0).adapt(true);
    let mut prev = 0.0;
    for i in 1..=1000 {
        let y = sample(i, &mut rng);
        let (x0, x1) = (f64::from(i - 1) * 0.02, f64::from(i) * 0.02);
        draw(&mut llvo, v, line((x0, prev), (x1, y)), green.clone());
        prev = y;
        assert!(llvo.remembered_extremes(v).unwrap() <= 8);
    }
    // The window's edges are exactly the visible extremes (at x 14, 17).
    assert_eq!(llvo.view_spec(v).unwrap().world, [10.0, 20.0, -2.0, 3.0]);
    check("adapt_bounded_quality_keeps_extremes", &mut llvo, v);
}

/// Scrolling moves the scrollable area only: axis labels and the frame in
/// the margins keep every pixel while the plot scrolls under them.
#[test]
fn adapt_margins_stay_put() {
    let mut llvo = Llvo::headless();
    let v = llvo
        .create_view(
            ViewSpec::new("margins")
                .window(240, 140)
                .margins(40, 10, 10, 30)
                .world(0.0, 10.0, 0.0, 10.0)
                .background(c("white"))
                .adapt(Adaptation::parse("x+:scroll").unwrap()),
        )
        .unwrap();
    let font = FontSpec {
        family: FontFamily::Sans,
        bold: false,
        size_px: 11.0,
    };
    let label = |llvo: &mut Llvo, at: (f64, f64), text: &str, h: HAlign, va: VAlign| {
        draw(
            llvo,
            v,
            Primitive::Text {
                at: at.into(),
                content: text.into(),
                font,
                halign: h,
                valign: va,
            },
            Style::stroke(c("black"), 1.0).clip(ClipMode::Margin),
        );
    };
    for y in [0, 5, 10] {
        label(
            &mut llvo,
            (-0.4, f64::from(y)),
            &y.to_string(),
            HAlign::Right,
            VAlign::Center,
        );
    }
    label(&mut llvo, (5.0, -1.2), "time", HAlign::Center, VAlign::Top);
    let frame = Style::stroke(c("black"), 1.0).clip(ClipMode::Margin);
    draw(
        &mut llvo,
        v,
        line((-0.1, -0.1), (-0.1, 10.0)),
        frame.clone(),
    );
    draw(&mut llvo, v, line((-0.1, -0.1), (10.0, -0.1)), frame);

    let margins_of = |llvo: &mut Llvo| {
        let p = llvo.pixels(v).unwrap();
        let area = llvo.mapping(v).unwrap().area;
        let mut out = Vec::new();
        for y in 0..p.height {
            for x in 0..p.width {
                let inside = i64::from(x) >= i64::from(area.x)
                    && i64::from(x) < area.right()
                    && i64::from(y) >= i64::from(area.y)
                    && i64::from(y) < area.bottom();
                if !inside {
                    out.push(p.pixel(x, y));
                }
            }
        }
        out
    };
    let before = margins_of(&mut llvo);
    let purple = Style::stroke(c("purple"), 2.0).adapt(true);
    let f = |t: f64| 5.0 + 4.0 * (t * 0.9).sin();
    for i in 1..=80 {
        let (t0, t1) = (f64::from(i - 1) * 0.2, f64::from(i) * 0.2);
        draw(&mut llvo, v, line((t0, f(t0)), (t1, f(t1))), purple.clone());
    }
    assert_eq!(llvo.view_spec(v).unwrap().world, [6.0, 16.0, 0.0, 10.0]);
    assert!(before == margins_of(&mut llvo), "a margin pixel changed");
    check("adapt_margins_stay_put", &mut llvo, v);
}

/// 200,000 samples of a noisy walk across 200 columns of 200 x 100 pixels (world 0..20 x 0..10,
/// a column is 0.1 in x), with a one-sample spike.
fn dense_samples() -> Vec<Point> {
    let mut seed = 11u64;
    (0..200_000)
        .map(|i| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let noise = ((seed >> 33) % 1000) as f64 / 1000.0;
            let spike = if i == 123_457 { 4.0 } else { 0.0 };
            pt(i as f64 * 20.0 / 200_000.0, 3.0 + 2.0 * noise + spike)
        })
        .collect()
}

/// Each sample as a segment of its own, every one of them drawn: consecutive segments
/// belong to two owners in turn, so that none continues a series (`column.rs`).
fn every_segment(samples: &[Point], style: &Style) -> (Llvo, ViewId) {
    let (mut llvo, v) = setup("segments", 200, 100);
    let owners = [llvo.new_owner(false), llvo.new_owner(false)];
    for (i, pair) in samples.windows(2).enumerate() {
        let prim = Primitive::Line {
            from: pair[0],
            to: pair[1],
        };
        llvo.draw(v, owners[i % 2], &prim, style).expect("draw");
    }
    assert_eq!(llvo.decimated_lines(), 0);
    (llvo, v)
}

/// The rows of each column of a 200 x 100 view where the ink is at least half dark.
fn inked_rows(llvo: &mut Llvo, v: ViewId) -> Vec<Option<(u32, u32)>> {
    let (w, h) = (200u32, 100u32);
    let p = llvo.pixels(v).expect("pixels");
    (0..w)
        .map(|x| {
            let inked: Vec<u32> = (0..h)
                .filter(|&y| p.data[((y * w + x) * 4) as usize] < 128)
                .collect();
            Some((*inked.first()?, *inked.last()?))
        })
        .collect()
}

/// Each column's ink spans the same rows (within one) in both pictures, and the spike
/// (y = 7..9, rows 10..30 from the top) is drawn.
fn same_extents(a: &[Option<(u32, u32)>], b: &[Option<(u32, u32)>]) {
    for x in 0..a.len() {
        match (a[x], b[x]) {
            (Some((a0, a1)), Some((b0, b1))) => assert!(
                a0.abs_diff(b0) <= 1 && a1.abs_diff(b1) <= 1,
                "column {x}: rows {a0}..{a1} decimated, {b0}..{b1} segment by segment"
            ),
            (a, b) => assert_eq!(a.is_some(), b.is_some(), "column {x}"),
        }
    }
    let spike_column = (123_457.0 * 200.0 / 200_000.0) as usize;
    assert!(
        a[spike_column].is_some_and(|(top, _)| top <= 12),
        "{:?}",
        a[spike_column]
    );
}

/// A polyline of 200,000 samples across 200 columns of pixels is drawn from at most four
/// points a column (`lower.rs`, `decimate_columns`): each column's ink spans the same rows as
/// when every sample is drawn as a segment of its own, a one-sample spike included.
#[test]
fn dense_polylines_show_every_columns_extent() {
    let samples = dense_samples();
    let style = Style::stroke(c("black"), 1.0);
    let (mut whole, v1) = setup("polyline", 200, 100);
    draw(
        &mut whole,
        v1,
        Primitive::Polyline {
            points: samples.clone(),
        },
        style.clone(),
    );
    let (mut each, v2) = every_segment(&samples, &style);
    same_extents(&inked_rows(&mut whole, v1), &inked_rows(&mut each, v2));
}

/// The same samples drawn a segment at a time, as a visual object drawing a line per record
/// does: a segment that stays in its pixel column between rows its series already painted
/// there is not drawn (`column.rs`), and the picture keeps every column's extent and the
/// spike, and differs from drawing them all in few pixels.
#[test]
fn dense_lines_drawn_one_at_a_time_show_every_columns_extent() {
    let samples = dense_samples();
    let style = Style::stroke(c("black"), 1.0);
    let (mut stream, v1) = setup("stream", 200, 100);
    for pair in samples.windows(2) {
        let prim = Primitive::Line {
            from: pair[0],
            to: pair[1],
        };
        draw(&mut stream, v1, prim, style.clone());
    }
    let skipped = stream.decimated_lines();
    assert!(skipped > 190_000, "only {skipped} of 199,999 lines skipped");
    let (mut each, v2) = every_segment(&samples, &style);
    same_extents(&inked_rows(&mut stream, v1), &inked_rows(&mut each, v2));
    let (a, b) = (stream.pixels(v1).unwrap(), each.pixels(v2).unwrap());
    let differ = a
        .data
        .chunks(4)
        .zip(b.data.chunks(4))
        .filter(|(p, q)| p.iter().zip(q.iter()).any(|(x, y)| x.abs_diff(*y) > 64))
        .count();
    assert!(differ < 200 * 100 / 50, "{differ} pixels differ");
}

/// A segment inside what its series painted is drawn all the same once something may have
/// painted over that: another kind of primitive in the view, or the undrawing of the frame
/// that drew the series. Dashed lines are never left out.
#[test]
fn decimated_lines_are_drawn_again_over_what_covered_them() {
    // 100 x 100 pixels, world 0..10: column 50 is x 5.0..5.1; y 4.5 is row 55.
    let red = Style::stroke(c("red"), 1.0);
    let is_red = |llvo: &mut Llvo, v: ViewId| {
        let p = llvo.pixels(v).unwrap();
        let at = ((55 * 100 + 50) * 4) as usize;
        p.data[at] > 200 && p.data[at + 1] < 100 && p.data[at + 2] < 100
    };
    let (mut llvo, v) = setup("covered", 100, 100);
    draw(&mut llvo, v, line((5.0, 2.0), (5.02, 8.0)), red.clone());
    draw(&mut llvo, v, line((5.02, 8.0), (5.04, 3.0)), red.clone());
    assert_eq!(llvo.decimated_lines(), 1);
    let mut blue = Style::filled(c("blue"));
    blue.thick = 0.0;
    let rect = Primitive::Rectangle {
        from: pt(4.0, 0.0),
        to: pt(6.0, 10.0),
    };
    draw(&mut llvo, v, rect, blue);
    assert!(!is_red(&mut llvo, v));
    draw(&mut llvo, v, line((5.04, 3.0), (5.06, 6.0)), red.clone());
    assert_eq!(llvo.decimated_lines(), 1);
    assert!(
        is_red(&mut llvo, v),
        "the segment over the rectangle is drawn"
    );

    // A frame undrawn takes its series with it; the next frame's segments are drawn.
    let (mut llvo, v) = setup("undrawn", 100, 100);
    let owner = llvo.new_owner(true);
    type Segment = ((f64, f64), (f64, f64));
    let frame = |llvo: &mut Llvo, lines: &[Segment]| {
        llvo.begin_update(owner).unwrap();
        for &(a, b) in lines {
            llvo.draw(v, owner, &line(a, b), &red).unwrap();
        }
    };
    frame(
        &mut llvo,
        &[((5.0, 2.0), (5.02, 8.0)), ((5.02, 8.0), (5.04, 3.0))],
    );
    assert_eq!(llvo.decimated_lines(), 1);
    frame(&mut llvo, &[((5.04, 3.0), (5.06, 6.0))]);
    assert_eq!(llvo.decimated_lines(), 1);
    assert!(is_red(&mut llvo, v), "the next frame's segment is drawn");

    // Dashes follow the path: each dashed segment is drawn.
    let (mut llvo, v) = setup("dashed", 100, 100);
    let mut dashed = red.clone();
    dashed.dash = vec![2.0, 2.0];
    draw(&mut llvo, v, line((5.0, 2.0), (5.02, 8.0)), dashed.clone());
    draw(&mut llvo, v, line((5.02, 8.0), (5.04, 3.0)), dashed);
    assert_eq!(llvo.decimated_lines(), 0);
}
