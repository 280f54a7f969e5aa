pub use steel_gen::OpCode;
