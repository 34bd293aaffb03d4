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

mod stream;
mod wire;

use std::fmt;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use tracing::Instrument;

use self::stream::StreamState;
use self::wire::{WireRequest, read_response};
use super::OpenAiConfig;
use super::sse::ChunkError;
use crate::llm::http::failure::{self, MAX_BODY_BYTES, Phase, ServerError, parse_error, status_error, transport_error};
use crate::llm::http::http_client;
use crate::llm::http::retry::RetryState;
use crate::llm::http::sse::SseParser;
use crate::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use crate::validation::ConfigIssues;

/// How long the model reasons before it answers (`reasoning.effort`); unset leaves it to the
/// server. Only reasoning models accept it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReasoningEffort {
    /// `minimal`.
    Minimal,
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
}

impl ReasoningEffort {
    /// The value sent.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

/// What the Responses API has that chat completions has not.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResponsesOptions {
    /// `reasoning.effort`; `None` (the default) sends none.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Ask for reasoning items whole and hand them back on the reply, to be sent again with the
    /// tool calls they led to (default `true`). Sends `store: false` and
    /// `include: ["reasoning.encrypted_content"]`. `false` sends neither and drops the items: a
    /// reasoning model then starts its reasoning afresh after each tool result. A server may
    /// refuse that `include` for a model that does not reason: turn this off for such a model
    /// (the refusal comes back as the server's HTTP error, nothing is retried).
    pub carry_reasoning: bool,
}

impl Default for ResponsesOptions {
    fn default() -> Self {
        ResponsesOptions { reasoning_effort: None, carry_reasoning: true }
    }
}

ctx_spec::setters!(ResponsesOptions { reasoning_effort: Option<ReasoningEffort>, carry_reasoning: bool });

/// A client of OpenAI's Responses API. Cheap to clone; clones share connections.
#[derive(Clone)]
pub struct ResponsesClient {
    config: OpenAiConfig,
    options: ResponsesOptions,
    endpoint: String,
    http: reqwest::Client,
}

