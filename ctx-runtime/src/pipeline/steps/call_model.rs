//! `call_model`: renders the prompt, guards the request against the window, calls the model.
//!
//! Waits for the contract functions (`contract::render_user_message`, `prompt_messages`,
//! `guard_request`) and `history::trim_history` to land on main.

use crate::error::CtxError;
use crate::pipeline::definition::CallModelSpec;
use crate::pipeline::driver::StepEnv;
use crate::pipeline::error::PipelineError;
use crate::pipeline::loaded::LoadedPipeline;
use crate::state::PipelineState;

use super::Done;

pub(crate) async fn call_model(
    _p: &LoadedPipeline,
    step: &str,
    _spec: &CallModelSpec,
    _state: &mut PipelineState,
    _env: &StepEnv<'_>,
) -> Result<Done, CtxError> {
    Err(PipelineError::StepUnavailable { step: step.to_owned(), kind: "call_model" }.into())
}
