//! [`ContractError`]: what the last guard and the fingerprint can fail with at run time.
//!
//! Configuration problems found by [`super::check_contract`] are
//! [`ConfigIssue`](crate::validation::ConfigIssue)s (a loader wraps them in
//! [`ConfigIssues`](crate::validation::ConfigIssues)); this type is for a single request.

use crate::codes::{Code, ErrorCode};
use crate::tokens::TokenError;

/// A request refused by the contract, or a contract computation that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContractError {
    /// The exact prompt plus the output limit does not fit the window; nothing was sent.
    #[error(
        "request of step `{step_id}` was not sent: its prompt is {prompt_tokens} tokens and its output limit \
         {max_output_tokens}, together {overflow} more than the {context_window}-token context window"
    )]
    RequestTooLarge {
        /// The step that built the request.
        step_id: String,
        /// The exact count of the rendered request (messages, tools, chat overhead).
        prompt_tokens: usize,
        /// The output limit the request asks for.
        max_output_tokens: usize,
        /// The model's window.
        context_window: usize,
        /// By how much prompt plus output exceeds the window.
        overflow: usize,
    },
    /// The request asks for no output at all; nothing was sent.
    #[error("request of step `{step_id}` was not sent: its output limit is 0 tokens")]
    NoOutput {
        /// The step that built the request.
        step_id: String,
    },
    /// Counting the request failed.
    #[error("cannot count the request of step `{step_id}`: {source}")]
    Count {
        /// The step that built the request.
        step_id: String,
        /// The tokenizer's error.
        #[source]
        source: TokenError,
    },
    /// The pipeline definition could not be serialized for its fingerprint.
    #[error("cannot fingerprint the pipeline definition: {reason}")]
    Fingerprint {
        /// The serializer's message.
        reason: String,
    },
}

impl ErrorCode for ContractError {
    fn code(&self) -> Code {
        match self {
            ContractError::RequestTooLarge { .. } => Code::RequestExceedsContextWindow,
            ContractError::NoOutput { .. } => Code::RequestWithoutOutput,
            ContractError::Count { .. } => Code::RequestCountFailed,
            ContractError::Fingerprint { .. } => Code::ContractFingerprintFailed,
        }
    }
}
