//! A raster back end that rasterises only when a picture is needed: drawing commands wait in
//! a list per view, and undrawing a frame that is still waiting removes its commands instead
//! of painting it and then painting over it. A counter redrawn after each of a million records
//! is rasterised once, when the picture is taken.
//!
//! The pixels are exactly those of [`RasterBackend`] given the same commands: undrawing
//! removes the frame's waiting commands *and* queues the erase commands (which cover every
//! pixel the frame painted, so whatever was painted there after it is cleared too, as on a
//! raster), and a command is dropped only when a later opaque one replaces every pixel it can
//! touch, or when the scrolls queued after it have moved every pixel it can touch out of the
//! scrolled area (see [`Queue`]). Scrolls wait like the rest; everything else that reads or
//! moves pixels (snapshots, rescaling, buffers, presenting) rasterises what waits first.
//! `tests/lazy_raster.rs` holds the two back ends to the same pixels over random command
//! streams.

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use crate::backend::{
    Backend, BackendEvent, DrawCmd, Mark, PaintMode, PxRemap, RgbaPixels, Status,
};
use crate::color::Color;
use crate::error::LlvoError;
use crate::geom::PxRect;
use crate::raster::RasterBackend;
use crate::{ImageId, ViewId};

/// Commands waiting in one view before they are rasterised anyway, so that memory stays
/// bounded whatever the visual object draws.
const MAX_WAITING: usize = 4096;
/// Commands (merged erasures counted one by one) waiting in one view before they are
/// rasterised anyway: a display redrawn on every tick of a long run merged its erasures into
/// sets that [`MAX_WAITING`] counted as one, and held a million commands (160 MB) until its
/// picture was taken.
const MAX_COMMANDS: usize = 65_536;
/// How many of the latest waiting commands a covering command is checked against: what a
/// redraw replaces was drawn lately, and the check must stay cheap.
const COVER_WINDOW: usize = 64;

/// See the module documentation.
#[derive(Default)]
pub struct LazyRaster {
    raster: RasterBackend,
    waiting: HashMap<ViewId, Queue>,
    /// How many waiting commands each frame has, so that undrawing a frame with none waiting
    /// looks at nothing.
    marks: HashMap<Mark, usize>,
    /// Views whose raster holds nothing but this colour (nothing painted on it since it was
    /// made or resized): erasures of this colour there change nothing.
    pristine: HashMap<ViewId, Color>,
}

/// What waits in one view: commands and the scrolls between them, in order.
///
/// A streaming plot scrolls its view by a few pixels for nearly every sample. Scrolls wait
/// like the rest: what was drawn before them is painted, at the latest, when a picture is
/// taken, and a command that the scrolls since have moved wholly out of the scrolled area is
/// never painted (its pixels would be lost anyway). Scrolls that nothing left between them
/// merge into one. A plot of a million samples then paints the lines the picture shows,
/// not a million.
///
/// A streaming plot's commands leave the area in about the order they were drawn: each scroll
/// drops those at the front of the list that have left (see [`Queue::drop_front`]), so that
/// the list holds about what is visible without the whole of it being looked at; the whole is
/// looked at when it has grown to twice what the last such look left (see [`Queue::compact`]).
#[derive(Default)]
struct Queue {
    list: VecDeque<Waiting>,
    /// Scrolls pushed so far: a command's `epoch` tells which came after it.
    epoch: u32,
    /// The sum of the scrolls pushed so far, in pixels: a command has moved by this minus its
    /// `at`.
    moved: (i64, i64),
    /// The area every waiting scroll moves (they all move the same one).
    area: Option<PxRect>,
    /// The list's length at which scrolled-out commands are looked for again (doubling, so
    /// the looking costs a few steps a command).
    compact_at: usize,
    /// Erasures merged into waiting sets since the view was last rasterised (an upper bound
    /// of the commands waiting beyond the list's length).
    merged: usize,
}

/// The list's length at which scrolled-out commands are first looked for.
const FIRST_COMPACTION: usize = 64;

