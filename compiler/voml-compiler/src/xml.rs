//! XML to a spanned tree: every element, attribute and text run keeps the byte span it came
//! from, including text that external entities bring in (spans then point into the entity's
//! own file). The DOCTYPE's internal subset declares entities; `&name;` splices them.
//!
//! Parsing never panics and never gives up silently: what can be built is returned together
//! with the diagnostics.

use std::path::{Path, PathBuf};

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use voml_ir::{Program as Frag, Span};

use crate::diag::{Code, Diagnostic};
use crate::source::{self, FileSystem, Reference, SourceDb};

/// An element with everything located.
#[derive(Clone, Debug)]
pub struct Element {
    pub name: String,
    /// The name inside the start tag.
    pub name_span: Span,
    /// The whole start tag, `<` to `>`.
    pub tag_span: Span,
    pub attrs: Vec<Attr>,
    pub children: Vec<Node>,
}

#[derive(Clone, Debug)]
pub struct Attr {
    pub name: String,
    pub name_span: Span,
    /// The value with references decoded and whitespace normalised, mapped to the source.
    pub value: Frag,
    /// The value between its quotes.
    pub value_span: Span,
}

#[derive(Clone, Debug)]
pub enum Node {
    Element(Element),
    /// Adjacent text, CDATA and references merged into one run.
    Text(Frag),
}

impl Element {
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.name == name)
    }

    pub fn attr_text(&self, name: &str) -> Option<&str> {
        self.attr(name).map(|a| a.value.text.as_str())
    }

    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|n| match n {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }
}

/// An entity declared in a DOCTYPE.
#[derive(Clone, Debug)]
struct EntityDecl {
    name: String,
    span: Span,
    kind: EntityKind,
}

#[derive(Clone, Debug)]
enum EntityKind {
    /// Replacement text inside the declaration: parsed as content where referenced.
    Internal { value_span: Span },
    /// A system identifier: a path or a URL.
    External { system: String, system_span: Span },
}

/// A parsed document: its root element, if the file got that far.
#[derive(Debug)]
pub struct Document {
    pub file: u32,
    pub root: Option<Element>,
    /// True when the XML was malformed somewhere (the tree is then partial).
    pub malformed: bool,
}

/// Options the entity manager needs.
pub struct LoadOptions<'a> {
    pub fs: &'a dyn FileSystem,
    pub search_path: &'a [PathBuf],
    /// Where pinned remote components are looked up, named by their sha256.
    pub cache_dir: Option<&'a Path>,
    /// Where every pinned remote reference met is noted, when someone asks.
    pub remotes: Option<&'a std::cell::RefCell<Vec<source::RemoteRef>>>,
}

/// Parses the document in `file` (already in `db`), expanding entities.
pub fn parse_document(
    db: &mut SourceDb,
    file: u32,
    opts: &LoadOptions,
    diags: &mut Vec<Diagnostic>,
) -> Document {
    let mut parser = DocParser {
        db,
        opts,
        diags,
        entities: Vec::new(),
        expanding: Vec::new(),
        malformed: false,
        depth: 0,
        expansions: 0,
        expanded_bytes: 0,
        over_limit: false,
    };
    let text = parser.db.text(file).to_string();
    let nodes = parser.parse_content(file, &text, 0, true);
    let mut root = None;
    for node in nodes {
        match node {
            Node::Element(e) if root.is_none() => root = Some(e),
            Node::Element(e) => {
                parser.diags.push(
                    Diagnostic::new(
                        Code::XmlSyntax,
                        e.tag_span,
                        format!("a second root element `<{}>`", e.name),
                    )
                    .label("an XML document has exactly one root element"),
                );
            }
            Node::Text(t) => {
                if !t.text.trim().is_empty() {
                    let span = t.whole_span().unwrap_or_default();
                    parser.diags.push(
                        Diagnostic::new(Code::XmlSyntax, span, "text outside the root element")
                            .label("only comments and whitespace may stand here"),
                    );
                }
            }
        }
    }
    if root.is_none() && !parser.malformed {
        let end = text.len();
        parser.diags.push(
            Diagnostic::new(
                Code::XmlSyntax,
                Span::new(file, end, end),
                "the file has no root element",
            )
            .hint("a VOML file starts with `<voml>`; a component library with `<voml-library>`"),
        );
        parser.malformed = true;
    }
    Document {
        file,
        root,
        malformed: parser.malformed,
    }
}

