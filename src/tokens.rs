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
    AnthropicFormat, CacheStats, ChatFormat, ChatTemplate, CountCache, CountCheckpoint, Counting, Encoding, GgufError,
    GgufMetadata, GgufValue, OpenAiOverhead, PieceCache, RequestCounter, TokenCounter, TokenError, TokenizerBackend,
    gguf,
};
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
#[doc(inline)]
pub use ctx_runtime::tokens::{HfTokenizer, JinjaTemplate, ModelFiles, jinja};
#[cfg(feature = "llama")]
#[cfg_attr(docsrs, doc(cfg(feature = "llama")))]
#[doc(inline)]
pub use ctx_runtime::tokens::{LlamaCppServer, RemoteTokenizer};
