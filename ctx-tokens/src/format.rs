//! Chat-format overhead: what a list of messages costs beyond its texts.
//!
//! A chat model does not see a list of strings; it sees one token stream in which every message
//! is framed by special tokens and the reply is primed. [`ChatFormat`] adds those tokens so that
//! a count is the count of what the model receives. Every string the request carries (role,
//! content, name, tool-call name and arguments, tool result) is counted exactly, as the exact
//! text sent; what is modelled is only the framing around those strings:
//!
//! - **Plain messages** (role, content, optional name): 3 tokens a message, 1 more for a `name`,
//!   3 to prime the reply — the constants of OpenAI's cookbook "How to count tokens with
//!   tiktoken", which it checked against the API's `prompt_tokens` (129 tokens for its example
//!   conversation under gpt-3.5-turbo / gpt-4, 124 under gpt-4o; both pinned by
//!   `tests/chat.rs`). The cookbook itself calls its counts "an estimate, not a timeless
//!   guarantee": OpenAI may change the framing from model to model.
//! - **Tool schemas**: the cookbook's `num_tokens_for_tools` constants (per function, per
//!   property, per enum item), fitted by the cookbook against the API (105 / 101 tokens for its
//!   weather example, pinned too). The schema rendering itself is not published, so this is an
//!   estimate in the same sense.
//! - **Tool calls and tool results**: the cookbook does not cover them and OpenAI publishes no
//!   chat-completions rendering for them. ctx counts them as OpenAI's published harmony format
//!   renders them, the one OpenAI format that spells tool calls out: a call is
//!   `<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>ARGS<|call|>`
//!   and a result is `<|start|>functions.NAME to=assistant<|channel|>commentary<|message|>RESULT<|end|>`,
//!   each special token one token and each text between them counted exactly. An assistant
//!   message that only calls tools has no text message of its own in that format. This part is
//!   an estimate that no published API number pins.
//! - **Reasoning items** (OpenAI's Responses API) carried on an assistant message: framed as
//!   harmony frames reasoning, their visible text counted exactly and their encrypted part by
//!   the count the server reported (see `reasoning.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::TokenCounter;
use super::anthropic::{AnthropicFormat, Counting, DEFAULT_ANTHROPIC_MARGIN_PERCENT, RequestCounter};
use super::reasoning::{reasoning_cost, refuse_in_template};
use super::template::ChatTemplate;
use crate::TokenError;
use crate::chat::{ChatMessage, Role, ToolSchema};

/// The name the Anthropic format gives in a refusal of what it has no place for (OpenAI's
/// reasoning items: neither Anthropic's API nor its count has a place for them).
const ANTHROPIC_FORMAT: &str = "Anthropic Messages";

/// Token constants of the OpenAI chat format for one model family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenAiOverhead {
    /// Tokens framing every plain message (`<|start|>`, `<|message|>`, `<|end|>`); the role's own
    /// text is counted separately.
    pub per_message: usize,
    /// Extra tokens when a message has a `name` (besides the name's own tokens).
    pub per_name: isize,
    /// Tokens that prime the assistant's reply (`<|start|>assistant<|message|>`).
    pub reply_priming: usize,
    /// Tokens before each function in the tool block.
    pub func_init: usize,
    /// Tokens before a function's properties.
    pub prop_init: usize,
    /// Tokens per property.
    pub prop_key: usize,
    /// Tokens (possibly negative) when a property has an `enum`.
    pub enum_init: isize,
    /// Tokens per enum item.
    pub enum_item: usize,
    /// Tokens closing the tool block.
    pub func_end: usize,
    /// Special tokens framing one tool call (`<|start|>`, `<|channel|>`, `<|constrain|>`,
    /// `<|message|>`, `<|call|>` in the harmony rendering).
    pub tool_call_specials: usize,
    /// Special tokens framing one tool result (`<|start|>`, `<|channel|>`, `<|message|>`,
    /// `<|end|>` in the harmony rendering).
    pub tool_result_specials: usize,
}

