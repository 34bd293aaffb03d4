//! Variables a step may read before anything set them: a must-be-set dataflow analysis over the
//! step graph, reported as warnings (`VARIABLE_MAYBE_UNSET`).
//!
//! A variable is read by a `set_variables` rule (`from: name`) and by a model step's user part
//! (`source: name`); reading one that is not in `state.variables` fails the run with
//! `PIPELINE_MISSING_SOURCE`. Inside a run, a variable is set by a `set_variables` rule (`value:
//! null` removes it) and perhaps by a custom step (which may write any variable, so it counts as
//! setting all of them: nothing is reported after one). A variable is *set at a read* when every
//! path from the first step to the read sets it: the classic must analysis, `in(first) = ∅`,
//! `in(s) = ∩ out(predecessors)`, iterated to its greatest fixed point, and rule by rule inside a
//! `set_variables` step.
//!
//! Why a warning and not an error: a run does not start from an empty set of variables. The
//! caller may seed them (`Conversation::set_variable`, or `PipelineState::variables` before
//! `run`), and a conversation carries every variable of one question into the next, so a variable
//! saved at the end of a question is there when the next one reads it first. The definition
//! cannot say which variables its callers provide, so a read the pipeline itself does not cover
//! is valid for some callers and a run-time failure for others (always on the first question of
//! a conversation that seeds nothing). `ctx check` and `ctx explain` print the warning with the
//! path that leaves the variable unset, and the loader logs it, so the failure is never a
//! surprise; rejecting the pipeline would reject correct programs.

use std::collections::{BTreeMap, BTreeSet};

use crate::codes::Code;
use crate::validation::{ConfigIssue, FieldPath};

use super::definition::{PipelineDef, SetValueSpec, StepKind};
use super::graph::{Resolved, StepGraph, Target, step_path};
use super::values::{self, TargetKind};

/// A set of variable names, as indices into the pipeline's variable list.
type Vars = BTreeSet<usize>;

/// Every read of a variable that some path from the first step reaches with the variable unset,
/// as a `VARIABLE_MAYBE_UNSET` warning at the read (`steps[i].rules[j].from`,
/// `steps[i].user_parts[j].source`), naming a step of such a path. Unreachable steps are left to
/// the graph rules.
pub fn variables_maybe_unset(def: &PipelineDef) -> Vec<ConfigIssue> {
    let n = def.steps.len();
    if n == 0 {
        return Vec::new();
    }
    let names = variable_names(def);
    if names.is_empty() {
        return Vec::new();
    }
    let index: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let all: Vars = (0..names.len()).collect();
    let graph = StepGraph::new(def);
    let mut predecessors = vec![Vec::new(); n];
    for u in 0..n {
        for e in graph.edges(u) {
            if let Resolved::Known(Target::Step(v)) = e.resolved {
                predecessors[v].push(u);
            }
        }
    }
    let reached = reachable(&graph, n);
    // Greatest fixed point: every reachable step but the first starts with every variable set.
    let mut entry: Vec<Vars> = (0..n).map(|i| if i == 0 { Vars::new() } else { all.clone() }).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for v in (0..n).filter(|&v| reached[v]) {
            let incoming = predecessors[v]
                .iter()
                .filter(|&&u| reached[u])
                .map(|&u| exit(def, u, &entry[u], &index, &all))
                .reduce(|a, b| a.intersection(&b).copied().collect());
            let new = match (v, incoming) {
                (0, _) | (_, None) => Vars::new(),
                (_, Some(set)) => set,
            };
            if new != entry[v] {
                entry[v] = new;
                changed = true;
            }
        }
    }
    let mut issues = Vec::new();
    for (i, step) in def.steps.iter().enumerate().filter(|&(i, _)| reached[i]) {
        let mut set = entry[i].clone();
        let mut report = |path: FieldPath, name: &str| {
            issues.push(
                ConfigIssue::new(
                    Code::VariableMaybeUnset,
                    path,
                    format!(
                        "step `{}` reads variable `{name}`, which no step sets on some path from `{}`, the first \
                         step, to here: unless the caller provides it, the run fails with PIPELINE_MISSING_SOURCE",
                        step.id, def.steps[0].id
                    ),
                )
                .with_help(format!(
                    "set `{name}` on every path before this step (a `set_variables` rule), or provide it before each \
                     run (`Conversation::set_variable(\"{name}\", …)`, `state.variables`); a conversation carries it \
                     into the next question, not into the first"
                )),
            );
        };
        match &step.kind {
            StepKind::SetVariables(spec) => {
                for (j, rule) in spec.rules.iter().enumerate() {
                    if let SetValueSpec::From { from, .. } = &rule.value
                        && let Some(&v) = index.get(from.as_str())
                        && !set.contains(&v)
                    {
                        report(step_path(i).key("rules").index(j).key("from"), from);
                    }
                    apply_rule(&mut set, &rule.set, &rule.value, &index);
                }
            }
            StepKind::CallModel(call) | StepKind::Agent(super::definition::AgentSpec { call, .. }) => {
                for (j, part) in call.user_parts.iter().enumerate() {
                    if let Some(&v) = index.get(part.source.as_str())
                        && !set.contains(&v)
                    {
                        report(step_path(i).key("user_parts").index(j).key("source"), &part.source);
                    }
                }
                // The inputs of the context the step assembles are read when it runs.
                for input in context_inputs(def, call) {
                    if let Some(&v) = index.get(input)
                        && !set.contains(&v)
                    {
                        report(step_path(i).key("context"), input);
                    }
                }
            }
            _ => {}
        }
    }
    issues
}

