//! Spend caps at run time: what a run and a conversation may spend on model requests, checked
//! before every request.
//!
//! Every priced request is recorded in the state's [`SpendTotals`] (the run's, reset when a run
//! starts, and the conversation's, carried from question to question), from the provider's
//! reported usage or ctx's exact counts ([`Spend`](crate::llm::Spend)). Before a request leaves,
//! its worst cost is computed ([`WorstRequest`]): its prompt, counted exactly by the last guard,
//! times the input ratio, at the highest input rate (the cache-write rate when the provider bills
//! cache writes above the input price), plus its whole output limit times the output ratio, at
//! the output rate. When that could take the run past its cap (`settings.max_cost_per_run`, or
//! [`LoadOptions::max_cost_per_run`](super::LoadOptions::max_cost_per_run)) or the conversation
//! past its cap ([`LoadOptions::max_cost_per_conversation`](super::LoadOptions::max_cost_per_conversation)),
//! the request is not sent and the step fails with
//! [`PipelineError::SpendCapReached`](super::PipelineError::SpendCapReached), naming what was
//! spent, what is left, and the rates and ratios of the worst case; the step changes nothing but
//! the spend record. An `agent` step first tries the same request without its tools, asking for
//! the final answer, when that one fits.
//!
//! # Providers count differently
//!
//! A provider bills by its own count, which can exceed ctx's exact count of what was sent (tokens
//! it adds, images, tool schemas rendered on its side). So every reported usage is also an
//! observation ([`SpendTotals::observe`]): the input ratio is the prompt tokens billed (cache
//! reads and writes included) over ctx's count of the prompt, the output ratio the completion
//! tokens billed over ctx's count of the reply's text and tool-call arguments (a reply with
//! neither is no observation of it). The state keeps the highest of each, per model (a named
//! model's name, or `default`), for the whole conversation and in every snapshot. A request is
//! priced with, for each of input and output,
//!
//! `R = max(billed_token_ratio, the highest ratio seen for the step's model)`,
//!
//! where `billed_token_ratio` is a declared assumption (`settings.billed_token_ratio` or
//! [`LoadOptions::billed_token_ratio`](super::LoadOptions::billed_token_ratio), a number >= 1,
//! default 1): a prompt of `p` tokens counts as `⌈p × R_in⌉` input tokens and an output limit of
//! `m` as `⌈m × R_out⌉` output tokens, never fewer than ctx's count.
//!
//! **The promise.** A run never spends more than its cap, nor a conversation more than its own,
//! provided every request's provider bills at most `R_in ×` ctx's count of the prompt in prompt
//! tokens and at most `R_out ×` the request's output limit in completion tokens, with `R` as
//! above at the moment the request was checked. Two providers always meet it: one that bills a
//! fixed multiple `r` of ctx's counts with `r <= billed_token_ratio` and keeps its replies within
//! the output limit, and, after its first reported usage, one whose multiple is fixed but above the
//! declared ratio (the ratio seen is then its own). A provider that honours `max_tokens` on its own
//! count always meets the output half.
//!
//! **When the assumption is broken.** Before any usage of a model is seen, only the declared
//! ratio guards it. If the provider bills a multiple `r` above it, the first request to that model
//! can cost up to `r / billed_token_ratio` times its priced worst case, so a run can end above its
//! cap by at most `(r / billed_token_ratio - 1) ×` that request's worst case. That is the only
//! request that can: its usage is seen when it returns, and a run already over its cap sends
//! nothing more.
//!
//! A provider that bills hidden reasoning tokens as output raises the output ratio (ctx only
//! sees the reply): the check stays sound, and becomes more cautious for that model.
//!
//! The model can read what it has left: a `user_parts` entry whose source is
//! [`BUDGET_REMAINING_USD`] (`budget_remaining_usd`) renders the least of the two remainders in
//! US dollars (`0.0123`), or `unlimited` when no cap is set: the same remainders the check
//! compares each request's worst case with.

use serde::Serialize;

use crate::config::Price;
use crate::contract::usd;
use crate::state::{BilledRatios, SpendTotals, TokenRatio};

pub use crate::state::BUDGET_REMAINING_USD;

/// Which cap a request could have passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CapScope {
    /// The run's cap (`max_cost_per_run`).
    Run,
    /// The conversation's cap (`max_cost_per_conversation`).
    Conversation,
}

impl CapScope {
    /// `run` or `conversation`, for messages.
    pub fn name(self) -> &'static str {
        match self {
            CapScope::Run => "run",
            CapScope::Conversation => "conversation",
        }
    }
}

/// The caps a pipeline's runs are held to, in billionths of a US dollar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SpendCaps {
    /// The most one run may spend.
    pub per_run_nano_usd: Option<u64>,
    /// The most a conversation (every run since it started) may spend.
    pub per_conversation_nano_usd: Option<u64>,
}

