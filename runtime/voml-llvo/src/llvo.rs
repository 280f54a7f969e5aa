//! The LLVO core: views and their world mapping, control methods, owners'
//! undraw records, images and snapshots, on top of any [`Backend`].

use std::collections::HashMap;
use std::io::Cursor;

use crate::adapt::{self, AdaptState};
use crate::backend::{Backend, BackendEvent, DrawCmd, Mark, PxRemap, RgbaPixels};
use crate::column::Columns;
use crate::error::LlvoError;
use crate::geom::{PxRect, WorldMap};
use crate::lower::{lower, Ctx, Lowered};
use crate::primitive::{ClipMode, Primitive, Style};
use crate::raster::RasterBackend;
use crate::shown::Shown;
use crate::view::{Undraw, ViewInfo, ViewSpec};
use crate::{ImageId, OwnerId, ViewId};

/// Largest window side in pixels (the language's limit); larger requests are clamped.
pub use voml_ir::vocabulary::limits::MAX_WINDOW;
/// Default bound on one owner's frame record, in path segments (about 30
/// bytes each); past it the record is folded into erase rectangles.
pub const DEFAULT_RECORD_CAP: usize = 250_000;
/// Default bound on what a view with exact undrawing keeps of what it shows, in path
/// segments; past it the view undraws by painting over until it is cleared.
pub const DEFAULT_SHOWN_CAP: usize = 250_000;
/// Warnings kept until [`Llvo::take_warnings`]; the rest are only counted.
const MAX_WARNINGS: usize = 256;
/// An ordinary coordinate or world edge is at most this far from 0, an ordinary world at
/// least its inverse wide and high: mapped to pixels, ordinary points stay finite.
pub const ORDINARY: f64 = 1e100;
/// What a window size beyond the limit becomes, for the warning.
static WINDOW_CLAMPED: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("clamped to 1..{MAX_WINDOW}"));
/// Largest image side accepted by [`Llvo::load_image`].
use voml_ir::vocabulary::limits::MAX_IMAGE_SIDE;

/// The device-independent layer the runtime draws through.
pub struct Llvo<B: Backend = RasterBackend> {
    backend: B,
    views: Vec<Option<View>>,
    images: Vec<(u32, u32)>,
    owners: Vec<OwnerState>,
    record_cap: usize,
    shown_cap: usize,
    warnings: Vec<LlvoError>,
    warnings_dropped: u64,
    /// What the latest primitive was lowered to: its buffers serve the next one (a streaming
    /// plot draws a line at a time).
    lowered: Lowered,
}

struct View {
    spec: ViewSpec,
    map: WorldMap,
    /// Scrolling not yet applied to the raster, in (sub-)pixels: the raster
    /// moves by whole pixels, the world by exact amounts.
    residual: (f64, f64),
    /// Whole pixels the area's content has moved since the view opened.
    shift: (i64, i64),
    /// Bumped whenever the scrollable area is cleared (rescale, resize).
    area_epoch: u64,
    /// Bumped whenever the whole window is cleared (resize).
    window_epoch: u64,
    needs_redraw: bool,
    /// Bumped whenever anything may have changed its pixels (see [`Llvo::changes`]).
    changes: u64,
    buffering: bool,
    /// Quantitative adaptation: base world and remembered extremes.
    adapt: AdaptState,
    /// The adaptation's revision, the window and the world of the last settling that changed
    /// nothing (see [`Llvo::settle`]).
    settled: Option<(u64, [f64; 4], [f64; 4])>,
    /// What the view shows, as commands, when it undraws exactly.
    shown: Option<Shown>,
    /// What series of lines drawn one at a time have painted (see [`crate::column`]).
    columns: Columns,
}

impl View {
    fn window_rect(&self) -> PxRect {
        PxRect::new(0, 0, self.spec.window.0, self.spec.window.1)
    }

    /// The window minus the scrollable area, as up to four strips.
    fn margin_strips(&self) -> Vec<PxRect> {
        let w = self.window_rect();
        let a = self.map.area;
        let (ax1, ay1) = (a.right(), a.bottom());
        let strips = [
            PxRect::new(0, 0, w.w, a.y.max(0) as u32),
            PxRect::new(0, ay1 as i32, w.w, (w.bottom() - ay1).max(0) as u32),
            PxRect::new(0, a.y, a.x.max(0) as u32, a.h),
            PxRect::new(ax1 as i32, a.y, (w.right() - ax1).max(0) as u32, a.h),
        ];
        strips
            .into_iter()
            .map(|s| s.intersect(&w))
            .filter(|s| !s.is_empty())
            .collect()
    }
}

/// One erase command of an owner's frame.
struct Record {
    view: ViewId,
    cmd: DrawCmd,
    /// The pixels the command is limited to: the scrollable area (content
    /// that scrolls) or one margin strip (content that stays).
    region: PxRect,
    scrolls: bool,
    shift: (i64, i64),
    area_epoch: u64,
    window_epoch: u64,
}

impl Record {
    fn weight(&self) -> usize {
        self.cmd.weight()
    }
}

#[derive(Default)]
struct Frame {
    /// The frame's number, from 1: with the owner, the [`Mark`] of what it drew.
    number: u64,
    items: Vec<Record>,
    weight: usize,
    /// Something was drawn in this frame (so there is something to undraw).
    drawn: bool,
}

impl Frame {
    fn numbered(number: u64) -> Frame {
        Frame {
            number,
            ..Frame::default()
        }
    }
}

struct OwnerState {
    undrawable: bool,
    current: Frame,
    last: Frame,
}

impl OwnerState {
    fn new(undrawable: bool) -> OwnerState {
        OwnerState {
            undrawable,
            current: Frame::numbered(1),
            last: Frame::default(),
        }
    }
}

