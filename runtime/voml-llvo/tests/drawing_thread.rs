//! The low-level layer drawing through a back end on a thread of its own ([`Threaded`]), which
//! it hands lines to without working out their bounds, draws what it draws through the same
//! back end on its own thread: the same pixels, the same refusals and warnings at the same
//! primitives, the same worlds; and its count of changes moves whenever the other's does.

use voml_llvo::{
    Adaptation, Backend, ClipMode, Color, LazyRaster, LineCap, Llvo, OwnerId, Point, Primitive,
    Style, Threaded, ViewSpec,
};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn real(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.below(10_000) as f64 / 10_000.0
    }
}

/// A style as a visual object may give it: mostly plain, sometimes with a thickness or alpha
/// the layer clamps (and warns about), dashes, round caps, the margin as clip, adaptive.
fn style(rng: &mut Rng) -> Style {
    let colours = [
        Color::rgb(200, 0, 0),
        Color::rgb(0, 0, 200),
        Color::rgb(0, 150, 0),
    ];
    Style {
        color: colours[rng.below(3) as usize],
        thick: match rng.below(12) {
            0 => f64::NAN,
            1 => -2.0,
            2 => 9000.0,
            3 => 0.0,
            n => (n % 4) as f64,
        },
        alpha: if rng.below(15) == 0 { 1.5 } else { 1.0 },
        dash: if rng.below(6) == 0 {
            vec![4.0, 2.0]
        } else {
            Vec::new()
        },
        cap: if rng.below(3) == 0 {
            LineCap::Round
        } else {
            LineCap::Butt
        },
        clip: if rng.below(2) == 0 {
            ClipMode::Margin
        } else {
            ClipMode::Area
        },
        adapt: rng.below(3) != 0,
        ..Style::default()
    }
}

/// A world point: mostly inside the view's world, sometimes beyond it (clipped away, or
/// adapted to), huge, or not a number.
fn point(rng: &mut Rng, t: f64) -> Point {
    let y = match rng.below(40) {
        0 => f64::NAN,
        1 => 1e300,
        2 => -500.0,
        3 => 400.0,
        _ => rng.real(0.0, 100.0),
    };
    Point::new(t + rng.real(-1.0, 1.0), y)
}

#[test]
fn lines_handed_to_a_drawing_thread_draw_warn_and_fail_as_lines_drawn_here() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut refused, mut warned, mut drawn) = (0, 0, 0);
    for plot in 0..8 {
        let spec = ViewSpec::new("plot")
            .window(160, 100)
            .world(0.0, 10.0, 0.0, 100.0)
            .margins(20, 5, 5, 15)
            .adapt(Adaptation::parse(["x+:scroll y+:rescale", "", "x+:scroll"][plot % 3]).unwrap());
        let mut here = Llvo::new(LazyRaster::new());
        let mut there = Llvo::new(Threaded::new(LazyRaster::new()));
        assert!(there.backend().bounds_later(), "lines go to the thread");
        let (a, b) = (
            here.create_view(spec.clone()).unwrap(),
            there.create_view(spec).unwrap(),
        );
        // An owner whose frames are undrawn: its lines are recorded, not handed over.
        let (oa, ob) = (here.new_owner(true), there.new_owner(true));
        for step in 0..500 {
            let case = format!("plot {plot} step {step}");
            let t = step as f64 * 0.05;
            let line = Primitive::Line {
                from: point(&mut rng, t),
                to: point(&mut rng, t),
            };
            let style = style(&mut rng);
            let (owner_a, owner_b) = match rng.below(10) {
                0 => (oa, ob),
                _ => (OwnerId::NONE, OwnerId::NONE),
            };
            if rng.below(25) == 0 {
                here.begin_frame(oa).unwrap();
                there.begin_frame(ob).unwrap();
            }
            if rng.below(60) == 0 {
                here.undraw(oa).unwrap();
                there.undraw(ob).unwrap();
            }
            let before = (here.changes(a), there.changes(b));
            let (ra, rb) = (
                here.draw(a, owner_a, &line, &style),
                there.draw(b, owner_b, &line, &style),
            );
            assert_eq!(
                ra.as_ref().map_err(ToString::to_string),
                rb.as_ref().map_err(ToString::to_string),
                "{case}: {line:?} {style:?}"
            );
            refused += usize::from(ra.is_err());
            let (wa, wb) = (here.take_warnings(), there.take_warnings());
            assert_eq!(
                wa.iter().map(ToString::to_string).collect::<Vec<_>>(),
                wb.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "{case}"
            );
            warned += usize::from(!wa.is_empty());
            if here.changes(a) != before.0 {
                drawn += 1;
                assert_ne!(there.changes(b), before.1, "{case}: a change not counted");
            }
            assert_eq!(
                here.view_spec(a).unwrap().world,
                there.view_spec(b).unwrap().world,
                "{case}"
            );
            if step % 97 == 0 || step == 499 {
                let (pa, pb) = (here.pixels(a).unwrap(), there.pixels(b).unwrap());
                assert!(pa.data == pb.data, "{case}: the pixels differ");
            }
        }
        assert!(there.backend_mut().finish().is_ok(), "plot {plot}");
    }
    // The cases the test is about all happened.
    assert!(refused > 50, "{refused} lines refused");
    assert!(warned > 200, "{warned} lines warned about");
    assert!(drawn > 2000, "{drawn} lines drawn");
}
