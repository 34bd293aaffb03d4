//! [`AnthropicTokenCounter`]: exact input-token counts from `POST /v1/messages/count_tokens`.
//!
//! The body is the request's `model`, `system`, `messages` and `tools`, built by the code that
//! builds the Messages request itself, so what is counted is what is sent. Answers are kept in a
//! [`CountCache`] keyed by that exact body: a request counted once is not sent again, and the
//! prefixes history trimming counts are shared between steps.
//!
//! [`RequestCounter`] is synchronous (counting is), so each uncached count is one blocking call,
//! made on a scoped thread with a current-thread runtime of its own — safe from anywhere,
//! including a tokio worker, which it blocks for the round trip. Calls are retried as model calls
//! are (429 with `retry-after`, 529, 5xx), under the client's [`super::RetryPolicy`].

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::config::AnthropicConfig;
use super::http::Http;
use super::wire::{WireCountRequest, WirePrompt};
use crate::chat::{ChatMessage, ToolSchema};
use crate::llm::ModelError;
use crate::llm::http::call;
use crate::llm::http::failure::{excerpt, parse_error};
use crate::tokens::{
    CacheStats, ChatFormat, CountCache, Encoding, RequestCounter, TokenCounter, TokenError, estimated_counter,
};

/// Counts Claude requests exactly with the `count_tokens` endpoint, behind a count cache.
/// Cheap to clone (clones share the cache).
#[derive(Clone)]
pub struct AnthropicTokenCounter {
    http: Http,
    cache: Arc<CountCache>,
    id: String,
}

impl fmt::Debug for AnthropicTokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicTokenCounter").field("id", &self.id).field("cache", &self.cache).finish()
    }
}

impl AnthropicTokenCounter {
    /// A counter for `config`'s model, endpoint and key, caching `cache_entries` counts.
    pub fn new(config: AnthropicConfig, cache_entries: usize) -> Result<Self, ModelError> {
        // Each call runs on a runtime of its own, which a pooled connection would outlive.
        let http = Http::build(config, false)?;
        let id = format!("anthropic-count-tokens/{}@{}", http.config.model, http.count_url);
        Ok(AnthropicTokenCounter { http, cache: Arc::new(CountCache::new(cache_entries)), id })
    }

    /// Hits and misses of the count cache (a miss is one request to the endpoint).
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// A [`TokenCounter`] whose requests are counted by this endpoint
    /// ([`ChatFormat::anthropic_endpoint`]) and whose standalone texts are estimated with
    /// `encoding` raised by `margin_percent` (see [`crate::tokens::Counting`]). Hand it to a
    /// pipeline at load time: the contract and the run-time guard then count requests exactly.
    pub fn counter(&self, encoding: Encoding, margin_percent: u32) -> TokenCounter {
        estimated_counter(encoding, margin_percent)
            .with_format(ChatFormat::anthropic_endpoint(Arc::new(self.clone()) as Arc<dyn RequestCounter>))
    }

    fn fail(&self, reason: impl Into<String>) -> TokenError {
        TokenError::Backend { backend: self.id.clone(), reason: reason.into() }
    }

    /// One call, retried under the policy; the `input_tokens` of the answer.
    async fn fetch(&self, body: &Value) -> Result<usize, ModelError> {
        let (http, config) = (&self.http, &self.http.config);
        let read = |bytes: &[u8]| {
            let value: Value = serde_json::from_slice(bytes).map_err(|e| parse_error(&config.model, bytes, &e))?;
            value.get("input_tokens").and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok()).ok_or_else(|| {
                ModelError::MalformedBody {
                    model: config.model.clone(),
                    message: "the count_tokens answer has no whole `input_tokens`".into(),
                    excerpt: excerpt(bytes),
                }
            })
        };
        call::send(http, &http.count_url, body, read).await
    }
}

/// Runs `work` on a current-thread runtime of its own, on a scoped thread: the caller may be a
/// tokio worker, where starting or blocking on a runtime panics.
fn block_on_own_thread<T: Send>(
    work: impl Future<Output = Result<T, ModelError>> + Send,
) -> Result<T, Result<ModelError, String>> {
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| Err(format!("cannot start the HTTP runtime: {e}")))?;
            runtime.block_on(work).map_err(Ok)
        });
        worker.join().unwrap_or_else(|_| Err(Err("the HTTP thread panicked".to_owned())))
    })
}

impl RequestCounter for AnthropicTokenCounter {
    fn id(&self) -> &str {
        &self.id
    }

    fn count_request(&self, messages: &[ChatMessage], tools: &[ToolSchema]) -> Result<usize, TokenError> {
        let prompt = WirePrompt::new(messages, tools).map_err(|e| self.fail(e.0))?;
        let body = serde_json::to_value(WireCountRequest { model: &self.http.config.model, prompt })
            .map_err(|e| self.fail(format!("cannot write the request: {e}")))?;
        let key = self.cache.key(&self.id, &body.to_string());
        if let Some(n) = self.cache.get(key) {
            return Ok(n);
        }
        let n = block_on_own_thread(self.fetch(&body)).map_err(|e| match e {
            Ok(model_error) => self.fail(model_error.to_string()),
            Err(message) => self.fail(message),
        })?;
        self.cache.insert(key, n);
        Ok(n)
    }
}
