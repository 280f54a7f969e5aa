//! The checks a runtime makes before it trusts a [`CompiledVo`]: every index, reference, span
//! and range the compiler guarantees. A `.vo` file may have been edited, truncated or forged;
//! whatever it holds, loading it either passes these checks or fails with a located error,
//! never a panic further on.

use crate::{
    CompiledVo, EntryPoint, EpComponent, Input, NativeBody, NativeCondition, NativeRender, Operand,
    Span, Test, Variable, FORMAT_VERSION, MAX_NESTING,
};

// The ranges the compiler allows, from the vocabulary's limits: what the compiler writes the
// validator accepts.
pub use voml_vocab::limits::{
    MAX_FIELD_POSITION, MAX_QUALITY, MAX_WINDOW, MIN_QUALITY, MIN_TICK, MIN_TIMER,
};

/// Something a compiled visual object holds that the compiler would never have written.
#[derive(Clone, Debug, PartialEq)]
pub struct IrError {
    /// What is wrong, naming the part of the IR (`views[2].window`).
    pub message: String,
    /// Where in the sources the offending part came from, when its span is sound.
    pub span: Option<Span>,
}

struct Checker<'a> {
    vo: &'a CompiledVo,
    errors: Vec<IrError>,
}

impl Checker<'_> {
    fn span_ok(&self, span: Span) -> bool {
        let Some(file) = self.vo.sources.get(span.file as usize) else {
            return false;
        };
        span.start <= span.end && (span.end as usize) <= file.text.len()
    }

    fn fail(&mut self, at: String, what: String, span: Span) {
        let span = self.span_ok(span).then_some(span);
        self.errors.push(IrError {
            message: format!("{at}: {what}"),
            span,
        });
    }

    fn span(&mut self, at: String, span: Span) {
        if !self.span_ok(span) {
            self.fail(
                at,
                format!(
                    "span {}:{}..{} lies outside the sources",
                    span.file, span.start, span.end
                ),
                span,
            );
        }
    }

    fn index(&mut self, at: String, index: usize, len: usize, what: &str, span: Span) {
        if index >= len {
            self.fail(
                at,
                format!("refers to {what} {index}, but there are {len}"),
                span,
            );
        }
    }

    /// Checks a part's `infos` and `controls` indices.
    fn variables(&mut self, at: &str, infos: &[usize], controls: &[usize], span: Span) {
        let (ninfos, ncontrols) = (self.vo.infos.len(), self.vo.controls.len());
        for &k in infos {
            self.index(format!("{at}.infos"), k, ninfos, "info structure", span);
        }
        for &k in controls {
            self.index(
                format!("{at}.controls"),
                k,
                ncontrols,
                "control structure",
                span,
            );
        }
    }

    fn entry(&mut self, at: String, entry: &Option<EntryPoint>) {
        if let Some(e) = entry {
            self.entry_point(at, e);
        }
    }

    fn entry_point(&mut self, at: String, e: &EntryPoint) {
        self.span(format!("{at}.span"), e.span);
        if e.symbol.is_empty()
            || e.symbol
                .chars()
                .any(|c| c.is_whitespace() || "()[]\"';`,".contains(c))
        {
            self.fail(
                at,
                format!("`{}` is not a procedure name", e.symbol),
                e.span,
            );
        }
    }

    /// A condition's native test: what a runtime evaluates without Scheme must be as
    /// bounded as what the compiler writes.
    /// A native input part changes and reads only its component's structures and its input's
    /// fields, and comes with the procedure it stands for.
    fn native_body(&mut self, at: &str, native: &NativeBody, c: &EpComponent, input: &Input) {
        if input.handler.is_none() {
            self.fail(
                format!("{at}.native"),
                "a native part without its procedure".into(),
                input.span,
            );
        }
        self.statements(
            &format!("{at}.native"),
            native,
            c,
            input.fields.len(),
            input.span,
        );
    }

    /// Statements change and read only the component's structures, the part's `arguments`
    /// and the event's elements up to the largest field position.
    fn statements(
        &mut self,
        at: &str,
        native: &NativeBody,
        c: &EpComponent,
        arguments: usize,
        span: Span,
    ) {
        let reads = native.reads();
        self.own_structures(at, &c.infos, &c.controls, &reads.globals, span);
        for a in reads.arguments {
            self.index(at.to_string(), a as usize, arguments, "argument", span);
        }
        for p in reads.elements {
            if p > MAX_FIELD_POSITION {
                self.fail(
                    at.to_string(),
                    format!("reads element {p} of the event (at most {MAX_FIELD_POSITION})"),
                    span,
                );
            }
        }
    }

    /// Every global in `read` is one of the structures of a component with these `infos` and
    /// `controls`.
    fn own_structures(
        &mut self,
        at: &str,
        infos: &[usize],
        controls: &[usize],
        read: &[&str],
        span: Span,
    ) {
        fn own<'v>(k: &usize, list: &'v [Variable]) -> Option<&'v str> {
            list.get(*k).map(|v| v.global.as_str())
        }
        let globals: Vec<&str> = infos
            .iter()
            .filter_map(|k| own(k, &self.vo.infos))
            .chain(controls.iter().filter_map(|k| own(k, &self.vo.controls)))
            .collect();
        for g in read {
            if !globals.contains(g) {
                self.fail(
                    at.to_string(),
                    format!("`{g}` is not one of the component's structures"),
                    span,
                );
            }
        }
    }

    /// Native forms (a drawing part, or an input part with `params` fields in its first
    /// slots, which may not draw) read and assign only their component's structures, use the
    /// slots they declare, call their primitives with the arguments they take, nest no deeper
    /// than code may, and come with the procedure they stand for.
    fn native_forms(&mut self, at: &str, native: &NativeRender, owner: Owner<'_>) {
        let Owner {
            infos,
            controls,
            procedure,
            params,
            span,
        } = owner;
        if !procedure {
            self.fail(
                at.to_string(),
                "a native part without its procedure".into(),
                span,
            );
        }
        let fields = params.unwrap_or(0);
        if (native.locals as usize) < fields {
            self.fail(
                at.to_string(),
                format!("{} slots for {fields} fields", native.locals),
                span,
            );
        }
        let reads = native.reads();
        if params.is_some() && reads.draws {
            self.fail(at.to_string(), "an input part's forms draw".into(), span);
        }
        self.own_structures(at, infos, controls, &reads.globals, span);
        for s in reads.styles {
            if !crate::is_style_global(s) {
                self.fail(at.to_string(), format!("`{s}` is not a style global"), span);
            }
        }
        for s in reads.slots {
            self.index(
                at.to_string(),
                s as usize,
                native.locals as usize,
                "slot",
                span,
            );
        }
        for op in reads.bad_arity {
            self.fail(
                at.to_string(),
                format!("calls {op:?} with a count of arguments it does not take"),
                span,
            );
        }
        if reads.depth > crate::MAX_RENDER_DEPTH {
            self.fail(
                at.to_string(),
                format!("nests forms more than {} deep", crate::MAX_RENDER_DEPTH),
                span,
            );
        }
    }

    fn native(&mut self, at: &str, native: &NativeCondition, c: &EpComponent, span: Span) {
        self.entry_point(format!("{at}.native.body"), &native.body);
        if let Some(statements) = &native.statements {
            // A condition part takes no arguments.
            self.statements(&format!("{at}.native.statements"), statements, c, 0, span);
        }
        let test = &native.test;
        if test.depth() > MAX_NESTING {
            self.fail(
                format!("{at}.native.test"),
                format!("nests tests more than {MAX_NESTING} deep"),
                span,
            );
            return;
        }
        for p in test.fields() {
            if p > MAX_FIELD_POSITION {
                self.fail(
                    format!("{at}.native.test"),
                    format!("reads position {p}, beyond {MAX_FIELD_POSITION}"),
                    span,
                );
            }
        }
        let mut reals = Vec::new();
        test.visit(&mut |t| {
            if let Test::Compare { left, right, .. } = t {
                for o in [left, right] {
                    if let Operand::Real(r) = o {
                        reals.push(*r);
                    }
                }
            }
        });
        for r in reals.into_iter().filter(|r| !r.is_finite()) {
            self.fail(
                format!("{at}.native.test"),
                format!("compares with {r}, which is not a finite real"),
                span,
            );
        }
    }

    fn run(&mut self) {
        let vo = self.vo;
        if vo.format != FORMAT_VERSION {
            self.fail(
                "format".into(),
                format!("is {}, not {FORMAT_VERSION}", vo.format),
                vo.span,
            );
        }
        self.span("span".into(), vo.span);
        if let crate::RenderMode::Synchronous { tick } = vo.mode {
            if !(tick.is_finite() && tick >= MIN_TICK) {
                self.fail(
                    "mode.tick".into(),
                    format!("{tick} is not a positive number of seconds"),
                    vo.span,
                );
            }
        }
        if let Some(timer) = vo.timer {
            if !(timer.is_finite() && timer >= MIN_TIMER) {
                self.fail(
                    "timer".into(),
                    format!("{timer} is not at least {MIN_TIMER} seconds"),
                    vo.span,
                );
            }
        }
        for (i, e) in vo.events.iter().enumerate() {
            self.span(format!("events[{i}].span"), e.span);
            for (j, f) in e.fields.iter().enumerate() {
                self.span(format!("events[{i}].fields[{j}].span"), f.span);
                if f.position < 2 {
                    self.fail(
                        format!("events[{i}].fields[{j}].position"),
                        format!("{} is before the timestamp", f.position),
                        f.span,
                    );
                } else if f.position > MAX_FIELD_POSITION {
                    self.fail(
                        format!("events[{i}].fields[{j}].position"),
                        format!("{} is beyond {MAX_FIELD_POSITION}", f.position),
                        f.span,
                    );
                }
            }
        }
        for (list, vars) in [("infos", &vo.infos), ("controls", &vo.controls)] {
            for (i, v) in vars.iter().enumerate() {
                self.span(format!("{list}[{i}].span"), v.span);
                if v.global.is_empty()
                    || v.global
                        .chars()
                        .any(|c| c.is_whitespace() || "()[]\"';`,".contains(c))
                {
                    self.fail(
                        format!("{list}[{i}].global"),
                        format!("`{}` is not a global name", v.global),
                        v.span,
                    );
                }
            }
        }
        let (nviews, nevents) = (vo.views.len(), vo.events.len());
        for (i, v) in vo.views.iter().enumerate() {
            let at = format!("views[{i}]");
            self.span(format!("{at}.span"), v.span);
            if v.window.iter().any(|&w| !(1..=MAX_WINDOW).contains(&w)) {
                self.fail(
                    format!("{at}.window"),
                    format!("{:?} is outside 1..{MAX_WINDOW} pixels", v.window),
                    v.span,
                );
            }
            let [x0, x1, y0, y1] = v.world;
            if v.world.iter().any(|c| !c.is_finite()) || x0 == x1 || y0 == y1 {
                self.fail(
                    format!("{at}.world"),
                    format!("{:?} is not a rectangle", v.world),
                    v.span,
                );
            }
            let [l, r, t, b] = v.margins;
            if u64::from(l) + u64::from(r) >= u64::from(v.window[0])
                || u64::from(t) + u64::from(b) >= u64::from(v.window[1])
            {
                self.fail(
                    format!("{at}.margins"),
                    format!("{:?} leave no room in the window", v.margins),
                    v.span,
                );
            }
            if !(MIN_QUALITY..=MAX_QUALITY).contains(&v.quality) {
                self.fail(
                    format!("{at}.quality"),
                    format!("{} is outside {MIN_QUALITY}..{MAX_QUALITY}", v.quality),
                    v.span,
                );
            }
            self.variables(&at, &v.infos, &v.controls, v.span);
            self.entry(format!("{at}.init"), &v.init);
        }
        for (i, c) in vo.ep_components.iter().enumerate() {
            let at = format!("ep_components[{i}]");
            self.span(format!("{at}.span"), c.span);
            for (k, input) in c.inputs.iter().enumerate() {
                let at = format!("{at}.inputs[{k}]");
                self.span(format!("{at}.span"), input.span);
                self.index(
                    format!("{at}.event"),
                    input.event,
                    nevents,
                    "event",
                    input.span,
                );
                if let Some(event) = vo.events.get(input.event) {
                    for &f in &input.fields {
                        self.index(
                            format!("{at}.fields"),
                            f,
                            event.fields.len(),
                            "field",
                            input.span,
                        );
                    }
                }
                self.entry(format!("{at}.handler"), &input.handler);
                if let Some(native) = &input.native {
                    self.native_body(&at, native, c, input);
                }
                if let Some(forms) = &input.forms {
                    let owner = Owner {
                        infos: &c.infos,
                        controls: &c.controls,
                        procedure: input.handler.is_some(),
                        params: Some(input.fields.len()),
                        span: input.span,
                    };
                    self.native_forms(&format!("{at}.forms"), forms, owner);
                }
            }
            self.variables(&at, &c.infos, &c.controls, c.span);
            let parts = c.before.iter().map(|p| ("before", p));
            let parts = parts.chain(c.after.iter().map(|p| ("after", p)));
            let mut counts = [0usize; 2];
            for (list, p) in parts {
                let k = &mut counts[usize::from(list == "after")];
                let at = format!("{at}.{list}[{k}]");
                *k += 1;
                self.entry_point(format!("{at}.entry"), &p.entry);
                if let Some(native) = &p.native {
                    self.native(&at, native, c, p.entry.span);
                }
                if let Some(reads) = &p.pure {
                    let at = format!("{at}.pure");
                    self.variables(&at, &reads.infos, &reads.controls, p.entry.span);
                }
            }
        }
        for (i, c) in vo.ir_components.iter().enumerate() {
            let at = format!("ir_components[{i}]");
            self.span(format!("{at}.span"), c.span);
            for &k in &c.views {
                self.index(format!("{at}.views"), k, nviews, "view", c.span);
            }
            self.variables(&at, &c.infos, &c.controls, c.span);
            self.entry(format!("{at}.enable"), &c.enable);
            if let Some(reads) = &c.enable_pure {
                let at = format!("{at}.enable_pure");
                self.variables(&at, &reads.infos, &reads.controls, c.span);
            }
            if let Some(reads) = &c.phase1_pure {
                let at = format!("{at}.phase1_pure");
                self.variables(&at, &reads.infos, &reads.controls, c.span);
            }
            self.entry(format!("{at}.phase1"), &c.phase1);
            if let Some(native) = &c.phase1_native {
                let owner = Owner {
                    infos: &c.infos,
                    controls: &c.controls,
                    procedure: c.phase1.is_some(),
                    params: None,
                    span: c.span,
                };
                self.native_forms(&format!("{at}.phase1_native"), native, owner);
            }
            self.entry(format!("{at}.phase2"), &c.phase2);
        }
        let text_len = vo.program.text.len() as u64;
        let mut next = 0u64;
        for (i, seg) in vo.program.map.iter().enumerate() {
            let start = u64::from(seg.generated_start);
            let end = start + u64::from(seg.len);
            if start < next || end > text_len {
                self.fail(
                    format!("program.map[{i}]"),
                    format!("{start}..{end} overlaps the previous segment or leaves the program ({text_len} bytes)"),
                    seg.source,
                );
            }
            next = next.max(end);
            self.span(format!("program.map[{i}].source"), seg.source);
        }
        if vo.program.nesting_depth() > MAX_NESTING {
            self.fail(
                "program".into(),
                format!("nests expressions more than {MAX_NESTING} deep"),
                vo.span,
            );
        }
    }
}

impl CompiledVo {
    /// Checks everything the runtime relies on; the errors found, located where possible.
    pub fn validate(&self) -> Result<(), Vec<IrError>> {
        let mut checker = Checker {
            vo: self,
            errors: Vec::new(),
        };
        checker.run();
        if checker.errors.is_empty() {
            Ok(())
        } else {
            Err(checker.errors)
        }
    }
}
/// What native forms belong to: their component's structures, whether the part has its
/// procedure, how many fields fill their first slots (`None` for a drawing part, which may
/// draw), and where the part is.
struct Owner<'c> {
    infos: &'c [usize],
    controls: &'c [usize],
    procedure: bool,
    params: Option<usize>,
    span: Span,
}
