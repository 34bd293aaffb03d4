//! Pipelines: their definition as plain values, the validation of a whole definition (graph,
//! steps, contract), and the driver that runs one step at a time.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::definition`
//! (the definition and its rules) and `ctx::pipeline` (loading and running).

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
// ctx-spec, which runs nothing. Each name is listed; the facade shows them as `ctx::definition`.
pub(crate) use ctx_spec::pipeline::definition;
#[cfg(feature = "yaml")]
pub use ctx_spec::pipeline::yaml;
pub use ctx_spec::pipeline::{
    AgentSpec, CallModelSpec, CompactRuleSpec, CustomSpec, DEFAULT_USER_PARTS, END, ExpandSpec, FetchSpec,
    LoopGuardSpec, ManageBudgetSpec, McpServerSpec, ModelSource, ModelSpec, PipelineDef, PriceSpec, PromptSpec,
    SearchNodesSpec, SetRuleSpec, SetValueSpec, SetVariablesSpec, SettingsSpec, StepDef, StepKind, ToolSpec,
    UserPartSpec,
};
pub use ctx_spec::pipeline::{
    MAX_TOOL_CALLS_CAP, ModelParams, ResponseFormat, Target, Transition, ValidateOptions, definition_warnings,
    pipeline_needs_context_budget, step_renders_context, steps_taking_fetched_texts, to_dot, to_mermaid,
    validate_definition,
};
