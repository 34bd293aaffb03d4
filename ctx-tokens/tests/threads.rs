//! `CTX_TOKENS_THREADS` (`THREADS_ENV`), the documented setting of how many threads a long text
//! is counted on. It is read once per process, so each case runs this test binary again as a
//! child process with the variable set, and reads what the child's backend made of it.

use std::process::Command;

use ctx_tokens::{BpeBackend, Encoding, PARALLEL_MIN_BYTES, THREADS_ENV, TokenizerBackend};

/// Set in the child processes only.
const CHILD: &str = "CTX_TOKENS_THREADS_TEST_CHILD";

/// The child's side: prints what a default backend chooses for a long text, and what it counts.
#[test]
fn child_reports_what_the_backend_read() {
    if std::env::var_os(CHILD).is_none() {
        return; // run by the parent below, with the variable set
    }
    let backend = BpeBackend::new(Encoding::Cl100kBase);
    let long = 16 * PARALLEL_MIN_BYTES;
    let text = "a word or two, ".repeat(PARALLEL_MIN_BYTES / 7);
    match backend.threads_for(long) {
        Ok(n) => println!("@threads={n} count={}", backend.count(&text).expect("count")),
        Err(e) => println!(
            "@error={e} count={:?} up_to={:?}",
            backend.count("short").map_err(|e| e.to_string()),
            backend.count_up_to("short", 9).map_err(|e| e.to_string())
        ),
    }
    // Code that sets the number is not overruled by the variable.
    println!("@with_threads={}", backend.with_threads(3).threads_for(long).expect("set in code"));
}

/// The child's report with `CTX_TOKENS_THREADS=value`.
fn child(value: &str) -> String {
    let out = Command::new(std::env::current_exe().expect("this test binary"))
        .args(["--exact", "child_reports_what_the_backend_read", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env(THREADS_ENV, value)
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{value}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    // libtest may print the test's name on the line where the child's first line starts.
    stdout.lines().filter_map(|l| l.find('@').map(|at| &l[at..])).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_variable_pins_the_thread_count_or_leaves_it_to_the_free_cores() {
    let expected = BpeBackend::new(Encoding::Cl100kBase)
        .with_threads(1)
        .count(&"a word or two, ".repeat(PARALLEL_MIN_BYTES / 7))
        .expect("count");
    let one = child("1");
    assert!(one.starts_with(&format!("@threads=1 count={expected}\n")), "{one}");
    let five = child(" 5 ");
    assert!(five.starts_with(&format!("@threads=5 count={expected}\n")), "{five}");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for auto in ["auto", "0", ""] {
        let report = child(auto);
        let n: usize = report
            .strip_prefix("@threads=")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("`{auto}`: {report}"));
        assert!((1..=cores).contains(&n), "`{auto}`: {n} threads of {cores} cores");
        assert!(report.contains(&format!(" count={expected}\n")), "{report}");
    }
    for report in [one, five] {
        assert!(report.ends_with("@with_threads=3"), "{report}");
    }
}

#[test]
fn a_value_that_is_no_setting_fails_every_count_naming_it() {
    let report = child("two");
    assert!(
        report.starts_with("@error=tokenizer backend `ctx/cl100k_base` failed: CTX_TOKENS_THREADS=`two`"),
        "{report}"
    );
    assert!(report.contains("count=Err(") && report.contains("up_to=Err("), "{report}");
    assert!(report.ends_with("@with_threads=3"), "{report}");
}
