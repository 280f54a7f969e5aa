//! The engine visual-object code runs in, built up from an allowlist.
//!
//! A VO may come from someone else's component library, so its code must reach nothing but
//! numbers, strings, symbols, lists, vectors, hash tables, control flow and the VOML
//! primitives and prelude. steel's engines hold hundreds of other built-ins (files, ports,
//! processes, environment, network, threads, time, modules, evaluation, fresh engines), and
//! steel adds more from version to version, so nothing is removed by name: instead
//!
//! 1. every public global of the engine that [`allow`] does not list is rebound to a
//!    procedure that refuses (with its `#%prim.` alias);
//! 2. every built-in module is emptied, and `require` of a file is answered without reading
//!    anything, so no module path leads back to the originals;
//! 3. [`screen::Screen`] reads the program before the engine compiles it and refuses the
//!    forms steel resolves outside the global environment (modules, macros, syntax
//!    objects), the macros not listed, and steel's internal names;
//! 4. [`guards`] caps the built-ins that could allocate or compute without bound in one
//!    native call.
//!
//! `tests/sandbox.rs` enumerates every name visible to VO code and compares it with the
//! allowlist, and probes every other global, module and reserved form.

pub mod allow;
pub mod guards;
mod reach;
pub mod screen;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use steel::gc::Gc;
use steel::rerrs::ErrorKind;
use steel::rvals::SteelVal;
use steel::steel_vm::builtin::BuiltInModule;
use steel::steel_vm::engine::Engine;
use steel::SteelErr;

pub use screen::{Refusal, Screen};

/// Names the compiler itself emits as `#%prim.NAME` for allowed forms (keyword arguments,
/// boxes for captured variables, constant lists).
const COMPILER_PRIMS: &[&str] = &[
    "#%const-list",
    "plist-get-kwarg",
    "plist-get-positional-arg",
    "plist-get-positional-arg-list",
    "plist-try-get",
    "plist-try-get-positional-arg",
    "box",
    "unbox",
    "set-box!",
    "cons",
    "list",
    "list-ref",
    "vector-ref",
    "apply",
];

/// Answers every `require` of a file with an error, without reading anything.
struct DenyRequire;

impl steel::compiler::modules::SourceModuleResolver for DenyRequire {
    fn resolve(&self, _key: &str) -> Option<String> {
        Some("(error \"require is not available to visual objects\")".into())
    }

    fn exists(&self, _key: &str) -> bool {
        true
    }
}

/// A confined engine, and what its confinement refused.
pub struct Sandbox {
    pub engine: Engine,
    pub screen: Screen,
    /// Globals rebound to a refusing procedure, with that procedure.
    denied: HashMap<String, SteelVal>,
}

/// How much of steel's prelude an engine compiles.
#[derive(Clone, Copy)]
pub enum Prelude<'a> {
    /// All of it: for engines whose names are shown or compared (checks, the allowlist's
    /// tests).
    Whole,
    /// Its macros, and the definitions these texts (the code the engine will compile) reach,
    /// with what the sandbox's own Scheme reaches ([`reach`]): a run's engine.
    For(&'a [&'a str]),
}

impl Sandbox {
    /// A confined engine with the whole prelude; `voml` then registers the VOML primitives
    /// and prelude in it.
    pub fn new(
        voml: impl FnOnce(&mut Engine) -> Result<(), SteelErr>,
    ) -> Result<Sandbox, SteelErr> {
        Sandbox::with_prelude(Prelude::Whole, voml)
    }

    /// A confined engine with `prelude` of steel's prelude; `voml` then registers the VOML
    /// primitives and prelude in it.
    pub fn with_prelude(
        prelude: Prelude<'_>,
        voml: impl FnOnce(&mut Engine) -> Result<(), SteelErr>,
    ) -> Result<Sandbox, SteelErr> {
        let mut engine = base_engine(prelude)?;
        guards::install(&mut engine);
        engine.run(guards::ORIGINALS)?;
        engine.run(guards::SCHEME)?;
        let denied = confine(&mut engine);
        let allowed_macros: HashSet<&str> = allow::MACROS.iter().copied().collect();
        let macros = engine
            .in_scope_macros()
            .keys()
            .map(|k| k.resolve().to_string())
            .filter(|k| !allowed_macros.contains(k.as_str()))
            .collect();
        voml(&mut engine)?;
        Ok(Sandbox {
            engine,
            screen: Screen { macros },
            denied,
        })
    }

