//! The compiled visual object: the contract between the VOML compiler and its runtime.
//!
//! A [`CompiledVo`] is what `voml compile` writes (as JSON, in a `.vo` file) and what the
//! runtime loads. It is self-contained: every entity and import is resolved, every default is
//! applied, every formal parameter (`$n`, `%n`, `^n`, `^n/m`) is replaced by the global or local
//! it stands for, and every markup primitive inside Scheme code is a call of the runtime's
//! primitive API (see [`primitive_api`]). The sources it was compiled from travel with it, so the
//! runtime can report an error at the `.voml` file, line and column.
//!
//! # Guarantees (checked by the compiler, relied on by the runtime)
//! - Every name a component refers to exists: `inputs` entries are indices into
//!   [`CompiledVo::events`], field positions are positions that event declares, `infos` and
//!   `controls` index [`CompiledVo::infos`] and [`CompiledVo::controls`], `views` index
//!   [`CompiledVo::views`].
//! - The Scheme [`Program`] parses; every entry point named by a component is defined in it.
//! - [`CompiledVo::ir_components`] is already in execution order (phase 1 runs in this order,
//!   then phase 2 in this order).
//! - Every [`Span`] points into [`CompiledVo::sources`].
//!
//! This crate deliberately depends on nothing but serde: no XML parser, no Scheme engine, no
//! renderer. See `docs/ir.md` for the format described as a specification.

use serde::{Deserialize, Serialize};

mod body;
mod condition;
mod render;
mod steel_lock;
pub mod tokens;
mod validate;
pub use body::{Expr, NativeBody, Reads as BodyReads, Statement};
pub use condition::{
    element_reader, names_the_event, CompareOp, Decision, Element, Operand, Test, ELEMENT_READERS,
};
pub use render::{Form, NativeRender, Op as RenderOp, RenderReads, MAX_RENDER_DEPTH};
pub use steel_lock::steel_parse_lock;
pub use validate::{
    IrError, MAX_FIELD_POSITION, MAX_QUALITY, MAX_WINDOW, MIN_QUALITY, MIN_TICK, MIN_TIMER,
};
/// The language's vocabulary (the language table, colour names, record and event types,
/// limits), shared by every part.
pub use voml_vocab as vocabulary;

/// The deepest nesting of parentheses the [`Program`] may have (a vocabulary limit). The
/// compiler refuses deeper code, and the runtime refuses a `.vo` file with deeper code: Scheme
/// readers recurse per level and would exhaust the stack.
pub use voml_vocab::limits::MAX_NESTING;

/// The global of the [`Program`] that says where its code runs: the compiler makes every loop
/// and procedure body written in the spec begin by setting it to the program offset of the
/// form's opening parenthesis, so that the runtime can place a runaway that the Scheme engine
/// stopped without saying where. `#f` until the first such body runs.
pub const HERE_GLOBAL: &str = "voml/here";

/// The prefix of the globals holding the styles of drawing primitives whose style is all
/// literals: the compiler makes each such style once per program, as `voml/style/K`.
pub const STYLE_PREFIX: &str = "voml/style/";

/// Whether `name` is one of the program's style globals ([`STYLE_PREFIX`] and a number).
pub fn is_style_global(name: &str) -> bool {
    name.strip_prefix(STYLE_PREFIX)
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// The version of the IR format. Bumped on every incompatible change; the runtime refuses a
/// `.vo` file with another version.
pub const FORMAT_VERSION: u32 = 1;

/// A whole compiled visual object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompiledVo {
    /// Always [`FORMAT_VERSION`] when written by this compiler.
    pub format: u32,
    /// The `name` of the `<visual-object>`.
    pub name: String,
    /// Its `<description>`, whitespace-normalised.
    pub description: Option<String>,
    /// How rendering is driven.
    pub mode: RenderMode,
    /// Wall seconds between timer callbacks (`timer`), when the VO asks for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer: Option<f64>,
    pub events: Vec<EventDecl>,
    pub infos: Vec<Variable>,
    pub controls: Vec<Variable>,
    pub views: Vec<View>,
    pub ep_components: Vec<EpComponent>,
    /// In execution order.
    pub ir_components: Vec<IrComponent>,
    /// The tangled Scheme program: globals, utility code, one procedure per component part.
    pub program: Program,
    /// Files referenced by literal `figure` file names, embedded so the `.vo` is self-contained.
    pub assets: Vec<Asset>,
    /// Every source file the VO was compiled from (the spec, its entities and imports).
    pub sources: Vec<SourceFile>,
    pub span: Span,
}

