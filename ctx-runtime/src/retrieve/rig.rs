//! [`RigIndex`]: any [rig](https://docs.rs/rig-core) vector-store index as a pipeline's retrieval
//! backend (feature `rig`): `search_nodes` ranks documents by embedding similarity in the store,
//! `fetch_node_texts` loads their texts, and the context engine's retrievers page through the
//! same ranking. The embeddings are the index's own: rig embeds the query with the embedding
//! model the index was built with (any OpenAI-compatible `/v1/embeddings` endpoint through rig's
//! OpenAI provider and a base URL, or any other rig embedding provider).
//!
//! ```no_run
//! # use ctx::llm::rig::rig_core::vector_store::VectorStoreIndex;
//! # fn demo(index: impl VectorStoreIndex) {
//! use ctx::pipeline::StepEnv;
//! use ctx::retrieve::RigIndex;
//!
//! // The stored documents are JSON objects with their text in `content`.
//! let index = RigIndex::new(index).text_field("content");
//! let env = StepEnv::builder().search(&index).store(&index).build();
//! # let _ = env;
//! # }
//! ```
//!
//! # What is counted
//!
//! Nothing changes for budgeting: `fetch_node_texts` counts every text this index returns with
//! the pipeline's counter and keeps them within the step's `evidence_tokens` exactly as for
//! [`Bm25Index`](super::Bm25Index) (truncating or skipping, every case in the step's report), and
//! `manage_context_budget` counts them again as it renders them. The vector store is never asked
//! how long a text is.
//!
//! # Texts by id
//!
//! A vector-store index answers a query with the best documents, whole; it has no lookup by id.
//! So `search` keeps the texts of the documents it returned (the last [`RigIndex::capacity`]
//! of them, shared by concurrent runs) and `texts` answers from them. An id this index did not
//! return recently (a run resumed from a snapshot taken in another process, say) has no text
//! here: `fetch_node_texts` reports it as not found rather than guessing. A vector store knows no
//! call graph, so every node has no dependencies.

use std::collections::BTreeMap;

use quick_cache::sync::Cache;
use rig_core::vector_store::{VectorSearchRequest, VectorStoreIndex};
use serde_json::Value;

use crate::engine::{ContextPack, ContextPackBlock, ContextRetrieverRequest, Retriever, RetrieverError};
use crate::pipeline::{BoxError, NodeSearch, NodeStore};
use crate::state::{NodeText, SearchHit};

/// The number of fetched texts [`RigIndex`] keeps by default: far more than a pipeline's
/// `top_k`, for many concurrent runs.
pub const DEFAULT_CAPACITY: usize = 4_096;

/// A rig vector-store index serving `search_nodes`, `fetch_node_texts` and the context engine:
/// see the [module documentation](self).
pub struct RigIndex<I> {
    index: I,
    text_field: String,
    path_field: Option<String>,
    threshold: Option<f64>,
    capacity: usize,
    texts: Cache<String, NodeText>,
}

impl<I> std::fmt::Debug for RigIndex<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RigIndex")
            .field("text_field", &self.text_field)
            .field("path_field", &self.path_field)
            .field("threshold", &self.threshold)
            .field("kept_texts", &self.texts.len())
            .finish_non_exhaustive()
    }
}

impl<I: VectorStoreIndex> RigIndex<I> {
    /// Serves `index`, whose stored documents are JSON objects with their text in the string
    /// field `text` (see [`Self::text_field`]), or JSON strings that are the text itself.
    pub fn new(index: I) -> Self {
        RigIndex {
            index,
            text_field: "text".to_owned(),
            path_field: None,
            threshold: None,
            capacity: DEFAULT_CAPACITY,
            texts: Cache::new(DEFAULT_CAPACITY),
        }
    }

    /// The document field that holds the text (default `text`). The document's other fields
    /// become the node's metadata, with the search's `score`.
    #[must_use]
    pub fn text_field(mut self, field: impl Into<String>) -> Self {
        self.text_field = field.into();
        self
    }

    /// The document field that holds the node's path or source name, when there is one.
    #[must_use]
    pub fn path_field(mut self, field: Option<String>) -> Self {
        self.path_field = field;
        self
    }

