//! ctx's integration tests (`tests/`) and benchmarks (`benches/`), written as a user writes code
//! against the facade (`ctx::`).
//!
//! They live in a crate of their own, apart from `ctx-llm`, because cargo builds every
//! dev-dependency of a package before any of its examples: beside the facade, the test suite's
//! property-test, benchmark, reference-tokenizer and scripted-server crates made the README's
//! `cargo run --example rag_pipeline` build them all. This library is empty; `cargo test
//! --workspace --all-features` runs the tests, `scripts/bench.sh` the benchmarks.
