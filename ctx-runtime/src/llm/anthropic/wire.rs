//! The Messages API wire format: ctx's request as Anthropic reads it, and the reply read back.
//!
//! What differs from chat completions, and how ctx's types map onto it:
//!
//! - The system prompt is the top-level `system`, not a message. The system messages that open
//!   the conversation become it (one string, or text blocks when there are several); a system
//!   message after a user or assistant message cannot be expressed and is refused.
//! - Content is a list of blocks. An assistant's tool calls are `tool_use` blocks whose `input`
//!   is the call's arguments parsed as a JSON object; a tool result (ctx's `tool` role) is a
//!   `tool_result` block of a **user** message, and consecutive messages of one role are sent as
//!   one message with all their blocks (the API requires every result of a turn in the user
//!   message right after it).
//! - A message `name` has no field here and is refused rather than dropped, as is
//!   `response_format`: the API has no JSON mode, and quietly ignoring the request would hand the
//!   pipeline free text where it expects JSON. `seed` is dropped: ctx documents it as honoured
//!   only where the server supports it, and this one does not.
//! - `stop` is `stop_sequences`; `max_tokens` is required and is the request's output limit.
//! - `stop_reason` is mapped onto the chat-completions words pipelines already read (`stop`,
//!   `length`, `tool_calls`); usage's `input_tokens` plus the prompt-cache counts is the prompt.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::{ChatMessage, Role, ToolCall, ToolSchema};
use crate::llm::{ChatRequest, Usage};

/// Why a request cannot be written in this format (message index or parameter named).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported(pub(crate) String);

/// The `system`, `messages` and `tools` of a request: the part `count_tokens` counts.
#[derive(Debug, Serialize)]
pub(crate) struct WirePrompt<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<WireSystem<'a>>,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum WireSystem<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text { text: &'a str },
    ToolUse { id: &'a str, name: &'a str, input: Value },
    ToolResult { tool_use_id: &'a str, content: &'a str },
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

impl<'a> WirePrompt<'a> {
    /// `messages` and `tools` as the API takes them.
    pub(crate) fn new(messages: &'a [ChatMessage], tools: &'a [ToolSchema]) -> Result<Self, Unsupported> {
        let leading = messages.iter().take_while(|m| m.role == Role::System).count();
        let (system, rest) = messages.split_at(leading);
        if let Some(m) = system.iter().find(|m| m.name.is_some()) {
            return Err(Unsupported(format!(
                "system message {} has a `name`, which the Messages API has no field for",
                system.iter().position(|s| std::ptr::eq(s, m)).unwrap_or(0)
            )));
        }
        let system = match system {
            [] => None,
            [one] => Some(WireSystem::Text(&one.content)),
            many => Some(WireSystem::Blocks(many.iter().map(|m| Block::Text { text: &m.content }).collect())),
        };
        let mut wire: Vec<WireMessage<'a>> = Vec::new();
        for (offset, m) in rest.iter().enumerate() {
            let index = leading + offset;
            if m.name.is_some() {
                return Err(Unsupported(format!(
                    "message {index} ({}) has a `name`, which the Messages API has no field for",
                    m.role.as_str()
                )));
            }
            let (role, blocks) = match m.role {
                Role::System => {
                    return Err(Unsupported(format!(
                        "message {index} is a system message after the conversation started; the Messages API \
                         takes the system prompt only as `system`, before the first message"
                    )));
                }
                Role::User => ("user", vec![Block::Text { text: &m.content }]),
                Role::Tool => {
                    let Some(id) = m.tool_call_id.as_deref() else {
                        return Err(Unsupported(format!("message {index} is a tool result without a `tool_call_id`")));
                    };
                    ("user", vec![Block::ToolResult { tool_use_id: id, content: &m.content }])
                }
                Role::Assistant => ("assistant", assistant_blocks(index, m)?),
            };
            match wire.last_mut() {
                Some(last) if last.role == role => last.content.extend(blocks),
                _ => wire.push(WireMessage { role, content: blocks }),
            }
        }
        let tools = tools
            .iter()
            .map(|t| WireTool { name: &t.name, description: &t.description, input_schema: &t.parameters })
            .collect();
        Ok(WirePrompt { system, messages: wire, tools })
    }
}

fn assistant_blocks<'a>(index: usize, m: &'a ChatMessage) -> Result<Vec<Block<'a>>, Unsupported> {
    let mut blocks = Vec::with_capacity(1 + m.tool_calls.len());
    // An empty text block is refused by the API; an assistant turn that only calls tools has none.
    if !m.content.is_empty() || m.tool_calls.is_empty() {
        blocks.push(Block::Text { text: &m.content });
    }
    for call in &m.tool_calls {
        let input = if call.arguments.trim().is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            match serde_json::from_str::<Value>(&call.arguments) {
                Ok(v @ Value::Object(_)) => v,
                _ => {
                    return Err(Unsupported(format!(
                        "message {index}: the arguments of tool call `{}` are not a JSON object; `tool_use.input` \
                         must be one",
                        call.id
                    )));
                }
            }
        };
        blocks.push(Block::ToolUse { id: &call.id, name: &call.name, input });
    }
    Ok(blocks)
}