    /// The least similarity a hit must have, in the store's own scale (rig's `threshold`).
    #[must_use]
    pub fn threshold(mut self, threshold: Option<f64>) -> Self {
        self.threshold = threshold;
        self
    }

    /// How many returned texts are kept for `fetch_node_texts` (default [`DEFAULT_CAPACITY`];
    /// at least 1).
    #[must_use]
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self.texts = Cache::new(self.capacity);
        self
    }

    /// The rig index searched.
    pub fn index(&self) -> &I {
        &self.index
    }

    /// The best `samples` documents for `query`, best first, as nodes with their scores; each is
    /// kept for [`NodeStore::texts`].
    pub async fn search_texts(&self, query: &str, samples: usize) -> Result<Vec<(NodeText, f64)>, BoxError> {
        let builder = VectorSearchRequest::<I::Filter>::builder()
            .query(query)
            .samples(u64::try_from(samples).unwrap_or(u64::MAX));
        let request = match self.threshold {
            Some(threshold) => builder.threshold(threshold).build(),
            None => builder.build(),
        };
        let found = self.index.top_n::<Value>(request).await?;
        let mut nodes = Vec::with_capacity(found.len());
        for hit in found {
            let node = self.node(&hit.id, hit.document, hit.score)?;
            self.texts.insert(hit.id, node.clone());
            nodes.push((node, hit.score));
        }
        Ok(nodes)
    }

    /// The node of the stored `document` found under `id`.
    fn node(&self, id: &str, document: Value, score: f64) -> Result<NodeText, BoxError> {
        let mut fields = match document {
            Value::String(text) => {
                return Ok(NodeText::new(id, text).metadata(BTreeMap::from([("score".to_owned(), score.into())])));
            }
            Value::Object(fields) => fields,
            other => {
                return Err(format!("vector-store document `{id}` is neither an object nor a string: {other}").into());
            }
        };
        let Some(Value::String(text)) = fields.remove(&self.text_field) else {
            return Err(format!(
                "vector-store document `{id}` has no string field `{}` (set `RigIndex::text_field`)",
                self.text_field
            )
            .into());
        };
        let path = self.path_field.as_ref().and_then(|f| fields.get(f)).and_then(Value::as_str).map(str::to_owned);
        let mut metadata: BTreeMap<String, Value> = fields.into_iter().collect();
        metadata.insert("score".to_owned(), score.into());
        Ok(NodeText::new(id, text).path(path).metadata(metadata))
    }
}

impl<I: VectorStoreIndex> NodeSearch for RigIndex<I> {
    /// The `top_k` most similar documents, best first, scored by the store.
    async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        let found = self.search_texts(query, top_k).await?;
        Ok(found.into_iter().map(|(node, score)| SearchHit::new(node.id, score)).collect())
    }
}

impl<I: VectorStoreIndex> NodeStore for RigIndex<I> {
    /// The texts of the documents a search returned, in the order asked; other ids are left out.
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        Ok(ids.iter().filter_map(|id| self.texts.get(id)).collect())
    }

    /// None: a vector store knows no call graph.
    async fn dependencies(&self, _id: &str) -> Result<Vec<String>, BoxError> {
        Ok(Vec::new())
    }
}

impl<I: VectorStoreIndex> Retriever for RigIndex<I> {
    /// The page `offset .. offset + limit` of the ranking for the query: the store is asked for
    /// `offset + limit` documents and the first `offset` are skipped.
    async fn retrieve(&self, request: &ContextRetrieverRequest) -> Result<ContextPack, RetrieverError> {
        let found = self.search_texts(&request.query, request.offset.saturating_add(request.limit)).await?;
        let blocks = found
            .into_iter()
            .skip(request.offset)
            .map(|(node, score)| ContextPackBlock::new(node.id, node.text).with_metadata("score", score))
            .collect();
        Ok(ContextPack::new(blocks))
    }
}

#[cfg(test)]
mod tests {
    use rig_core::vector_store::{VectorSearchIdResult, VectorSearchResult, VectorStoreError};

    use super::*;

    /// A store of fixed documents that ranks by how many query words a document holds: the
    /// adapter's behaviour without an embedding model.
    struct Words(Vec<(String, Value)>);

    impl VectorStoreIndex for Words {
        type Filter = rig_core::vector_store::request::Filter<Value>;

