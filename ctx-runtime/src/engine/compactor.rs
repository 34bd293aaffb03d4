//! Compactors: make a text fit a token budget.
//!
//! The engine calls a compactor with the text that does not fit and the exact number of tokens
//! it may have; it checks the answer with the counter and rejects one that is too long. The
//! registry maps names (as written in `policy.compactor`) to implementations. Built in:
//! `truncate`, and `sql`, `dotnet` and `code` ([`CodeCompactor`]: the lossless code compaction
//! of [`crate::compact`], then truncation of what still does not fit). The summarising compactor
//! ([`SummarizingCompactor`](super::SummarizingCompactor)) needs a model and is registered by
//! name; so are compactors written as plain functions ([`FnCompactor`], [`TruncateAfter`]).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

use crate::classify::{Language, classify};
use crate::codes::{Code, ErrorCode};
use crate::llm::ModelError;
use crate::tokens::TokenCounter;
use crate::tokens::TokenError;

pub use ctx_spec::engine::{BUILTIN_COMPACTORS, TRUNCATE};

/// One compaction.
#[derive(Debug, Clone, Copy)]
pub struct CompactionRequest<'a> {
    /// The text to compact.
    pub text: &'a str,
    /// The most tokens the result may count (on its own).
    pub max_tokens: usize,
    /// The counter the budget is measured with.
    pub counter: &'a TokenCounter,
    /// What is being compacted (a pack name), for the compactor's own messages.
    pub label: &'a str,
}

/// Why a compactor failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompactError {
    /// Counting failed.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The model a compactor calls failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The model's window cannot hold even the compactor's instructions and the requested output.
    #[error(
        "the model's context window of {window} tokens cannot hold the instructions ({prompt_tokens} tokens) \
         plus {output_tokens} output tokens"
    )]
    WindowTooSmall {
        /// The window.
        window: usize,
        /// Tokens of the request without the text.
        prompt_tokens: usize,
        /// The output tokens asked for.
        output_tokens: usize,
    },
    /// Any other failure, described.
    #[error("{0}")]
    Other(String),
}

impl ErrorCode for CompactError {
    fn code(&self) -> Code {
        match self {
            CompactError::Token(e) => e.code(),
            CompactError::Model(e) => e.code(),
            CompactError::WindowTooSmall { .. } => Code::CompactorWindowTooSmall,
            CompactError::Other(_) => Code::CompactorFailed,
        }
    }
}

/// Shrinks a text to at most `max_tokens` tokens.
#[async_trait]
pub trait Compactor: Send + Sync {
    /// The compacted text; it must count at most `request.max_tokens` with `request.counter`.
    async fn compact(&self, request: CompactionRequest<'_>) -> Result<String, CompactError>;
}

/// Token-exact truncation: the longest token-boundary prefix that fits.
#[derive(Debug, Clone, Copy, Default)]
pub struct TruncateCompactor;

#[async_trait]
impl Compactor for TruncateCompactor {
    async fn compact(&self, request: CompactionRequest<'_>) -> Result<String, CompactError> {
        Ok(request.counter.truncate_to(request.text, request.max_tokens)?)
    }
}

/// Code compaction: comments and insignificant whitespace removed by [`crate::compact`] (never
/// more tokens than the input), then the longest token-boundary prefix that fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeCompactor {
    /// The language, or `None` to classify each text with [`crate::classify::classify`].
    pub language: Option<Language>,
}

impl CodeCompactor {
    /// For SQL.
    pub const SQL: CodeCompactor = CodeCompactor { language: Some(Language::Sql) };
    /// For .NET (C#, Razor, MSBuild).
    pub const DOTNET: CodeCompactor = CodeCompactor { language: Some(Language::Dotnet) };
    /// For whichever of the two each text is (anything else is only truncated).
    pub const DETECT: CodeCompactor = CodeCompactor { language: None };
}

#[async_trait]
impl Compactor for CodeCompactor {
    async fn compact(&self, request: CompactionRequest<'_>) -> Result<String, CompactError> {
        let language = self.language.unwrap_or_else(|| classify(request.text, None));
        let stripped = crate::compact::compact(language, request.text, None, request.counter)?;
        Ok(request.counter.truncate_to(&stripped.text, request.max_tokens)?)
    }
}

/// A synchronous function as a compactor: the hook for compactors written as plain functions
/// (the SQL/.NET compactors of `ctx::compact`, for instance).
pub struct FnCompactor<F>(pub F);

impl<F> fmt::Debug for FnCompactor<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnCompactor")
    }
}

#[async_trait]
impl<F> Compactor for FnCompactor<F>
where
    F: Fn(CompactionRequest<'_>) -> Result<String, CompactError> + Send + Sync,
{
    async fn compact(&self, request: CompactionRequest<'_>) -> Result<String, CompactError> {
        (self.0)(request)
    }
}

/// Runs a compactor, then truncates its result when it is still over budget: turns a
/// compactor that only *reduces* text (comment stripping, whitespace folding) into one that
/// meets the budget, keeping as much of the reduced text as fits.
pub struct TruncateAfter(pub Arc<dyn Compactor>);

impl fmt::Debug for TruncateAfter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TruncateAfter(..)")
    }
}

