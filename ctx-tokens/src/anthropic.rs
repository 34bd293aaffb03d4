//! Counting for Anthropic's models, which come with no published tokenizer.
//!
//! Two ways, and every count says which one it is ([`Counting`]):
//!
//! - **Exact, from the server** ([`ChatFormat::anthropic_endpoint`]): a [`RequestCounter`]
//!   answers how many input tokens a whole request (system, messages, tools) has — the
//!   `count_tokens` endpoint, `llm::anthropic::AnthropicTokenCounter` (feature `anthropic`), with
//!   its own count cache keyed by the exact body. A whole request is one call
//!   ([`ChatFormat::count_request`], which the run-time guard uses). What ctx needs in parts is
//!   made of exact counts too: message `i`'s cost is the count of the first `i + 1` messages less
//!   the count of the first `i` (so the costs sum to the whole), and a tool block's cost is the
//!   count of a one-message probe with the tools less the probe without them (Anthropic renders
//!   tool definitions into the system preamble, apart from the messages).
//! - **Estimated** ([`ChatFormat::anthropic_estimated`], [`estimated_counter`]): every text is
//!   counted with a declared tokenizer (an OpenAI encoding) and raised by an explicit margin by
//!   [`MarginBackend`]. Anthropic publishes no message framing, so messages are framed as in
//!   OpenAI's chat format (3 tokens a message, 3 to prime the reply) around those raised counts;
//!   a tool block is its definitions' JSON as sent, raised, plus the tool-use system prompt
//!   Anthropic documents for its current models ([`ANTHROPIC_TOOL_SYSTEM_PROMPT_TOKENS`], 346
//!   tokens with `tool_choice` auto for Claude Sonnet 4 and 3.7). The default margin,
//!   [`DEFAULT_ANTHROPIC_MARGIN_PERCENT`], is 30%: third-party comparisons of Claude 3.5
//!   Sonnet's counts with GPT-4o's `o200k_base` found 16% more tokens for English prose, 21%
//!   for mathematics and 30% for Python code. ctx has not measured it (it cannot call the API
//!   here); it is a declared assumption, shown wherever the count is used — the contract report
//!   says "estimated, +30% margin".
//!
//! Standalone texts (context blocks, tool results before they join a request) and a single
//! message priced out of its conversation ([`ChatFormat::message_cost`], the agent's turn ledger)
//! are estimated in both modes: only whole requests and their prefixes go to the server.
//!
//! [`ChatFormat::anthropic_endpoint`]: crate::ChatFormat::anthropic_endpoint
//! [`ChatFormat::count_request`]: crate::ChatFormat::count_request
//! [`ChatFormat::anthropic_estimated`]: crate::ChatFormat::anthropic_estimated
//! [`estimated_counter`]: crate::estimated_counter
//! [`ChatFormat::message_cost`]: crate::ChatFormat::message_cost

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use super::backend::TokenizerBackend;
use crate::TokenError;
use crate::chat::{ChatMessage, ToolSchema};

/// The margin of [`ChatFormat::anthropic_estimated`] for a model named `claude…`, in percent.
///
/// [`ChatFormat::anthropic_estimated`]: crate::ChatFormat::anthropic_estimated
pub const DEFAULT_ANTHROPIC_MARGIN_PERCENT: u32 = 30;

/// The system prompt Anthropic adds to a request with tools (`tool_choice` auto or none), in
/// Claude's own tokens, as its tool-use pricing page lists it for Claude Sonnet 4 and 3.7 (older
/// models: 159 to 530). Added unraised to an estimated tool block.
pub const ANTHROPIC_TOOL_SYSTEM_PROMPT_TOKENS: usize = 346;

/// Whether a count is the model's own or an estimate with a margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Counting {
    /// The count of the exact text or request the model receives.
    Exact,
    /// A declared tokenizer's count raised by `margin_percent`.
    Estimated {
        /// The margin added to every count, in percent.
        margin_percent: u32,
    },
}

impl fmt::Display for Counting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Counting::Exact => f.write_str("exact"),
            Counting::Estimated { margin_percent } => write!(f, "estimated, +{margin_percent}% margin"),
        }
    }
}

/// Counts whole requests exactly, as the model's server does (a `count_tokens` endpoint).
pub trait RequestCounter: Send + Sync + fmt::Debug {
    /// A stable id naming the model and the endpoint.
    fn id(&self) -> &str;

    /// Input tokens of a request with these messages (system messages first) and tools.
    fn count_request(&self, messages: &[ChatMessage], tools: &[ToolSchema]) -> Result<usize, TokenError>;
}

