//! Behaviour of the LLVO core that is not about how pictures look: memory
//! of undraw records, errors and clamping, control methods, buffering,
//! determinism.

use voml_llvo::{
    Color, FontSpec, HAlign, InfoItem, Llvo, LlvoError, NullBackend, OwnerId, Point, Primitive,
    Style, VAlign, ViewId, ViewSpec,
};

fn line(x0: f64, y0: f64, x1: f64, y1: f64) -> Primitive {
    Primitive::Line {
        from: Point::new(x0, y0),
        to: Point::new(x1, y1),
    }
}

fn red(thick: f64) -> Style {
    Style::stroke(Color::rgb(255, 0, 0), thick)
}

fn view(llvo: &mut Llvo, w: u32, h: u32) -> ViewId {
    llvo.create_view(ViewSpec::new("v").window(w, h).world(0.0, 10.0, 0.0, 10.0))
        .unwrap()
}

fn count_colour(llvo: &mut Llvo, v: ViewId, rgb: [u8; 3]) -> usize {
    let p = llvo.pixels(v).unwrap();
    p.data.chunks_exact(4).filter(|px| px[..3] == rgb).count()
}

/// A long run must not accumulate history: an owner that never undraws
/// records nothing at all.
#[test]
fn million_lines_record_nothing() {
    let mut llvo = Llvo::headless();
    let v = view(&mut llvo, 32, 32);
    let owner = llvo.new_owner(false);
    for i in 0..1_000_000u32 {
        let x = f64::from(i % 1000) / 100.0;
        llvo.draw(v, owner, &line(x, 1.0, x + 0.05, 2.0), &red(1.0))
            .unwrap();
        if i % 100_000 == 0 {
            assert_eq!(llvo.recorded_len(owner), 0);
        }
    }
    assert_eq!(llvo.recorded_len(owner), 0);
    assert_eq!(llvo.recorded_len(OwnerId::NONE), 0);
}

/// An undrawable owner keeps only its last frame, and a frame that grows
/// past the cap is folded into boxes, so memory stays bounded even then.
#[test]
fn undrawable_owner_memory_is_bounded() {
    let mut llvo = Llvo::new(NullBackend::new());
    let v = llvo
        .create_view(
            ViewSpec::new("v")
                .window(200, 200)
                .world(0.0, 10.0, 0.0, 10.0),
        )
        .unwrap();
    let owner = llvo.new_owner(true);
    for frame in 0..50 {
        llvo.begin_update(owner).unwrap();
        for i in 0..100 {
            let y = f64::from(i) / 10.0;
            llvo.draw(
                v,
                owner,
                &line(0.0, y, 10.0, y + f64::from(frame) / 100.0),
                &red(1.0),
            )
            .unwrap();
        }
        assert!(
            llvo.recorded_len(owner) <= 200,
            "frame {frame}: {}",
            llvo.recorded_len(owner)
        );
    }
    llvo.set_record_cap(1000);
    for i in 0..200_000u32 {
        let y = f64::from(i % 100) / 10.0;
        llvo.draw(v, owner, &line(0.0, y, 10.0, y), &red(1.0))
            .unwrap();
    }
    assert!(
        llvo.recorded_len(owner) <= 1000 + 200,
        "{}",
        llvo.recorded_len(owner)
    );
}

/// After folding, undraw clears boxes: still no fringe left.
#[test]
fn folded_frame_still_undraws_clean() {
    let mut llvo = Llvo::headless();
    let v = view(&mut llvo, 100, 100);
    let owner = llvo.new_owner(true);
    llvo.set_record_cap(10);
    for i in 0..40 {
        let x = f64::from(i) / 4.0;
        llvo.draw(v, owner, &line(x, 1.0, x + 0.3, 9.0), &red(2.0))
            .unwrap();
    }
    assert!(llvo.recorded_len(owner) < 10);
    llvo.begin_update(owner).unwrap();
    assert_eq!(count_colour(&mut llvo, v, [255, 255, 255]), 100 * 100);
}

