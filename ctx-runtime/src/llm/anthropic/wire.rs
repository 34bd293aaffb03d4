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
//! - Prompt caching: a request (and its `count_tokens` body, so the two stay the same prompt)
//!   carries `cache_control` breakpoints at
//!   the stable boundaries of ctx's layout, at most three of the API's four: after the tool
//!   schemas, after the system prompt, and after the history (the messages before the latest user
//!   message), so the next turn of a conversation, which appends to that history, reads the
//!   prefix from the cache; and one on the prompt's last block, so the next request of an agent
//!   turn, which appends tool calls and results, reads everything before them. The API caches a
//!   prefix only from its minimum length up, so a short prompt is simply not cached.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::{ChatMessage, Role, SignedThinking, ToolCall, ToolSchema};
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
    /// Where the history ends in `messages` (wire message, block): the last block of the message
    /// before the latest user message, when there is one.
    #[serde(skip)]
    history_end: Option<(usize, usize)>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum WireSystem<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

/// `cache_control`: a prompt-cache breakpoint after the block (or tool) that carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

/// The most breakpoints the API takes in one request.
#[cfg(test)]
pub(crate) const MAX_CACHE_BREAKPOINTS: usize = 4;

#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Block<'a> {
    Typed {
        #[serde(flatten)]
        kind: BlockKind<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// A signed thinking block, sent back exactly as it was received. It never carries a
    /// breakpoint (the API refuses `cache_control` on thinking).
    Verbatim(&'a Value),
}

impl Block<'_> {
    /// Sets a breakpoint on a block that can carry one; false for a verbatim block.
    fn mark(&mut self) -> bool {
        match self {
            Block::Typed { cache_control, .. } => {
                *cache_control = Some(EPHEMERAL);
                true
            }
            Block::Verbatim(_) => false,
        }
    }

    #[cfg(test)]
    fn marked(&self) -> bool {
        matches!(self, Block::Typed { cache_control: Some(_), .. })
    }
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockKind<'a> {
    Text { text: &'a str },
    ToolUse { id: &'a str, name: &'a str, input: Value },
    ToolResult { tool_use_id: &'a str, content: &'a str },
}

impl<'a> From<BlockKind<'a>> for Block<'a> {
    fn from(kind: BlockKind<'a>) -> Self {
        Block::Typed { kind, cache_control: None }
    }
}

fn text(text: &str) -> Block<'_> {
    BlockKind::Text { text }.into()
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

impl<'a> WirePrompt<'a> {
    /// `messages` and `tools` as the API takes them, with the prompt-cache breakpoints.
    pub(crate) fn new(messages: &'a [ChatMessage], tools: &'a [ToolSchema]) -> Result<Self, Unsupported> {
        let mut prompt = Self::unmarked(messages, tools)?;
        prompt.mark_cache_breakpoints();
        Ok(prompt)
    }

