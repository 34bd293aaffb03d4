//! Exact token counting: a [`TokenCounter`] for an [`Encoding`] (or, with the `hf` feature, a
//! model's own `tokenizer.json` or GGUF file), the count of a chat request as it is sent
//! ([`ChatFormat`], [`RequestCounter`]), and with the `llama` feature a served model's own
//! tokenizer over HTTP. Every count is the tokenizer's count of the exact string.

#[cfg(feature = "__tiktoken")]
#[cfg_attr(docsrs, doc(cfg(feature = "__tiktoken")))]
#[doc(inline)]
pub use ctx_runtime::tokens::TiktokenBackend;
#[doc(inline)]
pub use ctx_runtime::tokens::{
    ANTHROPIC_TOOL_SYSTEM_PROMPT_TOKENS, AnthropicFormat, BpeBackend, CacheStats, ChatFormat, ChatTemplate, CountCache,
    CountCheckpoint, CountedText, Counting, DEFAULT_ANTHROPIC_MARGIN_PERCENT, Encoding, GgufError, GgufMetadata,
    GgufValue, MODEL_TABLE, MarginBackend, ModelInfo, OpenAiOverhead, PARALLEL_MIN_BYTES, PieceCache,
    REASONING_ITEM_SPECIALS, RequestCounter, THREADS_ENV, TokenCounter, TokenError, TokenizerBackend,
    estimated_counter, gguf, is_reasoning_item,
};
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
#[doc(inline)]
pub use ctx_runtime::tokens::{HfTokenizer, JinjaTemplate, ModelFiles, jinja};
#[cfg(feature = "llama")]
#[cfg_attr(docsrs, doc(cfg(feature = "llama")))]
#[doc(inline)]
pub use ctx_runtime::tokens::{LlamaCppServer, REMOTE_TIMEOUT, RemoteTokenizer};