/// The body of `POST /v1/messages`.
#[derive(Debug, Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    max_tokens: usize,
    #[serde(flatten)]
    prompt: WirePrompt<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop_sequences: &'a [String],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

impl<'a> WireRequest<'a> {
    /// The body for `request` sent to `model`.
    pub(crate) fn new(model: &'a str, request: &'a ChatRequest, stream: bool) -> Result<Self, Unsupported> {
        if let Some(format) = &request.params.response_format {
            let kind = match format {
                crate::llm::ResponseFormat::JsonObject => "json_object",
                crate::llm::ResponseFormat::JsonSchema { .. } => "json_schema",
            };
            return Err(Unsupported(format!(
                "`response_format` ({kind}): the Messages API has no JSON mode; ask for JSON in the prompt, or \
                 declare a tool whose input schema is the shape you want"
            )));
        }
        if request.params.seed.is_some() {
            tracing::debug!(target: "ctx::llm", model, "the Messages API has no `seed`; it is not sent");
        }
        Ok(WireRequest {
            model,
            max_tokens: request.max_tokens,
            prompt: WirePrompt::new(&request.messages, &request.tools)?,
            temperature: request.params.temperature,
            top_p: request.params.top_p,
            stop_sequences: &request.params.stop,
            stream,
        })
    }
}

/// The body of `POST /v1/messages/count_tokens`.
#[derive(Debug, Serialize)]
pub(crate) struct WireCountRequest<'a> {
    pub(crate) model: &'a str,
    #[serde(flatten)]
    pub(crate) prompt: WirePrompt<'a>,
}

/// A whole reply (`"type": "message"`). `content` is optional so a body without it is reported
/// as malformed rather than as a serde message.
#[derive(Debug, Deserialize)]
pub(crate) struct WireReply {
    #[serde(default)]
    pub(crate) content: Option<Vec<Value>>,
    #[serde(default)]
    pub(crate) stop_reason: Option<String>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
}

/// Usage as reported in a reply, in `message_start` and (output only, cumulative) in
/// `message_delta`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub(crate) input_tokens: Option<usize>,
    #[serde(default)]
    pub(crate) output_tokens: Option<usize>,
    #[serde(default)]
    pub(crate) cache_creation_input_tokens: Option<usize>,
    #[serde(default)]
    pub(crate) cache_read_input_tokens: Option<usize>,
}

impl WireUsage {
    /// Every prompt token the model read: uncached input plus what was written to and read from
    /// the prompt cache (the three are disjoint parts of one prompt).
    pub(crate) fn prompt_tokens(&self) -> Option<usize> {
        let parts = [self.input_tokens, self.cache_creation_input_tokens, self.cache_read_input_tokens];
        if parts.iter().all(Option::is_none) {
            return None;
        }
        Some(parts.iter().map(|p| p.unwrap_or(0)).fold(0usize, usize::saturating_add))
    }

    /// Later values replace earlier ones field by field (`message_delta` repeats only some).
    pub(crate) fn merge(&mut self, later: WireUsage) {
        self.input_tokens = later.input_tokens.or(self.input_tokens);
        self.output_tokens = later.output_tokens.or(self.output_tokens);
        self.cache_creation_input_tokens = later.cache_creation_input_tokens.or(self.cache_creation_input_tokens);
        self.cache_read_input_tokens = later.cache_read_input_tokens.or(self.cache_read_input_tokens);
    }

    pub(crate) fn into_usage(self) -> Option<Usage> {
        let prompt_tokens = self.prompt_tokens()?;
        Some(Usage { prompt_tokens, completion_tokens: self.output_tokens.unwrap_or(0) })
    }
}

/// `stop_reason` in the chat-completions words pipelines read; unknown reasons pass unchanged.
pub(crate) fn finish_reason(stop_reason: &str) -> String {
    match stop_reason {
        "end_turn" | "stop_sequence" => "stop",
        "max_tokens" | "model_context_window_exceeded" => "length",
        "tool_use" => "tool_calls",
        "refusal" => "content_filter",
        other => other,
    }
    .to_owned()
}

