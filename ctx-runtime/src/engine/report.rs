//! What an assembly did: per pack, the tokens, pages and compactions; overall, the exact count.

use serde::{Deserialize, Serialize};

/// The report of one assembly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AssemblyReport {
    /// The assembled context.
    pub context: String,
    /// `input_budget.max_tokens`, when bounded.
    pub max_tokens: Option<usize>,
    /// Exact count of the minimal rendering (no packs, no history); 0 when unbounded.
    pub fixed_tokens: usize,
    /// The packs, in directive order.
    pub packs: Vec<PackReport>,
    /// History messages dropped (oldest first) to fit the budget.
    pub history_dropped: usize,
    /// Rounds of proportional pack shrinking after the whole was counted over budget.
    pub shrink_rounds: usize,
    /// `count_messages` of exactly [`ContextAssembly::messages`](super::ContextAssembly::messages).
    pub total_tokens: usize,
}

/// What kind of pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PackKind {
    /// Blocks from a retriever.
    Retriever,
    /// A nested context's text.
    Context,
}

/// One pack's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PackReport {
    /// The retriever's or nested context's name.
    pub name: String,
    /// Retriever or nested context.
    pub kind: PackKind,
    /// Its first allocation (its ratio of the pack room), when bounded.
    pub allocation: Option<usize>,
    /// Exact count of its final text.
    pub tokens: usize,
    /// Retrieval requests made (pages).
    pub pages: usize,
    /// Ids of every distinct block retrieved, in order.
    pub retrieved: Vec<String>,
    /// Ids of the blocks included whole.
    pub included: Vec<String>,
    /// Compactor calls made for this pack (every re-fill counts).
    pub compactions: usize,
    /// Whether the final text holds compacted content.
    pub compacted: bool,
    /// A nested context's own packs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packs: Vec<PackReport>,
}
