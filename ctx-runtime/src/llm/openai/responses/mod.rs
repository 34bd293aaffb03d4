//! [`ResponsesClient`]: a [`ChatModel`] for OpenAI's Responses API (`POST /responses`), the
//! second OpenAI client beside the chat-completions [`OpenAiClient`](super::OpenAiClient).
//!
//! It is configured like that client, from the same [`OpenAiConfig`] (base URL up to `/v1`,
//! model, key, timeouts, retries, proxy; `max_tokens_param` and `stream_include_usage` do not
//! apply), plus [`ResponsesOptions`]: the reasoning effort, and whether reasoning items are
//! carried from request to request. It shares that client's HTTP layer: the same retries (429,
//! 408, 5xx, timeouts, connection failures, truncated bodies, `Retry-After`; a stream only
//! while no text reached the caller), the same typed errors (the server's "context length
//! exceeded" as [`ModelError::ContextLengthExceeded`]), the key only in the `Authorization`
//! header and never in an error or a trace.
//!
//! - **Requests**: the messages become `input` items (see `wire.rs`), the tools function tools
//!   of this API's shape (`strict: false`, as chat completions treats them), the output limit
//!   `max_output_tokens`. `presence_penalty`, `frequency_penalty`, `stop` and `seed` have no
//!   place in this API: a request setting one is refused before anything is sent
//!   ([`ModelError::UnsupportedRequest`]).
//! - **Reasoning**: with [`ResponsesOptions::carry_reasoning`] (the default) each request asks
//!   for the reasoning items whole (`include: ["reasoning.encrypted_content"]`, `store: false`);
//!   the reply's items come back on [`ChatResponse::thinking`], an `agent` step keeps them on
//!   the assistant message of the tool calls they led to, and this client sends them back, as
//!   received, before those calls in every later request of the turn. They are counted there:
//!   their visible text exactly, their encrypted part by the reasoning tokens the server
//!   reported (see `ChatMessage::reasoning_tokens`). Reasoning is generated inside
//!   `max_output_tokens`, which ctx's guard already fits in the window with the prompt; the
//!   reply's [`Usage::reasoning_tokens`](crate::llm::Usage::reasoning_tokens) says how much of
//!   the output it took.
//! - **Streaming**: [`ChatModel::chat_stream`] hands each text delta over as it arrives; the
//!   reply is the response object of the stream's last event.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ctx::llm::ModelError> {
//! use ctx::ChatMessage;
//! use ctx::llm::openai::{OpenAiConfig, ReasoningEffort, ResponsesClient, ResponsesOptions};
//! use ctx::llm::{ChatModel, ChatRequest};
//!
//! let config = OpenAiConfig::new("https://api.openai.com/v1", "o4-mini").with_api_key("sk-…");
//! let options = ResponsesOptions::default().reasoning_effort(Some(ReasoningEffort::Low));
//! let client = ResponsesClient::with_options(config, options)?;
//! let reply = client.chat(&ChatRequest::new(vec![ChatMessage::user("Say hi.")], 256)).await?;
//! println!("{} ({:?} reasoning tokens)", reply.content, reply.usage.and_then(|u| u.reasoning_tokens));
//! # Ok(()) }
//! ```

mod options;
mod stream;
mod wire;

use std::fmt;

pub use self::options::{ReasoningEffort, ResponsesOptions};
use self::stream::StreamState;
use self::wire::{WireRequest, read_response};
use super::api::{self, OpenAiHttp};
use super::config::OpenAiConfig;
use crate::llm::http::attempt::json_body;
use crate::llm::http::call;
use crate::llm::http::failure::excerpt;
use crate::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};

/// A client of OpenAI's Responses API. Cheap to clone; clones share connections.
#[derive(Clone)]
pub struct ResponsesClient {
    http: OpenAiHttp,
    options: ResponsesOptions,
}

