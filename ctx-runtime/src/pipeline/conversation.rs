//! A conversation: one pipeline asked question after question, carrying the history, the
//! variables and, when the pipeline declares it, the context from one run to the next, so a chat
//! service is three lines:
//!
//! ```
//! # use ctx::llm::offline::OfflineModel;
//! # ctx::pipeline! {
//! #     pub pipeline SupportBot {
//! #         model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
//! #         settings { max_context_tokens: 9_000, max_history_tokens: 2_000, budget_safety_margin_tokens: 128 }
//! #         prompts { answer: "Answer the question." }
//! #         steps { answer: call_model { prompt_key: answer, max_output_tokens: 1_000, use_history: true, next: end } }
//! #     }
//! # }
//! # #[tokio::main]
//! # async fn main() -> Result<(), ctx::CtxError> {
//! # let model = OfflineModel::default();
//! # let env = SupportBotEnv { model: &model };
//! let mut chat = SupportBot::new()?.conversation();
//! let answer = chat.ask("How do I rotate the API keys?", &env).await?;
//! println!("{}", answer.text);
//! # Ok(())
//! # }
//! ```
//!
//! Each question starts from a fresh state (no hits, texts or reply of the previous run; loop
//! counts at zero) that keeps `history_dialog` and `variables`, and `context_blocks` when the
//! pipeline sets `carry_context: true` in its settings ([`LoadedPipeline::follow_up`] is the
//! rule). Carrying the context is what lets a `manage_context_budget` step meet the earlier
//! context and take `on_over` to summarise it: without it every question starts with an empty
//! context, a batch that does not fit is `PIPELINE_BUDGET_MISCONFIG`, and the loader warns about
//! such an `on_over` (`BUDGET_ON_OVER_NEVER_TAKEN`). The context stays within
//! `max_context_tokens`, because only a `manage_context_budget` step appends to it.
//!
//! The history grows only through steps with `use_history: true`, which send it trimmed to
//! `max_history_tokens` and keep what they sent plus the new question and answer, so it stays
//! within the budget however long the conversation. A question that fails leaves the
//! conversation as it was.
//!
//! [`Conversation`] is the typed form, for a `pipeline!` pipeline; [`LoadedConversation`] the
//! same for a pipeline loaded at run time (a YAML file), with a [`StepEnv`].

use std::collections::BTreeMap;

use serde_json::Value;
use tracing::Instrument as _;

use crate::chat::ChatMessage;
use crate::error::CtxError;
use crate::state::PipelineState;

use super::driver::StepReport;
use super::env::StepEnv;
use super::loaded::LoadedPipeline;
use super::machine::{Backends, Pipeline, StepMachine};
use super::run::Snapshot;
use super::stream::StepSink;

/// The answer to one question of a [`Conversation`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Answer {
    /// The last model reply of the run (`last_model_response`); empty when no step called the
    /// model.
    pub text: String,
    /// Every step's report, in order.
    pub reports: Vec<StepReport>,
}

impl LoadedPipeline {
    /// Whether a conversation carries `context_blocks` from one question to the next
    /// (`settings { carry_context: true }`).
    pub fn carries_context(&self) -> bool {
        self.definition().settings.carry_context == Some(true)
    }

    /// The state the next question of a conversation starts from, given the state the last
    /// question ended with (`None` for the first): the question, the history, the variables and
    /// the conversation's spend, and the context when the pipeline [carries it](Self::carries_context); everything else
    /// fresh (hits, texts, the reply, the inbox; loop counts start at zero when the run starts).
    /// [`Conversation`], [`LoadedConversation`] and durable runs all start from it.
    ///
    /// ```
    /// # fn demo(pipeline: &ctx::pipeline::LoadedPipeline, last: &ctx::PipelineState) {
    /// let next = pipeline.follow_up(Some(last), "And the old keys?");
    /// assert_eq!(next.history_dialog, last.history_dialog);
    /// assert_eq!(next.user_question, "And the old keys?");
    /// # }
    /// ```
    pub fn follow_up(&self, kept: Option<&PipelineState>, question: impl Into<String>) -> PipelineState {
        let fresh = PipelineState::new(question.into());
        let Some(kept) = kept else {
            return fresh;
        };
        fresh
            .history_dialog(kept.history_dialog.clone())
            .variables(kept.variables.clone())
            .context_blocks(if self.carries_context() { kept.context_blocks.clone() } else { Vec::new() })
            // What the conversation spent, for its cap; the run's own spend starts at 0.
            .spend(kept.spend.clone().for_new_run())
    }
}

