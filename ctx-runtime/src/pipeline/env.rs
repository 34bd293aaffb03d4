//! What a caller plugs into a run: the backend traits ([`NodeSearch`], [`NodeStore`],
//! [`CustomSteps`], and the [`ChatModel`] and [`ToolHandlers`] of model steps) and the
//! [`StepEnv`] that holds them. The steps read their backends from here; the driver
//! (`driver.rs`) only passes it on.

use async_trait::async_trait;

use crate::llm::ChatModel;
use crate::state::{NodeText, PipelineState, SearchHit};

use super::error::BoxError;
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
    ///
    /// Any error converts with `?`, as for [`NodeSearch`] and [`NodeStore`]: the run fails with
    /// `PIPELINE_BACKEND_FAILED` naming the step once (`step `route`: the custom step failed:
    /// …`); an error of ctx's own (a [`CtxError`](crate::CtxError)) passes through as it is, with its code.
    async fn run(&self, step_id: &str, state: &mut PipelineState) -> Result<String, BoxError>;
}

/// The backends a run uses. Any may be missing: a step that needs a missing one fails with
/// [`PipelineError::MissingBackend`](super::PipelineError::MissingBackend) (before touching the state).
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
