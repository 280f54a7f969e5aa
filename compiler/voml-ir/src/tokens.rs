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

impl Token {
    /// Where the token stands in the text.
    pub fn range(&self) -> Range<usize> {
        match self {
            Token::Atom(r)
            | Token::Open(r)
            | Token::Close(r)
            | Token::Prefix(r)
            | Token::String(r) => r.clone(),
        }
    }
}

/// What an atom is, as far as a reader of the structure can tell.
pub enum Atom<'a> {
    Literal,
    Name(&'a str),
}

/// An atom as steel's reader takes it (a literal: a boolean, a character, a number as
/// plainly written; or a name), or `None` when only steel's reader can tell (`#x10`,
/// `#:key`, `|a b|`, `+name`, ...).
pub fn atom(s: &str) -> Option<Atom<'_>> {
    let b = s.as_bytes();
    if s.starts_with("#\\") || matches!(s, "#t" | "#f" | "#true" | "#false") {
        return Some(Atom::Literal);
    }
    if b.is_empty() || b[0] == b'#' || s.contains(['|', '\\']) {
        return None;
    }
    let digit_at = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let numeric = digit_at(0)
        || (matches!(b[0], b'+' | b'-' | b'.') && digit_at(1))
        || (matches!(b[0], b'+' | b'-') && b.get(1) == Some(&b'.') && digit_at(2));
    if numeric {
        let rational = s.split_once('/').is_some_and(|(n, d)| {
            n.parse::<i64>().is_ok() && d.bytes().all(|c| c.is_ascii_digit()) && !d.is_empty()
        });
        return (s.parse::<f64>().is_ok() || rational).then_some(Atom::Literal);
    }
    // steel reads `+name` as `+` followed by `name`.
    if b[0] == b'+' && b.len() > 1 {
        return None;
    }
    Some(Atom::Name(s))
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
    Tokens::new(text).collect()
}

/// The tokens of a text one after the other, as [`tokens`] gives them all at once (for a
/// reader that keeps only some of them).
pub struct Tokens<'t> {
    b: &'t [u8],
    i: usize,
}

impl<'t> Tokens<'t> {
    pub fn new(text: &'t str) -> Self {
        Tokens {
            b: text.as_bytes(),
            i: 0,
        }
    }
}

impl Iterator for Tokens<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let b = self.b;
        let mut i = self.i;
        let token = loop {
            if i >= b.len() {
                self.i = i;
                return None;
            }
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
                    i += 2;
                    break Token::Prefix(i - 2..i);
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
                    i = i.min(b.len());
                    break Token::Atom(start..i);
                }
                b'#' if matches!(b.get(i + 1), Some(b'(' | b'[')) => {
                    i += 1;
                    break Token::Prefix(i - 1..i);
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
                    break Token::String(start..i);
                }
                b'(' | b'[' | b'{' => {
                    i += 1;
                    break Token::Open(i - 1..i);
                }
                b')' | b']' | b'}' => {
                    i += 1;
                    break Token::Close(i - 1..i);
                }
                b'\'' | b'`' => {
                    i += 1;
                    break Token::Prefix(i - 1..i);
                }
                b',' => {
                    let start = i;
                    i += if b.get(i + 1) == Some(&b'@') { 2 } else { 1 };
                    break Token::Prefix(start..i);
                }
                _ => {
                    let start = i;
                    while i < b.len() && !is_delimiter(b[i]) {
                        i += 1;
                    }
                    break Token::Atom(start..i);
                }
            }
        };
        self.i = i;
        Some(token)
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}
