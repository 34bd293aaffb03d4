//! The typed state machine, written once: `pipeline!` emits a step enum implementing
//! [`StepMachine`] (its ids, its transition table, its definition) and an environment struct
//! implementing [`Backends`]; [`Pipeline`] holds `run`, `resume`, `step` and snapshots for every
//! such pipeline. The generated code has no loop of its own.
//!
//! A run goes through the same [`LoadedPipeline`] driver as a pipeline loaded at run time, so the
//! two paths cannot disagree; what the typed path adds is what the compiler can check: the
//! environment holds exactly the backends the pipeline's steps need, and each custom step is a
//! method returning its own outcome enum.

use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;

use tracing::Instrument as _;

use crate::error::CtxError;
use crate::state::PipelineState;

use super::Transition;
use super::definition::PipelineDef;
use super::driver::{StepReport, run_step};
use super::env::{CustomSteps, StepEnv};
use super::error::{BoxError, PipelineError, StepFuture};
use super::load::LoadOptions;
use super::loaded::LoadedPipeline;
use super::run::Snapshot;
use super::stream::{StepSink, Token, TokenSink};
use super::tools::{ToolHandlers, ToolHandlersDyn, ToolOutput, ToolRequest};

/// The step enum of a `pipeline!` pipeline: one variant per step, plus an end state.
///
/// Generated code implements it; the associated items are the pipeline's facts, fixed when it
/// was compiled.
pub trait StepMachine: Copy + Eq + Hash + fmt::Debug + Send + Sync + 'static {
    /// The pipeline's name.
    const NAME: &'static str;
    /// The step graph as a Mermaid flowchart.
    const MERMAID: &'static str;
    /// Where a run starts: the first declared step.
    const FIRST: Self;
    /// The end state.
    const END: Self;
    /// Every state, in declaration order, the end state last.
    const ALL: &'static [Self];

    /// The pipeline as written, as plain values.
    fn definition() -> PipelineDef;

    /// The step id as written (`"end"` for the end state).
    fn id(self) -> &'static str;

    /// The step's index in the definition's `steps`; `None` for the end state.
    fn index(self) -> Option<usize>;

    /// Where `transition` of this step leads: the transition table, resolved when compiled.
    /// `None` when the step has no such transition (or for the end state).
    fn next(self, transition: Transition) -> Option<Self>;

    /// The state for a step id (or `"end"`).
    fn from_id(id: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|s| s.id() == id)
    }

    /// The state before step `index` of the definition's `steps`.
    fn from_index(index: usize) -> Option<Self> {
        Self::ALL.iter().copied().find(|s| s.index() == Some(index))
    }
}

/// What a run of a typed pipeline plugs in. `pipeline!` implements it for the pipeline's
/// environment struct (`CodeQaEnv`), whose fields are exactly the backends its steps need, so a
/// backend cannot be forgotten.
pub trait Backends<S: StepMachine>: Sync {
    /// The search, store and model backends, as the run-time driver takes them.
    fn step_env(&self) -> StepEnv<'_>;

    /// Runs the custom step `step` and returns the name of the outcome it chose. Only called
    /// for custom steps; the generated implementation calls the method of the pipeline's custom
    /// trait named after the step.
    fn run_custom<'a>(&'a self, step: S, state: &'a mut PipelineState) -> StepFuture<'a, &'static str> {
        let _ = state;
        Box::pin(async move { Err(PipelineError::NotCustom { step: step.id().to_owned() }.into()) })
    }

    /// The handlers of the tools the agent steps' MCP servers list (the `McpTools` the
    /// pipeline was loaded with, feature `mcp`): a call of a tool the step does not declare goes
    /// there, the others to [`Self::run_tool`]. The generated implementation returns the
    /// environment's field `mcp`, which a pipeline naming MCP servers has.
    fn mcp_tools(&self) -> Option<&dyn ToolHandlersDyn> {
        None
    }

    /// Runs one tool call of the agent step `step`. Only called for agent steps whose
    /// environment has no [`ToolHandlers`] of its own in [`Self::step_env`]; the generated
    /// implementation calls the method of the pipeline's tools trait named after the tool.
    fn run_tool<'a>(&'a self, step: S, request: ToolRequest<'a>) -> StepFuture<'a, ToolOutput> {
        Box::pin(async move {
            Err(PipelineError::NotTool { step: step.id().to_owned(), tool: request.name.to_owned() }.into())
        })
    }
}

/// The environment of a typed run: the backends' own, with custom steps (and tools, unless the
/// backends give their own handlers) routed to the typed methods.
fn typed_env<'a, S: StepMachine, B: Backends<S> + ?Sized>(
    backends: &'a B,
    dispatch: &'a Dispatch<'a, S, B>,
) -> StepEnv<'a> {
    let env = backends.step_env().custom(dispatch);
    if env.tools_backend().is_some() { env } else { env.tools(dispatch) }
}

/// A pipeline declared with `pipeline!`, loaded and ready to run. The macro names it:
/// `pub type CodeQa = Pipeline<CodeQaStep>;`.
pub struct Pipeline<S> {
    loaded: LoadedPipeline,
    states: PhantomData<fn() -> S>,
}

