//! Name lists: the `infos`, `controls`, `views` and `inputs` attributes resolved to indices.

use super::*;

impl<'a> Lowering<'a> {
    /// Resolves an `infos` or `controls` attribute to variable indices.
    pub(super) fn var_list(
        &mut self,
        el: &Element,
        attr_name: &str,
        info: bool,
    ) -> Vec<Option<usize>> {
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
                out.push(Some(i));
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
            out.push(None);
        }
        for &i in out.iter().flatten() {
            let uses = if info {
                &mut self.uses.infos
            } else {
                &mut self.uses.controls
            };
            if let Some(u) = uses.get_mut(i) {
                *u = true;
            }
        }
        out
    }

    /// After an unknown view name: the view probably meant counts as used, so that no
    /// "never drawn in" warning comes on top of the error.
    pub(super) fn mark_meant_view(&mut self, wrong: &str) {
        if let Some(i) = crate::diag::closest(wrong, self.views.iter().map(|v| v.name.as_str()))
            .and_then(|best| self.views.iter().position(|v| v.name == best))
        {
            self.uses.views[i] = true;
        }
    }

    pub(super) fn view_list(&mut self, el: &Element) -> Vec<Option<usize>> {
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
                    out.push(Some(i));
                }
                None => {
                    let d =
                        Diagnostic::new(Code::UnknownView, span, format!("no view named `{word}`"))
                            .label("not declared in <view-initializations>")
                            .did_you_mean(word, self.views.iter().map(|v| v.name.as_str()));
                    self.err(d);
                    self.mark_meant_view(word);
                    out.push(None);
                }
            }
        }
        out
    }

    /// Resolves `inputs="event.field.field other"`: for each entry the event index, the
    /// field indices, and the parameter names for those fields.
    pub(super) fn inputs(&mut self, attr: &Attr) -> Vec<ResolvedInput> {
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
                out.push((None, Vec::new(), span));
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
                    Some(f) => fields.push(Some(f)),
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
                        fields.push(None);
                    }
                }
            }
            if !any {
                fields = (0..self.events[ev].fields.len()).map(Some).collect();
            }
            out.push((Some(ev), fields, span));
        }
        out
    }
}
