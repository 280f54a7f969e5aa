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
    /// A voice name ([`crate::voice`]), unless it starts with `(`, `"` or a formal
    /// parameter: then a Scheme expression.
    Voice,
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
    /// For a markup primitive (an expression inside Scheme code), the call of the runtime's
    /// primitive API it stands for.
    pub call: Option<Call>,
}

impl ElementSpec {
    /// Is this a markup primitive?
    pub const fn primitive(&self) -> bool {
        self.call.is_some()
    }

    /// The attribute named `name`.
    pub fn attr(&self, name: &str) -> Option<&'static AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }
}

/// A procedure of the runtime's primitive API: the generated program calls it with exactly
/// `params.len()` positional arguments, always all present (the compiler fills in defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Procedure {
    pub name: &'static str,
    /// The parameters' names, as the documentation writes the call.
    pub params: &'static [&'static str],
}

impl Procedure {
    pub const fn arity(&self) -> usize {
        self.params.len()
    }
}

/// Where one argument (or run of arguments) of a primitive's call comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// An attribute's value, or its default: as many arguments as the attribute holds
    /// expressions ([`Kind::Exprs`]), else one.
    Attr(&'static str),
    /// The pitch in Hz: `freq`, or `note` through [`MIDI_TO_HZ`]; `#f` when neither is
    /// given (only where [`PITCHED`] allows that).
    Pitch,
    /// The drawing style: a call of [`STYLE`] with the attributes its parameters name.
    Style,
}

impl Arg {
    /// How many positional arguments this stands for in `element`'s call.
    pub fn width(&self, element: &ElementSpec) -> usize {
        match self {
            Arg::Attr(name) => match element.attr(name).map(|a| a.kind) {
                Some(Kind::Exprs(n)) => n,
                _ => 1,
            },
            Arg::Pitch | Arg::Style => 1,
        }
    }
}

/// A primitive's call: the procedure, and where its arguments come from, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    pub procedure: Procedure,
    pub args: &'static [Arg],
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
        call: None,
    }
}

const fn primitive(
    name: &'static str,
    attrs: &'static [AttrSpec],
    procedure: Procedure,
    args: &'static [Arg],
) -> ElementSpec {
    ElementSpec {
        name,
        content: Content::Empty,
        children: &[],
        once: &[],
        attrs,
        call: Some(Call { procedure, args }),
    }
}

