//! Configuration of [`super::AnthropicClient`]: endpoint, model, key, API version, timeouts,
//! retries — from a struct or from the environment.
//!
//! The retry policy is the OpenAI client's ([`RetryPolicy`]): the same schedule and the same
//! `Retry-After` rule apply to both APIs.

use std::time::Duration;

use crate::codes::Code;
use crate::llm::http::RetryPolicy;
use crate::llm::http::timing_issues;
use crate::llm::{ApiKey, ModelError};
use crate::validation::{ConfigIssue, ConfigIssues, FieldPath};

/// Environment variable with the API base URL.
pub const ENV_ANTHROPIC_BASE_URL: &str = "ANTHROPIC_BASE_URL";
/// Environment variable with the API key (sent as `x-api-key`).
pub const ENV_ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
/// The base URL used when [`ENV_ANTHROPIC_BASE_URL`] is not set.
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";
/// The `anthropic-version` header sent unless configured otherwise: the version the Messages API
/// documents every field used here under.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Everything [`super::AnthropicClient`] needs. `Debug` shows the key as `[REDACTED]`.
///
/// ```
/// use std::time::Duration;
/// use ctx::llm::anthropic::AnthropicConfig;
///
/// let config = AnthropicConfig::new("http://127.0.0.1:8080/v1", "claude-sonnet-4-5")
///     .with_api_key("sk-test")
///     .request_timeout(Duration::from_secs(60));
/// assert_eq!(config.request_timeout, Duration::from_secs(60));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AnthropicConfig {
    /// Base URL up to and including `/v1`; `/messages` and `/messages/count_tokens` are appended.
    pub base_url: String,
    /// The model name sent with each request (`claude-…`).
    pub model: String,
    /// The key sent as `x-api-key`; `None` sends none (a local proxy that adds it).
    pub api_key: Option<ApiKey>,
    /// The `anthropic-version` header.
    pub version: String,
    /// Limit for a whole non-streaming request and for the response head of a streaming one.
    pub request_timeout: Duration,
    /// Limit for establishing the connection.
    pub connect_timeout: Duration,
    /// Longest silence allowed between two chunks of a stream (the server sends `ping` events
    /// while it works, so silence means a dead connection).
    pub stream_idle_timeout: Duration,
    /// Retries (429, 529 `overloaded_error`, other 5xx, timeouts, broken connections).
    pub retry: RetryPolicy,
    /// Route requests through the proxy the environment names; `false` connects directly.
    pub system_proxy: bool,
}

// The fields without a `with_…` method get a setter named after them.
ctx_spec::setters!(AnthropicConfig {
    version: String,
    request_timeout: Duration,
    connect_timeout: Duration,
    stream_idle_timeout: Duration,
    system_proxy: bool,
});