struct DocParser<'a, 'o> {
    db: &'a mut SourceDb,
    opts: &'a LoadOptions<'o>,
    diags: &'a mut Vec<Diagnostic>,
    entities: Vec<EntityDecl>,
    /// Names of the entities being expanded, innermost last (cycle detection).
    expanding: Vec<String>,
    malformed: bool,
    /// Elements open in the documents that reference the entity being parsed.
    depth: usize,
    /// Entity references expanded so far, and the bytes of replacement text they brought.
    expansions: usize,
    expanded_bytes: usize,
    /// The expansion limits were passed (reported once; no more expansions).
    over_limit: bool,
}

/// Deeper nesting is refused: trees are walked recursively, and no real spec comes close.
pub const MAX_DEPTH: usize = voml_ir::vocabulary::limits::MAX_ELEMENT_DEPTH;
pub use voml_ir::vocabulary::limits::{MAX_ENTITY_EXPANSIONS, MAX_EXPANDED_BYTES};

/// An element being built while its content is read.
struct Open {
    element: Element,
    text: Frag,
}

impl DocParser<'_, '_> {
    /// Parses `text` (which is `file`'s bytes starting at `base`) as XML content: any mix of
    /// elements and text. `top` is true for the document itself (a DOCTYPE is allowed there).
    fn parse_content(&mut self, file: u32, text: &str, base: usize, top: bool) -> Vec<Node> {
        let mut reader = Reader::from_str(text);
        reader.config_mut().check_end_names = true;
        reader.config_mut().check_comments = true;
        let origin = text.as_ptr() as usize;
        let offset_of = |s: &str| base + (s.as_ptr() as usize).saturating_sub(origin);
        let mut stack: Vec<Open> = Vec::new();
        let mut out = Open {
            element: Element {
                name: String::new(),
                name_span: Span::default(),
                tag_span: Span::default(),
                attrs: Vec::new(),
                children: Vec::new(),
            },
            text: Frag::default(),
        };
        let mut seen_root = false;
        loop {
            let start = base + reader.buffer_position() as usize;
            let event = match reader.read_event() {
                Ok(ev) => ev,
                Err(err) => {
                    let pos = base + reader.error_position() as usize;
                    let pos = pos.min(base + text.len());
                    self.malformed = true;
                    self.diags.push(xml_error(file, pos, &err, stack.last()));
                    break;
                }
            };
            let end = base + reader.buffer_position() as usize;
            if let Event::Start(tag) | Event::Empty(tag) = &event {
                // quick-xml takes `(< a b)` in code for a tag with an empty name: say what
                // happened instead of reporting its "attributes" one by one.
                if !starts_name(tag.name().0) {
                    self.malformed = true;
                    self.diags.push(stray_lt(file, start, stack.last()));
                    break;
                }
            }
            let open_count = stack.len();
            let current = stack.last_mut().unwrap_or(&mut out);
            match event {
                Event::Empty(tag) => {
                    flush_text(current);
                    let element = self.element_from_tag(file, &tag, start, end, &offset_of);
                    seen_root = true;
                    current.element.children.push(Node::Element(element));
                }
                Event::Start(tag) => {
                    if self.depth + open_count >= MAX_DEPTH {
                        self.malformed = true;
                        self.diags.push(
                            Diagnostic::new(Code::XmlSyntax, Span::new(file, start, end), format!("elements nested more than {MAX_DEPTH} deep"))
                                .label("too deep")
                                .hint("a visual object needs a handful of levels; this looks like a generated or corrupt file"),
                        );
                        break;
                    }
                    flush_text(current);
                    let element = self.element_from_tag(file, &tag, start, end, &offset_of);
                    seen_root = true;
                    stack.push(Open {
                        element,
                        text: Frag::default(),
                    });
                }
                Event::End(_) => {
                    let Some(mut open) = stack.pop() else {
                        self.malformed = true;
                        self.diags.push(
                            Diagnostic::new(
                                Code::XmlSyntax,
                                Span::new(file, start, end),
                                "an end tag without a start tag",
                            )
                            .label("nothing is open here"),
                        );
                        break;
                    };
                    flush_text(&mut open);
                    // A large spec has tens of thousands of elements: no room to spare.
                    open.element.children.shrink_to_fit();
                    let parent = stack.last_mut().unwrap_or(&mut out);
                    parent.element.children.push(Node::Element(open.element));
                }
                Event::Text(t) => {
                    let s: &str = &t;
                    current.text.push(
                        s,
                        Span::new(file, offset_of(s), offset_of(s) + s.len()),
                        true,
                    );
                }
                Event::CData(c) => {
                    let s: &str = &c;
                    current.text.push(
                        s,
                        Span::new(file, offset_of(s), offset_of(s) + s.len()),
                        true,
                    );
                }
                Event::GeneralRef(r) => {
                    let span = Span::new(file, start, end);
                    let name: &str = &r;
                    if r.is_char_ref() {
                        match r.resolve_char_ref() {
                            Ok(Some(c)) => {
                                current.text.push(c.encode_utf8(&mut [0; 4]), span, false)
                            }
                            _ => self.diags.push(
                                Diagnostic::new(
                                    Code::XmlSyntax,
                                    span,
                                    format!("`&{name};` is not a valid character reference"),
                                )
                                .label("not a Unicode character"),
                            ),
                        }
                    } else if let Some(c) = predefined(name) {
                        current.text.push(c, span, false);
                    } else {
                        let name = name.to_string();
                        let depth = stack.len();
                        self.depth += depth;
                        let nodes = self.expand_entity(&name, span);
                        self.depth -= depth;
                        let current = stack.last_mut().unwrap_or(&mut out);
                        for node in nodes {
                            match node {
                                Node::Text(t) => current.text.push_program(&t),
                                Node::Element(e) => {
                                    flush_text(current);
                                    current.element.children.push(Node::Element(e));
                                }
                            }
                        }
                    }
                }
                Event::DocType(d) => {
                    let s: &str = &d;
                    if !top || seen_root {
                        self.diags.push(
                            Diagnostic::new(
                                Code::BadDoctype,
                                Span::new(file, start, end),
                                "a DOCTYPE may only stand at the start of a document",
                            )
                            .label("misplaced"),
                        );
                    } else {
                        let at = offset_of(s);
                        self.parse_doctype(file, s, at);
                    }
                }
                Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
                Event::Eof => break,
            }
        }
        if let Some(open) = stack.last() {
            if !self.malformed {
                self.malformed = true;
                self.diags.push(
                    Diagnostic::new(
                        Code::XmlSyntax,
                        open.element.tag_span,
                        format!("`<{}>` is never closed", open.element.name),
                    )
                    .label("opened here")
                    .hint(format!(
                        "add `</{}>` or write the element as `<{} ... />`",
                        open.element.name, open.element.name
                    )),
                );
            }
        }
        // Keep what was read of unclosed elements so later checks still see them.
        while let Some(mut open) = stack.pop() {
            flush_text(&mut open);
            let parent = stack.last_mut().unwrap_or(&mut out);
            parent.element.children.push(Node::Element(open.element));
        }
        flush_text(&mut out);
        out.element.children
    }