const fn procedure(name: &'static str, params: &'static [&'static str]) -> Procedure {
    Procedure { name, params }
}

/// The words of a flag ([`flag_value`] says which mean true).
pub const FLAG_WORDS: &[&str] = &["yes", "no", "true", "false"];
pub const FIELD_TYPES: &[&str] = &["int", "real", "string", "any"];
pub const VAR_TYPES: &[&str] = &["int", "real", "boolean", "string", "list", "vector", "any"];
pub const REFRESH: &[&str] = &["resize", "rescale", "update", "changed"];
/// `<visual-object mode>`.
pub const MODES: &[&str] = &["asynchronous", "synchronous"];
/// `<info-rendition order>`.
pub const IR_ORDERS: &[&str] = &["document", "reverse"];
/// `<view undraw>`: what undrawing a component's last frame does in the view.
pub const UNDRAW: &[&str] = &["paint", "exact"];
/// Where a drawing primitive may paint: the scrollable area, or the margins too.
pub const CLIP: &[&str] = &["area", "margin"];
/// How the ends of lines look.
pub const CAP: &[&str] = &["butt", "round", "square"];
pub const HALIGN: &[&str] = &["LEFT", "CENTER", "RIGHT"];
pub const VALIGN: &[&str] = &["TOP", "CENTER", "BOTTOM", "BASELINE"];

/// What a flag word means: `yes` and `true` are true, `no` and `false` false; anything else
/// is not a flag word. Exact spelling, as the XML Schema has it.
pub fn flag_value(word: &str) -> Option<bool> {
    match word_index(FLAG_WORDS, word)? {
        0 | 2 => Some(true),
        _ => Some(false),
    }
}

/// The position of `word` in `words`, spelled exactly: how the runtime reads an enumerated
/// word into its own type, so that it takes exactly the words `voml check` takes.
pub fn word_index(words: &[&str], word: &str) -> Option<usize> {
    words.iter().position(|w| *w == word)
}

/// The style every drawing primitive passes last: `(voml-style color thick ...)`, whose
/// parameters are the drawing attributes of the same names.
pub const STYLE: Procedure = procedure(
    "voml-style",
    &["color", "thick", "adapt", "clip", "dash", "alpha", "cap"],
);

/// The conversion of a `note` attribute (a MIDI note number) to the Hz a sound call takes.
pub const MIDI_TO_HZ: Procedure = procedure("midi->hz", &["note"]);

pub const LINE: Procedure = procedure("voml-line", &["view", "x0", "y0", "x1", "y1", "style"]);
pub const POLYLINE: Procedure = procedure("voml-polyline", &["view", "points", "style"]);
pub const POLYGON: Procedure = procedure("voml-polygon", &["view", "points", "fill", "style"]);
pub const RECTANGLE: Procedure = procedure(
    "voml-rectangle",
    &["view", "x0", "y0", "x1", "y1", "fill", "style"],
);
pub const CIRCLE: Procedure = procedure("voml-circle", &["view", "cx", "cy", "r", "fill", "style"]);
pub const ELLIPSE: Procedure = procedure(
    "voml-ellipse",
    &["view", "cx", "cy", "rx", "ry", "fill", "style"],
);
pub const ARC: Procedure = procedure(
    "voml-arc",
    &["view", "cx", "cy", "r", "start", "extent", "style"],
);
pub const TEXT: Procedure = procedure(
    "voml-text",
    &[
        "view", "x", "y", "content", "font", "fcolor", "size", "halign", "valign", "style",
    ],
);
pub const FIGURE: Procedure = procedure(
    "voml-figure",
    &[
        "view", "file", "ox", "oy", "ow", "oh", "wx", "wy", "ww", "wh", "style",
    ],
);
pub const VIEW_INFO: Procedure = procedure("voml-view-info", &["view"]);
pub const SCROLL: Procedure = procedure("voml-scroll", &["view", "dx", "dy"]);
pub const RESIZE: Procedure = procedure("voml-resize", &["view", "w", "h"]);
pub const RESCALE: Procedure = procedure("voml-rescale", &["view", "x0", "x1", "y0", "y1"]);
pub const SNAPSHOT: Procedure = procedure("voml-snapshot", &["view", "file"]);
pub const BEEP: Procedure = procedure("beep", &[]);
pub const PAUSE: Procedure = procedure("voml-pause", &["reason"]);
pub const TONE: Procedure = procedure(
    "voml-tone",
    &["hz", "duration", "volume", "pan", "voice", "channel"],
);
pub const NOTE_ON: Procedure = procedure("voml-note-on", &["channel", "hz", "volume"]);
pub const NOTE_OFF: Procedure = procedure("voml-note-off", &["channel", "hz"]);
pub const NOTE_VOLUME: Procedure = procedure("voml-note-volume", &["channel", "hz", "volume"]);
pub const SOUND_CHANNEL: Procedure = procedure(
    "voml-sound-channel",
    &["channel", "voice", "pan", "volume", "mute"],
);
pub const SOUND_MASTER: Procedure = procedure("voml-sound-master", &["volume"]);
pub const SOUND_TEMPO: Procedure = procedure("voml-sound-tempo", &["factor"]);

/// Every procedure the generated program may call, for a runtime to define: the primitives'
/// calls, [`STYLE`] and [`MIDI_TO_HZ`]. `(voml-sound-channel ...)` takes `#f` for each
/// setting it leaves unchanged.
pub const PROCEDURES: &[Procedure] = &[
    STYLE,
    LINE,
    POLYLINE,
    POLYGON,
    RECTANGLE,
    CIRCLE,
    ELLIPSE,
    ARC,
    TEXT,
    FIGURE,
    VIEW_INFO,
    SCROLL,
    RESIZE,
    RESCALE,
    SNAPSHOT,
    BEEP,
    PAUSE,
    TONE,
    NOTE_ON,
    NOTE_OFF,
    NOTE_VOLUME,
    SOUND_CHANNEL,
    SOUND_MASTER,
    SOUND_TEMPO,
    MIDI_TO_HZ,
];

/// The procedures that draw a shape in a view (what the drawing elements call).
pub const DRAWING: &[Procedure] = &[
    LINE, POLYLINE, POLYGON, RECTANGLE, CIRCLE, ELLIPSE, ARC, TEXT, FIGURE,
];

/// The procedures that make or shape sound (what the sound elements call).
pub const SOUND: &[Procedure] = &[
    BEEP,
    TONE,
    NOTE_ON,
    NOTE_OFF,
    NOTE_VOLUME,
    SOUND_CHANNEL,
    SOUND_MASTER,
    SOUND_TEMPO,
];

/// The procedure named `name`.
pub fn procedure_named(name: &str) -> Option<&'static Procedure> {
    PROCEDURES.iter().find(|p| p.name == name)
}

