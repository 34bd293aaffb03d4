//! Data a step produces that nothing after it consumes: the texts of a `fetch_node_texts` that
//! no model request can see (`DATAFLOW_EVIDENCE_UNUSED`), the hits of a `search_nodes` or
//! `expand_dependency_tree` that no step reads (`DATAFLOW_HITS_UNUSED`), a model reply replaced
//! before anything reads it (`DATAFLOW_RESPONSE_OVERWRITTEN`) and a variable no step reads
//! (`DATAFLOW_VARIABLE_UNREAD`).
//!
//! Each is a forward search from the producing step over the step graph: a step on a path
//! *consumes* the value, *kills* it (writes the field again before anything read it) or *passes*
//! it on. What consumes what:
//!
//! * `node_texts` (a fetch's evidence): a `manage_context_budget` step (it appends them to the
//!   context), a `call_model` or `agent` step whose user message renders `context_blocks` (the
//!   default parts do: before rendering, the step appends pending texts to the context as
//!   `manage_context_budget` would on `on_ok` with no compaction rules, within
//!   `max_context_tokens`), and a custom step (it may read anything). A step that assembles a
//!   declared context (`context: NAME`) renders the context when the context takes
//!   `context_blocks` as an input, and then takes the texts the same way. Which model steps
//!   render the context is `evidence_flow::step_renders_context`, the rule the run uses too.
//!   Another `fetch_node_texts` replaces them; a `set_variables` rule `node_texts = null`
//!   clears them.
//! * `search_results` (the hits): `fetch_node_texts`, `expand_dependency_tree` and custom steps
//!   read them; another `search_nodes` replaces them, a rule can clear them.
//! * `last_model_response`: a rule or a user part that reads it, the inputs of a context a step
//!   assembles, a custom step, and the end of the run (it is the run's answer); a step that
//!   keeps it in the history (`use_history`, or a context with a `history` message) consumes its
//!   own reply. Another model step replaces it, a rule that sets it replaces or clears it.
//!
//! A transition to a step the pipeline does not have is its own error, and counts as a consumer
//! here (the intended step is unknown), so nothing is reported as a consequence of a typo.
//!
//! Severity, decided once for the four:
//!
//! * Evidence and hits are errors when no path uses them *and* the run cannot hand them to the
//!   caller instead: a path from the producer to `end` through no model step is a retrieval run
//!   whose caller reads `state.node_texts` / `state.search_results`, and is accepted. A fetch
//!   whose texts reach only model steps that never see them (`search → fetch → answer` where
//!   `answer`'s `user_parts` leave `context_blocks` out), or only another fetch, is a pipeline
//!   that pays for evidence no request carries.
//! * A replaced reply is a warning: a streaming sink may have shown it to the user (a `pipeline!`
//!   sink sees each step's tokens), which may be the point of the step.
//! * A variable no step reads is a warning: the caller may read `state.variables` after the run,
//!   and a conversation carries variables to the next question, where only the caller sees them.

use std::collections::BTreeSet;

use crate::codes::Code;
use crate::engine::MessageSpec;
use crate::validation::ConfigIssue;

use super::definition::{CallModelSpec, PipelineDef, SetValueSpec, StepKind};
use super::evidence_flow::step_renders_context;
use super::graph::{Resolved, StepGraph, Target, step_path};
use super::values::{self, TargetKind};

/// What a step does to the value being followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Consume,
    Kill,
    Pass,
}

/// What the paths from a producer meet.
#[derive(Debug, Default)]
struct Trace {
    consumed: bool,
    /// A transition to a step that does not exist was met.
    unknown: bool,
    /// `end` was reached through no model step.
    raw_end: bool,
    /// `end` was reached after a model step.
    end_after_model: bool,
    /// The steps that replaced or cleared the value.
    killers: BTreeSet<usize>,
    /// The model steps the value passed without being read.
    models: BTreeSet<usize>,
}