    fn element_from_tag(
        &mut self,
        file: u32,
        tag: &BytesStart,
        start: usize,
        end: usize,
        offset_of: &dyn Fn(&str) -> usize,
    ) -> Element {
        let name = tag.name().0.to_string();
        let name_at = start + 1;
        let mut attrs = Vec::new();
        for attr in tag.attributes().with_checks(true) {
            match attr {
                Ok(a) => {
                    let key = a.key.0;
                    let key_at = offset_of(key);
                    let (value_text, value_at) = match &a.value {
                        std::borrow::Cow::Borrowed(v) => (*v, offset_of(v)),
                        std::borrow::Cow::Owned(v) => (v.as_str(), key_at + key.len() + 2),
                    };
                    let value_span = Span::new(file, value_at, value_at + value_text.len());
                    let value = self.decode_attr(file, value_text, value_at);
                    attrs.push(Attr {
                        name: key.to_string(),
                        name_span: Span::new(file, key_at, key_at + key.len()),
                        value,
                        value_span,
                    });
                }
                Err(err) => {
                    // quick-xml's positions count from just after the `<`.
                    use quick_xml::events::attributes::AttrError as E;
                    let (pos, first) = match err {
                        E::ExpectedEq(p)
                        | E::ExpectedValue(p)
                        | E::UnquotedValue(p)
                        | E::ExpectedQuote(p, _) => (p, None),
                        E::Duplicated(p, q) => (p, Some(q)),
                    };
                    let word = |pos: usize| word_at(self.db.text(file), file, start + 1 + pos);
                    let what = match err {
                        E::ExpectedEq(_) => "a name must be followed by `=`".to_string(),
                        E::ExpectedValue(_) => "`=` must be followed by a value".to_string(),
                        E::UnquotedValue(_) => "the value must be in quotes".to_string(),
                        E::ExpectedQuote(_, q) => {
                            format!("the value has no closing `{}`", q as char)
                        }
                        E::Duplicated(..) => {
                            format!("`{}` is given twice", self.db.slice(word(pos)))
                        }
                    };
                    let mut d = Diagnostic::new(
                        Code::XmlSyntax,
                        word(pos),
                        format!("bad attribute in `<{name}>`: {what}"),
                    )
                    .label(match err {
                        E::UnquotedValue(_) => "put this value in quotes",
                        E::Duplicated(..) => "given again here",
                        _ => "here",
                    })
                    .hint("attributes are written name=\"value\", each name once");
                    if let Some(q) = first {
                        d = d.secondary(word(q), "first given here");
                    }
                    self.diags.push(d);
                }
            }
        }
        attrs.shrink_to_fit();
        Element {
            name_span: Span::new(file, name_at, name_at + tag.name().0.len()),
            name,
            tag_span: Span::new(file, start, end),
            attrs,
            children: Vec::new(),
        }
    }

