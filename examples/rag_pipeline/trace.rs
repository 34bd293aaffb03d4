//! The budget trace: what every step did to the context, collected from the step reports, with
//! totals the test asserts on, what each question cost per model ([`CostPlan`]) and a rendering
//! for the terminal.

use std::fmt::Write as _;

use ctx::budget::{BudgetDecision, BudgetReport, NodeTrace};
use ctx::contract::{Clamp, StepBudget};
use ctx::pipeline::{CallReport, SkipReason, StepDetail};

use super::cost::CostPlan;

/// One step of a run.
#[derive(Debug, Clone)]
pub struct StepTrace {
    /// The step id.
    pub step_id: String,
    /// The transition taken (`next`, `on_over`, `more`, …).
    pub transition: String,
    /// The step it led to (`end` at the end).
    pub next: String,
    /// Exact tokens of the rendered `context_blocks` before the step.
    pub context_before: usize,
    /// The same after the step.
    pub context_after: usize,
    /// Search hits not yet read, after the step.
    pub hits_left: usize,
    /// What the step reported.
    pub detail: StepDetail,
}

/// One question and its run.
#[derive(Debug, Clone)]
pub struct TurnTrace {
    /// The question as asked.
    pub question: String,
    /// Every step, in order.
    pub steps: Vec<StepTrace>,
    /// The final answer.
    pub answer: String,
}

/// Compactions and their savings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Compactions {
    /// Nodes compacted and appended to the context.
    pub nodes: usize,
    /// Tokens they saved (raw text minus compacted text).
    pub tokens_saved: usize,
}

impl TurnTrace {
    /// The reports of the `manage_context_budget` steps.
    pub fn budget_reports(&self) -> impl Iterator<Item = &BudgetReport> {
        self.steps.iter().filter_map(|s| match &s.detail {
            StepDetail::ManageContextBudget(r) => Some(r),
            _ => None,
        })
    }

    /// The reports of the `call_model` steps, with their step ids.
    pub fn requests(&self) -> impl Iterator<Item = (&str, &CallReport)> {
        self.steps.iter().filter_map(|s| match &s.detail {
            StepDetail::CallModel(r) => Some((s.step_id.as_str(), r)),
            _ => None,
        })
    }

    /// Nodes appended to the context in compacted form, and what that saved.
    pub fn compactions(&self) -> Compactions {
        let appended = self.budget_reports().filter(|r| r.decision == BudgetDecision::Ok);
        appended.flat_map(|r| &r.nodes).filter(|n| n.compacted).fold(Compactions::default(), |acc, n| Compactions {
            nodes: acc.nodes + 1,
            tokens_saved: acc.tokens_saved + n.tokens_before.saturating_sub(n.tokens_after),
        })
    }

