//! The one [`Compactor`] trait, its request and error, and the built-in compactors.
//!
//! `manage_context_budget` (through [`CompactorRegistry`](super::CompactorRegistry)), the turn
//! ledger's partial-document policy and the context engine's packs all call this trait. What
//! they differ in is written in the request: `manage_context_budget` gives no `max_tokens` and
//! so asks only for what is certainly not meaning; the ledger and the engine give one and accept
//! that whatever is still over it is cut.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use super::compacted::{Compacted, guard_tokens};
use super::{Language, dotnet, prose, sql};
use crate::classify::classify;
use crate::codes::{Code, ErrorCode};
use crate::llm::ModelError;
use crate::state::NodeText;
use crate::tokens::{TokenCounter, TokenError};
use ctx_spec::lang::NodeLanguage;

/// One compaction: what to compact, what it is, and how small it must become.
///
/// Built with [`CompactRequest::new`] and the `with_*` methods, so that a field added later
/// breaks no caller.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CompactRequest<'a> {
    /// What is compacted, for messages: a node id, a document id, a pack name.
    pub id: &'a str,
    /// The text to compact.
    pub text: &'a str,
    /// Where the text comes from (a path), when known; it helps pick a syntax (`.cshtml`).
    pub path: Option<&'a str>,
    /// The language the caller classified the text as, when it did.
    pub language: Option<&'a NodeLanguage>,
    /// The most tokens the result may count, when the caller has a budget. `None` asks for a
    /// lossless compaction: only what is certainly not meaning may go.
    pub max_tokens: Option<usize>,
    /// The counter budgets are measured with.
    pub counter: &'a TokenCounter,
}

impl<'a> CompactRequest<'a> {
    /// A lossless compaction of `text` (named `id` in messages), without path or language.
    pub fn new(id: &'a str, text: &'a str, counter: &'a TokenCounter) -> Self {
        CompactRequest { id, text, path: None, language: None, max_tokens: None, counter }
    }

    /// The text's source path.
    #[must_use]
    pub fn with_path(mut self, path: Option<&'a str>) -> Self {
        self.path = path;
        self
    }

    /// The text's language, as the caller classified it.
    #[must_use]
    pub fn with_language(mut self, language: &'a NodeLanguage) -> Self {
        self.language = Some(language);
        self
    }

    /// A budget: the result must count at most `max_tokens`.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: usize) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }
}

/// Why a compaction failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompactError {
    /// Counting failed.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The model a summariser calls failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The model's window cannot hold even the summariser's instructions and the requested output.
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

/// Makes a text smaller: the one compactor trait of ctx.
///
/// **The contract.** Without [`CompactRequest::max_tokens`] a compactor is *lossless*: it
/// removes only what is certainly not meaning (a comment, whitespace no reader needs) and
/// changes no token of what remains; every built-in keeps that promise, and property tests
/// check it. With `max_tokens` the caller has a budget and accepts loss: the built-ins first
/// compact losslessly, then cut what is still over at a token boundary ([`TruncateCompactor`]
/// only cuts). Callers check the answer on the exact count: [`CompactorRegistry`] keeps the
/// input whenever the answer has more tokens, the context engine rejects an answer over its
/// budget, the turn ledger cuts it.
///
/// **Why the trait is synchronous.** Every compactor ctx has, built in or written by a user
/// (a YAML comment stripper, a code outline), is a pure function of its text, and two of its
/// three callers are synchronous: `manage_context_budget` is one step of the driver and the
/// turn ledger packs documents between model calls, and neither may need an async runtime. The
/// one compaction that waits on I/O is a model's summary; it is a separate async stage of the
/// context engine, [`Summarizer`](crate::engine::Summarizer), which the engine looks up by
/// name beside the registry. An async trait with a synchronous fast path would have let a
/// summariser into `manage_context_budget`'s registry and failed there at run time; this way the
/// compiler keeps it out, and a model-backed compaction is plugged in through the
/// [`ChatModel`](crate::llm::ChatModel) the summariser takes.
///
/// [`CompactorRegistry`]: super::CompactorRegistry
///
/// ```
/// use std::borrow::Cow;
/// use ctx::compact::{CompactError, CompactRequest, Compactor, CompactorRegistry};
/// use ctx::state::NodeText;
/// use ctx::tokens::{Encoding, TokenCounter};
///
/// /// YAML without its comment lines.
/// struct Yaml;
/// impl Compactor for Yaml {
///     fn compact<'t>(&self, request: &CompactRequest<'t>) -> Result<Cow<'t, str>, CompactError> {
///         let kept: Vec<&str> = request.text.lines().filter(|l| !l.trim_start().starts_with('#')).collect();
///         Ok(Cow::Owned(kept.join("\n")))
///     }
///     fn applies_to(&self, node: &NodeText) -> bool {
///         node.source().is_some_and(|p| p.ends_with(".yaml") || p.ends_with(".yml"))
///     }
/// }
///
/// let registry = CompactorRegistry::new().with("yaml", Yaml)?;
/// let node = NodeText::new("ci", "# build\nrun: cargo test").with_path("ci.yaml");
/// let language = registry.language_of(&node);
/// assert_eq!(language.name(), "yaml");
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// assert_eq!(registry.compact(&language, &node, &counter)?.text, "run: cargo test");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Compactor: Send + Sync {
    /// `request.text` compacted: borrowed when nothing was removed. With a `max_tokens`, the
    /// answer should count at most that many tokens.
    fn compact<'t>(&self, request: &CompactRequest<'t>) -> Result<Cow<'t, str>, CompactError>;

    /// Whether `node` is in this compactor's language, for `manage_context_budget`'s
    /// classification ([`CompactorRegistry::language_of`](super::CompactorRegistry::language_of)).
    /// By default no node is: the compactor is used only where it is named.
    fn applies_to(&self, node: &NodeText) -> bool {
        let _ = node;
        false
    }
}

