//! Scheme code inside the XML: finding formal parameters (`$n`, `%n`, `^n`, `^n/m`) without
//! touching strings or comments, splitting attribute values into expressions, and checking
//! code with steel's own reader so that the compiler and the runtime agree on what parses.

use std::ops::Range;

pub use voml_ir::tokens::{tokens, Token};
use voml_ir::{Program as Frag, Span};

use crate::diag::{Code, Diagnostic};

/// The byte ranges of the top-level expressions in `text`, or `None` when parentheses do not
/// balance (steel's reader then says where).
pub fn split_exprs(text: &str) -> Option<Vec<Range<usize>>> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start: Option<usize> = None;
    for tok in tokens(text) {
        match tok {
            Token::Prefix(r) => {
                if start.is_none() {
                    start = Some(r.start);
                }
            }
            Token::Open(r) => {
                if start.is_none() {
                    start = Some(r.start);
                }
                depth += 1;
            }
            Token::Close(r) => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    out.push(start.take()?..r.end);
                }
            }
            Token::Atom(r) | Token::String(r) => {
                if depth == 0 {
                    out.push(start.take().unwrap_or(r.start)..r.end);
                } else if start.is_none() {
                    start = Some(r.start);
                }
            }
        }
    }
    if depth != 0 || start.is_some() {
        return None;
    }
    Some(out)
}

/// A formal parameter found in code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Param {
    Info(usize),
    Control(usize),
    /// `^n`: an event (EP) or a view (IR).
    Caret(usize),
    /// `^n/m`.
    Field(usize, usize),
}

/// Parses a token as a formal parameter.
pub fn parse_param(token: &str) -> Option<Param> {
    let (sigil, rest) = token.split_at_checked(1)?;
    let number = |s: &str| -> Option<usize> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 6 {
            None
        } else {
            s.parse().ok()
        }
    };
    match sigil {
        "$" => number(rest).map(Param::Info),
        "%" => number(rest).map(Param::Control),
        "^" => match rest.split_once('/') {
            Some((n, m)) => Some(Param::Field(number(n)?, number(m)?)),
            None => number(rest).map(Param::Caret),
        },
        _ => None,
    }
}

/// The lengths of the lists a component's formal parameters index: `$n` its `infos`, `%n` its
/// `controls`, `^n` its inputs (EP) or views (IR), `^n/m` the fields listed for input n.
pub struct ParamLists<'a> {
    pub infos: usize,
    pub controls: usize,
    pub carets: usize,
    /// `^n` indexes views (IR components, view initialisation), not inputs.
    pub carets_are_views: bool,
    /// Per input, how many fields it lists.
    pub fields: &'a [usize],
}

/// Where `param` points beyond `lists`: the parameter as written, the list it indexes (as
/// messages name it) and that list's length. `None` when it is in range. Shared by the
/// lowering and by the check of a component library on its own.
pub fn param_out_of_range(
    param: &Param,
    lists: &ParamLists,
) -> Option<(String, &'static str, usize)> {
    let beyond = |n: usize, len: usize| n >= len;
    match *param {
        Param::Info(n) => beyond(n, lists.infos).then(|| (format!("${n}"), "infos", lists.infos)),
        Param::Control(n) => {
            beyond(n, lists.controls).then(|| (format!("%{n}"), "controls", lists.controls))
        }
        Param::Caret(n) => beyond(n, lists.carets).then(|| {
            let list = if lists.carets_are_views {
                "views"
            } else {
                "inputs"
            };
            (format!("^{n}"), list, lists.carets)
        }),
        Param::Field(n, m) => match lists.fields.get(n) {
            Some(&f) => {
                beyond(m, f).then(|| (format!("^{n}/{m}"), "fields listed for this input", f))
            }
            None => Some((format!("^{n}/{m}"), "inputs", lists.fields.len())),
        },
    }
}

/// Replaces every formal parameter in `code` by what `resolve` says it stands for; `resolve`
/// reports problems itself and returns `None` to leave the token as it is.
pub fn substitute(code: &Frag, mut resolve: impl FnMut(&Param, Span) -> Option<String>) -> Frag {
    let mut out = Frag::default();
    let mut copied = 0;
    for tok in tokens(&code.text) {
        let Token::Atom(r) = tok else { continue };
        let Some(param) = parse_param(&code.text[r.clone()]) else {
            continue;
        };
        let span = code.source_of_range(r.start, r.end).unwrap_or_default();
        if let Some(replacement) = resolve(&param, span) {
            out.push_range(code, copied..r.start);
            out.push(&replacement, span, false);
            copied = r.end;
        }
    }
    out.push_range(code, copied..code.text.len());
    out
}

