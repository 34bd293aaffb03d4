//! Errors of running a pipeline: a step that cannot do its work names itself and what it needed;
//! and what a caller's backend returns ([`BoxError`], [`StepFuture`]).
//!
//! This file is below the crate's [`CtxError`](crate::CtxError), which wraps [`PipelineError`]:
//! nothing here names `CtxError`. A backend's error that is one of ctx's own passes through a run
//! unchanged (`CtxError::from_backend`, beside `CtxError`).

use std::future::Future;
use std::pin::Pin;

use crate::codes::{Code, ErrorCode};
use crate::llm::ModelError;
use crate::negotiate::NegotiationError;

/// The error a caller's backend returns: a [`NodeSearch`](super::NodeSearch), a
/// [`NodeStore`](super::NodeStore), a custom step or a tool (of a `pipeline!` pipeline's traits or
/// of [`CustomSteps`](super::CustomSteps) and [`ToolHandlers`](super::ToolHandlers)). Any
/// `std::error::Error + Send + Sync` converts into it with `?`, a [`CtxError`](crate::CtxError)
/// included (which then keeps its own code), and so does a `String` or `&str`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A future a custom step or a tool returns through [`Backends::run_custom`](super::Backends::run_custom)
/// and [`Backends::run_tool`](super::Backends::run_tool), and what the object-safe twins of the
/// backend traits return: the caller's own error, as for every backend.
pub type StepFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send + 'a>>;

