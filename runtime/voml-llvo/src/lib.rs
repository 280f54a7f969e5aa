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

#![warn(missing_docs)]

mod backend;
mod color;
mod error;
mod font;
mod geom;
mod llvo;
mod lower;
mod primitive;
mod raster;
mod view;

pub use backend::{
    Backend, BackendEvent, DrawCmd, NullBackend, PaintMode, PathSeg, PxPath, RgbaPixels,
    StrokeStyle,
};
pub use color::Color;
pub use error::LlvoError;
pub use font::{FontFamily, FontSpec, LineMetrics, MAX_FONT_SIZE};
pub use geom::{Point, PxRect, WorldMap};
pub use llvo::{Llvo, DEFAULT_RECORD_CAP, MAX_WINDOW};
pub use lower::MAX_THICK;
pub use primitive::{ClipMode, HAlign, LineCap, LineJoin, Primitive, Style, VAlign};
pub use raster::RasterBackend;
pub use view::{AdaptMode, Adaptation, InfoItem, ViewInfo, ViewSpec, DEFAULT_QUALITY};

/// A view (one window). Ids are never reused, so a stale id stays invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ViewId(pub u32);

/// An image loaded with [`Llvo::load_image`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ImageId(pub u32);

/// Who drew a primitive: typically one IR component. Undraw works per owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OwnerId(pub u32);

impl OwnerId {
    /// An owner that never undraws and so is never recorded.
    pub const NONE: OwnerId = OwnerId(0);
}