impl fmt::Debug for ResponsesClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponsesClient")
            .field("config", &self.http.config)
            .field("options", &self.options)
            .field("endpoint", &self.http.endpoint)
            .finish_non_exhaustive()
    }
}

impl ResponsesClient {
    /// A client for `config` with the default options (reasoning carried, no effort sent).
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        Self::with_options(config, ResponsesOptions::default())
    }

    /// A client for `config` with `options`; every problem of the configuration is reported at
    /// once, as [`OpenAiClient::new`](super::OpenAiClient::new) reports them.
    pub fn with_options(config: OpenAiConfig, options: ResponsesOptions) -> Result<Self, ModelError> {
        let endpoint = endpoint(&config.base_url);
        Ok(ResponsesClient { http: OpenAiHttp::new(config, endpoint, not_found)?, options })
    }

    /// A client configured from the environment ([`OpenAiConfig::from_env`]'s variables).
    pub fn from_env() -> Result<Self, ModelError> {
        Self::new(OpenAiConfig::from_env()?)
    }

    /// The configuration.
    pub fn config(&self) -> &OpenAiConfig {
        &self.http.config
    }

    /// The options.
    pub fn options(&self) -> &ResponsesOptions {
        &self.options
    }

    /// The URL requests go to: the base URL with `/responses`.
    pub fn endpoint(&self) -> &str {
        &self.http.endpoint
    }

    /// The reply in a whole response body.
    fn parse(&self, body: &[u8]) -> Result<ChatResponse, ModelError> {
        let value = json_body(&self.http, body)?;
        read_response(&value, self.options.carry_reasoning).map_err(|message| ModelError::MalformedBody {
            model: self.http.config.model.clone(),
            message,
            excerpt: excerpt(body),
        })
    }
}

/// The Responses URL of a base URL: `/responses` appended unless it is there already.
fn endpoint(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    if base.ends_with("/responses") { base.to_owned() } else { format!("{base}/responses") }
}

/// What a bare 404 adds: the URL posted to, and its usual causes, a server without this API or
/// a base URL without `/v1`.
fn not_found(url: &str) -> String {
    format!(" (POST {url}; does the server implement the Responses API, and does the base URL end in `/v1`?)")
}

impl ChatModel for ResponsesClient {
    fn model_name(&self) -> &str {
        &self.http.config.model
    }

    /// As [`OpenAiClient`](super::OpenAiClient)'s: the host's well-known provider, else `openai`.
    fn provider_name(&self) -> &str {
        api::provider_of(&self.http.config.base_url)
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let http = &self.http;
        let body = WireRequest::new(&http.config.model, request, &self.options, false)?;
        call::chat(http, &http.endpoint, request, &body, |bytes| self.parse(bytes)).await
    }

    async fn chat_stream(
        &self,
        request: &ChatRequest,
        on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
    ) -> Result<ChatResponse, ModelError> {
        let http = &self.http;
        let body = WireRequest::new(&http.config.model, request, &self.options, true)?;
        let new_state = || StreamState::new(self.options.carry_reasoning);
        let read = |bytes: &[u8]| self.parse(bytes);
        call::chat_stream(http, &http.endpoint, request, &body, new_state, read, on_token).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_appends_the_path_once() {
        assert_eq!(endpoint("http://h/v1/"), "http://h/v1/responses");
        assert_eq!(endpoint("http://h/v1/responses"), "http://h/v1/responses");
    }

    #[test]
    fn a_bad_configuration_is_refused_with_every_issue() {
        let err = ResponsesClient::new(OpenAiConfig::new("not a url", " ")).expect_err("invalid");
        let text = err.to_string();
        assert!(text.contains("base URL") && text.contains("model name"), "{text}");
        let client = ResponsesClient::new(OpenAiConfig::new("http://127.0.0.1:1/v1", "m")).expect("valid");
        assert_eq!(client.endpoint(), "http://127.0.0.1:1/v1/responses");
        assert!(client.options().carry_reasoning);
    }
}
