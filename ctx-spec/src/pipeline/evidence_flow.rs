//! Which model steps render the context, which take the fetched texts themselves, and so which
//! pipelines need a context budget.
//!
//! `fetch_node_texts` leaves its texts in `node_texts`; they reach a request only through the
//! context (`context_blocks`). A `manage_context_budget` step appends them by its rules. A model
//! step whose request renders the context appends them itself, as a `manage_context_budget` step
//! without rules would on `on_ok`, when it is reached from a fetch without passing a budget step
//! ([`steps_taking_fetched_texts`]): that is what `search → fetch → answer` means. A step reached
//! only through a budget step leaves them to it: after `on_over` they wait in `node_texts` for the
//! budget step's next decision, while the spec's compaction loop summarises the context (a model
//! step that renders it) or its guard gives up and answers from the context as it is.

use super::definition::{CallModelSpec, PipelineDef, StepKind};
use super::graph::{Resolved, StepGraph, Target};

/// The source name of the rendered context.
const CONTEXT_BLOCKS: &str = "context_blocks";

/// Whether the request of the model step `spec` of `def` renders the context (`context_blocks`):
/// one of its user parts reads it (the default parts do), or the declared context it assembles
/// (`context: NAME`) takes it as an input.
pub fn step_renders_context(def: &PipelineDef, spec: &CallModelSpec) -> bool {
    match spec.context.as_deref() {
        Some(name) => def.contexts.context(name).is_some_and(|c| c.inputs.iter().any(|i| i == CONTEXT_BLOCKS)),
        None => spec.parts().iter().any(|part| part.source == CONTEXT_BLOCKS),
    }
}

/// Whether `def` needs `settings.max_context_tokens`: a model step renders the context
/// ([`step_renders_context`]), a `manage_context_budget` step budgets it, or a
/// `fetch_node_texts` step fetches texts for it (its `evidence_tokens` must fit the budget). A
/// pipeline with none of them (a tools-only agent whose user message is the question) sends no
/// context, so its context budget may be 0 or left out, and the contract and the cost bound
/// count none.
pub fn pipeline_needs_context_budget(def: &PipelineDef) -> bool {
    def.steps.iter().any(|step| match &step.kind {
        StepKind::ManageContextBudget(_) | StepKind::FetchNodeTexts(_) => true,
        kind => kind.model_request().is_some_and(|spec| step_renders_context(def, spec)),
    })
}

/// For each step of `def`, whether it is a model step that appends the texts waiting in
/// `node_texts` to the context before it renders its request: it renders the context
/// ([`step_renders_context`]) and a path of transitions leads to it from a `fetch_node_texts`
/// step through no `manage_context_budget` step (see the module documentation).
///
/// ```
/// use ctx::definition::{CallModelSpec, FetchSpec, ManageBudgetSpec, PipelineDef, StepDef, StepKind, steps_taking_fetched_texts};
///
/// let fetch = StepDef::new("fetch", StepKind::FetchNodeTexts(FetchSpec::new(3_000, "answer")));
/// let answer = StepDef::new("answer", StepKind::CallModel(CallModelSpec::new("answer", "end")));
/// let def = PipelineDef::new("Qa").steps(vec![fetch.clone(), answer.clone()]);
/// assert_eq!(steps_taking_fetched_texts(&def), [false, true]);
///
/// // With a budget step between them, the budget step appends the texts.
/// let fetch = StepDef::new("fetch", StepKind::FetchNodeTexts(FetchSpec::new(3_000, "budget")));
/// let budget = StepDef::new("budget", StepKind::ManageContextBudget(ManageBudgetSpec::new("answer", "answer")));
/// let def = PipelineDef::new("Qa").steps(vec![fetch, budget, answer]);
/// assert_eq!(steps_taking_fetched_texts(&def), [false, false, false]);
/// ```
pub fn steps_taking_fetched_texts(def: &PipelineDef) -> Vec<bool> {
    let n = def.steps.len();
    let graph = StepGraph::new(def);
    let successors = |i: usize| -> Vec<usize> {
        graph
            .edges(i)
            .iter()
            .filter_map(|e| match e.resolved {
                Resolved::Known(Target::Step(j)) if j < n => Some(j),
                _ => None,
            })
            .collect()
    };
    // Every step a fetch's texts can reach while no budget step has taken them.
    let mut reached = vec![false; n];
    let mut stack: Vec<usize> =
        (0..n).filter(|&i| matches!(def.steps[i].kind, StepKind::FetchNodeTexts(_))).flat_map(successors).collect();
    while let Some(i) = stack.pop() {
        if reached[i] || matches!(def.steps[i].kind, StepKind::ManageContextBudget(_)) {
            continue;
        }
        reached[i] = true;
        stack.extend(successors(i));
    }
    def.steps
        .iter()
        .zip(reached)
        .map(|(step, reached)| reached && step.kind.model_request().is_some_and(|spec| step_renders_context(def, spec)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::testing::*;

    #[test]
    fn the_compaction_loop_leaves_the_texts_to_its_budget_step() {
        // fetch → manage_budget ⇄ (guard → summarize → set) ; answer after on_ok or on_deny.
        let def = compaction_loop();
        assert!(steps_taking_fetched_texts(&def).iter().all(|taken| !taken));
        assert!(pipeline_needs_context_budget(&def));
    }

    #[test]
    fn a_model_step_straight_after_a_fetch_takes_the_texts_if_it_renders_the_context() {
        let mut def =
            def(vec![search("s", "f"), fetch("f", "a"), call("a", "answer", "b"), call("b", "answer", "end")]);
        // `call` renders the context, and so does the next step.
        assert_eq!(steps_taking_fetched_texts(&def), [false, false, true, true]);
        let StepKind::CallModel(a) = &mut def.steps[2].kind else { unreachable!() };
        a.user_parts = vec![crate::pipeline::definition::UserPartSpec::new("user_question", "{}")];
        // A step that does not render it passes them on.
        assert_eq!(steps_taking_fetched_texts(&def), [false, false, false, true]);
        assert!(pipeline_needs_context_budget(&def));
    }

    #[test]
    fn a_tools_only_agent_needs_no_context_budget() {
        let def = def(vec![agent("a", "end")]);
        assert!(!pipeline_needs_context_budget(&def));
        assert_eq!(steps_taking_fetched_texts(&def), [false]);
    }
}
