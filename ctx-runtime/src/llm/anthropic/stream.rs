//! A Messages API stream assembled into one reply.
//!
//! The framing is the shared event-stream format (`crate::llm::http::sse`);
//! the events are Anthropic's: `message_start` (with the prompt's usage), per content block a
//! `content_block_start`, its `content_block_delta`s (`text_delta` text, `input_json_delta`
//! pieces of a tool call's input) and a `content_block_stop`, then `message_delta` (the stop
//! reason and the cumulative output usage) and `message_stop`, which ends the stream. `ping`s
//! keep the connection alive; an `error` event carries the same error object as an error body.
//! Event kinds this code does not know are skipped, as the API asks of clients.

use std::collections::BTreeMap;

use serde_json::Value;

use super::wire::{WireUsage, finish_reason};
use crate::chat::{SignedThinking, ToolCall};
use crate::llm::http::failure::{ServerError, excerpt};
use crate::llm::http::sse::{EventError, EventStream, SseEvent};
use crate::llm::{ChatResponse, ModelError};

#[derive(Debug)]
enum BlockState {
    Text,
    Tool {
        id: String,
        name: String,
        start_input: Value,
        json: String,
    },
    /// A thinking block: its start block, with the text and signature deltas appended to its
    /// `thinking` and `signature` fields; a `redacted_thinking` block arrives whole.
    Thinking(serde_json::Map<String, Value>),
    Other,
}

/// The reply being assembled.
#[derive(Debug, Default)]
pub(crate) struct MessageStream {
    content: String,
    blocks: BTreeMap<u64, BlockState>,
    usage: WireUsage,
    stop_reason: Option<String>,
    started: bool,
    stopped: bool,
}

fn malformed(message: impl Into<String>, data: &str) -> EventError {
    EventError::Malformed { message: message.into(), excerpt: excerpt(data.as_bytes()) }
}

impl EventStream for MessageStream {
    const EVENT: &'static str = "stream event";

    /// Whether `message_stop` arrived.
    fn is_done(&self) -> bool {
        self.stopped
    }

