//! Spend caps at run time: what a run and a conversation may spend on model requests, checked
//! before every request.
//!
//! Every priced request is recorded in the state's [`SpendTotals`] (the run's, reset when a run
//! starts, and the conversation's, carried from question to question), from the provider's
//! reported usage or ctx's exact counts ([`Spend`](crate::llm::Spend)). Before a request leaves,
//! its worst cost is known exactly: its prompt, counted by the last guard, at the highest input
//! rate, plus its whole output limit at the output rate. When that could take the run past its
//! cap (`settings.max_cost_per_run`, or [`LoadOptions::max_cost_per_run`](super::LoadOptions::max_cost_per_run))
//! or the conversation past its cap ([`LoadOptions::max_cost_per_conversation`](super::LoadOptions::max_cost_per_conversation)),
//! the request is not sent and the step fails with
//! [`PipelineError::SpendCapReached`](super::PipelineError::SpendCapReached), naming what was
//! spent and what is left; the step changes nothing but the spend record. An `agent` step first
//! tries the same request without its tools, asking for the final answer, when that one fits.
//!
//! The model can read what it has left: a `user_parts` entry whose source is
//! [`BUDGET_REMAINING_USD`] (`budget_remaining_usd`) renders the least of the two remainders in
//! US dollars (`0.0123`), or `unlimited` when no cap is set.

use serde::Serialize;

use crate::config::Price;
use crate::contract::usd;
use crate::state::SpendTotals;

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

/// The worst cost of a request of `prompt_tokens` (exact) and an output limit of `max_output`.
pub(crate) fn worst_request(price: &Price, prompt_tokens: usize, max_output: usize) -> u64 {
    price.worst_nano_usd(prompt_tokens, max_output)
}

/// The message of [`PipelineError::SpendCapReached`](super::PipelineError::SpendCapReached).
pub(crate) fn cap_message(
    step: &str,
    scope: CapScope,
    (cap, spent, request): (u64, u64, u64),
    (prompt_tokens, max_output_tokens): (usize, usize),
) -> String {
    format!(
        "step `{step}` stopped before its model request: the {scope} has spent {} of its {} cap, {} left, and the \
         request ({prompt_tokens} prompt tokens at the input price, {max_output_tokens} output tokens at the output \
         price) could cost {}",
        usd(spent),
        usd(cap),
        usd(cap.saturating_sub(spent)),
        usd(request),
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
        let mut next = spent.for_new_run();
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
        let text = cap_message("answer", CapScope::Run, (50_000_000, 45_000_000, 8_100_000), (1_234, 512));
        for part in
            ["step `answer`", "the run has spent $0.045 of its $0.05 cap, $0.005 left", "$0.0081", "1234 prompt"]
        {
            assert!(text.contains(part), "{part:?} missing from {text}");
        }
    }
}
