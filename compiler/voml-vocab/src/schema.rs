//! The language's elements and attributes as data: what may contain what, which attributes
//! exist, which are required, what kind of value each holds and its default. The compiler's
//! structural checker and primitive lowering, the runtime and the tests of the XML Schema and
//! the language reference all read this one table.

/// What an element may contain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// Child elements only (whitespace and comments aside).
    Elements,
    /// Scheme code: text, markup primitives, and the listed elements.
    Code,
    /// Plain text (documentation).
    Text,
    /// Nothing.
    Empty,
}

/// What an attribute value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An identifier-like name.
    Name,
    /// Space-separated names.
    Names,
    /// Free text.
    Text,
    /// One of a fixed set of words.
    Enum(&'static [&'static str]),
    /// Space-separated words from a fixed set.
    EnumSet(&'static [&'static str]),
    /// Numbers: the exact count, integers only or not.
    Numbers { count: usize, integer: bool },
    /// Scheme expressions: exactly `count` of them.
    Exprs(usize),
    /// A literal string, unless it starts with `(` or a formal parameter.
    StrOrExpr,
    /// A colour literal (name, `#rrggbb`), else a Scheme expression.
    Colour,
    /// yes|no|true|false, else a Scheme expression.
    Flag,
    /// `^n` or a view name.
    ViewRef,
    /// Anything else, checked by the analysis (inputs lists, field references, ...).
    Special,
}

#[derive(Clone, Copy, Debug)]
pub struct AttrSpec {
    pub name: &'static str,
    pub required: bool,
    pub kind: Kind,
    /// The default as source text, when the attribute is optional and has one.
    pub default: Option<&'static str>,
}

#[derive(Clone, Copy, Debug)]
pub struct ElementSpec {
    pub name: &'static str,
    pub content: Content,
    /// Elements allowed inside (besides primitives in code).
    pub children: &'static [&'static str],
    /// Children that may appear at most once.
    pub once: &'static [&'static str],
    pub attrs: &'static [AttrSpec],
    /// Markup primitive: an expression inside Scheme code.
    pub primitive: bool,
}

const fn req(name: &'static str, kind: Kind) -> AttrSpec {
    AttrSpec {
        name,
        required: true,
        kind,
        default: None,
    }
}

const fn opt(name: &'static str, kind: Kind, default: Option<&'static str>) -> AttrSpec {
    AttrSpec {
        name,
        required: false,
        kind,
        default,
    }
}

const fn structural(
    name: &'static str,
    content: Content,
    children: &'static [&'static str],
    once: &'static [&'static str],
    attrs: &'static [AttrSpec],
) -> ElementSpec {
    ElementSpec {
        name,
        content,
        children,
        once,
        attrs,
        primitive: false,
    }
}

const fn primitive(name: &'static str, attrs: &'static [AttrSpec]) -> ElementSpec {
    ElementSpec {
        name,
        content: Content::Empty,
        children: &[],
        once: &[],
        attrs,
        primitive: true,
    }
}

pub const FLAG_WORDS: &[&str] = &["yes", "no", "true", "false"];
pub const FIELD_TYPES: &[&str] = &["int", "real", "string", "any"];
pub const VAR_TYPES: &[&str] = &["int", "real", "boolean", "string", "list", "vector", "any"];
pub const REFRESH: &[&str] = &["resize", "rescale", "update"];
pub const HALIGN: &[&str] = &["LEFT", "CENTER", "RIGHT"];
pub const VALIGN: &[&str] = &["TOP", "CENTER", "BOTTOM", "BASELINE"];

const CODE_CHILDREN: &[&str] = &["description"];

/// The style attributes every drawing primitive takes.
macro_rules! drawing {
    ($($extra:expr),* $(,)?) => {
        &[
            req("view", Kind::ViewRef),
            opt("color", Kind::Colour, Some("black")),
            opt("thick", Kind::Exprs(1), Some("1")),
            opt("adapt", Kind::Flag, Some("no")),
            opt("clip", Kind::Enum(&["area", "margin"]), Some("area")),
            opt("dash", Kind::Exprs(1), Some("#f")),
            opt("alpha", Kind::Exprs(1), Some("1")),
            opt("cap", Kind::Enum(&["butt", "round", "square"]), Some("butt")),
            $($extra),*
        ]
    };
}

