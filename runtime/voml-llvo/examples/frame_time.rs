//! Frame time of the headless raster LLVO, and what adaptation costs.
//!
//! `cargo run --release -p voml-llvo --example frame_time`
//!
//! 1. Frames of 1 k, 10 k and 100 k line primitives in a 1000x700 view
//!    (clear, draw, present), for 1 px and 2 px lines. The target is 10 k
//!    lines a frame at 60 frames/s on one core: under 16.7 ms.
//! 2. One adaptive draw against one plain draw: the bookkeeping alone
//!    (a counting back end), a draw that needs no adaptation, a draw that
//!    scrolls the view by a pixel, and a draw that makes the view zoom
//!    (a resample of the scrollable area).

use std::hint::black_box;
use std::time::{Duration, Instant};

use voml_llvo::{
    Adaptation, Backend, Color, Llvo, NullBackend, OwnerId, Point, Primitive, PxRemap, Style,
    ViewId, ViewSpec,
};

const W: u32 = 1000;
const H: u32 = 700;

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

fn line(x0: f64, y0: f64, x1: f64, y1: f64) -> Primitive {
    Primitive::Line {
        from: Point::new(x0, y0),
        to: Point::new(x1, y1),
    }
}

/// Short lines (5 to 30 px) scattered over the view, in world = pixels.
fn scattered(n: usize, seed: u64) -> Vec<Primitive> {
    let mut r = Lcg(seed);
    (0..n)
        .map(|_| {
            let (x, y) = (r.next() * f64::from(W), r.next() * f64::from(H));
            let (len, a) = (5.0 + r.next() * 25.0, r.next() * std::f64::consts::TAU);
            line(x, y, x + len * a.cos(), y + len * a.sin())
        })
        .collect()
}

