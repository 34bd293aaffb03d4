//! Chat-format overhead: what a list of messages costs beyond its texts.
//!
//! A chat model does not see a list of strings; it sees one token stream in which every message
//! is wrapped in role markers and the reply is primed. [`ChatFormat`] adds those tokens so that a
//! count is the count of what the model receives.
//!
//! The OpenAI numbers follow the OpenAI cookbook ("How to count tokens with tiktoken"), which
//! pins them against the API: 3 tokens a message, 1 more for a `name`, 3 to prime the reply, and
//! for tool schemas the per-function and per-property constants below.

use serde_json::Value;

use super::TokenCounter;
use super::template::ChatTemplate;
use crate::chat::{ChatMessage, ToolSchema};
use crate::error::TokenError;

/// Token constants of the OpenAI chat format for one model family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenAiOverhead {
    /// Tokens wrapped around every message (`<|start|>{role}<|message|>…<|end|>` less the role).
    pub per_message: usize,
    /// Extra tokens when a message has a `name`.
    pub per_name: isize,
    /// Tokens that prime the assistant's reply.
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
}

impl ChatFormat {
    /// gpt-4o / gpt-4o-mini and later (the cookbook's 124-token example).
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
        })
    }

    /// gpt-3.5-turbo / gpt-4 (the cookbook's 129-token example); only the tool block differs.
    pub fn openai_gpt4() -> Self {
        match Self::openai() {
            ChatFormat::OpenAi(o) => ChatFormat::OpenAi(OpenAiOverhead { func_init: 10, ..o }),
            template => template,
        }
    }

    /// The format for a model name: gpt-3.5 / gpt-4 (not 4o / 4.1) use [`Self::openai_gpt4`],
    /// every other model [`Self::openai`].
    pub fn for_model(model: &str) -> Self {
        let legacy = model.starts_with("gpt-3.5")
            || (model.starts_with("gpt-4") && !model.starts_with("gpt-4o") && !model.starts_with("gpt-4."));
        if legacy { Self::openai_gpt4() } else { Self::openai() }
    }

    /// Tokens of `messages` including per-message overhead and reply priming.
    pub fn count_messages(&self, counter: &TokenCounter, messages: &[ChatMessage]) -> Result<usize, TokenError> {
        match self {
            ChatFormat::OpenAi(o) => {
                let mut total = o.reply_priming;
                for m in messages {
                    total += o.per_message;
                    total += counter.count(m.role.as_str())?;
                    total += counter.count(&m.content)?;
                    if let Some(name) = &m.name {
                        total = total.saturating_add_signed(o.per_name);
                        total += counter.count(name)?;
                    }
                    for call in &m.tool_calls {
                        // The wire form the model sees is the function name and its JSON
                        // arguments, each counted as the exact text sent.
                        total += counter.count(&call.name)?;
                        total += counter.count(&call.arguments)?;
                    }
                    if let Some(id) = &m.tool_call_id {
                        total += counter.count(id)?;
                    }
                }
                Ok(total)
            }
            ChatFormat::Template(t) => t.count_messages(counter, messages),
        }
    }

    /// Tokens of the tool schemas block (0 when there are no tools).
    pub fn count_tools(&self, counter: &TokenCounter, tools: &[ToolSchema]) -> Result<usize, TokenError> {
        let o = match self {
            ChatFormat::OpenAi(o) => o,
            ChatFormat::Template(t) => return t.count_tools(tools),
        };
        if tools.is_empty() {
            return Ok(0);
        }
        let mut total: isize = 0;
        for tool in tools {
            total += o.func_init as isize;
            let desc = tool.description.strip_suffix('.').unwrap_or(&tool.description);
            total += counter.count(&format!("{}:{}", tool.name, desc))? as isize;
            let properties = tool.parameters.get("properties").and_then(Value::as_object);
            if let Some(props) = properties.filter(|p| !p.is_empty()) {
                total += o.prop_init as isize;
                for (key, prop) in props {
                    total += o.prop_key as isize;
                    if let Some(items) = prop.get("enum").and_then(Value::as_array) {
                        total += o.enum_init;
                        for item in items {
                            total += o.enum_item as isize;
                            total += counter.count(&value_text(item))? as isize;
                        }
                    }
                    let ty = prop.get("type").map(value_text).unwrap_or_default();
                    let pdesc = prop.get("description").map(value_text).unwrap_or_default();
                    let pdesc = pdesc.strip_suffix('.').unwrap_or(&pdesc);
                    total += counter.count(&format!("{key}:{ty}:{pdesc}"))? as isize;
                }
            }
        }
        total += o.func_end as isize;
        Ok(total.max(0) as usize)
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
