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

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use super::backend::{BpeBackend, TokenizerBackend};
use super::{Encoding, TokenCounter};
use crate::chat::{ChatMessage, Role, ToolSchema};
use crate::{ChatFormat, TokenError};

/// The margin of [`ChatFormat::anthropic_estimated`] for a model named `claude…`, in percent.
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
fn with_margin(count: usize, margin_percent: u32) -> usize {
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

/// A counter for a Claude model without a key: `encoding` raised by `margin_percent`, with the
/// estimated Anthropic chat format. It shares the encoding's process-wide cache (its keys differ).
pub fn estimated_counter(encoding: Encoding, margin_percent: u32) -> TokenCounter {
    let shared = TokenCounter::for_encoding(encoding);
    TokenCounter::with_cache(
        Arc::new(MarginBackend::new(Arc::new(BpeBackend::new(encoding)), margin_percent)),
        ChatFormat::anthropic_estimated(margin_percent),
        Arc::clone(shared.cache()),
    )
}

/// How an Anthropic model's requests are counted (the payload of [`ChatFormat::Anthropic`]).
#[derive(Clone)]
pub struct AnthropicFormat {
    mode: Mode,
}

#[derive(Clone)]
enum Mode {
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

/// The probe message a tool block is measured against.
const TOOL_PROBE: &str = "tools";

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

    pub(crate) fn count_messages(&self, counter: &TokenCounter, messages: &[ChatMessage]) -> Result<usize, TokenError> {
        match &self.mode {
            Mode::Estimated { .. } => ChatFormat::openai().count_messages(counter, messages),
            Mode::Endpoint(_) if messages.is_empty() => Ok(0),
            Mode::Endpoint(remote) => remote.count_request(messages, &[]),
        }
    }

    pub(crate) fn message_costs(
        &self,
        counter: &TokenCounter,
        messages: &[ChatMessage],
    ) -> Result<Vec<usize>, TokenError> {
        match &self.mode {
            Mode::Estimated { .. } => ChatFormat::openai().message_costs(counter, messages),
            Mode::Endpoint(remote) => {
                // The system messages that open a request are not messages on the wire, and a
                // request of nothing but a system prompt is not one the API takes: they cost 0
                // here and are counted with the first message after them.
                let leading = messages.iter().take_while(|m| m.role == Role::System).count();
                let mut costs = vec![0; leading.min(messages.len())];
                let mut before = 0usize;
                for end in leading + 1..=messages.len() {
                    let total = remote.count_request(&messages[..end], &[])?;
                    costs.push(total.checked_sub(before).ok_or_else(|| TokenError::Backend {
                        backend: remote.id().to_owned(),
                        reason: format!(
                            "the first {end} messages count {total}, fewer than the first {} ({before})",
                            end - 1
                        ),
                    })?);
                    before = total;
                }
                Ok(costs)
            }
        }
    }

    pub(crate) fn message_cost(
        &self,
        counter: &TokenCounter,
        m: &ChatMessage,
        answered_function: Option<&str>,
    ) -> Result<usize, TokenError> {
        // One message out of its conversation (an agent's turn ledger pricing a tool result) is
        // not a request the API takes — a lone `tool_result` is refused — so even with the
        // endpoint it is estimated, like a standalone text; the request it joins is then counted
        // whole, exactly, before it is sent.
        ChatFormat::openai().message_cost(counter, m, answered_function)
    }

    pub(crate) fn count_tools(&self, counter: &TokenCounter, tools: &[ToolSchema]) -> Result<usize, TokenError> {
        if tools.is_empty() {
            return Ok(0);
        }
        match &self.mode {
            Mode::Estimated { .. } => {
                // The definitions as the API receives them, and the preamble it adds.
                let wire: Vec<serde_json::Value> = tools
                    .iter()
                    .map(|t| {
                        serde_json::json!({"name": t.name, "description": t.description, "input_schema": t.parameters})
                    })
                    .collect();
                Ok(counter.count(&serde_json::Value::Array(wire).to_string())? + ANTHROPIC_TOOL_SYSTEM_PROMPT_TOKENS)
            }
            Mode::Endpoint(remote) => {
                let probe = [ChatMessage::user(TOOL_PROBE)];
                let with = remote.count_request(&probe, tools)?;
                let without = remote.count_request(&probe, &[])?;
                Ok(with.saturating_sub(without))
            }
        }
    }

    pub(crate) fn count_request(
        &self,
        counter: &TokenCounter,
        messages: &[ChatMessage],
        tools: &[ToolSchema],
    ) -> Result<usize, TokenError> {
        match &self.mode {
            Mode::Endpoint(remote) if !messages.is_empty() => remote.count_request(messages, tools),
            _ => Ok(self.count_messages(counter, messages)? + self.count_tools(counter, tools)?),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::chat::ToolCall;

    #[test]
    fn margins_round_up_and_never_shrink() {
        assert_eq!(with_margin(0, 30), 0);
        assert_eq!(with_margin(10, 30), 13);
        assert_eq!(with_margin(11, 30), 15);
        assert_eq!(with_margin(7, 0), 7);
        assert_eq!(with_margin(usize::MAX, 30), usize::MAX);
        assert_eq!(Counting::Estimated { margin_percent: 30 }.to_string(), "estimated, +30% margin");
    }

    #[test]
    fn the_estimate_is_the_declared_count_with_the_margin_shown() {
        let exact = TokenCounter::for_encoding(Encoding::O200kBase);
        let est = estimated_counter(Encoding::O200kBase, 30);
        assert_eq!(est.backend_id(), "ctx/o200k_base+30%");
        assert_eq!(est.format().counting(), Counting::Estimated { margin_percent: 30 });
        let text = "The quick brown fox jumps over the lazy dog, again and again.";
        assert_eq!(est.count(text).unwrap(), with_margin(exact.count(text).unwrap(), 30));
        // A text of as many bytes as the limit does not fit for free under a margin.
        let n = est.count("hello").unwrap();
        assert!(n > 1 && !est.fits("hello", 1).unwrap());
        for limit in 0..n + 3 {
            assert_eq!(est.count_up_to(text, limit).unwrap(), est.count_up_to(text, limit).unwrap());
            let full = est.count(text).unwrap();
            assert_eq!(est.count_up_to(text, limit).unwrap(), (full <= limit).then_some(full), "limit {limit}");
        }
        let messages = [
            ChatMessage::system("Be brief."),
            ChatMessage::user("Weather?"),
            ChatMessage::assistant_tool_calls(
                "",
                vec![ToolCall { id: "tu_1".into(), name: "weather".into(), arguments: "{\"city\":\"Oslo\"}".into() }],
            ),
            ChatMessage::tool_result("tu_1", "4C"),
        ];
        // OpenAI's framing around raised text counts.
        let costs = est.message_costs(&messages).unwrap();
        assert_eq!(costs, ChatFormat::openai().message_costs(&est, &messages).unwrap());
        assert_eq!(3 + costs.iter().sum::<usize>(), est.count_messages(&messages).unwrap());
        assert_eq!(costs[1], 3 + est.count("user").unwrap() + est.count("Weather?").unwrap());
        let tool = ToolSchema { name: "t".into(), description: "d".into(), parameters: serde_json::json!({}) };
        let json = r#"[{"description":"d","input_schema":{},"name":"t"}]"#;
        assert_eq!(
            est.format().count_tools(&est, &[tool]).unwrap(),
            est.count(json).unwrap() + ANTHROPIC_TOOL_SYSTEM_PROMPT_TOKENS
        );
    }

    /// A server stand-in: a request counts 5 plus 2 per message plus 10 per tool, and every
    /// call is recorded.
    #[derive(Debug, Default)]
    struct Scripted(Mutex<Vec<(usize, usize)>>);

    impl RequestCounter for Scripted {
        fn id(&self) -> &str {
            "scripted"
        }
        fn count_request(&self, messages: &[ChatMessage], tools: &[ToolSchema]) -> Result<usize, TokenError> {
            self.0.lock().unwrap().push((messages.len(), tools.len()));
            Ok(5 + 2 * messages.len() + 10 * tools.len())
        }
    }

    #[test]
    fn endpoint_counts_are_whole_requests_and_exact_differences() {
        let remote = Arc::new(Scripted::default());
        let format = ChatFormat::anthropic_endpoint(remote.clone());
        assert_eq!(format.counting(), Counting::Exact);
        let counter = estimated_counter(Encoding::O200kBase, 30).with_format(format);
        let messages = [ChatMessage::system("s"), ChatMessage::user("a"), ChatMessage::assistant("b")];
        let tool = ToolSchema { name: "t".into(), description: "d".into(), parameters: serde_json::json!({}) };
        assert_eq!(counter.count_request(&messages, std::slice::from_ref(&tool)).unwrap(), 5 + 6 + 10);
        assert_eq!(remote.0.lock().unwrap().as_slice(), [(3, 1)], "one call for a whole request");
        let costs = counter.message_costs(&messages).unwrap();
        assert_eq!(costs, [0, 9, 2], "the system prompt is counted with the first message");
        assert_eq!(costs.iter().sum::<usize>(), counter.count_messages(&messages).unwrap());
        assert_eq!(counter.format().count_tools(&counter, &[tool]).unwrap(), 10);
        assert_eq!(counter.count_messages(&[]).unwrap(), 0);
        // A lone message is estimated: a lone tool result is no request the API takes.
        let calls = remote.0.lock().unwrap().len();
        let result = ChatMessage::tool_result("tu_1", "4C");
        assert_eq!(
            counter.message_cost(&result, Some("weather")).unwrap(),
            ChatFormat::openai().message_cost(&counter, &result, Some("weather")).unwrap()
        );
        assert_eq!(remote.0.lock().unwrap().len(), calls);
        assert_ne!(format!("{:?}", counter.format()), format!("{:?}", ChatFormat::anthropic_estimated(30)));
    }
}
