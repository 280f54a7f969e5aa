//! The references' tables against the language table (`voml_ir::vocabulary`): the attribute
//! tables of `docs/language.md` list every element's and every primitive's attributes, which
//! are required, their defaults and their words as the table has them; its limits table and
//! the primitive API calls of `docs/ir.md` are generated from the vocabulary (a difference
//! fails with a diff; `VOML_BLESS=1` rewrites the marked sections).

mod support;

use std::collections::{BTreeMap, BTreeSet};

use support::{blessing, finish, root};
use voml_ir::vocabulary::limits;
use voml_ir::vocabulary::schema::{self, Arg, ElementSpec, Kind, ELEMENTS, FLAG_WORDS};

// ---------------------------------------------------------------------------------------
// Reading markdown tables.

/// A markdown table: the line of its header, the heading or marker it belongs to, its
/// header cells and rows.
struct Table {
    line: usize,
    /// Element names from a `<!-- attributes: ... -->` marker right above the table, or
    /// else from the `####` heading it stands under.
    elements: Vec<String>,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// The cells of a table line, split at `|` but not at `\|`.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The `backticked` spans of `text`.
fn ticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

fn tables(doc: &str) -> Vec<Table> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    let mut heading: Option<&str> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with('#') {
            heading = Some(line);
        }
        if line.starts_with('|') && lines.get(i + 1).is_some_and(|l| l.starts_with("|---")) {
            let marker = lines[..i]
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty())
                .and_then(|l| l.trim().strip_prefix("<!-- attributes:"))
                .map(|m| {
                    m.trim_end_matches("-->")
                        .split_whitespace()
                        .map(String::from)
                        .collect()
                });
            let elements = marker.unwrap_or_else(|| match heading {
                Some(h) if h.starts_with("#### ") => {
                    ticked(h).into_iter().map(String::from).collect()
                }
                _ => Vec::new(),
            });
            let header = cells(line);
            let mut rows = Vec::new();
            let start = i;
            i += 2;
            while i < lines.len() && lines[i].starts_with('|') {
                rows.push(cells(lines[i]));
                i += 1;
            }
            out.push(Table {
                line: start + 1,
                elements,
                header,
                rows,
            });
            continue;
        }
        i += 1;
    }
    out
}

// ---------------------------------------------------------------------------------------
// What the reference says of an attribute.

#[derive(Debug, Default)]
struct Said {
    required: bool,
    /// The default, when written as `` `literal` `` (in its own cell, or first in
    /// parentheses after the attribute).
    default: Option<String>,
    /// Words written in backticks with the attribute (its kind), each split at spaces.
    words: BTreeSet<String>,
    /// The kind names `FLAG`.
    flag: bool,
}

