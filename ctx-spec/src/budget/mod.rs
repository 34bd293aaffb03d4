//! The configuration, node frame and rules of `manage_context_budget`: what a pipeline check
//! needs to know about the step without running it (the step itself runs in `ctx-runtime`).

mod config;
mod format;
mod frame;
mod validate;

pub use config::{CompactPolicy, CompactRule, ManageBudgetConfig, PolicyKind, RuleLanguage};
pub use format::{NODE_HEADER, format_node, format_node_as};
pub use frame::{FRAME_PLACEHOLDERS, FrameError, NodeFrame};
pub use validate::{check_evidence_budget, validate_manage_budget, validate_manage_budget_with};

/// The stable codes of the issues and errors of this step.
pub mod codes {
    /// The retrieval (evidence) budget does not fit the global budget.
    pub const PIPELINE_BUDGET_MISCONFIG: &str = "PIPELINE_BUDGET_MISCONFIG";
    /// A rule's `language` is not `sql` or `dotnet`.
    pub const COMPACT_RULE_UNKNOWN_LANGUAGE: &str = "COMPACT_RULE_UNKNOWN_LANGUAGE";
    /// A rule's `policy` is not `always`, `threshold` or `demand`.
    pub const COMPACT_RULE_UNKNOWN_POLICY: &str = "COMPACT_RULE_UNKNOWN_POLICY";
    /// `policy: threshold` without `threshold`.
    pub const COMPACT_RULE_MISSING_THRESHOLD: &str = "COMPACT_RULE_MISSING_THRESHOLD";
    /// `threshold` outside (0, 1].
    pub const COMPACT_RULE_THRESHOLD_OUT_OF_RANGE: &str = "COMPACT_RULE_THRESHOLD_OUT_OF_RANGE";
    /// `policy: demand` without `inbox_key`.
    pub const COMPACT_RULE_MISSING_INBOX_KEY: &str = "COMPACT_RULE_MISSING_INBOX_KEY";
    /// `inbox_key` is empty or blank.
    pub const COMPACT_RULE_EMPTY_INBOX_KEY: &str = "COMPACT_RULE_EMPTY_INBOX_KEY";
    /// `threshold` or `inbox_key` on a policy that does not use it.
    pub const COMPACT_RULE_KEY_NOT_FOR_POLICY: &str = "COMPACT_RULE_KEY_NOT_FOR_POLICY";
    /// A rule that an earlier rule of the same language always pre-empts.
    pub const COMPACT_RULE_UNREACHABLE: &str = "COMPACT_RULE_UNREACHABLE";
    /// `divide_new_content` is empty or blank.
    pub const DIVIDE_NEW_CONTENT_EMPTY: &str = "DIVIDE_NEW_CONTENT_EMPTY";
}