impl<S> Clone for Pipeline<S> {
    fn clone(&self) -> Self {
        Pipeline { loaded: self.loaded.clone(), states: PhantomData }
    }
}

impl<S: StepMachine> fmt::Debug for Pipeline<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pipeline").field("name", &S::NAME).field("loaded", &self.loaded).finish()
    }
}

impl<S: StepMachine> Pipeline<S> {
    /// The pipeline's name.
    pub const NAME: &'static str = S::NAME;
    /// The step graph as a Mermaid flowchart, computed when the pipeline was compiled.
    pub const MERMAID: &'static str = S::MERMAID;

    /// The pipeline as written, as plain values (validated when it was compiled).
    pub fn definition() -> PipelineDef {
        S::definition()
    }

    /// Loads the pipeline: resolves a `config(…)` model, fills `at_load` prompts, and re-runs
    /// the validation with what only load time knows.
    pub fn load(options: LoadOptions) -> Result<Self, CtxError> {
        Ok(Pipeline { loaded: LoadedPipeline::load(S::definition(), options)?, states: PhantomData })
    }

    /// [`Self::load`] with default options.
    pub fn new() -> Result<Self, CtxError> {
        Self::load(LoadOptions::default())
    }

    /// Wraps a pipeline loaded from [`Self::definition`] another way, for example for a locally
    /// served model (`LocalModel::load` puts in the server's window and tokenizer). Its steps
    /// must be this pipeline's.
    pub fn from_loaded(loaded: LoadedPipeline) -> Result<Self, CtxError> {
        loaded.check_steps_match(&S::definition())?;
        Ok(Pipeline { loaded, states: PhantomData })
    }

    /// The loaded pipeline (definition, model limits, contract report).
    pub fn pipeline(&self) -> &LoadedPipeline {
        &self.loaded
    }

    /// Performs the step `at` and returns where the run goes next. A failed step leaves
    /// `state` unchanged.
    pub async fn step(&self, at: S, state: &mut PipelineState, backends: &impl Backends<S>) -> Result<S, CtxError> {
        Ok(self.step_with_report(at, state, backends).await?.0)
    }

    /// [`Self::step`], with the step's report (`None` at the end state).
    pub async fn step_with_report(
        &self,
        at: S,
        state: &mut PipelineState,
        backends: &impl Backends<S>,
    ) -> Result<(S, Option<StepReport>), CtxError> {
        let Some(index) = at.index() else {
            return Ok((S::END, None));
        };
        let dispatch = Dispatch { backends, states: PhantomData };
        let env = typed_env(backends, &dispatch);
        let mut work = state.clone();
        // `run_step` keeps the spend of a failed step in `work`; so does this.
        let outcome =
            run_step(&self.loaded, index, &mut work, &env).await.inspect_err(|_| state.spend = work.spend.clone())?;
        // The table compiled into the step enum; the run-time resolution reached the same
        // target from the same definition (`from_loaded` checks the steps match).
        let next = at.next(outcome.transition).ok_or_else(|| PipelineError::StepIndexOutOfRange {
            pipeline: S::NAME.to_owned(),
            index,
            steps: self.loaded.definition().steps.len(),
        })?;
        *state = work;
        Ok((next, Some(outcome.report)))
    }

    /// Runs a new question from the first step to the end (loop counts start at zero, the
    /// history and variables carry over) and returns the final state with every step's report.
    pub async fn run(
        &self,
        state: PipelineState,
        backends: &impl Backends<S>,
    ) -> Result<(PipelineState, Vec<StepReport>), CtxError> {
        let mut snapshot = Snapshot::start(&self.loaded, state);
        let reports = self.resume(&mut snapshot, backends).await?;
        Ok((snapshot.state, reports))
    }

    /// Runs a saved snapshot to the end, moving it along after each step. On error it stays at
    /// the failed step with the state that step found, so the run can be retried. A run takes at
    /// most the proven `step_bound` steps.
    pub async fn resume(
        &self,
        snapshot: &mut Snapshot,
        backends: &impl Backends<S>,
    ) -> Result<Vec<StepReport>, CtxError> {
        self.resume_with(snapshot, backends, None).await
    }

