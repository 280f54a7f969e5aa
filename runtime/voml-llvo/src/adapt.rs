//! Quantitative adaptation (the paper's §2.1): the per-view state that
//! decides how far a view scrolls or rescales for adaptive primitives, and
//! the bounded memory of extreme points that lets it zoom back in.
//!
//! The view's world rectangle is always a function of two things:
//!
//! * the *base* rectangle: the world the view was opened (or explicitly
//!   rescaled) with, moved along by every scroll;
//! * per rescaling side, the remembered extreme points that lie beyond the
//!   base on that side and whose position along the other axis is still
//!   inside the world (still in the scrollable area).
//!
//! On a rescaling side the edge is the base edge or the most extreme
//! remembered point, whichever is further out; every other edge is the
//! base edge. Zooming out for a peak and zooming back in once it has
//! scrolled away are the same rule applied before and after the peak.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::{Excluded, Unbounded};

use crate::geom::Point;
use crate::primitive::{Primitive, Style};
use crate::view::{AdaptMode, Adaptation};

/// A totally ordered f64 (the values used are never NaN).
#[derive(Debug, Clone, Copy)]
struct F(f64);

impl PartialEq for F {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for F {}

impl PartialOrd for F {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for F {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// One remembered extreme: a closed interval of positions along the key
/// axis and the most extreme value seen there.
#[derive(Debug, Clone, Copy)]
struct Span {
    hi: F,
    value: F,
}

/// The extreme points of one side of a view, at most `cap` of them.
///
/// Keys are positions along the axis the side does not adapt (x for the
/// y sides); values are coordinates along the adapted axis, stored so that
/// larger is more extreme. When full, two neighbouring entries are merged
/// into one interval that keeps the larger value, so the global extreme is
/// always exact and an extreme is forgotten only once its whole interval
/// has left the window: zooming back in may come late, never too early.
///
/// Which pair is merged: one that adds no delay if there is one, else the
/// narrowest. Merging adds no delay when the larger value belongs to the
/// entry that leaves the window last: for windows moving towards larger
/// keys (`forward`), the right one; towards smaller keys (`backward`), the
/// left one. A temporal plot therefore keeps exactly the values that can
/// still become the maximum (a monotonic sequence) as long as they fit,
/// and otherwise an interval is never wider than 2/(cap - 2) of the
/// window plus what it pokes out of it.
///
/// Every update is logarithmic: three ordered trees (entries by position,
/// neighbouring pairs by cost, values) are kept in step.
#[derive(Debug, Clone)]
pub(crate) struct Extremes {
    cap: usize,
    forward: bool,
    backward: bool,
    entries: BTreeMap<F, Span>,
    /// (delay a merge may add, width of the union, position of the left).
    pairs: BTreeSet<(F, F, F)>,
    /// Multiset of the entries' values.
    values: BTreeMap<F, u32>,
}

impl Extremes {
    pub(crate) fn new(cap: usize, forward: bool, backward: bool) -> Extremes {
        Extremes {
            cap: cap.max(1),
            forward,
            backward,
            entries: BTreeMap::new(),
            pairs: BTreeSet::new(),
            values: BTreeMap::new(),
        }
    }

    /// Entries held (never more than the cap).
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.pairs.clear();
        self.values.clear();
    }

    /// The most extreme value held.
    pub(crate) fn extreme(&self) -> Option<f64> {
        self.values.last_key_value().map(|(v, _)| v.0)
    }

    fn prev(&self, lo: F) -> Option<(F, Span)> {
        self.entries.range(..lo).next_back().map(|(k, s)| (*k, *s))
    }

    fn next(&self, lo: F) -> Option<(F, Span)> {
        self.entries
            .range((Excluded(lo), Unbounded))
            .next()
            .map(|(k, s)| (*k, *s))
    }

    fn pair(&self, left: (F, Span), right: Span) -> (F, F, F) {
        let width = right.hi.0 - left.0 .0;
        let late = (self.forward && left.1.value > right.value)
            || (self.backward && right.value > left.1.value);
        (F(if late { width } else { 0.0 }), F(width), left.0)
    }

