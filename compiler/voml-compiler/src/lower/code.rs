//! Code: formal parameters substituted, attribute expressions split, markup primitives turned into calls of the primitive API, figures embedded.

use super::pure::STYLE_PREFIX;
use super::*;

impl<'a> Lowering<'a> {
    /// Lowers the mixed content of a code element: text with formal parameters substituted,
    /// markup primitives turned into calls. `end-with` goes to `phase2` when given.
    pub(super) fn code<'e>(
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
                    if let Some(spec) = schema::element(&el.name).filter(|s| s.primitive()) {
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

    pub(super) fn substitute(&mut self, text: &Frag, scope: &Scope) -> Frag {
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
    pub(super) fn resolve_param(
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
                Some(&Some(i)) => {
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
                Some(&Some(i)) => {
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
                        Some(&Some(v)) => Ok(v.to_string()),
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

    pub(super) fn out_of_range(&self, param: &Param, span: Span, scope: &Scope) -> Diagnostic {
        let views = matches!(scope.kind, ScopeKind::Ir | ScopeKind::ViewInit);
        let fields: Vec<usize> = scope.inputs.iter().map(Vec::len).collect();
        let lists = scheme::ParamLists {
            infos: scope.infos.len(),
            controls: scope.controls.len(),
            carets: if views {
                scope.views.len()
            } else {
                scope.inputs.len()
            },
            carets_are_views: views,
            fields: &fields,
        };
        // Called for a parameter found out of range; the shared check says how.
        let (text, list, len) = scheme::param_out_of_range(param, &lists).unwrap_or_else(|| {
            let text = match *param {
                Param::Info(n) => format!("${n}"),
                Param::Control(n) => format!("%{n}"),
                Param::Caret(n) => format!("^{n}"),
                Param::Field(n, m) => format!("^{n}/{m}"),
            };
            (text, "inputs", lists.carets)
        });
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
    pub(super) fn expressions(
        &mut self,
        attr: &Attr,
        count: usize,
        scope: &Scope,
    ) -> Option<Vec<Frag>> {
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
    pub(super) fn primitive(
        &mut self,
        el: &Element,
        spec: &schema::ElementSpec,
        scope: &Scope,
    ) -> Option<Frag> {
        let span = el.tag_span;
        let mut call = Frag::default();
        let mut ok = true;
        let table = spec.call?;
        call.push(&format!("({}", table.procedure.name), span, false);
        // Arguments in the order the vocabulary gives for the primitive's procedure.
        for arg in table.args {
            let lowered = match arg {
                schema::Arg::Style => {
                    ok &= self.style(el, spec, scope, &mut call);
                    continue;
                }
                schema::Arg::Pitch => self.pitch(el, scope),
                schema::Arg::Attr(name) => match spec.attr(name) {
                    Some(aspec) => self.argument(el, aspec, scope),
                    None => None,
                },
            };
            call.push(" ", span, false);
            match lowered {
                Some(arg) => call.push_program(&arg),
                None => {
                    ok = false;
                    call.push("#f", span, false);
                }
            }
        }
        call.push(")", span, false);
        if el.name == "figure" {
            self.embed_figure(el);
        }
        ok.then_some(call)
    }

    /// Appends the style of a drawing primitive to `call`: `(voml-style ...)` with the
    /// attributes the style procedure's parameters name. False when one of them is wrong
    /// (reported; every one is still checked).
    pub(super) fn style(
        &mut self,
        el: &Element,
        spec: &schema::ElementSpec,
        scope: &Scope,
        call: &mut Frag,
    ) -> bool {
        let span = el.tag_span;
        let mut ok = true;
        let mut style = Frag::default();
        let mut constant = true;
        style.push(&format!("({}", schema::STYLE.name), span, false);
        for name in schema::STYLE.params {
            style.push(" ", span, false);
            match spec
                .attr(name)
                .and_then(|aspec| self.argument(el, aspec, scope))
            {
                Some(arg) => {
                    constant &= is_literal(&arg.text);
                    style.push_program(&arg);
                }
                None => {
                    ok = false;
                    style.push("#f", span, false);
                }
            }
        }
        style.push(")", span, false);
        call.push(" ", span, false);
        // A style of literals only is made once, when the program loads, and shared by every
        // call (component code runs long after; view initialisation and utility code may
        // run while the program loads, so theirs stay where they are).
        if constant && matches!(scope.kind, ScopeKind::Ep | ScopeKind::Ir) {
            let next = self.styles.len();
            let k = *self.styles.entry(style.text.clone()).or_insert(next);
            call.push(&format!("{STYLE_PREFIX}{k}"), span, false);
        } else {
            call.push_program(&style);
        }
        ok
    }

    /// Defines the styles shared by drawing calls (see [`Lowering::style`]).
    pub(super) fn define_styles(&mut self) {
        let mut styles: Vec<(&String, &usize)> = self.styles.iter().collect();
        styles.sort_by_key(|(_, k)| **k);
        for (text, k) in styles {
            self.program.push(
                &format!("(define {STYLE_PREFIX}{k} {text})\n"),
                Span::default(),
                false,
            );
        }
    }

    /// The pitch of a sound primitive in Hz: `freq` as it is, `note` (MIDI) converted.
    pub(super) fn pitch(&mut self, el: &Element, scope: &Scope) -> Option<Frag> {
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
                out.push(
                    &format!("({} ", schema::MIDI_TO_HZ.name),
                    n.value_span,
                    false,
                );
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
    pub(super) fn argument(
        &mut self,
        el: &Element,
        aspec: &schema::AttrSpec,
        scope: &Scope,
    ) -> Option<Frag> {
        let span = el.tag_span;
        let Some(attr) = el.attr(aspec.name) else {
            let mut f = Frag::default();
            // An attribute without a default is passed as #f ("not given").
            let text = match (aspec.default, aspec.kind) {
                (None, _) => "#f".to_string(),
                (Some(d), Kind::Colour | Kind::Enum(_) | Kind::StrOrExpr | Kind::Voice) => {
                    scheme_string(d)
                }
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
                    if let Some(best) =
                        crate::diag::closest(&raw.to_ascii_lowercase(), colours::names())
                    {
                        self.err(
                            Diagnostic::new(Code::SuspiciousColour, attr.value_span, format!("`{raw}` is not a colour name; it is read as a Scheme variable"))
                                .label(format!("did you mean `{best}`?"))
                                .hint("write a colour name or #rrggbb for a fixed colour, or an expression in parentheses"),
                        );
                    }
                }
                self.expressions(attr, 1, scope).map(|mut v| v.remove(0))
            }
            Kind::StrOrExpr | Kind::Voice if is_expression(raw) => {
                self.expressions(attr, 1, scope).map(|mut v| v.remove(0))
            }
            Kind::StrOrExpr => literal(scheme_string(&attr.value.text)),
            Kind::Voice => {
                // A literal voice the synthesiser would refuse at run time is refused here,
                // at its place, with the same names.
                if ir::vocabulary::voice(raw).is_none() {
                    self.err(
                        Diagnostic::new(
                            Code::UnknownVoice,
                            attr.value_span,
                            format!("`{raw}` is not a voice"),
                        )
                        .label(format!(
                            "expected {}",
                            crate::structure::quote_list(ir::vocabulary::VOICES)
                        ))
                        .did_you_mean(&raw.to_ascii_lowercase(), ir::vocabulary::voice_names()),
                    );
                    return None;
                }
                literal(scheme_string(&attr.value.text))
            }
            _ => literal(scheme_string(raw)),
        }
    }

    pub(super) fn view_ref(&mut self, attr: &Attr, scope: &Scope) -> Option<usize> {
        let text = attr.value.text.trim();
        if let Some(param) = scheme::parse_param(text) {
            return match param {
                Param::Caret(n) if matches!(scope.kind, ScopeKind::Ir | ScopeKind::ViewInit) => {
                    match scope.views.get(n) {
                        Some(&Some(v)) => Some(v),
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
    pub(super) fn embed_figure(&mut self, el: &Element) {
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
}

/// Is a STR-OR-EXPR value (or a voice) an expression? It is when it starts with `(`, `"` or
/// a formal parameter; otherwise it is literal text.
fn is_expression(raw: &str) -> bool {
    raw.starts_with('(')
        || raw.starts_with('"')
        || scheme::parse_param(raw.split_whitespace().next().unwrap_or("")).is_some()
}

/// Whether lowered argument `text` is a literal: a number, `#t`/`#f`, or a string.
fn is_literal(text: &str) -> bool {
    let t = text.trim();
    t == "#t"
        || t == "#f"
        || t.parse::<f64>().is_ok_and(f64::is_finite)
        || (t.len() >= 2
            && t.starts_with('"')
            && t.ends_with('"')
            && !t[1..t.len() - 1].contains(['"', '\\']))
}
