//! Warnings about what a spec declares and never uses, and about promises its code breaks.

use voml_ir::tokens::{Token, Tokens};

use super::*;

/// The procedures VO code may call that change their first argument in place.
const IN_PLACE: &[&str] = &["vector-set!", "vector-fill!", "vector-push!", "set-box!"];

impl<'a> Lowering<'a> {
    pub(super) fn unused_warnings(&mut self, vo: &Element) {
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

    /// Warns when an IR component says `changed` (given in `refresh` of `el`, or of the
    /// library component `body` it uses) but its phase 1 `code` reads the record being
    /// processed, makes sound, or assigns or changes in place one of its structures, which
    /// the promise excludes.
    pub(super) fn warn_changed_not_kept(&mut self, el: &Element, body: &Element, code: &str) {
        let (mut event, mut makes_sound, mut assigns, mut changes) = (false, false, false, false);
        // The procedure just called, while its first argument is awaited.
        let mut called: Option<&str> = None;
        for token in Tokens::new(code) {
            if let Token::Atom(r) = token {
                let atom = &code[r];
                event |= atom == "current-event";
                makes_sound |= schema::SOUND.iter().any(|p| p.name == atom);
                // `(set! $0 ...)`, `(vector-set! $0 ...)`: `$0` is the structure's global.
                let structure = atom.starts_with("info/") || atom.starts_with("control/");
                match called {
                    Some("set!") => assigns |= structure,
                    Some(name) if IN_PLACE.contains(&name) => changes |= structure,
                    _ => {}
                }
                called = Some(atom);
            } else {
                called = None;
            }
        }
        let broken: Vec<&str> = [
            (event, "reads the record being processed (`current-event`)"),
            (makes_sound, "makes sound"),
            (assigns, "assigns one of its structures"),
            (changes, "changes one of its structures in place"),
        ]
        .into_iter()
        .filter_map(|(found, what)| found.then_some(what))
        .collect();
        let what = match broken.as_slice() {
            [] => return,
            [one] => one.to_string(),
            [first @ .., last] => format!("{} and {last}", first.join(", ")),
        };
        let name = el.attr_text("name").unwrap_or("?").trim().to_string();
        let span = el
            .attr("refresh")
            .or_else(|| body.attr("refresh"))
            .map_or(el.tag_span, |a| a.value_span);
        self.diags.push(
            Diagnostic::new(
                Code::ChangedNotKept,
                span,
                format!("IR component `{name}` says `changed`, but its phase 1 {what}"),
            )
            .label("`changed` lets rounds skip it, or draw it only when a picture is needed")
            .hint("compute what it needs in an EP component and read it from an info structure, or leave `changed` out"),
        );
    }
}
