//! Which way a step went, as a value: the step actions return a [`Transition`], the loaded
//! pipeline resolves it to a target at run time, and a `pipeline!` step enum resolves it at
//! compile time (its `StepMachine::next` is a `match` on `(step, transition)`).

use serde::{Deserialize, Serialize};

use super::definition::StepKind;

/// The transition a step took.
///
/// Each step kind has its own: `next` for the linear steps, `on_ok`/`on_over` for
/// `manage_context_budget`, `on_allow`/`on_deny` for `loop_guard`, and the declared outcomes of a
/// `custom` step, numbered in declaration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transition {
    /// `next` (search, expand, fetch, call_model, set_variables).
    Next,
    /// `on_ok` of `manage_context_budget`: the new content fitted.
    OnOk,
    /// `on_over` of `manage_context_budget`: it did not, and nothing was appended.
    OnOver,
    /// `on_allow` of `loop_guard`: one more loop is allowed (and counted).
    OnAllow,
    /// `on_deny` of `loop_guard`: the limit is reached.
    OnDeny,
    /// Outcome number `n` of a `custom` step, in the order the step declares its outcomes.
    Outcome(usize),
}

impl Transition {
    /// The transition at `position` of `kind.transitions()`: the inverse of
    /// [`Transition::position`] for that kind.
    pub fn of(kind: &StepKind, position: usize) -> Transition {
        match (kind, position) {
            (StepKind::Custom(_), n) => Transition::Outcome(n),
            (StepKind::ManageContextBudget(_), 0) => Transition::OnOk,
            (StepKind::ManageContextBudget(_), _) => Transition::OnOver,
            (StepKind::LoopGuard(_), 0) => Transition::OnAllow,
            (StepKind::LoopGuard(_), _) => Transition::OnDeny,
            _ => Transition::Next,
        }
    }

    /// The transition's position in `StepKind::transitions()` of its step: the order in which
    /// the definition lists a kind's transitions.
    pub const fn position(self) -> usize {
        match self {
            Transition::Next | Transition::OnOk | Transition::OnAllow => 0,
            Transition::OnOver | Transition::OnDeny => 1,
            Transition::Outcome(n) => n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::definition::{CustomSpec, LoopGuardSpec, ManageBudgetSpec};

    #[test]
    fn positions_follow_the_definitions_order_of_transitions() {
        let budget = StepKind::ManageContextBudget(ManageBudgetSpec {
            compact_code: Vec::new(),
            divide_new_content: None,
            on_ok: "a".into(),
            on_over: "b".into(),
        });
        let keys: Vec<&str> = budget.transitions().iter().map(|(k, _)| *k).collect();
        assert_eq!(keys[Transition::OnOk.position()], "on_ok");
        assert_eq!(keys[Transition::OnOver.position()], "on_over");

        let guard = StepKind::LoopGuard(LoopGuardSpec {
            max_turn_loops_from_settings: "l".into(),
            on_allow: "a".into(),
            on_deny: "b".into(),
        });
        let keys: Vec<&str> = guard.transitions().iter().map(|(k, _)| *k).collect();
        assert_eq!(keys[Transition::OnAllow.position()], "on_allow");
        assert_eq!(keys[Transition::OnDeny.position()], "on_deny");

        let custom =
            StepKind::Custom(CustomSpec { outcomes: vec![("x".into(), "a".into()), ("y".into(), "b".into())] });
        let keys: Vec<&str> = custom.transitions().iter().map(|(k, _)| *k).collect();
        assert_eq!(keys[Transition::Outcome(1).position()], "y");

        for kind in [&budget, &guard, &custom] {
            for position in 0..kind.transitions().len() {
                assert_eq!(Transition::of(kind, position).position(), position);
            }
        }
    }
}