/// How a model family wraps messages and tools.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChatFormat {
    /// OpenAI chat completions (and servers that mimic its format).
    OpenAi(OpenAiOverhead),
    /// A server that renders the model's chat template into one prompt string (llama.cpp and
    /// the like): the count is the count of the rendered prompt.
    Template(ChatTemplate),
    /// Anthropic's Messages API: exact counts from its `count_tokens` endpoint, or a declared
    /// tokenizer's estimate with a margin (see [`AnthropicFormat`]).
    Anthropic(AnthropicFormat),
}

impl ChatFormat {
    /// gpt-4o / gpt-4o-mini and later (the cookbook's 124-token and 101-token examples).
    pub fn openai() -> Self {
        ChatFormat::OpenAi(OpenAiOverhead {
            per_message: 3,
            per_name: 1,
            reply_priming: 3,
            func_init: 7,
            prop_init: 3,
            prop_key: 3,
            enum_init: -3,
            enum_item: 3,
            func_end: 12,
            tool_call_specials: 5,
            tool_result_specials: 4,
        })
    }

    /// gpt-3.5-turbo / gpt-4 (the cookbook's 129-token and 105-token examples); only the tool
    /// block's per-function constant differs.
    pub fn openai_gpt4() -> Self {
        match Self::openai() {
            ChatFormat::OpenAi(o) => ChatFormat::OpenAi(OpenAiOverhead { func_init: 10, ..o }),
            other => other,
        }
    }

    /// Anthropic's format estimated with the counter's declared tokenizer, every count raised by
    /// `margin_percent` (use it with [`super::estimated_counter`], whose backend applies the
    /// margin); the contract reports these counts as estimated.
    pub fn anthropic_estimated(margin_percent: u32) -> Self {
        ChatFormat::Anthropic(AnthropicFormat::estimated(margin_percent))
    }

    /// Anthropic's format with whole requests counted exactly by `counter` (its `count_tokens`
    /// endpoint).
    pub fn anthropic_endpoint(counter: Arc<dyn RequestCounter>) -> Self {
        ChatFormat::Anthropic(AnthropicFormat::endpoint(counter))
    }

    /// Whether requests are counted exactly or estimated with a margin. The OpenAI format's
    /// framing constants and templates count what the model receives; only Anthropic's estimate
    /// is not a count.
    pub fn counting(&self) -> Counting {
        match self {
            ChatFormat::Anthropic(a) => a.counting(),
            ChatFormat::OpenAi(_) | ChatFormat::Template(_) => Counting::Exact,
        }
    }

    /// Tokens of a whole request: the messages with their framing plus the tool schemas. A
    /// template renders them together (it may place the tools anywhere and frame them with the
    /// messages); a format that counts on the server counts the request in one call.
    pub fn count_request(
        &self,
        counter: &TokenCounter,
        messages: &[ChatMessage],
        tools: &[ToolSchema],
    ) -> Result<usize, TokenError> {
        match self {
            ChatFormat::Anthropic(a) => {
                refuse_in_template(ANTHROPIC_FORMAT, messages)?;
                a.count_request(counter, messages, tools)
            }
            ChatFormat::Template(t) => {
                refuse_in_template(t.name(), messages)?;
                t.count_request(counter, messages, tools)
            }
            ChatFormat::OpenAi(_) => Ok(self.count_messages(counter, messages)? + self.count_tools(counter, tools)?),
        }
    }

    /// The format for a model name: gpt-3.5 / gpt-4 (not 4o / 4.1) use [`Self::openai_gpt4`],
    /// Claude models (`claude…`) [`Self::anthropic_estimated`] with
    /// [`DEFAULT_ANTHROPIC_MARGIN_PERCENT`], every other model [`Self::openai`].
    /// A fine-tune (`ft:gpt-4-0613:org::id`) takes its base model's format.
    pub fn for_model(model: &str) -> Self {
        if model.starts_with("claude") {
            return Self::anthropic_estimated(DEFAULT_ANTHROPIC_MARGIN_PERCENT);
        }
        let model = match model.strip_prefix("ft:") {
            Some(rest) => rest.split(':').next().unwrap_or(rest),
            None => model,
        };
        let legacy = model.starts_with("gpt-3.5")
            || (model.starts_with("gpt-4") && !model.starts_with("gpt-4o") && !model.starts_with("gpt-4."));
        if legacy { Self::openai_gpt4() } else { Self::openai() }
    }

