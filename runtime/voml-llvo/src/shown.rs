//! What a view with exact undrawing ([`crate::Undraw::Exact`]) shows, kept as the commands
//! that drew it, in order: undrawing a frame removes its commands, clears the pixels they
//! covered and paints again, clipped to those pixels, what else was drawn there. The
//! result is the picture the remaining commands draw, on every back end, since it is made
//! of ordinary drawing commands.
//!
//! The list follows the view: content that scrolls is moved when it is looked at (as the
//! undraw records are), what a clear or a rescale wipes is forgotten, what scrolled out of
//! sight or lies under a later clear is dropped when the list grows (past a sixteenth of its
//! bound, or twice what was left the time before), and an adaptive zoom moves the commands
//! with the pixels. Past its bound the list is given up, and undrawing in the view paints
//! over as in a `paint` view until the view is cleared.

use crate::backend::{DrawCmd, Mark, PxRemap};
use crate::color::Color;
use crate::geom::PxRect;
use crate::llvo::limit_to;

/// Most damaged rectangles repainted one by one in an undraw; beyond, their union is.
const MAX_BOXES: usize = 8;

/// One command of the list, limited to one region of the view.
struct Item {
    cmd: DrawCmd,
    /// The frame it belongs to, when an owner that can undraw drew it.
    mark: Option<Mark>,
    /// The scrollable area (content that scrolls) or one margin strip (content that stays).
    region: PxRect,
    scrolls: bool,
    /// The view's shift when `cmd` was last moved to where it shows.
    shift: (i64, i64),
    /// `cmd`'s pixels then (worked out once: a text's are its glyphs').
    bounds: PxRect,
}

impl Item {
    fn weight(&self) -> usize {
        self.cmd.weight()
    }

    /// Moves the command to where the view's content now shows it.
    fn follow(&mut self, shift: (i64, i64)) {
        if self.scrolls && self.shift != shift {
            let (dx, dy) = (shift.0 - self.shift.0, shift.1 - self.shift.1);
            self.cmd.translate(dx, dy);
            self.bounds = self.bounds.translate(dx, dy).intersect(&self.region);
            // What the clip kept out when it was drawn stays out where it now is, and what
            // scrolled out of the region is gone.
            let region = self.region;
            match &mut self.cmd {
                DrawCmd::Clear { rect, .. } => *rect = rect.intersect(&region),
                cmd => {
                    if let Some(clip) = cmd.clip_mut() {
                        *clip = clip.translate(dx, dy).intersect(&region);
                    }
                }
            }
            self.shift = shift;
        }
    }

    /// The pixels it covers, where it now shows.
    fn covers(&self, shift: (i64, i64)) -> PxRect {
        let b = self.bounds;
        let b = if self.scrolls {
            b.translate(shift.0 - self.shift.0, shift.1 - self.shift.1)
        } else {
            b
        };
        b.intersect(&self.region)
    }
}

/// The display list of one exact view.
pub(crate) struct Shown {
    items: Vec<Item>,
    weight: usize,
    cap: usize,
    /// The weight past which what no longer shows is dropped: twice what was left the last
    /// time, so that a view that scrolls keeps about what it shows, at a constant cost per
    /// command.
    prune_at: usize,
    /// The list outgrew its bound: it is empty and undrawing paints over.
    overflowed: bool,
}

impl Shown {
    /// An empty list holding at most `cap` path segments.
    pub(crate) fn new(cap: usize) -> Shown {
        Shown {
            items: Vec::new(),
            weight: 0,
            cap,
            prune_at: Self::first_prune(cap),
            overflowed: false,
        }
    }

    fn first_prune(cap: usize) -> usize {
        (cap / 16).max(64).min(cap)
    }

    /// How many commands the list holds (for tests and diagnostics).
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the list is given up (undraw paints over until the view is cleared).
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Appends a drawn command, limited to `region`. False when this made the list
    /// outgrow its bound (it is then given up).
    pub(crate) fn push(
        &mut self,
        cmd: DrawCmd,
        mark: Option<Mark>,
        region: PxRect,
        scrolls: bool,
        shift: (i64, i64),
    ) -> bool {
        if self.overflowed {
            return true;
        }
        let item = Item {
            bounds: cmd.bounds(),
            cmd,
            mark,
            region,
            scrolls,
            shift,
        };
        self.weight += item.weight();
        self.items.push(item);
        if self.weight > self.prune_at {
            self.prune(shift);
            self.prune_at = (self.weight * 2)
                .max(Self::first_prune(self.cap))
                .min(self.cap);
            if self.weight > self.cap {
                self.items = Vec::new();
                self.weight = 0;
                self.overflowed = true;
                return false;
            }
        }
        true
    }