/// Formal parameters in a text, with their byte ranges (for analyses that only look).
pub fn params_in(text: &str) -> Vec<(Param, Range<usize>)> {
    tokens(text)
        .into_iter()
        .filter_map(|t| match t {
            Token::Atom(r) => parse_param(&text[r.clone()]).map(|p| (p, r)),
            _ => None,
        })
        .collect()
}

/// Reads `code` with steel's reader; reports the first problem at its place in the XML.
/// Returns true when the code reads.
pub fn check_syntax(code: &Frag, what: &str, fallback: Span, diags: &mut Vec<Diagnostic>) -> bool {
    let Some(problem) = read_problem(&code.text) else {
        return true;
    };
    let unclosed = problem.kind == ReadKind::Unclosed;
    let mut range = problem.range;
    if unclosed {
        // Point at the parenthesis that is never closed, not at the end of the code.
        if let Some(open) = unclosed_open(&code.text) {
            range = open;
        }
    }
    let span = code
        .source_of_range(range.start, range.end.max(range.start + 1))
        .or_else(|| code.source_of(code.text.len().saturating_sub(1)))
        .unwrap_or(fallback);
    let mut d = Diagnostic::new(
        Code::SchemeSyntax,
        span,
        format!("{what}: {}", problem.message),
    )
    .label(if unclosed {
        "this is never closed"
    } else {
        "the Scheme reader stopped here"
    });
    match problem.kind {
        ReadKind::Unclosed => d = d.hint("an expression is not closed: count the parentheses"),
        ReadKind::Mismatched => d = d.hint("parentheses do not balance here"),
        ReadKind::TooDeep | ReadKind::Other => {}
    }
    diags.push(d);
    false
}

/// The outermost `(` that is never closed, if any.
fn unclosed_open(text: &str) -> Option<Range<usize>> {
    let mut stack = Vec::new();
    for tok in tokens(text) {
        match tok {
            Token::Open(r) => stack.push(r),
            Token::Close(_) => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack.into_iter().next()
}

/// The byte range of the first parenthesis or quote-like prefix nested deeper than `limit`,
/// if any. steel's reader recurses on both: `''''x` nests like `((((x))))`.
pub fn too_deep(text: &str, limit: usize) -> Option<Range<usize>> {
    // Open parentheses (true) and prefixes waiting for their datum (false), innermost last.
    let mut open: Vec<bool> = Vec::new();
    for tok in tokens(text) {
        let completes = match &tok {
            Token::Open(r) | Token::Prefix(r) => {
                open.push(matches!(tok, Token::Open(_)));
                if open.len() > limit {
                    return Some(r.clone());
                }
                false
            }
            Token::Close(_) => {
                while open.pop() == Some(false) {}
                true
            }
            Token::Atom(_) | Token::String(_) => true,
        };
        if completes {
            while open.last() == Some(&false) {
                open.pop();
            }
        }
    }
    None
}

/// The first error steel's reader finds in `text`, with its byte range.
pub fn read_error(text: &str) -> Option<(String, Range<usize>)> {
    read_problem(text).map(|p| (p.message, p.range))
}

/// What kind of problem the reader met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadKind {
    /// The code ends inside an expression or a string.
    Unclosed,
    /// A closing parenthesis of the wrong kind.
    Mismatched,
    /// Expressions nested beyond [`voml_ir::MAX_NESTING`].
    TooDeep,
    /// Anything else (an unexpected character, a bad literal, the reader failing).
    Other,
}

/// The first problem steel's reader finds in `text`, with its kind and byte range.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadProblem {
    pub kind: ReadKind,
    pub message: String,
    pub range: Range<usize>,
}

/// Reads `text` as steel's reader does: `None` when it reads.
pub fn read_problem(text: &str) -> Option<ReadProblem> {
    // steel's reader recurses per parenthesis: refuse what would exhaust the stack.
    if let Some(range) = too_deep(text, voml_ir::MAX_NESTING) {
        return Some(ReadProblem {
            kind: ReadKind::TooDeep,
            message: format!("expressions nested more than {} deep", voml_ir::MAX_NESTING),
            range,
        });
    }
    // The reader is third-party code: a panic in it must become a diagnostic, not a crash.
    let text_owned = text.to_string();
    let _reading = voml_ir::steel_parse_lock();
    let result = std::panic::catch_unwind(move || {
        use steel_parser::parser::ParseError as P;
        let parser = steel_parser::parser::Parser::new(&text_owned, None);
        for expr in parser {
            if let Err(e) = expr {
                let span = e.span();
                let kind = match &e {
                    P::UnexpectedEOF(..) => ReadKind::Unclosed,
                    P::MismatchedParen(..) => ReadKind::Mismatched,
                    _ => ReadKind::Other,
                };
                return Some(ReadProblem {
                    kind,
                    message: describe_parse_error(&e),
                    range: span.start as usize..span.end as usize,
                });
            }
        }
        None
    });
    match result {
        Ok(p) => p.map(|p| ReadProblem {
            range: p.range.start.min(text.len())..p.range.end.min(text.len()),
            ..p
        }),
        Err(_) => Some(ReadProblem {
            kind: ReadKind::Other,
            message: "the Scheme reader failed on this code".to_string(),
            range: 0..text.len(),
        }),
    }
}

