//! `manage_context_budget`: the `budget` module's action, with the configuration validated at
//! load time and the global budget in effect (possibly clamped by the contract).

use crate::budget::{self, BudgetDecision};
use crate::error::CtxError;
use crate::pipeline::Transition;
use crate::pipeline::loaded::LoadedPipeline;
use crate::state::PipelineState;

use super::report::{Done, StepDetail};

pub(crate) fn manage_context_budget(
    p: &LoadedPipeline,
    index: usize,
    step: &str,
    state: &mut PipelineState,
) -> Result<Done, CtxError> {
    let cfg = p.budget_config(index, step)?;
    let report =
        budget::manage_context_budget_with(step, cfg, p.max_context_tokens(), state, p.counter(), p.budget_options())?;
    let transition = match report.decision {
        BudgetDecision::Ok => Transition::OnOk,
        BudgetDecision::Over => Transition::OnOver,
    };
    Ok((transition, StepDetail::ManageContextBudget(report)))
}
