//! Lowering: world-coordinate primitives to pixel-space drawing commands,
//! and to the commands that erase them again (undraw).
//!
//! All the defensive arithmetic lives here: bad numbers are clamped (and
//! reported) or the primitive is skipped, and geometry far outside the
//! window is cut down in f64 before it reaches f32 rasterisers.

use std::f64::consts::PI;

use crate::backend::{DrawCmd, PaintMode, PathSeg, PathSegs, PxPath, StrokeStyle};
use crate::color::Color;
use crate::error::LlvoError;
use crate::font::MAX_FONT_SIZE;
use crate::geom::{Point, PxRect, WorldMap};
use crate::primitive::{HAlign, LineCap, LineJoin, Primitive, Style, VAlign};
use crate::ImageId;

/// Pixel coordinates beyond this are cut to the clip rectangle in f64 first.
const COORD_LIMIT: f64 = 1.0e6;
/// Thicker lines than this are clamped (nothing on a screen needs more); the language's limit.
pub use voml_ir::vocabulary::limits::MAX_THICK;
/// Longest dash or gap, pixels.
const MAX_DASH: f64 = 1.0e5;

/// What the lowering needs to know about the view.
pub(crate) struct Ctx<'a> {
    pub map: &'a WorldMap,
    pub clip: PxRect,
    pub background: Color,
    pub want_erase: bool,
    /// A line's ends in pixels when the caller has them ([`WorldMap::line_px`]): what
    /// [`to_px`] gives for them.
    pub line_px: Option<[(f64, f64); 2]>,
    pub image_size: &'a dyn Fn(ImageId) -> Option<(u32, u32)>,
    pub warnings: &'a mut Vec<LlvoError>,
}

/// The commands that draw a primitive and, if asked for, those that erase it.
#[derive(Default)]
pub(crate) struct Lowered {
    pub draw: Vec<DrawCmd>,
    /// The [`DrawCmd::bounds`] of each drawing command, worked out to see that it can change
    /// a pixel: the back end is given them.
    pub bounds: Vec<PxRect>,
    pub erase: Vec<DrawCmd>,
}

impl Lowered {
    /// Adds a drawing command, with its bounds.
    fn push_draw(&mut self, cmd: DrawCmd, bounds: PxRect) {
        self.draw.push(cmd);
        self.bounds.push(bounds);
    }
}

type Poly = Vec<(f64, f64)>;

/// The usable form of a style: numbers checked, alpha applied.
struct Ink {
    color: Color,
    fill: Option<Color>,
    /// The style's thickness, 0..=MAX_THICK.
    thick: f64,
    dash: Vec<f32>,
    cap: LineCap,
    join: LineJoin,
}

impl Ink {
    fn stroke_width(&self) -> f32 {
        if self.thick == 0.0 {
            1.0
        } else {
            self.thick as f32
        }
    }

    fn stroke_style(&self) -> StrokeStyle {
        StrokeStyle {
            width: self.stroke_width(),
            cap: self.cap,
            join: self.join,
            dash: self.dash.clone(),
            dash_offset: 0.0,
        }
    }

    /// Outline of a closed shape: always unless filled with thickness 0.
    fn outlines(&self) -> bool {
        self.fill.is_none() || self.thick > 0.0
    }
}

fn warn(ctx: &mut Ctx, what: &'static str, value: f64, action: &'static str) {
    ctx.warnings.push(LlvoError::BadNumber {
        what,
        value,
        action,
    });
}

fn ink(style: &Style, ctx: &mut Ctx) -> Ink {
    let thick = if style.thick.is_nan() {
        warn(ctx, "thickness", style.thick, "used 1");
        1.0
    } else if style.thick < 0.0 {
        warn(ctx, "thickness", style.thick, "clamped to 0");
        0.0
    } else if style.thick > MAX_THICK {
        warn(ctx, "thickness", style.thick, "clamped to 4096");
        MAX_THICK
    } else {
        style.thick
    };
    let alpha = if style.alpha.is_nan() || !(0.0..=1.0).contains(&style.alpha) {
        warn(ctx, "alpha", style.alpha, "clamped to 0..1 (NaN: 1)");
        if style.alpha.is_nan() {
            1.0
        } else {
            style.alpha.clamp(0.0, 1.0)
        }
    } else {
        style.alpha
    };
    Ink {
        color: style.color.with_alpha_factor(alpha),
        fill: style.fill.map(|f| f.with_alpha_factor(alpha)),
        thick,
        dash: if style.dash.is_empty() {
            Vec::new()
        } else {
            dashes(&style.dash, ctx)
        },
        cap: style.cap,
        join: style.join,
    }
}

/// A style's dash pattern as drawn: an odd count repeated, lengths bounded; solid (empty)
/// when it has a bad length or a period under a pixel.
fn dashes(pattern: &[f64], ctx: &mut Ctx) -> Vec<f32> {
    let mut dash: Vec<f64> = pattern.to_vec();
    if let Some(bad) = dash.iter().find(|d| !d.is_finite() || **d < 0.0) {
        warn(ctx, "dash length", *bad, "line drawn solid");
        dash.clear();
    }
    if dash.len() % 2 == 1 {
        dash.extend_from_within(..);
    }
    let period: f64 = dash.iter().map(|d| d.min(MAX_DASH)).sum();
    if !dash.is_empty() && period < 1.0 {
        // Sub-pixel periods are invisible and cost millions of dashes.
        warn(ctx, "dash period", period, "line drawn solid");
        dash.clear();
    }
    dash.iter().map(|d| d.min(MAX_DASH) as f32).collect()
}

