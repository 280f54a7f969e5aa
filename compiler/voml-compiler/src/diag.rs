//! Diagnostics as values: every problem the compiler finds, with a code, a place and hints.
//!
//! The compiler never stops at the first problem: it collects [`Diagnostic`]s and returns them
//! all. They are rendered for people with codespan-reporting ([`render`]) or as one JSON object
//! per line for editors and CI ([`to_json`]). The catalogue of codes ([`Code`]) is generated
//! from the doc comments below; `voml explain CODE` prints an entry and `docs/diagnostics.md` is
//! the whole catalogue.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label as CsLabel, LabelStyle};
use codespan_reporting::term;
use voml_ir::Span;

use crate::source::SourceDb;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

/// One labelled place.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
    pub primary: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    pub labels: Vec<Label>,
    pub hints: Vec<String>,
}

impl Diagnostic {
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: code.severity(),
            code,
            message: message.into(),
            labels: vec![Label {
                span,
                message: String::new(),
                primary: true,
            }],
            hints: Vec::new(),
        }
    }

    /// Sets the text of the primary label.
    pub fn label(mut self, message: impl Into<String>) -> Diagnostic {
        self.labels[0].message = message.into();
        self
    }

    pub fn secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hints.push(hint.into());
        self
    }

    /// Adds "did you mean `x`?" when some candidate is close to `wrong`.
    pub fn did_you_mean<'a>(
        self,
        wrong: &str,
        candidates: impl IntoIterator<Item = &'a str>,
    ) -> Diagnostic {
        match closest(wrong, candidates) {
            Some(best) => self.hint(format!("did you mean `{best}`?")),
            None => self,
        }
    }

    pub fn primary_span(&self) -> Span {
        self.labels[0].span
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The candidate closest to `wrong`, if it is close enough to be a likely typo.
pub fn closest<'a>(wrong: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (wrong.chars().count() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(wrong, c), c))
        .filter(|&(d, c)| d <= limit && c != wrong)
        .min_by_key(|&(d, c)| (d, c.len()))
        .map(|(_, c)| c)
}

macro_rules! codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $code:literal, $slug:literal, $sev:ident; )*) => {
        /// Every diagnostic the compiler can emit.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The stable code, e.g. `E0021`.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            /// A short kebab-case name, e.g. `unknown-event`.
            pub fn slug(self) -> &'static str {
                match self { $(Code::$variant => $slug,)* }
            }

            pub fn severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$sev,)* }
            }

            /// The catalogue entry: what the diagnostic means and how to fix it.
            pub fn explanation(self) -> &'static str {
                match self { $(Code::$variant => concat!($($doc, "\n"),*),)* }
            }

            pub fn parse(text: &str) -> Option<Code> {
                Code::ALL.iter().copied().find(|c| {
                    c.as_str().eq_ignore_ascii_case(text) || c.slug() == text
                })
            }
        }
    };
}

