//! Streaming as a property of a run: a sink given to a run receives the text of every model
//! reply as the server generates it, each piece with the step it belongs to.
//!
//! Nothing else changes: the request is negotiated and guarded exactly as without a sink, the
//! model is asked once per request (`ChatModel::chat_stream` instead of `chat`), and the step's
//! report and the final state are the same. A model that cannot stream hands over its whole reply
//! at once (the trait's default).
//!
//! A run of a `pipeline!` pipeline hands its sink a [`Token`] whose `step` is the pipeline's own
//! step enum, so a chat service shows the answer and not the internal summary with a `match`
//! the compiler checks (a [`StepSink`]); a pipeline loaded at run time gives the step id as a
//! string (a [`TokenSink`], what [`StepEnv::tokens`](super::StepEnv::tokens) holds). Any closure
//! over a `Token` is a sink. With tokio, move a channel's sender into the closure: the channel
//! closes when the run ends, so the receiving loop ends too.
//!
//! ```
//! use ctx::pipeline::{Token, TokenSink};
//!
//! let (tx, rx) = std::sync::mpsc::channel::<(String, String)>();
//! let sink = move |t: Token<'_>| {
//!     let _ = tx.send((t.step.to_owned(), t.text.to_owned()));
//! };
//! sink.token(Token::new("answer", "Hel"));
//! sink.token(Token::new("answer", "lo"));
//! drop(sink);
//! let text: String = rx.iter().map(|(_, piece)| piece).collect();
//! assert_eq!(text, "Hello");
//! ```

/// A piece of a model reply, as it arrives: the step whose request is streaming (`call_model`
/// or `agent`) and the new text. `S` is the pipeline's step enum for a `pipeline!` pipeline
/// (`Token<'_, QaStep>`), the step id otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Token<'a, S = &'a str> {
    /// The step whose request is streaming.
    pub step: S,
    /// The new text; the pieces of one request concatenate to its reply.
    pub text: &'a str,
}

impl<'a, S> Token<'a, S> {
    /// The piece `text` of step `step`'s reply: what a run hands a sink, and what a test of a
    /// sink hands it.
    pub fn new(step: S, text: &'a str) -> Self {
        Token { step, text }
    }
}

/// Receives the pieces of the model replies of a run, each with its step id. Called from the
/// run's task, in order, and never concurrently for one run; keep it quick (send to a channel,
/// write to a buffer).
pub trait TokenSink: Send + Sync {
    /// One piece of the reply of `token.step`.
    fn token(&self, token: Token<'_>);
}

impl<F: Fn(Token<'_>) + Send + Sync> TokenSink for F {
    fn token(&self, token: Token<'_>) {
        self(token)
    }
}

/// [`TokenSink`] for a `pipeline!` pipeline: each piece comes with the step as the pipeline's
/// step enum, so a sink can keep the answer and drop a summary by matching on it.
///
/// ```
/// use ctx::pipeline::{StepSink, Token};
///
/// #[derive(Debug, Clone, Copy, PartialEq)]
/// enum Step { Summarize, Answer }
///
/// let shown = std::sync::Mutex::new(String::new());
/// let sink = |t: Token<'_, Step>| {
///     if t.step == Step::Answer {
///         shown.lock().unwrap().push_str(t.text);
///     }
/// };
/// sink.token(Token::new(Step::Summarize, "internal notes"));
/// sink.token(Token::new(Step::Answer, "The answer."));
/// assert_eq!(*shown.lock().unwrap(), "The answer.");
/// ```
pub trait StepSink<S>: Send + Sync {
    /// One piece of the reply of `token.step`.
    fn token(&self, token: Token<'_, S>);
}

impl<S, F: Fn(Token<'_, S>) + Send + Sync> StepSink<S> for F {
    fn token(&self, token: Token<'_, S>) {
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
        let sink = |t: Token<'_>| seen.lock().unwrap().push(format!("{}:{}", t.step, t.text));
        let dyn_sink: &dyn TokenSink = &sink;
        dyn_sink.token(Token { step: "a", text: "x" });
        dyn_sink.token(Token { step: "b", text: "y" });
        assert_eq!(*seen.lock().unwrap(), ["a:x", "b:y"]);
    }
}
