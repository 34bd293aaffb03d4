//! Retrievers: where context packs come from.
//!
//! A retriever answers one page at a time (`offset`, `limit`) and is told how many tokens the
//! pack still has room for, so that it can stop early; the engine enforces the budget anyway.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a retriever reports when it fails (its own error type, boxed).
pub type RetrieverError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// One retrieval request (one page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextRetrieverRequest {
    /// The retriever's declared name.
    pub retriever: String,
    /// The query, rendered from the retriever's query template.
    pub query: String,
    /// How many results earlier pages returned: skip that many.
    pub offset: usize,
    /// The most blocks to return.
    pub limit: usize,
    /// Tokens the pack still has room for (its text, blocks joined by
    /// [`PACK_BLOCK_SEPARATOR`]); `None` when the context is unbounded.
    pub max_tokens: Option<usize>,
}

/// What joins the blocks of a pack into its text.
pub const PACK_BLOCK_SEPARATOR: &str = "\n\n";

/// One retrieved block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextPackBlock {
    /// The evidence id: blocks with an id already in the pack are skipped.
    pub id: String,
    /// The text inserted into the pack, verbatim.
    pub text: String,
    /// Anything else the retriever knows (score, source, line range).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, Value>,
}

impl ContextPackBlock {
    /// A block without metadata.
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
        ContextPackBlock { id: id.into(), text: text.into(), metadata: BTreeMap::new() }
    }

    /// This block with one more metadata entry.
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }
}

/// One page of results, best first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextPack {
    /// The blocks. Fewer than the request's `limit` means there are no more results.
    pub blocks: Vec<ContextPackBlock>,
}

impl ContextPack {
    /// A page of these blocks.
    pub fn new(blocks: Vec<ContextPackBlock>) -> Self {
        ContextPack { blocks }
    }

    /// The blocks joined as the engine joins them.
    pub fn text(&self) -> String {
        join_blocks(self.blocks.iter().map(|b| b.text.as_str()))
    }
}

/// Joins block texts with [`PACK_BLOCK_SEPARATOR`]: the one rendering of a pack.
pub fn join_blocks<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    texts.into_iter().collect::<Vec<_>>().join(PACK_BLOCK_SEPARATOR)
}

/// A source of context packs. Held as [`Arc<dyn RetrieverDyn>`](RetrieverDyn): a `Retriever` has
/// no `dyn` form (`retrieve` returns `impl Future`), and every one is a `RetrieverDyn`.
///
/// Implemented with a plain `async fn` (whose future must be `Send`, which the trait's
/// `impl Future + Send` makes the compiler check):
///
/// ```
/// use ctx::engine::{ContextPack, ContextPackBlock, ContextRetrieverRequest, Retriever, RetrieverError};
///
/// struct Faq;
///
/// impl Retriever for Faq {
///     async fn retrieve(&self, request: &ContextRetrieverRequest) -> Result<ContextPack, RetrieverError> {
///         Ok(ContextPack::new(vec![ContextPackBlock::new("faq-1", format!("About {}", request.query))]))
///     }
/// }
/// ```
///
/// The engine holds retrievers as `Arc<dyn RetrieverDyn>` ([`RetrieverDyn`]), which every
/// `Retriever` is.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `ctx::engine::Retriever`",
    label = "not a `Retriever`",
    note = "implement `Retriever` for it, with a plain `async fn retrieve`; the engine holds it as \
            `Arc<dyn RetrieverDyn>`"
)]
pub trait Retriever: Send + Sync {
    /// Returns the page `request.offset .. request.offset + request.limit` of results for
    /// `request.query`, ideally no more than `request.max_tokens` tokens of text.
    // rustc quotes the line of the return type when `dyn Retriever` is written: its comment says
    // what to write instead, short enough not to be cut.
    fn retrieve(
        &self,
        request: &ContextRetrieverRequest,
    ) -> impl Future<Output = Result<ContextPack, RetrieverError>> + Send; // no dyn Retriever: use dyn RetrieverDyn
}

/// The future [`RetrieverDyn::dyn_retrieve`] returns.
pub type RetrieveFuture<'a> = Pin<Box<dyn Future<Output = Result<ContextPack, RetrieverError>> + Send + 'a>>;

crate::dyn_twin::dyn_twin! {
    /// [`Retriever`] as a trait object (`Arc<dyn RetrieverDyn>`), as the engine holds it. Every
    /// `Retriever` implements it; implement `Retriever`, never this. `dyn RetrieverDyn` is a
    /// `Retriever` too.
    #[doc(alias = "dyn Retriever")]
    #[diagnostic::on_unimplemented(
        message = "`{Self}` does not implement `ctx::engine::Retriever`",
        label = "not a `Retriever`",
        note = "implement `Retriever` for it (never `RetrieverDyn`, which every `Retriever` has)"
    )]
    pub trait RetrieverDyn: Send + Sync {
        impl<R: Retriever>;
        async fn retrieve(&self, request: &ContextRetrieverRequest) -> Result<ContextPack, RetrieverError>
            => dyn_retrieve -> RetrieveFuture<'a>;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_text_joins_blocks_in_order() {
        let pack = ContextPack::new(vec![
            ContextPackBlock::new("a", "first"),
            ContextPackBlock::new("b", "second").with_metadata("score", 0.5),
        ]);
        assert_eq!(pack.text(), "first\n\nsecond");
        assert_eq!(pack.blocks[1].metadata.get("score"), Some(&Value::from(0.5)));
        assert_eq!(ContextPack::default().text(), "");
    }
}