pub const ELEMENTS: &[ElementSpec] = &[
    structural(
        "voml",
        Content::Elements,
        &["head", "body"],
        &["head", "body"],
        &[opt("version", Kind::Text, Some("1.0"))],
    ),
    structural(
        "head",
        Content::Elements,
        &["title", "description", "import"],
        &["title", "description"],
        &[],
    ),
    structural("title", Content::Text, &[], &[], &[]),
    structural("description", Content::Text, &[], &[], &[]),
    structural(
        "import",
        Content::Empty,
        &[],
        &[],
        &[req("href", Kind::Text), opt("sha256", Kind::Text, None)],
    ),
    structural(
        "body",
        Content::Elements,
        &["visual-object"],
        &["visual-object"],
        &[],
    ),
    structural(
        "visual-object",
        Content::Elements,
        &[
            "description",
            "event-declarations",
            "info-structures",
            "control-structures",
            "utility-code",
            "view-initializations",
            "event-processing",
            "info-rendition",
        ],
        &[
            "description",
            "event-declarations",
            "info-structures",
            "control-structures",
            "view-initializations",
            "event-processing",
            "info-rendition",
        ],
        &[
            req("name", Kind::Name),
            opt(
                "mode",
                Kind::Enum(&["asynchronous", "synchronous"]),
                Some("asynchronous"),
            ),
            opt(
                "tick",
                Kind::Numbers {
                    count: 1,
                    integer: false,
                },
                Some("0.1"),
            ),
        ],
    ),
    structural(
        "event-declarations",
        Content::Elements,
        &["description", "data-event"],
        &["description"],
        &[],
    ),
    structural(
        "data-event",
        Content::Elements,
        &["description", "data-field"],
        &["description"],
        &[
            req("name", Kind::Name),
            req("rtype", Kind::Special),
            req(
                "etype",
                Kind::Numbers {
                    count: 1,
                    integer: true,
                },
            ),
        ],
    ),
    structural(
        "data-field",
        Content::Empty,
        &[],
        &[],
        &[
            req("name", Kind::Name),
            opt("type", Kind::Enum(FIELD_TYPES), Some("any")),
            opt(
                "index",
                Kind::Numbers {
                    count: 1,
                    integer: true,
                },
                None,
            ),
        ],
    ),
    structural(
        "info-structures",
        Content::Elements,
        &["description", "variable"],
        &["description"],
        &[],
    ),
    structural(
        "control-structures",
        Content::Elements,
        &["description", "variable"],
        &["description"],
        &[],
    ),
    structural(
        "variable",
        Content::Elements,
        &["description"],
        &["description"],
        &[
            req("name", Kind::Name),
            opt("type", Kind::Enum(VAR_TYPES), Some("any")),
            opt("init", Kind::Special, None),
        ],
    ),
    structural(
        "utility-code",
        Content::Code,
        CODE_CHILDREN,
        &["description"],
        &[],
    ),
    structural(
        "view-initializations",
        Content::Elements,
        &["description", "view"],
        &["description"],
        &[],
    ),
    structural(
        "view",
        Content::Code,
        CODE_CHILDREN,
        &["description"],
        &[
            req("name", Kind::Name),
            opt("title", Kind::Text, None),
            opt(
                "window",
                Kind::Numbers {
                    count: 2,
                    integer: true,
                },
                Some("400 300"),
            ),
            opt(
                "world",
                Kind::Numbers {
                    count: 4,
                    integer: false,
                },
                Some("0 1 0 1"),
            ),
            opt(
                "margins",
                Kind::Numbers {
                    count: 4,
                    integer: true,
                },
                Some("0 0 0 0"),
            ),
            opt("adapt", Kind::Special, None),
            opt(
                "quality",
                Kind::Numbers {
                    count: 1,
                    integer: true,
                },
                Some("1024"),
            ),
            opt("background", Kind::Colour, Some("white")),
            opt("infos", Kind::Names, None),
            opt("controls", Kind::Names, None),
        ],
    ),
    structural(
        "event-processing",
        Content::Elements,
        &["description", "ep-component"],
        &["description"],
        &[],
    ),
    structural(
        "ep-component",
        Content::Elements,
        &[
            "description",
            "preprocess-inputs",
            "before",
            "input",
            "after",
        ],
        &["description"],
        &[
            req("name", Kind::Name),
            opt("inputs", Kind::Special, None),
            opt("infos", Kind::Names, None),
            opt("controls", Kind::Names, None),
            opt("use", Kind::Name, None),
        ],
    ),
    structural(
        "input",
        Content::Code,
        CODE_CHILDREN,
        &["description"],
        &[req("name", Kind::Special)],
    ),
    structural(
        "before",
        Content::Code,
        CODE_CHILDREN,
        &["description"],
        &[req("condition", Kind::Exprs(1))],
    ),
    structural(
        "after",
        Content::Code,
        CODE_CHILDREN,
        &["description"],
        &[req("condition", Kind::Exprs(1))],
    ),
    structural(
        "preprocess-inputs",
        Content::Code,
        CODE_CHILDREN,
        &["description"],
        &[req("field", Kind::Special)],
    ),
    structural(
        "info-rendition",
        Content::Elements,
        &["description", "ir-component"],
        &["description"],
        &[opt(
            "order",
            Kind::Enum(&["document", "reverse"]),
            Some("document"),
        )],
    ),
    structural(
        "ir-component",
        Content::Code,
        &["description", "end-with"],
        &["description", "end-with"],
        &[
            req("name", Kind::Name),
            opt("views", Kind::Names, None),
            opt("infos", Kind::Names, None),
            opt("controls", Kind::Names, None),
            opt("refresh", Kind::EnumSet(REFRESH), None),
            opt("buffer", Kind::Enum(FLAG_WORDS), Some("no")),
            opt("enable", Kind::Exprs(1), None),
            opt(
                "order",
                Kind::Numbers {
                    count: 1,
                    integer: true,
                },
                None,
            ),
            opt("use", Kind::Name, None),
        ],
    ),
    structural(
        "end-with",
        Content::Code,
        CODE_CHILDREN,
        &["description"],
        &[],
    ),
    structural(
        "voml-library",
        Content::Elements,
        &["description", "ep-component", "ir-component"],
        &["description"],
        &[opt("name", Kind::Name, None)],
    ),
    // Markup primitives.
    primitive(
        "line",
        drawing![req("from", Kind::Exprs(2)), req("to", Kind::Exprs(2))],
    ),
    primitive("polyline", drawing![req("points", Kind::Exprs(1))]),
    primitive(
        "polygon",
        drawing![
            req("points", Kind::Exprs(1)),
            opt("fill", Kind::Colour, None)
        ],
    ),
    primitive(
        "rectangle",
        drawing![
            req("from", Kind::Exprs(2)),
            req("to", Kind::Exprs(2)),
            opt("fill", Kind::Colour, None)
        ],
    ),
    primitive(
        "circle",
        drawing![
            req("center", Kind::Exprs(2)),
            req("radius", Kind::Exprs(1)),
            opt("fill", Kind::Colour, None)
        ],
    ),
    primitive(
        "ellipse",
        drawing![
            req("center", Kind::Exprs(2)),
            req("radii", Kind::Exprs(2)),
            opt("fill", Kind::Colour, None)
        ],
    ),
    primitive(
        "arc",
        drawing![
            req("center", Kind::Exprs(2)),
            req("radius", Kind::Exprs(1)),
            req("start", Kind::Exprs(1)),
            req("extent", Kind::Exprs(1)),
        ],
    ),
    primitive(
        "text",
        drawing![
            req("coords", Kind::Exprs(2)),
            req("content", Kind::StrOrExpr),
            opt("font", Kind::Exprs(1), Some("#f")),
            opt("fcolor", Kind::Colour, Some("black")),
            opt("size", Kind::Exprs(1), Some("#f")),
            opt("halign", Kind::Enum(HALIGN), Some("LEFT")),
            opt("valign", Kind::Enum(VALIGN), Some("BASELINE")),
        ],
    ),
    primitive(
        "figure",
        drawing![
            req("filename", Kind::StrOrExpr),
            opt("orig-origin", Kind::Exprs(2), Some("0 0")),
            opt("orig-extents", Kind::Exprs(2), Some("0 0")),
            req("world-origin", Kind::Exprs(2)),
            req("world-extents", Kind::Exprs(2)),
        ],
    ),
    primitive("view-info", &[req("view", Kind::ViewRef)]),
    primitive(
        "scroll",
        &[req("view", Kind::ViewRef), req("by", Kind::Exprs(2))],
    ),
    primitive(
        "resize",
        &[req("view", Kind::ViewRef), req("size", Kind::Exprs(2))],
    ),
    primitive(
        "rescale",
        &[req("view", Kind::ViewRef), req("world", Kind::Exprs(4))],
    ),
    primitive(
        "snapshot",
        &[req("view", Kind::ViewRef), req("file", Kind::StrOrExpr)],
    ),
    primitive("beep", &[]),
    // Sound primitives (seeds 000 and 001). Pitch is `freq` (Hz) or `note` (MIDI number).
    primitive(
        "tone",
        &[
            opt("freq", Kind::Exprs(1), None),
            opt("note", Kind::Exprs(1), None),
            opt("duration", Kind::Exprs(1), Some("0.25")),
            opt("volume", Kind::Exprs(1), Some("0.8")),
            opt("pan", Kind::Exprs(1), Some("0")),
            opt("voice", Kind::StrOrExpr, Some("sine")),
            opt("channel", Kind::Exprs(1), Some("#f")),
        ],
    ),
    primitive(
        "note-on",
        &[
            req("channel", Kind::Exprs(1)),
            opt("freq", Kind::Exprs(1), None),
            opt("note", Kind::Exprs(1), None),
            opt("volume", Kind::Exprs(1), Some("0.8")),
        ],
    ),
    primitive(
        "note-off",
        &[
            req("channel", Kind::Exprs(1)),
            opt("freq", Kind::Exprs(1), None),
            opt("note", Kind::Exprs(1), None),
        ],
    ),
    primitive(
        "note-volume",
        &[
            req("channel", Kind::Exprs(1)),
            opt("freq", Kind::Exprs(1), None),
            opt("note", Kind::Exprs(1), None),
            req("volume", Kind::Exprs(1)),
        ],
    ),
    primitive(
        "channel",
        &[
            req("channel", Kind::Exprs(1)),
            opt("voice", Kind::StrOrExpr, None),
            opt("pan", Kind::Exprs(1), None),
            opt("volume", Kind::Exprs(1), None),
            opt("mute", Kind::Enum(FLAG_WORDS), None),
        ],
    ),
    primitive("master", &[req("volume", Kind::Exprs(1))]),
    primitive("tempo", &[req("factor", Kind::Exprs(1))]),
];

