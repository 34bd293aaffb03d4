//! Chat models: the trait pipelines call, and its implementations.
//!
//! A model implements [`ChatModel`] with plain `async fn`s; a run holds any model behind one
//! reference as [`dyn ChatModelDyn`](ChatModelDyn), which every `ChatModel` is. Implementations
//! live in submodules:
//!
//! - `openai::OpenAiClient` (feature `openai`): any OpenAI-compatible chat-completions server
//!   (OpenAI, Ollama, vLLM, llama.cpp's `llama-server`), with timeouts, retries and streaming.
//! - `openai::ResponsesClient` (feature `openai`): OpenAI's Responses API (`POST /responses`),
//!   with reasoning items carried across the requests of an agent turn and counted.
//! - `anthropic::AnthropicClient` (feature `anthropic`): Anthropic's Messages API, with exact
//!   prompt counts from its `count_tokens` endpoint (`anthropic::AnthropicTokenCounter`).
//! - `llama_cpp::LocalModel` (feature `llama`): a llama-cpp-python server on this machine.
//! - `rig::RigModel` (feature `rig`): any [rig](https://docs.rs/rig-core) completion model, so
//!   every provider rig speaks to; ctx counts and guards the request, rig sends it.
//! - [`offline::OfflineModel`]: a deterministic, extractive stand-in that quotes its context; for
//!   demos and tests without a server.

#[cfg(any(feature = "openai", feature = "anthropic"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "openai", feature = "anthropic"))))]
#[doc(inline)]
pub use ctx_runtime::llm::ApiKey;
#[cfg(feature = "anthropic")]
#[cfg_attr(docsrs, doc(cfg(feature = "anthropic")))]
#[doc(inline)]
pub use ctx_runtime::llm::anthropic;
#[cfg(feature = "llama")]
#[cfg_attr(docsrs, doc(cfg(feature = "llama")))]
#[doc(inline)]
pub use ctx_runtime::llm::llama_cpp;
#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
#[doc(inline)]
pub use ctx_runtime::llm::openai;
#[cfg(feature = "rig")]
#[cfg_attr(docsrs, doc(cfg(feature = "rig")))]
#[doc(inline)]
pub use ctx_runtime::llm::rig;
#[doc(inline)]
pub use ctx_runtime::llm::{
    ChatFuture, ChatModel, ChatModelDyn, ChatRequest, ChatResponse, ModelError, ModelParams, ResponseFormat, Spend,
    Usage, offline,
};
