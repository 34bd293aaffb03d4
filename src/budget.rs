//! `manage_context_budget`: retrieved node texts join the context only if the global budget
//! allows.
//!
//! # What the step does
//!
//! Given the context (`state.context_blocks`), the retrieved nodes (`state.node_texts`) and the
//! global budget `max_context_tokens`, [`manage_context_budget`]:
//!
//! 1. classifies each node ([`classify`](crate::compact::classify)): `sql`, `dotnet` or
//!    `unknown`;
//! 2. decides, node by node and in order, whether to compact it (below);
//! 3. wraps it in a `--- NODE ---` header ([`format_node`]), or in the pipeline's own
//!    [`NodeFrame`] (`settings { node_frame: "…" }`);
//! 4. renders the context as it would be sent — the existing blocks, the divider
//!    (`divide_new_content`, once, before the batch) and the formatted nodes, joined by
//!    [`render_context_blocks`](crate::state::render_context_blocks) — and counts that exact
//!    string;
//! 5. `Ok` when the count is within `max_context_tokens`: the divider and the nodes are appended,
//!    `node_texts` is cleared, demands are considered used. `Over` otherwise: nothing changes
//!    except that the demand messages consumed on entry are put back in the inbox (addressed to
//!    this step, same topic, same payload) so they persist across the retry. An empty batch on a
//!    context that is itself over budget is `Over` too: after `Ok` the context always fits.
//! 6. When over, if the nodes alone — divider included, every rule of their language applied, no
//!    other context — still cannot fit, the error is `PIPELINE_BUDGET_MISCONFIG` (compacting the
//!    existing context could never make room). A failed step leaves the state as it found it.
//!
//! # Which rule compacts a node
//!
//! The rules of the node's language are tried in order and the **first whose policy fires wins**;
//! a rule whose policy does not fire passes the node on to the next rule of its language, and a
//! node no rule fires for is appended raw. So the spec's example
//!
//! ```text
//! - { language: sql, policy: demand, inbox_key: compact_sql }
//! - { language: sql, policy: threshold, threshold: 0.4 }
//! ```
//!
//! compacts SQL when a `compact_sql` demand was received, and otherwise still compacts it once
//! the context would exceed 40% of the budget. The policies:
//!
//! - `always` fires for every node of the language (rules after it for that language are
//!   unreachable, which validation rejects);
//! - `threshold: t` fires when the context rendered with this node appended *raw* (after the
//!   divider and the nodes before it, as they will be appended) has more than ⌊t × budget⌋ tokens
//!   — counted exactly, with early exit;
//! - `demand` fires when a message with `target_step_id` = this step and `topic` = `inbox_key`
//!   is among `state.inbox_last_consumed`.
//!
//! `unknown` nodes match no rule. A node is marked `compact: true` when a rule fired and
//! compaction changed its text (a text compaction cannot shorten is appended as is).
//!
//! # Exactness and cost
//!
//! Every number compared with a limit is the tokenizer's count of the exact string. The decision
//! counts the rendered context (a cache hit on a retry with unchanged inputs). A threshold check
//! needs the count of the rendered context with the candidate appended: the rendered prefix is a
//! counted text (`ctx_tokens::CountedText`, see `prefix.rs`), so that count costs the
//! candidate and the last pieces before it, exactly, whatever the blocks hold; a backend that
//! cannot count incrementally recounts the whole candidate. A node is counted once as a
//! candidate and once as the block appended, so a decision costs about two passes over the new
//! text (piece-cache lookups for pieces seen before), plus one count of the existing context.
//!
//! # Validation
//!
//! [`validate_manage_budget`] and the evidence budget's check hold the step's configuration rules;
//! the `pipeline!` macro calls them at compile time and the loader at load time.

#[doc(inline)]
pub use ctx_runtime::budget::{
    AppliedRule, BudgetDecision, BudgetError, BudgetOptions, BudgetReport, CompactPolicy, CompactRule, FrameError,
    ManageBudgetConfig, NODE_HEADER, NodeFrame, NodeTrace, PolicyKind, RuleLanguage, format_node, frame_tokens,
    manage_context_budget, manage_context_budget_with, validate_manage_budget, validate_manage_budget_with,
};
