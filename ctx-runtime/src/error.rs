//! The error family shared by every part of ctx.
//!
//! Each area owns a typed error enum next to its code (`TokenError` here, `BudgetError` in
//! `budget`, …); [`CtxError`] wraps them all so a pipeline run has one error type. Every error has
//! a stable, machine-readable [`ErrorCode`] that callers can match on or put in metrics without
//! parsing messages.

use crate::config::ConfigFileError;
use crate::contract::ContractError;
use crate::validation::ConfigIssues;

/// A stable, machine-readable error code such as `PIPELINE_BUDGET_MISCONFIG`.
///
/// Codes never change meaning once published; messages may be reworded.
pub trait ErrorCode {
    /// The code, in SCREAMING_SNAKE_CASE.
    fn code(&self) -> &'static str;
}

/// Errors of token counting and model/encoding resolution.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The model name is not in ctx's model table ([`crate::tokens::MODEL_TABLE`]).
    #[error(
        "unknown model `{model}`: its encoding and context window are not in ctx's OpenAI model table{}; \
         give the encoding and `context_window` explicitly",
        suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default()
    )]
    UnknownModel {
        /// The model name as given.
        model: String,
        /// The closest known name, when one is close.
        suggestion: Option<String>,
    },
    /// The encoding name is not one ctx can count with.
    #[error("unknown encoding `{name}`: expected one of {expected}")]
    UnknownEncoding {
        /// The encoding name as given.
        name: String,
        /// The accepted names, comma-separated.
        expected: &'static str,
    },
    /// A tokenizer backend failed (for example a remote tokenize endpoint).
    #[error("tokenizer backend `{backend}` failed: {reason}")]
    Backend {
        /// The backend's id.
        backend: String,
        /// What went wrong.
        reason: String,
    },
    /// A chat template cannot render part of a request (tool schemas, tool calls, names), so the
    /// server would drop it without the model ever seeing it.
    #[error("chat template `{template}` cannot render {what}; the server would drop it silently")]
    TemplateUnsupported {
        /// The template's name.
        template: String,
        /// What it cannot render, and where.
        what: String,
    },
    /// Token ids that do not decode to UTF-8 text.
    #[error("token ids do not decode to valid UTF-8 under `{encoding}`")]
    Decode {
        /// The encoding used.
        encoding: String,
    },
}

impl ErrorCode for TokenError {
    fn code(&self) -> &'static str {
        match self {
            TokenError::UnknownModel { .. } => "UNKNOWN_MODEL",
            TokenError::UnknownEncoding { .. } => "UNKNOWN_ENCODING",
            TokenError::Backend { .. } => "TOKENIZER_BACKEND",
            TokenError::Decode { .. } => "TOKEN_DECODE",
            TokenError::TemplateUnsupported { .. } => "CHAT_TEMPLATE_UNSUPPORTED",
        }
    }
}

/// Every error a ctx run can produce.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CtxError {
    /// Token counting or model resolution failed.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// A configuration failed validation; every problem found is listed with its field path.
    #[error(transparent)]
    Config(#[from] ConfigIssues),
    /// `manage_context_budget` failed.
    #[error(transparent)]
    Budget(#[from] crate::budget::BudgetError),
    /// A `config.json` could not be read or is invalid; the error names the file and the key.
    #[error(transparent)]
    ModelConfig(#[from] ConfigFileError),
    /// A request was refused by the budget contract (it would not fit the window).
    #[error(transparent)]
    Contract(#[from] ContractError),
    /// Budgeting the tool calls of an agent turn failed.
    #[error(transparent)]
    Turn(#[from] crate::turn::TurnError),
    /// History trimming failed (a leading system message over the history budget).
    #[error(transparent)]
    History(#[from] crate::history::HistoryError),
    /// Output negotiation found no room for the request.
    #[error(transparent)]
    Negotiation(#[from] crate::negotiate::NegotiationError),
    /// A model call failed.
    #[error(transparent)]
    Model(#[from] crate::llm::ModelError),
    /// The offline retriever failed.
    #[error(transparent)]
    Retrieve(#[from] crate::retrieve::RetrieveError),
    /// Context assembly failed.
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
    /// Loading or running a pipeline failed.
    #[error(transparent)]
    Pipeline(#[from] crate::pipeline::PipelineError),
}

impl ErrorCode for CtxError {
    fn code(&self) -> &'static str {
        match self {
            CtxError::Token(e) => e.code(),
            CtxError::Config(e) => e.code(),
            CtxError::Budget(e) => e.code(),
            CtxError::ModelConfig(e) => e.code(),
            CtxError::Contract(e) => e.code(),
            CtxError::Turn(e) => e.code(),
            CtxError::History(e) => e.code(),
            CtxError::Negotiation(e) => e.code(),
            CtxError::Model(e) => e.code(),
            CtxError::Retrieve(e) => e.code(),
            CtxError::Engine(e) => e.code(),
            CtxError::Pipeline(e) => e.code(),
        }
    }
}

/// `Result` with [`CtxError`].
pub type Result<T, E = CtxError> = std::result::Result<T, E>;