/// A command that waits, with whose frame it is and the pixels it can change (all of them,
/// `also` included).
struct Waiting {
    mark: Option<Mark>,
    /// The scrolls pushed before it, and their sum then (see [`Queue`]).
    epoch: u32,
    at: (i64, i64),
    bounds: PxRect,
    cmd: DrawCmd,
    /// Erasures merged into this one (see [`merge_erasure`]), painted after it.
    also: Vec<Member>,
    /// The colour every command of the set erases with, when it is an erasure set.
    erases: Option<Color>,
    /// Whether the scrolls can move it out of the scrolled area, worked out by the first
    /// compaction that looks at it (each looks at every command).
    exit: Exit,
}

/// Whether a waiting command can leave the scrolled area, worked out once: every scroll that
/// waits with it moves the same area (see [`Queue`]).
#[derive(Clone, Copy)]
enum Exit {
    /// Not worked out yet.
    Unknown,
    /// Never: a scroll, or a command not wholly inside the area (some of it stays).
    Never,
    /// Already: it changes no pixel.
    Now,
    /// Wholly inside: gone once the scrolls have moved its bounds out of the area.
    Inside,
}

impl Exit {
    fn of(w: &Waiting, area: PxRect) -> Exit {
        let b = w.bounds;
        if matches!(w.cmd, DrawCmd::Shift { .. }) || (!b.is_empty() && b.intersect(&area) != b) {
            Exit::Never
        } else if b.is_empty() {
            Exit::Now
        } else {
            Exit::Inside
        }
    }

    /// Whether a command with bounds `b` that has moved by `d` since it was queued is gone
    /// from `area`.
    fn gone(self, d: (i64, i64), b: PxRect, area: PxRect) -> bool {
        match self {
            Exit::Unknown | Exit::Never => false,
            Exit::Now => true,
            Exit::Inside => {
                // Moved wholly past an edge of the area (or the area empty). Where a moved
                // edge would leave the pixel coordinates, the rectangles' own clamping says.
                let (x0, x1) = (i64::from(b.x) + d.0, b.right() + d.0);
                let (y0, y1) = (i64::from(b.y) + d.1, b.bottom() + d.1);
                let within = |v: i64| i32::try_from(v).is_ok();
                if within(x0) && within(x1) && within(y0) && within(y1) {
                    x1 <= i64::from(area.x)
                        || area.right() <= x0
                        || y1 <= i64::from(area.y)
                        || area.bottom() <= y0
                        || area.is_empty()
                } else {
                    b.translate(d.0, d.1).intersect(&area).is_empty()
                }
            }
        }
    }
}

/// A merged erasure, with what [`merge_erasure`] asks of it worked out once: a set holds
/// hundreds, and each new erasure is checked against all of them.
struct Member {
    cmd: DrawCmd,
    bounds: PxRect,
    cover: Option<PxRect>,
}

impl Member {
    fn new(cmd: DrawCmd) -> Member {
        Member {
            bounds: cmd.bounds(),
            cover: covered(&cmd),
            cmd,
        }
    }
}

impl LazyRaster {
    /// No surfaces yet.
    pub fn new() -> LazyRaster {
        LazyRaster::default()
    }

    /// Commands waiting in `view` (for tests and measurements).
    pub fn waiting(&self, view: ViewId) -> usize {
        self.waiting.get(&view).map_or(0, |q| q.list.len())
    }

    /// Commands waiting in `view`, merged erasures counted one by one (for tests and
    /// measurements).
    pub fn waiting_commands(&self, view: ViewId) -> usize {
        self.waiting
            .get(&view)
            .map_or(0, |q| q.list.iter().map(|w| 1 + w.also.len()).sum())
    }

    /// Rasterises what waits in `view`.
    fn settle(&mut self, view: ViewId) -> Result<(), LlvoError> {
        let Some(queue) = self.waiting.get_mut(&view) else {
            return Ok(());
        };
        queue.merged = 0;
        if !queue.list.is_empty() {
            self.pristine.remove(&view);
        }
        for w in queue.take() {
            forget_one(&mut self.marks, w.mark);
            self.raster.draw(view, &w.cmd)?;
            for m in &w.also {
                self.raster.draw(view, &m.cmd)?;
            }
        }
        Ok(())
    }

