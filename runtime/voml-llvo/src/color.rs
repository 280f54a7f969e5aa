//! Colours: the X11/CSS names, `#rgb`, `#rrggbb` and `#rrggbbaa` literals.

use std::fmt;

/// A colour with straight (not premultiplied) alpha, 8 bits a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
        let key: String = text
            .chars()
            .filter(|c| !matches!(c, ' ' | '_' | '-'))
            .map(|c| c.to_ascii_lowercase())
            .collect();
        NAMED
            .binary_search_by(|(name, _)| name.cmp(&key.as_str()))
            .ok()
            .map(|i| {
                let v = NAMED[i].1;
                Color::rgb((v >> 16) as u8, (v >> 8) as u8, v as u8)
            })
            .or_else(|| (key == "transparent").then_some(Color::rgba(0, 0, 0, 0)))
    }

    /// Every colour name [`Color::parse`] accepts, sorted, so that a compiler
    /// can suggest the nearest one for a misspelling.
    pub fn names() -> impl Iterator<Item = &'static str> {
        NAMED
            .iter()
            .map(|(n, _)| *n)
            .chain(std::iter::once("transparent"))
    }

    /// The same colour with its alpha multiplied by `alpha` (clamped to 0..=1;
    /// NaN counts as 1 so that a bad number never makes things vanish).
    pub fn with_alpha_factor(self, alpha: f64) -> Color {
        let f = if alpha.is_nan() {
            1.0
        } else {
            alpha.clamp(0.0, 1.0)
        };
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

/// The CSS Color Module Level 4 named colours (a superset of the names X11
/// programs commonly use), sorted for binary search.
const NAMED: &[(&str, u32)] = &[
    ("aliceblue", 0xf0f8ff),
    ("antiquewhite", 0xfaebd7),
    ("aqua", 0x00ffff),
    ("aquamarine", 0x7fffd4),
    ("azure", 0xf0ffff),
    ("beige", 0xf5f5dc),
    ("bisque", 0xffe4c4),
    ("black", 0x000000),
    ("blanchedalmond", 0xffebcd),
    ("blue", 0x0000ff),
    ("blueviolet", 0x8a2be2),
    ("brown", 0xa52a2a),
    ("burlywood", 0xdeb887),
    ("cadetblue", 0x5f9ea0),
    ("chartreuse", 0x7fff00),
    ("chocolate", 0xd2691e),
    ("coral", 0xff7f50),
    ("cornflowerblue", 0x6495ed),
    ("cornsilk", 0xfff8dc),
    ("crimson", 0xdc143c),
    ("cyan", 0x00ffff),
    ("darkblue", 0x00008b),
    ("darkcyan", 0x008b8b),
    ("darkgoldenrod", 0xb8860b),
    ("darkgray", 0xa9a9a9),
    ("darkgreen", 0x006400),
    ("darkgrey", 0xa9a9a9),
    ("darkkhaki", 0xbdb76b),
    ("darkmagenta", 0x8b008b),
    ("darkolivegreen", 0x556b2f),
    ("darkorange", 0xff8c00),
    ("darkorchid", 0x9932cc),
    ("darkred", 0x8b0000),
    ("darksalmon", 0xe9967a),
    ("darkseagreen", 0x8fbc8f),
    ("darkslateblue", 0x483d8b),
    ("darkslategray", 0x2f4f4f),
    ("darkslategrey", 0x2f4f4f),
    ("darkturquoise", 0x00ced1),
    ("darkviolet", 0x9400d3),
    ("deeppink", 0xff1493),
    ("deepskyblue", 0x00bfff),
    ("dimgray", 0x696969),
    ("dimgrey", 0x696969),
    ("dodgerblue", 0x1e90ff),
    ("firebrick", 0xb22222),
    ("floralwhite", 0xfffaf0),
    ("forestgreen", 0x228b22),
    ("fuchsia", 0xff00ff),
    ("gainsboro", 0xdcdcdc),
    ("ghostwhite", 0xf8f8ff),
    ("gold", 0xffd700),
    ("goldenrod", 0xdaa520),
    ("gray", 0x808080),
    ("green", 0x008000),
    ("greenyellow", 0xadff2f),
    ("grey", 0x808080),
    ("honeydew", 0xf0fff0),
    ("hotpink", 0xff69b4),
    ("indianred", 0xcd5c5c),
    ("indigo", 0x4b0082),
    ("ivory", 0xfffff0),
    ("khaki", 0xf0e68c),
    ("lavender", 0xe6e6fa),
    ("lavenderblush", 0xfff0f5),
    ("lawngreen", 0x7cfc00),
    ("lemonchiffon", 0xfffacd),
    ("lightblue", 0xadd8e6),
    ("lightcoral", 0xf08080),
    ("lightcyan", 0xe0ffff),
    ("lightgoldenrodyellow", 0xfafad2),
    ("lightgray", 0xd3d3d3),
    ("lightgreen", 0x90ee90),
    ("lightgrey", 0xd3d3d3),
    ("lightpink", 0xffb6c1),
    ("lightsalmon", 0xffa07a),
    ("lightseagreen", 0x20b2aa),
    ("lightskyblue", 0x87cefa),
    ("lightslategray", 0x778899),
    ("lightslategrey", 0x778899),
    ("lightsteelblue", 0xb0c4de),
    ("lightyellow", 0xffffe0),
    ("lime", 0x00ff00),
    ("limegreen", 0x32cd32),
    ("linen", 0xfaf0e6),
    ("magenta", 0xff00ff),
    ("maroon", 0x800000),
    ("mediumaquamarine", 0x66cdaa),
    ("mediumblue", 0x0000cd),
    ("mediumorchid", 0xba55d3),
    ("mediumpurple", 0x9370db),
    ("mediumseagreen", 0x3cb371),
    ("mediumslateblue", 0x7b68ee),
    ("mediumspringgreen", 0x00fa9a),
    ("mediumturquoise", 0x48d1cc),
    ("mediumvioletred", 0xc71585),
    ("midnightblue", 0x191970),
    ("mintcream", 0xf5fffa),
    ("mistyrose", 0xffe4e1),
    ("moccasin", 0xffe4b5),
    ("navajowhite", 0xffdead),
    ("navy", 0x000080),
    ("navyblue", 0x000080),
    ("oldlace", 0xfdf5e6),
    ("olive", 0x808000),
    ("olivedrab", 0x6b8e23),
    ("orange", 0xffa500),
    ("orangered", 0xff4500),
    ("orchid", 0xda70d6),
    ("palegoldenrod", 0xeee8aa),
    ("palegreen", 0x98fb98),
    ("paleturquoise", 0xafeeee),
    ("palevioletred", 0xdb7093),
    ("papayawhip", 0xffefd5),
    ("peachpuff", 0xffdab9),
    ("peru", 0xcd853f),
    ("pink", 0xffc0cb),
    ("plum", 0xdda0dd),
    ("powderblue", 0xb0e0e6),
    ("purple", 0x800080),
    ("rebeccapurple", 0x663399),
    ("red", 0xff0000),
    ("rosybrown", 0xbc8f8f),
    ("royalblue", 0x4169e1),
    ("saddlebrown", 0x8b4513),
    ("salmon", 0xfa8072),
    ("sandybrown", 0xf4a460),
    ("seagreen", 0x2e8b57),
    ("seashell", 0xfff5ee),
    ("sienna", 0xa0522d),
    ("silver", 0xc0c0c0),
    ("skyblue", 0x87ceeb),
    ("slateblue", 0x6a5acd),
    ("slategray", 0x708090),
    ("slategrey", 0x708090),
    ("snow", 0xfffafa),
    ("springgreen", 0x00ff7f),
    ("steelblue", 0x4682b4),
    ("tan", 0xd2b48c),
    ("teal", 0x008080),
    ("thistle", 0xd8bfd8),
    ("tomato", 0xff6347),
    ("turquoise", 0x40e0d0),
    ("violet", 0xee82ee),
    ("wheat", 0xf5deb3),
    ("white", 0xffffff),
    ("whitesmoke", 0xf5f5f5),
    ("yellow", 0xffff00),
    ("yellowgreen", 0x9acd32),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_for_binary_search() {
        assert!(NAMED.windows(2).all(|w| w[0].0 < w[1].0));
    }

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