/// What went wrong while loading or running a pipeline.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// `run_step` was asked for a step index the pipeline does not have.
    #[error("pipeline `{pipeline}` has {steps} step(s); there is no step at index {index}")]
    StepIndexOutOfRange {
        /// The pipeline's name.
        pipeline: String,
        /// The index asked for.
        index: usize,
        /// How many steps there are.
        steps: usize,
    },
    /// The step's kind is newer than this runtime: `ctx-spec` and `ctx-runtime` of different
    /// versions (they are released together; the facade pins both).
    #[error(
        "step `{step}`: this ctx-runtime cannot run `{kind}` steps; use ctx-spec and ctx-runtime of the same version"
    )]
    UnsupportedStep {
        /// The step id.
        step: String,
        /// The step's kind keyword.
        kind: &'static str,
    },
    /// A snapshot names a step the pipeline does not have.
    #[error("snapshot resumes at step `{step}`, which pipeline `{pipeline}` does not have")]
    UnknownSnapshotStep {
        /// The pipeline's name.
        pipeline: String,
        /// The step id in the snapshot.
        step: String,
    },
    /// A model step could not assemble the declared context it names (a retriever failed, the
    /// fixed messages exceed the input budget, a template value is not text, …); the code is the
    /// engine's.
    #[error("step `{step}`: assembling its context: {source}")]
    Context {
        /// The step id.
        step: String,
        /// The engine's error.
        source: Box<crate::engine::EngineError>,
    },
    /// A step needs a backend that the [`StepEnv`](super::StepEnv) does not hold.
    #[error(
        "step `{step}` ({kind}) needs a {backend}, but the StepEnv has none; add one with StepEnv::builder().{setter}(…)"
    )]
    MissingBackend {
        /// The step id.
        step: String,
        /// The step's kind keyword.
        kind: &'static str,
        /// The trait it needs (`NodeSearch`, `NodeStore`, `ChatModel`, `CustomSteps`).
        backend: &'static str,
        /// The builder method that adds it.
        setter: &'static str,
    },
    /// A step uses a named model (`model: NAME`) for which the [`StepEnv`](super::StepEnv) holds
    /// no client.
    #[error(
        "step `{step}` ({kind}) uses model `{model}`, but the StepEnv has no ChatModel named `{model}`; add it with \
         StepEnv::builder().models(&[(\"{model}\", &client)])"
    )]
    MissingModel {
        /// The step id.
        step: String,
        /// The step's kind keyword.
        kind: &'static str,
        /// The model's name in `models { … }`.
        model: String,
    },
    /// The caller's search, store or custom-step backend failed with an error of its own.
    #[error("step `{step}`: {backend} failed: {source}")]
    Backend {
        /// The step id.
        step: String,
        /// Which backend (`NodeSearch::search`, `NodeStore::texts`, …).
        backend: &'static str,
        /// The backend's error.
        #[source]
        source: BoxError,
    },
    /// A custom step returned an outcome it did not declare.
    #[error("custom step `{step}` returned outcome `{outcome}`, which it does not declare (declared: {declared})")]
    UnknownOutcome {
        /// The step id.
        step: String,
        /// The outcome returned.
        outcome: String,
        /// The declared outcomes, comma-separated.
        declared: String,
    },
    /// A custom step changed `loop_counts`, which would void the termination proof.
    #[error(
        "custom step `{step}` changed state.loop_counts; only loop_guard steps may change them, \
         because the proof that every run ends counts on them"
    )]
    LoopCountsChanged {
        /// The step id.
        step: String,
    },
    /// A `user_parts` source or `set_variables` `from` names nothing in the state.
    #[error("step `{step}` reads `{source_name}`, which is neither a state field nor a variable set so far")]
    MissingSource {
        /// The step id.
        step: String,
        /// The field or variable name.
        source_name: String,
    },
    /// A `set_variables` rule met a value it cannot store or transform.
    #[error("step `{step}`, rule {rule} (set `{target}`): {reason}")]
    SetVariable {
        /// The step id.
        step: String,
        /// The rule's index in `rules`.
        rule: usize,
        /// The field or variable being set.
        target: String,
        /// Why it failed, naming the value's type.
        reason: String,
    },
    /// A tool call's arguments do not parse as the handler's type.
    #[error("step `{step}`: the arguments of call `{call_id}` to tool `{tool}` do not fit the tool's type: {reason}")]
    ToolArguments {
        /// The agent step's id.
        step: String,
        /// The tool.
        tool: String,
        /// The call.
        call_id: String,
        /// What did not fit.
        reason: String,
    },
    /// A tool handler failed; the step changed nothing.
    #[error("step `{step}`: tool `{tool}` failed on call `{call_id}`: {source}")]
    Tool {
        /// The agent step's id.
        step: String,
        /// The tool.
        tool: String,
        /// The call.
        call_id: String,
        /// The handler's error.
        #[source]
        source: BoxError,
    },
    /// The model answered a request that offered no tools with tool calls, so the step has no
    /// answer to keep.
    #[error(
        "step `{step}`: the model requested {calls} tool call(s) after the limit of {max_tool_calls} was reached and no tools were offered; it gave no answer text"
    )]
    ToolCallsAfterLimit {
        /// The agent step's id.
        step: String,
        /// How many calls it requested.
        calls: usize,
        /// The step's `max_tool_calls`.
        max_tool_calls: u32,
    },
    /// Budgeting a tool call of an agent step failed.
    #[error("step `{step}`: {source}")]
    Turn {
        /// The agent step's id.
        step: String,
        /// What the turn ledger found.
        #[source]
        source: crate::turn::TurnError,
    },
    /// A `call_model` step's prompt has no text (it was to be provided at load time).
    #[error("step `{step}` uses prompt `{key}`, which has no text; provide it with LoadOptions::prompt(\"{key}\", …)")]
    PromptWithoutText {
        /// The step id.
        step: String,
        /// The prompt key.
        key: String,
    },
    /// The chat model failed.
    #[error("step `{step}`: {source}")]
    Model {
        /// The step id.
        step: String,
        /// The model's error (boxed: it is large, and errors travel in every `Result`).
        #[source]
        source: Box<ModelError>,
    },
    /// Output negotiation failed for a `call_model` step: most often its request leaves no room
    /// for the output floor even with the whole history dropped.
    #[error("step `{step}`: {source}")]
    Negotiation {
        /// The step id.
        step: String,
        /// What negotiation found.
        #[source]
        source: NegotiationError,
    },
    /// A prompt file given to [`LoadOptions::prompt_file`](super::LoadOptions::prompt_file) could not be read.
    #[error("prompt `{key}`: cannot read `{path}`: {source}")]
    PromptFile {
        /// The prompt key.
        key: String,
        /// The file's path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A step's configuration was not resolved, because the pipeline was not built by
    /// [`LoadedPipeline::load`](super::LoadedPipeline::load).
    #[error("step `{step}` of pipeline `{pipeline}` has no resolved configuration")]
    NotResolved {
        /// The pipeline's name.
        pipeline: String,
        /// The step id.
        step: String,
    },
    /// A typed pipeline's environment was asked to run a step that is not one of its custom
    /// steps (a hand-written [`Backends`](super::Backends) implementation, or a step enum that
    /// does not match the loaded pipeline).
    #[error("step `{step}` is not a custom step of this pipeline's environment")]
    NotCustom {
        /// The step id.
        step: String,
    },
    /// A typed pipeline's environment was asked to run a tool for a step that is not one of its
    /// agent steps, or a tool it does not declare.
    #[error("step `{step}` has no tool `{tool}` in this pipeline's environment")]
    NotTool {
        /// The step id.
        step: String,
        /// The tool asked for.
        tool: String,
    },
    /// A run took more steps than the termination bound proven at load time: the state's loop
    /// counts were changed from outside the pipeline during the run.
    #[error(
        "pipeline `{pipeline}` ran {bound} steps without ending, the most its loop guards allow; \
         state.loop_counts must not be reset during a run"
    )]
    StepBoundExceeded {
        /// The pipeline's name.
        pipeline: String,
        /// The proven bound.
        bound: u64,
    },
    /// A model request could pass a spend cap: priced at its exact prompt plus its whole output
    /// limit, each times its billed-to-counted ratio, at the highest input rate and the output
    /// rate ([`WorstRequest`](super::WorstRequest)), it costs more than the run or the
    /// conversation has left. It was not sent; the step changed nothing but the spend record
    /// ([`SpendTotals`](crate::state::SpendTotals)). Amounts are billionths of a US dollar.
    #[error(
        "{}",
        super::spend::cap_message(
            .step,
            *.scope,
            (*.cap_nano_usd, *.spent_nano_usd),
            .worst
        )
    )]
    SpendCapReached {
        /// The step whose request was not sent.
        step: String,
        /// The cap it could have passed.
        scope: super::CapScope,
        /// That cap.
        cap_nano_usd: u64,
        /// What was spent under it (what is left is `cap_nano_usd - spent_nano_usd`).
        spent_nano_usd: u64,
        /// What the request could have cost.
        request_nano_usd: u64,
        /// The request's exact prompt tokens.
        prompt_tokens: usize,
        /// Its output limit.
        max_output_tokens: usize,
        /// How its worst case was priced: the ratios, the tokens and the rates.
        worst: Box<super::WorstRequest>,
    },
    /// A model step that renders `context_blocks` found fetched texts waiting in `node_texts`
    /// and appends them before it renders (as `manage_context_budget` would on `on_ok`), but they
    /// do not fit beside the context already there within `max_context_tokens`. Nothing was
    /// sent; the state is unchanged.
    #[error(
        "step `{step}` renders the context, and the {nodes} fetched node(s) waiting in node_texts would take it \
         from {context_tokens} to {candidate_tokens} tokens, over settings.max_context_tokens \
         ({max_context_tokens}); nothing was sent. Add a manage_context_budget step between the fetch and `{step}` \
         whose on_over makes room (a summary, a reset of the context), or lower evidence_tokens"
    )]
    EvidenceOverBudget {
        /// The model step.
        step: String,
        /// How many nodes were waiting.
        nodes: usize,
        /// The exact tokens of the rendered context before them.
        context_tokens: usize,
        /// The exact tokens of the rendered context with them appended.
        candidate_tokens: usize,
        /// The global budget in effect.
        max_context_tokens: usize,
    },
    /// A run-time input counts more tokens than its budget in the contract (see
    /// [`LoadedPipeline::check_inputs`](super::LoadedPipeline::check_inputs)): nothing was sent
    /// and the state is unchanged.
    #[error(
        "{}{} is {tokens} tokens, over its budget of {budget} ({origin}); {}",
        .step.as_ref().map(|s| format!("step `{s}` would carry ")).unwrap_or_default(),
        input_label(.input),
        if .step.is_some() { "the request was not sent" } else { "the run was refused before any request, and nothing changed" }
    )]
    InputOverBudget {
        /// The step whose request would have carried it; `None` when the run was refused before
        /// its first step.
        step: Option<String>,
        /// The input: `user_question`, a variable's name, `last_model_response`, …
        input: String,
        /// Its exact count, with the counter of the step's model.
        tokens: usize,
        /// Its budget.
        budget: usize,
        /// Where the budget comes from (`max_question_tokens`, the default, …).
        origin: String,
    },
}

