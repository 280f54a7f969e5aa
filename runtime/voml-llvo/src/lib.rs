//! The low-level visual object (LLVO) layer: views with world coordinates,
//! margins and a scrollable area, the markup's graphical primitives, control
//! methods (scroll, rescale, resize, snapshot), undraw records, and the
//! back-end interface with its first back end, a headless tiny-skia raster.
//!
//! The layering follows the paper's §2.1: the runtime (the high-level visual
//! object) may only assume a memoryless raster device. [`Llvo`] does the
//! device-independent work once (world-to-pixel mapping, clipping, text
//! layout, scrolling arithmetic, undraw bookkeeping) and hands pixel-space
//! [`DrawCmd`]s to a [`Backend`].
//!
//! ```
//! use voml_llvo::{Color, Llvo, OwnerId, Point, Primitive, Style, ViewSpec};
//!
//! let mut llvo = Llvo::headless();
//! let view = llvo
//!     .create_view(ViewSpec::new("v").window(100, 80).world(0.0, 10.0, 0.0, 8.0))
//!     .unwrap();
//! let line = Primitive::Line { from: Point::new(1.0, 1.0), to: Point::new(9.0, 7.0) };
//! llvo.draw(view, OwnerId::NONE, &line, &Style::stroke(Color::parse("red").unwrap(), 3.0))
//!     .unwrap();
//! let png: Vec<u8> = llvo.png(view).unwrap();
//! assert!(png.starts_with(b"\x89PNG"));
//! ```
//!
//! # Quantitative adaptation
//!
//! A view may adapt to what is drawn in it (§2.1 of the paper). Its
//! [`ViewSpec::adapt`] says, for each direction `x+ x- y+ y-`, whether it
//! scrolls or rescales there ([`Adaptation::parse`] reads the markup's
//! `"x+:scroll y+:rescale"`); a primitive drawn with [`Style::adapt`] makes
//! the view adapt *before* it is drawn, so that the primitive's world
//! bounding box (its vertices, corners, outermost points of curves, a
//! text's anchor) is inside the world rectangle:
//!
//! * **Scroll**: the world rectangle moves just far enough; the content of
//!   the scrollable area moves with it, the margins stay as they are (like
//!   [`Llvo::scroll`]). If a primitive is too wide for the window, the
//!   `+` side wins.
//! * **Rescale**: the world rectangle grows just far enough on that side
//!   (zooms out). The pixels of the scrollable area are resampled into the
//!   new mapping: the picture stays, but blurred, so the view is marked for
//!   redraw ([`Llvo::take_redraw`]) and components with
//!   `refresh="rescale"` draw again. Undraw records move with the pixels.
//!
//! **Zooming back in.** The view remembers the points of adaptive
//! primitives that lie beyond its *base* rectangle on a rescaling side
//! (for `y+`, the largest y at each x). The base is the world the view was
//! opened or explicitly [rescaled](Llvo::rescale) with, moved along by
//! every scroll ([`Llvo::base_world`]). Points whose position along the
//! other axis has left the world rectangle are forgotten: their pixels
//! have scrolled out. Each rescaling edge is always at the base edge or
//! at the most extreme remembered point, whichever is further out, so once
//! a peak has scrolled out of a temporal plot the view zooms back in, as
//! far as the remaining points allow and never past the base.
//!
//! **Quality.** [`ViewSpec::quality`] bounds the points remembered (shared
//! by the rescaling sides; [`Llvo::remembered_extremes`]). When full, two
//! neighbouring points merge into an interval that keeps the more extreme
//! value, preferring merges that cannot delay zooming in (the surviving
//! value leaves the window last). The extremes shown are always exact; an
//! extreme may be forgotten late (by at most 2/(q - 2) of the window for
//! q points a side), never early. Updates are logarithmic, and memory
//! does not grow with the length of the run.
//!
//! ```
//! use voml_llvo::{Adaptation, Color, Llvo, OwnerId, Point, Primitive, Style, ViewSpec};
//!
//! let mut llvo = Llvo::headless();
//! let plot = llvo
//!     .create_view(
//!         ViewSpec::new("plot")
//!             .world(0.0, 10.0, 0.0, 100.0)
//!             .adapt(Adaptation::parse("x+:scroll y+:rescale").unwrap()),
//!     )
//!     .unwrap();
//! let style = Style::stroke(Color::BLACK, 1.0).adapt(true);
//! let value = |x: f64| if x == 12.0 { 160.0 } else { 50.0 };
//! for x in 1..=30 {
//!     let (x0, x1) = (f64::from(x - 1), f64::from(x));
//!     let seg = Primitive::Line {
//!         from: Point::new(x0, value(x0)),
//!         to: Point::new(x1, value(x1)),
//!     };
//!     llvo.draw(plot, OwnerId::NONE, &seg, &style).unwrap();
//!     let world = llvo.view_spec(plot).unwrap().world;
//!     // Scrolled just far enough; zoomed out while x = 12 is visible.
//!     assert_eq!(world[1], x1.max(10.0));
//!     assert_eq!(world[3], if (12..=22).contains(&x) { 160.0 } else { 100.0 });
//! }
//! ```

#![warn(missing_docs)]

mod adapt;
mod backend;
mod color;
mod column;
mod command;
mod error;
mod font;
mod geom;
mod hairline;
mod lazy;
mod llvo;
mod llvo_thread;
mod lower;
mod primitive;
mod raster;
mod scroll;
mod shown;
mod view;

use serde::{Deserialize, Serialize};

pub use backend::{
    Backend, BackendEvent, DrawCmd, Mark, NullBackend, PaintMode, PathSeg, PathSegs, PxPath,
    PxRemap, RgbaPixels, Status, StrokeStyle,
};
pub use color::Color;
pub use command::{Command, Recorder};
pub use error::LlvoError;
pub use font::{FontFamily, FontSpec, LineMetrics, MAX_FONT_SIZE};
pub use geom::{Point, PxRect, WorldMap};
pub use lazy::LazyRaster;
pub use llvo::{encode_png, Llvo, DEFAULT_RECORD_CAP, MAX_WINDOW, ORDINARY};
pub use llvo_thread::{LlvoThread, Reached, Read};
pub use lower::MAX_THICK;
pub use primitive::{ClipMode, HAlign, LineCap, LineJoin, Primitive, Style, VAlign};
pub use raster::RasterBackend;
pub use view::{AdaptMode, Adaptation, InfoItem, Undraw, ViewInfo, ViewSpec, DEFAULT_QUALITY};

/// A view (one window). Ids are never reused, so a stale id stays invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ViewId(pub u32);

/// An image loaded with [`Llvo::load_image`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ImageId(pub u32);

/// Who drew a primitive: typically one IR component. Undraw works per owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct OwnerId(pub u32);

impl OwnerId {
    /// An owner that never undraws and so is never recorded.
    pub const NONE: OwnerId = OwnerId(0);
}