/// What a conversation keeps between questions, whichever form it has.
#[derive(Debug, Clone, Default)]
struct Kept {
    /// The state the last question ended with (with the variables set since); before the first
    /// question, an empty state with the variables set so far.
    state: PipelineState,
    turns: usize,
}

impl Kept {
    fn resumed(state: PipelineState) -> Self {
        Kept { state, turns: 0 }
    }

    /// The state a new question starts from.
    fn next_state(&self, pipeline: &LoadedPipeline, question: String) -> PipelineState {
        pipeline.follow_up(Some(&self.state), question)
    }

    /// Keeps a finished run, or of a failed one only what it spent: money that left is counted
    /// against the conversation's cap even when the question is asked again.
    fn finish(&mut self, state: PipelineState, reports: Result<Vec<StepReport>, CtxError>) -> Result<Answer, CtxError> {
        match reports {
            Ok(reports) => Ok(self.keep(state, reports)),
            Err(e) => {
                self.state.spend.keep_conversation_of(&state.spend);
                Err(e)
            }
        }
    }

    fn keep(&mut self, state: PipelineState, reports: Vec<StepReport>) -> Answer {
        let text = state.last_model_response.clone().unwrap_or_default();
        self.state = state;
        self.turns += 1;
        Answer { text, reports }
    }
}

/// A `pipeline!` pipeline asked one question after another, carrying the history, the variables
/// and (with `carry_context: true`) the context from one run to the next (see the module's
/// documentation); a question that fails leaves the conversation as it was.
#[derive(Debug, Clone)]
pub struct Conversation<S: StepMachine> {
    pipeline: Pipeline<S>,
    kept: Kept,
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
        Conversation { pipeline, kept: Kept::default() }
    }

    /// Continues a conversation saved with [`Self::state`] (it is `serde`): its history,
    /// variables and carried context carry on.
    pub fn resume(pipeline: Pipeline<S>, state: PipelineState) -> Self {
        Conversation { pipeline, kept: Kept::resumed(state) }
    }

    /// Asks `question`, runs the pipeline to its end, and returns the reply. On error the
    /// conversation is unchanged, but for what the failed run's model requests cost (counted in
    /// the conversation's spend), and the question can be asked again.
    pub async fn ask(&mut self, question: impl Into<String>, backends: &impl Backends<S>) -> Result<Answer, CtxError> {
        let mut snapshot =
            Snapshot::start(self.pipeline.pipeline(), self.kept.next_state(self.pipeline.pipeline(), question.into()));
        let reports = self.pipeline.resume(&mut snapshot, backends).await;
        self.kept.finish(snapshot.state, reports)
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
        let mut snapshot =
            Snapshot::start(self.pipeline.pipeline(), self.kept.next_state(self.pipeline.pipeline(), question.into()));
        let reports = self.pipeline.resume_streaming(&mut snapshot, backends, sink).await;
        self.kept.finish(snapshot.state, reports)
    }

    /// The pipeline.
    pub fn pipeline(&self) -> &Pipeline<S> {
        &self.pipeline
    }
}

