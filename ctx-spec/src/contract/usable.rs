//! What a fix the contract suggests must leave: a step that can still do its work.
//!
//! When a step does not fit its window, `BUDGET_CONTRACT_VIOLATED`'s help lists ways out, each
//! lowering one term by the overflow. A value lowered that far can fit the window and still leave
//! the step unusable (an answer of 33 tokens, a context budget no fetch can fill), so a lowered
//! value is suggested only when it is **usable**:
//!
//! * an **output limit** (`max_output_tokens`, `max_tokens`) is usable from
//!   [`OUTPUT_FLOOR_TOKENS`] up: the least output a `call_model` or `agent` request is negotiated
//!   down to at run time, so a lower limit is a step the runtime would already consider starved;
//! * a **context budget** (`settings.max_context_tokens`) is usable above the largest
//!   `evidence_tokens` of the pipeline's `fetch_node_texts` steps
//!   ([`CallModelCheck::evidence_tokens`](super::CallModelCheck::evidence_tokens)): at or below
//!   it, the evidence rule refuses the pipeline (`PIPELINE_BUDGET_MISCONFIG`); with no fetch
//!   step, from 1 token up, as for every budget;
//! * a **history budget** (`settings.max_history_tokens`) is usable from 1 token up: 0 keeps no
//!   history for a step that asks for it.
//!
//! A term that cannot be lowered to a usable value by the overflow is left out of the help; a
//! larger window is always offered.

/// The least output limit a suggestion leaves a step, in tokens: the floor output negotiation
/// keeps at run time (`ctx::negotiate::NegotiationConfig::DEFAULT_FLOOR` is this value).
pub const OUTPUT_FLOOR_TOKENS: usize = 500;

/// `current` lowered by `over`, when what is left is at least `least`.
pub(super) fn lowered(current: usize, over: u128, least: usize) -> Option<u128> {
    (current as u128).checked_sub(over).filter(|left| *left >= least.max(1) as u128)
}

/// The least usable output limit.
pub(super) fn least_output() -> usize {
    OUTPUT_FLOOR_TOKENS
}

/// The least usable context budget when the largest evidence budget is `evidence_tokens`.
pub(super) fn least_context(evidence_tokens: usize) -> usize {
    evidence_tokens.saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_lowered_only_to_what_is_usable() {
        assert_eq!(lowered(512, 479, least_output()), None, "512 → 33 leaves no usable output");
        assert_eq!(lowered(6_000, 768, least_output()), Some(5_232));
        assert_eq!(lowered(600, 100, least_output()), Some(500), "the floor itself is usable");
        assert_eq!(lowered(600, 101, least_output()), None);
        assert_eq!(lowered(4_000, 3_000, least_context(1_500)), None, "at or below the evidence budget");
        assert_eq!(lowered(4_000, 2_499, least_context(1_500)), Some(1_501));
        assert_eq!(lowered(4_000, 2_500, least_context(1_500)), None);
        assert_eq!(lowered(2_000, 2_000, 1), None, "a budget of 0 is none");
        assert_eq!(lowered(2_000, 1_999, 0), Some(1));
        assert_eq!(lowered(10, u128::MAX, 1), None);
    }
}
