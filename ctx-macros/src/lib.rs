//! The `pipeline!` proc macro.
