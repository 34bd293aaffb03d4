//! Loading and running pipelines: a definition ([`crate::definition`]) made a [`LoadedPipeline`]
//! or the typed [`Pipeline`] of a `pipeline!`, the driver that runs one step at a time, and what
//! each step reports.
//!
//! * [`LoadedPipeline`] — a validated pipeline with its limits resolved ([`LoadOptions`]);
//!   [`LoadedPipeline::resume`] runs a [`Snapshot`] to the end.
//! * [`Pipeline`] — the typed driver of a `pipeline!` pipeline: its step enum implements
//!   [`StepMachine`] and its environment struct [`Backends`]; a pipeline loaded at run time
//!   takes its backends as a [`StepEnv`]. [`Pipeline::step`] performs one step.
//! * [`Conversation`] — a typed pipeline asked question after question, history and variables
//!   carried over, and the context when the pipeline sets `carry_context`
//!   ([`LoadedConversation`] for a pipeline loaded at run time); [`StepSink`] and [`TokenSink`]
//!   stream the model replies of a run.
//! * [`StepReport::trace`] — a run's budget trace as text ([`Trace`]): one line per step with
//!   the report's figures, and what happened to each node, trimmed history and tool call under it
//!   (each [`StepReport`] and [`StepDetail`] is `Display` too; `{:#}` adds those lines).
//! * `yaml` (feature `yaml`) — the specification's YAML pipeline files, loaded into a
//!   [`PipelineDef`](crate::definition::PipelineDef) with every problem located by file, line
//!   and column.
//! * [`ToolHandlers`] — what runs the tool calls of an `agent` step
//!   ([`AgentSpec`](crate::definition::AgentSpec)): the model is offered the declared tools, each
//!   call is budgeted by the turn ledger and answered through a handler, at most
//!   `max_tool_calls` of them, every request guarded against the window:
//!
//! ```text
//! answer: agent {
//!     prompt_key: answer,
//!     tools: [ search_docs { description: "Search the docs",
//!                            parameters: r#"{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}"# } ],
//!     max_tool_calls: 4,
//!     max_output_tokens: 600,
//!     user_parts: [ user_question => "{}" ],
//!     use_history: true,
//!     next: end,
//! }
//! ```

// A definition loaded: checked once, its limits resolved.
#[doc(inline)]
pub use ctx_runtime::pipeline::{BoxError, LoadOptions, LoadedPipeline, PipelineError, StepModelRef};
// The typed driver of a `pipeline!`, and the backends a run calls.
#[doc(inline)]
pub use ctx_runtime::pipeline::{
    Backends, CustomSteps, CustomStepsDyn, NamedModels, NodeSearch, NodeSearchDyn, NodeStore, NodeStoreDyn, Pipeline,
    StepEnv, StepFuture, StepMachine, ToolHandlers, ToolHandlersDyn, ToolOutput, ToolRequest,
};
// Question after question; the replies as they stream.
#[doc(inline)]
pub use ctx_runtime::pipeline::{Answer, Conversation, LoadedConversation, StepSink, Token, TokenSink};
// A run saved and resumed, its trace, and its spending caps.
#[doc(inline)]
pub use ctx_runtime::pipeline::{CapScope, Snapshot, SpendCaps, StepReport, Trace, WorstRequest};
// What each step reports.
#[doc(inline)]
pub use ctx_runtime::pipeline::{
    AgentEnd, AgentReport, CallReport, FetchReport, ModelRequestReport, SentRequest, SkipReason, SkippedNode,
    StepDetail, ToolCallKind, ToolCallReport, TruncatedNode,
};
// Pipeline files (feature `yaml`).
#[cfg(feature = "yaml")]
#[cfg_attr(docsrs, doc(cfg(feature = "yaml")))]
#[doc(inline)]
pub use ctx_runtime::pipeline::yaml;