fn describe_parse_error(e: &steel_parser::parser::ParseError) -> String {
    use steel_parser::parser::ParseError as P;
    match e {
        P::MismatchedParen(paren, ..) => {
            format!("mismatched parenthesis, expected `{}`", paren.close())
        }
        P::UnexpectedEOF(..) => {
            "unexpected end of code (EOF): a `(` or a string is not closed".to_string()
        }
        P::UnexpectedChar(c, ..) => format!("unexpected character `{c}`"),
        P::SyntaxError(m, ..) => format!("syntax error: {m}"),
        P::ArityMismatch(m, ..) => format!("bad special form: {m}"),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn parameters_beyond_their_lists_say_which_list_and_how_long() {
        let fields = [2, 0];
        let ep = ParamLists {
            infos: 1,
            controls: 0,
            carets: 2,
            carets_are_views: false,
            fields: &fields,
        };
        assert_eq!(param_out_of_range(&Param::Info(0), &ep), None);
        assert_eq!(
            param_out_of_range(&Param::Info(1), &ep),
            Some(("$1".into(), "infos", 1))
        );
        assert_eq!(
            param_out_of_range(&Param::Control(0), &ep),
            Some(("%0".into(), "controls", 0))
        );
        assert_eq!(param_out_of_range(&Param::Field(0, 1), &ep), None);
        assert_eq!(
            param_out_of_range(&Param::Field(1, 0), &ep),
            Some(("^1/0".into(), "fields listed for this input", 0))
        );
        assert_eq!(
            param_out_of_range(&Param::Field(2, 0), &ep),
            Some(("^2/0".into(), "inputs", 2))
        );
        let ir = ParamLists {
            carets_are_views: true,
            carets: 1,
            ..ep
        };
        assert_eq!(
            param_out_of_range(&Param::Caret(1), &ir),
            Some(("^1".into(), "views", 1))
        );
    }

    use super::*;

    #[test]
    fn params_skip_strings_comments_and_characters() {
        let code = r#"(set! $0 (+ ^0/1 %2)) "$1" ; $3
#| $4 |# #\$ ^2 foo$5"#;
        let found: Vec<Param> = params_in(code).into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            found,
            vec![
                Param::Info(0),
                Param::Field(0, 1),
                Param::Control(2),
                Param::Caret(2)
            ]
        );
    }

    #[test]
    fn split_finds_top_level_expressions() {
        let text = "(vector-ref scalar 0) (vector-ref scalar 1)";
        let parts: Vec<&str> = split_exprs(text)
            .unwrap()
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(
            parts,
            vec!["(vector-ref scalar 0)", "(vector-ref scalar 1)"]
        );
        let text = "'(1 2) x #(3) \"s t\"";
        let parts: Vec<&str> = split_exprs(text)
            .unwrap()
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(parts, vec!["'(1 2)", "x", "#(3)", "\"s t\""]);
        assert_eq!(split_exprs("(a b"), None);
        assert_eq!(split_exprs("a)"), None);
    }

    #[test]
    fn steel_reader_reports_unbalanced_code() {
        assert!(read_error("(define (f x) (+ x 1))").is_none());
        let (msg, range) = read_error("(define (f x) (+ x 1)").unwrap();
        assert!(msg.contains("EOF"), "{msg}");
        assert!(range.start <= 21, "{range:?}");
        assert!(read_error("(f))").is_some());
    }

    #[test]
    fn substitution_keeps_the_map() {
        let mut code = Frag::default();
        code.push("(set! $0 1)", Span::new(0, 100, 111), true);
        let out = substitute(&code, |p, _| match p {
            Param::Info(0) => Some("info/x".into()),
            _ => None,
        });
        assert_eq!(out.text, "(set! info/x 1)");
        // The closing `1)` still maps to its source bytes.
        assert_eq!(out.source_of(13), Some(Span::new(0, 109, 110)));
        // The substituted name maps to the `$0`.
        assert_eq!(out.source_of(7), Some(Span::new(0, 106, 108)));
    }
}
