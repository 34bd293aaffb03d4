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
mod symbol;
mod turn;

#[cfg(test)]
mod tests;

use ctx_spec::validation::ConfigIssue;
use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Ctxt;
use crate::ctxt::issue_message;
use crate::spans::SpanMap;

pub(crate) use engine::{context_engine, lower_engine, without_echoes};
pub(crate) use engine_expand::spec_tokens;
pub(crate) use turn::turn_budget;

/// The lints generated items must not trigger in the user's crate.
fn allow() -> TokenStream {
    quote!(#[allow(dead_code, unused_qualifications, clippy::all, clippy::pedantic, missing_docs)])
}

/// Reports the rules' `issues` under their tokens, skipping those at a value the lowering could
/// not read (they would repeat, or follow from, the syntax error already reported there).
fn report(cx: &Ctxt, spans: &SpanMap, issues: Vec<ConfigIssue>) {
    for issue in issues {
        if spans.is_poisoned(&issue.path) {
            continue;
        }
        cx.error_range(spans.lookup(&issue.path), issue_message(&issue));
    }
}
