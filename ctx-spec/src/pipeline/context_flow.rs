//! Where a run's context can come from, for the one decision that depends on it: whether a
//! `manage_context_budget` step's `on_over` can ever be taken.
//!
//! `on_over` means "the batch does not fit beside the context that is already there: compact
//! that context first". The step goes there when the batch, as its rules compacted it, does not
//! fit, but would fit alone with every rule of its languages applied (otherwise it is
//! `PIPELINE_BUDGET_MISCONFIG`). With an empty context the batch is alone, so `on_over` can then
//! be taken only when some node may stay uncompacted on the first pass although a rule of its
//! language exists: a language whose rules are all `demand` or `threshold` (a demand not yet
//! received, a threshold the early nodes stay under). A step with no rules, or with an `always`
//! rule for each language it names, compacts every node it can on the first pass: with an empty
//! context its `on_over` is never taken.
//!
//! So such an `on_over` can be taken only when `context_blocks` may hold something when the step
//! runs: an earlier step of the same run wrote it (a `manage_context_budget` that appended a
//! batch, a `set_variables` rule that sets `context_blocks`, a custom step), or the conversation
//! carried it from the last question (`settings { carry_context: true }`). A pipeline with
//! neither has an `on_over` path that no run from an empty context takes, which is reported here
//! (as a warning: a caller may still start a run from a state whose context it filled by hand).
//! An `on_over` that goes where `on_ok` goes is not reported: it declares no path of its own.
//!
//! The same proof keeps the cost bound from paying for that path ([`fresh_run_graph`]): the bound
//! is of a run that starts with an empty context, as a conversation, `ctx run` and a durable run
//! start one; the cost bound also gives what a run whose caller seeds the context can cost.

use crate::codes::Code;
use crate::validation::ConfigIssue;

use super::definition::{ManageBudgetSpec, PipelineDef, StepKind};
use super::graph::{Resolved, StepGraph, Target, step_path};

/// Every `manage_context_budget` step whose `on_over` no run of a conversation can take, as a
/// `BUDGET_ON_OVER_NEVER_TAKEN` warning at its `on_over`.
pub fn on_over_never_taken(def: &PipelineDef) -> Vec<ConfigIssue> {
    on_over_never_taken_steps(def)
        .into_iter()
        .filter_map(|m| {
            let step = &def.steps[m];
            let StepKind::ManageContextBudget(spec) = &step.kind else { return None };
            Some(
                ConfigIssue::new(
                    Code::BudgetOnOverNeverTaken,
                    step_path(m).key("on_over"),
                    format!(
                        "`on_over` of step `{}` (to `{}`) is never taken: no step before it writes the context and \
                         `settings.carry_context` is not set, so the context is empty whenever it runs, and a batch \
                         its rules leave too large is then PIPELINE_BUDGET_MISCONFIG, not `on_over`",
                        step.id, spec.on_over
                    ),
                )
                .with_help(
                    "for a conversation whose context grows from question to question, set `carry_context: true` \
                     in `settings`; otherwise point `on_over` where `on_ok` goes",
                ),
            )
        })
        .collect()
}

/// The indices of the `manage_context_budget` steps whose `on_over` (to a step of its own, not
/// where `on_ok` goes) no run that starts from the first step with an empty context takes (see the
/// module documentation), in the order of the definition.
///
/// Together, not only one by one: the first of them a run took would have needed a context
/// written on the way to it without any of them, which the search below rules out.
pub fn on_over_never_taken_steps(def: &PipelineDef) -> Vec<usize> {
    if def.settings.carry_context == Some(true) || def.steps.is_empty() {
        return Vec::new();
    }
    let graph = StepGraph::new(def);
    let mut never = Vec::new();
    for (m, step) in def.steps.iter().enumerate() {
        let StepKind::ManageContextBudget(spec) = &step.kind else { continue };
        if spec.on_over == spec.on_ok || may_go_over_alone(spec) {
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
        let n = def.steps.len();
        let from_start = reachable(n, &[0], &successors);
        if !from_start[m] {
            continue; // UNREACHABLE_STEP says so.
        }
        let fills_context = (0..n).any(|w| {
            from_start[w] && writes_context(&def.steps[w].kind) && reachable(n, &successors(w), &successors)[m]
        });
        if !fills_context {
            never.push(m);
        }
    }
    never
}

/// The step graph of a run that starts from the first step with an empty context: every
/// transition, less the `on_over` of [`on_over_never_taken_steps`]. What the cost bound and the
/// bound on model requests are taken over.
pub fn fresh_run_graph(def: &PipelineDef) -> StepGraph<'_> {
    on_over_never_taken_steps(def).into_iter().fold(StepGraph::new(def), |g, m| g.without_transition(m, "on_over"))
}

