//! The driver: [`run_step`], which performs one step on a [`PipelineState`] with what the
//! caller plugged in (a [`StepEnv`]) and says which transition it took.
//!
//! A step works on a copy of the state and the copy replaces the state only when the step
//! succeeds, so a failed step leaves the state exactly as it found it (its inbox included) and
//! the run can be retried or resumed from a [`Snapshot`](super::Snapshot). The one exception is
//! the spend record ([`SpendTotals`](crate::state::SpendTotals)): what the step's model requests
//! cost before it failed stays counted.

use serde::Serialize;
use tracing::Instrument;

use crate::error::CtxError;
use crate::state::PipelineState;

use super::Target;
use super::Transition;
use super::definition::StepKind;
use super::env::StepEnv;
use super::error::PipelineError;
use super::loaded::LoadedPipeline;
use super::steps;

/// What one step did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct StepOutcome {
    /// The transition taken.
    pub transition: Transition,
    /// What happened, for traces and tests.
    pub report: StepReport,
}

/// A step's report: where it went and what it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct StepReport {
    /// The step id.
    pub step_id: String,
    /// The step's kind keyword.
    pub kind: &'static str,
    /// The transition's key (`next`, `on_over`, a custom outcome, …).
    pub transition_key: String,
    /// Where the transition leads.
    pub target: Target,
    /// The id of the step it leads to (`end` when the run ends), as the trace prints it.
    pub target_id: String,
    /// The kind-specific details.
    pub detail: steps::StepDetail,
}

/// Performs step `index` of `p` on `state`: consumes the step's inbox, runs its action, and
/// returns the transition taken. On error `state` is unchanged.
pub async fn run_step(
    p: &LoadedPipeline,
    index: usize,
    state: &mut PipelineState,
    env: &StepEnv<'_>,
) -> Result<StepOutcome, CtxError> {
    let def = p.definition();
    let step = def.steps.get(index).ok_or_else(|| PipelineError::StepIndexOutOfRange {
        pipeline: def.name.clone(),
        index,
        steps: def.steps.len(),
    })?;
    let span = tracing::info_span!(target: "ctx::pipeline", "ctx.step", pipeline = %def.name, step = %step.id, kind = step.kind.keyword());
    async {
        let mut work = state.clone();
        work.consume_inbox(&step.id);
        let done = match &step.kind {
            StepKind::SearchNodes(spec) => steps::search::search_nodes(&step.id, spec, &mut work, env).await,
            StepKind::ExpandDependencyTree(spec) => steps::search::expand(&step.id, spec, &mut work, env).await,
            StepKind::FetchNodeTexts(spec) => steps::fetch::fetch_node_texts(p, &step.id, spec, &mut work, env).await,
            StepKind::LoopGuard(spec) => steps::control::loop_guard(p, &step.id, spec, &mut work),
            StepKind::SetVariables(spec) => steps::set_variables::set_variables(&step.id, spec, &mut work),
            StepKind::Custom(spec) => steps::control::custom(&step.id, spec, &mut work, env).await,
            StepKind::CallModel(spec) => steps::call_model::call_model(p, &step.id, spec, &mut work, env).await,
            StepKind::Agent(spec) => steps::agent::agent(p, &step.id, spec, &mut work, env).await,
            StepKind::ManageContextBudget(_) => steps::budget::manage_context_budget(p, index, &step.id, &mut work),
            // `StepKind` is non-exhaustive for users; the facade pins ctx-spec and ctx-runtime to
            // one version, so this arm is only reached with mismatched crates.
            other => Err(PipelineError::UnsupportedStep { step: step.id.clone(), kind: other.keyword() }.into()),
        };
        // A failed step changes nothing, except the record of what its model requests cost:
        // money spent is not given back by a retry, and the spend caps must see it.
        let (transition, detail) = done.inspect_err(|_| state.spend = work.spend.clone())?;
        let (key, target) = p.transition(index, transition).ok_or_else(|| PipelineError::StepIndexOutOfRange {
            pipeline: def.name.clone(),
            index,
            steps: def.steps.len(),
        })?;
        *state = work;
        tracing::debug!(target: "ctx::pipeline", transition = %key, "step done");
        Ok(StepOutcome {
            transition,
            report: StepReport {
                step_id: step.id.clone(),
                kind: step.kind.keyword(),
                transition_key: key.to_owned(),
                target,
                target_id: p.target_id(target).to_owned(),
                detail,
            },
        })
    }
    .instrument(span)
    .await
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;