    /// Queues `cmd`; `bounds` are its [`DrawCmd::bounds`] when known.
    fn push(
        &mut self,
        view: ViewId,
        mark: Option<Mark>,
        cmd: DrawCmd,
        bounds: Option<PxRect>,
    ) -> Result<(), LlvoError> {
        let Some(queue) = self.waiting.get_mut(&view) else {
            // An unknown surface: the raster back end says so.
            return self.raster.draw(view, &cmd);
        };
        if let DrawCmd::Shift { area, .. } = &cmd {
            if queue.area.is_some_and(|a| a != *area) {
                // Scrolls of another area: what waits is painted first.
                self.settle(view)?;
            }
            self.pristine.remove(&view);
            let queue = self.waiting.get_mut(&view).expect("checked above");
            queue.push_shift(&cmd, &mut self.marks);
            return self.bound(view);
        }
        let (epoch, at, scrolled) = (queue.epoch, queue.moved, queue.area);
        let list = &mut queue.list;
        if let Some(cover) = covered(&cmd) {
            // What was drawn before the latest scroll lies where its bounds say only when it
            // is outside the scrolled area.
            let from = list.len().saturating_sub(COVER_WINDOW);
            let mut kept = from;
            for i in from..list.len() {
                let b = list[i].bounds;
                let moved = matches!(list[i].cmd, DrawCmd::Shift { .. })
                    || (list[i].epoch != epoch
                        && scrolled.is_some_and(|a| !a.intersect(&b).is_empty()));
                if !moved && !b.is_empty() && b.intersect(&cover) == b {
                    forget_one(&mut self.marks, list[i].mark);
                } else {
                    list.swap(kept, i);
                    kept += 1;
                }
            }
            list.truncate(kept);
        }
        if let Some(m) = mark {
            *self.marks.entry(m).or_default() += 1;
        }
        let erases = erasure_colour(&cmd).filter(|_| mark.is_none());
        let mut item = Waiting {
            mark,
            epoch,
            at,
            bounds: bounds.unwrap_or_else(|| cmd.bounds()),
            cmd,
            also: Vec::new(),
            erases,
            exit: Exit::Unknown,
        };
        let mut merged = 0;
        if let Some(color) = erases {
            item = merge_erasure(list, item, color);
            // (Its bounds may have grown.)
            item.exit = Exit::Unknown;
            merged = item.also.len().min(1);
        }
        list.push_back(item);
        queue.merged += merged;
        if queue.overfull() {
            self.settle(view)?;
        }
        Ok(())
    }

    /// Rasterises what waits in `view` when it is more than may wait.
    fn bound(&mut self, view: ViewId) -> Result<(), LlvoError> {
        if self.waiting.get(&view).is_some_and(Queue::overfull) {
            self.settle(view)?;
        }
        Ok(())
    }
}

impl Queue {
    /// More waits than may wait.
    fn overfull(&self) -> bool {
        let len = self.list.len();
        len > MAX_WAITING || len + self.merged > MAX_COMMANDS
    }

    /// Everything that waits, leaving nothing (and no scrolled area) behind.
    fn take(&mut self) -> VecDeque<Waiting> {
        self.area = None;
        self.compact_at = 0;
        std::mem::take(&mut self.list)
    }

    /// Queues a scroll (of the queue's area, or of any when none waits), merging it into the
    /// latest when nothing waits between them, and drops, now and then, what the scrolls
    /// moved out of the area.
    fn push_shift(&mut self, cmd: &DrawCmd, marks: &mut HashMap<Mark, usize>) {
        let DrawCmd::Shift { area, dx, dy, .. } = *cmd else {
            return;
        };
        self.area = Some(area);
        self.epoch = self.epoch.wrapping_add(1);
        self.moved = (
            self.moved.0.saturating_add(i64::from(dx)),
            self.moved.1.saturating_add(i64::from(dy)),
        );
        let merged = self.list.back_mut().is_some_and(|last| {
            let merged = add_shift(&mut last.cmd, cmd);
            if merged {
                (last.epoch, last.at) = (self.epoch, self.moved);
            }
            merged
        });
        if !merged {
            self.list.push_back(Waiting {
                mark: None,
                epoch: self.epoch,
                at: self.moved,
                bounds: cmd.bounds(),
                cmd: cmd.clone(),
                also: Vec::new(),
                erases: None,
                exit: Exit::Never,
            });
        }
        self.drop_front(area, marks);
        if self.list.len() >= self.compact_at.max(FIRST_COMPACTION) {
            self.compact(area, marks);
            self.compact_at = 2 * self.list.len();
        }
    }

