//! Durable, distributed runs on [Restate](https://restate.dev) (feature `restate`).
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::durable`.

mod service;
mod steps;

pub use service::{Ask, PipelineObject, RunOutcome, SERVICE_NAME};
pub use steps::{DurableSteps, StepRecord, StepRecordFuture, StepRunner};

#[cfg(test)]
mod tests;