    fn value_add(&mut self, v: F) {
        *self.values.entry(v).or_insert(0) += 1;
    }

    fn value_remove(&mut self, v: F) {
        if let Some(n) = self.values.get_mut(&v) {
            *n -= 1;
            if *n == 0 {
                self.values.remove(&v);
            }
        }
    }

    fn add(&mut self, lo: F, s: Span) {
        let (prev, next) = (self.prev(lo), self.next(lo));
        if let (Some(p), Some((_, n))) = (prev, next) {
            self.pairs.remove(&self.pair(p, n));
        }
        if let Some(p) = prev {
            self.pairs.insert(self.pair(p, s));
        }
        if let Some((_, n)) = next {
            self.pairs.insert(self.pair((lo, s), n));
        }
        self.entries.insert(lo, s);
        self.value_add(s.value);
    }

    fn remove(&mut self, lo: F) -> Option<Span> {
        let s = self.entries.remove(&lo)?;
        self.value_remove(s.value);
        let (prev, next) = (self.prev(lo), self.next(lo));
        if let Some(p) = prev {
            self.pairs.remove(&self.pair(p, s));
        }
        if let Some((_, n)) = next {
            self.pairs.remove(&self.pair((lo, s), n));
        }
        if let (Some(p), Some((_, n))) = (prev, next) {
            self.pairs.insert(self.pair(p, n));
        }
        Some(s)
    }

    /// Remembers `value` at `key` (both finite); whether anything changed.
    pub(crate) fn insert(&mut self, key: f64, value: f64) -> bool {
        // -0.0 and 0.0 are one position.
        let (k, v) = (F(key + 0.0), F(value + 0.0));
        if let Some((&lo, &s)) = self.entries.range(..=k).next_back() {
            if s.hi >= k {
                if v > s.value {
                    // The costs of its pairs change with the value.
                    self.remove(lo);
                    self.add(lo, Span { hi: s.hi, value: v });
                    return true;
                }
                return false;
            }
        }
        self.add(k, Span { hi: k, value: v });
        while self.entries.len() > self.cap {
            self.merge_cheapest();
        }
        true
    }

    fn merge_cheapest(&mut self) {
        let Some(&(_, _, left)) = self.pairs.first() else {
            return;
        };
        let Some((right, _)) = self.next(left) else {
            return;
        };
        let (Some(l), Some(r)) = (self.remove(left), self.remove(right)) else {
            return;
        };
        self.add(
            left,
            Span {
                hi: r.hi,
                value: l.value.max(r.value),
            },
        );
    }

    /// Forgets the entries lying entirely outside `lo..=hi`; whether there were any.
    pub(crate) fn prune(&mut self, lo: f64, hi: f64) -> bool {
        let before = self.entries.len();
        while let Some((&k, s)) = self.entries.first_key_value() {
            if s.hi.0 >= lo {
                break;
            }
            self.remove(k);
        }
        while let Some((&k, _)) = self.entries.last_key_value() {
            if k.0 <= hi {
                break;
            }
            self.remove(k);
        }
        self.entries.len() != before
    }