codes! {
    /// The file is not well-formed XML: a tag is not closed, an attribute is not quoted, an end
    /// tag does not match its start tag, or the file ends inside markup. Nothing after this
    /// point of the file can be checked. In Scheme code, write `<` as `&lt;` (or use the
    /// prelude's `lt`, `le`, or a CDATA section) and `&` as `&amp;`.
    XmlSyntax = "E0001", "xml-syntax", Error;
    /// An element name the language does not have. Element names are the paper's
    /// (`ep-component`, `data-event`, ...); see `docs/language.md`.
    UnknownElement = "E0002", "unknown-element", Error;
    /// A known element in a place where it is not allowed, such as `<input>` inside an
    /// `<ir-component>` or `<view>` outside `<view-initializations>`.
    MisplacedElement = "E0003", "misplaced-element", Error;
    /// An attribute the element does not have.
    UnknownAttribute = "E0004", "unknown-attribute", Error;
    /// An attribute the element cannot do without, such as `name` on a `<variable>`.
    MissingAttribute = "E0005", "missing-attribute", Error;
    /// Text where only elements may stand (for example directly inside `<event-processing>`).
    /// Scheme code belongs inside `<input>`, `<ir-component>`, `<utility-code>` and the like.
    UnexpectedText = "E0006", "unexpected-text", Error;
    /// An element that may appear only once in its parent appears again.
    DuplicateElement = "E0007", "duplicate-element", Error;
    /// A required element is missing, such as the `<visual-object>` in `<body>`.
    MissingElement = "E0008", "missing-element", Error;
    /// An `&name;` reference to an entity the DOCTYPE does not declare.
    UndeclaredEntity = "E0010", "undeclared-entity", Error;
    /// The file an external entity or `<import>` names cannot be found or read. It is looked
    /// for relative to the referring file, then in each `-I` directory and `VOML_PATH` entry.
    FileNotFound = "E0011", "file-not-found", Error;
    /// An entity or import refers, directly or through others, to itself.
    IncludeCycle = "E0012", "include-cycle", Error;
    /// A remote (`http`/`https`) component without a sha256 pin. Pin it: append
    /// `#sha256=<64 hex digits>` to the URL, or give `<import sha256="...">`.
    UnpinnedRemote = "E0013", "unpinned-remote", Error;
    /// A pinned remote component that is not in the component cache, or whose cached bytes
    /// do not match the pin; from `voml fetch`, one it could not download (the server
    /// failed or answered with an error, the file passed the size limit, or its content does
    /// not match the pin: nothing is cached then). `voml fetch SPEC` downloads a spec's
    /// pinned components into the cache (`--cache DIR`, `VOML_CACHE`); `voml check` and
    /// `voml run` only read the cache, and never download.
    RemoteUnavailable = "E0014", "remote-unavailable", Error;
    /// A reference (entity, import or figure) to a file outside the places a spec may read:
    /// the spec's own directory tree and the search path (`-I`, `VOML_PATH`), after links
    /// and `..` are resolved; or to something that is not a regular file (a directory, a
    /// device, a FIFO); or a remote component over plain `http` from another machine
    /// (plain `http` is taken only from `localhost`, 127.0.0.1 and `[::1]`: use `https`).
    /// A spec from someone else must not read the rest of your files: copy the file next to
    /// the spec, or add its directory with `-I DIR`.
    ReferenceRefused = "E0016", "reference-refused", Error;
    /// Entity references expand to more than the compiler allows (nested entities that
    /// multiply, the "billion laughs", or one large entity used very often).
    EntityExpansion = "E0017", "entity-expansion", Error;
    /// A DOCTYPE declaration this compiler does not handle (parameter entities, NDATA, a
    /// malformed `<!ENTITY>`).
    BadDoctype = "E0015", "bad-doctype", Error;
    /// Two things of one kind share a name: events, fields of one event, variables (info and
    /// control structures share one name space), views, or components.
    DuplicateName = "E0020", "duplicate-name", Error;
    /// An `inputs` entry names an event that `<event-declarations>` does not declare.
    UnknownEvent = "E0021", "unknown-event", Error;
    /// An `inputs` entry names a field its event does not declare.
    UnknownField = "E0022", "unknown-field", Error;
    /// `infos` or `controls` names a variable that is not declared in `<info-structures>` or
    /// `<control-structures>` respectively.
    UnknownVariable = "E0023", "unknown-variable", Error;
    /// `views` (or a primitive's `view`) names a view that `<view-initializations>` does not
    /// declare.
    UnknownView = "E0024", "unknown-view", Error;
    /// `use` names a library component that no `<import>`ed library defines, or the element
    /// kinds differ (an IR component cannot use an EP library component).
    UnknownComponent = "E0025", "unknown-component", Error;
    /// A formal parameter whose number is beyond the component's list: `$n` indexes `infos`,
    /// `%n` `controls`, `^n` `inputs` (EP) or `views` (IR), `^n/m` the fields listed for
    /// input n. Numbering starts at 0.
    ParameterOutOfRange = "E0030", "parameter-out-of-range", Error;
    /// A formal parameter where it has no meaning: `^n` in a condition part or in utility
    /// code, `^n/m` in an IR component, any parameter in `<utility-code>`.
    ParameterNotAllowed = "E0031", "parameter-not-allowed", Error;
    /// An `<input name="...">` that is neither `^k` for an existing input nor the name of an
    /// event in the component's `inputs`, or a second part for the same input.
    BadInputName = "E0032", "bad-input-name", Error;
    /// A malformed number: `window`, `world`, `margins`, `index`, `etype`, `tick`, `quality`
    /// and `order` take numbers of a given count and range.
    BadNumber = "E0040", "bad-number", Error;
    /// An `init` value that is not a literal of the variable's type.
    BadInit = "E0041", "bad-init", Error;
    /// An attribute value outside its fixed set (for example `refresh="redraw"`).
    BadValue = "E0042", "bad-value", Error;
    /// An `rtype` that is neither an integer nor a known record-type name.
    BadRecordType = "E0043", "bad-record-type", Error;
    /// Two fields of one event at the same record position, or a position before 2 (0 and 1
    /// are the record and event types).
    BadFieldPosition = "E0044", "bad-field-position", Error;
    /// A `voice` written as a name that is not one of the synthesiser's voices (`sine`,
    /// `vibes`, `marimba`, `bell`, `string`, `noise`; case does not matter, and `vibraphone`
    /// and `strings` are taken too). A voice computed by an expression is checked when it
    /// plays.
    UnknownVoice = "E0045", "unknown-voice", Error;
    /// Scheme code that cannot be read: unbalanced parentheses, an unterminated string, a bad
    /// token. The position is where the reader gave up.
    SchemeSyntax = "E0050", "scheme-syntax", Error;
    /// A coordinate attribute must hold exactly the number of Scheme expressions it takes
    /// (`from="x y"` two, `world` four, others one).
    ExpressionCount = "E0051", "expression-count", Error;
    /// An element that instantiates a library component (`use`) lists a different number of
    /// views, infos, controls or inputs than the library component declares.
    UseArity = "E0052", "use-arity", Error;
    /// An element with `use` also has code of its own; the code comes from the library.
    UseWithCode = "E0053", "use-with-code", Error;
    /// The Scheme engine refuses the program when it loads it, typically for a name that is
    /// defined nowhere (a typo, or a variable used without listing it in `infos`/`controls`
    /// and writing `$n`/`%n`), or because the top level (utility code, initial values) fails
    /// as it runs. `voml check` reports every use of a name defined nowhere, and runs the top
    /// level as loading would.
    SchemeLoad = "E0054", "scheme-load", Error;
    /// An info structure no component reads or writes.
    UnusedInfo = "W0001", "unused-info", Warning;
    /// A control structure no component or view reads or writes.
    UnusedControl = "W0002", "unused-control", Warning;
    /// An event no EP component takes: records of that kind will be read and ignored.
    UnusedEvent = "W0003", "unused-event", Warning;
    /// A view no IR component draws in and no code refers to.
    UnusedView = "W0004", "unused-view", Warning;
    /// A bare word in a colour attribute that is not a colour name but is close to one; it is
    /// taken as a Scheme variable, which is probably not what was meant.
    SuspiciousColour = "W0005", "suspicious-colour", Warning;
    /// An EP component with no parts, or an IR component with no code: it does nothing.
    EmptyComponent = "W0006", "empty-component", Warning;
    /// An `<import>` none of whose library components any component `use`s.
    UnusedImport = "W0007", "unused-import", Warning;
    /// An `init` that reads like code (`(list "red" "blue")`): `init` is a datum, written as
    /// it is, so this makes a list whose first element is the symbol `list`. Write the value
    /// itself: `("red" "blue")`, or `(0 0 0)` for a vector.
    InitIsData = "W0008", "init-is-data", Warning;
    /// An IR component with `changed` in `refresh` whose phase 1 reads `(current-event)`,
    /// makes sound, or assigns one of its structures (`set!`) or changes one in place
    /// (`vector-set!`, `vector-fill!`, `vector-push!`, `set-box!`). `changed` promises that
    /// phase 1 only draws, from the component's infos, controls and views, so that a round
    /// in which none of them changed is skipped, and a display alone in its views is drawn
    /// only when a picture is needed: the record it reads is then that of another round,
    /// and the sound and the changes of the rounds skipped never happen. Compute what it needs
    /// in an EP component (or in `end-with`), or leave `changed` out.
    ChangedNotKept = "W0009", "changed-not-kept", Warning;
}

