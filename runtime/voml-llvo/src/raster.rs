//! The headless raster back end: every view is a tiny-skia pixmap.
//!
//! A native-window back end can reuse it as is and copy the pixmap to the
//! window on `present`. The scrollable area of a view that scrolls is kept in a
//! [`ScrollStore`], so that scrolling moves no pixels.

use rustc_hash::FxHashMap as HashMap;

use ab_glyph::Font;
use tiny_skia::{
    BlendMode, FillRule, FilterQuality, Paint, Path, PathBuilder, Pattern, Pixmap, PixmapMut,
    PremultipliedColorU8, Rect, SpreadMode, Stroke, StrokeDash, Transform,
};

use crate::backend::{
    Backend, DrawCmd, PaintMode, PathSeg, PxPath, PxRemap, RgbaPixels, StrokeStyle,
};
use crate::color::Color;
use crate::error::LlvoError;
use crate::font::FontSpec;
use crate::geom::PxRect;
use crate::hairline::Hairline;
use crate::primitive::{LineCap, LineJoin};
use crate::scroll::ScrollStore;
use crate::{ImageId, ViewId};

/// Renders into in-memory pixmaps; snapshots read them back.
pub struct RasterBackend {
    surfaces: HashMap<ViewId, Surface>,
    images: HashMap<ImageId, Pixmap>,
    /// Scrolling moves where the window begins in a [`ScrollStore`] (the default), or moves
    /// the pixels of the area.
    scroll_stores: bool,
}

impl Default for RasterBackend {
    fn default() -> RasterBackend {
        RasterBackend {
            surfaces: HashMap::default(),
            images: HashMap::default(),
            scroll_stores: true,
        }
    }
}

struct Surface {
    /// The window's pixels; its scrollable area is out of date while `scroll` holds it.
    pixmap: Pixmap,
    /// While buffering: the picture as it was when buffering began, which
    /// is what a viewer would still see.
    shown: Option<Pixmap>,
    /// Pixels kept aside while painting through a clip (reused).
    kept: Vec<PremultipliedColorU8>,
    /// The scrollable area, once the view has scrolled.
    scroll: Option<ScrollStore>,
}

impl RasterBackend {
    /// No surfaces yet.
    pub fn new() -> RasterBackend {
        RasterBackend::default()
    }

    /// A raster that scrolls by moving the pixels of the area, as a plain pixmap would: the
    /// reference the scroll stores are held to (see `tests/scroll_store.rs`).
    pub fn moving_pixels() -> RasterBackend {
        RasterBackend {
            scroll_stores: false,
            ..RasterBackend::default()
        }
    }

    /// True while the view draws off-screen ([`Backend::begin_buffer`]).
    pub fn buffering(&self, view: ViewId) -> bool {
        self.surfaces.get(&view).is_some_and(|s| s.shown.is_some())
    }

    /// Whether every pixel of `rect` that the view shows (what a drawing command paints on:
    /// the buffer while buffering) is `color` exactly, so that painting `color` over it
    /// hard-edged changes nothing. An unknown view has none.
    pub(crate) fn is_all(&self, view: ViewId, rect: PxRect, color: Color) -> bool {
        let Some(s) = self.surfaces.get(&view) else {
            return false;
        };
        let window = s.bounds();
        let r = rect.intersect(&window);
        if r.is_empty() {
            return true;
        }
        let want = premul(color);
        let want = [want.red(), want.green(), want.blue(), want.alpha()];
        let width = window.w as usize;
        let all = |bytes: &[u8], r: PxRect| {
            (r.y as usize..r.bottom() as usize).all(|y| {
                let at = (y * width + r.x as usize) * 4;
                bytes[at..at + r.w as usize * 4]
                    .chunks_exact(4)
                    .all(|p| p == want)
            })
        };
        match &s.scroll {
            None => all(s.pixmap.data(), r),
            Some(store) => {
                // Over the scrollable area the store holds the pixels; elsewhere the window.
                let area = store.area();
                let over = r.intersect(&area);
                if !over.is_empty() && !all(store.window_bytes(), over) {
                    return false;
                }
                let outside = [
                    PxRect::from_i64(
                        i64::from(r.x),
                        i64::from(r.y),
                        r.right(),
                        i64::from(area.y).clamp(i64::from(r.y), r.bottom()),
                    ),
                    PxRect::from_i64(
                        i64::from(r.x),
                        area.bottom().clamp(i64::from(r.y), r.bottom()),
                        r.right(),
                        r.bottom(),
                    ),
                    PxRect::from_i64(
                        i64::from(r.x),
                        i64::from(r.y),
                        i64::from(area.x).clamp(i64::from(r.x), r.right()),
                        r.bottom(),
                    ),
                    PxRect::from_i64(
                        area.right().clamp(i64::from(r.x), r.right()),
                        i64::from(r.y),
                        r.right(),
                        r.bottom(),
                    ),
                ];
                outside
                    .iter()
                    .filter(|o| !o.is_empty())
                    .all(|o| all(s.pixmap.data(), *o))
            }
        }
    }

