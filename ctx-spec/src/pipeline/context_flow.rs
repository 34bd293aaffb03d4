//! Where a run's context can come from, for the one decision that depends on it: whether a
//! `manage_context_budget` step's `on_over` can ever be taken.
//!
//! `on_over` means "the batch does not fit beside the context that is already there: compact
//! that context first". With an empty context there is nothing to compact, and a batch that does
//! not fit is `PIPELINE_BUDGET_MISCONFIG` instead. So `on_over` can be taken only when
//! `context_blocks` may hold something when the step runs: an earlier step of the same run wrote
//! it (a `manage_context_budget` that appended a batch, a `set_variables` rule that sets
//! `context_blocks`, a custom step), or the conversation carried it from the last question
//! (`settings { carry_context: true }`). A pipeline with neither has an `on_over` path that no
//! conversation ever runs, which is reported here (as a warning: a caller may still start a run
//! from a state whose context it filled by hand). An `on_over` that goes where `on_ok` goes is
//! not reported: it declares no path of its own.

use crate::codes::Code;
use crate::validation::ConfigIssue;

use super::definition::{PipelineDef, StepKind};
use super::graph::{Resolved, StepGraph, Target, step_path};

/// Every `manage_context_budget` step whose `on_over` no run of a conversation can take, as a
/// `BUDGET_ON_OVER_NEVER_TAKEN` warning at its `on_over`.
pub fn on_over_never_taken(def: &PipelineDef) -> Vec<ConfigIssue> {
    if def.settings.carry_context == Some(true) || def.steps.is_empty() {
        return Vec::new();
    }
    let graph = StepGraph::new(def);
    let mut warnings = Vec::new();
    for (m, step) in def.steps.iter().enumerate() {
        let StepKind::ManageContextBudget(spec) = &step.kind else { continue };
        if spec.on_over == spec.on_ok {
            continue;
        }
        // The graph without this step's `on_over`: the question is whether the context can be
        // filled before the step first decides `on_over`, so that edge cannot be used yet.
        let successors = |i: usize| -> Vec<usize> {
            graph
                .edges(i)
                .iter()
                .filter(|e| !(i == m && e.key == "on_over"))
                .filter_map(|e| match e.resolved {
                    Resolved::Known(Target::Step(j)) => Some(j),
                    _ => None,
                })
                .collect()
        };
        let from_start = reachable(&[0], &successors);
        if !from_start[m] {
            continue; // UNREACHABLE_STEP says so.
        }
        let fills_context = (0..def.steps.len())
            .any(|w| from_start[w] && writes_context(&def.steps[w].kind) && reachable(&successors(w), &successors)[m]);
        if !fills_context {
            warnings.push(
                ConfigIssue::new(
                    Code::BudgetOnOverNeverTaken,
                    step_path(m).key("on_over"),
                    format!(
                        "`on_over` of step `{}` (to `{}`) is never taken: no step before it writes the context and \
                         `settings.carry_context` is not set, so the context is empty whenever it runs and a batch \
                         that does not fit is PIPELINE_BUDGET_MISCONFIG, not `on_over`",
                        step.id, spec.on_over
                    ),
                )
                .with_help(
                    "for a conversation whose context grows from question to question, set `carry_context: true` \
                     in `settings`; otherwise point `on_over` where `on_ok` goes",
                ),
            );
        }
    }
    warnings
}

/// Whether a step of this kind may leave something in `context_blocks`.
fn writes_context(kind: &StepKind) -> bool {
    match kind {
        StepKind::ManageContextBudget(_) | StepKind::Custom(_) => true,
        StepKind::SetVariables(s) => s.rules.iter().any(|r| r.set == "context_blocks"),
        _ => false,
    }
}

/// The steps reachable from `starts` (the starts included).
fn reachable(starts: &[usize], successors: &impl Fn(usize) -> Vec<usize>) -> Vec<bool> {
    let n = starts.iter().copied().max().map_or(0, |m| m + 1);
    let mut seen = vec![false; n];
    let mut stack: Vec<usize> = starts.to_vec();
    while let Some(i) = stack.pop() {
        if i >= seen.len() {
            seen.resize(i + 1, false);
        }
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        stack.extend(successors(i));
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::testing::compaction_loop;

    fn codes(def: &PipelineDef) -> Vec<(&'static str, String)> {
        on_over_never_taken(def).iter().map(|i| (i.code.as_str(), i.path.to_string())).collect()
    }

    /// The specification's compaction loop asked one question with an empty context: the
    /// summarise path behind `on_over` can never run, unless the conversation carries the
    /// context.
    #[test]
    fn an_on_over_behind_an_empty_context_is_reported_until_the_context_carries() {
        let def = compaction_loop();
        assert_eq!(codes(&def), [("BUDGET_ON_OVER_NEVER_TAKEN", "steps[2].on_over".to_owned())]);
        let message = &on_over_never_taken(&def)[0].message;
        assert!(message.contains("`on_over` of step `manage_budget`"), "{message}");
        let mut carried = def.clone();
        carried.settings.carry_context = Some(true);
        assert!(codes(&carried).is_empty());
    }

    /// A step that writes the context before the budget step makes `on_over` possible; a
    /// `set_variables` that writes something else does not.
    #[test]
    fn a_step_that_fills_the_context_first_makes_on_over_possible() {
        use crate::pipeline::definition::{SetRuleSpec, SetValueSpec, SetVariablesSpec, StepDef};
        let restore = |set: &str| {
            let rule = SetRuleSpec::new(set, SetValueSpec::Value(serde_json::json!([])));
            StepDef::new("restore", StepKind::SetVariables(SetVariablesSpec::new(vec![rule], "search")))
        };
        let mut def = compaction_loop();
        def.steps.insert(0, restore("context_blocks"));
        // The transitions name steps by id, so inserting a first step shifts only the paths.
        assert!(codes(&def).is_empty(), "{:?}", codes(&def));
        def.steps[0] = restore("topic");
        assert_eq!(codes(&def), [("BUDGET_ON_OVER_NEVER_TAKEN", "steps[3].on_over".to_owned())]);
    }

    /// An `on_over` that goes where `on_ok` goes declares no path of its own.
    #[test]
    fn an_on_over_that_goes_where_on_ok_goes_is_not_reported() {
        let mut def = compaction_loop();
        let StepKind::ManageContextBudget(spec) = &mut def.steps[2].kind else { panic!("manage_budget") };
        spec.on_over = spec.on_ok.clone();
        assert!(codes(&def).is_empty());
    }
}
