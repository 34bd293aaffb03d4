//! Compile-fail cases for `pipeline!` live in `cases/`; the harness is `tests/ui.rs`.
