//! The journaled unit: one step of a typed pipeline, from a [`Snapshot`] to the next one, with the
//! step's report as plain JSON so that the engine can record it and hand it back on replay.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::CtxError;
use crate::pipeline::{Backends, Pipeline, PipelineError, Snapshot, StepMachine};
use crate::state::PipelineState;

/// What the engine records for one step: the snapshot after it and its report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StepRecord {
    /// Where the run goes next and the state after the step.
    pub snapshot: Snapshot,
    /// The step's [`StepReport`](crate::pipeline::StepReport), serialised.
    pub report: Value,
}

/// A future returned by [`StepRunner::step`].
pub type StepRecordFuture<'a> = Pin<Box<dyn Future<Output = Result<StepRecord, CtxError>> + Send + 'a>>;

/// A pipeline and its backends as the durable service drives them: one step at a time, from a
/// snapshot. Object safe, so one service type serves any pipeline; [`DurableSteps`] implements it
/// for a `pipeline!` pipeline.
pub trait StepRunner: Send + Sync + 'static {
    /// The pipeline's name.
    fn name(&self) -> &str;

    /// A new run on `state`, at the first step (see [`Snapshot::start`]).
    fn start(&self, state: PipelineState) -> Snapshot;

    /// The state a new question starts from, given what the conversation kept (see
    /// [`LoadedPipeline::follow_up`](crate::pipeline::LoadedPipeline::follow_up)): the history,
    /// the variables, and the context when the pipeline carries it.
    fn follow_up(&self, kept: Option<&PipelineState>, question: String) -> PipelineState;

    /// The most steps a run can take (the proven `step_bound`).
    fn step_bound(&self) -> u64;

    /// Performs the snapshot's next step. The snapshot must not be finished.
    fn step<'a>(&'a self, snapshot: &'a Snapshot) -> StepRecordFuture<'a>;
}

/// A `pipeline!` pipeline with the backends its steps use, owned so that a service can hold it
/// for its whole life. The backends (the model client, the tokenizer and its count cache inside
/// the loaded pipeline) are shared by every run the service performs.
pub struct DurableSteps<S, B> {
    pipeline: Pipeline<S>,
    backends: B,
}

// The backends are the user's (model clients holding keys): only the pipeline is shown.
impl<S: StepMachine, B> std::fmt::Debug for DurableSteps<S, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableSteps").field("pipeline", &self.pipeline).finish_non_exhaustive()
    }
}

impl<S: StepMachine, B: Backends<S> + Send + 'static> DurableSteps<S, B> {
    /// Runs `pipeline` with `backends`.
    pub fn new(pipeline: Pipeline<S>, backends: B) -> Self {
        DurableSteps { pipeline, backends }
    }

    /// The pipeline.
    pub fn pipeline(&self) -> &Pipeline<S> {
        &self.pipeline
    }

    /// The backends.
    pub fn backends(&self) -> &B {
        &self.backends
    }

    async fn record(&self, snapshot: &Snapshot) -> Result<StepRecord, CtxError> {
        let at = Pipeline::<S>::position(snapshot)?;
        let mut state = snapshot.state.clone();
        let (next, report) = self.pipeline.step_with_report(at, &mut state, &self.backends).await?;
        let report = report.ok_or_else(|| PipelineError::UnknownSnapshotStep {
            pipeline: S::NAME.to_owned(),
            step: snapshot.next_step.clone(),
        })?;
        // A report is plain data (strings, numbers, enums); serialising it cannot fail, but a
        // failure would still be an error of this step rather than a panic.
        let report = serde_json::to_value(&report).map_err(|e| PipelineError::Backend {
            step: snapshot.next_step.clone(),
            backend: "the durable journal (serialising the step report)",
            source: Box::new(e),
        })?;
        Ok(StepRecord { snapshot: Pipeline::<S>::snapshot(next, &state), report })
    }
}

impl<S: StepMachine, B: Backends<S> + Send + 'static> StepRunner for DurableSteps<S, B> {
    fn name(&self) -> &str {
        S::NAME
    }

    fn start(&self, state: PipelineState) -> Snapshot {
        Snapshot::start(self.pipeline.pipeline(), state)
    }

    fn follow_up(&self, kept: Option<&PipelineState>, question: String) -> PipelineState {
        self.pipeline.pipeline().follow_up(kept, question)
    }

    fn step_bound(&self) -> u64 {
        self.pipeline.pipeline().step_bound()
    }

    fn step<'a>(&'a self, snapshot: &'a Snapshot) -> StepRecordFuture<'a> {
        Box::pin(self.record(snapshot))
    }
}
