//! The language as a table, as the compiler reads it: the table itself is the vocabulary's
//! (`voml_ir::vocabulary::schema`), shared with the runtime and the tests, so that there is
//! exactly one.

pub use voml_ir::vocabulary::schema::*;