    /// [`Self::run`], streaming every model reply to `sink` as it is generated. The requests,
    /// the reports and the final state are those of [`Self::run`]; the sink is dropped when the
    /// run ends, so a channel sender moved into it closes its channel.
    ///
    /// The sink gets each piece with its step as the pipeline's step enum
    /// ([`Token`](super::Token)`<'_, S>`), so it can show the answer and leave out a summary:
    ///
    /// ```no_run
    /// # async fn demo<S: ctx::pipeline::StepMachine>(
    /// #     pipeline: &ctx::pipeline::Pipeline<S>,
    /// #     env: &impl ctx::pipeline::Backends<S>,
    /// #     answer: S,
    /// # ) -> Result<(), ctx::CtxError> {
    /// use ctx::pipeline::Token;
    /// use ctx::PipelineState;
    ///
    /// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    /// let printer = tokio::spawn(async move {
    ///     while let Some(piece) = rx.recv().await {
    ///         print!("{piece}");
    ///     }
    /// });
    /// let sink = move |t: Token<'_, S>| {
    ///     if t.step == answer {
    ///         let _ = tx.send(t.text.to_owned());
    ///     }
    /// };
    /// let (state, reports) = pipeline.run_streaming(PipelineState::new("Why?"), env, sink).await?;
    /// printer.await.ok();
    /// # Ok(()) }
    /// ```
    pub async fn run_streaming(
        &self,
        state: PipelineState,
        backends: &impl Backends<S>,
        sink: impl StepSink<S>,
    ) -> Result<(PipelineState, Vec<StepReport>), CtxError> {
        let mut snapshot = Snapshot::start(&self.loaded, state);
        let reports = self.resume_with(&mut snapshot, backends, Some(&Typed::new(&sink))).await?;
        Ok((snapshot.state, reports))
    }

    /// [`Self::resume`], streaming every model reply to `sink`.
    pub async fn resume_streaming(
        &self,
        snapshot: &mut Snapshot,
        backends: &impl Backends<S>,
        sink: impl StepSink<S>,
    ) -> Result<Vec<StepReport>, CtxError> {
        self.resume_with(snapshot, backends, Some(&Typed::new(&sink))).await
    }

    async fn resume_with(
        &self,
        snapshot: &mut Snapshot,
        backends: &impl Backends<S>,
        sink: Option<&dyn super::stream::TokenSink>,
    ) -> Result<Vec<StepReport>, CtxError> {
        Self::position(snapshot)?;
        let dispatch = Dispatch { backends, states: PhantomData };
        let mut env = typed_env(backends, &dispatch);
        if let Some(sink) = sink {
            env = env.tokens(sink);
        }
        let span = crate::report::trace::run_span(self.loaded.name(), &snapshot.next_step);
        self.loaded.resume(snapshot, &env).instrument(span).await
    }

    /// A snapshot of a run about to perform `at` on `state`.
    pub fn snapshot(at: S, state: &PipelineState) -> Snapshot {
        Snapshot { next_step: at.id().to_owned(), state: state.clone() }
    }

    /// The state a snapshot is at.
    pub fn position(snapshot: &Snapshot) -> Result<S, CtxError> {
        S::from_id(&snapshot.next_step).ok_or_else(|| {
            PipelineError::UnknownSnapshotStep { pipeline: S::NAME.to_owned(), step: snapshot.next_step.clone() }.into()
        })
    }
}

/// Routes the run-time driver's `custom` steps to the typed backends.
struct Dispatch<'b, S, B: ?Sized> {
    backends: &'b B,
    states: PhantomData<fn() -> S>,
}

impl<S: StepMachine, B: Backends<S> + ?Sized> CustomSteps for Dispatch<'_, S, B> {
    async fn run(&self, step_id: &str, state: &mut PipelineState) -> Result<String, BoxError> {
        let step = S::from_id(step_id).ok_or_else(|| PipelineError::NotCustom { step: step_id.to_owned() })?;
        Ok(self.backends.run_custom(step, state).await?.to_owned())
    }
}

/// Whether agent step `step` declares `tool` itself (as written, before MCP servers add theirs).
fn declares<S: StepMachine>(step: S, tool: &str) -> bool {
    let def = S::definition();
    let declared = step.index().and_then(|i| match &def.steps.get(i)?.kind {
        super::definition::StepKind::Agent(agent) => Some(agent.tools.iter().any(|t| t.name == tool)),
        _ => None,
    });
    declared.unwrap_or(false)
}

impl<S: StepMachine, B: Backends<S> + ?Sized> ToolHandlers for Dispatch<'_, S, B> {
    async fn call(&self, step_id: &str, request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        let step = S::from_id(step_id)
            .ok_or_else(|| PipelineError::NotTool { step: step_id.to_owned(), tool: request.name.to_owned() })?;
        // A tool the step declares is a method of the tools trait; any other was listed by one
        // of its MCP servers when the pipeline was loaded.
        if let Some(mcp) = self.backends.mcp_tools()
            && !declares(step, request.name)
        {
            return mcp.call(step_id, request).await;
        }
        self.backends.run_tool(step, request).await
    }
}

/// A [`StepSink`] as the run-time driver takes it: the step id each piece comes with is turned
/// back into the step enum.
pub(crate) struct Typed<'k, S, K: ?Sized> {
    sink: &'k K,
    states: PhantomData<fn() -> S>,
}

impl<'k, S, K: ?Sized> Typed<'k, S, K> {
    pub(crate) fn new(sink: &'k K) -> Self {
        Typed { sink, states: PhantomData }
    }
}

impl<S: StepMachine, K: StepSink<S> + ?Sized> TokenSink for Typed<'_, S, K> {
    fn token(&self, token: Token<'_>) {
        // The driver streams only the steps of the pipeline it runs, which are this enum's (a
        // typed pipeline checks its steps match when it is built).
        if let Some(step) = S::from_id(token.step) {
            self.sink.token(Token::new(step, token.text));
        }
    }
}
