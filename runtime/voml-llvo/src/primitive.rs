//! The graphical primitives of the markup, in world coordinates, and their style.

use serde::{Deserialize, Serialize};
use voml_ir::vocabulary::schema::{word_index, CAP, CLIP, HALIGN, VALIGN};

use crate::color::Color;
use crate::font::FontSpec;
use crate::geom::Point;
use crate::ImageId;

/// Where a primitive may paint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ClipMode {
    /// Only inside the scrollable area (the default).
    #[default]
    Area,
    /// Anywhere in the window, margins included (axes, labels).
    Margin,
}

impl ClipMode {
    /// In the order of the language's words ([`CLIP`]).
    const BY_WORD: [ClipMode; CLIP.len()] = [ClipMode::Area, ClipMode::Margin];

    /// A word of the language's `clip` attribute (`area`, `margin`), spelled exactly as
    /// `voml check` takes it.
    pub fn parse(s: &str) -> Option<ClipMode> {
        word_index(CLIP, s).map(|i| Self::BY_WORD[i])
    }
}

/// How the ends of open lines look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LineCap {
    /// Square, ending exactly at the end point (X11's default).
    #[default]
    Butt,
    /// Half a disc past the end point.
    Round,
    /// Square, half the thickness past the end point.
    Square,
}

impl LineCap {
    /// In the order of the language's words ([`CAP`]).
    const BY_WORD: [LineCap; CAP.len()] = [LineCap::Butt, LineCap::Round, LineCap::Square];

    /// A word of the language's `cap` attribute (`butt`, `round`, `square`), spelled exactly
    /// as `voml check` takes it.
    pub fn parse(s: &str) -> Option<LineCap> {
        word_index(CAP, s).map(|i| Self::BY_WORD[i])
    }
}

/// How the corners of polylines and outlines look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LineJoin {
    /// Sharp (bevelled when very sharp).
    #[default]
    Miter,
    /// Rounded.
    Round,
    /// Cut off.
    Bevel,
}

/// Horizontal text alignment relative to the text's coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HAlign {
    /// Text starts at the point.
    #[default]
    Left,
    /// Text is centred on the point.
    Center,
    /// Text ends at the point.
    Right,
}

impl HAlign {
    /// In the order of the language's words ([`HALIGN`]).
    const BY_WORD: [HAlign; HALIGN.len()] = [HAlign::Left, HAlign::Center, HAlign::Right];

    /// A word of the language's `halign` attribute (`LEFT`, `CENTER`, `RIGHT`), spelled
    /// exactly as `voml check` takes it.
    pub fn parse(s: &str) -> Option<HAlign> {
        word_index(HALIGN, s).map(|i| Self::BY_WORD[i])
    }
}

/// Vertical text alignment relative to the text's coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum VAlign {
    /// The top of the tallest glyphs (the font's ascent) is at the point.
    Top,
    /// The middle between ascent and descent is at the point.
    Center,
    /// The bottom of the descenders is at the point.
    Bottom,
    /// The (first line's) baseline is at the point.
    #[default]
    Baseline,
}

impl VAlign {
    /// In the order of the language's words ([`VALIGN`]).
    const BY_WORD: [VAlign; VALIGN.len()] = [
        VAlign::Top,
        VAlign::Center,
        VAlign::Bottom,
        VAlign::Baseline,
    ];

    /// A word of the language's `valign` attribute (`TOP`, `CENTER`, `BOTTOM`, `BASELINE`),
    /// spelled exactly as `voml check` takes it.
    pub fn parse(s: &str) -> Option<VAlign> {
        word_index(VALIGN, s).map(|i| Self::BY_WORD[i])
    }
}

/// One graphical primitive, in world coordinates of the view it is drawn in.
///
/// Sizes that are lengths on screen (thickness, dashes, font size) are in
/// pixels; positions and extents are in world units. A circle's radius is a
/// world distance along each axis, so with unequal axis scales it shows as
/// an ellipse, as any world-coordinate shape would.
#[derive(Debug, Clone, PartialEq)]
pub enum Primitive {
    /// A straight line.
    Line {
        /// Start.
        from: Point,
        /// End.
        to: Point,
    },
    /// Connected straight lines through the points.
    Polyline {
        /// At least two points.
        points: Vec<Point>,
    },
    /// A closed polygon: filled with `Style::fill` when set, outlined with
    /// `Style::color` unless filled with thickness 0.
    Polygon {
        /// At least three points.
        points: Vec<Point>,
    },
    /// An axis-aligned rectangle between two opposite corners.
    Rectangle {
        /// One corner.
        from: Point,
        /// The opposite corner.
        to: Point,
    },
    /// A circle.
    Circle {
        /// Centre.
        center: Point,
        /// Radius in world units.
        radius: f64,
    },
    /// An axis-aligned ellipse.
    Ellipse {
        /// Centre.
        center: Point,
        /// Radii along x and y, world units.
        radii: (f64, f64),
    },
    /// Part of a circle's outline; with `Style::fill`, a pie slice.
    Arc {
        /// Centre.
        center: Point,
        /// Radius in world units.
        radius: f64,
        /// Start angle in degrees, counter-clockwise from the +x axis.
        start_deg: f64,
        /// Angular extent in degrees, positive counter-clockwise.
        extent_deg: f64,
    },
    /// Text; `Style::color` is its colour. Lines break at '\n'.
    Text {
        /// The anchor point.
        at: Point,
        /// The text.
        content: String,
        /// The font.
        font: FontSpec,
        /// Horizontal alignment relative to `at`.
        halign: HAlign,
        /// Vertical alignment relative to `at`.
        valign: VAlign,
    },
    /// An image (from [`crate::Llvo::load_image`]) or part of it, scaled
    /// onto a world rectangle. The image's top-left pixel lands at the
    /// rectangle's top-left corner: (origin.x, origin.y + extents.1).
    Figure {
        /// The image.
        image: ImageId,
        /// Top-left of the part to draw, in image pixels.
        orig_origin: (f64, f64),
        /// Size of the part in image pixels; (0, 0) means the whole image.
        orig_extents: (f64, f64),
        /// The world rectangle's lower-left corner.
        world_origin: Point,
        /// The world rectangle's width and height.
        world_extents: (f64, f64),
    },
}

