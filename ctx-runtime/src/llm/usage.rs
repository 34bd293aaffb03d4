//! [`Usage`]: the tokens a server reports a request used, which replies carry and spend is
//! priced from.

use serde::{Deserialize, Serialize};

/// Token usage reported by the server.
///
/// `prompt_tokens` is every prompt token the model read; the prompt-cache counts say how many of
/// them were read from the provider's prompt cache and how many were written to it, when the
/// provider reports them (`prompt_tokens_details.cached_tokens` on OpenAI-compatible servers,
/// `cache_read_input_tokens` and `cache_creation_input_tokens` on Anthropic's). `None` means not
/// reported, which is not the same as 0: a price computed from it treats the whole prompt as
/// uncached, the worst case, rather than guessing a hit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Prompt tokens as the server counted them (cached and uncached).
    pub prompt_tokens: usize,
    /// Generated tokens.
    pub completion_tokens: usize,
    /// Of `prompt_tokens`, those read from the provider's prompt cache, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<usize>,
    /// Of `prompt_tokens`, those written to the provider's prompt cache (Anthropic's
    /// `cache_creation_input_tokens`, billed above the input price), when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<usize>,
    /// Of `completion_tokens`, those the model spent reasoning (OpenAI's
    /// `output_tokens_details.reasoning_tokens`), when reported: billed as output and generated
    /// inside the request's output limit, but never part of the reply's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<usize>,
}

impl Usage {
    /// Usage of `prompt_tokens` read and `completion_tokens` generated, with no prompt-cache
    /// counts reported.
    pub fn new(prompt_tokens: usize, completion_tokens: usize) -> Self {
        Usage {
            prompt_tokens,
            completion_tokens,
            cache_read_tokens: None,
            cache_write_tokens: None,
            reasoning_tokens: None,
        }
    }

    /// The same usage with the prompt-cache counts the provider reported.
    #[must_use]
    pub fn with_cache(mut self, read: Option<usize>, write: Option<usize>) -> Self {
        self.cache_read_tokens = read;
        self.cache_write_tokens = write;
        self
    }

    /// The same usage with the reasoning tokens the provider reported (part of
    /// `completion_tokens`).
    #[must_use]
    pub fn with_reasoning(mut self, reasoning: Option<usize>) -> Self {
        self.reasoning_tokens = reasoning;
        self
    }

    /// Prompt tokens neither read from nor written to the cache: `prompt_tokens` less the two
    /// cache counts (the whole prompt when none is reported).
    pub fn uncached_prompt_tokens(&self) -> usize {
        self.prompt_tokens
            .saturating_sub(self.cache_read_tokens.unwrap_or(0))
            .saturating_sub(self.cache_write_tokens.unwrap_or(0))
    }
}
