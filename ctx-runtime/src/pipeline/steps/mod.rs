//! The step actions. Each takes the step's spec and a working copy of the state, and returns the
//! index of the transition it takes with a [`StepDetail`] saying what it did. The reports are in
//! `report.rs`, below the actions that write them.

pub(crate) mod agent;
pub(crate) mod budget;
pub(crate) mod call_model;
mod context;
pub(crate) mod control;
mod evidence;
pub(crate) mod fetch;
pub(crate) mod report;
pub(crate) mod request;
pub(crate) mod search;
pub(crate) mod set_variables;
#[cfg(test)]
pub(crate) mod test_backends;

pub use agent::{MAX_TOOL_CALLS_CAP, TOOL_LIMIT_MESSAGE};
pub use fetch::{MIN_TRUNCATED_TOKENS, TRUNCATED_METADATA_KEY};
pub use report::{
    AgentEnd, AgentReport, CallReport, FetchReport, ModelRequestReport, SentRequest, SkipReason, SkippedNode,
    StepDetail, ToolCallKind, ToolCallReport, TruncatedNode,
};
pub use request::OUTPUT_FLOOR_TOKENS;
