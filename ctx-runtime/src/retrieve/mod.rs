//! Offline lexical retrieval over a directory of source files.
//!
//! [`Chunker`] cuts documents into token-sized [`Chunk`]s (markdown by headings, code by
//! top-level items, text by tokens with overlap; see [`chunk`]). [`split_identifier`] and the
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

pub mod chunk;
#[cfg(feature = "bm25")]
mod index;
#[cfg(feature = "bm25")]
mod pipeline;
#[cfg(feature = "rig")]
#[cfg_attr(docsrs, doc(cfg(feature = "rig")))]
pub mod rig;
mod tokenize;

pub use chunk::{Chunk, ChunkError, ChunkKind, ChunkOptions, Chunker};
#[cfg(feature = "bm25")]
#[cfg_attr(docsrs, doc(cfg(feature = "bm25")))]
pub use index::{Bm25Index, IndexOptions, SkippedFile};
#[cfg(feature = "rig")]
#[cfg_attr(docsrs, doc(cfg(feature = "rig")))]
pub use rig::RigIndex;
#[cfg(feature = "bm25")]
#[cfg_attr(docsrs, doc(cfg(feature = "bm25")))]
pub use tokenize::CodeTokenizer;
pub use tokenize::split_identifier;

use crate::codes::{Code, ErrorCode};

/// Why retrieval failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RetrieveError {
    /// A file or directory could not be read.
    #[error("cannot read `{path}`: {message}")]
    Io {
        /// The path.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// The root given to `Bm25Index::from_dir` is not a directory.
    #[error("`{path}` is not a directory")]
    NotADirectory {
        /// The path.
        path: String,
    },
    /// A file could not be chunked (or the chunk options are invalid).
    #[error("cannot chunk `{path}`: {source}")]
    Chunk {
        /// The file (or the root, for invalid options).
        path: String,
        /// Why.
        source: chunk::ChunkError,
    },
    /// No indexed node has this id.
    #[error("no node with id `{id}` in the index{}", suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
    UnknownNode {
        /// The id asked for.
        id: String,
        /// The closest known id, when one is close.
        suggestion: Option<String>,
    },
}

impl RetrieveError {
    #[cfg(feature = "bm25")]
    fn io(path: &std::path::Path, err: &std::io::Error) -> Self {
        RetrieveError::Io { path: path.display().to_string(), message: err.to_string() }
    }
}

impl ErrorCode for RetrieveError {
    fn code(&self) -> Code {
        match self {
            RetrieveError::Io { .. } => Code::RetrieveIo,
            RetrieveError::NotADirectory { .. } => Code::RetrieveNotADirectory,
            RetrieveError::UnknownNode { .. } => Code::RetrieveUnknownNode,
            RetrieveError::Chunk { .. } => Code::RetrieveChunk,
        }
    }
}
