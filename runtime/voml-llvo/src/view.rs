//! Views: their specification, adaptation settings and `view-info`.

use crate::color::Color;

/// How a view adapts in one direction when an adaptive primitive falls
/// outside its world rectangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdaptMode {
    /// Translate the scrollable area's content.
    Scroll,
    /// Zoom out (and back in once the extreme points are gone).
    Rescale,
}

/// Adaptation settings of a view, per direction: `None` = no adaptation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Adaptation {
    /// Towards growing x.
    pub x_plus: Option<AdaptMode>,
    /// Towards shrinking x.
    pub x_minus: Option<AdaptMode>,
    /// Towards growing y.
    pub y_plus: Option<AdaptMode>,
    /// Towards shrinking y.
    pub y_minus: Option<AdaptMode>,
}

impl Adaptation {
    /// Parses the markup's `adapt` attribute: space-separated `DIR:MODE`
    /// with DIR in `x+ x- y+ y-` and MODE `scroll` or `rescale`, e.g.
    /// `"x+:scroll y+:rescale"`. The error names the first bad item.
    pub fn parse(text: &str) -> Result<Adaptation, String> {
        let mut a = Adaptation::default();
        for item in text.split_whitespace() {
            let (dir, mode) = item
                .split_once(':')
                .ok_or_else(|| format!("\"{item}\" is not DIR:MODE"))?;
            let mode = match mode.to_ascii_lowercase().as_str() {
                "scroll" => AdaptMode::Scroll,
                "rescale" => AdaptMode::Rescale,
                _ => return Err(format!("\"{mode}\" is neither scroll nor rescale")),
            };
            let slot = match dir.to_ascii_lowercase().as_str() {
                "x+" => &mut a.x_plus,
                "x-" => &mut a.x_minus,
                "y+" => &mut a.y_plus,
                "y-" => &mut a.y_minus,
                _ => return Err(format!("\"{dir}\" is not one of x+ x- y+ y-")),
            };
            *slot = Some(mode);
        }
        Ok(a)
    }

    /// True when no direction adapts.
    pub fn is_none(&self) -> bool {
        *self == Adaptation::default()
    }
}

/// What undrawing a frame does in a view (the markup's `undraw`): the compiled visual
/// object's own value. An exact view keeps what it shows as a list of commands.
pub use voml_ir::Undraw;

/// Default adaptation quality: extreme points remembered per view.
pub const DEFAULT_QUALITY: u32 = 1024;

/// Everything needed to open a view.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewSpec {
    /// Unique name (the markup's `view name`).
    pub name: String,
    /// Window title.
    pub title: String,
    /// Window size in pixels, margins included.
    pub window: (u32, u32),
    /// World rectangle x0 x1 y0 y1 shown in the scrollable area; y grows
    /// upwards.
    pub world: [f64; 4],
    /// Margins in pixels: left right top bottom.
    pub margins: [u32; 4],
    /// Background colour (also what undraw paints with).
    pub background: Color,
    /// Adaptation per direction: what the view does when a primitive drawn
    /// with [`crate::Style::adapt`] falls outside the world rectangle.
    pub adapt: Adaptation,
    /// Adaptation quality: the most extreme points the view remembers for
    /// zooming back in, shared by its rescaling directions (at least one
    /// each).
    pub quality: u32,
    /// What undrawing a frame does.
    pub undraw: Undraw,
}

impl ViewSpec {
    /// A view with the markup's defaults: 400x300 pixels, world 0 1 0 1, no
    /// margins, white, no adaptation.
    pub fn new(name: &str) -> ViewSpec {
        ViewSpec {
            name: name.to_string(),
            title: name.to_string(),
            window: (400, 300),
            world: [0.0, 1.0, 0.0, 1.0],
            margins: [0; 4],
            background: Color::WHITE,
            adapt: Adaptation::default(),
            quality: DEFAULT_QUALITY,
            undraw: Undraw::Paint,
        }
    }

    /// Sets the window size.
    pub fn window(mut self, width: u32, height: u32) -> ViewSpec {
        self.window = (width, height);
        self
    }