    /// Whether `name` is bound to the refusing procedure.
    pub fn is_denied(&self, name: &str) -> bool {
        let (Some(SteelVal::BoxedFunction(d)), Ok(SteelVal::BoxedFunction(now))) =
            (self.denied.get(name), self.engine.extract_value(name))
        else {
            return false;
        };
        Gc::ptr_eq(d, &now)
    }

    /// Every name VO code can use: globals that are neither refused by the screen nor
    /// bound to the refusing procedure, and macros the screen lets through.
    pub fn visible_names(&self) -> BTreeSet<String> {
        let globals: Vec<String> = self
            .engine
            .globals()
            .iter()
            .map(|g| g.resolve().to_string())
            .collect();
        let macros: Vec<String> = self
            .engine
            .in_scope_macros()
            .keys()
            .map(|k| k.resolve().to_string())
            .collect();
        globals
            .into_iter()
            .filter(|g| !self.is_denied(g))
            .chain(macros)
            .filter(|n| screen::nameable(n) && self.screen.check(n).is_ok())
            .collect()
    }

    /// The engine's globals, refusing procedures included: the names a program may use
    /// without defining them (steel compiles a use of any of them).
    pub fn global_names(&self) -> HashSet<String> {
        self.engine
            .globals()
            .iter()
            .map(|g| g.resolve().to_string())
            .collect()
    }

    /// Every name of the engine (globals and macros), visible or not.
    pub fn all_names(&self) -> BTreeSet<String> {
        let mut names: BTreeSet<String> = self
            .engine
            .globals()
            .iter()
            .map(|g| g.resolve().to_string())
            .collect();
        names.extend(
            self.engine
                .in_scope_macros()
                .keys()
                .map(|k| k.resolve().to_string()),
        );
        names
    }
}

/// The engine VO engines start from: steel's built-in modules and its standard library
/// (list procedures and the macros of the allowlist), without the rest of steel's prelude
/// (contracts, ports, printing, readers, pattern matching) and without the kernel that
/// expands `defmacro`-style macros, which VO code may not define or use. Building it takes
/// a fifth of what a sandboxed steel engine takes (compiling the prelude is most of
/// starting a run), and the modules are bound from Rust ([`require_builtins`]) rather than by
/// compiling steel's `require-builtin` forms, which took a third of the start. `sort` and
/// `dynamic-wind`, which steel keeps in modules of their own, are [`BASE`]'s.
fn base_engine(prelude: Prelude<'_>) -> Result<Engine, SteelErr> {
    let mut engine = Engine::new_raw_no_kernel();
    steel::steel_vm::primitives::register_builtin_modules(&mut engine, true);
    require_builtins(&mut engine, steel::steel_vm::primitives::ALL_MODULES);
    engine.alias_builtins(ALIASED.iter().copied());
    // Folding constants at compile time takes a third of compiling a program and bought
    // nothing measurable in the examples' runs (docs/performance.md).
    engine.without_constant_evaluation();
    guards::install_abs(&mut engine);
    let library = match prelude {
        Prelude::Whole => steel::stdlib::PRELUDE.to_owned(),
        Prelude::For(texts) => {
            let ours = [BASE, guards::ORIGINALS, guards::SCHEME];
            let texts: Vec<&str> = texts.iter().copied().chain(ours).collect();
            reach::prelude_for(&texts, allow::MACROS)
        }
    };
    engine.compile_and_run_raw_program(guards::mend_library(&library))?;
    engine.compile_and_run_raw_program(BASE)?;
    engine.disallow_dylib_loading();
    Ok(engine)
}