    /// Tokens of `messages` including their framing and the reply priming.
    pub fn count_messages(&self, counter: &TokenCounter, messages: &[ChatMessage]) -> Result<usize, TokenError> {
        let o = match self {
            ChatFormat::OpenAi(o) => o,
            ChatFormat::Template(t) => {
                refuse_in_template(t.name(), messages)?;
                return t.count_messages(counter, messages);
            }
            ChatFormat::Anthropic(a) => {
                refuse_in_template(ANTHROPIC_FORMAT, messages)?;
                return a.count_messages(counter, messages);
            }
        };
        Ok(o.reply_priming + self.message_costs(counter, messages)?.iter().sum::<usize>())
    }

    /// What each message adds to a request, in the context of the messages before it: a tool
    /// result is framed with the name of the call it answers, so its cost depends on that call.
    /// The costs plus the reply priming are exactly [`Self::count_messages`], which lets history
    /// trimming drop messages from the front with a running total instead of recounting.
    pub fn message_costs(&self, counter: &TokenCounter, messages: &[ChatMessage]) -> Result<Vec<usize>, TokenError> {
        match self {
            ChatFormat::Template(t) => {
                refuse_in_template(t.name(), messages)?;
                return t.message_costs(counter, messages);
            }
            ChatFormat::Anthropic(a) => {
                refuse_in_template(ANTHROPIC_FORMAT, messages)?;
                return a.message_costs(counter, messages);
            }
            ChatFormat::OpenAi(_) => {}
        }
        let mut costs = Vec::with_capacity(messages.len());
        // Call id -> function name, so a result is framed with the name of the call it answers;
        // a later call reusing an id takes it over.
        let mut calls: HashMap<&str, &str> = HashMap::new();
        for m in messages {
            if m.role != Role::Tool {
                for call in &m.tool_calls {
                    calls.insert(call.id.as_str(), call.name.as_str());
                }
            }
            let answered = m.tool_call_id.as_deref().and_then(|id| calls.get(id).copied());
            costs.push(self.message_cost(counter, m, answered)?);
        }
        Ok(costs)
    }

    /// What one message adds to a request. `answered_function` matters only for a tool result:
    /// the name of the function whose call it answers, when that call is in the request before
    /// it; without it the result is framed with its call id (an orphan result, as
    /// [`Self::message_costs`] frames one whose call is not in view). For one message among
    /// others, this is its entry in [`Self::message_costs`] with the name found there.
    pub fn message_cost(
        &self,
        counter: &TokenCounter,
        m: &ChatMessage,
        answered_function: Option<&str>,
    ) -> Result<usize, TokenError> {
        let o = match self {
            ChatFormat::OpenAi(o) => o,
            ChatFormat::Template(t) => {
                refuse_in_template(t.name(), std::slice::from_ref(m))?;
                return t.message_cost(counter, m);
            }
            ChatFormat::Anthropic(a) => {
                refuse_in_template(ANTHROPIC_FORMAT, std::slice::from_ref(m))?;
                return a.message_cost(counter, m, answered_function);
            }
        };
        let mut total = 0usize;
        match m.role {
            Role::Tool => {
                let function = answered_function.or(m.tool_call_id.as_deref()).unwrap_or_default();
                total += o.tool_result_specials;
                total += counter.count(&format!("functions.{function} to=assistant"))?;
                total += counter.count("commentary")?;
                total += counter.count(&m.content)?;
            }
            _ => {
                // In the harmony rendering an assistant message that only calls tools has no
                // text message of its own.
                if !(m.role == Role::Assistant && m.content.is_empty() && !m.tool_calls.is_empty()) {
                    total += o.per_message;
                    total += counter.count(m.role.as_str())?;
                    total += counter.count(&m.content)?;
                }
                // The reasoning that led to the message comes before it.
                total += reasoning_cost(counter, m)?;
                for call in &m.tool_calls {
                    total += o.tool_call_specials;
                    total += counter.count(Role::Assistant.as_str())?;
                    total += counter.count(&format!("commentary to=functions.{} ", call.name))?;
                    total += counter.count("json")?;
                    total += counter.count(&call.arguments)?;
                }
            }
        }
        if let Some(name) = &m.name {
            total = total.saturating_add_signed(o.per_name);
            total += counter.count(name)?;
        }
        Ok(total)
    }

