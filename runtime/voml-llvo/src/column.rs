//! Lines drawn one at a time, decimated per pixel column: a visual object that draws a segment
//! per record (the paper's line plot, a trace's counters) over a world wider than its window
//! draws many segments in each pixel column. Once the connected segments of one series have
//! painted a column from one row to another, a further segment of that series inside the
//! same column and between those rows adds nothing a person could see; it does not reach the
//! back end. Segments that reach a new row in the column are drawn as they are, so that peaks
//! stay visible.
//!
//! A series is the chain of lines of one owner's frame, in one style, each starting where the
//! previous one ended. What a series has painted is forgotten whenever the pixels may have
//! changed under it: another kind of primitive drawn in the view, a scroll, rescale, resize,
//! clear or undraw. Dashed lines are never decimated (their dashes follow the path's length).

use crate::backend::Mark;
use crate::geom::{floor_i64, Point, WorldMap};
use crate::primitive::{Primitive, Style};

/// Series followed at once in one view (the oldest is forgotten past it).
const SERIES_KEPT: usize = 16;

/// What one series has painted in the pixel column its last line ended in.
#[derive(Debug, Clone)]
struct Series {
    mark: Mark,
    style: Style,
    /// The world mapping the column was painted with.
    map: WorldMap,
    column: i64,
    /// Pixel rows painted (continuous positions, top and bottom).
    top: f64,
    bottom: f64,
    /// Where the last line ended, in world coordinates.
    end: Point,
}

/// The series of one view.
#[derive(Debug, Default)]
pub(crate) struct Columns {
    series: Vec<Series>,
    /// Lines that did not reach the back end.
    pub(crate) skipped: u64,
}

impl Columns {
    /// Whether `prim`, about to be drawn with `style` under `mark` in a view mapped by `map`,
    /// adds nothing to the pixels its series painted (then it is not drawn); notes what it
    /// paints otherwise. Primitives other than solid lines are left alone, and those that are
    /// not strokes make the view forget its series (they may paint over them). A line's ends
    /// in pixels are `px` ([`WorldMap::line_px`]).
    pub(crate) fn skips(
        &mut self,
        prim: &Primitive,
        style: &Style,
        mark: Mark,
        map: &WorldMap,
        px: Option<[(f64, f64); 2]>,
    ) -> bool {
        let (from, to) = match prim {
            Primitive::Line { from, to } if style.dash.is_empty() => (*from, *to),
            Primitive::Line { .. } | Primitive::Polyline { .. } | Primitive::Arc { .. } => {
                return false
            }
            _ => {
                self.forget();
                return false;
            }
        };
        let Some([(x0, y0), (x1, y1)]) = px else {
            return false;
        };
        let column = floor_i64(x1);
        let within = floor_i64(x0) == column;
        let (top, bottom) = (y0.min(y1), y0.max(y1));
        // What it paints in the column its line ends in: that line's part there, or (when it
        // crosses columns) its end.
        let painted = if within { (top, bottom) } else { (y1, y1) };
        // The series this line continues: same frame, same style, starting where it ended.
        let found = self
            .series
            .iter()
            .position(|s| s.end == from && s.mark == mark && s.style == *style);
        if let Some(at) = found {
            let s = &mut self.series[at];
            s.end = to;
            if s.map == *map && within && s.column == column {
                // Rows, not positions: a segment that reaches a little further within a
                // row already painted adds nothing to see.
                if s.top.floor() <= top.floor() && bottom.floor() <= s.bottom.floor() {
                    self.skipped += 1;
                    return true;
                }
                s.top = s.top.min(top);
                s.bottom = s.bottom.max(bottom);
                return false;
            }
            // It left its column: it becomes the latest series, where it is not the first
            // forgotten.
            (s.map, s.column) = (*map, column);
            (s.top, s.bottom) = painted;
            self.series[at..].rotate_left(1);
            return false;
        }
        // A new series.
        let (top, bottom) = painted;
        if self.series.len() == SERIES_KEPT {
            self.series.remove(0);
        }
        self.series.push(Series {
            mark,
            style: style.clone(),
            map: *map,
            column,
            top,
            bottom,
            end: to,
        });
        false
    }

    /// The pixels may have changed under every series.
    pub(crate) fn forget(&mut self) {
        self.series.clear();
    }
}
