//! [`OpenAiClient`]: a [`ChatModel`] for any OpenAI-compatible `/chat/completions` server —
//! OpenAI, Ollama, vLLM, llama.cpp's `llama-server` — over reqwest with rustls. Beside it,
//! [`ResponsesClient`] speaks OpenAI's Responses API (`/responses`) with the same configuration;
//! see its documentation for what that API adds (reasoning items carried and counted).
//!
//! - configuration from [`OpenAiConfig`] or the environment ([`OpenAiConfig::from_env`]);
//! - a per-request timeout, a connect timeout and, when streaming, a limit on silence between
//!   chunks;
//! - retries with exponential backoff and jitter (the schedule comes from `backon`) on 429, 408,
//!   5xx, timeouts, connection failures and truncated bodies, honouring `Retry-After`; a stream
//!   is retried only while no text has been handed to the caller;
//! - a typed [`ModelError`] for each failure, the server's "context length exceeded" (OpenAI,
//!   vLLM, llama.cpp wordings) as [`ModelError::ContextLengthExceeded`];
//! - the API key only in the `Authorization` header (marked sensitive); never in `Debug`,
//!   errors or traces.
//!
//! # Environment variables ([`OpenAiConfig::from_env`])
//!
//! | variable | meaning | when unset |
//! |---|---|---|
//! | `CTX_BASE_URL` | base URL of the server, up to and including `/v1` | `OPENAI_BASE_URL` |
//! | `OPENAI_BASE_URL` | the same, under the name OpenAI's SDKs use | `https://api.openai.com/v1` |
//! | `CTX_MODEL` | the model name sent with each request | an error: there is no sensible default |
//! | `OPENAI_API_KEY` | the bearer token | no `Authorization` header (local servers) |
//!
//! Base URLs of the usual servers: OpenAI `https://api.openai.com/v1`, Ollama
//! `http://localhost:11434/v1`, vLLM `http://localhost:8000/v1`, llama.cpp's `llama-server`
//! `http://localhost:8080/v1`.
//!
//! # Example
//!
//! ```no_run
//! # async fn demo() -> Result<(), ctx::llm::ModelError> {
//! use ctx::ChatMessage;
//! use ctx::llm::openai::{OpenAiClient, OpenAiConfig};
//! use ctx::llm::{ChatModel, ChatRequest};
//!
//! let client = OpenAiClient::new(OpenAiConfig::new("http://localhost:8080/v1", "llama"))?;
//! let request = ChatRequest::new(vec![ChatMessage::user("Say hi.")], 16);
//! let reply = client.chat_stream(&request, &mut |piece| print!("{piece}")).await?;
//! println!("\n{:?}", reply.usage);
//! # Ok(()) }
//! ```

mod api;
mod config;
mod responses;
mod sse;
mod wire;

use std::fmt;

pub use crate::llm::http::RetryPolicy;
use crate::llm::http::attempt::json_body;
use crate::llm::http::call;
use crate::llm::http::failure::excerpt;
use api::OpenAiHttp;
pub use config::{
    DEFAULT_BASE_URL, ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, ENV_OPENAI_BASE_URL, MaxTokensParam, OpenAiConfig,
};
pub use responses::{ReasoningEffort, ResponsesClient, ResponsesOptions};
use sse::StreamState;
use wire::{WireCompletion, WireRequest};

use crate::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};

/// A client for an OpenAI-compatible chat-completions endpoint. Cheap to clone (the connection
/// pool is shared). `Debug` shows the configuration with the key redacted.
#[derive(Clone)]
pub struct OpenAiClient {
    http: OpenAiHttp,
}

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("endpoint", &self.http.endpoint)
            .field("config", &self.http.config)
            .finish()
    }
}

impl OpenAiClient {
    /// A client for `config`, after checking it ([`OpenAiConfig::validate`]: every problem at once).
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        let endpoint = config.endpoint();
        Ok(OpenAiClient { http: OpenAiHttp::new(config, endpoint, not_found)? })
    }

    /// A client configured from the environment (see [`OpenAiConfig::from_env`]).
    pub fn from_env() -> Result<Self, ModelError> {
        Self::new(OpenAiConfig::from_env()?)
    }

    /// The configuration.
    pub fn config(&self) -> &OpenAiConfig {
        &self.http.config
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.http.endpoint
    }

    /// The reply in a whole (non-streamed) completion body.
    fn parse_completion(&self, body: &[u8]) -> Result<ChatResponse, ModelError> {
        let model = self.http.config.model.as_str();
        let value = json_body(&self.http, body)?;
        let completion: WireCompletion = serde_json::from_value(value).map_err(|e| ModelError::MalformedBody {
            model: model.to_owned(),
            message: format!("not a chat completion: {e}"),
            excerpt: excerpt(body),
        })?;
        let Some(choices) = completion.choices else {
            return Err(ModelError::MalformedBody {
                model: model.to_owned(),
                message: "the body has no `choices` field".into(),
                excerpt: excerpt(body),
            });
        };
        let mut choices = choices;
        let position = choices.iter().position(|c| c.index == 0).unwrap_or(0);
        if position >= choices.len() {
            return Err(ModelError::EmptyChoices { model: model.to_owned() });
        }
        let choice = choices.swap_remove(position);
        Ok(ChatResponse {
            content: choice.message.content.unwrap_or_default(),
            tool_calls: choice.message.tool_calls.unwrap_or_default().into_iter().map(|c| c.into_tool_call()).collect(),
            usage: completion.usage.map(Into::into),
            finish_reason: choice.finish_reason,
            thinking: Vec::new(),
        })
    }
}

/// What a bare 404 adds: the URL posted to, and, when it has no `/v1/`, that this is the usual
/// cause (`CTX_BASE_URL=http://localhost:11434` instead of `…/v1`), which the server's own "Not
/// Found" says neither of.
fn not_found(url: &str) -> String {
    let mut hint = format!(" (POST {url})");
    if !url.contains("/v1/") {
        hint.push_str(&format!(
            "; an OpenAI-compatible base URL usually ends in `/v1`: is `{ENV_BASE_URL}` missing it?"
        ));
    }
    hint
}

impl ChatModel for OpenAiClient {
    fn model_name(&self) -> &str {
        &self.http.config.model
    }

    /// The provider the base URL's host names: a well-known value of the OpenTelemetry GenAI
    /// conventions when the host is that provider's, else `openai` (the API it speaks).
    fn provider_name(&self) -> &str {
        api::provider_of(&self.http.config.base_url)
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let (http, c) = (&self.http, &self.http.config);
        let body = WireRequest::new(&c.model, request, c.max_tokens_param, false, false);
        call::chat(http, &http.endpoint, request, &body, |bytes| self.parse_completion(bytes)).await
    }

    async fn chat_stream(
        &self,
        request: &ChatRequest,
        on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
    ) -> Result<ChatResponse, ModelError> {
        let (http, c) = (&self.http, &self.http.config);
        let body = WireRequest::new(&c.model, request, c.max_tokens_param, true, c.stream_include_usage);
        let read = |bytes: &[u8]| self.parse_completion(bytes);
        call::chat_stream(http, &http.endpoint, request, &body, StreamState::default, read, on_token).await
    }
}
