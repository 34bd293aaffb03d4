//! The summariser: asks a chat model to summarise what does not fit.
//!
//! It is the context engine's one asynchronous compaction stage, kept beside the synchronous
//! [`Compactor`](crate::compact::Compactor) trait rather than behind it (the trait's
//! documentation says why). A policy names it like any compactor; the engine looks the name up
//! among its summarisers first, then in its [`CompactorRegistry`](crate::compact::CompactorRegistry).
//!
//! Every request it sends is checked before it is sent: the exact count of its messages plus the
//! output limit fits the summarising model's window. A text too large for one request is split
//! at token boundaries into pieces that each fit, summarised piece by piece, and the joined
//! summaries are summarised again (a bounded number of rounds). The answer is cut to the budget
//! with the engine's counter, since the model's output is re-counted as text.

use std::sync::Arc;

use crate::chat::ChatMessage;
use crate::compact::{CompactError, CompactRequest};
use crate::llm::{ChatModel, ChatModelDyn, ChatRequest};
use crate::tokens::TokenCounter;

/// The default instructions.
pub const DEFAULT_SUMMARY_INSTRUCTIONS: &str = "Summarise the text the user sends for use as context by another \
     model. Keep names, identifiers, numbers and code verbatim; drop repetition. Answer with the summary only.";

/// Summarises with a [`ChatModel`] what does not fit: registered on the engine's builder with
/// [`ContextAssemblerBuilder::summarizer`](super::ContextAssemblerBuilder::summarizer).
#[derive(Clone)]
pub struct Summarizer {
    model: Arc<dyn ChatModelDyn>,
    context_window: usize,
    instructions: String,
    counter: Option<TokenCounter>,
    max_rounds: usize,
}

impl std::fmt::Debug for Summarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Summarizer")
            .field("model", &self.model.model_name())
            .field("context_window", &self.context_window)
            .field("max_rounds", &self.max_rounds)
            .finish()
    }
}

impl Summarizer {
    /// Summarises with `model`, whose context window is `context_window` tokens.
    pub fn new(model: Arc<dyn ChatModelDyn>, context_window: usize) -> Self {
        Summarizer {
            model,
            context_window,
            instructions: DEFAULT_SUMMARY_INSTRUCTIONS.to_owned(),
            counter: None,
            max_rounds: 3,
        }
    }

    /// Other system instructions.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = instructions.into();
        self
    }

    /// Counts the summarising model's requests with `counter` (default: the engine's counter,
    /// right when the summariser is the same model family).
    #[must_use]
    pub fn with_counter(mut self, counter: TokenCounter) -> Self {
        self.counter = Some(counter);
        self
    }

    /// How many times joined piece summaries may be summarised again (at least 1).
    #[must_use]
    pub fn with_max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    fn messages(&self, text: &str) -> Vec<ChatMessage> {
        vec![ChatMessage::system(self.instructions.clone()), ChatMessage::user(text)]
    }

    /// One request, budget-checked; the reply as text.
    async fn call(
        &self,
        counter: &TokenCounter,
        text: &str,
        max_tokens: usize,
        label: &str,
    ) -> Result<String, CompactError> {
        let messages = self.messages(text);
        let prompt_tokens = counter.count_messages(&messages)?;
        if prompt_tokens.saturating_add(max_tokens) > self.context_window {
            return Err(CompactError::WindowTooSmall {
                window: self.context_window,
                prompt_tokens,
                output_tokens: max_tokens,
            });
        }
        let request = ChatRequest {
            messages,
            tools: Vec::new(),
            max_tokens,
            params: crate::llm::ModelParams::default().temperature(Some(0.0)),
            predicted_prompt_tokens: Some(prompt_tokens),
            step_id: Some(format!("context_engine.compact.{label}")),
        };
        Ok(self.model.chat(&request).await?.content)
    }

    /// Splits `text` into pieces whose request, with `max_tokens` of output, fits the window.
    fn split(&self, counter: &TokenCounter, text: &str, max_tokens: usize) -> Result<Vec<String>, CompactError> {
        let empty = counter.count_messages(&self.messages(""))?;
        let Some(room) = self.context_window.checked_sub(empty.saturating_add(max_tokens)).filter(|r| *r > 0) else {
            return Err(CompactError::WindowTooSmall {
                window: self.context_window,
                prompt_tokens: empty,
                output_tokens: max_tokens,
            });
        };
        let mut pieces = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut limit = room;
            let piece = loop {
                let piece = counter.truncate_to(rest, limit)?;
                let total = counter.count_messages(&self.messages(&piece))?.saturating_add(max_tokens);
                if total <= self.context_window || piece.is_empty() {
                    break piece;
                }
                limit = limit.saturating_sub(total - self.context_window);
            };
            let Some(after) = rest.strip_prefix(piece.as_str()).filter(|_| !piece.is_empty()) else {
                return Err(CompactError::Other(format!(
                    "cannot split the text into pieces of at most {room} tokens at token boundaries"
                )));
            };
            pieces.push(piece);
            rest = after;
        }
        Ok(pieces)
    }
}

impl Summarizer {
    /// `request.text` summarised to at most `request.max_tokens` tokens of `request.counter`
    /// (without a budget the text is returned as it is: a summary is never lossless).
    pub async fn summarize(&self, request: &CompactRequest<'_>) -> Result<String, CompactError> {
        let out_counter = request.counter;
        let counter = self.counter.as_ref().unwrap_or(out_counter);
        let Some(target) = request.max_tokens else { return Ok(request.text.to_owned()) };
        if target == 0 {
            return Ok(String::new());
        }
        if out_counter.fits(request.text, target)? {
            return Ok(request.text.to_owned());
        }
        let mut text = request.text.to_owned();
        for _ in 0..self.max_rounds {
            let pieces = self.split(counter, &text, target)?;
            let summary = if let [only] = pieces.as_slice() {
                self.call(counter, only, target, request.id).await?
            } else {
                // Each piece gets an equal share of the budget so the joined summaries can fit.
                let share = (target / pieces.len()).max(1);
                let mut parts = Vec::with_capacity(pieces.len());
                for piece in &pieces {
                    parts.push(self.call(counter, piece, share, request.id).await?);
                }
                parts.join("\n\n")
            };
            if out_counter.fits(&summary, target)? {
                return Ok(summary);
            }
            text = summary;
        }
        Ok(out_counter.truncate_to(&text, target)?)
    }
}