fn view<B: Backend>(llvo: &mut Llvo<B>, name: &str, adapt: &str) -> ViewId {
    llvo.create_view(
        ViewSpec::new(name)
            .window(W, H)
            .world(0.0, f64::from(W), 0.0, f64::from(H))
            .adapt(Adaptation::parse(adapt).expect("adaptation")),
    )
    .expect("view")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn frames(n: usize, thick: f64) -> f64 {
    let mut llvo = Llvo::headless();
    let v = view(&mut llvo, "frames", "");
    let prims = scattered(n, 1);
    let styles: Vec<Style> = ["navy", "firebrick", "darkgreen", "black"]
        .iter()
        .map(|c| Style::stroke(Color::parse(c).unwrap_or(Color::BLACK), thick))
        .collect();
    let frame = |llvo: &mut Llvo| {
        llvo.clear(v).expect("clear");
        for (i, p) in prims.iter().enumerate() {
            llvo.draw(v, OwnerId::NONE, p, &styles[i % styles.len()])
                .expect("draw");
        }
        llvo.present(v).expect("present");
    };
    frame(&mut llvo);
    let count = (200_000 / n).clamp(3, 50);
    let t = Instant::now();
    for _ in 0..count {
        frame(&mut llvo);
    }
    ms(t.elapsed()) / count as f64
}

/// Microseconds per draw of `prims` with `style` in view `v`.
fn per_draw<B: Backend>(llvo: &mut Llvo<B>, v: ViewId, prims: &[Primitive], style: &Style) -> f64 {
    let t = Instant::now();
    for p in prims {
        llvo.draw(v, OwnerId::NONE, black_box(p), style)
            .expect("draw");
    }
    t.elapsed().as_secs_f64() * 1e6 / prims.len() as f64
}

/// A temporal plot: `n` lines one pixel apart in x, values inside the
/// view (so that rescaling never triggers) unless `peaks`.
fn plot(n: usize, x0: f64, peaks: bool) -> Vec<Primitive> {
    let mut r = Lcg(9);
    let mut prev = 350.0;
    (0..n)
        .map(|i| {
            let x = x0 + i as f64;
            let mut y = 350.0 + (x * 0.05).sin() * 200.0 + (r.next() - 0.5) * 50.0;
            if peaks && i % 100 == 50 {
                y += 400.0 + r.next() * 300.0;
            }
            let p = line(x - 1.0, prev, x, y);
            prev = y;
            p
        })
        .collect()
}

fn main() {
    println!("Frame time, {W}x{H} view, clear + N short lines + present (one core):");
    println!("{:>10} {:>14} {:>14}", "lines", "1 px (ms)", "2 px (ms)");
    for n in [1_000, 10_000, 100_000] {
        let (a, b) = (frames(n, 1.0), frames(n, 2.0));
        println!("{n:>10} {a:>14.2} {b:>14.2}");
    }

    println!();
    println!("One draw, microseconds (mean over the run):");
    let plain = Style::stroke(Color::rgb(0, 0, 128), 1.0);
    let adaptive = plain.clone().adapt(true);
    let adapt = "x+:scroll y+:rescale";

    // The bookkeeping alone: a back end that draws nothing.
    let n = 200_000;
    let inside = scattered(n, 3);
    let mut null = Llvo::new(NullBackend::new());
    let (vp, va) = (view(&mut null, "p", ""), view(&mut null, "a", adapt));
    let p = per_draw(&mut null, vp, &inside, &plain);
    let a = per_draw(&mut null, va, &inside, &adaptive);
    println!("  core only, no adaptation needed: plain {p:.3}, adaptive {a:.3}");

    // Raster, lines inside the view: adaptation finds nothing to do.
    let mut llvo = Llvo::headless();
    let (vp, va) = (view(&mut llvo, "p", ""), view(&mut llvo, "a", adapt));
    let p = per_draw(&mut llvo, vp, &inside, &plain);
    let a = per_draw(&mut llvo, va, &inside, &adaptive);
    println!("  raster, no adaptation needed:    plain {p:.3}, adaptive {a:.3}");

    // A temporal plot past the right edge: every draw scrolls one pixel.
    let n = 20_000;
    let vs = view(&mut llvo, "s", adapt);
    let s = per_draw(
        &mut llvo,
        vs,
        &plot(n, f64::from(W) + 1.0, false),
        &adaptive,
    );
    println!("  raster, each draw scrolls 1 px:  adaptive {s:.3}");

    // The same with a peak every 100 samples: the view zooms out for it
    // and back in 1000 samples later, each a resample of the area.
    let vz = view(&mut llvo, "z", adapt);
    let t = Instant::now();
    let prims = plot(n, f64::from(W) + 1.0, true);
    let mut zooms = 0u32;
    let mut zoom_time = Duration::ZERO;
    for p in &prims {
        let t0 = Instant::now();
        llvo.draw(vz, OwnerId::NONE, p, &adaptive).expect("draw");
        if llvo.take_redraw(vz).expect("view") {
            zooms += 1;
            zoom_time += t0.elapsed();
        }
    }
    let total = t.elapsed();
    println!(
        "  raster, scrolling with peaks:     adaptive {:.3} ({zooms} zooms in {n} draws, {:.2} ms each)",
        total.as_secs_f64() * 1e6 / n as f64,
        ms(zoom_time) / f64::from(zooms.max(1)),
    );
    let area = llvo.mapping(vz).expect("view").area;
    let bg = Color::WHITE;
    let count = 20;
    let t = Instant::now();
    for i in 0..count {
        // Alternately zoom out by 1.6 along y and back in, x unchanged.
        let s = if i % 2 == 0 { 1.0 / 1.6 } else { 1.6 };
        let map = PxRemap {
            sx: 1.0,
            ox: 0.0,
            sy: s,
            oy: f64::from(H) * (1.0 - s),
        };
        llvo.backend_mut()
            .remap_area(vz, area, map, bg)
            .expect("remap");
    }
    println!(
        "  one resample of the {}x{} area:  {:.2} ms (y only)",
        area.w,
        area.h,
        ms(t.elapsed()) / f64::from(count)
    );
    let t = Instant::now();
    for i in 0..count {
        let s = if i % 2 == 0 { 1.0 / 1.6 } else { 1.6 };
        let map = PxRemap {
            sx: s,
            ox: 0.0,
            sy: s,
            oy: f64::from(H) * (1.0 - s),
        };
        llvo.backend_mut()
            .remap_area(vz, area, map, bg)
            .expect("remap");
    }
    println!(
        "  one resample, both axes:          {:.2} ms",
        ms(t.elapsed()) / f64::from(count)
    );
    println!(
        "  remembered extremes at the end:   {}",
        llvo.remembered_extremes(vz).expect("view")
    );
}
