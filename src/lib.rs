//! `ctx`: LLM pipelines declared with [`pipeline!`], checked at compile time, and run as typed
//! state machines that keep every model request inside its context window.
//!
//! This is the library of the `ctx-llm` package. It re-exports the [`pipeline!`] macro, its
//! companions [`context_engine!`] and [`turn_budget!`], and the runtime (everything that runs), so
//! a user depends on one crate.
//!
//! ```
//! use ctx::llm::offline::OfflineModel;
//! use ctx::retrieve::{Bm25Index, IndexOptions};
//! use ctx::{CtxError, PipelineState};
//!
//! ctx::pipeline! {
//!     /// Answers questions from the documents in `docs/`.
//!     pub pipeline Qa {
//!         model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
//!         settings { max_context_tokens: 9_000, max_history_tokens: 2_000, budget_safety_margin_tokens: 128 }
//!         prompts { answer: "Answer the question from the context." }
//!         steps {
//!             search: search_nodes { top_k: 20, next: fetch },
//!             fetch: fetch_node_texts { evidence_tokens: 3_000, next: answer },
//!             answer: call_model { prompt_key: answer, max_output_tokens: 4_000, use_history: true, next: end },
//!         }
//!     }
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), CtxError> {
//!     let qa = Qa::new()?; // checked when compiled, so it loads
//!     let docs = Bm25Index::from_dir("docs", &IndexOptions::default())?;
//!     let model = OfflineModel::default(); // or ctx::llm::openai::OpenAiClient::from_env()?
//!     let env = QaEnv { search: &docs, store: &docs, model: &model };
//!     let (state, _reports) = qa.run(PipelineState::new("What does the budget contract check?"), &env).await?;
//!     println!("{}", state.last_model_response.unwrap_or_default());
//!     Ok(())
//! }
//! ```
//!
//! A chat service asks the same pipeline question after question, and streams the answer:
//!
//! ```no_run
//! # use ctx::llm::offline::OfflineModel;
//! # use ctx::pipeline::Token;
//! # use ctx::retrieve::{Bm25Index, IndexOptions};
//! # ctx::pipeline! {
//! #     pub pipeline Qa {
//! #         model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
//! #         settings { max_context_tokens: 9_000, max_history_tokens: 2_000, budget_safety_margin_tokens: 128 }
//! #         prompts { answer: "Answer the question from the context." }
//! #         steps {
//! #             search: search_nodes { top_k: 20, next: fetch },
//! #             fetch: fetch_node_texts { evidence_tokens: 3_000, next: answer },
//! #             answer: call_model { prompt_key: answer, max_output_tokens: 4_000, use_history: true, next: end },
//! #         }
//! #     }
//! # }
//! # #[tokio::main]
//! # async fn main() -> Result<(), ctx::CtxError> {
//! # let docs = Bm25Index::from_dir("docs", &IndexOptions::default())?;
//! # let model = OfflineModel::default();
//! # let env = QaEnv { search: &docs, store: &docs, model: &model };
//! let mut chat = Qa::new()?.conversation();
//! chat.ask("What does the budget contract check?", &env).await?;
//! let show_the_answer = |t: Token<'_, QaStep>| {
//!     if t.step == QaStep::Answer {
//!         print!("{}", t.text);
//!     }
//! };
//! let follow_up = chat.ask_streaming("And when the pipeline is loaded?", &env, show_the_answer).await?;
//! # assert!(!follow_up.text.is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! Raise `max_output_tokens` to `6_000` and the crate no longer compiles: history, context,
//! output and margin could then need 17,152 tokens of a 16,384-token window. The message, under
//! the step that caused it, is in [Compile errors](guide::compile_errors).
//!
//! # The guide
//!
//! - [A worked example](guide::tour): questions about a code base, with a budget trace.
//! - [The `pipeline!` DSL](guide::dsl): sections, step kinds and their keys, what is generated.
//! - [Agents, streaming and conversations](guide::agents): tools, progressive budgeting, chat.
//! - [Tools from MCP servers](guide::mcp_tools): agent tools that MCP servers list (feature `mcp`).
//! - [Pipelines in files](guide::pipeline_files): YAML pipelines and the `ctx` command line.
//! - [Compile errors](guide::compile_errors): what the checks report, and where.
//! - [Models](guide::models): OpenAI-compatible servers, Anthropic, a local model's own files;
//!   with the `rig` feature, rig's providers and vector stores (the chapter `guide::rig`).
//! - [Cargo features](guide::features): what each feature adds, and what it costs.
//! - [Durable runs on Restate](guide::durable_runs): runs that survive a crash or a deploy.
//! - [Testing and CI](guide::testing): the test command, CI, what a fresh machine needs.
//! - [Reliability and security](guide::reliability): the property, fault and security suites.
//! - [Seeing every request](guide::reports): the run report, the contract as a picture, traces.
#![warn(unreachable_pub)]
// docs.rs builds with `--cfg docsrs`: each feature-gated item gets its "available on crate feature"
// badge. Without that cfg (every stable build) nothing changes.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use ctx_macros::{context_engine, pipeline, turn_budget};

/// [serde](https://serde.rs), the version ctx is built with, so that a tool's typed arguments
/// ([`ToolRequest::args`](pipeline::ToolRequest::args)) need no dependency of the program's own:
///
/// ```
/// #[derive(ctx::serde::Deserialize)]
/// #[serde(crate = "ctx::serde")] // the derive's paths through ctx, not a `serde` of your own
/// struct Search {
///     query: String,
/// }
/// # let _ = Search { query: String::new() }.query;
/// ```
pub use serde;

// The front door, in the manner of sqlx's facade: every module below is a file of this crate that
// lists, name by name, what it re-exports from the runtime (no glob, no whole module of the
// runtime), so the public API is written here and `public-api/ctx-llm.*.txt` holds it for review.
// The runtime's implementation modules (`classify`, `validation`, `lang`, the driver's and steps'
// files) and the items only the macros' generated code names (`__private`) stay behind it.
//
// Each name has one path, with one deliberate exception: the names nearly every program writes
// (the state, messages, the counter, the error) are also at the root, as `sqlx::Error` and
// `sqlx::Pool` are, so that a program's first lines need no module paths. Their home modules
// keep them, so a module's page is complete; `ConfigIssue`, `ConfigIssues`, `FieldPath`,
// `CtxError` and `Result` have no module in the facade, and the root is their one path.
#[doc(inline)]
pub use ctx_runtime::{
    ChatMessage, Code, ConfigIssue, ConfigIssues, CtxError, Encoding, ErrorCode, FieldPath, InboxMessage, NodeText,
    PipelineState, Result, Role, TokenCounter, TokenError, ToolCall, ToolSchema,
};

pub mod budget;
pub mod chat;
pub mod codes;
pub mod compact;
pub mod config;
pub mod contract;
pub mod definition;
#[cfg(feature = "restate")]
#[cfg_attr(docsrs, doc(cfg(feature = "restate")))]
pub mod durable;
pub mod engine;
pub mod history;
pub mod llm;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
pub mod negotiate;
pub mod pipeline;
pub mod report;
pub mod retrieve;
pub mod state;
pub mod tokens;
pub mod turn;

/// What code generated by [`pipeline!`], [`context_engine!`] and [`turn_budget!`] names, by
/// absolute path (`::ctx::__private::…`, or `<path>::__private` with `#[ctx(crate = path)]`).
/// Not a public API: it changes with the macros, which are pinned to this exact version.
#[doc(hidden)]
pub mod __private {
    pub use ctx_runtime::__private::{serde_json, spec};
    pub use ctx_runtime::llm::ChatModelDyn;
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

#[cfg(test)]
mod guide_markdown;

/// The guide, one chapter a module. Each chapter is a file of `docs/` in the repository; its
/// Rust examples are compiled and run as doc tests.
pub mod guide {
    #[doc = include_str!("../docs/tour.md")]
    pub mod tour {}
    #[doc = include_str!("../docs/dsl.md")]
    pub mod dsl {}
    #[doc = include_str!("../docs/agents.md")]
    pub mod agents {}
    #[doc = include_str!("../docs/mcp.md")]
    pub mod mcp_tools {}
    #[doc = include_str!("../docs/pipeline-files.md")]
    pub mod pipeline_files {}
    #[doc = include_str!("../docs/compile-errors.md")]
    pub mod compile_errors {}
    #[doc = include_str!("../docs/models.md")]
    pub mod models {}
    #[cfg(feature = "rig")]
    #[doc = include_str!("../docs/rig.md")]
    pub mod rig {}
    #[doc = include_str!("../docs/features.md")]
    pub mod features {}
    #[doc = include_str!("../docs/durable-runs.md")]
    pub mod durable_runs {}
    #[doc = include_str!("../docs/testing.md")]
    pub mod testing {}
    #[doc = include_str!("../docs/reliability.md")]
    pub mod reliability {}
    #[doc = include_str!("../docs/reports.md")]
    pub mod reports {}
}
