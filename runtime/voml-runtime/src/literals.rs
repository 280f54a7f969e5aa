//! Large integer literals kept whole. steel 0.8.3 compiles `(+ x N)`, `(- x N)` and
//! `(<= x N)`, `x` a variable and `N` a non-negative integer literal, into one instruction
//! holding `N` in 24 bits, and cuts a larger `N` short: `(+ x 16777217)` adds 1,
//! `(- x 16777217)` subtracts 1. In the text the engine compiles, such an `N` is quoted,
//! `'N`: the same number, which the engine does not take as an immediate. The quote takes the
//! place of the space before `N`, so the text keeps its length and every place in it, and the
//! source map and steel's spans still hold.
//!
//! Only in calls of the engine's own `+`, `-` and `<=` (no definition of them, as the
//! program's walk ([`crate::names::walk`]) tells), which are code and not quoted data.

use std::collections::HashSet;

use voml_ir::tokens::{Token, Tokens};

use crate::sandbox::Sandbox;

/// The procedures steel compiles with an immediate operand.
const IMMEDIATE: [&str; 3] = ["+", "-", "<="];

/// The largest operand an immediate holds exactly.
const LARGEST_IMMEDIATE: u64 = (1 << 24) - 1;

/// `text` with the literals steel would cut short quoted, or `None` when there are none;
/// `sandbox` is the engine it is for (its globals are looked at only when `text` holds a
/// number of eight digits or more).
pub fn rewrite(text: &str, sandbox: &Sandbox) -> Option<String> {
    let long_number = text
        .as_bytes()
        .windows(8)
        .any(|w| w.iter().all(u8::is_ascii_digit));
    if !long_number {
        return None;
    }
    let known = sandbox.global_names();
    let immediate = |name: &str| IMMEDIATE.contains(&name);
    let walk = crate::names::walk(text, &|name| known.contains(name) && !immediate(name))?;
    if walk.defined.iter().any(|n| immediate(n)) {
        return None;
    }
    let calls: HashSet<usize> = walk
        .unbound
        .iter()
        .filter(|u| immediate(&u.name))
        .map(|u| u.at.start)
        .collect();
    let tokens: Vec<Token> = Tokens::new(text).collect();
    let bytes = text.as_bytes();
    let mut quote = Vec::new();
    for w in tokens.windows(5) {
        let [Token::Open(_), Token::Atom(head), Token::Atom(x), Token::Atom(n), Token::Close(_)] =
            w
        else {
            continue;
        };
        if !calls.contains(&head.start) || !cut_short(&text[n.clone()]) {
            continue;
        }
        // The character before the literal becomes its quote: a space or a tab after `x`.
        let before = n.start - 1;
        if before >= x.end && matches!(bytes[before], b' ' | b'\t') {
            quote.push(before);
        }
    }
    if quote.is_empty() {
        return None;
    }
    let mut out = bytes.to_vec();
    for at in quote {
        out[at] = b'\'';
    }
    // Only an ASCII space or tab was replaced, by an ASCII quote.
    String::from_utf8(out).ok()
}

/// Whether steel reads `atom` as a non-negative integer literal it would cut short.
fn cut_short(atom: &str) -> bool {
    let digits = atom.strip_prefix('+').unwrap_or(atom);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        // A literal beyond 64 bits is a big integer, which steel does not take as an
        // immediate.
        && digits
            .parse::<u64>()
            .is_ok_and(|n| n > LARGEST_IMMEDIATE && i64::try_from(n).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(code: &str) -> Option<String> {
        let text = format!("(define (f x y) {code})\n");
        rewrite(&text, &crate::test_sandbox()).map(|t| {
            assert_eq!(t.len(), text.len());
            t["(define (f x y) ".len()..t.len() - 2].to_string()
        })
    }

    #[test]
    fn literals_steel_would_cut_short_are_quoted_in_place() {
        assert_eq!(
            rewritten("(+ x 16777216)").as_deref(),
            Some("(+ x'16777216)")
        );
        assert_eq!(
            rewritten("(list (- x  +99999999) (<= y\t16777217))").as_deref(),
            Some("(list (- x '+99999999) (<= y'16777217))")
        );
        for untouched in [
            // Small enough, negative, beyond 64 bits, or not an immediate operand.
            "(+ x 16777215)",
            "(+ x -16777217)",
            "(+ x 99999999999999999999)",
            "(+ 16777217 x)",
            "(* x 16777217)",
            "(+ x y 16777217)",
            // Quoted data, a line break before the literal, a local `+`.
            "'(+ x 16777217)",
            "(quote (- x 16777217))",
            "(+ x\n16777217)",
            "(let ((+ list)) (+ x 16777217))",
        ] {
            assert_eq!(rewritten(untouched), None, "{untouched}");
        }
        // A program that defines `+` is left alone.
        let text = "(define (+ a b) a)\n(define (f x) (+ x 16777217))\n";
        assert_eq!(rewrite(text, &crate::test_sandbox()), None);
    }
}
