//! The low-level layer on a thread of its own ([`LlvoThread`]), which the caller hands the
//! lines that can neither fail nor warn to: the same answers, refusals and warnings at the
//! same primitives as the layer drawing everything where it is asked, the same worlds and
//! pixels, most lines handed over, and waits only where the caller reaches the layer.

use std::sync::{Arc, Mutex};

use voml_llvo::{
    Adaptation, Backend, ClipMode, Color, Command, DrawCmd, FontFamily, FontSpec, HAlign,
    LazyRaster, LineCap, Llvo, LlvoError, LlvoThread, OwnerId, Point, Primitive, Recorder, Style,
    VAlign, ViewId, ViewSpec,
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
        thick: match rng.below(30) {
            0 => f64::NAN,
            1 => -2.0,
            2 => 9000.0,
            3 => 0.0,
            n => (n % 4) as f64,
        },
        alpha: if rng.below(40) == 0 { 1.5 } else { 1.0 },
        dash: if rng.below(20) == 0 {
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
        adapt: rng.below(5) != 0,
        ..Style::default()
    }
}

/// A world point: mostly inside the view's world, sometimes beyond it (clipped away, or
/// adapted to), huge, or not a number.
fn point(rng: &mut Rng, t: f64) -> Point {
    let y = match rng.below(200) {
        0 => f64::NAN,
        1 => 1e300,
        2 => -500.0,
        3 => 400.0,
        _ => rng.real(0.0, 100.0),
    };
    Point::new(t + rng.real(-1.0, 1.0), y)
}

fn strings(errors: &[voml_llvo::LlvoError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn lines_handed_to_the_layers_thread_answer_warn_and_draw_as_lines_drawn_here() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut refused, mut warned) = (0, 0);
    for plot in 0..6 {
        let spec = ViewSpec::new("plot")
            .window(160, 100)
            .world(0.0, 10.0, 0.0, 100.0)
            .margins(20, 5, 5, 15)
            .adapt(Adaptation::parse(["x+:scroll y+:rescale", "", "x+:scroll"][plot % 3]).unwrap());
        let mut here = Llvo::new(LazyRaster::new());
        let away = LlvoThread::new(Llvo::new(LazyRaster::new()));
        let a = here.create_view(spec.clone()).unwrap();
        let b = away.llvo().create_view(spec).unwrap();
        assert_eq!(a, b);
        // An owner whose frames are undrawn: its lines are kept, never handed over.
        let undrawn = here.new_owner(true);
        assert_eq!(away.llvo().new_owner(true), undrawn);
        let plain = here.new_owner(false);
        assert_eq!(away.llvo().new_owner(false), plain);
        let steps = 3000;
        let mut reaches = 0;
        for step in 0..steps {
            let case = format!("plot {plot} step {step}");
            let t = step as f64 * 0.05;
            let owner = match rng.below(20) {
                0 => undrawn,
                1..=9 => plain,
                _ => OwnerId::NONE,
            };
            let prim = match rng.below(150) {
                0 => text(point(&mut rng, t), format!("{step}")),
                _ => Primitive::Line {
                    from: point(&mut rng, t),
                    to: point(&mut rng, t),
                },
            };
            let style = style(&mut rng);
            if rng.below(25) == 0 {
                here.begin_frame(plain).unwrap();
                away.begin_frame(plain).unwrap();
            }
            if rng.below(60) == 0 {
                here.begin_frame(undrawn).unwrap();
                away.begin_frame(undrawn).unwrap();
                here.undraw(undrawn).unwrap();
                away.llvo().undraw(undrawn).unwrap();
                reaches += 1;
            }
            let (ra, rb) = (
                here.draw(a, owner, &prim, &style),
                away.draw(b, owner, &prim, &style),
            );
            assert_eq!(
                ra.as_ref().map_err(ToString::to_string),
                rb.as_ref().map_err(ToString::to_string),
                "{case}: {prim:?} {style:?}"
            );
            refused += usize::from(ra.is_err());
            // Warnings are told right after the primitive, without waiting for the thread.
            let (wa, wb) = (here.take_warnings(), away.take_warnings());
            assert_eq!(strings(&wa), strings(&wb), "{case}");
            warned += usize::from(!wa.is_empty());
            if step % 500 == 499 {
                reaches += 1;
                let reached = away.llvo();
                assert_eq!(
                    here.view_spec(a).unwrap().world,
                    reached.view_spec(b).unwrap().world,
                    "{case}"
                );
                assert_eq!(here.changes(a), reached.changes(b), "{case}");
            }
        }
        let handed = away.handed_over();
        // A view that rescales to a huge value draws at once until the value leaves it.
        if plot % 3 != 0 {
            assert!(
                handed > steps * 2 / 3,
                "plot {plot}: only {handed} of {steps} primitives handed over"
            );
        }
        // A wait only for a primitive drawn at once or a call that reached the layer.
        assert!(
            away.waits() <= steps - handed + reaches,
            "plot {plot}: waited {} times",
            away.waits()
        );
        let (pa, pb) = (here.pixels(a).unwrap(), away.llvo().pixels(b).unwrap());
        assert!(pa.data == pb.data, "plot {plot}: the pixels differ");
        assert!(away.take_failure().is_none());
    }
    assert!(
        refused > 10 && warned > 10,
        "{refused} refused, {warned} warned"
    );
}

