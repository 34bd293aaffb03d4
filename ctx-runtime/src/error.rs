//! The error family shared by every part of ctx.
//!
//! Each area owns a typed error enum next to its code (`TokenError` here, `BudgetError` in
//! `budget`, …); [`CtxError`] wraps them all so a pipeline run has one error type. Every error has
//! a stable, machine-readable [`ErrorCode`] that callers can match on or put in metrics without
//! parsing messages.

use crate::config::ConfigFileError;
use crate::contract::ContractError;
use crate::pipeline::{BoxError, PipelineError};
use crate::validation::ConfigIssues;

pub use crate::codes::{Code, ErrorCode};
pub use crate::tokens::TokenError;

/// Every error a ctx run can produce.
///
/// Its `Debug` form is what a person reads: the message and the error code, because that is
/// what `fn main() -> Result<(), CtxError>` prints when it returns an error (`{:#?}` gives the
/// structure instead):
///
/// ```text
/// Error: step `manage`: the 10 node(s) alone render to 840 tokens …
///
/// error code PIPELINE_BUDGET_MISCONFIG (`ctx explain PIPELINE_BUDGET_MISCONFIG` says more)
/// ```
#[derive(thiserror::Error)]
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
    Pipeline(#[from] PipelineError),
    /// A YAML pipeline file could not be loaded; every problem is located (feature `yaml`).
    #[cfg(feature = "yaml")]
    #[cfg_attr(docsrs, doc(cfg(feature = "yaml")))]
    #[error(transparent)]
    PipelineFile(#[from] crate::pipeline::yaml::PipelineFileError),
    /// An MCP server could not be started, or failed a call (feature `mcp`).
    #[cfg(feature = "mcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    #[error(transparent)]
    Mcp(#[from] crate::mcp::McpError),
}

impl ErrorCode for CtxError {
    fn code(&self) -> Code {
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
            #[cfg(feature = "yaml")]
            CtxError::PipelineFile(e) => e.code(),
            #[cfg(feature = "mcp")]
            CtxError::Mcp(e) => e.code(),
        }
    }
}

impl std::fmt::Debug for CtxError {
    /// The message and the code (see the type's documentation); `{:#?}` shows the structure.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !f.alternate() {
            let code = self.code();
            return write!(f, "{self}\n\nerror code {code} (`ctx explain {code}` says more)");
        }
        let (variant, inner): (&str, &dyn std::fmt::Debug) = match self {
            CtxError::Token(e) => ("Token", e),
            CtxError::Config(e) => ("Config", e),
            CtxError::Budget(e) => ("Budget", e),
            CtxError::ModelConfig(e) => ("ModelConfig", e),
            CtxError::Contract(e) => ("Contract", e),
            CtxError::Turn(e) => ("Turn", e),
            CtxError::History(e) => ("History", e),
            CtxError::Negotiation(e) => ("Negotiation", e),
            CtxError::Model(e) => ("Model", e),
            CtxError::Retrieve(e) => ("Retrieve", e),
            CtxError::Engine(e) => ("Engine", e),
            CtxError::Pipeline(e) => ("Pipeline", e),
            #[cfg(feature = "yaml")]
            CtxError::PipelineFile(e) => ("PipelineFile", e),
            #[cfg(feature = "mcp")]
            CtxError::Mcp(e) => ("Mcp", e),
        };
        f.debug_tuple(variant).field(inner).finish()
    }
}

impl CtxError {
    /// The error a backend of step `step` returned, as a run's error: one of ctx's own (a
    /// `CtxError` or a [`PipelineError`], which names its step already) passes through unchanged,
    /// with its code; any other is [`PipelineError::Backend`], naming the step once.
    ///
    /// It is here and not beside `PipelineError` because `CtxError` wraps `PipelineError`: the
    /// pipeline's errors stay on a floor below this one.
    pub(crate) fn from_backend(step: &str, backend: &'static str, error: BoxError) -> CtxError {
        match error.downcast::<CtxError>() {
            Ok(ours) => *ours,
            Err(error) => match error.downcast::<PipelineError>() {
                Ok(ours) => (*ours).into(),
                Err(source) => PipelineError::Backend { step: step.to_owned(), backend, source }.into(),
            },
        }
    }
}