/// Whether the step can go `on_over` with an empty context: one of the languages its rules name
/// has no `always` rule, so a node of it may be appended uncompacted (a demand not received, a
/// threshold not reached) while the misconfiguration check, which applies every rule, finds that
/// the batch would fit.
fn may_go_over_alone(spec: &ManageBudgetSpec) -> bool {
    spec.compact_code
        .iter()
        .any(|rule| !spec.compact_code.iter().any(|r| r.language == rule.language && r.policy == "always"))
}

/// Whether a step of this kind may leave something in `context_blocks`.
fn writes_context(kind: &StepKind) -> bool {
    match kind {
        StepKind::ManageContextBudget(_) | StepKind::Custom(_) => true,
        StepKind::SetVariables(s) => s.rules.iter().any(|r| r.set == "context_blocks"),
        _ => false,
    }
}

/// The steps reachable from `starts` (the starts included), one flag per step of a pipeline of
/// `n` steps.
fn reachable(n: usize, starts: &[usize], successors: &impl Fn(usize) -> Vec<usize>) -> Vec<bool> {
    let mut seen = vec![false; n];
    let mut stack: Vec<usize> = starts.to_vec();
    while let Some(i) = stack.pop() {
        if i >= n || std::mem::replace(&mut seen[i], true) {
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

    /// A language whose rules may leave a node uncompacted on the first pass (a `demand` not
    /// received, a `threshold` not reached) can send a batch `on_over` with an empty context: the
    /// batch does not fit as appended, but fits with every rule applied. Not reported then; an
    /// `always` rule for each language compacts every node on the first pass: reported.
    #[test]
    fn a_rule_that_may_not_fire_makes_on_over_possible_with_an_empty_context() {
        use crate::pipeline::definition::CompactRuleSpec;
        let rule = |language: &str, policy: &str| CompactRuleSpec::new(language, policy);
        for (rules, reported) in [
            (vec![], true),
            (vec![rule("sql", "demand")], false),
            (vec![rule("sql", "threshold")], false),
            (vec![rule("sql", "demand"), rule("sql", "always")], true),
            (vec![rule("dotnet", "always")], true),
            (vec![rule("dotnet", "always"), rule("sql", "threshold")], false),
        ] {
            let mut def = compaction_loop();
            let StepKind::ManageContextBudget(spec) = &mut def.steps[2].kind else { panic!("manage_budget") };
            spec.compact_code = rules.clone();
            assert_eq!(!codes(&def).is_empty(), reported, "{rules:?}");
            assert_eq!(on_over_never_taken_steps(&def) == [2], reported, "{rules:?}");
        }
    }

    /// The graph a run from an empty context takes has no `on_over` edge for such a step.
    #[test]
    fn the_fresh_run_graph_leaves_out_the_on_over_never_taken() {
        let def = compaction_loop();
        let keys = |g: &StepGraph<'_>| g.edges(2).iter().map(|e| e.key.to_owned()).collect::<Vec<String>>();
        assert_eq!(keys(&StepGraph::new(&def)), ["on_ok", "on_over"]);
        assert_eq!(keys(&fresh_run_graph(&def)), ["on_ok"]);
        let mut carried = def.clone();
        carried.settings.carry_context = Some(true);
        assert_eq!(keys(&fresh_run_graph(&carried)), ["on_ok", "on_over"]);
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

#[cfg(test)]
mod fresh_run_bound {
    //! Property: on random accepted graphs with `manage_context_budget` steps (no rules), steps
    //! that may write the context and loop guards, the bound over [`fresh_run_graph`] is at least
    //! the heaviest run from an empty context, found by an exhaustive search that follows the
    //! context's state (`on_over` only beside a non-empty context), and at most the bound over the
    //! whole graph: leaving out the `on_over` the checker proves never taken loses no run.

    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;
    use crate::pipeline::definition::{END, LoopGuardSpec, StepDef};
    use crate::pipeline::testing::{budget, custom, def, literal, search, set};

    #[derive(Debug, Clone)]
    enum Node {
        /// `manage_context_budget`: `on_ok`, `on_over`.
        Budget(usize, usize),
        /// `set_variables` of `context_blocks` (which may leave it empty or not).
        Writes(usize),
        /// A step that does not touch the context.
        Reads(usize),
        /// `loop_guard`: limit, `on_allow`, `on_deny`.
        Guard(u8, usize, usize),
        /// A custom step: it may write the context, and go to any of its outcomes.
        Custom(Vec<usize>),
    }

    fn graphs() -> impl Strategy<Value = (Vec<Node>, Vec<u64>)> {
        (1usize..7).prop_flat_map(|n| {
            let target = 0..=n;
            let node = prop_oneof![
                (target.clone(), target.clone()).prop_map(|(a, b)| Node::Budget(a, b)),
                target.clone().prop_map(Node::Writes),
                target.clone().prop_map(Node::Reads),
                (0u8..3, target.clone(), target.clone()).prop_map(|(l, a, d)| Node::Guard(l, a, d)),
                prop::collection::vec(target, 1..3).prop_map(Node::Custom),
            ];
            (prop::collection::vec(node, n), prop::collection::vec(0u64..5, n))
        })
    }

    fn to_def(nodes: &[Node]) -> PipelineDef {
        let name = |t: usize| if t >= nodes.len() { END.to_owned() } else { format!("s{t}") };
        let mut d = def(Vec::new());
        for (i, node) in nodes.iter().enumerate() {
            let id = format!("s{i}");
            d.steps.push(match node {
                Node::Budget(a, b) => budget(&id, &name(*a), &name(*b)),
                Node::Writes(next) => set(&id, vec![literal("context_blocks", serde_json::json!([]))], &name(*next)),
                Node::Reads(next) => search(&id, &name(*next)),
                Node::Guard(_, a, b) => StepDef::new(
                    id.as_str(),
                    StepKind::LoopGuard(LoopGuardSpec::new(format!("l{i}"), name(*a), name(*b))),
                ),
                Node::Custom(targets) => {
                    let outcomes: Vec<(String, String)> =
                        targets.iter().enumerate().map(|(k, t)| (format!("o{k}"), name(*t))).collect();
                    let outcomes: Vec<(&str, &str)> = outcomes.iter().map(|(o, t)| (o.as_str(), t.as_str())).collect();
                    custom(&id, &outcomes)
                }
            });
        }
        d
    }

    /// The heaviest run from `at` with guard counts `counts` and a context that is `filled` or
    /// empty, each step doing what the runtime lets it: a budget step appends the batch and goes
    /// `on_ok` (or fails), and goes `on_over` only beside a filled context (it has no rules); a
    /// writer leaves the context either way.
    fn heaviest(
        nodes: &[Node],
        costs: &[u64],
        at: usize,
        counts: &mut Vec<u8>,
        filled: bool,
        memo: &mut HashMap<(usize, Vec<u8>, bool), u64>,
    ) -> u64 {
        if at >= nodes.len() {
            return 0;
        }
        if let Some(&v) = memo.get(&(at, counts.clone(), filled)) {
            return v;
        }
        let mut go = |to: usize, filled: bool, counts: &mut Vec<u8>| heaviest(nodes, costs, to, counts, filled, memo);
        let next = match &nodes[at] {
            Node::Budget(ok, over) => {
                // The batch appended (possibly empty), or refused beside a filled context.
                let ok = go(*ok, true, counts).max(go(*ok, filled, counts));
                if filled { ok.max(go(*over, true, counts)) } else { ok }
            }
            Node::Writes(next) => go(*next, true, counts).max(go(*next, false, counts)),
            Node::Reads(next) => go(*next, filled, counts),
            Node::Guard(limit, allow, deny) => {
                if counts[at] < *limit {
                    counts[at] += 1;
                    let v = go(*allow, filled, counts);
                    counts[at] -= 1;
                    v
                } else {
                    go(*deny, filled, counts)
                }
            }
            Node::Custom(targets) => {
                targets.iter().map(|&t| go(t, true, counts).max(go(t, false, counts))).max().unwrap_or(0)
            }
        };
        let v = costs[at] + next;
        memo.insert((at, counts.clone(), filled), v);
        v
    }

    proptest! {
        #[test]
        fn leaving_out_the_on_over_never_taken_loses_no_run((nodes, costs) in graphs()) {
            let d = to_def(&nodes);
            let limit = |i: usize| match nodes[i] { Node::Guard(l, ..) => u64::from(l), _ => 0 };
            let Some(whole) = StepGraph::new(&d).run_bound(limit, |i| costs[i]) else {
                return Ok(()); // an unguarded cycle: rejected, no bound
            };
            let fresh = fresh_run_graph(&d).run_bound(limit, |i| costs[i]).expect("fewer edges, still no cycle");
            let best = heaviest(&nodes, &costs, 0, &mut vec![0; nodes.len()], false, &mut HashMap::new());
            prop_assert!(fresh.max >= best, "bound {} < a run from an empty context {}", fresh.max, best);
            prop_assert!(fresh.max <= whole.max);
            // Where nothing is left out, the bound is the whole graph's.
            if on_over_never_taken_steps(&d).is_empty() {
                prop_assert_eq!(fresh.max, whole.max);
            }
        }
    }
}