/// A streaming plot: a line a record in a plain style, a frame begun for every record.
#[test]
fn a_streaming_plot_hands_every_line_over_and_waits_for_none() {
    let spec = ViewSpec::new("plot")
        .window(300, 200)
        .world(0.0, 10.0, 0.0, 100.0)
        .adapt(Adaptation::parse("x+:scroll y+:rescale").unwrap());
    let mut here = Llvo::new(LazyRaster::new());
    let away = LlvoThread::new(Llvo::new(LazyRaster::new()));
    let view = here.create_view(spec.clone()).unwrap();
    assert_eq!(away.llvo().create_view(spec).unwrap(), view);
    let owner = here.new_owner(false);
    assert_eq!(away.llvo().new_owner(false), owner);
    let waits = away.waits();
    let style = Style {
        adapt: true,
        ..Style::default()
    };
    let mut rng = Rng(7);
    let mut last = Point::new(0.0, 50.0);
    for step in 1..=20_000 {
        let next = Point::new(
            f64::from(step) * 0.01,
            (last.y + rng.real(-5.0, 5.0)).clamp(-50.0, 150.0),
        );
        let line = Primitive::Line {
            from: last,
            to: next,
        };
        here.begin_frame(owner).unwrap();
        away.begin_frame(owner).unwrap();
        here.draw(view, owner, &line, &style).unwrap();
        away.draw(view, owner, &line, &style).unwrap();
        assert!(here.take_warnings().is_empty() && away.take_warnings().is_empty());
        last = next;
    }
    // The first line finds out that the owner's lines can be handed over.
    assert_eq!(away.handed_over(), 20_000 - 1);
    assert_eq!(away.waits(), waits);
    let reached = away.llvo();
    assert_eq!(
        here.view_spec(view).unwrap().world,
        reached.view_spec(view).unwrap().world
    );
    drop(reached);
    let (pa, pb) = (
        here.pixels(view).unwrap(),
        away.llvo().pixels(view).unwrap(),
    );
    assert!(pa.data == pb.data, "the pixels differ");
}

#[test]
fn a_call_after_lines_comes_after_their_commands() {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let commands = heard.clone();
    let backend = Recorder::new(LazyRaster::new(), move |c: &Command| {
        if matches!(c, Command::Draw { .. } | Command::DrawOwned { .. }) {
            commands.lock().unwrap().push("line".to_string());
        }
    });
    let away = LlvoThread::new(Llvo::new(backend));
    let view = square_view(&away);
    let style = Style::default();
    for batch in 0..300 {
        for i in 0..5 {
            away.draw(view, OwnerId::NONE, &line(f64::from(i)), &style)
                .unwrap();
        }
        let marks = heard.clone();
        away.then(move || marks.lock().unwrap().push(format!("mark {batch}")));
    }
    away.catch_up();
    let heard = heard.lock().unwrap().clone();
    assert!(
        away.handed_over() > 1000,
        "{} handed over",
        away.handed_over()
    );
    // Five lines, then the mark made after them, every time.
    assert_eq!(heard.len(), 300 * 6);
    for (batch, chunk) in heard.chunks(6).enumerate() {
        assert_eq!(chunk[..5], ["line"; 5], "batch {batch}");
        assert_eq!(chunk[5], format!("mark {batch}"));
    }
}

/// A lazy raster that refuses lines of one colour and panics on lines of another: a back
/// end's own refusal, and a bug in a back end.
struct Fragile(LazyRaster);

const REFUSED: Color = Color::rgb(1, 2, 3);
const FATAL: Color = Color::rgb(3, 2, 1);

impl Fragile {
    fn take_command(&mut self, command: Command) -> Result<(), LlvoError> {
        if let Command::Draw {
            cmd: DrawCmd::Stroke { color, .. },
            ..
        } = &command
        {
            if *color == REFUSED {
                return Err(LlvoError::Backend("this colour is refused".into()));
            }
            if *color == FATAL {
                panic!("a bug in the back end");
            }
        }
        command.apply(&mut self.0)
    }
}

