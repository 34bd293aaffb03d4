//! Progressive budgeting of the tool calls in one agent turn.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::turn`.

mod final_view;
mod ledger;
mod pack;

pub use ctx_spec::turn::{DocumentFormat, PartialPolicy, TurnBudgetConfig, TurnBudgetSpec, validate_turn_budget};
pub use final_view::{DocumentId, FallbackVerdict, dedup_by_id, fallback_check};
pub use ledger::{CallBudget, LedgerBreakdown, SeenDocument, TurnLedger};
pub use pack::{Inclusion, Packed, PackedDocument, Partial, RankedDocument, pack_documents};

use crate::codes::{Code, ErrorCode};
use crate::compact::CompactError;
use crate::tokens::TokenError;
use crate::validation::ConfigIssues;

/// Errors of turn budgeting.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TurnError {
    /// The turn budget configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigIssues),
    /// Counting failed.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// Not even an empty result for the call fits in what the turn has left.
    #[error(
        "tool call `{call_id}`: the turn's budget is used up ({available} tokens left, an empty tool result \
         needs {needed}); answer with what the turn holds or compact it"
    )]
    BudgetExhausted {
        /// The call.
        call_id: String,
        /// Tokens left in the turn.
        available: usize,
        /// Tokens an empty result message costs.
        needed: usize,
    },
    /// A result does not fit in what is left (it was packed before another result was recorded).
    #[error("tool call `{call_id}`: its result costs {tokens} tokens but only {available} are left; pack it again")]
    ResultOverflow {
        /// The call.
        call_id: String,
        /// The result message's tokens.
        tokens: usize,
        /// Tokens left in the turn.
        available: usize,
    },
    /// A result repeats a document the turn already holds (it was packed before another result
    /// carrying it was recorded).
    #[error("tool call `{call_id}`: document `{document_id}` is already in this turn; pack the result again")]
    StaleResult {
        /// The call.
        call_id: String,
        /// The repeated document.
        document_id: String,
    },
    /// The partial policy is `compact` but no compactor was given.
    #[error("the partial-document policy is `compact` but no compactor was given")]
    MissingCompactor,
    /// The compactor failed.
    #[error("compacting document `{document_id}` failed: {source}")]
    Compactor {
        /// The document.
        document_id: String,
        /// The compactor's error (boxed: it is the largest payload).
        #[source]
        source: Box<CompactError>,
    },
}

impl ErrorCode for TurnError {
    fn code(&self) -> Code {
        match self {
            TurnError::Config(e) => e.code(),
            TurnError::Token(e) => e.code(),
            TurnError::BudgetExhausted { .. } => Code::TurnBudgetExhausted,
            TurnError::ResultOverflow { .. } => Code::TurnResultOverflow,
            TurnError::StaleResult { .. } => Code::TurnStaleResult,
            TurnError::MissingCompactor => Code::TurnMissingCompactor,
            TurnError::Compactor { .. } => Code::TurnCompactorFailed,
        }
    }
}
