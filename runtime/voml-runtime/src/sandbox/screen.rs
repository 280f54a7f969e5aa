//! Reads a program with steel's own lexer before the engine compiles it, and refuses every
//! name the engine would resolve outside the global environment or that is internal to
//! steel: module, macro and syntax forms ([`super::allow::RESERVED_FORMS`]), macros other
//! than the allowed ones, and names with steel's internal prefixes (`#%`, `%`, `##`, mangled
//! module names, `Engine::`). Public built-ins outside the allowlist need no screening: the
//! engine binds them to a procedure that refuses (see `confine`), so a VO may still name a
//! local variable `angle` or `command`.

use std::collections::HashSet;

use steel::parser::lexer::TokenStream;
use steel::parser::tokens::TokenType;

/// A refused name and where it stands in the program text (byte offsets).
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub start: usize,
    pub end: usize,
    pub message: String,
}

/// What the screen refuses besides the fixed rules: the engine's macros that are not on
/// the allowlist.
#[derive(Clone, Debug, Default)]
pub struct Screen {
    pub(crate) macros: HashSet<String>,
}

/// Whether `name` has one of steel's internal shapes.
pub fn is_internal(name: &str) -> bool {
    name.starts_with('#')
        || name.starts_with('%')
        || name.starts_with("__module")
        || name.starts_with("mangler")
        || name.contains("__%#__")
        || name.contains("::")
}

/// Whether code can name `name` at all: it reads as one identifier token of that name.
pub fn nameable(name: &str) -> bool {
    let mut tokens = TokenStream::new(name, false, None);
    matches!(
        (tokens.next(), tokens.next()),
        (Some(Ok(t)), None) if matches!(&t.ty, TokenType::Identifier(n) if n.resolve() == name)
    )
}

impl Screen {
    /// The first refused name of `text`, if any, or the first place where data nests deeper
    /// than [`voml_ir::MAX_NESTING`] (counting quote prefixes, which steel's reader recurses
    /// on like parentheses).
    pub fn check(&self, text: &str) -> Result<(), Refusal> {
        // Open parentheses (true) and pending quote prefixes (false), innermost last.
        let mut open: Vec<bool> = Vec::new();
        for token in TokenStream::new(text, false, None) {
            let Ok(token) = token else {
                // Lexical errors are the engine's to report, with their own location.
                continue;
            };
            let span = (token.span.start as usize, token.span.end as usize);
            let refuse = |message: String| {
                Err(Refusal {
                    start: span.0,
                    end: span.1,
                    message,
                })
            };
            let completes = match &token.ty {
                TokenType::OpenParen(..) => {
                    open.push(true);
                    false
                }
                TokenType::QuoteTick
                | TokenType::QuasiQuote
                | TokenType::Unquote
                | TokenType::UnquoteSplice
                | TokenType::DatumComment => {
                    open.push(false);
                    false
                }
                TokenType::CloseParen(_) => {
                    while open.pop() == Some(false) {}
                    true
                }
                TokenType::Comment => false,
                _ => true,
            };
            if completes {
                while open.last() == Some(&false) {
                    open.pop();
                }
            }
            if open.len() > voml_ir::MAX_NESTING {
                return refuse(format!(
                    "the code nests more than {} deep (parentheses and quotes)",
                    voml_ir::MAX_NESTING
                ));
            }
            match &token.ty {
                TokenType::Identifier(name) => {
                    let name = name.resolve();
                    if let Some(why) = self.why_refused(name) {
                        return refuse(format!(
                            "`{name}` is not available to visual objects ({why})"
                        ));
                    }
                }
                TokenType::Require => {
                    return refuse(
                        "`require` is not available to visual objects (no modules or files)".into(),
                    )
                }
                TokenType::DefineSyntax | TokenType::SyntaxRules => {
                    return refuse(format!(
                        "`{}` is not available to visual objects (no macros: write a procedure)",
                        token.source
                    ))
                }
                TokenType::QuoteSyntax
                | TokenType::QuasiQuoteSyntax
                | TokenType::UnquoteSyntax
                | TokenType::UnquoteSpliceSyntax => {
                    return refuse(format!(
                        "`{}` is not available to visual objects (no syntax objects)",
                        token.source
                    ))
                }
                TokenType::Return | TokenType::TestLet => {
                    return refuse(format!(
                        "`{}` is not available to visual objects (internal to the Scheme engine)",
                        token.source
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn why_refused(&self, name: &str) -> Option<&'static str> {
        if is_internal(name) {
            Some("a name internal to the Scheme engine")
        } else if super::allow::RESERVED_FORMS.contains(&name) {
            Some("no modules, macros, syntax objects or evaluation")
        } else if self.macros.contains(name) {
            Some("a Scheme macro outside VOML's allowlist; if it is a variable, rename it")
        } else {
            None
        }
    }
}
