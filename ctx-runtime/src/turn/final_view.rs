//! What the model finally sees at the end of a turn: each document once, and a last check of the
//! whole request against a fraction of the window.
//!
//! The ledger already keeps its documents unique ([`TurnLedger::documents`]); [`dedup_by_id`] does
//! the same for a list gathered elsewhere (several turns, another retriever). The fallback check
//! counts the exact request — messages, tool schemas, chat overhead — and says whether it passes
//! the configured fraction of the window, so an agent can compact or answer without more tools
//! before the server rejects it.

use std::collections::HashSet;

use super::ledger::{SeenDocument, TurnLedger};
use super::pack::{PackedDocument, RankedDocument};
use crate::chat::{ChatMessage, ToolSchema};
use crate::state::NodeText;
use crate::tokens::TokenCounter;
use crate::tokens::TokenError;

/// Something with a document id.
pub trait DocumentId {
    /// The id that identifies the document.
    fn document_id(&self) -> &str;
}

impl DocumentId for RankedDocument {
    fn document_id(&self) -> &str {
        &self.id
    }
}

impl DocumentId for PackedDocument {
    fn document_id(&self) -> &str {
        &self.id
    }
}

impl DocumentId for SeenDocument {
    fn document_id(&self) -> &str {
        &self.id
    }
}

impl DocumentId for NodeText {
    fn document_id(&self) -> &str {
        &self.id
    }
}

/// `documents` with every repeat of an id removed; the first occurrence stays where it was.
pub fn dedup_by_id<T: DocumentId>(documents: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen: HashSet<String> = HashSet::new();
    documents.into_iter().filter(|d| seen.insert(d.document_id().to_owned())).collect()
}

/// The outcome of the fallback check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FallbackVerdict {
    /// Exact tokens of the request (messages, tool schemas, chat overhead).
    pub request_tokens: usize,
    /// `floor(fraction × window)`.
    pub threshold: usize,
    /// The window checked against.
    pub context_window: usize,
    /// Whether the request passes the threshold: the agent should fall back (compact, drop
    /// tool results, answer now) instead of sending it as is.
    pub exceeded: bool,
}

/// Counts the request exactly and compares it with `fraction` of `context_window`.
pub fn fallback_check(
    counter: &TokenCounter,
    messages: &[ChatMessage],
    tools: &[ToolSchema],
    context_window: usize,
    fraction: f64,
) -> Result<FallbackVerdict, TokenError> {
    let request_tokens = counter.count_request(messages, tools)?;
    // The product of a window (< 2^53) and a fraction in (0, 1] is exact enough in f64; floor
    // keeps the threshold on the safe side.
    let threshold = (context_window as f64 * fraction.clamp(0.0, 1.0)).floor() as usize;
    let exceeded = request_tokens > threshold;
    if exceeded {
        tracing::warn!(target: "ctx::turn", request_tokens, threshold, context_window, "fallback check: over threshold");
    } else {
        tracing::debug!(target: "ctx::turn", request_tokens, threshold, context_window, "fallback check: within threshold");
    }
    Ok(FallbackVerdict { request_tokens, threshold, context_window, exceeded })
}

impl TurnLedger {
    /// [`fallback_check`] with this ledger's window and fraction.
    pub fn fallback_check(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolSchema],
    ) -> Result<FallbackVerdict, TokenError> {
        let config = self.config();
        fallback_check(self.counter(), messages, tools, config.context_window, config.fallback_fraction)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    #[test]
    fn dedup_keeps_first_occurrence_in_order() {
        let docs = ["b", "a", "b", "c", "a"].map(|id| RankedDocument::new(id, format!("text {id}")));
        let ids: Vec<String> = dedup_by_id(docs).into_iter().map(|d| d.id).collect();
        assert_eq!(ids, ["b", "a", "c"]);
    }

    #[test]
    fn threshold_is_the_fraction_of_the_window_on_the_exact_request() {
        let c = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let messages = [ChatMessage::user("hello world")];
        let n = c.count_request(&messages, &[]).unwrap();
        assert_eq!(n, 9); // 3 priming + 3 per message + "user" + 2
        let at = |window, fraction| fallback_check(&c, &messages, &[], window, fraction).unwrap();
        assert!(!at(10, 0.9).exceeded); // threshold 9
        assert!(at(10, 0.8).exceeded); // threshold 8
        assert_eq!(at(100, 0.8).threshold, 80);
    }
}
