//! A run's report: the steps it took, every model request with its anatomy, what changed before
//! each request and why, and the contract's worst case next to what was sent. Built from the
//! step reports a run returns; nothing is counted again.

use serde::Serialize;

use crate::budget::BudgetDecision;
use crate::contract::StepBudget;
use crate::pipeline::{AgentReport, LoadedPipeline, SentRequest, SkipReason, StepDetail, StepReport};

use super::anatomy::RequestAnatomy;
use super::cost::RequestCost;

/// A run's steps and model requests, ready to be rendered ([`Self::to_html`]) or serialised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RunReport {
    /// The pipeline's name.
    pub pipeline: String,
    /// The model's name, when the definition gives one.
    pub model: Option<String>,
    /// The model's window.
    pub context_window: usize,
    /// Whether prompts are counted exactly or estimated (`exact`, or the estimate's margin).
    pub counting: String,
    /// The steps in the order they ran.
    pub steps: Vec<StepEntry>,
    /// The model requests in the order they were sent.
    pub requests: Vec<RequestEntry>,
    /// What the run's model requests cost, in billionths of a US dollar (`None` when the model
    /// has no price).
    pub spent_nano_usd: Option<u64>,
    /// The most a run can cost, as proven when the pipeline was compiled or loaded
    /// ([`LoadedPipeline::cost_bound`]), in billionths of a US dollar.
    pub worst_case_nano_usd: Option<u64>,
}

/// One step of the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StepEntry {
    /// The step id.
    pub step_id: String,
    /// Its kind keyword.
    pub kind: String,
    /// The transition key it took.
    pub transition_key: String,
    /// The step it led to (`end` at the end).
    pub target: String,
    /// One line on what it did.
    pub summary: String,
    /// The step's named model (`model: NAME`), `None` for the default model or a step that
    /// sends no request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// One model request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RequestEntry {
    /// The step that sent it.
    pub step_id: String,
    /// Its position in the timeline ([`RunReport::steps`]).
    pub step_index: usize,
    /// Its number within the step (agent steps send several), from 1.
    pub number_in_step: usize,
    /// The request cut into parts.
    pub anatomy: RequestAnatomy,
    /// The prompt tokens the server reported, when it did.
    pub server_prompt_tokens: Option<usize>,
    /// The tokens the server generated, when it said.
    pub completion_tokens: Option<usize>,
    /// The step's worst case as the contract proved it when the pipeline was compiled or loaded.
    pub worst_case: Option<StepBudget>,
    /// What each part cost, with the cached prefix, when the model has a price
    /// ([`LoadedPipeline::price`]).
    pub cost: Option<RequestCost>,
    /// What changed since the previous request, in order.
    pub changes: Vec<Change>,
    /// What the request cost, when the model has a price.
    pub spend: Option<crate::llm::Spend>,
}

/// What a change did to the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeKind {
    /// Something was left out (history for the budget or the output floor, a node, a batch).
    Dropped,
    /// A node was compacted by a rule of `manage_context_budget`.
    Compacted,
    /// The context was replaced by a model's summary.
    Summarised,
    /// A text was cut at a token boundary.
    Trimmed,
    /// A document already in the turn was not sent again.
    Deduplicated,
    /// The output limit was lowered by negotiation.
    Reduced,
    /// Something was added (nodes to the context, tool results to the turn).
    Added,
}

impl ChangeKind {
    /// The word shown in reports.
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Dropped => "dropped",
            ChangeKind::Compacted => "compacted",
            ChangeKind::Summarised => "summarised",
            ChangeKind::Trimmed => "trimmed",
            ChangeKind::Deduplicated => "deduplicated",
            ChangeKind::Reduced => "reduced",
            ChangeKind::Added => "added",
        }
    }
}

/// One change, with the step (and rule) that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Change {
    /// What kind of change.
    pub kind: ChangeKind,
    /// The step that made it, and the rule when one did (`manage_budget, rule 2 (threshold)`).
    pub by: String,
    /// What it was, with its tokens.
    pub what: String,
}

impl Change {
    fn new(kind: ChangeKind, by: impl Into<String>, what: impl Into<String>) -> Self {
        Change { kind, by: by.into(), what: what.into() }
    }
}

