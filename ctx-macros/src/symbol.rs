//! The DSL's keywords as named constants, so that a misspelling in the macro is a compile error
//! here rather than a key that silently never matches.

use std::fmt::{self, Display};

use proc_macro2::Ident;

/// A keyword of the `pipeline!` DSL.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Symbol(pub &'static str);

impl Symbol {
    /// The keyword's text.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl PartialEq<Symbol> for Ident {
    fn eq(&self, word: &Symbol) -> bool {
        // Raw identifiers (`r#type`) name the same key as their plain spelling.
        let text = self.to_string();
        text.strip_prefix("r#").unwrap_or(&text) == word.0
    }
}

impl PartialEq<Symbol> for &Ident {
    fn eq(&self, word: &Symbol) -> bool {
        *self == word
    }
}

/// Renders `[a, b]` as "`a`, `b`" for "expected one of …" messages.
pub(crate) fn one_of(words: &[Symbol]) -> String {
    words.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", ")
}

// The header.
pub(crate) const PIPELINE: Symbol = Symbol("pipeline");
/// The attribute holding the macro's own options: `#[ctx(crate = path)]`.
pub(crate) const CTX_ATTR: Symbol = Symbol("ctx");
/// `crate = path` in `#[ctx(…)]`: where the generated code finds ctx.
pub(crate) const CRATE: Symbol = Symbol("crate");

// Sections of a pipeline.
pub(crate) const MODEL: Symbol = Symbol("model");
/// `file: "pipelines/qa.yaml"`: the pipeline is read from a YAML file.
pub(crate) const FILE: Symbol = Symbol("file");
pub(crate) const SETTINGS: Symbol = Symbol("settings");
pub(crate) const PROMPTS: Symbol = Symbol("prompts");
pub(crate) const STEPS: Symbol = Symbol("steps");
pub(crate) const SECTIONS: &[Symbol] = &[MODEL, SETTINGS, PROMPTS, STEPS];

// `model { … }` and `model: config("…")`.
pub(crate) const MODEL_NAME: Symbol = Symbol("model");
pub(crate) const CONTEXT_WINDOW: Symbol = Symbol("context_window");
pub(crate) const MAX_TOKENS: Symbol = Symbol("max_tokens");
pub(crate) const ENCODING: Symbol = Symbol("encoding");
/// `tokenizer: "models/x/tokenizer.json"`: the model's own tokenizer and chat template.
pub(crate) const TOKENIZER: Symbol = Symbol("tokenizer");
/// `gguf: "models/x.gguf"`: the tokenizer, chat template and window inside a GGUF file.
pub(crate) const GGUF: Symbol = Symbol("gguf");
pub(crate) const MODEL_KEYS: &[Symbol] = &[MODEL_NAME, CONTEXT_WINDOW, MAX_TOKENS, ENCODING, TOKENIZER, GGUF];
pub(crate) const CONFIG: Symbol = Symbol("config");

// `settings { … }`: these have typed fields; any other name is an integer setting.
pub(crate) const MAX_CONTEXT_TOKENS: Symbol = Symbol("max_context_tokens");
pub(crate) const MAX_HISTORY_TOKENS: Symbol = Symbol("max_history_tokens");
pub(crate) const BUDGET_SAFETY_MARGIN_TOKENS: Symbol = Symbol("budget_safety_margin_tokens");
pub(crate) const LIMITS_POLICY: Symbol = Symbol("limits_policy");
/// The user compactor languages rules may name: `compactors: [yaml]`.
pub(crate) const COMPACTORS: Symbol = Symbol("compactors");
/// The node frame template: `node_frame: "<doc id=\"{id}\">\n{text}\n</doc>"`.
pub(crate) const NODE_FRAME: Symbol = Symbol("node_frame");
/// Whether a conversation carries the context to the next question: `carry_context: true`.
pub(crate) const CARRY_CONTEXT: Symbol = Symbol("carry_context");

// `prompts { … }` values.
pub(crate) const INCLUDE_STR: Symbol = Symbol("include_str");
pub(crate) const AT_LOAD: Symbol = Symbol("at_load");

// Step kinds.
pub(crate) const SEARCH_NODES: Symbol = Symbol("search_nodes");
pub(crate) const EXPAND_DEPENDENCY_TREE: Symbol = Symbol("expand_dependency_tree");
pub(crate) const FETCH_NODE_TEXTS: Symbol = Symbol("fetch_node_texts");
pub(crate) const MANAGE_CONTEXT_BUDGET: Symbol = Symbol("manage_context_budget");
pub(crate) const CALL_MODEL: Symbol = Symbol("call_model");
pub(crate) const LOOP_GUARD: Symbol = Symbol("loop_guard");
pub(crate) const SET_VARIABLES: Symbol = Symbol("set_variables");
pub(crate) const CUSTOM: Symbol = Symbol("custom");
pub(crate) const AGENT: Symbol = Symbol("agent");
pub(crate) const STEP_KINDS: &[Symbol] = &[
    SEARCH_NODES,
    EXPAND_DEPENDENCY_TREE,
    FETCH_NODE_TEXTS,
    MANAGE_CONTEXT_BUDGET,
    CALL_MODEL,
    AGENT,
    LOOP_GUARD,
    SET_VARIABLES,
    CUSTOM,
];

