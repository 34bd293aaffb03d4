//! A pipeline as plain values and the rules that check it, without running anything.
//!
//! * [`PipelineDef`] and the step specs — a pipeline's definition, built by the `pipeline!`
//!   macro, decoded from a YAML file (`yaml`, feature `yaml`) or written by hand;
//!   [`schema`] lists each step kind's keys.
//! * [`validate_definition`] — every rule of a whole pipeline, all problems at once, each with
//!   the field path of the offending value; the `pipeline!` macro calls it at compile time and
//!   the runtime again when it loads a definition.
//! * [`to_mermaid`] / [`to_dot`] — diagrams.

#[doc(hidden)]
pub mod context_flow;
#[doc(hidden)]
pub mod dataflow;
pub mod decode;
pub mod definition;
pub mod evidence_flow;
#[doc(hidden)]
pub mod graph;
mod mermaid;
mod model_files;
mod produced;
#[doc(hidden)]
pub mod resolve;
mod resolve_models;
#[doc(hidden)]
pub mod run_bound;
pub mod schema;
pub mod slot;
#[doc(hidden)]
pub mod suggest;
mod transition;
mod unused;
#[doc(hidden)]
pub mod validate;
mod validate_agent;
mod validate_context;
mod validate_models;
mod validate_params;
#[doc(hidden)]
pub mod values;
#[cfg(feature = "yaml")]
#[cfg_attr(docsrs, doc(cfg(feature = "yaml")))]
pub mod yaml;

#[cfg(any(test, feature = "__test-util"))]
#[doc(hidden)]
pub mod testing;

/// The sampling parameters a model step declares.
pub use crate::params::{ModelParams, ResponseFormat};
pub use definition::{
    AgentSpec, CallModelSpec, CompactRuleSpec, CustomSpec, DEFAULT_USER_PARTS, END, ExpandSpec, FetchSpec,
    LoopGuardSpec, ManageBudgetSpec, McpServerSpec, ModelSource, ModelSpec, PipelineDef, PriceSpec, PromptSpec,
    SearchNodesSpec, SetRuleSpec, SetValueSpec, SetVariablesSpec, SettingsSpec, StepDef, StepKind, ToolSpec,
    UserPartSpec,
};
pub use evidence_flow::{pipeline_needs_context_budget, step_renders_context, steps_taking_fetched_texts};
pub use graph::{Target, variant_name};
pub use mermaid::{to_dot, to_mermaid};
pub use transition::Transition;
pub use validate::{PLACEHOLDER, ValidateOptions, definition_warnings, validate_definition};
pub use validate_agent::MAX_TOOL_CALLS_CAP;
pub use validate_models::DEFAULT_MODEL_NAME;
pub use validate_params::{MAX_TOOL_NAME_LEN, is_tool_name};