#[async_trait]
impl Compactor for TruncateAfter {
    async fn compact(&self, request: CompactionRequest<'_>) -> Result<String, CompactError> {
        let reduced = self.0.compact(request).await?;
        Ok(request.counter.truncate_to(&reduced, request.max_tokens)?)
    }
}

/// Compactors by name, starting with [`BUILTIN_COMPACTORS`].
#[derive(Clone)]
pub struct CompactorRegistry {
    entries: BTreeMap<String, Arc<dyn Compactor>>,
}

impl fmt::Debug for CompactorRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.entries.keys()).finish()
    }
}

impl Default for CompactorRegistry {
    fn default() -> Self {
        let mut entries: BTreeMap<String, Arc<dyn Compactor>> = BTreeMap::new();
        entries.insert(TRUNCATE.to_owned(), Arc::new(TruncateCompactor));
        entries.insert("sql".to_owned(), Arc::new(CodeCompactor::SQL));
        entries.insert("dotnet".to_owned(), Arc::new(CodeCompactor::DOTNET));
        entries.insert("code".to_owned(), Arc::new(CodeCompactor::DETECT));
        CompactorRegistry { entries }
    }
}

impl CompactorRegistry {
    /// A registry holding the built-in compactors.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers (or replaces) the compactor `name`.
    pub fn register(&mut self, name: impl Into<String>, compactor: Arc<dyn Compactor>) -> &mut Self {
        self.entries.insert(name.into(), compactor);
        self
    }

    /// The compactor `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Compactor>> {
        self.entries.get(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    fn counter() -> TokenCounter {
        TokenCounter::for_encoding(Encoding::Cl100kBase)
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().map(|rt| rt.block_on(f)).unwrap()
    }

    #[test]
    fn truncate_is_token_exact() {
        let c = counter();
        let text = "alpha beta gamma delta epsilon zeta eta theta";
        for max in 0..=c.count(text).unwrap() + 1 {
            let request = CompactionRequest { text, max_tokens: max, counter: &c, label: "t" };
            let out = block_on(TruncateCompactor.compact(request)).unwrap();
            assert!(c.count(&out).unwrap() <= max);
            assert!(text.starts_with(&out));
            assert_eq!(c.count(&out).unwrap(), max.min(c.count(text).unwrap()), "max {max}");
        }
    }

    #[test]
    fn truncate_after_enforces_a_reducing_compactor() {
        let c = counter();
        let strip = FnCompactor(|r: CompactionRequest<'_>| Ok(r.text.replace("-- comment\n", "")));
        let text = "-- comment\nSELECT a, b, c FROM t WHERE a = 1 AND b = 2";
        let request = CompactionRequest { text, max_tokens: 4, counter: &c, label: "sql" };
        let reduced = block_on(strip.compact(request)).unwrap();
        assert!(c.count(&reduced).unwrap() > 4, "the plain function only reduces");
        let enforced = block_on(TruncateAfter(Arc::new(strip)).compact(request)).unwrap();
        assert_eq!(c.count(&enforced).unwrap(), 4);
        assert!(enforced.starts_with("SELECT"), "{enforced}");
    }

    #[test]
    fn registry_has_the_builtins_and_takes_more() {
        let mut registry = CompactorRegistry::new();
        assert_eq!(registry.names().collect::<Vec<_>>(), ["code", "dotnet", "sql", "truncate"]);
        registry.register("mine", Arc::new(FnCompactor(|r: CompactionRequest<'_>| Ok(r.text.to_owned()))));
        assert!(registry.get("mine").is_some());
        assert!(registry.get("summarize").is_none());
    }

    #[test]
    fn code_compactors_strip_before_they_cut() {
        let c = counter();
        let sql = "-- monthly totals\nSELECT   customer_id,\n         SUM(total)   AS total   -- gross\n\
                   FROM     invoices\n\n\nGROUP BY customer_id;";
        let stripped = crate::compact::sql::compact(sql, &c).unwrap();
        assert!(stripped.changed && !stripped.text.contains("--"));
        for compactor in [CodeCompactor::SQL, CodeCompactor::DETECT] {
            let roomy = CompactionRequest { text: sql, max_tokens: 1_000, counter: &c, label: "q" };
            assert_eq!(block_on(compactor.compact(roomy)).unwrap(), stripped.text);
            let tight = CompactionRequest { max_tokens: 6, ..roomy };
            let out = block_on(compactor.compact(tight)).unwrap();
            assert_eq!(c.count(&out).unwrap(), 6);
            assert!(stripped.text.starts_with(&out), "{out:?}");
        }
        let csharp = "// totals\npublic int Total() {\n    return 1; // one\n}";
        let request = CompactionRequest { text: csharp, max_tokens: 1_000, counter: &c, label: "cs" };
        let out = block_on(CodeCompactor::DOTNET.compact(request)).unwrap();
        assert!(!out.contains("// one") && out.contains("return 1;"), "{out:?}");
    }
}