    /// Drops what no longer shows: commands scrolled out of their region, and those a
    /// later clear covers whole.
    fn prune(&mut self, shift: (i64, i64)) {
        let mut cleared: Vec<PxRect> = Vec::new();
        let mut keep = vec![true; self.items.len()];
        for (i, item) in self.items.iter().enumerate().rev() {
            let covers = item.covers(shift);
            if covers.is_empty() || cleared.iter().any(|c| c.intersect(&covers) == covers) {
                keep[i] = false;
                continue;
            }
            if let DrawCmd::Clear { .. } = item.cmd {
                cleared.push(covers);
            }
        }
        let mut flags = keep.into_iter();
        self.items.retain(|_| flags.next().unwrap_or(true));
        self.weight = self.items.iter().map(Item::weight).sum();
    }

    /// Forgets everything (the window was cleared or resized); the list is kept again.
    pub(crate) fn forget_all(&mut self) {
        self.items.clear();
        self.weight = 0;
        self.prune_at = Self::first_prune(self.cap);
        self.overflowed = false;
    }

    /// Forgets the content of the scrollable area (it was cleared); margins stay.
    pub(crate) fn forget_area(&mut self) {
        self.items.retain(|i| !i.scrolls);
        self.weight = self.items.iter().map(Item::weight).sum();
    }

    /// The scrollable area's pixels moved by `m` (adaptive rescaling): its commands move
    /// with them.
    pub(crate) fn remap(&mut self, m: &PxRemap, area: PxRect, shift: (i64, i64)) {
        for item in self.items.iter_mut().filter(|i| i.scrolls) {
            item.follow(shift);
            item.cmd.move_by(m, area);
            item.bounds = item.cmd.bounds();
        }
    }

    /// Removes the commands of frame `mark`, and gives the commands that put the view's
    /// pixels where they were as if those had never been drawn: each damaged rectangle
    /// cleared in `background`, then what else covers it, in order, clipped to it. Empty
    /// when the frame drew nothing here.
    pub(crate) fn undraw(
        &mut self,
        mark: Mark,
        background: Color,
        window: PxRect,
        shift: (i64, i64),
    ) -> Vec<DrawCmd> {
        let mut boxes: Vec<PxRect> = Vec::new();
        self.items.retain(|item| {
            if item.mark != Some(mark) {
                return true;
            }
            let b = item.covers(shift).intersect(&window);
            if !b.is_empty() {
                boxes.push(b);
            }
            self.weight -= item.weight();
            false
        });
        let boxes = merged(boxes);
        let mut out = Vec::new();
        for b in boxes {
            out.push(DrawCmd::Clear {
                rect: b,
                color: background,
            });
            for item in &mut self.items {
                if item.covers(shift).intersect(&b).is_empty() {
                    continue;
                }
                item.follow(shift);
                if let Some(cmd) = limit_to(&item.cmd, b) {
                    out.push(cmd);
                }
            }
        }
        out
    }
}

/// Overlapping rectangles merged (so that no pixel is repainted twice); past
/// [`MAX_BOXES`], their union.
fn merged(mut boxes: Vec<PxRect>) -> Vec<PxRect> {
    let mut out: Vec<PxRect> = Vec::new();
    while let Some(mut b) = boxes.pop() {
        // A merged box may now overlap one kept before: look again until none does.
        while let Some(at) = out.iter().position(|o| !o.intersect(&b).is_empty()) {
            b = b.union(&out.swap_remove(at));
        }
        out.push(b);
    }
    if out.len() > MAX_BOXES {
        let all = out.iter().fold(PxRect::default(), |u, b| u.union(b));
        return vec![all];
    }
    // Top to bottom, left to right: the same commands for the same frame every time.
    out.sort_by_key(|b| (b.y, b.x));
    out
}