impl fmt::Debug for ResponsesClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponsesClient")
            .field("config", &self.config)
            .field("options", &self.options)
            .field("endpoint", &self.endpoint)
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
        ConfigIssues::check("OpenAiConfig", config.validate())?;
        let http = http_client(&config.model, config.connect_timeout, config.system_proxy, true)?;
        Ok(ResponsesClient { endpoint: endpoint(&config.base_url), config, options, http })
    }

    /// A client configured from the environment ([`OpenAiConfig::from_env`]'s variables).
    pub fn from_env() -> Result<Self, ModelError> {
        Self::new(OpenAiConfig::from_env()?)
    }

    /// The configuration.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The options.
    pub fn options(&self) -> &ResponsesOptions {
        &self.options
    }

    /// The URL requests go to: the base URL with `/responses`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    fn post(&self, body: &WireRequest<'_>) -> reqwest::RequestBuilder {
        let builder = self.http.post(&self.endpoint).json(body);
        match &self.config.api_key {
            // reqwest marks the header sensitive, so it is never printed either.
            Some(key) => builder.bearer_auth(key.expose()),
            None => builder,
        }
    }

    fn transport(&self, err: &reqwest::Error, phase: Phase, received_bytes: usize) -> ModelError {
        let c = &self.config;
        transport_error(&c.model, &self.endpoint, err, phase, c.connect_timeout, received_bytes, c.api_key.as_ref())
    }

    fn status_error(
        &self,
        status: reqwest::StatusCode,
        headers: &reqwest::header::HeaderMap,
        bytes: &[u8],
    ) -> ModelError {
        let mut err = status_error(self.model(), status, headers, bytes, self.config.api_key.as_ref());
        // A bare 404 is most often a server without this API (or a base URL without `/v1`).
        if let ModelError::Http { status: 404, message, error_type: None, error_code: None, .. } = &mut err {
            message.push_str(&format!(
                " (POST {}; does the server implement the Responses API, and does the base URL end in `/v1`?)",
                self.endpoint
            ));
        }
        err
    }

    async fn read_body(
        &self,
        response: &mut reqwest::Response,
        phase: Phase,
        idle: Option<Duration>,
    ) -> Result<Vec<u8>, ModelError> {
        failure::read_body(response, self.model(), phase, idle, |e, p, n| self.transport(e, p, n)).await
    }

    /// The reply in a whole response body.
    fn parse(&self, body: &[u8]) -> Result<ChatResponse, ModelError> {
        let model = self.model();
        let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| parse_error(model, body, &e))?;
        if let Some(err) = ServerError::from_json(&value) {
            return Err(err.into_model_error(model, reqwest::StatusCode::OK, None, self.config.api_key.as_ref()));
        }
        read_response(&value, self.options.carry_reasoning).map_err(|message| ModelError::MalformedBody {
            model: model.to_owned(),
            message,
            excerpt: failure::excerpt(body),
        })
    }

    /// One non-streaming request.
    async fn attempt(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let body = WireRequest::new(self.model(), request, &self.options, false)?;
        let phase = Phase { name: "response", limit: self.config.request_timeout };
        let mut response = self
            .post(&body)
            .timeout(self.config.request_timeout)
            .send()
            .await
            .map_err(|e| self.transport(&e, phase, 0))?;
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = self.read_body(&mut response, phase, None).await?;
        if !status.is_success() {
            return Err(self.status_error(status, &headers, &bytes));
        }
        self.parse(&bytes)
    }

    /// One streaming request.
    async fn stream_attempt(
        &self,
        request: &ChatRequest,
        on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
    ) -> Result<ChatResponse, ModelError> {
        let body = WireRequest::new(self.model(), request, &self.options, true)?;
        let head = Phase { name: "response", limit: self.config.request_timeout };
        let idle = Phase { name: "stream chunk", limit: self.config.stream_idle_timeout };
        let send = self.post(&body).header(ACCEPT, "text/event-stream").send();
        let mut response = tokio::time::timeout(head.limit, send)
            .await
            .map_err(|_| self.timeout(head))?
            .map_err(|e| self.transport(&e, head, 0))?;
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let bytes = self.read_body(&mut response, idle, Some(idle.limit)).await?;
            return Err(self.status_error(status, &headers, &bytes));
        }
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if is_json {
            // The server ignored `stream: true` and sent a whole response.
            let bytes = self.read_body(&mut response, idle, Some(idle.limit)).await?;
            let reply = self.parse(&bytes)?;
            if !reply.content.is_empty() {
                on_token(&reply.content);
            }
            return Ok(reply);
        }
        let mut parser = SseParser::default();
        let mut state = StreamState::default();
        let mut events = Vec::new();
        let mut received = 0usize;
        'read: loop {
            let chunk = match tokio::time::timeout(idle.limit, response.chunk()).await {
                Err(_) => return Err(self.timeout(idle)),
                Ok(Err(e)) => return Err(self.transport(&e, idle, received)),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => chunk,
            };
            received += chunk.len();
            if received > MAX_BODY_BYTES {
                return Err(ModelError::MalformedBody {
                    model: self.model().to_owned(),
                    message: format!("the stream is larger than {MAX_BODY_BYTES} bytes"),
                    excerpt: failure::excerpt(&chunk),
                });
            }
            parser.push(&chunk, &mut events);
            for event in events.drain(..) {
                state.on_event(&event, self.options.carry_reasoning, on_token).map_err(|e| self.chunk_error(e))?;
                if state.is_done() {
                    break 'read;
                }
            }
        }
        state.finish(self.model(), received)
    }

    fn timeout(&self, phase: Phase) -> ModelError {
        ModelError::Timeout { model: self.model().to_owned(), phase: phase.name, limit: phase.limit }
    }

    fn chunk_error(&self, err: ChunkError) -> ModelError {
        match err {
            ChunkError::Server(e) => {
                e.into_model_error(self.model(), reqwest::StatusCode::OK, None, self.config.api_key.as_ref())
            }
            ChunkError::Malformed { message, excerpt } => ModelError::MalformedBody {
                model: self.model().to_owned(),
                message: format!("stream event: {message}"),
                excerpt,
            },
        }
    }

    fn log_reply(&self, request: &ChatRequest, reply: &ChatResponse) {
        let reported = reply.usage.map(|u| u.prompt_tokens);
        if let (Some(predicted), Some(reported)) = (request.predicted_prompt_tokens, reported)
            && predicted != reported
        {
            tracing::debug!(
                target: "ctx::llm",
                predicted,
                reported,
                "the server counted the input differently from ctx"
            );
        }
        tracing::debug!(
            target: "ctx::llm",
            prompt_tokens = reported,
            completion_tokens = reply.usage.map(|u| u.completion_tokens),
            reasoning_tokens = reply.usage.and_then(|u| u.reasoning_tokens),
            reasoning_items = reply.thinking.len(),
            finish_reason = reply.finish_reason.as_deref(),
            "model replied"
        );
    }

    fn span(&self, request: &ChatRequest, stream: bool) -> tracing::Span {
        tracing::info_span!(
            target: "ctx::llm",
            "model_call",
            model = %self.config.model,
            endpoint = %self.endpoint,
            step = request.step_id.as_deref(),
            stream,
            max_tokens = request.max_tokens,
        )
    }
}

/// The Responses URL of a base URL: `/responses` appended unless it is there already.
fn endpoint(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    if base.ends_with("/responses") { base.to_owned() } else { format!("{base}/responses") }
}

impl ChatModel for ResponsesClient {
    fn model_name(&self) -> &str {
        &self.config.model
    }

    /// As [`OpenAiClient`](super::OpenAiClient)'s: the host's well-known provider, else `openai`.
    fn provider_name(&self) -> &str {
        super::provider_of(&self.config.base_url)
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        async {
            let mut retry = RetryState::new(&self.config.retry, &self.config.model);
            loop {
                let attempt = self.attempt(request).await;
                match attempt.map_err(|e| failure::redact_error(self.config.api_key.as_ref(), e)) {
                    Ok(reply) => {
                        self.log_reply(request, &reply);
                        return Ok(reply);
                    }
                    Err(err) => tokio::time::sleep(retry.after_failure(err, true)?).await,
                }
            }
        }
        .instrument(self.span(request, false))
        .await
    }

    async fn chat_stream(
        &self,
        request: &ChatRequest,
        on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
    ) -> Result<ChatResponse, ModelError> {
        async {
            let mut retry = RetryState::new(&self.config.retry, &self.config.model);
            loop {
                let mut emitted = false;
                let mut forward = |piece: &str| {
                    emitted = true;
                    on_token(piece);
                };
                let attempt = self.stream_attempt(request, &mut forward).await;
                match attempt.map_err(|e| failure::redact_error(self.config.api_key.as_ref(), e)) {
                    Ok(reply) => {
                        self.log_reply(request, &reply);
                        return Ok(reply);
                    }
                    // Once text has reached the caller a retry would hand it over twice.
                    Err(err) => tokio::time::sleep(retry.after_failure(err, !emitted)?).await,
                }
            }
        }
        .instrument(self.span(request, true))
        .await
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
