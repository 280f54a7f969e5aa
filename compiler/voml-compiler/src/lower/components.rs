//! EP and IR components, with library components instantiated by `use`, and the procedures their parts become.

use super::*;

impl<'a> Lowering<'a> {
    pub(super) fn ep_components(&mut self, section: &Element) -> Vec<ir::EpComponent> {
        let mut seen: HashMap<String, Span> = HashMap::new();
        let mut out = Vec::new();
        self.sharing.start(
            section.elements().filter(|e| e.name == "ep-component"),
            &self.program.text,
        );
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
    pub(super) fn body_of<'e>(&mut self, el: &'e Element, kind: &str) -> Option<&'e Element>
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

    pub(super) fn ep_component(&mut self, el: &Element, name: String) -> Option<ir::EpComponent> {
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
                    .map(|(m, f)| {
                        match ev
                            .and_then(|ev| self.events.get(ev))
                            .zip(*f)
                            .and_then(|(e, f)| e.fields.get(f))
                        {
                            Some(field) => format!("input{k}/{}", field.name),
                            None => format!("input{k}/{m}"),
                        }
                    })
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
        let mut natives: Vec<Option<ir::NativeBody>> = vec![None; inputs.len()];
        let mut forms: Vec<Option<ir::NativeRender>> = vec![None; inputs.len()];
        // The component's structures as the program names them, by position in its lists
        // (infos, then controls; `None` where a name did not resolve), for shared parts ...
        let globals: Vec<Option<String>> = infos
            .iter()
            .map(|i| i.map(|i| self.infos[i].global.clone()))
            .chain(
                controls
                    .iter()
                    .map(|i| i.map(|i| self.controls[i].global.clone())),
            )
            .collect();
        // ... and those that resolved, for native input parts.
        let structures: Vec<String> = globals.iter().flatten().cloned().collect();
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
                    // An instance of a library component may call the code compiled once
                    // for all its instances.
                    let plan = match el.attr_text("use") {
                        Some(lib) if glue[k].is_empty() => {
                            self.sharing
                                .plan(lib.trim(), k, &code.text, &input_params[k], &globals)
                        }
                        _ => shared::Plan::Own,
                    };
                    let call = match plan {
                        shared::Plan::Own => None,
                        shared::Plan::First {
                            symbol: procedure,
                            params,
                            call,
                        } => self
                            .define(&procedure, &params, &code, part, "input part")
                            .then_some(call),
                        shared::Plan::Call { call } => Some(call),
                    };
                    if let Some(call) = call {
                        wrapped.push(&call, part.tag_span, false);
                    } else if glue[k].is_empty() {
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
                        // Plain updates of the structures from the fields: the runtime may
                        // carry them out itself (not when glue rebinds the fields first).
                        if glue[k].is_empty() {
                            if let Some(r) =
                                bodies::recognise(&code.text, &input_params[k], &structures)
                            {
                                natives[k] = Some(r.body);
                                self.condition_names.insert(symbol.clone(), r.names);
                            } else if let Some(r) = renders::recognise(
                                &code.text,
                                &input_params[k],
                                &structures,
                                &self.procedures,
                            )
                            // (What an input part draws is drawn by its procedure.)
                            .filter(|r| !r.render.reads().draws)
                            {
                                forms[k] = Some(r.render);
                                self.condition_names.insert(symbol.clone(), r.names);
                                self.inlined.insert(symbol.clone(), r.inlined);
                            }
                        }
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
                    let what = format!("`{}` part", part.name);
                    let wrap = |inner: &Frag| {
                        let mut wrapped = Frag::default();
                        wrapped.push("(if ", cond_attr.value_span, false);
                        wrapped.push_program(&cond[0]);
                        wrapped.push("\n(begin\n", part.tag_span, false);
                        wrapped.push_program(inner);
                        wrapped.push("\n#t) #f)", part.tag_span, false);
                        wrapped
                    };
                    let mut wrapped = wrap(&code);
                    // A condition the runtime can decide without Scheme: the part's code
                    // becomes a procedure of its own, which the runtime calls when the test
                    // holds (no second test in Scheme) and the part's procedure calls when it
                    // tests the condition itself. Code that does not read on its own, or
                    // only inside the condition's wrapper, keeps one procedure, so that it is
                    // reported exactly as before; so does code that defines a name the
                    // condition uses, whose definition would no longer share the
                    // condition's scope.
                    let recognised = conditions::recognise(&cond[0].text).filter(|r| {
                        scheme::read_problem(&code.text).is_none()
                            && scheme::read_problem(&wrapped.text).is_none()
                            && conditions::bound_names(&code.text)
                                .is_some_and(|bound| conditions::sound(&r.names, &bound))
                    });
                    let mut native = None;
                    if let Some(r) = recognised {
                        let body = format!("{symbol}/body");
                        if self.define(&body, "", &code, part, &what) {
                            let mut call = Frag::default();
                            call.push(&format!("({body})"), part.tag_span, false);
                            wrapped = wrap(&call);
                            self.condition_names.insert(body.clone(), r.names);
                            // The part's code itself, when it is plain updates.
                            let statements =
                                bodies::recognise_part(&code.text, &structures).map(|b| {
                                    self.condition_names
                                        .insert(format!("{body} statements"), b.names);
                                    b.body
                                });
                            native = Some(ir::NativeCondition {
                                test: r.test,
                                body: ir::EntryPoint {
                                    symbol: body,
                                    span: part.tag_span,
                                },
                                statements,
                            });
                        }
                    }
                    let entry = ir::EntryPoint {
                        symbol: symbol.clone(),
                        span: part.tag_span,
                    };
                    // A pure condition's procedure gives the condition's value when it is
                    // false (#f), which tells the runtime it may skip the part for a while.
                    let pure = self.note_pure(&symbol, &cond[0].text, &scope);
                    let defined = if pure.is_some() {
                        self.define_value(&symbol, &wrapped, part, &what)
                    } else {
                        self.define(&symbol, "", &wrapped, part, &what)
                    };
                    if defined {
                        let list = if part.name == "before" {
                            &mut before
                        } else {
                            &mut after
                        };
                        list.push(ir::ConditionPart {
                            entry,
                            native,
                            pure,
                        });
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
                .zip(handlers.into_iter().zip(natives.into_iter().zip(forms)))
                .filter_map(|((event, fields, span), (handler, (native, forms)))| {
                    // Fields that did not resolve (reported) would shift the arguments.
                    let whole = fields.iter().all(Option::is_some);
                    Some(ir::Input {
                        event: event?,
                        fields: fields.into_iter().flatten().collect(),
                        native: native.filter(|_| whole),
                        forms: forms.filter(|_| whole),
                        handler,
                        span,
                    })
                })
                .collect(),
            infos: infos.into_iter().flatten().collect(),
            controls: controls.into_iter().flatten().collect(),
            before,
            after,
            span: el.tag_span,
        })
    }

