//! What a caller plugs into a run: the backend traits ([`NodeSearch`], [`NodeStore`],
//! [`CustomSteps`], and the [`ChatModel`] and [`ToolHandlers`] of model steps) and the
//! [`StepEnv`] that holds them. The steps read their backends from here; the driver
//! (`driver.rs`) only passes it on.
//!
//! Each backend trait is implemented with plain `async fn`s. The trait declares a method as
//! returning `impl Future<Output = …> + Send`, so an implementation's future is checked to be
//! `Send` where it is written. Such a trait has no `dyn` form, so each has an object-safe twin
//! (`NodeSearchDyn`, …) with a boxed future that every implementation has: that is what
//! [`StepEnv`] holds (`&index` coerces to `&dyn NodeSearchDyn`), and it is itself an
//! implementation of the trait.

use std::future::Future;

use crate::engine::RetrieverDyn;
use crate::llm::ChatModelDyn;
use crate::state::{NodeText, PipelineState, SearchHit};

use super::error::{BoxError, PipelineError, StepFuture};
use super::loaded::LoadedPipeline;
use super::stream::TokenSink;
use super::tools::ToolHandlersDyn;

/// Finds nodes for a query (`search_nodes`). Held as [`&dyn NodeSearchDyn`](NodeSearchDyn): a
/// `NodeSearch` has no `dyn` form (`search` returns `impl Future`), and every one is a
/// `NodeSearchDyn`.
///
/// ```
/// use ctx::pipeline::{BoxError, NodeSearch};
/// use ctx::state::SearchHit;
///
/// struct Everything(Vec<String>);
///
/// impl NodeSearch for Everything {
///     async fn search(&self, _query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
///         Ok(self.0.iter().take(top_k).map(|id| SearchHit::new(id.clone(), 1.0)).collect())
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `ctx::pipeline::NodeSearch`",
    label = "not a `NodeSearch`",
    note = "implement `NodeSearch` for it, with a plain `async fn search`; a run holds it as `&dyn NodeSearchDyn`"
)]
pub trait NodeSearch: Send + Sync {
    /// Up to `top_k` hits for `query`, best first.
    // rustc quotes the line of the return type when `dyn NodeSearch` is written: its comment
    // says what to write instead, short enough not to be cut.
    #[rustfmt::skip]
    fn search(&self, query: &str, top_k: usize)
        -> impl Future<Output = Result<Vec<SearchHit>, BoxError>> + Send; // no dyn NodeSearch: use dyn NodeSearchDyn
}

crate::dyn_twin::dyn_twin! {
    /// [`NodeSearch`] as a trait object (`&dyn NodeSearchDyn`), as a [`StepEnv`] holds it. Every
    /// `NodeSearch` implements it; implement `NodeSearch`, never this.
    #[doc(alias = "dyn NodeSearch")]
    #[diagnostic::on_unimplemented(
        message = "`{Self}` does not implement `ctx::pipeline::NodeSearch`",
        label = "not a `NodeSearch`",
        note = "implement `NodeSearch` for it (never `NodeSearchDyn`, which every `NodeSearch` has)"
    )]
    pub trait NodeSearchDyn: Send + Sync {
        impl<T: NodeSearch>;
        async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError>
            => dyn_search -> StepFuture<'a, Vec<SearchHit>>;
    }
}

/// Holds the nodes' texts and their dependencies (`fetch_node_texts`, `expand_dependency_tree`).
/// Held as [`&dyn NodeStoreDyn`](NodeStoreDyn): a `NodeStore` has no `dyn` form (its methods
/// return `impl Future`), and every one is a `NodeStoreDyn`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `ctx::pipeline::NodeStore`",
    label = "not a `NodeStore`",
    note = "implement `NodeStore` for it, with plain `async fn`s; a run holds it as `&dyn NodeStoreDyn`"
)]
pub trait NodeStore: Send + Sync {
    /// The texts of the nodes `ids`, in any order; an id it does not know is simply left out.
    // rustc quotes the line of the return type when `dyn NodeStore` is written: its comment says
    // what to write instead, short enough not to be cut.
    #[rustfmt::skip]
    fn texts(&self, ids: &[String])
        -> impl Future<Output = Result<Vec<NodeText>, BoxError>> + Send; // no dyn NodeStore: use dyn NodeStoreDyn

    /// The ids of the nodes `id` depends on (what it calls, reads, includes), most relevant
    /// first. An unknown id has none.
    fn dependencies(&self, id: &str) -> impl Future<Output = Result<Vec<String>, BoxError>> + Send;
}

