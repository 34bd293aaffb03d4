//! The run report of the README's example run (`cargo run --example rag_pipeline -- "How is the
//! invoice total computed?"`, offline), rendered by headless Chromium (Debian's `chromium`,
//! `scripts/chromium.sh`): a screenshot is saved beside the page, and the DOM Chromium rendered
//! is read back to check that every request's parts add up to its exact count, the window's parts
//! to the window, and that no bar passes its width.
//!
//! The page itself is checked without a browser too. Outside CI, without Chromium the browser
//! half is skipped with a printed reason; under `CI=true` it must run (`.ci/run` provisions it).
//!
//! The README's screenshot, `docs/img/run-report.png`, is this test's, rewritten when asked:
//!
//! ```text
//! CTX_REPORT_SCREENSHOT=docs/img/run-report.png cargo test --test report_chromium
//! ```
//!
//! (a path relative to the workspace; the window is the top of the page, 1200 by
//! `README_SCREENSHOT_HEIGHT` pixels: the steps and the first request's bar, parts, counts and
//! worst case).

#[path = "../examples/rag_pipeline/mod.rs"]
#[allow(dead_code, reason = "this test runs the demo's pipeline only, not its trace or its CLI")]
mod rag;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use ctx::PipelineState;
use ctx::llm::offline::OfflineModel;
use ctx::pipeline::LoadOptions;
use ctx::report::{ChangeKind, RunReport};

use rag::pipeline::{CodebaseQaEnv, NextBatch};
use rag::{CODEBASE_DIR, Demo, SAMPLE_QUESTION};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The README's run, offline, and its report.
async fn readme_run() -> RunReport {
    let demo = Demo::new(CODEBASE_DIR, LoadOptions::new()).expect("the sample code base loads");
    let model = OfflineModel::default();
    let env = CodebaseQaEnv { search: demo.index(), store: demo.index(), model: &model, custom: &NextBatch };
    let qa = demo.pipeline();
    let (_, reports) = qa.run(PipelineState::new(SAMPLE_QUESTION), &env).await.expect("the example runs");
    qa.pipeline().report(&reports)
}

/// One request (or worst case) read back from a page: its exact count, its window, the tokens of
/// its prompt rows and of all its rows, the widths of its bar's rectangles, and the worst case
/// and sent count of each term of its worst-case table.
#[derive(Debug)]
struct Drawn {
    exact: usize,
    window: usize,
    prompt: Vec<usize>,
    all: Vec<usize>,
    bar: Vec<f64>,
    terms: Vec<(usize, usize)>,
}

fn attr<T: std::str::FromStr>(s: &str, name: &str) -> T {
    let key = format!("{name}=\"");
    let at = s.find(&key).unwrap_or_else(|| panic!("{name} in {s}")) + key.len();
    let end = s[at..].find('"').expect("a closing quote") + at;
    s[at..end].parse().ok().unwrap_or_else(|| panic!("{name}={}", &s[at..end]))
}

fn read_page(html: &str) -> Vec<Drawn> {
    html.split("<section class=\"request")
        .skip(1)
        .map(|s| {
            let s = &s[..s.find("</section>").expect("the section closes")];
            let rows = |class: &str| -> Vec<usize> {
                s.split(&format!("<tr class=\"part {class}")).skip(1).map(|r| attr(r, "data-tokens")).collect()
            };
            let prompt = rows("prompt");
            let mut all = prompt.clone();
            all.extend(rows("window"));
            let bar = s.split("<rect ").skip(1).map(|r| attr::<f64>(r, "width")).collect();
            let terms = s
                .split("<tr class=\"term\"")
                .skip(1)
                .map(|r| (attr(r, "data-worst"), attr(r, "data-sent")))
                .collect();
            Drawn { exact: attr(s, "data-exact"), window: attr(s, "data-window"), prompt, all, bar, terms }
        })
        .collect()
}

