//! Chat models: the trait pipelines call, and its implementations.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::llm`.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

use crate::chat::{ChatMessage, SignedThinking, ToolCall, ToolSchema};

#[cfg(feature = "anthropic")]
#[cfg_attr(docsrs, doc(cfg(feature = "anthropic")))]
pub mod anthropic;
mod error;
// What the two HTTP clients share (the reqwest client, retries, error classification, SSE
// framing), under the private feature `__http` that `openai` and `anthropic` each turn on.
// `__http` alone (as `cargo hack --each-feature` builds it) has no client to use it.
#[cfg(feature = "__http")]
#[cfg_attr(not(any(feature = "openai", feature = "anthropic")), allow(dead_code, unreachable_pub))]
mod http;
#[cfg(feature = "llama")]
#[cfg_attr(docsrs, doc(cfg(feature = "llama")))]
pub mod llama_cpp;
pub mod offline;
#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub mod openai;
#[cfg(feature = "rig")]
#[cfg_attr(docsrs, doc(cfg(feature = "rig")))]
pub mod rig;
#[cfg(feature = "__http")]
#[cfg_attr(docsrs, doc(cfg(any(feature = "openai", feature = "anthropic"))))]
pub mod secret;
mod spend;
mod usage;

pub use ctx_spec::params::{MAX_STOP_SEQUENCES, ModelParams, ResponseFormat};
pub use error::ModelError;
#[cfg(feature = "__http")]
#[cfg_attr(docsrs, doc(cfg(any(feature = "openai", feature = "anthropic"))))]
pub use secret::ApiKey;
pub use spend::Spend;
pub use usage::Usage;

/// One request to a chat model. ctx builds it only after checking that its exact prompt plus
/// `max_tokens` fits the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChatRequest {
    /// The messages, system prompt first.
    pub messages: Vec<ChatMessage>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSchema>,
    /// The output limit sent to the server.
    pub max_tokens: usize,
    /// Sampling parameters (temperature, top_p, stop, seed, response format); unset ones are left
    /// to the server.
    #[serde(flatten)]
    pub params: ModelParams,
    /// ctx's exact count of the prompt (messages, tools and chat overhead), for comparison with
    /// the server's `usage.prompt_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_prompt_tokens: Option<usize>,
    /// The pipeline step that sends it, for traces and errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
}

impl ChatRequest {
    /// A request with these messages and output limit, no tools, the server's default sampling.
    pub fn new(messages: Vec<ChatMessage>, max_tokens: usize) -> Self {
        ChatRequest {
            messages,
            tools: Vec::new(),
            max_tokens,
            params: ModelParams::default(),
            predicted_prompt_tokens: None,
            step_id: None,
        }
    }
}

ctx_spec::setters!(ChatRequest {
    tools: Vec<ToolSchema>,
    params: ModelParams,
    predicted_prompt_tokens: Option<usize>,
    step_id: Option<String>,
});

/// A model's reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChatResponse {
    /// The reply text.
    pub content: String,
    /// Tool calls the model made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Usage, when the server reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why generation stopped (`stop`, `length`, …), when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The signed reasoning blocks that came before the text and tool calls (Anthropic's
    /// extended thinking), as received. An `agent` step keeps them on the assistant message of
    /// its tool calls, which is how the API requires them back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<SignedThinking>,
}

impl ChatResponse {
    /// A reply of `content` with no tool calls, usage, finish reason or thinking; set those with
    /// the setters named after them.
    ///
    /// ```
    /// use ctx::llm::{ChatResponse, Usage};
    ///
    /// let reply = ChatResponse::new("Hello").usage(Some(Usage::new(12, 1))).finish_reason(Some("stop".into()));
    /// assert_eq!(reply.content, "Hello");
    /// ```
    pub fn new(content: impl Into<String>) -> Self {
        ChatResponse { content: content.into(), ..ChatResponse::default() }
    }
}

ctx_spec::setters!(ChatResponse {
    tool_calls: Vec<ToolCall>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    thinking: Vec<SignedThinking>,
});

