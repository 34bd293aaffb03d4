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

mod config;
mod responses;
mod sse;
mod wire;

use std::fmt;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use tracing::Instrument;

pub use crate::llm::http::RetryPolicy;
use crate::llm::http::failure::{self, MAX_BODY_BYTES, Phase, ServerError, parse_error, status_error, transport_error};
use crate::llm::http::http_client;
use crate::llm::http::retry::RetryState;
use crate::llm::http::sse::SseParser;
pub use config::{
    DEFAULT_BASE_URL, ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, ENV_OPENAI_BASE_URL, MaxTokensParam, OpenAiConfig,
};
pub use responses::{ReasoningEffort, ResponsesClient, ResponsesOptions};
use sse::{ChunkError, StreamState};
use wire::{WireCompletion, WireRequest};

use crate::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use crate::validation::ConfigIssues;

/// A client for an OpenAI-compatible chat-completions endpoint. Cheap to clone (the connection
/// pool is shared). `Debug` shows the configuration with the key redacted.
#[derive(Clone)]
pub struct OpenAiClient {
    config: OpenAiConfig,
    endpoint: String,
    http: reqwest::Client,
}

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiClient").field("endpoint", &self.endpoint).field("config", &self.config).finish()
    }
}

impl OpenAiClient {
    /// A client for `config`, after checking it ([`OpenAiConfig::validate`]: every problem at once).
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        ConfigIssues::check("OpenAiConfig", config.validate())?;
        let http = http_client(&config.model, config.connect_timeout, config.system_proxy, true)?;
        Ok(OpenAiClient { endpoint: config.endpoint(), config, http })
    }

    /// A client configured from the environment (see [`OpenAiConfig::from_env`]).
    pub fn from_env() -> Result<Self, ModelError> {
        Self::new(OpenAiConfig::from_env()?)
    }

    /// The configuration.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The error for a non-success status. A bare 404 (no error of the API's shape) names the
    /// URL posted to: the usual cause is a base URL without its `/v1`
    /// (`CTX_BASE_URL=http://localhost:11434` instead of `…/v1`), and the server's own "Not
    /// Found" says neither.
    fn status_error(
        &self,
        status: reqwest::StatusCode,
        headers: &reqwest::header::HeaderMap,
        bytes: &[u8],
    ) -> ModelError {
        let mut err = status_error(&self.config.model, status, headers, bytes, self.config.api_key.as_ref());
        // Only when the server gave no error of the API's shape: a 404 that says "model not found"
        // is the server's own words, already clear.
        if let ModelError::Http { status: 404, message, error_type: None, error_code: None, .. } = &mut err {
            message.push_str(&format!(" (POST {})", self.endpoint));
            if !self.endpoint.contains("/v1/") {
                message.push_str(&format!(
                    "; an OpenAI-compatible base URL usually ends in `/v1`: is `{ENV_BASE_URL}` missing it?"
                ));
            }
        }
        err
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
        transport_error(
            &self.config.model,
            &self.endpoint,
            err,
            phase,
            self.config.connect_timeout,
            received_bytes,
            self.config.api_key.as_ref(),
        )
    }

    fn timeout(&self, phase: Phase) -> ModelError {
        ModelError::Timeout { model: self.config.model.clone(), phase: phase.name, limit: phase.limit }
    }

    /// Reads a whole body; each chunk must arrive within `idle` when given (reqwest's request
    /// timeout covers the rest).
    async fn read_body(
        &self,
        response: &mut reqwest::Response,
        phase: Phase,
        idle: Option<Duration>,
    ) -> Result<Vec<u8>, ModelError> {
        failure::read_body(response, &self.config.model, phase, idle, |e, p, n| self.transport(e, p, n)).await
    }

    /// The reply in a whole (non-streamed) completion body.
    fn parse_completion(&self, body: &[u8]) -> Result<ChatResponse, ModelError> {
        let model = self.config.model.as_str();
        let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| parse_error(model, body, &e))?;
        if let Some(err) = ServerError::from_json(&value) {
            return Err(err.into_model_error(model, reqwest::StatusCode::OK, None, self.config.api_key.as_ref()));
        }
        let completion: WireCompletion = serde_json::from_value(value).map_err(|e| ModelError::MalformedBody {
            model: model.to_owned(),
            message: format!("not a chat completion: {e}"),
            excerpt: failure::excerpt(body),
        })?;
        let Some(choices) = completion.choices else {
            return Err(ModelError::MalformedBody {
                model: model.to_owned(),
                message: "the body has no `choices` field".into(),
                excerpt: failure::excerpt(body),
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

    /// One non-streaming request.
    async fn attempt(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let body = WireRequest::new(&self.config.model, request, self.config.max_tokens_param, false, false);
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
        self.parse_completion(&bytes)
    }

    /// One streaming request.
    async fn stream_attempt(
        &self,
        request: &ChatRequest,
        on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
    ) -> Result<ChatResponse, ModelError> {
        let body = WireRequest::new(
            &self.config.model,
            request,
            self.config.max_tokens_param,
            true,
            self.config.stream_include_usage,
        );
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
            // The server ignored `stream: true` and sent a whole completion.
            let bytes = self.read_body(&mut response, idle, Some(idle.limit)).await?;
            let reply = self.parse_completion(&bytes)?;
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
                    model: self.config.model.clone(),
                    message: format!("the stream is larger than {MAX_BODY_BYTES} bytes"),
                    excerpt: failure::excerpt(&chunk),
                });
            }
            parser.push(&chunk, &mut events);
            for event in events.drain(..) {
                state.on_event(&event, on_token).map_err(|e| self.chunk_error(e))?;
                if state.is_done() {
                    break 'read;
                }
            }
        }
        state.finish(&self.config.model, received)
    }

    fn chunk_error(&self, err: ChunkError) -> ModelError {
        let model = self.config.model.as_str();
        match err {
            ChunkError::Server(e) => {
                e.into_model_error(model, reqwest::StatusCode::OK, None, self.config.api_key.as_ref())
            }
            ChunkError::Malformed { message, excerpt } => ModelError::MalformedBody {
                model: model.to_owned(),
                message: format!("stream chunk: {message}"),
                excerpt,
            },
        }
    }

    fn log_reply(&self, request: &ChatRequest, reply: &ChatResponse) {
        let reported = reply.usage.map(|u| u.prompt_tokens);
        match (request.predicted_prompt_tokens, reported) {
            (Some(predicted), Some(reported)) if predicted != reported => tracing::debug!(
                target: "ctx::llm",
                predicted,
                reported,
                "the server counted the prompt differently from ctx (its chat template or tokenizer differs)"
            ),
            _ => {}
        }
        tracing::debug!(
            target: "ctx::llm",
            prompt_tokens = reported,
            completion_tokens = reply.usage.map(|u| u.completion_tokens),
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

impl OpenAiClient {
    /// The error with every echo of the API key removed from the text it quotes. Applied to each
    /// attempt's error before it is logged, retried or returned: a proxy page or a debugging
    /// endpoint that echoes request headers must not carry the key into an error or a trace.
    fn redacted(&self, err: ModelError) -> ModelError {
        failure::redact_error(self.config.api_key.as_ref(), err)
    }
}

impl ChatModel for OpenAiClient {
    fn model_name(&self) -> &str {
        &self.config.model
    }

    /// The provider the base URL's host names: a well-known value of the OpenTelemetry GenAI
    /// conventions when the host is that provider's, else `openai` (the API it speaks).
    fn provider_name(&self) -> &str {
        provider_of(&self.config.base_url)
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        async {
            let mut retry = RetryState::new(&self.config.retry, &self.config.model);
            loop {
                match self.attempt(request).await.map_err(|e| self.redacted(e)) {
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
                match self.stream_attempt(request, &mut forward).await.map_err(|e| self.redacted(e)) {
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

/// The `gen_ai.provider.name` of an OpenAI-compatible API at `base_url`, as OpenTelemetry's GenAI
/// conventions name it: a provider of the conventions' well-known values when the host is
/// theirs, else `openai`. For any other server (llama.cpp, vLLM, a proxy, …) ctx knows no more
/// than the API it speaks, and the conventions set the attribute from the instrumentation's best
/// knowledge, the API's flavour, with `gen_ai.request.model` and the server's address telling
/// the actual system apart.
pub(crate) fn provider_of(base_url: &str) -> &'static str {
    let rest = base_url.split_once("://").map_or(base_url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = host.split(':').next().unwrap_or_default().to_ascii_lowercase();
    let is = |domain: &str| host == domain || host.ends_with(&format!(".{domain}"));
    if is("openai.azure.com") {
        "azure.ai.openai"
    } else if is("groq.com") {
        "groq"
    } else if is("deepseek.com") {
        "deepseek"
    } else if is("mistral.ai") {
        "mistral_ai"
    } else if is("x.ai") {
        "x_ai"
    } else if is("perplexity.ai") {
        "perplexity"
    } else {
        "openai"
    }
}

#[cfg(test)]
mod provider_tests {
    use super::provider_of;

    #[test]
    fn the_provider_is_the_hosts_well_known_name_else_the_apis() {
        assert_eq!(provider_of("https://api.openai.com/v1"), "openai");
        assert_eq!(provider_of("https://my-res.openai.azure.com/openai/deployments/x"), "azure.ai.openai");
        assert_eq!(provider_of("https://api.groq.com/openai/v1"), "groq");
        assert_eq!(provider_of("https://api.deepseek.com"), "deepseek");
        assert_eq!(provider_of("https://api.mistral.ai/v1"), "mistral_ai");
        assert_eq!(provider_of("https://api.x.ai/v1"), "x_ai");
        assert_eq!(provider_of("https://api.perplexity.ai"), "perplexity");
        // An OpenAI-compatible server ctx cannot tell apart: the API's flavour.
        assert_eq!(provider_of("http://127.0.0.1:18080/v1"), "openai");
        // A look-alike host is not the provider.
        assert_eq!(provider_of("http://notgroq.com.example:80/v1"), "openai");
        assert_eq!(provider_of("http://user@API.GROQ.COM:443"), "groq");
    }
}
