//! The `voml` library side of the command line: compilation followed by the engine's own
//! check of the program, shared by `voml check`, `voml compile`, `voml run` and the tests.

use std::path::Path;

use voml_compiler::{Code, Diagnostic, FileSystem, Options, Output};

/// Compiles `path` and, when the compiler finds no error, loads the program into a Scheme
/// engine as the runtime would, so that names defined nowhere are reported now, at their
/// place in the `.voml` file, rather than when a trace is replayed.
pub fn compile_checked(path: &Path, fs: &dyn FileSystem, options: &Options) -> Output {
    let mut out = voml_compiler::compile(path, fs, options);

    if let Some(vo) = &mut out.vo {
        if let Err(refused) = voml_runtime::check_program(vo) {
            out.diagnostics
                .extend(refused.iter().map(|e| refusal(vo, e)));
            voml_compiler::sort_diagnostics(&mut out.diagnostics);
            out.vo = None;
        }
    }
    out
}

/// The engine's refusal to load a compiled spec, as a diagnostic at its place in the spec.
pub fn refusal(vo: &voml_ir::CompiledVo, e: &voml_runtime::LoadError) -> Diagnostic {
    let span = e.span.unwrap_or(vo.span);
    let d = Diagnostic::new(
        Code::SchemeLoad,
        span,
        format!("the Scheme engine refuses the program: {}", e.message),
    )
    .label("here");
    let Some(free) = e.unbound.as_deref() else {
        return d;
    };
    // A spec's variable named directly instead of through its formal parameter.
    let declared = vo
        .infos
        .iter()
        .map(|v| (v, "infos", '$'))
        .chain(vo.controls.iter().map(|v| (v, "controls", '%')));
    match declared.into_iter().find(|(v, _, _)| v.name == free) {
        Some((v, list, sigil)) => d.hint(format!(
            "`{free}` is declared as a variable of the spec: list it in the component's `{list}` and write `{sigil}n` (its position there)"
        ))
        .secondary(v.span, "declared here"),
        None => d.hint("is a name misspelt, or defined nowhere?"),
    }
}
