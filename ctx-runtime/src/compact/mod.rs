//! Compaction: fewer tokens, same content.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::compact`.

mod compactor;
pub mod dotnet;
mod emit;
pub mod prose;
mod registry;
pub mod sql;

pub use compactor::{
    CodeCompactor, CompactError, CompactRequest, Compactor, FnCompactor, ProseCompactor, TruncateAfter,
    TruncateCompactor,
};
pub use registry::{
    BUILTIN_COMPACTORS, BUILTIN_LANGUAGES, CompactorError, CompactorRegistry, NodeLanguage, TRUNCATE, is_language_name,
};

pub(crate) mod csharp;
mod msbuild;
pub(crate) mod razor;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// The classification of a node's text, which `NodeLanguage::Code` holds.
pub use crate::classify::Language;
// How a node is classified decides which compactor runs: a compactor of a user's, or a test of
// what ctx will do with a text, asks the same functions.
pub use crate::classify::{classify, looks_like_sql_statement};
use crate::tokens::TokenCounter;
use crate::tokens::TokenError;

/// The result of compacting one text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Compacted {
    /// The compacted text, or the input when compaction did not reduce the token count.
    pub text: String,
    /// Tokens of the input.
    pub tokens_before: usize,
    /// Tokens of [`Compacted::text`]; never more than `tokens_before`.
    pub tokens_after: usize,
    /// Whether [`Compacted::text`] differs from the input.
    pub changed: bool,
}

/// Compacts `text` by the rules of its language (`path` helps pick the .NET syntax). `Unknown`
/// texts are returned unchanged, with their token count.
pub fn compact(
    language: Language,
    text: &str,
    path: Option<&str>,
    counter: &TokenCounter,
) -> Result<Compacted, TokenError> {
    guard_tokens(text, reduce(language, text, path), counter)
}

/// `text` with what the rules of `language` remove removed, uncounted: borrowed when nothing was.
pub(crate) fn reduce<'t>(language: Language, text: &'t str, path: Option<&str>) -> Cow<'t, str> {
    match language {
        Language::Sql => sql::strip(text),
        Language::Dotnet | Language::DotnetWithSql => dotnet::reduce(text, path),
        Language::Unknown => Cow::Borrowed(text),
    }
}

/// Keeps `stripped` only when it has no more tokens than `original`.
pub(crate) fn guard_tokens(
    original: &str,
    stripped: Cow<'_, str>,
    counter: &TokenCounter,
) -> Result<Compacted, TokenError> {
    let before = counter.count(original)?;
    let unchanged =
        || Compacted { text: original.to_owned(), tokens_before: before, tokens_after: before, changed: false };
    match stripped {
        Cow::Borrowed(_) => Ok(unchanged()),
        Cow::Owned(text) => match counter.count_up_to(&text, before)? {
            Some(after) => Ok(Compacted { text, tokens_before: before, tokens_after: after, changed: true }),
            None => Ok(unchanged()),
        },
    }
}
