//! The context engine: declared contexts assembled into a system prompt, a history and a user
//! message that never exceed the input budget, counted on the exact messages sent.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::engine`.

mod assembler;
mod error;
mod level;
mod render;
mod report;
mod retriever;
mod run;
mod summarize;

pub use assembler::{AssemblyInput, ContextAssembler, ContextAssemblerBuilder, ContextAssembly};
pub use error::EngineError;
pub use report::{AssemblyReport, PackKind, PackReport};
pub use retriever::{
    ContextPack, ContextPackBlock, ContextRetrieverRequest, PACK_BLOCK_SEPARATOR, RetrieveFuture, Retriever,
    RetrieverDyn, RetrieverError, join_blocks,
};
pub use summarize::{DEFAULT_SUMMARY_INSTRUCTIONS, Summarizer};
// Declarations, policies, templates and their rules: checked by the companion macro too.
pub use ctx_spec::engine::{
    BUILTIN_COMPACTORS, CompactorSpec, ContextDeclaration, ContextInsert, ContextPolicySpec, EngineSpec, Expansion,
    ExpansionSpec, InputBudgetSpec, MessageSpec, Overflow, PackBudgetSpec, PackPlacement, Policy, RetrieverDecl,
    SyntaxErrorKind, TRUNCATE, Template, TemplateSyntaxError, VarRef, allocation, pack_ratios, validate_policy,
    validate_spec, validate_spec_at,
};