/// Asynchronous rendering runs the IR components after every event; synchronous rendering runs
/// them on a clock tick of `tick` seconds of trace time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RenderMode {
    Asynchronous,
    Synchronous { tick: f64 },
}

/// A `<data-event>`: which records it matches and where its fields are.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventDecl {
    pub name: String,
    /// The record type (PICL: -3 entry, -4 exit, ...), names already resolved to numbers.
    pub rtype: i64,
    pub etype: i64,
    pub fields: Vec<FieldDecl>,
    pub span: Span,
}

/// A `<data-field>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldDecl {
    pub name: String,
    pub ty: FieldType,
    /// Absolute position in the record: 0 is the record type, 1 the event type, 2 the
    /// timestamp, 3 the processor.
    pub position: u32,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FieldType {
    Int,
    Real,
    String,
    Any,
}

/// An info or control structure: a global the components share by reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Variable {
    /// The name in the spec.
    pub name: String,
    /// The Scheme global that holds it in [`Program`].
    pub global: String,
    pub ty: VarType,
    /// The initial value as a Scheme datum (already checked against `ty`).
    pub init: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VarType {
    Int,
    Real,
    Boolean,
    String,
    List,
    Vector,
    Any,
}

impl VarType {
    /// Every type, in the order of the vocabulary's `VAR_TYPES`.
    pub const ALL: [VarType; 7] = [
        VarType::Int,
        VarType::Real,
        VarType::Boolean,
        VarType::String,
        VarType::List,
        VarType::Vector,
        VarType::Any,
    ];

    /// The type's name, as a spec's `type` attribute writes it (the vocabulary's word).
    pub fn word(self) -> &'static str {
        let at = VarType::ALL
            .iter()
            .position(|t| *t == self)
            .expect("every type is in ALL");
        voml_vocab::schema::VAR_TYPES[at]
    }

    /// The type a `type` attribute names, if it names one.
    pub fn from_word(word: &str) -> Option<VarType> {
        let at = voml_vocab::schema::VAR_TYPES
            .iter()
            .position(|w| *w == word)?;
        VarType::ALL.get(at).copied()
    }
}

/// A `<view>`: one display area of the low-level layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct View {
    pub name: String,
    pub title: String,
    /// Width and height in pixels.
    pub window: [u32; 2],
    /// x0 x1 y0 y1 in world coordinates; y grows upwards.
    pub world: [f64; 4],
    /// left right top bottom, in pixels.
    pub margins: [u32; 4],
    /// Adaptation per direction, in the order x+, x-, y+, y-.
    pub adapt: [Adapt; 4],
    /// The adaptation quality: how many extreme points may be remembered.
    pub quality: u32,
    /// A colour literal.
    pub background: String,
    /// What undrawing a component's last frame does in the view.
    #[serde(default)]
    pub undraw: Undraw,
    pub infos: Vec<usize>,
    pub controls: Vec<usize>,
    /// The procedure running the view's initialisation code, if it has any.
    pub init: Option<EntryPoint>,
    pub span: Span,
}

/// `<view undraw>`, in the order of [`voml_vocab::schema::UNDRAW`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Undraw {
    /// The frame's shapes are painted over in the background colour, with whatever else
    /// lies on those pixels (the paper's raster LLVO).
    #[default]
    Paint,
    /// Exactly the frame's shapes go; what lay beneath or on top of them stays.
    Exact,
}

impl Undraw {
    const ALL: [Undraw; 2] = [Undraw::Paint, Undraw::Exact];

