//! The worst-case cost of a run, proven before it runs: [`cost_bound`], and the rule that holds it
//! to `settings.max_cost_per_run` ([`cost_issues`], code `MAX_COST_PER_RUN_EXCEEDED`).
//!
//! A run's model requests come from its `call_model` and `agent` steps. The step graph and its
//! loop guards say how many times each step can run ([`StepGraph::heaviest_run`]: the exact
//! heaviest run, the same analysis as the bound on model requests); the contract says what one
//! request of the step can carry at worst; the model's [`Price`] says what that costs:
//!
//! ```text
//! cost(run) <= Σ over model steps: runs × requests per run × (worst input × input price
//!                                                              + worst output × output price)
//! ```
//!
//! * **Runs**: the step's visits on the heaviest run, where a visit of a step weighs what its
//!   requests cost at worst, so the bound is one run's cost, not the sum of every branch. The run
//!   starts from the first step with its loop counts at zero and an empty context (unless the
//!   pipeline carries it), as a conversation, `ctx run` and a durable run start one; a branch
//!   behind an `on_over` that such a run never takes (`BUDGET_ON_OVER_NEVER_TAKEN`) costs nothing
//!   ([`fresh_run_graph`]), and the step says why ([`StepCost::unpaid`]). What a run whose
//!   caller fills the context before it starts can cost, that branch paid, is
//!   [`CostBound::seeded_nano_usd`].
//! * **Requests per run**: 1 for `call_model`, `max_tool_calls + 1` for `agent`.
//! * **Worst input**: the contract's terms of the step, the margin included (fixed prompt, tool
//!   schemas, `max_history_tokens`, `max_context_tokens`, the budgets of the question and the other
//!   values the user message carries, `budget_safety_margin_tokens`); for an
//!   `agent`, whose later requests also carry the turn's tool results, at least its turn budget
//!   with the tool schemas and the margin, and never more than the window less the output. All of
//!   it priced as uncached input ([`Price::worst_input`]: or as a cache write, when the provider
//!   bills those higher): a cache hit only lowers the bill.
//! * **Worst output**: the step's output limit in effect (negotiation only ever lowers it).
//!
//! Costs are kept in billionths of a US dollar (nano-USD), as the run-time spend ledger keeps
//! them, so the arithmetic a message shows adds up exactly. The bound prices each request as the
//! contract bounds it; at run time every request is also checked, by its exact count, against
//! what the run has left (the runtime's spend caps), so a run never passes `max_cost_per_run`
//! even when its state holds more than its budgets, or a context its caller filled.

use serde::Serialize;

use crate::codes::Code;
use crate::config::{Price, Settings};
use crate::pipeline::context_flow::{fresh_run_graph, on_over_never_taken_steps};
use crate::pipeline::definition::{PipelineDef, StepKind};
use crate::pipeline::graph::{Resolved, StepGraph, Target};
use crate::validation::{ConfigIssue, FieldPath};

use super::input_budget::InputKind;
use super::report::{ContractReport, StepBudget};

/// One model step's share of a run's worst-case cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct StepCost {
    /// The step id.
    pub step_id: String,
    /// The step's path (`steps.answer`).
    pub at: FieldPath,
    /// `call_model` or `agent`.
    pub kind: &'static str,
    /// The step's named model (`model: NAME`), `None` for the default `model`.
    pub model: Option<String>,
    /// The price its requests are priced at: its model's.
    pub price: Price,
    /// How many times the step runs in the costliest run (0 when that run does not reach it).
    pub runs: u64,
    /// The most model requests one run of the step makes: 1, or `max_tool_calls + 1`.
    pub requests_per_run: u64,
    /// The most input tokens one request carries (see the module documentation).
    pub input_tokens: usize,
    /// The most output tokens one request asks for: the output limit in effect.
    pub output_tokens: usize,
    /// What one request costs at worst, in billionths of a US dollar: its tokens times the
    /// bound's [`CostBound::billed_token_ratio`] (rounded up), at the model's rates.
    pub request_nano_usd: u64,
    /// `runs × requests_per_run × request_nano_usd`.
    pub nano_usd: u64,
    /// Why the step costs nothing, when the costliest run does not reach it (`runs` is 0).
    pub unpaid: Option<Unpaid>,
}

/// Why a model step adds nothing to the cost bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "why")]
#[non_exhaustive]
pub enum Unpaid {
    /// Every path to the step passes the `on_over` of one of these `manage_context_budget` steps,
    /// which a run from an empty context never takes (`BUDGET_ON_OVER_NEVER_TAKEN`); a run whose
    /// caller fills the context can reach it ([`CostBound::seeded_nano_usd`]).
    BehindNeverTakenOnOver {
        /// The ids of those steps.
        steps: Vec<String>,
    },
    /// A run can reach the step, but a costlier branch makes the costliest run.
    NotOnCostliestRun,
}