        async fn top_n<T: serde::de::DeserializeOwned + rig_core::wasm_compat::WasmCompatSend>(
            &self,
            req: VectorSearchRequest<Self::Filter>,
        ) -> Result<Vec<VectorSearchResult<T>>, VectorStoreError> {
            let mut hits = Vec::new();
            for (score, id) in self.ranked(&req) {
                let document = self.0.iter().find(|(i, _)| *i == id).map(|(_, d)| d.clone()).unwrap_or_default();
                hits.push(VectorSearchResult { score, id, document: serde_json::from_value(document)? });
            }
            Ok(hits)
        }

        async fn top_n_ids(
            &self,
            req: VectorSearchRequest<Self::Filter>,
        ) -> Result<Vec<VectorSearchIdResult>, VectorStoreError> {
            Ok(self.ranked(&req).into_iter().map(|(score, id)| VectorSearchIdResult { score, id }).collect())
        }
    }

    impl Words {
        fn ranked(
            &self,
            req: &VectorSearchRequest<rig_core::vector_store::request::Filter<Value>>,
        ) -> Vec<(f64, String)> {
            let words: Vec<&str> = req.query().split_whitespace().collect();
            let mut ranked: Vec<(f64, String)> = self
                .0
                .iter()
                .map(|(id, doc)| {
                    let text = doc.to_string();
                    (words.iter().filter(|w| text.contains(**w)).count() as f64, id.clone())
                })
                .filter(|(score, _)| req.threshold().is_none_or(|t| *score >= t))
                .collect();
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            ranked.truncate(usize::try_from(req.samples()).unwrap_or(usize::MAX));
            ranked
        }
    }

    fn store() -> Words {
        Words(vec![
            ("a".into(), serde_json::json!({"content": "tax rounding rules", "file": "docs/tax.md", "lang": "en"})),
            ("b".into(), serde_json::json!({"content": "invoice totals and tax", "file": "docs/invoice.md"})),
            ("c".into(), serde_json::json!("a plain string document about tax")),
            ("d".into(), serde_json::json!({"body": "no content field here"})),
        ])
    }

    #[tokio::test]
    async fn searches_keep_texts_for_fetch_in_the_order_asked() {
        let index = RigIndex::new(store()).text_field("content").path_field(Some("file".into())).threshold(Some(2.0));
        let hits = index.search("invoice tax", 5).await.unwrap();
        assert_eq!(hits, [SearchHit::new("b", 2.0)]);
        let index = index.threshold(None);
        let hits = index.search("tax rounding", 3).await.unwrap();
        assert_eq!(hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        let texts = index.texts(&["c".into(), "zzz".into(), "a".into()]).await.unwrap();
        assert_eq!(texts.len(), 2, "an id no search returned is left out");
        assert_eq!(
            (texts[0].id.as_str(), texts[0].text.as_str(), texts[0].path.as_deref()),
            ("c", "a plain string document about tax", None)
        );
        assert_eq!(texts[1].path.as_deref(), Some("docs/tax.md"));
        assert_eq!(texts[1].metadata.get("lang"), Some(&Value::from("en")));
        assert_eq!(texts[1].metadata.get("score"), Some(&Value::from(2.0)));
        assert!(index.dependencies("a").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_document_without_its_text_field_is_an_error_naming_it() {
        let index = RigIndex::new(store()).text_field("content");
        let err = index.search("no content field", 4).await.unwrap_err().to_string();
        assert!(err.contains("`d`") && err.contains("`content`"), "{err}");
    }

    #[tokio::test]
    async fn the_engine_pages_through_the_ranking() {
        let index = RigIndex::new(store()).text_field("content").capacity(16).threshold(Some(1.0));
        let page = |offset, limit| ContextRetrieverRequest {
            retriever: "docs".into(),
            query: "tax rounding".into(),
            offset,
            limit,
            max_tokens: None,
        };
        let first = index.retrieve(&page(0, 2)).await.unwrap();
        let second = index.retrieve(&page(2, 2)).await.unwrap();
        let ids = |p: &ContextPack| p.blocks.iter().map(|b| b.id.clone()).collect::<Vec<_>>();
        assert_eq!((ids(&first), ids(&second)), (vec!["a".to_owned(), "b".to_owned()], vec!["c".to_owned()]));
        assert_eq!(second.blocks[0].text, "a plain string document about tax");
    }
}