/// `Result` with [`CtxError`].
pub type Result<T, E = CtxError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::CompactError;
    use crate::engine::EngineError;
    use crate::llm::ModelError;
    use crate::turn::TurnError;

    /// What `fn main() -> Result<(), CtxError>` prints is the message and the code, not the
    /// derived structure (`Error: Pipeline(MissingSource { step: … })`); `{:#?}` keeps it.
    #[test]
    fn debug_is_the_message_and_the_code() {
        let err: CtxError = PipelineError::MissingSource { step: "answer".into(), source_name: "topic".into() }.into();
        let shown = format!("{err:?}");
        assert!(shown.starts_with("step `answer` reads `topic`, which is neither"), "{shown}");
        assert!(
            shown.ends_with("error code PIPELINE_MISSING_SOURCE (`ctx explain PIPELINE_MISSING_SOURCE` says more)"),
            "{shown}"
        );
        assert!(!shown.contains("MissingSource {"), "{shown}");
        let structure = format!("{err:#?}");
        assert!(structure.starts_with("Pipeline(\n    MissingSource {"), "{structure}");
    }

    /// The errors no test meets on the way (each needs a broken caller, a server that breaks the
    /// connection, a hand-written backend): each names its own code, and `CtxError` passes it on.
    #[test]
    fn errors_that_are_hard_to_provoke_name_their_codes() {
        let s = String::new;
        let token = || TokenError::Backend { backend: s(), reason: s() };
        let cases: Vec<(CtxError, &str)> = vec![
            (PipelineError::PromptWithoutText { step: s(), key: s() }.into(), "PIPELINE_PROMPT_WITHOUT_TEXT"),
            (PipelineError::NotResolved { pipeline: s(), step: s() }.into(), "PIPELINE_NOT_RESOLVED"),
            (PipelineError::NotCustom { step: s() }.into(), "PIPELINE_NOT_CUSTOM"),
            (PipelineError::NotTool { step: s(), tool: s() }.into(), "PIPELINE_NOT_TOOL"),
            (PipelineError::StepBoundExceeded { pipeline: s(), bound: 3 }.into(), "PIPELINE_STEP_BOUND_EXCEEDED"),
            (ModelError::Transport { model: s(), url: s(), message: s() }.into(), "MODEL_TRANSPORT"),
            (ModelError::Tokenizer { model: s(), source: token() }.into(), "MODEL_TOKENIZER"),
            (ContractError::NoOutput { step_id: s() }.into(), "REQUEST_WITHOUT_OUTPUT"),
            (ContractError::Count { step_id: s(), source: token() }.into(), "REQUEST_COUNT_FAILED"),
            (TurnError::ResultOverflow { call_id: s(), tokens: 2, available: 1 }.into(), "TURN_RESULT_OVERFLOW"),
            (TurnError::StaleResult { call_id: s(), document_id: s() }.into(), "TURN_STALE_RESULT"),
            (TurnError::MissingCompactor.into(), "TURN_MISSING_COMPACTOR"),
            (TurnError::BudgetExhausted { call_id: s(), available: 0, needed: 1 }.into(), "TURN_BUDGET_EXHAUSTED"),
            (EngineError::UnknownContext { name: s(), declared: s() }.into(), "ENGINE_UNKNOWN_CONTEXT"),
            (
                EngineError::Retriever { context: s(), retriever: s(), offset: 0, source: "down".into() }.into(),
                "ENGINE_RETRIEVER_FAILED",
            ),
            (token().into(), "TOKENIZER_BACKEND"),
        ];
        for (err, code) in cases {
            assert_eq!(err.code(), code, "{err}");
        }
        assert_eq!(CompactError::Other("no".into()).code(), "COMPACTOR_FAILED");
    }
}