/// Follows every path from the transitions of step `from`.
fn follow(def: &PipelineDef, graph: &StepGraph<'_>, from: usize, effect: impl Fn(usize) -> Effect) -> Trace {
    let n = def.steps.len();
    let mut trace = Trace::default();
    // (step, whether a model step was passed on the way)
    let mut seen = vec![[false; 2]; n];
    let mut stack: Vec<(usize, bool)> = Vec::new();
    let push_edges = |u: usize, model: bool, stack: &mut Vec<(usize, bool)>, trace: &mut Trace| {
        for e in graph.edges(u) {
            match e.resolved {
                Resolved::Unknown { .. } => trace.unknown = true,
                Resolved::Known(Target::End) if model => trace.end_after_model = true,
                Resolved::Known(Target::End) => trace.raw_end = true,
                Resolved::Known(Target::Step(v)) => stack.push((v, model)),
            }
        }
    };
    push_edges(from, false, &mut stack, &mut trace);
    while let Some((v, model)) = stack.pop() {
        if std::mem::replace(&mut seen[v][usize::from(model)], true) {
            continue;
        }
        match effect(v) {
            Effect::Consume => {
                trace.consumed = true;
                return trace;
            }
            Effect::Kill => {
                trace.killers.insert(v);
            }
            Effect::Pass => {
                let is_model = def.steps[v].kind.model_request().is_some();
                if is_model {
                    trace.models.insert(v);
                }
                push_edges(v, model || is_model, &mut stack, &mut trace);
            }
        }
    }
    trace
}

/// The steps a run can reach from the first one.
fn reachable(def: &PipelineDef, graph: &StepGraph<'_>) -> Vec<bool> {
    let mut reached = vec![false; def.steps.len()];
    if def.steps.is_empty() {
        return reached;
    }
    let mut stack = vec![0usize];
    while let Some(u) = stack.pop() {
        if std::mem::replace(&mut reached[u], true) {
            continue;
        }
        for e in graph.edges(u) {
            if let Resolved::Known(Target::Step(v)) = e.resolved {
                stack.push(v);
            }
        }
    }
    reached
}

/// Whether some path from step `from` ends the run (when none does, `END_UNREACHABLE` is the
/// finding, and what the steps there produce is lost because of it).
fn can_end(graph: &StepGraph<'_>, n: usize, from: usize) -> bool {
    let mut seen = vec![false; n];
    let mut stack = vec![from];
    while let Some(u) = stack.pop() {
        if std::mem::replace(&mut seen[u], true) {
            continue;
        }
        for e in graph.edges(u) {
            match e.resolved {
                Resolved::Known(Target::Step(v)) => stack.push(v),
                _ => return true,
            }
        }
    }
    false
}

/// Whether a `set_variables` step writes `field` in any rule.
fn sets(kind: &StepKind, field: &str) -> bool {
    matches!(kind, StepKind::SetVariables(s) if s.rules.iter().any(|r| r.set == field))
}

fn names(def: &PipelineDef, steps: &BTreeSet<usize>) -> String {
    steps.iter().map(|&i| format!("`{}`", def.steps[i].id)).collect::<Vec<_>>().join(", ")
}

/// The errors of this module: evidence no request can carry, hits no step reads.
pub(crate) fn unconsumed_issues(def: &PipelineDef) -> Vec<ConfigIssue> {
    let graph = StepGraph::new(def);
    let reached = reachable(def, &graph);
    let mut issues = Vec::new();
    let n = def.steps.len();
    for (i, step) in def.steps.iter().enumerate().filter(|&(i, _)| reached[i] && can_end(&graph, n, i)) {
        match &step.kind {
            StepKind::FetchNodeTexts(_) => {
                let trace = follow(def, &graph, i, |v| match &def.steps[v].kind {
                    StepKind::FetchNodeTexts(_) => Effect::Kill,
                    StepKind::ManageContextBudget(_) | StepKind::Custom(_) => Effect::Consume,
                    k if sets(k, "node_texts") => Effect::Kill,
                    StepKind::CallModel(c) | StepKind::Agent(super::definition::AgentSpec { call: c, .. })
                        if step_renders_context(def, c) =>
                    {
                        Effect::Consume
                    }
                    _ => Effect::Pass,
                });
                if let Some(issue) = evidence_issue(def, i, &trace) {
                    issues.push(issue);
                }
            }
            StepKind::SearchNodes(_) | StepKind::ExpandDependencyTree(_) => {
                let trace = follow(def, &graph, i, |v| match &def.steps[v].kind {
                    StepKind::SearchNodes(_) => Effect::Kill,
                    StepKind::FetchNodeTexts(_) | StepKind::ExpandDependencyTree(_) | StepKind::Custom(_) => {
                        Effect::Consume
                    }
                    k if sets(k, "search_results") => Effect::Kill,
                    _ => Effect::Pass,
                });
                if let Some(issue) = hits_issue(def, i, &trace) {
                    issues.push(issue);
                }
            }
            _ => {}
        }
    }
    issues
}

