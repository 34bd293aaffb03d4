//! The `pipeline!` proc macro of ctx.
//!
//! Parse (`ast`) → lower to `ctx_spec`'s `PipelineDef` with a span per value (`lower`) →
//! validate with `ctx_spec`'s rules, reported under the user's tokens (`valid`) → emit a
//! typed state machine (`expand`, `backends`). Use it through the `ctx` facade crate, whose documentation
//! shows the DSL.
#![warn(unreachable_pub)]

mod ast;
mod backends;
mod companion;
mod counts;
mod ctxt;
mod defcode;
mod expand;
mod fields;
mod file;
mod krate;
mod located;
mod lower;
mod spans;
mod symbol;
mod valid;

#[cfg(test)]
mod lower_tests;
#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Declares a pipeline and expands it into a typed state machine; see the `ctx` crate's
/// documentation for the DSL. Every problem of the declaration is a compile error under the
/// token that caused it, the validation rules (those YAML files and `ctx check` run) included.
#[proc_macro]
pub fn pipeline(input: TokenStream) -> TokenStream {
    // `include_str!` paths are relative to the invoking file, as for the standard macro.
    let base_dir = proc_macro::Span::call_site().local_file().and_then(|file| file.parent().map(|d| d.to_path_buf()));
    expand::pipeline(input.into(), base_dir.as_deref()).into()
}

/// Declares the context engine's contexts, retrievers and compactors, checked when compiled, and
/// expands into a function returning the `ctx::engine::EngineSpec` they make.
///
/// ```
/// ctx::context_engine! {
///     /// The help centre's contexts.
///     pub fn help_centre {
///         compactors: [summarize],
///         retrievers {
///             kb_search { query: "{input.question}", limit: 3 },
///         }
///         contexts {
///             support {
///                 inputs: [question],
///                 policy {
///                     input_budget { max_tokens: 4_000 },
///                     pack_budget { default_ratio: 0.4 },
///                     overflow: compact,
///                     compactor: summarize,
///                     expansion { max_pages: 3, min_fill_ratio: 1.0 },
///                 },
///                 messages: [
///                     system: "You are a support agent. Answer from the articles.",
///                     context: kb_search { ratio: 0.6 },
///                     context: faq { placement: variable },
///                     history,
///                     user: "{context.faq}\n\nQuestion: {input.question}",
///                 ],
///             }
///             faq {
///                 inputs: [question],
///                 messages: [system: "Frequently asked:", context: kb_search],
///             }
///         }
///     }
/// }
///
/// let spec = help_centre();
/// assert_eq!(spec.contexts[0].name, "support");
/// assert!(ctx::engine::validate_spec(&spec).is_empty());
/// ```
///
/// | key | form |
/// |---|---|
/// | `contexts` (required) | `name { inputs: [a, b], policy { … }, messages: [ … ] }`, one per context; `messages` is required |
/// | `retrievers` | `name { query: "template with {input.x}", limit: 3 }`; `query` required, `limit` 3 when left out |
/// | `compactors` | `[name, "name-with-dashes"]`: compactors the application registers besides the built-in `truncate`, `sql`, `dotnet`, `code` |
/// | `policy` | `input_budget { max_tokens: N }`, `pack_budget { default_ratio: R }`, `overflow: compact \| error`, `compactor: name` (or `compactor { type: name }`), `expansion { max_pages: N, min_fill_ratio: R }` |
/// | messages | `system: "…"`, `user: "…"`, `assistant: "…"`, `context: name`, `context: name { ratio: R, placement: message \| variable }`, `history` |
///
/// The declarations are read by the decoder YAML pipeline files' `contexts:` goes through too, with
/// the same messages. Every problem is a compile error under the token that caused it, all at
/// once: unknown keys and message kinds (with "did you mean"), missing keys, values of the wrong
/// type, and every rule of
/// `ctx::engine::validate_spec` — ratios in (0, 1] summing to at most 1, known retrievers,
/// contexts and compactors, template variables among the context's inputs and packs, `max_pages`
/// at least 1, `min_fill_ratio` in (0, 1], no nested history, no cycles.
#[proc_macro]
pub fn context_engine(input: TokenStream) -> TokenStream {
    companion::context_engine(input.into()).into()
}

/// Declares an agent turn's progressive-budget settings, checked when compiled, and expands into a
/// function returning the `ctx::turn::TurnBudgetConfig`.
///
/// ```
/// ctx::turn_budget! {
///     /// Retrieval tool calls of one agent turn.
///     pub fn agent_turn {
///         budget_tokens: 100_000,
///         context_window: model("gpt-4o"),
///         fallback_fraction: 0.8,
///         on_partial: truncate,
///         min_partial_tokens: 64,
///         document_template: "<article id=\"{id}\">\n{text}\n</article>",
///         document_separator: "\n\n",
///     }
/// }
///
/// let config = agent_turn();
/// assert_eq!(config.context_window, 128_000);
/// assert!(config.validate().is_empty());
/// ```
///
/// `budget_tokens` and `context_window` are required; `context_window: model("…")` takes the
/// window from ctx's model table (`ctx_tokens::ModelInfo`) when compiling. The others
/// default as in `TurnBudgetConfig::new`. Every problem is a compile error under the token that
/// caused it, all at once: unknown keys, values of the wrong type, an unknown model, and every rule
/// of `TurnBudgetConfig::validate` — positive budgets, a budget within the window, a
/// fraction in (0, 1], a known `on_partial` policy, a template holding `{text}` exactly once.
#[proc_macro]
pub fn turn_budget(input: TokenStream) -> TokenStream {
    companion::turn_budget(input.into()).into()
}
