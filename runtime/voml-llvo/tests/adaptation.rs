//! Quantitative adaptation: views that scroll or rescale before adaptive
//! primitives are drawn, zoom back in once extremes have scrolled away,
//! and remember a bounded number of extreme points.

use voml_llvo::{
    Adaptation, Color, Llvo, NullBackend, OwnerId, Point, Primitive, Style, ViewId, ViewSpec,
};

fn line(x0: f64, y0: f64, x1: f64, y1: f64) -> Primitive {
    Primitive::Line {
        from: Point::new(x0, y0),
        to: Point::new(x1, y1),
    }
}

fn adaptive() -> Style {
    Style::stroke(Color::rgb(255, 0, 0), 1.0).adapt(true)
}

fn adapt(text: &str) -> Adaptation {
    Adaptation::parse(text).expect("adaptation")
}

/// The paper's temporal line plot: x 0..10 scrolls, y 0..100 rescales.
fn plot_view<B: voml_llvo::Backend>(llvo: &mut Llvo<B>, quality: u32) -> ViewId {
    llvo.create_view(
        ViewSpec::new("plot")
            .window(200, 100)
            .world(0.0, 10.0, 0.0, 100.0)
            .adapt(adapt("x+:scroll y+:rescale"))
            .quality(quality),
    )
    .expect("view")
}

fn world<B: voml_llvo::Backend>(llvo: &Llvo<B>, v: ViewId) -> [f64; 4] {
    llvo.view_spec(v).expect("view").world
}

/// A deterministic generator.
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

/// The example of the specification: values about 50 with one peak of 160
/// at x = 12. The view zooms out to show 160 and back to 0..100 once x = 12
/// has scrolled out, i.e. when the plot passes x = 22.
#[test]
fn peak_zooms_out_and_back_in() {
    let mut llvo = Llvo::headless();
    let v = plot_view(&mut llvo, 64);
    let value = |x: i32| {
        if x == 12 {
            160.0
        } else {
            50.0 + f64::from(x % 3)
        }
    };
    let mut zoomed_at = None;
    for x in 1..=30 {
        llvo.draw(
            v,
            OwnerId::NONE,
            &line(f64::from(x - 1), value(x - 1), f64::from(x), value(x)),
            &adaptive(),
        )
        .unwrap();
        let w = world(&llvo, v);
        // Scrolling moves the window just enough.
        assert_eq!(w[1], f64::from(x.max(10)), "x = {x}");
        assert_eq!(w[0], w[1] - 10.0);
        let redraw = llvo.take_redraw(v).unwrap();
        match x {
            ..=11 => assert_eq!(w[2..], [0.0, 100.0], "x = {x}"),
            12..=22 => assert_eq!(w[2..], [0.0, 160.0], "x = {x}"),
            _ => assert_eq!(w[2..], [0.0, 100.0], "x = {x}"),
        }
        if redraw {
            zoomed_at.get_or_insert_with(Vec::new).push(x);
        }
    }
    // Rescaling (out at 12, in at 23) is lossy and asks for a redraw.
    assert_eq!(zoomed_at, Some(vec![12, 23]));
    assert_eq!(llvo.base_world(v).unwrap(), [20.0, 30.0, 0.0, 100.0]);
}

#[test]
fn plain_primitives_do_not_adapt() {
    let mut llvo = Llvo::headless();
    let v = plot_view(&mut llvo, 64);
    let plain = Style::stroke(Color::BLACK, 1.0);
    llvo.draw(v, OwnerId::NONE, &line(0.0, 0.0, 50.0, 500.0), &plain)
        .unwrap();
    assert_eq!(world(&llvo, v), [0.0, 10.0, 0.0, 100.0]);
    assert_eq!(llvo.remembered_extremes(v).unwrap(), 0);
    // A view without adaptation ignores the flag.
    let still = llvo
        .create_view(ViewSpec::new("still").world(0.0, 1.0, 0.0, 1.0))
        .unwrap();
    llvo.draw(still, OwnerId::NONE, &line(0.0, 0.0, 5.0, 5.0), &adaptive())
        .unwrap();
    assert_eq!(world(&llvo, still), [0.0, 1.0, 0.0, 1.0]);
    assert!(!llvo.take_redraw(still).unwrap());
}