    /// [`Self::new`] without the breakpoints.
    fn unmarked(messages: &'a [ChatMessage], tools: &'a [ToolSchema]) -> Result<Self, Unsupported> {
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
            many => Some(WireSystem::Blocks(many.iter().map(|m| text(&m.content)).collect())),
        };
        // The latest user message (a question, not a tool result) starts what changes.
        let latest_user = rest.iter().rposition(|m| m.role == Role::User);
        let mut history_end = None;
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
                Role::User => ("user", vec![text(&m.content)]),
                Role::Tool => {
                    let Some(id) = m.tool_call_id.as_deref() else {
                        return Err(Unsupported(format!("message {index} is a tool result without a `tool_call_id`")));
                    };
                    ("user", vec![BlockKind::ToolResult { tool_use_id: id, content: &m.content }.into()])
                }
                Role::Assistant => ("assistant", assistant_blocks(index, m)?),
            };
            match wire.last_mut() {
                Some(last) if last.role == role => last.content.extend(blocks),
                _ => wire.push(WireMessage { role, content: blocks }),
            }
            if latest_user.is_some_and(|u| u > 0 && offset + 1 == u) {
                history_end = wire.last().map(|w| (wire.len() - 1, w.content.len().saturating_sub(1)));
            }
        }
        let tools = tools
            .iter()
            .map(|t| WireTool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.parameters,
                cache_control: None,
            })
            .collect();
        Ok(WirePrompt { system, messages: wire, tools, history_end })
    }

    /// Places the prompt-cache breakpoints (see the module documentation): after the tools,
    /// the system prompt, the history and the whole prompt, each once, at most
    /// [`MAX_CACHE_BREAKPOINTS`].
    fn mark_cache_breakpoints(&mut self) {
        if let Some(tool) = self.tools.last_mut() {
            tool.cache_control = Some(EPHEMERAL);
        }
        self.system = match self.system.take() {
            Some(WireSystem::Text(t)) => {
                let mut block = text(t);
                block.mark();
                Some(WireSystem::Blocks(vec![block]))
            }
            Some(WireSystem::Blocks(mut blocks)) => {
                if let Some(last) = blocks.last_mut() {
                    last.mark();
                }
                Some(WireSystem::Blocks(blocks))
            }
            None => None,
        };
        let last = self.messages.len().checked_sub(1).map(|m| (m, usize::MAX));
        for (m, b) in self.history_end.into_iter().chain(last) {
            // The last block at or before the boundary that can carry a breakpoint (a thinking
            // block cannot).
            if let Some(content) = self.messages.get_mut(m).map(|w| &mut w.content) {
                let upto = b.min(content.len());
                let _ = content.iter_mut().take(upto.saturating_add(1)).rev().any(Block::mark);
            }
        }
    }

    /// How many breakpoints the prompt carries.
    #[cfg(test)]
    fn cache_breakpoints(&self) -> usize {
        let tools = self.tools.iter().filter(|t| t.cache_control.is_some()).count();
        let system = match &self.system {
            Some(WireSystem::Blocks(b)) => b.iter().filter(|b| b.marked()).count(),
            _ => 0,
        };
        let messages = self.messages.iter().flat_map(|m| &m.content).filter(|b| b.marked()).count();
        tools + system + messages
    }
}