/// The items of a cell listing attributes: split at commas outside parentheses.
fn items(cell: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let (mut depth, mut ticks) = (0, false);
    for c in cell.chars() {
        match c {
            '`' => ticks = !ticks,
            '(' if !ticks => depth += 1,
            ')' if !ticks => depth -= 1,
            ',' if depth == 0 && !ticks => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().unwrap().push(c);
    }
    out.into_iter().map(|i| i.trim().to_string()).collect()
}

/// Reads one item of a primitives table, `` `name` KIND (`default`) R ``: the attributes it
/// names (two for the pitch, `` `freq` or `note` ``) and what it says of them.
fn read_item(item: &str, required_column: bool) -> Option<(Vec<String>, Said)> {
    let names: Vec<String> = if item.starts_with("`freq` or `note`") {
        vec!["freq".into(), "note".into()]
    } else {
        vec![ticked(item).first()?.to_string()]
    };
    let outside_ticks: String = item.split('`').step_by(2).collect::<Vec<_>>().join(" ");
    let mut said = Said {
        required: required_column || outside_ticks.split_whitespace().any(|w| w == "R"),
        flag: outside_ticks.split_whitespace().any(|w| w == "FLAG"),
        ..Said::default()
    };
    // The default: parentheses that open with a backticked literal.
    let mut rest = item;
    if let Some(open) = item.find("(`") {
        let close = item[open..].find(')').map_or(item.len(), |c| open + c);
        said.default = ticked(&item[open..close]).first().map(|d| d.to_string());
        rest = &item[..open];
    }
    let skip = if names.len() == 2 { 2 } else { 1 };
    said.words = ticked(rest)
        .into_iter()
        .skip(skip)
        .flat_map(|w| w.split_whitespace())
        .map(String::from)
        .collect();
    Some((names, said))
}

/// Reads a row of an attribute table, `| `name` R | KIND | DEFAULT | meaning |`.
fn read_attribute_row(row: &[String]) -> Option<(String, Said)> {
    let name = ticked(&row[0]).first()?.to_string();
    let kind = row.get(1).map_or("", String::as_str);
    let default = row.get(2).map_or("", String::as_str);
    let said = Said {
        required: row[0].split_whitespace().any(|w| w == "R"),
        default: match ticked(default).as_slice() {
            [d] if default == format!("`{d}`") => Some(d.to_string()),
            _ => None,
        },
        words: ticked(kind)
            .into_iter()
            .flat_map(|w| w.split_whitespace())
            .map(String::from)
            .collect(),
        flag: kind.split_whitespace().any(|w| w == "FLAG"),
    };
    Some((name, said))
}

/// Compares what the reference says of attribute `name` of `<e>` with the table.
fn compare(e: &ElementSpec, name: &str, said: &Said, pitch: bool, problems: &mut Vec<String>) {
    let Some(a) = e.attr(name) else {
        problems.push(format!(
            "<{}> has no `{name}`, the reference lists it",
            e.name
        ));
        return;
    };
    let required = if pitch {
        schema::PITCHED.contains(&e.name)
    } else {
        a.required
    };
    if said.required != required {
        problems.push(format!(
            "<{}> `{name}`: the reference says required {}, the table {required}",
            e.name, said.required
        ));
    }
    if said.default.as_deref() != a.default {
        problems.push(format!(
            "<{}> `{name}`: the reference gives the default {:?}, the table {:?}",
            e.name, said.default, a.default
        ));
    }
    match a.kind {
        Kind::Enum(words) if words == FLAG_WORDS && !said.flag => {
            problems.push(format!(
                "<{}> `{name}`: the reference should say FLAG",
                e.name
            ));
        }
        Kind::Enum(words) if words == FLAG_WORDS => {}
        Kind::Enum(words) | Kind::EnumSet(words) => {
            let table: BTreeSet<String> = words.iter().map(|w| w.to_string()).collect();
            if said.words != table {
                problems.push(format!(
                    "<{}> `{name}`: the reference lists {:?}, the table {table:?}",
                    e.name, said.words
                ));
            }
        }
        _ => {}
    }
}

/// The attributes every drawing primitive has (listed once, in their own table).
fn common_attributes() -> BTreeSet<&'static str> {
    let drawing: Vec<&ElementSpec> = schema::primitives()
        .filter(|e| e.call.is_some_and(|c| c.args.contains(&Arg::Style)))
        .collect();
    drawing[0]
        .attrs
        .iter()
        .map(|a| a.name)
        .filter(|n| drawing.iter().all(|d| d.attr(n).is_some()))
        .collect()
}

/// Every element with attributes has them listed in `docs/language.md`: in an attribute
/// table under its heading (or marked for it), or, for primitives, in the rows of the
/// primitives' tables (and the table of attributes common to the drawing primitives); each
/// with the table's required-ness, default and words, and no attribute the table lacks.
#[test]
fn the_references_attribute_tables_are_the_tables() {
    let doc = std::fs::read_to_string(root().join("docs/language.md")).unwrap();
    let common = common_attributes();
    let mut problems = Vec::new();
    // The attributes the reference lists, by element.
    let mut listed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for table in tables(&doc) {
        let head: Vec<&str> = table.header.iter().map(String::as_str).collect();
        if head == ["Attribute", "Kind", "Default", "Meaning"] {
            if table.elements.is_empty() {
                problems.push(format!(
                    "docs/language.md:{}: an attribute table under no element's heading (mark it <!-- attributes: ... -->)",
                    table.line
                ));
            }
            for el in &table.elements {
                let Some(e) = schema::element(el) else {
                    problems.push(format!(
                        "docs/language.md:{}: no element <{el}>",
                        table.line
                    ));
                    continue;
                };
                // A table for several drawing primitives lists what they have in common.
                let expected: BTreeSet<&str> = if table.elements.len() > 1 && e.primitive() {
                    common.clone()
                } else {
                    e.attrs.iter().map(|a| a.name).collect()
                };
                let mut seen = BTreeSet::new();
                for row in &table.rows {
                    let Some((name, said)) = read_attribute_row(row) else {
                        continue;
                    };
                    compare(e, &name, &said, false, &mut problems);
                    seen.insert(name.clone());
                    listed.entry(el.clone()).or_default().insert(name);
                }
                let seen: BTreeSet<&str> = seen.iter().map(String::as_str).collect();
                for missing in expected.difference(&seen) {
                    problems.push(format!(
                        "docs/language.md:{}: <{el}> `{missing}` is not listed",
                        table.line
                    ));
                }
            }
        } else if matches!(head.first(), Some(&"Element" | &"Primitive")) {
            for row in &table.rows {
                let Some(name) = ticked(&row[0]).first().copied() else {
                    continue;
                };
                let Some(e) = schema::element(name).filter(|e| e.primitive()) else {
                    continue;
                };
                for (column, cell) in row.iter().enumerate().take(row.len() - 1).skip(1) {
                    let required_column = head.get(column) == Some(&"Required");
                    for item in items(cell) {
                        let Some((names, said)) = read_item(&item, required_column) else {
                            continue;
                        };
                        let pitch = names.len() == 2;
                        for n in names {
                            compare(e, &n, &said, pitch, &mut problems);
                            listed.entry(name.to_string()).or_default().insert(n);
                        }
                    }
                }
            }
        }
    }
    // Every attribute of every element is listed somewhere.
    for e in ELEMENTS {
        let found = listed.get(e.name);
        for a in e.attrs {
            if !found.is_some_and(|f| f.contains(a.name)) {
                problems.push(format!(
                    "docs/language.md lists no `{}` for <{}>",
                    a.name, e.name
                ));
            }
        }
    }
    finish(problems);
}

