//! Fetched evidence reaching a model step that renders the context.
//!
//! A user who writes `search → fetch → answer` means "answer from what was fetched". So a model
//! step (`call_model` or `agent`) whose user message renders `context_blocks` (its `user_parts`
//! name the source `context_blocks`, as the default parts do; for a step with `context: NAME`,
//! the declared context takes `context_blocks` as an input) first consumes whatever
//! `fetch_node_texts` left in `node_texts`: the texts are appended to the context exactly as a
//! `manage_context_budget` step with no compaction rules appends them on `on_ok` (the same
//! action, [`budget::manage_context_budget_with`]: each node in the `--- NODE ---` header or the
//! pipeline's `node_frame`, the rendered context counted exactly against `max_context_tokens`),
//! and `node_texts` is cleared.
//!
//! Which steps do is decided when the pipeline loads
//! ([`steps_taking_fetched_texts`](crate::pipeline::steps_taking_fetched_texts)): those reached
//! from a fetch through no `manage_context_budget` step. Texts that passed a budget step are its
//! own: after `on_ok` none are left, and after `on_over` they wait for its next decision while the
//! compaction loop summarises the context (a model step that renders it) or its guard answers
//! from the context as it is.
//!
//! The load-time check that the evidence budget and its frames fit `max_context_tokens`
//! (`check_evidence_budget`) holds for every `fetch_node_texts` step, whatever follows it, so
//! a batch always fits an empty context. When the context already holds something (carried
//! from an earlier question with `carry_context: true`, or appended by an earlier step) and the
//! batch does not fit beside it, the step fails with
//! [`PipelineError::EvidenceOverBudget`] before anything is sent, the state unchanged: making
//! room is a decision (compaction, a summary, a reset) that only a `manage_context_budget` step
//! with its `on_over` can declare.

use std::sync::LazyLock;

use crate::budget::{self, BudgetDecision, BudgetReport, ManageBudgetConfig};
use crate::error::CtxError;
use crate::pipeline::definition::ManageBudgetSpec;
use crate::pipeline::error::PipelineError;
use crate::pipeline::loaded::LoadedPipeline;
use crate::state::PipelineState;
use crate::validation::FieldPath;

/// A `manage_context_budget` configuration with no compaction rule and no divider: append the
/// batch when it fits. Its transitions are never read. (A configuration without rules or divider
/// is always valid; `None` would be a broken budget module, reported as a step error.)
static APPEND_ONLY: LazyLock<Option<ManageBudgetConfig>> =
    LazyLock::new(|| budget::validate_manage_budget(&ManageBudgetSpec::new("", ""), &FieldPath::root()).ok());

/// Appends the texts waiting in `state.node_texts` to the context when step `step` renders it
/// (see the module documentation), returning what the budget action decided; `None` when there
/// was nothing to append or the step does not render the context. On error the state is
/// unchanged.
pub(crate) fn take_pending(
    p: &LoadedPipeline,
    step: &str,
    state: &mut PipelineState,
) -> Result<Option<BudgetReport>, CtxError> {
    if state.node_texts.is_empty() || !p.takes_fetched_texts(step) {
        return Ok(None);
    }
    let append_only = APPEND_ONLY
        .as_ref()
        .ok_or_else(|| PipelineError::NotResolved { pipeline: p.name().to_owned(), step: step.to_owned() })?;
    let report = budget::manage_context_budget_with(
        step,
        append_only,
        p.max_context_tokens(),
        state,
        p.counter(),
        p.budget_options(),
    )?;
    match report.decision {
        BudgetDecision::Ok => Ok(Some(report)),
        // With no rule there is no demand to put back: the state is as it was.
        BudgetDecision::Over => Err(PipelineError::EvidenceOverBudget {
            step: step.to_owned(),
            nodes: report.nodes.len(),
            context_tokens: report.context_tokens_before,
            candidate_tokens: report.candidate_tokens,
            max_context_tokens: report.max_context_tokens,
        }
        .into()),
    }
}
