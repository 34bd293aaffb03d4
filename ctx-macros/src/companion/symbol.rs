//! The keywords of `context_engine!` and `turn_budget!`: the spec's key names, as constants so that
//! a misspelling in the macro is a compile error here rather than a key that never matches.

use crate::symbol::Symbol;

// The header of both macros: `pub fn name { … }`.
pub(crate) const FN: Symbol = Symbol("fn");

// `context_engine!` sections.
pub(crate) const CONTEXTS: Symbol = Symbol("contexts");
pub(crate) const RETRIEVERS: Symbol = Symbol("retrievers");
pub(crate) const COMPACTORS: Symbol = Symbol("compactors");
pub(crate) const ENGINE_KEYS: &[Symbol] = &[CONTEXTS, RETRIEVERS, COMPACTORS];

// A retriever.
pub(crate) const QUERY: Symbol = Symbol("query");
pub(crate) const LIMIT: Symbol = Symbol("limit");
pub(crate) const RETRIEVER_KEYS: &[Symbol] = &[QUERY, LIMIT];

// A context declaration.
pub(crate) const INPUTS: Symbol = Symbol("inputs");
pub(crate) const POLICY: Symbol = Symbol("policy");
pub(crate) const MESSAGES: Symbol = Symbol("messages");
pub(crate) const CONTEXT_KEYS: &[Symbol] = &[INPUTS, POLICY, MESSAGES];

// A policy.
pub(crate) const INPUT_BUDGET: Symbol = Symbol("input_budget");
pub(crate) const PACK_BUDGET: Symbol = Symbol("pack_budget");
pub(crate) const OVERFLOW: Symbol = Symbol("overflow");
pub(crate) const COMPACTOR: Symbol = Symbol("compactor");
pub(crate) const EXPANSION: Symbol = Symbol("expansion");
pub(crate) const POLICY_KEYS: &[Symbol] = &[INPUT_BUDGET, PACK_BUDGET, OVERFLOW, COMPACTOR, EXPANSION];
pub(crate) const MAX_TOKENS: Symbol = Symbol("max_tokens");
pub(crate) const INPUT_BUDGET_KEYS: &[Symbol] = &[MAX_TOKENS];
pub(crate) const DEFAULT_RATIO: Symbol = Symbol("default_ratio");
pub(crate) const PACK_BUDGET_KEYS: &[Symbol] = &[DEFAULT_RATIO];
/// `compactor { type: truncate }`, the spec's JSON form.
pub(crate) const TYPE: Symbol = Symbol("type");
pub(crate) const COMPACTOR_KEYS: &[Symbol] = &[TYPE];
pub(crate) const MAX_PAGES: Symbol = Symbol("max_pages");
pub(crate) const MIN_FILL_RATIO: Symbol = Symbol("min_fill_ratio");
pub(crate) const EXPANSION_KEYS: &[Symbol] = &[MAX_PAGES, MIN_FILL_RATIO];

// Messages.
pub(crate) const SYSTEM: Symbol = Symbol("system");
pub(crate) const USER: Symbol = Symbol("user");
pub(crate) const ASSISTANT: Symbol = Symbol("assistant");
pub(crate) const CONTEXT: Symbol = Symbol("context");
pub(crate) const HISTORY: Symbol = Symbol("history");
pub(crate) const MESSAGE_KINDS: &[Symbol] = &[SYSTEM, USER, ASSISTANT, CONTEXT, HISTORY];
pub(crate) const RATIO: Symbol = Symbol("ratio");
pub(crate) const PLACEMENT: Symbol = Symbol("placement");
pub(crate) const INSERT_KEYS: &[Symbol] = &[RATIO, PLACEMENT];
pub(crate) const PLACEMENT_MESSAGE: Symbol = Symbol("message");
pub(crate) const PLACEMENT_VARIABLE: Symbol = Symbol("variable");
pub(crate) const PLACEMENTS: &[Symbol] = &[PLACEMENT_MESSAGE, PLACEMENT_VARIABLE];

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
