//! History trimming: drop the oldest messages of a conversation until the rest fits a token budget.
//!
//! The kept messages are measured the way they will be sent: [`history_tokens`] is what they add
//! to a request under [`TokenCounter::count_messages`](crate::TokenCounter::count_messages) — contents, roles, names, tool calls and
//! the per-message overhead of the chat format. The request's one-time reply priming is not part
//! of any history (it is paid once per request, with or without history), so an empty history
//! costs 0.
//!
//! A leading system message is never trimmed (as LangChain's `trim_messages(include_system=True)`):
//! it is the instructions the rest of the conversation depends on, so it is always kept and its
//! cost counted in the budget. When it alone does not fit, trimming fails with
//! [`HistoryError::SystemOverBudget`] rather than dropping it silently.
//!
//! An assistant message that calls tools and the tool results answering it leave together: a
//! trim never keeps a tool result whose call was removed, and the kept part never starts with a
//! tool result.
//!
//! Two policies ([`HistoryTrimPolicy`](crate::config::HistoryTrimPolicy), `settings.history_trim`) decide where the cut falls when
//! the history is over its budget: `oldest_first` drops the fewest oldest messages
//! ([`trim_history`]); `fold` drops down to a low-water mark in one cut
//! ([`trim_history_with`]), so that the turns that follow append to a prefix that does not move
//! and a provider's prompt cache keeps hitting. Both keep the same units whole and never exceed
//! the budget.
//!
//! The trim is incremental. Each message is counted once (through the counter's cache, so a
//! history counted on an earlier turn is not tokenized again), removal walks from the front with a
//! running total, and the kept slice is confirmed by one exact count at the end — not the
//! "recount the whole history after every removal" loop that makes a long history slow to trim
//! elsewhere (run-llama/llama_index#12264: about a minute for a 217,248-token history).

#[doc(inline)]
pub use ctx_runtime::history::{
    DroppedMessage, HistoryError, HistoryTrim, HistoryTrimReport, history_tokens, message_tokens, trim_history,
    trim_history_in_place, trim_history_with,
};
