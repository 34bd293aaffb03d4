//! Durable, distributed runs on [Restate](https://restate.dev) (feature `restate`).
//!
//! A pipeline run becomes an invocation of a Restate *virtual object* keyed by conversation: the
//! handler [`PipelineObject`]'s `ask` performs the run step by step, and each step is one
//! journaled action (`ctx.run`) whose result — the state after the step, where the run goes next
//! and the step's report — the engine records before the next step starts. When the service
//! process dies (a crash, a deploy) or the engine restarts, the engine invokes the handler again
//! and replays the journal: every recorded step returns its recorded result without running, so a
//! model call that was answered is never sent again, and the budget decisions of the replayed run
//! are the recorded ones (same counts, same transitions). Only the first step without a record runs.
//!
//! The conversation's state (its history and variables) is the object's durable state, written
//! when a run completes; a question that fails leaves it as it was. The engine runs one `ask` per
//! conversation at a time and any number of conversations at once, across every service
//! instance registered behind it.
//!
//! ```no_run
//! # async fn demo<S: ctx::pipeline::StepMachine>(
//! #     pipeline: ctx::pipeline::Pipeline<S>,
//! #     backends: impl ctx::pipeline::Backends<S> + Send + 'static,
//! # ) -> std::io::Result<()> {
//! use ctx::durable::{DurableSteps, PipelineObject};
//!
//! let object = PipelineObject::new(DurableSteps::new(pipeline, backends));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:9080").await?;
//! object.serve(listener).await; // then register http://127.0.0.1:9080 with the engine
//! # Ok(()) }
//! ```

#[doc(inline)]
pub use ctx_runtime::durable::{
    Ask, DurableSteps, PipelineObject, RunOutcome, SERVICE_NAME, StepRecord, StepRecordFuture, StepRunner,
};
