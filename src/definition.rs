//! A pipeline's definition as plain values, and the rules that check one, apart from loading
//! and running it ([`mod@crate::pipeline`]).
//!
//! * [`PipelineDef`] and its parts: the model ([`ModelSource`], [`ModelSpec`], [`PriceSpec`]),
//!   the settings ([`SettingsSpec`]), the prompts ([`PromptSpec`]) and the steps ([`StepDef`]:
//!   an id, a [`StepKind`] holding one `…Spec` per step kind, and [`Transition`]s to a
//!   [`Target`]). The `pipeline!` macro builds one (the generated type's `definition()`), a YAML
//!   file decodes into one (`pipeline::yaml`, feature `yaml`), and a program writes one by hand
//!   with each struct's constructor and setters (they are `#[non_exhaustive]`).
//! * [`validate_definition`] — every rule of a whole pipeline, all problems at once, each with
//!   the field path of the offending value; the `pipeline!` macro calls it at compile time and
//!   [`LoadedPipeline::load`](crate::pipeline::LoadedPipeline::load) again when it loads a
//!   definition. [`LoadedPipeline::warnings`](crate::pipeline::LoadedPipeline::warnings) lists what is
//!   legal but probably not meant.
//! * [`steps_taking_fetched_texts`] — which model steps append the texts a `fetch_node_texts`
//!   step fetched to the context before their request.
//! * [`to_mermaid`] / [`to_dot`] — diagrams.
//!
//! A model step's sampling parameters are [`ModelParams`](crate::llm::ModelParams).

// The definition: plain values, each with a constructor and setters.
#[doc(inline)]
pub use ctx_runtime::pipeline::{
    AgentSpec, CallModelSpec, CompactRuleSpec, CustomSpec, END, ExpandSpec, FetchSpec, LoopGuardSpec, ManageBudgetSpec,
    McpServerSpec, ModelSource, ModelSpec, PipelineDef, PriceSpec, PromptSpec, SearchNodesSpec, SetRuleSpec,
    SetValueSpec, SetVariablesSpec, SettingsSpec, StepDef, StepKind, ToolSpec, UserPartSpec,
};
// Its transitions, and the rules that check it.
#[doc(inline)]
pub use ctx_runtime::pipeline::{
    Target, Transition, ValidateOptions, steps_taking_fetched_texts, to_dot, to_mermaid, validate_definition,
};