    /// Which input an `<input name="...">` part handles.
    pub(super) fn input_index(
        &mut self,
        part: &Element,
        inputs: &[ResolvedInput],
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
            _ => inputs.iter().position(|(ev, _, _)| {
                ev.and_then(|ev| self.events.get(ev))
                    .is_some_and(|e| e.name == text)
            }),
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
        // An input whose event did not resolve (reported already) has no part to check.
        inputs[k].0?;
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
    pub(super) fn field_ref(&mut self, attr: &Attr, scope: &Scope) -> Option<(usize, usize)> {
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

    pub(super) fn ir_components(&mut self, section: &Element) -> Vec<ir::IrComponent> {
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

    pub(super) fn ir_component(&mut self, el: &Element, name: String) -> Option<ir::IrComponent> {
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
            changed: refresh_words.iter().any(|w| w == "changed"),
        };
        let buffer = matches!(
            el.attr_text("buffer")
                .or_else(|| body.attr_text("buffer"))
                .map(str::trim),
            Some("yes" | "true")
        );
        let mut enable_pure = None;
        let enable = match el.attr("enable").or_else(|| body.attr("enable")) {
            Some(attr) => self.expressions(attr, 1, &scope).and_then(|e| {
                let symbol = format!("voml/ir/{name}/enable");
                let defined = self.define_value(&symbol, &e[0], el, "`enable` expression");
                if defined {
                    enable_pure = self.note_pure(&symbol, &e[0].text, &scope);
                }
                defined.then_some(ir::EntryPoint {
                    symbol,
                    span: attr.value_span,
                })
            }),
            None => None,
        };
        let mut phase2_code: Option<(Frag, &Element)> = None;
        let code = self.code(&body.children, &scope, Some(&mut phase2_code));
        let mut phase1_pure = None;
        let mut phase1_native = None;
        let phase1 = if code.text.trim().is_empty() {
            None
        } else {
            let symbol = format!("voml/ir/{name}/phase1");
            let defined = self.define(&symbol, "", &code, body, "IR component");
            if defined {
                phase1_pure = self.note_drawing(&symbol, &code.text, &scope);
                // Forms the runtime may evaluate itself, round after round.
                let structures: Vec<String> = infos
                    .iter()
                    .flatten()
                    .filter_map(|&i| Some(self.infos.get(i)?.global.clone()))
                    .chain(
                        controls
                            .iter()
                            .flatten()
                            .filter_map(|&i| Some(self.controls.get(i)?.global.clone())),
                    )
                    .collect();
                if let Some(r) = renders::recognise(&code.text, &[], &structures, &self.procedures)
                {
                    phase1_native = Some(r.render);
                    self.condition_names.insert(symbol.clone(), r.names);
                    self.inlined.insert(symbol.clone(), r.inlined);
                }
            }
            if refresh.changed {
                self.warn_changed_not_kept(el, body, &code.text);
            }
            defined.then_some(ir::EntryPoint {
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
            views: views.into_iter().flatten().collect(),
            infos: infos.into_iter().flatten().collect(),
            controls: controls.into_iter().flatten().collect(),
            refresh,
            buffer,
            enable,
            enable_pure,
            phase1,
            phase1_pure,
            phase1_native,
            phase2,
            span: el.tag_span,
        })
    }

    /// Adds `(define (symbol params) code #t)` to the program after checking the code reads.
    pub(super) fn define(
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
    pub(super) fn define_value(
        &mut self,
        symbol: &str,
        expr: &Frag,
        el: &Element,
        what: &str,
    ) -> bool {
        if !scheme::check_syntax(expr, what, el.tag_span, self.diags) {
            return false;
        }
        self.program
            .push(&format!("\n(define ({symbol})\n"), el.tag_span, false);
        self.program.push_program(expr);
        self.program.push(")\n", el.tag_span, false);
        true
    }
}