/// The text and tool calls of a reply's content blocks; other block kinds (thinking, server
/// tools) carry nothing ctx's reply has a place for and are skipped.
pub(crate) fn read_blocks(blocks: &[Value]) -> Result<(String, Vec<ToolCall>), String> {
    let mut text = String::new();
    let mut calls = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => match block.get("text").and_then(Value::as_str) {
                Some(t) => text.push_str(t),
                None => return Err(format!("content block {index} is a text block without `text`")),
            },
            Some("tool_use") => {
                let field = |name: &str| block.get(name).and_then(Value::as_str).map(str::to_owned);
                let (Some(id), Some(name)) = (field("id"), field("name")) else {
                    return Err(format!("content block {index} is a tool_use block without `id` or `name`"));
                };
                let input = block.get("input").cloned().unwrap_or(Value::Object(serde_json::Map::new()));
                calls.push(ToolCall { id, name, arguments: input.to_string() });
            }
            Some(_) => {}
            None => return Err(format!("content block {index} has no `type`")),
        }
    }
    Ok((text, calls))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::llm::{ModelParams, ResponseFormat};

    fn conversation() -> Vec<ChatMessage> {
        vec![
            ChatMessage::system("Be brief."),
            ChatMessage::user("Weather in Paris and Rome?"),
            ChatMessage::assistant_tool_calls(
                "Checking.",
                vec![
                    ToolCall { id: "tu_1".into(), name: "weather".into(), arguments: "{\"city\":\"Paris\"}".into() },
                    ToolCall { id: "tu_2".into(), name: "weather".into(), arguments: String::new() },
                ],
            ),
            ChatMessage::tool_result("tu_1", "18C"),
            ChatMessage::tool_result("tu_2", "24C"),
            ChatMessage::user("And tomorrow?"),
        ]
    }

    #[test]
    fn system_tool_use_and_tool_results_take_the_api_shape() {
        let mut request = ChatRequest::new(conversation(), 300);
        request.tools.push(ToolSchema {
            name: "weather".into(),
            description: "Current weather.".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        });
        request.params =
            ModelParams { temperature: Some(0.5), stop: vec!["END".into()], seed: Some(1), ..Default::default() };
        let body = serde_json::to_value(WireRequest::new("claude-x", &request, true).unwrap()).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "claude-x",
                "max_tokens": 300,
                "system": "Be brief.",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Checking."},
                        {"type": "tool_use", "id": "tu_1", "name": "weather", "input": {"city": "Paris"}},
                        {"type": "tool_use", "id": "tu_2", "name": "weather", "input": {}}
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "tu_1", "content": "18C"},
                        {"type": "tool_result", "tool_use_id": "tu_2", "content": "24C"},
                        {"type": "text", "text": "And tomorrow?"}
                    ]}
                ],
                "tools": [{"name": "weather", "description": "Current weather.",
                           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
                "temperature": 0.5,
                "stop_sequences": ["END"],
                "stream": true
            })
        );
    }

    #[test]
    fn what_the_api_cannot_express_is_refused_with_its_place() {
        let refused = |messages: Vec<ChatMessage>| WirePrompt::new(&messages, &[]).unwrap_err().0;
        let late = refused(vec![ChatMessage::user("hi"), ChatMessage::system("late")]);
        assert!(late.contains("message 1 is a system message"), "{late}");
        let named = refused(vec![ChatMessage::user("hi").with_name("ann")]);
        assert!(named.contains("message 0 (user) has a `name`"), "{named}");
        let bad_args = refused(vec![ChatMessage::assistant_tool_calls(
            "",
            vec![ToolCall { id: "c9".into(), name: "f".into(), arguments: "[1]".into() }],
        )]);
        assert!(bad_args.contains("tool call `c9`"), "{bad_args}");
        let mut request = ChatRequest::new(vec![ChatMessage::user("hi")], 5);
        request.params.response_format = Some(ResponseFormat::JsonObject);
        let err = WireRequest::new("m", &request, false).unwrap_err().0;
        assert!(err.contains("`response_format` (json_object)"), "{err}");
    }

    #[test]
    fn several_system_messages_become_system_blocks() {
        let messages = [ChatMessage::system("A"), ChatMessage::system("B"), ChatMessage::user("q")];
        let body = serde_json::to_value(WirePrompt::new(&messages, &[]).unwrap()).unwrap();
        assert_eq!(body["system"], json!([{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]));
    }

    #[test]
    fn reply_blocks_usage_and_stop_reasons() {
        let (text, calls) = read_blocks(&[
            json!({"type": "thinking", "thinking": "hmm"}),
            json!({"type": "text", "text": "Sure."}),
            json!({"type": "tool_use", "id": "tu_9", "name": "weather", "input": {"city": "Oslo"}}),
        ])
        .unwrap();
        assert_eq!(text, "Sure.");
        assert_eq!(
            calls,
            [ToolCall { id: "tu_9".into(), name: "weather".into(), arguments: "{\"city\":\"Oslo\"}".into() }]
        );
        assert!(read_blocks(&[json!({"type": "tool_use", "input": {}})]).is_err());
        let usage = WireUsage {
            input_tokens: Some(10),
            output_tokens: Some(4),
            cache_creation_input_tokens: Some(100),
            cache_read_input_tokens: Some(1000),
        };
        assert_eq!(usage.into_usage(), Some(Usage { prompt_tokens: 1110, completion_tokens: 4 }));
        assert_eq!(WireUsage::default().into_usage(), None);
        assert_eq!(finish_reason("end_turn"), "stop");
        assert_eq!(finish_reason("max_tokens"), "length");
        assert_eq!(finish_reason("tool_use"), "tool_calls");
        assert_eq!(finish_reason("pause_turn"), "pause_turn");
    }
}
