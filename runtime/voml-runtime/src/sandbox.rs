//! Keeps visual-object code away from files, processes, the network and the environment.
//!
//! A VO may come from someone else's component library, so its Scheme code runs in an engine
//! whose dangerous built-ins are removed: the process, file-system, TCP and HTTP modules are
//! replaced by empty ones, their procedures (plain and `#%prim.`-prefixed) are overwritten,
//! environment access is removed, and every `(require "...")` is answered by the runtime
//! without touching the disk. steel's own `new_sandboxed` is not a boundary on its own (it
//! still spawns processes), hence this list; `tests/sandbox.rs` keeps hostile probes against
//! it.

use std::collections::HashSet;

use steel::rvals::SteelVal;
use steel::steel_vm::builtin::BuiltInModule;
use steel::steel_vm::engine::Engine;

/// Answers every `require` of a file with an error, without reading anything.
struct DenyRequire;

impl steel::compiler::modules::SourceModuleResolver for DenyRequire {
    fn resolve(&self, key: &str) -> Option<String> {
        let shown: String = key
            .chars()
            .filter(|c| *c != '"' && *c != '\\')
            .take(80)
            .collect();
        Some(format!(
            "(error \"require is not available to visual objects (asked for {shown})\")"
        ))
    }

    fn exists(&self, _key: &str) -> bool {
        true
    }
}

fn denied(args: &[SteelVal]) -> Result<SteelVal, steel::SteelErr> {
    let _ = args;
    Err(steel::SteelErr::new(
        steel::rerrs::ErrorKind::Generic,
        "this procedure is not available to visual objects (no files, processes, network or environment)".into(),
    ))
}

/// Procedures outside the modules below that reach the outside world.
const LOOSE: &[&str] = &[
    "env-var",
    "set-env-var!",
    "open-input-file",
    "open-output-file",
    "read-port-to-string",
    "write-line!",
    "read-dir",
    "create-directory!",
    "delete-directory!",
    "delete-file!",
    "copy-directory-recursively!",
    "path-exists?",
    "is-file?",
    "is-dir?",
    "file-name",
    "canonicalize-path",
    "current-directory",
    "change-current-directory!",
    "spawn-native-thread",
    "command-line",
    "exit",
    "eval",
    "eval!",
    "load",
    "#%private-cycle-collector",
    // A fresh engine is not sandboxed: `(run! (Engine::new) "...")` could do anything.
    "Engine::new",
    "Engine::clone",
    "Engine::add-module",
    "Engine::modules->list",
    "run!",
    "get-value",
    "#%build-dylib",
    "dylib-build",
    // `git-clone` and `git-pull` run the `git` program.
    "git-clone",
    "git-pull",
    // Blocking calls the watchdog cannot interrupt: sleeping, reading standard input (which
    // holds the trace under `--trace -`: a deadlock), waiting on a channel or a thread.
    "time/sleep-ms",
    "stdin",
    "#%default-input-port",
    "current-input-port",
    "channel/recv",
    "receivers-select",
    "thread-join!",
];

/// Built-in modules a VO could `require-builtin` (possibly with a prefix, which bypasses the
/// global names replaced below): each is rebuilt without the denied procedures.
const MODULES: &[&str] = &[
    "steel/base",
    "steel/meta",
    "steel/io",
    "steel/ports",
    "steel/time",
    "steel/threads",
    "steel/constants",
    "steel/syntax",
    "steel/hash",
    "steel/sets",
    "steel/lists",
    "steel/strings",
    "steel/vectors",
    "steel/immutable-vectors",
    "steel/streams",
    "steel/identity",
    "steel/numbers",
    "steel/equality",
    "steel/ord",
    "steel/transducers",
    "steel/json",
    "steel/random",
    "steel/bytevectors",
    "steel/core/result",
    "steel/core/option",
    "steel/core/types",
    "steel/hashes",
];

/// Removes what VO code must not reach from `engine`.
pub fn harden(engine: &mut Engine) {
    use steel::primitives as p;
    let modules: Vec<BuiltInModule> = vec![
        p::process::process_module(),
        p::fs_module(),
        p::tcp::tcp_module(),
        p::http::http_module(),
        p::polling::polling_module(),
        p::git::git_module(),
    ];
    let mut denied_names: HashSet<String> = LOOSE.iter().map(|s| s.to_string()).collect();
    for module in modules {
        let name = module.name().to_string();
        denied_names.extend(module.names());
        engine.register_module(BuiltInModule::new(name));
    }
    for f in &denied_names {
        deny(engine, f);
    }
    // `(require-builtin steel/base as b.)` binds `b.run!` & co. from the module's own table,
    // not from the globals replaced above: rebuild the modules that hold denied procedures.
    for name in MODULES {
        let Some(module) = engine.builtin_modules().get(name) else {
            continue;
        };
        let kept: Vec<(String, SteelVal)> = {
            let map = module.inner_map();
            if !map.keys().any(|k| denied_names.contains(k.as_ref())) {
                continue;
            }
            map.iter()
                .filter(|(k, _)| !denied_names.contains(k.as_ref()))
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect()
        };
        let mut rebuilt = BuiltInModule::new(name.to_string());
        for (k, v) in kept {
            rebuilt.register_value(&k, v);
        }
        engine.register_module(rebuilt);
    }
    engine.register_source_module_resolver(DenyRequire);
}

fn deny(engine: &mut Engine, name: &str) {
    engine.register_value(name, SteelVal::FuncV(denied));
    engine.register_value(&format!("#%prim.{name}"), SteelVal::FuncV(denied));
}
