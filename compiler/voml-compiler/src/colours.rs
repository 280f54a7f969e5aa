//! Colour literals, as the language's vocabulary (`voml_ir::vocabulary`) defines them: the
//! runtime draws exactly the colours the compiler accepts.

use voml_ir::vocabulary;

/// Every colour name, for suggestions.
pub fn names() -> impl Iterator<Item = &'static str> {
    vocabulary::colour_names()
}

/// Is `text` a colour literal: a name (any case, with or without spaces, `-` or `_`) or
/// `#rgb`, `#rrggbb`, `#rrggbbaa`?
pub fn is_literal(text: &str) -> bool {
    if let Some(hex) = text.strip_prefix('#') {
        return matches!(hex.len(), 3 | 6 | 8) && hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    vocabulary::is_colour_name(text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn literals() {
        assert!(super::is_literal("red"));
        assert!(super::is_literal("Red"));
        assert!(super::is_literal("navyblue"));
        assert!(super::is_literal("light-blue"));
        assert!(super::is_literal("#00ff00"));
        assert!(super::is_literal("#00ff0080"));
        assert!(!super::is_literal("#00ff0"));
        assert!(!super::is_literal("font"));
    }
}
