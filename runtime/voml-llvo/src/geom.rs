//! Pixel rectangles and the world-to-pixel mapping of a view.

use serde::{Deserialize, Serialize};

/// A point in world coordinates (y grows upwards).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    /// World x.
    pub x: f64,
    /// World y.
    pub y: f64,
}

impl Point {
    /// A point.
    pub const fn new(x: f64, y: f64) -> Point {
        Point { x, y }
    }

    pub(crate) fn is_finite(&self) -> bool {
        self.x.is_finite() && self.y.is_finite()
    }
}

impl From<(f64, f64)> for Point {
    fn from((x, y): (f64, f64)) -> Point {
        Point { x, y }
    }
}

/// A rectangle of whole pixels: x grows rightwards, y downwards, origin at
/// the window's top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct PxRect {
    /// Left edge.
    pub x: i32,
    /// Top edge.
    pub y: i32,
    /// Width.
    pub w: u32,
    /// Height.
    pub h: u32,
}

impl PxRect {
    /// A rectangle.
    pub const fn new(x: i32, y: i32, w: u32, h: u32) -> PxRect {
        PxRect { x, y, w, h }
    }

    /// No pixels at all.
    pub fn is_empty(&self) -> bool {
        self.w == 0 || self.h == 0
    }

    /// One past the right edge.
    pub fn right(&self) -> i64 {
        i64::from(self.x) + i64::from(self.w)
    }

    /// One past the bottom edge.
    pub fn bottom(&self) -> i64 {
        i64::from(self.y) + i64::from(self.h)
    }

    /// The pixels both rectangles cover (empty if none).
    pub fn intersect(&self, other: &PxRect) -> PxRect {
        let x0 = i64::from(self.x).max(i64::from(other.x));
        let y0 = i64::from(self.y).max(i64::from(other.y));
        let x1 = self.right().min(other.right());
        let y1 = self.bottom().min(other.bottom());
        if x1 <= x0 || y1 <= y0 {
            return PxRect::default();
        }
        PxRect::new(x0 as i32, y0 as i32, (x1 - x0) as u32, (y1 - y0) as u32)
    }

    /// The smallest rectangle holding both (an empty one holds nothing).
    pub fn union(&self, other: &PxRect) -> PxRect {
        if self.is_empty() {
            return *other;
        }
        if other.is_empty() {
            return *self;
        }
        let x0 = i64::from(self.x).min(i64::from(other.x));
        let y0 = i64::from(self.y).min(i64::from(other.y));
        let x1 = self.right().max(other.right());
        let y1 = self.bottom().max(other.bottom());
        PxRect::from_i64(x0, y0, x1, y1)
    }

    /// The whole pixels touched by a real-valued box (x0 <= x1, y0 <= y1),
    /// saturating at the i32 range so huge numbers cannot overflow.
    pub fn covering(x0: f64, y0: f64, x1: f64, y1: f64) -> PxRect {
        let lim = f64::from(i32::MAX / 2);
        let c = |v: f64| if v.is_nan() { 0.0 } else { v.clamp(-lim, lim) };
        let (x0, y0) = (floor_i64(c(x0)), floor_i64(c(y0)));
        let (x1, y1) = (ceil_i64(c(x1)).max(x0), ceil_i64(c(y1)).max(y0));
        // (What `from_i64` would do: the sides are within +-2^30, so nothing is clamped.)
        PxRect::new(x0 as i32, y0 as i32, (x1 - x0) as u32, (y1 - y0) as u32)
    }

    /// The same rectangle grown by `by` pixels on every side.
    pub fn inflate(&self, by: u32) -> PxRect {
        if self.is_empty() {
            return *self;
        }
        let b = i64::from(by);
        PxRect::from_i64(
            i64::from(self.x) - b,
            i64::from(self.y) - b,
            self.right() + b,
            self.bottom() + b,
        )
    }

    /// The same rectangle moved.
    pub fn translate(&self, dx: i64, dy: i64) -> PxRect {
        PxRect::from_i64(
            i64::from(self.x) + dx,
            i64::from(self.y) + dy,
            self.right() + dx,
            self.bottom() + dy,
        )
    }