fn check_page(html: &str, expected: &RunReport) {
    let drawn = read_page(html);
    assert_eq!(drawn.len(), expected.requests.len(), "one section per request");
    for (d, r) in drawn.iter().zip(&expected.requests) {
        assert_eq!(d.exact, r.anatomy.prompt_tokens, "the exact count ctx computed");
        assert_eq!(d.prompt.iter().sum::<usize>(), d.exact, "{d:?}");
        assert_eq!(d.all.iter().sum::<usize>(), d.window, "{d:?}");
        assert!(d.exact + r.anatomy.max_output_tokens <= d.window, "{d:?}");
        let width: f64 = d.bar.iter().sum();
        assert!((width - 960.0).abs() < 1e-6, "the bar spans the window exactly: {width}");
        // Every term of the contract is shown beside what was sent, and none was sent larger.
        assert_eq!(d.terms.len(), 8, "{d:?}");
        assert!(d.terms.iter().all(|(worst, sent)| sent <= worst), "a term sent over its worst case: {d:?}");
    }
}

/// The height of the README's screenshot: down to the first request's worst-case table.
const README_SCREENSHOT_HEIGHT: &str = "2200";

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

#[tokio::test]
async fn the_readme_run_renders_in_chromium_with_exact_parts() {
    let report = readme_run().await;
    assert!(report.requests.len() >= 2, "the run summarises, then answers: {:?}", report.steps);
    // The answer's request comes after compaction: the report says which rule did it.
    let changes: Vec<_> = report.requests.iter().flat_map(|r| &r.changes).collect();
    assert!(changes.iter().any(|c| c.kind == ChangeKind::Compacted && c.by.contains("rule")), "{changes:#?}");
    // The batch that did not fit, the evidence cut to its budget, the context summarised.
    for kind in [ChangeKind::Dropped, ChangeKind::Trimmed, ChangeKind::Summarised] {
        assert!(changes.iter().any(|c| c.kind == kind), "{kind:?} in {changes:#?}");
    }
    let summarised = changes.iter().find(|c| c.kind == ChangeKind::Summarised).expect("a summary");
    assert_eq!(summarised.by, "set_context_from_summary");
    let html = report.to_html();
    check_page(&html, &report);
    let page = out_dir().join("rag_pipeline.html");
    std::fs::write(&page, &html).expect("the page is written");

    let script = root().join("scripts/chromium.sh");
    let installed = Command::new(&script).arg("installed").status().is_ok_and(|s| s.success());
    if !installed {
        assert!(
            std::env::var("CI").ok().as_deref() != Some("true"),
            "chromium is not installed under CI: .ci/run must run scripts/chromium.sh provision"
        );
        let _ = writeln!(
            std::io::stderr(),
            "skipped the Chromium half of the_readme_run_renders_in_chromium_with_exact_parts: chromium is not installed (scripts/chromium.sh provision)"
        );
        return;
    }
    let png = out_dir().join("rag_pipeline.png");
    let _ = std::fs::remove_file(&png);
    let out = Command::new(&script).arg("screenshot").arg(&page).arg(&png).output().expect("chromium.sh runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let image = std::fs::read(&png).expect("the screenshot was written");
    assert!(image.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    let _ = writeln!(std::io::stderr(), "screenshot: {}", png.display());
    if let Some(dest) = std::env::var_os("CTX_REPORT_SCREENSHOT") {
        let dest = root().join(dest);
        let out = Command::new(&script)
            .arg("screenshot")
            .arg(&page)
            .arg(&dest)
            .env("CTX_CHROMIUM_HEIGHT", README_SCREENSHOT_HEIGHT)
            .output()
            .expect("chromium.sh runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let _ = writeln!(std::io::stderr(), "the README's screenshot: {}", dest.display());
    }

    let out = Command::new(&script).arg("dump-dom").arg(&page).output().expect("chromium.sh runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dom = String::from_utf8(out.stdout).expect("the DOM is UTF-8");
    // What Chromium parsed: the same requests, the same numbers, nothing executable.
    assert!(dom.contains("<svg class=\"bar\""), "{dom}");
    assert!(!dom.contains("<script"));
    check_page(&dom, &report);
}