impl Unpaid {
    /// The reason in words, for a table cell: ``only behind `on_over` of `manage_budget`, never
    /// taken (BUDGET_ON_OVER_NEVER_TAKEN)``.
    pub fn describe(&self) -> String {
        match self {
            Unpaid::BehindNeverTakenOnOver { steps } => {
                let steps: Vec<String> = steps.iter().map(|s| format!("`{s}`")).collect();
                format!(
                    "only behind `on_over` of {}, which a run from an empty context never takes \
                     (BUDGET_ON_OVER_NEVER_TAKEN)",
                    steps.join(" or ")
                )
            }
            Unpaid::NotOnCostliestRun => "not on the costliest run (a costlier branch is)".to_owned(),
        }
    }
}

impl StepCost {
    /// The model requests the step makes in the costliest run.
    pub fn requests(&self) -> u64 {
        self.runs.saturating_mul(self.requests_per_run)
    }
}

/// The most a run can cost, step by step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct CostBound {
    /// Every `call_model` and `agent` step, in the order of the definition.
    pub steps: Vec<StepCost>,
    /// The model requests of the costliest run.
    pub requests: u64,
    /// The costliest run, in billionths of a US dollar: the sum of the steps' `nano_usd`. Of a
    /// run that starts with an empty context (see the module documentation).
    pub nano_usd: u64,
    /// When the bound leaves out an `on_over` no run from an empty context takes
    /// ([`Self::never_taken_on_over`]): the costliest run whose caller fills the context before it
    /// starts, that branch paid. `None` when nothing was left out (then [`Self::nano_usd`] holds
    /// for every starting context). The run-time spend caps hold such a run to
    /// `max_cost_per_run` whatever it costs.
    pub seeded_nano_usd: Option<u64>,
    /// The `manage_context_budget` steps whose `on_over` the bound leaves out, by id.
    pub never_taken_on_over: Vec<String>,
    /// Whether a run can cost exactly this (`false` when loop limits are so large that the
    /// graph's product bound was used; it is then an upper bound).
    pub exact: bool,
    /// The price it was computed at: the default model's, or with named models the first model
    /// step's (each step's own is [`StepCost::price`]).
    pub price: Price,
    /// The most tokens a provider is assumed to bill per token ctx counts
    /// (`settings.billed_token_ratio`, default 1): every request's tokens are priced times it,
    /// so the bound holds for any provider that bills at most this ratio.
    pub billed_token_ratio: f64,
}

impl CostBound {
    /// The bound in US dollars.
    pub fn usd(&self) -> f64 {
        self.nano_usd as f64 / 1e9
    }

    /// The step that costs the most in the costliest run (the first of equals).
    pub fn dominant(&self) -> Option<&StepCost> {
        self.steps.iter().filter(|s| s.nano_usd > 0).fold(None, |best: Option<&StepCost>, s| match best {
            Some(b) if b.nano_usd >= s.nano_usd => Some(b),
            _ => Some(s),
        })
    }

    /// The arithmetic, one term per step the costliest run reaches, e.g. ``step `answer` 3 runs
    /// × 1 request × (6,016 input × $2.50/M + 512 output × $10.00/M = $0.02016) = $0.06048``,
    /// joined by ` + `.
    pub fn arithmetic(&self) -> String {
        let terms: Vec<String> = self.steps.iter().filter(|s| s.runs > 0).map(|s| self.term(s)).collect();
        if terms.is_empty() { "no model request".to_owned() } else { terms.join(" + ") }
    }

    fn term(&self, s: &StepCost) -> String {
        let plural = |n: u64, one: &str| if n == 1 { format!("{n} {one}") } else { format!("{n} {one}s") };
        let on = s.model.as_ref().map(|m| format!(" on model `{m}`")).unwrap_or_default();
        let r = self.billed_token_ratio;
        // Counted tokens, and what they are billed as when the provider is assumed to bill more.
        let tokens = |n: usize| match r > 1.0 {
            true => format!("{} (billed as {})", thousands(n), thousands(billed(n, r))),
            false => thousands(n),
        };
        format!(
            "step `{}`{on} {} × {} × ({} input × {}/M + {} output × {}/M = {}) = {}",
            s.step_id,
            plural(s.runs, "run"),
            plural(s.requests_per_run, "request"),
            tokens(s.input_tokens),
            usd(rate_nano(s.price.worst_input())),
            tokens(s.output_tokens),
            usd(rate_nano(s.price.output)),
            usd(s.request_nano_usd),
            usd(s.nano_usd),
        )
    }
}

