//! Configuration of [`super::OpenAiClient`]: endpoint, model, key, timeouts, retries — from a
//! struct or from the environment.
//!
//! The environment variables are documented on [`crate::llm::openai`].

use std::time::Duration;

use crate::codes::Code;
use crate::llm::http::{RetryPolicy, timing_issues};
use crate::llm::{ApiKey, ModelError};
use crate::validation::{ConfigIssue, ConfigIssues, FieldPath};

/// Environment variable with the server's base URL (takes precedence over [`ENV_OPENAI_BASE_URL`]).
pub const ENV_BASE_URL: &str = "CTX_BASE_URL";
/// Environment variable with the server's base URL, as OpenAI's SDKs name it.
pub const ENV_OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
/// Environment variable with the model name.
pub const ENV_MODEL: &str = "CTX_MODEL";
/// Environment variable with the API key.
pub const ENV_API_KEY: &str = "OPENAI_API_KEY";
/// The base URL used when neither variable is set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Which request field carries the output limit ([`crate::llm::ChatRequest::max_tokens`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MaxTokensParam {
    /// `max_tokens`: understood by every OpenAI-compatible server.
    #[default]
    MaxTokens,
    /// `max_completion_tokens`: required by OpenAI's reasoning models, which reject `max_tokens`.
    MaxCompletionTokens,
    /// Both fields with the same value, for servers that read either.
    Both,
}

/// Everything [`super::OpenAiClient`] needs. `Debug` shows the key as `[REDACTED]`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OpenAiConfig {
    /// Base URL up to and including the API version (`…/v1`); `/chat/completions` is appended
    /// unless the URL already ends with it.
    pub base_url: String,
    /// The model name sent with each request.
    pub model: String,
    /// The bearer token; `None` sends no `Authorization` header.
    pub api_key: Option<ApiKey>,
    /// Limit for a whole non-streaming request (connect, send, wait, read the body) and for the
    /// response head of a streaming one.
    pub request_timeout: Duration,
    /// Limit for establishing the connection.
    pub connect_timeout: Duration,
    /// Longest silence allowed between two chunks of a stream.
    pub stream_idle_timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
    /// Which field carries the output limit.
    pub max_tokens_param: MaxTokensParam,
    /// Ask for usage in the last stream chunk (`stream_options.include_usage`); turn off for
    /// servers that reject the option.
    pub stream_include_usage: bool,
    /// Route requests through the proxy named by `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` (and
    /// `NO_PROXY`), as reqwest does by default; `false` always connects directly.
    pub system_proxy: bool,
}

// The fields without a `with_…` method above get a setter named after them.
ctx_spec::setters!(OpenAiConfig {
    connect_timeout: Duration,
    stream_idle_timeout: Duration,
    max_tokens_param: MaxTokensParam,
    stream_include_usage: bool,
    system_proxy: bool,
});

