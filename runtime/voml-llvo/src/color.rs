//! Colours: the X11/CSS names, `#rgb`, `#rrggbb` and `#rrggbbaa` literals.

use serde::{Deserialize, Serialize};

use std::fmt;
use voml_ir::vocabulary;

/// A colour with straight (not premultiplied) alpha, 8 bits a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Color {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
    /// Alpha, 255 = opaque.
    pub a: u8,
}

impl Color {
    /// Opaque black, the default drawing colour.
    pub const BLACK: Color = Color::rgb(0, 0, 0);
    /// Opaque white, the default background.
    pub const WHITE: Color = Color::rgb(255, 255, 255);

    /// An opaque colour.
    pub const fn rgb(r: u8, g: u8, b: u8) -> Color {
        Color { r, g, b, a: 255 }
    }

    /// A colour with alpha.
    pub const fn rgba(r: u8, g: u8, b: u8, a: u8) -> Color {
        Color { r, g, b, a }
    }

    /// Parses a colour name (case and spaces/underscores ignored, so the X11
    /// spellings "light blue" and "LightBlue" both work), `#rgb`, `#rrggbb`
    /// or `#rrggbbaa`.
    ///
    /// Where X11 and CSS disagree (gray, green, maroon, purple), the CSS value
    /// is used, so that every back end, a web page included, agrees.
    pub fn parse(text: &str) -> Option<Color> {
        let text = text.trim();
        if let Some(hex) = text.strip_prefix('#') {
            return parse_hex(hex);
        }
        if let Some(v) = vocabulary::colour_rgb(text) {
            return Some(Color::rgb((v >> 16) as u8, (v >> 8) as u8, v as u8));
        }
        (vocabulary::colour_key(text) == vocabulary::TRANSPARENT).then_some(Color::rgba(0, 0, 0, 0))
    }

    /// Every colour name [`Color::parse`] accepts (the language's vocabulary), so that a
    /// compiler can suggest the nearest one for a misspelling.
    pub fn names() -> impl Iterator<Item = &'static str> {
        vocabulary::colour_names()
    }

    /// The same colour with its alpha multiplied by `alpha` (clamped to 0..=1;
    /// NaN counts as 1 so that a bad number never makes things vanish).
    pub fn with_alpha_factor(self, alpha: f64) -> Color {
        let f = if alpha.is_nan() {
            1.0
        } else {
            alpha.clamp(0.0, 1.0)
        };
        if f == 1.0 {
            // (The common case, and what the rounding below would give.)
            return self;
        }
        Color {
            a: (f64::from(self.a) * f).round() as u8,
            ..self
        }
    }
}

impl Default for Color {
    fn default() -> Self {
        Color::BLACK
    }
}

impl fmt::Display for Color {
    /// `#rrggbb`, or `#rrggbbaa` when not opaque: the form `parse` reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.r, self.g, self.b)?;
        if self.a != 255 {
            write!(f, "{:02x}", self.a)?;
        }
        Ok(())
    }
}

fn parse_hex(hex: &str) -> Option<Color> {
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let nibble = |i: usize| u8::from_str_radix(&hex[i..i + 1], 16).ok();
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    match hex.len() {
        3 => Some(Color::rgb(
            nibble(0)? * 17,
            nibble(1)? * 17,
            nibble(2)? * 17,
        )),
        6 => Some(Color::rgb(byte(0)?, byte(2)?, byte(4)?)),
        8 => Some(Color::rgba(byte(0)?, byte(2)?, byte(4)?, byte(6)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_names() {
        let cases = [
            ("red", Color::rgb(255, 0, 0)),
            ("blue", Color::rgb(0, 0, 255)),
            ("green", Color::rgb(0, 128, 0)),
            ("black", Color::BLACK),
            ("white", Color::WHITE),
            ("grey", Color::rgb(128, 128, 128)),
            ("gray", Color::rgb(128, 128, 128)),
            ("orange", Color::rgb(255, 165, 0)),
            ("purple", Color::rgb(128, 0, 128)),
            ("yellow", Color::rgb(255, 255, 0)),
            ("cyan", Color::rgb(0, 255, 255)),
            ("magenta", Color::rgb(255, 0, 255)),
            ("brown", Color::rgb(165, 42, 42)),
            ("pink", Color::rgb(255, 192, 203)),
            ("navy", Color::rgb(0, 0, 128)),
        ];
        for (name, want) in cases {
            assert_eq!(Color::parse(name), Some(want), "{name}");
        }
    }

    #[test]
    fn case_spaces_and_underscores_are_ignored() {
        let want = Color::parse("lightblue");
        assert!(want.is_some());
        for spelling in ["LightBlue", "light blue", "light_blue", "  LIGHT-BLUE "] {
            assert_eq!(Color::parse(spelling), want, "{spelling}");
        }
    }

    #[test]
    fn hex_forms() {
        assert_eq!(Color::parse("#ff8000"), Some(Color::rgb(255, 128, 0)));
        assert_eq!(Color::parse("#FF8000"), Some(Color::rgb(255, 128, 0)));
        assert_eq!(
            Color::parse("#ff800080"),
            Some(Color::rgba(255, 128, 0, 128))
        );
        assert_eq!(Color::parse("#f80"), Some(Color::rgb(255, 136, 0)));
        assert_eq!(Color::parse("transparent"), Some(Color::rgba(0, 0, 0, 0)));
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "", "#", "#12", "#12345", "#1234567", "#gg0000", "redd", "#+1+2+3", "#ff00é",
        ] {
            assert_eq!(Color::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn display_round_trips() {
        for c in [Color::rgb(1, 2, 3), Color::rgba(250, 128, 0, 17)] {
            assert_eq!(Color::parse(&c.to_string()), Some(c));
        }
    }

    #[test]
    fn names_all_parse() {
        let names: Vec<_> = Color::names().collect();
        assert!(names.len() > 140);
        assert!(names.contains(&"navy") && names.contains(&"grey"));
        for n in names {
            assert!(Color::parse(n).is_some(), "{n}");
        }
    }

    #[test]
    fn alpha_factor_clamps() {
        let c = Color::rgb(10, 20, 30);
        assert_eq!(c.with_alpha_factor(0.5).a, 128);
        assert_eq!(c.with_alpha_factor(-3.0).a, 0);
        assert_eq!(c.with_alpha_factor(7.0).a, 255);
        assert_eq!(c.with_alpha_factor(f64::NAN).a, 255);
    }
}