/// A chat model. To hold one behind a reference, a `Box` or an `Arc`, name
/// [`dyn ChatModelDyn`](ChatModelDyn): `ChatModel` has no `dyn` form (its methods return
/// `impl Future`, so `&dyn ChatModel` is the compiler's "not dyn compatible" error), and every
/// `ChatModel` is a `ChatModelDyn`.
///
/// Implement it with plain `async fn`s; the trait declares each method as returning
/// `impl Future<Output = …> + Send`, so the compiler checks there that the future of an
/// implementation can move between threads (holds no `Rc` or `std::sync::MutexGuard` across an
/// `.await`), as a multi-threaded runtime requires:
///
/// ```
/// use ctx::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
///
/// struct Echo;
///
/// impl ChatModel for Echo {
///     fn model_name(&self) -> &str {
///         "echo"
///     }
///
///     async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
///         let last = request.messages.last().map(|m| m.content.clone()).unwrap_or_default();
///         Ok(ChatResponse::new(last))
///     }
/// }
/// ```
///
/// A run holds it as `&dyn ChatModelDyn` (`&Echo` coerces to it), which is itself a `ChatModel`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a chat model: it does not implement `ctx::llm::ChatModel`",
    label = "not a `ChatModel`",
    note = "implement `ChatModel` for it, with plain `async fn`s; a run holds it as `&dyn ChatModelDyn`, which every \
            `ChatModel` is"
)]
pub trait ChatModel: Send + Sync {
    /// The model's name (as sent to the server).
    fn model_name(&self) -> &str;

    /// The provider, as OpenTelemetry's GenAI semantic conventions name it in
    /// `gen_ai.provider.name`, an attribute every request's span must carry: one of the
    /// conventions' well-known values when one applies (`openai`, `anthropic`, `azure.ai.openai`,
    /// `groq`, …), else a name of the implementation's choosing. The default, `unknown`, says
    /// only that the implementation does not tell; override it.
    fn provider_name(&self) -> &str {
        "unknown"
    }

    /// Sends one request and waits for the whole reply.
    // rustc quotes the line of the return type when `dyn ChatModel` is written: its comment says
    // what to write instead, short enough not to be cut.
    #[rustfmt::skip]
    fn chat(&self, request: &ChatRequest)
        -> impl Future<Output = Result<ChatResponse, ModelError>> + Send; // no dyn ChatModel: use dyn ChatModelDyn

    /// Sends one request and hands each piece of text to `on_token` as it is generated; returns
    /// the whole reply (the concatenation of the pieces) with its usage.
    ///
    /// The default calls [`ChatModel::chat`] and hands over the whole text at once, for models
    /// that cannot stream.
    fn chat_stream(
        &self,
        request: &ChatRequest,
        on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
    ) -> impl Future<Output = Result<ChatResponse, ModelError>> + Send {
        async move {
            let response = self.chat(request).await?;
            if !response.content.is_empty() {
                on_token(&response.content);
            }
            Ok(response)
        }
    }
}

/// The future a [`ChatModelDyn`] method returns: boxed, so the trait has a `dyn` form.
pub type ChatFuture<'a> = Pin<Box<dyn Future<Output = Result<ChatResponse, ModelError>> + Send + 'a>>;

crate::dyn_twin::dyn_twin! {
    /// [`ChatModel`] as a trait object: what a run holds (`&dyn ChatModelDyn`,
    /// `Arc<dyn ChatModelDyn>`), where `dyn ChatModel` cannot be written. Every `ChatModel`
    /// implements it; implement `ChatModel`, never this.
    ///
    /// `dyn ChatModelDyn` is a `ChatModel` too, so code that calls `chat` on it reads the same as
    /// code that calls it on a concrete model (each call boxes one future):
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use ctx::llm::offline::OfflineModel;
    /// use ctx::llm::{ChatModel, ChatModelDyn};
    ///
    /// let model: Arc<dyn ChatModelDyn> = Arc::new(OfflineModel::default());
    /// assert_eq!(model.model_name(), OfflineModel::default().model_name());
    /// ```
    #[doc(alias = "dyn ChatModel")]
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a chat model: it does not implement `ctx::llm::ChatModel`",
        label = "not a `ChatModel`",
        note = "implement `ChatModel` for it (never `ChatModelDyn`, which every `ChatModel` has)"
    )]
    pub trait ChatModelDyn: Send + Sync {
        impl<M: ChatModel>;
        fn model_name(&self) -> &str => dyn_model_name;
        fn provider_name(&self) -> &str => dyn_provider_name;
        async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> => dyn_chat -> ChatFuture<'a>;
        async fn chat_stream(
            &self,
            request: &ChatRequest,
            on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
        ) -> Result<ChatResponse, ModelError> => dyn_chat_stream -> ChatFuture<'a>;
    }
}