/// Every direction: scroll moves both edges, rescale moves one.
#[test]
fn each_direction_scrolls_or_rescales() {
    let mut llvo = Llvo::new(NullBackend::new());
    let v = llvo
        .create_view(
            ViewSpec::new("v")
                .world(0.0, 10.0, 0.0, 10.0)
                .adapt(adapt("x-:scroll x+:rescale y-:rescale y+:scroll")),
        )
        .unwrap();
    llvo.draw(v, OwnerId::NONE, &line(-3.0, 5.0, 12.0, 5.0), &adaptive())
        .unwrap();
    // Scrolled left by 3, then the right edge grown to 12.
    assert_eq!(world(&llvo, v), [-3.0, 12.0, 0.0, 10.0]);
    llvo.draw(
        v,
        OwnerId::NONE,
        &Primitive::Circle {
            center: Point::new(5.0, 5.0),
            radius: 7.0,
        },
        &adaptive(),
    )
    .unwrap();
    // y: scrolled up by 2 (far side scrolls), then the near edge grown to
    // -2; x: already holds -2..12.
    assert_eq!(world(&llvo, v), [-3.0, 12.0, -2.0, 12.0]);
    assert_eq!(llvo.base_world(v).unwrap(), [-3.0, 7.0, 2.0, 12.0]);
}

/// Mirrored worlds adapt by value, not by edge index.
#[test]
fn mirrored_world_adapts_towards_larger_values() {
    let mut llvo = Llvo::new(NullBackend::new());
    let v = llvo
        .create_view(
            ViewSpec::new("v")
                .world(10.0, 0.0, 100.0, 0.0)
                .adapt(adapt("x+:scroll y+:rescale")),
        )
        .unwrap();
    llvo.draw(
        v,
        OwnerId::NONE,
        &line(11.0, 50.0, 12.0, 150.0),
        &adaptive(),
    )
    .unwrap();
    assert_eq!(world(&llvo, v), [12.0, 2.0, 150.0, 0.0]);
}

/// Explicit scrolling moves extremes out too, and zooms back in.
#[test]
fn explicit_scroll_zooms_back_in() {
    let mut llvo = Llvo::headless();
    let v = plot_view(&mut llvo, 64);
    llvo.draw(v, OwnerId::NONE, &line(4.0, 50.0, 5.0, 300.0), &adaptive())
        .unwrap();
    assert_eq!(world(&llvo, v), [0.0, 10.0, 0.0, 300.0]);
    llvo.scroll(v, 4.0, 0.0).unwrap();
    assert_eq!(world(&llvo, v), [4.0, 14.0, 0.0, 300.0]);
    llvo.scroll(v, 1.5, 0.0).unwrap();
    assert_eq!(world(&llvo, v), [5.5, 15.5, 0.0, 100.0]);
}

/// An explicit rescale sets a new base and forgets the extremes (their
/// pixels are gone).
#[test]
fn explicit_rescale_is_the_new_base() {
    let mut llvo = Llvo::headless();
    let v = plot_view(&mut llvo, 64);
    llvo.draw(v, OwnerId::NONE, &line(4.0, 50.0, 5.0, 300.0), &adaptive())
        .unwrap();
    llvo.rescale(v, [0.0, 20.0, 0.0, 50.0]).unwrap();
    assert_eq!(llvo.remembered_extremes(v).unwrap(), 0);
    llvo.draw(v, OwnerId::NONE, &line(4.0, 10.0, 5.0, 60.0), &adaptive())
        .unwrap();
    assert_eq!(world(&llvo, v), [0.0, 20.0, 0.0, 60.0]);
    llvo.scroll(v, 6.0, 0.0).unwrap();
    assert_eq!(world(&llvo, v), [6.0, 26.0, 0.0, 50.0]);
}

