//! The HTTP side shared by the client and the token counter: the API's headers, and the
//! classification of an error object that arrives inside a successful response (the shared
//! `failure` module already reads Anthropic's `{"type": "error", "error": {…}}` shape). Sending,
//! reading and retrying are the shared HTTP attempt's (`crate::llm::http`).

use reqwest::StatusCode;
use reqwest::header::HeaderValue;

use super::config::AnthropicConfig;
use crate::llm::ModelError;
use crate::llm::http::attempt::{Api, Settings};
use crate::llm::http::failure::ServerError;

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
}

/// A non-success status is classified the shared way (a 429's `retry-after` kept, a 529
/// retried with the policy's backoff like any 5xx); an error object inside a successful response
/// by the status its type stands for.
impl Api for Http {
    fn settings(&self) -> Settings<'_> {
        let c = &self.config;
        let timeouts = [c.request_timeout, c.connect_timeout, c.stream_idle_timeout];
        Settings::new(&c.model, c.api_key.as_ref(), &c.retry, timeouts)
    }

    fn post(&self, url: &str) -> reqwest::RequestBuilder {
        let builder = self.client.post(url).header("anthropic-version", self.config.version.as_str());
        match &self.key_header {
            Some(key) => builder.header("x-api-key", key.clone()),
            None => builder,
        }
    }

    /// The typed error of an error object that came with a success status, classified as the
    /// status its type stands for.
    fn server_error(&self, err: ServerError) -> ModelError {
        let status = status_of_error_type(err.error_type.as_deref());
        err.into_model_error(&self.config.model, status, None, self.config.api_key.as_ref())
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