    #[cfg(test)]
    fn check(&self) {
        assert!(self.entries.len() <= self.cap);
        assert_eq!(self.pairs.len(), self.entries.len().saturating_sub(1));
        assert_eq!(
            self.values.values().map(|n| *n as usize).sum::<usize>(),
            self.entries.len()
        );
        let mut last: Option<(F, Span)> = None;
        for (&k, &s) in &self.entries {
            assert!(k <= s.hi);
            if let Some(l) = last {
                assert!(l.1.hi < k, "overlapping intervals");
                assert!(self.pairs.contains(&self.pair(l, s)));
            }
            last = Some((k, s));
        }
    }
}

/// The sides in [`AdaptState::sides`] order.
const SIDES: usize = 4;

/// Which axis a side adapts (0 = x, 1 = y) and whether it is the far side.
fn side_axis(side: usize) -> (usize, bool) {
    (side / 2, side & 1 == 0)
}

fn modes(a: &Adaptation) -> [Option<AdaptMode>; SIDES] {
    [a.x_plus, a.x_minus, a.y_plus, a.y_minus]
}

/// The (smaller, larger) ends of a world rectangle along an axis.
pub(crate) fn range(world: &[f64; 4], axis: usize) -> (f64, f64) {
    let (a, b) = (world[2 * axis], world[2 * axis + 1]);
    (a.min(b), a.max(b))
}

/// Sets the ends of an axis, keeping a mirrored axis mirrored.
pub(crate) fn set_range(world: &mut [f64; 4], axis: usize, lo: f64, hi: f64) {
    if world[2 * axis] <= world[2 * axis + 1] {
        world[2 * axis] = lo;
        world[2 * axis + 1] = hi;
    } else {
        world[2 * axis] = hi;
        world[2 * axis + 1] = lo;
    }
}

fn coord(p: Point, axis: usize) -> f64 {
    if axis == 0 {
        p.x
    } else {
        p.y
    }
}

/// Adaptation state of one view.
#[derive(Debug, Clone)]
pub(crate) struct AdaptState {
    modes: [Option<AdaptMode>; SIDES],
    /// The un-zoomed world: as opened or explicitly rescaled, moved along
    /// by scrolling.
    pub(crate) base: [f64; 4],
    /// Remembered extremes of the rescaling sides (x+, x-, y+, y-).
    sides: [Option<Extremes>; SIDES],
    /// Bumped whenever the base or the extremes change: settling twice with the same
    /// revision, window and world gives the same answer.
    revision: u64,
}

impl AdaptState {
    /// `quality` is shared evenly by the rescaling sides.
    pub(crate) fn new(adapt: &Adaptation, quality: u32, world: [f64; 4]) -> AdaptState {
        let modes = modes(adapt);
        let n = modes
            .iter()
            .filter(|m| **m == Some(AdaptMode::Rescale))
            .count()
            .max(1);
        let cap = (quality as usize / n).max(1);
        let mut sides: [Option<Extremes>; SIDES] = Default::default();
        for (side, slot) in sides.iter_mut().enumerate() {
            if modes[side] != Some(AdaptMode::Rescale) {
                continue;
            }
            // Which ways the window moves along the key axis: the ways it
            // scrolls adaptively, or both when it does not (the program
            // may still scroll it).
            let key = 1 - side_axis(side).0;
            let forward = modes[2 * key] == Some(AdaptMode::Scroll);
            let backward = modes[2 * key + 1] == Some(AdaptMode::Scroll);
            let both = !forward && !backward;
            *slot = Some(Extremes::new(cap, forward || both, backward || both));
        }
        AdaptState {
            modes,
            base: world,
            sides,
            revision: 0,
        }
    }

    pub(crate) fn rescales(&self) -> bool {
        self.sides.iter().any(Option::is_some)
    }

    /// Extreme points held, all sides together.
    pub(crate) fn len(&self) -> usize {
        self.sides.iter().flatten().map(Extremes::len).sum()
    }

    /// A new base (explicit rescale); what was remembered is gone with the
    /// pixels.
    pub(crate) fn reset(&mut self, world: [f64; 4]) {
        self.base = world;
        self.forget();
    }

    pub(crate) fn forget(&mut self) {
        for e in self.sides.iter_mut().flatten() {
            e.clear();
        }
        self.revision += 1;
    }

    /// See the field.
    pub(crate) fn revision(&self) -> u64 {
        self.revision
    }

    pub(crate) fn shift(&mut self, dx: f64, dy: f64) {
        self.revision += 1;
        self.base[0] += dx;
        self.base[1] += dx;
        self.base[2] += dy;
        self.base[3] += dy;
    }