    /// The value a markup word names.
    pub fn from_word(word: &str) -> Option<Undraw> {
        let at = voml_vocab::schema::UNDRAW.iter().position(|w| *w == word)?;
        Undraw::ALL.get(at).copied()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Adapt {
    None,
    Scroll,
    Rescale,
}

/// An `<ep-component>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpComponent {
    pub name: String,
    /// The library component it instantiates (`use`), if any.
    pub library: Option<String>,
    pub inputs: Vec<Input>,
    pub infos: Vec<usize>,
    pub controls: Vec<usize>,
    /// Condition parts run before the event parts of every component.
    pub before: Vec<ConditionPart>,
    /// Condition parts run after the event parts of every component.
    pub after: Vec<ConditionPart>,
    pub span: Span,
}

/// One entry of an EP component's `inputs`: an event and the fields the component takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// Index into [`CompiledVo::events`].
    pub event: usize,
    /// Indices into that event's `fields`, in the order the component lists them; these are
    /// the arguments of [`Input::handler`], after preprocessing.
    pub fields: Vec<usize>,
    /// The procedure for the `<input>` part; `None` when the component has no part for it.
    pub handler: Option<EntryPoint>,
    /// The part's code as statements a runtime may carry out without Scheme, when the
    /// compiler recognised it as one (see [`NativeBody`]); `handler` does the same in Scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<NativeBody>,
    /// The part's code as forms a runtime may evaluate without Scheme (see [`NativeRender`]),
    /// when it is not a [`NativeBody`]: the input's fields are the slots `0..fields.len()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forms: Option<NativeRender>,
    pub span: Span,
}

/// A `<before>` or `<after>` part. `entry` tests the condition itself and, when it holds, runs
/// the part's code; a runtime may call it for every event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConditionPart {
    pub entry: EntryPoint,
    /// The condition as a test of the event a runtime can make without Scheme, when it is
    /// one the compiler recognises (see [`NativeCondition`]). Absent from `.vo` files written
    /// before it existed, and for every other condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<NativeCondition>,
    /// The condition computes from these infos and controls alone (see [`Reads`]): while
    /// no code that may assign one of them has run since `entry` last found it false, it is
    /// false still, and a runtime may skip the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pure: Option<Reads>,
}

impl ConditionPart {
    /// What a runtime keeps the condition by, when it may: its `pure` reads, unless a native
    /// test decides it (and calls the part's code alone, which gives no verdict).
    pub fn kept_by(&self) -> Option<&Reads> {
        self.pure.as_ref().filter(|_| self.native.is_none())
    }
}

/// The info and control structures a pure expression reads (indices into
/// [`CompiledVo::infos`] and [`CompiledVo::controls`]). Pure: literals, those structures, and
/// procedures that neither change anything nor look inside a value that can change in place,
/// none of which the program redefines; and no code of the program names a structure but
/// through a component's lists. Its value then stands until code naming one of those
/// structures runs (an EP part, an IR part, or code outside the components).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reads {
    pub infos: Vec<usize>,
    pub controls: Vec<usize>,
}

/// A condition part's condition as a native test, and its code alone.
///
/// For every event, `test` decides exactly what the Scheme condition would: when it holds
/// ([`Decision::Holds`]) the part's code runs, which is calling `body`; when it fails, nothing
/// runs; when it cannot tell ([`Decision::Unsure`]: the Scheme condition would raise an error,
/// or its value depends on something the test does not model), the runtime calls the part's
/// `entry`, which evaluates the condition in Scheme and so raises the error where it would
/// have been raised.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NativeCondition {
    pub test: Test,
    /// The part's code without its condition: the procedure `entry` calls when the condition
    /// holds.
    pub body: EntryPoint,
    /// That code as statements a runtime may carry out without calling `body`, when the
    /// compiler recognised it as one (see [`NativeBody`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statements: Option<NativeBody>,
}

