//! Chat messages and tool schemas: the values a request is made of, counted and sent as they are.

#[doc(inline)]
pub use ctx_runtime::chat::{ChatMessage, Role, SignedThinking, ToolCall, ToolSchema};
