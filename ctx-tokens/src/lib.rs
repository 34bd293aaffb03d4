//! Exact token counting, tiktoken-compatible, in pure Rust: the counter of
//! [ctx](https://github.com/ctx-llm/ctx), usable on its own.
//!
//! [`TokenCounter`] is the one way ctx counts: a [`TokenizerBackend`] behind a content-addressed,
//! bounded, thread-safe count cache, with early-exit questions ("does this fit in N?") and the
//! chat-format overhead of the model family ([`ChatFormat`]). Under the OpenAI encodings every
//! text is counted as ordinary text: a document containing `<|endoftext|>` is text, never a
//! special token. A local model's own tokenizer and chat template come from its files
//! (`ModelFiles`, feature `hf`), and count special-token text as the server will.
//!
//! Exact means: the count of [`BpeBackend`] is the length of tiktoken's `encode_ordinary` on the
//! same text under the same encoding (cl100k_base, o200k_base), checked token for token against
//! tiktoken-rs and bpe-openai by this crate's tests; it is not an estimate. ctx carries its own
//! copy of the two vocabularies (`data/`), so counting needs no download and no network.
//!
//! Counting once: [`BpeBackend`] merges each distinct pre-tokenizer piece once per process
//! ([`PieceCache`]; a text's count is exactly the sum of its pieces'), and a text that grows by
//! appending ([`CountedText`]) is counted for what it adds, from the last piece the append can
//! change, never again from the start.
//!
//! ```
//! use ctx_tokens::{Encoding, ModelInfo, TokenCounter};
//!
//! let model = ModelInfo::lookup("gpt-4o")?;
//! assert_eq!((model.encoding, model.context_window), (Encoding::O200kBase, 128_000));
//! let counter = TokenCounter::for_model("gpt-4o")?;
//! assert_eq!(counter.count("hello world")?, 2);
//! // Early exit: a megabyte cannot fit in 100 tokens, and nobody tokenizes it to find out.
//! assert_eq!(counter.count_up_to(&"word ".repeat(200_000), 100)?, None);
//! assert!(counter.fits("short", 5)?); // 5 bytes fit in 5 tokens without counting
//! # Ok::<(), ctx_tokens::TokenError>(())
//! ```
//!
//! Within ctx the same items are `ctx::tokens::…` (and the messages `ctx::chat::…`); the facade
//! re-exports this crate's API by name.
#![warn(unreachable_pub)]
// docs.rs builds with `--cfg docsrs`: each feature-gated item gets its "available on crate feature"
// badge. Without that cfg (every stable build) nothing changes.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod anthropic;
mod anthropic_counts;
mod backend;
mod cache;
mod char_classes;
pub mod chat;
mod counted_text;
mod counter;
mod encoding;
mod error;
mod filter;
mod format;
mod format_counts;
pub mod gguf;
#[cfg(feature = "hf")]
mod hf;
mod incremental;
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
pub mod jinja;
#[cfg(feature = "hf")]
mod jinja_counts;
mod merge;
#[cfg(feature = "hf")]
mod model_bpe;
#[cfg(feature = "hf")]
mod model_files;
pub mod names;
mod openai_vocab;
mod parallel;
mod pieces;
mod pretokenize;
mod reasoning;
mod template;
mod template_counts;
/// The token corpus, read as the integration tests and benches read it.
#[cfg(test)]
#[path = "../tests/corpus/mod.rs"]
#[allow(unreachable_pub)] // shared with integration tests, where `pub` is what reaches it
mod test_corpus;
mod token_bytes;

// The README's example is compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub use anthropic::{
    ANTHROPIC_TOOL_SYSTEM_PROMPT_TOKENS, AnthropicFormat, Counting, DEFAULT_ANTHROPIC_MARGIN_PERCENT, MarginBackend,
    RequestCounter,
};
pub use anthropic_counts::estimated_counter;
#[cfg(feature = "__tiktoken")]
#[cfg_attr(docsrs, doc(cfg(feature = "__tiktoken")))]
pub use backend::TiktokenBackend;
pub use backend::{BpeBackend, TokenizerBackend};
pub use cache::{CacheStats, CountCache};
pub use counted_text::CountedText;
pub use counter::TokenCounter;
pub use encoding::{Encoding, MODEL_TABLE, ModelInfo};
pub use error::TokenError;
pub use format::{ChatFormat, OpenAiOverhead};
pub use gguf::{GgufError, GgufMetadata, GgufValue};
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
pub use hf::HfTokenizer;
pub use incremental::CountCheckpoint;
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
pub use jinja::JinjaTemplate;
// For `benches/tokens.rs` (the vocabulary's load, its index and merge paths): internals, not part
// of the documented API.
#[doc(hidden)]
pub use merge::Ranks;
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
pub use model_files::ModelFiles;
pub use parallel::{PARALLEL_MIN_BYTES, THREADS_ENV};
pub use pieces::PieceCache;
pub use reasoning::{REASONING_ITEM_SPECIALS, is_reasoning_item};
pub use template::ChatTemplate;
#[doc(hidden)]
pub use token_bytes::TokenBytes;
