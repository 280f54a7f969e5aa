//! The back-end interface: drawing commands in pixel space, surfaces, snapshots.
//!
//! Everything that depends on the world (mapping, clipping rules, text
//! alignment, undraw records, scrolling arithmetic) is done once in the LLVO
//! core; a back end only executes pixel-space commands on one surface per
//! view. That keeps the commands simple enough to render into a pixmap
//! (headless, or presented in a native window) or to serialise to a web page
//! that replays them on a canvas.

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::color::Color;
use crate::error::LlvoError;
use crate::font::FontSpec;
use crate::geom::PxRect;
use crate::primitive::{LineCap, LineJoin};
use crate::{ImageId, OwnerId, ViewId};

/// One step of a pixel-space path (x rightwards, y downwards).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum PathSeg {
    /// Start a new subpath.
    MoveTo(f32, f32),
    /// Straight line to a point.
    LineTo(f32, f32),
    /// Cubic Bézier curve: two control points, then the end point.
    CubicTo(f32, f32, f32, f32, f32, f32),
    /// Close the current subpath.
    Close,
}

/// The segments of a path. A straight line's two fit inside (a streaming plot draws a line
/// at a time, and each stays with its command until it is painted); longer paths are on the
/// heap. `vec![...].into()` makes one.
pub type PathSegs = SmallVec<[PathSeg; 2]>;

/// A path in pixel space.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PxPath {
    /// The segments, starting with a `MoveTo`.
    pub segs: PathSegs,
}

impl PxPath {
    /// The control-point box (x0, y0, x1, y1), `None` when empty.
    pub fn bounds(&self) -> Option<(f32, f32, f32, f32)> {
        if let [PathSeg::MoveTo(x0, y0), PathSeg::LineTo(x1, y1)] = self.segs[..] {
            // A straight line, as the loop below takes it.
            return Some((x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1)));
        }
        let mut b: Option<(f32, f32, f32, f32)> = None;
        let mut add = |x: f32, y: f32| {
            b = Some(match b {
                None => (x, y, x, y),
                Some((x0, y0, x1, y1)) => (x0.min(x), y0.min(y), x1.max(x), y1.max(y)),
            });
        };
        for s in &self.segs {
            match *s {
                PathSeg::MoveTo(x, y) | PathSeg::LineTo(x, y) => add(x, y),
                PathSeg::CubicTo(a, b, c, d, e, f) => {
                    add(a, b);
                    add(c, d);
                    add(e, f);
                }
                PathSeg::Close => {}
            }
        }
        b
    }

    /// When the path is one upright rectangle (four corners, sides along the axes; with
    /// `closed`, its fourth side must be there, as an outline needs): its corners
    /// `[x0, y0, x1, y1]`, smallest first.
    pub fn upright_rect(&self, closed: bool) -> Option<[f32; 4]> {
        let pts: [(f32, f32); 4] = match self.segs.as_slice() {
            [PathSeg::MoveTo(a, b), PathSeg::LineTo(c, d), PathSeg::LineTo(e, f), PathSeg::LineTo(g, h), rest @ ..]
                if (rest.is_empty() && !closed)
                    || matches!(rest, [PathSeg::Close])
                    || matches!(rest, [PathSeg::LineTo(x, y)] if (*x, *y) == (*a, *b))
                    || matches!(rest, [PathSeg::LineTo(x, y), PathSeg::Close] if (*x, *y) == (*a, *b)) =>
            {
                [(*a, *b), (*c, *d), (*e, *f), (*g, *h)]
            }
            _ => return None,
        };
        let upright = (0..4).all(|i| {
            let (p, q) = (pts[i], pts[(i + 1) % 4]);
            (p.0 == q.0) != (p.1 == q.1)
        });
        if !upright || pts.iter().any(|p| !p.0.is_finite() || !p.1.is_finite()) {
            return None;
        }
        let xs = pts.map(|p| p.0);
        let ys = pts.map(|p| p.1);
        Some([
            xs.into_iter().fold(f32::INFINITY, f32::min),
            ys.into_iter().fold(f32::INFINITY, f32::min),
            xs.into_iter().fold(f32::NEG_INFINITY, f32::max),
            ys.into_iter().fold(f32::NEG_INFINITY, f32::max),
        ])
    }

    fn remap(&mut self, m: &PxRemap) {
        let f = |x: &mut f32, y: &mut f32| {
            let (nx, ny) = m.apply(f64::from(*x), f64::from(*y));
            *x = nx as f32;
            *y = ny as f32;
        };
        for s in &mut self.segs {
            match s {
                PathSeg::MoveTo(x, y) | PathSeg::LineTo(x, y) => f(x, y),
                PathSeg::CubicTo(a, b, c, d, e, g) => {
                    f(a, b);
                    f(c, d);
                    f(e, g);
                }
                PathSeg::Close => {}
            }
        }
    }

    fn translate(&mut self, dx: f32, dy: f32) {
        for s in &mut self.segs {
            match s {
                PathSeg::MoveTo(x, y) | PathSeg::LineTo(x, y) => {
                    *x += dx;
                    *y += dy;
                }
                PathSeg::CubicTo(a, b, c, d, e, f) => {
                    *a += dx;
                    *b += dy;
                    *c += dx;
                    *d += dy;
                    *e += dx;
                    *f += dy;
                }
                PathSeg::Close => {}
            }
        }
    }
}