impl Primitive {
    /// The markup name of the primitive, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Primitive::Line { .. } => "line",
            Primitive::Polyline { .. } => "polyline",
            Primitive::Polygon { .. } => "polygon",
            Primitive::Rectangle { .. } => "rectangle",
            Primitive::Circle { .. } => "circle",
            Primitive::Ellipse { .. } => "ellipse",
            Primitive::Arc { .. } => "arc",
            Primitive::Text { .. } => "text",
            Primitive::Figure { .. } => "figure",
        }
    }
}

/// How a primitive is painted: the common attributes of the markup.
#[derive(Debug, Clone, PartialEq)]
pub struct Style {
    /// Line, outline or text colour.
    pub color: Color,
    /// Fill colour of closed shapes; `None` draws the outline only.
    pub fill: Option<Color>,
    /// Line thickness in pixels. 0 draws open lines one pixel wide (X11's
    /// "thin line") and leaves filled shapes without an outline.
    pub thick: f64,
    /// Dash pattern, alternating on and off lengths in pixels; empty = solid.
    /// An odd count is repeated once (as SVG does).
    pub dash: Vec<f64>,
    /// Opacity 0..=1, multiplied into `color` and `fill`.
    pub alpha: f64,
    /// Line ends.
    pub cap: LineCap,
    /// Corners.
    pub join: LineJoin,
    /// Where the primitive may paint.
    pub clip: ClipMode,
    /// The paper's adaptation flag: before the primitive is drawn, the
    /// view scrolls or rescales (as its `adapt` settings say) so that the
    /// primitive's world bounding box is inside the world rectangle.
    pub adapt: bool,
}

impl Style {
    /// Whether the style is drawn as it is, with nothing clamped or reported: solid, its
    /// thickness in 0..=[`crate::MAX_THICK`] and its alpha in 0..=1.
    pub fn draws_as_given(&self) -> bool {
        self.dash.is_empty()
            && (0.0..=crate::MAX_THICK).contains(&self.thick)
            && (0.0..=1.0).contains(&self.alpha)
    }
}

impl Default for Style {
    fn default() -> Self {
        Style {
            color: Color::BLACK,
            fill: None,
            thick: 1.0,
            dash: Vec::new(),
            alpha: 1.0,
            cap: LineCap::Butt,
            join: LineJoin::Miter,
            clip: ClipMode::Area,
            adapt: false,
        }
    }
}

impl Style {
    /// A solid style of one colour and thickness.
    pub fn stroke(color: Color, thick: f64) -> Style {
        Style {
            color,
            thick,
            ..Style::default()
        }
    }

    /// A filled style without an outline.
    pub fn filled(fill: Color) -> Style {
        Style {
            fill: Some(fill),
            thick: 0.0,
            ..Style::default()
        }
    }

    /// The same style with the adaptation flag set or cleared.
    pub fn adapt(mut self, adapt: bool) -> Style {
        self.adapt = adapt;
        self
    }

    /// The same style with another clip mode.
    pub fn clip(mut self, clip: ClipMode) -> Style {
        self.clip = clip;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use voml_ir::vocabulary::schema::element;

    /// The table's default for `attr` of `<el>`.
    fn default_word(el: &str, attr: &str) -> &'static str {
        element(el)
            .and_then(|e| e.attr(attr))
            .and_then(|a| a.default)
            .unwrap()
    }

    /// Every word reads as a different value, nothing else reads, and the language's default
    /// word is the layer's default.
    #[test]
    fn the_words_are_the_languages() {
        fn distinct<T: PartialEq + std::fmt::Debug>(
            words: &[&str],
            parse: impl Fn(&str) -> Option<T>,
        ) {
            let values: Vec<T> = words.iter().map(|w| parse(w).unwrap()).collect();
            for (i, a) in values.iter().enumerate() {
                assert!(!values[i + 1..].contains(a), "{a:?} twice");
            }
            for w in words {
                for other in [
                    w.to_ascii_lowercase(),
                    w.to_ascii_uppercase(),
                    format!(" {w}"),
                ] {
                    assert_eq!(parse(&other).is_some(), other == *w, "{other}");
                }
            }
        }
        distinct(CLIP, ClipMode::parse);
        distinct(CAP, LineCap::parse);
        distinct(HALIGN, HAlign::parse);
        distinct(VALIGN, VAlign::parse);
        assert_eq!(
            ClipMode::parse(default_word("line", "clip")),
            Some(ClipMode::default())
        );
        assert_eq!(
            LineCap::parse(default_word("line", "cap")),
            Some(LineCap::default())
        );
        assert_eq!(
            HAlign::parse(default_word("text", "halign")),
            Some(HAlign::default())
        );
        assert_eq!(
            VAlign::parse(default_word("text", "valign")),
            Some(VAlign::default())
        );
        for gone in ["CENTRE", "margins", "projecting"] {
            assert!(ClipMode::parse(gone).is_none() && LineCap::parse(gone).is_none());
            assert!(HAlign::parse(gone).is_none() && VAlign::parse(gone).is_none());
        }
    }
}