/// Dollars from billionths, as few decimals as show it exactly (at least 2): `$0.05`,
/// `$0.060312`, `$12.50`.
pub fn usd(nano_usd: u64) -> String {
    let whole = nano_usd / 1_000_000_000;
    let frac = format!("{:09}", nano_usd % 1_000_000_000);
    let frac = frac.trim_end_matches('0');
    let frac = if frac.len() < 2 { format!("{frac:0<2}") } else { frac.to_owned() };
    format!("${whole}.{frac}")
}

/// A dollar amount in billionths, rounded to the nearest (saturating; negative and NaN give 0).
pub fn nano_usd(usd: f64) -> u64 {
    (usd * 1e9).round() as u64
}

/// A rate per million tokens, in billionths of a dollar per million (for [`usd`]).
fn rate_nano(rate: f64) -> u64 {
    nano_usd(rate)
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The most input tokens one request of the step carries (see the module documentation).
pub fn worst_input_tokens(budget: &StepBudget, agent: bool) -> usize {
    let terms = budget.total_tokens().saturating_sub(budget.output_tokens);
    if !agent {
        return terms;
    }
    let window_room = budget.context_window.saturating_sub(budget.output_tokens);
    // A later request is the turn's messages (within the turn budget), the tool schemas and the
    // reply priming; the margin stands for the priming when larger, as in the other terms.
    let turn = budget
        .turn_budget_tokens
        .unwrap_or(window_room)
        .saturating_add(budget.tool_schema_tokens)
        .saturating_add(budget.safety_margin_tokens.max(budget.reply_priming_tokens))
        .min(window_room);
    terms.max(turn)
}

/// The most a run of `def` can cost at `price`, with the contract's `report` (the limits in
/// effect) and `limit(i)` the loops `loop_guard` step `i` allows. `None` when the graph has an
/// unguarded cycle (reported by the graph rules).
pub fn cost_bound(
    def: &PipelineDef,
    report: &ContractReport,
    price: &Price,
    limit: impl Fn(usize) -> u64,
) -> Option<CostBound> {
    cost_bound_priced(def, report, |_| Some(*price), limit)
}

/// A model step's requests per run, worst input and output tokens, worst request in nano-USD,
/// and its price.
type Worst = (u64, usize, usize, u64, Price);

/// [`cost_bound`] with each model step priced at `price(i)`, the price of step `i`'s own model
/// (`model: NAME`, else the default). `None` also when a model step has no price.
pub fn cost_bound_priced(
    def: &PipelineDef,
    report: &ContractReport,
    price: impl Fn(usize) -> Option<Price>,
    limit: impl Fn(usize) -> u64,
) -> Option<CostBound> {
    cost_bound_billed(def, report, price, limit, 1.0)
}

/// The tokens a provider bills for `n` counted ones at `ratio` billed per counted, rounded up
/// (exactly `n` at 1).
pub fn billed(n: usize, ratio: f64) -> usize {
    if ratio <= 1.0 || !ratio.is_finite() {
        return n;
    }
    // Ratios are a few digits; f64 holds every product of them and a token count exactly
    // enough that rounding up never falls short of the true product.
    (n as f64 * ratio).ceil() as usize
}

/// [`cost_bound_priced`] for a provider that bills at most `ratio` tokens per token ctx counts
/// (`settings.billed_token_ratio`; below 1 counts as 1): each request's input and output tokens
/// are priced times `ratio`, rounded up.
///
/// ```
/// use ctx::config::Price;
/// use ctx::contract::billed;
///
/// let price = Price::new(2.5, 2.5, 2.5, 10.0);
/// // 1,000 counted input tokens and 100 output, billed at 1.5 per counted token.
/// assert_eq!(price.worst_nano_usd(billed(1_000, 1.5), billed(100, 1.5)), 1_500 * 2_500 + 150 * 10_000);
/// ```
pub fn cost_bound_billed(
    def: &PipelineDef,
    report: &ContractReport,
    price: impl Fn(usize) -> Option<Price>,
    limit: impl Fn(usize) -> u64,
    ratio: f64,
) -> Option<CostBound> {
    let ratio = if ratio.is_finite() && ratio > 1.0 { ratio } else { 1.0 };
    // Each model step: its requests per run and what one request costs at worst, at its price.
    let mut per_step: Vec<Option<Worst>> = Vec::with_capacity(def.steps.len());
    for (i, step) in def.steps.iter().enumerate() {
        let agent = match &step.kind {
            StepKind::CallModel(_) => false,
            StepKind::Agent(_) => true,
            _ => {
                per_step.push(None);
                continue;
            }
        };
        let Some(budget) = report.step(&step.id) else {
            per_step.push(None);
            continue;
        };
        let price = price(i)?;
        let requests = u64::try_from(budget.max_model_requests).unwrap_or(u64::MAX);
        let input = worst_input_tokens(budget, agent);
        let output = budget.output_tokens;
        let one = price.worst_nano_usd(billed(input, ratio), billed(output, ratio));
        per_step.push(Some((requests, input, output, one, price)));
    }
    let visit = |i: usize| per_step[i].map_or(0, |(requests, _, _, one, _)| requests.saturating_mul(one));
    // A run from an empty context: an `on_over` proven never taken is not paid for.
    let never = on_over_never_taken_steps(def);
    let fresh = fresh_run_graph(def);
    let run = fresh.heaviest_run(&limit, visit)?;
    let full = StepGraph::new(def);
    let seeded = match never.is_empty() {
        true => None,
        false => Some(full.run_bound(&limit, visit)?.max),
    };
    let reached = reachable_from_first(&fresh, def.steps.len());
    let unpaid = |i: usize, runs: u64| -> Option<Unpaid> {
        if runs > 0 {
            return None;
        }
        if reached[i] {
            return Some(Unpaid::NotOnCostliestRun);
        }
        // Unreached only without the left-out transitions: name those that lead to the step.
        let behind: Vec<String> = never
            .iter()
            .filter(|&&m| {
                full.edges(m).iter().filter(|e| e.key == "on_over").any(|e| match e.resolved {
                    Resolved::Known(Target::Step(t)) => reachable_from(&full, t, def.steps.len())[i],
                    _ => false,
                })
            })
            .map(|&m| def.steps[m].id.clone())
            .collect();
        (!behind.is_empty()).then_some(Unpaid::BehindNeverTakenOnOver { steps: behind })
    };
    let steps: Vec<StepCost> = def
        .steps
        .iter()
        .enumerate()
        .zip(&per_step)
        .zip(&run.visits)
        .filter_map(|(((i, step), cost), &runs)| {
            let (requests_per_run, input_tokens, output_tokens, request_nano_usd, price) = (*cost)?;
            Some(StepCost {
                unpaid: unpaid(i, runs),
                step_id: step.id.clone(),
                at: FieldPath::root().key("steps").key(step.id.as_str()),
                kind: step.kind.keyword(),
                model: step.kind.model_request().and_then(|c| c.model.clone()),
                price,
                runs,
                requests_per_run,
                input_tokens,
                output_tokens,
                request_nano_usd,
                nano_usd: runs.saturating_mul(requests_per_run).saturating_mul(request_nano_usd),
            })
        })
        .collect();
    let requests = steps.iter().fold(0u64, |sum, s| sum.saturating_add(s.requests()));
    let price = match steps.first() {
        Some(first) => first.price,
        None => (0..def.steps.len()).find_map(&price).unwrap_or(Price::uncached(0.0, 0.0)),
    };
    Some(CostBound {
        requests,
        nano_usd: run.bound.max,
        seeded_nano_usd: seeded,
        never_taken_on_over: never.iter().map(|&m| def.steps[m].id.clone()).collect(),
        exact: run.bound.exact,
        price,
        steps,
        billed_token_ratio: ratio,
    })
}

/// The steps a walk of `graph` from the first step can reach.
fn reachable_from_first(graph: &StepGraph<'_>, n: usize) -> Vec<bool> {
    reachable_from(graph, 0, n)
}

/// The steps a walk of `graph` from step `start` can reach (`start` included).
fn reachable_from(graph: &StepGraph<'_>, start: usize, n: usize) -> Vec<bool> {
    let mut seen = vec![false; n];
    let mut stack = vec![start];
    while let Some(u) = stack.pop() {
        if u >= n || std::mem::replace(&mut seen[u], true) {
            continue;
        }
        stack.extend(graph.edges(u).iter().filter_map(|e| match e.resolved {
            Resolved::Known(Target::Step(v)) => Some(v),
            _ => None,
        }));
    }
    seen
}

/// The loops `loop_guard` step `i` of `def` allows under `settings` (0 for other steps, and for a
/// setting that is missing: the settings rules report it).
pub fn loop_limit(def: &PipelineDef, settings: &Settings, i: usize) -> u64 {
    match def.steps.get(i).map(|s| &s.kind) {
        Some(StepKind::LoopGuard(g)) => settings.get(&g.max_turn_loops_from_settings).unwrap_or(0),
        _ => 0,
    }
}

/// `settings.max_cost_per_run` against the proven cost bound: `MAX_COST_PER_RUN_EXCEEDED`, with the
/// arithmetic and the step that dominates, when the costliest run costs more. Nothing without a
/// cap, a valid one, or a price (`MISSING_PRICE` and `INVALID_MAX_COST_PER_RUN` are the price
/// rules' to report).
pub fn cost_issues(def: &PipelineDef, bound: Option<&CostBound>) -> Vec<ConfigIssue> {
    let Some(cap) = def.settings.max_cost_per_run.filter(|c| c.is_finite() && *c > 0.0) else {
        return Vec::new();
    };
    let Some(bound) = bound else {
        return Vec::new();
    };
    let cap_nano = nano_usd(cap);
    if bound.nano_usd <= cap_nano {
        return Vec::new();
    }
    let dominant = bound.dominant();
    let share = |s: &StepCost| (s.nano_usd as f64 * 100.0 / bound.nano_usd as f64).round();
    // With one step priced, its term is the whole sum: no total repeated, no share of 100%.
    let priced = bound.steps.iter().filter(|s| s.runs > 0).count();
    let dominates = dominant
        .filter(|_| priced > 1)
        .map(|s| format!("; step `{}` dominates with {} ({}% of it)", s.step_id, usd(s.nano_usd), share(s)))
        .unwrap_or_default();
    let total = if priced > 1 { format!(" = {}", usd(bound.nano_usd)) } else { String::new() };
    let at_most = if bound.exact { "the costliest run" } else { "a run (bounded, loop limits too large to be exact)" };
    let requests =
        if bound.requests == 1 { "1 model request".to_owned() } else { format!("{} model requests", bound.requests) };
    let message = format!(
        "{at_most} can cost {} ({requests}), more than `max_cost_per_run` {}: {}{total}{dominates}",
        usd(bound.nano_usd),
        usd(cap_nano),
        bound.arithmetic(),
    );
    // A question whose budget is the room the window leaves is priced at that room.
    let question_default =
        def.settings.max_question_tokens.is_none()
            && def.steps.iter().filter_map(|s| s.kind.model_request()).any(|c| {
                c.context.is_none() && c.parts().iter().any(|p| InputKind::of(&p.source) == InputKind::Question)
            });
    let question_note = if question_default {
        "; the question is priced at the room the window leaves it, as `max_question_tokens` is not set: declare \
         the longest question a run accepts"
    } else {
        ""
    };
    let help = match dominant {
        Some(s) if s.kind == "agent" => format!(
            "lower step `{}`'s `max_tool_calls`, its output limit or its budgets (or the loop limit that repeats it), \
             or raise `max_cost_per_run` to at least {}",
            s.step_id,
            usd(bound.nano_usd)
        ),
        Some(s) => format!(
            "lower step `{}`'s output limit or the budgets its request carries (or the loop limit that repeats it), \
             or raise `max_cost_per_run` to at least {}",
            s.step_id,
            usd(bound.nano_usd)
        ),
        None => format!("raise `max_cost_per_run` to at least {}", usd(bound.nano_usd)),
    } + question_note;
    vec![
        ConfigIssue::new(
            Code::MaxCostPerRunExceeded,
            FieldPath::root().key("settings").key("max_cost_per_run"),
            message,
        )
        .with_help(help),
    ]
}

/// [`cost_issues`] for a bound that leaves out the model steps in `waiting` (their prompt has no
/// text yet, or their model did not resolve: each has its own issue): such a bound is a lower
/// bound of the run's cost, so a cap it passes is passed whatever those steps cost, and the
/// message says the cost is at least that much. Nothing when `waiting` is empty.
pub fn cost_issues_at_least(def: &PipelineDef, bound: Option<&CostBound>, waiting: &[&str]) -> Vec<ConfigIssue> {
    if waiting.is_empty() {
        return Vec::new();
    }
    let steps: Vec<String> = waiting.iter().map(|s| format!("`{s}`")).collect();
    cost_issues(def, bound)
        .into_iter()
        .map(|mut issue| {
            issue.message = format!(
                "{} — at least: step{} {} {} not priced yet (fix {} issue{} first), so a run can cost more still",
                issue.message,
                if steps.len() == 1 { "" } else { "s" },
                steps.join(", "),
                if steps.len() == 1 { "is" } else { "are" },
                if steps.len() == 1 { "its" } else { "their" },
                if steps.len() == 1 { "" } else { "s" },
            );
            issue
        })
        .collect()
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod tests;