/// A change of pixel positions along each axis, old to new:
/// `x' = sx * x + ox`, `y' = sy * y + oy` (window pixels). Adaptive
/// rescaling moves the content of a scrollable area by one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PxRemap {
    /// Scale along x (negative mirrors).
    pub sx: f64,
    /// Offset along x, pixels.
    pub ox: f64,
    /// Scale along y (negative mirrors).
    pub sy: f64,
    /// Offset along y, pixels.
    pub oy: f64,
}

impl PxRemap {
    /// No change.
    pub const IDENTITY: PxRemap = PxRemap {
        sx: 1.0,
        ox: 0.0,
        sy: 1.0,
        oy: 0.0,
    };

    /// Where the old position (x, y) goes.
    pub fn apply(&self, x: f64, y: f64) -> (f64, f64) {
        (self.sx * x + self.ox, self.sy * y + self.oy)
    }

    /// The whole pixels covering the image of `r`.
    pub fn apply_rect(&self, r: &PxRect) -> PxRect {
        let (x0, y0) = self.apply(f64::from(r.x), f64::from(r.y));
        let (x1, y1) = self.apply(r.right() as f64, r.bottom() as f64);
        PxRect::covering(x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1))
    }
}

/// How a stroke is drawn, in pixels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrokeStyle {
    /// Width in pixels (> 0).
    pub width: f32,
    /// Line ends.
    pub cap: LineCap,
    /// Corners.
    pub join: LineJoin,
    /// On/off lengths (even count, all >= 0, positive sum); empty = solid.
    pub dash: Vec<f32>,
    /// How far into the dash pattern the path starts.
    pub dash_offset: f32,
}

/// How paint meets the pixels already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PaintMode {
    /// Anti-aliased, blended over what is there.
    #[default]
    Blend,
    /// Hard-edged (no anti-aliasing), replacing what is there: used to erase
    /// with the background colour so that no blended fringe survives.
    Erase,
}

