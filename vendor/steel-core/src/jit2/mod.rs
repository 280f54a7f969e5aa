pub mod cgen;
pub mod sig;
pub mod value;
