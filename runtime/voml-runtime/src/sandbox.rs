//! Keeps visual-object code away from files, processes, the network and the environment.
//!
//! A VO may come from someone else's component library, so its Scheme code runs in an engine
//! whose dangerous built-ins are removed: the process, file-system, TCP and HTTP modules are
//! replaced by empty ones, their procedures (plain and `#%prim.`-prefixed) are overwritten,
//! environment access is removed, and every `(require "...")` is answered by the runtime
//! without touching the disk. steel's own `new_sandboxed` is not a boundary on its own (it
//! still spawns processes), hence this list; `tests/sandbox.rs` keeps hostile probes against
//! it.

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
    ];
    for module in modules {
        let name = module.name().to_string();
        for f in module.names() {
            deny(engine, &f);
        }
        engine.register_module(BuiltInModule::new(name));
    }
    for f in LOOSE {
        deny(engine, f);
    }
    engine.register_source_module_resolver(DenyRequire);
}

fn deny(engine: &mut Engine, name: &str) {
    engine.register_value(name, SteelVal::FuncV(denied));
    engine.register_value(&format!("#%prim.{name}"), SteelVal::FuncV(denied));
}