/// One drawing command for one surface. Coordinates are pixels from the
/// surface's top-left corner; `clip` limits the pixels the command may
/// change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DrawCmd {
    /// Set every pixel of `rect` to `color` exactly (no blending).
    Clear {
        /// The pixels.
        rect: PxRect,
        /// The new value.
        color: Color,
    },
    /// Stroke a path.
    Stroke {
        /// The path.
        path: PxPath,
        /// Width, caps, joins, dashes.
        style: StrokeStyle,
        /// Colour, alpha included.
        color: Color,
        /// Paintable pixels.
        clip: PxRect,
        /// Blending.
        mode: PaintMode,
    },
    /// Fill a path (non-zero winding).
    Fill {
        /// The path; open subpaths are closed implicitly.
        path: PxPath,
        /// Colour, alpha included.
        color: Color,
        /// Paintable pixels.
        clip: PxRect,
        /// Blending.
        mode: PaintMode,
    },
    /// One line of text, already aligned: the pen starts at (x, baseline).
    /// Glyph positions follow [`FontSpec::positioned_glyphs`].
    Text {
        /// Pen start.
        x: f32,
        /// Baseline.
        baseline: f32,
        /// The text (no line breaks).
        text: String,
        /// The font.
        font: FontSpec,
        /// Colour, alpha included.
        color: Color,
        /// Paintable pixels.
        clip: PxRect,
    },
    /// Draw part of an image scaled onto a pixel box.
    Image {
        /// The image, as given to [`Backend::add_image`].
        image: ImageId,
        /// Image coordinates (u0, v0, u1, v1) that land on the box's
        /// top-left and bottom-right corners; u0 > u1 mirrors, and so on.
        src: [f32; 4],
        /// The box (x0, y0, x1, y1) with x0 < x1, y0 < y1.
        dst: [f32; 4],
        /// Opacity 0..=1.
        alpha: f32,
        /// Paintable pixels.
        clip: PxRect,
    },
    /// Move the pixels of `area` by whole pixels; pixels moved in from
    /// outside the area become `fill`. Scrolling uses it.
    Shift {
        /// The moving part of the surface (the scrollable area).
        area: PxRect,
        /// Pixels rightwards.
        dx: i32,
        /// Pixels downwards.
        dy: i32,
        /// Colour of the exposed pixels.
        fill: Color,
    },
}

impl DrawCmd {
    /// A conservative box of the pixels the command can change.
    pub fn bounds(&self) -> PxRect {
        match self.clip() {
            Some(clip) => self.ink().intersect(&clip),
            None => self.ink(),
        }
    }

    /// What keeping the command costs, in path segments (a command without a path counts
    /// one): the unit of the LLVO's bounds on undraw records and exact views' lists.
    pub(crate) fn weight(&self) -> usize {
        match self {
            DrawCmd::Stroke { path, .. } | DrawCmd::Fill { path, .. } => path.segs.len() + 1,
            _ => 1,
        }
    }

    /// The command's clip rectangle, if it has one.
    pub fn clip(&self) -> Option<PxRect> {
        match self {
            DrawCmd::Stroke { clip, .. }
            | DrawCmd::Fill { clip, .. }
            | DrawCmd::Text { clip, .. }
            | DrawCmd::Image { clip, .. } => Some(*clip),
            DrawCmd::Clear { .. } | DrawCmd::Shift { .. } => None,
        }
    }

    /// A conservative box of the pixels the command would change without its clip.
    pub fn ink(&self) -> PxRect {
        match self {
            DrawCmd::Clear { rect, .. } => *rect,
            DrawCmd::Shift { area, .. } => *area,
            DrawCmd::Stroke { path, style, .. } => {
                // Miter joins reach up to miter_limit/2 = 2 widths out.
                let pad = f64::from(style.width) * 2.0 + 2.0;
                path_box(path, pad)
            }
            DrawCmd::Fill { path, .. } => path_box(path, 1.0),
            DrawCmd::Text {
                x,
                baseline,
                text,
                font,
                ..
            } => match font.ink_bounds(text, *x, *baseline) {
                Some((x0, y0, x1, y1)) => {
                    PxRect::covering(f64::from(x0), f64::from(y0), f64::from(x1), f64::from(y1))
                        .inflate(1)
                }
                None => PxRect::default(),
            },
            DrawCmd::Image { dst, .. } => PxRect::covering(
                f64::from(dst[0]),
                f64::from(dst[1]),
                f64::from(dst[2]),
                f64::from(dst[3]),
            ),
        }
    }