fn assistant_blocks<'a>(index: usize, m: &'a ChatMessage) -> Result<Vec<Block<'a>>, Unsupported> {
    let mut blocks = Vec::with_capacity(m.thinking.len() + 1 + m.tool_calls.len());
    // Signed thinking first, as received: the API checks it is the assistant turn's own.
    blocks.extend(m.thinking.iter().map(|t| Block::Verbatim(&t.block)));
    // An empty text block is refused by the API; an assistant turn that only calls tools has none.
    if !m.content.is_empty() || (m.tool_calls.is_empty() && m.thinking.is_empty()) {
        blocks.push(text(&m.content));
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
        blocks.push(BlockKind::ToolUse { id: &call.id, name: &call.name, input }.into());
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
        let prompt = WirePrompt::new(&request.messages, &request.tools)?;
        Ok(WireRequest {
            model,
            max_tokens: request.max_tokens,
            prompt,
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
        Some(
            Usage::new(prompt_tokens, self.output_tokens.unwrap_or(0))
                .with_cache(self.cache_read_input_tokens, self.cache_creation_input_tokens),
        )
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

/// Whether a content block is signed reasoning the API wants back unchanged.
pub(crate) fn is_thinking(kind: &str) -> bool {
    matches!(kind, "thinking" | "redacted_thinking")
}

/// A reply's content: its text, its tool calls and its signed thinking blocks.
pub(crate) type ReplyContent = (String, Vec<ToolCall>, Vec<SignedThinking>);

/// The text, tool calls and signed thinking blocks of a reply's content blocks; other block
/// kinds (server tools) carry nothing ctx's reply has a place for and are skipped.
pub(crate) fn read_blocks(blocks: &[Value]) -> Result<ReplyContent, String> {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut thinking = Vec::new();
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
                calls.push(ToolCall::new(id, name, input.to_string()));
            }
            Some(kind) if is_thinking(kind) => thinking.push(SignedThinking::new(block.clone())),
            Some(_) => {}
            None => return Err(format!("content block {index} has no `type`")),
        }
    }
    Ok((text, calls, thinking))
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
                    ToolCall::new("tu_1", "weather", "{\"city\":\"Paris\"}"),
                    ToolCall::new("tu_2", "weather", String::new()),
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
        request.tools.push(ToolSchema::new(
            "weather",
            "Current weather.",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        ));
        request.params = ModelParams::default().temperature(Some(0.5)).stop(vec!["END".into()]).seed(Some(1));
        let body = serde_json::to_value(WireRequest::new("claude-x", &request, true).unwrap()).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "claude-x",
                "max_tokens": 300,
                "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Checking."},
                        {"type": "tool_use", "id": "tu_1", "name": "weather", "input": {"city": "Paris"}},
                        {"type": "tool_use", "id": "tu_2", "name": "weather", "input": {}}
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "tu_1", "content": "18C"},
                        // The history ends here: the next turn reads up to this breakpoint.
                        {"type": "tool_result", "tool_use_id": "tu_2", "content": "24C",
                         "cache_control": {"type": "ephemeral"}},
                        {"type": "text", "text": "And tomorrow?", "cache_control": {"type": "ephemeral"}}
                    ]}
                ],
                "tools": [{"name": "weather", "description": "Current weather.",
                           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
                           "cache_control": {"type": "ephemeral"}}],
                "temperature": 0.5,
                "stop_sequences": ["END"],
                "stream": true
            })
        );
    }

    #[test]
    fn breakpoints_sit_at_the_stable_boundaries_and_never_exceed_four() {
        let with = |messages: &[ChatMessage], tools: &[ToolSchema]| {
            let unmarked = serde_json::to_value(WirePrompt::unmarked(messages, tools).unwrap()).unwrap();
            let prompt = WirePrompt::new(messages, tools).unwrap();
            (prompt.cache_breakpoints(), unmarked, serde_json::to_value(&prompt).unwrap())
        };
        let tool = ToolSchema::new("t", "d", json!({"type": "object"}));
        // One question: system, tools and the question itself; no history.
        let (n, unmarked, _) = with(&[ChatMessage::system("S"), ChatMessage::user("q")], std::slice::from_ref(&tool));
        assert_eq!(n, 3);
        assert!(!unmarked.to_string().contains("cache_control"));
        // A conversation: the history's end and the prompt's end.
        let conversation = [
            ChatMessage::user("q1"),
            ChatMessage::assistant("a1"),
            ChatMessage::user("q2"),
            ChatMessage::assistant("a2"),
            ChatMessage::user("q3"),
        ];
        let (n, _, body) = with(&conversation, &[]);
        assert_eq!(n, 2);
        assert_eq!(body["messages"][3]["content"][0]["cache_control"], json!({"type": "ephemeral"}));
        assert_eq!(body["messages"][4]["content"][0]["cache_control"], json!({"type": "ephemeral"}));
        assert!(body["messages"][1]["content"][0].get("cache_control").is_none());
        // Every shape stays within the API's limit, whatever the roles.
        for k in 0..conversation.len() {
            let mut messages = vec![ChatMessage::system("A"), ChatMessage::system("B")];
            messages.extend(conversation[..=k].iter().cloned());
            let (n, _, _) = with(&messages, std::slice::from_ref(&tool));
            assert!(n <= MAX_CACHE_BREAKPOINTS, "{k}: {n}");
        }
    }

    #[test]
    fn signed_thinking_goes_back_first_and_byte_for_byte() {
        let signed = json!({"type": "thinking", "thinking": "Check the weather tool.", "signature": "EqQB/x=="});
        let redacted = json!({"type": "redacted_thinking", "data": "opaque=="});
        let call = ToolCall::new("tu_1", "weather", "{}");
        let messages = [
            ChatMessage::user("Weather?"),
            ChatMessage::assistant_tool_calls("", vec![call])
                .with_thinking(vec![SignedThinking::new(signed.clone()), SignedThinking::new(redacted.clone())]),
            ChatMessage::tool_result("tu_1", "18C"),
        ];
        let body = serde_json::to_value(WirePrompt::new(&messages, &[]).unwrap()).unwrap();
        assert_eq!(
            body["messages"][1]["content"],
            json!([signed.clone(), redacted, {"type": "tool_use", "id": "tu_1", "name": "weather", "input": {}}])
        );
        // A message of thinking alone keeps it and sends no empty text block.
        let only = [
            ChatMessage::user("q"),
            ChatMessage::assistant("").with_thinking(vec![SignedThinking::new(signed.clone())]),
        ];
        let body = serde_json::to_value(WirePrompt::new(&only, &[]).unwrap()).unwrap();
        assert_eq!(body["messages"][1]["content"], json!([signed]), "the API refuses a breakpoint on thinking");
    }

    #[test]
    fn what_the_api_cannot_express_is_refused_with_its_place() {
        let refused = |messages: Vec<ChatMessage>| WirePrompt::new(&messages, &[]).unwrap_err().0;
        let late = refused(vec![ChatMessage::user("hi"), ChatMessage::system("late")]);
        assert!(late.contains("message 1 is a system message"), "{late}");
        let named = refused(vec![ChatMessage::user("hi").with_name("ann")]);
        assert!(named.contains("message 0 (user) has a `name`"), "{named}");
        let bad_args = refused(vec![ChatMessage::assistant_tool_calls("", vec![ToolCall::new("c9", "f", "[1]")])]);
        assert!(bad_args.contains("tool call `c9`"), "{bad_args}");
        let mut request = ChatRequest::new(vec![ChatMessage::user("hi")], 5);
        request.params.response_format = Some(ResponseFormat::JsonObject);
        let err = WireRequest::new("m", &request, false).unwrap_err().0;
        assert!(err.contains("`response_format` (json_object)"), "{err}");
    }

    #[test]
    fn several_system_messages_become_system_blocks() {
        let messages = [ChatMessage::system("A"), ChatMessage::system("B"), ChatMessage::user("q")];
        let body = serde_json::to_value(WirePrompt::unmarked(&messages, &[]).unwrap()).unwrap();
        assert_eq!(body["system"], json!([{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]));
        // With the breakpoints, only the last system block carries one.
        let body = serde_json::to_value(WirePrompt::new(&messages, &[]).unwrap()).unwrap();
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "A"}, {"type": "text", "text": "B", "cache_control": {"type": "ephemeral"}}])
        );
    }

    #[test]
    fn reply_blocks_usage_and_stop_reasons() {
        let (text, calls, thinking) = read_blocks(&[
            json!({"type": "thinking", "thinking": "hmm", "signature": "sig=="}),
            json!({"type": "text", "text": "Sure."}),
            json!({"type": "tool_use", "id": "tu_9", "name": "weather", "input": {"city": "Oslo"}}),
        ])
        .unwrap();
        assert_eq!(text, "Sure.");
        assert_eq!(
            thinking,
            [SignedThinking::new(json!({"type": "thinking", "thinking": "hmm", "signature": "sig=="}))]
        );
        assert_eq!(calls, [ToolCall::new("tu_9", "weather", "{\"city\":\"Oslo\"}")]);
        assert!(read_blocks(&[json!({"type": "tool_use", "input": {}})]).is_err());
        let usage = WireUsage {
            input_tokens: Some(10),
            output_tokens: Some(4),
            cache_creation_input_tokens: Some(100),
            cache_read_input_tokens: Some(1000),
        };
        assert_eq!(usage.into_usage(), Some(Usage::new(1110, 4).with_cache(Some(1000), Some(100))));
        assert_eq!(usage.into_usage().map(|u| u.uncached_prompt_tokens()), Some(10));
        assert_eq!(WireUsage::default().into_usage(), None);
        assert_eq!(finish_reason("end_turn"), "stop");
        assert_eq!(finish_reason("max_tokens"), "length");
        assert_eq!(finish_reason("tool_use"), "tool_calls");
        assert_eq!(finish_reason("pause_turn"), "pause_turn");
    }
}
