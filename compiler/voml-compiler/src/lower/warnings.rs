//! Warnings about what a spec declares and never uses.

use super::*;

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
}
