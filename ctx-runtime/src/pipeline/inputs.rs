//! The run-time inputs held to their budgets: every value a step renders into its user message
//! besides the context term (the question, a variable, an earlier reply) has a budget in the
//! contract ([`contract::inputs`](crate::contract::inputs)), and a value over it never reaches a
//! request.
//!
//! * [`LoadedPipeline::check_inputs`]: before a run's first step (and whenever a run is resumed),
//!   the question and every variable a step renders (and no step sets) are counted, with the
//!   counter of each model step that renders them; one over its budget refuses the run before any
//!   request, with the state untouched, so a conversation's refused question changes nothing.
//! * [`check_value`]: when a request is rendered, each value is counted as it is about to be put
//!   into the user message; one over its budget fails the step before the request is negotiated,
//!   guarded or sent (a failed step leaves the state as it was).
//!
//! So every request sent carries inputs within the budgets the contract proved the window and the
//! cost bound for.

use crate::contract::InputKind;
use crate::error::CtxError;
use crate::pipeline::definition::{StepKind, UserPartSpec};
use crate::state::PipelineState;
use crate::tokens::TokenCounter;

use super::error::PipelineError;
use super::loaded::LoadedPipeline;

impl LoadedPipeline {
    /// Checks the question and each variable a model step renders (and no `set_variables` rule
    /// sets) against their budgets in the contract, counting each with the counter of every
    /// step that renders it. Runs refuse with it before their first step; a caller that builds
    /// its own loop over [`Self::advance`] can call it first.
    ///
    /// # Errors
    ///
    /// [`PipelineError::InputOverBudget`] (`PIPELINE_INPUT_OVER_BUDGET`) naming the input, its
    /// exact count and its budget; counting errors.
    pub fn check_inputs(&self, state: &PipelineState) -> Result<(), CtxError> {
        let set_by_rules = |name: &str| {
            self.definition().steps.iter().any(|s| match &s.kind {
                StepKind::SetVariables(v) => v.rules.iter().any(|r| r.set == name),
                _ => false,
            })
        };
        for step in &self.definition().steps {
            let Some(call) = step.kind.model_request() else { continue };
            if call.context.is_some() {
                continue;
            }
            let counter = self.step_model(&step.id).counter;
            for part in call.parts() {
                let kind = InputKind::of(&part.source);
                let checked = match kind {
                    InputKind::Question => true,
                    InputKind::Variable => state.variables.contains_key(&part.source) && !set_by_rules(&part.source),
                    _ => false,
                };
                if !checked || set_by_rules(&part.source) {
                    continue;
                }
                if let Some(value) = state.render_source(&part.source) {
                    check_value(self, None, part, &value, counter)?;
                }
            }
        }
        Ok(())
    }
}

/// Checks the value `value` of `part` against its budget in the contract, counted with `counter`
/// (the step's model's): `step` is the step about to carry it, `None` before a run's first step.
/// The context is held to `max_context_tokens`, a value the contract has no budget for (a
/// context-engine step) passes.
pub(crate) fn check_value(
    p: &LoadedPipeline,
    step: Option<&str>,
    part: &UserPartSpec,
    value: &str,
    counter: &TokenCounter,
) -> Result<(), CtxError> {
    let report = p.contract_report();
    let (budget, origin) = match InputKind::of(&part.source) {
        InputKind::Context => (report.max_context_tokens, "`max_context_tokens`".to_owned()),
        _ => match report.input(&part.source) {
            Some(b) => (b.tokens, b.origin.describe()),
            None => return Ok(()),
        },
    };
    let tokens = counter.count(value)?;
    if tokens <= budget {
        return Ok(());
    }
    tracing::warn!(
        target: "ctx::pipeline",
        step,
        input = part.source.as_str(),
        tokens,
        budget,
        "an input over its budget: the request is not sent"
    );
    Err(PipelineError::InputOverBudget {
        step: step.map(str::to_owned),
        input: part.source.clone(),
        tokens,
        budget,
        origin,
    }
    .into())
}
