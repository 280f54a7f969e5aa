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

use voml_ir::names_the_event;
use voml_ir::tokens::{Token, Tokens};

use crate::sandbox::Sandbox;

/// `text` with the event's elements read in place, or `None` when nothing is rewritten;
/// `sandbox` is the engine it is for (its globals are looked at only when `text` reads the
/// event at all).
pub fn rewrite(text: &str, sandbox: &Sandbox) -> Option<String> {
    if !text.contains("(current-event)") {
        return None;
    }
    let known = sandbox.global_names();
    // Every use of one of those names that means the engine's procedure shows up as a use of
    // a name defined nowhere when the walk is told they are not globals.
    let walk = crate::names::walk(text, &|name| known.contains(name) && !names_the_event(name))?;
    if walk
        .defined
        .iter()
        .any(|n| names_the_event(n) || n == "event-ref")
    {
        return None;
    }
    let global: HashSet<usize> = walk
        .unbound
        .iter()
        .filter(|u| names_the_event(&u.name))
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
        .any(|w| atom(&w[0]) == Some("set!") && atom(&w[1]).is_some_and(names_the_event))
    {
        return None;
    }
    let global_at = |t: &Token, name: &str| match t {
        Token::Atom(r) => &text[r.clone()] == name && global.contains(&r.start),
        _ => false,
    };
    // (start, end, K) of each expression to rewrite.
    let mut found: Vec<(usize, usize, u32)> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match element_read(text, &tokens[i..], &global_at) {
            Some((start, end, k, taken)) => {
                found.push((start, end, k));
                i += taken;
            }
            None => i += 1,
        }
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

/// The highest element of the event that `program` (as [`rewrite`] left `original`) reads,
/// when every read is an `(event-ref K)` of the rewrite: `original` calls no `event-ref` of
/// its own, and no `current-event` is left (nor the name in a comment or a string). At least
/// 2, the timestamp (which every record has read). `None`: any element may be read.
pub fn reach(original: &str, program: &str) -> Option<u32> {
    if original.contains("event-ref") || program.contains("current-event") {
        return None;
    }
    let mut highest = 2;
    for (at, call) in program.match_indices("(event-ref ") {
        let k = program[at + call.len()..].split(')').next()?.trim();
        highest = highest.max(k.parse::<u32>().ok()?);
    }
    Some(highest)
}

/// The expression of one element of the event that `tokens` begin with, if they do:
/// `(READER (current-event))` or `(list-ref (current-event) K)`, the names meaning the engine's
/// own (`global_at`), on one line without comments. Its start and end in `text`, `K`, and how
/// many tokens it is.
fn element_read(
    text: &str,
    t: &[Token],
    global_at: &dyn Fn(&Token, &str) -> bool,
) -> Option<(usize, usize, u32, usize)> {
    let [Token::Open(start), head @ Token::Atom(h), Token::Open(_), event, Token::Close(_), rest @ ..] =
        t
    else {
        return None;
    };
    let name = &text[h.clone()];
    if !(global_at(head, name) && global_at(event, "current-event")) {
        return None;
    }
    let (k, end, taken) = match (voml_ir::element_reader(name), rest) {
        (Some(k), [Token::Close(end), ..]) => (k, end.end, 6),
        (None, [Token::Atom(n), Token::Close(end), ..]) if name == "list-ref" => {
            let digits = &text[n.clone()];
            let k = digits
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| digits.parse::<u32>().ok())
                .flatten()
                .filter(|&k| k <= voml_ir::MAX_FIELD_POSITION)?;
            (k, end.end, 7)
        }
        _ => return None,
    };
    (!text[start.start..end].contains(['\n', '\r', ';', '#'])).then_some((
        start.start,
        end,
        k,
        taken,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(code: &str) -> String {
        format!("(define (f) {code})\n")
    }

    #[test]
    fn reads_of_one_element_become_event_ref_in_place() {
        let text = program(
            "(+ (car (current-event)) (list-ref (current-event) 12) (caddr (current-event)))",
        );
        let out = rewrite(&text, &crate::test_sandbox()).expect("rewritten");
        assert_eq!(out.len(), text.len());
        assert_eq!(
            out,
            program(
                "(+ (event-ref 0)         (event-ref 12)                (event-ref 2)          )"
            )
        );
    }

    #[test]
    fn what_the_program_reads_of_the_event_is_known_after_the_rewrite() {
        let sandbox = crate::test_sandbox();
        let reach = |code: &str| {
            let text = program(code);
            let program = rewrite(&text, &sandbox).unwrap_or_else(|| text.clone());
            super::reach(&text, &program)
        };
        assert_eq!(reach("(+ 1 2)"), Some(2));
        assert_eq!(reach("(car (current-event))"), Some(2));
        assert_eq!(
            reach("(+ (list-ref (current-event) 12) (cadddr (current-event)))"),
            Some(12)
        );
        // The whole list, a computed index, a read the rewrite leaves, `event-ref` called
        // by the program itself: any element.
        for code in [
            "(length (current-event))",
            "(list-ref (current-event) (+ 1 2))",
            "(let ((car cdr)) (car (current-event))) (cadr (current-event))",
            "(event-ref 3)",
            "(let ((i 9)) (event-ref i))",
        ] {
            assert_eq!(reach(code), None, "{code}");
        }
    }

    #[test]
    fn nothing_is_rewritten_where_the_meaning_could_differ() {
        let sandbox = crate::test_sandbox();
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
            assert_eq!(rewrite(&text, &sandbox), None, "{code}");
        }
        let defined = "(define (car x) x)\n(define (f) (car (current-event)))\n";
        assert_eq!(rewrite(defined, &sandbox), None);
        // Beside those, the others are still rewritten.
        let text = program("(let ((car cdr)) (car (current-event))) (cadr (current-event))");
        assert_eq!(
            rewrite(&text, &sandbox),
            Some(program(
                "(let ((car cdr)) (car (current-event))) (event-ref 1)         "
            ))
        );
    }
}