/// Sound primitives whose pitch (`freq` or `note`) is required; `note-volume` may omit it
/// to change every held note of the channel.
pub const PITCHED: &[&str] = &["tone", "note-on", "note-off"];

pub fn element(name: &str) -> Option<&'static ElementSpec> {
    ELEMENTS.iter().find(|e| e.name == name)
}

pub fn element_names() -> impl Iterator<Item = &'static str> {
    ELEMENTS.iter().map(|e| e.name)
}

/// The elements that may contain `child` (for "it belongs in ..." hints).
pub fn parents_of(child: &str) -> Vec<&'static str> {
    let child_is_primitive = element(child).is_some_and(|e| e.primitive);
    ELEMENTS
        .iter()
        .filter(|p| {
            p.children.contains(&child) || (child_is_primitive && p.content == Content::Code)
        })
        .map(|p| p.name)
        .collect()
}

/// Is `child` allowed directly inside `parent`?
pub fn allows(parent: &ElementSpec, child: &str) -> bool {
    if parent.children.contains(&child) {
        return true;
    }
    parent.content == Content::Code && element(child).is_some_and(|c| c.primitive)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_child_named_is_an_element() {
        for e in ELEMENTS {
            for c in e.children.iter().chain(e.once) {
                assert!(element(c).is_some(), "{} names unknown child {c}", e.name);
            }
        }
    }

    #[test]
    fn primitives_belong_in_code() {
        let parents = parents_of("line");
        for p in [
            "input",
            "ir-component",
            "end-with",
            "utility-code",
            "view",
            "before",
            "after",
        ] {
            assert!(parents.contains(&p), "line not allowed in {p}");
        }
        assert!(!parents.contains(&"event-processing"));
        assert_eq!(parents_of("input"), vec!["ep-component"]);
    }
}