    /// The same command moved by whole pixels; the clip stays where it is,
    /// since it is the (fixed) scrollable area or window.
    pub(crate) fn translate(&mut self, dx: i64, dy: i64) {
        let (fx, fy) = (dx as f32, dy as f32);
        match self {
            DrawCmd::Clear { rect, .. } => *rect = rect.translate(dx, dy),
            DrawCmd::Stroke { path, .. } | DrawCmd::Fill { path, .. } => path.translate(fx, fy),
            DrawCmd::Text { x, baseline, .. } => {
                *x += fx;
                *baseline += fy;
            }
            DrawCmd::Image { dst, .. } => {
                dst[0] += fx;
                dst[1] += fy;
                dst[2] += fx;
                dst[3] += fy;
            }
            DrawCmd::Shift { .. } => {}
        }
    }

    /// The erase command that covers what this erase command covered after
    /// the pixels moved by `m` (adaptive rescaling resampled them): paths
    /// follow the map, solid and widened by the scale; boxes become the
    /// boxes covering their image. The clip stays (it is the fixed area or
    /// a margin).
    pub(crate) fn remapped(self, m: &PxRemap, background: Color) -> DrawCmd {
        match self {
            DrawCmd::Clear { rect, color } => DrawCmd::Clear {
                rect: m.apply_rect(&rect).inflate(1),
                color,
            },
            DrawCmd::Stroke {
                mut path,
                mut style,
                color,
                clip,
                mode,
            } => {
                path.remap(m);
                let grow = m.sx.abs().max(m.sy.abs()).max(1.0) as f32;
                style.width = style.width * grow + 1.0;
                style.dash.clear();
                DrawCmd::Stroke {
                    path,
                    style,
                    color,
                    clip,
                    mode,
                }
            }
            DrawCmd::Fill {
                mut path,
                color,
                clip,
                mode,
            } => {
                path.remap(m);
                DrawCmd::Fill {
                    path,
                    color,
                    clip,
                    mode,
                }
            }
            DrawCmd::Shift { .. } => self,
            other => {
                let (rect, color) = match &other {
                    DrawCmd::Text { color, .. } => (other.bounds(), *color),
                    _ => (other.bounds(), background),
                };
                DrawCmd::Clear {
                    rect: m.apply_rect(&rect).inflate(1),
                    color,
                }
            }
        }
    }

    /// Makes the command draw what it drew after the pixels of `area` moved by `m`
    /// (adaptive rescaling), at the new scale: paths, text positions and images follow
    /// the map, strokes keep their width and text its size, and the clip becomes what
    /// the old clip covered of the area, moved. For the display list of an exact view.
    pub(crate) fn move_by(&mut self, m: &PxRemap, area: PxRect) {
        let at = |x: f32, y: f32| {
            let (nx, ny) = m.apply(f64::from(x), f64::from(y));
            (nx as f32, ny as f32)
        };
        match self {
            DrawCmd::Clear { rect, .. } => *rect = m.apply_rect(rect).intersect(&area),
            DrawCmd::Shift { .. } => {}
            DrawCmd::Stroke { path, .. } | DrawCmd::Fill { path, .. } => path.remap(m),
            DrawCmd::Text { x, baseline, .. } => (*x, *baseline) = at(*x, *baseline),
            DrawCmd::Image { dst, .. } => {
                let (x0, y0) = at(dst[0], dst[1]);
                let (x1, y1) = at(dst[2], dst[3]);
                *dst = [x0, y0, x1, y1];
            }
        }
        if let Some(clip) = self.clip_mut() {
            *clip = m.apply_rect(&clip.intersect(&area)).intersect(&area);
        }
    }