    fn surface(&mut self, view: ViewId) -> Result<&mut Surface, LlvoError> {
        self.surfaces
            .get_mut(&view)
            .ok_or_else(|| LlvoError::unknown_view(view))
    }
}

fn new_pixmap(width: u32, height: u32, background: Color) -> Result<Pixmap, LlvoError> {
    let mut p = Pixmap::new(width.max(1), height.max(1))
        .ok_or_else(|| LlvoError::Backend(format!("cannot allocate a {width}x{height} pixmap")))?;
    p.fill(sk_color(background));
    Ok(p)
}

fn sk_color(c: Color) -> tiny_skia::Color {
    tiny_skia::Color::from_rgba8(c.r, c.g, c.b, c.a)
}

fn premul(c: Color) -> PremultipliedColorU8 {
    sk_color(c).premultiply().to_color_u8()
}

fn sk_path(path: &PxPath) -> Option<Path> {
    let mut pb = PathBuilder::new();
    for s in &path.segs {
        match *s {
            PathSeg::MoveTo(x, y) => pb.move_to(x, y),
            PathSeg::LineTo(x, y) => pb.line_to(x, y),
            PathSeg::CubicTo(a, b, c, d, e, f) => pb.cubic_to(a, b, c, d, e, f),
            PathSeg::Close => pb.close(),
        }
    }
    pb.finish()
}

fn sk_stroke(style: &StrokeStyle) -> Stroke {
    Stroke {
        width: style.width,
        miter_limit: 4.0,
        line_cap: match style.cap {
            LineCap::Butt => tiny_skia::LineCap::Butt,
            LineCap::Round => tiny_skia::LineCap::Round,
            LineCap::Square => tiny_skia::LineCap::Square,
        },
        line_join: match style.join {
            LineJoin::Miter => tiny_skia::LineJoin::Miter,
            LineJoin::Round => tiny_skia::LineJoin::Round,
            LineJoin::Bevel => tiny_skia::LineJoin::Bevel,
        },
        dash: if style.dash.is_empty() {
            None
        } else {
            StrokeDash::new(style.dash.clone(), style.dash_offset)
        },
    }
}

fn solid_paint(color: Color, mode: PaintMode) -> Paint<'static> {
    let mut paint = Paint::default();
    paint.set_color(sk_color(color));
    match mode {
        PaintMode::Blend => {
            paint.anti_alias = true;
        }
        PaintMode::Erase => {
            paint.anti_alias = false;
            paint.blend_mode = BlendMode::Source;
        }
    }
    paint
}

impl Surface {
    fn bounds(&self) -> PxRect {
        PxRect::new(0, 0, self.pixmap.width(), self.pixmap.height())
    }