    /// World distance to scroll so that `bounds` (x0 x1 y0 y1, ordered)
    /// is inside `world` as far as the scrolling sides allow: just enough
    /// to bring the far edge in, else the near one.
    pub(crate) fn scroll_for(&self, world: &[f64; 4], bounds: &[f64; 4]) -> (f64, f64) {
        let d = |axis: usize| {
            let (lo, hi) = range(world, axis);
            let (blo, bhi) = (bounds[2 * axis], bounds[2 * axis + 1]);
            if bhi > hi && self.modes[2 * axis] == Some(AdaptMode::Scroll) {
                bhi - hi
            } else if blo < lo && self.modes[2 * axis + 1] == Some(AdaptMode::Scroll) {
                blo - lo
            } else {
                0.0
            }
        };
        (d(0), d(1))
    }

    /// `world` grown on its rescaling sides until it holds `bounds`.
    pub(crate) fn grow_to(&self, world: &mut [f64; 4], bounds: &[f64; 4]) {
        for axis in 0..2 {
            let (mut lo, mut hi) = range(world, axis);
            if self.sides[2 * axis].is_some() {
                hi = hi.max(bounds[2 * axis + 1]);
            }
            if self.sides[2 * axis + 1].is_some() {
                lo = lo.min(bounds[2 * axis]);
            }
            set_range(world, axis, lo, hi);
        }
    }

    /// Remembers a point of an adaptive primitive on every rescaling side
    /// it lies beyond the base of (points inside the base never move an
    /// edge).
    pub(crate) fn remember(&mut self, p: Point) {
        for side in 0..SIDES {
            let Some(e) = self.sides[side].as_mut() else {
                continue;
            };
            let (axis, far) = side_axis(side);
            let (lo, hi) = range(&self.base, axis);
            let (v, key) = (coord(p, axis), coord(p, 1 - axis));
            let changed = if far && v > hi {
                e.insert(key, v)
            } else if !far && v < lo {
                e.insert(key, -v)
            } else {
                false
            };
            if changed {
                self.revision += 1;
            }
        }
    }

    /// Forgets the extremes that have left `world` along their key axis.
    pub(crate) fn prune(&mut self, world: &[f64; 4]) {
        for (side, e) in self.sides.iter_mut().enumerate() {
            if let Some(e) = e.as_mut().filter(|e| e.len() > 0) {
                let (lo, hi) = range(world, 1 - side_axis(side).0);
                if e.prune(lo, hi) {
                    self.revision += 1;
                }
            }
        }
    }