/// A request that could pass a cap: which, the cap, and what was spent under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Over {
    pub(crate) scope: CapScope,
    pub(crate) cap: u64,
    pub(crate) spent: u64,
}

impl SpendCaps {
    /// Caps of `per_run` and `per_conversation` billionths of a US dollar.
    pub fn new(per_run_nano_usd: Option<u64>, per_conversation_nano_usd: Option<u64>) -> Self {
        SpendCaps { per_run_nano_usd, per_conversation_nano_usd }
    }

    /// Whether no cap is set.
    pub fn is_empty(&self) -> bool {
        self.per_run_nano_usd.is_none() && self.per_conversation_nano_usd.is_none()
    }

    /// What may still be spent after `spent`, in billionths of a US dollar, and under which cap:
    /// the least of the remainders. `None` without a cap.
    pub fn remaining(&self, spent: &SpendTotals) -> Option<(u64, CapScope)> {
        let run = self.per_run_nano_usd.map(|c| (c.saturating_sub(spent.run_nano_usd), CapScope::Run));
        let conversation = self
            .per_conversation_nano_usd
            .map(|c| (c.saturating_sub(spent.conversation_nano_usd), CapScope::Conversation));
        match (run, conversation) {
            (Some(r), Some(c)) => Some(if c.0 < r.0 { c } else { r }),
            (r, c) => r.or(c),
        }
    }

    /// The cap a request costing at most `request` could pass after `spent`, if any (the run's
    /// first).
    pub(crate) fn over(&self, spent: &SpendTotals, request: u64) -> Option<Over> {
        let check = |cap: Option<u64>, spent: u64, scope| {
            cap.filter(|&c| spent.saturating_add(request) > c).map(|cap| Over { scope, cap, spent })
        };
        check(self.per_run_nano_usd, spent.run_nano_usd, CapScope::Run)
            .or_else(|| check(self.per_conversation_nano_usd, spent.conversation_nano_usd, CapScope::Conversation))
    }

    /// The text of [`BUDGET_REMAINING_USD`]: dollars left (`0.0123`, without the `$`), or
    /// `unlimited`.
    pub fn remaining_text(&self, spent: &SpendTotals) -> String {
        match self.remaining(spent) {
            Some((left, _)) => usd(left).trim_start_matches('$').to_owned(),
            None => "unlimited".to_owned(),
        }
    }
}

/// A request's worst cost, as the spend caps price it before it is sent: ctx's exact prompt
/// count and output limit, each scaled by its billed-to-counted ratio, at the highest input rate
/// and the output rate.
///
/// Each ratio is `R = max(billed_token_ratio, the highest ratio seen for the step's model)`: the
/// declared assumption (`settings.billed_token_ratio` or
/// [`LoadOptions::billed_token_ratio`](super::LoadOptions::billed_token_ratio), >= 1, default 1)
/// and what the provider's reported usage has shown in the conversation
/// ([`SpendTotals::billed_ratios`]: prompt tokens billed, cache reads and writes included, over
/// ctx's count of the prompt; completion tokens billed over ctx's count of the reply's text and
/// tool-call arguments).
///
/// **The promise.** A run never spends more than its cap, nor a conversation more than its own,
/// provided each request's provider bills at most `R_in ×` ctx's count of its prompt in prompt
/// tokens and at most `R_out ×` its output limit in completion tokens. A provider billing a fixed
/// multiple of ctx's counts (replies within the output limit) meets it when the multiple is at
/// most `billed_token_ratio`, and after its first reported usage whatever the multiple. If the
/// assumption is broken (a multiple `r` above the declared ratio, before any usage of the model
/// is seen), that first request can cost up to `r / billed_token_ratio` times its worst case: the
/// run (or the conversation) can end over its cap by at most `(r / billed_token_ratio − 1) ×` that
/// worst case, and sends no later request under that cap.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct WorstRequest {
    /// The request's prompt tokens, counted exactly by ctx.
    pub prompt_tokens: usize,
    /// Its output limit.
    pub max_output_tokens: usize,
    /// The input ratio applied: the larger of the declared `billed_token_ratio` and the highest
    /// ratio seen for the model.
    pub input_ratio: f64,
    /// The output ratio applied, likewise.
    pub output_ratio: f64,
    /// The input tokens priced: `⌈prompt_tokens × input_ratio⌉`.
    pub input_tokens: usize,
    /// The output tokens priced: `⌈max_output_tokens × output_ratio⌉`.
    pub output_tokens: usize,
    /// The model's declared input price, US dollars per million tokens.
    pub input_price: f64,
    /// The rate every input token is priced at: the input price, or the cache-write rate when
    /// it is higher ([`Price::worst_input`]).
    pub input_rate: f64,
    /// The output rate, US dollars per million tokens.
    pub output_rate: f64,
    /// The worst cost, in billionths of a US dollar.
    pub nano_usd: u64,
}

