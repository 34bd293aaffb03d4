//! Errors of the `manage_context_budget` action.

use crate::codes::{Code, ErrorCode};
use crate::compact::CompactError;
use crate::tokens::TokenError;

/// Why `manage_context_budget` failed. The state is unchanged whenever one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BudgetError {
    /// The retrieval buffer alone cannot fit the global budget, whatever happens to the existing
    /// context: the pipeline's limits are inconsistent.
    #[error(
        "PIPELINE_BUDGET_MISCONFIG: step `{step_id}`: fetch_node_texts produced retrieval texts that cannot fit into \
         settings.max_context_tokens ({max_context_tokens}): the {nodes} node(s) alone render to {retrieval_tokens} \
         tokens, with every compaction rule applied and no other context; lower fetch_node_texts.evidence_tokens or raise \
         settings.max_context_tokens"
    )]
    Misconfig {
        /// The step id.
        step_id: String,
        /// How many nodes were waiting in `node_texts`.
        nodes: usize,
        /// Tokens of the formatted nodes (and divider) rendered on their own.
        retrieval_tokens: usize,
        /// The global budget.
        max_context_tokens: usize,
    },
    /// `max_context_tokens` is zero: nothing, not even an empty batch on a non-empty context,
    /// could be budgeted.
    #[error(
        "step `{step_id}`: settings.max_context_tokens is 0; set it to the number of tokens the context may use \
         (typically 60-70% of the model's window)"
    )]
    NoBudget {
        /// The step id.
        step_id: String,
    },
    /// Counting tokens failed.
    #[error("step `{step_id}`: token counting failed: {source}")]
    Token {
        /// The step id.
        step_id: String,
        /// The counter's error.
        #[source]
        source: TokenError,
    },
    /// A compactor failed on a node (a user compactor's own error, or counting inside it).
    #[error("step `{step_id}`: compactor `{compactor}` failed on node `{node_id}`: {source}")]
    Compactor {
        /// The step id.
        step_id: String,
        /// The node.
        node_id: String,
        /// The compactor's name (the node's language).
        compactor: String,
        /// The compactor's error (boxed: it is the largest payload).
        #[source]
        source: Box<CompactError>,
    },
}

impl ErrorCode for BudgetError {
    fn code(&self) -> Code {
        match self {
            BudgetError::Misconfig { .. } => Code::PipelineBudgetMisconfig,
            BudgetError::NoBudget { .. } => Code::MissingMaxContextTokens,
            BudgetError::Token { source, .. } => source.code(),
            BudgetError::Compactor { source, .. } => source.code(),
        }
    }
}
