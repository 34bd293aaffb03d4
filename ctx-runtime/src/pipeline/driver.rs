//! The driver: what a caller plugs in ([`NodeSearch`], [`NodeStore`], [`CustomSteps`], a
//! [`ChatModel`], the [`ToolHandlers`] of `agent` steps), and [`run_step`], which performs one step on a [`PipelineState`] and says which
//! transition it took.
//!
//! A step works on a copy of the state and the copy replaces the state only when the step
//! succeeds, so a failed step leaves the state exactly as it found it (its inbox included) and
//! the run can be retried or resumed from a [`Snapshot`](super::Snapshot).

use async_trait::async_trait;
use serde::Serialize;
use tracing::Instrument;

use crate::error::CtxError;
use crate::llm::ChatModel;
use crate::state::{NodeText, PipelineState, SearchHit};

use super::Target;
use super::Transition;
use super::definition::StepKind;
use super::error::{BoxError, PipelineError};
use super::loaded::LoadedPipeline;
use super::steps;
use super::stream::TokenSink;
use super::tools::ToolHandlers;

/// Finds nodes for a query (`search_nodes`).
#[async_trait]
pub trait NodeSearch: Send + Sync {
    /// Up to `top_k` hits for `query`, best first.
    async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError>;
}

/// Holds the nodes' texts and their dependencies (`fetch_node_texts`, `expand_dependency_tree`).
#[async_trait]
pub trait NodeStore: Send + Sync {
    /// The texts of the nodes `ids`, in any order; an id it does not know is simply left out.
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError>;

    /// The ids of the nodes `id` depends on (what it calls, reads, includes), most relevant
    /// first. An unknown id has none.
    async fn dependencies(&self, id: &str) -> Result<Vec<String>, BoxError>;
}

/// The caller's own steps: a `custom` step runs [`CustomSteps::run`] with its id.
#[async_trait]
pub trait CustomSteps: Send + Sync {
    /// Performs step `step_id` on `state` and returns the name of the outcome to follow, one of
    /// those the step declares. The changes to `state` are kept only when it succeeds with a
    /// declared outcome; `state.loop_counts` must not be changed.
    async fn run(&self, step_id: &str, state: &mut PipelineState) -> Result<String, CtxError>;
}

/// The backends a run uses. Any may be missing: a step that needs a missing one fails with
/// [`PipelineError::MissingBackend`] (before touching the state).
///
/// ```
/// use ctx::pipeline::StepEnv;
///
/// let env = StepEnv::builder().build();
/// assert!(env.search_backend().is_none());
/// ```
#[derive(Clone, Copy, Default)]
pub struct StepEnv<'a> {
    search: Option<&'a dyn NodeSearch>,
    store: Option<&'a dyn NodeStore>,
    model: Option<&'a dyn ChatModel>,
    custom: Option<&'a dyn CustomSteps>,
    tokens: Option<&'a dyn TokenSink>,
    tools: Option<&'a dyn ToolHandlers>,
}

impl<'a> StepEnv<'a> {
    /// An environment with no backend; add them with the methods below.
    pub fn builder() -> Self {
        Self::default()
    }

    /// Uses `search` for `search_nodes`.
    #[must_use]
    pub fn search(mut self, search: &'a dyn NodeSearch) -> Self {
        self.search = Some(search);
        self
    }

    /// Uses `store` for `fetch_node_texts` and `expand_dependency_tree`.
    #[must_use]
    pub fn store(mut self, store: &'a dyn NodeStore) -> Self {
        self.store = Some(store);
        self
    }

    /// Uses `model` for `call_model`.
    #[must_use]
    pub fn model(mut self, model: &'a dyn ChatModel) -> Self {
        self.model = Some(model);
        self
    }

    /// Uses `custom` for `custom` steps.
    #[must_use]
    pub fn custom(mut self, custom: &'a dyn CustomSteps) -> Self {
        self.custom = Some(custom);
        self
    }

    /// Streams every model reply of the run to `sink` as it is generated (see [`TokenSink`]).
    #[must_use]
    pub fn tokens(mut self, sink: &'a dyn TokenSink) -> Self {
        self.tokens = Some(sink);
        self
    }

    /// Uses `tools` for the tool calls of `agent` steps.
    #[must_use]
    pub fn tools(mut self, tools: &'a dyn ToolHandlers) -> Self {
        self.tools = Some(tools);
        self
    }

    /// The finished environment (the builder is the environment; this reads well at call sites).
    #[must_use]
    pub fn build(self) -> Self {
        self
    }