const CODE_CHILDREN: &[&str] = &["description"];

/// The style attributes every drawing primitive takes.
macro_rules! drawing {
    ($($extra:expr),* $(,)?) => {
        &[
            req("view", Kind::ViewRef),
            opt("color", Kind::Colour, Some("black")),
            opt("thick", Kind::Exprs(1), Some("1")),
            opt("adapt", Kind::Flag, Some("no")),
            opt("clip", Kind::Enum(CLIP), Some("area")),
            opt("dash", Kind::Exprs(1), None),
            opt("alpha", Kind::Exprs(1), Some("1")),
            opt("cap", Kind::Enum(CAP), Some("butt")),
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
            opt("mode", Kind::Enum(MODES), Some("asynchronous")),
            opt(
                "tick",
                Kind::Numbers {
                    count: 1,
                    integer: false,
                },
                Some("0.1"),
            ),
            opt(
                "timer",
                Kind::Numbers {
                    count: 1,
                    integer: false,
                },
                None,
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
            opt("undraw", Kind::Enum(UNDRAW), Some("paint")),
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
        &[opt("order", Kind::Enum(IR_ORDERS), Some("document"))],
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
            opt("enable", Kind::Exprs(1), Some("#t")),
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
        LINE,
        &[
            Arg::Attr("view"),
            Arg::Attr("from"),
            Arg::Attr("to"),
            Arg::Style,
        ],
    ),
    primitive(
        "polyline",
        drawing![req("points", Kind::Exprs(1))],
        POLYLINE,
        &[Arg::Attr("view"), Arg::Attr("points"), Arg::Style],
    ),
    primitive(
        "polygon",
        drawing![
            req("points", Kind::Exprs(1)),
            opt("fill", Kind::Colour, None)
        ],
        POLYGON,
        &[
            Arg::Attr("view"),
            Arg::Attr("points"),
            Arg::Attr("fill"),
            Arg::Style,
        ],
    ),
    primitive(
        "rectangle",
        drawing![
            req("from", Kind::Exprs(2)),
            req("to", Kind::Exprs(2)),
            opt("fill", Kind::Colour, None)
        ],
        RECTANGLE,
        &[
            Arg::Attr("view"),
            Arg::Attr("from"),
            Arg::Attr("to"),
            Arg::Attr("fill"),
            Arg::Style,
        ],
    ),
    primitive(
        "circle",
        drawing![
            req("center", Kind::Exprs(2)),
            req("radius", Kind::Exprs(1)),
            opt("fill", Kind::Colour, None)
        ],
        CIRCLE,
        &[
            Arg::Attr("view"),
            Arg::Attr("center"),
            Arg::Attr("radius"),
            Arg::Attr("fill"),
            Arg::Style,
        ],
    ),
    primitive(
        "ellipse",
        drawing![
            req("center", Kind::Exprs(2)),
            req("radii", Kind::Exprs(2)),
            opt("fill", Kind::Colour, None)
        ],
        ELLIPSE,
        &[
            Arg::Attr("view"),
            Arg::Attr("center"),
            Arg::Attr("radii"),
            Arg::Attr("fill"),
            Arg::Style,
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
        ARC,
        &[
            Arg::Attr("view"),
            Arg::Attr("center"),
            Arg::Attr("radius"),
            Arg::Attr("start"),
            Arg::Attr("extent"),
            Arg::Style,
        ],
    ),
    primitive(
        "text",
        drawing![
            req("coords", Kind::Exprs(2)),
            req("content", Kind::StrOrExpr),
            opt("font", Kind::Exprs(1), None),
            opt("fcolor", Kind::Colour, Some("black")),
            opt("size", Kind::Exprs(1), None),
            opt("halign", Kind::Enum(HALIGN), Some("LEFT")),
            opt("valign", Kind::Enum(VALIGN), Some("BASELINE")),
        ],
        TEXT,
        &[
            Arg::Attr("view"),
            Arg::Attr("coords"),
            Arg::Attr("content"),
            Arg::Attr("font"),
            Arg::Attr("fcolor"),
            Arg::Attr("size"),
            Arg::Attr("halign"),
            Arg::Attr("valign"),
            Arg::Style,
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
        FIGURE,
        &[
            Arg::Attr("view"),
            Arg::Attr("filename"),
            Arg::Attr("orig-origin"),
            Arg::Attr("orig-extents"),
            Arg::Attr("world-origin"),
            Arg::Attr("world-extents"),
            Arg::Style,
        ],
    ),
    primitive(
        "view-info",
        &[req("view", Kind::ViewRef)],
        VIEW_INFO,
        &[Arg::Attr("view")],
    ),
    primitive(
        "scroll",
        &[req("view", Kind::ViewRef), req("by", Kind::Exprs(2))],
        SCROLL,
        &[Arg::Attr("view"), Arg::Attr("by")],
    ),
    primitive(
        "resize",
        &[req("view", Kind::ViewRef), req("size", Kind::Exprs(2))],
        RESIZE,
        &[Arg::Attr("view"), Arg::Attr("size")],
    ),
    primitive(
        "rescale",
        &[req("view", Kind::ViewRef), req("world", Kind::Exprs(4))],
        RESCALE,
        &[Arg::Attr("view"), Arg::Attr("world")],
    ),
    primitive(
        "snapshot",
        &[req("view", Kind::ViewRef), req("file", Kind::StrOrExpr)],
        SNAPSHOT,
        &[Arg::Attr("view"), Arg::Attr("file")],
    ),
    primitive("beep", &[], BEEP, &[]),
    // A trigger (seed 003's pseudo-meters): the replay pauses after this record.
    primitive(
        "pause",
        &[opt("reason", Kind::StrOrExpr, None)],
        PAUSE,
        &[Arg::Attr("reason")],
    ),
    // Sound primitives (seeds 000 and 001). Pitch is `freq` (Hz) or `note` (MIDI number).
    primitive(
        "tone",
        &[
            opt("freq", Kind::Exprs(1), None),
            opt("note", Kind::Exprs(1), None),
            opt("duration", Kind::Exprs(1), Some("0.25")),
            opt("volume", Kind::Exprs(1), Some("0.8")),
            opt("pan", Kind::Exprs(1), Some("0")),
            opt("voice", Kind::Voice, Some("sine")),
            opt("channel", Kind::Exprs(1), None),
        ],
        TONE,
        &[
            Arg::Pitch,
            Arg::Attr("duration"),
            Arg::Attr("volume"),
            Arg::Attr("pan"),
            Arg::Attr("voice"),
            Arg::Attr("channel"),
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
        NOTE_ON,
        &[Arg::Attr("channel"), Arg::Pitch, Arg::Attr("volume")],
    ),
    primitive(
        "note-off",
        &[
            req("channel", Kind::Exprs(1)),
            opt("freq", Kind::Exprs(1), None),
            opt("note", Kind::Exprs(1), None),
        ],
        NOTE_OFF,
        &[Arg::Attr("channel"), Arg::Pitch],
    ),
    primitive(
        "note-volume",
        &[
            req("channel", Kind::Exprs(1)),
            opt("freq", Kind::Exprs(1), None),
            opt("note", Kind::Exprs(1), None),
            req("volume", Kind::Exprs(1)),
        ],
        NOTE_VOLUME,
        &[Arg::Attr("channel"), Arg::Pitch, Arg::Attr("volume")],
    ),
    primitive(
        "channel",
        &[
            req("channel", Kind::Exprs(1)),
            opt("voice", Kind::Voice, None),
            opt("pan", Kind::Exprs(1), None),
            opt("volume", Kind::Exprs(1), None),
            opt("mute", Kind::Enum(FLAG_WORDS), None),
        ],
        SOUND_CHANNEL,
        &[
            Arg::Attr("channel"),
            Arg::Attr("voice"),
            Arg::Attr("pan"),
            Arg::Attr("volume"),
            Arg::Attr("mute"),
        ],
    ),
    primitive(
        "master",
        &[req("volume", Kind::Exprs(1))],
        SOUND_MASTER,
        &[Arg::Attr("volume")],
    ),
    primitive(
        "tempo",
        &[req("factor", Kind::Exprs(1))],
        SOUND_TEMPO,
        &[Arg::Attr("factor")],
    ),
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

/// The markup primitives, in table order.
pub fn primitives() -> impl Iterator<Item = &'static ElementSpec> {
    ELEMENTS.iter().filter(|e| e.primitive())
}

/// The elements that may contain `child` (for "it belongs in ..." hints).
pub fn parents_of(child: &str) -> Vec<&'static str> {
    let child_is_primitive = element(child).is_some_and(|e| e.primitive());
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
    parent.content == Content::Code && element(child).is_some_and(|c| c.primitive())
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

    /// Each primitive's arguments fill its procedure's parameters exactly, and every
    /// attribute reaches the call (pitch attributes through `Arg::Pitch`, style ones through
    /// `Arg::Style`).
    #[test]
    fn every_call_fills_its_procedure() {
        for e in primitives() {
            let call = e.call.unwrap();
            let width: usize = call.args.iter().map(|a| a.width(e)).sum();
            assert_eq!(width, call.procedure.arity(), "{}", e.name);
            let passed = |name: &str| {
                call.args.iter().any(|a| match a {
                    Arg::Attr(n) => *n == name,
                    Arg::Pitch => matches!(name, "freq" | "note"),
                    Arg::Style => STYLE.params.contains(&name),
                })
            };
            for a in e.attrs {
                assert!(passed(a.name), "<{}> never passes `{}`", e.name, a.name);
            }
            for a in call.args {
                if let Arg::Attr(n) = a {
                    assert!(e.attr(n).is_some(), "<{}> has no `{n}`", e.name);
                }
            }
            if call.args.contains(&Arg::Style) {
                for p in STYLE.params {
                    assert!(e.attr(p).is_some(), "<{}> lacks style `{p}`", e.name);
                }
            }
            assert_eq!(
                PITCHED.contains(&e.name),
                call.args.contains(&Arg::Pitch) && e.name != "note-volume",
                "{}",
                e.name
            );
        }
    }

    /// `PROCEDURES` is exactly the primitives' procedures, the style and `midi->hz`, each
    /// once.
    #[test]
    fn procedures_are_the_calls() {
        let mut called: Vec<&str> = primitives()
            .map(|e| e.call.unwrap().procedure.name)
            .collect();
        called.push(STYLE.name);
        called.push(MIDI_TO_HZ.name);
        called.sort();
        let mut listed: Vec<&str> = PROCEDURES.iter().map(|p| p.name).collect();
        listed.sort();
        assert_eq!(called, listed);
        listed.dedup();
        assert_eq!(listed.len(), PROCEDURES.len());
    }

    #[test]
    fn defaults_are_words_of_their_kind() {
        for e in ELEMENTS {
            for a in e.attrs {
                assert!(
                    !(a.required && a.default.is_some()),
                    "{}.{}",
                    e.name,
                    a.name
                );
                if let (Some(d), Kind::Enum(words)) = (a.default, a.kind) {
                    assert!(words.contains(&d), "{}.{} = {d}", e.name, a.name);
                }
                if let (Some(d), Kind::Voice) = (a.default, a.kind) {
                    assert_eq!(crate::voice(d), Some(d), "{}.{}", e.name, a.name);
                }
            }
        }
        assert_eq!(flag_value("yes"), Some(true));
        assert_eq!(flag_value("true"), Some(true));
        assert_eq!(flag_value("no"), Some(false));
        assert_eq!(flag_value("false"), Some(false));
        assert_eq!(flag_value("Yes"), None);
    }
}