    /// Decodes references in an attribute value and normalises whitespace to spaces, as XML
    /// does, keeping the map back to the source.
    fn decode_attr(&mut self, file: u32, value: &str, at: usize) -> Frag {
        let mut out = Frag::default();
        let bytes = value.as_bytes();
        let mut i = 0;
        let mut run = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'&' => {
                    push_normalised(&mut out, &value[run..i], file, at + run);
                    let Some(len) = value[i..].find(';') else {
                        self.diags.push(
                            Diagnostic::new(
                                Code::XmlSyntax,
                                Span::new(file, at + i, at + i + 1),
                                "`&` starts no reference",
                            )
                            .hint("write `&amp;` for a literal `&`"),
                        );
                        run = i + 1;
                        i += 1;
                        continue;
                    };
                    let name = &value[i + 1..i + len];
                    let span = Span::new(file, at + i, at + i + len + 1);
                    let decoded = if let Some(num) = name.strip_prefix('#') {
                        let code = match num.strip_prefix('x') {
                            Some(hex) => u32::from_str_radix(hex, 16).ok(),
                            None => num.parse().ok(),
                        };
                        code.and_then(char::from_u32).map(String::from)
                    } else if let Some(c) = predefined(name) {
                        Some(c.to_string())
                    } else {
                        match self.entities.iter().find(|e| e.name == name) {
                            Some(EntityDecl {
                                kind: EntityKind::Internal { value_span },
                                ..
                            }) => {
                                let value_span = *value_span;
                                let size = (value_span.end - value_span.start) as usize;
                                if self.charge_expansion(size, span) {
                                    Some(self.db.slice(value_span).to_string())
                                } else {
                                    Some(String::new())
                                }
                            }
                            Some(_) => {
                                self.diags.push(
                                    Diagnostic::new(
                                        Code::XmlSyntax,
                                        span,
                                        format!("external entity `&{name};` in an attribute value"),
                                    )
                                    .label("XML allows only internal entities here"),
                                );
                                Some(String::new())
                            }
                            None => None,
                        }
                    };
                    match decoded {
                        Some(d) => out.push(&d, span, false),
                        None => self.diags.push(
                            Diagnostic::new(
                                Code::UndeclaredEntity,
                                span,
                                format!("undeclared entity `&{name};`"),
                            )
                            .label("not declared in the DOCTYPE")
                            .did_you_mean(name, self.entities.iter().map(|e| e.name.as_str())),
                        ),
                    }
                    i += len + 1;
                    run = i;
                }
                _ => i += 1,
            }
        }
        push_normalised(&mut out, &value[run..], file, at + run);
        out
    }

    fn parse_doctype(&mut self, file: u32, text: &str, at: usize) {
        let Some(open) = text.find('[') else { return };
        let close = text.rfind(']').unwrap_or(text.len());
        if close <= open {
            return;
        }
        let subset = &text[open + 1..close];
        let subset_at = at + open + 1;
        let mut i = 0;
        let b = subset.as_bytes();
        while i < b.len() {
            let rest = &subset[i..];
            if rest.starts_with("<!--") {
                i += rest.find("-->").map_or(rest.len(), |e| e + 3);
            } else if rest.starts_with("<!ENTITY") {
                let len = decl_len(rest);
                self.parse_entity_decl(file, &rest[..len], subset_at + i);
                i += len;
            } else if rest.starts_with("<!") || rest.starts_with("<?") {
                let len = decl_len(rest);
                let span = Span::new(file, subset_at + i, subset_at + i + len);
                self.diags.push(
                    Diagnostic::new(Code::BadDoctype, span, "only `<!ENTITY>` declarations are read in the DOCTYPE")
                        .label("ignored")
                        .hint("element and attribute declarations live in the schema (`schemas/voml.xsd`)"),
                );
                i += len;
            } else if b[i].is_ascii_whitespace() {
                i += 1;
            } else {
                let len = rest
                    .find(|c: char| c.is_ascii_whitespace() || c == '<')
                    .unwrap_or(rest.len())
                    .max(1);
                let span = Span::new(file, subset_at + i, subset_at + i + len);
                self.diags.push(
                    Diagnostic::new(Code::BadDoctype, span, "unexpected text in the DOCTYPE")
                        .label("not a declaration"),
                );
                i += len;
            }
        }
    }

    fn parse_entity_decl(&mut self, file: u32, decl: &str, at: usize) {
        let span = Span::new(file, at, at + decl.len());
        let bad = |msg: &str| {
            Diagnostic::new(
                Code::BadDoctype,
                span,
                format!("malformed entity declaration: {msg}"),
            )
            .hint("write `<!ENTITY name SYSTEM \"path/to/file.voml\">`")
        };
        let body = &decl["<!ENTITY".len()..decl.len().saturating_sub(1).max("<!ENTITY".len())];
        let mut tokens = Tokens { text: body, pos: 0 };
        let Some((first, _)) = tokens.next_token() else {
            self.diags.push(bad("no name"));
            return;
        };
        if first == "%" {
            self.diags.push(
                Diagnostic::new(Code::BadDoctype, span, "parameter entities are not supported")
                    .label("declared here")
                    .hint("use a general entity (`<!ENTITY name SYSTEM \"...\">`) and reference it as `&name;`"),
            );
            return;
        }
        let name = first.to_string();
        let body_at = at + "<!ENTITY".len();
        let kind = match tokens.next_token() {
            Some(("SYSTEM", _)) => match tokens.next_literal() {
                Some((system, pos)) => EntityKind::External {
                    system: system.to_string(),
                    system_span: Span::new(file, body_at + pos, body_at + pos + system.len()),
                },
                None => {
                    self.diags.push(bad("SYSTEM needs a quoted path or URL"));
                    return;
                }
            },
            Some(("PUBLIC", _)) => {
                let _public_id = tokens.next_literal();
                match tokens.next_literal() {
                    Some((system, pos)) => EntityKind::External {
                        system: system.to_string(),
                        system_span: Span::new(file, body_at + pos, body_at + pos + system.len()),
                    },
                    None => {
                        self.diags.push(bad(
                            "PUBLIC needs a public identifier and a quoted path or URL",
                        ));
                        return;
                    }
                }
            }
            Some((tok, pos)) if tok.starts_with('"') || tok.starts_with('\'') => {
                tokens.pos = pos;
                match tokens.next_literal() {
                    Some((value, pos)) => EntityKind::Internal {
                        value_span: Span::new(file, body_at + pos, body_at + pos + value.len()),
                    },
                    None => {
                        self.diags.push(bad("unterminated replacement text"));
                        return;
                    }
                }
            }
            _ => {
                self.diags.push(bad(
                    "expected SYSTEM, PUBLIC or a quoted value after the name",
                ));
                return;
            }
        };
        if let Some((extra, _)) = tokens.next_token() {
            if extra == "NDATA" {
                self.diags.push(
                    Diagnostic::new(
                        Code::BadDoctype,
                        span,
                        "unparsed (NDATA) entities are not supported",
                    )
                    .label("declared here"),
                );
                return;
            }
        }
        if self.entities.iter().any(|e| e.name == name) {
            // XML: the first declaration wins; say so rather than guess silently.
            let first = self
                .entities
                .iter()
                .find(|e| e.name == name)
                .map(|e| e.span)
                .unwrap_or(span);
            self.diags.push(
                Diagnostic::new(
                    Code::DuplicateName,
                    span,
                    format!("entity `{name}` is declared twice"),
                )
                .label("second declaration")
                .secondary(first, "first declared here"),
            );
            return;
        }
        self.entities.push(EntityDecl { name, span, kind });
    }

    /// Counts `bytes` more of replacement text for the reference being expanded.
    fn charge_bytes(&mut self, bytes: usize, span: Span) -> bool {
        self.expansions -= 1;
        self.charge_expansion(bytes, span)
    }

    /// Counts one expansion of `bytes` of replacement text; false (reported once) when the
    /// document passes the limits.
    fn charge_expansion(&mut self, bytes: usize, span: Span) -> bool {
        if self.over_limit {
            return false;
        }
        self.expansions += 1;
        self.expanded_bytes = self.expanded_bytes.saturating_add(bytes);
        if self.expansions <= MAX_ENTITY_EXPANSIONS && self.expanded_bytes <= MAX_EXPANDED_BYTES {
            return true;
        }
        self.over_limit = true;
        self.diags.push(
            Diagnostic::new(
                Code::EntityExpansion,
                span,
                format!(
                    "entity references expand more than {MAX_ENTITY_EXPANSIONS} times or to more than {} MiB of text",
                    MAX_EXPANDED_BYTES >> 20
                ),
            )
            .label("expansion stopped here")
            .hint("entities that reference each other several times multiply (the \"billion laughs\"); reference a large entity once"),
        );
        false
    }

    /// The nodes an entity reference stands for.
    fn expand_entity(&mut self, name: &str, span: Span) -> Vec<Node> {
        // Every reference counts, declared or not: an undeclared one inside a multiplying
        // entity would otherwise report itself billions of times.
        if !self.charge_expansion(0, span) {
            return Vec::new();
        }
        let Some(decl) = self.entities.iter().find(|e| e.name == name).cloned() else {
            self.diags.push(
                Diagnostic::new(Code::UndeclaredEntity, span, format!("undeclared entity `&{name};`"))
                    .label("not declared in the DOCTYPE")
                    .did_you_mean(name, self.entities.iter().map(|e| e.name.as_str()))
                    .hint(format!("declare it: `<!DOCTYPE voml [ <!ENTITY {name} SYSTEM \"path/to/{name}.voml\"> ]>`")),
            );
            return Vec::new();
        };
        if self.expanding.iter().any(|n| n == name) {
            let chain = self.expanding.join(" → ");
            self.diags.push(
                Diagnostic::new(
                    Code::IncludeCycle,
                    span,
                    format!("entity `{name}` refers to itself ({chain} → {name})"),
                )
                .label("this reference closes the cycle")
                .secondary(decl.span, "declared here"),
            );
            return Vec::new();
        }
        if self.expanding.len() > 64 {
            self.diags.push(
                Diagnostic::new(
                    Code::IncludeCycle,
                    span,
                    "entities nested more than 64 deep",
                )
                .label("here"),
            );
            return Vec::new();
        }
        let size = match &decl.kind {
            EntityKind::Internal { value_span } => (value_span.end - value_span.start) as usize,
            EntityKind::External { .. } => 0,
        };
        if !self.charge_bytes(size, span) {
            return Vec::new();
        }
        self.expanding.push(name.to_string());
        let nodes = match decl.kind {
            EntityKind::Internal { value_span } => {
                let text = self.db.slice(value_span).to_string();
                self.parse_content(value_span.file, &text, value_span.start as usize, false)
            }
            // As in XML, a relative system identifier is resolved from the file holding the
            // declaration, not from the (possibly nested) file holding the reference.
            EntityKind::External {
                system,
                system_span,
            } => match self.load_reference(system_span.file, &system, system_span, span) {
                Some(file) if !self.charge_bytes(self.db.text(file).len(), span) => {
                    let _ = file;
                    Vec::new()
                }
                Some(file) => {
                    let text = self.db.text(file).to_string();
                    let skip = text_decl_len(&text);
                    self.parse_content(file, &text[skip..], skip, false)
                }
                None => Vec::new(),
            },
        };
        self.expanding.pop();
        nodes
    }

    /// Reads the file a system identifier names, adding it to the database.
    fn load_reference(
        &mut self,
        referrer: u32,
        system: &str,
        system_span: Span,
        use_span: Span,
    ) -> Option<u32> {
        load_reference(
            self.db,
            self.opts,
            self.diags,
            referrer,
            system,
            None,
            system_span,
            use_span,
        )
    }
}