/// Quality 8, 10,000 points: the window always shows the true maximum of
/// what is visible, and zooms back in at most a third of a window late
/// (the bound for 8 remembered points); with no scrolling, the global
/// extremes are exact.
#[test]
fn bounded_quality_gets_the_extremes_right() {
    let mut llvo = Llvo::new(NullBackend::new());
    let v = llvo
        .create_view(
            ViewSpec::new("q")
                .window(400, 200)
                .world(0.0, 100.0, -1.0, 1.0)
                .adapt(adapt("x+:scroll y+:rescale"))
                .quality(8),
        )
        .unwrap();
    let mut rng = Lcg(11);
    let mut pts: Vec<(f64, f64)> = Vec::new();
    let mut exact = 0;
    for i in 0..10_000 {
        let x = f64::from(i) * 0.05;
        // Mostly inside the base, with excursions either way.
        let r = rng.next();
        let y = if r < 0.05 {
            rng.next() * 200.0 + 1.0
        } else if r < 0.1 {
            -(rng.next() * 200.0 + 1.0)
        } else {
            rng.next() - 0.5
        };
        pts.push((x, y));
        llvo.draw(v, OwnerId::NONE, &line(x, y, x, y), &adaptive())
            .unwrap();
        assert!(llvo.remembered_extremes(v).unwrap() <= 8);
        let w = world(&llvo, v);
        assert_eq!(w[2], -1.0);
        let (x0, x1) = (w[0], w[1]);
        let top = |lo: f64| {
            pts.iter()
                .filter(|p| p.0 >= lo && p.0 <= x1)
                .map(|p| p.1)
                .fold(1.0, f64::max)
        };
        // Never cuts a visible extreme, never keeps one long.
        assert!(w[3] >= top(x0), "step {i}: {w:?} < {}", top(x0));
        assert!(w[3] <= top(x0 - 100.0 / 3.0), "step {i}: {w:?}");
        exact += usize::from(w[3] == top(x0));
    }
    // Mostly exact: merges that cost no delay come first.
    assert!(exact > 9_000, "{exact} of 10000 exact");

    let g = llvo
        .create_view(
            ViewSpec::new("g")
                .world(0.0, 1.0, -1.0, 1.0)
                .adapt(adapt("x+:rescale y+:rescale y-:rescale"))
                .quality(8),
        )
        .unwrap();
    for &(x, y) in &pts {
        llvo.draw(g, OwnerId::NONE, &line(x, y, x, y), &adaptive())
            .unwrap();
        assert!(llvo.remembered_extremes(g).unwrap() <= 8);
    }
    let max = pts.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    let min = pts.iter().map(|p| p.1).fold(f64::MAX, f64::min);
    let last = pts.last().unwrap().0;
    assert_eq!(world(&llvo, g), [0.0, last, min, max]);
}

/// A long run of adaptive short lines in a scrolling, rescaling view keeps
/// its memory of extremes within the quality bound.
#[test]
fn memory_stays_flat_over_a_million_adaptive_lines() {
    let mut llvo = Llvo::new(NullBackend::new());
    let v = llvo
        .create_view(
            ViewSpec::new("long")
                .window(1000, 700)
                .world(0.0, 10.0, 0.0, 1.0)
                .adapt(adapt("x+:scroll y+:rescale y-:rescale"))
                .quality(64),
        )
        .unwrap();
    let mut rng = Lcg(5);
    let mut prev = 0.5;
    let mut most = 0;
    for i in 1..=1_000_000u32 {
        let x = f64::from(i) * 0.001;
        let y = (rng.next() - 0.5) * 6.0;
        llvo.draw(v, OwnerId::NONE, &line(x - 0.001, prev, x, y), &adaptive())
            .unwrap();
        prev = y;
        most = most.max(llvo.remembered_extremes(v).unwrap());
    }
    assert!(most <= 64, "{most} extremes remembered");
    let w = world(&llvo, v);
    assert_eq!(w[1], 1000.0);
    assert!(w[3] <= 3.0 && w[2] >= -3.0 && w[3] > 2.9 && w[2] < -2.9);
}

/// Undraw records follow the resampled pixels: a frame drawn before a
/// zoom-out is still erased cleanly after it.
#[test]
fn undraw_after_adaptive_rescale_is_clean() {
    let mut llvo = Llvo::headless();
    let v = plot_view(&mut llvo, 64);
    let owner = llvo.new_owner(true);
    let thick = Style::stroke(Color::rgb(0, 0, 255), 3.0);
    llvo.draw(v, owner, &line(1.0, 20.0, 9.0, 80.0), &thick)
        .unwrap();
    llvo.draw(
        v,
        owner,
        &line(1.0, 90.0, 9.0, 10.0),
        &thick.clone().adapt(true),
    )
    .unwrap();
    llvo.begin_frame(owner).unwrap();
    // Another component zooms the view out by 2.5 (and then in again).
    llvo.draw(
        v,
        OwnerId::NONE,
        &line(5.0, 0.0, 5.0, 250.0),
        &adaptive().clip(voml_llvo::ClipMode::Area),
    )
    .unwrap();
    assert_eq!(world(&llvo, v), [0.0, 10.0, 0.0, 250.0]);
    llvo.undraw(owner).unwrap();
    let p = llvo.pixels(v).unwrap();
    let blue = p
        .data
        .chunks_exact(4)
        .filter(|px| px[2] > px[0].saturating_add(40) && px[2] > px[1].saturating_add(40))
        .count();
    assert_eq!(blue, 0, "{blue} bluish pixels survive the undraw");
}

