//! [`AnthropicClient`]: a [`ChatModel`] for Anthropic's Messages API (`POST /v1/messages`), and
//! [`AnthropicTokenCounter`], exact prompt counts from its `count_tokens` endpoint.
//!
//! The client is the OpenAI client's twin where the APIs agree and differs where they do not:
//!
//! - **Headers**: the key goes in `x-api-key` (marked sensitive, never in `Debug`, errors or
//!   traces), with `anthropic-version` ([`ANTHROPIC_VERSION`] unless configured).
//! - **Request**: the system prompt is the top-level `system`; tool calls and results are
//!   `tool_use` / `tool_result` content blocks; `stop` is `stop_sequences`; `max_tokens`, which
//!   the API requires, is the request's output limit (the reply reserve ctx budgeted). A request
//!   the API cannot express — a system message in mid-conversation, a message `name`,
//!   `response_format` (there is no JSON mode) — is refused before anything is sent, with
//!   [`ModelError::UnsupportedRequest`] naming the message or parameter; `seed` is not sent (the
//!   API has none). The mapping is documented field by field in the `wire` module.
//! - **Reply**: text blocks are the content, `tool_use` blocks the tool calls (their `input` as
//!   the call's JSON arguments); `stop_reason` is reported in the chat-completions words
//!   pipelines read (`stop`, `length`, `tool_calls`); usage's prompt is `input_tokens` plus the
//!   prompt-cache counts.
//! - **Streaming**: Anthropic's events (`message_start`, `content_block_start` / `_delta` /
//!   `_stop` with `text_delta` and `input_json_delta`, `message_delta`, `message_stop`, `ping`,
//!   `error`); a stream that ends before `message_stop` is [`ModelError::TruncatedBody`].
//! - **Errors**: `{"type": "error", "error": {"type": "overloaded_error", "message": …}}`, as a
//!   body or as a stream event. 429 `rate_limit_error` is [`ModelError::RateLimited`] with the
//!   `retry-after` header's wait; 529 `overloaded_error` and 5xx are retried with backoff (an
//!   error event inside a 200 stream is classified by its type as if it had been the status: an
//!   overloaded stream is retried like a 529, while no text has reached the caller); "prompt is
//!   too long" is [`ModelError::ContextLengthExceeded`]. Retries, the backoff schedule and the
//!   `Retry-After` rule are those of every HTTP client ([`RetryPolicy`]).
//!
//! # Token counts: what is exact and what is estimated
//!
//! Anthropic publishes no tokenizer, so no local count of a Claude prompt is exact. ctx counts a
//! Claude prompt one of two ways, and says which ([`crate::tokens::Counting`], shown in the
//! contract report and in `ctx explain`):
//!
//! - **Exact, with a key**: [`AnthropicTokenCounter`] sends the request's `system`, `messages`
//!   and `tools` — the same JSON the client sends, built by the same code — to
//!   `POST /v1/messages/count_tokens` and uses the `input_tokens` it answers: the count the model
//!   will see, framing and tool preamble included. Counts sit behind a [`CountCache`] keyed by
//!   the exact body, so a request counted once is never sent again. Use it through
//!   [`AnthropicTokenCounter::counter`], a [`TokenCounter`] whose chat format asks the
//!   endpoint: the run-time guard counts each whole request with one call; per-message costs
//!   (history trimming) are differences of prefix counts, each exact; a tool block's cost is the
//!   difference of one probe request with and without the tools. Standalone texts and a message
//!   priced alone (an agent's turn ledger; a lone `tool_result` is no request the API takes) are
//!   estimated as below.
//! - **Estimated, without a key** (and always at compile time, where no request is made): the
//!   prompt is counted with a declared tokenizer (the model block's `encoding`) and every
//!   message's count is raised by an explicit margin ([`ChatFormat::anthropic_estimated`];
//!   [`DEFAULT_ANTHROPIC_MARGIN_PERCENT`] for a model named `claude…`). The contract then reads
//!   "estimated, +30% margin"; it is a budget with headroom, not a count.
//!
//! Usage reported by the server (`usage.input_tokens`) is always the server's exact count.
//!
//! [`CountCache`]: crate::tokens::CountCache
//! [`TokenCounter`]: crate::tokens::TokenCounter
//! [`ChatFormat::anthropic_estimated`]: crate::tokens::ChatFormat::anthropic_estimated
//! [`DEFAULT_ANTHROPIC_MARGIN_PERCENT`]: crate::tokens::DEFAULT_ANTHROPIC_MARGIN_PERCENT
//!
//! # Example
//!
//! ```no_run
//! # async fn demo(def: ctx::definition::PipelineDef) -> Result<(), Box<dyn std::error::Error>> {
//! use ctx::llm::anthropic::{AnthropicClient, AnthropicConfig};
//! use ctx::llm::{ChatModel, ChatRequest};
//! use ctx::pipeline::{LoadOptions, LoadedPipeline};
//! use ctx::{ChatMessage, Encoding};
//!
//! // ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL, when set) from the environment.
//! let client = AnthropicClient::new(AnthropicConfig::from_env("claude-sonnet-4-5"))?;
//! let request = ChatRequest::new(vec![ChatMessage::system("Be brief."), ChatMessage::user("Say hi.")], 64);
//! let reply = client.chat_stream(&request, &mut |piece| print!("{piece}")).await?;
//! println!("\n{:?}", reply.usage);
//!
//! // A pipeline counted exactly by `count_tokens` (standalone texts: o200k_base + 30%).
//! let counter = client.token_counter(65_536)?.counter(Encoding::O200kBase, 30);
//! let pipeline = LoadedPipeline::load_with_counter(def, LoadOptions::default(), counter)?;
//! # let _ = pipeline;
//! # Ok(()) }
//! ```

