//! The headless raster back end: every view is a tiny-skia pixmap.
//!
//! A native-window back end can reuse it as is and copy the pixmap to the
//! window on `present`.

use std::collections::HashMap;

use ab_glyph::Font;
use tiny_skia::{
    BlendMode, FillRule, FilterQuality, Mask, Paint, Path, PathBuilder, Pattern, Pixmap,
    PremultipliedColorU8, Rect, SpreadMode, Stroke, StrokeDash, Transform,
};

use crate::backend::{Backend, DrawCmd, PaintMode, PathSeg, PxPath, RgbaPixels, StrokeStyle};
use crate::color::Color;
use crate::error::LlvoError;
use crate::font::FontSpec;
use crate::geom::PxRect;
use crate::primitive::{LineCap, LineJoin};
use crate::{ImageId, ViewId};

/// Renders into in-memory pixmaps; snapshots read them back.
#[derive(Default)]
pub struct RasterBackend {
    surfaces: HashMap<ViewId, Surface>,
    images: HashMap<ImageId, Pixmap>,
}

struct Surface {
    pixmap: Pixmap,
    /// While buffering: the picture as it was when buffering began, which
    /// is what a viewer would still see.
    shown: Option<Pixmap>,
    /// Masks are as large as the surface; the scrollable area's is reused.
    mask: Option<(PxRect, Mask)>,
}

impl RasterBackend {
    /// No surfaces yet.
    pub fn new() -> RasterBackend {
        RasterBackend::default()
    }

    /// The live pixmap of a view (what has been drawn, buffered or not).
    pub fn pixmap(&self, view: ViewId) -> Option<&Pixmap> {
        self.surfaces.get(&view).map(|s| &s.pixmap)
    }

    fn surface(&mut self, view: ViewId) -> Result<&mut Surface, LlvoError> {
        self.surfaces
            .get_mut(&view)
            .ok_or(LlvoError::UnknownView(view))
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

    /// The clip to paint through: `None` when it is the whole surface.
    /// Returns `Err(())` when nothing at all may be painted.
    fn prepare_mask(&mut self, clip: PxRect) -> Result<bool, ()> {
        let whole = self.bounds();
        let clip = clip.intersect(&whole);
        if clip.is_empty() {
            return Err(());
        }
        if clip == whole {
            return Ok(false);
        }
        if self.mask.as_ref().map(|(r, _)| *r) != Some(clip) {
            let mut mask = Mask::new(whole.w, whole.h).ok_or(())?;
            let rect = Rect::from_xywh(clip.x as f32, clip.y as f32, clip.w as f32, clip.h as f32)
                .ok_or(())?;
            mask.fill_path(
                &PathBuilder::from_rect(rect),
                FillRule::Winding,
                false,
                Transform::identity(),
            );
            self.mask = Some((clip, mask));
        }
        Ok(true)
    }

    fn clear(&mut self, rect: PxRect, color: Color) {
        let r = rect.intersect(&self.bounds());
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

    fn shift(&mut self, area: PxRect, dx: i32, dy: i32, fill: Color) {
        let area = area.intersect(&self.bounds());
        if area.is_empty() {
            return;
        }
        let (w, h) = (area.w as i64, area.h as i64);
        let (dx, dy) = (i64::from(dx), i64::from(dy));
        let width = self.pixmap.width() as usize;
        let old: Vec<PremultipliedColorU8> = {
            let pixels = self.pixmap.pixels();
            let mut v = Vec::with_capacity((w * h) as usize);
            for y in 0..h as usize {
                let row = (area.y as usize + y) * width + area.x as usize;
                v.extend_from_slice(&pixels[row..row + w as usize]);
            }
            v
        };
        let bg = premul(fill);
        let pixels = self.pixmap.pixels_mut();
        for y in 0..h {
            let sy = y - dy;
            let row = (i64::from(area.y) + y) as usize * width + area.x as usize;
            for x in 0..w {
                let sx = x - dx;
                pixels[row + x as usize] = if (0..w).contains(&sx) && (0..h).contains(&sy) {
                    old[(sy * w + sx) as usize]
                } else {
                    bg
                };
            }
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
        let clip = clip.intersect(&self.bounds());
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
                mask: None,
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
        s.mask = None;
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
        let images = &self.images;
        let s = self
            .surfaces
            .get_mut(&view)
            .ok_or(LlvoError::UnknownView(view))?;
        match cmd {
            DrawCmd::Clear { rect, color } => s.clear(*rect, *color),
            DrawCmd::Shift { area, dx, dy, fill } => s.shift(*area, *dx, *dy, *fill),
            DrawCmd::Text {
                x,
                baseline,
                text,
                font,
                color,
                clip,
            } => s.text(*x, *baseline, text, font, *color, *clip),
            DrawCmd::Stroke {
                path,
                style,
                color,
                clip,
                mode,
            } => {
                let (Ok(masked), Some(path)) = (s.prepare_mask(*clip), sk_path(path)) else {
                    return Ok(());
                };
                let mask = if masked {
                    s.mask.as_ref().map(|m| &m.1)
                } else {
                    None
                };
                s.pixmap.stroke_path(
                    &path,
                    &solid_paint(*color, *mode),
                    &sk_stroke(style),
                    Transform::identity(),
                    mask,
                );
            }
            DrawCmd::Fill {
                path,
                color,
                clip,
                mode,
            } => {
                let (Ok(masked), Some(path)) = (s.prepare_mask(*clip), sk_path(path)) else {
                    return Ok(());
                };
                let mask = if masked {
                    s.mask.as_ref().map(|m| &m.1)
                } else {
                    None
                };
                s.pixmap.fill_path(
                    &path,
                    &solid_paint(*color, *mode),
                    FillRule::Winding,
                    Transform::identity(),
                    mask,
                );
            }
            DrawCmd::Image {
                image,
                src,
                dst,
                alpha,
                clip,
            } => {
                let img = images.get(image).ok_or(LlvoError::UnknownImage(*image))?;
                let Ok(masked) = s.prepare_mask(*clip) else {
                    return Ok(());
                };
                let (du, dv) = (src[2] - src[0], src[3] - src[1]);
                let Some(rect) = Rect::from_ltrb(dst[0], dst[1], dst[2], dst[3]) else {
                    return Ok(());
                };
                if du == 0.0 || dv == 0.0 {
                    return Ok(());
                }
                let sx = (dst[2] - dst[0]) / du;
                let sy = (dst[3] - dst[1]) / dv;
                let ts = Transform::from_row(
                    sx,
                    0.0,
                    0.0,
                    sy,
                    dst[0] - src[0] * sx,
                    dst[1] - src[1] * sy,
                );
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
                let mask = if masked {
                    s.mask.as_ref().map(|m| &m.1)
                } else {
                    None
                };
                s.pixmap
                    .fill_rect(rect, &paint, Transform::identity(), mask);
            }
        }
        Ok(())
    }

    fn begin_buffer(&mut self, view: ViewId) -> Result<(), LlvoError> {
        let s = self.surface(view)?;
        if s.shown.is_none() {
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
