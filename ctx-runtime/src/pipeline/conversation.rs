//! A conversation: one pipeline asked question after question, carrying the history and the
//! variables from one run to the next, so a chat service is three lines:
//!
//! ```ignore
//! let mut chat = SupportBot::new()?.conversation();
//! let answer = chat.ask("How do I rotate the API keys?", &env).await?;
//! println!("{}", answer.text);
//! ```
//!
//! Each question starts from a fresh state (no context, hits, texts or reply of the previous
//! run; loop counts at zero) that keeps `history_dialog` and `variables`. The history grows only
//! through steps with `use_history: true`, which send it trimmed to `max_history_tokens` and keep
//! what they sent plus the new question and answer, so it stays within the budget however long
//! the conversation. A question that fails leaves the conversation as it was.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::chat::ChatMessage;
use crate::error::CtxError;
use crate::state::PipelineState;

use super::driver::StepReport;
use super::machine::{Backends, Pipeline, StepMachine};
use super::stream::StepSink;

/// The answer to one question of a [`Conversation`].
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The last model reply of the run (`last_model_response`); empty when no step called the
    /// model.
    pub text: String,
    /// Every step's report, in order.
    pub reports: Vec<StepReport>,
}

/// A pipeline asked one question after another, carrying the history and the variables from one
/// run to the next. Each question starts from a fresh state that keeps only `history_dialog` and
/// `variables`; the history stays within `max_history_tokens` (steps with `use_history` trim it
/// before sending); a question that fails leaves the conversation as it was.
#[derive(Debug, Clone)]
pub struct Conversation<S: StepMachine> {
    pipeline: Pipeline<S>,
    state: PipelineState,
    turns: usize,
}

impl<S: StepMachine> Pipeline<S> {
    /// A new conversation with this pipeline, with no history.
    pub fn conversation(self) -> Conversation<S> {
        Conversation::new(self)
    }
}

impl<S: StepMachine> Conversation<S> {
    /// A conversation with no history and no variables.
    pub fn new(pipeline: Pipeline<S>) -> Self {
        Conversation { pipeline, state: PipelineState::default(), turns: 0 }
    }

    /// Continues a conversation saved with [`Self::state`] (it is `serde`): its history and
    /// variables carry on.
    pub fn resume(pipeline: Pipeline<S>, state: PipelineState) -> Self {
        Conversation { pipeline, state, turns: 0 }
    }

    /// Asks `question`, runs the pipeline to its end, and returns the reply. On error the
    /// conversation is unchanged and the question can be asked again.
    pub async fn ask(&mut self, question: impl Into<String>, backends: &impl Backends<S>) -> Result<Answer, CtxError> {
        let (state, reports) = self.pipeline.run(self.next_state(question.into()), backends).await?;
        Ok(self.keep(state, reports))
    }

    /// [`Self::ask`], streaming the model replies to `sink` as they are generated. Each piece
    /// comes with its step as the pipeline's step enum: a chat service shows the answer's and
    /// drops an internal summary's with `if t.step == SupportStep::Answer`.
    pub async fn ask_streaming(
        &mut self,
        question: impl Into<String>,
        backends: &impl Backends<S>,
        sink: impl StepSink<S>,
    ) -> Result<Answer, CtxError> {
        let (state, reports) = self.pipeline.run_streaming(self.next_state(question.into()), backends, sink).await?;
        Ok(self.keep(state, reports))
    }

    /// The history so far, oldest first (as the last run left it: within `max_history_tokens`
    /// plus the last question and answer).
    pub fn history(&self) -> &[ChatMessage] {
        &self.state.history_dialog
    }

    /// The variables carried from question to question.
    pub fn variables(&self) -> &BTreeMap<String, Value> {
        &self.state.variables
    }

    /// Sets a variable for the next questions (a user's name, a tenant, a language…).
    pub fn set_variable(&mut self, name: impl Into<String>, value: impl Into<Value>) {
        self.state.variables.insert(name.into(), value.into());
    }

    /// How many questions were answered since the conversation was created or resumed.
    pub fn turns(&self) -> usize {
        self.turns
    }

    /// The state the last run ended with, to save the conversation (see [`Self::resume`]).
    pub fn state(&self) -> &PipelineState {
        &self.state
    }

    /// The pipeline.
    pub fn pipeline(&self) -> &Pipeline<S> {
        &self.pipeline
    }

    /// Forgets the history and the variables.
    pub fn clear(&mut self) {
        self.state = PipelineState::default();
    }

    /// The state a new question starts from: only the history and the variables carry over.
    fn next_state(&self, question: String) -> PipelineState {
        follow_up_state(Some(&self.state), question)
    }

    fn keep(&mut self, state: PipelineState, reports: Vec<StepReport>) -> Answer {
        let text = state.last_model_response.clone().unwrap_or_default();
        self.state = state;
        self.turns += 1;
        Answer { text, reports }
    }
}

/// The state the next question of a conversation starts from: only the history and the variables
/// of what the conversation kept (if anything) carry over. Durable runs start from it too.
pub(crate) fn follow_up_state(kept: Option<&PipelineState>, question: String) -> PipelineState {
    let Some(kept) = kept else {
        return PipelineState::new(question);
    };
    PipelineState {
        history_dialog: kept.history_dialog.clone(),
        variables: kept.variables.clone(),
        ..PipelineState::new(question)
    }
}
