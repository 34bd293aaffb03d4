//! The run report of the README's example run (`cargo run --example rag_pipeline -- "How is the
//! invoice total computed?"`, offline), rendered by headless Chromium (Debian's `chromium`,
//! `scripts/chromium.sh`): a screenshot is saved beside the page, and the DOM Chromium rendered
//! is read back to check that every request's parts add up to its exact count, the window's parts
//! to the window, that no bar passes its width and no term of the contract was sent larger than
//! its worst case. The layout is checked from the screenshot's pixels: each part's share of a
//! painted bar is its share of the window. (Headless Chromium prints the DOM, not its geometry,
//! and the page has no script to measure it; the pixels are what was laid out.)
//!
//! The page itself is checked without a browser too. Outside CI, without Chromium the browser
//! half is skipped with a printed reason; under `CI=true` it must run (`.ci/run` provisions it).
//!
//! The README's screenshot, `docs/img/run-report.png`, is this test's, rewritten when asked:
//!
//! ```text
//! CTX_REPORT_SCREENSHOT=docs/img/run-report.png cargo test -p ctx-tests --test report_chromium
//! ```
//!
//! (a path relative to the workspace): the page of the same run, priced at the example's own
//! prices (each request at its model's), in a window 1200 by `README_SCREENSHOT_HEIGHT` pixels,
//! cut to the model requests: the first request's bar, parts with their prices, counts, cost and
//! worst case.

#[path = "../../examples/rag_pipeline/mod.rs"]
#[allow(dead_code, reason = "this test runs the demo's pipeline only, not its trace or its CLI")]
mod rag;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use ctx::PipelineState;
use ctx::llm::offline::OfflineModel;
use ctx::pipeline::LoadOptions;
use ctx::report::{ChangeKind, RunReport};

use rag::{Demo, SAMPLE_QUESTION, codebase_dir};

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The README's run, offline, and its report.
async fn readme_run() -> RunReport {
    let demo = Demo::new(codebase_dir(), LoadOptions::new()).expect("the sample code base loads");
    let model = OfflineModel::default();
    let env = demo.env(&model);
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
            let terms =
                s.split("<tr class=\"term\"").skip(1).map(|r| (attr(r, "data-worst"), attr(r, "data-sent"))).collect();
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
        assert_eq!(d.terms.len(), 9, "{d:?}");
        assert!(d.terms.iter().all(|(worst, sent)| sent <= worst), "a term sent over its worst case: {d:?}");
    }
}

/// The height of the window for the README's screenshot: down to the first request's worst-case
/// table.
const README_SCREENSHOT_HEIGHT: &str = "2490";

/// The pixels the README's screenshot keeps above the first bar: the model requests' heading,
/// the legend and the request's title.
const README_ABOVE_BAR: usize = 125;

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

#[tokio::test]
async fn the_readme_run_renders_in_chromium_with_exact_parts() {
    let report = readme_run().await;
    assert!(report.requests.len() >= 2, "the run summarises, then answers: {:?}", report.steps);
    // Priced at the example's own prices, each request at its model's.
    assert!(report.requests.iter().all(|r| r.cost.is_some()), "every request is priced");
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
    let _ = writeln!(std::io::stderr(), "screenshot: {}", png.display());

    // The layout Chromium rendered, read from its pixels: each part's share of a painted bar is
    // its share of the window, within the pixels its rectangles' edges and white strokes blend
    // (two a rectangle, and one).
    let pixels = decode_png(&image);
    let bars = painted_bars(&pixels);
    assert!(!bars.is_empty(), "the first request's bar is on the screenshot");
    let _ = writeln!(std::io::stderr(), "bars measured on the screenshot: {bars:?}");
    for (bar, request) in bars.iter().zip(&report.requests) {
        let window = request.anatomy.window_parts();
        for &(kind, painted) in &bar.counts {
            let parts: Vec<_> = window.iter().filter(|p| p.kind.name() == kind && p.tokens > 0).collect();
            let tokens: usize = parts.iter().map(|p| p.tokens).sum();
            let expected = (tokens * bar.width) as f64 / request.anatomy.context_window as f64;
            let slack = 2.0 * parts.len() as f64 + 1.0;
            assert!(
                (painted as f64 - expected).abs() <= slack,
                "{kind}: {painted} px painted, {expected:.1} expected of {} px for {tokens} of {} tokens",
                bar.width,
                request.anatomy.context_window
            );
        }
    }

    if let Some(dest) = std::env::var_os("CTX_REPORT_SCREENSHOT") {
        // The README's: from the model requests' heading (above the first bar: the heading, the
        // legend and the request's title) to the first request's worst-case table.
        let shot = out_dir().join("rag_pipeline_readme.png");
        let out = Command::new(&script)
            .arg("screenshot")
            .arg(&page)
            .arg(&shot)
            .env("CTX_CHROMIUM_HEIGHT", README_SCREENSHOT_HEIGHT)
            .output()
            .expect("chromium.sh runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let pixels = decode_png(&std::fs::read(&shot).expect("the screenshot was written"));
        let top = painted_bars(&pixels).first().expect("the first bar").top.saturating_sub(README_ABOVE_BAR);
        let dest = root().join(dest);
        std::fs::write(&dest, encode_png(&pixels, top)).expect("the README's screenshot is written");
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

/// A PNG as Chromium writes it (8-bit RGB or RGBA, not interlaced), decoded to rows of RGB.
struct Pixels {
    width: usize,
    rows: Vec<Vec<[u8; 3]>>,
}

fn decode_png(png: &[u8]) -> Pixels {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    let (mut at, mut header, mut data) = (8, None, Vec::new());
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().expect("4 bytes")) as usize;
        let (kind, body) = (&png[at + 4..at + 8], &png[at + 8..at + 8 + len]);
        match kind {
            b"IHDR" => header = Some(body.to_vec()),
            b"IDAT" => data.extend_from_slice(body),
            _ => {}
        }
        at += 12 + len;
    }
    let header = header.expect("an IHDR chunk");
    let width = u32::from_be_bytes(header[0..4].try_into().expect("4 bytes")) as usize;
    let height = u32::from_be_bytes(header[4..8].try_into().expect("4 bytes")) as usize;
    let channels = match (header[8], header[9], header[12]) {
        (8, 2, 0) => 3,
        (8, 6, 0) => 4,
        other => panic!("bit depth, colour type, interlace {other:?}: not what Chromium writes"),
    };
    let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&data).expect("the image data inflates");
    let stride = width * channels;
    assert_eq!(raw.len(), height * (stride + 1), "one filter byte and {stride} bytes a row");
    let mut previous = vec![0u8; stride];
    let mut rows = Vec::with_capacity(height);
    for line in raw.chunks(stride + 1) {
        let (filter, line) = (line[0], &line[1..]);
        let mut row = vec![0u8; stride];
        for i in 0..stride {
            let left = if i >= channels { row[i - channels] } else { 0 };
            let up = previous[i];
            let upper_left = if i >= channels { previous[i - channels] } else { 0 };
            let predicted = match filter {
                0 => 0,
                1 => left,
                2 => up,
                3 => ((u16::from(left) + u16::from(up)) / 2) as u8,
                4 => {
                    let p = i16::from(left) + i16::from(up) - i16::from(upper_left);
                    let (pa, pb, pc) =
                        ((p - i16::from(left)).abs(), (p - i16::from(up)).abs(), (p - i16::from(upper_left)).abs());
                    if pa <= pb && pa <= pc {
                        left
                    } else if pb <= pc {
                        up
                    } else {
                        upper_left
                    }
                }
                f => panic!("filter type {f}"),
            };
            row[i] = line[i].wrapping_add(predicted);
        }
        rows.push(row.chunks(channels).map(|p| [p[0], p[1], p[2]]).collect());
        previous = row;
    }
    Pixels { width, rows }
}

