pub use steel_parser::lexer::{OwnedTokenStream, TokenStream};
