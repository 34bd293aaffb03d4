//! The budget trace: what every step did to the context, collected from the step reports, with
//! totals the test asserts on, what each question cost per model ([`CostPlan`]) and a rendering
//! for the terminal.

use std::fmt::Write as _;

use ctx::budget::{BudgetDecision, BudgetReport};
use ctx::contract::{Clamp, StepBudget};
use ctx::pipeline::{CallReport, StepDetail};

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
            // Every term the total sums: the inputs a step renders (the question) and an agent's
            // tool schemas as well as the budgets, so the line adds up.
            let tools = match s.tool_schema_tokens {
                0 => String::new(),
                n => format!(" + tools {n}"),
            };
            let inputs: String = s
                .inputs
                .iter()
                .map(|b| match b.source.as_str() {
                    "user_question" | "user_question_en" => format!(" + question {}", b.tokens),
                    other => format!(" + {other} {}", b.tokens),
                })
                .collect();
            let _ = writeln!(
                out,
                "  {:<10} {:<8} prompt {}{tools} + history {} + context {}{inputs} + output {} + margin {} = {} <= {} ({} to spare)",
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
        // What the step did is its report's `Display` (`{:#}`: with a line per node compacted or
        // refused); a custom step's outcome gains what this pipeline's state says of it.
        let detail = match &s.detail {
            StepDetail::Custom { outcome } => format!("outcome `{outcome}`: {} hits left to read", s.hits_left),
            detail => format!("{detail:#}"),
        };
        let mut lines = detail.lines();
        let first = lines.next().unwrap_or_default();
        let _ = writeln!(out, "{:>3}  {:<24} {:>13}  {transition:<33} {first}", i + 1, s.step_id, context);
        for line in lines {
            let _ = writeln!(out, "{:>78}{}", "", line.trim_start());
        }
    }
    let (appended, refused) = turn.nodes_appended_and_refused();
    let c = turn.compactions();
    let requests: Vec<String> = turn
        .requests()
        .map(|(id, r)| format!("{id} {}+{}", r.request.prompt_tokens, r.request.max_output_tokens))
        .collect();
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