impl Llvo<RasterBackend> {
    /// An LLVO drawing into in-memory pixmaps.
    pub fn headless() -> Self {
        Llvo::new(RasterBackend::new())
    }
}

impl<B: Backend> Llvo<B> {
    /// An LLVO drawing through `backend`.
    pub fn new(backend: B) -> Self {
        Llvo {
            backend,
            views: Vec::new(),
            images: Vec::new(),
            owners: Vec::new(),
            record_cap: DEFAULT_RECORD_CAP,
            shown_cap: DEFAULT_SHOWN_CAP,
            warnings: Vec::new(),
            warnings_dropped: 0,
            lowered: Lowered::default(),
        }
    }

    /// The back end.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The back end, mutably.
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    fn warn(&mut self, w: LlvoError) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(w);
        } else {
            self.warnings_dropped += 1;
        }
    }

    /// The values clamped since the last call (thickness, alpha, window
    /// size, ...), oldest first; the drawing went ahead with the clamped
    /// value. Past 256 only a count is kept, reported as a last entry.
    pub fn take_warnings(&mut self) -> Vec<LlvoError> {
        let mut w = std::mem::take(&mut self.warnings);
        if self.warnings_dropped > 0 {
            w.push(LlvoError::WarningsDropped(self.warnings_dropped));
            self.warnings_dropped = 0;
        }
        w
    }

    fn view(&self, id: ViewId) -> Result<&View, LlvoError> {
        self.views
            .get(id.0 as usize)
            .and_then(|v| v.as_ref())
            .ok_or_else(|| LlvoError::unknown_view(id))
    }

    fn view_mut(&mut self, id: ViewId) -> Result<&mut View, LlvoError> {
        self.views
            .get_mut(id.0 as usize)
            .and_then(|v| v.as_mut())
            .ok_or_else(|| LlvoError::unknown_view(id))
    }

    fn check_world(world: [f64; 4]) -> Result<(), LlvoError> {
        let [x0, x1, y0, y1] = world;
        let ok = world.iter().all(|v| v.is_finite())
            && x0 != x1
            && y0 != y1
            && (x1 - x0).is_finite()
            && (y1 - y0).is_finite();
        if ok {
            Ok(())
        } else {
            Err(LlvoError::BadWorld(world))
        }
    }

    fn clamp_window(&mut self, w: u32, h: u32) -> (u32, u32) {
        let c = |v: u32| v.clamp(1, MAX_WINDOW);
        for v in [w, h] {
            if c(v) != v {
                self.warn(LlvoError::BadNumber {
                    what: "window size",
                    value: f64::from(v),
                    action: WINDOW_CLAMPED.as_str(),
                });
            }
        }
        (c(w), c(h))
    }

    /// Opens a view. Its world must be finite and non-empty, its name
    /// unique; a window size outside 1..=[`MAX_WINDOW`] is clamped (with a warning).
    pub fn create_view(&mut self, spec: ViewSpec) -> Result<ViewId, LlvoError> {
        Self::check_world(spec.world)?;
        if self.view_by_name(&spec.name).is_some() {
            return Err(LlvoError::DuplicateView(spec.name));
        }
        let mut spec = spec;
        spec.window = self.clamp_window(spec.window.0, spec.window.1);
        let id = ViewId(self.views.len() as u32);
        self.backend.create_surface(
            id,
            &spec.title,
            spec.window.0,
            spec.window.1,
            spec.background,
        )?;
        let shown = (spec.undraw == Undraw::Exact).then(|| Shown::new(self.shown_cap));
        self.views.push(Some(View {
            shown,
            map: WorldMap::new(spec.window, spec.margins, spec.world),
            adapt: AdaptState::new(&spec.adapt, spec.quality, spec.world),
            settled: None,
            spec,
            residual: (0.0, 0.0),
            shift: (0, 0),
            area_epoch: 0,
            window_epoch: 0,
            needs_redraw: false,
            changes: 0,
            buffering: false,
            columns: Columns::default(),
        }));
        Ok(id)
    }

    /// Closes a view; its id becomes invalid.
    pub fn close_view(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.view(view)?;
        self.backend.destroy_surface(view);
        self.views[view.0 as usize] = None;
        Ok(())
    }

    /// The live view with this name.
    pub fn view_by_name(&self, name: &str) -> Option<ViewId> {
        self.views.iter().enumerate().find_map(|(i, v)| {
            v.as_ref()
                .filter(|v| v.spec.name == name)
                .map(|_| ViewId(i as u32))
        })
    }

    /// The view's current specification (world and window as they are now).
    pub fn view_spec(&self, view: ViewId) -> Result<&ViewSpec, LlvoError> {
        Ok(&self.view(view)?.spec)
    }

    /// The view's current world-to-pixel mapping.
    pub fn mapping(&self, view: ViewId) -> Result<WorldMap, LlvoError> {
        Ok(self.view(view)?.map)
    }

    /// The markup's `view-info`; see [`ViewInfo::as_list`] for the list.
    pub fn view_info(&self, view: ViewId) -> Result<ViewInfo, LlvoError> {
        let v = self.view(view)?;
        let (x, y) = self.backend.position(view);
        Ok(ViewInfo {
            name: v.spec.name.clone(),
            title: v.spec.title.clone(),
            x,
            y,
            depth: self.backend.depth(),
            width: v.spec.window.0,
            height: v.spec.window.1,
            world: v.spec.world,
        })
    }

    /// True when the view's content was lost (rescale, resize) since the
    /// last [`Llvo::take_redraw`]: components with `refresh="rescale"` or
    /// `"resize"` should draw again.
    pub fn needs_redraw(&self, view: ViewId) -> Result<bool, LlvoError> {
        Ok(self.view(view)?.needs_redraw)
    }

    /// A number that changes whenever anything may have changed the view's pixels: a
    /// drawing, an undrawing, a scroll, a rescale, a resize, a clear (0 for an unknown view).
    /// What a view showed is still there while it stays the same.
    pub fn changes(&self, view: ViewId) -> u64 {
        self.view(view).map_or(0, |v| v.changes)
    }

    fn touch(&mut self, view: ViewId) {
        if let Ok(v) = self.view_mut(view) {
            v.changes += 1;
        }
    }

    /// Like [`Llvo::touch`], for a change that may paint over what series of lines painted.
    fn disturb(&mut self, view: ViewId) {
        if let Ok(v) = self.view_mut(view) {
            v.changes += 1;
            v.columns.forget();
        }
    }

    /// Draws a command of the view's own (a shift, a clear) on the back end.
    fn draw_cmd(&mut self, view: ViewId, cmd: &DrawCmd) -> Result<(), LlvoError> {
        self.disturb(view);
        self.backend.draw(view, cmd)
    }

    /// Lines that were not drawn because they added nothing to their pixel column (see
    /// [`crate::column`]), in all views.
    pub fn decimated_lines(&self) -> u64 {
        self.views.iter().flatten().map(|v| v.columns.skipped).sum()
    }

    /// Like [`Llvo::needs_redraw`], and clears the mark.
    pub fn take_redraw(&mut self, view: ViewId) -> Result<bool, LlvoError> {
        let v = self.view_mut(view)?;
        Ok(std::mem::take(&mut v.needs_redraw))
    }

    /// Moves the view's world rectangle by (dx, dy) world units: the
    /// content of the scrollable area moves the opposite way (scrolling
    /// right by dx moves the picture left), margins stay. The raster moves
    /// by whole pixels; the fraction is carried to the next scroll.
    ///
    /// In a view that rescales adaptively, extremes that scroll out of the
    /// area are forgotten and the view zooms back in as far as the
    /// remaining ones allow (see the crate documentation).
    pub fn scroll(&mut self, view: ViewId, dx: f64, dy: f64) -> Result<(), LlvoError> {
        let v = self.view(view)?;
        if !(dx.is_finite() && dy.is_finite()) {
            let value = if dx.is_finite() { dy } else { dx };
            return Err(LlvoError::BadNumber {
                what: "scroll distance",
                value,
                action: "view not scrolled",
            });
        }
        let [x0, x1, y0, y1] = v.spec.world;
        Self::check_world([x0 + dx, x1 + dx, y0 + dy, y1 + dy])?;
        self.move_world(view, dx, dy)?;
        let world = self.view(view)?.spec.world;
        self.settle(view, world)
    }

    /// The scroll itself, without adaptation.
    fn move_world(&mut self, view: ViewId, dx: f64, dy: f64) -> Result<(), LlvoError> {
        let v = self.view(view)?;
        let [x0, x1, y0, y1] = v.spec.world;
        let world = [x0 + dx, x1 + dx, y0 + dy, y1 + dy];
        let (sx, sy) = v.map.scale();
        let (rx, ry) = (v.residual.0 - dx * sx, v.residual.1 + dy * sy);
        let (ix, iy) = (rx.round(), ry.round());
        let (area, bg) = (v.map.area, v.spec.background);
        let v = self.view_mut(view)?;
        v.spec.world = world;
        v.map.world = world;
        v.adapt.shift(dx, dy);
        v.residual = (rx - ix, ry - iy);
        let (ix, iy) = (ix as i64, iy as i64);
        v.shift = (v.shift.0.saturating_add(ix), v.shift.1.saturating_add(iy));
        if ix != 0 || iy != 0 {
            // Beyond the area's size everything is exposed anyway.
            let lim = |d: i64, size: u32| d.clamp(-i64::from(size), i64::from(size)) as i32;
            let cmd = DrawCmd::Shift {
                area,
                dx: lim(ix, area.w),
                dy: lim(iy, area.h),
                fill: bg,
            };
            self.draw_cmd(view, &cmd)?;
        }
        Ok(())
    }

    /// Adapts the view before an adaptive primitive is drawn: scrolls just
    /// enough on scrolling sides, grows the world just enough on rescaling
    /// sides, remembers the primitive's extreme points, then settles.
    fn adapt(&mut self, view: ViewId, prim: &Primitive, style: &Style) -> Result<(), LlvoError> {
        let v = self.view(view)?;
        if v.spec.adapt.is_none() {
            return Ok(());
        }
        if let Primitive::Figure { image, .. } = prim {
            if self.images.get(image.0 as usize).is_none() {
                return Ok(());
            }
        }
        let Some(bounds) = adapt::bounds(prim, style) else {
            return Ok(());
        };
        let (dx, dy) = v.adapt.scroll_for(&v.spec.world, &bounds);
        if dx != 0.0 || dy != 0.0 {
            let [x0, x1, y0, y1] = v.spec.world;
            if Self::check_world([x0 + dx, x1 + dx, y0 + dy, y1 + dy]).is_err() {
                return Ok(());
            }
            self.move_world(view, dx, dy)?;
        }
        let v = self.view_mut(view)?;
        if !v.adapt.rescales() {
            return Ok(());
        }
        let mut window = v.spec.world;
        v.adapt.grow_to(&mut window, &bounds);
        let state = &mut v.adapt;
        adapt::extreme_points(prim, style, |p| state.remember(p));
        self.settle(view, window)
    }

    /// Forgets the extremes outside `window` and gives the view the world
    /// its base and remaining extremes call for, resampling if it changed.
    ///
    /// Settling is worked out from the extremes, the window and the world alone: when it
    /// changed nothing, it is not worked out again until one of them changes (a line drawn
    /// again, as a plot that redraws its latest segments does, settles as it did).
    fn settle(&mut self, view: ViewId, window: [f64; 4]) -> Result<(), LlvoError> {
        let v = self.view_mut(view)?;
        if !v.adapt.rescales() {
            return Ok(());
        }
        let asked = (v.adapt.revision(), window, v.spec.world);
        if v.settled == Some(asked) {
            return Ok(());
        }
        let mut w = window;
        // Zooming in can move more extremes out; a few rounds settle it.
        for _ in 0..4 {
            v.adapt.prune(&w);
            let next = v.adapt.target(&w);
            if next == w {
                break;
            }
            w = next;
        }
        if w == v.spec.world || Self::check_world(w).is_err() {
            if v.adapt.revision() == asked.0 {
                v.settled = Some(asked);
            }
            return Ok(());
        }
        self.zoom(view, w)
    }

    /// Shows `world` in the view, resampling the scrollable area's pixels
    /// into the new mapping (lossy: the view is marked for redraw) and
    /// moving the undraw records with them.
    fn zoom(&mut self, view: ViewId, world: [f64; 4]) -> Result<(), LlvoError> {
        let v = self.view(view)?;
        let old = v.map;
        let new = WorldMap { world, ..old };
        let (rx, ry) = v.residual;
        // The raster shows world point w at old.to_px(w) - residual.
        let at = |d: f64| {
            let w = old.to_world(d + rx, d + ry);
            new.to_px(w)
        };
        let (p0, p1) = (at(0.0), at(1.0));
        let m = PxRemap {
            sx: p1.0 - p0.0,
            ox: p0.0,
            sy: p1.1 - p0.1,
            oy: p0.1,
        };
        let (area, bg) = (old.area, v.spec.background);
        self.disturb(view);
        let kept = area.is_empty() || self.backend.remap_area(view, area, m, bg)?;
        if !kept {
            self.backend.draw(
                view,
                &DrawCmd::Clear {
                    rect: area,
                    color: bg,
                },
            )?;
        }
        let Some(v) = self.views.get_mut(view.0 as usize).and_then(|v| v.as_mut()) else {
            return Err(LlvoError::UnknownView(view));
        };
        v.spec.world = world;
        v.map.world = world;
        v.residual = (0.0, 0.0);
        v.needs_redraw = true;
        if let Some(shown) = &mut v.shown {
            if kept {
                shown.remap(&m, area, v.shift);
            } else {
                shown.forget_area();
            }
        }
        if kept {
            for o in &mut self.owners {
                for frame in [&mut o.current, &mut o.last] {
                    for r in frame.items.iter_mut().filter(|r| r.view == view) {
                        if !r.scrolls
                            || r.area_epoch != v.area_epoch
                            || r.window_epoch != v.window_epoch
                        {
                            continue;
                        }
                        r.cmd
                            .translate(v.shift.0 - r.shift.0, v.shift.1 - r.shift.1);
                        r.shift = v.shift;
                        let cmd = std::mem::replace(
                            &mut r.cmd,
                            DrawCmd::Clear {
                                rect: PxRect::default(),
                                color: bg,
                            },
                        );
                        r.cmd = cmd.remapped(&m, bg);
                    }
                }
            }
        } else {
            v.area_epoch += 1;
        }
        Ok(())
    }

    /// How many extreme points the view remembers for adaptive rescaling,
    /// all sides together: never more than its quality.
    pub fn remembered_extremes(&self, view: ViewId) -> Result<usize, LlvoError> {
        Ok(self.view(view)?.adapt.len())
    }

    /// The view's world without adaptive zooming: as opened or explicitly
    /// rescaled, moved along by every scroll. The world shown is this,
    /// grown on rescaling sides as far as the remembered extremes need.
    pub fn base_world(&self, view: ViewId) -> Result<[f64; 4], LlvoError> {
        Ok(self.view(view)?.adapt.base)
    }

    /// Shows another world rectangle in the view. The scrollable area is
    /// cleared and the view marked for redraw; margins keep their pixels.
    /// The rectangle becomes the view's base for adaptation, and the
    /// remembered extremes are forgotten with the pixels.
    pub fn rescale(&mut self, view: ViewId, world: [f64; 4]) -> Result<(), LlvoError> {
        self.view(view)?;
        Self::check_world(world)?;
        let v = self.view_mut(view)?;
        v.adapt.reset(world);
        v.spec.world = world;
        v.map.world = world;
        v.residual = (0.0, 0.0);
        v.area_epoch += 1;
        if let Some(shown) = &mut v.shown {
            shown.forget_area();
        }
        v.needs_redraw = true;
        let cmd = DrawCmd::Clear {
            rect: v.map.area,
            color: v.spec.background,
        };
        self.draw_cmd(view, &cmd)
    }

    /// Gives the view's window a new size in pixels (clamped to 1..=[`MAX_WINDOW`]).
    /// Margins keep their widths, the world rectangle fills the new area;
    /// the window is cleared and marked for redraw.
    pub fn resize(&mut self, view: ViewId, width: u32, height: u32) -> Result<(), LlvoError> {
        self.view(view)?;
        let (w, h) = self.clamp_window(width, height);
        let v = self.view_mut(view)?;
        v.spec.window = (w, h);
        v.map = WorldMap::new((w, h), v.spec.margins, v.spec.world);
        v.residual = (0.0, 0.0);
        v.area_epoch += 1;
        v.window_epoch += 1;
        v.needs_redraw = true;
        if let Some(shown) = &mut v.shown {
            shown.forget_all();
        }
        let bg = v.spec.background;
        v.changes += 1;
        v.columns.forget();
        self.backend.resize_surface(view, w, h, bg)
    }

    /// Fills the whole window with the background, as if nothing had been
    /// drawn (records of earlier drawings are forgotten).
    pub fn clear(&mut self, view: ViewId) -> Result<(), LlvoError> {
        let v = self.view_mut(view)?;
        v.adapt.forget();
        v.area_epoch += 1;
        v.window_epoch += 1;
        if let Some(shown) = &mut v.shown {
            shown.forget_all();
        }
        let cmd = DrawCmd::Clear {
            rect: v.window_rect(),
            color: v.spec.background,
        };
        self.draw_cmd(view, &cmd)
    }

    /// A new owner. Only `undrawable` owners keep records (their last
    /// frame), so that drawing with the others costs no memory at all.
    pub fn new_owner(&mut self, undrawable: bool) -> OwnerId {
        self.owners.push(OwnerState::new(undrawable));
        OwnerId(self.owners.len() as u32)
    }

    fn owner_mut(&mut self, owner: OwnerId) -> Result<Option<&mut OwnerState>, LlvoError> {
        if owner == OwnerId::NONE {
            return Ok(None);
        }
        self.owners
            .get_mut(owner.0 as usize - 1)
            .map(Some)
            .ok_or_else(|| LlvoError::unknown_owner(owner))
    }

    /// Switches recording on or off; switching off forgets the records.
    pub fn set_undrawable(&mut self, owner: OwnerId, undrawable: bool) -> Result<(), LlvoError> {
        if let Some(o) = self.owner_mut(owner)? {
            o.undrawable = undrawable;
            if !undrawable {
                o.current = Frame::numbered(o.current.number);
                o.last = Frame::default();
            }
        }
        Ok(())
    }

    /// Bounds the record of one frame of one owner, in path segments
    /// (default [`DEFAULT_RECORD_CAP`]). A frame that grows past it is
    /// folded into one erase rectangle per view and region: undraw then
    /// clears boxes instead of exact shapes, but memory stays bounded.
    pub fn set_record_cap(&mut self, cap: usize) {
        self.record_cap = cap.max(1);
    }

    /// Bounds what each view opened from now on with exact undrawing keeps of what it
    /// shows, in path segments (default [`DEFAULT_SHOWN_CAP`]). Past it, the view undraws
    /// by painting over, with a warning, until it is cleared or resized.
    pub fn set_shown_cap(&mut self, cap: usize) {
        self.shown_cap = cap.max(1);
    }

    /// Ends the owner's frame in progress: it becomes the "last frame"
    /// that [`Llvo::undraw`] erases, and a new, empty record starts. An
    /// older last frame that was never undrawn is forgotten.
    pub fn begin_frame(&mut self, owner: OwnerId) -> Result<(), LlvoError> {
        if let Some(o) = self.owner_mut(owner)? {
            let next = Frame::numbered(o.current.number + 1);
            o.last = std::mem::replace(&mut o.current, next);
        }
        Ok(())
    }

    /// Removes the owner's last frame ([`Backend::undraw`]). A back end
    /// that keeps what was drawn removes exactly that frame's commands; a
    /// raster repaints each recorded primitive in its view's background
    /// colour, hard-edged and a pixel larger so that no anti-aliased fringe
    /// survives, which, like the paper's raster LLVO, also erases whatever
    /// else was drawn on the same pixels. Content that scrolled since is
    /// erased where it now is; content whose pixels were cleared (rescale,
    /// resize) is skipped.
    pub fn undraw(&mut self, owner: OwnerId) -> Result<(), LlvoError> {
        let frame = match self.owner_mut(owner)? {
            Some(o) => std::mem::take(&mut o.last),
            None => return Ok(()),
        };
        if !frame.drawn {
            return Ok(());
        }
        let mark = Mark {
            owner,
            frame: frame.number,
        };
        let mut erase = Vec::with_capacity(frame.items.len());
        for mut r in frame.items {
            let Ok(v) = self.view(r.view) else { continue };
            if r.window_epoch != v.window_epoch || (r.scrolls && r.area_epoch != v.area_epoch) {
                continue;
            }
            // An exact view undraws from what it shows (below).
            if v.shown.as_ref().is_some_and(|s| !s.overflowed()) {
                continue;
            }
            if r.scrolls {
                let (dx, dy) = (v.shift.0 - r.shift.0, v.shift.1 - r.shift.1);
                let moved = r.cmd.bounds().translate(dx, dy);
                if moved.intersect(&r.region).is_empty() {
                    continue;
                }
                r.cmd.translate(dx, dy);
            }
            erase.push((r.view, r.cmd));
        }
        for (i, v) in self.views.iter_mut().enumerate() {
            let Some(v) = v.as_mut() else { continue };
            let (background, window, shift) = (v.spec.background, v.window_rect(), v.shift);
            let Some(shown) = v.shown.as_mut().filter(|s| !s.overflowed()) else {
                continue;
            };
            let view = ViewId(i as u32);
            erase.extend(
                shown
                    .undraw(mark, background, window, shift)
                    .into_iter()
                    .map(|cmd| (view, cmd)),
            );
        }
        for (view, _) in &erase {
            self.disturb(*view);
        }
        self.backend.undraw(mark, &erase)
    }

    /// [`Llvo::begin_frame`] then [`Llvo::undraw`]: what a component with
    /// `refresh="update"` does before each run.
    pub fn begin_update(&mut self, owner: OwnerId) -> Result<(), LlvoError> {
        self.begin_frame(owner)?;
        self.undraw(owner)
    }

    /// How many drawing commands an exact view keeps of what it shows (0 for a view that
    /// paints over); for tests and diagnostics.
    pub fn shown_len(&self, view: ViewId) -> usize {
        self.view(view)
            .ok()
            .and_then(|v| v.shown.as_ref())
            .map_or(0, Shown::len)
    }

    /// How many erase commands the owner holds (frame in progress plus last
    /// frame); for tests and diagnostics.
    pub fn recorded_len(&self, owner: OwnerId) -> usize {
        if owner == OwnerId::NONE {
            return 0;
        }
        self.owners
            .get(owner.0 as usize - 1)
            .map_or(0, |o| o.current.items.len() + o.last.items.len())
    }

    /// Whether every solid line of an ordinary style ([`Style::draws_as_given`]) and ordinary
    /// ends ([`ORDINARY`]) that `owner` draws in `view` leaves nothing to report and nothing
    /// to keep until some other call: the view exists, keeps no exact list of what it shows,
    /// and its world and base world are of an ordinary size (such lines map to finite
    /// pixels whatever the view scrolls and rescales to), and the owner records nothing to
    /// undraw. Such lines may be drawn later, elsewhere ([`crate::LlvoThread`]).
    pub fn draws_lines_unkept(&self, view: ViewId, owner: OwnerId) -> bool {
        let Ok(v) = self.view(view) else {
            return false;
        };
        let recording = owner != OwnerId::NONE
            && self
                .owners
                .get(owner.0 as usize - 1)
                .is_none_or(|o| o.undrawable);
        let ordinary = |[x0, x1, y0, y1]: [f64; 4]| {
            [x0, x1, y0, y1].iter().all(|e| e.abs() <= ORDINARY)
                && (x1 - x0).abs() >= 1.0 / ORDINARY
                && (y1 - y0).abs() >= 1.0 / ORDINARY
        };
        v.shown.is_none() && !recording && ordinary(v.spec.world) && ordinary(v.adapt.base)
    }

    /// Draws one primitive in a view on behalf of `owner`.
    ///
    /// `Err` means nothing was drawn (unknown view or image, a coordinate
    /// that is NaN or infinite, a shape too large to draw). Values that can
    /// be clamped (thickness, alpha, dash, text size) are, with a warning
    /// (see [`Llvo::take_warnings`]). A primitive entirely outside its
    /// clip draws nothing and returns `Ok`.
    ///
    /// With `style.adapt` set, the view first adapts (scrolls or rescales
    /// as its [`crate::Adaptation`] says) so that the primitive's world
    /// bounding box is inside the world rectangle; see the crate docs.
    pub fn draw(
        &mut self,
        view: ViewId,
        owner: OwnerId,
        prim: &Primitive,
        style: &Style,
    ) -> Result<(), LlvoError> {
        let (recording, mark) = match self.owner_mut(owner)? {
            Some(o) => (
                o.undrawable,
                Mark {
                    owner,
                    frame: o.current.number,
                },
            ),
            None => (false, Mark { owner, frame: 0 }),
        };
        if style.adapt {
            self.adapt(view, prim, style)?;
        }
        // A line's ends in pixels, for its pixel column and its lowering.
        let line_px;
        {
            // What an owner that never undraws drew stays whatever its frame.
            let series = if recording {
                mark
            } else {
                Mark { owner, frame: 0 }
            };
            let v = self.view_mut(view)?;
            line_px = match prim {
                Primitive::Line { from, to } => v.map.line_px(*from, *to),
                _ => None,
            };
            if v.columns.skips(prim, style, series, &v.map, line_px) {
                return Ok(());
            }
        }
        let images = &self.images;
        let image_size = |id: ImageId| images.get(id.0 as usize).copied();
        let v = self
            .views
            .get(view.0 as usize)
            .and_then(|v| v.as_ref())
            .ok_or_else(|| LlvoError::unknown_view(view))?;
        // An adaptive primitive in a view that adapts stays in the scrollable area whatever
        // its clip: the area scrolls and rescales under it while the margins stay, so what it
        // painted in a margin would be left behind there (a smear along a streaming plot's
        // edge).
        let clip_mode = if style.adapt && !v.spec.adapt.is_none() {
            ClipMode::Area
        } else {
            style.clip
        };
        let clip = match clip_mode {
            ClipMode::Area => v.map.area,
            ClipMode::Margin => v.window_rect(),
        };
        let exact = v.shown.is_some();
        let mut warnings = Vec::new();
        let mut ctx = Ctx {
            map: &v.map,
            clip,
            background: v.spec.background,
            want_erase: recording,
            line_px,
            image_size: &image_size,
            warnings: &mut warnings,
        };
        let result = lower(prim, style, &mut ctx, &mut self.lowered);
        let regions: Vec<(PxRect, bool)> = if recording || exact {
            let mut r = vec![(v.map.area, true)];
            if clip_mode == ClipMode::Margin {
                r.extend(v.margin_strips().into_iter().map(|s| (s, false)));
            }
            r
        } else {
            Vec::new()
        };
        let (shift, area_epoch, window_epoch) = (v.shift, v.area_epoch, v.window_epoch);
        for w in warnings {
            self.warn(w);
        }
        result?;
        if !self.lowered.draw.is_empty() {
            self.touch(view);
        }
        let lowered = &mut self.lowered;
        if !recording && !exact {
            // Nothing else needs the commands: the back end takes them.
            for (cmd, &bounds) in lowered.draw.drain(..).zip(&lowered.bounds) {
                self.backend.draw_bounded(view, cmd, bounds)?;
            }
            return Ok(());
        }
        for cmd in &lowered.draw {
            if recording {
                self.backend.draw_owned(view, mark, cmd)?;
            } else {
                self.backend.draw(view, cmd)?;
            }
        }
        let drawn = !lowered.draw.is_empty();
        if exact && drawn {
            let cmds = std::mem::take(&mut self.lowered.draw);
            self.show(view, &cmds, recording.then_some(mark), &regions, shift);
            self.lowered.draw = cmds;
        }
        if recording && drawn {
            if let Some(o) = self.owners.get_mut(owner.0 as usize - 1) {
                o.current.drawn = true;
            }
        }
        if !recording || self.lowered.erase.is_empty() {
            return Ok(());
        }
        let mut new = Vec::new();
        for cmd in self.lowered.erase.drain(..) {
            for &(region, scrolls) in &regions {
                let Some(cmd) = limit_to(&cmd, region) else {
                    continue;
                };
                new.push(Record {
                    view,
                    cmd,
                    region,
                    scrolls,
                    shift,
                    area_epoch,
                    window_epoch,
                });
            }
        }
        self.record(owner, new);
        Ok(())
    }

    /// Adds what was drawn to an exact view's list, limited to each region; warns once
    /// when the list outgrows its bound.
    fn show(
        &mut self,
        view: ViewId,
        drawn: &[DrawCmd],
        mark: Option<Mark>,
        regions: &[(PxRect, bool)],
        shift: (i64, i64),
    ) {
        let cap = self.shown_cap;
        let Ok(v) = self.view_mut(view) else { return };
        let Some(shown) = v.shown.as_mut() else {
            return;
        };
        let mut kept = true;
        for cmd in drawn {
            for &(region, scrolls) in regions {
                if let Some(cmd) = limit_to(cmd, region) {
                    kept &= shown.push(cmd, mark, region, scrolls, shift);
                }
            }
        }
        if !kept {
            let name = v.spec.name.clone();
            self.warn(LlvoError::ShownGivenUp { view: name, cap });
        }
    }

    fn record(&mut self, owner: OwnerId, new: Vec<Record>) {
        let cap = self.record_cap;
        let Some(o) = self.owners.get_mut(owner.0 as usize - 1) else {
            return;
        };
        for r in new {
            o.current.weight += r.weight();
            o.current.items.push(r);
        }
        if o.current.weight > cap {
            let items = std::mem::take(&mut o.current.items);
            o.current.items = fold(items, &self.views);
            o.current.weight = o.current.items.len();
        }
    }

    /// Decodes a PNG, GIF (first frame) or JPEG image for `figure`.
    pub fn load_image(&mut self, bytes: &[u8]) -> Result<ImageId, LlvoError> {
        let mut reader = image::ImageReader::new(Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|e| LlvoError::ImageDecode(e.to_string()))?;
        if reader.format().is_none() {
            return Err(LlvoError::ImageDecode(
                "not a PNG, GIF or JPEG image".to_string(),
            ));
        }
        let mut limits = image::Limits::default();
        limits.max_image_width = Some(MAX_IMAGE_SIDE);
        limits.max_image_height = Some(MAX_IMAGE_SIDE);
        reader.limits(limits);
        let img = reader
            .decode()
            .map_err(|e| LlvoError::ImageDecode(e.to_string()))?
            .to_rgba8();
        let pixels = RgbaPixels {
            width: img.width(),
            height: img.height(),
            data: img.into_raw(),
        };
        let id = ImageId(self.images.len() as u32);
        self.backend.add_image(id, &pixels)?;
        self.images.push((pixels.width, pixels.height));
        Ok(id)
    }

    /// Width and height of a loaded image in pixels.
    pub fn image_size(&self, image: ImageId) -> Result<(u32, u32), LlvoError> {
        self.images
            .get(image.0 as usize)
            .copied()
            .ok_or_else(|| LlvoError::unknown_image(image))
    }

    /// Starts drawing off-screen (the markup's `buffer="yes"`): nothing
    /// drawn is shown until [`Llvo::flush`].
    pub fn begin_buffer(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.view_mut(view)?.buffering = true;
        self.backend.begin_buffer(view)
    }

    /// Shows everything drawn since [`Llvo::begin_buffer`] at once.
    pub fn flush(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.view_mut(view)?.buffering = false;
        self.backend.flush(view)?;
        self.backend.present(view)
    }

    /// Makes what was drawn visible (unless buffering).
    pub fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        if self.view(view)?.buffering {
            return Ok(());
        }
        self.backend.present(view)
    }

    /// The pixels the view shows.
    pub fn pixels(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError> {
        self.view(view)?;
        self.backend.snapshot(view)
    }

    /// The view as PNG bytes; the same drawing calls give the same bytes.
    pub fn png(&mut self, view: ViewId) -> Result<Vec<u8>, LlvoError> {
        let p = self.pixels(view)?;
        encode_png(&p)
    }

    /// Device events since the last call. Resizes are applied to the view
    /// model (window cleared, view marked for redraw) before being returned.
    pub fn poll_events(&mut self) -> Vec<BackendEvent> {
        let events = self.backend.poll_events();
        for e in &events {
            if let BackendEvent::Resized {
                view,
                width,
                height,
            } = e
            {
                if let Err(err) = self.resize(*view, *width, *height) {
                    self.warn(err);
                }
            }
        }
        events
    }
}

