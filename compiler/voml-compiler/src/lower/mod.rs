//! From the checked tree to the IR: resolves every name (events, fields, variables, views,
//! library components), checks what only the whole spec can tell (duplicates, ranges of
//! formal parameters, initial values), and tangles the Scheme program: globals, utility code
//! and one procedure per component part, with markup primitives turned into calls of the
//! runtime's primitive API.

use std::collections::{BTreeSet, HashMap};

use base64::Engine as _;
use voml_ir::{self as ir, Program as Frag, Span};

use crate::diag::{Code, Diagnostic};
use crate::schema::{self, Kind};
use crate::scheme::{self, Param};
use crate::source::SourceDb;
use crate::structure::{parse_numbers, words_in};
use crate::xml::{Attr, Element, Node};
use crate::{colours, LoadOptions};

mod bodies;
mod code;
mod components;
mod conditions;
mod declarations;
mod marks;
mod pure;
mod renders;
mod shared;
pub use marks::mark_bodies;
mod names;
mod warnings;

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
    /// The global names each native condition or native input part rests on, by its (body)
    /// procedure: a program that binds one of them keeps that part in Scheme.
    condition_names: HashMap<String, BTreeSet<String>>,
    /// The utility procedures native forms inlined, by the part's procedure: the program
    /// must define each once ([`conditions::defined_once`]).
    inlined: HashMap<String, BTreeSet<String>>,
    /// The utility code's procedures, for native forms to inline.
    procedures: renders::Procedures,
    /// The names each pure condition or `enable` rests on, by its procedure.
    pure_names: HashMap<String, BTreeSet<String>>,
    /// Styles of literals only, by their text: each is made once (`voml/style/K`).
    styles: HashMap<String, usize>,
    /// Input parts of library components compiled once for their instances.
    sharing: shared::Sharing,
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
    /// `$n` and `%n`: variable indices; `None` for a name that did not resolve (reported
    /// already), so that the positions of the others stay right.
    infos: Vec<Option<usize>>,
    controls: Vec<Option<usize>>,
    /// `^n` in EP code: inputs with the parameter names of their fields.
    inputs: Vec<Vec<String>>,
    /// The input whose fields `^n/m` may name here, if any.
    current_input: Option<usize>,
    /// `^n` in IR code and view initialisation: view indices.
    views: Vec<Option<usize>>,
    /// Where the component's lists are, for "declared here" labels.
    decl_span: Span,
    /// The `infos`, `controls`, `inputs` and `views` attribute values, where present.
    list_spans: HashMap<&'static str, Span>,
}

