//! History trimming: drop the oldest messages of a conversation until the rest fits a token budget.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::history`.

use std::collections::HashMap;

pub use ctx_spec::config::HistoryTrimPolicy;

use crate::chat::{ChatMessage, Role};
use crate::codes::{Code, ErrorCode};
use crate::tokens::TokenCounter;
use crate::tokens::TokenError;

/// Errors of [`trim_history`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// The tokenizer failed.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The history's leading system message, which trimming always keeps, does not fit the
    /// budget by itself.
    #[error(
        "the history's leading system message costs {system_tokens} tokens, more than the history budget of \
         {max_tokens}; it is never trimmed: shorten it or raise the budget"
    )]
    SystemOverBudget {
        /// What the system message costs ([`message_tokens`]).
        system_tokens: usize,
        /// The budget it was trimmed to.
        max_tokens: usize,
    },
}

impl ErrorCode for HistoryError {
    fn code(&self) -> Code {
        match self {
            HistoryError::Token(e) => e.code(),
            HistoryError::SystemOverBudget { .. } => Code::HistorySystemOverBudget,
        }
    }
}

/// The outcome of [`trim_history`]: which messages stay and what they cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryTrim {
    /// Whether `history[0]` is a system message, which is always kept.
    pub system_kept: bool,
    /// Index in the input of the first kept message after the kept system message, if any;
    /// `history.len()` when nothing else is kept. The kept messages are the system message, then
    /// `history[first_kept..]`.
    pub first_kept: usize,
    /// How many messages were removed (those between the system message, if any, and
    /// `first_kept`).
    pub removed: usize,
    /// Exact tokens the kept messages add to a request ([`history_tokens`] of them).
    pub kept_tokens: usize,
    /// How many of the removed messages were over the budget: what `oldest_first` removes from
    /// the same history. Under `fold`, the other `removed - over_budget` went to reach the
    /// low-water mark.
    pub over_budget: usize,
}

