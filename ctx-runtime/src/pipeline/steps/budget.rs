//! `manage_context_budget`: delegates to `budget::manage_context_budget` once it lands on main.

use crate::error::CtxError;
use crate::pipeline::definition::ManageBudgetSpec;
use crate::pipeline::error::PipelineError;
use crate::pipeline::loaded::LoadedPipeline;
use crate::state::PipelineState;

use super::Done;

pub(crate) fn manage_context_budget(
    _p: &LoadedPipeline,
    step: &str,
    _spec: &ManageBudgetSpec,
    _state: &mut PipelineState,
) -> Result<Done, CtxError> {
    Err(PipelineError::StepUnavailable { step: step.to_owned(), kind: "manage_context_budget" }.into())
}