impl Backend for Fragile {
    voml_llvo::calls_as_commands!();

    fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.0.present(view)
    }
    fn snapshot(&mut self, view: ViewId) -> Result<voml_llvo::RgbaPixels, LlvoError> {
        self.0.snapshot(view)
    }
}

/// A layer on its own thread over the fragile back end, with a view and an owner whose
/// lines are handed over (its first line, drawn at once, found that out); and a line in
/// `colour`.
fn fragile() -> (LlvoThread<Fragile>, ViewId, impl Fn(Color) -> Style) {
    let away = LlvoThread::new(Llvo::new(Fragile(LazyRaster::new())));
    let view = square_view(&away);
    let style = |color| Style {
        color,
        ..Style::default()
    };
    away.draw(view, OwnerId::NONE, &line(1.0), &style(Color::BLACK))
        .unwrap();
    (away, view, style)
}

/// A view of 100 × 100 pixels showing 0..10 × 0..10.
fn square_view<B: Backend>(away: &LlvoThread<B>) -> ViewId {
    away.llvo()
        .create_view(
            ViewSpec::new("v")
                .window(100, 100)
                .world(0.0, 10.0, 0.0, 10.0),
        )
        .unwrap()
}

/// A text at `at`.
fn text(at: Point, content: String) -> Primitive {
    Primitive::Text {
        at,
        content,
        font: FontSpec {
            family: FontFamily::Sans,
            bold: false,
            size_px: 10.0,
        },
        halign: HAlign::Left,
        valign: VAlign::Baseline,
    }
}

/// How many pixels of `view` are the red the tests draw in.
fn red_pixels<B: Backend>(away: &LlvoThread<B>, view: ViewId) -> usize {
    let pixels = away.llvo().pixels(view).unwrap();
    pixels
        .data
        .chunks_exact(4)
        .filter(|p| p[..3] == [200, 0, 0])
        .count()
}

/// A vertical line at `x`.
fn line(x: f64) -> Primitive {
    Primitive::Line {
        from: Point::new(x, 1.0),
        to: Point::new(x, 9.0),
    }
}

/// A line the back end refuses on the layer's thread is reported, once, by the next
/// primitive drawn at once (or by `take_failure`); what was handed over after it is drawn.
#[test]
fn a_line_refused_on_the_layers_thread_is_reported_by_the_next_drawn_at_once() {
    let (away, view, style) = fragile();
    away.draw(view, OwnerId::NONE, &line(2.0), &style(REFUSED))
        .expect("handed over");
    away.draw(
        view,
        OwnerId::NONE,
        &line(5.0),
        &style(Color::rgb(200, 0, 0)),
    )
    .expect("handed over");
    assert_eq!(away.handed_over(), 2);
    let text = text(Point::new(1.0, 1.0), "t".into());
    let refused = away
        .draw(view, OwnerId::NONE, &text, &Style::default())
        .expect_err("the refusal comes first");
    assert!(refused.to_string().contains("refused"), "{refused}");
    // Reported once; the line after the refused one was drawn.
    assert!(away.take_failure().is_none());
    let red = red_pixels(&away, view);
    assert!(red > 10, "{red} red pixels");
    // (Reaching the layer made it ask again whether the owner's lines can be handed over.)
    away.draw(view, OwnerId::NONE, &line(3.0), &style(Color::BLACK))
        .unwrap();
    away.draw(view, OwnerId::NONE, &line(4.0), &style(REFUSED))
        .expect("handed over");
    assert_eq!(away.handed_over(), 3);
    assert!(away.take_failure().is_some(), "take_failure reports it too");
}

/// A layer's thread that panics (a bug in the back end it draws through) is reported, once,
/// as an error that says so; the caller does not panic, and from then on draws everything
/// itself, so that nothing more is lost.
#[test]
fn a_layers_thread_that_panics_is_reported_not_repeated() {
    let (away, view, style) = fragile();
    away.draw(view, OwnerId::NONE, &line(2.0), &style(FATAL))
        .expect("handed over");
    let stopped = away.take_failure().expect("the thread is gone");
    assert!(stopped.to_string().contains("thread stopped"), "{stopped}");
    assert!(away.take_failure().is_none(), "reported once");
    let handed = away.handed_over();
    for x in 3..8 {
        away.draw(
            view,
            OwnerId::NONE,
            &line(f64::from(x)),
            &style(Color::rgb(200, 0, 0)),
        )
        .unwrap();
    }
    assert_eq!(away.handed_over(), handed, "drawn at once");
    let red = red_pixels(&away, view);
    assert!(red > 50, "{red} red pixels");
    assert!(away.take_failure().is_none());
}
