//! Scrolling without moving pixels: the scrollable area of a view that scrolls is kept in a
//! ring of pixels longer than the window, and a scroll moves where the window begins in it.
//!
//! A streaming plot scrolls by a few pixels for nearly every sample; moving the whole area
//! each time cost more than everything else the plot did. With the store, a scroll only
//! clears the strip it exposes, the window's pixels are moved once every `slack` pixels of
//! scrolling (back to the middle of the store), and the area is copied to the window's
//! pixmap when a picture is taken.
//!
//! The window is a run of `width * height` pixels of the store, with the window's own row
//! length, so the rasteriser sees a pixmap of exactly the window's size and paints every
//! command as it would on the window's pixmap. Scrolling the content by (dx, dy) makes the
//! run begin `dx + dy * width` pixels earlier: every pixel of the area then shows what was
//! (dx, dy) pixels away from it, except the pixels a scroll exposes, which are filled, and
//! the margins, whose pixels in the store are never shown (the window's pixmap keeps them).

use tiny_skia::{Pixmap, PixmapMut};

use crate::geom::PxRect;

/// Most slack on each side of the window, in pixels (16 MiB each).
const MAX_SLACK: usize = 1 << 22;

/// The scrollable area's pixels of one view, in a ring with slack around the window.
pub(crate) struct ScrollStore {
    /// The scrollable area, in window pixels.
    area: PxRect,
    /// The window's size.
    window: (u32, u32),
    /// Pixels on each side of the window's run: half the window's, at most [`MAX_SLACK`].
    slack: usize,
    /// Where the window's run begins, in pixels.
    start: usize,
    /// RGBA, premultiplied: `window pixels + 2 * slack` pixels.
    pixels: Vec<u8>,
    /// The window's pixmap shows the area as the store holds it (nothing was painted or
    /// moved since it was copied there).
    composed: bool,
}

impl ScrollStore {
    /// A store for `area` of `window`, holding the area's pixels as they are now.
    pub(crate) fn new(window: &Pixmap, area: PxRect) -> Option<ScrollStore> {
        let size = (window.width(), window.height());
        let area = area.intersect(&PxRect::new(0, 0, size.0, size.1));
        if area.is_empty() {
            return None;
        }
        let n = size.0 as usize * size.1 as usize;
        let slack = (n / 2).clamp(1, MAX_SLACK);
        let mut pixels = vec![0u8; (n + 2 * slack) * 4];
        pixels[slack * 4..(slack + n) * 4].copy_from_slice(window.data());
        Some(ScrollStore {
            area,
            window: size,
            slack,
            start: slack,
            pixels,
            composed: true,
        })
    }

    /// The area this store holds.
    pub(crate) fn area(&self) -> PxRect {
        self.area
    }

    /// The window's pixmap no longer shows the area as the store holds it (something was
    /// painted on the window's pixmap over the area).
    pub(crate) fn touched(&mut self) {
        self.composed = false;
    }

    fn run(&self) -> std::ops::Range<usize> {
        let n = self.window.0 as usize * self.window.1 as usize;
        self.start * 4..(self.start + n) * 4
    }

    /// The window's run of the store, as a pixmap of the window's size: its pixels of the
    /// scrollable area are the area's.
    pub(crate) fn canvas(&mut self) -> PixmapMut<'_> {
        self.composed = false;
        let run = self.run();
        PixmapMut::from_bytes(&mut self.pixels[run], self.window.0, self.window.1)
            .expect("the run is the window's size")
    }

    /// The window's run of the store, read only: the area's pixels, addressed as the window's.
    pub(crate) fn window_bytes(&self) -> &[u8] {
        &self.pixels[self.run()]
    }

    /// Moves the area's content by (dx, dy) pixels: the window's run now begins that much
    /// earlier. Returns the strips of the area the shift exposed, in window pixels, for the
    /// caller to fill; `None` when the shift exposes the whole area or is larger than the
    /// slack (the caller moves the pixels itself).
    pub(crate) fn shift(&mut self, dx: i32, dy: i32) -> Option<[PxRect; 2]> {
        let a = self.area;
        let (dx, dy) = (i64::from(dx), i64::from(dy));
        if dx.abs() >= i64::from(a.w) || dy.abs() >= i64::from(a.h) {
            return None;
        }
        let by = dx + dy * i64::from(self.window.0);
        let slack = self.slack as i64;
        if by.abs() > slack {
            return None;
        }
        let mut start = self.start as i64 - by;
        if !(0..=2 * slack).contains(&start) {
            // Back to the middle: one move of the window's run, once per `slack` pixels.
            let run = self.run();
            self.pixels.copy_within(run, self.slack * 4);
            start = slack - by;
        }
        self.start = start as usize;
        self.composed = false;
        let columns = match dx.signum() {
            1 => PxRect::from_i64(
                i64::from(a.x),
                i64::from(a.y),
                i64::from(a.x) + dx,
                a.bottom(),
            ),
            -1 => PxRect::from_i64(a.right() + dx, i64::from(a.y), a.right(), a.bottom()),
            _ => PxRect::default(),
        };
        let rows = match dy.signum() {
            1 => PxRect::from_i64(
                i64::from(a.x),
                i64::from(a.y),
                a.right(),
                i64::from(a.y) + dy,
            ),
            -1 => PxRect::from_i64(i64::from(a.x), a.bottom() + dy, a.right(), a.bottom()),
            _ => PxRect::default(),
        };
        Some([columns, rows])
    }

    /// Copies the area to the window's pixmap, if it changed since it was last copied.
    pub(crate) fn compose(&mut self, window: &mut Pixmap) {
        if self.composed {
            return;
        }
        self.composed = true;
        let a = self.area;
        let width = self.window.0 as usize;
        let run = &self.pixels[self.run()];
        let dst = window.data_mut();
        let n = a.w as usize * 4;
        for y in a.y as usize..a.bottom() as usize {
            let at = (y * width + a.x as usize) * 4;
            dst[at..at + n].copy_from_slice(&run[at..at + n]);
        }
    }
}
