//! Scheme source split into the tokens that matter for reading its structure, without
//! touching strings or comments: what the compiler scans for formal parameters and loop marks,
//! and what the runtime's walk of a program's names reads.

use std::ops::Range;

/// A token of Scheme source that matters here.
#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    /// An atom (identifier, number, boolean, character...).
    Atom(Range<usize>),
    Open(Range<usize>),
    Close(Range<usize>),
    /// A quote-like prefix: `'`, `` ` ``, `,`, `,@`, `#`.
    Prefix(Range<usize>),
    String(Range<usize>),
}

fn is_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';' | b'\'' | b'`' | b','
        )
}

/// Splits Scheme text into tokens, skipping whitespace and comments. Never fails: whatever is
/// unterminated simply runs to the end (steel's reader reports it properly).
pub fn tokens(text: &str) -> Vec<Token> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            _ if c.is_ascii_whitespace() => i += 1,
            b';' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'#' if b.get(i + 1) == Some(&b'|') => {
                let mut depth = 1;
                i += 2;
                while i < b.len() && depth > 0 {
                    if b[i] == b'|' && b.get(i + 1) == Some(&b'#') {
                        depth -= 1;
                        i += 2;
                    } else if b[i] == b'#' && b.get(i + 1) == Some(&b'|') {
                        depth += 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
            }
            b'#' if b.get(i + 1) == Some(&b';') => {
                out.push(Token::Prefix(i..i + 2));
                i += 2;
            }
            b'#' if b.get(i + 1) == Some(&b'\\') => {
                // A character literal: `#\x`, `#\(`, `#\space`.
                let start = i;
                i += 2;
                if i < b.len() {
                    i += utf8_len(b[i]);
                    while i < b.len() && !is_delimiter(b[i]) {
                        i += 1;
                    }
                }
                out.push(Token::Atom(start..i.min(b.len())));
            }
            b'#' if matches!(b.get(i + 1), Some(b'(' | b'[')) => {
                out.push(Token::Prefix(i..i + 1));
                i += 1;
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
                out.push(Token::String(start..i));
            }
            b'(' | b'[' | b'{' => {
                out.push(Token::Open(i..i + 1));
                i += 1;
            }
            b')' | b']' | b'}' => {
                out.push(Token::Close(i..i + 1));
                i += 1;
            }
            b'\'' | b'`' => {
                out.push(Token::Prefix(i..i + 1));
                i += 1;
            }
            b',' => {
                let len = if b.get(i + 1) == Some(&b'@') { 2 } else { 1 };
                out.push(Token::Prefix(i..i + len));
                i += len;
            }
            _ => {
                let start = i;
                while i < b.len() && !is_delimiter(b[i]) {
                    i += 1;
                }
                out.push(Token::Atom(start..i));
            }
        }
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}