    /// The window's pixmap, as a canvas.
    fn window_canvas(&mut self) -> Canvas<'_> {
        let window = self.bounds();
        Canvas {
            pixmap: self.pixmap.as_mut(),
            window,
        }
    }

    /// Brings the window's pixmap up to date with the scroll store.
    fn compose(&mut self) {
        if let Some(store) = &mut self.scroll {
            store.compose(&mut self.pixmap);
        }
    }

    /// Puts the scrollable area back in the window's pixmap, for work on its pixels that a
    /// store does not do (resampling).
    fn unstore(&mut self) {
        self.compose();
        self.scroll = None;
    }

    /// Scrolls: moves the pixels of `area` by (dx, dy), through the scroll store unless
    /// `stores` is off.
    fn shift(&mut self, area: PxRect, dx: i32, dy: i32, fill: Color, stores: bool) {
        let area = area.intersect(&self.bounds());
        if area.is_empty() || (dx == 0 && dy == 0) {
            return;
        }
        if !stores {
            return self.window_canvas().move_area(area, dx, dy, fill);
        }
        if self.scroll.as_ref().is_some_and(|s| s.area() != area) {
            self.unstore();
        }
        if self.scroll.is_none() {
            self.scroll = ScrollStore::new(&self.pixmap, area);
        }
        let window = self.bounds();
        let Some(store) = &mut self.scroll else {
            return self.window_canvas().move_area(area, dx, dy, fill);
        };
        let exposed = store.shift(dx, dy);
        let mut canvas = Canvas {
            pixmap: store.canvas(),
            window,
        };
        match exposed {
            Some(strips) => {
                for r in strips {
                    canvas.clear(r, fill);
                }
            }
            None => canvas.move_area(area, dx, dy, fill),
        }
    }

    /// Resamples the area (see [`Backend::remap_area`]): separable, each
    /// destination pixel averages the source pixels its footprint covers
    /// (at least one pixel wide, so enlarging interpolates linearly);
    /// footprint outside the old area counts as `fill`. Premultiplied
    /// averages stay valid premultiplied colours.
    fn remap(&mut self, area: PxRect, m: PxRemap, fill: Color) {
        let area = area.intersect(&self.bounds());
        if area.is_empty() {
            return;
        }
        let (w, h) = (area.w as usize, area.h as usize);
        let stride = self.pixmap.width() as usize * 4;
        let fill = premul(fill);
        let fill = [
            f32::from(fill.red()),
            f32::from(fill.green()),
            f32::from(fill.blue()),
            f32::from(fill.alpha()),
        ];
        // Area-local maps: u' = s * u + o.
        let ox = m.sx * f64::from(area.x) + m.ox - f64::from(area.x);
        let oy = m.sy * f64::from(area.y) + m.oy - f64::from(area.y);
        let at = |y: usize| (area.y as usize + y) * stride + area.x as usize * 4;
        // The old pixels of the area, row after row.
        let mut old: Vec<u8> = Vec::with_capacity(w * h * 4);
        {
            let data = self.pixmap.data();
            for y in 0..h {
                old.extend_from_slice(&data[at(y)..at(y) + w * 4]);
            }
        }
        // Rows resampled along x (f32), unless x does not change.
        let rows: Option<Vec<f32>> = (!(m.sx == 1.0 && ox == 0.0)).then(|| {
            let taps = Taps::new(w, m.sx, ox);
            let mut out = vec![0.0f32; w * h * 4];
            for (src, dst) in old.chunks_exact(w * 4).zip(out.chunks_exact_mut(w * 4)) {
                for (x, px) in dst.chunks_exact_mut(4).enumerate() {
                    let fw = taps.fill[x];
                    let mut acc = [fill[0] * fw, fill[1] * fw, fill[2] * fw, fill[3] * fw];
                    for &(i, wt) in taps.of(x) {
                        let s = &src[i as usize * 4..i as usize * 4 + 4];
                        for c in 0..4 {
                            acc[c] += f32::from(s[c]) * wt;
                        }
                    }
                    px.copy_from_slice(&acc);
                }
            }
            out
        });
        let taps = Taps::new(h, m.sy, oy);
        let mut acc = vec![0.0f32; w * 4];
        let data = self.pixmap.data_mut();
        for y in 0..h {
            let fw = taps.fill[y];
            for px in acc.chunks_exact_mut(4) {
                for c in 0..4 {
                    px[c] = fill[c] * fw;
                }
            }
            for &(i, wt) in taps.of(y) {
                let i = i as usize;
                match &rows {
                    Some(rows) => {
                        for (a, s) in acc.iter_mut().zip(&rows[i * w * 4..(i + 1) * w * 4]) {
                            *a += s * wt;
                        }
                    }
                    None => {
                        for (a, s) in acc.iter_mut().zip(&old[i * w * 4..(i + 1) * w * 4]) {
                            *a += f32::from(*s) * wt;
                        }
                    }
                }
            }
            // Averages of premultiplied colours keep colour <= alpha; the
            // clamp only guards against float rounding.
            for (d, a) in data[at(y)..at(y) + w * 4]
                .chunks_exact_mut(4)
                .zip(acc.chunks_exact(4))
            {
                let q = |v: f32| (v + 0.5).clamp(0.0, 255.0) as u8;
                let alpha = q(a[3]);
                d[0] = q(a[0]).min(alpha);
                d[1] = q(a[1]).min(alpha);
                d[2] = q(a[2]).min(alpha);
                d[3] = alpha;
            }
        }
    }
}

