//! Exact token counting: a [`TokenCounter`] for an [`Encoding`] (or, with the `hf` feature, a
//! model's own `tokenizer.json` or GGUF file), the count of a chat request as it is sent
//! ([`ChatFormat`], [`RequestCounter`]), and with the `llama` feature a served model's own
//! tokenizer over HTTP. Every count is the tokenizer's count of the exact string.
//!
//! A long text is counted on several threads when cores are free as the count starts; the count
//! is the same on any number of threads. A service that wants its cores for other work pins the
//! number, in code or with the environment variable [`THREADS_ENV`] (`CTX_TOKENS_THREADS`):
//!
//! ```
//! use ctx::tokens::{BpeBackend, Encoding, THREADS_ENV, TokenizerBackend};
//!
//! let one_thread = BpeBackend::new(Encoding::Cl100kBase).with_threads(1);
//! let free_cores = BpeBackend::new(Encoding::Cl100kBase).with_threads(0);
//! let text = "The invoice total is the sum of its lines. ".repeat(20_000);
//! assert_eq!(one_thread.count(&text)?, free_cores.count(&text)?);
//! assert_eq!(THREADS_ENV, "CTX_TOKENS_THREADS");
//! # Ok::<(), ctx::tokens::TokenError>(())
//! ```

#[cfg(feature = "__tiktoken")]
#[cfg_attr(docsrs, doc(cfg(feature = "__tiktoken")))]
#[doc(inline)]
pub use ctx_runtime::tokens::TiktokenBackend;
#[doc(inline)]
pub use ctx_runtime::tokens::{
    AnthropicFormat, BpeBackend, CacheStats, ChatFormat, ChatTemplate, CountCache, CountCheckpoint, Counting, Encoding,
    GgufError, GgufMetadata, GgufValue, OpenAiOverhead, PieceCache, RequestCounter, THREADS_ENV, TokenCounter,
    TokenError, TokenizerBackend, gguf,
};
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
#[doc(inline)]
pub use ctx_runtime::tokens::{HfTokenizer, JinjaTemplate, ModelFiles, jinja};
#[cfg(feature = "llama")]
#[cfg_attr(docsrs, doc(cfg(feature = "llama")))]
#[doc(inline)]
pub use ctx_runtime::tokens::{LlamaCppServer, RemoteTokenizer};