/// Built-ins that code calls through steel's own instructions for them (`CAR`, `ADD`,
/// `VECTORREF`…) rather than as procedures: what steel does for its `#%prim.` names, done
/// for the plain globals [`require_builtins`] binds (vendored steel, `Engine::alias_builtins`).
/// A unit of code that defines or assigns one of these names calls it as a procedure, and
/// so does every later unit. None of them is guarded or refused (`tests` below).
pub const ALIASED: &[&str] = &[
    "+",
    "-",
    "*",
    "/",
    "=",
    "<",
    "<=",
    ">",
    ">=",
    "car",
    "cdr",
    "cons",
    "vector-ref",
    "list-ref",
    "not",
    "null?",
    "equal?",
];

/// What `(require-builtin MODULE)` and `(require-builtin MODULE as PREFIX)` forms of `forms` do
/// (a global bound to each value of the module, its name prefixed), without compiling them.
fn require_builtins(engine: &mut Engine, forms: &str) {
    for form in forms.lines() {
        let words: Vec<&str> = form
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .split_whitespace()
            .collect();
        let (module, prefix) = match words.as_slice() {
            ["require-builtin", module] => (*module, ""),
            ["require-builtin", module, "as", prefix] => (*module, *prefix),
            _ => continue,
        };
        let Some(module) = engine.builtin_modules().get(module) else {
            continue;
        };
        for name in module.names() {
            let value = module.get(name.clone());
            engine.register_value(&format!("{prefix}{name}"), value);
        }
    }
}

/// What the base engine adds to steel's standard library, from steel modules it leaves out:
/// `sort`, a stable merge sort of a list by a `less?` procedure (`(sort list less?)`), and
/// `dynamic-wind`, which runs `before`, the thunk and `after` and gives the thunk's value
/// (a continuation that escapes the thunk does not run `after`; an error ends the part).
const BASE: &str = r#"
(define (dynamic-wind before thunk after)
  (before)
  (let ((result (thunk)))
    (after)
    result))
(define (sort items less?)
  (define (merge a b)
    (cond ((null? a) b)
          ((null? b) a)
          ((less? (car b) (car a)) (cons (car b) (merge a (cdr b))))
          (else (cons (car a) (merge (cdr a) b)))))
  (define (halve items left right)
    (if (null? items)
        (cons left right)
        (halve (cdr items) (cons (car items) right) left)))
  (define (go items)
    (if (or (null? items) (null? (cdr items)))
        items
        (let ((halves (halve items '() '())))
          (merge (go (car halves)) (go (cdr halves))))))
  (go items))
"#;

/// What VO engines are built from: every global and macro name of an unconfined steel
/// engine, and its built-in modules. The allowlist is chosen from these; everything else in
/// them is refused.
pub fn steel_names() -> (BTreeSet<String>, BTreeSet<String>) {
    let engine = Engine::new_sandboxed();
    let mut names: BTreeSet<String> = engine
        .globals()
        .iter()
        .map(|g| g.resolve().to_string())
        .collect();
    names.extend(
        engine
            .in_scope_macros()
            .keys()
            .map(|k| k.resolve().to_string()),
    );
    let modules = engine
        .builtin_modules()
        .inner()
        .keys()
        .map(|k| k.to_string())
        .collect();
    (names, modules)
}

fn denial(name: &str) -> SteelVal {
    let message = format!(
        "`{name}` is not available to visual objects (no files, ports, processes, network, environment, time or evaluation)"
    );
    SteelVal::anonymous_boxed_function(Arc::new(move |_args: &[SteelVal]| {
        Err(SteelErr::new(ErrorKind::Generic, message.clone()))
    }))
}

