//! History trimming: drop the oldest messages of a conversation until the rest fits a token budget.
//!
//! The kept messages are measured the way they will be sent: [`history_tokens`] is what they add
//! to a request under [`TokenCounter::count_messages`] — contents, roles, names, tool calls and
//! the per-message overhead of the chat format. The request's one-time reply priming is not part
//! of any history (it is paid once per request, with or without history), so an empty history
//! costs 0.
//!
//! An assistant message that calls tools and the tool results answering it leave together: a
//! trim never keeps a tool result whose call was removed, and the kept part never starts with a
//! tool result.
//!
//! The trim is incremental. Each message is counted once (through the counter's cache, so a
//! history counted on an earlier turn is not tokenized again), removal walks from the front with a
//! running total, and the kept slice is confirmed by one exact count at the end — not the
//! "recount the whole history after every removal" loop that makes a long history slow to trim
//! elsewhere (run-llama/llama_index#12264: about a minute for a 217,248-token history).

use std::collections::HashMap;

use crate::chat::{ChatMessage, Role};
use crate::error::TokenError;
use crate::tokens::TokenCounter;

/// The outcome of [`trim_history`]: which messages stay and what they cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryTrim {
    /// Index in the input of the first kept message; `history.len()` when nothing is kept. The kept
    /// messages are `history[first_kept..]`.
    pub first_kept: usize,
    /// How many messages were removed from the front (equal to `first_kept`).
    pub removed: usize,
    /// Exact tokens the kept messages add to a request ([`history_tokens`] of the kept slice).
    pub kept_tokens: usize,
}

impl HistoryTrim {
    /// The kept part of `history` (the slice this trim was computed on).
    pub fn kept<'a>(&self, history: &'a [ChatMessage]) -> &'a [ChatMessage] {
        history.get(self.first_kept..).unwrap_or(&[])
    }
}

/// Exact tokens `messages` add to a request: [`TokenCounter::count_messages`] of them, less the
/// request's reply priming (what `count_messages` charges for no messages at all). 0 when empty.
pub fn history_tokens(counter: &TokenCounter, messages: &[ChatMessage]) -> Result<usize, TokenError> {
    if messages.is_empty() {
        return Ok(0);
    }
    Ok(counter.count_messages(messages)?.saturating_sub(counter.count_messages(&[])?))
}

/// Exact tokens one message adds to a request ([`history_tokens`] of that message alone).
pub fn message_tokens(counter: &TokenCounter, message: &ChatMessage) -> Result<usize, TokenError> {
    history_tokens(counter, std::slice::from_ref(message))
}

/// Where `history` may be cut: `cuts[i]` is true when dropping `history[..i]` leaves no tool
/// result without its call. `cuts` has `history.len() + 1` entries; dropping nothing and dropping
/// everything are always allowed.
fn allowed_cuts(history: &[ChatMessage]) -> Vec<bool> {
    // last_answer[a]: the index of the last tool result answering a call made by message a (a
    // itself when none does). Cutting strictly inside (a, last_answer[a]] would orphan a result.
    let mut last_answer: Vec<usize> = (0..history.len()).collect();
    // A call id answers to the most recent assistant message that made a call with that id.
    let mut caller_of: HashMap<&str, usize> = HashMap::new();
    for (j, message) in history.iter().enumerate() {
        for call in &message.tool_calls {
            caller_of.insert(call.id.as_str(), j);
        }
        if message.role == Role::Tool
            && let Some(&a) = message.tool_call_id.as_deref().and_then(|id| caller_of.get(id))
            && let Some(slot) = last_answer.get_mut(a)
        {
            *slot = (*slot).max(j);
        }
    }
    let mut cuts = Vec::with_capacity(history.len() + 1);
    let mut reach = 0usize; // the furthest last_answer of any message before the cut
    cuts.push(true);
    for i in 1..=history.len() {
        reach = reach.max(last_answer[i - 1]);
        // A kept part starting with a tool result can never hold that result's call.
        let starts_with_result = history.get(i).is_some_and(|m| m.role == Role::Tool);
        cuts.push(reach < i && !starts_with_result);
    }
    cuts
}

