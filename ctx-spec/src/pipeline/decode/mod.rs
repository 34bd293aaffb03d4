//! One decoder for every front end: the `pipeline!` macro (and `context_engine!`) and the YAML
//! reader each turn what they read into the same located [`Value`] tree, and [`decode_step`]
//! makes a step of it, driven by the schema rows of
//! [`STEP_SCHEMAS`](super::schema::STEP_SCHEMAS) — [`read_engine`] the context engine's
//! declarations, by the rows of [`schema::engine`](super::schema::engine) — with one set of
//! messages and codes for unknown, missing, malformed and wrong-type keys.
//!
//! Decoding never stops at the first problem: a value that cannot be read is reported, its path
//! is poisoned and a placeholder takes its place, so the caller still gets a whole definition
//! and can run the validation rules on it, dropping the issues at poisoned paths (they would only
//! echo the problem already reported).

mod block;
mod blocks;
mod decoder;
mod engine;
mod mcp;
mod named;
mod steps;
mod value;

#[cfg(test)]
mod tests;

pub use block::Block;
pub use blocks::{read_model, read_models, read_settings};
pub use decoder::{AliasUse, DecodeIssue, Decoder, Dialect};
pub use engine::read_engine;
pub use steps::{decode_keys, decode_step, kinds, read_step};
pub use value::{Kind, Loc, Value, Word};
