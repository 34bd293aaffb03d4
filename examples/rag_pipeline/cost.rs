//! What a question costs, per model: the worst case proven when the pipeline was compiled, what
//! its requests were billed, and what the same run would cost with the summariser on the
//! answering (strong) model — what the small summariser saves.
//!
//! * **Worst case**: [`LoadedPipeline::cost_bound`], the bound `pipeline!` proves when it
//!   compiles the pipeline and `ctx explain` prints: the step graph's heaviest run under its loop
//!   guards, each request as the budget contract bounds it, at its model's price.
//! * **Spent**: the `spend` of each `call_model` step's report: its tokens priced at its model's
//!   price, from the server's reported usage, or from ctx's exact counts when it reports none
//!   (the offline model).
//! * **With the summariser on the strong model**: the worst case proven again with every step
//!   at the strong model's price, and the run's requests re-priced at it: the same billed tokens
//!   (the assumption: a strong summariser would have read and written exactly what the small one
//!   did).

use std::fmt::Write as _;

use ctx::config::{BilledTokens, Price};
use ctx::contract::{CostBound, cost_bound, loop_limit, nano_usd, usd};
use ctx::pipeline::LoadedPipeline;

use super::trace::TurnTrace;

/// The worst cases of a run, from the loaded pipeline alone.
#[derive(Debug, Clone)]
pub struct CostPlan {
    /// The proven worst case, each model step at its model's price.
    pub bound: CostBound,
    /// The model the comparison puts every step on (the answering step's).
    pub strong: String,
    /// Its price.
    pub strong_price: Price,
    /// The proven worst case with every model step at `strong_price`.
    pub all_strong: CostBound,
}

/// One model's share of a question's run.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCost {
    /// The model's declared name (`default` for the `model { … }` block).
    pub model: String,
    /// The steps that use it.
    pub steps: Vec<String>,
    /// Its price.
    pub price: Price,
    /// Its requests in the costliest run.
    pub worst_requests: u64,
    /// What they cost at worst, in billionths of a US dollar.
    pub worst_nano_usd: u64,
    /// Its requests in this run.
    pub requests: usize,
    /// Their tokens, by how they were billed.
    pub billed: BilledTokens,
    /// What they cost, in billionths of a US dollar.
    pub spent_nano_usd: u64,
}

/// A question's run: per model, in all, and with every step on the strong model.
#[derive(Debug, Clone, PartialEq)]
pub struct RunCost {
    /// Each model, in the order of the steps that use it.
    pub models: Vec<ModelCost>,
    /// The proven worst case of a run, in billionths of a US dollar.
    pub worst_nano_usd: u64,
    /// What this run spent.
    pub spent_nano_usd: u64,
    /// The strong model's name.
    pub strong: String,
    /// The proven worst case with every step on the strong model.
    pub all_strong_worst_nano_usd: u64,
    /// This run's billed tokens at the strong model's price.
    pub all_strong_spent_nano_usd: u64,
}

impl CostPlan {
    /// The plan of `loaded`, comparing against the model of step `strong_step`. `None` when a
    /// model step has no price (then no bound exists to show).
    pub fn new(loaded: &LoadedPipeline, strong_step: &str) -> Option<CostPlan> {
        let bound = loaded.cost_bound()?.clone();
        let strong = loaded.step_model(strong_step);
        let strong_price = strong.price?;
        let def = loaded.definition();
        // The loops each `loop_guard` allows, counted as the pipeline's own bound counts them.
        let limit = |i: usize| loop_limit(def, loaded.settings(), i);
        let all_strong = cost_bound(def, loaded.contract_report(), &strong_price, limit)?;
        let strong = strong.name.unwrap_or("default").to_owned();
        Some(CostPlan { bound, strong, strong_price, all_strong })
    }