impl HistoryTrim {
    /// The messages that stay, in order (of the `history` this trim was computed on).
    pub fn kept(&self, history: &[ChatMessage]) -> Vec<ChatMessage> {
        let head = history.get(..usize::from(self.system_kept)).unwrap_or(&[]);
        head.iter().chain(history.get(self.first_kept..).unwrap_or(&[])).cloned().collect()
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
/// A leading system message is always kept, and its cost counts against `max_tokens`: the
/// messages dropped are the oldest after it. When even the newest message (with the results of
/// its call, if any) does not fit, everything else is dropped (`first_kept == history.len()`;
/// `kept_tokens` is the system message's cost, or 0 without one).
///
/// # Errors
///
/// [`HistoryError::SystemOverBudget`] when the leading system message alone costs more than
/// `max_tokens` (it is never dropped silently); [`HistoryError::Token`] when the tokenizer fails.
///
/// ```
/// use ctx::history::trim_history;
/// use ctx::{ChatMessage, Encoding, TokenCounter};
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
///
/// // A leading system message stays, whatever the budget it leaves to the rest.
/// let mut with_system = vec![ChatMessage::system("Answer in French.")];
/// with_system.extend(history.iter().cloned());
/// let trim = trim_history(&with_system, 20, &counter)?;
/// assert_eq!(trim.kept(&with_system), [with_system[0].clone(), with_system[3].clone()]);
/// # Ok::<(), ctx::history::HistoryError>(())
/// ```
pub fn trim_history(
    history: &[ChatMessage],
    max_tokens: usize,
    counter: &TokenCounter,
) -> Result<HistoryTrim, HistoryError> {
    trim_history_with(history, max_tokens, HistoryTrimPolicy::OldestFirst, counter)
}

/// [`trim_history`] under `policy`: with [`HistoryTrimPolicy::OldestFirst`] exactly
/// [`trim_history`]; with [`HistoryTrimPolicy::Fold`], a history within `max_tokens` is kept
/// whole, and one over it is cut back to the policy's low-water mark
/// ([`HistoryTrimPolicy::cut_to`]) in one fold. When the newest unit alone is over the low-water
/// mark but within `max_tokens`, the fold keeps what `oldest_first` keeps rather than nothing.
/// Either way the kept part costs at most `max_tokens`, never separates a tool call from its
/// results, and keeps a leading system message.
///
/// Applied turn after turn to a conversation that keeps what was sent (as `call_model` and `agent`
/// do), a fold changes the history's prefix once per fold instead of on every turn.
///
/// # Errors
///
/// As [`trim_history`].
///
/// ```
/// use ctx::config::HistoryTrimPolicy;
/// use ctx::history::{history_tokens, trim_history_with};
/// use ctx::{ChatMessage, Encoding, TokenCounter};
///
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// let history: Vec<ChatMessage> = (0..8)
///     .flat_map(|i| [ChatMessage::user(format!("question {i}")), ChatMessage::assistant(format!("answer {i}"))])
///     .collect();
/// let budget = history_tokens(&counter, &history)? - 1;
/// let fold = HistoryTrimPolicy::Fold { low_water_percent: 50 };
/// let trim = trim_history_with(&history, budget, fold, &counter)?;
/// assert!(trim.kept_tokens <= budget / 2);
/// // Within the budget, a fold drops nothing.
/// let kept = trim.kept(&history);
/// assert_eq!(trim_history_with(&kept, budget, fold, &counter)?.removed, 0);
/// # Ok::<(), ctx::history::HistoryError>(())
/// ```
pub fn trim_history_with(
    history: &[ChatMessage],
    max_tokens: usize,
    policy: HistoryTrimPolicy,
    counter: &TokenCounter,
) -> Result<HistoryTrim, HistoryError> {
    let head = usize::from(history.first().is_some_and(|m| m.role == Role::System));
    let system_tokens = history_tokens(counter, history.get(..head).unwrap_or(&[]))?;
    if system_tokens > max_tokens {
        return Err(HistoryError::SystemOverBudget { system_tokens, max_tokens });
    }
    Ok(trim_after_system_with(history, max_tokens, policy, counter)?)
}

/// [`trim_after_system`] under `policy` (see [`trim_history_with`]).
pub(crate) fn trim_after_system_with(
    history: &[ChatMessage],
    max_tokens: usize,
    policy: HistoryTrimPolicy,
    counter: &TokenCounter,
) -> Result<HistoryTrim, TokenError> {
    let oldest_first = trim_after_system(history, max_tokens, counter)?;
    let low_water = policy.cut_to(max_tokens);
    if oldest_first.removed == 0 || low_water >= max_tokens {
        return Ok(oldest_first);
    }
    let folded = trim_after_system(history, low_water, counter)?;
    // A fold that would keep nothing where the budget holds the newest unit keeps that unit.
    if folded.first_kept >= history.len() && oldest_first.first_kept < history.len() {
        return Ok(oldest_first);
    }
    Ok(HistoryTrim { over_budget: oldest_first.removed, ..folded })
}

/// [`trim_history`] for callers that check the whole request themselves: when the leading system
/// message alone is over `max_tokens`, everything else is dropped and the system message kept,
/// so the caller sees the real size and reports its own error.
pub(crate) fn trim_after_system(
    history: &[ChatMessage],
    max_tokens: usize,
    counter: &TokenCounter,
) -> Result<HistoryTrim, TokenError> {
    let head = usize::from(history.first().is_some_and(|m| m.role == Role::System));
    let system_tokens = history_tokens(counter, history.get(..head).unwrap_or(&[]))?;
    // Costs in context: a tool result's framing names the call it answers, and a front cut never
    // separates the two, so every kept message keeps the cost it has here.
    let costs = counter.message_costs(history)?;
    let cuts = allowed_cuts(history);
    let mut total: usize = costs.iter().sum();
    let mut first_kept = head;
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
        let exact = kept_exact(history, head, first_kept, counter)?;
        total = exact;
        confirmed = true;
    }
    let kept_tokens = if first_kept >= history.len() { system_tokens } else { total };
    let removed = first_kept - head;
    Ok(HistoryTrim { system_kept: head == 1, first_kept, removed, kept_tokens, over_budget: removed })
}

/// [`history_tokens`] of `history[..head]` followed by `history[first_kept..]`.
fn kept_exact(
    history: &[ChatMessage],
    head: usize,
    first_kept: usize,
    counter: &TokenCounter,
) -> Result<usize, TokenError> {
    let tail = history.get(first_kept..).unwrap_or(&[]);
    if head == 0 {
        return history_tokens(counter, tail);
    }
    let kept: Vec<ChatMessage> = history.get(..head).unwrap_or(&[]).iter().chain(tail).cloned().collect();
    history_tokens(counter, &kept)
}

/// [`trim_history`] applied to `history`: the dropped messages are removed from the vector (a
/// leading system message stays). On an error the vector is left unchanged.
///
/// ```
/// use ctx::history::trim_history_in_place;
/// use ctx::{ChatMessage, Encoding, TokenCounter};
///
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// let mut history = vec![
///     ChatMessage::system("Answer in French."),
///     ChatMessage::user("What is a context window?"),
///     ChatMessage::assistant("The number of tokens a model reads and writes in one request."),
///     ChatMessage::user("And a token?"),
/// ];
/// let last = history[3].clone();
/// let trim = trim_history_in_place(&mut history, 20, &counter)?;
/// assert_eq!(history, [ChatMessage::system("Answer in French."), last]);
/// assert!(trim.kept_tokens <= 20);
/// # Ok::<(), ctx::history::HistoryError>(())
/// ```
pub fn trim_history_in_place(
    history: &mut Vec<ChatMessage>,
    max_tokens: usize,
    counter: &TokenCounter,
) -> Result<HistoryTrim, HistoryError> {
    let trim = trim_history(history, max_tokens, counter)?;
    let head = usize::from(trim.system_kept);
    history.drain(head.min(history.len())..trim.first_kept.min(history.len()));
    Ok(trim)
}

/// What trimming a step's history did, as its report shows it: the policy and budget it ran
/// under, the history's exact tokens before and after, how many messages were over the budget
/// and how many more a `fold` dropped to reach its low-water mark, and each message dropped.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct HistoryTrimReport {
    /// `settings.history_trim` (with its `history_low_water_percent`).
    pub policy: HistoryTrimPolicy,
    /// `max_history_tokens`.
    pub max_tokens: usize,
    /// Exact tokens of the whole history ([`history_tokens`]).
    pub tokens_before: usize,
    /// Exact tokens of what was kept ([`HistoryTrim::kept_tokens`]).
    pub tokens_after: usize,
    /// Messages over the budget ([`HistoryTrim::over_budget`]).
    pub over_budget: usize,
    /// Messages a `fold` dropped beyond those, to reach its low-water mark.
    pub to_low_water: usize,
    /// The messages dropped, oldest first.
    pub dropped: Vec<DroppedMessage>,
}

