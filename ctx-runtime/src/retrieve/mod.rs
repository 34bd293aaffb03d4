//! Offline lexical retrieval over a directory of source files.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::retrieve`.

pub mod chunk;
mod error;
#[cfg(feature = "bm25")]
mod index;
#[cfg(feature = "bm25")]
mod pipeline;
#[cfg(feature = "rig")]
#[cfg_attr(docsrs, doc(cfg(feature = "rig")))]
pub mod rig;
mod tokenize;

pub use chunk::{Chunk, ChunkError, ChunkKind, ChunkOptions, Chunker};
pub use error::RetrieveError;
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