/// The variables a step leaves set, given those set on entry.
fn exit(def: &PipelineDef, u: usize, entry: &Vars, index: &BTreeMap<&str, usize>, all: &Vars) -> Vars {
    match def.steps.get(u).map(|s| &s.kind) {
        Some(StepKind::SetVariables(spec)) => {
            let mut set = entry.clone();
            for rule in &spec.rules {
                apply_rule(&mut set, &rule.set, &rule.value, index);
            }
            set
        }
        // A custom step may write any variable.
        Some(StepKind::Custom(_)) => all.clone(),
        _ => entry.clone(),
    }
}

/// One rule's effect: a variable set from a value or a source is set, one set to `null` is removed
/// (a source that reads a variable holding `null` stores `null`, which removes it too, but the
/// read itself is what fails first, so it is reported there).
fn apply_rule(set: &mut Vars, target: &str, value: &SetValueSpec, index: &BTreeMap<&str, usize>) {
    let Some(&v) = index.get(target) else { return };
    match value {
        SetValueSpec::Value(serde_json::Value::Null) => {
            set.remove(&v);
        }
        _ => {
            set.insert(v);
        }
    }
}

/// The variables the definition reads or writes, in name order.
fn variable_names(def: &PipelineDef) -> Vec<String> {
    let mut names = BTreeSet::new();
    let mut note = |name: &str| {
        if values::target_kind(name) == TargetKind::Variable {
            names.insert(name.to_owned());
        }
    };
    for step in &def.steps {
        match &step.kind {
            StepKind::SetVariables(spec) => {
                for rule in &spec.rules {
                    note(&rule.set);
                    if let SetValueSpec::From { from, .. } = &rule.value {
                        note(from);
                    }
                }
            }
            StepKind::CallModel(call) | StepKind::Agent(super::definition::AgentSpec { call, .. }) => {
                for part in &call.user_parts {
                    note(&part.source);
                }
                for input in context_inputs(def, call) {
                    note(input);
                }
            }
            _ => {}
        }
    }
    names.into_iter().collect()
}

/// The inputs of the context a model step assembles (none when it names none, or an undeclared
/// one: that is an error of its own).
fn context_inputs<'d>(def: &'d PipelineDef, call: &super::definition::CallModelSpec) -> impl Iterator<Item = &'d str> {
    let decl = call.context.as_deref().and_then(|name| def.contexts.context(name));
    decl.into_iter().flat_map(|d| d.inputs.iter().map(String::as_str))
}

