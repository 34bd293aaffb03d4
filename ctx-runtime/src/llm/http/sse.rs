//! Server-sent events: the framing every streaming client reads (OpenAI's chat-completions
//! chunks and Responses events, Anthropic's Messages events), and [`EventStream`], what a client
//! says about its own events: how each one changes the reply being received.
//!
//! Framing (per the HTML living standard's event-stream format): lines end with `\n` (an optional
//! `\r` before it is dropped); `data:` lines append to the event's data, `event:` names it, lines
//! starting with `:` are comments (keep-alives), an empty line ends the event. An event still open
//! when the connection closes is discarded, as the standard says.

use super::failure::ServerError;
use crate::llm::{ChatResponse, ModelError};

/// A reply being received event by event: what a client's stream is, to the attempt that reads
/// it (`super::attempt::stream`).
pub(crate) trait EventStream: Send {
    /// What one event is called in the error of a malformed one (`stream chunk`, `stream event`).
    const EVENT: &'static str;

    /// Applies one event; pieces of text go to `on_token` as they arrive.
    fn on_event(&mut self, event: &SseEvent, on_token: &mut dyn FnMut(&str)) -> Result<(), EventError>;

    /// Whether the event that ends the stream arrived (nothing after it is read).
    fn is_done(&self) -> bool;

    /// The reply, once the body has ended after `received_bytes` bytes (a stream that ended
    /// before its last event is the error this returns).
    fn finish(self, model: &str, received_bytes: usize) -> Result<ChatResponse, ModelError>;
}

/// Why an event could not be used.
#[derive(Debug)]
pub(crate) enum EventError {
    /// The stream carried an error object.
    Server(ServerError),
    /// The event is not one of the API's.
    Malformed {
        /// The parser's message.
        message: String,
        /// The event's start.
        excerpt: String,
    },
}

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` name, when given.
    pub(crate) event: Option<String>,
    /// The `data:` lines, `\n`-joined.
    pub(crate) data: String,
}

/// Incremental parser: feed it bytes as they arrive, collect complete events.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    partial_line: Vec<u8>,
    data: Option<String>,
    event: Option<String>,
}

impl SseParser {
    /// Parses `bytes`, appending every event they complete to `out`.
    pub(crate) fn push(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) {
        while let Some(pos) = bytes.iter().position(|&b| b == b'\n') {
            let (head, rest) = bytes.split_at(pos);
            bytes = rest.get(1..).unwrap_or_default();
            if self.partial_line.is_empty() {
                self.line(head, out);
            } else {
                let mut line = std::mem::take(&mut self.partial_line);
                line.extend_from_slice(head);
                self.line(&line, out);
            }
        }
        self.partial_line.extend_from_slice(bytes);
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent { event: self.event.take(), data });
            }
            self.event = None;
            return;
        }
        if line.first() == Some(&b':') {
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.event = Some(value.to_owned()),
            _ => {}
        }
    }
}

/// The events of a whole stream given in `chunks`.
#[cfg(test)]
pub(crate) fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut parser = SseParser::default();
    let mut out = Vec::new();
    for chunk in chunks {
        parser.push(chunk, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Comments, `\r\n` and `\n` line ends, named events, multi-byte characters.
    const STREAM: &str = ": keep-alive\r\n\
        data: {\"delta\":\"Hel\"}\r\n\r\n\
        event: content_block_delta\n\
        data: {\"delta\":\"lo ✓\"}\n\n\
        data: first line\ndata: second line ✓✓\n\n\
        data: [DONE]\n\n";

    #[test]
    fn a_stream_becomes_its_events() {
        let events = parse_all(&[STREAM.as_bytes()]);
        let data: Vec<&str> = events.iter().map(|e| e.data.as_str()).collect();
        assert_eq!(data, ["{\"delta\":\"Hel\"}", "{\"delta\":\"lo ✓\"}", "first line\nsecond line ✓✓", "[DONE]"]);
        assert_eq!(events[1].event.as_deref(), Some("content_block_delta"));
        assert_eq!(events[2].event, None);
    }

    proptest! {
        /// However the bytes are split into chunks (even inside a UTF-8 character), the same
        /// events come out.
        #[test]
        fn chunking_does_not_matter(cuts in proptest::collection::vec(0..STREAM.len(), 0..12)) {
            let bytes = STREAM.as_bytes();
            let mut cuts = cuts;
            cuts.sort_unstable();
            let mut pieces = Vec::new();
            let mut start = 0;
            for cut in cuts {
                pieces.push(&bytes[start..cut]);
                start = cut;
            }
            pieces.push(&bytes[start..]);
            prop_assert_eq!(parse_all(&pieces), parse_all(&[bytes]));
        }
    }

    #[test]
    fn multi_line_data_event_names_and_unterminated_events() {
        let events = parse_all(&[b"event: error\ndata: a\ndata:b\nid: 3\n\ndata: open"]);
        assert_eq!(events, [SseEvent { event: Some("error".into()), data: "a\nb".into() }]);
    }
}
