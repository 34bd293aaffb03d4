//! Exact token accounting: the counter of `ctx-tokens` (through `ctx_spec::tokens`, each name
//! listed), plus (feature `llama`) counting with a served model's own tokenizer over HTTP, which
//! runs and so lives here.

#[cfg(feature = "__tiktoken")]
#[cfg_attr(docsrs, doc(cfg(feature = "__tiktoken")))]
pub use ctx_spec::tokens::TiktokenBackend;
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
pub use ctx_spec::tokens::jinja;
pub use ctx_spec::tokens::{
    ANTHROPIC_TOOL_SYSTEM_PROMPT_TOKENS, AnthropicFormat, BpeBackend, CacheStats, ChatFormat, ChatTemplate, CountCache,
    CountCheckpoint, CountedText, Counting, DEFAULT_ANTHROPIC_MARGIN_PERCENT, Encoding, GgufError, GgufMetadata,
    GgufValue, MODEL_TABLE, MarginBackend, ModelInfo, OpenAiOverhead, PARALLEL_MIN_BYTES, PieceCache,
    REASONING_ITEM_SPECIALS, RequestCounter, THREADS_ENV, TokenCounter, TokenError, TokenizerBackend,
    estimated_counter, gguf, is_reasoning_item,
};
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
pub use ctx_spec::tokens::{HfTokenizer, JinjaTemplate, ModelFiles};
#[doc(hidden)]
pub use ctx_spec::tokens::{Ranks, TokenBytes};

#[cfg(feature = "llama")]
mod remote;
#[cfg(feature = "llama")]
#[cfg_attr(docsrs, doc(cfg(feature = "llama")))]
pub use remote::{LlamaCppServer, RemoteTokenizer};
