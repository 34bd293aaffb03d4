//! Whole runs: a [`Snapshot`] says where a run is (the next step and the state), so a run can
//! be persisted after any step and resumed later, in another process if need be.

use serde::{Deserialize, Serialize};
use tracing::Instrument as _;

use crate::error::CtxError;
use crate::state::PipelineState;

use super::Target;
use super::definition::END;
use super::driver::{StepReport, run_step};
use super::env::StepEnv;
use super::error::PipelineError;
use super::loaded::LoadedPipeline;

/// Where a run is: the step to perform next (a step id, or `end`) and the state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Snapshot {
    /// The id of the next step, or `"end"` when the run is over.
    pub next_step: String,
    /// The state before that step.
    pub state: PipelineState,
}

impl Snapshot {
    /// A run at step `next_step` (a step id, or `"end"`) with `state`, as saved earlier; a new
    /// run starts with [`Snapshot::start`].
    pub fn new(next_step: impl Into<String>, state: PipelineState) -> Self {
        Snapshot { next_step: next_step.into(), state }
    }

    /// A new run of `p` on `state`, at its first step. The state's `loop_counts` and the run's
    /// spend are cleared: loop limits and `max_cost_per_run` are per run (per question), while
    /// the history, the variables and the conversation's spend carry over.
    pub fn start(p: &LoadedPipeline, mut state: PipelineState) -> Self {
        state.loop_counts.clear();
        state.spend = state.spend.for_new_run();
        Snapshot { next_step: p.first_step().to_owned(), state }
    }

    /// Whether the run has reached `end`.
    pub fn is_finished(&self) -> bool {
        self.next_step == END
    }
}

impl LoadedPipeline {
    /// Performs the snapshot's next step and moves it on. Returns `None` when the run was
    /// already over. On error the snapshot is unchanged, so the step can be retried.
    pub async fn advance(&self, snapshot: &mut Snapshot, env: &StepEnv<'_>) -> Result<Option<StepReport>, CtxError> {
        if snapshot.is_finished() {
            return Ok(None);
        }
        let index = self.step_index(&snapshot.next_step).ok_or_else(|| PipelineError::UnknownSnapshotStep {
            pipeline: self.name().to_owned(),
            step: snapshot.next_step.clone(),
        })?;
        let outcome = run_step(self, index, &mut snapshot.state, env).await?;
        snapshot.next_step = match outcome.report.target {
            Target::End => END.to_owned(),
            t => self.target_id(t).to_owned(),
        };
        Ok(Some(outcome.report))
    }

    /// Runs from the snapshot to `end` and returns every step's report. On error the snapshot
    /// is at the failed step, with the state that step found: fix the cause and call again.
    /// A question or variable over its budget ([`Self::check_inputs`]) stops it before any step.
    ///
    /// The run cannot take more than [`Self::step_bound`] steps (every cycle passes a
    /// loop_guard); should it, because `loop_counts` were reset from outside, it stops with
    /// [`PipelineError::StepBoundExceeded`].
    pub async fn resume(&self, snapshot: &mut Snapshot, env: &StepEnv<'_>) -> Result<Vec<StepReport>, CtxError> {
        // The question and the variables within their budgets, or no request at all.
        if !snapshot.is_finished() {
            self.check_inputs(&snapshot.state)?;
        }
        let mut reports = Vec::new();
        let mut steps: u64 = 0;
        while !snapshot.is_finished() {
            if steps >= self.step_bound() {
                return Err(PipelineError::StepBoundExceeded {
                    pipeline: self.name().to_owned(),
                    bound: self.step_bound(),
                }
                .into());
            }
            if let Some(report) = self.advance(snapshot, env).await? {
                reports.push(report);
            }
            steps += 1;
        }
        Ok(reports)
    }

    /// Runs a new question from the first step to `end` (see [`Snapshot::start`]) and returns
    /// the final state with every step's report.
    pub async fn run(
        &self,
        state: PipelineState,
        env: &StepEnv<'_>,
    ) -> Result<(PipelineState, Vec<StepReport>), CtxError> {
        let mut snapshot = Snapshot::start(self, state);
        let span = crate::report::trace::run_span(self.name(), &snapshot.next_step);
        let reports = self.resume(&mut snapshot, env).instrument(span).await?;
        Ok((snapshot.state, reports))
    }
}
