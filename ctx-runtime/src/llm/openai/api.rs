//! What OpenAI's two clients (chat completions, `super::OpenAiClient`, and Responses,
//! `super::ResponsesClient`) send with alike: [`OpenAiHttp`], an endpoint of an [`OpenAiConfig`]
//! as the shared HTTP attempt sees it (its settings, the bearer-authenticated POST, what a bare
//! 404 says), and the provider name the base URL's host gives.

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use super::config::OpenAiConfig;
use crate::llm::ModelError;
use crate::llm::http::attempt::{Api, Settings};
use crate::llm::http::{failure, http_client};
use crate::validation::ConfigIssues;

/// One endpoint of an OpenAI-compatible server: the configuration, the URL posted to, the
/// connection pool (shared by clones), and the hint a bare 404 gets.
#[derive(Clone)]
pub(crate) struct OpenAiHttp {
    pub(crate) config: OpenAiConfig,
    pub(crate) endpoint: String,
    http: reqwest::Client,
    /// What a 404 without an error of the API's shape adds to its message, given the URL: such
    /// a 404 is the server's "no such path", whose usual cause it names.
    not_found: fn(&str) -> String,
}

impl OpenAiHttp {
    /// The endpoint `endpoint` of `config`, after checking `config` (every problem at once).
    pub(crate) fn new(
        config: OpenAiConfig,
        endpoint: String,
        not_found: fn(&str) -> String,
    ) -> Result<Self, ModelError> {
        ConfigIssues::check("OpenAiConfig", config.validate())?;
        let http = http_client(&config.model, config.connect_timeout, config.system_proxy, true)?;
        Ok(OpenAiHttp { config, endpoint, http, not_found })
    }
}

impl Api for OpenAiHttp {
    fn settings(&self) -> Settings<'_> {
        let c = &self.config;
        let timeouts = [c.request_timeout, c.connect_timeout, c.stream_idle_timeout];
        Settings::new(&c.model, c.api_key.as_ref(), &c.retry, timeouts)
    }

    /// A POST with the key as a bearer token, when there is one.
    fn post(&self, url: &str) -> reqwest::RequestBuilder {
        let builder = self.http.post(url);
        match &self.config.api_key {
            // reqwest marks the header sensitive, so it is never printed either.
            Some(key) => builder.bearer_auth(key.expose()),
            None => builder,
        }
    }

    /// The shared classification, with the client's hint on a bare 404. Only when the server
    /// gave no error of the API's shape: a 404 that says "model not found" is the server's own
    /// words, already clear.
    fn status_error(&self, url: &str, status: StatusCode, headers: &HeaderMap, body: &[u8]) -> ModelError {
        let c = &self.config;
        let mut err = failure::status_error(&c.model, status, headers, body, c.api_key.as_ref());
        if let ModelError::Http { status: 404, message, error_type: None, error_code: None, .. } = &mut err {
            message.push_str(&(self.not_found)(url));
        }
        err
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
mod tests {
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