    /// The world the remembered extremes call for: each rescaling edge at
    /// the base edge or the most extreme remembered point beyond it; the
    /// other edges as in `world` (where they are base edges).
    pub(crate) fn target(&self, world: &[f64; 4]) -> [f64; 4] {
        let mut w = *world;
        for axis in 0..2 {
            let (mut lo, mut hi) = range(&w, axis);
            let (blo, bhi) = range(&self.base, axis);
            if let Some(e) = &self.sides[2 * axis] {
                hi = e.extreme().map_or(bhi, |v| v.max(bhi));
            }
            if let Some(e) = &self.sides[2 * axis + 1] {
                lo = e.extreme().map_or(blo, |v| (-v).min(blo));
            }
            set_range(&mut w, axis, lo, hi);
        }
        w
    }
}

/// Calls `f` with the points whose bounding box is the primitive's world
/// bounding box and that carry its extremes: vertices of lines and
/// polygons, corners of rectangles and figures, the outermost points of
/// circles, ellipses and arcs, a text's anchor. Returns `false` (without
/// calling `f`) when the primitive cannot be drawn anyway.
pub(crate) fn extreme_points(prim: &Primitive, style: &Style, mut f: impl FnMut(Point)) -> bool {
    // Lines, polylines and polygons are their own points, looked at where they lie (a
    // streaming plot's segments come here twice each); the other shapes' are worked out.
    let worked_out: Vec<Point>;
    let (pts, ok): (&[Point], bool) = match prim {
        Primitive::Line { from, to } => {
            if !(from.is_finite() && to.is_finite()) {
                return false;
            }
            f(*from);
            f(*to);
            return true;
        }
        Primitive::Polyline { points } => (points, points.len() >= 2),
        Primitive::Polygon { points } => (points, points.len() >= 3),
        other => {
            let mut pts = Vec::new();
            let ok = shape_points(other, style, &mut pts);
            worked_out = pts;
            (&worked_out, ok)
        }
    };
    if !ok || pts.is_empty() || !pts.iter().all(Point::is_finite) {
        return false;
    }
    pts.iter().copied().for_each(f);
    true
}

/// The extreme points of a shape other than a line, a polyline or a polygon, pushed on
/// `pts`; false when the shape cannot be drawn.
fn shape_points(prim: &Primitive, style: &Style, pts: &mut Vec<Point>) -> bool {
    match prim {
        // Their own points: [`extreme_points`] reads them where they lie.
        Primitive::Line { .. } | Primitive::Polyline { .. } | Primitive::Polygon { .. } => false,
        Primitive::Rectangle { from, to } => {
            pts.extend([
                *from,
                Point::new(from.x, to.y),
                *to,
                Point::new(to.x, from.y),
            ]);
            true
        }
        Primitive::Circle { center, radius } => {
            conic_points(pts, *center, (radius.abs(), radius.abs()), None);
            true
        }
        Primitive::Ellipse { center, radii } => {
            conic_points(pts, *center, (radii.0.abs(), radii.1.abs()), None);
            true
        }
        Primitive::Arc {
            center,
            radius,
            start_deg,
            extent_deg,
        } => {
            let r = radius.abs();
            conic_points(pts, *center, (r, r), Some((*start_deg, *extent_deg)));
            if style.fill.is_some() {
                pts.push(*center);
            }
            start_deg.is_finite() && extent_deg.is_finite()
        }
        Primitive::Text { at, .. } => {
            pts.push(*at);
            true
        }
        Primitive::Figure {
            world_origin,
            world_extents,
            ..
        } => {
            let (o, e) = (*world_origin, *world_extents);
            pts.extend([
                o,
                Point::new(o.x + e.0, o.y),
                Point::new(o.x, o.y + e.1),
                Point::new(o.x + e.0, o.y + e.1),
            ]);
            true
        }
    }
}

/// The outermost points of an ellipse, or of an arc of it (angles in
/// degrees, counter-clockwise from +x): its ends and the quarter points
/// it passes.
fn conic_points(out: &mut Vec<Point>, c: Point, r: (f64, f64), arc: Option<(f64, f64)>) {
    let at = |deg: f64| {
        let t = deg.to_radians();
        Point::new(c.x + r.0 * t.cos(), c.y + r.1 * t.sin())
    };
    let quarters = |out: &mut Vec<Point>| {
        out.extend([
            Point::new(c.x + r.0, c.y),
            Point::new(c.x, c.y + r.1),
            Point::new(c.x - r.0, c.y),
            Point::new(c.x, c.y - r.1),
        ]);
    };
    match arc {
        Some((start, extent)) if extent.abs() < 360.0 && start.is_finite() => {
            let (a, b) = if extent >= 0.0 {
                (start, start + extent)
            } else {
                (start + extent, start)
            };
            out.push(at(a));
            out.push(at(b));
            let mut q = (a / 90.0).ceil() * 90.0;
            while q <= b {
                // Exact quarter points, free of cos/sin rounding.
                match (q / 90.0).rem_euclid(4.0) as i64 {
                    0 => out.push(Point::new(c.x + r.0, c.y)),
                    1 => out.push(Point::new(c.x, c.y + r.1)),
                    2 => out.push(Point::new(c.x - r.0, c.y)),
                    _ => out.push(Point::new(c.x, c.y - r.1)),
                }
                q += 90.0;
            }
        }
        _ => quarters(out),
    }
}

/// The world bounding box (x0 x1 y0 y1, ordered) of adaptive points.
pub(crate) fn bounds(prim: &Primitive, style: &Style) -> Option<[f64; 4]> {
    if let Primitive::Line { from, to } = prim {
        // Its two points, as the general fold below takes them.
        let (a, b) = (*from, *to);
        return (a.is_finite() && b.is_finite())
            .then(|| [a.x.min(b.x), a.x.max(b.x), a.y.min(b.y), a.y.max(b.y)]);
    }
    let mut b: Option<[f64; 4]> = None;
    let ok = extreme_points(prim, style, |p| {
        b = Some(match b {
            None => [p.x, p.x, p.y, p.y],
            Some([x0, x1, y0, y1]) => [x0.min(p.x), x1.max(p.x), y0.min(p.y), y1.max(p.y)],
        });
    });
    if ok {
        b
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator for tests.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn keeps_the_extreme_per_position() {
        let mut e = Extremes::new(10, true, true);
        e.insert(1.0, 5.0);
        e.insert(1.0, 3.0);
        e.insert(2.0, 4.0);
        e.check();
        assert_eq!(e.len(), 2);
        assert_eq!(e.extreme(), Some(5.0));
        e.prune(1.5, 10.0);
        assert_eq!(e.extreme(), Some(4.0));
        e.prune(0.0, 1.0);
        assert_eq!(e.extreme(), None);
        assert_eq!(e.len(), 0);
    }

    #[test]
    fn bounded_merging_keeps_the_global_extreme() {
        let mut rng = Lcg(7);
        let mut e = Extremes::new(8, true, true);
        let mut max = f64::MIN;
        for i in 0..10_000 {
            let v = rng.next() * 1000.0;
            max = max.max(v);
            e.insert(f64::from(i), v);
            assert!(e.len() <= 8);
            assert_eq!(e.extreme(), Some(max));
        }
        e.check();
    }

    #[test]
    fn merged_intervals_leave_late_never_early() {
        let mut rng = Lcg(3);
        let mut e = Extremes::new(8, true, false);
        let mut all = Vec::new();
        let width = 100.0;
        let mut late = 0;
        for i in 0..6000 {
            let x = f64::from(i);
            // Noise, then a falling trend: there every point may still
            // become the window's maximum, more than 8 fit, and merges
            // must cost delay.
            let v = if i < 3000 {
                rng.next()
            } else {
                10_000.0 - x + rng.next() * 5.0
            };
            all.push((x, v));
            e.insert(x, v);
            let lo = x - width;
            e.prune(lo, x);
            e.check();
            let top = |from: f64| {
                all.iter()
                    .filter(|(k, _)| *k >= from)
                    .map(|p| p.1)
                    .fold(f64::MIN, f64::max)
            };
            let got = e.extreme().unwrap();
            assert!(got >= top(lo), "an extreme left too early");
            // Late by at most 2 / (cap - 2) of the window.
            assert!(got <= top(lo - width / 3.0), "an extreme stayed too long");
            late += usize::from(got > top(lo));
        }
        assert!(late > 0, "the costly merges were not exercised");
    }

    #[test]
    fn arc_points_cover_its_extent() {
        let mut pts = Vec::new();
        conic_points(
            &mut pts,
            Point::new(0.0, 0.0),
            (1.0, 1.0),
            Some((45.0, 90.0)),
        );
        let top = pts.iter().map(|p| p.y).fold(f64::MIN, f64::max);
        assert_eq!(top, 1.0);
        let left = pts.iter().map(|p| p.x).fold(f64::MAX, f64::min);
        assert!((left + 0.5f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn state_targets_follow_base_and_extremes() {
        let a = Adaptation::parse("x+:scroll y+:rescale").unwrap();
        let mut s = AdaptState::new(&a, 16, [0.0, 10.0, 0.0, 100.0]);
        s.remember(Point::new(5.0, 50.0));
        assert_eq!(s.len(), 0);
        s.remember(Point::new(5.0, 160.0));
        assert_eq!(s.target(&[0.0, 10.0, 0.0, 100.0]), [0.0, 10.0, 0.0, 160.0]);
        s.shift(6.0, 0.0);
        s.prune(&[6.0, 16.0, 0.0, 160.0]);
        assert_eq!(s.target(&[6.0, 16.0, 0.0, 160.0]), [6.0, 16.0, 0.0, 100.0]);
        // Mirrored axes stay mirrored.
        let mut w = [10.0, 0.0, 100.0, 0.0];
        set_range(&mut w, 1, -5.0, 120.0);
        assert_eq!(w, [10.0, 0.0, 120.0, -5.0]);
    }
}