/// Finds and reads a referenced file (entity or import): local paths on the search path,
/// pinned remote components from the cache. Reports why when it cannot.
#[allow(clippy::too_many_arguments)]
pub fn load_reference(
    db: &mut SourceDb,
    opts: &LoadOptions,
    diags: &mut Vec<Diagnostic>,
    referrer: u32,
    system: &str,
    pin: Option<&str>,
    system_span: Span,
    use_span: Span,
) -> Option<u32> {
    let referrer_path = db.path(referrer).to_path_buf();
    let with_use = |d: Diagnostic| {
        if use_span != system_span {
            d.secondary(use_span, "used here")
        } else {
            d
        }
    };
    let path = match source::parse_reference(system) {
        Reference::Local(name) => {
            let roots = source::roots(opts.fs, db.path(0), opts.search_path);
            match source::resolve_confined(opts.fs, &referrer_path, &name, opts.search_path, &roots)
            {
                Ok(path) => path,
                Err(not_taken) => {
                    diags.push(with_use(not_taken.diagnostic(
                        &name,
                        system_span,
                        format!("cannot find `{name}`"),
                    )));
                    return None;
                }
            }
        }
        Reference::Standard(name) => {
            let path = PathBuf::from(format!("{}{name}", crate::stdlib::SCHEME));
            if let Some(existing) = db.find_path(&path) {
                return Some(existing);
            }
            let Some(text) = crate::stdlib::file(&name) else {
                let names: Vec<&str> = crate::stdlib::FILES.iter().map(|(n, _)| *n).collect();
                diags.push(with_use(
                    Diagnostic::new(
                        Code::FileNotFound,
                        system_span,
                        format!("the standard component library has no `{name}`"),
                    )
                    .label("not in the library")
                    .did_you_mean(&name, names.iter().copied())
                    .hint(format!("it holds {}", names.join(", "))),
                ));
                return None;
            };
            let shown = path.display().to_string();
            return add_file(
                db,
                diags,
                path,
                shown,
                text.as_bytes().to_vec(),
                system_span,
            );
        }
        Reference::Remote { url, .. } if source::remote_refusal(&url).is_some() => {
            let message = source::remote_refusal(&url).unwrap_or_default();
            diags.push(with_use(
                Diagnostic::new(Code::ReferenceRefused, system_span, message)
                    .label("not https")
                    .hint("name remote components by an `https://` URL with a sha256 pin: plain `http` is taken only from this machine (localhost, 127.0.0.1, [::1])"),
            ));
            return None;
        }
        Reference::Remote { url, sha256 } => {
            let sha = sha256.or_else(|| pin.map(|p| p.to_ascii_lowercase()));
            let Some(sha) = sha else {
                diags.push(with_use(
                    Diagnostic::new(Code::UnpinnedRemote, system_span, format!("remote component `{url}` is not pinned"))
                        .label("no sha256 pin")
                        .hint(format!("pin its content: `{url}#sha256=<64 hex digits>`"))
                        .hint("remote code runs inside your visual object: pinning makes sure it is the code you reviewed"),
                ));
                return None;
            };
            if !source::is_sha256_hex(&sha) {
                diags.push(with_use(
                    Diagnostic::new(
                        Code::UnpinnedRemote,
                        system_span,
                        format!("`{sha}` is not a sha256 digest"),
                    )
                    .label("a pin is 64 hexadecimal digits"),
                ));
                return None;
            }
            let spec = db.name(0).to_string();
            let cached = opts.cache_dir.map(|d| d.join(&sha));
            let bytes = cached.as_ref().and_then(|p| opts.fs.read(p).ok());
            let actual = bytes.as_deref().map(crate::sha256_hex);
            if let Some(remotes) = opts.remotes {
                remotes.borrow_mut().push(source::RemoteRef {
                    url: url.clone(),
                    sha256: sha.clone(),
                    span: system_span,
                    cache: match &actual {
                        None => source::CacheState::Missing,
                        Some(a) if *a == sha => source::CacheState::Cached,
                        Some(a) => source::CacheState::Mismatch(a.clone()),
                    },
                });
            }
            let (Some(bytes), Some(actual)) = (bytes, actual) else {
                let d = Diagnostic::new(
                    Code::RemoteUnavailable,
                    system_span,
                    format!("remote component `{url}` is not in the component cache"),
                )
                .label("pinned, not downloaded yet");
                let d = match opts.cache_dir {
                    Some(dir) => d.hint(format!(
                        "run `voml fetch {spec}` to download it into the component cache `{}`; `voml check` and `voml run` never download",
                        dir.display()
                    )),
                    None => d.hint(format!(
                        "there is no component cache: give `--cache DIR` or set `VOML_CACHE`, then run `voml fetch {spec}`"
                    )),
                };
                diags.push(with_use(d));
                return None;
            };
            if actual != sha {
                diags.push(with_use(
                    Diagnostic::new(Code::RemoteUnavailable, system_span, format!("the cached copy of `{url}` does not match its pin"))
                        .label(format!("pinned {sha}"))
                        .hint(format!("the cached file's sha256 is {actual}; run `voml fetch {spec}` to download the pinned version again")),
                ));
                return None;
            }
            let path = cached.expect("bytes came from the cache path");
            return add_file(db, diags, path, url, bytes, system_span);
        }
    };
    if let Some(existing) = db.find_path(&path) {
        return Some(existing);
    }
    match opts.fs.read(&path) {
        Ok(bytes) => {
            let name = path.display().to_string();
            add_file(db, diags, path, name, bytes, system_span)
        }
        Err(err) => {
            diags.push(with_use(
                Diagnostic::new(
                    Code::FileNotFound,
                    system_span,
                    format!("cannot read `{}`: {err}", path.display()),
                )
                .label("here"),
            ));
            None
        }
    }
}

