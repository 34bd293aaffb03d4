//! Progressive budgeting of the tool calls in one agent turn.
//!
//! An agent may call a retrieval tool several times before it answers. Each call must be told
//! what it may still use: the turn's budget less the conversation and every earlier tool call and
//! result of the turn, each document counted once. [`TurnLedger`] keeps that account one message
//! at a time, so a call costs what it adds; [`pack_documents`] fills what is left with whole
//! documents first and an explicit [`PartialPolicy`] for the one that does not fit, never over the
//! room it was given; [`fallback_check`] covers what the model sees at the end.
//!
//! ```
//! use ctx::turn::{RankedDocument, TurnBudgetConfig, TurnLedger};
//! use ctx::{ChatMessage, Encoding, TokenCounter, ToolCall};
//!
//! let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
//! let mut ledger = TurnLedger::with_messages(
//!     TurnBudgetConfig::new(2_000, 8_192),
//!     counter,
//!     &[ChatMessage::user("How do I rotate the API keys?")],
//! )?;
//! let call = ToolCall::new("call_1", "retrieve", r#"{"query":"rotate keys"}"#);
//! ledger.add_message(&ChatMessage::assistant_tool_calls("", vec![call.clone()]))?;
//! let ranked = [RankedDocument::new("kb-7", "Keys are rotated from the admin console …")];
//! let (tool_message, packed) = ledger.answer_call(&call, &ranked, None)?;
//! assert_eq!(packed.included.len(), 1);
//! assert_eq!(tool_message.tool_call_id.as_deref(), Some("call_1"));
//! assert!(ledger.contains("kb-7"));
//! # Ok::<(), ctx::turn::TurnError>(())
//! ```

#[doc(inline)]
pub use ctx_runtime::turn::{
    CallBudget, DocumentFormat, FallbackVerdict, Inclusion, LedgerBreakdown, Packed, PackedDocument, Partial,
    PartialPolicy, RankedDocument, SeenDocument, TurnBudgetConfig, TurnBudgetSpec, TurnError, TurnLedger,
    fallback_check, pack_documents,
};
