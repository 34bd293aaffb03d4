//! A Responses API event stream read into one reply. The event framing is
//! [`crate::llm::http::sse`]'s. Text deltas (`response.output_text.delta`) go to the caller as
//! they arrive; the reply itself is the response object of the last event
//! (`response.completed` or `response.incomplete`), which carries every output item (reasoning
//! items and tool calls included) and the usage, so nothing is pieced together from deltas.

use serde_json::Value;

use super::wire::read_response;
use crate::llm::http::failure::{ServerError, excerpt};
use crate::llm::http::sse::{EventError, EventStream, SseEvent};
use crate::llm::{ChatResponse, ModelError};

/// The reply being received.
#[derive(Debug)]
pub(crate) struct StreamState {
    /// Whether the reply keeps its reasoning items (`ResponsesOptions::carry_reasoning`).
    carry_reasoning: bool,
    /// The reply, once the last event arrived.
    reply: Option<ChatResponse>,
}

impl StreamState {
    /// A stream whose reply keeps its reasoning items when `carry_reasoning`.
    pub(crate) fn new(carry_reasoning: bool) -> Self {
        StreamState { carry_reasoning, reply: None }
    }
}

impl EventStream for StreamState {
    const EVENT: &'static str = "stream event";

    /// Whether the last event arrived.
    fn is_done(&self) -> bool {
        self.reply.is_some()
    }

    /// Applies one event; text deltas go to `on_token`.
    fn on_event(&mut self, event: &SseEvent, on_token: &mut dyn FnMut(&str)) -> Result<(), EventError> {
        let data = event.data.trim();
        let malformed = |message: String| EventError::Malformed { message, excerpt: excerpt(data.as_bytes()) };
        let value: Value = match serde_json::from_str(data) {
            Ok(value) => value,
            Err(_) if event.event.as_deref() == Some("error") => {
                return Err(EventError::Server(ServerError { message: data.to_owned(), ..Default::default() }));
            }
            Err(e) => return Err(malformed(e.to_string())),
        };
        let kind = value.get("type").and_then(Value::as_str).or(event.event.as_deref()).unwrap_or_default();
        match kind {
            "response.output_text.delta" => {
                if let Some(piece) = value.get("delta").and_then(Value::as_str).filter(|p| !p.is_empty()) {
                    on_token(piece);
                }
            }
            "response.completed" | "response.incomplete" => {
                let response =
                    value.get("response").ok_or_else(|| malformed(format!("`{kind}` without a response")))?;
                self.reply = Some(read_response(response, self.carry_reasoning).map_err(malformed)?);
            }
            "response.failed" => {
                let error = value.pointer("/response/error").cloned().unwrap_or(Value::Null);
                return Err(EventError::Server(
                    ServerError::from_json(&serde_json::json!({ "error": error })).unwrap_or_default(),
                ));
            }
            // `{"type": "error", "code": …, "message": …}`, or an error object of another shape.
            "error" => {
                return Err(EventError::Server(ServerError {
                    message: value.get("message").and_then(Value::as_str).unwrap_or(data).to_owned(),
                    error_type: None,
                    code: value.get("code").and_then(Value::as_str).map(str::to_owned),
                }));
            }
            _ => {
                if let Some(err) = ServerError::from_json(&value) {
                    return Err(EventError::Server(err));
                }
            }
        }
        Ok(())
    }

    /// The reply; a stream that ended before its last event is truncated.
    fn finish(self, model: &str, received_bytes: usize) -> Result<ChatResponse, ModelError> {
        self.reply.ok_or_else(|| ModelError::TruncatedBody {
            model: model.to_owned(),
            message: "the stream ended before `response.completed`".into(),
            received_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::llm::Usage;

    fn event(value: Value) -> SseEvent {
        SseEvent { event: value.get("type").and_then(Value::as_str).map(str::to_owned), data: value.to_string() }
    }

    #[test]
    fn deltas_stream_and_the_last_event_is_the_reply() {
        let mut state = StreamState::new(true);
        let mut tokens = Vec::new();
        let events = [
            json!({"type": "response.created", "response": {"status": "in_progress", "output": []}}),
            json!({"type": "response.output_text.delta", "delta": "Hel"}),
            json!({"type": "response.output_text.delta", "delta": "lo"}),
            json!({"type": "response.completed", "response": {"status": "completed", "output": [
                {"type": "message", "content": [{"type": "output_text", "text": "Hello"}]}],
                "usage": {"input_tokens": 9, "output_tokens": 2}}}),
        ];
        for e in events {
            assert!(!state.is_done());
            state.on_event(&event(e), &mut |t| tokens.push(t.to_owned())).expect("valid event");
        }
        assert!(state.is_done());
        assert_eq!(tokens, ["Hel", "lo"]);
        let reply = state.finish("m", 0).expect("complete");
        assert_eq!((reply.content.as_str(), reply.usage), ("Hello", Some(Usage::new(9, 2))));
    }

    #[test]
    fn errors_and_unfinished_streams() {
        let failed = json!({"type": "response.failed", "response": {"status": "failed",
            "error": {"code": "server_error", "message": "The model failed."}}});
        match StreamState::new(true).on_event(&event(failed), &mut |_| {}) {
            Err(EventError::Server(e)) => assert_eq!(e.message, "The model failed."),
            other => panic!("expected a server error, got {other:?}"),
        }
        let error = json!({"type": "error", "code": "context_length_exceeded", "message": "Your input exceeds the context window."});
        match StreamState::new(true).on_event(&event(error), &mut |_| {}) {
            Err(EventError::Server(e)) => assert!(e.is_context_length()),
            other => panic!("expected a server error, got {other:?}"),
        }
        let junk = SseEvent { event: None, data: "{not json".into() };
        assert!(matches!(StreamState::new(true).on_event(&junk, &mut |_| {}), Err(EventError::Malformed { .. })));
        let mut state = StreamState::new(true);
        state.on_event(&event(json!({"type": "response.output_text.delta", "delta": "Hi"})), &mut |_| {}).unwrap();
        assert!(matches!(state.finish("m", 10), Err(ModelError::TruncatedBody { received_bytes: 10, .. })));
    }
}
