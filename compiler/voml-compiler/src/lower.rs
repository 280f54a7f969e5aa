//! From the checked tree to the IR: resolves every name (events, fields, variables, views,
//! library components), checks what only the whole spec can tell (duplicates, ranges of
//! formal parameters, initial values), and tangles the Scheme program: globals, utility code
//! and one procedure per component part, with markup primitives turned into calls of the
//! runtime's primitive API.

use std::collections::HashMap;

use base64::Engine as _;
use voml_ir::{self as ir, Program as Frag, Span};

use crate::diag::{Code, Diagnostic};
use crate::schema::{self, Kind};
use crate::scheme::{self, Param};
use crate::source::SourceDb;
use crate::structure::{parse_numbers, words_in};
use crate::xml::{Attr, Element, Node};
use crate::{colours, LoadOptions};

/// A library component available to `use`.
pub struct LibraryComponent {
    pub element: Element,
    /// The `<import>` that brought it in.
    pub import_span: Span,
    pub used: std::cell::Cell<bool>,
}

pub struct Lowering<'a> {
    pub db: &'a SourceDb,
    pub opts: &'a LoadOptions<'a>,
    pub diags: &'a mut Vec<Diagnostic>,
    pub library: &'a HashMap<String, LibraryComponent>,
    program: Frag,
    events: Vec<ir::EventDecl>,
    infos: Vec<ir::Variable>,
    controls: Vec<ir::Variable>,
    views: Vec<ir::View>,
    assets: Vec<ir::Asset>,
    /// How often each info, control, event and view is referred to (for warnings).
    uses: Uses,
    /// Positions by name, so that large specs compile in linear time.
    index: Index,
}

#[derive(Default)]
struct Index {
    infos: HashMap<String, usize>,
    controls: HashMap<String, usize>,
    events: HashMap<String, usize>,
    views: HashMap<String, usize>,
}

fn index_of<T>(items: &[T], name: impl Fn(&T) -> &str) -> HashMap<String, usize> {
    let mut map = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        map.entry(name(item).to_string()).or_insert(i);
    }
    map
}

#[derive(Default)]
struct Uses {
    infos: Vec<bool>,
    controls: Vec<bool>,
    events: Vec<bool>,
    views: Vec<bool>,
}

/// What formal parameters mean in the code being lowered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum ScopeKind {
    #[default]
    Utility,
    ViewInit,
    Ep,
    Ir,
}

#[derive(Clone, Default)]
struct Scope {
    kind: ScopeKind,
    /// The part being lowered, for messages ("input part", "condition part", ...).
    what: &'static str,
    /// Who owns the lists, for messages ("EP component `p`").
    owner: String,
    infos: Vec<usize>,
    controls: Vec<usize>,
    /// `^n` in EP code: inputs with the parameter names of their fields.
    inputs: Vec<Vec<String>>,
    /// The input whose fields `^n/m` may name here, if any.
    current_input: Option<usize>,
    /// `^n` in IR code and view initialisation: view indices.
    views: Vec<usize>,
    /// Where the component's lists are, for "declared here" labels.
    decl_span: Span,
    /// The `infos`, `controls`, `inputs` and `views` attribute values, where present.
    list_spans: HashMap<&'static str, Span>,
}

/// The spans of an element's list attributes.
fn list_spans(el: &Element) -> HashMap<&'static str, Span> {
    ["infos", "controls", "inputs", "views"]
        .into_iter()
        .filter_map(|n| el.attr(n).map(|a| (n, a.value_span)))
        .collect()
}