/// Pixels to paint on, addressed in window pixels: the window's pixmap, or the part of a
/// scroll store that shows the window.
struct Canvas<'a> {
    pixmap: PixmapMut<'a>,
    /// The window's pixels: painting changes no others that anyone sees.
    window: PxRect,
}

impl Canvas<'_> {
    /// Paints what `paint` draws (on the pixmap it is given, through the transform it is
    /// given) on the pixels of `clip`, where `ink` bounds what it can touch. Ink that the clip
    /// does not cut is painted directly. Otherwise the pixels around the clip that the ink
    /// covers are kept aside, the painting is done, and they are put back: the coordinates
    /// stay exactly as they are, and the cost is a copy of what lies outside the clip, where
    /// painting through a clip mask costs several times more per pixel over the whole ink
    /// (and tiny-skia's `Source` blending clears what a mask hides).
    fn paint_clipped(
        &mut self,
        kept: &mut Vec<PremultipliedColorU8>,
        clip: PxRect,
        ink: PxRect,
        paint: impl FnOnce(&mut tiny_skia::PixmapMut<'_>, Transform),
    ) {
        let visible = ink.intersect(&self.window);
        let shown = visible.intersect(&clip);
        if shown.is_empty() {
            return;
        }
        if shown == visible {
            paint(&mut self.pixmap, Transform::identity());
            return;
        }
        // What the ink covers outside the clip: up to four strips around `shown`.
        let strips = [
            PxRect::from_i64(
                i64::from(visible.x),
                i64::from(visible.y),
                visible.right(),
                i64::from(shown.y),
            ),
            PxRect::from_i64(
                i64::from(visible.x),
                shown.bottom(),
                visible.right(),
                visible.bottom(),
            ),
            PxRect::from_i64(
                i64::from(visible.x),
                i64::from(shown.y),
                i64::from(shown.x),
                shown.bottom(),
            ),
            PxRect::from_i64(
                shown.right(),
                i64::from(shown.y),
                visible.right(),
                shown.bottom(),
            ),
        ];
        let width = self.pixmap.width() as usize;
        kept.clear();
        for r in strips.iter().filter(|r| !r.is_empty()) {
            for y in r.y as usize..r.bottom() as usize {
                let at = y * width + r.x as usize;
                kept.extend_from_slice(&self.pixmap.pixels_mut()[at..at + r.w as usize]);
            }
        }
        paint(&mut self.pixmap, Transform::identity());
        let mut from = 0;
        let pixels = self.pixmap.pixels_mut();
        for r in strips.iter().filter(|r| !r.is_empty()) {
            for y in r.y as usize..r.bottom() as usize {
                let at = y * width + r.x as usize;
                let w = r.w as usize;
                pixels[at..at + w].copy_from_slice(&kept[from..from + w]);
                from += w;
            }
        }
    }

    fn clear(&mut self, rect: PxRect, color: Color) {
        let r = rect.intersect(&self.window);
        if r.is_empty() {
            return;
        }
        let px = premul(color);
        let width = self.pixmap.width() as usize;
        let pixels = self.pixmap.pixels_mut();
        for y in r.y as usize..r.bottom() as usize {
            let row = y * width;
            pixels[row + r.x as usize..row + r.right() as usize].fill(px);
        }
    }

    /// Moves the pixels of `area` by whole pixels (see [`DrawCmd::Shift`]).
    fn move_area(&mut self, area: PxRect, dx: i32, dy: i32, fill: Color) {
        let area = area.intersect(&self.window);
        if area.is_empty() {
            return;
        }
        let (w, h) = (area.w as i64, area.h as i64);
        let dx = i64::from(dx).clamp(-w, w);
        let dy = i64::from(dy).clamp(-h, h);
        let width = self.pixmap.width() as usize;
        let bg = premul(fill);
        let pixels = self.pixmap.pixels_mut();
        let row_start = |y: i64| (i64::from(area.y) + y) as usize * width + area.x as usize;
        // The columns that keep content, in destination coordinates.
        let (keep0, keep1) = (dx.max(0), (w + dx).min(w));
        // Rows in an order that reads every source row before it is
        // overwritten; copy_within handles the overlap inside a row.
        let rows: Box<dyn Iterator<Item = i64>> = if dy > 0 {
            Box::new((0..h).rev())
        } else {
            Box::new(0..h)
        };
        for y in rows {
            let dst = row_start(y);
            let sy = y - dy;
            if !(0..h).contains(&sy) || keep0 >= keep1 {
                pixels[dst..dst + w as usize].fill(bg);
                continue;
            }
            let src = row_start(sy);
            let (s0, s1) = ((keep0 - dx) as usize, (keep1 - dx) as usize);
            pixels.copy_within(src + s0..src + s1, dst + keep0 as usize);
            pixels[dst..dst + keep0 as usize].fill(bg);
            pixels[dst + keep1 as usize..dst + w as usize].fill(bg);
        }
    }

    fn text(
        &mut self,
        x: f32,
        baseline: f32,
        text: &str,
        font: &FontSpec,
        color: Color,
        clip: PxRect,
    ) {
        let clip = clip.intersect(&self.window);
        if clip.is_empty() || color.a == 0 {
            return;
        }
        let face = font.face();
        let width = self.pixmap.width() as usize;
        let pixels = self.pixmap.pixels_mut();
        let alpha = f32::from(color.a) / 255.0;
        let (r, g, b) = (f32::from(color.r), f32::from(color.g), f32::from(color.b));
        for glyph in font.positioned_glyphs(text, x, baseline) {
            let Some(outline) = face.outline_glyph(glyph) else {
                continue;
            };
            let pb = outline.px_bounds();
            // Glyphs outside the clip are not rasterised at all: a long
            // line of huge text must not cost gigapixels.
            if f64::from(pb.max.x) < f64::from(clip.x)
                || f64::from(pb.min.x) >= clip.right() as f64
                || f64::from(pb.max.y) < f64::from(clip.y)
                || f64::from(pb.min.y) >= clip.bottom() as f64
            {
                continue;
            }
            let (ox, oy) = (pb.min.x as i64, pb.min.y as i64);
            outline.draw(|gx, gy, coverage| {
                let px = ox + i64::from(gx);
                let py = oy + i64::from(gy);
                if px < i64::from(clip.x)
                    || px >= clip.right()
                    || py < i64::from(clip.y)
                    || py >= clip.bottom()
                {
                    return;
                }
                let sa = coverage.clamp(0.0, 1.0) * alpha;
                if sa <= 0.0 {
                    return;
                }
                let i = py as usize * width + px as usize;
                let d = pixels[i];
                let keep = 1.0 - sa;
                let blend =
                    |s: f32, d: u8| (s * sa + f32::from(d) * keep).round().clamp(0.0, 255.0) as u8;
                let na = blend(255.0, d.alpha());
                let out = PremultipliedColorU8::from_rgba(
                    blend(r, d.red()).min(na),
                    blend(g, d.green()).min(na),
                    blend(b, d.blue()).min(na),
                    na,
                );
                if let Some(out) = out {
                    pixels[i] = out;
                }
            });
        }
    }
}
/// When `path` is an upright rectangle (one subpath of four corners with sides along the
/// axes; `closed` when its outline counts, so the fourth side must be there): `Some` of it
/// cut to `clip` (`None` inside when nothing is left). `None` for any other path.
fn clip_upright_rect(path: &PxPath, clip: PxRect, closed: bool) -> Option<Option<PxPath>> {
    let [x0, y0, x1, y1] = path.upright_rect(closed)?;
    let cx0 = clip.x as f32;
    let cy0 = clip.y as f32;
    let cx1 = clip.right() as f32;
    let cy1 = clip.bottom() as f32;
    let (x0, y0, x1, y1) = (x0.max(cx0), y0.max(cy0), x1.min(cx1), y1.min(cy1));
    if x0 >= x1 || y0 >= y1 {
        return Some(None);
    }
    Some(Some(PxPath {
        segs: vec![
            PathSeg::MoveTo(x0, y0),
            PathSeg::LineTo(x1, y0),
            PathSeg::LineTo(x1, y1),
            PathSeg::LineTo(x0, y1),
            PathSeg::Close,
        ]
        .into(),
    }))
}

