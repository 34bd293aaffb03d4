//! The errors of context assembly.

use crate::codes::{Code, ErrorCode};
use crate::tokens::TokenError;
use crate::validation::ConfigIssues;

use super::retriever::RetrieverError;
use crate::compact::CompactError;

/// Why an assembler could not be built or an assembly failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The declarations, or the retrievers and compactors registered for them, are invalid.
    #[error(transparent)]
    Config(#[from] ConfigIssues),
    /// Token counting failed.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// No context declaration has this name.
    #[error("no context named `{name}` is declared (declared: {declared})")]
    UnknownContext {
        /// The requested name.
        name: String,
        /// The declared names, comma-separated.
        declared: String,
    },
    /// A template refers to a variable the caller did not provide.
    #[error("context `{context}`: template {template} uses `{{{variable}}}`, which has no value")]
    MissingVariable {
        /// The context being assembled.
        context: String,
        /// Where the template is, e.g. `messages[1].content` or `retriever kb_search query`.
        template: String,
        /// The variable, e.g. `input.question`.
        variable: String,
    },
    /// A template variable holds a value that is not text (an object, an array or null).
    #[error("context `{context}`: template {template} uses `{{{variable}}}`, which is {kind}, not text")]
    VariableNotText {
        /// The context being assembled.
        context: String,
        /// Where the template is.
        template: String,
        /// The variable.
        variable: String,
        /// What the value is (`null`, `an object`, `an array`).
        kind: &'static str,
    },
    /// The messages that cannot shrink (templates, base prompt, chat overhead; no packs and no
    /// history) alone exceed the input budget.
    #[error(
        "context `{context}`: the fixed messages alone are {tokens} tokens, over the input budget of {budget} \
         (shorten the templates or raise input_budget.max_tokens)"
    )]
    FixedOverBudget {
        /// The context (for a nested context: `parent/child`).
        context: String,
        /// Their exact count.
        tokens: usize,
        /// `input_budget.max_tokens` (or the nested pack's allocation).
        budget: usize,
    },
    /// With `overflow: error`, the assembled messages exceed the input budget.
    #[error(
        "context `{context}`: the assembled input is {tokens} tokens, over the input budget of {budget} \
         ({history_messages} history message(s)); set `overflow: compact` to trim history and compact packs"
    )]
    InputOverBudget {
        /// The context.
        context: String,
        /// Exact count of the rendered messages.
        tokens: usize,
        /// `input_budget.max_tokens`.
        budget: usize,
        /// How many history messages were included.
        history_messages: usize,
    },
    /// With `overflow: error`, a pack's content exceeds its allocation.
    #[error(
        "context `{context}`: pack `{pack}` holds {tokens} tokens, over its budget of {budget}; \
         set `overflow: compact` or make the retriever respect `max_tokens`"
    )]
    PackOverBudget {
        /// The context.
        context: String,
        /// The pack (a retriever or nested context name).
        pack: String,
        /// Exact count of the pack's text.
        tokens: usize,
        /// Its allocation.
        budget: usize,
    },
    /// A retriever failed.
    #[error("context `{context}`: retriever `{retriever}` failed at offset {offset}: {source}")]
    Retriever {
        /// The context.
        context: String,
        /// The retriever's name.
        retriever: String,
        /// The offset of the failed request.
        offset: usize,
        /// What it reported.
        #[source]
        source: RetrieverError,
    },
    /// A compactor failed.
    #[error("context `{context}`: compactor `{compactor}` failed on pack `{pack}`: {source}")]
    Compactor {
        /// The context.
        context: String,
        /// The compactor's registered name.
        compactor: String,
        /// The pack being compacted.
        pack: String,
        /// What it reported (boxed: it is the largest payload).
        #[source]
        source: Box<CompactError>,
    },
    /// A compactor returned text longer than it was asked for.
    #[error(
        "context `{context}`: compactor `{compactor}` returned {tokens} tokens for pack `{pack}`, over the \
         {budget} it was given; wrap it in `TruncateAfter` to enforce the budget"
    )]
    CompactorOverBudget {
        /// The context.
        context: String,
        /// The compactor's registered name.
        compactor: String,
        /// The pack being compacted.
        pack: String,
        /// Exact count of what it returned.
        tokens: usize,
        /// The budget it was given.
        budget: usize,
    },
}

impl ErrorCode for EngineError {
    fn code(&self) -> Code {
        match self {
            EngineError::Config(e) => e.code(),
            EngineError::Token(e) => e.code(),
            EngineError::UnknownContext { .. } => Code::EngineUnknownContext,
            EngineError::MissingVariable { .. } => Code::EngineMissingVariable,
            EngineError::VariableNotText { .. } => Code::EngineVariableNotText,
            EngineError::FixedOverBudget { .. } => Code::EngineFixedOverBudget,
            EngineError::InputOverBudget { .. } => Code::EngineInputOverBudget,
            EngineError::PackOverBudget { .. } => Code::EnginePackOverBudget,
            EngineError::Retriever { .. } => Code::EngineRetrieverFailed,
            EngineError::Compactor { .. } => Code::EngineCompactorFailed,
            EngineError::CompactorOverBudget { .. } => Code::EngineCompactorOverBudget,
        }
    }
}
