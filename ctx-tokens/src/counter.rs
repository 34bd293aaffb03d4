//! [`TokenCounter`], the one way ctx counts: a backend behind the count cache, with early exit,
//! truncation and the chat framing of whole requests.

use std::sync::{Arc, OnceLock};

use crate::backend::{BpeBackend, TokenizerBackend};
use crate::cache::{CacheStats, CountCache};
use crate::chat::{ChatMessage, ToolSchema};
use crate::encoding::Encoding;
use crate::error::TokenError;
use crate::format::ChatFormat;

/// Counts tokens exactly, with a shared count cache. Cheap to clone (an `Arc`).
#[derive(Clone, Debug)]
pub struct TokenCounter {
    backend: Arc<dyn TokenizerBackend>,
    cache: Arc<CountCache>,
    format: ChatFormat,
}

impl TokenCounter {
    /// A counter over `backend` with its own cache of `cache_entries` counts and the chat format
    /// `format`.
    pub fn with_backend(backend: Arc<dyn TokenizerBackend>, format: ChatFormat, cache_entries: usize) -> Self {
        Self::with_cache(backend, format, Arc::new(CountCache::new(cache_entries)))
    }

    /// A counter over `backend` that shares `cache` with other counters. Counters of different
    /// vocabularies can share one cache: their keys never collide (see [`CountCache`]).
    pub fn with_cache(backend: Arc<dyn TokenizerBackend>, format: ChatFormat, cache: Arc<CountCache>) -> Self {
        TokenCounter { backend, cache, format }
    }

    /// The process-wide counter for `encoding` ([`BpeBackend`], OpenAI chat format, a cache
    /// of [`CountCache::DEFAULT_ENTRIES`] counts shared by every clone).
    pub fn for_encoding(encoding: Encoding) -> Self {
        static SHARED: [OnceLock<TokenCounter>; 2] = [OnceLock::new(), OnceLock::new()];
        let slot = match encoding {
            Encoding::Cl100kBase => &SHARED[0],
            Encoding::O200kBase => &SHARED[1],
        };
        slot.get_or_init(|| {
            TokenCounter::with_backend(
                Arc::new(BpeBackend::new(encoding)),
                ChatFormat::openai(),
                CountCache::DEFAULT_ENTRIES,
            )
        })
        .clone()
    }

    /// The process-wide counter for a model in [`MODEL_TABLE`](crate::MODEL_TABLE), with the chat format of the
    /// model's family ([`ChatFormat::for_model`]); it shares the encoding's cache.
    pub fn for_model(model: &str) -> Result<Self, TokenError> {
        Ok(Self::for_encoding(Encoding::for_model(model)?).with_format(ChatFormat::for_model(model)))
    }

    /// This counter with another chat format (same backend and cache).
    #[must_use]
    pub fn with_format(mut self, format: ChatFormat) -> Self {
        self.format = format;
        self
    }

    /// The backend's id (e.g. `ctx/cl100k_base`).
    pub fn backend_id(&self) -> &str {
        self.backend.id()
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<dyn TokenizerBackend> {
        &self.backend
    }

    /// The count cache (shared by clones of this counter).
    pub fn cache(&self) -> &Arc<CountCache> {
        &self.cache
    }

    /// The chat format used by [`Self::count_messages`].
    pub fn format(&self) -> &ChatFormat {
        &self.format
    }

    /// Hit/miss statistics of the count cache.
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// Exact token count of `text`, from the cache when this text was counted before.
    pub fn count(&self, text: &str) -> Result<usize, TokenError> {
        if text.is_empty() {
            return Ok(0);
        }
        let key = self.cache.key(self.backend.id(), text);
        if let Some(n) = self.cache.get(key) {
            return Ok(n);
        }
        let n = self.backend.count(text)?;
        self.cache.insert(key, n);
        Ok(n)
    }

    /// A count no text of `bytes` bytes can go below, known without tokenizing: no token is
    /// longer than the vocabulary's longest (0 when the backend does not know its longest token).
    pub fn min_tokens_for_bytes(&self, bytes: usize) -> usize {
        match self.backend.max_token_bytes() {
            Some(longest) if longest > 0 => bytes.div_ceil(longest),
            _ => usize::from(bytes > 0),
        }
    }

    /// `Some(count)` when `text` has at most `limit` tokens, else `None`; stops as soon as the
    /// answer is known. A text too long to fit even at the longest token per byte run is refused
    /// without being tokenized, so a small limit on a huge text costs almost nothing.
    pub fn count_up_to(&self, text: &str, limit: usize) -> Result<Option<usize>, TokenError> {
        if text.is_empty() {
            return Ok(Some(0));
        }
        // The cache first: the bound below reads the vocabulary's longest token, which loads the
        // vocabulary, and a text counted before needs neither.
        let key = self.cache.key(self.backend.id(), text);
        if let Some(n) = self.cache.get_held(key) {
            return Ok((n <= limit).then_some(n));
        }
        if self.min_tokens_for_bytes(text.len()) > limit {
            return Ok(None);
        }
        if let Some(n) = self.cache.get(key) {
            return Ok((n <= limit).then_some(n));
        }
        let found = self.backend.count_up_to(text, limit)?;
        if let Some(n) = found {
            // A complete count is a count like any other: cache it.
            self.cache.insert(key, n);
        }
        Ok(found)
    }

    /// Whether `text` has at most `limit` tokens. A text of at most `limit` bytes fits without
    /// being counted when every token is at least one byte (not so for SentencePiece vocabularies
    /// or an estimate with a margin: [`TokenizerBackend::at_most_one_token_per_byte`]).
    pub fn fits(&self, text: &str, limit: usize) -> Result<bool, TokenError> {
        if text.len() <= limit && self.backend.at_most_one_token_per_byte() {
            return Ok(true);
        }
        Ok(self.count_up_to(text, limit)?.is_some())
    }

    /// The token ids of `text` (ordinary text only).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, TokenError> {
        self.backend.encode(text)
    }