fn skipped(prim: &Primitive, reason: String) -> LlvoError {
    LlvoError::Skipped {
        primitive: prim.kind(),
        reason,
    }
}

/// A polyline's or polygon's points in pixels; at least `min` of them.
/// Points in one column of pixels beyond which a run of them is reduced (see
/// [`decimate_columns`]).
const COLUMN_POINTS: usize = 4;

/// Samples denser than the pixels (a stream of a million samples drawn across a few hundred
/// columns): each run of consecutive points in one column of pixels is reduced to its first,
/// lowest, highest and last points, in the order they came. What the column shows — from its
/// highest point to its lowest, however narrow a peak, and where the line enters and leaves
/// it — is drawn with at most four points instead of thousands of overlapping segments. A
/// polyline with no run longer than four points is left as it is, and so drawn exactly as
/// before.
fn decimate_columns(pts: Poly) -> Poly {
    let column = |p: &(f64, f64)| p.0.floor();
    let dense = pts
        .chunk_by(|a, b| column(a) == column(b))
        .any(|run| run.len() > COLUMN_POINTS);
    if !dense {
        return pts;
    }
    let mut out = Vec::with_capacity(pts.len().min(1 << 16));
    for run in pts.chunk_by(|a, b| column(a) == column(b)) {
        if run.len() <= COLUMN_POINTS {
            out.extend_from_slice(run);
            continue;
        }
        let (mut low, mut high) = (0, 0);
        for (i, p) in run.iter().enumerate() {
            if p.1 < run[low].1 {
                low = i;
            }
            if p.1 > run[high].1 {
                high = i;
            }
        }
        let mut keep = [0, low, high, run.len() - 1];
        keep.sort_unstable();
        let mut last = None;
        for k in keep {
            if last != Some(k) {
                out.push(run[k]);
                last = Some(k);
            }
        }
    }
    out
}

fn points_px(
    prim: &Primitive,
    map: &WorldMap,
    points: &[Point],
    min: usize,
) -> Result<Poly, LlvoError> {
    if points.len() < min {
        return Err(skipped(
            prim,
            format!("needs {min} points, has {}", points.len()),
        ));
    }
    points.iter().map(|p| to_px(prim, map, *p)).collect()
}

fn to_px(prim: &Primitive, map: &WorldMap, p: Point) -> Result<(f64, f64), LlvoError> {
    if !p.is_finite() {
        let bad = if p.x.is_finite() { p.y } else { p.x };
        return Err(skipped(
            prim,
            format!("coordinate {bad} is not a finite number"),
        ));
    }
    let (x, y) = map.to_px(p);
    if !(x.is_finite() && y.is_finite()) {
        return Err(skipped(
            prim,
            format!("coordinate ({}, {}) is too large", p.x, p.y),
        ));
    }
    Ok((x, y))
}

fn finite(prim: &Primitive, what: &str, v: f64) -> Result<f64, LlvoError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(skipped(prim, format!("{what} {v} is not a finite number")))
    }
}

