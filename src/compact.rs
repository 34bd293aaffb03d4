//! Compaction: fewer tokens, same content.
//!
//! Every compaction in ctx goes through one trait, [`Compactor`]: `manage_context_budget`'s
//! rules (through [`CompactorRegistry`], by language), the turn ledger's partial document and the
//! context engine's packs (by the name a policy gives). The registry starts with the built-in
//! compactors (`truncate`, `sql`, `dotnet`, `code`, `markdown`, `text`,
//! `json`) and takes the ones a user registers by name.
//!
//! [`sql`] and [`dotnet`] remove what a compiler ignores — comments, `#region` lines, indentation,
//! trailing blanks, blank lines — and nothing else: identifiers, keywords, string literals,
//! quoted identifiers and every line break that can matter are kept byte for byte. When a text
//! cannot be lexed with certainty (a dialect ambiguity, an unterminated literal), the uncertain
//! part is kept as it is. And a compacted text never counts more tokens than its input: the
//! result is counted, and the input is returned when compaction would not help.

#[doc(inline)]
pub use ctx_runtime::compact::{
    CompactError, CompactRequest, Compacted, Compactor, CompactorError, CompactorRegistry, FnCompactor, Language,
    NodeLanguage, classify, compact, looks_like_sql_statement,
};
#[doc(inline)]
pub use ctx_runtime::compact::{dotnet, sql};
