//! Pipelines: their definition as plain values, the validation of a whole definition (graph,
//! steps, contract), and the driver that runs one step at a time.

pub mod definition;
mod error;
mod graph;
mod suggest;
mod validate;
mod values;

#[cfg(test)]
pub(crate) mod testing;

pub use definition::*;
pub use error::{BoxError, PipelineError};
pub use graph::{Target, variant_name};
pub use validate::{PLACEHOLDER, ValidateOptions, validate_definition};
