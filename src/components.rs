//! `voml components [NAME]`: the standard component library, as a catalogue.

use std::process::ExitCode;

use voml_compiler::stdlib::{catalogue, Entry};

pub fn show(name: Option<&str>) -> ExitCode {
    let entries = catalogue();
    let Some(name) = name else {
        list(&entries);
        return ExitCode::SUCCESS;
    };
    match entries.iter().find(|e| e.name == name) {
        Some(entry) => {
            interface(entry);
            ExitCode::SUCCESS
        }
        None => {
            let mut near: Vec<&str> = entries
                .iter()
                .map(|e| e.name.as_str())
                .filter(|n| n.contains(name) || name.contains(*n))
                .collect();
            near.dedup();
            eprintln!("error: the standard library has no component `{name}`");
            if !near.is_empty() {
                eprintln!("  did you mean: {}", near.join(", "));
            }
            eprintln!("  `voml components` lists them all");
            ExitCode::from(1)
        }
    }
}

fn list(entries: &[Entry]) {
    let mut out = String::new();
    let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let mut library = "";
    for e in entries {
        if e.library != library {
            library = &e.library;
            if !std::ptr::eq(e, &entries[0]) {
                out.push('\n');
            }
            line(
                &mut out,
                format!("voml:{library}  (<import href=\"voml:{library}\"/>)"),
            );
        }
        let kind = if e.kind == "ep-component" { "EP" } else { "IR" };
        line(
            &mut out,
            format!(
                "  {:<width$}  {kind}  {}",
                e.name,
                shortened(e.summary(), 90)
            ),
        );
    }
    out.push('\n');
    line(
        &mut out,
        "`voml components NAME` shows a component's interface.".to_string(),
    );
    print(&out);
}

fn interface(e: &Entry) {
    let mut out = String::new();
    line(
        &mut out,
        format!("{} ({}, voml:{})", e.name, e.kind, e.library),
    );
    for (what, value) in e.interface() {
        line(&mut out, format!("  {what:<8}  {value}"));
    }
    out.push('\n');
    for text in wrap(&e.description, 88) {
        line(&mut out, format!("  {text}"));
    }
    out.push('\n');
    line(&mut out, "Use it in a spec:".to_string());
    line(&mut out, format!("  <import href=\"voml:{}\"/>", e.library));
    let mut attrs = format!("name=\"my-{}\" use=\"{}\"", e.name, e.name);
    for (what, _) in e.interface() {
        attrs.push_str(&format!(" {what}=\"...\""));
    }
    line(&mut out, format!("  <{} {attrs}/>", e.kind));
    print(&out);
}

fn line(out: &mut String, text: String) {
    out.push_str(&text);
    out.push('\n');
}

/// Writes to standard output; a reader that went away (`| head`) is no error.
fn print(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// `text` cut after a word to at most `width` characters, with `…` when cut.
fn shortened(text: &str, width: usize) -> String {
    let lines = wrap(text, width - 2);
    match lines.len() {
        0 => String::new(),
        1 => lines[0].clone(),
        _ => format!("{} …", lines[0].trim_end_matches([',', ':', ';'])),
    }
}

/// `text` in lines of at most `width` characters, broken between words.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_descriptions_wrap_between_words() {
        let lines = wrap("one two three four five", 9);
        assert_eq!(lines, ["one two", "three", "four five"]);
        assert_eq!(shortened("one two three", 11), "one two …");
        assert_eq!(shortened("one two", 11), "one two");
    }
}
