//! Chat messages as a model API sees them: roles, names, tool calls and tool schemas.
//!
//! These are the values that [`crate::TokenCounter::count_messages`] counts with the
//! chat-format overhead of the model family, and that model clients send.

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// The result of a tool call, answering an assistant message's [`ToolCall`].
    Tool,
}

impl Role {
    /// The role's name on the wire (`"system"`, `"user"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A tool call made by the assistant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// The call id that the tool result message refers to.
    pub id: String,
    /// The function name.
    pub name: String,
    /// The JSON arguments, as the exact string the model produced.
    pub arguments: String,
}

/// A tool (function) the model may call, described by a JSON schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolSchema {
    /// The function name.
    pub name: String,
    /// What the function does.
    pub description: String,
    /// JSON schema of the parameters (an `object` schema).
    pub parameters: serde_json::Value,
}

impl ToolCall {
    /// The call `id` of the function `name` with its JSON `arguments`, as the model wrote them.
    ///
    /// ```
    /// let call = ctx_tokens::chat::ToolCall::new("call_1", "search", r#"{"query":"budget"}"#);
    /// assert_eq!(call.name, "search");
    /// ```
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
    }
}

impl ToolSchema {
    /// The function `name`, what it does, and the JSON schema of its parameters.
    ///
    /// ```
    /// let params = serde_json::json!({"type": "object", "properties": {"query": {"type": "string"}}});
    /// let tool = ctx_tokens::chat::ToolSchema::new("search", "Searches the docs.", params);
    /// assert_eq!(tool.name, "search");
    /// ```
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: serde_json::Value) -> Self {
        ToolSchema { name: name.into(), description: description.into(), parameters }
    }
}

/// A reasoning block the provider signed, kept exactly as it arrived so that it can be sent
/// back unchanged: Anthropic's `thinking` block (its text and `signature`) or
/// `redacted_thinking` block, or an OpenAI Responses `reasoning` item (its `id`, `summary` and
/// `encrypted_content`). The APIs refuse (or reason worse over) a tool-use turn whose thinking
/// was dropped or edited, so ctx never splits it from the assistant message that carries it, never reorders
/// it and never rewrites it (a trim keeps or drops the whole message; nothing compacts it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SignedThinking {
    /// The block as the provider sent it: a JSON object with its `type`.
    pub block: serde_json::Value,
}

impl SignedThinking {
    /// The block `block`, as received.
    pub fn new(block: serde_json::Value) -> Self {
        SignedThinking { block }
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// The text content (may be empty for an assistant message that only calls tools).
    pub content: String,
    /// Optional participant name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Tool calls made by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a [`Role::Tool`] message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For an assistant message: the signed reasoning blocks that came before its text and tool
    /// calls, in order, as the provider sent them (Anthropic's extended thinking, OpenAI's
    /// Responses reasoning items). Only the client of the API that produced them sends them
    /// back; they are part of the message's unit and never edited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<SignedThinking>,
    /// For an assistant message whose `thinking` holds OpenAI Responses reasoning items with
    /// `encrypted_content`: how many reasoning tokens those items hold, which no local tokenizer
    /// can see. Set from the reply's `usage.output_tokens_details.reasoning_tokens` when the
    /// server reported it, else from the output limit of the request that produced them (the
    /// reasoning is generated inside it, so it cannot be larger). Counted as part of the message
    /// in every later request; a message with encrypted reasoning and no count is refused by the
    /// counter (`REASONING_UNCOUNTED`) rather than counted short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<usize>,
}

impl ChatMessage {
    /// Sets `tool_calls`.
    #[must_use]
    pub fn tool_calls(mut self, value: Vec<ToolCall>) -> Self {
        self.tool_calls = value;
        self
    }

    /// Sets `tool_call_id`.
    #[must_use]
    pub fn tool_call_id(mut self, value: Option<String>) -> Self {
        self.tool_call_id = value;
        self
    }

    /// A message of `role` with `content` and nothing else; the constructors below name the role.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self::plain(role, content)
    }

    fn plain(role: Role, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: content.into(),
            name: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            thinking: Vec::new(),
            reasoning_tokens: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(Role::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::plain(Role::Assistant, content)
    }

    /// An assistant message that calls tools.
    pub fn assistant_tool_calls(content: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        ChatMessage { tool_calls: calls, ..Self::plain(Role::Assistant, content) }
    }

    /// A tool result answering the call `call_id`.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage { tool_call_id: Some(call_id.into()), ..Self::plain(Role::Tool, content) }
    }

    /// This message with the signed reasoning blocks that preceded it, as received.
    #[must_use]
    pub fn with_thinking(mut self, thinking: Vec<SignedThinking>) -> Self {
        self.thinking = thinking;
        self
    }

    /// This message with the count of the hidden reasoning its `thinking` carries (see
    /// [`ChatMessage::reasoning_tokens`]).
    #[must_use]
    pub fn with_reasoning_tokens(mut self, tokens: Option<usize>) -> Self {
        self.reasoning_tokens = tokens;
        self
    }

    /// This message with a participant name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_thinking_survives_a_snapshot_round_trip_unchanged() {
        let block =
            serde_json::json!({"type": "thinking", "thinking": "Plan: call the tool.", "signature": "EqQB/+=="});
        let call = ToolCall { id: "c1".into(), name: "f".into(), arguments: "{}".into() };
        let message =
            ChatMessage::assistant_tool_calls("", vec![call]).with_thinking(vec![SignedThinking::new(block.clone())]);
        let json = serde_json::to_value(&message).unwrap();
        assert_eq!(json["thinking"], serde_json::json!([block]));
        assert!(json.get("reasoning_tokens").is_none());
        // The count of an OpenAI reasoning item's hidden tokens travels with its message.
        let counted = message.clone().with_reasoning_tokens(Some(812));
        let back: ChatMessage = serde_json::from_value(serde_json::to_value(&counted).unwrap()).unwrap();
        assert_eq!((back.reasoning_tokens, &back), (Some(812), &counted));
        let back: ChatMessage = serde_json::from_value(json).unwrap();
        assert_eq!(back, message);
        // A message without thinking serializes as before.
        let plain = serde_json::to_value(ChatMessage::user("q")).unwrap();
        assert!(plain.get("thinking").is_none());
        assert_eq!(serde_json::from_value::<ChatMessage>(plain).unwrap(), ChatMessage::user("q"));
    }
}