/// Lowers one primitive into `out`, emptied first (its buffers serve primitive after
/// primitive). `Ok` with no commands means "nothing visible".
pub(crate) fn lower(
    prim: &Primitive,
    style: &Style,
    ctx: &mut Ctx,
    out: &mut Lowered,
) -> Result<(), LlvoError> {
    let map = ctx.map;
    out.draw.clear();
    out.bounds.clear();
    out.erase.clear();
    match prim {
        Primitive::Line { from, to } => {
            let ink = ink(style, ctx);
            let [mut a, mut b] = match ctx.line_px {
                Some(px) => px,
                None => [to_px(prim, map, *from)?, to_px(prim, map, *to)?],
            };
            let w = f64::from(ink.stroke_width());
            if a.0 == b.0 {
                a.0 = snap(a.0, w);
                b.0 = a.0;
            } else if a.1 == b.1 {
                a.1 = snap(a.1, w);
                b.1 = a.1;
            }
            if is_huge(&[a, b]) {
                stroke_polys(out, ctx, &ink, vec![vec![a, b]], false);
            } else {
                // A plain segment, the commonest primitive of streaming plots: its path
                // directly, without the polygons' vectors.
                let path = PxPath {
                    segs: PathSegs::from_buf([
                        PathSeg::MoveTo(a.0 as f32, a.1 as f32),
                        PathSeg::LineTo(b.0 as f32, b.1 as f32),
                    ]),
                };
                push_stroke(out, ctx, &ink, path, true);
            }
        }
        Primitive::Polyline { points } => {
            let ink = ink(style, ctx);
            let pts = points_px(prim, map, points, 2)?;
            // (A dash pattern runs along the path's length, which dropping points changes.)
            let pts = if ink.dash.is_empty() {
                decimate_columns(pts)
            } else {
                pts
            };
            stroke_polys(out, ctx, &ink, vec![pts], false);
        }
        Primitive::Polygon { points } => {
            let ink = ink(style, ctx);
            let pts = points_px(prim, map, points, 3)?;
            closed_polys(out, ctx, &ink, pts);
        }
        Primitive::Rectangle { from, to } => {
            let ink = ink(style, ctx);
            let (x0, y0) = to_px(prim, map, *from)?;
            let (x1, y1) = to_px(prim, map, *to)?;
            let w = if ink.outlines() {
                f64::from(ink.stroke_width())
            } else {
                0.0
            };
            let (x0, y0, x1, y1) = (snap(x0, w), snap(y0, w), snap(x1, w), snap(y1, w));
            closed_polys(out, ctx, &ink, vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1)]);
        }
        Primitive::Circle { center, radius } => {
            let r = finite(prim, "radius", *radius)?;
            conic(prim, out, ctx, style, *center, (r, r), None)?;
        }
        Primitive::Ellipse { center, radii } => {
            let rx = finite(prim, "radius", radii.0)?;
            let ry = finite(prim, "radius", radii.1)?;
            conic(prim, out, ctx, style, *center, (rx, ry), None)?;
        }
        Primitive::Arc {
            center,
            radius,
            start_deg,
            extent_deg,
        } => {
            let r = finite(prim, "radius", *radius)?;
            let start = finite(prim, "start angle", *start_deg)?;
            let mut extent = finite(prim, "extent", *extent_deg)?;
            if extent.abs() > 360.0 {
                extent = 360.0f64.copysign(extent);
            }
            if extent == 0.0 {
                return Ok(());
            }
            conic(
                prim,
                out,
                ctx,
                style,
                *center,
                (r, r),
                Some((start % 360.0, extent)),
            )?;
        }
        Primitive::Text {
            at,
            content,
            font,
            halign,
            valign,
        } => text(prim, out, ctx, style, *at, content, *font, *halign, *valign)?,
        Primitive::Figure {
            image,
            orig_origin,
            orig_extents,
            world_origin,
            world_extents,
        } => figure(
            prim,
            out,
            ctx,
            style,
            *image,
            *orig_origin,
            *orig_extents,
            *world_origin,
            *world_extents,
        )?,
    }
    Ok(())
}

/// An axis-aligned edge moved (by at most half a pixel) so that a stroke
/// of `width` covers whole pixels, as on the paper's X11 device: to a pixel
/// centre for odd widths, to a pixel boundary for even widths and fills
/// (`width` 0). Other widths are left alone.
fn snap(v: f64, width: f64) -> f64 {
    if (width - width.round()).abs() > 1e-9 || v.abs() > COORD_LIMIT {
        return v;
    }
    if width.round() as i64 % 2 == 1 {
        (v - 0.5).round() + 0.5
    } else {
        v.round()
    }
}

/// The clip rectangle grown so that strokes cut at it keep their look.
fn cut_rect(clip: PxRect, width: f32) -> (f64, f64, f64, f64) {
    let pad = f64::from(width) * 2.0 + 4.0;
    (
        f64::from(clip.x) - pad,
        f64::from(clip.y) - pad,
        clip.right() as f64 + pad,
        clip.bottom() as f64 + pad,
    )
}

fn is_huge(pts: &[(f64, f64)]) -> bool {
    pts.iter()
        .any(|(x, y)| x.abs() > COORD_LIMIT || y.abs() > COORD_LIMIT)
}

/// The end points of a cut segment and their parameters along the original.
type CutSegment = ((f64, f64), (f64, f64), f64, f64);

/// Liang–Barsky: the part of segment a-b inside r, with the parameters.
fn clip_segment(a: (f64, f64), b: (f64, f64), r: (f64, f64, f64, f64)) -> Option<CutSegment> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - r.0),
        (dx, r.2 - a.0),
        (-dy, a.1 - r.1),
        (dy, r.3 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| (a.0 + t * dx, a.1 + t * dy);
    Some((at(t0), at(t1), t0, t1))
}

/// Cuts an open polyline to r, splitting it where it leaves and re-enters.
fn cut_open(pts: &[(f64, f64)], r: (f64, f64, f64, f64)) -> Vec<Poly> {
    let mut out: Vec<Poly> = Vec::new();
    let mut joined = false;
    for w in pts.windows(2) {
        match clip_segment(w[0], w[1], r) {
            Some((a, b, t0, t1)) => {
                if joined && t0 == 0.0 {
                    if let Some(last) = out.last_mut() {
                        last.push(b);
                    }
                } else {
                    out.push(vec![a, b]);
                }
                joined = t1 == 1.0;
            }
            None => joined = false,
        }
    }
    out
}

