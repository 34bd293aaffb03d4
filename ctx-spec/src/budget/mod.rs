//! The configuration, node frame and rules of `manage_context_budget`: what a pipeline check
//! needs to know about the step without running it (the step itself runs in `ctx-runtime`).

mod config;
mod format;
mod frame;
mod validate;

pub use config::{CompactPolicy, CompactRule, ManageBudgetConfig, PolicyKind, RuleLanguage};
pub use format::{NODE_HEADER, format_node, format_node_as};
pub use frame::{FRAME_PLACEHOLDERS, FrameError, NodeFrame};
pub use validate::{
    FrameCost, MAX_FRAMED_NODES, check_evidence_budget, frame_languages, frame_tokens, validate_manage_budget,
    validate_manage_budget_with,
};
