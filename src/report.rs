//! Reports a person opens: the anatomy of every model request of a run and the run's steps,
//! rendered as one self-contained HTML page, and the budget contract drawn the same way.
//!
//! * [`RequestAnatomy`] — a request's exact prompt count cut into parts (system prompt, tool
//!   schemas, history message by message, context node by node, the question, the tool calls of
//!   an agent turn, the chat format), adding up to exactly the count the guard took; every
//!   `call_model` and `agent` request carries one in its step report
//!   ([`SentRequest::anatomy`](crate::pipeline::SentRequest::anatomy), which
//!   [`CallReport`](crate::pipeline::CallReport) and
//!   [`ModelRequestReport`](crate::pipeline::ModelRequestReport) hold as `request`).
//! * [`RunReport`] — a run's steps and requests, what changed before each request and which step
//!   or rule changed it, the server's count and the contract's worst case beside ctx's, and for
//!   a priced model the cached prefix and the price of each part ([`RequestCost`]);
//!   [`RunReport::to_html`] renders it.
//! * [`contract_to_html`] — each model step's worst-case request, from the definition alone.
//!
//! ```
//! use ctx::llm::offline::OfflineModel;
//! use ctx::PipelineState;
//!
//! ctx::pipeline! {
//!     pub pipeline Qa {
//!         model { context_window: 8_192, max_tokens: 512, encoding: cl100k_base }
//!         settings { max_context_tokens: 2_000, budget_safety_margin_tokens: 64 }
//!         prompts { answer: "Answer from the context." }
//!         steps {
//!             answer: call_model { prompt_key: answer, user_parts: [ user_question => "Q: {}" ], next: end },
//!         }
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), ctx::CtxError> {
//! let qa = Qa::new()?;
//! let model = OfflineModel::default();
//! let (_, reports) = qa.run(PipelineState::new("What is <b>?"), &QaEnv { model: &model }).await?;
//! let report = qa.pipeline().report(&reports);
//! let request = &report.requests[0].anatomy;
//! assert_eq!(request.parts_total(), request.prompt_tokens); // exact, overhead included
//! let html = report.to_html(); // one file: inline CSS and SVG, no script
//! assert!(html.contains("What is &lt;b&gt;?") && !html.contains("<script"));
//! # Ok(()) }
//! ```

#[doc(inline)]
pub use ctx_runtime::report::{
    Change, ChangeKind, LazyAnatomy, PartCost, PartKind, RequestAnatomy, RequestCost, RequestEntry, RequestPart,
    RunReport, StepEntry, contract_to_html, escape,
};
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
#[doc(inline)]
pub use ctx_runtime::report::{OtlpError, OtlpTracing};
