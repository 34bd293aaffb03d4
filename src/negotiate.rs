//! Output negotiation: how many tokens a reply may have, given what the request already holds.
//!
//! `max_output = max(floor, min(requested, window − input − margin))`, where `input` is the exact
//! count of the request as sent: system prompt, memories, history, this turn's messages, tool
//! schemas and chat-format overhead, all built into the messages that [`Negotiated`] carries, so
//! what was counted is what is sent. When the floor itself would not fit, the oldest history is
//! dropped (a tool call with its results, never one without the other) until it does; when even
//! an empty history leaves no room for the floor, the answer is a typed error, never a request
//! that overflows the window.

#[doc(inline)]
pub use ctx_runtime::negotiate::{
    Negotiated, NegotiationConfig, NegotiationError, NegotiationMeta, NegotiationRequest, negotiate_max_output,
};
