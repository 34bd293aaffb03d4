//! `context_engine!` and `turn_budget!`: declarations of the context engine and of an agent turn's
//! progressive budget, checked when compiled.
//!
//! Both follow the `pipeline!` phases and share its pieces: the same generic syntax
//! ([`crate::ast::Items`]), the error accumulator and the field-path → token map;
//! `context_engine!` is read by `ctx_spec`'s decoder (as a pipeline's `contexts` is),
//! `turn_budget!` by keyed reading with "did you mean" ([`crate::fields`]). Each makes `ctx_spec`'s
//! "as written" value (`EngineSpec`, `TurnBudgetSpec`), runs `ctx_spec`'s validation on it — the
//! rules live once, there — and reports every issue under the token its path names. The expansion
//! is a function returning the validated value; it is emitted with a stub body when there are
//! errors, so that callers keep type-checking while the declaration is fixed.

mod engine;
mod engine_expand;
mod header;
mod shared;
mod symbol;
mod turn;

#[cfg(test)]
mod tests;

pub(crate) use engine::{context_engine, lower_engine, without_echoes};
pub(crate) use engine_expand::spec_tokens;
pub(crate) use turn::turn_budget;
