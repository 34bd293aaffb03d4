//! Compaction: fewer tokens, same content.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::compact`.

mod compacted;
mod compactor;
pub mod dotnet;
mod emit;
pub mod prose;
mod registry;
pub mod sql;

pub use compacted::Compacted;
pub use compactor::{
    CodeCompactor, CompactError, CompactRequest, Compactor, FnCompactor, ProseCompactor, TruncateAfter,
    TruncateCompactor, compact,
};
pub use registry::{
    BUILTIN_COMPACTORS, BUILTIN_LANGUAGES, CompactorError, CompactorRegistry, NodeLanguage, TRUNCATE, is_language_name,
};

pub(crate) mod csharp;
mod msbuild;
pub(crate) mod razor;

/// The classification of a node's text, which `NodeLanguage::Code` holds.
pub use crate::classify::Language;
// How a node is classified decides which compactor runs: a compactor of a user's, or a test of
// what ctx will do with a text, asks the same functions.
pub use crate::classify::{classify, looks_like_sql_statement};
