//! Counting a request in a [`ChatFormat`]: each message's framing around the exact counts of its
//! texts, the tool block, and whole requests (`format.rs` says what is modelled and from where).
//! An Anthropic format or a chat template counts in its own way (`anthropic_counts.rs`,
//! `template_counts.rs`); this file dispatches to them and counts the OpenAI framing itself.
//!
//! Apart from the format's description (`format.rs`) because a [`TokenCounter`] holds its chat
//! format: the format sits below the counter, the counting with it above.

use std::collections::HashMap;

use serde_json::Value;

use super::counter::TokenCounter;
use super::format::ChatFormat;
use super::reasoning::{reasoning_cost, refuse_in_template};
use crate::TokenError;
use crate::chat::{ChatMessage, Role, ToolSchema};

/// The name the Anthropic format gives in a refusal of what it has no place for (OpenAI's
/// reasoning items: neither Anthropic's API nor its count has a place for them).
const ANTHROPIC_FORMAT: &str = "Anthropic Messages";

// Written here, not with the type: they count with a `TokenCounter`, which holds the format.
impl ChatFormat {
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
            ChatFormat::Template(t) if !tools.is_empty() => {
                refuse_in_template(t.name(), messages)?;
                t.check_specials(counter)?;
                counter.count(&t.render_request(messages, tools)?)
            }
            ChatFormat::Template(_) => self.count_messages(counter, messages),
            ChatFormat::OpenAi(_) => Ok(self.count_messages(counter, messages)? + self.count_tools(counter, tools)?),
        }
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
}