/// `the question (`user_question`)`, `variable `ticket``, `` `last_model_response` ``.
fn input_label(input: &str) -> String {
    match crate::contract::InputKind::of(input) {
        crate::contract::InputKind::Question => format!("the question (`{input}`)"),
        crate::contract::InputKind::Variable => format!("variable `{input}`"),
        _ => format!("`{input}`"),
    }
}

impl ErrorCode for PipelineError {
    fn code(&self) -> Code {
        match self {
            PipelineError::StepIndexOutOfRange { .. } => Code::PipelineStepIndex,
            PipelineError::UnknownSnapshotStep { .. } => Code::PipelineUnknownSnapshotStep,
            PipelineError::UnsupportedStep { .. } => Code::PipelineUnsupportedStep,
            PipelineError::MissingBackend { .. } => Code::PipelineMissingBackend,
            PipelineError::MissingModel { .. } => Code::PipelineMissingModel,
            PipelineError::Backend { .. } => Code::PipelineBackendFailed,
            PipelineError::UnknownOutcome { .. } => Code::PipelineUnknownOutcome,
            PipelineError::LoopCountsChanged { .. } => Code::PipelineLoopCountsChanged,
            PipelineError::MissingSource { .. } => Code::PipelineMissingSource,
            PipelineError::SetVariable { .. } => Code::PipelineSetVariable,
            PipelineError::PromptWithoutText { .. } => Code::PipelinePromptWithoutText,
            PipelineError::Model { source, .. } => source.code(),
            PipelineError::Negotiation { source, .. } => source.code(),
            PipelineError::PromptFile { .. } => Code::PipelinePromptFile,
            PipelineError::StepBoundExceeded { .. } => Code::PipelineStepBoundExceeded,
            PipelineError::NotResolved { .. } => Code::PipelineNotResolved,
            PipelineError::NotCustom { .. } => Code::PipelineNotCustom,
            PipelineError::ToolArguments { .. } => Code::AgentToolArguments,
            PipelineError::Tool { .. } => Code::AgentToolFailed,
            PipelineError::ToolCallsAfterLimit { .. } => Code::AgentToolCallsAfterLimit,
            PipelineError::Turn { source, .. } => source.code(),
            PipelineError::NotTool { .. } => Code::PipelineNotTool,
            PipelineError::SpendCapReached { .. } => Code::PipelineSpendCapReached,
            PipelineError::EvidenceOverBudget { .. } => Code::PipelineEvidenceOverBudget,
            PipelineError::InputOverBudget { .. } => Code::PipelineInputOverBudget,
            PipelineError::Context { source, .. } => source.code(),
        }
    }
}
