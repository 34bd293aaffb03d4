//! The HTTP side shared by the client and the token counter: headers, bodies, limits, and the
//! classification of what comes back (through the OpenAI client's `failure` module, which
//! already reads Anthropic's `{"type": "error", "error": {…}}` shape).

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, HeaderValue};
use serde::Serialize;

use super::config::AnthropicConfig;
use crate::llm::ModelError;
use crate::llm::http::failure::{Phase, ServerError, read_body, status_error, transport_error};

/// The status an error type stands for, for an error that arrived inside a successful response
/// (a stream's `error` event): an overloaded stream is as retryable as a 529.
fn status_of_error_type(error_type: Option<&str>) -> StatusCode {
    let code = match error_type {
        Some("invalid_request_error") => 400,
        Some("authentication_error") => 401,
        Some("billing_error") => 402,
        Some("permission_error") => 403,
        Some("not_found_error") => 404,
        Some("request_too_large") => 413,
        Some("rate_limit_error") => 429,
        Some("timeout_error") => 504,
        Some("overloaded_error") => 529,
        // `api_error` and anything unknown: the server failed.
        _ => 500,
    };
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// One configured connection to the API.
#[derive(Clone)]
pub(crate) struct Http {
    pub(crate) config: AnthropicConfig,
    pub(crate) messages_url: String,
    pub(crate) count_url: String,
    client: reqwest::Client,
    key_header: Option<HeaderValue>,
}

impl Http {
    /// A connection for `config`; `pooled: false` keeps no idle connection (for calls that each
    /// run on a short-lived runtime of their own).
    pub(crate) fn build(config: AnthropicConfig, pooled: bool) -> Result<Self, ModelError> {
        config.check()?;
        let key_header = match &config.api_key {
            Some(key) => {
                let mut value = HeaderValue::from_str(key.expose()).map_err(|_| ModelError::Failed {
                    model: config.model.clone(),
                    message: "the API key contains characters an HTTP header cannot carry".into(),
                })?;
                // Never printed, not even by reqwest's own Debug.
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let client = crate::llm::http::http_client(&config.model, config.connect_timeout, config.system_proxy, pooled)?;
        Ok(Http {
            messages_url: config.messages_url(),
            count_url: config.count_tokens_url(),
            config,
            client,
            key_header,
        })
    }

    fn post(&self, url: &str, body: &impl Serialize) -> reqwest::RequestBuilder {
        let builder = self.client.post(url).header("anthropic-version", self.config.version.as_str()).json(body);
        match &self.key_header {
            Some(key) => builder.header("x-api-key", key.clone()),
            None => builder,
        }
    }

    pub(crate) fn transport(&self, err: &reqwest::Error, phase: Phase, received_bytes: usize) -> ModelError {
        transport_error(
            &self.config.model,
            // Errors name the endpoint that failed: the counter's calls go to another path.
            err.url().map_or(self.messages_url.as_str(), |u| u.as_str()),
            err,
            phase,
            self.config.connect_timeout,
            received_bytes,
            self.config.api_key.as_ref(),
        )
    }

    pub(crate) fn timeout(&self, phase: Phase) -> ModelError {
        ModelError::Timeout { model: self.config.model.clone(), phase: phase.name, limit: phase.limit }
    }

    /// The typed error of an error object that came with a success status.
    pub(crate) fn server_error(&self, err: ServerError) -> ModelError {
        let status = status_of_error_type(err.error_type.as_deref());
        err.into_model_error(&self.config.model, status, None, self.config.api_key.as_ref())
    }

    /// Reads a whole body; each chunk must arrive within `idle` when given.
    pub(crate) async fn read_body(
        &self,
        response: &mut reqwest::Response,
        phase: Phase,
        idle: Option<Duration>,
    ) -> Result<Vec<u8>, ModelError> {
        read_body(response, &self.config.model, phase, idle, |e, p, n| self.transport(e, p, n)).await
    }

    /// The error of a non-success response; a 429's `retry-after` is kept, a 529 (overloaded)
    /// is retried with the policy's backoff like any 5xx.
    fn status_error(&self, status: StatusCode, headers: &reqwest::header::HeaderMap, body: &[u8]) -> ModelError {
        status_error(&self.config.model, status, headers, body, self.config.api_key.as_ref())
    }

    /// One non-streaming POST of `body` to `url`: the body of a success, else the typed error.
    pub(crate) async fn post_json(&self, url: &str, body: &impl Serialize) -> Result<Vec<u8>, ModelError> {
        let phase = Phase { name: "response", limit: self.config.request_timeout };
        let mut response = self
            .post(url, body)
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
        Ok(bytes)
    }

    /// Sends a streaming request and returns the response once its head says success.
    pub(crate) async fn open_stream(&self, body: &impl Serialize) -> Result<reqwest::Response, ModelError> {
        let head = Phase { name: "response", limit: self.config.request_timeout };
        let idle = Phase { name: "stream chunk", limit: self.config.stream_idle_timeout };
        let send = self.post(&self.messages_url, body).header(ACCEPT, "text/event-stream").send();
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
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::ErrorCode;

    #[test]
    fn error_types_inside_a_stream_are_classified_as_their_status() {
        let http = Http::build(AnthropicConfig::new("http://127.0.0.1:9/v1", "m"), true).unwrap();
        let of = |ty: &str, message: &str| {
            http.server_error(ServerError { message: message.into(), error_type: Some(ty.into()), code: None })
        };
        let overloaded = of("overloaded_error", "Overloaded");
        assert!(matches!(overloaded, ModelError::Http { status: 529, .. }), "{overloaded:?}");
        assert!(overloaded.is_retryable());
        assert_eq!(of("rate_limit_error", "slow").code(), "MODEL_RATE_LIMITED");
        assert!(!of("invalid_request_error", "bad").is_retryable());
        let long = of("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum");
        assert_eq!(long.code(), "MODEL_CONTEXT_LENGTH_EXCEEDED");
        assert!(of("api_error", "oops").is_retryable());
    }
}