    /// Applies one event; text goes to `on_token` as it arrives.
    fn on_event(&mut self, event: &SseEvent, on_token: &mut dyn FnMut(&str)) -> Result<(), EventError> {
        let data = event.data.trim();
        let value: Value = match serde_json::from_str(data) {
            Ok(value) => value,
            Err(_) if event.event.as_deref() == Some("error") => {
                return Err(EventError::Server(ServerError { message: data.to_owned(), ..Default::default() }));
            }
            Err(e) => return Err(malformed(e.to_string(), data)),
        };
        let kind = value.get("type").and_then(Value::as_str).or(event.event.as_deref()).unwrap_or_default();
        if kind == "error" || value.get("error").is_some() {
            let err = ServerError::from_json(&value)
                .unwrap_or_else(|| ServerError { message: data.to_owned(), ..Default::default() });
            return Err(EventError::Server(err));
        }
        let index = || value.get("index").and_then(Value::as_u64).ok_or_else(|| malformed("no block `index`", data));
        match kind {
            "message_start" => {
                self.started = true;
                if let Some(usage) = value.pointer("/message/usage") {
                    self.merge_usage(usage, data)?;
                }
            }
            "content_block_start" => {
                let block = value.get("content_block").ok_or_else(|| malformed("no `content_block`", data))?;
                let state = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        // A start block may already carry text (the API sends "" today).
                        if let Some(text) = block.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                            self.push_text(text, on_token);
                        }
                        BlockState::Text
                    }
                    Some("tool_use") => {
                        let field = |name: &str| block.get(name).and_then(Value::as_str).map(str::to_owned);
                        let (Some(id), Some(name)) = (field("id"), field("name")) else {
                            return Err(malformed("a tool_use block without `id` or `name`", data));
                        };
                        let start_input = block.get("input").cloned().unwrap_or(Value::Object(Default::default()));
                        BlockState::Tool { id, name, start_input, json: String::new() }
                    }
                    Some(kind) if super::wire::is_thinking(kind) => match block {
                        Value::Object(fields) => BlockState::Thinking(fields.clone()),
                        _ => return Err(malformed("a thinking block that is not an object", data)),
                    },
                    _ => BlockState::Other,
                };
                self.blocks.insert(index()?, state);
            }
            "content_block_delta" => {
                let index = index()?;
                let delta = value.get("delta").ok_or_else(|| malformed("no `delta`", data))?;
                let piece = |name: &str| delta.get(name).and_then(Value::as_str);
                match (self.blocks.get_mut(&index), delta.get("type").and_then(Value::as_str)) {
                    (Some(BlockState::Text), Some("text_delta")) => {
                        let text = piece("text").ok_or_else(|| malformed("a text_delta without `text`", data))?;
                        if !text.is_empty() {
                            let text = text.to_owned();
                            self.push_text(&text, on_token);
                        }
                    }
                    (Some(BlockState::Tool { json, .. }), Some("input_json_delta")) => {
                        json.push_str(
                            piece("partial_json")
                                .ok_or_else(|| malformed("an input_json_delta without `partial_json`", data))?,
                        );
                    }
                    (Some(BlockState::Thinking(fields)), Some(kind @ ("thinking_delta" | "signature_delta"))) => {
                        let field = if kind == "thinking_delta" { "thinking" } else { "signature" };
                        let text =
                            piece(field).ok_or_else(|| malformed(format!("a {kind} without `{field}`"), data))?;
                        let slot = fields.entry(field).or_insert_with(|| Value::String(String::new()));
                        match slot {
                            Value::String(s) => s.push_str(text),
                            _ => return Err(malformed(format!("a thinking block whose `{field}` is not text"), data)),
                        }
                    }
                    (None, _) => {
                        return Err(malformed(format!("a delta for block {index}, which never started"), data));
                    }
                    // Kinds added later: nothing of ctx's reply.
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = value.get("usage") {
                    self.merge_usage(usage, data)?;
                }
            }
            "message_stop" => self.stopped = true,
            // `ping`, `content_block_stop` and event kinds added later carry nothing to keep.
            _ => {}
        }
        Ok(())
    }

    /// The reply, once the body has ended after `received_bytes` bytes.
    fn finish(self, model: &str, received_bytes: usize) -> Result<ChatResponse, ModelError> {
        if !self.started || !self.stopped {
            return Err(ModelError::TruncatedBody {
                model: model.to_owned(),
                message: format!(
                    "the stream ended without {}",
                    if self.started { "`message_stop`" } else { "`message_start`" }
                ),
                received_bytes,
            });
        }
        let mut tool_calls = Vec::new();
        let mut thinking = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                BlockState::Tool { id, name, start_input, json } => {
                    // A call without input sends no delta; its input is the start block's `{}`.
                    let arguments = if json.is_empty() { start_input.to_string() } else { json };
                    tool_calls.push(ToolCall::new(id, name, arguments));
                }
                BlockState::Thinking(fields) => thinking.push(SignedThinking::new(Value::Object(fields))),
                BlockState::Text | BlockState::Other => {}
            }
        }
        Ok(ChatResponse {
            content: self.content,
            tool_calls,
            usage: self.usage.into_usage(),
            finish_reason: self.stop_reason.as_deref().map(finish_reason),
            thinking,
        })
    }
}

impl MessageStream {
    fn push_text(&mut self, text: &str, on_token: &mut dyn FnMut(&str)) {
        on_token(text);
        self.content.push_str(text);
    }

