//! [`ModelError`]: every way a model call can fail, each with a stable code.
//!
//! The variants separate what a caller reacts to differently: a prompt the server found too long
//! (compact and retry), a rate limit or an outage (wait, or fail over), a server that answered
//! something that is not a chat completion (a bug or a misconfigured base URL), and a bad client
//! configuration (fix the config). Messages quote the server's own error text, with the API key
//! removed should a server echo it.

use std::time::Duration;

use crate::codes::{Code, ErrorCode};
use crate::tokens::TokenError;
use crate::validation::ConfigIssues;

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The server said the prompt plus output does not fit its context.
    #[error("model `{model}` rejected the request: context length exceeded ({message})")]
    ContextLengthExceeded {
        /// The model name.
        model: String,
        /// The server's message.
        message: String,
    },
    /// The model failed in a way no other variant describes.
    #[error("model `{model}` call failed: {message}")]
    Failed {
        /// The model name.
        model: String,
        /// What happened.
        message: String,
    },
    /// The client configuration is invalid; every problem is listed with its field.
    #[error(transparent)]
    Config(#[from] ConfigIssues),
    /// No connection to the server could be established (refused, DNS, TLS, connect timeout).
    #[error("model `{model}`: cannot connect to {url}: {message}")]
    Connect {
        /// The model name.
        model: String,
        /// The endpoint.
        url: String,
        /// What the transport said.
        message: String,
    },
    /// The connection broke after it was established, before a complete response head arrived.
    #[error("model `{model}`: the connection to {url} failed: {message}")]
    Transport {
        /// The model name.
        model: String,
        /// The endpoint.
        url: String,
        /// What the transport said.
        message: String,
    },
    /// The server did not answer (or, when streaming, stopped sending) within the time allowed.
    #[error("model `{model}`: no answer from the server within {limit:?} ({phase})")]
    Timeout {
        /// The model name.
        model: String,
        /// What was being waited for: `response`, `stream chunk`, `connect`.
        phase: &'static str,
        /// The limit that ran out.
        limit: Duration,
    },
    /// The server answered 429 Too Many Requests.
    #[error("model `{model}`: rate limited by the server (HTTP 429): {message}{}", retry_hint(*retry_after))]
    RateLimited {
        /// The model name.
        model: String,
        /// The server's error message.
        message: String,
        /// How long the server asked the client to wait (`Retry-After`), when it said.
        retry_after: Option<Duration>,
    },
    /// The server answered with an error status other than 429 and context-length errors.
    #[error("model `{model}`: the server answered HTTP {status}: {message}")]
    Http {
        /// The model name.
        model: String,
        /// The HTTP status code.
        status: u16,
        /// The server's error message (its JSON `error.message` when it sent one, else the body's start).
        message: String,
        /// The server's `error.type`, when given.
        error_type: Option<String>,
        /// The server's `error.code`, when given (as text: some servers send numbers).
        error_code: Option<String>,
    },
    /// The body arrived whole but is not a chat completion (not JSON, or missing required fields).
    #[error("model `{model}`: malformed response body: {message}; body starts with: {excerpt:?}")]
    MalformedBody {
        /// The model name.
        model: String,
        /// What is wrong with it.
        message: String,
        /// The first bytes of the body, lossily decoded.
        excerpt: String,
    },
    /// The body ended early: the connection closed mid-body, the JSON stops before its end, or a
    /// stream ended without its terminator.
    #[error("model `{model}`: response body truncated after {received_bytes} bytes: {message}")]
    TruncatedBody {
        /// The model name.
        model: String,
        /// What was missing.
        message: String,
        /// How many body bytes arrived.
        received_bytes: usize,
    },
    /// The completion has no choices, so there is no reply to read.
    #[error("model `{model}`: the server returned a completion with no choices")]
    EmptyChoices {
        /// The model name.
        model: String,
    },
    /// Every attempt failed with a retryable error; `last` is the final one.
    #[error("model `{model}`: gave up after {attempts} attempt(s); last error: {last}")]
    RetriesExhausted {
        /// The model name.
        model: String,
        /// How many requests were sent.
        attempts: u32,
        /// The error of the last attempt.
        last: Box<ModelError>,
    },
    /// The request asks for something this API cannot express (a system message after the
    /// conversation started, JSON mode on an API that has none, …); nothing was sent.
    #[error("model `{model}`: the request cannot be sent: {message}")]
    UnsupportedRequest {
        /// The model name.
        model: String,
        /// What cannot be expressed, and where (message index, parameter name).
        message: String,
    },
    /// A local model could not count tokens.
    #[error("model `{model}`: token counting failed: {source}")]
    Tokenizer {
        /// The model name.
        model: String,
        /// The counter's error.
        source: TokenError,
    },
}