/// The command limited to the pixels of `region`, or `None` if it cannot
/// touch any of them.
pub(crate) fn limit_to(cmd: &DrawCmd, region: PxRect) -> Option<DrawCmd> {
    let mut cmd = cmd.clone();
    match &mut cmd {
        DrawCmd::Clear { rect, .. } => *rect = rect.intersect(&region),
        other => {
            if let Some(clip) = other.clip_mut() {
                *clip = clip.intersect(&region);
            }
        }
    }
    (!cmd.bounds().is_empty()).then_some(cmd)
}

/// Folds records into one erase rectangle per view, region and scroll
/// state (records whose pixels are gone are dropped).
fn fold(items: Vec<Record>, views: &[Option<View>]) -> Vec<Record> {
    let mut boxes: HashMap<(ViewId, PxRect, bool), Record> = HashMap::new();
    for r in items {
        let Some(v) = views.get(r.view.0 as usize).and_then(|v| v.as_ref()) else {
            continue;
        };
        if r.window_epoch != v.window_epoch || (r.scrolls && r.area_epoch != v.area_epoch) {
            continue;
        }
        let (dx, dy) = if r.scrolls {
            (v.shift.0 - r.shift.0, v.shift.1 - r.shift.1)
        } else {
            (0, 0)
        };
        let b = r.cmd.bounds().translate(dx, dy);
        let color = match &r.cmd {
            DrawCmd::Clear { color, .. }
            | DrawCmd::Stroke { color, .. }
            | DrawCmd::Fill { color, .. }
            | DrawCmd::Text { color, .. } => *color,
            DrawCmd::Image { .. } | DrawCmd::Shift { .. } => v.spec.background,
        };
        let entry = boxes
            .entry((r.view, r.region, r.scrolls))
            .or_insert_with(|| Record {
                view: r.view,
                cmd: DrawCmd::Clear {
                    rect: PxRect::default(),
                    color,
                },
                region: r.region,
                scrolls: r.scrolls,
                shift: v.shift,
                area_epoch: v.area_epoch,
                window_epoch: v.window_epoch,
            });
        if let DrawCmd::Clear { rect, .. } = &mut entry.cmd {
            *rect = rect.union(&b).intersect(&r.region);
        }
    }
    let mut out: Vec<Record> = boxes.into_values().collect();
    // HashMap order is random; undraw order must not be.
    out.sort_by_key(|r| (r.view, r.region.y, r.region.x, r.scrolls));
    out
}

