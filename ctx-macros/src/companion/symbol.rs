//! The keywords of `context_engine!` and `turn_budget!`: the spec's key names, as constants so that
//! a misspelling in the macro is a compile error here rather than a key that never matches.

use crate::symbol::Symbol;

// The header of both macros: `pub fn name { … }`.
pub const FN: Symbol = Symbol("fn");

// `context_engine!` sections.
pub const CONTEXTS: Symbol = Symbol("contexts");
pub const RETRIEVERS: Symbol = Symbol("retrievers");
pub const COMPACTORS: Symbol = Symbol("compactors");
pub const ENGINE_KEYS: &[Symbol] = &[CONTEXTS, RETRIEVERS, COMPACTORS];

// A retriever.
pub const QUERY: Symbol = Symbol("query");
pub const LIMIT: Symbol = Symbol("limit");
pub const RETRIEVER_KEYS: &[Symbol] = &[QUERY, LIMIT];

// A context declaration.
pub const INPUTS: Symbol = Symbol("inputs");
pub const POLICY: Symbol = Symbol("policy");
pub const MESSAGES: Symbol = Symbol("messages");
pub const CONTEXT_KEYS: &[Symbol] = &[INPUTS, POLICY, MESSAGES];

// A policy.
pub const INPUT_BUDGET: Symbol = Symbol("input_budget");
pub const PACK_BUDGET: Symbol = Symbol("pack_budget");
pub const OVERFLOW: Symbol = Symbol("overflow");
pub const COMPACTOR: Symbol = Symbol("compactor");
pub const EXPANSION: Symbol = Symbol("expansion");
pub const POLICY_KEYS: &[Symbol] = &[INPUT_BUDGET, PACK_BUDGET, OVERFLOW, COMPACTOR, EXPANSION];
pub const MAX_TOKENS: Symbol = Symbol("max_tokens");
pub const INPUT_BUDGET_KEYS: &[Symbol] = &[MAX_TOKENS];
pub const DEFAULT_RATIO: Symbol = Symbol("default_ratio");
pub const PACK_BUDGET_KEYS: &[Symbol] = &[DEFAULT_RATIO];
/// `compactor { type: truncate }`, the spec's JSON form.
pub const TYPE: Symbol = Symbol("type");
pub const COMPACTOR_KEYS: &[Symbol] = &[TYPE];
pub const MAX_PAGES: Symbol = Symbol("max_pages");
pub const MIN_FILL_RATIO: Symbol = Symbol("min_fill_ratio");
pub const EXPANSION_KEYS: &[Symbol] = &[MAX_PAGES, MIN_FILL_RATIO];

// Messages.
pub const SYSTEM: Symbol = Symbol("system");
pub const USER: Symbol = Symbol("user");
pub const ASSISTANT: Symbol = Symbol("assistant");
pub const CONTEXT: Symbol = Symbol("context");
pub const HISTORY: Symbol = Symbol("history");
pub const MESSAGE_KINDS: &[Symbol] = &[SYSTEM, USER, ASSISTANT, CONTEXT, HISTORY];
pub const RATIO: Symbol = Symbol("ratio");
pub const PLACEMENT: Symbol = Symbol("placement");
pub const INSERT_KEYS: &[Symbol] = &[RATIO, PLACEMENT];
pub const PLACEMENT_MESSAGE: Symbol = Symbol("message");
pub const PLACEMENT_VARIABLE: Symbol = Symbol("variable");
pub const PLACEMENTS: &[Symbol] = &[PLACEMENT_MESSAGE, PLACEMENT_VARIABLE];

// `turn_budget!`.
pub const BUDGET_TOKENS: Symbol = Symbol("budget_tokens");
pub const CONTEXT_WINDOW: Symbol = Symbol("context_window");
pub const FALLBACK_FRACTION: Symbol = Symbol("fallback_fraction");
pub const ON_PARTIAL: Symbol = Symbol("on_partial");
pub const MIN_PARTIAL_TOKENS: Symbol = Symbol("min_partial_tokens");
pub const DOCUMENT_TEMPLATE: Symbol = Symbol("document_template");
pub const DOCUMENT_SEPARATOR: Symbol = Symbol("document_separator");
pub const TURN_KEYS: &[Symbol] = &[
    BUDGET_TOKENS,
    CONTEXT_WINDOW,
    FALLBACK_FRACTION,
    ON_PARTIAL,
    MIN_PARTIAL_TOKENS,
    DOCUMENT_TEMPLATE,
    DOCUMENT_SEPARATOR,
];
/// `context_window: model("gpt-4o")`: the window from ctx's model table.
pub const MODEL: Symbol = Symbol("model");