/// Sutherland–Hodgman: a closed polygon cut to r (edges along r fall
/// outside the real clip, so they never show).
fn cut_closed(pts: &[(f64, f64)], r: (f64, f64, f64, f64)) -> Poly {
    let mut poly: Poly = pts.to_vec();
    type Inside = fn((f64, f64), (f64, f64, f64, f64)) -> bool;
    type Cross = fn((f64, f64), (f64, f64), (f64, f64, f64, f64)) -> (f64, f64);
    let edges: [(Inside, Cross); 4] = [
        (
            |p, r| p.0 >= r.0,
            |a, b, r| (r.0, a.1 + (b.1 - a.1) * (r.0 - a.0) / (b.0 - a.0)),
        ),
        (
            |p, r| p.0 <= r.2,
            |a, b, r| (r.2, a.1 + (b.1 - a.1) * (r.2 - a.0) / (b.0 - a.0)),
        ),
        (
            |p, r| p.1 >= r.1,
            |a, b, r| (a.0 + (b.0 - a.0) * (r.1 - a.1) / (b.1 - a.1), r.1),
        ),
        (
            |p, r| p.1 <= r.3,
            |a, b, r| (a.0 + (b.0 - a.0) * (r.3 - a.1) / (b.1 - a.1), r.3),
        ),
    ];
    for (inside, cross) in edges {
        let input = std::mem::take(&mut poly);
        for (i, &cur) in input.iter().enumerate() {
            let prev = input[(i + input.len() - 1) % input.len()];
            match (inside(prev, r), inside(cur, r)) {
                (true, true) => poly.push(cur),
                (true, false) => poly.push(cross(prev, cur, r)),
                (false, true) => {
                    poly.push(cross(prev, cur, r));
                    poly.push(cur);
                }
                (false, false) => {}
            }
        }
        if poly.is_empty() {
            break;
        }
    }
    poly
}

fn poly_path(polys: &[Poly], close: bool) -> PxPath {
    let mut segs = PathSegs::new();
    for p in polys {
        let Some((first, rest)) = p.split_first() else {
            continue;
        };
        segs.push(PathSeg::MoveTo(first.0 as f32, first.1 as f32));
        segs.extend(rest.iter().map(|q| PathSeg::LineTo(q.0 as f32, q.1 as f32)));
        if close {
            segs.push(PathSeg::Close);
        }
    }
    PxPath { segs }
}

fn stroke_polys(out: &mut Lowered, ctx: &mut Ctx, ink: &Ink, polys: Vec<Poly>, close: bool) {
    let width = ink.stroke_width();
    let polys: Vec<Poly> = if polys.iter().any(|p| is_huge(p)) {
        let r = cut_rect(ctx.clip, width);
        if close {
            polys
                .iter()
                .map(|p| cut_closed(p, r))
                .filter(|p| p.len() > 1)
                .collect()
        } else {
            polys.iter().flat_map(|p| cut_open(p, r)).collect()
        }
    } else {
        polys
    };
    let path = poly_path(&polys, close);
    push_stroke(out, ctx, ink, path, !close);
}

fn closed_polys(out: &mut Lowered, ctx: &mut Ctx, ink: &Ink, pts: Poly) {
    let pts = if is_huge(&pts) {
        cut_closed(&pts, cut_rect(ctx.clip, ink.stroke_width()))
    } else {
        pts
    };
    if pts.len() < 2 {
        return;
    }
    let path = poly_path(&[pts], true);
    if let Some(fill) = ink.fill {
        push_fill(out, ctx, fill, path.clone());
    }
    if ink.outlines() {
        push_stroke(out, ctx, ink, path, false);
    }
}

fn push_fill(out: &mut Lowered, ctx: &mut Ctx, color: Color, path: PxPath) {
    // The path is copied only for an erasure.
    let erase = ctx.want_erase.then(|| path.clone());
    let cmd = DrawCmd::Fill {
        path,
        color,
        clip: ctx.clip,
        mode: PaintMode::Blend,
    };
    let bounds = cmd.bounds();
    if bounds.is_empty() {
        return;
    }
    out.push_draw(cmd, bounds);
    if let Some(path) = erase {
        out.erase.push(DrawCmd::Fill {
            path: path.clone(),
            color: ctx.background,
            clip: ctx.clip,
            mode: PaintMode::Erase,
        });
        // A hard-edged fill stops where the blended fringe begins.
        out.erase.push(DrawCmd::Stroke {
            path,
            style: StrokeStyle {
                width: 2.0,
                cap: LineCap::Square,
                join: LineJoin::Miter,
                dash: Vec::new(),
                dash_offset: 0.0,
            },
            color: ctx.background,
            clip: ctx.clip,
            mode: PaintMode::Erase,
        });
    }
}

fn push_stroke(out: &mut Lowered, ctx: &mut Ctx, ink: &Ink, path: PxPath, open: bool) {
    // The path and style are copied only for an erasure.
    let erase = ctx.want_erase.then(|| (path.clone(), ink.stroke_style()));
    let cmd = stroke(ctx, ink, path);
    let bounds = cmd.bounds();
    if bounds.is_empty() {
        return;
    }
    out.push_draw(cmd, bounds);
    if let Some((path, style)) = erase {
        let (path, style) = erase_stroke(path, style, open);
        out.erase.push(DrawCmd::Stroke {
            path,
            style,
            color: ctx.background,
            clip: ctx.clip,
            mode: PaintMode::Erase,
        });
    }
}

/// The command that strokes `path` with `ink`.
fn stroke(ctx: &Ctx, ink: &Ink, path: PxPath) -> DrawCmd {
    DrawCmd::Stroke {
        path,
        style: ink.stroke_style(),
        color: ink.color,
        clip: ctx.clip,
        mode: PaintMode::Blend,
    }
}