impl WorstRequest {
    /// The worst cost of a request of `prompt_tokens` (ctx's exact count) and an output limit
    /// of `max_output_tokens` at `price`, when the provider is assumed to bill at most `declared`
    /// tokens per counted token and its usage has shown `seen`.
    ///
    /// ```
    /// use ctx::config::Price;
    /// use ctx::pipeline::WorstRequest;
    /// use ctx::state::{BilledRatios, TokenRatio};
    ///
    /// let price = Price::new(2.50, 1.25, 3.125, 10.00);
    /// // No usage seen: the declared ratio 1, every input token at the cache-write rate.
    /// let first = WorstRequest::new(&price, 1_000, 100, 1.0, BilledRatios::default());
    /// assert_eq!(first.nano_usd, 1_000 * 3_125 + 100 * 10_000);
    /// // The provider billed 1,500 prompt tokens for 1,000 counted: later prompts count 1.5 times.
    /// let seen = BilledRatios::new(TokenRatio::new(1_500, 1_000), TokenRatio::new(90, 100));
    /// let later = WorstRequest::new(&price, 1_001, 100, 1.0, seen);
    /// assert_eq!((later.input_tokens, later.output_tokens), (1_502, 100));
    /// assert_eq!(later.nano_usd, 1_502 * 3_125 + 100 * 10_000);
    /// ```
    pub fn new(
        price: &Price,
        prompt_tokens: usize,
        max_output_tokens: usize,
        declared: f64,
        seen: BilledRatios,
    ) -> WorstRequest {
        // `declared` is validated >= 1 at load; `max(1.0)` keeps a hand-made value from pricing
        // a token below ctx's count.
        let declared = if declared.is_finite() { declared.max(1.0) } else { 1.0 };
        let scale = |tokens: usize, ratio: TokenRatio| -> (usize, f64) {
            // ⌈tokens × declared⌉ in floating point is at least ⌊tokens × declared⌋ exactly (the
            // product rounds to the nearest double, and every integer below 2^53 is one), which
            // is the most whole tokens a provider billing at `declared` can bill.
            let assumed = (tokens as f64 * declared).ceil();
            let assumed = if assumed >= usize::MAX as f64 { usize::MAX } else { assumed as usize };
            (assumed.max(ratio.scale(tokens)), declared.max(ratio.get()))
        };
        let (input_tokens, input_ratio) = scale(prompt_tokens, seen.input);
        let (output_tokens, output_ratio) = scale(max_output_tokens, seen.output);
        WorstRequest {
            prompt_tokens,
            max_output_tokens,
            input_ratio,
            output_ratio,
            input_tokens,
            output_tokens,
            input_price: price.input,
            input_rate: price.worst_input(),
            output_rate: price.output,
            nano_usd: price.worst_nano_usd(input_tokens, output_tokens),
        }
    }
}

