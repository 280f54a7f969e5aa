//! The structural check: element names, nesting, attributes, required attributes and the
//! values of attributes whose kind is fixed (numbers, words from a set). Driven entirely by
//! the table in [`crate::schema`].

use voml_ir::Span;

use crate::diag::{Code, Diagnostic};
use crate::schema::{self, Content, ElementSpec, Kind};
use crate::xml::{Element, Node};

/// Checks `root` (expected to be one of `roots`) and everything inside it. Elements that are
/// unknown or misplaced are reported and removed, so later phases see only known structure.
pub fn check(root: &mut Element, roots: &[&str], diags: &mut Vec<Diagnostic>) -> bool {
    let Some(spec) = schema::element(&root.name).filter(|s| roots.contains(&s.name)) else {
        let d = Diagnostic::new(
            Code::UnknownElement,
            root.name_span,
            format!("`<{}>` cannot be the root element here", root.name),
        )
        .label(format!("expected `<{}>`", roots.join("> or `<")))
        .did_you_mean(&root.name, roots.iter().copied());
        diags.push(d);
        return false;
    };
    check_element(root, spec, diags);
    true
}

fn check_element(el: &mut Element, spec: &'static ElementSpec, diags: &mut Vec<Diagnostic>) {
    check_attributes(el, spec, diags);
    let mut seen: Vec<(&'static str, Span)> = Vec::new();
    let children = std::mem::take(&mut el.children);
    el.children.reserve_exact(children.len());
    for node in children {
        match node {
            Node::Text(text) => {
                let allowed = matches!(spec.content, Content::Code | Content::Text);
                if !allowed && !text.text.trim().is_empty() {
                    let trimmed_at = text.text.len() - text.text.trim_start().len();
                    let span = text
                        .source_of_range(trimmed_at, text.text.trim_end().len())
                        .unwrap_or(el.tag_span);
                    let mut d = Diagnostic::new(
                        Code::UnexpectedText,
                        span,
                        format!("text is not allowed directly inside `<{}>`", el.name),
                    )
                    .label("unexpected text")
                    .secondary(el.name_span, "in this element");
                    if spec.content == Content::Elements && spec.children.contains(&"input") {
                        d = d.hint("put event code inside `<input name=\"^0\">...</input>`");
                    } else if !spec.children.is_empty() {
                        d = d.hint(format!(
                            "`<{}>` holds only elements: {}",
                            el.name,
                            quote_list(spec.children)
                        ));
                    }
                    diags.push(d);
                } else if allowed {
                    el.children.push(Node::Text(text));
                }
            }
            Node::Element(mut child) => {
                let Some(child_spec) = schema::element(&child.name) else {
                    let mut candidates: Vec<&str> = spec.children.to_vec();
                    if spec.content == Content::Code {
                        candidates.extend(
                            schema::ELEMENTS
                                .iter()
                                .filter(|e| e.primitive())
                                .map(|e| e.name),
                        );
                    }
                    let mut d = Diagnostic::new(
                        Code::UnknownElement,
                        child.name_span,
                        format!("unknown element `<{}>`", child.name),
                    )
                    .label("not a VOML element");
                    d = match crate::diag::closest(&child.name, candidates.iter().copied())
                        .or_else(|| crate::diag::closest(&child.name, schema::element_names()))
                    {
                        Some(best) => d.hint(format!("did you mean `<{best}>`?")),
                        None if spec.content == Content::Code => d.hint(
                            "a `<` in Scheme code must be written `&lt;` (or use `lt`), or the code put in a CDATA section",
                        ),
                        None => d,
                    };
                    diags.push(d);
                    keep_code_readable(el, spec, &child);
                    continue;
                };
                if !schema::allows(spec, &child.name) {
                    let parents = schema::parents_of(&child.name);
                    let mut d = Diagnostic::new(
                        Code::MisplacedElement,
                        child.name_span,
                        format!("`<{}>` is not allowed inside `<{}>`", child.name, el.name),
                    )
                    .label("misplaced")
                    .secondary(el.name_span, format!("inside this `<{}>`", el.name));
                    if !parents.is_empty() && parents.len() <= 4 {
                        d = d.hint(format!(
                            "`<{}>` belongs in {}",
                            child.name,
                            quote_list(&parents)
                        ));
                    } else if child_spec.primitive() {
                        d = d.hint("markup primitives stand inside Scheme code (components, `<input>`, `<end-with>`, ...)");
                    }
                    diags.push(d);
                    keep_code_readable(el, spec, &child);
                    continue;
                }
                if spec.once.contains(&child_spec.name) {
                    if let Some((_, first)) = seen.iter().find(|(n, _)| *n == child_spec.name) {
                        diags.push(
                            Diagnostic::new(
                                Code::DuplicateElement,
                                child.name_span,
                                format!(
                                    "`<{}>` may appear only once in `<{}>`",
                                    child.name, el.name
                                ),
                            )
                            .label("second one")
                            .secondary(*first, "first one here"),
                        );
                        continue;
                    }
                    seen.push((child_spec.name, child.name_span));
                }
                if spec.content == Content::Text {
                    diags.push(
                        Diagnostic::new(
                            Code::MisplacedElement,
                            child.name_span,
                            format!("`<{}>` holds plain text, not elements", el.name),
                        )
                        .label("element inside text"),
                    );
                    continue;
                }
                check_element(&mut child, child_spec, diags);
                el.children.push(Node::Element(child));
            }
        }
    }
}

/// When an element inside Scheme code is dropped (reported as unknown or misplaced), leaves
/// a placeholder expression in its place, so that the surrounding code still reads (a
/// dropped `<line>` can leave `(lambda (x))`) and no Scheme error follows from it.
fn keep_code_readable(parent: &mut Element, spec: &ElementSpec, dropped: &Element) {
    if spec.content == Content::Code {
        let mut placeholder = voml_ir::Program::default();
        placeholder.push(" #f ", dropped.tag_span, false);
        parent.children.push(Node::Text(placeholder));
    }
}

fn check_attributes(el: &mut Element, spec: &ElementSpec, diags: &mut Vec<Diagnostic>) {
    let el_name = el.name.clone();
    el.attrs.retain(|attr| {
        if attr.name.starts_with("xmlns") || attr.name.starts_with("xml:") {
            return false;
        }
        let Some(aspec) = spec.attrs.iter().find(|a| a.name == attr.name) else {
            let mut d = Diagnostic::new(
                Code::UnknownAttribute,
                attr.name_span,
                format!("`<{}>` has no attribute `{}`", el_name, attr.name),
            )
            .label("unknown attribute")
            .did_you_mean(&attr.name, spec.attrs.iter().map(|a| a.name));
            if !spec.attrs.is_empty() && d.hints.is_empty() {
                let names: Vec<&str> = spec.attrs.iter().map(|a| a.name).collect();
                d = d.hint(format!("its attributes are {}", quote_list(&names)));
            }
            diags.push(d);
            return false;
        };
        check_value(&el_name, attr, aspec.kind, diags)
    });
    for aspec in spec.attrs.iter().filter(|a| a.required) {
        if el.attr(aspec.name).is_none() {
            diags.push(
                Diagnostic::new(
                    Code::MissingAttribute,
                    el.name_span,
                    format!(
                        "`<{}>` needs {} `{}` attribute",
                        el.name,
                        if aspec.name.starts_with(['a', 'e', 'i', 'o', 'u']) {
                            "an"
                        } else {
                            "a"
                        },
                        aspec.name
                    ),
                )
                .label(format!("`{}` missing", aspec.name)),
            );
        }
    }
}

/// Checks values of fixed kinds; returns false to drop an unusable attribute (the element's
/// default then applies, and the error has been reported).
fn check_value(
    el_name: &str,
    attr: &crate::xml::Attr,
    kind: Kind,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let value = attr.value.text.trim();
    match kind {
        Kind::Enum(words) => {
            if words.contains(&value) {
                return true;
            }
            diags.push(
                Diagnostic::new(
                    Code::BadValue,
                    attr.value_span,
                    format!(
                        "`{}` is not a valid `{}` for `<{}>`",
                        value, attr.name, el_name
                    ),
                )
                .label(format!("expected {}", quote_list(words)))
                .did_you_mean(value, words.iter().copied()),
            );
            false
        }
        Kind::EnumSet(words) => {
            let mut ok = true;
            for (word, range) in words_in(&attr.value.text) {
                if !words.contains(&word) {
                    ok = false;
                    let span = attr
                        .value
                        .source_of_range(range.start, range.end)
                        .unwrap_or(attr.value_span);
                    diags.push(
                        Diagnostic::new(
                            Code::BadValue,
                            span,
                            format!("`{}` is not a valid `{}` value", word, attr.name),
                        )
                        .label(format!("expected any of {}", quote_list(words)))
                        .did_you_mean(word, words.iter().copied()),
                    );
                }
            }
            ok
        }
        Kind::Numbers { count, integer } => match parse_numbers(value, count, integer) {
            Ok(_) => true,
            Err(why) => {
                diags.push(
                    Diagnostic::new(
                        Code::BadNumber,
                        attr.value_span,
                        format!("bad `{}` value `{}`: {why}", attr.name, value),
                    )
                    .label(number_shape(&attr.name, count, integer)),
                );
                false
            }
        },
        _ => true,
    }
}

fn number_shape(name: &str, count: usize, integer: bool) -> String {
    let what = if integer { "integer" } else { "number" };
    match (name, count) {
        ("window", _) => "expected width and height in pixels, e.g. \"700 700\"".to_string(),
        ("world", _) => "expected x0 x1 y0 y1, e.g. \"-10 110 -10 120\"".to_string(),
        ("margins", _) => {
            "expected left right top bottom in pixels, e.g. \"40 10 10 30\"".to_string()
        }
        (_, 1) => format!("expected one {what}"),
        _ => format!("expected {count} {what}s separated by spaces"),
    }
}

/// Parses exactly `count` numbers separated by whitespace.
pub fn parse_numbers(text: &str, count: usize, integer: bool) -> Result<Vec<f64>, String> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    if parts.len() != count {
        return Err(format!(
            "{} value{} where {count} {} expected",
            parts.len(),
            if parts.len() == 1 { "" } else { "s" },
            if count == 1 { "is" } else { "are" }
        ));
    }
    parts
        .iter()
        .map(|p| {
            if integer {
                p.parse::<i64>()
                    .map(|v| v as f64)
                    .map_err(|_| format!("`{p}` is not an integer"))
            } else {
                match p.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(v),
                    _ => Err(format!("`{p}` is not a number")),
                }
            }
        })
        .collect()
}

