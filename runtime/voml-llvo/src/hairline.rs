//! One-pixel anti-aliased line segments, the most common thing a stream draws, painted
//! straight into the pixels: the same pixels, bit for bit, as tiny-skia's anti-aliased
//! hairline (Skia's `SkScan_Antihair`), without building its per-pixel pipeline for every
//! pair of pixels. Only a segment tiny-skia would draw without clipping takes this way (a
//! 1-pixel butt-ended solid stroke blended over, inside the pixmap with a pixel to spare);
//! the rest is left to tiny-skia. `tests` compares the two on random segments and colours.

use tiny_skia::PixmapMut;

use crate::backend::{PaintMode, PathSeg, PxPath, StrokeStyle};
use crate::color::Color;
use crate::primitive::LineCap;

/// Pixmaps larger than this are drawn by tiles in tiny-skia: left to it.
const MAX_SIDE: u32 = 8191;
/// 16.16 fixed point one half.
const HALF: i32 = 1 << 15;

/// A segment that can be painted here, in 26.6 fixed point, with its colour.
pub(crate) struct Hairline {
    x0: i32,
    y0: i32,
    x1: i32,
    y1: i32,
    /// The premultiplied colour as the pipeline holds it (0..=255 per channel).
    rgba: [u16; 4],
    /// The premultiplied colour a fully covered pixel becomes, when the colour is opaque.
    solid: Option<[u8; 4]>,
}

impl Hairline {
    /// The segment, if `path` and `style` are a 1-pixel butt-ended solid line blended over.
    pub(crate) fn of(
        path: &PxPath,
        style: &StrokeStyle,
        color: Color,
        mode: PaintMode,
    ) -> Option<Hairline> {
        if mode != PaintMode::Blend
            || style.width != 1.0
            || !style.dash.is_empty()
            || style.cap != LineCap::Butt
        {
            return None;
        }
        let [PathSeg::MoveTo(ax, ay), PathSeg::LineTo(bx, by)] = path.segs[..] else {
            return None;
        };
        // Far inside what 26.6 fixed point holds (tiny-skia chops longer lines first).
        if ![ax, ay, bx, by]
            .iter()
            .all(|v| v.is_finite() && v.abs() < 16_000.0)
        {
            return None;
        }
        let c = tiny_skia::Color::from_rgba8(color.r, color.g, color.b, color.a).premultiply();
        let u = |v: f32| (v * 255.0 + 0.5) as u16;
        let rgba = [u(c.red()), u(c.green()), u(c.blue()), u(c.alpha())];
        let solid = (color.a == 255).then(|| {
            let c = c.to_color_u8();
            [c.red(), c.green(), c.blue(), c.alpha()]
        });
        let fdot6 = |v: f32| (v * 64.0) as i32;
        Some(Hairline {
            x0: fdot6(ax),
            y0: fdot6(ay),
            x1: fdot6(bx),
            y1: fdot6(by),
            rgba,
            solid,
        })
    }

    /// Paints the segment, unless tiny-skia would clip it to the pixmap (then false, and
    /// nothing is painted).
    pub(crate) fn draw(&self, pixmap: &mut PixmapMut<'_>) -> bool {
        let (w, h) = (pixmap.width(), pixmap.height());
        if w > MAX_SIDE || h > MAX_SIDE {
            return false;
        }
        // The pixels it may touch, with one to spare on every side, must be in the pixmap.
        let floor = |v: i32| v >> 6;
        let ceil = |v: i32| (v + 63) >> 6;
        let (left, right) = (self.x0.min(self.x1), self.x0.max(self.x1));
        let (top, bottom) = (self.y0.min(self.y1), self.y0.max(self.y1));
        if floor(left) - 1 < 0
            || floor(top) - 1 < 0
            || i64::from(ceil(right) + 1) > i64::from(w)
            || i64::from(ceil(bottom) + 1) > i64::from(h)
        {
            return false;
        }
        let mut px = Pixels {
            data: pixmap.data_mut(),
            width: w as usize,
            height: h as usize,
            rgba: self.rgba,
            solid: self.solid,
        };
        px.segment(self.x0, self.y0, self.x1, self.y1);
        true
    }
}

/// The pixels and the colour painted into them.
struct Pixels<'a> {
    data: &'a mut [u8],
    width: usize,
    height: usize,
    rgba: [u16; 4],
    solid: Option<[u8; 4]>,
}

/// `(v + 255) >> 8`, the pipeline's division by 255.
#[inline]
fn div255(v: u16) -> u16 {
    (v + 255) >> 8
}

