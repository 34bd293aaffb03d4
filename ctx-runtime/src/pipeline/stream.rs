//! Streaming as a property of a run: a [`TokenSink`] given to a run receives the text of every
//! model reply as the server generates it, step by step.
//!
//! Nothing else changes: the request is negotiated and guarded exactly as without a sink, the
//! model is asked once per request (`ChatModel::chat_stream` instead of `chat`), and the step's
//! report and the final state are the same. A model that cannot stream hands over its whole reply
//! at once (the trait's default).
//!
//! Any `Fn(Token<'_>) + Send + Sync` is a sink. With tokio, move a channel's sender into the
//! closure: the channel closes when the run ends, so the receiving loop ends too.
//!
//! ```
//! use ctx::pipeline::{Token, TokenSink};
//!
//! let (tx, rx) = std::sync::mpsc::channel::<(String, String)>();
//! let sink = move |t: Token<'_>| {
//!     let _ = tx.send((t.step_id.to_owned(), t.text.to_owned()));
//! };
//! sink.token(Token { step_id: "answer", text: "Hel" });
//! sink.token(Token { step_id: "answer", text: "lo" });
//! drop(sink);
//! let text: String = rx.iter().map(|(_, piece)| piece).collect();
//! assert_eq!(text, "Hello");
//! ```

/// A piece of a model reply, as it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    /// The step whose request is streaming (`call_model` or `agent`).
    pub step_id: &'a str,
    /// The new text; the pieces of one request concatenate to its reply.
    pub text: &'a str,
}

/// Receives the pieces of the model replies of a run. Called from the run's task, in order, and
/// never concurrently for one run; keep it quick (send to a channel, write to a buffer).
pub trait TokenSink: Send + Sync {
    /// One piece of the reply of `token.step_id`.
    fn token(&self, token: Token<'_>);
}

impl<F: Fn(Token<'_>) + Send + Sync> TokenSink for F {
    fn token(&self, token: Token<'_>) {
        self(token)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn closures_are_sinks_and_see_each_piece_in_order() {
        let seen = Mutex::new(Vec::new());
        let sink = |t: Token<'_>| seen.lock().unwrap().push(format!("{}:{}", t.step_id, t.text));
        let dyn_sink: &dyn TokenSink = &sink;
        dyn_sink.token(Token { step_id: "a", text: "x" });
        dyn_sink.token(Token { step_id: "b", text: "y" });
        assert_eq!(*seen.lock().unwrap(), ["a:x", "b:y"]);
    }
}