    /// Drops the commands at the front of the list that the scrolls since them moved out of
    /// `area`, as [`Queue::compact`] would, up to the first that stays; a scroll at the
    /// front merges into the next one when nothing but such commands lay between them.
    fn drop_front(&mut self, area: PxRect, marks: &mut HashMap<Mark, usize>) {
        let moved = self.moved;
        loop {
            let Some(front) = self.list.front_mut() else {
                return;
            };
            if gone(front, moved, area) {
                forget_one(marks, front.mark);
                self.list.pop_front();
                continue;
            }
            if !matches!(front.cmd, DrawCmd::Shift { .. }) {
                return;
            }
            // A scroll: what follows it decides.
            let Some(next) = self.list.get_mut(1) else {
                return;
            };
            if gone(next, moved, area) {
                forget_one(marks, next.mark);
                // The scroll takes its place.
                if let Some(shift) = self.list.pop_front() {
                    if let Some(next) = self.list.front_mut() {
                        *next = shift;
                    }
                }
                continue;
            }
            if !matches!(next.cmd, DrawCmd::Shift { .. }) {
                return;
            }
            let Some(mut first) = self.list.pop_front() else {
                return;
            };
            let Some(next) = self.list.front_mut() else {
                return;
            };
            if add_shift(&mut first.cmd, &next.cmd) {
                // The sum takes the later scroll's place (nothing lies between them).
                next.cmd = first.cmd;
            } else {
                self.list.push_front(first);
                return;
            }
        }
    }

    /// Drops the commands that the scrolls since them moved wholly out of `area` (a pixel
    /// inside the area that a scroll moves out is lost, and later scrolls do not bring it
    /// back) and those that change no pixel, then merges the scrolls that end up next to
    /// each other.
    fn compact(&mut self, area: PxRect, marks: &mut HashMap<Mark, usize>) {
        let moved = self.moved;
        // In place: the list keeps its allocation.
        self.list.retain_mut(|w| {
            let gone = gone(w, moved, area);
            if gone {
                forget_one(marks, w.mark);
            }
            !gone
        });
        // Scrolls now next to each other merge, the sum in the first's place.
        let mut kept = 0;
        for i in 0..self.list.len() {
            let shifts = |w: &Waiting| matches!(w.cmd, DrawCmd::Shift { .. });
            if kept > 0 && shifts(&self.list[i]) && shifts(&self.list[kept - 1]) {
                // (A scroll holds nothing on the heap.)
                let (next, epoch, at) = {
                    let w = &self.list[i];
                    (w.cmd.clone(), w.epoch, w.at)
                };
                let last = &mut self.list[kept - 1];
                if add_shift(&mut last.cmd, &next) {
                    (last.epoch, last.at) = (epoch, at);
                    continue;
                }
            }
            self.list.swap(kept, i);
            kept += 1;
        }
        self.list.truncate(kept);
    }
}

/// Whether `w`, queued when the scrolls had moved by `w.at`, has left `area` now that they
/// have moved by `moved` (its way out worked out the first time it is asked).
fn gone(w: &mut Waiting, moved: (i64, i64), area: PxRect) -> bool {
    if let Exit::Unknown = w.exit {
        w.exit = Exit::of(w, area);
    }
    w.exit
        .gone((moved.0 - w.at.0, moved.1 - w.at.1), w.bounds, area)
}