impl OpenAiConfig {
    /// A configuration with default timeouts (120 s request, 10 s connect, 60 s stream silence),
    /// default retries and no key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            request_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            stream_idle_timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            max_tokens_param: MaxTokensParam::default(),
            stream_include_usage: true,
            system_proxy: true,
        }
    }

    /// This configuration with an API key (an empty key means none).
    #[must_use]
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = ApiKey::new(key);
        self
    }

    /// This configuration with a per-request timeout.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// This configuration with a retry policy.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Reads the process environment; see the [module documentation](crate::llm::openai) for the variables.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`Self::from_env`], reading variables through `lookup` (for tests and for callers
    /// with their own configuration source). Empty values count as unset.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        let get = |name: &str| lookup(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let base_url =
            get(ENV_BASE_URL).or_else(|| get(ENV_OPENAI_BASE_URL)).unwrap_or_else(|| DEFAULT_BASE_URL.into());
        let Some(model) = get(ENV_MODEL) else {
            let issue = ConfigIssue::new(
                Code::ModelConfigMissingModel,
                FieldPath::root().key("model"),
                format!("no model name: the environment variable `{ENV_MODEL}` is not set"),
            )
            .with_help(format!(
                "set `{ENV_MODEL}` to the model the server serves, e.g. `gpt-4o-mini` or `llama3.1:8b`"
            ));
            return Err(ConfigIssues::new("environment", vec![issue]).into());
        };
        let mut config = OpenAiConfig::new(base_url, model);
        config.api_key = lookup(ENV_API_KEY).and_then(ApiKey::new);
        Ok(config)
    }

    /// Every problem of this configuration.
    pub fn validate(&self) -> Vec<ConfigIssue> {
        let mut issues = Vec::new();
        let root = FieldPath::root();
        match reqwest::Url::parse(&self.base_url) {
            Err(e) => issues.push(
                ConfigIssue::new(
                    Code::ModelConfigBaseUrl,
                    root.key("base_url"),
                    // A text with `@` may hold a credential: do not echo it.
                    if self.base_url.contains('@') {
                        format!("the base URL is not a URL: {e}")
                    } else {
                        format!("base URL `{}` is not a URL: {e}", self.base_url)
                    },
                )
                .with_help("write it like `http://localhost:8080/v1`"),
            ),
            Ok(url) => {
                let mut shown = url.clone();
                // Only fails for URLs that cannot have credentials anyway.
                let _ = shown.set_username("");
                let _ = shown.set_password(None);
                if url.scheme() != "http" && url.scheme() != "https" {
                    issues.push(
                        ConfigIssue::new(
                            Code::ModelConfigBaseUrl,
                            root.key("base_url"),
                            format!("base URL `{shown}` has scheme `{}`", url.scheme()),
                        )
                        .with_help("use `http://` or `https://`"),
                    );
                }
                if !url.username().is_empty() || url.password().is_some() {
                    // Never echo the URL: it holds a credential.
                    issues.push(
                        ConfigIssue::new(
                            Code::ModelConfigBaseUrl,
                            root.key("base_url"),
                            "the base URL contains credentials (`user:password@`)",
                        )
                        .with_help(format!("remove them and put the key in `{ENV_API_KEY}` or `api_key`")),
                    );
                }
            }
        }
        if self.model.trim().is_empty() {
            issues.push(
                ConfigIssue::new(Code::ModelConfigMissingModel, root.key("model"), "the model name is empty")
                    .with_help("give the model the server serves, e.g. `gpt-4o-mini`"),
            );
        }
        issues.extend(timing_issues(
            &root,
            [self.request_timeout, self.connect_timeout, self.stream_idle_timeout],
            &self.retry,
        ));
        issues
    }

    /// The chat-completions URL requests go to.
    pub fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        if base.ends_with("/chat/completions") { base.to_owned() } else { format!("{base}/chat/completions") }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::codes::ErrorCode;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn environment_precedence_and_defaults() {
        let c = OpenAiConfig::from_lookup(env(&[
            ("CTX_BASE_URL", "http://127.0.0.1:8080/v1"),
            ("OPENAI_BASE_URL", "http://other/v1"),
            ("CTX_MODEL", "llama"),
            ("OPENAI_API_KEY", "sk-secret"),
        ]))
        .expect("valid");
        assert_eq!(c.base_url, "http://127.0.0.1:8080/v1");
        assert_eq!(c.model, "llama");
        assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("sk-secret"));
        assert!(!format!("{c:?}").contains("sk-secret"));

        let c = OpenAiConfig::from_lookup(env(&[("OPENAI_BASE_URL", "http://other/v1"), ("CTX_MODEL", "m")]))
            .expect("valid");
        assert_eq!(c.base_url, "http://other/v1");
        assert!(c.api_key.is_none());

        let c = OpenAiConfig::from_lookup(env(&[("CTX_MODEL", "m"), ("CTX_BASE_URL", "  ")])).expect("valid");
        assert_eq!(c.base_url, DEFAULT_BASE_URL);
    }

    #[test]
    fn missing_model_is_a_config_error_naming_the_variable() {
        let err = OpenAiConfig::from_lookup(env(&[])).expect_err("no model");
        assert_eq!(err.code(), "MODEL_CONFIG_MISSING_MODEL");
        assert!(err.to_string().contains("CTX_MODEL"), "{err}");
    }

    #[test]
    fn validate_reports_every_problem() {
        let mut c = OpenAiConfig::new("ftp://user:pw@host/v1", " ");
        c.request_timeout = Duration::ZERO;
        c.retry.initial_backoff = Duration::from_secs(100);
        let issues = c.validate();
        let paths: Vec<String> = issues.iter().map(|i| i.path.to_string()).collect();
        assert_eq!(paths, ["base_url", "base_url", "model", "request_timeout", "retry.initial_backoff"], "{issues:?}");
        let codes: Vec<&str> = issues.iter().map(|i| i.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "MODEL_CONFIG_BASE_URL",
                "MODEL_CONFIG_BASE_URL",
                "MODEL_CONFIG_MISSING_MODEL",
                "MODEL_CONFIG_TIMEOUT",
                "MODEL_CONFIG_RETRY"
            ]
        );
        assert!(issues.iter().all(|i| !i.message.contains("pw")), "{issues:?}");
        assert!(OpenAiConfig::new("not a url", "m").validate()[0].message.contains("not a URL"));
        assert!(OpenAiConfig::new("http://127.0.0.1:1/v1", "m").validate().is_empty());
    }

    #[test]
    fn endpoint_appends_the_path_once() {
        assert_eq!(OpenAiConfig::new("http://h/v1/", "m").endpoint(), "http://h/v1/chat/completions");
        assert_eq!(OpenAiConfig::new("http://h/v1/chat/completions", "m").endpoint(), "http://h/v1/chat/completions");
    }
}