/// An `<ir-component>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IrComponent {
    pub name: String,
    pub library: Option<String>,
    pub views: Vec<usize>,
    pub infos: Vec<usize>,
    pub controls: Vec<usize>,
    pub refresh: Refresh,
    pub buffer: bool,
    /// Returns a boolean; `None` means always enabled.
    pub enable: Option<EntryPoint>,
    /// `enable` computes from these structures alone (see [`Reads`]): a runtime may keep
    /// its value while no code that may assign one of them runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable_pure: Option<Reads>,
    pub phase1: Option<EntryPoint>,
    /// `phase1` only draws, from these structures alone (a sequence of drawing primitives
    /// whose arguments are pure expressions; see [`Reads`]): a runtime may skip its frames
    /// where nothing else depends on them, as `refresh.changed` lets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase1_pure: Option<Reads>,
    /// `phase1` as forms a runtime may evaluate without Scheme, when the compiler recognised
    /// it as such (see [`NativeRender`]); `phase1` does the same in Scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase1_native: Option<NativeRender>,
    /// The `<end-with>` code.
    pub phase2: Option<EntryPoint>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refresh {
    /// Redraw when a view it draws in is resized.
    pub resize: bool,
    /// Redraw when a view it draws in is rescaled.
    pub rescale: bool,
    /// Undraw what it drew last time before drawing again.
    pub update: bool,
    /// Skip a round when nothing it reads may have changed since it last ran: no EP
    /// component naming one of its infos or controls ran, and nothing else changed its views.
    #[serde(default)]
    pub changed: bool,
}

/// A zero-argument (or, for event parts, n-argument) Scheme procedure defined in [`Program`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EntryPoint {
    /// The global name of the procedure.
    pub symbol: String,
    /// The code it was made from.
    pub span: Span,
}

/// The tangled Scheme program and the map from its bytes back to the sources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Program {
    pub text: String,
    /// Sorted by `generated_start`, non-overlapping.
    pub map: Vec<MapSegment>,
}

/// `len` bytes of the program starting at `generated_start` came from `source`.
///
/// When `exact` is true the bytes are a verbatim copy, so an offset inside the segment maps to
/// the same offset inside the source span; otherwise (generated glue, decoded `&lt;`, a
/// primitive turned into a call) the whole segment maps to the whole source span.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapSegment {
    pub generated_start: u32,
    pub len: u32,
    pub source: Span,
    pub exact: bool,
}