mod config;
mod count;
mod http;
mod stream;
mod wire;

use std::fmt;

pub use config::{
    ANTHROPIC_VERSION, AnthropicConfig, DEFAULT_ANTHROPIC_BASE_URL, ENV_ANTHROPIC_API_KEY, ENV_ANTHROPIC_BASE_URL,
};
pub use count::AnthropicTokenCounter;
use http::Http;
use stream::MessageStream;
use wire::{WireReply, WireRequest};

pub use crate::llm::http::RetryPolicy;
use crate::llm::http::attempt::json_body;
use crate::llm::http::call;
use crate::llm::http::failure::excerpt;
use crate::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};

/// A client for Anthropic's Messages API. Cheap to clone (the connection pool is shared).
/// `Debug` shows the configuration with the key redacted.
#[derive(Clone)]
pub struct AnthropicClient {
    http: Http,
}

impl fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicClient").field("config", &self.http.config).finish()
    }
}

impl AnthropicClient {
    /// A client for `config`, after checking it (every problem at once).
    pub fn new(config: AnthropicConfig) -> Result<Self, ModelError> {
        Ok(AnthropicClient { http: Http::build(config, true)? })
    }

    /// The configuration.
    pub fn config(&self) -> &AnthropicConfig {
        &self.http.config
    }

    /// An exact counter for this client's model, endpoint and key (`count_tokens`), with a
    /// cache of `cache_entries` counts.
    pub fn token_counter(&self, cache_entries: usize) -> Result<AnthropicTokenCounter, ModelError> {
        AnthropicTokenCounter::new(self.http.config.clone(), cache_entries)
    }

    fn unsupported(&self, err: wire::Unsupported) -> ModelError {
        ModelError::UnsupportedRequest { model: self.http.config.model.clone(), message: err.0 }
    }

    /// The reply of a whole (non-streamed) body.
    fn parse_reply(&self, body: &[u8]) -> Result<ChatResponse, ModelError> {
        let model = self.http.config.model.as_str();
        let value = json_body(&self.http, body)?;
        let reply: WireReply = serde_json::from_value(value).map_err(|e| ModelError::MalformedBody {
            model: model.to_owned(),
            message: format!("not a Messages API reply: {e}"),
            excerpt: excerpt(body),
        })?;
        let Some(blocks) = reply.content else {
            return Err(ModelError::MalformedBody {
                model: model.to_owned(),
                message: "the reply has no `content`".into(),
                excerpt: excerpt(body),
            });
        };
        let (content, tool_calls, thinking) = wire::read_blocks(&blocks).map_err(|message| {
            ModelError::MalformedBody { model: model.to_owned(), message, excerpt: excerpt(body) }
        })?;
        Ok(ChatResponse {
            content,
            tool_calls,
            usage: reply.usage.and_then(wire::WireUsage::into_usage),
            finish_reason: reply.stop_reason.as_deref().map(wire::finish_reason),
            thinking,
        })
    }
}

impl ChatModel for AnthropicClient {
    fn model_name(&self) -> &str {
        &self.http.config.model
    }

    fn provider_name(&self) -> &str {
        "anthropic"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let http = &self.http;
        let body = WireRequest::new(&http.config.model, request, false).map_err(|e| self.unsupported(e))?;
        call::chat(http, &http.messages_url, request, &body, |bytes| self.parse_reply(bytes)).await
    }

    async fn chat_stream(
        &self,
        request: &ChatRequest,
        on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
    ) -> Result<ChatResponse, ModelError> {
        let http = &self.http;
        let body = WireRequest::new(&http.config.model, request, true).map_err(|e| self.unsupported(e))?;
        let read = |bytes: &[u8]| self.parse_reply(bytes);
        call::chat_stream(http, &http.messages_url, request, &body, MessageStream::default, read, on_token).await
    }
}
