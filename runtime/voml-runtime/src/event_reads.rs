//! One element of the event, read without making the event's list: the text the engine
//! compiles has `(list-ref (current-event) K)`, `(car (current-event))`, `(cadr ...)`,
//! `(caddr ...)` and `(cadddr ...)` turned into `(event-ref K)`, the same element taken
//! from the record itself. The list `(current-event)` gives is made anew for each record
//! (about a quarter of a count's time, where a condition part reads one field of each of
//! 600,000 records).
//!
//! Only where the meaning is certain: the names are the engine's own there (no top-level
//! definition, no `set!`, no local binding of them around the expression, as the program's
//! walk ([`crate::names::walk`]) tells), `K` is a plain integer, and the expression lies on
//! one line without comments. The text keeps its length and every place in it (the call is
//! padded with spaces), so what the source map says of a place still holds, and an error in
//! `(event-ref K)` points where the expression was. The runtime keeps the rewritten program
//! as its visual object's ([`crate::Runtime::vo`]).

use std::collections::HashSet;

use voml_ir::tokens::{Token, Tokens};

/// The names a rewritten expression rests on.
const NAMES: [&str; 6] = [
    "car",
    "cadr",
    "caddr",
    "cadddr",
    "list-ref",
    "current-event",
];

/// `text` with the event's elements read in place, or `None` when nothing is rewritten;
/// `known` tells the engine's globals.
pub fn rewrite(text: &str, known: &dyn Fn(&str) -> bool) -> Option<String> {
    if !text.contains("(current-event)") {
        return None;
    }
    // Every use of one of NAMES that means the engine's procedure shows up as a use of a
    // name defined nowhere when the walk is told those are not globals.
    let walk = crate::names::walk(text, &|name| known(name) && !NAMES.contains(&name))?;
    if NAMES
        .iter()
        .chain(&["event-ref"])
        .any(|n| walk.defined.contains(*n))
    {
        return None;
    }
    let global: HashSet<usize> = walk
        .unbound
        .iter()
        .filter(|u| NAMES.contains(&u.name.as_str()))
        .map(|u| u.at.start)
        .collect();
    let tokens: Vec<Token> = Tokens::new(text).collect();
    let atom = |t: &Token| match t {
        Token::Atom(r) => Some(&text[r.clone()]),
        _ => None,
    };
    // `(set! car ...)` anywhere: leave everything to the engine.
    if tokens
        .windows(2)
        .any(|w| atom(&w[0]) == Some("set!") && atom(&w[1]).is_some_and(|n| NAMES.contains(&n)))
    {
        return None;
    }
    let global_at = |t: &Token, name: &str| match t {
        Token::Atom(r) => &text[r.clone()] == name && global.contains(&r.start),
        _ => false,
    };
    let open = |t: &Token| matches!(t, Token::Open(_));
    let close = |t: &Token| matches!(t, Token::Close(_));
    // (start, end, K) of each expression to rewrite.
    let mut found: Vec<(usize, usize, u32)> = Vec::new();
    let mut i = 0;
    while i + 5 < tokens.len() {
        let t = &tokens[i..];
        let Token::Open(start) = &t[0] else {
            i += 1;
            continue;
        };
        // (HEAD (current-event) ...
        if !(open(&t[2]) && global_at(&t[3], "current-event") && close(&t[4])) {
            i += 1;
            continue;
        }
        let head = atom(&t[1]).unwrap_or("");
        let fixed = match head {
            "car" => Some(0),
            "cadr" => Some(1),
            "caddr" => Some(2),
            "cadddr" => Some(3),
            _ => None,
        };
        let (k, end) = match (fixed, &t[5]) {
            (Some(k), Token::Close(end)) if global_at(&t[1], head) => (k, end.end),
            (None, Token::Atom(n)) if head == "list-ref" && global_at(&t[1], head) => {
                let digits = &text[n.clone()];
                let k = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| digits.parse::<u32>().ok())
                    .flatten()
                    .filter(|&k| k <= voml_ir::MAX_FIELD_POSITION);
                match (k, t.get(6)) {
                    (Some(k), Some(Token::Close(end))) => (k, end.end),
                    _ => {
                        i += 1;
                        continue;
                    }
                }
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let original = &text[start.start..end];
        if original.contains(['\n', '\r', ';', '#']) {
            i += 1;
            continue;
        }
        found.push((start.start, end, k));
        i += if fixed.is_some() { 6 } else { 7 };
    }
    if found.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end, k) in found {
        out.push_str(&text[copied..start]);
        let call = format!("(event-ref {k})");
        out.push_str(&call);
        // The shortest expression rewritten, `(car (current-event))`, is longer than the
        // longest call, `(event-ref 999999)`.
        out.extend(std::iter::repeat_n(' ', (end - start) - call.len()));
        copied = end;
    }
    out.push_str(&text[copied..]);
    debug_assert_eq!(out.len(), text.len());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The globals of the engine visible-object code runs in.
    fn known() -> impl Fn(&str) -> bool {
        std::env::set_var("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"));
        let globals = crate::vo_sandbox()
            .expect("the VO engine builds")
            .global_names();
        move |name| globals.contains(name)
    }

    fn program(code: &str) -> String {
        format!("(define (f) {code})\n")
    }

    #[test]
    fn reads_of_one_element_become_event_ref_in_place() {
        let text = program(
            "(+ (car (current-event)) (list-ref (current-event) 12) (caddr (current-event)))",
        );
        let out = rewrite(&text, &known()).expect("rewritten");
        assert_eq!(out.len(), text.len());
        assert_eq!(
            out,
            program(
                "(+ (event-ref 0)         (event-ref 12)                (event-ref 2)          )"
            )
        );
    }

    #[test]
    fn nothing_is_rewritten_where_the_meaning_could_differ() {
        let known = known();
        for code in [
            // A local `car`, a redefined `list-ref`, an assigned `current-event`.
            "(let ((car cdr)) (car (current-event)))",
            "(lambda (list-ref) (list-ref (current-event) 3))",
            "(set! car cdr) (car (current-event))",
            // Quoted data, a computed index, a line break, a comment.
            "'(car (current-event))",
            "(list-ref (current-event) (+ 1 2))",
            "(list-ref (current-event) -1)",
            "(list-ref (current-event)\n 3)",
            "(car ; the type\n (current-event))",
            // Not one element.
            "(cdr (current-event))",
            "(current-event)",
        ] {
            let text = program(code);
            assert_eq!(rewrite(&text, &known), None, "{code}");
        }
        let defined = "(define (car x) x)\n(define (f) (car (current-event)))\n";
        assert_eq!(rewrite(defined, &known), None);
        // Beside those, the others are still rewritten.
        let text = program("(let ((car cdr)) (car (current-event))) (cadr (current-event))");
        assert_eq!(
            rewrite(&text, &known),
            Some(program(
                "(let ((car cdr)) (car (current-event))) (event-ref 1)         "
            ))
        );
    }
}