    /// The text of `ids`.
    pub fn decode(&self, ids: &[u32]) -> Result<String, TokenError> {
        self.backend.decode(ids)
    }

    /// A prefix of `text` that counts at most `max_tokens` when counted on its own: the text
    /// itself when it fits, else the first `max_tokens` tokens of its encoding, shortened one
    /// token at a time until the prefix, re-counted as a whole, fits (BPE is not prefix-stable:
    /// a prefix can count differently from the tokens it was cut from).
    ///
    /// Only the start of a long text is encoded: `max_tokens + 1` tokens never span more than
    /// `max_tokens + 1` times the longest token's bytes.
    pub fn truncate_to(&self, text: &str, max_tokens: usize) -> Result<String, TokenError> {
        if self.fits(text, max_tokens)? {
            return Ok(text.to_owned());
        }
        let window = match self.backend.max_token_bytes() {
            Some(longest) => prefix_at_most(text, max_tokens.saturating_add(1).saturating_mul(longest)),
            None => text,
        };
        let ids = self.encode(window)?;
        let mut keep = max_tokens.min(ids.len());
        while keep > 0 {
            // A cut inside a multi-byte character does not decode; step back to a boundary.
            if let Ok(prefix) = self.decode(&ids[..keep])
                && self.fits(&prefix, max_tokens)?
            {
                return Ok(prefix);
            }
            keep -= 1;
        }
        Ok(String::new())
    }

    /// Tokens of `messages` as the model sees them: contents, roles, names, tool calls and tool
    /// results with the framing of this counter's [`ChatFormat`], plus the reply priming.
    pub fn count_messages(&self, messages: &[ChatMessage]) -> Result<usize, TokenError> {
        self.format.count_messages(self, messages)
    }

    /// What each message adds to a request in the context of the ones before it; with the reply
    /// priming they sum to [`Self::count_messages`]. See [`ChatFormat::message_costs`].
    pub fn message_costs(&self, messages: &[ChatMessage]) -> Result<Vec<usize>, TokenError> {
        self.format.message_costs(self, messages)
    }

    /// What `message` adds to a request; `answered_function` is the name of the function whose
    /// call a tool result answers, when that call is in the request. See
    /// [`ChatFormat::message_cost`].
    pub fn message_cost(&self, message: &ChatMessage, answered_function: Option<&str>) -> Result<usize, TokenError> {
        self.format.message_cost(self, message, answered_function)
    }

    /// Tokens of a whole request: [`Self::count_messages`] plus the tool schemas' tokens.
    pub fn count_request(&self, messages: &[ChatMessage], tools: &[ToolSchema]) -> Result<usize, TokenError> {
        self.format.count_request(self, messages, tools)
    }
}

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a character boundary.
fn prefix_at_most(text: &str, max_bytes: usize) -> &str {
    if max_bytes >= text.len() {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or(text)
}

#[cfg(test)]
mod tests;
