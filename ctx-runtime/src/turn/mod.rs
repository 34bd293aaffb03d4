//! Progressive budgeting of the tool calls in one agent turn.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::turn`.

mod error;
mod final_view;
mod ledger;
mod pack;

pub use ctx_spec::turn::{DocumentFormat, PartialPolicy, TurnBudgetConfig, TurnBudgetSpec, validate_turn_budget};
pub use error::TurnError;
pub use final_view::{DocumentId, FallbackVerdict, dedup_by_id, fallback_check};
pub use ledger::{CallBudget, LedgerBreakdown, SeenDocument, TurnLedger};
pub use pack::{Inclusion, Packed, PackedDocument, Partial, RankedDocument, pack_documents};
