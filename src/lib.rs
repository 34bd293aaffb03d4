//! `ctx`: LLM pipelines declared with [`pipeline!`], checked at compile time, and run as typed
//! state machines that keep every model request inside its context window.
//!
//! This facade re-exports [`ctx_runtime`] (everything that runs) and the [`pipeline!`] macro, so a
//! user can depend on one crate. The examples and integration tests of the workspace live here.
//!
//! # The `pipeline!` DSL
//!
//! ```
//! ctx::pipeline! {
//!     /// Answers questions about a SQL/.NET code base.
//!     pub pipeline CodeQa {
//!         model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
//!         settings { max_context_tokens: 9_000, max_history_tokens: 2_000, max_turn_loops: 3 }
//!         prompts {
//!             answer: "Answer from the context; quote identifiers and SQL verbatim.",
//!             summarizer: "Summarise the context; keep identifiers and SQL verbatim.",
//!         }
//!         steps {
//!             search: search_nodes { top_k: 20, next: fetch },
//!             fetch: fetch_node_texts { evidence_tokens: 3_000, next: manage_budget },
//!             manage_budget: manage_context_budget {
//!                 compact_code: [
//!                     { language: sql, policy: demand, inbox_key: "compact_sql" },
//!                     { language: dotnet, policy: always },
//!                 ],
//!                 divide_new_content: "<<<New content",
//!                 on_ok: answer,
//!                 on_over: budget_loop_guard,
//!             },
//!             budget_loop_guard: loop_guard {
//!                 max_turn_loops_from_settings: max_turn_loops, on_allow: summarize, on_deny: answer,
//!             },
//!             summarize: call_model {
//!                 prompt_key: summarizer, max_output_tokens: 2_000,
//!                 user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
//!                 next: set_context_from_summary,
//!             },
//!             set_context_from_summary: set_variables {
//!                 rules: [ context_blocks <- last_model_response | to_context_blocks, last_model_response = null ],
//!                 next: manage_budget,
//!             },
//!             answer: call_model { prompt_key: answer, use_history: true, next: end },
//!         }
//!     }
//! }
//!
//! // A typed state machine: one variant per step, transitions resolved when compiled.
//! // `CodeQa` is `ctx::pipeline::Pipeline<CodeQaStep>`, the one driver every pipeline shares.
//! assert_eq!(CodeQaStep::FIRST, CodeQaStep::Search);
//! assert_eq!(CodeQaStep::from_id("manage_budget"), Some(CodeQaStep::ManageBudget));
//! assert!(CodeQa::MERMAID.starts_with("flowchart"));
//! let qa = CodeQa::new().expect("valid when compiled, so it loads");
//! assert_eq!(qa.pipeline().name(), "CodeQa");
//! ```
//!
//! A declaration is `pipeline Name { … }` (with a visibility and doc comments) holding four
//! sections, in any order:
//!
//! | section | form |
//! |---|---|
//! | `model` (required) | `model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }`, `model { model: "gpt-4o" }` (window and encoding from ctx's model table, exact names only), `model { gguf: "models/x.gguf", max_tokens: 256 }` or `model { tokenizer: "models/x/tokenizer.json", context_window: 32_768 }` (feature `hf`: counted with the model's own tokenizer and chat template while compiling; paths relative to the crate), or `model: config("config.json")` (read when the pipeline is loaded) |
//! | `settings` | `max_context_tokens`, `max_history_tokens`, `budget_safety_margin_tokens`, `limits_policy: fail_fast \| auto_clamp`, `compactors: [yaml]` (languages of registered user compactors), `node_frame: "…{text}…"` (the wrapping of each node), and any other integer setting by name (`max_turn_loops: 3`) |
//! | `prompts` | `key: "text"`, `key: include_str!("prompts/key.txt")` (relative to the file holding the macro, as for `include_str!`), or `key: at_load` (given to `LoadOptions` when loading) |
//! | `steps` (required) | `id: kind { … }`, in order; the first step is where a run starts, and the target `end` finishes it |
//!
//! Or, with the `yaml` feature, the whole pipeline in a YAML file (the specification's format,
//! see `pipeline::yaml`): `pub pipeline Qa { file: "pipelines/qa.yaml" }`, or
//! `pipeline!(file = "pipelines/qa.yaml")` for a public type named after the file's `name`. The
//! path is relative to the crate's root; the file, its `extends` chain, its prompt files and its
//! `config.json` are read and checked while compiling, every problem reported at its file, line
//! and column, and the crate is rebuilt when one of them changes. The generated API is the same.
//!
//! The step kinds and their keys (`?` = optional):
//!
//! | kind | keys |
//! |---|---|
//! | `search_nodes` | `top_k`, `next` |
//! | `expand_dependency_tree` | `max_depth`, `next` |
//! | `fetch_node_texts` | `evidence_tokens` (the evidence budget; `max_tokens` is its deprecated spelling), `next` |
//! | `manage_context_budget` | `compact_code?: [ { language: sql \| dotnet \| markdown \| text \| json \| a declared compactor, policy: always \| threshold \| demand, threshold?: 0.4, inbox_key?: "topic" }, … ]`, `divide_new_content?: "…"`, `on_ok`, `on_over` |
//! | `call_model` | `prompt_key`, `max_output_tokens?`, `max_tokens?`, `user_parts?: [ source => "template with one {}", … ]` (default: the context, then the question), `use_history?: bool`, `temperature?: 0.2`, `top_p?: 0.9`, `stop?: ["…"]`, `seed?: 7`, `response_format?: json \| json_schema { name: "…", schema: r#"{…}"#, strict?: bool }`, `next` |
//! | `agent` | every key of `call_model`, plus `tools: [ name { description: "…", parameters: r#"{…json schema…}"# }, … ]` (each a method of the generated `{Name}Tools` trait), `max_tool_calls`, `turn_budget_tokens?` |
//! | `loop_guard` | `max_turn_loops_from_settings: setting_name`, `on_allow`, `on_deny` |
//! | `set_variables` | `rules: [ target <- source, target <- source \| transform, target = null \| "text" \| 3 \| true ]`, `next` |
//! | `custom` | `outcomes { outcome => step, … }`, a method of the generated `{Name}Custom` trait returning the generated `{Step}Outcome` enum |
//!
//! Every mistake is a compile error under the token that caused it, all of them at once: unknown
//! keys and step kinds (with "did you mean"), missing transitions, values of the wrong type, and
//! every rule the runtime checks when loading a pipeline — unknown or unreachable steps, cycles
//! without a `loop_guard`, compaction rules, budgets, and the budget contract of each `call_model`
//! step counted with the real tokenizer when the window and prompts are literals.
//!
//! # What a pipeline generates
//!
//! For `pipeline CodeQa`: `enum CodeQaStep` (implements [`pipeline::StepMachine`]),
//! `type CodeQa = Pipeline<CodeQaStep>` (load with `new`/`load`, run with `run`, `resume`,
//! `step`, `run_streaming`, `conversation`), `struct CodeQaEnv` with one field per backend the
//! steps use (`search`, `store`, `model`, `custom`, `tools`), when the pipeline has `agent` steps
//! `trait CodeQaTools` with one `async fn` per tool, and, when it has `custom` steps,
//! `trait CodeQaCustom` with one `async fn` per step returning that step's outcome enum:
//!
//! ```
//! use ctx::{CtxError, PipelineState};
//!
//! ctx::pipeline! {
//!     pub pipeline Triage {
//!         model { context_window: 8_192, max_tokens: 512, encoding: cl100k_base }
//!         settings { max_context_tokens: 4_000 }
//!         steps {
//!             route: custom { outcomes { urgent => flag, routine => end } },
//!             flag: set_variables { rules: [ urgent = true ], next: end },
//!         }
//!     }
//! }
//!
//! struct Rules;
//!
//! impl TriageCustom for Rules {
//!     async fn route(&self, state: &mut PipelineState) -> Result<RouteOutcome, CtxError> {
//!         Ok(if state.user_question.contains("outage") { RouteOutcome::Urgent } else { RouteOutcome::Routine })
//!     }
//! }
//!
//! # let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! # runtime.block_on(async {
//! let triage = Triage::new()?;
//! let env = TriageEnv { custom: &Rules };
//! let (state, _reports) = triage.run(PipelineState::new("outage in eu-west"), &env).await?;
//! assert_eq!(state.variables["urgent"], serde_json::json!(true));
//! # Ok::<(), CtxError>(())
//! # }).unwrap();
//! ```
//!
//! A crate that re-exports ctx puts `#[ctx(crate = path::to::ctx)]` before `pipeline`.

// docs.rs builds with `--cfg docsrs`: each feature-gated item gets its "available on crate feature"
// badge. Without that cfg (every stable build) nothing changes.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use ctx_macros::{context_engine, pipeline, turn_budget};
pub use ctx_runtime::*;

/// What code generated by [`pipeline!`], [`context_engine!`] and [`turn_budget!`] names, by
/// absolute path (`::ctx::__private::…`, or `<path>::__private` with `#[ctx(crate = path)]`).
/// Not a public API: it changes with the macros, which are pinned to this exact version.
#[doc(hidden)]
pub mod __private {
    pub use ctx_runtime::__private::serde_json;
    pub use ctx_runtime::llm::ChatModel;
    pub use ctx_runtime::{CtxError, PipelineState, engine, pipeline, turn};

    /// Items generated code names where the user wrote a deprecated spelling: naming one makes
    /// rustc print its note at that spelling (stable proc macros cannot emit warnings).
    pub mod deprecated {
        #[allow(non_upper_case_globals)]
        #[deprecated(note = "`max_tokens` in a `fetch_node_texts` step is now spelled `evidence_tokens` \
                             (`max_tokens` means the output limit in `call_model`); rename the key")]
        pub const fetch_node_texts_max_tokens: () = ();
    }
}
