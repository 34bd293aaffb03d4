//! The pipeline state: every value the steps read and write, serializable so that a run can be
//! saved after any step and resumed.

#[doc(inline)]
pub use ctx_runtime::state::{
    BilledRatios, FieldKind, InboxMessage, NodeText, PipelineState, SearchHit, SpendTotals, TokenRatio,
    render_context_blocks,
};