impl<'a> Lowering<'a> {
    pub fn new(
        db: &'a SourceDb,
        opts: &'a LoadOptions<'a>,
        diags: &'a mut Vec<Diagnostic>,
        library: &'a HashMap<String, LibraryComponent>,
    ) -> Lowering<'a> {
        Lowering {
            db,
            opts,
            diags,
            library,
            program: Frag::default(),
            events: Vec::new(),
            infos: Vec::new(),
            controls: Vec::new(),
            views: Vec::new(),
            assets: Vec::new(),
            uses: Uses::default(),
            index: Index::default(),
        }
    }

    fn err(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// Lowers a checked `<visual-object>`.
    pub fn visual_object(mut self, vo: &Element) -> ir::CompiledVo {
        let name = vo
            .attr_text("name")
            .unwrap_or("visual-object")
            .trim()
            .to_string();
        let mode = match vo.attr_text("mode").map(str::trim) {
            Some("synchronous") => ir::RenderMode::Synchronous {
                tick: vo
                    .attr_text("tick")
                    .and_then(|t| parse_numbers(t, 1, false).ok())
                    .map_or(0.1, |v| v[0]),
            },
            _ => ir::RenderMode::Asynchronous,
        };
        if let Some(tick) = vo.attr("tick") {
            if let Ok(v) = parse_numbers(&tick.value.text, 1, false) {
                if v[0] <= 0.0 {
                    self.err(
                        Diagnostic::new(
                            Code::BadNumber,
                            tick.value_span,
                            "`tick` must be positive",
                        )
                        .label("seconds of trace time between renders"),
                    );
                }
            }
        }
        self.header(&name);
        let child = |n: &str| vo.elements().find(|e| e.name == n);
        if let Some(decls) = child("event-declarations") {
            self.events(decls);
        }
        if let Some(infos) = child("info-structures") {
            self.variables(infos, true);
        }
        if let Some(controls) = child("control-structures") {
            self.variables(controls, false);
        }
        self.index.events = index_of(&self.events, |e| e.name.as_str());
        self.index.infos = index_of(&self.infos, |v| v.name.as_str());
        self.index.controls = index_of(&self.controls, |v| v.name.as_str());
        self.uses.infos = vec![false; self.infos.len()];
        self.uses.controls = vec![false; self.controls.len()];
        self.uses.events = vec![false; self.events.len()];
        self.emit_globals();
        for util in vo.elements().filter(|e| e.name == "utility-code") {
            self.utility(util);
        }
        if let Some(views) = child("view-initializations") {
            self.views(views);
        }

        let ep_components = match child("event-processing") {
            Some(ep) => self.ep_components(ep),
            None => Vec::new(),
        };
        let ir_components = match child("info-rendition") {
            Some(ir) => self.ir_components(ir),
            None => Vec::new(),
        };
        self.unused_warnings(vo);
        let description = child("description").map(description_text);
        ir::CompiledVo {
            format: ir::FORMAT_VERSION,
            name,
            description,
            mode,
            events: self.events,
            infos: self.infos,
            controls: self.controls,
            views: self.views,
            ep_components,
            ir_components,
            program: self.program,
            assets: self.assets,
            sources: self.db.to_ir(),
            span: vo.tag_span,
        }
    }

    fn header(&mut self, name: &str) {
        let text = format!(
            ";;; Scheme program generated by the VOML compiler for visual object `{name}`.\n\
             ;;; Info and control structures are the globals info/NAME and control/NAME;\n\
             ;;; each component part is a procedure voml/KIND/COMPONENT/PART.\n"
        );
        self.program.push(&text, Span::default(), false);
    }

    // ----- declarations -------------------------------------------------------------------

    fn events(&mut self, decls: &Element) {
        let mut seen: HashMap<String, Span> = HashMap::new();
        for ev in decls.elements().filter(|e| e.name == "data-event") {
            let Some(name) = self.name_of(ev, &mut seen, "event") else {
                continue;
            };
            let rtype = ev.attr("rtype").and_then(|a| self.record_type(a));
            let etype = ev
                .attr("etype")
                .and_then(|a| parse_numbers(&a.value.text, 1, true).ok())
                .map(|v| v[0] as i64);
            let mut fields: Vec<ir::FieldDecl> = Vec::new();
            let mut next = 2u32;
            let mut field_names: HashMap<String, Span> = HashMap::new();
            for f in ev.elements().filter(|e| e.name == "data-field") {
                let Some(fname) = self.name_of(f, &mut field_names, "field of this event") else {
                    continue;
                };
                let position = match f.attr("index") {
                    Some(a) => match parse_numbers(&a.value.text, 1, true) {
                        Ok(v) if v[0] >= 2.0 && v[0] < 1_000_000.0 => v[0] as u32,
                        Ok(_) => {
                            self.err(
                                Diagnostic::new(Code::BadFieldPosition, a.value_span, format!("field `{fname}` at position {}", a.value.text.trim()))
                                    .label("positions start at 2")
                                    .hint("position 0 is the record type, 1 the event type, 2 the timestamp, 3 the processor"),
                            );
                            next
                        }
                        Err(_) => next,
                    },
                    None => next,
                };
                if let Some(other) = fields.iter().find(|o| o.position == position) {
                    let other_span = other.span;
                    let other_name = other.name.clone();
                    let at = f.attr("index").map_or(f.name_span, |a| a.value_span);
                    self.err(
                        Diagnostic::new(
                            Code::BadFieldPosition,
                            at,
                            format!(
                                "field `{fname}` is at position {position}, like `{other_name}`"
                            ),
                        )
                        .label("same position")
                        .secondary(other_span, "this field is already there"),
                    );
                }
                next = position + 1;
                let ty = match f.attr_text("type").map(str::trim) {
                    Some("int") => ir::FieldType::Int,
                    Some("real") => ir::FieldType::Real,
                    Some("string") => ir::FieldType::String,
                    _ => ir::FieldType::Any,
                };
                fields.push(ir::FieldDecl {
                    name: fname,
                    ty,
                    position,
                    span: f.tag_span,
                });
            }
            if let (Some(rtype), Some(etype)) = (rtype, etype) {
                if let Some(other) = self
                    .events
                    .iter()
                    .find(|e| e.rtype == rtype && e.etype == etype)
                {
                    // Legal (two views of one record), but every record then goes to both.
                    let _ = other;
                }
            }
            self.events.push(ir::EventDecl {
                name,
                rtype: rtype.unwrap_or(0),
                etype: etype.unwrap_or(0),
                fields,
                span: ev.tag_span,
            });
        }
    }

    fn record_type(&mut self, attr: &Attr) -> Option<i64> {
        let text = attr.value.text.trim();
        if let Ok(v) = text.parse::<i64>() {
            return Some(v);
        }
        if let Some(code) = record_type_code(text) {
            return Some(code);
        }
        self.err(
            Diagnostic::new(
                Code::BadRecordType,
                attr.value_span,
                format!("unknown record type `{text}`"),
            )
            .label("not an integer or a record-type name")
            .did_you_mean(text, RECORD_TYPES.iter().map(|(n, _)| *n))
            .hint("names: entry (-3), exit (-4), mark (-2), label (-5), pg-entry, pg-exit, callback (-1000), ..."),
        );
        None
    }

    fn variables(&mut self, list: &Element, info: bool) {
        let mut seen: HashMap<String, Span> = self
            .infos
            .iter()
            .chain(&self.controls)
            .map(|v| (v.name.clone(), v.span))
            .collect();
        for var in list.elements().filter(|e| e.name == "variable") {
            let Some(name) = self.name_of(
                var,
                &mut seen,
                "variable (info and control structures share names)",
            ) else {
                continue;
            };
            let ty = match var.attr_text("type").map(str::trim) {
                Some("int") => ir::VarType::Int,
                Some("real") => ir::VarType::Real,
                Some("boolean") => ir::VarType::Boolean,
                Some("string") => ir::VarType::String,
                Some("list") => ir::VarType::List,
                Some("vector") => ir::VarType::Vector,
                _ => ir::VarType::Any,
            };
            let init = match var.attr("init") {
                Some(a) => self
                    .init_value(a, ty)
                    .unwrap_or_else(|| default_init(ty).to_string()),
                None => default_init(ty).to_string(),
            };
            let global = format!("{}/{}", if info { "info" } else { "control" }, name);
            let v = ir::Variable {
                name,
                global,
                ty,
                init,
                span: var.tag_span,
            };
            if info {
                self.infos.push(v);
            } else {
                self.controls.push(v);
            }
        }
    }

    /// Warns when a list, vector or any-typed `init` starts with a constructor, as if it were
    /// code: `(list "red" "blue")` is a list of the symbol `list` and two strings.
    fn warn_init_code(&mut self, attr: &Attr, raw: &str, ty: ir::VarType) {
        const CONSTRUCTORS: &[&str] = &[
            "list",
            "vector",
            "cons",
            "quote",
            "make-vector",
            "list->vector",
            "append",
            "hash",
        ];
        let body = raw.trim_start_matches(['\'', '#']);
        let Some(inner) = body.strip_prefix('(') else {
            return;
        };
        let head = inner
            .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .next()
            .unwrap_or("");
        if !CONSTRUCTORS.contains(&head) {
            return;
        }
        let rest = inner[head.len()..].trim_start();
        let fixed = format!("({rest}");
        let what = match ty {
            ir::VarType::Vector => "vector",
            ir::VarType::List => "list",
            _ => "value",
        };
        self.diags.push(
            Diagnostic::new(
                Code::InitIsData,
                attr.value_span,
                format!("`init` is a datum, not code: this {what} starts with the symbol `{head}`"),
            )
            .label(format!("`{head}` is taken as data"))
            .hint(if fixed.contains('"') {
                format!("write the value itself: init='{fixed}'")
            } else {
                format!("write the value itself: init=\"{fixed}\"")
            }),
        );
    }

    /// The Scheme datum for an `init` value, or `None` after reporting why it is bad.
    fn init_value(&mut self, attr: &Attr, ty: ir::VarType) -> Option<String> {
        let raw = attr.value.text.trim();
        let bad = |why: &str| {
            Diagnostic::new(
                Code::BadInit,
                attr.value_span,
                format!(
                    "`{raw}` is not a valid initial value for a {} variable",
                    type_word(ty)
                ),
            )
            .label(why.to_string())
        };
        let result = match ty {
            ir::VarType::Int => raw
                .parse::<i64>()
                .map(|v| v.to_string())
                .map_err(|_| bad("expected an integer, e.g. -1")),
            ir::VarType::Real => match raw.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(real_literal(v)),
                _ => Err(bad("expected a number, e.g. 0.5")),
            },
            ir::VarType::Boolean => match raw {
                "#t" | "true" | "yes" | "#true" => Ok("#t".into()),
                "#f" | "false" | "no" | "#false" => Ok("#f".into()),
                _ => Err(bad("expected #t or #f (or true/false)")),
            },
            ir::VarType::String => Ok(scheme_string(&attr.value.text)),
            ir::VarType::List | ir::VarType::Vector | ir::VarType::Any => {
                let datum = if ty == ir::VarType::Vector && raw.starts_with('(') {
                    format!("#{raw}")
                } else {
                    raw.to_string()
                };
                self.warn_init_code(attr, raw, ty);
                match (scheme::split_exprs(&datum), scheme::read_error(&datum)) {
                    (Some(parts), None) if parts.len() == 1 => {
                        let ok = match ty {
                            ir::VarType::List => datum.starts_with('(') || datum.starts_with("'("),
                            ir::VarType::Vector => datum.starts_with("#("),
                            _ => true,
                        };
                        if ok && ty == ir::VarType::Vector {
                            // `#(...)` literals are immutable in the engine; vectors in info
                            // structures are meant to be updated with vector-set!.
                            Ok(format!("(apply vector (quote {}))", &datum[1..]))
                        } else if ok {
                            let unquoted = datum.strip_prefix('\'').unwrap_or(&datum);
                            Ok(if unquoted.starts_with('(') {
                                format!("(quote {unquoted})")
                            } else {
                                unquoted.to_string()
                            })
                        } else {
                            Err(bad(if ty == ir::VarType::List {
                                "expected a list, e.g. (\"red\" \"blue\")"
                            } else {
                                "expected a vector, e.g. #(0 0 0)"
                            }))
                        }
                    }
                    (_, Some((msg, _))) => Err(bad(&format!("not a Scheme datum: {msg}"))),
                    _ => Err(bad("expected exactly one Scheme datum")),
                }
            }
        };
        match result {
            Ok(v) => Some(v),
            Err(d) => {
                self.err(d);
                None
            }
        }
    }

    fn emit_globals(&mut self) {
        let vars: Vec<ir::Variable> = self.infos.iter().chain(&self.controls).cloned().collect();
        if vars.is_empty() {
            return;
        }
        self.gen("\n;; info and control structures\n");
        for v in vars {
            // `(set! x x)` keeps steel from folding the global into a constant (a global only
            // ever set from other compilation units would otherwise never change).
            let text = format!(
                "(define {g} {init})\n(set! {g} {g})\n",
                g = v.global,
                init = v.init
            );
            self.program.push(&text, v.span, false);
        }
    }

    fn gen(&mut self, text: &str) {
        self.program.push(text, Span::default(), false);
    }

    fn utility(&mut self, util: &Element) {
        let scope = Scope {
            kind: ScopeKind::Utility,
            what: "utility code",
            owner: "utility code".into(),
            decl_span: util.tag_span,
            list_spans: HashMap::new(),
            ..Scope::default()
        };
        let code = self.code(&util.children, &scope, None);
        if code.text.trim().is_empty() {
            return;
        }
        if scheme::check_syntax(&code, "utility code", util.tag_span, self.diags) {
            self.gen("\n;; utility code\n");
            self.program.push_program(&code);
            self.gen("\n");
        }
    }

    fn views(&mut self, list: &Element) {
        let mut seen: HashMap<String, Span> = HashMap::new();
        let mut inits: Vec<(usize, &Element)> = Vec::new();
        for el in list.elements().filter(|e| e.name == "view") {
            let Some(name) = self.name_of(el, &mut seen, "view") else {
                continue;
            };
            let nums = |attr: &str, count: usize, integer: bool, default: &[f64]| -> Vec<f64> {
                el.attr_text(attr)
                    .and_then(|t| parse_numbers(t, count, integer).ok())
                    .unwrap_or_else(|| default.to_vec())
            };
            let window = nums("window", 2, true, &[400.0, 300.0]);
            let world = nums("world", 4, false, &[0.0, 1.0, 0.0, 1.0]);
            let margins = nums("margins", 4, true, &[0.0; 4]);
            if let Some(a) = el.attr("window") {
                if window
                    .iter()
                    .any(|&v| !(1.0..=f64::from(ir::MAX_WINDOW)).contains(&v))
                {
                    self.err(
                        Diagnostic::new(
                            Code::BadNumber,
                            a.value_span,
                            format!(
                                "window sizes must be between 1 and {} pixels",
                                ir::MAX_WINDOW
                            ),
                        )
                        .label("out of range"),
                    );
                }
            }
            if let Some(a) = el.attr("world") {
                if world[0] == world[1] || world[2] == world[3] {
                    self.err(
                        Diagnostic::new(Code::BadNumber, a.value_span, "the world rectangle is empty")
                            .label("x0 = x1 or y0 = y1")
                            .hint("world is \"x0 x1 y0 y1\": the paper's BU-View has world=\"-10 110 -10 120\""),
                    );
                }
            }
            if let Some(a) = el.attr("margins") {
                if margins.iter().any(|&m| m < 0.0)
                    || margins[0] + margins[1] >= window[0]
                    || margins[2] + margins[3] >= window[1]
                {
                    self.err(
                        Diagnostic::new(
                            Code::BadNumber,
                            a.value_span,
                            "the margins leave no scrollable area",
                        )
                        .label("margins must be non-negative and smaller than the window"),
                    );
                }
            }
            let quality = nums("quality", 1, true, &[1024.0])[0];
            if let Some(a) = el.attr("quality") {
                if !(f64::from(ir::MIN_QUALITY)..=f64::from(ir::MAX_QUALITY)).contains(&quality) {
                    self.err(
                        Diagnostic::new(
                            Code::BadNumber,
                            a.value_span,
                            format!(
                                "the adaptation quality must be between {} and {}",
                                ir::MIN_QUALITY,
                                ir::MAX_QUALITY
                            ),
                        )
                        .label("out of range"),
                    );
                }
            }
            let adapt = el
                .attr("adapt")
                .map_or([ir::Adapt::None; 4], |a| self.adapt(a));
            let background = el
                .attr_text("background")
                .map(str::trim)
                .filter(|b| colours::is_literal(b))
                .unwrap_or("white")
                .to_string();
            if let Some(a) = el.attr("background") {
                if !colours::is_literal(a.value.text.trim()) {
                    self.err(
                        Diagnostic::new(
                            Code::BadValue,
                            a.value_span,
                            format!("`{}` is not a colour", a.value.text.trim()),
                        )
                        .label("expected a colour name or #rrggbb")
                        .did_you_mean(a.value.text.trim(), colours::NAMES.iter().copied()),
                    );
                }
            }
            let infos = self.var_list(el, "infos", true);
            let controls = self.var_list(el, "controls", false);
            self.views.push(ir::View {
                title: el
                    .attr_text("title")
                    .map(|t| t.trim().to_string())
                    .unwrap_or_else(|| name.clone()),
                name,
                window: [window[0] as u32, window[1] as u32],
                world: [world[0], world[1], world[2], world[3]],
                margins: [
                    margins[0] as u32,
                    margins[1] as u32,
                    margins[2] as u32,
                    margins[3] as u32,
                ],
                adapt,
                quality: quality.clamp(f64::from(ir::MIN_QUALITY), f64::from(ir::MAX_QUALITY))
                    as u32,
                background,
                infos,
                controls,
                init: None,
                span: el.tag_span,
            });
            inits.push((self.views.len() - 1, el));
        }
        // Init code is lowered once all views exist, so it may name any of them.
        self.index.views = index_of(&self.views, |v| v.name.as_str());
        self.uses.views = vec![false; self.views.len()];
        for (index, el) in inits {
            let view = self.views[index].clone();
            let scope = Scope {
                kind: ScopeKind::ViewInit,
                what: "view initialisation",
                owner: format!("view `{}`", view.name),
                infos: view.infos.clone(),
                controls: view.controls.clone(),
                views: vec![index],
                decl_span: el.tag_span,
                list_spans: list_spans(el),
                ..Scope::default()
            };
            let code = self.code(&el.children, &scope, None);
            if code.text.trim().is_empty() {
                continue;
            }
            let symbol = format!("voml/view/{}/init", view.name);
            if self.define(&symbol, "", &code, el, "view initialisation") {
                self.views[index].init = Some(ir::EntryPoint {
                    symbol,
                    span: el.tag_span,
                });
            }
        }
    }

    fn adapt(&mut self, attr: &Attr) -> [ir::Adapt; 4] {
        let mut out = [ir::Adapt::None; 4];
        for (word, range) in words_in(&attr.value.text) {
            let span = attr
                .value
                .source_of_range(range.start, range.end)
                .unwrap_or(attr.value_span);
            let parsed = word.split_once(':').and_then(|(dir, mode)| {
                let d = ["x+", "x-", "y+", "y-"].iter().position(|x| *x == dir)?;
                let m = match mode {
                    "scroll" => ir::Adapt::Scroll,
                    "rescale" => ir::Adapt::Rescale,
                    "none" => ir::Adapt::None,
                    _ => return None,
                };
                Some((d, m))
            });
            match parsed {
                Some((d, m)) => out[d] = m,
                None => self.err(
                    Diagnostic::new(Code::BadValue, span, format!("bad adaptation `{word}`"))
                        .label("expected DIRECTION:MODE")
                        .hint("DIRECTION is x+, x-, y+ or y-; MODE is scroll or rescale, e.g. adapt=\"x+:scroll y+:rescale\""),
                ),
            }
        }
        out
    }

    // ----- name lists ---------------------------------------------------------------------

    /// Resolves an `infos` or `controls` attribute to variable indices.
    fn var_list(&mut self, el: &Element, attr_name: &str, info: bool) -> Vec<usize> {
        let Some(attr) = el.attr(attr_name) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (word, range) in words_in(&attr.value.text) {
            let span = attr
                .value
                .source_of_range(range.start, range.end)
                .unwrap_or(attr.value_span);
            let (own, other) = if info {
                (&self.infos, &self.controls)
            } else {
                (&self.controls, &self.infos)
            };
            let own_index = if info {
                &self.index.infos
            } else {
                &self.index.controls
            };
            if let Some(&i) = own_index.get(word) {
                out.push(i);
                continue;
            }
            let kind = if info {
                "info structure"
            } else {
                "control structure"
            };
            let mut d = Diagnostic::new(
                Code::UnknownVariable,
                span,
                format!("no {kind} named `{word}`"),
            )
            .label(format!(
                "not declared in <{}>",
                if info {
                    "info-structures"
                } else {
                    "control-structures"
                }
            ));
            // The variable meant counts as used: no "never used" warning on top of this error.
            let meant = match other.iter().position(|v| v.name == word) {
                Some(o) => Some((!info, o)),
                None => crate::diag::closest(word, own.iter().map(|v| v.name.as_str()))
                    .and_then(|best| own.iter().position(|v| v.name == best))
                    .map(|i| (info, i)),
            };
            if let Some(o) = other.iter().find(|v| v.name == word) {
                d = d
                    .secondary(
                        o.span,
                        format!(
                            "`{word}` is declared here as a {}",
                            if info {
                                "control structure"
                            } else {
                                "info structure"
                            }
                        ),
                    )
                    .hint(format!(
                        "list it in `{}` instead",
                        if info { "controls" } else { "infos" }
                    ));
            } else {
                d = d.did_you_mean(word, own.iter().map(|v| v.name.as_str()));
            }
            self.err(d);
            match meant {
                Some((true, i)) => self.uses.infos[i] = true,
                Some((false, i)) => self.uses.controls[i] = true,
                None => {}
            }
            out.push(usize::MAX);
        }
        for &i in &out {
            if i != usize::MAX {
                let uses = if info {
                    &mut self.uses.infos
                } else {
                    &mut self.uses.controls
                };
                if let Some(u) = uses.get_mut(i) {
                    *u = true;
                }
            }
        }
        out
    }

    /// After an unknown view name: the view probably meant counts as used, so that no
    /// "never drawn in" warning comes on top of the error.
    fn mark_meant_view(&mut self, wrong: &str) {
        if let Some(i) = crate::diag::closest(wrong, self.views.iter().map(|v| v.name.as_str()))
            .and_then(|best| self.views.iter().position(|v| v.name == best))
        {
            self.uses.views[i] = true;
        }
    }

    fn view_list(&mut self, el: &Element) -> Vec<usize> {
        let Some(attr) = el.attr("views") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (word, range) in words_in(&attr.value.text) {
            let span = attr
                .value
                .source_of_range(range.start, range.end)
                .unwrap_or(attr.value_span);
            match self.index.views.get(word).copied() {
                Some(i) => {
                    self.uses.views[i] = true;
                    out.push(i);
                }
                None => {
                    let d =
                        Diagnostic::new(Code::UnknownView, span, format!("no view named `{word}`"))
                            .label("not declared in <view-initializations>")
                            .did_you_mean(word, self.views.iter().map(|v| v.name.as_str()));
                    self.err(d);
                    self.mark_meant_view(word);
                    out.push(usize::MAX);
                }
            }
        }
        out
    }

    /// Resolves `inputs="event.field.field other"`: for each entry the event index, the
    /// field indices, and the parameter names for those fields.
    fn inputs(&mut self, attr: &Attr) -> Vec<(usize, Vec<usize>, Span)> {
        let mut out = Vec::new();
        for (word, range) in words_in(&attr.value.text) {
            let span = attr
                .value
                .source_of_range(range.start, range.end)
                .unwrap_or(attr.value_span);
            let mut parts = word.split('.');
            let ev_name = parts.next().unwrap_or("");
            let Some(ev) = self.index.events.get(ev_name).copied() else {
                let ev_span = attr
                    .value
                    .source_of_range(range.start, range.start + ev_name.len())
                    .unwrap_or(span);
                let d = Diagnostic::new(
                    Code::UnknownEvent,
                    ev_span,
                    format!("no event named `{ev_name}`"),
                )
                .label("not declared in <event-declarations>")
                .did_you_mean(ev_name, self.events.iter().map(|e| e.name.as_str()));
                self.err(d);
                // The event meant counts as processed: no "never processed" warning on top.
                if let Some(i) =
                    crate::diag::closest(ev_name, self.events.iter().map(|e| e.name.as_str()))
                        .and_then(|best| self.events.iter().position(|e| e.name == best))
                {
                    self.uses.events[i] = true;
                }
                out.push((usize::MAX, Vec::new(), span));
                continue;
            };
            self.uses.events[ev] = true;
            let mut fields = Vec::new();
            let mut offset = range.start + ev_name.len() + 1;
            let mut any = false;
            for field in parts {
                any = true;
                let fspan = attr
                    .value
                    .source_of_range(offset, offset + field.len().max(1))
                    .unwrap_or(span);
                offset += field.len() + 1;
                match self.events[ev].fields.iter().position(|f| f.name == field) {
                    Some(f) => fields.push(f),
                    None => {
                        let event = &self.events[ev];
                        let d = Diagnostic::new(
                            Code::UnknownField,
                            fspan,
                            format!("event `{}` has no field `{field}`", event.name),
                        )
                        .label("unknown field")
                        .secondary(event.span, format!("`{}` is declared here", event.name))
                        .did_you_mean(field, event.fields.iter().map(|f| f.name.as_str()));
                        let d = if field.is_empty() {
                            d.hint("two dots in a row, or a dot at the end")
                        } else {
                            d
                        };
                        self.err(d);
                        fields.push(usize::MAX);
                    }
                }
            }
            if !any {
                fields = (0..self.events[ev].fields.len()).collect();
            }
            out.push((ev, fields, span));
        }
        out
    }

    // ----- components ---------------------------------------------------------------------

    fn ep_components(&mut self, section: &Element) -> Vec<ir::EpComponent> {
        let mut seen: HashMap<String, Span> = HashMap::new();
        let mut out = Vec::new();
        for el in section.elements().filter(|e| e.name == "ep-component") {
            let Some(name) = self.name_of(el, &mut seen, "EP component") else {
                continue;
            };
            if let Some(c) = self.ep_component(el, name) {
                out.push(c);
            }
        }
        out
    }

    /// The element holding a component's code: its own, or the library's for `use`.
    fn body_of<'e>(&mut self, el: &'e Element, kind: &str) -> Option<&'e Element>
    where
        'a: 'e,
    {
        let Some(use_attr) = el.attr("use") else {
            return Some(el);
        };
        let lib_name = use_attr.value.text.trim();
        let Some(lib) = self.library.get(lib_name) else {
            let d = Diagnostic::new(
                Code::UnknownComponent,
                use_attr.value_span,
                format!("no library component named `{lib_name}`"),
            )
            .label("not defined by any <import>ed library")
            .did_you_mean(lib_name, self.library.keys().map(String::as_str));
            // The component meant counts as used: no "never used" warning on top.
            if let Some(best) =
                crate::diag::closest(lib_name, self.library.keys().map(String::as_str))
            {
                self.library[best].used.set(true);
            }
            let d = if self.library.is_empty() {
                d.hint("import a library in <head>: <import href=\"lib/components.voml\"/>")
            } else {
                d
            };
            self.err(d);
            return None;
        };
        lib.used.set(true);
        if lib.element.name != kind {
            self.err(
                Diagnostic::new(
                    Code::UnknownComponent,
                    use_attr.value_span,
                    format!(
                        "`{lib_name}` is an `<{}>`, not an `<{kind}>`",
                        lib.element.name
                    ),
                )
                .label("wrong kind of component")
                .secondary(lib.element.name_span, "defined here"),
            );
            return None;
        }
        // Where the component's own code starts, if it has any.
        let own_code = el.children.iter().find_map(|n| match n {
            Node::Text(t) if !t.text.trim().is_empty() => {
                let at = t.text.len() - t.text.trim_start().len();
                Some(
                    t.source_of_range(at, t.text.trim_end().len())
                        .unwrap_or(el.name_span),
                )
            }
            Node::Element(e) if e.name != "description" && e.name != "preprocess-inputs" => {
                Some(e.tag_span)
            }
            _ => None,
        });
        if let Some(code_span) = own_code {
            self.err(
                Diagnostic::new(
                    Code::UseWithCode,
                    code_span,
                    format!(
                        "`{}` uses library component `{lib_name}` and also has code",
                        el.attr_text("name").unwrap_or("")
                    ),
                )
                .label("code of its own")
                .secondary(
                    use_attr.value_span,
                    "the code comes from this library component",
                )
                .secondary(lib.element.name_span, "library component defined here")
                .hint("remove the code, or remove `use` to write the component here"),
            );
        }
        // Arity: every list the library declares must have as many entries here.
        let errors_before = self.diags.len();
        for list in ["inputs", "infos", "controls", "views"] {
            let formal = lib
                .element
                .attr_text(list)
                .map_or(0, |t| t.split_whitespace().count());
            let actual = el
                .attr_text(list)
                .map_or(0, |t| t.split_whitespace().count());
            if formal != actual {
                let at = el.attr(list).map_or(el.name_span, |a| a.value_span);
                let formal_span = lib
                    .element
                    .attr(list)
                    .map_or(lib.element.name_span, |a| a.value_span);
                self.err(
                    Diagnostic::new(
                        Code::UseArity,
                        at,
                        format!("`{lib_name}` takes {formal} {list}, {actual} given"),
                    )
                    .label(format!("{actual} here"))
                    .secondary(
                        formal_span,
                        format!("the library component declares {formal}"),
                    ),
                );
            }
        }
        if let (Some(formal), Some(actual)) =
            (lib.element.attr_text("inputs"), el.attr_text("inputs"))
        {
            for (i, (f, a)) in formal
                .split_whitespace()
                .zip(actual.split_whitespace())
                .enumerate()
            {
                let (fc, ac) = (f.split('.').count(), a.split('.').count());
                if fc != ac && ac > 1 {
                    self.err(
                        Diagnostic::new(
                            Code::UseArity,
                            el.attr("inputs").map_or(el.name_span, |x| x.value_span),
                            format!(
                                "input {i} of `{lib_name}` takes {} fields, {} given",
                                fc - 1,
                                ac - 1
                            ),
                        )
                        .label("field count differs")
                        .secondary(
                            lib.element
                                .attr("inputs")
                                .map_or(lib.element.name_span, |x| x.value_span),
                            "declared here",
                        ),
                    );
                }
            }
        }
        if self.diags.len() > errors_before {
            // Lowering the library's code against lists of the wrong length would only
            // repeat the problem as out-of-range parameters inside the library.
            return None;
        }
        Some(&lib.element)
    }

    fn ep_component(&mut self, el: &Element, name: String) -> Option<ir::EpComponent> {
        let infos = self.var_list(el, "infos", true);
        let controls = self.var_list(el, "controls", false);
        let inputs = el
            .attr("inputs")
            .map(|a| self.inputs(a))
            .unwrap_or_default();
        let body = self.body_of(el, "ep-component")?;
        let input_params: Vec<Vec<String>> = inputs
            .iter()
            .enumerate()
            .map(|(k, (ev, fields, _))| {
                fields
                    .iter()
                    .enumerate()
                    .map(
                        |(m, &f)| match self.events.get(*ev).and_then(|e| e.fields.get(f)) {
                            Some(field) => format!("input{k}/{}", field.name),
                            None => format!("input{k}/{m}"),
                        },
                    )
                    .collect()
            })
            .collect();
        let base = Scope {
            kind: ScopeKind::Ep,
            what: "EP component",
            owner: format!("EP component `{name}`"),
            infos: infos.clone(),
            controls: controls.clone(),
            inputs: input_params.clone(),
            decl_span: el.tag_span,
            list_spans: list_spans(el),
            ..Scope::default()
        };
        // Glue from the use site (the component's own element), applied before the part runs.
        let mut glue: Vec<Vec<(usize, Frag)>> = vec![Vec::new(); inputs.len()];
        for pre in el.elements().filter(|e| e.name == "preprocess-inputs") {
            let Some(attr) = pre.attr("field") else {
                continue;
            };
            let Some((k, m)) = self.field_ref(attr, &base) else {
                continue;
            };
            let scope = Scope {
                current_input: Some(k),
                what: "preprocess-inputs",
                ..base.clone()
            };
            let code = self.code(&pre.children, &scope, None);
            if code.text.trim().is_empty() {
                self.err(
                    Diagnostic::new(
                        Code::MissingElement,
                        pre.tag_span,
                        "`<preprocess-inputs>` has no expression",
                    )
                    .label("empty"),
                );
                continue;
            }
            if scheme::check_syntax(&code, "preprocess-inputs", pre.tag_span, self.diags) {
                glue[k].push((m, code));
            }
        }
        let mut handlers: Vec<Option<ir::EntryPoint>> = vec![None; inputs.len()];
        let mut before = Vec::new();
        let mut after = Vec::new();
        let mut part_spans: Vec<Option<Span>> = vec![None; inputs.len()];
        let mut parts = 0;
        for part in body.elements() {
            match part.name.as_str() {
                "input" => {
                    parts += 1;
                    let Some(k) = self.input_index(part, &inputs, &part_spans) else {
                        continue;
                    };
                    part_spans[k] = Some(part.tag_span);
                    let scope = Scope {
                        current_input: Some(k),
                        what: "input part",
                        ..base.clone()
                    };
                    let code = self.code(&part.children, &scope, None);
                    let params = input_params[k].join(" ");
                    let symbol = format!("voml/ep/{name}/input/{k}");
                    let mut wrapped = Frag::default();
                    if glue[k].is_empty() {
                        wrapped.push_program(&code);
                    } else {
                        wrapped.push("(let (", part.tag_span, false);
                        for (m, g) in &glue[k] {
                            wrapped.push(
                                &format!("({} ", input_params[k][*m]),
                                part.tag_span,
                                false,
                            );
                            wrapped.push_program(g);
                            wrapped.push(")", part.tag_span, false);
                        }
                        wrapped.push(")\n", part.tag_span, false);
                        wrapped.push_program(&code);
                        wrapped.push("\n#t)", part.tag_span, false);
                    }
                    if self.define(&symbol, &params, &wrapped, part, "input part") {
                        handlers[k] = Some(ir::EntryPoint {
                            symbol,
                            span: part.tag_span,
                        });
                    }
                }
                "before" | "after" => {
                    parts += 1;
                    let scope = Scope {
                        what: "condition part",
                        ..base.clone()
                    };
                    let Some(cond_attr) = part.attr("condition") else {
                        continue;
                    };
                    let Some(cond) = self.expressions(cond_attr, 1, &scope) else {
                        continue;
                    };
                    let code = self.code(&part.children, &scope, None);
                    let list = if part.name == "before" {
                        &mut before
                    } else {
                        &mut after
                    };
                    let symbol = format!("voml/ep/{name}/{}/{}", part.name, list.len());
                    let mut wrapped = Frag::default();
                    wrapped.push("(if ", cond_attr.value_span, false);
                    wrapped.push_program(&cond[0]);
                    wrapped.push("\n(begin\n", part.tag_span, false);
                    wrapped.push_program(&code);
                    wrapped.push("\n#t) #f)", part.tag_span, false);
                    let entry = ir::EntryPoint {
                        symbol: symbol.clone(),
                        span: part.tag_span,
                    };
                    let list_len = list.len();
                    let _ = list_len;
                    if self.define(
                        &symbol,
                        "",
                        &wrapped,
                        part,
                        &format!("`{}` part", part.name),
                    ) {
                        let list = if part.name == "before" {
                            &mut before
                        } else {
                            &mut after
                        };
                        list.push(ir::ConditionPart { entry });
                    }
                }
                _ => {}
            }
        }
        if parts == 0 && !self.diags.iter().any(|d| d.is_error()) {
            self.err(
                Diagnostic::new(
                    Code::EmptyComponent,
                    el.name_span,
                    format!("EP component `{name}` has no parts"),
                )
                .label("does nothing")
                .hint("add `<input name=\"^0\">...</input>` with the code for its first input"),
            );
        }
        Some(ir::EpComponent {
            name,
            library: el.attr_text("use").map(|u| u.trim().to_string()),
            inputs: inputs
                .into_iter()
                .zip(handlers)
                .map(|((event, fields, span), handler)| ir::Input {
                    event,
                    fields,
                    handler,
                    span,
                })
                .filter(|i| i.event != usize::MAX)
                .collect(),
            infos: infos.into_iter().filter(|&i| i != usize::MAX).collect(),
            controls: controls.into_iter().filter(|&i| i != usize::MAX).collect(),
            before,
            after,
            span: el.tag_span,
        })
    }

    /// Which input an `<input name="...">` part handles.
    fn input_index(
        &mut self,
        part: &Element,
        inputs: &[(usize, Vec<usize>, Span)],
        taken: &[Option<Span>],
    ) -> Option<usize> {
        let attr = part.attr("name")?;
        let text = attr.value.text.trim();
        let k = match scheme::parse_param(text) {
            Some(Param::Caret(k)) if k < inputs.len() => Some(k),
            Some(Param::Caret(k)) => {
                let d = Diagnostic::new(
                    Code::ParameterOutOfRange,
                    attr.value_span,
                    format!(
                        "`^{k}` but the component has {} input{}",
                        inputs.len(),
                        if inputs.len() == 1 { "" } else { "s" }
                    ),
                )
                .label("no such input")
                .hint("inputs are numbered from ^0 in the order of the `inputs` attribute");
                self.err(d);
                return None;
            }
            _ => inputs
                .iter()
                .position(|(ev, _, _)| self.events.get(*ev).is_some_and(|e| e.name == text)),
        };
        let Some(k) = k else {
            self.err(
                Diagnostic::new(
                    Code::BadInputName,
                    attr.value_span,
                    format!("`{text}` names no input of this component"),
                )
                .label("expected ^0, ^1, ... or an event named in `inputs`"),
            );
            return None;
        };
        if inputs[k].0 == usize::MAX {
            return None;
        }
        if let Some(first) = taken[k] {
            self.err(
                Diagnostic::new(
                    Code::BadInputName,
                    attr.value_span,
                    format!("a second part for input ^{k}"),
                )
                .label("duplicate")
                .secondary(first, "the first part for it"),
            );
            return None;
        }
        Some(k)
    }

    /// Parses `field="^k/m"` (or `event.field`) against the component's inputs.
    fn field_ref(&mut self, attr: &Attr, scope: &Scope) -> Option<(usize, usize)> {
        let text = attr.value.text.trim();
        match scheme::parse_param(text) {
            Some(Param::Field(k, m)) => {
                if k >= scope.inputs.len() || m >= scope.inputs[k].len() {
                    self.err(self.out_of_range(&Param::Field(k, m), attr.value_span, scope));
                    return None;
                }
                Some((k, m))
            }
            _ => {
                self.err(
                    Diagnostic::new(
                        Code::BadInputName,
                        attr.value_span,
                        format!("`{text}` is not a field reference"),
                    )
                    .label("expected ^k/m: field m of input k"),
                );
                None
            }
        }
    }

    fn ir_components(&mut self, section: &Element) -> Vec<ir::IrComponent> {
        let mut seen: HashMap<String, Span> = HashMap::new();
        let reverse = section.attr_text("order").map(str::trim) == Some("reverse");
        let mut out: Vec<(i64, ir::IrComponent)> = Vec::new();
        let elements: Vec<&Element> = section
            .elements()
            .filter(|e| e.name == "ir-component")
            .collect();
        let n = elements.len() as i64;
        for (pos, el) in elements.into_iter().enumerate() {
            let Some(name) = self.name_of(el, &mut seen, "IR component") else {
                continue;
            };
            let default_key = if reverse {
                n - 1 - pos as i64
            } else {
                pos as i64
            };
            let key = el
                .attr_text("order")
                .and_then(|o| parse_numbers(o, 1, true).ok())
                .map_or(default_key, |v| v[0] as i64);
            if let Some(c) = self.ir_component(el, name) {
                out.push((key, c));
            }
        }
        out.sort_by_key(|(k, _)| *k);
        out.into_iter().map(|(_, c)| c).collect()
    }

    fn ir_component(&mut self, el: &Element, name: String) -> Option<ir::IrComponent> {
        let views = self.view_list(el);
        let infos = self.var_list(el, "infos", true);
        let controls = self.var_list(el, "controls", false);
        let body = self.body_of(el, "ir-component")?;
        let scope = Scope {
            kind: ScopeKind::Ir,
            what: "IR component",
            owner: format!("IR component `{name}`"),
            infos: infos.clone(),
            controls: controls.clone(),
            views: views.clone(),
            decl_span: el.tag_span,
            list_spans: list_spans(el),
            ..Scope::default()
        };
        let refresh_words: Vec<String> = el
            .attr_text("refresh")
            .or_else(|| body.attr_text("refresh"))
            .map(|t| t.split_whitespace().map(String::from).collect())
            .unwrap_or_default();
        let refresh = ir::Refresh {
            resize: refresh_words.iter().any(|w| w == "resize"),
            rescale: refresh_words.iter().any(|w| w == "rescale"),
            update: refresh_words.iter().any(|w| w == "update"),
        };
        let buffer = matches!(
            el.attr_text("buffer")
                .or_else(|| body.attr_text("buffer"))
                .map(str::trim),
            Some("yes" | "true")
        );
        let enable = match el.attr("enable").or_else(|| body.attr("enable")) {
            Some(attr) => self.expressions(attr, 1, &scope).and_then(|e| {
                let symbol = format!("voml/ir/{name}/enable");
                self.define_value(&symbol, &e[0], el, "`enable` expression")
                    .then_some(ir::EntryPoint {
                        symbol,
                        span: attr.value_span,
                    })
            }),
            None => None,
        };
        let mut phase2_code: Option<(Frag, &Element)> = None;
        let code = self.code(&body.children, &scope, Some(&mut phase2_code));
        let phase1 = if code.text.trim().is_empty() {
            None
        } else {
            let symbol = format!("voml/ir/{name}/phase1");
            self.define(&symbol, "", &code, body, "IR component")
                .then_some(ir::EntryPoint {
                    symbol,
                    span: body.tag_span,
                })
        };
        let phase2 = match phase2_code {
            Some((code, end)) if !code.text.trim().is_empty() => {
                let symbol = format!("voml/ir/{name}/phase2");
                self.define(&symbol, "", &code, end, "`end-with` code")
                    .then_some(ir::EntryPoint {
                        symbol,
                        span: end.tag_span,
                    })
            }
            _ => None,
        };
        if phase1.is_none() && phase2.is_none() && !self.diags.iter().any(|d| d.is_error()) {
            self.err(
                Diagnostic::new(
                    Code::EmptyComponent,
                    el.name_span,
                    format!("IR component `{name}` has no code"),
                )
                .label("draws nothing"),
            );
        }
        Some(ir::IrComponent {
            name,
            library: el.attr_text("use").map(|u| u.trim().to_string()),
            views: views.into_iter().filter(|&i| i != usize::MAX).collect(),
            infos: infos.into_iter().filter(|&i| i != usize::MAX).collect(),
            controls: controls.into_iter().filter(|&i| i != usize::MAX).collect(),
            refresh,
            buffer,
            enable,
            phase1,
            phase2,
            span: el.tag_span,
        })
    }

    /// Adds `(define (symbol params) code #t)` to the program after checking the code reads.
    fn define(
        &mut self,
        symbol: &str,
        params: &str,
        code: &Frag,
        el: &Element,
        what: &str,
    ) -> bool {
        if !scheme::check_syntax(code, what, el.tag_span, self.diags) {
            return false;
        }
        let head = if params.is_empty() {
            format!("\n(define ({symbol})\n")
        } else {
            format!("\n(define ({symbol} {params})\n")
        };
        self.program.push(&head, el.tag_span, false);
        self.program.push_program(code);
        // A body may end with a definition or be empty; the value of a part is not used.
        self.program.push("\n#t)\n", el.tag_span, false);
        true
    }

    /// Adds `(define (symbol) expr)`: a procedure whose value matters.
    fn define_value(&mut self, symbol: &str, expr: &Frag, el: &Element, what: &str) -> bool {
        if !scheme::check_syntax(expr, what, el.tag_span, self.diags) {
            return false;
        }
        self.program
            .push(&format!("\n(define ({symbol})\n"), el.tag_span, false);
        self.program.push_program(expr);
        self.program.push(")\n", el.tag_span, false);
        true
    }

    // ----- code ---------------------------------------------------------------------------

    /// Lowers the mixed content of a code element: text with formal parameters substituted,
    /// markup primitives turned into calls. `end-with` goes to `phase2` when given.
    fn code<'e>(
        &mut self,
        children: &'e [Node],
        scope: &Scope,
        mut phase2: Option<&mut Option<(Frag, &'e Element)>>,
    ) -> Frag {
        let mut out = Frag::default();
        for node in children {
            match node {
                Node::Text(text) => {
                    let substituted = self.substitute(text, scope);
                    out.push_program(&substituted);
                }
                Node::Element(el) if el.name == "description" => {}
                Node::Element(el) if el.name == "end-with" => {
                    if let Some(slot) = phase2.as_deref_mut() {
                        let code = self.code(&el.children, scope, None);
                        *slot = Some((code, el));
                    }
                }
                Node::Element(el) => {
                    if let Some(spec) = schema::element(&el.name).filter(|s| s.primitive) {
                        // A primitive after a `;` comment on the same line would be commented
                        // out: start it on a new line.
                        let line_start = out.text.rfind('\n').map_or(0, |i| i + 1);
                        if out.text[line_start..].contains(';') {
                            out.push("\n", el.tag_span, false);
                        }
                        out.push(" ", el.tag_span, false);
                        match self.primitive(el, spec, scope) {
                            Some(call) => out.push_program(&call),
                            // Reported already; a placeholder keeps the surrounding code
                            // readable (a dropped primitive can leave `(lambda (x))`).
                            None => out.push("#f", el.tag_span, false),
                        }
                        out.push(" ", el.tag_span, false);
                    }
                }
            }
        }
        out
    }

    fn substitute(&mut self, text: &Frag, scope: &Scope) -> Frag {
        let mut problems = Vec::new();
        let out = scheme::substitute(text, |param, span| {
            match self.resolve_param(param, span, scope) {
                Ok(s) => Some(s),
                Err(d) => {
                    problems.push(*d);
                    None
                }
            }
        });
        self.diags.extend(problems);
        out
    }

    /// What a formal parameter stands for in `scope`.
    fn resolve_param(
        &mut self,
        param: &Param,
        span: Span,
        scope: &Scope,
    ) -> Result<String, Box<Diagnostic>> {
        let not_allowed = |msg: String| {
            Diagnostic::new(Code::ParameterNotAllowed, span, msg).label("not available here")
        };
        match *param {
            Param::Info(n) => match scope.infos.get(n) {
                Some(&i) if i != usize::MAX => {
                    self.uses.infos[i] = true;
                    Ok(self.infos[i].global.clone())
                }
                Some(_) => Ok("#f".into()),
                None if scope.kind == ScopeKind::Utility => Err(Box::new(not_allowed(format!(
                    "`${n}` in utility code, which has no `infos`"
                )))),
                None => Err(Box::new(self.out_of_range(param, span, scope))),
            },
            Param::Control(n) => match scope.controls.get(n) {
                Some(&i) if i != usize::MAX => {
                    self.uses.controls[i] = true;
                    Ok(self.controls[i].global.clone())
                }
                Some(_) => Ok("#f".into()),
                None if scope.kind == ScopeKind::Utility => Err(Box::new(not_allowed(format!(
                    "`%{n}` in utility code, which has no `controls`"
                )))),
                None => Err(Box::new(self.out_of_range(param, span, scope))),
            },
            Param::Caret(n) => {
                if matches!(scope.kind, ScopeKind::Ir | ScopeKind::ViewInit) {
                    return match scope.views.get(n) {
                        Some(&v) if v != usize::MAX => Ok(v.to_string()),
                        Some(_) => Ok("0".into()),
                        None => Err(Box::new(self.out_of_range(param, span, scope))),
                    };
                }
                if scope.kind == ScopeKind::Utility {
                    return Err(Box::new(not_allowed(format!(
                        "`^{n}` in utility code, which has no inputs or views"
                    ))));
                }
                if scope.current_input.is_none() {
                    return Err(Box::new(not_allowed(format!("`^{n}` in a {}: condition parts run for every event, not for one input", scope.what))
                        .hint("test the event in the condition with the prelude's `(current-event)`")));
                }
                match scope.inputs.get(n) {
                    Some(fields) if Some(n) == scope.current_input => {
                        Ok(format!("(list {})", fields.join(" ")))
                    }
                    Some(_) => Err(Box::new(
                        not_allowed(format!(
                            "`^{n}` in the part for input ^{}",
                            scope.current_input.unwrap_or(0)
                        ))
                        .hint("each `<input>` part sees only its own event"),
                    )),
                    None => Err(Box::new(self.out_of_range(param, span, scope))),
                }
            }
            Param::Field(n, m) => {
                if scope.inputs.is_empty() || scope.current_input.is_none() {
                    let hint = if scope.kind == ScopeKind::Ir {
                        "IR components read events through info structures, which EP components fill"
                    } else {
                        "fields exist only in `<input>` parts and `<preprocess-inputs>`"
                    };
                    return Err(Box::new(
                        not_allowed(format!("`^{n}/{m}` in {}", article(scope.what))).hint(hint),
                    ));
                }
                match scope.inputs.get(n) {
                    Some(fields) if Some(n) == scope.current_input => match fields.get(m) {
                        Some(name) => Ok(name.clone()),
                        None => Err(Box::new(self.out_of_range(param, span, scope))),
                    },
                    Some(_) => Err(Box::new(
                        not_allowed(format!(
                            "`^{n}/{m}` in the part for input ^{}",
                            scope.current_input.unwrap_or(0)
                        ))
                        .hint("each `<input>` part sees only its own event"),
                    )),
                    None => Err(Box::new(self.out_of_range(param, span, scope))),
                }
            }
        }
    }

    fn out_of_range(&self, param: &Param, span: Span, scope: &Scope) -> Diagnostic {
        let (text, list, len) = match *param {
            Param::Info(n) => (format!("${n}"), "infos", scope.infos.len()),
            Param::Control(n) => (format!("%{n}"), "controls", scope.controls.len()),
            Param::Caret(n) if matches!(scope.kind, ScopeKind::Ir | ScopeKind::ViewInit) => {
                (format!("^{n}"), "views", scope.views.len())
            }
            Param::Caret(n) => (format!("^{n}"), "inputs", scope.inputs.len()),
            Param::Field(n, m) => match scope.inputs.get(n) {
                Some(fields) => (
                    format!("^{n}/{m}"),
                    "fields listed for this input",
                    fields.len(),
                ),
                None => (format!("^{n}/{m}"), "inputs", scope.inputs.len()),
            },
        };
        let valid = match len {
            0 => "none".to_string(),
            1 => "only index 0".to_string(),
            n => format!("0 to {}", n - 1),
        };
        let key = if list.starts_with("fields") {
            "inputs"
        } else {
            list
        };
        let (decl, what) = match scope.list_spans.get(key) {
            Some(&s) => (s, format!("`{key}` lists {len}")),
            None => (scope.decl_span, format!("no `{key}` attribute here")),
        };
        Diagnostic::new(
            Code::ParameterOutOfRange,
            span,
            format!(
                "`{text}` is out of range: {} has {len} {}",
                scope.owner,
                match (len, list) {
                    (1, "fields listed for this input") => "field listed for this input",
                    (1, l) => l.strip_suffix('s').unwrap_or(l),
                    (_, l) => l,
                }
            ),
        )
        .label(format!("valid: {valid}"))
        .secondary(decl, what)
    }

    /// Splits an attribute into `count` Scheme expressions, parameters substituted.
    fn expressions(&mut self, attr: &Attr, count: usize, scope: &Scope) -> Option<Vec<Frag>> {
        let code = self.substitute(&attr.value, scope);
        let Some(ranges) = scheme::split_exprs(&code.text) else {
            scheme::check_syntax(
                &code,
                &format!("attribute `{}`", attr.name),
                attr.value_span,
                self.diags,
            );
            if scheme::read_error(&code.text).is_none() {
                self.err(
                    Diagnostic::new(
                        Code::SchemeSyntax,
                        attr.value_span,
                        format!("attribute `{}` does not read as Scheme", attr.name),
                    )
                    .label("unbalanced"),
                );
            }
            return None;
        };
        if ranges.len() != count {
            let what = match count {
                1 => "one Scheme expression".to_string(),
                2 => "two Scheme expressions (x y)".to_string(),
                n => format!("{n} Scheme expressions"),
            };
            self.err(
                Diagnostic::new(
                    Code::ExpressionCount,
                    attr.value_span,
                    format!(
                        "`{}` holds {} expression{}, expected {what}",
                        attr.name,
                        ranges.len(),
                        if ranges.len() == 1 { "" } else { "s" }
                    ),
                )
                .label(format!("{} here", ranges.len()))
                .hint("expressions are separated by spaces; wrap compound ones in parentheses"),
            );
            return None;
        }
        let mut out = Vec::new();
        let mut ok = true;
        for r in ranges {
            let mut part = Frag::default();
            part.push_range(&code, r);
            ok &= scheme::check_syntax(
                &part,
                &format!("attribute `{}`", attr.name),
                attr.value_span,
                self.diags,
            );
            out.push(part);
        }
        ok.then_some(out)
    }

    /// A markup primitive as a call of the runtime's primitive API.
    fn primitive(
        &mut self,
        el: &Element,
        spec: &schema::ElementSpec,
        scope: &Scope,
    ) -> Option<Frag> {
        let span = el.tag_span;
        let mut call = Frag::default();
        let mut ok = true;
        let proc = if el.name == "beep" {
            "beep".to_string()
        } else if matches!(el.name.as_str(), "channel" | "master" | "tempo") {
            // Not to be confused with drawing: these set up the sound mixer.
            format!("voml-sound-{}", el.name)
        } else {
            format!("voml-{}", el.name)
        };
        call.push(&format!("({proc}"), span, false);
        // Arguments in the documented order of the primitive API (see voml_ir::primitive_api).
        let order: &[&str] = match el.name.as_str() {
            "line" => &["view", "from", "to"],
            "polyline" => &["view", "points"],
            "polygon" => &["view", "points", "fill"],
            "rectangle" => &["view", "from", "to", "fill"],
            "circle" => &["view", "center", "radius", "fill"],
            "ellipse" => &["view", "center", "radii", "fill"],
            "arc" => &["view", "center", "radius", "start", "extent"],
            "text" => &[
                "view", "coords", "content", "font", "fcolor", "size", "halign", "valign",
            ],
            "figure" => &[
                "view",
                "filename",
                "orig-origin",
                "orig-extents",
                "world-origin",
                "world-extents",
            ],
            "view-info" => &["view"],
            "scroll" => &["view", "by"],
            "resize" => &["view", "size"],
            "rescale" => &["view", "world"],
            "snapshot" => &["view", "file"],
            "tone" => &["pitch", "duration", "volume", "pan", "voice", "channel"],
            "note-on" => &["channel", "pitch", "volume"],
            "note-off" => &["channel", "pitch"],
            "note-volume" => &["channel", "pitch", "volume"],
            "channel" => &["channel", "voice", "pan", "volume", "mute"],
            "master" => &["volume"],
            "tempo" => &["factor"],
            _ => &[],
        };
        for name in order {
            if *name == "pitch" {
                call.push(" ", span, false);
                match self.pitch(el, scope) {
                    Some(arg) => call.push_program(&arg),
                    None => {
                        ok = false;
                        call.push("#f", span, false);
                    }
                }
                continue;
            }
            let Some(aspec) = spec.attrs.iter().find(|a| a.name == *name) else {
                continue;
            };
            call.push(" ", span, false);
            match self.argument(el, aspec, scope) {
                Some(arg) => call.push_program(&arg),
                None => {
                    ok = false;
                    call.push("#f", span, false);
                }
            }
        }
        let draws = spec.attrs.iter().any(|a| a.name == "color");
        if draws {
            call.push(" (voml-style", span, false);
            for name in ["color", "thick", "adapt", "clip", "dash", "alpha", "cap"] {
                let aspec = spec
                    .attrs
                    .iter()
                    .find(|a| a.name == name)
                    .expect("drawing primitives have style attributes");
                call.push(" ", span, false);
                match self.argument(el, aspec, scope) {
                    Some(arg) => call.push_program(&arg),
                    None => {
                        ok = false;
                        call.push("#f", span, false);
                    }
                }
            }
            call.push(")", span, false);
        }
        call.push(")", span, false);
        if el.name == "figure" {
            self.embed_figure(el);
        }
        ok.then_some(call)
    }

    /// The pitch of a sound primitive in Hz: `freq` as it is, `note` (MIDI) converted.
    fn pitch(&mut self, el: &Element, scope: &Scope) -> Option<Frag> {
        match (el.attr("freq"), el.attr("note")) {
            (Some(f), Some(n)) => {
                self.err(
                    Diagnostic::new(
                        Code::BadValue,
                        n.name_span,
                        format!("`<{}>` has both `freq` and `note`", el.name),
                    )
                    .label("give one of them")
                    .secondary(f.name_span, "`freq` given here"),
                );
                None
            }
            (Some(f), None) => self.expressions(f, 1, scope).map(|mut v| v.remove(0)),
            (None, Some(n)) => self.expressions(n, 1, scope).map(|mut v| {
                let mut out = Frag::default();
                out.push("(midi->hz ", n.value_span, false);
                out.push_program(&v.remove(0));
                out.push(")", n.value_span, false);
                out
            }),
            (None, None) if schema::PITCHED.contains(&el.name.as_str()) => {
                self.err(
                    Diagnostic::new(
                        Code::MissingAttribute,
                        el.name_span,
                        format!("`<{}>` needs a pitch", el.name),
                    )
                    .label("no `freq` or `note`")
                    .hint("write freq=\"440\" (Hz) or note=\"69\" (MIDI note number)"),
                );
                None
            }
            (None, None) => {
                let mut out = Frag::default();
                out.push("#f", el.tag_span, false);
                Some(out)
            }
        }
    }

    /// One argument of a primitive call: the attribute's value in the form its kind asks
    /// for, or its default.
    fn argument(&mut self, el: &Element, aspec: &schema::AttrSpec, scope: &Scope) -> Option<Frag> {
        let span = el.tag_span;
        let Some(attr) = el.attr(aspec.name) else {
            let mut f = Frag::default();
            // An attribute without a default is passed as #f ("not given").
            let text = match (aspec.default, aspec.kind) {
                (None, _) => "#f".to_string(),
                (Some(d), Kind::Colour | Kind::Enum(_) | Kind::StrOrExpr) => scheme_string(d),
                (Some(d), Kind::Flag) => flag(d).unwrap_or("#f").to_string(),
                (Some(d), _) => d.to_string(),
            };
            f.push(&text, span, false);
            return Some(f);
        };
        let raw = attr.value.text.trim();
        let literal = |text: String| {
            let mut f = Frag::default();
            f.push(&text, attr.value_span, false);
            Some(f)
        };
        match aspec.kind {
            Kind::ViewRef => self.view_ref(attr, scope).map(|v| {
                let mut f = Frag::default();
                f.push(&v.to_string(), attr.value_span, false);
                f
            }),
            Kind::Exprs(n) => {
                let parts = self.expressions(attr, n, scope)?;
                let mut f = Frag::default();
                for (i, p) in parts.iter().enumerate() {
                    if i > 0 {
                        f.push(" ", attr.value_span, false);
                    }
                    f.push_program(p);
                }
                Some(f)
            }
            Kind::Enum(_) => literal(scheme_string(raw)),
            Kind::Flag => match flag(raw) {
                Some(v) => literal(v.to_string()),
                None => self.expressions(attr, 1, scope).map(|mut v| v.remove(0)),
            },
            Kind::Colour => {
                if colours::is_literal(raw) {
                    return literal(scheme_string(&raw.to_ascii_lowercase()));
                }
                if is_bare_word(raw) {
                    if let Some(best) = crate::diag::closest(
                        &raw.to_ascii_lowercase(),
                        colours::NAMES.iter().copied(),
                    ) {
                        self.err(
                            Diagnostic::new(Code::SuspiciousColour, attr.value_span, format!("`{raw}` is not a colour name; it is read as a Scheme variable"))
                                .label(format!("did you mean `{best}`?"))
                                .hint("write a colour name or #rrggbb for a fixed colour, or an expression in parentheses"),
                        );
                    }
                }
                self.expressions(attr, 1, scope).map(|mut v| v.remove(0))
            }
            Kind::StrOrExpr => {
                if raw.starts_with('(')
                    || scheme::parse_param(raw.split_whitespace().next().unwrap_or("")).is_some()
                    || raw.starts_with('"')
                {
                    self.expressions(attr, 1, scope).map(|mut v| v.remove(0))
                } else {
                    literal(scheme_string(&attr.value.text))
                }
            }
            _ => literal(scheme_string(raw)),
        }
    }

    fn view_ref(&mut self, attr: &Attr, scope: &Scope) -> Option<usize> {
        let text = attr.value.text.trim();
        if let Some(param) = scheme::parse_param(text) {
            return match param {
                Param::Caret(n) if matches!(scope.kind, ScopeKind::Ir | ScopeKind::ViewInit) => {
                    match scope.views.get(n) {
                        Some(&v) if v != usize::MAX => Some(v),
                        Some(_) => None,
                        None => {
                            self.err(self.out_of_range(&param, attr.value_span, scope));
                            None
                        }
                    }
                }
                _ => {
                    self.err(
                        Diagnostic::new(
                            Code::ParameterNotAllowed,
                            attr.value_span,
                            format!("`{text}` does not name a view in {}", article(scope.what)),
                        )
                        .label("no views here")
                        .hint("name the view instead, e.g. view=\"BU-View\""),
                    );
                    None
                }
            };
        }
        match self.index.views.get(text).copied() {
            Some(i) => {
                self.uses.views[i] = true;
                Some(i)
            }
            None => {
                let d = Diagnostic::new(
                    Code::UnknownView,
                    attr.value_span,
                    format!("no view named `{text}`"),
                )
                .label("unknown view")
                .did_you_mean(text, self.views.iter().map(|v| v.name.as_str()));
                self.err(d);
                self.mark_meant_view(text);
                None
            }
        }
    }

    /// Embeds the image a literal `filename` names, so the compiled VO is self-contained.
    fn embed_figure(&mut self, el: &Element) {
        let Some(attr) = el.attr("filename") else {
            return;
        };
        let raw = attr.value.text.trim();
        if raw.starts_with('(') || raw.starts_with('"') || scheme::parse_param(raw).is_some() {
            return;
        }
        if self.assets.iter().any(|a| a.name == raw) {
            return;
        }
        let referrer = self.db.path(attr.value_span.file);
        let roots = crate::source::roots(self.opts.fs, self.db.path(0), self.opts.search_path);
        match crate::source::resolve_confined(
            self.opts.fs,
            referrer,
            raw,
            self.opts.search_path,
            &roots,
        ) {
            Ok(path) => match self.opts.fs.read(&path) {
                Ok(bytes) => self.assets.push(ir::Asset {
                    name: raw.to_string(),
                    base64: base64::engine::general_purpose::STANDARD.encode(bytes),
                }),
                Err(e) => self.err(
                    Diagnostic::new(
                        Code::FileNotFound,
                        attr.value_span,
                        format!("cannot read `{raw}`: {e}"),
                    )
                    .label("figure file"),
                ),
            },
            Err(not_taken) => self.err(not_taken.diagnostic(
                raw,
                attr.value_span,
                format!("figure file `{raw}` not found"),
            )),
        }
    }

    // ----- helpers ------------------------------------------------------------------------

    /// The `name` of an element, reporting duplicates within `seen`.
    fn name_of(
        &mut self,
        el: &Element,
        seen: &mut HashMap<String, Span>,
        what: &str,
    ) -> Option<String> {
        let attr = el.attr("name")?;
        let name = attr.value.text.trim().to_string();
        if name.is_empty()
            || name.contains(char::is_whitespace)
            || name.contains(['.', '(', ')', '"', ';'])
        {
            self.err(
                Diagnostic::new(
                    Code::BadValue,
                    attr.value_span,
                    format!("`{name}` is not a usable name"),
                )
                .label("names are single words without dots, parentheses, quotes or semicolons"),
            );
            return None;
        }
        if let Some(first) = seen.get(&name) {
            self.err(
                Diagnostic::new(
                    Code::DuplicateName,
                    attr.value_span,
                    format!("a second {what} named `{name}`"),
                )
                .label("duplicate name")
                .secondary(*first, "first declared here"),
            );
            return None;
        }
        seen.insert(name.clone(), attr.value_span);
        Some(name)
    }

    fn unused_warnings(&mut self, vo: &Element) {
        let _ = vo;
        let mut found = Vec::new();
        for (i, used) in self.uses.infos.iter().enumerate() {
            if !used {
                let v = &self.infos[i];
                found.push(
                    Diagnostic::new(
                        Code::UnusedInfo,
                        v.span,
                        format!("info structure `{}` is never used", v.name),
                    )
                    .label("no component lists it in `infos`"),
                );
            }
        }
        for (i, used) in self.uses.controls.iter().enumerate() {
            if !used {
                let v = &self.controls[i];
                found.push(
                    Diagnostic::new(
                        Code::UnusedControl,
                        v.span,
                        format!("control structure `{}` is never used", v.name),
                    )
                    .label("no component or view lists it in `controls`"),
                );
            }
        }
        for (i, used) in self.uses.events.iter().enumerate() {
            if !used {
                let e = &self.events[i];
                found.push(
                    Diagnostic::new(
                        Code::UnusedEvent,
                        e.span,
                        format!("event `{}` is never processed", e.name),
                    )
                    .label("no EP component lists it in `inputs`")
                    .hint("its records will be read and ignored"),
                );
            }
        }
        for (i, used) in self.uses.views.iter().enumerate() {
            if !used {
                let v = &self.views[i];
                found.push(
                    Diagnostic::new(
                        Code::UnusedView,
                        v.span,
                        format!("view `{}` is never drawn in", v.name),
                    )
                    .label("no IR component lists it in `views`"),
                );
            }
        }
        self.diags.extend(found);
    }
}