/// The pixels a fill of `path` can touch.
fn path_ink(path: &PxPath) -> PxRect {
    match path.bounds() {
        Some((x0, y0, x1, y1)) => PxRect::covering(
            f64::from(x0) - 1.0,
            f64::from(y0) - 1.0,
            f64::from(x1) + 1.0,
            f64::from(y1) + 1.0,
        ),
        None => PxRect::default(),
    }
}

/// The source pixels (index, weight) that make up each destination pixel
/// along one axis of `n` pixels mapped by u' = s * u + o; `fill` is the
/// weight of what lies outside the source.
struct Taps {
    start: Vec<usize>,
    taps: Vec<(u32, f32)>,
    fill: Vec<f32>,
}

impl Taps {
    fn new(n: usize, s: f64, o: f64) -> Taps {
        let mut t = Taps {
            start: Vec::with_capacity(n + 1),
            taps: Vec::new(),
            fill: Vec::with_capacity(n),
        };
        let nf = n as f64;
        for d in 0..n {
            t.start.push(t.taps.len());
            let (a, b) = ((d as f64 - o) / s, (d as f64 + 1.0 - o) / s);
            let (mut a, mut b) = (a.min(b), a.max(b));
            if b - a < 1.0 {
                let c = (a + b) / 2.0;
                (a, b) = (c - 0.5, c + 0.5);
            }
            let span = b - a;
            if !span.is_finite() || span <= 0.0 {
                t.fill.push(1.0);
                continue;
            }
            let (i0, i1) = (a.max(0.0).floor(), b.min(nf).ceil());
            let mut inside = 0.0;
            let mut i = i0;
            while i < i1 {
                let cover = b.min(i + 1.0) - a.max(i);
                if cover > 0.0 {
                    inside += cover;
                    t.taps.push((i as u32, (cover / span) as f32));
                }
                i += 1.0;
            }
            t.fill.push(((span - inside) / span).max(0.0) as f32);
        }
        t.start.push(t.taps.len());
        t
    }