impl Program {
    /// The deepest nesting of `(`/`[` in the program text, ignoring strings, comments and
    /// character literals (a cheap check a runtime makes before handing the text to a reader).
    pub fn nesting_depth(&self) -> usize {
        let b = self.text.as_bytes();
        let (mut depth, mut max, mut i) = (0usize, 0usize, 0usize);
        while i < b.len() {
            match b[i] {
                b'"' => {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                }
                b';' => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'#' if b.get(i + 1) == Some(&b'\\') => i += 2,
                b'(' | b'[' => {
                    depth += 1;
                    max = max.max(depth);
                }
                b')' | b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        max
    }

    /// Appends `text`, which came from `source` (verbatim when `exact`).
    pub fn push(&mut self, text: &str, source: Span, exact: bool) {
        if text.is_empty() {
            return;
        }
        let generated_start = self.text.len() as u32;
        let len = text.len() as u32;
        // Merge with the previous segment when this continues it verbatim, or when both are
        // generated from the same place (every byte of either maps to that place).
        if let Some(last) = self.map.last_mut() {
            let adjacent = last.generated_start + last.len == generated_start;
            if adjacent
                && exact
                && last.exact
                && last.source.file == source.file
                && last.source.end == source.start
            {
                last.len += len;
                last.source.end = source.start + len;
                self.text.push_str(text);
                return;
            }
            if adjacent && !exact && !last.exact && last.source == source {
                last.len += len;
                self.text.push_str(text);
                return;
            }
        }
        self.text.push_str(text);
        if self.map.is_empty() {
            // Most fragments (attribute values, short texts) have one segment: no room for
            // four.
            self.map.reserve_exact(1);
        }
        self.map.push(MapSegment {
            generated_start,
            len,
            source,
            exact,
        });
    }

    /// Appends bytes `range` of `other`, keeping their mapping.
    pub fn push_range(&mut self, other: &Program, range: std::ops::Range<usize>) {
        let (start, end) = (range.start as u32, range.end as u32);
        let first = other
            .map
            .partition_point(|seg| seg.generated_start + seg.len <= start);
        for seg in &other.map[first..] {
            if seg.generated_start >= end {
                break;
            }
            let s = seg.generated_start.max(start);
            let e = (seg.generated_start + seg.len).min(end);
            let text = &other.text[s as usize..e as usize];
            let source = if seg.exact {
                let delta = s - seg.generated_start;
                Span {
                    file: seg.source.file,
                    start: seg.source.start + delta,
                    end: seg.source.start + delta + (e - s),
                }
            } else {
                seg.source
            };
            self.push(text, source, seg.exact);
        }
    }

    /// Appends the whole of `other`.
    pub fn push_program(&mut self, other: &Program) {
        self.push_range(other, 0..other.text.len());
    }

    /// The span from the first to the last mapped byte, when they share a file.
    pub fn whole_span(&self) -> Option<Span> {
        if self.text.is_empty() {
            return None;
        }
        self.source_of_range(0, self.text.len())
    }

    /// The last segment starting at or before byte `offset`, and the offset as the map has it.
    fn segment_from(&self, offset: usize) -> Option<(MapSegment, u32)> {
        let offset = u32::try_from(offset).ok()?;
        let idx = self
            .map
            .partition_point(|seg| seg.generated_start <= offset)
            .checked_sub(1)?;
        Some((self.map[idx], offset))
    }

    /// Whether byte `offset` of the program was copied verbatim from the sources (not
    /// generated by the compiler).
    pub fn verbatim(&self, offset: usize) -> bool {
        self.segment_from(offset)
            .is_some_and(|(seg, at)| seg.exact && at < seg.generated_start + seg.len)
    }

    /// The source span that generated byte `offset` of the program came from, if any.
    pub fn source_of(&self, offset: usize) -> Option<Span> {
        let (seg, offset) = self.segment_from(offset)?;
        if offset >= seg.generated_start + seg.len.max(1) {
            return None;
        }
        if seg.exact {
            let start = seg.source.start + (offset - seg.generated_start);
            Some(Span {
                file: seg.source.file,
                start,
                end: (start + 1).min(seg.source.end),
            })
        } else {
            Some(seg.source)
        }
    }

    /// Maps a generated byte range to the narrowest source span covering its start.
    pub fn source_of_range(&self, start: usize, end: usize) -> Option<Span> {
        let first = self.source_of(start)?;
        let last = self.source_of(end.saturating_sub(1).max(start));
        match last {
            Some(last) if last.file == first.file && last.end >= first.start => Some(Span {
                file: first.file,
                start: first.start,
                end: last.end,
            }),
            _ => Some(first),
        }
    }
}

/// An embedded file (a figure's image).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Asset {
    /// The file name as written in the spec; the runtime looks it up by this name.
    pub name: String,
    /// The bytes, base64-encoded.
    pub base64: String,
}

/// A source file, with its text, so that spans can be shown as `file:line:col`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceFile {
    /// The path as the user named it (or as it was found on the search path).
    pub path: String,
    /// Shared with the compiler's own copy, when the compiler made it.
    pub text: std::sync::Arc<str>,
}

impl SourceFile {
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        line_col(&self.text, offset as usize)
    }
}

/// 1-based line and column (counted in characters) of a byte offset into `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// A byte range in one of [`CompiledVo::sources`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    pub file: u32,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: u32, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }
}

impl CompiledVo {
    /// Reads a `.vo` file's contents.
    pub fn from_json(text: &str) -> Result<CompiledVo, String> {
        #[derive(Deserialize)]
        struct Header {
            format: u32,
        }
        let header: Header =
            serde_json::from_str(text).map_err(|e| format!("not a compiled visual object: {e}"))?;
        if header.format != FORMAT_VERSION {
            return Err(format!(
                "compiled with IR format {} but this runtime reads format {FORMAT_VERSION}; \
                 recompile the .voml file",
                header.format
            ));
        }
        serde_json::from_str(text).map_err(|e| format!("corrupt compiled visual object: {e}"))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the IR holds only serialisable data")
    }

    /// Every procedure of the program the runtime calls: views' initialisation, inputs'
    /// handlers, condition parts (and their natively decided bodies), IR parts.
    pub fn entry_points(&self) -> impl Iterator<Item = &EntryPoint> {
        let views = self.views.iter().filter_map(|v| v.init.as_ref());
        let eps = self.ep_components.iter().flat_map(|c| {
            let handlers = c.inputs.iter().filter_map(|i| i.handler.as_ref());
            let parts =
                c.before.iter().chain(&c.after).flat_map(|p| {
                    std::iter::once(&p.entry).chain(p.native.as_ref().map(|n| &n.body))
                });
            handlers.chain(parts)
        });
        let irs = self
            .ir_components
            .iter()
            .flat_map(|c| [&c.enable, &c.phase1, &c.phase2].into_iter().flatten());
        views.chain(eps).chain(irs)
    }

