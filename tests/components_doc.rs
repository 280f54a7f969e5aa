//! `docs/components.md` is the standard library's catalogue, generated from the library
//! itself (`voml_compiler::stdlib::catalogue`, what `voml components` shows): a section per
//! component with its interface, its description and, for a display, its picture. The test
//! fails when the page and the library differ; `VOML_BLESS=1` rewrites the page.

mod support;

use support::{check_golden, root};

fn page() -> String {
    let mut out = String::from(
        "# The standard component library\n\n\
         Generated from `stdlib-components/` (what `voml components NAME` shows); edit the\n\
         library, then run the tests with `VOML_BLESS=1`. A spec imports a library as\n\
         `<import href=\"voml:NAME\"/>` and uses a component as\n\
         `<ep-component name=\"...\" use=\"COMPONENT\" inputs=\"...\" infos=\"...\"/>` (or\n\
         `<ir-component ... views=\"...\"/>`), gluing its formal parameters to its own events,\n\
         variables and views (docs/language.md §9).\n",
    );
    let entries = voml_compiler::stdlib::catalogue();
    // The contents: every component with its one line, linked to its section.
    out.push_str("\n| component | kind | what it is |\n|---|---|---|\n");
    for e in &entries {
        let kind = if e.kind == "ep-component" { "EP" } else { "IR" };
        out.push_str(&format!(
            "| [`{}`](#{}-{}) | {kind} | {} |\n",
            e.name,
            e.name,
            kind.to_lowercase(),
            e.summary().replace('|', "\\|")
        ));
    }
    let mut library = String::new();
    for e in entries {
        if e.library != library {
            library = e.library.clone();
            out.push_str(&format!("\n## `voml:{library}`\n"));
        }
        let kind = if e.kind == "ep-component" { "EP" } else { "IR" };
        out.push_str(&format!("\n### `{}` ({kind})\n\n", e.name));
        for (what, value) in e.interface() {
            out.push_str(&format!("- {what}: `{value}`\n"));
        }
        out.push_str(&format!("\n{}\n", e.description));
        let picture = format!("images/components/{}.png", e.name);
        if root().join("docs").join(&picture).is_file() {
            out.push_str(&format!(
                "\n![{} on {}]({picture})\n",
                e.name,
                picture_trace(&e.name)
            ));
        }
    }
    out
}

/// The trace a display's picture was taken on: the examples' own, unless the display needs
/// records it lacks (user tasks, MPICL's statistics).
fn picture_trace(name: &str) -> &'static str {
    match name {
        "task-chart" | "statistic-bars" => "the MPICL trace mpicl-trace1.trf",
        _ => "examples/mpicl/ring.trf",
    }
}

#[test]
fn the_components_page_is_the_library() {
    if let Some(diff) = check_golden(&root().join("docs/components.md"), &page()) {
        panic!("{diff}");
    }
}

#[test]
fn every_display_component_has_its_picture() {
    for e in voml_compiler::stdlib::catalogue() {
        if e.kind == "ir-component" {
            let picture = root().join(format!("docs/images/components/{}.png", e.name));
            assert!(picture.is_file(), "{} has no picture", picture.display());
        }
    }
}