/// One history message a trim dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct DroppedMessage {
    /// Its position in the history, from 0.
    pub index: usize,
    /// Who wrote it.
    pub role: Role,
    /// Exact tokens it added to the request (in its place in the history).
    pub tokens: usize,
}

impl HistoryTrimReport {
    /// The report of `trim`, computed on `history` under `policy` and `max_tokens`.
    ///
    /// # Errors
    ///
    /// When the tokenizer fails.
    pub fn new(
        trim: &HistoryTrim,
        history: &[ChatMessage],
        max_tokens: usize,
        policy: HistoryTrimPolicy,
        counter: &TokenCounter,
    ) -> Result<Self, TokenError> {
        let costs = counter.message_costs(history)?;
        let head = usize::from(trim.system_kept);
        let dropped = (head..trim.first_kept.min(history.len()))
            .map(|index| DroppedMessage {
                index,
                role: history[index].role,
                tokens: costs.get(index).copied().unwrap_or(0),
            })
            .collect();
        Ok(HistoryTrimReport {
            policy,
            max_tokens,
            tokens_before: history_tokens(counter, history)?,
            tokens_after: trim.kept_tokens,
            over_budget: trim.over_budget,
            to_low_water: trim.removed.saturating_sub(trim.over_budget),
            dropped,
        })
    }

