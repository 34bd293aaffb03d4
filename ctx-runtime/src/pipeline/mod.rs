//! Pipelines: their definition as plain values, the validation of a whole definition (graph,
//! steps, contract), and the driver that runs one step at a time.
//!
//! * [`validate_definition`] — every rule of a whole pipeline, all problems at once, each with
//!   the field path of the offending value; the `pipeline!` macro calls it at compile time.
//! * [`LoadedPipeline`] — a validated pipeline with its limits resolved; [`run_step`] performs
//!   one step, [`LoadedPipeline::resume`] runs a [`Snapshot`] to the end.
//! * [`Pipeline`] — the typed driver of a `pipeline!` pipeline: its step enum implements
//!   [`StepMachine`] and its environment struct [`Backends`].
//! * [`Conversation`] — a typed pipeline asked question after question, history and variables
//!   carried over, and the context when the pipeline sets `carry_context`
//!   ([`LoadedConversation`] for a pipeline loaded at run time); [`StepSink`] and [`TokenSink`]
//!   stream the model replies of a run.
//! * [`StepReport::trace`] — a run's budget trace as text ([`Trace`]): one line per step with
//!   the report's figures, and what happened to each node, trimmed history and tool call under it
//!   (each [`StepReport`] and [`StepDetail`] is `Display` too; `{:#}` adds those lines).
//! * [`to_mermaid`] / [`to_dot`] — diagrams.
//! * `yaml` (feature `yaml`) — the specification's YAML pipeline files, loaded into a
//!   [`PipelineDef`] with every problem located by file, line and column.
//! * [`ToolHandlers`] — what runs the tool calls of an `agent` step ([`AgentSpec`]): the model is
//!   offered the declared tools, each call is budgeted by the turn ledger and answered through a
//!   handler, at most `max_tool_calls` of them, every request guarded against the window:
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

mod conversation;
mod display;
pub mod driver;
mod env;
mod error;
mod inputs;
mod load;
mod loaded;
mod machine;
pub(crate) mod mcp_listing;
mod run;
mod spend;
pub mod steps;
// ctx-spec's `testing` builders (feature `__test-util`) and `loaded`.
mod stream;
#[cfg(test)]
pub(crate) mod testing;
mod tools;

pub use conversation::{Answer, Conversation, LoadedConversation};
pub use display::Trace;
pub use driver::{StepOutcome, StepReport, run_step};
pub use env::{CustomSteps, CustomStepsDyn, NamedModels, NodeSearch, NodeSearchDyn, NodeStore, NodeStoreDyn, StepEnv};
pub use error::{BoxError, PipelineError, StepFuture};
pub use load::LoadOptions;
pub use loaded::{LoadedPipeline, StepModelRef};
pub use machine::{Backends, Pipeline, StepMachine};
pub use run::Snapshot;
pub use spend::{BUDGET_REMAINING_USD, CapScope, SpendCaps, WorstRequest};
pub use steps::{
    AgentEnd, AgentReport, CallReport, FetchReport, MIN_TRUNCATED_TOKENS, ModelRequestReport, OUTPUT_FLOOR_TOKENS,
    SentRequest, SkipReason, SkippedNode, StepDetail, TOOL_LIMIT_MESSAGE, TRUNCATED_METADATA_KEY, ToolCallKind,
    ToolCallReport, TruncatedNode,
};
pub use stream::{StepSink, Token, TokenSink};
pub use tools::{ToolHandlers, ToolHandlersDyn, ToolOutput, ToolRequest};

// The vocabulary and the rules of a pipeline (its definition, schema, transitions, values and
// validation, the YAML front end) are what the `pipeline!` macro checks with: they live in
// ctx-spec, which runs nothing.
pub use ctx_spec::pipeline::definition::{self, *};
#[cfg(feature = "yaml")]
pub use ctx_spec::pipeline::yaml;
pub use ctx_spec::pipeline::{
    MAX_TOOL_CALLS_CAP, ModelParams, ResponseFormat, Target, Transition, ValidateOptions, definition_warnings,
    pipeline_needs_context_budget, step_renders_context, steps_taking_fetched_texts, to_dot, to_mermaid,
    validate_definition,
};