/// Only the last frame is undrawn: an earlier frame that was already
/// erased is not erased twice, and the frame in progress is kept.
#[test]
fn undraw_erases_the_last_frame_only() {
    let mut llvo = Llvo::headless();
    let v = view(&mut llvo, 100, 100);
    let owner = llvo.new_owner(true);
    llvo.draw(v, owner, &line(1.0, 1.0, 1.0, 9.0), &red(4.0))
        .unwrap();
    llvo.begin_update(owner).unwrap();
    llvo.draw(v, owner, &line(5.0, 1.0, 5.0, 9.0), &red(4.0))
        .unwrap();
    let drawn = count_colour(&mut llvo, v, [255, 0, 0]);
    assert_eq!(drawn, 4 * 80);
    // Undraw without ending the frame: nothing to erase yet.
    llvo.undraw(owner).unwrap();
    assert_eq!(count_colour(&mut llvo, v, [255, 0, 0]), drawn);
    llvo.begin_update(owner).unwrap();
    assert_eq!(count_colour(&mut llvo, v, [255, 0, 0]), 0);
}

/// Undraw finds content where scrolling moved it.
#[test]
fn undraw_follows_scrolling() {
    let mut llvo = Llvo::headless();
    let v = view(&mut llvo, 100, 100);
    let owner = llvo.new_owner(true);
    llvo.draw(v, owner, &line(5.0, 1.0, 5.0, 9.0), &red(3.0))
        .unwrap();
    llvo.scroll(v, 2.0, 0.0).unwrap();
    assert!(count_colour(&mut llvo, v, [255, 0, 0]) > 0);
    llvo.begin_update(owner).unwrap();
    assert_eq!(count_colour(&mut llvo, v, [255, 255, 255]), 100 * 100);
}

/// Sub-pixel scrolls accumulate instead of being lost.
#[test]
fn fractional_scrolls_add_up() {
    let mut llvo = Llvo::headless();
    let v = view(&mut llvo, 100, 100);
    llvo.draw(v, OwnerId::NONE, &line(5.0, 0.0, 5.0, 10.0), &red(2.0))
        .unwrap();
    for _ in 0..10 {
        llvo.scroll(v, 0.03, 0.0).unwrap(); // 0.3 px each
    }
    let p = llvo.pixels(v).unwrap();
    // Drawn at x 49..51, moved left by 3 px.
    assert_eq!(p.pixel(46, 50), Some([255, 0, 0, 255]));
    assert_eq!(p.pixel(47, 50), Some([255, 0, 0, 255]));
    assert_eq!(p.pixel(48, 50), Some([255, 255, 255, 255]));
}

#[test]
fn rescale_and_resize_clear_and_ask_for_redraw() {
    let mut llvo = Llvo::headless();
    let v = llvo
        .create_view(
            ViewSpec::new("v")
                .window(100, 100)
                .margins(10, 0, 0, 10)
                .world(0.0, 10.0, 0.0, 10.0),
        )
        .unwrap();
    llvo.draw(
        v,
        OwnerId::NONE,
        &line(-2.0, -0.5, 12.0, -0.5),
        &red(2.0).clip(voml_llvo::ClipMode::Margin),
    )
    .unwrap();
    llvo.draw(v, OwnerId::NONE, &line(5.0, 0.0, 5.0, 10.0), &red(2.0))
        .unwrap();
    assert!(!llvo.needs_redraw(v).unwrap());
    llvo.rescale(v, [0.0, 20.0, 0.0, 20.0]).unwrap();
    assert!(llvo.needs_redraw(v).unwrap());
    // The margin line (two whole rows, 100 px wide) survives, the area
    // line is gone.
    assert_eq!(count_colour(&mut llvo, v, [255, 0, 0]), 200);
    assert!(llvo.take_redraw(v).unwrap());
    assert!(!llvo.needs_redraw(v).unwrap());

    llvo.resize(v, 300, 200).unwrap();
    assert!(llvo.take_redraw(v).unwrap());
    let info = llvo.view_info(v).unwrap();
    let list = info.as_list();
    assert_eq!(list[0], InfoItem::Text("v".into()));
    assert_eq!(list[5], InfoItem::Int(300));
    assert_eq!(list[6], InfoItem::Int(200));
    assert_eq!(list[7..], [0.0, 20.0, 0.0, 20.0].map(InfoItem::Real));
    assert_eq!(
        llvo.mapping(v).unwrap().area,
        voml_llvo::PxRect::new(10, 0, 290, 190)
    );
    assert_eq!(count_colour(&mut llvo, v, [255, 255, 255]), 300 * 200);
}

