//! Compile-fail cases of `pipeline!`: one per misconfiguration, each `.stderr` reviewed; and
//! passing crates (`pass/`) that use ctx as a user's crate does, with `ctx` as their one dependency.
//!
//! rustc's own wording changes between releases, so the expected output is pinned to one
//! toolchain (the workspace's `rust-version`); on others the test is skipped rather than made
//! to accept several outputs. Regenerate with `TRYBUILD=overwrite cargo test -p ui-tests` and
//! read the diff.

#[rustversion::attr(not(stable(1.95)), ignore)]
#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("cases/*.rs");
    // Crates whose one dependency is `ctx`, built and run as a user's would be.
    t.pass("pass/*.rs");
}