    fn of(&self, d: usize) -> &[(u32, f32)] {
        &self.taps[self.start[d]..self.start[d + 1]]
    }
}

/// Carries out a drawing command (not a shift) on `canvas`, limited to `limit` too.
fn paint(
    s: &mut Canvas<'_>,
    kept: &mut Vec<PremultipliedColorU8>,
    images: &HashMap<ImageId, Pixmap>,
    cmd: &DrawCmd,
    limit: Option<PxRect>,
) -> Result<(), LlvoError> {
    let limited = |r: &PxRect| limit.map_or(*r, |l| r.intersect(&l));
    match cmd {
        DrawCmd::Clear { rect, color } => s.clear(limited(rect), *color),
        // Scrolling is the surface's (see `Surface::shift`).
        DrawCmd::Shift { .. } => {}
        DrawCmd::Text {
            x,
            baseline,
            text,
            font,
            color,
            clip,
        } => s.text(*x, *baseline, text, font, *color, limited(clip)),
        DrawCmd::Stroke {
            path,
            style,
            color,
            clip,
            mode,
        } => {
            let clip = &limited(clip);
            // The outline of an upright rectangle running far out of view is cut to the
            // clip grown by more than the stroke reaches: its corners and the cut's new
            // sides stay out of sight, and what shows has the same edges.
            let reach = style.width * 2.0 + 2.0;
            let cut;
            let path = match clip_upright_rect(path, clip.inflate(reach.ceil() as u32), true) {
                Some(None) => return Ok(()),
                Some(Some(p)) if style.dash.is_empty() => {
                    cut = p;
                    &cut
                }
                _ => path,
            };
            // A one-pixel segment, the most common stroke, is painted directly when it can
            // be (the same pixels); anything else through tiny-skia.
            let hairline = Hairline::of(path, style, *color, *mode);
            s.paint_clipped(kept, *clip, cmd.ink(), |pixmap, ts| {
                if hairline.as_ref().is_some_and(|h| h.draw(pixmap)) {
                    return;
                }
                let Some(path) = sk_path(path) else {
                    return;
                };
                let paint = solid_paint(*color, *mode);
                let stroke = sk_stroke(style);
                pixmap.stroke_path(&path, &paint, &stroke, ts, None);
            });
        }
        DrawCmd::Fill {
            path,
            color,
            clip,
            mode,
        } => {
            let clip = &limited(clip);
            // An upright rectangle is cut to its clip first (the same edges inside it, so
            // the same pixels): a Gantt bar running far out of view costs only what shows,
            // and is painted directly.
            let clipped;
            let (path, ink) = match clip_upright_rect(path, *clip, false) {
                Some(None) => return Ok(()),
                Some(Some(p)) => {
                    clipped = p;
                    let ink = path_ink(&clipped);
                    (&clipped, ink)
                }
                None => (path, cmd.ink()),
            };
            let Some(path) = sk_path(path) else {
                return Ok(());
            };
            let paint = solid_paint(*color, *mode);
            s.paint_clipped(kept, *clip, ink, |pixmap, ts| {
                pixmap.fill_path(&path, &paint, FillRule::Winding, ts, None);
            });
        }
        DrawCmd::Image {
            image,
            src,
            dst,
            alpha,
            clip,
        } => {
            let clip = &limited(clip);
            let img = images
                .get(image)
                .ok_or_else(|| LlvoError::unknown_image(*image))?;
            let (du, dv) = (src[2] - src[0], src[3] - src[1]);
            let Some(rect) = Rect::from_ltrb(dst[0], dst[1], dst[2], dst[3]) else {
                return Ok(());
            };
            if du == 0.0 || dv == 0.0 {
                return Ok(());
            }
            let sx = (dst[2] - dst[0]) / du;
            let sy = (dst[3] - dst[1]) / dv;
            let ts =
                Transform::from_row(sx, 0.0, 0.0, sy, dst[0] - src[0] * sx, dst[1] - src[1] * sy);
            // Enlarged images keep crisp pixels (as an X server would
            // draw them); reduced ones are smoothed against aliasing.
            let quality = if sx.abs() >= 0.999 && sy.abs() >= 0.999 {
                FilterQuality::Nearest
            } else {
                FilterQuality::Bilinear
            };
            let paint = Paint {
                shader: Pattern::new(img.as_ref(), SpreadMode::Pad, quality, *alpha, ts),
                ..Paint::default()
            };
            s.paint_clipped(kept, *clip, cmd.ink(), |pixmap, ts| {
                pixmap.fill_rect(rect, &paint, ts, None);
            });
        }
    }
    Ok(())
}