/// `count` raised by `margin_percent`, rounded up.
pub(crate) fn with_margin(count: usize, margin_percent: u32) -> usize {
    let raised = (count as u128 * (100 + u128::from(margin_percent))).div_ceil(100);
    usize::try_from(raised).unwrap_or(usize::MAX)
}

/// A declared tokenizer whose every count is raised by a margin: an estimate for a model whose
/// own tokenizer is not available. Its id names the margin, so its counts never share cache
/// entries with the exact tokenizer's.
#[derive(Debug, Clone)]
pub struct MarginBackend {
    inner: Arc<dyn TokenizerBackend>,
    margin_percent: u32,
    id: String,
}

impl MarginBackend {
    /// `inner`'s counts raised by `margin_percent`.
    pub fn new(inner: Arc<dyn TokenizerBackend>, margin_percent: u32) -> Self {
        let id = format!("{}+{margin_percent}%", inner.id());
        MarginBackend { inner, margin_percent, id }
    }

    /// The margin, in percent.
    pub fn margin_percent(&self) -> u32 {
        self.margin_percent
    }
}

impl TokenizerBackend for MarginBackend {
    fn id(&self) -> &str {
        &self.id
    }

    fn count(&self, text: &str) -> Result<usize, TokenError> {
        Ok(with_margin(self.inner.count(text)?, self.margin_percent))
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Result<Option<usize>, TokenError> {
        // The raised count is at least the inner one: past the limit inside, past it outside.
        Ok(self.inner.count_up_to(text, limit)?.map(|n| with_margin(n, self.margin_percent)).filter(|&n| n <= limit))
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenError> {
        self.inner.encode(text)
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenError> {
        self.inner.decode(ids)
    }

    fn max_token_bytes(&self) -> Option<usize> {
        // Raised counts are above the inner ones, so the inner lower bound still holds.
        self.inner.max_token_bytes()
    }

    fn at_most_one_token_per_byte(&self) -> bool {
        self.margin_percent == 0 && self.inner.at_most_one_token_per_byte()
    }
}

/// How an Anthropic model's requests are counted (the payload of [`ChatFormat::Anthropic`]).
///
/// [`ChatFormat::Anthropic`]: crate::ChatFormat::Anthropic
#[derive(Clone)]
pub struct AnthropicFormat {
    pub(crate) mode: Mode,
}

/// The two ways of counting; `anthropic_counts.rs` counts by it.
#[derive(Clone)]
pub(crate) enum Mode {
    Estimated { margin_percent: u32 },
    Endpoint(Arc<dyn RequestCounter>),
}

impl fmt::Debug for AnthropicFormat {
    // Part of the contract's fingerprint: stable, and naming what decides the counts.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.mode {
            Mode::Estimated { margin_percent } => write!(f, "AnthropicFormat(estimated +{margin_percent}%)"),
            Mode::Endpoint(counter) => write!(f, "AnthropicFormat(endpoint {})", counter.id()),
        }
    }
}

impl PartialEq for AnthropicFormat {
    fn eq(&self, other: &Self) -> bool {
        match (&self.mode, &other.mode) {
            (Mode::Estimated { margin_percent: a }, Mode::Estimated { margin_percent: b }) => a == b,
            (Mode::Endpoint(a), Mode::Endpoint(b)) => a.id() == b.id(),
            _ => false,
        }
    }
}

impl Eq for AnthropicFormat {}

impl AnthropicFormat {
    pub(crate) fn estimated(margin_percent: u32) -> Self {
        AnthropicFormat { mode: Mode::Estimated { margin_percent } }
    }

    pub(crate) fn endpoint(counter: Arc<dyn RequestCounter>) -> Self {
        AnthropicFormat { mode: Mode::Endpoint(counter) }
    }

    /// Whether requests are counted exactly or estimated.
    pub fn counting(&self) -> Counting {
        match self.mode {
            Mode::Estimated { margin_percent } => Counting::Estimated { margin_percent },
            Mode::Endpoint(_) => Counting::Exact,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margins_round_up_and_never_shrink() {
        assert_eq!(with_margin(0, 30), 0);
        assert_eq!(with_margin(10, 30), 13);
        assert_eq!(with_margin(11, 30), 15);
        assert_eq!(with_margin(7, 0), 7);
        assert_eq!(with_margin(usize::MAX, 30), usize::MAX);
        assert_eq!(Counting::Estimated { margin_percent: 30 }.to_string(), "estimated, +30% margin");
    }
}