crate::dyn_twin::dyn_twin! {
    /// [`NodeStore`] as a trait object (`&dyn NodeStoreDyn`), as a [`StepEnv`] holds it. Every
    /// `NodeStore` implements it; implement `NodeStore`, never this.
    #[doc(alias = "dyn NodeStore")]
    #[diagnostic::on_unimplemented(
        message = "`{Self}` does not implement `ctx::pipeline::NodeStore`",
        label = "not a `NodeStore`",
        note = "implement `NodeStore` for it (never `NodeStoreDyn`, which every `NodeStore` has)"
    )]
    pub trait NodeStoreDyn: Send + Sync {
        impl<T: NodeStore>;
        async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError>
            => dyn_texts -> StepFuture<'a, Vec<NodeText>>;
        async fn dependencies(&self, id: &str) -> Result<Vec<String>, BoxError>
            => dyn_dependencies -> StepFuture<'a, Vec<String>>;
    }
}

/// The caller's own steps: a `custom` step runs [`CustomSteps::run`] with its id.
pub trait CustomSteps: Send + Sync {
    /// Performs step `step_id` on `state` and returns the name of the outcome to follow, one of
    /// those the step declares. The changes to `state` are kept only when it succeeds with a
    /// declared outcome; `state.loop_counts` must not be changed.
    ///
    /// Any error converts with `?`, as for [`NodeSearch`] and [`NodeStore`]: the run fails with
    /// `PIPELINE_BACKEND_FAILED` naming the step once (`step `route`: the custom step failed:
    /// …`); an error of ctx's own (a [`CtxError`](crate::CtxError)) passes through as it is, with its code.
    fn run(&self, step_id: &str, state: &mut PipelineState) -> impl Future<Output = Result<String, BoxError>> + Send;
}

crate::dyn_twin::dyn_twin! {
    /// [`CustomSteps`] as a trait object (`&dyn CustomStepsDyn`), as a [`StepEnv`] holds it. Every
    /// `CustomSteps` implements it; implement `CustomSteps`, never this.
    pub trait CustomStepsDyn: Send + Sync {
        impl<T: CustomSteps>;
        async fn run(&self, step_id: &str, state: &mut PipelineState) -> Result<String, BoxError>
            => dyn_run -> StepFuture<'a, String>;
    }
}

/// The clients of a pipeline's named models (`models { small { … } }`), by name: a slice of
/// `(name, client)` pairs, or a generated environment (one field per model).
pub trait NamedModels: Sync {
    /// The client of the model named `name`, if there is one.
    fn named_model(&self, name: &str) -> Option<&dyn ChatModelDyn>;
}

impl NamedModels for [(&str, &dyn ChatModelDyn)] {
    fn named_model(&self, name: &str) -> Option<&dyn ChatModelDyn> {
        self.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }
}