impl Backend for RasterBackend {
    fn create_surface(
        &mut self,
        view: ViewId,
        _title: &str,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError> {
        let pixmap = new_pixmap(width, height, background)?;
        self.surfaces.insert(
            view,
            Surface {
                pixmap,
                shown: None,
                kept: Vec::new(),
                scroll: None,
            },
        );
        Ok(())
    }

    fn resize_surface(
        &mut self,
        view: ViewId,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError> {
        let pixmap = new_pixmap(width, height, background)?;
        let s = self.surface(view)?;
        s.pixmap = pixmap;
        s.scroll = None;
        if s.shown.is_some() {
            s.shown = Some(s.pixmap.clone());
        }
        Ok(())
    }

    fn destroy_surface(&mut self, view: ViewId) {
        self.surfaces.remove(&view);
    }

    fn add_image(&mut self, image: ImageId, pixels: &RgbaPixels) -> Result<(), LlvoError> {
        let mut p = Pixmap::new(pixels.width, pixels.height).ok_or_else(|| {
            LlvoError::Backend(format!(
                "cannot allocate a {}x{} image",
                pixels.width, pixels.height
            ))
        })?;
        for (dst, src) in p.pixels_mut().iter_mut().zip(pixels.data.chunks_exact(4)) {
            *dst = tiny_skia::ColorU8::from_rgba(src[0], src[1], src[2], src[3]).premultiply();
        }
        self.images.insert(image, p);
        Ok(())
    }

    fn draw(&mut self, view: ViewId, cmd: &DrawCmd) -> Result<(), LlvoError> {
        let stores = self.scroll_stores;
        let s = self
            .surfaces
            .get_mut(&view)
            .ok_or_else(|| LlvoError::unknown_view(view))?;
        if let DrawCmd::Shift { area, dx, dy, fill } = cmd {
            s.shift(*area, *dx, *dy, *fill, stores);
            return Ok(());
        }
        let window = s.bounds();
        let Some(store) = &mut s.scroll else {
            let mut canvas = Canvas {
                pixmap: s.pixmap.as_mut(),
                window,
            };
            return paint(&mut canvas, &mut s.kept, &self.images, cmd, None);
        };
        // Over the scrollable area, the store is painted; elsewhere, the window's pixmap.
        let (bounds, area) = (cmd.bounds(), store.area());
        let over = bounds.intersect(&area);
        if !over.is_empty() {
            let mut canvas = Canvas {
                pixmap: store.canvas(),
                window,
            };
            paint(&mut canvas, &mut s.kept, &self.images, cmd, Some(area))?;
        }
        if over != bounds {
            if !over.is_empty() {
                store.touched();
            }
            let mut canvas = Canvas {
                pixmap: s.pixmap.as_mut(),
                window,
            };
            paint(&mut canvas, &mut s.kept, &self.images, cmd, None)?;
        }
        Ok(())
    }

    fn remap_area(
        &mut self,
        view: ViewId,
        area: PxRect,
        map: PxRemap,
        fill: Color,
    ) -> Result<bool, LlvoError> {
        let s = self.surface(view)?;
        s.unstore();
        s.remap(area, map, fill);
        Ok(true)
    }

    fn begin_buffer(&mut self, view: ViewId) -> Result<(), LlvoError> {
        let s = self.surface(view)?;
        if s.shown.is_none() {
            s.compose();
            s.shown = Some(s.pixmap.clone());
        }
        Ok(())
    }

    fn flush(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.surface(view)?.shown = None;
        Ok(())
    }

    fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.surface(view).map(|_| ())
    }

    fn snapshot(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError> {
        let s = self.surface(view)?;
        s.compose();
        let p = s.shown.as_ref().unwrap_or(&s.pixmap);
        let mut data = Vec::with_capacity(p.pixels().len() * 4);
        for px in p.pixels() {
            let c = px.demultiply();
            data.extend_from_slice(&[c.red(), c.green(), c.blue(), c.alpha()]);
        }
        Ok(RgbaPixels {
            width: p.width(),
            height: p.height(),
            data,
        })
    }
}