/// Merges the scroll `next` into the scroll `last` when they move the same area, expose the
/// same colour and point the same way on each axis: moving by a then by b is then moving by
/// a + b (a pixel that ends inside the area was inside it between the two, the area being a
/// rectangle, and the pixels either exposes are the ones the sum exposes).
fn add_shift(last: &mut DrawCmd, next: &DrawCmd) -> bool {
    let (
        DrawCmd::Shift {
            area: la,
            dx: ldx,
            dy: ldy,
            fill: lf,
        },
        DrawCmd::Shift { area, dx, dy, fill },
    ) = (last, next)
    else {
        return false;
    };
    let same_way = |p: i32, q: i32| (p >= 0 && q >= 0) || (p <= 0 && q <= 0);
    if la != area || lf != fill || !same_way(*ldx, *dx) || !same_way(*ldy, *dy) {
        return false;
    }
    // Beyond the area's size everything is exposed anyway.
    let lim = |d: i64, size: u32| d.clamp(-i64::from(size), i64::from(size)) as i32;
    *ldx = lim(i64::from(*ldx) + i64::from(*dx), area.w);
    *ldy = lim(i64::from(*ldy) + i64::from(*dy), area.h);
    true
}

/// The colour an erasure paints: a clear, or a hard-edged fill or stroke (what undrawing
/// queues). Erasures of one colour set pixels to that colour exactly, in any order.
fn erasure_colour(cmd: &DrawCmd) -> Option<Color> {
    match cmd {
        DrawCmd::Clear { color, .. } => Some(*color),
        DrawCmd::Fill {
            color,
            mode: PaintMode::Erase,
            ..
        }
        | DrawCmd::Stroke {
            color,
            mode: PaintMode::Erase,
            ..
        } => Some(*color),
        _ => None,
    }
}

/// The most pixels looked at to find that an erasure would change nothing: a larger one is
/// kept (painting it is about as dear as looking).
const MAX_LOOKED_AT: u64 = 16 * 1024;

/// Most erasures merged into one waiting command: beyond, a new set starts.
const MAX_MERGED: usize = 256;

/// A component redrawn after every record leaves an erasure per record; a thousand erasures
/// of one bar painted one after the other cost a thousand bars. The latest waiting erasure of
/// the same colour that nothing drawn since touches is taken out of its place and merged
/// into the new one: painting it later changes nothing (nothing since overlaps it), and
/// erasures of one colour may be painted in any order. Erasures that another of the set
/// paints over entirely are dropped.
fn merge_erasure(list: &mut VecDeque<Waiting>, new: Waiting, color: Color) -> Waiting {
    let from = list.len().saturating_sub(COVER_WINDOW);
    let mut touched = PxRect::default();
    let mut found = None;
    for i in (from..list.len()).rev() {
        let w = &list[i];
        if w.erases == Some(color)
            && w.also.len() < MAX_MERGED
            && touched.intersect(&w.bounds).is_empty()
        {
            found = Some(i);
            break;
        }
        touched = if touched.is_empty() {
            w.bounds
        } else if w.bounds.is_empty() {
            touched
        } else {
            touched.union(&w.bounds)
        };
    }
    let Some(i) = found else {
        return new;
    };
    let Some(mut set) = list.remove(i) else {
        return new;
    };
    let new = Member::new(new.cmd);
    // The new erasure is needed unless one of the set already paints all of it (the latest
    // merged first: a redraw erases what the one before it drew).
    let paints = |cover: Option<PxRect>, cmd: &DrawCmd| {
        cover.is_some_and(|c| new.bounds.intersect(&c) == new.bounds) || *cmd == new.cmd
    };
    let redundant = set.also.iter().rev().any(|m| paints(m.cover, &m.cmd))
        || paints(covered(&set.cmd), &set.cmd);
    if redundant {
        return set;
    }
    if let Some(cover) = new.cover {
        let gone = |b: &PxRect| !b.is_empty() && b.intersect(&cover) == *b;
        set.also.retain(|m| !gone(&m.bounds));
        if gone(&set.cmd.bounds()) {
            // Erasures of one colour may be painted in any order: the new one takes the
            // place of the first, which it paints over.
            set.cmd = new.cmd;
            return set;
        }
    }
    // (The set's bounds may stay wider than what is left of it: they only need to hold
    // every pixel it can change.)
    if !new.bounds.is_empty() {
        set.bounds = if set.bounds.is_empty() {
            new.bounds
        } else {
            set.bounds.union(&new.bounds)
        };
    }
    set.also.push(new);
    set
}

/// One waiting command of frame `mark` (if it has one) is gone.
fn forget_one(marks: &mut HashMap<Mark, usize>, mark: Option<Mark>) {
    let Some(mark) = mark else {
        return;
    };
    if let Some(n) = marks.get_mut(&mark) {
        *n -= 1;
        if *n == 0 {
            marks.remove(&mark);
        }
    }
}

