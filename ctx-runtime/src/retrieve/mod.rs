//! Offline lexical retrieval over a directory of source files.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::retrieve`.

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