/// PNG bytes of a picture; the same pixels give the same bytes.
pub fn encode_png(p: &RgbaPixels) -> Result<Vec<u8>, LlvoError> {
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    use image::ImageEncoder;
    let mut out = Vec::new();
    PngEncoder::new_with_quality(&mut out, CompressionType::Default, FilterType::Adaptive)
        .write_image(&p.data, p.width, p.height, image::ExtendedColorType::Rgba8)
        .map_err(|e| LlvoError::Encode(e.to_string()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Adaptation, Color, Point, ViewSpec};

    /// Settling is not worked out again while the extremes, the window and the world stay
    /// as they were when it last changed nothing: over random plots that redraw their latest
    /// segments (as the paper's line plot does), with peaks that zoom out and back in, a
    /// small quality that merges extremes, and scrolls and rescales of the user's, the view
    /// goes through the same worlds and ends with the same pixels as one that settles every
    /// time.
    #[test]
    fn settling_again_is_skipped_only_where_it_would_change_nothing() {
        let mut seed = 0x853c_49e6_748f_ea9bu64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let (mut skipped, mut zoomed) = (0, 0);
        for plot in 0..12 {
            let spec = ViewSpec::new("plot")
                .window(120, 80)
                .world(0.0, 10.0, 0.0, 100.0)
                .adapt(Adaptation::parse("x+:scroll y+:rescale y-:rescale").unwrap())
                .quality(4 + plot as u32);
            let mut memo = Llvo::headless();
            let mut every = Llvo::headless();
            let (a, b) = (
                memo.create_view(spec.clone()).unwrap(),
                every.create_view(spec).unwrap(),
            );
            let mut samples: Vec<[f64; 4]> = vec![[0.0, 50.0, 0.0, 50.0]; 3];
            for step in 0..600 {
                let key = step % 3;
                let t = (step / 3) as f64 * 0.4 + 0.25;
                let value = match next(50) {
                    0 => 180.0 + next(100) as f64,
                    1 => -90.0 - next(100) as f64,
                    _ => 20.0 + next(60) as f64,
                };
                let old = samples[key];
                samples[key] = [old[2], old[3], t, value];
                match next(40) {
                    0 => {
                        let w = [t - 5.0, t + 5.0, -20.0, 140.0];
                        memo.rescale(a, w).unwrap();
                        every.rescale(b, w).unwrap();
                    }
                    1 => {
                        memo.scroll(a, 1.0, 0.0).unwrap();
                        every.scroll(b, 1.0, 0.0).unwrap();
                    }
                    _ => {}
                }
                // The latest segment of every scalar sampled at this timestamp, again.
                for s in samples.iter().filter(|s| s[2] == t) {
                    let line = Primitive::Line {
                        from: Point::new(s[0], s[1]),
                        to: Point::new(s[2], s[3]),
                    };
                    let style = Style::stroke(Color::rgb(200, 0, 0), 1.0).adapt(true);
                    let asked = memo.views[a.0 as usize].as_ref().unwrap().settled;
                    memo.draw(a, OwnerId::NONE, &line, &style).unwrap();
                    if let Some(v) = every.views[b.0 as usize].as_mut() {
                        v.settled = None;
                    }
                    every.draw(b, OwnerId::NONE, &line, &style).unwrap();
                    let (wa, wb) = (
                        memo.view_spec(a).unwrap().world,
                        every.view_spec(b).unwrap().world,
                    );
                    assert_eq!(wa, wb, "plot {plot} step {step}");
                    zoomed += usize::from(wa[3] > 150.0);
                    let now = memo.views[a.0 as usize].as_ref().unwrap().settled;
                    skipped += usize::from(asked.is_some() && asked == now);
                }
            }
            let (pa, pb) = (memo.pixels(a).unwrap(), every.pixels(b).unwrap());
            assert!(pa.data == pb.data, "plot {plot}: the pixels differ");
        }
        // The redrawn segments are most of the lines: settling was skipped for them.
        assert!(skipped > 2000, "skipped {skipped} times");
        // And the peaks zoomed the views out (and back in).
        assert!(zoomed > 100, "zoomed out at {zoomed} lines");
    }
}