    /// The command's clip rectangle, if it has one.
    pub(crate) fn clip_mut(&mut self) -> Option<&mut PxRect> {
        match self {
            DrawCmd::Stroke { clip, .. }
            | DrawCmd::Fill { clip, .. }
            | DrawCmd::Text { clip, .. }
            | DrawCmd::Image { clip, .. } => Some(clip),
            DrawCmd::Clear { .. } | DrawCmd::Shift { .. } => None,
        }
    }
}

fn path_box(path: &PxPath, pad: f64) -> PxRect {
    match path.bounds() {
        Some((x0, y0, x1, y1)) => PxRect::covering(
            f64::from(x0) - pad,
            f64::from(y0) - pad,
            f64::from(x1) + pad,
            f64::from(y1) + pad,
        ),
        None => PxRect::default(),
    }
}

/// An image in memory: 8-bit RGBA, straight alpha, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RgbaPixels {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes (base64 when serialised).
    #[serde(with = "base64_bytes")]
    pub data: Vec<u8>,
}

impl RgbaPixels {
    /// The pixel at (x, y), or `None` outside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        self.data.get(i..i + 4).map(|p| [p[0], p[1], p[2], p[3]])
    }
}

/// Something the user did on the device side (in a window or a page).
/// Headless back ends never report any. Coordinates and distances are in
/// the pixels of the view's surface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum BackendEvent {
    /// The user resized the view's window (and has stopped for a moment).
    Resized {
        /// The view.
        view: ViewId,
        /// New width in pixels.
        width: u32,
        /// New height in pixels.
        height: u32,
    },
    /// The user closed the view's window; the other views stay.
    Closed {
        /// The view.
        view: ViewId,
    },
    /// The user zoomed: `factor > 1` magnifies around pixel (`x`, `y`).
    Zoom {
        /// The view.
        view: ViewId,
        /// How much to magnify.
        factor: f64,
        /// The pixel that stays in place, from the left.
        x: f64,
        /// The pixel that stays in place, from the top.
        y: f64,
    },
    /// The user dragged the view by this many pixels (right and down are
    /// positive): the content follows the pointer.
    Pan {
        /// The view.
        view: ViewId,
        /// Horizontal distance.
        dx: f64,
        /// Vertical distance.
        dy: f64,
    },
    /// The user clicked in the view (pressed and released a button without
    /// dragging) at pixel (`x`, `y`) of its picture.
    Click {
        /// The view.
        view: ViewId,
        /// The pixel from the left.
        x: f64,
        /// The pixel from the top.
        y: f64,
        /// 1 left, 2 middle, 3 right (other buttons: 4 and up).
        button: u8,
    },
    /// A key the device does not use itself: its character (`"a"`) or W3C
    /// key name (`"ArrowLeft"`), with `Ctrl+`, `Alt+`, `Super+` prefixes.
    Key {
        /// The view whose window had the focus, when known.
        view: Option<ViewId>,
        /// The key.
        key: String,
    },
    /// A line of the driver's replay control language (`seek 2.5`, `step`,
    /// `set NAME VALUE`) that the user gave on the device (a page's replay
    /// controls and inspector). `from` names the request, for its
    /// [`Backend::answer`].
    Command {
        /// Who asked, in the device's numbering.
        from: u64,
        /// The command line.
        line: String,
    },
    /// The user quit (closed the last window, pressed `q`): the run should
    /// end as at the end of its input.
    Quit,
}

/// Which frame of which owner a drawing command belongs to: the seam's
/// account of who drew what, so that a back end that keeps what was drawn
/// (a vector display list, a page) can remove exactly one owner's last
/// frame when it is undrawn (the markup's `refresh="update"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Mark {
    /// The owner (one IR component).
    pub owner: OwnerId,
    /// The owner's frame number, counted from 1 by [`crate::Llvo::begin_frame`].
    pub frame: u64,
}

