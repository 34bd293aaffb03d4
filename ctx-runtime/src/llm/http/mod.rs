//! What the HTTP model clients share (OpenAI's two, `llm::openai`, and Anthropic's,
//! `llm::anthropic`): the reqwest client they are built on, one attempt at a request (`attempt`:
//! send, read the body or the event stream, classify what went wrong), the retry driver
//! ([`RetryPolicy`], `retry`), a whole model call (`call`: retried attempts, traced), the
//! classification of what went wrong on the wire (`failure`), the event-stream framing (`sse`)
//! and the timing rules of their configurations. A client keeps only what is its own: its wire
//! format, its headers and its error wordings, handed to `attempt` as an `attempt::Api`.
//!
//! Built under the private feature `__http`, which `openai` and `anthropic` each turn on, so
//! neither client implies the other.

pub(crate) mod attempt;
pub(crate) mod call;
pub(crate) mod failure;
pub(crate) mod retry;
pub(crate) mod sse;

use std::time::Duration;

use crate::codes::Code;
use crate::llm::ModelError;
use crate::validation::{ConfigIssue, FieldPath};

/// When and how often a failed request is sent again.
///
/// Retried: 429, 408, 5xx, timeouts, connection failures and truncated bodies. The wait before
/// retry `n` (from 1) is `initial_backoff * 2^(n-1)`, capped at `max_backoff`, plus (with
/// `jitter`) a random extra of up to the same amount, so that clients rejected together do not
/// return together. A 429's `Retry-After` (or `retry-after-ms`) replaces the computed wait; when it
/// asks for more than `max_retry_after`, the client gives up at once and returns the
/// [`ModelError::RateLimited`] carrying the server's delay.
///
/// Start from [`RetryPolicy::default`] (or [`RetryPolicy::none`]) and change what you need with
/// the setters named after the fields:
///
/// ```
/// use std::time::Duration;
/// use ctx::llm::openai::{OpenAiConfig, RetryPolicy};
///
/// let retry = RetryPolicy::default().max_retries(5).max_backoff(Duration::from_secs(10)).jitter(false);
/// let config = OpenAiConfig::new("http://127.0.0.1:8080/v1", "local").with_retry(retry).system_proxy(false);
/// assert_eq!(config.retry.max_retries, 5);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 = no retry).
    pub max_retries: u32,
    /// The wait before the first retry.
    pub initial_backoff: Duration,
    /// The longest computed wait.
    pub max_backoff: Duration,
    /// Add random jitter to computed waits.
    pub jitter: bool,
    /// The longest server-requested wait the client accepts.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            jitter: true,
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy { max_retries: 0, ..RetryPolicy::default() }
    }
}

ctx_spec::setters!(RetryPolicy {
    max_retries: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    jitter: bool,
    max_retry_after: Duration,
});

/// The HTTP client of a model API client (OpenAI's, Anthropic's): rustls, ctx's user agent, the
/// connect timeout; the system proxy only when allowed; idle connections kept only when `pooled`.
pub(crate) fn http_client(
    model: &str,
    connect_timeout: Duration,
    system_proxy: bool,
    pooled: bool,
) -> Result<reqwest::Client, ModelError> {
    let mut builder = reqwest::Client::builder();
    if !system_proxy {
        builder = builder.no_proxy();
    }
    if !pooled {
        builder = builder.pool_max_idle_per_host(0);
    }
    builder
        .use_rustls_tls()
        .connect_timeout(connect_timeout)
        .user_agent(concat!("ctx/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ModelError::Failed {
            model: model.to_owned(),
            message: format!("cannot build the HTTP client: {e}"),
        })
}

/// The timing rules every HTTP client's configuration follows (OpenAI's, Anthropic's): no zero
/// timeout, a backoff that does not start above its own maximum. Issues under `root`, for its
/// `request_timeout`, `connect_timeout` and `stream_idle_timeout`, in that order.
pub(crate) fn timing_issues(
    root: &FieldPath,
    [request, connect, stream_idle]: [Duration; 3],
    retry: &RetryPolicy,
) -> Vec<ConfigIssue> {
    let mut issues = Vec::new();
    for (name, value) in
        [("request_timeout", request), ("connect_timeout", connect), ("stream_idle_timeout", stream_idle)]
    {
        if value.is_zero() {
            issues.push(
                ConfigIssue::new(Code::ModelConfigTimeout, root.key(name), format!("`{name}` is zero"))
                    .with_help("a zero timeout fails every request; give a positive duration"),
            );
        }
    }
    if retry.initial_backoff > retry.max_backoff {
        issues.push(
            ConfigIssue::new(
                Code::ModelConfigRetry,
                root.key("retry").key("initial_backoff"),
                format!(
                    "`initial_backoff` ({:?}) is longer than `max_backoff` ({:?})",
                    retry.initial_backoff, retry.max_backoff
                ),
            )
            .with_help("make `max_backoff` at least `initial_backoff`"),
        );
    }
    issues
}