/// Phrases that servers use for "the prompt does not fit the context window" (lowercase).
#[cfg(any(feature = "__http", feature = "rig"))]
const CONTEXT_PHRASES: &[&str] = &[
    "context_length_exceeded",
    "maximum context length",
    "context length exceeded",
    "exceeds the available context size",
    "exceed_context_size",
    "longer than the maximum model length",
    "exceeds the model's context",
    "prompt is too long",
    // Anthropic: "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000".
    "exceed context limit",
];

/// Whether a server's error (its `code`, `type` and message) says the prompt does not fit the
/// context window: one rule for ctx's own clients and the errors rig relays.
#[cfg(any(feature = "__http", feature = "rig"))]
pub(crate) fn is_context_length(code: Option<&str>, error_type: Option<&str>, message: &str) -> bool {
    if code == Some("context_length_exceeded") || error_type == Some("exceed_context_size_error") {
        return true;
    }
    let message = message.to_lowercase();
    CONTEXT_PHRASES.iter().any(|p| message.contains(p))
}

fn retry_hint(retry_after: Option<Duration>) -> String {
    retry_after.map(|d| format!(" (server asks to retry after {d:?})")).unwrap_or_default()
}

impl ModelError {
    /// Whether sending the same request again may succeed: rate limits, server errors (5xx),
    /// timeouts, connection failures and truncated bodies. Context-length errors, other 4xx,
    /// malformed bodies and configuration errors are final.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::RateLimited { .. }
            | ModelError::Timeout { .. }
            | ModelError::Connect { .. }
            | ModelError::Transport { .. }
            | ModelError::TruncatedBody { .. } => true,
            ModelError::Http { status, .. } => *status >= 500 || *status == 408,
            _ => false,
        }
    }

    /// The `Retry-After` the server sent with a 429, when it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ModelError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The error behind retries: `last` of [`ModelError::RetriesExhausted`], else `self`.
    pub fn root(&self) -> &ModelError {
        match self {
            ModelError::RetriesExhausted { last, .. } => last.root(),
            other => other,
        }
    }
}

impl ErrorCode for ModelError {
    fn code(&self) -> Code {
        match self {
            ModelError::ContextLengthExceeded { .. } => Code::ModelContextLengthExceeded,
            ModelError::Failed { .. } => Code::ModelCallFailed,
            ModelError::Config(issues) => issues.code(),
            ModelError::Connect { .. } => Code::ModelConnect,
            ModelError::Transport { .. } => Code::ModelTransport,
            ModelError::Timeout { .. } => Code::ModelTimeout,
            ModelError::RateLimited { .. } => Code::ModelRateLimited,
            ModelError::Http { .. } => Code::ModelHttpStatus,
            ModelError::MalformedBody { .. } => Code::ModelMalformedBody,
            ModelError::TruncatedBody { .. } => Code::ModelTruncatedBody,
            ModelError::EmptyChoices { .. } => Code::ModelEmptyChoices,
            ModelError::RetriesExhausted { .. } => Code::ModelRetriesExhausted,
            ModelError::Tokenizer { .. } => Code::ModelTokenizer,
            ModelError::UnsupportedRequest { .. } => Code::ModelUnsupportedRequest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16) -> ModelError {
        ModelError::Http { model: "m".into(), status, message: "x".into(), error_type: None, error_code: None }
    }

    #[test]
    fn retryability_follows_the_status() {
        assert!(http(500).is_retryable());
        assert!(http(503).is_retryable());
        assert!(http(408).is_retryable());
        assert!(!http(400).is_retryable());
        assert!(!http(401).is_retryable());
        let ctx = ModelError::ContextLengthExceeded { model: "m".into(), message: "too long".into() };
        assert!(!ctx.is_retryable());
        let limited = ModelError::RateLimited {
            model: "m".into(),
            message: "slow down".into(),
            retry_after: Some(Duration::from_secs(2)),
        };
        assert!(limited.is_retryable());
        assert_eq!(limited.retry_after(), Some(Duration::from_secs(2)));
        assert!(limited.to_string().contains("retry after 2s"), "{limited}");
    }

    #[test]
    fn exhausted_retries_keep_the_last_error_and_its_code() {
        let err = ModelError::RetriesExhausted { model: "m".into(), attempts: 3, last: Box::new(http(502)) };
        assert_eq!(err.code(), "MODEL_RETRIES_EXHAUSTED");
        assert_eq!(err.root().code(), "MODEL_HTTP_STATUS");
        assert!(err.to_string().contains("after 3 attempt(s)"), "{err}");
        assert!(err.to_string().contains("HTTP 502"), "{err}");
    }
}
