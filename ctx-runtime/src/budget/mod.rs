//! `manage_context_budget`: retrieved node texts join the context only if the global budget
//! allows.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::budget`.

mod action;
mod error;
mod prefix;
mod report;

pub use action::{BudgetOptions, manage_context_budget, manage_context_budget_with};
pub use error::BudgetError;
pub use report::{AppliedRule, BudgetDecision, BudgetReport, NodeTrace};

// The configuration, the node frame and the rules of this step are vocabulary the compile-time
// check needs too: they live in ctx-spec.
pub use ctx_spec::budget::{
    CompactPolicy, CompactRule, FRAME_PLACEHOLDERS, FrameCost, FrameError, MAX_FRAMED_NODES, ManageBudgetConfig,
    NODE_HEADER, NodeFrame, PolicyKind, RuleLanguage, check_evidence_budget, format_node, format_node_as,
    frame_languages, frame_tokens, validate_manage_budget, validate_manage_budget_with,
};