/// The pixels `cmd` certainly replaces whatever was there: a clear's rectangle; the inside of
/// an upright rectangle filled hard-edged (erasing) or with an opaque colour, to whole pixels,
/// within its clip.
#[inline]
fn covered(cmd: &DrawCmd) -> Option<PxRect> {
    match cmd {
        DrawCmd::Clear { rect, .. } => Some(*rect),
        DrawCmd::Fill {
            path,
            color,
            clip,
            mode,
        } if *mode == PaintMode::Erase || color.a == 255 => {
            let [x0, y0, x1, y1] = path.upright_rect(false)?;
            let (x0, y0) = (x0.ceil(), y0.ceil());
            let (x1, y1) = (x1.floor(), y1.floor());
            if x0 >= x1 || y0 >= y1 || x0 < -1e9 || y0 < -1e9 || x1 > 1e9 || y1 > 1e9 {
                return None;
            }
            let inside = PxRect::new(x0 as i32, y0 as i32, (x1 - x0) as u32, (y1 - y0) as u32);
            Some(inside.intersect(clip))
        }
        _ => None,
    }
}

impl Backend for LazyRaster {
    fn create_surface(
        &mut self,
        view: ViewId,
        title: &str,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError> {
        self.raster
            .create_surface(view, title, width, height, background)?;
        self.waiting.insert(view, Queue::default());
        self.pristine.insert(view, background);
        Ok(())
    }

    fn resize_surface(
        &mut self,
        view: ViewId,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError> {
        // The content is lost anyway.
        if let Some(queue) = self.waiting.get_mut(&view) {
            for w in queue.take() {
                forget_one(&mut self.marks, w.mark);
            }
        }
        self.raster
            .resize_surface(view, width, height, background)?;
        self.pristine.insert(view, background);
        Ok(())
    }

    fn destroy_surface(&mut self, view: ViewId) {
        for w in self.waiting.remove(&view).unwrap_or_default().list {
            forget_one(&mut self.marks, w.mark);
        }
        self.pristine.remove(&view);
        self.raster.destroy_surface(view);
    }

    fn add_image(&mut self, image: ImageId, pixels: &RgbaPixels) -> Result<(), LlvoError> {
        self.raster.add_image(image, pixels)
    }

    fn draw(&mut self, view: ViewId, cmd: &DrawCmd) -> Result<(), LlvoError> {
        self.push(view, None, cmd.clone(), None)
    }

    fn draw_bounded(
        &mut self,
        view: ViewId,
        cmd: DrawCmd,
        bounds: PxRect,
    ) -> Result<(), LlvoError> {
        self.push(view, None, cmd, Some(bounds))
    }

    fn draw_owned(&mut self, view: ViewId, mark: Mark, cmd: &DrawCmd) -> Result<(), LlvoError> {
        self.push(view, Some(mark), cmd.clone(), None)
    }

    fn undraw(&mut self, mark: Mark, erase: &[(ViewId, DrawCmd)]) -> Result<(), LlvoError> {
        // What of the frame still waits is never painted; what was painted already is
        // covered by the erase commands, which also clear what was painted over it since.
        if self.marks.remove(&mark).is_some() {
            for queue in self.waiting.values_mut() {
                queue.list.retain(|w| w.mark != Some(mark));
            }
        }
        // An erasure over pixels that are its colour already, which nothing waiting can
        // change before it is painted, would change nothing: a frame redrawn many times
        // between two pictures on an empty part of the view leaves no erasures to paint.
        // (What waits is bounded by the union of its bounds, worked out once per view.)
        let mut occupied: Vec<(ViewId, PxRect)> = Vec::new();
        for (view, cmd) in erase {
            if let Some(color) = erasure_colour(cmd) {
                let at = match occupied.iter().position(|(v, _)| v == view) {
                    Some(at) => at,
                    None => {
                        let union = self.waiting.get(view).map_or(PxRect::default(), |q| {
                            q.list
                                .iter()
                                .fold(PxRect::default(), |all, w| all.union(&w.bounds))
                        });
                        occupied.push((*view, union));
                        occupied.len() - 1
                    }
                };
                let bounds = cmd.bounds();
                let busy = occupied[at].1;
                if busy.intersect(&bounds).is_empty()
                    && (self.pristine.get(view) == Some(&color)
                        || (bounds.w as u64 * bounds.h as u64 <= MAX_LOOKED_AT
                            && self.raster.is_all(*view, bounds, color)))
                {
                    continue;
                }
                occupied[at].1 = busy.union(&bounds);
            }
            self.push(*view, None, cmd.clone(), None)?;
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
        self.settle(view)?;
        self.pristine.remove(&view);
        self.raster.remap_area(view, area, map, fill)
    }

    fn begin_buffer(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.settle(view)?;
        self.raster.begin_buffer(view)
    }

    fn flush(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.settle(view)?;
        self.raster.flush(view)
    }

    fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.settle(view)?;
        self.raster.present(view)
    }

    fn snapshot(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError> {
        // While buffering, the raster shows the picture as it was when buffering began: what
        // waits is not part of it.
        if !self.raster.buffering(view) {
            self.settle(view)?;
        }
        self.raster.snapshot(view)
    }

    fn depth(&self) -> u32 {
        self.raster.depth()
    }

    fn position(&self, view: ViewId) -> (i32, i32) {
        self.raster.position(view)
    }

    fn poll_events(&mut self) -> Vec<BackendEvent> {
        self.raster.poll_events()
    }

    fn status(&mut self, status: &Status) {
        self.raster.status(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the scrolls took a command out of the area, as compaction first worked it out
    /// from the rectangles each time.
    fn gone_as_the_rectangles_say(w: &Waiting, area: PxRect, d: (i64, i64)) -> bool {
        if matches!(w.cmd, DrawCmd::Shift { .. }) {
            return false;
        }
        let b = w.bounds;
        b.is_empty()
            || (b.intersect(&area) == b && b.translate(d.0, d.1).intersect(&area).is_empty())
    }

    /// A command's way out of the area, worked out once, tells what the rectangles tell,
    /// over random areas (some larger than the pixel coordinates reach), commands inside,
    /// across and outside them, empty ones, scrolls, and moves small and huge.
    #[test]
    fn a_way_out_worked_out_once_is_what_the_rectangles_say() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |below: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % below
        };
        let fill = Color::rgb(255, 255, 255);
        for _ in 0..200_000 {
            let huge = next(8) == 0;
            let side = |n: &mut dyn FnMut(u64) -> u64| {
                if huge {
                    n(u64::from(u32::MAX)) as u32
                } else {
                    n(60) as u32
                }
            };
            let at = |n: &mut dyn FnMut(u64) -> u64| {
                if huge {
                    n(u64::from(u32::MAX)) as i64 as i32
                } else {
                    n(100) as i32 - 50
                }
            };
            let area = PxRect::new(
                at(&mut next),
                at(&mut next),
                side(&mut next),
                side(&mut next),
            );
            let bounds = PxRect::new(
                area.x.saturating_add(next(20) as i32 - 5),
                area.y.saturating_add(next(20) as i32 - 5),
                next(30) as u32,
                next(30) as u32,
            );
            let cmd = if next(10) == 0 {
                DrawCmd::Shift {
                    area,
                    dx: -1,
                    dy: 0,
                    fill,
                }
            } else {
                DrawCmd::Clear {
                    rect: bounds,
                    color: fill,
                }
            };
            let w = Waiting {
                mark: None,
                epoch: 0,
                at: (0, 0),
                bounds,
                cmd,
                also: Vec::new(),
                erases: None,
                exit: Exit::Unknown,
            };
            let exit = Exit::of(&w, area);
            for _ in 0..8 {
                let step = |n: &mut dyn FnMut(u64) -> u64| match n(4) {
                    0 => n(1 << 40) as i64 - (1 << 39),
                    _ => n(160) as i64 - 80,
                };
                let d = (step(&mut next), step(&mut next));
                assert_eq!(
                    exit.gone(d, bounds, area),
                    gone_as_the_rectangles_say(&w, area, d),
                    "{bounds:?} in {area:?} moved by {d:?}"
                );
            }
        }
    }
}
