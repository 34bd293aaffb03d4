//! `ctx run --report` and `ctx explain --html` write one self-contained page each, and the
//! numbers in them are the run's: every request's parts add up to its exact count, within the
//! window.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).canonicalize().expect("the workspace root")
}

fn out_file(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-report");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir.join(name)
}

/// `(data-exact, data-window, prompt part tokens, all part tokens)` of each `<section class="request…">`.
fn sections(html: &str) -> Vec<(usize, usize, Vec<usize>, Vec<usize>)> {
    let attr = |s: &str, name: &str| -> usize {
        let at = s.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
        s[at..s[at..].find('"').unwrap() + at].parse().expect("a number")
    };
    html.split("<section class=\"request")
        .skip(1)
        .map(|s| {
            let s = &s[..s.find("</section>").expect("closed")];
            let rows = |class: &str| -> Vec<usize> {
                s.split(&format!("<tr class=\"part {class}")).skip(1).map(|r| attr(r, "data-tokens")).collect()
            };
            let prompt = rows("prompt");
            let mut all = prompt.clone();
            all.extend(rows("window"));
            (attr(s, "data-exact"), attr(s, "data-window"), prompt, all)
        })
        .collect()
}

#[test]
fn run_writes_the_report_of_its_requests() {
    let path = out_file("run.html");
    let _ = std::fs::remove_file(&path);
    let out = Command::new(env!("CARGO_BIN_EXE_ctx"))
        .args(["run", "examples/pipelines/compaction_loop.yaml", "--docs", "examples/codebase", "--report"])
        .arg(&path)
        .args(["--", "How is the invoice total computed?"])
        .current_dir(root())
        .env_remove("CTX_BASE_URL")
        .output()
        .expect("the ctx binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&path).expect("the report was written");
    assert!(!html.contains("<script") && !html.contains("https:"));
    let requests = sections(&html);
    assert!(!requests.is_empty(), "{html}");
    for (exact, window, prompt, all) in requests {
        assert_eq!(prompt.iter().sum::<usize>(), exact);
        assert_eq!(all.iter().sum::<usize>(), window);
    }
    assert!(html.contains("<ol class=\"timeline\">"));
}

#[test]
fn explain_draws_the_contract() {
    let path = out_file("contract.html");
    let out = Command::new(env!("CARGO_BIN_EXE_ctx"))
        .args(["explain", "examples/pipelines/compaction_loop.yaml", "--html"])
        .arg(&path)
        .current_dir(root())
        .output()
        .expect("the ctx binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&path).expect("the page was written");
    let steps = sections(&html);
    assert!(!steps.is_empty());
    for (worst, window, _, all) in steps {
        // The worst case's terms, then the headroom: the whole window.
        assert_eq!(all.iter().sum::<usize>(), window);
        assert!(worst <= window);
    }
}
