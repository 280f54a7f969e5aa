//! Declarations: events and record types, info and control structures with their initial values, utility code, views.

use super::*;

impl<'a> Lowering<'a> {
    pub(super) fn events(&mut self, decls: &Element) {
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
                        Ok(v) if v[0] >= 2.0 && v[0] <= f64::from(ir::MAX_FIELD_POSITION) => {
                            v[0] as u32
                        }
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

    pub(super) fn record_type(&mut self, attr: &Attr) -> Option<i64> {
        let text = attr.value.text.trim();
        if let Ok(v) = text.parse::<i64>() {
            return Some(v);
        }
        if let Some(code) = ir::vocabulary::record_type_code(text) {
            return Some(code);
        }
        self.err(
            Diagnostic::new(
                Code::BadRecordType,
                attr.value_span,
                format!("unknown record type `{text}`"),
            )
            .label("not an integer or a record-type name")
            .did_you_mean(text, ir::vocabulary::record_type_names())
            .hint("names: entry (-3), exit (-4), mark (-2), label (-5), pg-entry, pg-exit, callback (-1000), ..."),
        );
        None
    }

    pub(super) fn variables(&mut self, list: &Element, info: bool) {
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
            let ty = var
                .attr_text("type")
                .and_then(|t| ir::VarType::from_word(t.trim()))
                .unwrap_or(ir::VarType::Any);
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
    pub(super) fn warn_init_code(&mut self, attr: &Attr, raw: &str, ty: ir::VarType) {
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
    pub(super) fn init_value(&mut self, attr: &Attr, ty: ir::VarType) -> Option<String> {
        let raw = attr.value.text.trim();
        let bad = |why: &str| {
            Diagnostic::new(
                Code::BadInit,
                attr.value_span,
                format!(
                    "`{raw}` is not a valid initial value for a {} variable",
                    ty.word()
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

    pub(super) fn emit_globals(&mut self) {
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

    pub(super) fn gen(&mut self, text: &str) {
        self.program.push(text, Span::default(), false);
    }

    pub(super) fn utility(&mut self, util: &Element) {
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
            renders::procedures(&code.text, &mut self.procedures);
            self.program.push_program(&code);
            self.gen("\n");
        }
    }

    pub(super) fn views(&mut self, list: &Element) {
        let mut seen: HashMap<String, Span> = HashMap::new();
        // View, element, and its `infos` and `controls` as resolved (for the init's scope).
        type Init<'e> = (usize, &'e Element, Vec<Option<usize>>, Vec<Option<usize>>);
        let mut inits: Vec<Init> = Vec::new();
        for el in list.elements().filter(|e| e.name == "view") {
            let Some(name) = self.name_of(el, &mut seen, "view") else {
                continue;
            };
            // The value written, else the language table's default.
            let nums = |attr: &str| -> Vec<f64> {
                let Some(Kind::Numbers { count, integer }) = schema::element("view")
                    .and_then(|v| v.attr(attr))
                    .map(|a| a.kind)
                else {
                    unreachable!("`{attr}` of <view> holds numbers");
                };
                el.attr_text(attr)
                    .and_then(|t| parse_numbers(t, count, integer).ok())
                    .unwrap_or_else(|| table_default_numbers("view", attr))
            };
            let window = nums("window");
            let world = nums("world");
            let margins = nums("margins");
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
            let quality = nums("quality")[0];
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
                .unwrap_or_else(|| table_default("view", "background"))
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
                        .did_you_mean(a.value.text.trim(), colours::names()),
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
                // A word outside the list is reported with the document's structure.
                undraw: el
                    .attr_text("undraw")
                    .and_then(|w| ir::Undraw::from_word(w.trim()))
                    .unwrap_or_default(),
                infos: infos.iter().flatten().copied().collect(),
                controls: controls.iter().flatten().copied().collect(),
                init: None,
                span: el.tag_span,
            });
            inits.push((self.views.len() - 1, el, infos, controls));
        }
        // Init code is lowered once all views exist, so it may name any of them.
        self.index.views = index_of(&self.views, |v| v.name.as_str());
        self.uses.views = vec![false; self.views.len()];
        for (index, el, infos, controls) in inits {
            let view = self.views[index].clone();
            let scope = Scope {
                kind: ScopeKind::ViewInit,
                what: "view initialisation",
                owner: format!("view `{}`", view.name),
                infos,
                controls,
                views: vec![Some(index)],
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

    pub(super) fn adapt(&mut self, attr: &Attr) -> [ir::Adapt; 4] {
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
}