/// Whitespace-separated words with their byte ranges.
pub fn words_in(text: &str) -> Vec<(&str, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (start, c.is_whitespace()) {
            (None, false) => start = Some(i),
            (Some(s), true) => {
                out.push((&text[s..i], s..i));
                start = None;
            }
            _ => {}
        }
    }
    out
}

pub fn quote_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("`{i}`")).collect();
    match quoted.len() {
        0 => String::new(),
        1 => quoted[0].clone(),
        n => format!("{} or {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_counted_and_typed() {
        assert_eq!(parse_numbers("700 700", 2, true), Ok(vec![700.0, 700.0]));
        assert_eq!(
            parse_numbers("-10 110 -10 120", 4, false),
            Ok(vec![-10.0, 110.0, -10.0, 120.0])
        );
        assert!(parse_numbers("700", 2, true)
            .unwrap_err()
            .contains("1 value where 2"));
        assert!(parse_numbers("7OO 700", 2, true)
            .unwrap_err()
            .contains("`7OO`"));
        assert!(parse_numbers("1.5", 1, true).is_err());
        assert!(parse_numbers("inf", 1, false).is_err());
    }

    #[test]
    fn words_keep_ranges() {
        assert_eq!(
            words_in(" update  resize"),
            vec![("update", 1..7), ("resize", 9..15)]
        );
    }
}