/// What the driver tells the user about the run, for a window's title or a
/// page's status bar.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Status {
    /// Records processed so far.
    pub records: u64,
    /// Trace time of the latest record, once there is one.
    pub trace_time: Option<f64>,
    /// Trace seconds per wall second when paced; `None` = as fast as possible.
    pub speed: Option<f64>,
    /// The input has ended (the pictures are final).
    pub finished: bool,
    /// The replay is paused (it waits for the user).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    /// The same as one line for people.
    pub text: String,
    /// The replay keys the device may offer (for its help), when the user drives the replay.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub keys: String,
    /// The trace times the run has seen: its first record's and the furthest it reached (a
    /// seek back keeps it), for a seek bar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<[f64; 2]>,
}

/// A device the LLVO core draws through: one surface per view.
///
/// Calls for a surface that does not exist return
/// [`LlvoError::UnknownView`]; the core never makes them, but a back end
/// must not panic on them either.
///
/// A back end is `Send`: the LLVO that drives it may work on a thread of its own
/// ([`crate::LlvoThread`]).
///
/// Every call is also a value ([`crate::Command`]), so that what the core
/// asks of a back end can be recorded, sent to another thread or process,
/// and replayed into another back end ([`crate::Command::apply`]).
pub trait Backend: Send {
    /// Creates a surface of `width` x `height` pixels filled with `background`.
    fn create_surface(
        &mut self,
        view: ViewId,
        title: &str,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError>;

    /// Gives the surface a new size; its content is lost (filled with
    /// `background`), the core asks the visual object to redraw.
    fn resize_surface(
        &mut self,
        view: ViewId,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError>;

    /// Removes a surface (closes its window).
    fn destroy_surface(&mut self, view: ViewId);

    /// Makes an image available to [`DrawCmd::Image`].
    fn add_image(&mut self, image: ImageId, pixels: &RgbaPixels) -> Result<(), LlvoError>;

    /// Executes one drawing command.
    fn draw(&mut self, view: ViewId, cmd: &DrawCmd) -> Result<(), LlvoError>;

    /// Like [`Backend::draw`], handing the command over with its [`DrawCmd::bounds`] (the core
    /// works them out anyway, to drop commands that change no pixel): a back end that keeps
    /// commands keeps this one without copying it or working its bounds out again. The
    /// default draws it.
    fn draw_bounded(
        &mut self,
        view: ViewId,
        cmd: DrawCmd,
        bounds: PxRect,
    ) -> Result<(), LlvoError> {
        let _ = bounds;
        self.draw(view, &cmd)
    }

    /// Executes one drawing command of an owner that can be undrawn, as part
    /// of frame `mark`. A back end that keeps what was drawn remembers the
    /// mark with the command; the default just draws.
    fn draw_owned(&mut self, view: ViewId, mark: Mark, cmd: &DrawCmd) -> Result<(), LlvoError> {
        let _ = mark;
        self.draw(view, cmd)
    }

    /// Removes frame `mark` of an owner: everything drawn with
    /// [`Backend::draw_owned`] under that mark. A back end that keeps what
    /// was drawn removes exactly those commands (anything else drawn on the
    /// same pixels stays, and zoomed pictures stay sharp). A raster, which
    /// keeps only pixels, paints `erase` instead: the core's pixel-space
    /// commands that cover the frame where it is now (after scrolling and
    /// rescaling) in the background colour, hard-edged; that is the
    /// default.
    fn undraw(&mut self, mark: Mark, erase: &[(ViewId, DrawCmd)]) -> Result<(), LlvoError> {
        let _ = mark;
        for (view, cmd) in erase {
            self.draw(*view, cmd)?;
        }
        Ok(())
    }

    /// Resamples the pixels of `area` for a new world-to-pixel mapping
    /// (adaptive rescaling): afterwards each pixel of the area shows what
    /// the old content showed at the position `map` sends to it; pixels
    /// whose source lies outside the old area become `fill`. Pixels outside
    /// the area are left alone. This is lossy, which is why the core then
    /// asks the visual object to redraw.
    ///
    /// Returns `Ok(false)` when the back end cannot resample; the core then
    /// clears the area instead. That is the default.
    fn remap_area(
        &mut self,
        view: ViewId,
        area: PxRect,
        map: PxRemap,
        fill: Color,
    ) -> Result<bool, LlvoError> {
        let _ = (view, area, map, fill);
        Ok(false)
    }

    /// From now on, what is drawn need not be visible until [`Backend::flush`].
    fn begin_buffer(&mut self, view: ViewId) -> Result<(), LlvoError>;

    /// Makes everything drawn since [`Backend::begin_buffer`] visible at once.
    fn flush(&mut self, view: ViewId) -> Result<(), LlvoError>;

    /// Shows what has been drawn (a window repaint, a frame sent to a
    /// page); headless back ends have nothing to do.
    fn present(&mut self, view: ViewId) -> Result<(), LlvoError>;

    /// The pixels the surface shows now (while buffering: as of the buffer's
    /// start).
    fn snapshot(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError>;

    /// Bits per pixel of the device, for `view-info`.
    fn depth(&self) -> u32 {
        24
    }

    /// The surface's window position on the screen, for `view-info`.
    fn position(&self, _view: ViewId) -> (i32, i32) {
        (0, 0)
    }

    /// What the user did since the last call.
    fn poll_events(&mut self) -> Vec<BackendEvent> {
        Vec::new()
    }

    /// Where the run stands, for the user to see; headless back ends ignore it.
    fn status(&mut self, status: &Status) {
        let _ = status;
    }

    /// What became of the user's [`BackendEvent::Command`] `to`: carried out, or refused
    /// with why. Back ends that send no commands ignore it.
    fn answer(&mut self, to: u64, outcome: Result<(), &str>) {
        let _ = (to, outcome);
    }

    /// True when someone is looking at the back end's pictures (a window,
    /// a page): the driver then keeps the run alive after its input ends,
    /// answering the user, until [`BackendEvent::Quit`].
    fn interactive(&self) -> bool {
        false
    }
}

impl<B: Backend + ?Sized> Backend for Box<B> {
    fn create_surface(
        &mut self,
        view: ViewId,
        title: &str,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError> {
        (**self).create_surface(view, title, width, height, background)
    }
    fn resize_surface(
        &mut self,
        view: ViewId,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError> {
        (**self).resize_surface(view, width, height, background)
    }
    fn destroy_surface(&mut self, view: ViewId) {
        (**self).destroy_surface(view)
    }
    fn add_image(&mut self, image: ImageId, pixels: &RgbaPixels) -> Result<(), LlvoError> {
        (**self).add_image(image, pixels)
    }
    fn draw(&mut self, view: ViewId, cmd: &DrawCmd) -> Result<(), LlvoError> {
        (**self).draw(view, cmd)
    }
    fn draw_bounded(
        &mut self,
        view: ViewId,
        cmd: DrawCmd,
        bounds: PxRect,
    ) -> Result<(), LlvoError> {
        (**self).draw_bounded(view, cmd, bounds)
    }
    fn draw_owned(&mut self, view: ViewId, mark: Mark, cmd: &DrawCmd) -> Result<(), LlvoError> {
        (**self).draw_owned(view, mark, cmd)
    }
    fn undraw(&mut self, mark: Mark, erase: &[(ViewId, DrawCmd)]) -> Result<(), LlvoError> {
        (**self).undraw(mark, erase)
    }
    fn remap_area(
        &mut self,
        view: ViewId,
        area: PxRect,
        map: PxRemap,
        fill: Color,
    ) -> Result<bool, LlvoError> {
        (**self).remap_area(view, area, map, fill)
    }
    fn begin_buffer(&mut self, view: ViewId) -> Result<(), LlvoError> {
        (**self).begin_buffer(view)
    }
    fn flush(&mut self, view: ViewId) -> Result<(), LlvoError> {
        (**self).flush(view)
    }
    fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        (**self).present(view)
    }
    fn snapshot(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError> {
        (**self).snapshot(view)
    }
    fn depth(&self) -> u32 {
        (**self).depth()
    }
    fn position(&self, view: ViewId) -> (i32, i32) {
        (**self).position(view)
    }
    fn poll_events(&mut self) -> Vec<BackendEvent> {
        (**self).poll_events()
    }
    fn status(&mut self, status: &Status) {
        (**self).status(status)
    }
    fn answer(&mut self, to: u64, outcome: Result<(), &str>) {
        (**self).answer(to, outcome)
    }
    fn interactive(&self) -> bool {
        (**self).interactive()
    }
}

/// Image bytes as base64 in serialised commands: a third of the size of a
/// JSON array of numbers, and what a page decodes natively.
mod base64_bytes {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }
}

/// A back end that draws nothing and only counts: for runs whose pictures
/// nobody looks at, and for measuring the core alone.
#[derive(Debug, Default)]
pub struct NullBackend {
    /// Drawing commands received.
    pub commands: u64,
    surfaces: std::collections::HashSet<ViewId>,
}

impl NullBackend {
    /// A fresh counter.
    pub fn new() -> NullBackend {
        NullBackend::default()
    }

    fn known(&self, view: ViewId) -> Result<(), LlvoError> {
        if self.surfaces.contains(&view) {
            Ok(())
        } else {
            Err(LlvoError::UnknownView(view))
        }
    }
}

impl Backend for NullBackend {
    fn create_surface(
        &mut self,
        view: ViewId,
        _: &str,
        _: u32,
        _: u32,
        _: Color,
    ) -> Result<(), LlvoError> {
        self.surfaces.insert(view);
        Ok(())
    }

    fn resize_surface(&mut self, view: ViewId, _: u32, _: u32, _: Color) -> Result<(), LlvoError> {
        self.known(view)
    }

    fn destroy_surface(&mut self, view: ViewId) {
        self.surfaces.remove(&view);
    }

    fn add_image(&mut self, _: ImageId, _: &RgbaPixels) -> Result<(), LlvoError> {
        Ok(())
    }

    fn draw(&mut self, view: ViewId, _: &DrawCmd) -> Result<(), LlvoError> {
        self.known(view)?;
        self.commands += 1;
        Ok(())
    }

    fn remap_area(
        &mut self,
        view: ViewId,
        _: PxRect,
        _: PxRemap,
        _: Color,
    ) -> Result<bool, LlvoError> {
        self.known(view)?;
        self.commands += 1;
        Ok(true)
    }

    fn begin_buffer(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.known(view)
    }

    fn flush(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.known(view)
    }

    fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.known(view)
    }

    fn snapshot(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError> {
        self.known(view)?;
        Err(LlvoError::Unsupported("take snapshots (it draws nothing)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A straight line's box, read directly, is the one the loop over the segments gives
    /// (the same path with a `Close`, which adds no point, goes through the loop), bit for
    /// bit, infinities, NaNs and signed zeros included.
    #[test]
    fn a_straight_paths_box_is_the_loops() {
        let values = [
            0.0,
            -0.0,
            1.5,
            -3.25,
            7.0,
            1e30,
            -1e30,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        let bits = |b: Option<(f32, f32, f32, f32)>| {
            b.map(|(x0, y0, x1, y1)| [x0, y0, x1, y1].map(f32::to_bits))
        };
        for x0 in values {
            for y0 in values {
                for x1 in values {
                    for y1 in values {
                        let line = PxPath {
                            segs: PathSegs::from_buf([
                                PathSeg::MoveTo(x0, y0),
                                PathSeg::LineTo(x1, y1),
                            ]),
                        };
                        let mut looped = line.clone();
                        looped.segs.push(PathSeg::Close);
                        assert_eq!(
                            bits(line.bounds()),
                            bits(looped.bounds()),
                            "{x0} {y0} {x1} {y1}"
                        );
                    }
                }
            }
        }
    }
}
