//! Exact token accounting: the counter of the crate `ctx-tokens`, under the path ctx's crates and
//! the facade have always named it (`ctx_spec::tokens::…`, `ctx::tokens::…`).
//!
//! Each name is listed, not glob-imported, so that what this path offers is written here and an
//! item added to `ctx-tokens` becomes part of it only when it is added below.

#[cfg(feature = "__tiktoken")]
#[cfg_attr(docsrs, doc(cfg(feature = "__tiktoken")))]
pub use ctx_tokens::TiktokenBackend;
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
pub use ctx_tokens::jinja;
// For the benches (the vocabulary's load, its index and merge paths): internals, not part of the
// documented API.
pub use ctx_tokens::{
    ANTHROPIC_TOOL_SYSTEM_PROMPT_TOKENS, AnthropicFormat, BpeBackend, CacheStats, ChatFormat, ChatTemplate, CountCache,
    CountCheckpoint, CountedText, Counting, DEFAULT_ANTHROPIC_MARGIN_PERCENT, Encoding, GgufError, GgufMetadata,
    GgufValue, MODEL_TABLE, MarginBackend, ModelInfo, OpenAiOverhead, PARALLEL_MIN_BYTES, PieceCache,
    REASONING_ITEM_SPECIALS, RequestCounter, THREADS_ENV, TokenCounter, TokenError, TokenizerBackend,
    estimated_counter, gguf, is_reasoning_item,
};
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
pub use ctx_tokens::{HfTokenizer, JinjaTemplate, ModelFiles};
#[doc(hidden)]
pub use ctx_tokens::{Ranks, TokenBytes};