fn article(what: &str) -> String {
    let first = what.chars().next().unwrap_or('x').to_ascii_lowercase();
    let vowel_sound = matches!(first, 'a' | 'e' | 'i' | 'o' | 'u')
        || what.starts_with("EP")
        || what.starts_with("IR");
    if what.starts_with('`') || what.starts_with("utility") {
        what.to_string()
    } else if vowel_sound {
        format!("an {what}")
    } else {
        format!("a {what}")
    }
}

fn is_bare_word(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn flag(text: &str) -> Option<&'static str> {
    match text {
        "yes" | "true" | "#t" => Some("#t"),
        "no" | "false" | "#f" => Some("#f"),
        _ => None,
    }
}

fn description_text(el: &Element) -> String {
    let mut text = String::new();
    for node in &el.children {
        if let Node::Text(t) = node {
            text.push_str(&t.text);
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn default_init(ty: ir::VarType) -> &'static str {
    match ty {
        ir::VarType::Int => "0",
        ir::VarType::Real => "0.0",
        ir::VarType::Boolean | ir::VarType::Any => "#f",
        ir::VarType::String => "\"\"",
        ir::VarType::List => "(quote ())",
        ir::VarType::Vector => "(vector)",
    }
}

fn type_word(ty: ir::VarType) -> &'static str {
    match ty {
        ir::VarType::Int => "int",
        ir::VarType::Real => "real",
        ir::VarType::Boolean => "boolean",
        ir::VarType::String => "string",
        ir::VarType::List => "list",
        ir::VarType::Vector => "vector",
        ir::VarType::Any => "any",
    }
}

fn real_literal(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

/// A Scheme string literal with `"` and `\` escaped.
pub fn scheme_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// PICL record-type names (and the paper's aliases) with their codes.
pub const RECORD_TYPES: &[(&str, i64)] = &[
    ("mark", -2),
    ("entry", -3),
    ("exit", -4),
    ("label", -5),
    ("dd", -6),
    ("message", -7),
    ("timestat", -101),
    ("countstat", -102),
    ("sendvolstat", -103),
    ("recvvolstat", -104),
    ("sizevolstat", -105),
    ("machinesubset", -201),
    ("processsubset", -202),
    ("eventsubset", -203),
    ("pg-entry", -3),
    ("pg-exit", -4),
    ("callback", -1000),
];

pub fn record_type_code(name: &str) -> Option<i64> {
    let lower = name.to_ascii_lowercase();
    RECORD_TYPES
        .iter()
        .find(|(n, _)| *n == lower)
        .map(|(_, c)| *c)
}
