//! The words of the VOML language that more than one part of VOML reads, written once so that
//! they cannot drift: what `voml check` accepts the runtime acts on, and what the trace reader
//! names the compiler understands. Depends on nothing; the compiler, the IR, the trace reader
//! and the low-level layer all read it. `tests/vocabulary.rs` walks the tables across them.
//!
//! - [`schema`]: the language as a table: elements, content, attributes with their kinds,
//!   required-ness and defaults, the enumerated words, and each primitive's procedure of the
//!   runtime's primitive API.
//! - [`limits`]: the numeric limits the compiler, the IR validator and the runtime share.
//! - colour names and their spelling rule; record- and event-type names and codes; the
//!   sound voices.

mod codes;
mod colours;
pub mod limits;
pub mod schema;
mod voices;

pub use codes::{
    event_type_code, event_type_name, record_type_code, record_type_name, record_type_names,
    CALLBACK_RECORD_TYPE,
};
pub use colours::{colour_key, colour_names, colour_rgb, is_colour_name, COLOURS, TRANSPARENT};
pub use voices::{voice, voice_names, VOICES, VOICE_ALIASES};