/// `reduced` (a lossless compaction of `request.text`), cut to the request's budget if it has
/// one: kept only when it has fewer tokens than the text, then the longest token-boundary prefix
/// that fits.
fn fit<'t>(request: &CompactRequest<'t>, reduced: Cow<'t, str>) -> Result<Cow<'t, str>, CompactError> {
    let Some(max) = request.max_tokens else { return Ok(reduced) };
    let kept = match reduced {
        Cow::Borrowed(_) => Cow::Borrowed(request.text),
        Cow::Owned(text) => match guard_tokens(request.text, Cow::Owned(text), request.counter)? {
            c if c.changed => Cow::Owned(c.text),
            _ => Cow::Borrowed(request.text),
        },
    };
    cut_to(request.counter, kept, max)
}

/// `text`, or its longest token-boundary prefix of at most `max` tokens when it has more.
fn cut_to<'t>(counter: &TokenCounter, text: Cow<'t, str>, max: usize) -> Result<Cow<'t, str>, CompactError> {
    // `truncate_to` answers a prefix: the same length is the same text, kept without a copy.
    let cut = counter.truncate_to(&text, max)?;
    Ok(if cut.len() == text.len() { text } else { Cow::Owned(cut) })
}

/// Token-exact truncation: the longest token-boundary prefix that fits the budget. Without a
/// budget it returns the text unchanged (truncation is never lossless).
#[derive(Debug, Clone, Copy, Default)]
pub struct TruncateCompactor;

impl Compactor for TruncateCompactor {
    fn compact<'t>(&self, request: &CompactRequest<'t>) -> Result<Cow<'t, str>, CompactError> {
        fit(request, Cow::Borrowed(request.text))
    }
}

/// Code compaction: the comments and insignificant whitespace [`compact`]
/// removes, then, under a budget, the longest token-boundary prefix that fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeCompactor {
    /// The language, or `None` for the one the request names, else [`classify`]'s.
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

impl Compactor for CodeCompactor {
    fn compact<'t>(&self, request: &CompactRequest<'t>) -> Result<Cow<'t, str>, CompactError> {
        let language = self.language.unwrap_or_else(|| match request.language {
            Some(NodeLanguage::Code(code)) => *code,
            _ => classify(request.text, request.path),
        });
        fit(request, reduce(language, request.text, request.path))
    }
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

/// The document compactors `markdown`, `text` and `json` (see [`prose`]), then, under a budget,
/// the longest token-boundary prefix that fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProseCompactor {
    /// Markdown: trailing spaces and runs of blank lines folded, never inside a code fence.
    Markdown,
    /// Plain text: as markdown, and runs of spaces inside a line folded.
    Text,
    /// JSON: minified, key order kept; invalid JSON untouched.
    Json,
}

impl Compactor for ProseCompactor {
    fn compact<'t>(&self, request: &CompactRequest<'t>) -> Result<Cow<'t, str>, CompactError> {
        let reduced = match self {
            ProseCompactor::Markdown => prose::compact_markdown(request.text),
            ProseCompactor::Text => prose::compact_text(request.text),
            ProseCompactor::Json => prose::compact_json(request.text),
        };
        fit(request, reduced)
    }
}

/// A function as a compactor: the hook for compactors written as closures.
///
/// ```
/// use ctx::compact::{CompactRequest, Compactor, FnCompactor};
/// use ctx::tokens::{Encoding, TokenCounter};
///
/// let strip = FnCompactor::new(|r: &CompactRequest<'_>| Ok(r.text.replace("-- comment\n", "")));
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// let out = strip.compact(&CompactRequest::new("q", "-- comment\nSELECT 1", &counter))?;
/// assert_eq!(out, "SELECT 1");
/// # Ok::<(), ctx::compact::CompactError>(())
/// ```
pub struct FnCompactor<F>(pub F);

impl<F> FnCompactor<F>
where
    F: Fn(&CompactRequest<'_>) -> Result<String, CompactError> + Send + Sync,
{
    /// `f` as a compactor (the bound lets the closure's argument and error types be inferred).
    pub fn new(f: F) -> Self {
        FnCompactor(f)
    }
}

impl<F> fmt::Debug for FnCompactor<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnCompactor")
    }
}

impl<F> Compactor for FnCompactor<F>
where
    F: Fn(&CompactRequest<'_>) -> Result<String, CompactError> + Send + Sync,
{
    fn compact<'t>(&self, request: &CompactRequest<'t>) -> Result<Cow<'t, str>, CompactError> {
        let out = (self.0)(request)?;
        Ok(if out == request.text { Cow::Borrowed(request.text) } else { Cow::Owned(out) })
    }
}

/// Runs a compactor, then truncates its answer when it is still over the request's budget:
/// turns a compactor that only *reduces* text (comment stripping, whitespace folding) into one
/// that meets the budget, keeping as much of the reduced text as fits.
pub struct TruncateAfter(pub Arc<dyn Compactor>);

impl fmt::Debug for TruncateAfter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TruncateAfter(..)")
    }
}

impl Compactor for TruncateAfter {
    fn compact<'t>(&self, request: &CompactRequest<'t>) -> Result<Cow<'t, str>, CompactError> {
        let reduced = self.0.compact(request)?;
        match request.max_tokens {
            Some(max) => cut_to(request.counter, reduced, max),
            None => Ok(reduced),
        }
    }

    fn applies_to(&self, node: &NodeText) -> bool {
        self.0.applies_to(node)
    }
}

#[cfg(test)]
#[path = "compactor_tests.rs"]
mod tests;