/// The stroke that covers another stroke and its anti-aliased fringe: one
/// pixel more on every side, ends and dashes included.
fn erase_stroke(mut path: PxPath, mut style: StrokeStyle, open: bool) -> (PxPath, StrokeStyle) {
    style.width += 2.0;
    if style.cap == LineCap::Butt {
        if open {
            path = extend_open_ends(&path, 1.0);
        } else if !style.dash.is_empty() {
            style.dash_offset = 1.0;
        }
        if !style.dash.is_empty() {
            // Every dash one pixel longer at each end, every gap two shorter.
            let grown: Vec<f32> = style
                .dash
                .chunks(2)
                .flat_map(|p| [p[0] + 2.0, (p[1] - 2.0).max(0.0)])
                .collect();
            style.dash = if grown.chunks(2).all(|p| p[1] == 0.0) {
                Vec::new()
            } else {
                grown
            };
        }
    }
    (path, style)
}

/// Lengthens each open subpath by `by` pixels at both ends, along its
/// end tangents (butt caps stop exactly at the end; their fringe does not).
fn extend_open_ends(path: &PxPath, by: f32) -> PxPath {
    let mut subpaths: Vec<Vec<PathSeg>> = Vec::new();
    for s in &path.segs {
        if matches!(s, PathSeg::MoveTo(..)) || subpaths.is_empty() {
            subpaths.push(Vec::new());
        }
        if let Some(last) = subpaths.last_mut() {
            last.push(*s);
        }
    }
    let mut segs = PathSegs::with_capacity(path.segs.len() + subpaths.len() * 2);
    for sp in subpaths {
        let pts: Vec<(f32, f32)> = sp
            .iter()
            .flat_map(|s| match *s {
                PathSeg::MoveTo(x, y) | PathSeg::LineTo(x, y) => vec![(x, y)],
                PathSeg::CubicTo(a, b, c, d, e, f) => vec![(a, b), (c, d), (e, f)],
                PathSeg::Close => vec![],
            })
            .collect();
        let closed = sp.iter().any(|s| matches!(s, PathSeg::Close));
        let (Some(&first), Some(&last)) = (pts.first(), pts.last()) else {
            continue;
        };
        let start = if closed {
            None
        } else {
            away(first, pts.iter(), by)
        };
        let end = if closed {
            None
        } else {
            away(last, pts.iter().rev(), by)
        };
        match start {
            Some(s) => {
                segs.push(PathSeg::MoveTo(s.0, s.1));
                segs.push(PathSeg::LineTo(first.0, first.1));
            }
            None => segs.push(PathSeg::MoveTo(first.0, first.1)),
        }
        segs.extend(sp.iter().skip(1).copied());
        if let Some(e) = end {
            segs.push(PathSeg::LineTo(e.0, e.1));
        }
    }
    PxPath { segs }
}

/// `from` moved `by` pixels directly away from the first of `others` that
/// differs from it (the end tangent of a path).
fn away<'a>(
    from: (f32, f32),
    mut others: impl Iterator<Item = &'a (f32, f32)>,
    by: f32,
) -> Option<(f32, f32)> {
    others.find(|p| **p != from).map(|p| {
        let (dx, dy) = (from.0 - p.0, from.1 - p.1);
        let len = (dx * dx + dy * dy).sqrt();
        (from.0 + dx / len * by, from.1 + dy / len * by)
    })
}

/// Appends an elliptical arc in pixel space as cubic Béziers. Angles are
/// world angles (counter-clockwise, y up), hence the minus on sin.
fn arc_segs(
    segs: &mut PathSegs,
    c: (f64, f64),
    r: (f64, f64),
    start: f64,
    sweep: f64,
    move_to: bool,
) {
    let at = |t: f64| (c.0 + r.0 * t.cos(), c.1 - r.1 * t.sin());
    let tangent = |t: f64| (-r.0 * t.sin(), -r.1 * t.cos());
    let n = (sweep.abs() / (PI / 2.0)).ceil().max(1.0) as usize;
    let step = sweep / n as f64;
    let k = 4.0 / 3.0 * (step / 4.0).tan();
    let p0 = at(start);
    if move_to {
        segs.push(PathSeg::MoveTo(p0.0 as f32, p0.1 as f32));
    } else {
        segs.push(PathSeg::LineTo(p0.0 as f32, p0.1 as f32));
    }
    for i in 0..n {
        let (ta, tb) = (start + step * i as f64, start + step * (i + 1) as f64);
        let (pa, pb) = (at(ta), at(tb));
        let (da, db) = (tangent(ta), tangent(tb));
        segs.push(PathSeg::CubicTo(
            (pa.0 + k * da.0) as f32,
            (pa.1 + k * da.1) as f32,
            (pb.0 - k * db.0) as f32,
            (pb.1 - k * db.1) as f32,
            pb.0 as f32,
            pb.1 as f32,
        ));
    }
}

