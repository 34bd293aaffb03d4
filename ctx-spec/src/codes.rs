//! The one trait every error of ctx implements: a stable code. A leaf module (it imports
//! nothing of the crate), so that every area's error can implement it without depending on the
//! error family that wraps them all (`error::CtxError`).

/// A stable, machine-readable error code such as `PIPELINE_BUDGET_MISCONFIG`.
///
/// Codes never change meaning once published; messages may be reworded.
pub trait ErrorCode {
    /// The code, in SCREAMING_SNAKE_CASE.
    fn code(&self) -> &'static str;
}