/// At most this many diagnostics are rendered in full; the rest are counted.
pub const MAX_RENDERED: usize = 100;
/// A source line longer than this is not reprinted whole: an excerpt around the span is.
pub const MAX_EXCERPT_LINE: usize = 400;

/// Renders diagnostics for a terminal or a log, as codespan-reporting does: the first
/// [`MAX_RENDERED`], then how many more there are; a diagnostic on a very long line shows an
/// excerpt of it.
pub fn render(db: &SourceDb, diagnostics: &[Diagnostic], color: bool) -> String {
    let config = term::Config::default();
    let mut out = String::new();
    for d in diagnostics.iter().take(MAX_RENDERED) {
        if d.labels
            .iter()
            .any(|l| line_len(db, l.span) > MAX_EXCERPT_LINE)
        {
            out.push_str(&render_excerpt(db, d));
            continue;
        }
        let cs = to_codespan(d);
        if color {
            let mut buffer = term::termcolor::Buffer::ansi();
            if term::emit_to_write_style(&mut buffer, &config, db, &cs).is_ok() {
                out.push_str(&String::from_utf8_lossy(buffer.as_slice()));
                continue;
            }
        }
        match term::emit_into_string(&config, db, &cs) {
            Ok(s) => out.push_str(&s),
            Err(e) => out.push_str(&format!(
                "{}[{}]: {} (location unavailable: {e})\n",
                severity_word(d.severity),
                d.code.as_str(),
                d.message
            )),
        }
    }
    if diagnostics.len() > MAX_RENDERED {
        let rest = &diagnostics[MAX_RENDERED..];
        let errors = rest.iter().filter(|d| d.is_error()).count();
        out.push_str(&format!(
            "… and {} more diagnostics not shown ({errors} errors, {} warnings); fix the first ones, or see them all with --message-format json\n\n",
            rest.len(),
            rest.len() - errors
        ));
    }
    out
}

