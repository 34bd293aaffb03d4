//! What both companion macros' phases use: the lints their generated items allow, and the
//! reporting of the rules' issues under their tokens. A leaf, so that `mod.rs` only declares the
//! macros and lists their entry points.

use ctx_spec::validation::ConfigIssue;
use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Ctxt;
use crate::ctxt::issue_message;
use crate::spans::SpanMap;

/// The lints generated items must not trigger in the user's crate.
pub(super) fn allow() -> TokenStream {
    quote!(#[allow(dead_code, unused_qualifications, clippy::all, clippy::pedantic, missing_docs)])
}

/// Reports the rules' `issues` under their tokens, skipping those at a value the lowering could
/// not read (they would repeat, or follow from, the syntax error already reported there).
pub(super) fn report(cx: &Ctxt, spans: &SpanMap, issues: Vec<ConfigIssue>) {
    for issue in issues {
        if spans.is_poisoned(&issue.path) {
            continue;
        }
        cx.error_range(spans.lookup(&issue.path), issue_message(&issue));
    }
}