/// Finds the smallest number of oldest messages to drop so that the rest of `history` costs at
/// most `max_tokens` ([`history_tokens`]), never separating a tool call from its results.
///
/// When even the newest message (with the results of its call, if any) does not fit, the whole
/// history is dropped (`first_kept == history.len()`, `kept_tokens == 0`). Errors only when the
/// tokenizer fails.
///
/// ```
/// use ctx_runtime::history::trim_history;
/// use ctx_runtime::{ChatMessage, Encoding, TokenCounter};
///
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// let history = vec![
///     ChatMessage::user("What is a context window?"),
///     ChatMessage::assistant("The number of tokens a model reads and writes in one request."),
///     ChatMessage::user("And a token?"),
/// ];
/// let trim = trim_history(&history, 10, &counter)?;
/// assert_eq!(trim.kept(&history), &history[2..]);
/// assert!(trim.kept_tokens <= 10);
/// # Ok::<(), ctx_runtime::TokenError>(())
/// ```
pub fn trim_history(
    history: &[ChatMessage],
    max_tokens: usize,
    counter: &TokenCounter,
) -> Result<HistoryTrim, TokenError> {
    // Costs in context: a tool result's framing names the call it answers, and a front cut never
    // separates the two, so every kept message keeps the cost it has here.
    let costs = counter.message_costs(history)?;
    let cuts = allowed_cuts(history);
    let mut total: usize = costs.iter().sum();
    let mut first_kept = 0usize;
    // Whether the running total must be confirmed before the current cut is accepted.
    let mut confirmed = false;
    loop {
        while total > max_tokens && first_kept < history.len() {
            // Drop one unit: up to the next allowed cut.
            loop {
                total = total.saturating_sub(costs.get(first_kept).copied().unwrap_or(0));
                first_kept += 1;
                if cuts.get(first_kept).copied().unwrap_or(true) {
                    break;
                }
            }
            confirmed = false;
        }
        if confirmed || first_kept >= history.len() {
            break;
        }
        // The running total is a sum of per-message counts; accept the cut only on the exact
        // count of the kept slice as it will be sent.
        let exact = history_tokens(counter, history.get(first_kept..).unwrap_or(&[]))?;
        total = exact;
        confirmed = true;
    }
    let kept_tokens = if first_kept >= history.len() { 0 } else { total };
    Ok(HistoryTrim { first_kept, removed: first_kept, kept_tokens })
}

/// [`trim_history`] applied to `history`: the dropped messages are removed from the vector. On an
/// error the vector is left unchanged.
pub fn trim_history_in_place(
    history: &mut Vec<ChatMessage>,
    max_tokens: usize,
    counter: &TokenCounter,
) -> Result<HistoryTrim, TokenError> {
    let trim = trim_history(history, max_tokens, counter)?;
    history.drain(..trim.first_kept.min(history.len()));
    Ok(trim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ToolCall;
    use crate::tokens::Encoding;

    fn counter() -> TokenCounter {
        TokenCounter::for_encoding(Encoding::Cl100kBase)
    }

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "search".into(), arguments: format!("{{\"q\":\"{id}\"}}") }
    }

    #[test]
    fn message_cost_is_count_messages_less_priming() {
        let c = counter();
        let m = ChatMessage::user("hello world");
        // 3 per message + "user" (1) + "hello world" (2).
        assert_eq!(message_tokens(&c, &m).unwrap(), 6);
        assert_eq!(history_tokens(&c, &[]).unwrap(), 0);
        let two = [m.clone(), ChatMessage::assistant("hi")];
        assert_eq!(history_tokens(&c, &two).unwrap(), c.count_messages(&two).unwrap() - 3);
    }

    #[test]
    fn cuts_never_split_a_call_from_its_results() {
        let h = vec![
            ChatMessage::user("q"),
            ChatMessage::assistant_tool_calls("", vec![call("a"), call("b")]),
            ChatMessage::tool_result("a", "ra"),
            ChatMessage::tool_result("b", "rb"),
            ChatMessage::assistant("answer"),
        ];
        assert_eq!(allowed_cuts(&h), vec![true, true, false, false, true, true]);
    }

    #[test]
    fn a_leading_orphan_result_is_never_the_first_kept_message() {
        let h = vec![ChatMessage::user("q"), ChatMessage::tool_result("zz", "orphan"), ChatMessage::user("x")];
        assert_eq!(allowed_cuts(&h), vec![true, false, true, true]);
    }
}