// ---------------------------------------------------------------------------------------
// Generated sections.

/// Replaces the text between `<!-- generated: NAME ... -->` and `<!-- end generated: NAME -->`
/// in `file` by `content`, or (without `VOML_BLESS`) reports the difference.
fn generated_section(file: &str, name: &str, content: &str) -> Option<String> {
    let path = root().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let begin = format!("<!-- generated: {name} ");
    let end = format!("<!-- end generated: {name} -->");
    let Some(b) = text.find(&begin) else {
        return Some(format!("{file}: no `{begin}...-->` marker"));
    };
    let b = b + text[b..].find("-->\n").expect("the marker is closed") + 4;
    let Some(e) = text[b..].find(&end).map(|e| b + e) else {
        return Some(format!("{file}: no `{end}` marker"));
    };
    let current = &text[b..e];
    if current == content {
        return None;
    }
    if blessing() {
        let updated = format!("{}{content}{}", &text[..b], &text[e..]);
        std::fs::write(&path, updated).unwrap();
        return None;
    }
    let diff = similar::TextDiff::from_lines(current, content);
    let mut out = format!(
        "{file}: the section `{name}` differs from the vocabulary (- written, + generated); VOML_BLESS=1 rewrites it:\n"
    );
    for hunk in diff.unified_diff().context_radius(2).iter_hunks() {
        out.push_str(&hunk.to_string());
    }
    Some(out)
}

/// A limit's value as the reference writes it: integers with thousands separators.
fn show(value: f64) -> String {
    if value.fract() != 0.0 || value < 1.0 {
        return format!("{value:e}");
    }
    let digits = format!("{value:.0}");
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn show_writes_limits_as_the_reference_does() {
    assert_eq!(show(16384.0), "16,384");
    assert_eq!(show(1048576.0), "1,048,576");
    assert_eq!(show(256.0), "256");
    assert_eq!(show(1e-9), "1e-9");
}

/// `docs/language.md`'s limits table is the vocabulary's, and that lists every constant of
/// `voml_vocab::limits`.
#[test]
fn the_limits_table_is_generated_from_the_vocabulary() {
    let source = std::fs::read_to_string(root().join("compiler/voml-vocab/src/limits.rs")).unwrap();
    let constants: BTreeSet<&str> = source
        .lines()
        .filter_map(|l| l.strip_prefix("pub const "))
        .map(|l| l.split(':').next().unwrap())
        .filter(|n| *n != "TABLE")
        .collect();
    let tabled: BTreeSet<&str> = limits::TABLE.iter().map(|l| l.name).collect();
    assert_eq!(constants, tabled, "limits::TABLE lists every limit");
    let mut content = String::from("| Limit | Value | Constant |\n|---|---|---|\n");
    for l in limits::TABLE {
        content.push_str(&format!(
            "| {} | {} | `{}` |\n",
            l.what,
            show(l.value),
            l.name
        ));
    }
    finish(
        generated_section("docs/language.md", "limits", &content)
            .into_iter()
            .collect(),
    );
}

/// `docs/ir.md`'s list of the primitive API's calls is the language table's.
#[test]
fn the_primitive_api_in_the_ir_reference_is_generated_from_the_table() {
    let call = |p: &schema::Procedure| -> String {
        let mut parts = vec![p.name];
        parts.extend(p.params);
        format!("`({})`", parts.join(" "))
    };
    let mut content = String::from("| For | The program calls |\n|---|---|\n");
    content.push_str(&format!(
        "| the style of a drawing primitive | {} |\n",
        call(&schema::STYLE)
    ));
    for e in schema::primitives() {
        content.push_str(&format!(
            "| `<{}>` | {} |\n",
            e.name,
            call(&e.call.unwrap().procedure)
        ));
    }
    content.push_str(&format!(
        "| `note=\"…\"` of a sound primitive | {} |\n",
        call(&schema::MIDI_TO_HZ)
    ));
    finish(
        generated_section("docs/ir.md", "procedures", &content)
            .into_iter()
            .collect(),
    );
}