fn evidence_issue(def: &PipelineDef, i: usize, trace: &Trace) -> Option<ConfigIssue> {
    if trace.consumed || trace.unknown || trace.raw_end {
        return None;
    }
    let id = &def.steps[i].id;
    let mut why = Vec::new();
    if !trace.models.is_empty() {
        why.push(format!(
            "the model step(s) after it ({}) render no `context_blocks`, so their requests leave the texts out",
            names(def, &trace.models)
        ));
    }
    if !trace.killers.is_empty() {
        why.push(format!("{} replaces or clears them before any step reads them", names(def, &trace.killers)));
    }
    if why.is_empty() {
        // Every path loops without end: the graph rules report that.
        return None;
    }
    let first_model = trace.models.iter().next().map(|&m| def.steps[m].id.as_str());
    let help = match first_model {
        Some(model) => format!(
            "let `{model}` render the context (a `user_parts` entry `context_blocks => \"### Context:\\n{{}}\\n\\n\"`, \
             as the default parts do), or append the texts with a `manage_context_budget` step between `{id}` and \
             `{model}`"
        ),
        None => format!(
            "read the texts of `{id}` before they are replaced (a `manage_context_budget` step), or remove `{id}`"
        ),
    };
    Some(
        ConfigIssue::new(
            Code::DataflowEvidenceUnused,
            step_path(i).key("id"),
            format!(
                "step `{id}` fetches texts that never reach a model request: {}; the evidence is fetched and paid \
                 for, then dropped",
                why.join("; and ")
            ),
        )
        .with_help(help),
    )
}

fn hits_issue(def: &PipelineDef, i: usize, trace: &Trace) -> Option<ConfigIssue> {
    if trace.consumed || trace.unknown || trace.raw_end {
        return None;
    }
    let step = &def.steps[i];
    let id = &step.id;
    let mut why = Vec::new();
    if !trace.models.is_empty() {
        why.push(format!(
            "a model request shows no hits, only fetched texts (no fetch before {})",
            names(def, &trace.models)
        ));
    }
    if !trace.killers.is_empty() {
        why.push(format!("{} replaces or clears them first", names(def, &trace.killers)));
    }
    if why.is_empty() {
        return None;
    }
    let verb = if matches!(step.kind, StepKind::SearchNodes(_)) { "finds" } else { "adds" };
    Some(
        ConfigIssue::new(
            Code::DataflowHitsUnused,
            step_path(i).key("id"),
            format!("step `{id}` {verb} hits that no step ever fetches or reads: {}", why.join("; and ")),
        )
        .with_help(format!(
            "fetch their texts after `{id}` (`fetch_node_texts {{ evidence_tokens: 3_000, next: … }}`), or remove `{id}`"
        )),
    )
}

/// The warnings of this module: replies replaced before anything reads them, variables no step
/// reads.
pub(crate) fn unconsumed_warnings(def: &PipelineDef) -> Vec<ConfigIssue> {
    let graph = StepGraph::new(def);
    let reached = reachable(def, &graph);
    let mut warnings = Vec::new();
    let n = def.steps.len();
    for (i, step) in def.steps.iter().enumerate().filter(|&(i, _)| reached[i] && can_end(&graph, n, i)) {
        let Some(call) = step.kind.model_request() else { continue };
        if keeps_reply(def, call) {
            continue;
        }
        let trace = follow(def, &graph, i, |v| response_effect(def, v));
        if trace.consumed || trace.unknown || trace.raw_end || trace.end_after_model || trace.killers.is_empty() {
            continue;
        }
        let killers = names(def, &trace.killers);
        warnings.push(
            ConfigIssue::new(
                Code::DataflowResponseOverwritten,
                step_path(i).key("id"),
                format!(
                    "the reply of step `{}` is replaced by {killers} before any step reads it: no later request sees \
                     it and it is not the run's answer (only a streaming sink shows it)",
                    step.id
                ),
            )
            .with_help(format!(
                "pass it on before it is replaced, e.g. `set_variables {{ rules: [ context_blocks <- \
                 last_model_response | to_context_blocks ], next: … }}` after `{}`, or a `user_parts` entry of the \
                 next model step reading `last_model_response`",
                step.id
            )),
        );
    }
    warnings.extend(variables_unread(def));
    warnings
}

