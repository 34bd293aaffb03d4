//! The registry of error codes, as rustc's: one [`Code`] per kind of problem ctx reports, each
//! with its published string ([`Code::as_str`], `UNKNOWN_STEP_TARGET`), its [`Area`] and an
//! explanation (what it means and how to fix it) that `ctx explain CODE` prints.
//!
//! Every error of ctx implements [`ErrorCode`], and every [`ConfigIssue`] carries a `Code`. On the
//! wire (messages, JSON, `Serialize`) a code is its string, the same string as before the registry
//! existed; in Rust it is a value that can be matched, so a typo in a code is a compile error and
//! relations between codes are methods ([`Code::follows_from_graph`]) rather than string lists.
//!
//! [`ConfigIssue`]: crate::ConfigIssue

#[doc(inline)]
pub use ctx_runtime::codes::{Area, Code, ErrorCode, UnknownCode};