/// Absurd values adapt without panicking; non-finite ones do not adapt.
#[test]
fn extreme_values_are_survived() {
    let mut llvo = Llvo::headless();
    let v = plot_view(&mut llvo, 16);
    let owner = llvo.new_owner(true);
    llvo.draw(v, owner, &line(1.0, 50.0, 2.0, 60.0), &adaptive())
        .unwrap();
    llvo.draw(v, OwnerId::NONE, &line(2.0, 60.0, 3.0, 1e300), &adaptive())
        .unwrap();
    assert_eq!(world(&llvo, v)[3], 1e300);
    llvo.draw(v, OwnerId::NONE, &line(3.0, 1e300, 1e12, 50.0), &adaptive())
        .unwrap();
    assert_eq!(world(&llvo, v), [1e12 - 10.0, 1e12, 0.0, 100.0]);
    for bad in [f64::NAN, f64::INFINITY] {
        assert!(llvo
            .draw(v, OwnerId::NONE, &line(1e12, bad, 2e12, 1.0), &adaptive())
            .is_err());
        assert_eq!(world(&llvo, v), [1e12 - 10.0, 1e12, 0.0, 100.0]);
    }
    llvo.begin_update(owner).unwrap();
    // A world that would overflow is not adapted to; the line is drawn.
    let wide = llvo
        .create_view(
            ViewSpec::new("wide")
                .world(0.0, 1.0, -8e307, 8e307)
                .adapt(adapt("y+:rescale")),
        )
        .unwrap();
    llvo.draw(
        wide,
        OwnerId::NONE,
        &line(0.5, 0.0, 0.5, 1.7e308),
        &adaptive(),
    )
    .unwrap();
    assert_eq!(world(&llvo, wide), [0.0, 1.0, -8e307, 8e307]);
    llvo.png(v).unwrap();
}

/// A streaming plot whose lines may paint in the margins (the paper's Figure 5 draws them with
/// `clip="margin"`) leaves nothing in the margins as it scrolls: an adaptive line stays in the
/// scrollable area, which moves under it while the margins stay. Non-adaptive ink, such as an
/// axis label, still goes in the margins.
#[test]
fn a_scrolling_plot_leaves_no_ink_in_its_margins() {
    let mut llvo = Llvo::headless();
    let v = llvo
        .create_view(
            ViewSpec::new("plot")
                .window(200, 100)
                .margins(20, 10, 5, 15)
                .world(0.0, 10.0, 0.0, 100.0)
                .adapt(adapt("x+:scroll y+:rescale")),
        )
        .expect("view");
    let style = Style::stroke(Color::rgb(255, 0, 0), 3.0)
        .adapt(true)
        .clip(voml_llvo::ClipMode::Margin);
    let mut rng = Lcg(7);
    let mut y = 50.0;
    for i in 0..2000 {
        let x = f64::from(i) * 0.13;
        let next = (y + rng.next() * 20.0 - 10.0).clamp(1.0, 99.0);
        llvo.draw(v, OwnerId::NONE, &line(x, y, x + 0.13, next), &style)
            .expect("draw");
        y = next;
    }
    let label = Style::stroke(Color::rgb(0, 0, 255), 1.0).clip(voml_llvo::ClipMode::Margin);
    let [x0, x1, _, _] = world(&llvo, v);
    llvo.draw(
        v,
        OwnerId::NONE,
        &line(x0 - 1.0, -5.0, x1 + 1.0, -5.0),
        &label,
    )
    .expect("label");
    let p = llvo.pixels(v).expect("pixels");
    let at = |x: u32, y: u32| {
        let i = ((y * p.width + x) * 4) as usize;
        [p.data[i], p.data[i + 1], p.data[i + 2]].map(i32::from)
    };
    let mut red_in_margins = 0;
    let mut red_in_area = 0;
    let mut blue_in_margins = 0;
    for py in 0..p.height {
        for px in 0..p.width {
            let inside = (20..190).contains(&px) && (5..85).contains(&py);
            let c = at(px, py);
            let reddish = c[0] > c[2] + 40 && c[0] > c[1] + 40;
            let bluish = c[2] > c[0] + 40;
            match (inside, reddish, bluish) {
                (true, true, _) => red_in_area += 1,
                (false, true, _) => red_in_margins += 1,
                (false, _, true) => blue_in_margins += 1,
                _ => {}
            }
        }
    }
    assert!(
        red_in_area > 500,
        "the plot shows its lines ({red_in_area} pixels)"
    );
    assert_eq!(red_in_margins, 0, "the lines left ink in the margins");
    assert!(
        blue_in_margins > 100,
        "the label is in the bottom margin ({blue_in_margins})"
    );
}
