//! `ctx`: LLM pipelines declared with `pipeline!`, checked at compile time, and run as typed
//! state machines that keep every model request inside its context window.
//!
//! This facade re-exports [`ctx_runtime`] (everything that runs) and the `pipeline!` macro, so a
//! user can depend on one crate. The examples and integration tests of the workspace live here.

pub use ctx_runtime::*;