impl AnthropicConfig {
    /// A configuration for `model` at `base_url` with default timeouts (600 s request — long
    /// replies of large models take minutes —, 10 s connect, 60 s stream silence), default
    /// retries, no key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        AnthropicConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            version: ANTHROPIC_VERSION.to_owned(),
            request_timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(10),
            stream_idle_timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            system_proxy: true,
        }
    }

    /// This configuration with an API key (an empty key means none).
    #[must_use]
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = ApiKey::new(key);
        self
    }

    /// This configuration with a retry policy.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// `model` at [`ENV_ANTHROPIC_BASE_URL`] (else [`DEFAULT_ANTHROPIC_BASE_URL`]) with the key
    /// in [`ENV_ANTHROPIC_API_KEY`].
    pub fn from_env(model: impl Into<String>) -> Self {
        Self::from_lookup(model, |name| std::env::var(name).ok())
    }

    /// Like [`Self::from_env`], reading variables through `lookup`. Empty values count as unset.
    pub fn from_lookup(model: impl Into<String>, lookup: impl Fn(&str) -> Option<String>) -> Self {
        let base = lookup(ENV_ANTHROPIC_BASE_URL)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| DEFAULT_ANTHROPIC_BASE_URL.to_owned());
        let mut config = AnthropicConfig::new(base, model);
        config.api_key = lookup(ENV_ANTHROPIC_API_KEY).and_then(ApiKey::new);
        config
    }

    /// Every problem of this configuration.
    pub fn validate(&self) -> Vec<ConfigIssue> {
        let mut issues = Vec::new();
        let root = FieldPath::root();
        let url_issue = |message: String| {
            ConfigIssue::new(Code::ModelConfigBaseUrl, root.key("base_url"), message)
                .with_help(format!("write it like `{DEFAULT_ANTHROPIC_BASE_URL}`"))
        };
        match reqwest::Url::parse(&self.base_url) {
            // A text with `@` may hold a credential: do not echo it.
            Err(e) if self.base_url.contains('@') => issues.push(url_issue(format!("the base URL is not a URL: {e}"))),
            Err(e) => issues.push(url_issue(format!("base URL `{}` is not a URL: {e}", self.base_url))),
            Ok(url) if !url.username().is_empty() || url.password().is_some() => {
                issues.push(url_issue("the base URL contains credentials (`user:password@`)".to_owned()));
            }
            Ok(url) if url.scheme() != "http" && url.scheme() != "https" => {
                issues.push(url_issue(format!("base URL `{url}` has scheme `{}`", url.scheme())));
            }
            Ok(_) => {}
        }
        if self.model.trim().is_empty() {
            issues.push(
                ConfigIssue::new(Code::ModelConfigMissingModel, root.key("model"), "the model name is empty")
                    .with_help("give the model to call, e.g. `claude-sonnet-4-5`"),
            );
        }
        if self.version.trim().is_empty() || !self.version.bytes().all(|b| b.is_ascii_graphic()) {
            issues.push(
                ConfigIssue::new(
                    Code::ModelConfigApiVersion,
                    root.key("version"),
                    "the `anthropic-version` header value is empty or not printable ASCII",
                )
                .with_help(format!("use `{ANTHROPIC_VERSION}`")),
            );
        }
        issues.extend(timing_issues(
            &root,
            [self.request_timeout, self.connect_timeout, self.stream_idle_timeout],
            &self.retry,
        ));
        issues
    }

    /// Checks the configuration (every problem at once).
    pub(crate) fn check(&self) -> Result<(), ModelError> {
        ConfigIssues::check("AnthropicConfig", self.validate()).map_err(ModelError::from)
    }

    /// The Messages endpoint.
    pub fn messages_url(&self) -> String {
        format!("{}/messages", self.base_url.trim_end_matches('/'))
    }

    /// The token-counting endpoint.
    pub fn count_tokens_url(&self) -> String {
        format!("{}/messages/count_tokens", self.base_url.trim_end_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn environment_and_defaults() {
        let vars: HashMap<&str, &str> =
            HashMap::from([(ENV_ANTHROPIC_API_KEY, " sk-ant-xyz \n"), (ENV_ANTHROPIC_BASE_URL, "  ")]);
        let c = AnthropicConfig::from_lookup("claude-x", |n| vars.get(n).map(|v| (*v).to_owned()));
        assert_eq!(c.base_url, DEFAULT_ANTHROPIC_BASE_URL);
        assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("sk-ant-xyz"));
        assert!(!format!("{c:?}").contains("sk-ant-xyz"));
        assert_eq!(c.messages_url(), "https://api.anthropic.com/v1/messages");
        assert_eq!(c.count_tokens_url(), "https://api.anthropic.com/v1/messages/count_tokens");
        assert!(c.validate().is_empty());
    }

    #[test]
    fn every_problem_is_reported_without_echoing_credentials() {
        let mut c = AnthropicConfig::new("https://user:pw@host/v1", "");
        c.version = String::new();
        c.connect_timeout = Duration::ZERO;
        let paths: Vec<String> = c.validate().iter().map(|i| i.path.to_string()).collect();
        assert_eq!(paths, ["base_url", "model", "version", "connect_timeout"]);
        let codes: Vec<&str> = c.validate().iter().map(|i| i.code.as_str()).collect();
        assert_eq!(
            codes,
            ["MODEL_CONFIG_BASE_URL", "MODEL_CONFIG_MISSING_MODEL", "MODEL_CONFIG_API_VERSION", "MODEL_CONFIG_TIMEOUT"]
        );
        assert!(c.validate().iter().all(|i| !i.message.contains("pw")));
        assert!(AnthropicConfig::new("ftp://h/v1", "m").validate()[0].message.contains("scheme `ftp`"));
    }
}
