//! Pipelines: their definition as plain values, the validation of a whole definition (graph,
//! steps, contract), and the driver that runs one step at a time.
//!
//! * [`validate_definition`] — every rule of a whole pipeline, all problems at once, each with
//!   the field path of the offending value; the `pipeline!` macro calls it at compile time.
//! * [`LoadedPipeline`] — a validated pipeline with its limits resolved; [`run_step`] performs
//!   one step, [`LoadedPipeline::resume`] runs a [`Snapshot`] to the end.
//! * [`Pipeline`] — the typed driver of a `pipeline!` pipeline: its step enum implements
//!   [`StepMachine`] and its environment struct [`Backends`].
//! * [`to_mermaid`] / [`to_dot`] — diagrams.

pub mod definition;
mod driver;
mod error;
mod graph;
mod load;
mod loaded;
mod machine;
mod mermaid;
mod resolve;
mod run;
pub mod schema;
mod steps;
mod suggest;
mod transition;
mod validate;
mod values;

#[cfg(test)]
pub(crate) mod testing;

pub use definition::*;
pub use driver::{CustomSteps, NodeSearch, NodeStore, StepEnv, StepOutcome, StepReport, run_step};
pub use error::{BoxError, PipelineError};
pub use graph::{GRAPH_WIDE_CODES, Target, variant_name};
pub use load::LoadOptions;
pub use loaded::LoadedPipeline;
pub use machine::{Backends, Pipeline, StepFuture, StepMachine};
pub use mermaid::{to_dot, to_mermaid};
pub use run::Snapshot;
pub use steps::{
    CallReport, FetchReport, MIN_TRUNCATED_TOKENS, OUTPUT_FLOOR_TOKENS, SkipReason, SkippedNode, StepDetail,
    TRUNCATED_METADATA_KEY, TruncatedNode,
};
pub use transition::Transition;
pub use validate::{PLACEHOLDER, ValidateOptions, validate_definition};
