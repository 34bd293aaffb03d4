//! The step actions. Each takes the step's spec and a working copy of the state, and returns the
//! index of the transition it takes with a [`StepDetail`] saying what it did.

pub(crate) mod agent;
pub(crate) mod budget;
pub(crate) mod call_model;
mod context;
pub(crate) mod control;
mod evidence;
pub(crate) mod fetch;
pub(crate) mod request;
pub(crate) mod search;
pub(crate) mod set_variables;
#[cfg(test)]
pub(crate) mod test_backends;

use serde::Serialize;

use crate::error::CtxError;

use super::Transition;
use super::error::PipelineError;

pub use agent::{
    AgentEnd, AgentReport, MAX_TOOL_CALLS_CAP, ModelRequestReport, TOOL_LIMIT_MESSAGE, ToolCallKind, ToolCallReport,
};
pub use call_model::{CallReport, OUTPUT_FLOOR_TOKENS};
pub use fetch::{FetchReport, MIN_TRUNCATED_TOKENS, SkipReason, SkippedNode, TRUNCATED_METADATA_KEY, TruncatedNode};

/// What a step did, by kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub enum StepDetail {
    /// `search_nodes`: the query sent and the hits kept.
    SearchNodes {
        /// The query (`user_question_en`, or `user_question` when that is empty).
        query: String,
        /// How many hits were kept (after `top_k` and de-duplication).
        hits: usize,
    },
    /// `expand_dependency_tree`: the dependency ids added, in the order added.
    ExpandDependencyTree {
        /// The ids added to `search_results`.
        added: Vec<String>,
    },
    /// `fetch_node_texts`.
    FetchNodeTexts(FetchReport),
    /// `manage_context_budget`: the budget module's report (also emitted as the
    /// `MANAGE_CONTEXT_BUDGET` trace event).
    ManageContextBudget(crate::budget::BudgetReport),
    /// `call_model`: what was sent and received.
    CallModel(CallReport),
    /// `agent`: every model request and tool call of the turn, and how the loop ended.
    Agent(AgentReport),
    /// `loop_guard`.
    LoopGuard {
        /// The loops allowed so far, after this step.
        count: u32,
        /// The limit from the settings.
        limit: u64,
        /// Whether it took `on_allow`.
        allowed: bool,
    },
    /// `set_variables`: the targets set, in rule order.
    SetVariables {
        /// The fields and variables set.
        set: Vec<String>,
    },
    /// `custom`: the outcome returned.
    Custom {
        /// The outcome name.
        outcome: String,
    },
}

/// The transition and the detail of a step that succeeded.
pub(crate) type Done = (Transition, StepDetail);

/// The backend, or the error naming the step and the builder method to call.
/// The client of the model step `step` uses: its named model's (`model: NAME`), else the
/// default `ChatModel`.
pub(crate) fn need_model<'a>(
    p: &crate::pipeline::loaded::LoadedPipeline,
    env: &crate::pipeline::env::StepEnv<'a>,
    step: &str,
    kind: &'static str,
) -> Result<&'a dyn crate::llm::ChatModelDyn, CtxError> {
    match p.step_model(step).name {
        None => need(env.model_backend(), step, kind, "ChatModel", "model"),
        Some(name) => env.named_model_backend(name).ok_or_else(|| {
            crate::pipeline::error::PipelineError::MissingModel { step: step.to_owned(), kind, model: name.to_owned() }
                .into()
        }),
    }
}

pub(crate) fn need<'a, T: ?Sized>(
    backend: Option<&'a T>,
    step: &str,
    kind: &'static str,
    name: &'static str,
    setter: &'static str,
) -> Result<&'a T, CtxError> {
    backend.ok_or_else(|| PipelineError::MissingBackend { step: step.to_owned(), kind, backend: name, setter }.into())
}