/// Circles, ellipses and arcs (`arc` = start and extent in degrees).
fn conic(
    prim: &Primitive,
    out: &mut Lowered,
    ctx: &mut Ctx,
    style: &Style,
    center: Point,
    radii: (f64, f64),
    arc: Option<(f64, f64)>,
) -> Result<(), LlvoError> {
    let ink = ink(style, ctx);
    if radii.0 < 0.0 || radii.1 < 0.0 {
        warn(
            ctx,
            "radius",
            radii.0.min(radii.1),
            "used its absolute value",
        );
    }
    let c = to_px(prim, ctx.map, center)?;
    let r = (ctx.map.dx_px(radii.0), ctx.map.dy_px(radii.1));
    let pad = f64::from(ink.stroke_width()) * 2.0 + 2.0;
    let bbox = PxRect::covering(
        c.0 - r.0 - pad,
        c.1 - r.1 - pad,
        c.0 + r.0 + pad,
        c.1 + r.1 + pad,
    );
    if bbox.intersect(&ctx.clip).is_empty() {
        return Ok(());
    }
    if !(r.0.is_finite() && r.1.is_finite()) || is_huge(&[c, r]) {
        return Err(skipped(prim, "too large to draw".to_string()));
    }
    let mut segs = PathSegs::new();
    match arc {
        None => {
            arc_segs(&mut segs, c, r, 0.0, 2.0 * PI, true);
            segs.push(PathSeg::Close);
            let path = PxPath { segs };
            if let Some(fill) = ink.fill {
                push_fill(out, ctx, fill, path.clone());
            }
            if ink.outlines() {
                push_stroke(out, ctx, &ink, path, false);
            }
        }
        Some((start, extent)) => {
            let (s, e) = (start.to_radians(), extent.to_radians());
            if let Some(fill) = ink.fill {
                segs.push(PathSeg::MoveTo(c.0 as f32, c.1 as f32));
                arc_segs(&mut segs, c, r, s, e, false);
                segs.push(PathSeg::Close);
                let path = PxPath { segs };
                push_fill(out, ctx, fill, path.clone());
                if ink.outlines() {
                    push_stroke(out, ctx, &ink, path, false);
                }
            } else {
                arc_segs(&mut segs, c, r, s, e, true);
                if extent.abs() >= 360.0 {
                    segs.push(PathSeg::Close);
                }
                push_stroke(out, ctx, &ink, PxPath { segs }, extent.abs() < 360.0);
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn text(
    prim: &Primitive,
    out: &mut Lowered,
    ctx: &mut Ctx,
    style: &Style,
    at: Point,
    content: &str,
    font: crate::FontSpec,
    halign: HAlign,
    valign: VAlign,
) -> Result<(), LlvoError> {
    let mut font = font;
    let size = f64::from(font.size_px);
    if !size.is_finite() || size <= 0.0 {
        return Err(skipped(
            prim,
            format!("text size {size} is not a positive number"),
        ));
    }
    if font.size_px > MAX_FONT_SIZE {
        warn(ctx, "text size", size, "clamped to 2048");
        font.size_px = MAX_FONT_SIZE;
    }
    let alpha = if style.alpha.is_nan() {
        1.0
    } else {
        style.alpha
    };
    let color = style.color.with_alpha_factor(alpha);
    let (x, y) = to_px(prim, ctx.map, at)?;
    let m = font.metrics();
    let (asc, desc, lh) = (
        f64::from(m.ascent),
        f64::from(m.descent),
        f64::from(m.line_height),
    );
    let lines: Vec<&str> = content
        .split('\n')
        .map(|l| l.trim_end_matches('\r'))
        .collect();
    let span = (lines.len() - 1) as f64 * lh;
    let first_baseline = match valign {
        VAlign::Baseline => y,
        VAlign::Top => y + asc,
        VAlign::Bottom => y + desc - span,
        VAlign::Center => y - (asc - desc + span) / 2.0 + asc,
    };
    let room = cut_rect(ctx.clip, font.size_px);
    for (i, line) in lines.iter().enumerate() {
        let baseline = first_baseline + i as f64 * lh;
        let w = f64::from(font.line_width(line));
        let x0 = match halign {
            HAlign::Left => x,
            HAlign::Center => x - w / 2.0,
            HAlign::Right => x - w,
        };
        // Lines far away are culled in f64, before they meet f32.
        if x0 + w < room.0 || x0 > room.2 || baseline - asc > room.3 || baseline - desc < room.1 {
            continue;
        }
        let cmd = DrawCmd::Text {
            x: x0 as f32,
            baseline: baseline as f32,
            text: line.to_string(),
            font,
            color,
            clip: ctx.clip,
        };
        let bounds = cmd.bounds();
        if bounds.is_empty() {
            continue;
        }
        out.push_draw(cmd, bounds);
        if ctx.want_erase {
            out.erase.push(DrawCmd::Clear {
                rect: bounds,
                color: ctx.background,
            });
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn figure(
    prim: &Primitive,
    out: &mut Lowered,
    ctx: &mut Ctx,
    style: &Style,
    image: ImageId,
    orig_origin: (f64, f64),
    orig_extents: (f64, f64),
    world_origin: Point,
    world_extents: (f64, f64),
) -> Result<(), LlvoError> {
    let (iw, ih) = (ctx.image_size)(image).ok_or_else(|| LlvoError::unknown_image(image))?;
    let (iw, ih) = (f64::from(iw), f64::from(ih));
    let ox = finite(prim, "orig-origin", orig_origin.0)?;
    let oy = finite(prim, "orig-origin", orig_origin.1)?;
    let ex = finite(prim, "orig-extents", orig_extents.0)?;
    let ey = finite(prim, "orig-extents", orig_extents.1)?;
    // An extent of 0 means "to the image's edge".
    let (mut u0, mut u1) = (
        ox.clamp(0.0, iw),
        if ex == 0.0 {
            iw
        } else {
            (ox + ex).clamp(0.0, iw)
        },
    );
    let (mut v0, mut v1) = (
        oy.clamp(0.0, ih),
        if ey == 0.0 {
            ih
        } else {
            (oy + ey).clamp(0.0, ih)
        },
    );
    if u0 == u1 || v0 == v1 {
        return Err(skipped(
            prim,
            "the part of the image to draw is empty".to_string(),
        ));
    }
    let wex = finite(prim, "world-extents", world_extents.0)?;
    let wey = finite(prim, "world-extents", world_extents.1)?;
    let (mut xa, mut ya) = to_px(
        prim,
        ctx.map,
        Point::new(world_origin.x, world_origin.y + wey),
    )?;
    let (mut xb, mut yb) = to_px(
        prim,
        ctx.map,
        Point::new(world_origin.x + wex, world_origin.y),
    )?;
    if xa > xb {
        std::mem::swap(&mut xa, &mut xb);
        std::mem::swap(&mut u0, &mut u1);
    }
    if ya > yb {
        std::mem::swap(&mut ya, &mut yb);
        std::mem::swap(&mut v0, &mut v1);
    }
    if xa == xb || ya == yb {
        return Ok(());
    }
    // Only the visible part reaches the back end: image coordinates follow
    // the cut linearly, so huge world boxes stay exact.
    let room = cut_rect(ctx.clip, 1.0);
    let (cx0, cx1) = (xa.max(room.0), xb.min(room.2));
    let (cy0, cy1) = (ya.max(room.1), yb.min(room.3));
    if cx0 >= cx1 || cy0 >= cy1 {
        return Ok(());
    }
    let u = |x: f64| u0 + (x - xa) / (xb - xa) * (u1 - u0);
    let v = |y: f64| v0 + (y - ya) / (yb - ya) * (v1 - v0);
    let alpha = if style.alpha.is_nan() {
        1.0
    } else {
        style.alpha.clamp(0.0, 1.0)
    };
    let cmd = DrawCmd::Image {
        image,
        src: [u(cx0) as f32, v(cy0) as f32, u(cx1) as f32, v(cy1) as f32],
        dst: [cx0 as f32, cy0 as f32, cx1 as f32, cy1 as f32],
        alpha: alpha as f32,
        clip: ctx.clip,
    };
    let bounds = cmd.bounds();
    if bounds.is_empty() {
        return Ok(());
    }
    out.push_draw(cmd, bounds);
    if ctx.want_erase {
        out.erase.push(DrawCmd::Clear {
            rect: bounds,
            color: ctx.background,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line lowered from the pixel positions of its ends worked out beforehand
    /// ([`WorldMap::line_px`], the way [`crate::Llvo::draw`] hands them over) gives the very
    /// commands, bounds and erasures of one whose ends are mapped here, over random lines:
    /// inside and across the clip, far outside it and huge, sub-pixel, upright (snapped),
    /// thin, thick and dashed, with NaN and infinite ends, mappings that overflow.
    #[test]
    fn a_line_lowers_the_same_from_pixels_worked_out_before() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let maps = [
            WorldMap::new((600, 400), [40, 10, 10, 30], [0.0, 10.0, 0.0, 100.0]),
            WorldMap::new((300, 200), [0, 0, 0, 0], [-5.0, 5.0, 2.0, -2.0]),
            WorldMap::new((300, 200), [5, 5, 5, 5], [0.0, 1e-300, 0.0, 1.0]),
        ];
        let images = |_: ImageId| None;
        let mut compared = 0;
        for i in 0..20_000 {
            let mut coord = |scale: f64| {
                let r = next();
                match r % 23 {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    2 => -1e300,
                    3 => (r >> 8) as f64 % 7.0,
                    _ => ((r >> 11) as f64 / (1u64 << 53) as f64 - 0.25) * scale,
                }
            };
            let scale = [12.0, 120.0, 0.01, 1e9][i % 4];
            let from = Point::new(coord(scale), coord(scale * 10.0));
            let mut to = Point::new(coord(scale), coord(scale * 10.0));
            match next() % 5 {
                0 => to.x = from.x,
                1 => to.y = from.y,
                _ => {}
            }
            let style = Style {
                thick: [0.0, 1.0, 2.0, 3.5, 12.0][i % 5],
                dash: if i % 7 == 0 {
                    vec![4.0, 2.0]
                } else {
                    Vec::new()
                },
                cap: [LineCap::Butt, LineCap::Round, LineCap::Square][i % 3],
                ..Style::default()
            };
            let map = &maps[i % maps.len()];
            let prim = Primitive::Line { from, to };
            let lowered = |line_px: Option<[(f64, f64); 2]>| {
                let mut warnings = Vec::new();
                let mut ctx = Ctx {
                    map,
                    clip: map.area,
                    background: Color::WHITE,
                    want_erase: i % 2 == 0,
                    line_px,
                    image_size: &images,
                    warnings: &mut warnings,
                };
                let mut out = Lowered::default();
                let result = lower(&prim, &style, &mut ctx, &mut out).map_err(|e| e.to_string());
                (result, out.draw, out.bounds, out.erase, warnings.len())
            };
            let px = map.line_px(from, to);
            let ends = (to_px(&prim, map, from), to_px(&prim, map, to));
            assert_eq!(
                px.is_some(),
                ends.0.is_ok() && ends.1.is_ok(),
                "{from:?} {to:?}"
            );
            if px.is_some() {
                assert_eq!(lowered(px), lowered(None), "{from:?} {to:?} {style:?}");
                compared += 1;
            }
        }
        assert!(compared > 10_000, "{compared} lines compared");
    }

    /// A dense polyline keeps, in each column, its extent, its first and its last point, in
    /// order, with at most four points; a sparse one is left as it is.
    #[test]
    fn dense_polylines_keep_each_columns_extent() {
        let sparse: Poly = (0..50).map(|i| (i as f64 * 0.3, (i % 7) as f64)).collect();
        assert_eq!(decimate_columns(sparse.clone()), sparse);
        let mut seed = 7u64;
        let dense: Poly = (0..100_000)
            .map(|i| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let spike = if i == 51_234 { 500.0 } else { 0.0 };
                (i as f64 * 0.002, ((seed >> 33) % 100) as f64 * 0.1 + spike)
            })
            .collect();
        let out = decimate_columns(dense.clone());
        assert!(out.len() <= 4 * 201, "{} points", out.len());
        assert_eq!(out.first(), dense.first());
        assert_eq!(out.last(), dense.last());
        // In order: every point kept is an input point, later than the one before.
        let mut at = 0;
        for p in &out {
            at += dense[at..]
                .iter()
                .position(|q| q == p)
                .expect("an input point, in order");
        }
        let extent = |pts: &[(f64, f64)], col: f64| {
            pts.iter()
                .filter(|p| p.0.floor() == col)
                .fold((f64::MAX, f64::MIN), |(lo, hi), p| {
                    (lo.min(p.1), hi.max(p.1))
                })
        };
        for col in 0..200 {
            assert_eq!(
                extent(&out, col as f64),
                extent(&dense, col as f64),
                "column {col}"
            );
        }
        assert!(out.iter().any(|p| p.1 >= 500.0), "the spike is kept");
    }

    #[test]
    fn snapping_makes_strokes_crisp() {
        assert_eq!(snap(10.0, 1.0), 10.5);
        assert_eq!(snap(10.3, 1.0), 10.5);
        assert_eq!(snap(10.3, 2.0), 10.0);
        assert_eq!(snap(10.6, 0.0), 11.0);
        assert_eq!(snap(10.3, 1.5), 10.3);
    }

    #[test]
    fn segment_clipping() {
        let r = (0.0, 0.0, 10.0, 10.0);
        let (a, b, t0, t1) = clip_segment((-10.0, 5.0), (20.0, 5.0), r).unwrap();
        assert_eq!((a, b), ((0.0, 5.0), (10.0, 5.0)));
        assert!(t0 > 0.0 && t1 < 1.0);
        assert!(clip_segment((-10.0, -5.0), (20.0, -5.0), r).is_none());
        let parts = cut_open(&[(5.0, 5.0), (5.0, 1e12), (6.0, 5.0)], r);
        assert_eq!(parts.len(), 2);
    }

    #[test]
    fn polygon_clipping_keeps_inside() {
        let r = (0.0, 0.0, 10.0, 10.0);
        let p = cut_closed(&[(-1e15, -1e15), (1e15, -1e15), (5.0, 1e15)], r);
        assert!(p
            .iter()
            .all(|(x, y)| (0.0..=10.0).contains(x) && (0.0..=10.0).contains(y)));
        assert!(p.len() >= 4);
    }

    #[test]
    fn ends_extend_along_tangents() {
        let p = PxPath {
            segs: vec![PathSeg::MoveTo(0.0, 0.0), PathSeg::LineTo(10.0, 0.0)].into(),
        };
        let e = extend_open_ends(&p, 1.0);
        assert_eq!(e.bounds(), Some((-1.0, 0.0, 11.0, 0.0)));
    }

    #[test]
    fn erase_dashes_grow() {
        let style = StrokeStyle {
            width: 3.0,
            cap: LineCap::Butt,
            join: LineJoin::Miter,
            dash: vec![5.0, 5.0],
            dash_offset: 0.0,
        };
        let (_, s) = erase_stroke(PxPath::default(), style.clone(), true);
        assert_eq!((s.width, s.dash.clone()), (5.0, vec![7.0, 3.0]));
        let tight = StrokeStyle {
            dash: vec![5.0, 1.0],
            ..style
        };
        assert!(erase_stroke(PxPath::default(), tight, true)
            .1
            .dash
            .is_empty());
    }
}