    pub(crate) fn from_i64(x0: i64, y0: i64, x1: i64, y1: i64) -> PxRect {
        let lo = i64::from(i32::MIN);
        let hi = i64::from(i32::MAX);
        let (x0, y0) = (x0.clamp(lo, hi), y0.clamp(lo, hi));
        let (x1, y1) = (x1.clamp(x0, hi), y1.clamp(y0, hi));
        PxRect::new(
            x0 as i32,
            y0 as i32,
            (x1 - x0).min(i64::from(u32::MAX)) as u32,
            (y1 - y0).min(i64::from(u32::MAX)) as u32,
        )
    }
}

/// `v.floor() as i64`, for every `v` (NaN, infinities and the saturation included), without
/// a call into the maths library: the baseline x86-64 has no rounding instruction, and every
/// command's pixel box rounds four numbers.
pub(crate) fn floor_i64(v: f64) -> i64 {
    // The cast truncates towards zero (and saturates); below a negative non-integer, one less.
    let t = v as i64;
    t.saturating_sub(i64::from(t as f64 > v))
}

/// `v.ceil() as i64`, for every `v`, as [`floor_i64`].
pub(crate) fn ceil_i64(v: f64) -> i64 {
    let t = v as i64;
    t.saturating_add(i64::from((t as f64) < v))
}

/// The mapping from a view's world rectangle onto its scrollable area.
///
/// World x0 maps to the area's left edge, x1 to its right edge; world y0 to
/// the area's *bottom* edge and y1 to its top edge (y grows upwards in the
/// world, downwards on the screen). Reversed ranges (x0 > x1) mirror.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorldMap {
    /// The scrollable area: the window minus the margins.
    pub area: PxRect,
    /// x0 x1 y0 y1.
    pub world: [f64; 4],
}

impl WorldMap {
    /// The mapping of a window of `window` pixels with `margins` (left right
    /// top bottom) showing `world` (x0 x1 y0 y1). Margins wider than the
    /// window leave an empty area.
    pub fn new(window: (u32, u32), margins: [u32; 4], world: [f64; 4]) -> WorldMap {
        let [l, r, t, b] = margins;
        let w = window.0.saturating_sub(l.saturating_add(r));
        let h = window.1.saturating_sub(t.saturating_add(b));
        let x = l.min(window.0).min(i32::MAX as u32) as i32;
        let y = t.min(window.1).min(i32::MAX as u32) as i32;
        WorldMap {
            area: PxRect::new(x, y, w, h),
            world,
        }
    }

    /// Pixels per world unit along x and y (y positive: one world unit up is
    /// this many pixels up).
    pub fn scale(&self) -> (f64, f64) {
        let [x0, x1, y0, y1] = self.world;
        (
            f64::from(self.area.w) / (x1 - x0),
            f64::from(self.area.h) / (y1 - y0),
        )
    }

    /// World point to pixel position (continuous: pixel (i, j) covers
    /// [i, i+1) x [j, j+1)).
    pub fn to_px(&self, p: Point) -> (f64, f64) {
        let [x0, _, _, y1] = self.world;
        let (sx, sy) = self.scale();
        (
            f64::from(self.area.x) + (p.x - x0) * sx,
            f64::from(self.area.y) + (y1 - p.y) * sy,
        )
    }

    /// Both ends of a line in pixels, as [`WorldMap::to_px`] gives them, when all four
    /// numbers are finite (which they are not for points that are not, or that are too large
    /// for the mapping).
    pub(crate) fn line_px(&self, from: Point, to: Point) -> Option<[(f64, f64); 2]> {
        let (a, b) = (self.to_px(from), self.to_px(to));
        (a.0.is_finite() && a.1.is_finite() && b.0.is_finite() && b.1.is_finite()).then_some([a, b])
    }

    /// Pixel position to world point; the inverse of [`WorldMap::to_px`].
    pub fn to_world(&self, px: f64, py: f64) -> Point {
        let [x0, _, _, y1] = self.world;
        let (sx, sy) = self.scale();
        Point::new(
            x0 + (px - f64::from(self.area.x)) / sx,
            y1 - (py - f64::from(self.area.y)) / sy,
        )
    }