/// Whether the step keeps its own reply in the history (`use_history`, or a context that draws
/// the pipeline's history).
fn keeps_reply(def: &PipelineDef, call: &CallModelSpec) -> bool {
    match call.context.as_deref() {
        None => call.use_history,
        Some(name) => {
            def.contexts.context(name).is_none_or(|d| d.messages.iter().any(|m| matches!(m, MessageSpec::History)))
        }
    }
}

/// What step `v` does to `last_model_response`.
fn response_effect(def: &PipelineDef, v: usize) -> Effect {
    const FIELD: &str = "last_model_response";
    match &def.steps[v].kind {
        StepKind::Custom(_) => Effect::Consume,
        StepKind::SetVariables(s) => {
            for rule in &s.rules {
                if matches!(&rule.value, SetValueSpec::From { from, .. } if from == FIELD) {
                    return Effect::Consume;
                }
                if rule.set == FIELD {
                    return Effect::Kill;
                }
            }
            Effect::Pass
        }
        kind => match kind.model_request() {
            Some(call) => {
                let reads = match call.context.as_deref() {
                    None => call.parts().iter().any(|p| p.source == FIELD),
                    Some(name) => def.contexts.context(name).is_none_or(|d| d.inputs.iter().any(|i| i == FIELD)),
                };
                if reads { Effect::Consume } else { Effect::Kill }
            }
            None => Effect::Pass,
        },
    }
}

/// Each variable a `set_variables` rule gives a value that no step reads, at the first such rule.
fn variables_unread(def: &PipelineDef) -> Vec<ConfigIssue> {
    if def.steps.iter().any(|s| matches!(s.kind, StepKind::Custom(_))) {
        return Vec::new(); // a custom step may read any variable
    }
    let mut read: BTreeSet<&str> = BTreeSet::new();
    for step in &def.steps {
        match &step.kind {
            StepKind::SetVariables(s) => {
                read.extend(s.rules.iter().filter_map(|r| match &r.value {
                    SetValueSpec::From { from, .. } => Some(from.as_str()),
                    SetValueSpec::Value(_) => None,
                }));
            }
            kind => {
                if let Some(call) = kind.model_request() {
                    read.extend(call.user_parts.iter().map(|p| p.source.as_str()));
                }
            }
        }
    }
    for decl in &def.contexts.contexts {
        read.extend(decl.inputs.iter().map(String::as_str));
    }
    let mut reported = BTreeSet::new();
    let mut warnings = Vec::new();
    for (i, step) in def.steps.iter().enumerate() {
        let StepKind::SetVariables(s) = &step.kind else { continue };
        for (j, rule) in s.rules.iter().enumerate() {
            let name = rule.set.as_str();
            let removes = matches!(rule.value, SetValueSpec::Value(serde_json::Value::Null));
            if values::target_kind(name) != TargetKind::Variable
                || !values::is_variable_name(name)
                || removes
                || read.contains(name)
                || !reported.insert(name)
            {
                continue;
            }
            warnings.push(
                ConfigIssue::new(
                    Code::DataflowVariableUnread,
                    step_path(i).key("rules").index(j).key("set"),
                    format!(
                        "step `{}` sets variable `{name}`, which no step reads (no rule's `from`, no `user_parts` \
                         source, no context input): only code that reads `state.variables` after the run sees it",
                        step.id
                    ),
                )
                .with_help(format!(
                    "read `{name}` where it is needed (e.g. a `user_parts` entry `{name} => \"{{}}\"`), or remove the \
                     rule if nothing outside the pipeline reads it"
                )),
            );
        }
    }
    warnings
}

/// `steps[i]` for the step with id `id` (tests).
#[cfg(test)]
fn at(def: &PipelineDef, id: &str) -> crate::validation::FieldPath {
    step_path(def.steps.iter().position(|s| s.id == id).expect("the step")).key("id")
}

#[cfg(test)]
#[path = "produced_tests.rs"]
mod tests;