/// Where a [`StepEnv`] finds the clients of named models.
#[derive(Clone, Copy)]
enum ModelsByName<'a> {
    Pairs(&'a [(&'a str, &'a dyn ChatModelDyn)]),
    Dyn(&'a dyn NamedModels),
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
    search: Option<&'a dyn NodeSearchDyn>,
    store: Option<&'a dyn NodeStoreDyn>,
    model: Option<&'a dyn ChatModelDyn>,
    /// The clients of the pipeline's named models, by name.
    models: Option<ModelsByName<'a>>,
    custom: Option<&'a dyn CustomStepsDyn>,
    tokens: Option<&'a dyn TokenSink>,
    tools: Option<&'a dyn ToolHandlersDyn>,
    retriever: Option<&'a dyn RetrieverDyn>,
}

impl<'a> StepEnv<'a> {
    /// An environment with no backend; add them with the methods below.
    pub fn builder() -> Self {
        Self::default()
    }

    /// Uses `search` for `search_nodes`.
    #[must_use]
    pub fn search(mut self, search: &'a dyn NodeSearchDyn) -> Self {
        self.search = Some(search);
        self
    }

    /// Uses `store` for `fetch_node_texts` and `expand_dependency_tree`.
    #[must_use]
    pub fn store(mut self, store: &'a dyn NodeStoreDyn) -> Self {
        self.store = Some(store);
        self
    }

    /// Uses `model` for `call_model`.
    #[must_use]
    pub fn model(mut self, model: &'a dyn ChatModelDyn) -> Self {
        self.model = Some(model);
        self
    }

    /// Uses each `(name, client)` for the steps that name that model (`model: NAME`, one of the
    /// pipeline's `models { … }`); the default model's client is [`Self::model`].
    #[must_use]
    pub fn models(mut self, models: &'a [(&'a str, &'a dyn ChatModelDyn)]) -> Self {
        self.models = Some(ModelsByName::Pairs(models));
        self
    }

    /// Uses `models` to find the client of each named model (how a generated environment, which
    /// has one field per model, hands them over).
    #[must_use]
    pub fn named_models(mut self, models: &'a dyn NamedModels) -> Self {
        self.models = Some(ModelsByName::Dyn(models));
        self
    }

    /// Uses `custom` for `custom` steps.
    #[must_use]
    pub fn custom(mut self, custom: &'a dyn CustomStepsDyn) -> Self {
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
    pub fn tools(mut self, tools: &'a dyn ToolHandlersDyn) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Uses `retriever` for the packs of the contexts that model steps assemble
    /// (`call_model { context: NAME }`): it answers every retriever the pipeline's `contexts`
    /// declare, each request naming its retriever.
    #[must_use]
    pub fn retriever(mut self, retriever: &'a dyn RetrieverDyn) -> Self {
        self.retriever = Some(retriever);
        self
    }

    /// The finished environment (the builder is the environment; this reads well at call sites).
    #[must_use]
    pub fn build(self) -> Self {
        self
    }

    /// The search backend, if any.
    pub fn search_backend(&self) -> Option<&'a dyn NodeSearchDyn> {
        self.search
    }

    /// The store, if any.
    pub fn store_backend(&self) -> Option<&'a dyn NodeStoreDyn> {
        self.store
    }

    /// The chat model, if any.
    pub fn model_backend(&self) -> Option<&'a dyn ChatModelDyn> {
        self.model
    }

    /// The client of the named model `name`, if any.
    pub fn named_model_backend(&self, name: &str) -> Option<&'a dyn ChatModelDyn> {
        match self.models? {
            ModelsByName::Pairs(pairs) => pairs.named_model(name),
            ModelsByName::Dyn(models) => models.named_model(name),
        }
    }

    /// The custom steps, if any.
    pub fn custom_backend(&self) -> Option<&'a dyn CustomStepsDyn> {
        self.custom
    }

    /// Where model replies stream to, if anywhere.
    pub fn token_sink(&self) -> Option<&'a dyn TokenSink> {
        self.tokens
    }

    /// The tool handlers, if any.
    pub fn tools_backend(&self) -> Option<&'a dyn ToolHandlersDyn> {
        self.tools
    }

    /// The retriever of the contexts' packs, if any.
    pub fn retriever_backend(&self) -> Option<&'a dyn RetrieverDyn> {
        self.retriever
    }
}

impl std::fmt::Debug for StepEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepEnv")
            .field("search", &self.search.is_some())
            .field("store", &self.store.is_some())
            .field("model", &self.model.is_some())
            .field("models", &self.models.is_some())
            .field("custom", &self.custom.is_some())
            .field("tokens", &self.tokens.is_some())
            .field("tools", &self.tools.is_some())
            .field("retriever", &self.retriever.is_some())
            .finish()
    }
}

/// `backend`, or the error naming step `step` (of kind `kind`), the trait it needs (`name`) and
/// the builder method that adds one (`setter`).
pub(crate) fn need<'a, T: ?Sized>(
    backend: Option<&'a T>,
    step: &str,
    kind: &'static str,
    name: &'static str,
    setter: &'static str,
) -> Result<&'a T, PipelineError> {
    backend.ok_or_else(|| PipelineError::MissingBackend { step: step.to_owned(), kind, backend: name, setter })
}

/// The client the model step `step` uses: its named model's (`model: NAME`), else the default
/// `ChatModel`; or the error naming the step and what to add.
pub(crate) fn need_model<'a>(
    p: &LoadedPipeline,
    env: &StepEnv<'a>,
    step: &str,
    kind: &'static str,
) -> Result<&'a dyn ChatModelDyn, PipelineError> {
    match p.step_model(step).name {
        None => need(env.model_backend(), step, kind, "ChatModel", "model"),
        Some(name) => env.named_model_backend(name).ok_or_else(|| PipelineError::MissingModel {
            step: step.to_owned(),
            kind,
            model: name.to_owned(),
        }),
    }
}
