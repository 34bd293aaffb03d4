//! What `manage_context_budget` decided, for the caller and for the trace.

use serde::Serialize;

use crate::classify::Language;
use crate::state::InboxMessage;

use ctx_spec::budget::{ManageBudgetConfig, PolicyKind};

/// The outcome of a `manage_context_budget` step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetDecision {
    /// The batch was appended; go to `on_ok`.
    Ok,
    /// The batch did not fit; nothing was appended; go to `on_over`.
    Over,
}

impl BudgetDecision {
    /// The transition key: `on_ok` or `on_over`.
    pub fn transition(self) -> &'static str {
        match self {
            BudgetDecision::Ok => "on_ok",
            BudgetDecision::Over => "on_over",
        }
    }

    /// The step this decision leads to.
    pub fn target(self, config: &ManageBudgetConfig) -> &str {
        match self {
            BudgetDecision::Ok => config.on_ok(),
            BudgetDecision::Over => config.on_over(),
        }
    }
}

/// The rule that compacted (or would have compacted) a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AppliedRule {
    /// Its index in `compact_code`.
    pub index: usize,
    /// Its policy.
    pub policy: PolicyKind,
}

/// What happened to one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct NodeTrace {
    /// The node's id.
    pub id: String,
    /// Its path or source, if known.
    pub source: Option<String>,
    /// Its language, as its `--- NODE ---` header and the `compact_code` rules name it: `sql`,
    /// `dotnet`, `markdown`, `text`, `json`, a registered compactor's, or `unknown`.
    pub language: String,
    /// What the SQL/.NET classifier found, for `sql` and `dotnet` nodes only (it tells
    /// `dotnet_with_sql` from `dotnet`); `None` for every other language.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Language>,
    /// The first rule of its language whose policy fired, if any.
    pub rule: Option<AppliedRule>,
    /// Whether its text was compacted (a rule fired and compaction changed the text).
    pub compacted: bool,
    /// Tokens of its raw text.
    pub tokens_before: usize,
    /// Tokens of the text that was (or would have been) appended.
    pub tokens_after: usize,
}

/// Everything `manage_context_budget` decided, also emitted as the `MANAGE_CONTEXT_BUDGET`
/// tracing event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct BudgetReport {
    /// The step id.
    pub step_id: String,
    /// The decision.
    pub decision: BudgetDecision,
    /// The global budget.
    pub max_context_tokens: usize,
    /// Tokens of the rendered context before the step.
    pub context_tokens_before: usize,
    /// Tokens of the rendered context with the batch appended: the number the decision compared
    /// with `max_context_tokens`.
    pub candidate_tokens: usize,
    /// Tokens of the rendered context after the step: `candidate_tokens` on `Ok`,
    /// `context_tokens_before` on `Over`.
    pub context_tokens_after: usize,
    /// The divider appended before the batch (`Ok` with at least one node only).
    pub divider: Option<String>,
    /// One trace per node of `node_texts`, in order.
    pub nodes: Vec<NodeTrace>,
    /// The `demand` topics found among the messages consumed on entry.
    pub demands: Vec<String>,
    /// The demand messages put back in the inbox (`Over` only).
    pub reenqueued: Vec<InboxMessage>,
}

impl BudgetReport {
    /// Tokens saved by compaction over all nodes (raw minus appended text).
    pub fn tokens_saved(&self) -> usize {
        self.nodes.iter().map(|n| n.tokens_before.saturating_sub(n.tokens_after)).sum()
    }

    /// Emits the `MANAGE_CONTEXT_BUDGET` event (target `ctx::budget`): at INFO one line a person
    /// reads (the decision, the token counts, how many nodes were appended or refused and what
    /// compaction saved), at DEBUG the same event with every node's trace as JSON.
    pub(crate) fn emit(&self) {
        let compacted = self.nodes.iter().filter(|n| n.compacted).count();
        let nodes = match self.decision {
            BudgetDecision::Ok => "appended",
            BudgetDecision::Over => "refused",
        };
        tracing::info!(
            target: "ctx::budget",
            event_type = "MANAGE_CONTEXT_BUDGET",
            step_id = %self.step_id,
            decision = self.decision.transition(),
            max_context_tokens = self.max_context_tokens,
            context_tokens_before = self.context_tokens_before,
            candidate_tokens = self.candidate_tokens,
            context_tokens_after = self.context_tokens_after,
            "step `{}`: {}, {} node(s) {nodes} ({compacted} compacted, {} tokens saved), context {} -> {} of {} tokens",
            self.step_id,
            self.decision.transition(),
            self.nodes.len(),
            self.tokens_saved(),
            self.context_tokens_before,
            self.context_tokens_after,
            self.max_context_tokens,
        );
        if tracing::enabled!(target: "ctx::budget", tracing::Level::DEBUG) {
            let nodes = serde_json::to_string(&self.nodes).unwrap_or_default();
            let reenqueued = serde_json::to_string(&self.reenqueued).unwrap_or_default();
            tracing::debug!(
                target: "ctx::budget",
                event_type = "MANAGE_CONTEXT_BUDGET_NODES",
                step_id = %self.step_id,
                divider = self.divider.as_deref(),
                nodes = %nodes,
                demands = ?self.demands,
                reenqueued = %reenqueued,
                "step `{}`: the nodes of the batch",
                self.step_id,
            );
        }
    }
}