/// Rebinds every public global outside the allowlist, and `#%prim.` aliases alike; empties
/// the built-in modules; refuses `require`. Returns the rebound names.
fn confine(engine: &mut Engine) -> HashMap<String, SteelVal> {
    let allowed: HashSet<&str> = allow::procedures().collect();
    let names: BTreeSet<String> = engine
        .globals()
        .iter()
        .map(|g| g.resolve().to_string())
        .collect();
    let mut denied = HashMap::new();
    for name in &names {
        let deny = match name.strip_prefix("#%prim.") {
            Some(base) => {
                if allowed.contains(base) {
                    // The alias must not bypass a guard.
                    if let Ok(v) = engine.extract_value(base) {
                        engine.register_value(name, v);
                    }
                    false
                } else {
                    !COMPILER_PRIMS.contains(&base)
                }
            }
            None => !screen::is_internal(name) && !allowed.contains(name.as_str()),
        };
        if deny {
            let d = denial(name);
            engine.register_value(name, d.clone());
            denied.insert(name.clone(), d);
        }
    }
    let modules: Vec<String> = engine
        .builtin_modules()
        .inner()
        .keys()
        .map(|k| k.to_string())
        .collect();
    for module in modules {
        engine.register_module(BuiltInModule::new(module));
    }
    engine.register_source_module_resolver(DenyRequire);
    denied
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The base engine binds what compiling steel's `(require-builtin ...)` forms binds: every
    /// value of every module, under its name and under `#%prim.` and its name.
    #[test]
    fn builtin_modules_are_bound_as_their_requires_bind_them() {
        let engine = base_engine(Prelude::Whole).expect("the base engine starts");
        let mut bound = 0;
        for form in steel::steel_vm::primitives::ALL_MODULES.lines() {
            let Some(module) = form.trim().strip_prefix("(require-builtin ") else {
                continue;
            };
            let (module, prefix) = match module.trim_end_matches(')').split_once(" as ") {
                Some((module, prefix)) => (module, prefix),
                None => (module.trim_end_matches(')'), ""),
            };
            let module = engine.builtin_modules().get(module).expect("a module");
            for name in module.names() {
                assert!(
                    engine.extract_value(&format!("{prefix}{name}")).is_ok(),
                    "{prefix}{name} is not bound"
                );
                bound += 1;
            }
        }
        assert!(bound > 1000, "only {bound} names");
        for name in ["car", "#%prim.car", "hash-insert", "#%prim.string-append"] {
            assert!(engine.extract_value(name).is_ok(), "{name}");
        }
    }

    /// A name of the standard library the program uses is defined, and allowed or refused,
    /// as with the whole library; one it does not use is not compiled.
    #[test]
    fn an_engine_for_a_program_has_the_library_names_it_uses_as_the_whole_has_them() {
        let _reading = voml_ir::steel_parse_lock();
        let program = "(list map curry flatten)";
        let part = Sandbox::with_prelude(Prelude::For(&[program]), |_| Ok(())).expect("builds");
        let whole = Sandbox::new(|_| Ok(())).expect("builds");
        for name in ["map", "curry", "flatten"] {
            assert!(part.engine.extract_value(name).is_ok(), "{name} is defined");
            assert_eq!(part.is_denied(name), whole.is_denied(name), "{name}");
        }
        assert!(whole.is_denied("curry") && !whole.is_denied("map"));
        assert!(whole.engine.extract_value("foldr").is_ok());
        assert!(
            part.engine.extract_value("foldr").is_err(),
            "foldr is not compiled"
        );
    }

    /// The names code calls through steel's instructions are visible to VO code, neither
    /// guarded nor refused: bound, in a confined engine, to steel's own built-in of that name.
    #[test]
    fn aliased_builtins_are_steels_own_and_allowed() {
        let sandbox = Sandbox::new(|_| Ok(())).expect("builds");
        let visible = sandbox.visible_names();
        // A confined engine's modules are emptied: steel's values are the base engine's
        // `#%prim.` names (bound from the modules, as their test above shows).
        let base = base_engine(Prelude::Whole).expect("the base engine starts");
        let builtin = |name: &str| base.extract_value(&format!("#%prim.{name}")).ok();
        let own = |name: &str| sandbox.engine.extract_value(name).expect(name);
        assert!(own("car") != own("cdr"), "procedures compare by identity");
        for name in ALIASED {
            assert!(visible.contains(*name), "{name} is visible");
            assert!(!sandbox.is_denied(name), "{name} is not refused");
            assert!(
                builtin(name).is_some_and(|b| b == own(name)),
                "{name} is steel's built-in"
            );
        }
    }

    /// An aliased name a unit defines is the unit's own, there and in later units;
    /// units compiled before it keep calling steel's built-in (as code compiled against
    /// steel's modules does).
    #[test]
    fn a_unit_that_rebinds_an_aliased_name_calls_its_own() {
        let _reading = voml_ir::steel_parse_lock();
        let mut sandbox = Sandbox::new(|_| Ok(())).expect("builds");
        let engine = &mut sandbox.engine;
        let run = |engine: &mut Engine, code: &str| {
            let values = engine
                .compile_and_run_raw_program(code.to_owned())
                .unwrap_or_else(|e| panic!("{code}: {e}"));
            values.last().map(|v| v.to_string()).unwrap_or_default()
        };
        run(
            engine,
            "(define (first-of l) (car l)) (define (add a b) (+ a b))",
        );
        assert_eq!(run(engine, "(list (first-of '(1 2)) (add 5 3))"), "(1 8)");
        assert_eq!(
            run(
                engine,
                "(define (car x) 'mine) (define + -) (list (car '(1 2)) (+ 5 3) (first-of '(1 2)) (add 5 3))"
            ),
            "(mine 2 1 8)"
        );
        assert_eq!(
            run(
                engine,
                "(define (later l) (car l)) (list (later '(1 2)) (+ 5 3))"
            ),
            "(mine 2)"
        );
        assert_eq!(run(engine, "(list (cdr '(1 2)) (* 2 3))"), "((2) 6)");
    }

    /// A call of an aliased built-in (steel's instruction for it) answers what calling the
    /// procedure answers (through `apply`, which the instructions never see), errors included.
    #[test]
    fn aliased_builtins_answer_as_their_procedures_do() {
        let _reading = voml_ir::steel_parse_lock();
        let mut sandbox = Sandbox::new(|_| Ok(())).expect("builds");
        let engine = &mut sandbox.engine;
        let cases = [
            ("<", "\"x\" 1"),
            (">", "'a 2"),
            ("<=", "\"a\" \"b\""),
            (">=", "1 'b"),
            ("<", "1 2 3"),
            (">=", "2.5 2"),
            ("null?", "(vector)"),
            ("null?", "'()"),
            ("null?", "5"),
            ("equal?", "1 1 1"),
            ("equal?", "'(1) '(1)"),
            ("cons", "1"),
            ("cons", "1 '(2)"),
            ("car", "'()"),
            ("cdr", "'(1 2)"),
            ("vector-ref", "(vector 1) 3"),
            ("list-ref", "'(1) 5"),
            ("+", "1 2.5"),
            ("-", "5"),
            ("/", "1 2"),
            ("*", "2 3 4"),
            ("=", "1 1.0"),
            ("not", "0"),
            ("list", ""),
            ("list", "1 (list 2 3) \"x\""),
        ];
        let mut answer = |code: String| match engine.compile_and_run_raw_program(code) {
            Ok(values) => format!("{:?}", values.last().map(|v| v.to_string())),
            Err(_) => "error".to_string(),
        };
        for (k, (name, args)) in cases.iter().enumerate() {
            // A call in tail position and one that is not (steel specialises both).
            let tail = answer(format!("(define (tail-{k}) ({name} {args})) (tail-{k})"));
            let inner = answer(format!(
                "(define (inner-{k}) (let ((v ({name} {args}))) v)) (inner-{k})"
            ));
            let procedure = answer(format!("(apply {name} (list {args}))"));
            assert_eq!(tail, procedure, "({name} {args}) in tail position");
            assert_eq!(inner, procedure, "({name} {args})");
        }
    }
}