impl RunReport {
    /// The report of a run of `pipeline` whose steps returned `reports` (as
    /// [`LoadedPipeline::run`], [`Pipeline::run`](crate::pipeline::Pipeline::run) and
    /// [`Conversation`](crate::pipeline::Conversation) return them).
    pub fn new(pipeline: &LoadedPipeline, reports: &[StepReport]) -> Self {
        let contract = pipeline.contract_report();
        let mut steps = Vec::with_capacity(reports.len());
        let mut requests = Vec::new();
        // Changes made by the steps since the last request, waiting for the next one.
        let mut pending: Vec<Change> = Vec::new();
        let mut last_model_step: Option<&str> = None;
        for (step_index, r) in reports.iter().enumerate() {
            let target = match r.target {
                crate::pipeline::Target::End => crate::pipeline::END.to_owned(),
                t => pipeline.target_id(t).to_owned(),
            };
            steps.push(StepEntry {
                step_id: r.step_id.clone(),
                kind: r.kind.to_owned(),
                transition_key: r.transition_key.clone(),
                target,
                summary: summary(&r.detail),
                model: pipeline.step_model(&r.step_id).name.map(str::to_owned),
            });
            // Each request is priced at its step's model's price.
            let price = pipeline.step_model(&r.step_id).price;
            let worst_case = contract.step(&r.step_id).cloned();
            let entry = |number_in_step: usize, sent: &SentRequest| RequestEntry {
                step_id: r.step_id.clone(),
                step_index,
                number_in_step,
                anatomy: sent.anatomy.get().clone(),
                server_prompt_tokens: sent.usage.map(|u| u.prompt_tokens),
                completion_tokens: sent.usage.map(|u| u.completion_tokens),
                worst_case: worst_case.clone(),
                cost: price.zip(sent.spend).map(|(price, spend)| RequestCost::new(&sent.anatomy, &spend, &price)),
                changes: Vec::new(),
                spend: sent.spend,
            };
            match &r.detail {
                StepDetail::CallModel(c) => {
                    if let Some(b) = &c.evidence {
                        budget_changes(b, &evidence_by(&r.step_id), &mut pending);
                    }
                    let mut e = entry(1, &c.request);
                    e.changes = std::mem::take(&mut pending);
                    history_changes(
                        &mut e.changes,
                        &r.step_id,
                        c.history_trim.as_ref(),
                        c.request.negotiation.history_messages_dropped,
                    );
                    output_change(&mut e.changes, &r.step_id, &c.request.negotiation);
                    requests.push(e);
                    last_model_step = Some(&r.step_id);
                }
                StepDetail::Agent(a) => {
                    if let Some(b) = &a.evidence {
                        budget_changes(b, &evidence_by(&r.step_id), &mut pending);
                    }
                    agent_requests(a, &mut pending, &mut requests, &entry, &r.step_id);
                    last_model_step = Some(&r.step_id);
                }
                detail => step_changes(detail, &r.step_id, last_model_step, &mut pending),
            }
        }
        RunReport {
            pipeline: pipeline.name().to_owned(),
            model: pipeline.model().model.clone(),
            context_window: pipeline.context_window(),
            counting: contract.counting.to_string(),
            spent_nano_usd: (pipeline.price().is_some() || pipeline.named_models().iter().any(|m| m.price.is_some()))
                .then(|| requests.iter().filter_map(|r| r.spend).fold(0u64, |sum, s| sum.saturating_add(s.nano_usd))),
            worst_case_nano_usd: pipeline.cost_bound().map(|b| b.nano_usd),
            steps,
            requests,
        }
    }
}

