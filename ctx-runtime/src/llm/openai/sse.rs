//! A chat-completions stream accumulated into one reply. The event framing is
//! [`crate::llm::http::sse`]'s; a stream ends with `data: [DONE]`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::wire::WireChunk;
use crate::chat::ToolCall;
use crate::llm::http::failure::{ServerError, excerpt};
use crate::llm::http::sse::{EventError, EventStream, SseEvent};
use crate::llm::{ChatResponse, ModelError, Usage};

/// The reply being assembled from chunks.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    content: String,
    calls: BTreeMap<u32, ToolCall>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    done: bool,
    saw_choice: bool,
}

impl EventStream for StreamState {
    const EVENT: &'static str = "stream chunk";

    /// Whether `[DONE]` arrived.
    fn is_done(&self) -> bool {
        self.done
    }

    /// Applies one chunk; text pieces of the first choice go to `on_token` as they arrive.
    fn on_event(&mut self, event: &SseEvent, on_token: &mut dyn FnMut(&str)) -> Result<(), EventError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let named_error = event.event.as_deref() == Some("error");
        let value: Value = match serde_json::from_str(data) {
            Ok(value) => value,
            Err(_) if named_error => {
                return Err(EventError::Server(ServerError { message: data.to_owned(), ..Default::default() }));
            }
            Err(e) => return Err(EventError::Malformed { message: e.to_string(), excerpt: excerpt(data.as_bytes()) }),
        };
        if let Some(err) = ServerError::from_json(&value) {
            return Err(EventError::Server(err));
        }
        if named_error {
            return Err(EventError::Server(ServerError { message: data.to_owned(), ..Default::default() }));
        }
        let chunk: WireChunk = serde_json::from_value(value)
            .map_err(|e| EventError::Malformed { message: e.to_string(), excerpt: excerpt(data.as_bytes()) })?;
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.into());
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            self.saw_choice = true;
            if let Some(delta) = choice.delta {
                if let Some(piece) = delta.content.filter(|p| !p.is_empty()) {
                    on_token(&piece);
                    self.content.push_str(&piece);
                }
                for call in delta.tool_calls.unwrap_or_default() {
                    let entry = self
                        .calls
                        .entry(call.index)
                        .or_insert_with(|| ToolCall::new(String::new(), String::new(), String::new()));
                    if let Some(id) = call.id {
                        entry.id = id;
                    }
                    if let Some(function) = call.function {
                        if let Some(name) = function.name {
                            entry.name.push_str(&name);
                        }
                        if let Some(arguments) = function.arguments {
                            entry.arguments.push_str(&arguments);
                        }
                    }
                }
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
        Ok(())
    }

    /// The reply, once the body has ended after `received_bytes` bytes.
    fn finish(self, model: &str, received_bytes: usize) -> Result<ChatResponse, ModelError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(ModelError::TruncatedBody {
                model: model.to_owned(),
                message: "the stream ended without `data: [DONE]` or a finish_reason".into(),
                received_bytes,
            });
        }
        if !self.saw_choice {
            return Err(ModelError::EmptyChoices { model: model.to_owned() });
        }
        Ok(ChatResponse {
            content: self.content,
            tool_calls: self.calls.into_values().collect(),
            usage: self.usage,
            finish_reason: self.finish_reason,
            thinking: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::http::sse::parse_all;

    const STREAM: &str = ": keep-alive\r\n\
        data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\r\n\r\n\
        data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo ✓\"}}]}\n\n\
        data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"search\",\"arguments\":\"{\\\"q\\\"\"}}]}}]}\n\n\
        data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]},\"finish_reason\":\"stop\"}]}\n\n\
        data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"prompt_tokens_details\":{\"cached_tokens\":8}}}\n\n\
        data: [DONE]\n\n";

    fn run(events: &[SseEvent]) -> (Result<ChatResponse, ModelError>, Vec<String>) {
        let mut state = StreamState::default();
        let mut tokens = Vec::new();
        for e in events {
            state.on_event(e, &mut |t| tokens.push(t.to_owned())).expect("valid chunk");
        }
        (state.finish("m", 0), tokens)
    }

    #[test]
    fn a_whole_stream_becomes_one_reply() {
        let events = parse_all(&[STREAM.as_bytes()]);
        assert_eq!(events.len(), 6);
        let (reply, tokens) = run(&events);
        let reply = reply.expect("complete");
        assert_eq!(tokens, ["Hel", "lo ✓"]);
        assert_eq!(reply.content, "Hello ✓");
        assert_eq!(reply.usage, Some(Usage::new(12, 3).with_cache(Some(8), None)));
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        assert_eq!(reply.tool_calls, [ToolCall::new("c1", "search", "{\"q\":1}")]);
    }

    #[test]
    fn errors_inside_a_stream() {
        let mut state = StreamState::default();
        let event = SseEvent {
            event: None,
            data: r#"{"error":{"message":"maximum context length is 4096 tokens","code":400}}"#.into(),
        };
        match state.on_event(&event, &mut |_| {}) {
            Err(EventError::Server(e)) => assert!(e.is_context_length()),
            other => panic!("expected a server error, got {other:?}"),
        }
        let junk = SseEvent { event: None, data: "{not json".into() };
        assert!(matches!(state.on_event(&junk, &mut |_| {}), Err(EventError::Malformed { .. })));
        let named = SseEvent { event: Some("error".into()), data: "upstream overloaded".into() };
        match state.on_event(&named, &mut |_| {}) {
            Err(EventError::Server(e)) => assert_eq!(e.message, "upstream overloaded"),
            other => panic!("expected a server error, got {other:?}"),
        }
    }

    #[test]
    fn unfinished_and_empty_streams() {
        let events = parse_all(&[b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"]);
        let (reply, _) = run(&events);
        assert!(matches!(reply, Err(ModelError::TruncatedBody { .. })), "{reply:?}");
        let (reply, _) = run(&parse_all(&[b"data: [DONE]\n\n"]));
        assert!(matches!(reply, Err(ModelError::EmptyChoices { .. })), "{reply:?}");
    }
}
