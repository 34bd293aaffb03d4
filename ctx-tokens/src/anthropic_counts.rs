//! Counting requests in Anthropic's format with a [`TokenCounter`]: an estimate framed as
//! OpenAI's chat format around counts raised by the margin, or whole requests and their
//! prefixes sent to the server's [`RequestCounter`](crate::RequestCounter) (`anthropic.rs` says
//! which, and why).
//!
//! Apart from the format's description (`anthropic.rs`) because the counter holds a chat format:
//! the format's type sits below the counter, the counting with it above.

use std::sync::Arc;

use super::anthropic::{ANTHROPIC_TOOL_SYSTEM_PROMPT_TOKENS, AnthropicFormat, MarginBackend, Mode};
use super::backend::BpeBackend;
use super::counter::TokenCounter;
use super::encoding::Encoding;
use super::format::ChatFormat;
use crate::TokenError;
use crate::chat::{ChatMessage, Role, ToolSchema};

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

/// The probe message a tool block is measured against.
const TOOL_PROBE: &str = "tools";

// Written here, not with the type: they count with a `TokenCounter`, which holds the format.
impl AnthropicFormat {
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
    use crate::anthropic::{Counting, RequestCounter, with_margin};
    use crate::chat::ToolCall;

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