/// A pipeline loaded at run time (a YAML file) asked one question after another: a
/// [`Conversation`] without a step enum, run with a [`StepEnv`] (whose token sink, if any,
/// streams the replies).
///
/// ```no_run
/// # async fn demo(pipeline: ctx::pipeline::LoadedPipeline, model: &dyn ctx::llm::ChatModelDyn) -> Result<(), ctx::CtxError> {
/// use ctx::pipeline::StepEnv;
///
/// let env = StepEnv::builder().model(model);
/// let mut chat = pipeline.conversation();
/// chat.set_variable("customer", "ACME");
/// let answer = chat.ask("How do I rotate the API keys?", &env).await?;
/// let follow_up = chat.ask("And the old ones?", &env).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct LoadedConversation {
    pipeline: LoadedPipeline,
    kept: Kept,
}

impl LoadedPipeline {
    /// A new conversation with this pipeline, with no history.
    pub fn conversation(self) -> LoadedConversation {
        LoadedConversation::new(self)
    }
}

impl LoadedConversation {
    /// A conversation with no history and no variables.
    pub fn new(pipeline: LoadedPipeline) -> Self {
        LoadedConversation { pipeline, kept: Kept::default() }
    }

    /// Continues a conversation saved with [`Self::state`].
    pub fn resume(pipeline: LoadedPipeline, state: PipelineState) -> Self {
        LoadedConversation { pipeline, kept: Kept::resumed(state) }
    }

    /// Asks `question`, runs the pipeline to its end with `env`, and returns the reply. On error
    /// the conversation is unchanged, but for what the failed run's model requests cost (counted
    /// in the conversation's spend), and the question can be asked again.
    pub async fn ask(&mut self, question: impl Into<String>, env: &StepEnv<'_>) -> Result<Answer, CtxError> {
        let mut snapshot = Snapshot::start(&self.pipeline, self.kept.next_state(&self.pipeline, question.into()));
        let span = crate::report::trace::run_span(self.pipeline.name(), &snapshot.next_step);
        let reports = self.pipeline.resume(&mut snapshot, env).instrument(span).await;
        self.kept.finish(snapshot.state, reports)
    }

    /// The pipeline.
    pub fn pipeline(&self) -> &LoadedPipeline {
        &self.pipeline
    }
}

/// The accessors both forms share.
macro_rules! kept_accessors {
    ($([$($generics:tt)*] $ty:ty),*) => {$(
        impl<$($generics)*> $ty {
            /// The history so far, oldest first (as the last run left it: within
            /// `max_history_tokens` plus the last question and answer).
            pub fn history(&self) -> &[ChatMessage] {
                &self.kept.state.history_dialog
            }

            /// The context the next question starts with: the last run's `context_blocks` when
            /// the pipeline carries the context, else nothing.
            pub fn context(&self) -> &[String] {
                if self.loaded().carries_context() { &self.kept.state.context_blocks } else { &[] }
            }

            /// The variables carried from question to question.
            pub fn variables(&self) -> &BTreeMap<String, Value> {
                &self.kept.state.variables
            }

            /// Sets a variable for the next questions (a user's name, a tenant, a language…).
            pub fn set_variable(&mut self, name: impl Into<String>, value: impl Into<Value>) {
                self.kept.state.variables.insert(name.into(), value.into());
            }

            /// How many questions were answered since the conversation was created or resumed.
            pub fn turns(&self) -> usize {
                self.kept.turns
            }

            /// The state the last run ended with, to save the conversation (see `resume`).
            pub fn state(&self) -> &PipelineState {
                &self.kept.state
            }

            /// Forgets the history, the variables and the carried context.
            pub fn clear(&mut self) {
                self.kept = Kept::default();
            }
        }
    )*};
}

kept_accessors!([S: StepMachine] Conversation<S>, [] LoadedConversation);

impl<S: StepMachine> Conversation<S> {
    fn loaded(&self) -> &LoadedPipeline {
        self.pipeline.pipeline()
    }
}

impl LoadedConversation {
    fn loaded(&self) -> &LoadedPipeline {
        &self.pipeline
    }
}