fn reachable(graph: &StepGraph<'_>, n: usize) -> Vec<bool> {
    let mut reached = vec![false; n];
    let mut stack = vec![0usize];
    reached[0] = true;
    while let Some(u) = stack.pop() {
        for e in graph.edges(u) {
            if let Resolved::Known(Target::Step(v)) = e.resolved
                && !std::mem::replace(&mut reached[v], true)
            {
                stack.push(v);
            }
        }
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::definition::{END, UserPartSpec};
    use crate::pipeline::testing::*;

    fn warned(def: &PipelineDef) -> Vec<String> {
        variables_maybe_unset(def).iter().map(|i| i.path.to_string()).collect()
    }

    fn restore(next: &str) -> crate::pipeline::definition::StepDef {
        set("restore", vec![from("context_blocks", "carried_context", Some("to_context_blocks"))], next)
    }

    fn save(next: &str) -> crate::pipeline::definition::StepDef {
        set("save", vec![from("carried_context", "context_blocks", None)], next)
    }

    /// Issue 26 item 6: a variable saved at the end of a question and read at the start.
    #[test]
    fn a_read_before_any_step_sets_the_variable_is_reported() {
        let d = def(vec![restore("answer"), call("answer", "answer", "save"), save(END)]);
        let issues = variables_maybe_unset(&d);
        assert_eq!(warned(&d), ["steps[0].rules[0].from"]);
        assert_eq!(issues[0].code, Code::VariableMaybeUnset);
        assert!(
            issues[0].message.contains("`carried_context`") && issues[0].message.contains("PIPELINE_MISSING_SOURCE")
        );
        // Saved first, then read: nothing to say.
        let d = def(vec![save("restore"), restore("answer"), call("answer", "answer", END)]);
        assert!(warned(&d).is_empty(), "{:?}", warned(&d));
        // Earlier in the same step.
        let d = def(vec![set(
            "both",
            vec![from("carried_context", "context_blocks", None), from("context_blocks", "carried_context", None)],
            END,
        )]);
        assert!(warned(&d).is_empty());
    }

    #[test]
    fn every_path_must_set_it() {
        // One branch sets it, the other does not.
        let d = def(vec![custom_free("route", &[("a", "save"), ("b", "restore")]), save("restore"), restore(END)]);
        assert_eq!(warned(&d), ["steps[2].rules[0].from"]);
        // `value: null` removes it.
        let d = def(vec![
            save("clear"),
            set("clear", vec![literal("carried_context", serde_json::Value::Null)], "restore"),
            restore(END),
        ]);
        assert_eq!(warned(&d), ["steps[2].rules[0].from"]);
        // A loop: set on the way round, not on the way in.
        let d = def(vec![restore("guard"), guard("guard", "save", END), save("restore")]);
        assert_eq!(warned(&d), ["steps[0].rules[0].from"]);
        // A user part reads variables too.
        let mut answer = call("answer", "answer", END);
        if let StepKind::CallModel(c) = &mut answer.kind {
            c.user_parts = vec![UserPartSpec { source: "carried_context".into(), template: "{}".into() }];
        }
        let d = def(vec![answer.clone(), save(END)]);
        assert_eq!(warned(&d), ["steps[0].user_parts[0].source"]);
        let d = def(vec![save("answer"), answer]);
        assert!(warned(&d).is_empty());
    }

    #[test]
    fn the_inputs_of_a_context_a_step_assembles_are_reads() {
        use crate::engine::{ContextDeclaration, EngineSpec, MessageSpec};
        let engine = EngineSpec {
            contexts: vec![ContextDeclaration {
                name: "support".into(),
                inputs: vec!["carried_context".into()],
                policy: None,
                messages: vec![MessageSpec::User { content: "{input.carried_context}".into() }],
            }],
            ..EngineSpec::default()
        };
        let mut answer = call("answer", "answer", END);
        if let StepKind::CallModel(c) = &mut answer.kind {
            c.context = Some("support".into());
        }
        let d = def(vec![answer.clone(), save(END)]).contexts(engine.clone());
        assert_eq!(warned(&d), ["steps[0].context"]);
        let d = def(vec![save("answer"), answer]).contexts(engine);
        assert!(warned(&d).is_empty());
    }

    #[test]
    fn a_custom_step_may_set_any_variable() {
        let d = def(vec![custom("load", &[("done", "restore")]), restore(END)]);
        assert!(warned(&d).is_empty());
    }

    /// A branch that writes no variable: `manage_context_budget` goes `on_ok` or `on_over`.
    fn custom_free(id: &str, outcomes: &[(&str, &str)]) -> crate::pipeline::definition::StepDef {
        budget(id, outcomes[0].1, outcomes[1].1)
    }

    #[test]
    fn the_specification_shapes_pass() {
        assert!(warned(&compaction_loop()).is_empty());
    }
}
