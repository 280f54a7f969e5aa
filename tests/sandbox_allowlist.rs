//! The sandbox is an allowlist: every name of the Scheme engine that visual-object code can
//! use is on VOML's list, and every other one — each global, macro, internal name, module
//! and module form steel has — is refused, by the screen before compiling or by a refusing
//! procedure at run time. A steel upgrade that adds a built-in cannot open a hole: the new
//! name is refused until someone vets it and lists it.

mod support;

use std::collections::BTreeSet;

use support::{finish, quiet_steel};
use voml_runtime::sandbox::{allow, steel_names};

fn allowed() -> BTreeSet<String> {
    allow::procedures()
        .chain(allow::MACROS.iter().copied())
        .map(str::to_string)
        .collect()
}

/// The engine's compiler refused a program for naming something that does not exist.
fn absent(e: &impl std::fmt::Display) -> bool {
    e.to_string().contains("FreeIdentifier")
}

#[test]
fn the_steel_names_visible_to_vo_code_are_exactly_the_allowlist() {
    quiet_steel();
    let sandbox = voml_runtime::vo_sandbox().expect("the VO engine builds");
    let (steel, _) = steel_names();
    let visible = sandbox.visible_names();
    let visible_steel: BTreeSet<String> = visible.intersection(&steel).cloned().collect();
    let expected = allowed();
    let extra: Vec<&String> = visible_steel.difference(&expected).collect();
    let missing: Vec<&String> = expected.difference(&visible_steel).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "visible but not allowed: {extra:?}\nallowed but not visible (misspelt, or gone from steel?): {missing:?}"
    );
    // What VOML adds itself (primitives, prelude) must not look like steel internals.
    let voml: Vec<&String> = visible.difference(&steel).collect();
    assert!(voml.iter().any(|n| *n == "draw-line") && voml.iter().any(|n| *n == "id-put"));
    for name in voml {
        assert!(
            !voml_runtime::sandbox::screen::is_internal(name),
            "VOML defines `{name}`, which has the shape of a steel internal"
        );
    }
}

#[test]
fn every_other_steel_name_is_refused() {
    quiet_steel();
    let mut sandbox = voml_runtime::vo_sandbox().expect("the VO engine builds");
    let (steel, _) = steel_names();
    let expected = allowed();
    let mut problems = Vec::new();
    let (mut screened, mut rebound, mut missing, mut unnameable) = (0, 0, 0, 0);
    for name in steel.difference(&expected) {
        if !voml_runtime::sandbox::screen::nameable(name) {
            // No program text can name it (steel's lifted functions).
            unnameable += 1;
            continue;
        }
        let call = format!("({name} \"/etc/passwd\" 1)");
        if sandbox.screen.check(&call).is_err() {
            screened += 1;
            continue;
        }
        // Not screened: it must be a procedure that refuses, whatever the arguments.
        // (Scheme text is read under the process's lock, as the runtime reads it.)
        let reading = voml_ir::steel_parse_lock();
        let ran = sandbox.engine.run(call.clone());
        drop(reading);
        match ran {
            Err(e) if e.to_string().contains("not available to visual objects") => rebound += 1,
            // Names of steel's prelude modules that VO engines leave out: nothing by that
            // name exists, and the program is refused before anything runs.
            Err(e) if absent(&e) => missing += 1,
            Err(e) => problems.push(format!("`{name}` failed otherwise: {e}")),
            Ok(v) => problems.push(format!("`{name}` ran: {v:?}")),
        }
    }
    assert!(
        screened + rebound + missing > 1000,
        "steel has fewer names than expected ({screened} screened, {rebound} rebound, {missing} absent, {unnameable} unnameable)"
    );
    finish(problems);
}

#[test]
fn no_module_path_leads_back_to_the_built_ins() {
    quiet_steel();
    let mut sandbox = voml_runtime::vo_sandbox().expect("the VO engine builds");
    let (_, modules) = steel_names();
    assert!(modules.len() > 20, "{modules:?}");
    let home = std::env::var("HOME").unwrap_or_default();
    let mut problems = Vec::new();
    for module in &modules {
        for form in [
            format!("(require-builtin {module})"),
            format!("(require-builtin {module} as p.)"),
            format!("(require \"{module}\")"),
        ] {
            if sandbox.screen.check(&form).is_ok() {
                problems.push(format!("the screen lets `{form}` through"));
            }
        }
        // Behind the screen, the module itself is empty: even an unscreened
        // `require-builtin` binds nothing.
        let program = format!(
            "(require-builtin {module} as p.) (p.env-var \"HOME\") (p.spawn-process (p.command \"true\" (list)))"
        );
        let reading = voml_ir::steel_parse_lock();
        let ran = sandbox.engine.run(program);
        drop(reading);
        match ran {
            Ok(v) => problems.push(format!("{module}: ran {v:?}")),
            Err(e) if !home.is_empty() && e.to_string().contains(&home) => {
                problems.push(format!("{module}: leaked the environment: {e}"))
            }
            Err(_) => {}
        }
    }
    finish(problems);
}

#[test]
fn module_macro_and_syntax_forms_are_refused_wherever_they_stand() {
    quiet_steel();
    let mut sandbox = voml_runtime::vo_sandbox().expect("the VO engine builds");
    let mut problems = Vec::new();
    let forms = allow::RESERVED_FORMS
        .iter()
        .map(|f| format!("({f} x)"))
        .chain(
            [
                "(define-syntax m (syntax-rules () ((_ x) x)))",
                "(defmacro (m x) x)",
                "#'(a b)",
                "#`(a ,b)",
                "(%plain-let ((x 1)) x)",
                "(#%prim.env-var \"HOME\")",
                "(##__module-get 'x 'y)",
                "(%module-get% x 'y)",
                "(match x (1 2))",
                "(with-handler (lambda (e) e) (f))",
                "(let ((x 1)) (parameterize ((p 1)) x))",
            ]
            .map(str::to_string),
        );
    for form in forms {
        if sandbox.screen.check(&form).is_err() {
            continue;
        }
        // Forms of steel's prelude modules that VO engines leave out (pattern matching,
        // parameters) are not macros there: the program names something that does not
        // exist, and is refused before anything runs.
        let reading = voml_ir::steel_parse_lock();
        let ran = sandbox.engine.run(form.clone());
        drop(reading);
        match ran {
            Err(e) if absent(&e) => {}
            _ => problems.push(format!("the screen lets `{form}` through")),
        }
    }
    // Names of refused built-ins may still name local variables (the paper's line plot has
    // a local `angle`): they shadow the refusing procedure.
    for fine in [
        "(let* ((angle (* 2 3)) (command angle)) (+ angle command))",
        "(define (f port) (list port 'red \"require\"))",
    ] {
        if let Err(r) = sandbox.screen.check(fine) {
            problems.push(format!("the screen refuses `{fine}`: {}", r.message));
        }
    }
    finish(problems);
}

#[test]
fn the_language_reference_lists_exactly_the_allowlist() {
    let doc = std::fs::read_to_string(support::root().join("docs/language.md")).unwrap();
    let section = doc
        .split("### 7.5 The Scheme a visual object can use")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/language.md has section 7.5");
    let listed: BTreeSet<String> = section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Group"))
        .filter_map(|l| l.split(" | ").nth(1))
        .flat_map(|cell| {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let expected = allowed();
    assert_eq!(
        listed.difference(&expected).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "listed in docs/language.md §7.5 but not allowed"
    );
    assert_eq!(
        expected.difference(&listed).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "allowed but not listed in docs/language.md §7.5"
    );
}
