/// One agent turn.
///
/// The turn budget checked when compiled by `turn_budget!`: 262000 tokens for the conversation and this turn's tool calls and results, in a window of 272000.
#[allow(dead_code, unused_qualifications, clippy::all, clippy::pedantic, missing_docs)]
#[must_use]
pub(crate) fn agent_turn() -> ::ctx::__private::turn::TurnBudgetConfig {
    use ::ctx::__private::turn as __turn;
    __turn::TurnBudgetConfig {
        budget_tokens: 262000usize,
        context_window: 272000usize,
        fallback_fraction: 0.8f64,
        on_partial: __turn::PartialPolicy::Truncate,
        min_partial_tokens: 32usize,
        format: __turn::DocumentFormat {
            template: ::std::string::String::from(
                "<document id=\"{id}\">\n{text}\n</document>",
            ),
            separator: ::std::string::String::from("\n\n"),
            truncation_marker: ::std::string::String::from("\n[… truncated]"),
        },
    }
}
