//! Runtime of **ctx**: exact token accounting, the pipeline state, the budget actions of the
//! specification, the budget contract, and the pieces a `pipeline!` expansion calls.
//!
//! Everything here is usable without the macro; the macro calls the same validation functions
//! at compile time that this crate calls at load time, so every rule lives once.
#![warn(unreachable_pub)]
// docs.rs builds with `--cfg docsrs`: each feature-gated item gets its "available on crate feature"
// badge. Without that cfg (every stable build) nothing changes.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod budget;
pub use ctx_spec::{chat, codes, config, contract, lang, state, validation};
pub mod classify;
pub mod compact;
#[cfg(feature = "restate")]
#[cfg_attr(docsrs, doc(cfg(feature = "restate")))]
pub mod durable;
pub mod engine;
pub mod error;
pub mod history;
pub mod llm;
pub mod negotiate;
pub mod pipeline;
pub mod retrieve;
pub mod tokens;
pub mod turn;

pub use chat::{ChatMessage, Role, ToolCall, ToolSchema};
pub use error::{Code, CtxError, ErrorCode, Result, TokenError};
pub use state::{InboxMessage, NodeText, PipelineState};
pub use tokens::{ChatFormat, Encoding, ModelInfo, TokenCounter};
pub use validation::{ConfigIssue, ConfigIssues, FieldPath};

/// The `async_trait` attribute the backend traits ([`pipeline::NodeSearch`],
/// [`pipeline::NodeStore`], [`llm::ChatModel`]) are declared with; implement them with
/// `#[ctx::async_trait]` and no dependency of your own.
pub use async_trait::async_trait;

/// What the `ctx` facade's hidden module re-exports for generated code. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use serde_json;
}