fn add_file(
    db: &mut SourceDb,
    diags: &mut Vec<Diagnostic>,
    path: PathBuf,
    name: String,
    bytes: Vec<u8>,
    span: Span,
) -> Option<u32> {
    match String::from_utf8(bytes) {
        Ok(text) => Some(db.add(name, path, text)),
        Err(e) => {
            diags.push(
                Diagnostic::new(
                    Code::FileNotFound,
                    span,
                    format!(
                        "`{name}` is not UTF-8 text (bad byte at offset {})",
                        e.utf8_error().valid_up_to()
                    ),
                )
                .label("referenced here"),
            );
            None
        }
    }
}

/// Length of an optional `<?xml ...?>` text declaration at the start of an entity file.
fn text_decl_len(text: &str) -> usize {
    let t = text.strip_prefix('\u{feff}').map_or(0, |_| 3);
    if text[t..].starts_with("<?xml") {
        text[t..].find("?>").map_or(t, |e| t + e + 2)
    } else {
        t
    }
}

/// Length of a markup declaration `<!...>` honouring quoted literals.
fn decl_len(text: &str) -> usize {
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return i + 1,
            _ => {}
        }
    }
    text.len()
}

struct Tokens<'t> {
    text: &'t str,
    pos: usize,
}

impl<'t> Tokens<'t> {
    fn skip_ws(&mut self) {
        while self.pos < self.text.len() && self.text.as_bytes()[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// The next whitespace-delimited token and its offset.
    fn next_token(&mut self) -> Option<(&'t str, usize)> {
        self.skip_ws();
        let start = self.pos;
        let rest = &self.text[start..];
        if rest.is_empty() {
            return None;
        }
        let len = rest
            .find(|c: char| c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        self.pos += len;
        Some((&rest[..len], start))
    }

    /// The next quoted literal's content and the offset of that content.
    fn next_literal(&mut self) -> Option<(&'t str, usize)> {
        self.skip_ws();
        let rest = &self.text[self.pos..];
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let end = rest[1..].find(quote)?;
        let start = self.pos + 1;
        self.pos += end + 2;
        Some((&self.text[start..start + end], start))
    }
}

fn predefined(name: &str) -> Option<&'static str> {
    Some(match name {
        "lt" => "<",
        "gt" => ">",
        "amp" => "&",
        "apos" => "'",
        "quot" => "\"",
        _ => return None,
    })
}

fn push_normalised(out: &mut Frag, text: &str, file: u32, at: usize) {
    if text.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r')) {
        // Same length, so the mapping stays exact.
        let normalised: String = text
            .chars()
            .map(|c| {
                if matches!(c, '\t' | '\n' | '\r') {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        out.push(&normalised, Span::new(file, at, at + text.len()), true);
    } else {
        out.push(text, Span::new(file, at, at + text.len()), true);
    }
}

fn flush_text(open: &mut Open) {
    if !open.text.text.is_empty() {
        let text = std::mem::take(&mut open.text);
        open.element.children.push(Node::Text(text));
    }
}

/// The span of the attribute name or value starting at `at` (up to a space, `=`, `/` or `>`).
fn word_at(text: &str, file: u32, at: usize) -> Span {
    let at = at.min(text.len());
    let len = text
        .get(at..)
        .and_then(|rest| rest.find(|c: char| c.is_whitespace() || matches!(c, '=' | '/' | '>')))
        .unwrap_or(0)
        .max(1);
    Span::new(file, at, (at + len).min(text.len()))
}

/// Whether a tag name starts as an XML name must (a letter, `_` or `:`).
fn starts_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == ':' || !c.is_ascii())
}

/// A `<` that does not start a tag, typically a comparison in Scheme code.
fn stray_lt(file: u32, at: usize, open: Option<&Open>) -> Diagnostic {
    let mut d = Diagnostic::new(
        Code::XmlSyntax,
        Span::new(file, at, at + 1),
        "`<` does not start a tag here",
    )
    .label("a literal `<` must be written `&lt;`");
    if let Some(open) = open {
        d = d.secondary(
            open.element.tag_span,
            format!("inside this `<{}>`", open.element.name),
        );
    }
    d.hint("in Scheme code write `<` as `&lt;` (or use `lt`, `le`, or a CDATA section)")
}

fn xml_error(file: u32, pos: usize, err: &quick_xml::Error, open: Option<&Open>) -> Diagnostic {
    let message = err.to_string();
    let mut d = Diagnostic::new(
        Code::XmlSyntax,
        Span::new(file, pos, pos + 1),
        format!("malformed XML: {message}"),
    )
    .label("the XML parser stopped here");
    if let Some(open) = open {
        d = d.secondary(
            open.element.tag_span,
            format!("inside this `<{}>`", open.element.name),
        );
    }
    // A `<` in code reads as a tag, which then closes wrongly.
    use quick_xml::errors::IllFormedError as Ill;
    if matches!(
        err,
        quick_xml::Error::IllFormed(Ill::MismatchedEndTag { .. } | Ill::UnmatchedEndTag(_))
    ) {
        d = d.hint("in Scheme code write `<` as `&lt;` (or use `lt`, `le`, or a CDATA section)");
    }
    d
}
