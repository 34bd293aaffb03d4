//! The keywords of `turn_budget!` and of both companions' header: the spec's key names, as
//! constants so that a misspelling in the macro is a compile error here rather than a key that
//! never matches. (`context_engine!`'s keys are `ctx_spec`'s schema rows, which its decoder reads.)

use crate::symbol::Symbol;

// The header of both macros: `pub fn name { … }`.
pub(crate) const FN: Symbol = Symbol("fn");

// `turn_budget!`.
pub(crate) const BUDGET_TOKENS: Symbol = Symbol("budget_tokens");
pub(crate) const CONTEXT_WINDOW: Symbol = Symbol("context_window");
pub(crate) const FALLBACK_FRACTION: Symbol = Symbol("fallback_fraction");
pub(crate) const ON_PARTIAL: Symbol = Symbol("on_partial");
pub(crate) const MIN_PARTIAL_TOKENS: Symbol = Symbol("min_partial_tokens");
pub(crate) const DOCUMENT_TEMPLATE: Symbol = Symbol("document_template");
pub(crate) const DOCUMENT_SEPARATOR: Symbol = Symbol("document_separator");
pub(crate) const TURN_KEYS: &[Symbol] = &[
    BUDGET_TOKENS,
    CONTEXT_WINDOW,
    FALLBACK_FRACTION,
    ON_PARTIAL,
    MIN_PARTIAL_TOKENS,
    DOCUMENT_TEMPLATE,
    DOCUMENT_SEPARATOR,
];
/// `context_window: model("gpt-4o")`: the window from ctx's model table.
pub(crate) const MODEL: Symbol = Symbol("model");