    /// The search backend, if any.
    pub fn search_backend(&self) -> Option<&'a dyn NodeSearch> {
        self.search
    }

    /// The store, if any.
    pub fn store_backend(&self) -> Option<&'a dyn NodeStore> {
        self.store
    }

    /// The chat model, if any.
    pub fn model_backend(&self) -> Option<&'a dyn ChatModel> {
        self.model
    }

    /// The custom steps, if any.
    pub fn custom_backend(&self) -> Option<&'a dyn CustomSteps> {
        self.custom
    }

    /// Where model replies stream to, if anywhere.
    pub fn token_sink(&self) -> Option<&'a dyn TokenSink> {
        self.tokens
    }

    /// The tool handlers, if any.
    pub fn tools_backend(&self) -> Option<&'a dyn ToolHandlers> {
        self.tools
    }
}

impl std::fmt::Debug for StepEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepEnv")
            .field("search", &self.search.is_some())
            .field("store", &self.store.is_some())
            .field("model", &self.model.is_some())
            .field("custom", &self.custom.is_some())
            .field("tokens", &self.tokens.is_some())
            .field("tools", &self.tools.is_some())
            .finish()
    }
}

/// What one step did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepOutcome {
    /// The transition taken.
    pub transition: Transition,
    /// What happened, for traces and tests.
    pub report: StepReport,
}

/// A step's report: where it went and what it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepReport {
    /// The step id.
    pub step_id: String,
    /// The step's kind keyword.
    pub kind: &'static str,
    /// The transition's key (`next`, `on_over`, a custom outcome, …).
    pub transition_key: String,
    /// Where the transition leads.
    pub target: Target,
    /// The kind-specific details.
    pub detail: steps::StepDetail,
}

/// Performs step `index` of `p` on `state`: consumes the step's inbox, runs its action, and
/// returns the transition taken. On error `state` is unchanged.
pub async fn run_step(
    p: &LoadedPipeline,
    index: usize,
    state: &mut PipelineState,
    env: &StepEnv<'_>,
) -> Result<StepOutcome, CtxError> {
    let def = p.definition();
    let step = def.steps.get(index).ok_or_else(|| PipelineError::StepIndexOutOfRange {
        pipeline: def.name.clone(),
        index,
        steps: def.steps.len(),
    })?;
    let span = tracing::info_span!("ctx.step", pipeline = %def.name, step = %step.id, kind = step.kind.keyword());
    async {
        let mut work = state.clone();
        work.consume_inbox(&step.id);
        let (transition, detail) = match &step.kind {
            StepKind::SearchNodes(spec) => steps::search::search_nodes(&step.id, spec, &mut work, env).await?,
            StepKind::ExpandDependencyTree(spec) => steps::search::expand(&step.id, spec, &mut work, env).await?,
            StepKind::FetchNodeTexts(spec) => steps::fetch::fetch_node_texts(p, &step.id, spec, &mut work, env).await?,
            StepKind::LoopGuard(spec) => steps::control::loop_guard(p, &step.id, spec, &mut work)?,
            StepKind::SetVariables(spec) => steps::set_variables::set_variables(&step.id, spec, &mut work)?,
            StepKind::Custom(spec) => steps::control::custom(&step.id, spec, &mut work, env).await?,
            StepKind::CallModel(spec) => steps::call_model::call_model(p, &step.id, spec, &mut work, env).await?,
            StepKind::Agent(spec) => steps::agent::agent(p, &step.id, spec, &mut work, env).await?,
            StepKind::ManageContextBudget(_) => steps::budget::manage_context_budget(p, index, &step.id, &mut work)?,
            // `StepKind` is non-exhaustive for users; the facade pins ctx-spec and ctx-runtime to
            // one version, so this arm is only reached with mismatched crates.
            other => {
                return Err(PipelineError::UnsupportedStep { step: step.id.clone(), kind: other.keyword() }.into());
            }
        };
        let (key, target) = p.transition(index, transition).ok_or_else(|| PipelineError::StepIndexOutOfRange {
            pipeline: def.name.clone(),
            index,
            steps: def.steps.len(),
        })?;
        *state = work;
        tracing::debug!(transition = %key, "step done");
        Ok(StepOutcome {
            transition,
            report: StepReport {
                step_id: step.id.clone(),
                kind: step.kind.keyword(),
                transition_key: key.to_owned(),
                target,
                detail,
            },
        })
    }
    .instrument(span)
    .await
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;
