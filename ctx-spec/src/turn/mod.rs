//! The configuration of a turn's budget and its rules, checked by the companion macro at compile
//! time; the turn ledger that applies it lives in `ctx-runtime`.

mod config;

pub use config::{DocumentFormat, PartialPolicy, TurnBudgetConfig, TurnBudgetSpec, validate_turn_budget};