// Step keys.
pub(crate) const NEXT: Symbol = Symbol("next");
pub(crate) const ON_OK: Symbol = Symbol("on_ok");
pub(crate) const ON_OVER: Symbol = Symbol("on_over");
pub(crate) const ON_ALLOW: Symbol = Symbol("on_allow");
pub(crate) const ON_DENY: Symbol = Symbol("on_deny");
pub(crate) const TOP_K: Symbol = Symbol("top_k");
pub(crate) const MAX_DEPTH: Symbol = Symbol("max_depth");
/// The evidence budget of `fetch_node_texts` (formerly spelled `max_tokens` there).
pub(crate) const EVIDENCE_TOKENS: Symbol = Symbol("evidence_tokens");
pub(crate) const COMPACT_CODE: Symbol = Symbol("compact_code");
pub(crate) const DIVIDE_NEW_CONTENT: Symbol = Symbol("divide_new_content");
pub(crate) const PROMPT_KEY: Symbol = Symbol("prompt_key");
pub(crate) const MAX_OUTPUT_TOKENS: Symbol = Symbol("max_output_tokens");
pub(crate) const USER_PARTS: Symbol = Symbol("user_parts");
pub(crate) const USE_HISTORY: Symbol = Symbol("use_history");
pub(crate) const MAX_TURN_LOOPS_FROM_SETTINGS: Symbol = Symbol("max_turn_loops_from_settings");
pub(crate) const RULES: Symbol = Symbol("rules");
pub(crate) const OUTCOMES: Symbol = Symbol("outcomes");
pub(crate) const TOOLS: Symbol = Symbol("tools");
pub(crate) const MAX_TOOL_CALLS: Symbol = Symbol("max_tool_calls");
pub(crate) const TURN_BUDGET_TOKENS: Symbol = Symbol("turn_budget_tokens");
pub(crate) const TEMPERATURE: Symbol = Symbol("temperature");
pub(crate) const TOP_P: Symbol = Symbol("top_p");
pub(crate) const PRESENCE_PENALTY: Symbol = Symbol("presence_penalty");
pub(crate) const FREQUENCY_PENALTY: Symbol = Symbol("frequency_penalty");
pub(crate) const STOP: Symbol = Symbol("stop");
pub(crate) const SEED: Symbol = Symbol("seed");
pub(crate) const RESPONSE_FORMAT: Symbol = Symbol("response_format");

// A tool of an `agent` step: `name { description: "…", parameters: r#"{…}"# }`.
pub(crate) const DESCRIPTION: Symbol = Symbol("description");
pub(crate) const PARAMETERS: Symbol = Symbol("parameters");
pub(crate) const TOOL_KEYS: &[Symbol] = &[DESCRIPTION, PARAMETERS];

// `response_format` values.
pub(crate) const JSON: Symbol = Symbol("json");
pub(crate) const JSON_SCHEMA: Symbol = Symbol("json_schema");
pub(crate) const NAME: Symbol = Symbol("name");
pub(crate) const SCHEMA: Symbol = Symbol("schema");
pub(crate) const STRICT: Symbol = Symbol("strict");
pub(crate) const RESPONSE_FORMAT_KEYS: &[Symbol] = &[NAME, SCHEMA, STRICT];

// `compact_code` rule keys.
pub(crate) const LANGUAGE: Symbol = Symbol("language");
pub(crate) const POLICY: Symbol = Symbol("policy");
pub(crate) const THRESHOLD: Symbol = Symbol("threshold");
pub(crate) const INBOX_KEY: Symbol = Symbol("inbox_key");
pub(crate) const COMPACT_RULE_KEYS: &[Symbol] = &[LANGUAGE, POLICY, THRESHOLD, INBOX_KEY];

// Values.
pub(crate) const NULL: Symbol = Symbol("null");

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::Span;

    #[test]
    fn idents_compare_with_symbols_including_raw_ones() {
        assert!(Ident::new("next", Span::call_site()) == NEXT);
        assert!(Ident::new_raw("next", Span::call_site()) == NEXT);
        assert!(Ident::new("nxt", Span::call_site()) != NEXT);
        assert_eq!(one_of(&[ON_OK, ON_OVER]), "`on_ok`, `on_over`");
    }
}