/// `value * dot6 >> 6`, a coverage scaled by a fraction of a pixel.
#[inline]
fn small_scale(value: u8, dot6: i32) -> u8 {
    ((i32::from(value) * dot6) >> 6) as u8
}

#[inline]
fn alpha(fixed: i32) -> u8 {
    ((fixed >> 8) & 0xFF) as u8
}

enum Kind {
    HLine,
    Horish,
    VLine,
    Vertish,
}

impl Pixels<'_> {
    fn at(&mut self, x: u32, y: u32) -> Option<&mut [u8]> {
        let (x, y) = (x as usize, y as usize);
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = (y * self.width + x) * 4;
        self.data.get_mut(i..i + 4)
    }

    /// A pixel covered `c` (0..=255) of the way: the pipeline's lerp for an opaque colour,
    /// its coverage-scaled source-over for a translucent one.
    fn cover(&mut self, x: u32, y: u32, c: u16) {
        let (s, opaque) = (self.rgba, self.solid.is_some());
        let Some(d) = self.at(x, y) else { return };
        if opaque {
            for k in 0..4 {
                let dk = u16::from(d[k]);
                d[k] = div255(dk * (255 - c) + s[k] * c) as u8;
            }
        } else {
            let sa = div255(s[3] * c);
            for k in 0..4 {
                let sk = div255(s[k] * c);
                d[k] = (sk + div255(u16::from(d[k]) * (255 - sa))) as u8;
            }
        }
    }

    /// A pixel covered whole by a horizontal run.
    fn full(&mut self, x: u32, y: u32) {
        let (s, solid) = (self.rgba, self.solid);
        let Some(d) = self.at(x, y) else { return };
        match solid {
            Some(c) => d.copy_from_slice(&c),
            None => {
                for k in 0..4 {
                    d[k] = (s[k] + div255(u16::from(d[k]) * (255 - s[3]))) as u8;
                }
            }
        }
    }

    /// A horizontal run of `count` pixels, all covered `a`, as the run blitter paints it
    /// (a partial coverage goes through a float).
    fn hline(&mut self, x: u32, y: Option<u32>, count: u32, a: u8) {
        let Some(y) = y else { return };
        if a == 0 {
            return;
        }
        if a == 255 {
            for i in 0..count {
                self.full(x + i, y);
            }
            return;
        }
        let coverage = f32::from(a) * (1.0 / 255.0);
        let c = (coverage * 255.0 + 0.5) as u16;
        for i in 0..count {
            self.cover(x + i, y, c);
        }
    }

    fn column(&mut self, x: u32, y: u32, height: u32, a: u8) {
        for i in 0..height {
            self.cover(x, y + i, u16::from(a));
        }
    }

    /// Skia's `do_anti_hairline` without a clip, in 26.6 fixed point.
    fn segment(&mut self, x0: i32, y0: i32, x1: i32, y1: i32) {
        if (x1 - x0).abs() > 511 * 64 || (y1 - y0).abs() > 511 * 64 {
            let hx = (x0 >> 1) + (x1 >> 1);
            let hy = (y0 >> 1) + (y1 >> 1);
            self.segment(x0, y0, hx, hy);
            self.segment(hx, hy, x1, y1);
            return;
        }
        // Along the major axis (a) from its smaller end, across it (b).
        let horizontal = (x1 - x0).abs() > (y1 - y0).abs();
        let (mut a0, mut b0, mut a1, mut b1) = if horizontal {
            (x0, y0, x1, y1)
        } else {
            (y0, x0, y1, x1)
        };
        if a0 > a1 {
            std::mem::swap(&mut a0, &mut a1);
            std::mem::swap(&mut b0, &mut b1);
        }
        if a0 == a1 {
            // Zero length (a mostly horizontal segment never is).
            return;
        }
        let (istart, istop) = (a0 >> 6, (a1 + 63) >> 6);
        let mut fstart = b0 << 10;
        let (slope, kind) = if b0 == b1 {
            (0, if horizontal { Kind::HLine } else { Kind::VLine })
        } else {
            let slope = ((b1 - b0) << 16) / (a1 - a0);
            fstart += (slope * (32 - (a0 & 63)) + 32) >> 6;
            (
                slope,
                if horizontal {
                    Kind::Horish
                } else {
                    Kind::Vertish
                },
            )
        };
        let (scale_start, scale_stop) = if istop - istart == 1 {
            (a1 - a0, 0)
        } else {
            (64 - (a0 & 63), a1 & 63)
        };
        let (mut i, stop) = (istart as u32, istop as u32);
        fstart = self.cap(&kind, i, fstart, slope, scale_start);
        i += 1;
        let full_spans = stop - i - u32::from(scale_stop > 0);
        if full_spans > 0 {
            fstart = self.run(&kind, i, i + full_spans, fstart, slope);
        }
        if scale_stop > 0 {
            self.cap(&kind, stop - 1, fstart, slope, scale_stop);
        }
    }

    /// An end of the segment, covering `mod64` 64ths of its pixel along the line.
    fn cap(&mut self, kind: &Kind, i: u32, f: i32, slope: i32, mod64: i32) -> i32 {
        let f = (f + HALF).max(0);
        let at = (f >> 16) as u32;
        let a = alpha(f);
        match kind {
            Kind::HLine => {
                self.hline(i, Some(at), 1, small_scale(a, mod64));
                self.hline(i, at.checked_sub(1), 1, small_scale(255 - a, mod64));
                f - HALF
            }
            Kind::Horish => {
                let y = at.max(1) - 1;
                self.cover(i, y, u16::from(small_scale(255 - a, mod64)));
                self.cover(i, y + 1, u16::from(small_scale(a, mod64)));
                f + slope - HALF
            }
            Kind::VLine => {
                let ma = small_scale(a, mod64);
                if ma != 0 {
                    self.column(at, i, 1, ma);
                }
                let ma = small_scale(255 - a, mod64);
                if ma != 0 {
                    self.column(at.max(1) - 1, i, 1, ma);
                }
                f - HALF
            }
            Kind::Vertish => {
                let x = at.max(1) - 1;
                self.cover(x, i, u16::from(small_scale(255 - a, mod64)));
                self.cover(x + 1, i, u16::from(small_scale(a, mod64)));
                f + slope - HALF
            }
        }
    }

    /// The whole pixels of the segment, from `i` to `stop` along the line.
    fn run(&mut self, kind: &Kind, mut i: u32, stop: u32, f: i32, slope: i32) -> i32 {
        match kind {
            Kind::HLine | Kind::VLine => {
                let f = (f + HALF).max(0);
                let at = (f >> 16) as u32;
                let a = alpha(f);
                if let Kind::HLine = kind {
                    self.hline(i, Some(at), stop - i, a);
                    self.hline(i, at.checked_sub(1), stop - i, 255 - a);
                } else {
                    if a != 0 {
                        self.column(at, i, stop - i, a);
                    }
                    if 255 - a != 0 {
                        self.column(at.max(1) - 1, i, stop - i, 255 - a);
                    }
                }
                f - HALF
            }
            Kind::Horish | Kind::Vertish => {
                let mut f = f + HALF;
                loop {
                    f = f.max(0);
                    let at = ((f >> 16) as u32).max(1) - 1;
                    let a = alpha(f);
                    if let Kind::Horish = kind {
                        self.cover(i, at, u16::from(255 - a));
                        self.cover(i, at + 1, u16::from(a));
                    } else {
                        self.cover(at, i, u16::from(255 - a));
                        self.cover(at + 1, i, u16::from(a));
                    }
                    f += slope;
                    i += 1;
                    if i >= stop {
                        break;
                    }
                }
                f - HALF
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tiny_skia::{Paint, PathBuilder, Pixmap, Stroke, Transform};

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn coord(&mut self, max: f32) -> f32 {
            // Whole, half and quarter pixels come often in plots; the rest is anywhere.
            let v = (self.below(100_000) as f32 / 100_000.0) * max;
            match self.below(4) {
                0 => v.round(),
                1 => v.round() + 0.5,
                2 => (v * 4.0).round() / 4.0,
                _ => v,
            }
        }
    }

    /// A pixmap of random premultiplied pixels (so that blending is tested everywhere).
    fn noise(rng: &mut Rng, w: u32, h: u32) -> Pixmap {
        let mut p = Pixmap::new(w, h).unwrap();
        for px in p.data_mut().chunks_exact_mut(4) {
            let a = match rng.below(3) {
                0 => 255,
                1 => 0,
                _ => rng.below(256) as u8,
            };
            for c in &mut px[..3] {
                *c = (rng.below(u64::from(a) + 1)) as u8;
            }
            px[3] = a;
        }
        p
    }

    /// Random segments of every direction and length (long ones are split in halves),
    /// opaque and translucent colours, over random pixels: the same bytes as tiny-skia.
    #[test]
    fn the_same_pixels_as_tiny_skia() {
        let mut rng = Rng(0x5eed_1234_abcd);
        let (w, h) = (700, 300);
        let mut fast_ones = 0;
        let mut base = noise(&mut rng, w, h);
        for round in 0..4_000 {
            if round % 100 == 0 {
                base = noise(&mut rng, w, h);
            }
            let mut a = base.clone();
            let mut b = base.clone();
            // Short segments mostly, as plots draw; some long, some axis-aligned.
            let (x0, y0) = (rng.coord(w as f32), rng.coord(h as f32));
            let (x1, y1) = match rng.below(6) {
                0 => (rng.coord(w as f32), rng.coord(h as f32)),
                1 => (x0, rng.coord(h as f32)),
                2 => (rng.coord(w as f32), y0),
                _ => (x0 + rng.coord(20.0) - 10.0, y0 + rng.coord(20.0) - 10.0),
            };
            let color = Color::rgba(
                rng.below(256) as u8,
                rng.below(256) as u8,
                rng.below(256) as u8,
                if rng.below(2) == 0 {
                    255
                } else {
                    rng.below(256) as u8
                },
            );
            let path = PxPath {
                segs: vec![PathSeg::MoveTo(x0, y0), PathSeg::LineTo(x1, y1)].into(),
            };
            let style = StrokeStyle {
                width: 1.0,
                cap: LineCap::Butt,
                join: crate::primitive::LineJoin::Miter,
                dash: Vec::new(),
                dash_offset: 0.0,
            };
            let line = Hairline::of(&path, &style, color, PaintMode::Blend).unwrap();
            if line.draw(&mut a.as_mut()) {
                fast_ones += 1;
            } else {
                continue;
            }
            let mut pb = PathBuilder::new();
            pb.move_to(x0, y0);
            pb.line_to(x1, y1);
            let Some(sk) = pb.finish() else { continue };
            let mut paint = Paint::default();
            paint.set_color_rgba8(color.r, color.g, color.b, color.a);
            paint.anti_alias = true;
            b.stroke_path(
                &sk,
                &paint,
                &Stroke {
                    width: 1.0,
                    ..Stroke::default()
                },
                Transform::identity(),
                None,
            );
            if a.data() != b.data() {
                let at = a
                    .data()
                    .chunks_exact(4)
                    .zip(b.data().chunks_exact(4))
                    .position(|(p, q)| p != q)
                    .unwrap();
                panic!(
                    "round {round}: ({x0}, {y0}) to ({x1}, {y1}) in {color:?} differs at pixel ({}, {}): {:?} against tiny-skia's {:?}",
                    at % w as usize,
                    at / w as usize,
                    &a.data()[at * 4..at * 4 + 4],
                    &b.data()[at * 4..at * 4 + 4]
                );
            }
        }
        assert!(
            fast_ones > 3_000,
            "only {fast_ones} segments were drawn here"
        );
    }

    #[test]
    fn what_tiny_skia_would_clip_or_style_is_left_to_it() {
        let style = |width: f32, cap: LineCap| StrokeStyle {
            width,
            cap,
            join: crate::primitive::LineJoin::Miter,
            dash: Vec::new(),
            dash_offset: 0.0,
        };
        let seg = |x0, y0, x1, y1| PxPath {
            segs: vec![PathSeg::MoveTo(x0, y0), PathSeg::LineTo(x1, y1)].into(),
        };
        let red = Color::rgb(255, 0, 0);
        let ok = seg(5.0, 5.0, 20.0, 9.0);
        assert!(Hairline::of(&ok, &style(2.0, LineCap::Butt), red, PaintMode::Blend).is_none());
        assert!(Hairline::of(&ok, &style(1.0, LineCap::Round), red, PaintMode::Blend).is_none());
        assert!(Hairline::of(&ok, &style(1.0, LineCap::Butt), red, PaintMode::Erase).is_none());
        let mut pixmap = Pixmap::new(30, 30).unwrap();
        let inside = Hairline::of(&ok, &style(1.0, LineCap::Butt), red, PaintMode::Blend);
        assert!(inside.unwrap().draw(&mut pixmap.as_mut()));
        for edge in [seg(0.5, 5.0, 10.0, 5.0), seg(5.0, 5.0, 29.5, 20.0)] {
            let line = Hairline::of(&edge, &style(1.0, LineCap::Butt), red, PaintMode::Blend);
            assert!(!line.unwrap().draw(&mut pixmap.as_mut()), "{edge:?}");
        }
    }
}