    fn merge_usage(&mut self, usage: &Value, data: &str) -> Result<(), EventError> {
        let usage: WireUsage =
            serde_json::from_value(usage.clone()).map_err(|e| malformed(format!("usage: {e}"), data))?;
        self.usage.merge(usage);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Usage;
    use crate::llm::http::sse::SseParser;

    /// A stream as the API documents it: text, a tool call whose input arrives in pieces, pings.
    pub(crate) const STREAM: &str = "event: message_start\n\
data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-x\",\"stop_reason\":null,\"usage\":{\"input_tokens\":472,\"output_tokens\":2}}}\n\n\
event: content_block_start\n\
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: ping\n\
data: {\"type\":\"ping\"}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me \"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"check ✓\"}}\n\n\
event: content_block_stop\n\
data: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: content_block_start\n\
data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"weather\",\"input\":{}}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \\\"Pa\"}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ris\\\"}\"}}\n\n\
event: content_block_stop\n\
data: {\"type\":\"content_block_stop\",\"index\":1}\n\n\
event: content_block_start\n\
data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"now\",\"input\":{}}}\n\n\
event: message_delta\n\
data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n\n\
event: message_stop\n\
data: {\"type\":\"message_stop\"}\n\n";

    #[test]
    fn thinking_blocks_are_assembled_signature_included_and_never_streamed_as_text() {
        let stream = "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10}}}\n\n\
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Weather \"}}\n\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"tool.\"}}\n\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQB==\"}}\n\n\
data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"opaque\"}}\n\n\
data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"weather\",\"input\":{}}}\n\n\
data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\n\
data: {\"type\":\"message_stop\"}\n\n";
        let (reply, pieces) = run(stream);
        let reply = reply.expect("complete");
        assert!(pieces.is_empty(), "thinking is not reply text: {pieces:?}");
        assert_eq!(
            reply.thinking,
            [
                SignedThinking::new(
                    serde_json::json!({"type": "thinking", "thinking": "Weather tool.", "signature": "EqQB=="})
                ),
                SignedThinking::new(serde_json::json!({"type": "redacted_thinking", "data": "opaque"})),
            ]
        );
        assert_eq!(reply.tool_calls.len(), 1);
    }

    fn run(text: &str) -> (Result<ChatResponse, ModelError>, Vec<String>) {
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        parser.push(text.as_bytes(), &mut events);
        let mut state = MessageStream::default();
        let mut pieces = Vec::new();
        for e in &events {
            state.on_event(e, &mut |t| pieces.push(t.to_owned())).expect("valid event");
        }
        (state.finish("m", text.len()), pieces)
    }

    #[test]
    fn a_documented_stream_becomes_one_reply() {
        let (reply, pieces) = run(STREAM);
        let reply = reply.expect("complete");
        assert_eq!(pieces, ["Let me ", "check ✓"]);
        assert_eq!(reply.content, "Let me check ✓");
        assert_eq!(
            reply.tool_calls,
            [ToolCall::new("toolu_1", "weather", "{\"city\": \"Paris\"}"), ToolCall::new("toolu_2", "now", "{}"),]
        );
        assert_eq!(reply.usage, Some(Usage::new(472, 89)));
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn a_stream_cut_before_message_stop_is_truncated() {
        let cut = &STREAM[..STREAM.find("event: message_delta").unwrap()];
        let (reply, _) = run(cut);
        assert!(matches!(reply, Err(ModelError::TruncatedBody { .. })), "{reply:?}");
    }

    #[test]
    fn error_events_and_junk() {
        let mut state = MessageStream::default();
        let overloaded = SseEvent {
            event: Some("error".into()),
            data: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(),
        };
        match state.on_event(&overloaded, &mut |_| {}) {
            Err(EventError::Server(e)) => {
                assert_eq!((e.message.as_str(), e.error_type.as_deref()), ("Overloaded", Some("overloaded_error")));
            }
            other => panic!("expected a server error, got {other:?}"),
        }
        let junk = SseEvent { event: Some("content_block_delta".into()), data: "{nope".into() };
        assert!(matches!(state.on_event(&junk, &mut |_| {}), Err(EventError::Malformed { .. })));
        let orphan = SseEvent {
            event: None,
            data: r#"{"type":"content_block_delta","index":7,"delta":{"type":"text_delta","text":"x"}}"#.into(),
        };
        assert!(matches!(state.on_event(&orphan, &mut |_| {}), Err(EventError::Malformed { .. })));
    }
}