    /// A world distance along x in pixels (absolute).
    pub fn dx_px(&self, d: f64) -> f64 {
        (d * self.scale().0).abs()
    }

    /// A world distance along y in pixels (absolute).
    pub fn dy_px(&self, d: f64) -> f64 {
        (d * self.scale().1).abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9
    }

    #[test]
    fn world_corners_map_to_area_corners() {
        // The paper's Figure 10 view, with margins added.
        let m = WorldMap::new((700, 700), [50, 10, 20, 30], [-10.0, 110.0, -10.0, 120.0]);
        assert_eq!(m.area, PxRect::new(50, 20, 640, 650));
        assert!(close(m.to_px(Point::new(-10.0, -10.0)), (50.0, 670.0)));
        assert!(close(m.to_px(Point::new(110.0, 120.0)), (690.0, 20.0)));
        assert!(close(
            m.to_px(Point::new(50.0, 55.0)),
            (50.0 + 320.0, 20.0 + 325.0)
        ));
    }

    #[test]
    fn y_grows_upwards() {
        let m = WorldMap::new((100, 100), [0; 4], [0.0, 1.0, 0.0, 1.0]);
        let (_, low) = m.to_px(Point::new(0.5, 0.1));
        let (_, high) = m.to_px(Point::new(0.5, 0.9));
        assert!(high < low);
    }

    #[test]
    fn inverse_round_trips() {
        let m = WorldMap::new((333, 217), [7, 3, 11, 5], [3.5, -2.0, 100.0, 1e6]);
        for p in [
            Point::new(0.0, 0.0),
            Point::new(1.25, 5e5),
            Point::new(-7.0, 3.0),
        ] {
            let (px, py) = m.to_px(p);
            let q = m.to_world(px, py);
            assert!(
                (p.x - q.x).abs() < 1e-9 && (p.y - q.y).abs() < 1e-6,
                "{p:?} {q:?}"
            );
        }
    }

    #[test]
    fn margins_wider_than_window_leave_empty_area() {
        let m = WorldMap::new((10, 10), [8, 8, 0, 0], [0.0, 1.0, 0.0, 1.0]);
        assert!(m.area.is_empty());
        // Degenerate, but no panic and no NaN pixel positions escape as UB.
        let _ = m.to_px(Point::new(0.5, 0.5));
    }

    #[test]
    fn integer_floor_and_ceil_are_the_library_ones() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            1.5,
            -1.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::EPSILON,
            -f64::EPSILON,
            9.223372036854775e18,
            -9.223372036854775e18,
            9.223372036854776e18,
            -9.223372036854776e18,
            4503599627370495.5,
            -4503599627370495.5,
            4503599627370496.0,
            1e300,
            -1e300,
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bits = f64::from_bits(x);
            let scaled = (x >> 11) as f64 / (1u64 << 53) as f64 * 4000.0 - 2000.0;
            values.extend([bits, scaled, scaled.round(), scaled.round() + 0.5]);
        }
        for v in values {
            assert_eq!(floor_i64(v), v.floor() as i64, "floor {v:e}");
            assert_eq!(ceil_i64(v), v.ceil() as i64, "ceil {v:e}");
        }
    }

    #[test]
    fn rect_ops() {
        let a = PxRect::new(0, 0, 10, 10);
        let b = PxRect::new(5, -5, 10, 10);
        assert_eq!(a.intersect(&b), PxRect::new(5, 0, 5, 5));
        assert_eq!(a.union(&b), PxRect::new(0, -5, 15, 15));
        assert!(a.intersect(&PxRect::new(20, 20, 1, 1)).is_empty());
        assert_eq!(
            PxRect::covering(0.5, 0.5, 2.1, 3.0),
            PxRect::new(0, 0, 3, 3)
        );
        let huge = PxRect::covering(-1e300, f64::NAN, 1e300, 1e300);
        assert!(!huge.is_empty());
        assert_eq!(a.inflate(2), PxRect::new(-2, -2, 14, 14));
    }
}