    /// What `turn` cost beside its worst case. `None` when one of its requests was not priced.
    pub fn run(&self, turn: &TurnTrace) -> Option<RunCost> {
        let mut models: Vec<ModelCost> = Vec::new();
        for s in &self.bound.steps {
            let name = s.model.clone().unwrap_or_else(|| "default".to_owned());
            let at = match models.iter().position(|m| m.model == name) {
                Some(at) => at,
                None => {
                    models.push(ModelCost {
                        model: name,
                        steps: Vec::new(),
                        price: s.price,
                        worst_requests: 0,
                        worst_nano_usd: 0,
                        requests: 0,
                        billed: BilledTokens::default(),
                        spent_nano_usd: 0,
                    });
                    models.len() - 1
                }
            };
            let m = &mut models[at];
            m.steps.push(s.step_id.clone());
            m.worst_requests += s.requests();
            m.worst_nano_usd += s.nano_usd;
        }
        let mut all_strong_spent = 0;
        for (step, call) in turn.requests() {
            let spend = call.request.spend?;
            let m = models.iter_mut().find(|m| m.steps.iter().any(|s| s == step))?;
            m.requests += 1;
            m.billed = add(m.billed, spend.billed);
            m.spent_nano_usd += spend.nano_usd;
            // Rounded per request, as the ledger rounds each request's spend.
            all_strong_spent += nano_usd(self.strong_price.cost(spend.billed));
        }
        Some(RunCost {
            worst_nano_usd: self.bound.nano_usd,
            spent_nano_usd: models.iter().map(|m| m.spent_nano_usd).sum(),
            strong: self.strong.clone(),
            all_strong_worst_nano_usd: self.all_strong.nano_usd,
            all_strong_spent_nano_usd: all_strong_spent,
            models,
        })
    }
}

impl RunCost {
    /// What the small models save at worst: the worst case with every step on the strong model
    /// less the pipeline's.
    pub fn worst_saved(&self) -> u64 {
        self.all_strong_worst_nano_usd.saturating_sub(self.worst_nano_usd)
    }

    /// What they saved in this run.
    pub fn spent_saved(&self) -> u64 {
        self.all_strong_spent_nano_usd.saturating_sub(self.spent_nano_usd)
    }

    /// The table the example prints after each question's steps.
    pub fn render(&self, out: &mut String) {
        let others: Vec<&ModelCost> = self.models.iter().filter(|m| m.model != self.strong).collect();
        let steps: Vec<&str> = others.iter().flat_map(|m| m.steps.iter().map(String::as_str)).collect();
        let names: Vec<&str> = others.iter().map(|m| m.model.as_str()).collect();
        let moved = format!("{} on {}", steps.join(", "), self.strong);
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "Cost (worst case: proven when compiled; \"{moved}\": the same billed tokens at {}'s price):",
            self.strong
        );
        let row = |out: &mut String, model: &str, steps: &str, input: &str, output: &str, worst: &str, spent: &str| {
            let _ = writeln!(out, "  {model:<7} {steps:<10} {input:>8} {output:>9}  {worst:<24} {spent}");
        };
        row(out, "model", "steps", "input/M", "output/M", "worst case", "spent");
        for m in &self.models {
            let spent = format!(
                "{}, {}: {} in + {} out",
                usd(m.spent_nano_usd),
                requests(m.requests as u64),
                input_tokens(m.billed),
                m.billed.output
            );
            let worst = format!("{}, {}", usd(m.worst_nano_usd), requests(m.worst_requests));
            let (input, output) = (usd(nano_usd(m.price.worst_input())), usd(nano_usd(m.price.output)));
            row(out, &m.model, &m.steps.join(", "), &input, &output, &worst, &spent);
        }
        let worst_requests: u64 = self.models.iter().map(|m| m.worst_requests).sum();
        let spent_requests: usize = self.models.iter().map(|m| m.requests).sum();
        let worst = format!("{}, {}", usd(self.worst_nano_usd), requests(worst_requests));
        let spent = format!("{}, {}", usd(self.spent_nano_usd), requests(spent_requests as u64));
        row(out, "all", "", "", "", &worst, &spent);
        let _ = writeln!(
            out,
            "  {moved}: worst {}, spent {}; {} saves {}{} at worst, {}{} spent",
            usd(self.all_strong_worst_nano_usd),
            usd(self.all_strong_spent_nano_usd),
            names.join(", "),
            usd(self.worst_saved()),
            share(self.worst_saved(), self.all_strong_worst_nano_usd),
            usd(self.spent_saved()),
            share(self.spent_saved(), self.all_strong_spent_nano_usd)
        );
    }
}

fn add(a: BilledTokens, b: BilledTokens) -> BilledTokens {
    BilledTokens::new(
        a.input + b.input,
        a.cached_input + b.cached_input,
        a.cache_write + b.cache_write,
        a.output + b.output,
    )
}

/// Every input token, however it was billed.
fn input_tokens(b: BilledTokens) -> usize {
    b.input + b.cached_input + b.cache_write
}

fn requests(n: u64) -> String {
    if n == 1 { "1 request".to_owned() } else { format!("{n} requests") }
}

/// ` (N%)` of `of`, rounded; nothing when `of` is zero.
fn share(part: u64, of: u64) -> String {
    if of == 0 { String::new() } else { format!(" ({}%)", (part as f64 * 100.0 / of as f64).round()) }
}
