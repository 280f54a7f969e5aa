//! The language's numeric limits, written once: the compiler refuses a spec beyond them, the
//! IR validator refuses a `.vo` file beyond them, and the runtime and the low-level layer
//! clamp or refuse values computed at run time against the same numbers. [`TABLE`] lists
//! them for the language reference (`docs/language.md`, generated from it).

/// The largest view side (window width or height), in pixels.
pub const MAX_WINDOW: u32 = 16384;
/// The smallest adaptation quality (extreme points a view remembers).
pub const MIN_QUALITY: u32 = 2;
/// The largest adaptation quality.
pub const MAX_QUALITY: u32 = 1 << 20;
/// The smallest synchronous clock tick, in trace seconds.
pub const MIN_TICK: f64 = 1e-9;
/// The shortest wall-clock `timer` of a visual object, in seconds.
pub const MIN_TIMER: f64 = 0.01;
/// The last record position a `<data-field index>` may name.
pub const MAX_FIELD_POSITION: u32 = 999_999;
/// The deepest nesting of parentheses in Scheme code: readers recurse per level and would
/// exhaust the stack.
pub const MAX_NESTING: usize = 1000;
/// The deepest nesting of elements in a document: trees are walked recursively, and no real
/// spec comes close.
pub const MAX_ELEMENT_DEPTH: usize = 256;
/// The most entity references one document may expand (nested ones included), as hardened
/// XML parsers limit them against "billion laughs".
pub const MAX_ENTITY_EXPANSIONS: usize = 10_000;
/// The most bytes of replacement text entity references may bring into one document.
pub const MAX_EXPANDED_BYTES: usize = 16 << 20;
/// The largest side of a figure's image, in pixels.
pub const MAX_IMAGE_SIDE: u32 = 16384;
/// The largest text size drawn, in pixels: beyond it glyph bitmaps would cost hundreds of
/// megabytes for no visible gain.
pub const MAX_FONT_SIZE: f32 = 2048.0;
/// The largest line thickness drawn, in pixels.
pub const MAX_THICK: f64 = 4096.0;
/// How many sound channels there are: `channel` is 0 to `SOUND_CHANNELS - 1`.
pub const SOUND_CHANNELS: usize = 256;

/// One limit as the language reference shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    /// The constant's name in this module.
    pub name: &'static str,
    pub value: f64,
    /// What is limited, and the unit.
    pub what: &'static str,
}

const fn limit(name: &'static str, value: f64, what: &'static str) -> Limit {
    Limit { name, value, what }
}

/// Every limit of this module, for the reference (`tests/language_tables.rs` checks that no
/// constant is left out).
pub const TABLE: &[Limit] = &[
    limit(
        "MAX_WINDOW",
        MAX_WINDOW as f64,
        "largest view side (`window`, `<resize>`), pixels",
    ),
    limit(
        "MIN_QUALITY",
        MIN_QUALITY as f64,
        "smallest adaptation `quality`",
    ),
    limit(
        "MAX_QUALITY",
        MAX_QUALITY as f64,
        "largest adaptation `quality`",
    ),
    limit(
        "MIN_TICK",
        MIN_TICK,
        "smallest synchronous `tick`, trace seconds",
    ),
    limit(
        "MIN_TIMER",
        MIN_TIMER,
        "shortest wall-clock `timer`, seconds",
    ),
    limit(
        "MAX_FIELD_POSITION",
        MAX_FIELD_POSITION as f64,
        "last record position a `<data-field index>` may name",
    ),
    limit(
        "MAX_NESTING",
        MAX_NESTING as f64,
        "deepest nesting of parentheses in Scheme code",
    ),
    limit(
        "MAX_ELEMENT_DEPTH",
        MAX_ELEMENT_DEPTH as f64,
        "deepest nesting of elements",
    ),
    limit(
        "MAX_ENTITY_EXPANSIONS",
        MAX_ENTITY_EXPANSIONS as f64,
        "entity references expanded per document",
    ),
    limit(
        "MAX_EXPANDED_BYTES",
        MAX_EXPANDED_BYTES as f64,
        "bytes of text entity references bring into a document",
    ),
    limit(
        "MAX_IMAGE_SIDE",
        MAX_IMAGE_SIDE as f64,
        "largest side of a `<figure>` image, pixels",
    ),
    limit(
        "MAX_FONT_SIZE",
        MAX_FONT_SIZE as f64,
        "largest text `size` drawn (larger is drawn at this size), pixels",
    ),
    limit(
        "MAX_THICK",
        MAX_THICK,
        "largest line `thick` drawn (thicker is drawn at this thickness), pixels",
    ),
    limit(
        "SOUND_CHANNELS",
        SOUND_CHANNELS as f64,
        "sound channels (`channel` is 0 to one less)",
    ),
];