    /// Sets the world rectangle.
    pub fn world(mut self, x0: f64, x1: f64, y0: f64, y1: f64) -> ViewSpec {
        self.world = [x0, x1, y0, y1];
        self
    }

    /// Sets the margins (left right top bottom).
    pub fn margins(mut self, left: u32, right: u32, top: u32, bottom: u32) -> ViewSpec {
        self.margins = [left, right, top, bottom];
        self
    }

    /// Sets the background colour.
    pub fn background(mut self, color: Color) -> ViewSpec {
        self.background = color;
        self
    }

    /// Sets the adaptation per direction.
    pub fn adapt(mut self, adapt: Adaptation) -> ViewSpec {
        self.adapt = adapt;
        self
    }

    /// Sets what undrawing a frame does.
    pub fn undraw(mut self, undraw: Undraw) -> ViewSpec {
        self.undraw = undraw;
        self
    }

    /// Sets the adaptation quality.
    pub fn quality(mut self, quality: u32) -> ViewSpec {
        self.quality = quality;
        self
    }

    /// Sets the title.
    pub fn title(mut self, title: &str) -> ViewSpec {
        self.title = title.to_string();
        self
    }
}

/// The answer to the markup's `view-info`.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewInfo {
    /// View name.
    pub name: String,
    /// Window title.
    pub title: String,
    /// Window position on the screen (0 0 headless).
    pub x: i32,
    /// Window position on the screen.
    pub y: i32,
    /// Bits per pixel.
    pub depth: u32,
    /// Window width in pixels, margins included.
    pub width: u32,
    /// Window height in pixels, margins included.
    pub height: u32,
    /// Current world rectangle x0 x1 y0 y1.
    pub world: [f64; 4],
}

/// One element of the `view-info` list.
#[derive(Debug, Clone, PartialEq)]
pub enum InfoItem {
    /// A string (name, title).
    Text(String),
    /// An exact integer (position, depth, size).
    Int(i64),
    /// An inexact number (world coordinates).
    Real(f64),
}

impl ViewInfo {
    /// The documented list layout:
    /// `(name title x y depth width height wx0 wx1 wy0 wy1)`, width and
    /// height at positions 5 and 6.
    pub fn as_list(&self) -> Vec<InfoItem> {
        let mut v = vec![
            InfoItem::Text(self.name.clone()),
            InfoItem::Text(self.title.clone()),
            InfoItem::Int(i64::from(self.x)),
            InfoItem::Int(i64::from(self.y)),
            InfoItem::Int(i64::from(self.depth)),
            InfoItem::Int(i64::from(self.width)),
            InfoItem::Int(i64::from(self.height)),
        ];
        v.extend(self.world.iter().map(|w| InfoItem::Real(*w)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adaptation_parses() {
        let a = Adaptation::parse("x+:scroll  y+:rescale Y-:RESCALE").unwrap();
        assert_eq!(a.x_plus, Some(AdaptMode::Scroll));
        assert_eq!(a.x_minus, None);
        assert_eq!(a.y_plus, Some(AdaptMode::Rescale));
        assert_eq!(a.y_minus, Some(AdaptMode::Rescale));
        assert!(Adaptation::parse("").unwrap().is_none());
        assert!(Adaptation::parse("x+").is_err());
        assert!(Adaptation::parse("z+:scroll").is_err());
        assert!(Adaptation::parse("x+:zoom").is_err());
    }

    #[test]
    fn info_list_layout() {
        let info = ViewInfo {
            name: "BU-View".into(),
            title: "t".into(),
            x: 0,
            y: 0,
            depth: 24,
            width: 700,
            height: 650,
            world: [-10.0, 110.0, -10.0, 120.0],
        };
        let l = info.as_list();
        assert_eq!(l.len(), 11);
        assert_eq!(l[5], InfoItem::Int(700));
        assert_eq!(l[6], InfoItem::Int(650));
        assert_eq!(l[10], InfoItem::Real(120.0));
    }
}