#[test]
fn buffering_hides_drawing_until_flush() {
    let mut llvo = Llvo::headless();
    let v = view(&mut llvo, 50, 50);
    llvo.begin_buffer(v).unwrap();
    llvo.draw(v, OwnerId::NONE, &line(1.0, 5.0, 9.0, 5.0), &red(6.0))
        .unwrap();
    assert_eq!(count_colour(&mut llvo, v, [255, 0, 0]), 0);
    llvo.flush(v).unwrap();
    assert!(count_colour(&mut llvo, v, [255, 0, 0]) > 0);
}

#[test]
fn same_calls_give_identical_png_bytes() {
    let picture = || {
        let mut llvo = Llvo::headless();
        let v = view(&mut llvo, 120, 90);
        llvo.draw(v, OwnerId::NONE, &line(1.0, 1.0, 9.0, 8.0), &red(5.5))
            .unwrap();
        let text = Primitive::Text {
            at: Point::new(5.0, 5.0),
            content: "same".into(),
            font: FontSpec::default(),
            halign: HAlign::Center,
            valign: VAlign::Center,
        };
        llvo.draw(v, OwnerId::NONE, &text, &Style::default())
            .unwrap();
        llvo.png(v).unwrap()
    };
    assert_eq!(picture(), picture());
}

#[test]
fn bad_numbers_are_skipped_or_clamped_never_panic() {
    let mut llvo = Llvo::headless();
    let v = view(&mut llvo, 100, 100);
    let o = OwnerId::NONE;
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = llvo
            .draw(v, o, &line(bad, 1.0, 5.0, 5.0), &red(1.0))
            .unwrap_err();
        assert!(
            matches!(
                e,
                LlvoError::Skipped {
                    primitive: "line",
                    ..
                }
            ),
            "{e}"
        );
        let c = Primitive::Circle {
            center: Point::new(5.0, 5.0),
            radius: bad,
        };
        assert!(llvo.draw(v, o, &c, &red(1.0)).is_err());
    }
    // Too large for f64 after mapping.
    assert!(llvo
        .draw(v, o, &line(1e308, 1e308, 5.0, 5.0), &red(1.0))
        .is_err());
    // Huge but finite: drawn, cut to the window, and visible where it crosses.
    llvo.draw(v, o, &line(-1e15, 5.0, 1e15, 5.0), &red(2.0))
        .unwrap();
    assert_eq!(
        llvo.pixels(v).unwrap().pixel(50, 50),
        Some([255, 0, 0, 255])
    );
    let poly = Primitive::Polygon {
        points: vec![
            Point::new(-1e200, -1e200),
            Point::new(1e200, -1e200),
            Point::new(0.0, 1e200),
        ],
    };
    llvo.draw(v, o, &poly, &Style::filled(Color::rgb(0, 0, 255)))
        .unwrap();
    assert_eq!(
        llvo.pixels(v).unwrap().pixel(50, 90),
        Some([0, 0, 255, 255])
    );
    let huge_circle = Primitive::Circle {
        center: Point::new(5.0, 5.0),
        radius: 1e12,
    };
    assert!(llvo.draw(v, o, &huge_circle, &red(1.0)).is_err());
    // Far away: nothing to draw, not an error.
    let far = Primitive::Circle {
        center: Point::new(1e15, 5.0),
        radius: 1.0,
    };
    llvo.draw(v, o, &far, &red(1.0)).unwrap();

    // Clamped values go ahead, with warnings.
    let _ = llvo.take_warnings();
    llvo.draw(v, o, &line(1.0, 1.0, 2.0, 2.0), &red(-3.0))
        .unwrap();
    llvo.draw(v, o, &line(1.0, 1.0, 2.0, 2.0), &red(f64::NAN))
        .unwrap();
    llvo.draw(v, o, &line(1.0, 1.0, 2.0, 2.0), &red(1e30))
        .unwrap();
    let weird = Style {
        alpha: f64::NAN,
        dash: vec![1.0, -1.0],
        ..red(1.0)
    };
    llvo.draw(v, o, &line(1.0, 1.0, 2.0, 2.0), &weird).unwrap();
    let tiny_dash = Style {
        dash: vec![0.0001],
        ..red(1.0)
    };
    llvo.draw(v, o, &line(0.0, 0.0, 10.0, 10.0), &tiny_dash)
        .unwrap();
    let warnings = llvo.take_warnings();
    assert_eq!(warnings.len(), 6, "{warnings:?}");
    assert!(
        warnings[0].to_string().contains("thickness"),
        "{}",
        warnings[0]
    );

    let text = |size: f32| Primitive::Text {
        at: Point::new(1.0, 1.0),
        content: "x".into(),
        font: FontSpec {
            size_px: size,
            ..FontSpec::default()
        },
        halign: HAlign::Left,
        valign: VAlign::Baseline,
    };
    assert!(llvo.draw(v, o, &text(f32::NAN), &Style::default()).is_err());
    assert!(llvo.draw(v, o, &text(-4.0), &Style::default()).is_err());
    llvo.draw(v, o, &text(1e9), &Style::default()).unwrap();
    assert_eq!(llvo.take_warnings().len(), 1);

    let few = Primitive::Polyline {
        points: vec![Point::new(1.0, 1.0)],
    };
    assert!(llvo.draw(v, o, &few, &red(1.0)).is_err());
}