/// A ratio for messages: `1`, `1.5`, `1.333`.
fn ratio_text(r: f64) -> String {
    let text = format!("{r:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A rate in US dollars per million tokens, for messages: `$2.50/M`, `$3.125/M`.
pub(crate) fn rate_text(rate: f64) -> String {
    format!("{}/M", usd(crate::contract::nano_usd(rate)))
}

/// How a worst case's input is priced, for messages: the input price, and the cache-write rate
/// when that is the one applied.
fn input_rate_text(w: &WorstRequest) -> String {
    if w.input_rate > w.input_price {
        format!(
            "at the cache-write rate {} (the input price is {}; ctx cannot know what the provider will cache)",
            rate_text(w.input_rate),
            rate_text(w.input_price)
        )
    } else {
        format!("at the input price {}", rate_text(w.input_rate))
    }
}

/// The message of [`PipelineError::SpendCapReached`](super::PipelineError::SpendCapReached).
pub(crate) fn cap_message(step: &str, scope: CapScope, (cap, spent): (u64, u64), worst: &WorstRequest) -> String {
    let scaled = |tokens: usize, ratio: f64, priced: usize, what: &str| {
        if priced == tokens {
            format!("{tokens} {what} tokens")
        } else {
            format!("{tokens} {what} tokens × {} billed per counted = {priced}", ratio_text(ratio))
        }
    };
    format!(
        "step `{step}` stopped before its model request: the {scope} has spent {} of its {} cap, {} left, and the \
         request could cost {}: {} {}, {} at the output price {}",
        usd(spent),
        usd(cap),
        usd(cap.saturating_sub(spent)),
        usd(worst.nano_usd),
        scaled(worst.prompt_tokens, worst.input_ratio, worst.input_tokens, "prompt"),
        input_rate_text(worst),
        scaled(worst.max_output_tokens, worst.output_ratio, worst.output_tokens, "output"),
        rate_text(worst.output_rate),
        scope = scope.name(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_remainder_wins_and_a_request_is_checked_against_both_caps() {
        let caps = SpendCaps::new(Some(50_000_000), Some(120_000_000));
        let mut spent = SpendTotals::default();
        spent.add(30_000_000);
        assert_eq!(caps.remaining(&spent), Some((20_000_000, CapScope::Run)));
        assert_eq!(caps.remaining_text(&spent), "0.02");
        // Exactly at the cap is allowed; one more billionth is not.
        assert_eq!(caps.over(&spent, 20_000_000), None);
        assert_eq!(
            caps.over(&spent, 20_000_001),
            Some(Over { scope: CapScope::Run, cap: 50_000_000, spent: 30_000_000 })
        );
        // A new run of the same conversation: the conversation's remainder is the smaller.
        let mut next = spent.clone().for_new_run();
        next.add(80_000_000);
        assert_eq!(next, {
            let mut t = SpendTotals::default();
            t.run_nano_usd = 80_000_000;
            t.conversation_nano_usd = 110_000_000;
            t
        });
        assert_eq!(caps.remaining(&next), Some((0, CapScope::Run)));
        let wide = SpendCaps::new(Some(1_000_000_000), Some(120_000_000));
        assert_eq!(wide.remaining(&next), Some((10_000_000, CapScope::Conversation)));
        assert_eq!(wide.over(&next, 10_000_001).map(|o| o.scope), Some(CapScope::Conversation));
        assert_eq!(SpendCaps::default().remaining_text(&next), "unlimited");
        assert!(SpendCaps::default().over(&next, u64::MAX).is_none());
    }

    #[test]
    fn the_message_names_what_was_spent_and_what_is_left() {
        let price = Price::new(2.50, 1.25, 3.125, 10.00);
        let seen = BilledRatios::new(TokenRatio::new(3, 2), TokenRatio::default());
        let worst = WorstRequest::new(&price, 1_234, 512, 1.0, seen);
        assert_eq!((worst.input_tokens, worst.output_tokens), (1_851, 512));
        assert_eq!(worst.nano_usd, 1_851 * 3_125 + 512 * 10_000);
        let text = cap_message("answer", CapScope::Run, (50_000_000, 45_000_000), &worst);
        for part in [
            "step `answer`",
            "the run has spent $0.045 of its $0.05 cap, $0.005 left",
            "could cost $0.010904375",
            "1234 prompt tokens × 1.5 billed per counted = 1851",
            "at the cache-write rate $3.125/M (the input price is $2.50/M",
            "512 output tokens at the output price $10.00/M",
        ] {
            assert!(text.contains(part), "{part:?} missing from {text}");
        }
        // Without a cache-write premium or a ratio, the plain words.
        let plain = WorstRequest::new(&Price::new(2.50, 1.25, 2.50, 10.00), 100, 10, 1.0, BilledRatios::default());
        let text = cap_message("answer", CapScope::Conversation, (1, 0), &plain);
        assert!(text.contains("100 prompt tokens at the input price $2.50/M, 10 output tokens"), "{text}");
        assert!(text.contains("the conversation has spent"), "{text}");
    }

    #[test]
    fn the_worst_case_takes_the_larger_of_the_declared_and_the_seen_ratio() {
        let price = Price::new(1.0, 1.0, 1.0, 2.0);
        let seen = BilledRatios::new(TokenRatio::new(5, 4), TokenRatio::new(3, 1));
        // Declared 1.5 beats the seen 1.25 on input; the seen 3 beats it on output.
        let w = WorstRequest::new(&price, 1_001, 10, 1.5, seen);
        assert_eq!((w.input_tokens, w.output_tokens), (1_502, 30));
        assert_eq!((w.input_ratio, w.output_ratio), (1.5, 3.0));
        assert_eq!(w.nano_usd, 1_502 * 1_000 + 30 * 2_000);
        // A provider that bills less than ctx counts is priced at ctx's count.
        let under = BilledRatios::new(TokenRatio::new(1, 2), TokenRatio::new(1, 3));
        let w = WorstRequest::new(&price, 1_001, 10, 1.0, under);
        assert_eq!((w.input_tokens, w.output_tokens, w.input_ratio, w.output_ratio), (1_001, 10, 1.0, 1.0));
        // A hand-made ratio below 1 or not finite counts as 1.
        for bad in [0.5, f64::NAN] {
            let w = WorstRequest::new(&price, 7, 3, bad, BilledRatios::default());
            assert_eq!((w.input_tokens, w.output_tokens), (7, 3));
        }
    }
}