    /// How many times the loop guard `guard` let the run through.
    pub fn loop_passes(&self, guard: &str) -> u32 {
        self.steps
            .iter()
            .filter(|s| s.step_id == guard)
            .filter_map(|s| match s.detail {
                StepDetail::LoopGuard { count, allowed: true, .. } => Some(count),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Nodes appended to the context, and nodes refused (counted once per refusal).
    pub fn nodes_appended_and_refused(&self) -> (usize, usize) {
        self.budget_reports().fold((0, 0), |(ok, over), r| match r.decision {
            BudgetDecision::Ok => (ok + r.nodes.len(), over),
            BudgetDecision::Over => (ok, over + r.nodes.len()),
        })
    }
}

/// The whole conversation with the limits it ran under.
#[derive(Debug, Clone)]
pub struct BudgetTrace {
    /// The pipeline's name.
    pub pipeline: String,
    /// The model that answered.
    pub model: String,
    /// The model's window.
    pub context_window: usize,
    /// The context budget in effect.
    pub max_context_tokens: usize,
    /// `fail_fast` or `auto_clamp`.
    pub policy: String,
    /// The contract's terms for each `call_model` step.
    pub contract: Vec<StepBudget>,
    /// What `auto_clamp` lowered (empty under `fail_fast`).
    pub clamps: Vec<Clamp>,
    /// The proven worst cases a question's cost is shown against (`None` when a model has no
    /// price).
    pub cost: Option<CostPlan>,
    /// One entry per question.
    pub turns: Vec<TurnTrace>,
}

impl BudgetTrace {
    /// The limits, the contract, and each turn's steps and answer, as printed by the example.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_limits(&mut out);
        for (i, turn) in self.turns.iter().enumerate() {
            // Writing to a String cannot fail.
            let _ = writeln!(out, "\n== Question {}: {}", i + 1, turn.question);
            render_turn(&mut out, turn);
            match self.cost.as_ref().map(|plan| plan.run(turn)) {
                Some(Some(cost)) => cost.render(&mut out),
                Some(None) => {
                    let _ = writeln!(out, "Cost: a request of this question was not priced.");
                }
                None => {}
            }
            let _ = writeln!(out, "\nAnswer ({}):\n{}", self.model, turn.answer);
        }
        out
    }

    fn render_limits(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "Pipeline {}: window {} tokens, context budget {} tokens, limits policy {}.",
            self.pipeline, self.context_window, self.max_context_tokens, self.policy
        );
        let _ = writeln!(out, "Budget contract, checked when the pipeline was compiled (and again when loaded):");
        for s in &self.contract {
            let _ = writeln!(
                out,
                "  {:<10} {:<8} prompt {} + history {} + context {} + output {} + margin {} = {} <= {} ({} to spare)",
                s.step_id,
                format!("({})", s.model.as_deref().unwrap_or("default")),
                s.fixed_prompt_tokens,
                s.history_tokens,
                s.context_tokens,
                s.output_tokens,
                s.safety_margin_tokens,
                s.total_tokens(),
                s.context_window,
                s.headroom()
            );
        }
        if self.clamps.is_empty() {
            let _ = writeln!(out, "Clamps: none.");
        }
        for c in &self.clamps {
            let _ = writeln!(out, "Clamp: {:?} of `{}` {} -> {}: {}", c.target, c.step_id, c.before, c.after, c.reason);
        }
    }
}

fn render_turn(out: &mut String, turn: &TurnTrace) {
    let _ = writeln!(out, "{:>3}  {:<24} {:>13}  {:<33} what happened", "#", "step", "context", "transition");
    for (i, s) in turn.steps.iter().enumerate() {
        let context = format!("{} -> {}", s.context_before, s.context_after);
        let transition = format!("{} -> {}", s.transition, s.next);
        let _ = writeln!(out, "{:>3}  {:<24} {:>13}  {transition:<33} {}", i + 1, s.step_id, context, summary(s));
        if let StepDetail::ManageContextBudget(r) = &s.detail {
            for n in &r.nodes {
                let _ = writeln!(out, "{:>78}{}", "", node_line(n, r.decision));
            }
        }
    }
    let (appended, refused) = turn.nodes_appended_and_refused();
    let c = turn.compactions();
    let requests: Vec<String> =
        turn.requests().map(|(id, r)| format!("{id} {}+{}", r.prompt_tokens, r.max_output_tokens)).collect();
    let _ = writeln!(
        out,
        "Totals: {} steps; {appended} nodes appended, {refused} refused; {} compacted, saving {} tokens; \
         {} summarise pass(es); {} batch(es) read after the first; requests (prompt+max_tokens): {}.",
        turn.steps.len(),
        c.nodes,
        c.tokens_saved,
        turn.loop_passes("budget_loop_guard"),
        turn.loop_passes("evidence_guard"),
        requests.join(", ")
    );
}

fn summary(s: &StepTrace) -> String {
    match &s.detail {
        StepDetail::SearchNodes { query, hits } => format!("{hits} hits for \"{query}\""),
        StepDetail::ExpandDependencyTree { added } => {
            const SHOWN: usize = 3;
            let mut names: Vec<&str> = added.iter().take(SHOWN).map(String::as_str).collect();
            let more = added.len().saturating_sub(SHOWN);
            let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
            if names.is_empty() {
                names.push("none");
            }
            format!("+{} files named in the hits: {}{tail}", added.len(), names.join(", "))
        }
        StepDetail::FetchNodeTexts(r) => {
            let over = r.skipped.iter().filter(|k| matches!(k.reason, SkipReason::OverBudget { .. })).count();
            format!(
                "read {} texts, {} of {} evidence tokens; {} hits wait ({over} too large for what was left)",
                r.fetched.len(),
                r.tokens,
                r.budget,
                r.skipped.len()
            )
        }
        StepDetail::ManageContextBudget(r) => match r.decision {
            BudgetDecision::Ok => format!(
                "{} nodes appended ({} <= {}), {} tokens saved by compaction",
                r.nodes.len(),
                r.candidate_tokens,
                r.max_context_tokens,
                r.tokens_saved()
            ),
            BudgetDecision::Over => format!(
                "{} nodes refused ({} > {}), context and nodes kept for a retry",
                r.nodes.len(),
                r.candidate_tokens,
                r.max_context_tokens
            ),
        },
        StepDetail::CallModel(r) => {
            let finish = r.finish_reason.as_deref().map(|f| format!(" (finish: {f})")).unwrap_or_default();
            // The model's own count of the prompt shows how far its tokenizer is from ours.
            let reply = match r.usage {
                Some(u) => format!(
                    "reply {} tokens{finish}; the model counted {} prompt tokens",
                    u.completion_tokens, u.prompt_tokens
                ),
                None => format!("reply{finish}, no usage reported"),
            };
            format!(
                "request {} + max_tokens {} = {} <= window {}; history {} msg(s), {} dropped; {reply}",
                r.prompt_tokens,
                r.max_output_tokens,
                r.prompt_tokens + r.max_output_tokens,
                r.context_window,
                r.history_messages,
                r.history_removed,
            )
        }
        StepDetail::LoopGuard { count, limit, allowed: true } => format!("allowed: pass {count} of {limit}"),
        StepDetail::LoopGuard { limit, .. } => format!("denied: all {limit} passes used"),
        StepDetail::SetVariables { set } => format!("set {}", set.join(", ")),
        StepDetail::Custom { outcome } => format!("outcome `{outcome}`: {} hits left to read", s.hits_left),
        other => format!("{other:?}"),
    }
}

fn node_line(n: &NodeTrace, decision: BudgetDecision) -> String {
    let mark = match decision {
        BudgetDecision::Ok => '+',
        BudgetDecision::Over => 'x',
    };
    let how = match (&n.rule, n.compacted) {
        (Some(rule), true) => {
            format!("compacted ({}): {} -> {} tokens", rule.policy.name(), n.tokens_before, n.tokens_after)
        }
        (Some(rule), false) => {
            format!("rule {} fired, nothing to compact: {} tokens", rule.policy.name(), n.tokens_before)
        }
        (None, _) => format!("as is: {} tokens", n.tokens_before),
    };
    format!("{mark} {} [{}] {how}", n.id, n.language)
}