#[test]
fn bad_views_and_worlds_are_errors() {
    let mut llvo = Llvo::headless();
    let v = view(&mut llvo, 10, 10);
    let dup = llvo.create_view(ViewSpec::new("v"));
    assert_eq!(dup.unwrap_err(), LlvoError::DuplicateView("v".into()));
    for world in [
        [0.0, 0.0, 0.0, 1.0],
        [0.0, 1.0, f64::NAN, 1.0],
        [f64::MIN, f64::MAX, 0.0, 1.0],
    ] {
        let spec = ViewSpec::new("w").world(world[0], world[1], world[2], world[3]);
        assert!(matches!(
            llvo.create_view(spec),
            Err(LlvoError::BadWorld(_))
        ));
        assert!(matches!(
            llvo.rescale(v, world),
            Err(LlvoError::BadWorld(_))
        ));
    }
    let gone = ViewId(99);
    assert_eq!(llvo.png(gone).unwrap_err(), LlvoError::UnknownView(gone));
    assert!(llvo
        .draw(gone, OwnerId::NONE, &line(0.0, 0.0, 1.0, 1.0), &red(1.0))
        .is_err());
    assert!(llvo.scroll(v, f64::NAN, 0.0).is_err());
    assert!(llvo.undraw(OwnerId(1234)).is_err());
    llvo.close_view(v).unwrap();
    assert!(llvo.view_info(v).is_err());
    assert_eq!(llvo.view_by_name("v"), None);

    // Window sizes are clamped, with a warning.
    let big = llvo
        .create_view(ViewSpec::new("big").window(0, 1_000_000))
        .unwrap();
    let info = llvo.view_info(big).unwrap();
    assert_eq!((info.width, info.height), (1, voml_llvo::MAX_WINDOW));
    assert_eq!(llvo.take_warnings().len(), 2);
}

#[test]
fn images_that_do_not_decode_are_errors() {
    let mut llvo = Llvo::headless();
    for bytes in [&b""[..], b"not an image", b"\x89PNG\r\n\x1a\ntruncated"] {
        let e = llvo.load_image(bytes).unwrap_err();
        assert!(matches!(e, LlvoError::ImageDecode(_)), "{e}");
        assert!(e.to_string().starts_with("cannot decode image"));
    }
    let v = view(&mut llvo, 10, 10);
    let fig = Primitive::Figure {
        image: voml_llvo::ImageId(7),
        orig_origin: (0.0, 0.0),
        orig_extents: (0.0, 0.0),
        world_origin: Point::new(0.0, 0.0),
        world_extents: (1.0, 1.0),
    };
    assert_eq!(
        llvo.draw(v, OwnerId::NONE, &fig, &Style::default()),
        Err(LlvoError::UnknownImage(voml_llvo::ImageId(7)))
    );
}

#[test]
fn gif_and_jpeg_load() {
    let img = image::RgbaImage::from_pixel(3, 2, image::Rgba([10, 200, 30, 255]));
    let mut llvo = Llvo::headless();
    for format in [image::ImageFormat::Gif, image::ImageFormat::Jpeg] {
        let mut bytes = Vec::new();
        let dynimg = image::DynamicImage::ImageRgba8(img.clone());
        let dynimg = if format == image::ImageFormat::Jpeg {
            image::DynamicImage::ImageRgb8(dynimg.to_rgb8())
        } else {
            dynimg
        };
        dynimg
            .write_to(&mut std::io::Cursor::new(&mut bytes), format)
            .unwrap();
        let id = llvo.load_image(&bytes).unwrap();
        assert_eq!(llvo.image_size(id).unwrap(), (3, 2));
    }
}

