//! Compaction: fewer tokens, same content.
//!
//! Every compaction in ctx goes through one trait, [`Compactor`]: `manage_context_budget`'s
//! rules (through [`CompactorRegistry`], by language), the turn ledger's partial document and the
//! context engine's packs (by the name a policy gives). The registry starts with the built-in
//! compactors ([`BUILTIN_COMPACTORS`]: `truncate`, `sql`, `dotnet`, `code`, `markdown`, `text`,
//! `json`) and takes the ones a user registers by name.
//!
//! [`sql`] and [`dotnet`] remove what a compiler ignores — comments, `#region` lines, indentation,
//! trailing blanks, blank lines — and nothing else: identifiers, keywords, string literals,
//! quoted identifiers and every line break that can matter are kept byte for byte. When a text
//! cannot be lexed with certainty (a dialect ambiguity, an unterminated literal), the uncertain
//! part is kept as it is. And a compacted text never counts more tokens than its input: the
//! result is counted, and the input is returned when compaction would not help.

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