/// An agent step's requests: the first takes the changes made before the step, each later one
/// the tool calls answered since the request before it.
fn agent_requests(
    a: &AgentReport,
    pending: &mut Vec<Change>,
    requests: &mut Vec<RequestEntry>,
    entry: &impl Fn(usize, &SentRequest) -> RequestEntry,
    step: &str,
) {
    let mut calls = a.tool_calls.iter();
    let mut previous_calls = 0usize;
    for (i, m) in a.requests.iter().enumerate() {
        let mut e = entry(i + 1, &m.request);
        if i == 0 {
            e.changes = std::mem::take(pending);
            history_changes(
                &mut e.changes,
                step,
                a.history_trim.as_ref(),
                m.request.negotiation.history_messages_dropped,
            );
        }
        for call in calls.by_ref().take(previous_calls) {
            let by = format!("{step}, tool `{}` ({})", call.name, call.call_id);
            e.changes.push(Change::new(
                ChangeKind::Added,
                by.clone(),
                format!("result of {} tokens ({} documents)", call.tokens, call.documents_included.len()),
            ));
            for id in &call.duplicates_skipped {
                e.changes.push(Change::new(
                    ChangeKind::Deduplicated,
                    by.clone(),
                    format!("document {id} already in the turn"),
                ));
            }
            for id in &call.left_out {
                e.changes.push(Change::new(
                    ChangeKind::Dropped,
                    by.clone(),
                    format!("document {id} did not fit the turn"),
                ));
            }
            if call.truncated {
                e.changes.push(Change::new(
                    ChangeKind::Trimmed,
                    by.clone(),
                    format!("result cut to its {} tokens of room", call.content_budget),
                ));
            }
        }
        if i > 0 && !m.tools_offered && a.requests.get(i - 1).is_some_and(|p| p.tools_offered) {
            e.changes.push(Change::new(
                ChangeKind::Dropped,
                step,
                format!("tools no longer offered ({})", a.end.describe()),
            ));
        }
        output_change(&mut e.changes, step, &m.request.negotiation);
        previous_calls = m.tool_calls_requested;
        requests.push(e);
    }
}

/// The history a step's request lost: the trim to `max_history_tokens` (under its policy, with
/// the tokens before and after and each message), then what negotiation dropped for the output
/// floor.
fn history_changes(
    changes: &mut Vec<Change>,
    step: &str,
    trim: Option<&crate::history::HistoryTrimReport>,
    for_output: usize,
) {
    if let Some(trim) = trim.filter(|t| !t.dropped.is_empty()) {
        let by = match trim.policy {
            crate::history::HistoryTrimPolicy::Fold { low_water_percent } => {
                format!("{step}, history_trim: fold (history_low_water_percent {low_water_percent})")
            }
            _ => format!("{step}, max_history_tokens {}", trim.max_tokens),
        };
        changes.push(Change::new(ChangeKind::Dropped, by, trim.to_string()));
    }
    if for_output > 0 {
        changes.push(Change::new(
            ChangeKind::Dropped,
            format!("{step}, output negotiation"),
            format!("{for_output} oldest history message(s) to leave the output floor room"),
        ));
    }
}

fn output_change(changes: &mut Vec<Change>, step: &str, n: &crate::negotiate::NegotiationMeta) {
    if n.reduced {
        changes.push(Change::new(
            ChangeKind::Reduced,
            format!("{step}, output negotiation"),
            format!("output limit {} → {} (window − input − margin)", n.requested_max_tokens, n.adjusted_max_tokens),
        ));
    }
}

/// The changes a step that sends no request makes to the next one.
fn step_changes(detail: &StepDetail, step: &str, last_model_step: Option<&str>, pending: &mut Vec<Change>) {
    match detail {
        StepDetail::ManageContextBudget(b) => budget_changes(b, step, pending),
        StepDetail::FetchNodeTexts(f) => {
            for t in &f.truncated {
                pending.push(Change::new(
                    ChangeKind::Trimmed,
                    format!("{step}, evidence_tokens {}", f.budget),
                    format!("node {}: {} → {} tokens", t.id, t.original_tokens, t.kept_tokens),
                ));
            }
            for s in &f.skipped {
                let why = match s.reason {
                    SkipReason::NotFound => "not found".to_owned(),
                    SkipReason::Empty => "empty".to_owned(),
                    SkipReason::OverBudget { remaining } => format!("over the {remaining} tokens left"),
                    _ => "budget used up".to_owned(),
                };
                pending.push(Change::new(
                    ChangeKind::Dropped,
                    format!("{step}, evidence_tokens {}", f.budget),
                    format!("node {}: {why}", s.id),
                ));
            }
        }
        StepDetail::SetVariables { set } if set.iter().any(|s| s == "context_blocks") => {
            let (kind, what) = match last_model_step {
                Some(model_step) => {
                    (ChangeKind::Summarised, format!("context replaced by the reply of `{model_step}`"))
                }
                None => (ChangeKind::Dropped, "context replaced".to_owned()),
            };
            pending.push(Change::new(kind, step, what));
        }
        _ => {}
    }
}