#[test]
fn png_encodes_the_view() {
    let mut llvo = Llvo::headless();
    let v = view(&mut llvo, 20, 10);
    let bytes = llvo.png(v).unwrap();
    let back = image::load_from_memory(&bytes).unwrap();
    assert_eq!((back.width(), back.height()), (20, 10));
    assert_eq!(
        bytes,
        voml_llvo::encode_png(&llvo.pixels(v).unwrap()).unwrap()
    );
    assert!(matches!(
        llvo.png(ViewId(99)),
        Err(LlvoError::UnknownView(_))
    ));
}

#[test]
fn null_backend_counts_commands() {
    let mut llvo = Llvo::new(NullBackend::new());
    let v = llvo.create_view(ViewSpec::new("n")).unwrap();
    llvo.draw(v, OwnerId::NONE, &line(0.1, 0.1, 0.9, 0.9), &red(1.0))
        .unwrap();
    assert_eq!(llvo.backend().commands, 1);
    assert!(matches!(llvo.png(v), Err(LlvoError::Unsupported(_))));
}

#[test]
fn warnings_are_bounded() {
    let mut llvo = Llvo::headless();
    let v = view(&mut llvo, 10, 10);
    for _ in 0..300 {
        llvo.draw(v, OwnerId::NONE, &line(1.0, 1.0, 2.0, 2.0), &red(-1.0))
            .unwrap();
    }
    let w = llvo.take_warnings();
    assert_eq!(w.len(), 257);
    assert_eq!(w[256], LlvoError::WarningsDropped(44));
    assert!(llvo.take_warnings().is_empty());
}

