//! The context engine: declared contexts assembled into a system prompt, a history and a user
//! message that never exceed the input budget, counted on the exact messages sent.
//!
//! A [`ContextDeclaration`] lists messages — system, user and assistant templates
//! (`"Question: {input.question}"`), packs drawn from named [`Retriever`]s or from nested
//! declarations, and the caller's history — and a [`ContextPolicySpec`] sizes them:
//! `input_budget.max_tokens`, `pack_budget` ratios, `overflow` (`compact` or `error`), the
//! compactor, and `expansion` (paging retrievers with `offset`/`limit` until packs are full).
//!
//! A policy's compactor is a name: a built-in or registered [`Compactor`](crate::compact::Compactor)
//! of [`crate::compact`] (the same trait `manage_context_budget` and the turn ledger use), or a
//! [`Summarizer`] registered on the builder, which asks a model.
//!
//! Where the Python original counts words, every decision here uses the
//! [`TokenCounter`](crate::tokens::TokenCounter) and is confirmed on the rendered whole: BPE
//! counts are not additive, so the assembler renders, counts, and shrinks until the exact count
//! fits.
//!
//! Declarations are plain data; [`validate_spec`] checks them without I/O, so the `pipeline!`
//! macro can reject a bad ratio or an unknown variable at compile time with the same rule the
//! [`ContextAssembler`] applies when it is built.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use ctx::engine::*;
//! use ctx::tokens::{Encoding, TokenCounter};
//!
//! let spec = EngineSpec {
//!     contexts: vec![ContextDeclaration {
//!         name: "support".into(),
//!         inputs: vec!["question".into()],
//!         policy: None,
//!         messages: vec![
//!             MessageSpec::System { content: "You are a support agent.".into() },
//!             MessageSpec::User { content: "Question: {input.question}".into() },
//!         ],
//!     }],
//!     ..Default::default()
//! };
//! let assembler = ContextAssembler::builder(spec, TokenCounter::for_encoding(Encoding::Cl100kBase)).build()?;
//! let out = assembler.assemble("support", &AssemblyInput::new().input("question", "Where is my order?")).await?;
//! assert_eq!(out.system_prompt, "You are a support agent.");
//! assert_eq!(out.user_message, "Question: Where is my order?");
//! assert_eq!(out.report.total_tokens, assembler.counter().count_messages(&out.messages())?);
//! # Ok::<(), ctx::CtxError>(())
//! # }).unwrap();
//! ```

#[doc(inline)]
pub use ctx_runtime::engine::{
    AssemblyInput, AssemblyReport, CompactorSpec, ContextAssembler, ContextAssemblerBuilder, ContextAssembly,
    ContextDeclaration, ContextInsert, ContextPack, ContextPackBlock, ContextPolicySpec, ContextRetrieverRequest,
    EngineError, EngineSpec, ExpansionSpec, InputBudgetSpec, MessageSpec, PackBudgetSpec, PackKind, PackPlacement,
    PackReport, RetrieveFuture, Retriever, RetrieverDecl, RetrieverDyn, RetrieverError, Summarizer, allocation,
    validate_spec,
};