    /// The low-water mark a `fold` cut to, in tokens (`None` under `oldest_first`).
    pub fn low_water_tokens(&self) -> Option<usize> {
        matches!(self.policy, HistoryTrimPolicy::Fold { .. }).then(|| self.policy.cut_to(self.max_tokens))
    }
}

impl std::fmt::Display for HistoryTrimReport {
    /// One sentence: `12 oldest history message(s) dropped, 310 → 150 tokens: 2 over
    /// max_history_tokens 300, then 10 more down to the low-water mark of 150 tokens
    /// (history_trim: fold, history_low_water_percent 50): #0 user 6, #1 assistant 14, …`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} oldest history message(s) dropped, {} → {} tokens: {} over max_history_tokens {}",
            self.dropped.len(),
            self.tokens_before,
            self.tokens_after,
            self.over_budget,
            self.max_tokens
        )?;
        match self.policy {
            HistoryTrimPolicy::Fold { low_water_percent } => {
                let mark = self.policy.cut_to(self.max_tokens);
                if self.to_low_water > 0 {
                    write!(f, ", then {} more down to the low-water mark of {mark} tokens", self.to_low_water)?;
                } else if self.tokens_after <= mark {
                    write!(f, ", which also brought it within the low-water mark of {mark} tokens")?;
                } else {
                    write!(f, "; the newest message alone is over the low-water mark of {mark} tokens, so it stays")?;
                }
                write!(f, " (history_trim: fold, history_low_water_percent {low_water_percent})")?;
            }
            _ => write!(f, " (history_trim: oldest_first)")?,
        }
        for (i, m) in self.dropped.iter().enumerate() {
            write!(f, "{}#{} {} {}", if i == 0 { ": " } else { ", " }, m.index, m.role.as_str(), m.tokens)?;
        }
        Ok(())
    }
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
        ToolCall::new(id, "search", format!("{{\"q\":\"{id}\"}}"))
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
    fn a_leading_system_message_is_kept_and_counted_at_every_budget() {
        let c = counter();
        let h = vec![
            ChatMessage::system("You are terse."),
            ChatMessage::user("first question"),
            ChatMessage::assistant("first answer"),
            ChatMessage::user("second question"),
        ];
        let system = message_tokens(&c, &h[0]).unwrap();
        let all = history_tokens(&c, &h).unwrap();
        for max in system..all {
            let trim = trim_history(&h, max, &c).unwrap();
            let kept = trim.kept(&h);
            assert!(trim.system_kept && kept[0] == h[0], "budget {max}: {kept:?}");
            assert_eq!(trim.kept_tokens, history_tokens(&c, &kept).unwrap());
            assert!(trim.kept_tokens <= max);
            assert_eq!(trim.removed + kept.len(), h.len());
        }
        // Room for the system message and the last one only.
        let last = history_tokens(&c, &[h[0].clone(), h[3].clone()]).unwrap();
        let trim = trim_history(&h, last, &c).unwrap();
        assert_eq!((trim.first_kept, trim.removed, trim.kept_tokens), (3, 2, last));
        let trim = trim_history(&h, system, &c).unwrap();
        assert_eq!((trim.first_kept, trim.removed, trim.kept_tokens), (4, 3, system));
        let mut v = h.clone();
        trim_history_in_place(&mut v, last, &c).unwrap();
        assert_eq!(v, [h[0].clone(), h[3].clone()]);
    }

    #[test]
    fn a_system_message_over_the_budget_is_an_error_not_a_silent_drop() {
        let c = counter();
        let h = vec![ChatMessage::system("You are terse."), ChatMessage::user("q")];
        let system = message_tokens(&c, &h[0]).unwrap();
        let err = trim_history(&h, system - 1, &c).unwrap_err();
        assert_eq!(err, HistoryError::SystemOverBudget { system_tokens: system, max_tokens: system - 1 });
        assert_eq!(err.code(), "HISTORY_SYSTEM_OVER_BUDGET");
        let mut v = h.clone();
        assert!(trim_history_in_place(&mut v, 0, &c).is_err());
        assert_eq!(v, h, "unchanged on error");
        // For callers that check the whole request: the system message alone is kept.
        let trim = trim_after_system(&h, 0, &c).unwrap();
        assert_eq!(trim.kept(&h), [h[0].clone()]);
        // A system message later in the history is an ordinary message.
        let later = vec![ChatMessage::user("q"), ChatMessage::system("note")];
        assert_eq!(trim_history(&later, 0, &c).unwrap().first_kept, 2);
    }

    #[test]
    fn a_fold_cuts_to_the_low_water_mark_once_and_then_lets_the_history_grow() {
        let c = counter();
        let fold = HistoryTrimPolicy::Fold { low_water_percent: 50 };
        let mut h = vec![ChatMessage::system("You are terse.")];
        let budget = 120;
        let mut folds = 0;
        let mut prefix_changes = 0;
        for turn in 0..40 {
            let trim = trim_history_with(&h, budget, fold, &c).unwrap();
            let kept = trim.kept(&h);
            assert!(trim.kept_tokens <= budget, "turn {turn}");
            assert_eq!(trim.kept_tokens, history_tokens(&c, &kept).unwrap());
            if trim.removed > 0 {
                folds += 1;
                assert!(trim.kept_tokens <= fold.cut_to(budget), "turn {turn}: a fold goes down to the mark");
            }
            // What the oldest-first trim would keep from the same history.
            let oldest = trim_history(&h, budget, &c).unwrap();
            assert!(oldest.first_kept <= trim.first_kept, "a fold keeps no more than oldest-first");
            if kept.get(1) != h.get(1) {
                prefix_changes += 1;
            }
            h = kept;
            h.push(ChatMessage::user(format!("question number {turn}")));
            h.push(ChatMessage::assistant(format!("the answer to question number {turn}")));
        }
        assert!(folds >= 2, "{folds} folds");
        assert_eq!(prefix_changes, folds, "the prefix moves only when the history folds");
        // Oldest-first on the same conversation moves the prefix on every turn once full.
        let mut h = vec![ChatMessage::system("You are terse.")];
        let mut moves = 0;
        for turn in 0..40 {
            let trim = trim_history(&h, budget, &c).unwrap();
            moves += usize::from(trim.removed > 0);
            h = trim.kept(&h);
            h.push(ChatMessage::user(format!("question number {turn}")));
            h.push(ChatMessage::assistant(format!("the answer to question number {turn}")));
        }
        assert!(moves > 2 * folds, "oldest-first moved the prefix {moves} times, the fold {folds}");
    }

    #[test]
    fn a_fold_keeps_the_newest_unit_when_only_the_budget_holds_it() {
        let c = counter();
        let h = vec![ChatMessage::user("q"), ChatMessage::assistant("a long answer ".repeat(20))];
        let last = message_tokens(&c, &h[1]).unwrap();
        let fold = HistoryTrimPolicy::Fold { low_water_percent: 10 };
        let trim = trim_history_with(&h, last, fold, &c).unwrap();
        assert_eq!((trim.first_kept, trim.kept_tokens), (1, last));
        assert_eq!(trim, trim_history(&h, last, &c).unwrap());
        // The system message over the budget is the same error under both policies.
        let s = vec![ChatMessage::system("You are terse."), ChatMessage::user("q")];
        assert!(matches!(trim_history_with(&s, 1, fold, &c), Err(HistoryError::SystemOverBudget { .. })));
    }

    #[test]
    fn a_leading_orphan_result_is_never_the_first_kept_message() {
        let h = vec![ChatMessage::user("q"), ChatMessage::tool_result("zz", "orphan"), ChatMessage::user("x")];
        assert_eq!(allowed_cuts(&h), vec![true, false, true, true]);
    }
}