/// The length of the line `span` starts on.
fn line_len(db: &SourceDb, span: voml_ir::Span) -> usize {
    if span.file as usize >= db.len() {
        return 0;
    }
    let text = db.text(span.file);
    let at = (span.start as usize).min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    end - start
}

/// A diagnostic on a very long line: its location, an excerpt of the line around the span,
/// its labels and hints.
fn render_excerpt(db: &SourceDb, d: &Diagnostic) -> String {
    const AROUND: usize = 60;
    let mut out = format!(
        "{}[{}]: {}\n",
        severity_word(d.severity),
        d.code.as_str(),
        d.message
    );
    for l in &d.labels {
        let text = db.text(l.span.file);
        let at = (l.span.start as usize).min(text.len());
        let end = (l.span.end as usize).clamp(at, text.len()).min(at + AROUND);
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let floor = |mut i: usize| {
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let from = floor(at.saturating_sub(AROUND).max(line_start));
        let to = floor((end + AROUND).min(line_end));
        let (line, column) = db.line_col(l.span.file, at as u32);
        let lead = if from > line_start { "…" } else { "" };
        let tail = if to < line_end { "…" } else { "" };
        out.push_str(&format!(
            "  {} {}:{line}:{column}\n   | {lead}{}{tail}\n   | {}{} {}\n",
            if l.primary { "┌─" } else { "··" },
            db.name(l.span.file),
            &text[from..to],
            " ".repeat(text[from..at].chars().count() + lead.chars().count()),
            "^".repeat(text[at..floor(end.max(at))].chars().count().max(1)),
            l.message
        ));
    }
    for h in &d.hints {
        out.push_str(&format!("   = hint: {h}\n"));
    }
    out.push('\n');
    out
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn to_codespan(d: &Diagnostic) -> CsDiagnostic<u32> {
    let base = match d.severity {
        Severity::Error => CsDiagnostic::error(),
        Severity::Warning => CsDiagnostic::warning(),
    };
    base.with_code(d.code.as_str())
        .with_message(&d.message)
        .with_labels(
            d.labels
                .iter()
                .map(|l| {
                    let style = if l.primary {
                        LabelStyle::Primary
                    } else {
                        LabelStyle::Secondary
                    };
                    CsLabel::new(
                        style,
                        l.span.file,
                        l.span.start as usize..l.span.end as usize,
                    )
                    .with_message(&l.message)
                })
                .collect(),
        )
        .with_notes(d.hints.iter().map(|h| format!("hint: {h}")).collect())
}

/// One JSON object per diagnostic (JSON Lines), for editors and CI.
pub fn to_json(db: &SourceDb, d: &Diagnostic) -> String {
    let labels: Vec<serde_json::Value> = d
        .labels
        .iter()
        .map(|l| {
            let (file, (line, column), (end_line, end_column)) = db.locate_range(l.span);
            serde_json::json!({
                "file": file,
                "byte_start": l.span.start,
                "byte_end": l.span.end,
                "line_start": line,
                "column_start": column,
                "line_end": end_line,
                "column_end": end_column,
                "message": l.message,
                "primary": l.primary,
            })
        })
        .collect();
    let primary = &labels[0];
    serde_json::json!({
        "severity": severity_word(d.severity),
        "code": d.code.as_str(),
        "name": d.code.slug(),
        "message": d.message,
        "file": primary["file"],
        "byte_start": primary["byte_start"],
        "byte_end": primary["byte_end"],
        "line_start": primary["line_start"],
        "column_start": primary["column_start"],
        "line_end": primary["line_end"],
        "column_end": primary["column_end"],
        "labels": labels,
        "hints": d.hints,
    })
    .to_string()
}

/// The whole catalogue as Markdown (the content of `docs/diagnostics.md`).
pub fn catalogue_markdown() -> String {
    let mut out = String::from(
        "# Diagnostic codes\n\nGenerated from the compiler's source (`voml explain --all`); \
         do not edit by hand.\nErrors (`E…`) stop compilation; warnings (`W…`) do not.\n",
    );
    for code in Code::ALL {
        out.push_str(&format!(
            "\n## {} `{}` ({})\n\n",
            code.as_str(),
            code.slug(),
            severity_word(code.severity())
        ));
        for line in code.explanation().lines() {
            out.push_str(line.trim());
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_finds_typos_but_not_strangers() {
        let names = ["nodes", "numofnodes", "nodeno"];
        assert_eq!(closest("node", names), Some("nodes"));
        assert_eq!(closest("numofnode", names), Some("numofnodes"));
        assert_eq!(closest("palette", names), None);
    }

    #[test]
    fn codes_are_unique_and_documented() {
        let mut seen = std::collections::HashSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.as_str()), "duplicate code {}", c.as_str());
            assert!(seen.insert(c.slug()), "duplicate slug {}", c.slug());
            assert!(
                c.explanation().trim().len() > 20,
                "{} lacks docs",
                c.as_str()
            );
            assert_eq!(Code::parse(c.as_str()), Some(*c));
            assert_eq!(Code::parse(c.slug()), Some(*c));
        }
    }
}