    /// Tokens of the tool schemas block (0 when there are no tools), per the cookbook's
    /// `num_tokens_for_tools`: a property without a `type` or `description` counts as if it were
    /// the empty string (the cookbook's code requires both).
    pub fn count_tools(&self, counter: &TokenCounter, tools: &[ToolSchema]) -> Result<usize, TokenError> {
        let o = match self {
            ChatFormat::OpenAi(o) => o,
            ChatFormat::Template(t) => return t.count_tools(counter, tools),
            ChatFormat::Anthropic(a) => return a.count_tools(counter, tools),
        };
        if tools.is_empty() {
            return Ok(0);
        }
        let mut total: isize = 0;
        let tokens = |text: &str| counter.count(text).map(|n| isize::try_from(n).unwrap_or(isize::MAX));
        for tool in tools {
            total += o.func_init as isize;
            let desc = tool.description.strip_suffix('.').unwrap_or(&tool.description);
            total += tokens(&format!("{}:{}", tool.name, desc))?;
            let properties = tool.parameters.get("properties").and_then(Value::as_object);
            if let Some(props) = properties.filter(|p| !p.is_empty()) {
                total += o.prop_init as isize;
                for (key, prop) in props {
                    total += o.prop_key as isize;
                    if let Some(items) = prop.get("enum").and_then(Value::as_array) {
                        total += o.enum_init;
                        for item in items {
                            total += o.enum_item as isize;
                            total += tokens(&value_text(item))?;
                        }
                    }
                    let ty = prop.get("type").map(value_text).unwrap_or_default();
                    let pdesc = prop.get("description").map(value_text).unwrap_or_default();
                    let pdesc = pdesc.strip_suffix('.').unwrap_or(&pdesc);
                    total += tokens(&format!("{key}:{ty}:{pdesc}"))?;
                }
            }
        }
        total += o.func_end as isize;
        Ok(usize::try_from(total).unwrap_or(0))
    }
}

/// A JSON value as the cookbook's Python formats it into its lines: strings bare, anything else
/// as JSON text.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Encoding;
    use crate::chat::ToolCall;

    #[test]
    fn a_result_is_framed_with_the_name_of_the_call_it_answers() {
        let c = TokenCounter::for_encoding(Encoding::O200kBase);
        let call = ToolCall { id: "call_Zx81".into(), name: "lookup".into(), arguments: "{}".into() };
        let with_call =
            [ChatMessage::assistant_tool_calls("", vec![call]), ChatMessage::tool_result("call_Zx81", "42")];
        let f = ChatFormat::openai();
        let answered = f.count_messages(&c, &with_call).unwrap() - f.count_messages(&c, &with_call[..1]).unwrap();
        let header = c.count("functions.lookup to=assistant").unwrap();
        assert_eq!(answered, 4 + header + c.count("commentary").unwrap() + c.count("42").unwrap());
        assert_eq!(f.message_cost(&c, &with_call[1], Some("lookup")).unwrap(), answered);
        // Without the call in view, the id stands in for the name.
        let orphan = f.count_messages(&c, &with_call[1..]).unwrap() - 3;
        assert_eq!(
            orphan,
            4 + c.count("functions.call_Zx81 to=assistant").unwrap()
                + c.count("commentary").unwrap()
                + c.count("42").unwrap()
        );
    }

    #[test]
    fn legacy_models_get_the_legacy_tool_constant() {
        assert_eq!(ChatFormat::for_model("gpt-4-0613"), ChatFormat::openai_gpt4());
        assert_eq!(ChatFormat::for_model("gpt-3.5-turbo"), ChatFormat::openai_gpt4());
        assert_eq!(ChatFormat::for_model("ft:gpt-4-0613:acme::8Xyz"), ChatFormat::openai_gpt4());
        for modern in ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5", "o3-mini", "ft:gpt-4o-mini-2024-07-18:acme::1"] {
            assert_eq!(ChatFormat::for_model(modern), ChatFormat::openai(), "{modern}");
        }
    }
}