/// The changes a `manage_context_budget` decision makes to the next request, made by `by`: the
/// step itself, or a model step that appended fetched texts before rendering its context.
fn budget_changes(b: &crate::budget::BudgetReport, by: &str, pending: &mut Vec<Change>) {
    for node in &b.nodes {
        if node.compacted {
            let rule = node
                .rule
                .map(|r| {
                    format!(
                        ", rule {} ({})",
                        r.index + 1,
                        serde_json::to_value(r.policy)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default()
                    )
                })
                .unwrap_or_default();
            pending.push(Change::new(
                ChangeKind::Compacted,
                format!("{by}{rule}"),
                format!(
                    "node {} ({}): {} → {} tokens, {} saved",
                    node.id,
                    node.language,
                    node.tokens_before,
                    node.tokens_after,
                    node.tokens_before.saturating_sub(node.tokens_after)
                ),
            ));
        }
    }
    match b.decision {
        BudgetDecision::Ok if !b.nodes.is_empty() => pending.push(Change::new(
            ChangeKind::Added,
            by,
            format!(
                "{} node(s) to the context: {} → {} of {} tokens",
                b.nodes.len(),
                b.context_tokens_before,
                b.context_tokens_after,
                b.max_context_tokens
            ),
        )),
        BudgetDecision::Over => pending.push(Change::new(
            ChangeKind::Dropped,
            by,
            format!(
                "a batch of {} node(s): the context would have been {} of {} tokens",
                b.nodes.len(),
                b.candidate_tokens,
                b.max_context_tokens
            ),
        )),
        _ => {}
    }
}

/// Who appended the fetched texts a model step found waiting in `node_texts`.
fn evidence_by(step: &str) -> String {
    format!("{step}, fetched texts waiting in node_texts (no manage_context_budget step took them)")
}

/// One line on what a step did, for the timeline.
fn summary(detail: &StepDetail) -> String {
    match detail {
        StepDetail::SearchNodes { hits, .. } => format!("{hits} hit(s)"),
        StepDetail::ExpandDependencyTree { added } => format!("{} dependency node(s) added", added.len()),
        StepDetail::FetchNodeTexts(f) => {
            format!("{} node(s), {} of {} evidence tokens", f.fetched.len(), f.tokens, f.budget)
        }
        StepDetail::ManageContextBudget(b) => format!(
            "{}: context {} → {} of {} tokens, {} saved by compaction",
            b.decision.transition(),
            b.context_tokens_before,
            b.context_tokens_after,
            b.max_context_tokens,
            b.tokens_saved()
        ),
        StepDetail::CallModel(c) => format!(
            "{}prompt {} + output {} reserved{}",
            evidence_summary(c.evidence.as_ref()),
            c.request.prompt_tokens,
            c.request.max_output_tokens,
            c.request.usage.map(|u| format!(", {} generated", u.completion_tokens)).unwrap_or_default()
        ),
        StepDetail::Agent(a) => format!(
            "{}{} request(s), {} tool call(s)",
            evidence_summary(a.evidence.as_ref()),
            a.requests.len(),
            a.tool_calls.len()
        ),
        StepDetail::LoopGuard { count, limit, allowed } => {
            format!("{} ({count} of {limit})", if *allowed { "allowed" } else { "denied" })
        }
        StepDetail::SetVariables { set } => format!("set {}", set.join(", ")),
        StepDetail::Custom { outcome } => format!("outcome {outcome}"),
    }
}

/// The start of a model step's summary when it appended fetched texts to its context.
fn evidence_summary(evidence: Option<&crate::budget::BudgetReport>) -> String {
    match evidence {
        Some(b) => format!(
            "{} fetched node(s) appended to the context ({} → {} of {} tokens), then ",
            b.nodes.len(),
            b.context_tokens_before,
            b.context_tokens_after,
            b.max_context_tokens
        ),
        None => String::new(),
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
