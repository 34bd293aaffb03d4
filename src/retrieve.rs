//! Offline lexical retrieval over a directory of source files.
//!
//! [`Chunker`] cuts documents into token-sized [`Chunk`]s (markdown by headings, code by
//! top-level items, text by tokens with overlap; see [`ChunkKind`]). [`split_identifier`] and the
//! chunkers are always available; `Bm25Index` and `CodeTokenizer` need the `bm25`
//! feature. `Bm25Index` backs a pipeline's `search_nodes` (rank files for the question) and
//! `fetch_node_texts` (load a node's text by id) without any service: node ids are paths relative
//! to the indexed directory, scores are BM25 over `CodeTokenizer` tokens (identifiers split at
//! `snake_case` and `CamelCase` boundaries, English words stemmed). The index implements the
//! pipeline's `NodeSearch` and `NodeStore`, so `StepEnv::builder().search(&index).store(&index)`
//! runs a pipeline over a directory.
//!
//! With the `rig` feature, `RigIndex` serves the same traits (and the context engine's
//! `Retriever`) from any rig vector-store index: retrieval by embeddings, with the fetched texts
//! counted and budgeted as `Bm25Index`'s are.

#[cfg(feature = "rig")]
#[cfg_attr(docsrs, doc(cfg(feature = "rig")))]
#[doc(inline)]
pub use ctx_runtime::retrieve::RigIndex;
#[cfg(feature = "bm25")]
#[cfg_attr(docsrs, doc(cfg(feature = "bm25")))]
#[doc(inline)]
pub use ctx_runtime::retrieve::{Bm25Index, IndexOptions, SkippedFile};
#[doc(inline)]
pub use ctx_runtime::retrieve::{Chunk, ChunkError, ChunkKind, ChunkOptions, Chunker, RetrieveError, split_identifier};