/// An `inputs` entry: the event, the fields it takes (`None` where a name did not resolve),
/// and where the entry is.
type ResolvedInput = (Option<usize>, Vec<Option<usize>>, Span);

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
            condition_names: HashMap::new(),
            inlined: HashMap::new(),
            procedures: renders::Procedures::new(),
            pure_names: HashMap::new(),
            styles: HashMap::new(),
            sharing: shared::Sharing::default(),
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
                    .unwrap_or_else(|| table_default_numbers("visual-object", "tick"))[0],
            },
            _ => ir::RenderMode::Asynchronous,
        };
        let mut timer = None;
        if let Some(attr) = vo.attr("timer") {
            if let Ok(v) = parse_numbers(&attr.value.text, 1, false) {
                // The validator refuses a timer below MIN_TIMER: so must the compiler.
                if v[0] < ir::MIN_TIMER {
                    self.err(
                        Diagnostic::new(
                            Code::BadNumber,
                            attr.value_span,
                            format!("`timer` must be at least {} seconds", ir::MIN_TIMER),
                        )
                        .label("wall-clock seconds between timer callbacks"),
                    );
                } else {
                    timer = Some(v[0]);
                }
            }
        }
        if let Some(tick) = vo.attr("tick") {
            if let Ok(v) = parse_numbers(&tick.value.text, 1, false) {
                // The validator refuses a tick below MIN_TICK: so must the compiler.
                if v[0] < ir::MIN_TICK {
                    self.err(
                        Diagnostic::new(
                            Code::BadNumber,
                            tick.value_span,
                            if v[0] <= 0.0 {
                                "`tick` must be positive".to_string()
                            } else {
                                format!("`tick` must be at least {:e} seconds", ir::MIN_TICK)
                            },
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

        let mut ep_components = match child("event-processing") {
            Some(ep) => self.ep_components(ep),
            None => Vec::new(),
        };
        let mut ir_components = match child("info-rendition") {
            Some(ir) => self.ir_components(ir),
            None => Vec::new(),
        };
        let bound = conditions::bound_names(&self.program.text);
        self.keep_sound_native_conditions(&bound, &mut ep_components);
        self.keep_sound_native_bodies(&bound, &mut ep_components);
        self.keep_sound_native_renders(&bound, &mut ir_components);
        self.keep_sound_pure(&bound, &mut ep_components, &mut ir_components);
        self.define_styles();
        self.unused_warnings(vo);
        let description = child("description").map(description_text);
        ir::CompiledVo {
            format: ir::FORMAT_VERSION,
            name,
            description,
            mode,
            timer,
            events: self.events,
            infos: self.infos,
            controls: self.controls,
            views: self.views,
            ep_components,
            ir_components,
            // Marked by `mark_bodies` once the document is dropped.
            program: self.program,
            assets: self.assets,
            sources: self.db.to_ir(),
            span: vo.tag_span,
        }
    }

    /// Drops the native tests whose names the program binds: `(define (gt a b) ...)` in
    /// utility code, or `(set! car cdr)` anywhere, would give the Scheme condition another
    /// meaning than the test's.
    /// What `expr`, the code of the part or `enable` defined as `symbol`, reads when it is
    /// pure (see [`pure`]); the names it rests on are noted for [`Self::keep_sound_pure`].
    fn note_pure(&mut self, symbol: &str, expr: &str, scope: &Scope) -> Option<ir::Reads> {
        self.note_reads(symbol, expr, scope, pure::rests_on)
    }

    /// Notes a phase 1 that only draws, from the structures it reads ([`pure::draws_only`]).
    fn note_drawing(&mut self, symbol: &str, body: &str, scope: &Scope) -> Option<ir::Reads> {
        self.note_reads(symbol, body, scope, pure::draws_only)
    }

    /// What `expr` reads of its component's structures when `analyse` finds it pure, noting
    /// the names it rests on for [`Self::keep_sound_pure`].
    fn note_reads(
        &mut self,
        symbol: &str,
        expr: &str,
        scope: &Scope,
        analyse: pure::Analysis,
    ) -> Option<ir::Reads> {
        // (index, global) of each of the component's infos, then controls.
        let globals =
            |listed: &[Option<usize>], vars: &'_ [ir::Variable]| -> Vec<(usize, String)> {
                listed
                    .iter()
                    .flatten()
                    .filter_map(|&i| Some((i, vars.get(i)?.global.clone())))
                    .collect()
            };
        let infos = globals(&scope.infos, &self.infos);
        let controls = globals(&scope.controls, &self.controls);
        let own = |name: &str| infos.iter().chain(&controls).any(|(_, g)| *g == name);
        let purity = analyse(expr, &own)?;
        let read = |list: &[(usize, String)]| -> Vec<usize> {
            list.iter()
                .filter(|(_, g)| purity.reads.contains(g))
                .map(|(i, _)| *i)
                .collect()
        };
        let reads = ir::Reads {
            infos: read(&infos),
            controls: read(&controls),
        };
        self.pure_names.insert(symbol.to_string(), purity.names);
        Some(reads)
    }

    /// Pure conditions and `enable`s stay pure only in a program that binds none of the
    /// names they rest on, and whose code names structures through components' lists only.
    fn keep_sound_pure(
        &self,
        bound: &Option<conditions::Bindings>,
        eps: &mut [ir::EpComponent],
        irs: &mut [ir::IrComponent],
    ) {
        if self.pure_names.is_empty() {
            return;
        }
        let direct = pure::names_structures_directly(&self.program);
        let sound = |symbol: &str| match (bound, self.pure_names.get(symbol)) {
            (Some(bound), Some(names)) => !direct && conditions::sound(names, bound),
            _ => false,
        };
        for part in eps
            .iter_mut()
            .flat_map(|c| c.before.iter_mut().chain(c.after.iter_mut()))
        {
            if !sound(&part.entry.symbol) {
                part.pure = None;
            }
        }
        for c in irs {
            if !c.enable.as_ref().is_some_and(|e| sound(&e.symbol)) {
                c.enable_pure = None;
            }
            if !c.phase1.as_ref().is_some_and(|e| sound(&e.symbol)) {
                c.phase1_pure = None;
            }
        }
    }

    fn keep_sound_native_conditions(
        &self,
        bound: &Option<conditions::Bindings>,
        components: &mut [ir::EpComponent],
    ) {
        for part in components
            .iter_mut()
            .flat_map(|c| c.before.iter_mut().chain(c.after.iter_mut()))
        {
            let Some(native) = &mut part.native else {
                continue;
            };
            let sound = |key: &str| self.recognised_sound(bound, key);
            if !sound(&format!("{} statements", native.body.symbol)) {
                native.statements = None;
            }
            if !sound(&native.body.symbol) {
                part.native = None;
            }
        }
    }

    /// Native input parts whose procedures the program gives another meaning stay in Scheme.
    fn keep_sound_native_bodies(
        &self,
        bound: &Option<conditions::Bindings>,
        components: &mut [ir::EpComponent],
    ) {
        for input in components.iter_mut().flat_map(|c| c.inputs.iter_mut()) {
            if !input
                .handler
                .as_ref()
                .is_some_and(|h| self.recognised_sound(bound, &h.symbol))
            {
                input.native = None;
                input.forms = None;
            }
        }
    }

    /// Native drawing parts whose primitives the program gives another meaning stay in
    /// Scheme.
    fn keep_sound_native_renders(
        &self,
        bound: &Option<conditions::Bindings>,
        components: &mut [ir::IrComponent],
    ) {
        for c in components {
            if !c
                .phase1
                .as_ref()
                .is_some_and(|p| self.recognised_sound(bound, &p.symbol))
            {
                c.phase1_native = None;
            }
        }
    }

    /// Whether what the compiler recognised in the code noted under `key` keeps its meaning
    /// in a program that binds `bound` (not known: it does not).
    fn recognised_sound(&self, bound: &Option<conditions::Bindings>, key: &str) -> bool {
        match (bound, self.condition_names.get(key)) {
            (Some(bound), Some(names)) => {
                conditions::sound(names, bound)
                    && self
                        .inlined
                        .get(key)
                        .is_none_or(|inlined| conditions::defined_once(inlined, bound))
            }
            _ => false,
        }
    }

    fn header(&mut self, name: &str) {
        let text = format!(
            ";;; Scheme program generated by the VOML compiler for visual object `{name}`.\n\
             ;;; Info and control structures are the globals info/NAME and control/NAME;\n\
             ;;; each component part is a procedure voml/KIND/COMPONENT/PART;\n\
             ;;; every loop and procedure body of the spec sets {here} to where it starts.\n\
             (define {here} #f)\n",
            here = ir::HERE_GLOBAL
        );
        self.program.push(&text, Span::default(), false);
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

/// The language table's default of `attr` of `<element>`: the compiler fills in exactly the
/// defaults the reference and the XML Schema show (checked against the table by tests).
fn table_default(element: &str, attr: &str) -> &'static str {
    schema::element(element)
        .and_then(|e| e.attr(attr))
        .and_then(|a| a.default)
        .unwrap_or_else(|| unreachable!("<{element}> `{attr}` has a default in the table"))
}

/// [`table_default`] of an attribute that holds numbers, read.
fn table_default_numbers(element: &str, attr: &str) -> Vec<f64> {
    let text = table_default(element, attr);
    let integer = matches!(
        schema::element(element)
            .and_then(|e| e.attr(attr))
            .map(|a| a.kind),
        Some(Kind::Numbers { integer: true, .. })
    );
    let count = text.split_whitespace().count();
    parse_numbers(text, count, integer)
        .unwrap_or_else(|e| unreachable!("the table's default `{text}` reads: {e}"))
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

/// A `<description>`'s text, whitespace folded.
pub(crate) fn description_text(el: &Element) -> String {
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