/// Painting through a clip (the raster back end cuts upright rectangles to it, and paints
/// what else the clip cuts on a scratch pixmap) paints what tiny-skia paints through a clip
/// mask: exactly nothing outside the clip, and inside it the same pixels up to the rounding
/// of anti-aliased edges (tiny-skia rasterises an unmasked rectangle on its own path). 2,000
/// random rectangles, clips and modes.
#[test]
fn clipped_rectangles_paint_as_through_a_mask() {
    use voml_llvo::{Backend, DrawCmd, PaintMode, PathSeg, PxPath, PxRect, RasterBackend};
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let (w, h) = (64u32, 48u32);
    for case in 0..2000 {
        let coord = |v: u64, size: u32| v as f32 / 8.0 - f32::from(size as u16) * 0.75;
        let (x0, x1) = (coord(next(1600), w), coord(next(1600), w));
        let (y0, y1) = (coord(next(1200), h), coord(next(1200), h));
        let clip = PxRect::new(
            next(40) as i32 - 8,
            next(30) as i32 - 8,
            next(60) as u32,
            next(50) as u32,
        );
        let mode = if next(4) == 0 {
            PaintMode::Erase
        } else {
            PaintMode::Blend
        };
        // Erasing paints the background, which is opaque.
        let color = match mode {
            PaintMode::Erase => Color::rgb(200, 40, 10),
            PaintMode::Blend => Color::rgba(200, 40, 10, 150 + next(106) as u8),
        };
        let path = PxPath {
            segs: vec![
                PathSeg::MoveTo(x0, y0),
                PathSeg::LineTo(x1, y0),
                PathSeg::LineTo(x1, y1),
                PathSeg::LineTo(x0, y1),
                PathSeg::Close,
            ]
            .into(),
        };
        let mut backend = RasterBackend::new();
        backend
            .create_surface(ViewId(0), "t", w, h, Color::rgb(250, 250, 240))
            .unwrap();
        backend
            .draw(
                ViewId(0),
                &DrawCmd::Fill {
                    path,
                    color,
                    clip,
                    mode,
                },
            )
            .unwrap();
        let got = backend.snapshot(ViewId(0)).unwrap();

        // The same with tiny-skia alone, through a mask.
        let mut pixmap = tiny_skia::Pixmap::new(w, h).unwrap();
        pixmap.fill(tiny_skia::Color::from_rgba8(250, 250, 240, 255));
        let clip_in = clip.intersect(&PxRect::new(0, 0, w, h));
        if !clip_in.is_empty() && x0 != x1 && y0 != y1 {
            let mut mask = tiny_skia::Mask::new(w, h).unwrap();
            let r = tiny_skia::Rect::from_xywh(
                clip_in.x as f32,
                clip_in.y as f32,
                clip_in.w as f32,
                clip_in.h as f32,
            )
            .unwrap();
            mask.fill_path(
                &tiny_skia::PathBuilder::from_rect(r),
                tiny_skia::FillRule::Winding,
                false,
                tiny_skia::Transform::identity(),
            );
            let mut pb = tiny_skia::PathBuilder::new();
            pb.move_to(x0, y0);
            pb.line_to(x1, y0);
            pb.line_to(x1, y1);
            pb.line_to(x0, y1);
            pb.close();
            let mut paint = tiny_skia::Paint::default();
            paint.set_color_rgba8(color.r, color.g, color.b, color.a);
            paint.anti_alias = mode == PaintMode::Blend;
            if let Some(p) = pb.finish() {
                pixmap.fill_path(
                    &p,
                    &paint,
                    tiny_skia::FillRule::Winding,
                    tiny_skia::Transform::identity(),
                    Some(&mask),
                );
            }
        }
        let want: Vec<u8> = pixmap
            .pixels()
            .iter()
            .flat_map(|p| {
                let c = p.demultiply();
                [c.red(), c.green(), c.blue(), c.alpha()]
            })
            .collect();
        let inside = |i: usize| {
            let (x, y) = ((i % w as usize) as i32, (i / w as usize) as i32);
            x >= clip_in.x
                && x < clip_in.right() as i32
                && y >= clip_in.y
                && y < clip_in.bottom() as i32
        };
        let differs = |i: usize| {
            let (a, b) = (&got.data[i * 4..i * 4 + 4], &want[i * 4..i * 4 + 4]);
            let worst = a
                .iter()
                .zip(b)
                .map(|(x, y)| x.abs_diff(*y))
                .max()
                .unwrap_or(0);
            worst > if inside(i) { 2 } else { 0 }
        };
        if (0..(w * h) as usize).any(differs) {
            let diffs: Vec<(usize, usize, [u8; 4], [u8; 4])> = (0..(w * h) as usize)
                .filter(|&i| differs(i))
                .take(5)
                .map(|i| {
                    let g = &got.data[i * 4..i * 4 + 4];
                    let x = &want[i * 4..i * 4 + 4];
                    (
                        i % w as usize,
                        i / w as usize,
                        [g[0], g[1], g[2], g[3]],
                        [x[0], x[1], x[2], x[3]],
                    )
                })
                .collect();
            panic!("case {case}: rect ({x0},{y0})-({x1},{y1}) clip {clip:?} {mode:?}: {diffs:?}");
        }
    }
}

/// Erasing through a clip leaves the pixels outside the clip alone (tiny-skia's `Source`
/// blending clears what a mask hides; the raster back end must not).
#[test]
fn erasing_through_a_clip_touches_nothing_outside_it() {
    use voml_llvo::{
        Backend, DrawCmd, LineCap, LineJoin, PaintMode, PathSeg, PxPath, PxRect, RasterBackend,
        StrokeStyle,
    };
    let mut backend = RasterBackend::new();
    let bg = Color::rgb(250, 250, 240);
    backend.create_surface(ViewId(0), "t", 40, 40, bg).unwrap();
    let clip = PxRect::new(10, 10, 20, 20);
    backend
        .draw(
            ViewId(0),
            &DrawCmd::Stroke {
                path: PxPath {
                    segs: vec![PathSeg::MoveTo(-5.0, -5.0), PathSeg::LineTo(45.0, 45.0)].into(),
                },
                style: StrokeStyle {
                    width: 6.0,
                    cap: LineCap::Butt,
                    join: LineJoin::Miter,
                    dash: Vec::new(),
                    dash_offset: 0.0,
                },
                color: Color::rgb(0, 0, 200),
                clip,
                mode: PaintMode::Erase,
            },
        )
        .unwrap();
    let p = backend.snapshot(ViewId(0)).unwrap();
    for (x, y) in [(2, 2), (5, 5), (35, 35), (38, 38)] {
        assert_eq!(
            p.pixel(x, y),
            Some([250, 250, 240, 255]),
            "({x}, {y}) outside the clip"
        );
    }
    assert_eq!(p.pixel(20, 20), Some([0, 0, 200, 255]), "inside the clip");
}
