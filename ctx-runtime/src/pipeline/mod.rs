//! Pipelines: their definition as plain values, the validation of a whole definition (graph,
//! steps, contract), and the driver that runs one step at a time.

pub mod definition;

pub use definition::*;