    /// `file:line:col` of a span, for messages.
    pub fn locate(&self, span: Span) -> String {
        match self.sources.get(span.file as usize) {
            Some(file) => {
                let (line, col) = file.line_col(span.start);
                format!("{}:{line}:{col}", file.path)
            }
            None => "<unknown>".to_string(),
        }
    }
}

/// The procedures the generated program calls for markup primitives. The runtime must define
/// every one of them, with the arity given, before loading a [`Program`].
///
/// Arguments are positional and always all present (the compiler fills in defaults). Each
/// procedure, its parameters and which attribute fills which parameter are declared once, in
/// the vocabulary's language table ([`vocabulary::schema`]); `docs/ir.md` lists the calls as
/// generated from it. `view` is a view index, `style` is `(voml-style color thick adapt clip
/// dash alpha cap)`, `fill` is a colour string or `#f`, and colours are strings.
pub mod primitive_api {
    pub use voml_vocab::schema::{procedure_named, Arg, Call, Procedure, PROCEDURES};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_from_one() {
        let text = "ab\nčd\nx";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 3), (2, 1));
        // 'č' is two bytes; the 'd' after it is column 2.
        assert_eq!(line_col(text, 5), (2, 2));
        assert_eq!(line_col(text, 7), (3, 1));
        assert_eq!(line_col(text, 99), (3, 2));
    }

    #[test]
    fn source_map_maps_exact_and_opaque_segments() {
        let program = Program {
            text: "0123456789".into(),
            map: vec![
                MapSegment {
                    generated_start: 0,
                    len: 4,
                    source: Span::new(0, 100, 104),
                    exact: true,
                },
                MapSegment {
                    generated_start: 4,
                    len: 6,
                    source: Span::new(1, 10, 30),
                    exact: false,
                },
            ],
        };
        assert_eq!(program.source_of(2), Some(Span::new(0, 102, 103)));
        assert_eq!(program.source_of(5), Some(Span::new(1, 10, 30)));
        assert_eq!(program.source_of(10), None);
        assert_eq!(program.source_of_range(1, 3), Some(Span::new(0, 101, 103)));
    }

    #[test]
    fn pieces_from_one_place_are_one_segment_and_map_as_before() {
        let mut program = Program::default();
        let element = Span::new(0, 40, 60);
        program.push("(f ", element, false);
        program.push("1", element, false);
        program.push(")", Span::new(0, 70, 71), false);
        program.push("ab", Span::new(0, 10, 12), true);
        program.push("cd", Span::new(0, 12, 14), true);
        assert_eq!(program.map.len(), 3, "{:?}", program.map);
        assert_eq!(program.source_of(1), Some(element));
        assert_eq!(program.source_of(3), Some(element));
        assert_eq!(program.source_of(4), Some(Span::new(0, 70, 71)));
        assert_eq!(program.source_of(7), Some(Span::new(0, 12, 13)));
        // A single piece leaves no room for more.
        let mut one = Program::default();
        one.push("x", element, false);
        assert_eq!(one.map.capacity(), 1);
    }

    #[test]
    fn refuses_other_format_versions() {
        let err = CompiledVo::from_json(r#"{"format": 999}"#).unwrap_err();
        assert!(err.contains("format 999"), "{err}");
        let err = CompiledVo::from_json("not json").unwrap_err();
        assert!(err.contains("not a compiled visual object"), "{err}");
    }
}

#[cfg(test)]
mod var_type_tests {
    use super::VarType;

    #[test]
    fn every_type_has_the_vocabulary_word_and_back() {
        assert_eq!(VarType::ALL.len(), voml_vocab::schema::VAR_TYPES.len());
        for t in VarType::ALL {
            assert_eq!(VarType::from_word(t.word()), Some(t));
            // The word is the one serde writes in the IR and --dump-state.
            assert_eq!(serde_json::to_value(t).unwrap(), t.word());
        }
        assert_eq!(VarType::Boolean.word(), "boolean");
        assert_eq!(VarType::from_word("integer"), None);
    }
}