/// The colours the page paints the parts of a bar with (`report::html`), by kind.
const COLOURS: &[(&str, [u8; 3])] = &[
    ("system", [0x6c, 0x5c, 0xe7]),
    ("context", [0x00, 0xb8, 0x94]),
    ("question", [0xf9, 0xca, 0x24]),
    ("chat_format", [0x63, 0x6e, 0x72]),
    ("output", [0xd6, 0x30, 0x31]),
    ("margin", [0xfa, 0xb1, 0xa0]),
    ("free", [0xdf, 0xe6, 0xe9]),
];

/// A bar as painted: its first row, the pixels of each kind's colour along its middle row, and
/// its width in pixels.
#[derive(Debug)]
struct Bar {
    top: usize,
    counts: Vec<(&'static str, usize)>,
    width: usize,
}

/// The bars Chromium painted, top to bottom: for each, the pixels of each kind's colour along
/// its middle row and the bar's width in pixels (from its first painted pixel to its last). A
/// bar is a run of rows that start with the system prompt's colour (within the pixels its
/// edge's white stroke blends) and hold a stretch of the free space's, longer than a swatch.
fn painted_bars(pixels: &Pixels) -> Vec<Bar> {
    let white = [0xff, 0xff, 0xff];
    let is_bar = |row: &Vec<[u8; 3]>| {
        let first = row.iter().position(|p| *p != white);
        let system = row.iter().position(|p| *p == COLOURS[0].1);
        let free = row.iter().filter(|p| **p == COLOURS[6].1).count();
        matches!((first, system), (Some(f), Some(s)) if s <= f + 3) && free >= 40
    };
    let mut bars = Vec::new();
    let mut y = 0;
    while y < pixels.rows.len() {
        if !is_bar(&pixels.rows[y]) {
            y += 1;
            continue;
        }
        let top = y;
        while y < pixels.rows.len() && is_bar(&pixels.rows[y]) {
            y += 1;
        }
        let row = &pixels.rows[(top + y) / 2];
        let first = row.iter().position(|p| *p != white).expect("a painted pixel");
        let last = row.iter().rposition(|p| *p != white).expect("a painted pixel");
        let counts = COLOURS.iter().map(|(kind, c)| (*kind, row.iter().filter(|p| *p == c).count())).collect();
        bars.push(Bar { top, counts, width: last - first + 1 });
    }
    assert!(pixels.width > 0);
    bars
}

/// `pixels`' rows from `top` on, as a PNG (8-bit RGB, every row unfiltered).
fn encode_png(pixels: &Pixels, top: usize) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }
    fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], body: &[u8]) {
        png.extend_from_slice(&u32::try_from(body.len()).expect("a small chunk").to_be_bytes());
        let start = png.len();
        png.extend_from_slice(kind);
        png.extend_from_slice(body);
        let crc = crc32(&png[start..]);
        png.extend_from_slice(&crc.to_be_bytes());
    }
    let rows = &pixels.rows[top..];
    let mut raw = Vec::with_capacity(rows.len() * (pixels.width * 3 + 1));
    for row in rows {
        raw.push(0);
        raw.extend(row.iter().flatten());
    }
    let mut header = Vec::new();
    header.extend_from_slice(&u32::try_from(pixels.width).expect("a width").to_be_bytes());
    header.extend_from_slice(&u32::try_from(rows.len()).expect("a height").to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut png, b"IHDR", &header);
    chunk(&mut png, b"IDAT", &miniz_oxide::deflate::compress_to_vec_zlib(&raw, 9));
    chunk(&mut png, b"IEND", &[]);
    png
}
