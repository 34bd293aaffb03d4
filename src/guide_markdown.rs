//! The guide's chapters read as Markdown too (on a forge, in an editor), where rustdoc's hidden
//! lines (`# …` in a Rust block) are shown: every Rust block of every chapter hides at most
//! [`MAX_HIDDEN`] lines. Shared set-up lives in a file of `examples/` that a block brings in with
//! one hidden `#[path]` module, and what a reader needs to write the code (imports, the
//! environment) stays visible.

/// The most hidden lines a block may have: a `#[path]` module, its `use`, and a `main` around
/// the visible code.
const MAX_HIDDEN: usize = 8;

/// Every chapter, by its file name, as `src/lib.rs` includes it.
const CHAPTERS: [(&str, &str); 12] = [
    ("tour.md", include_str!("../docs/tour.md")),
    ("dsl.md", include_str!("../docs/dsl.md")),
    ("agents.md", include_str!("../docs/agents.md")),
    ("mcp.md", include_str!("../docs/mcp.md")),
    ("pipeline-files.md", include_str!("../docs/pipeline-files.md")),
    ("compile-errors.md", include_str!("../docs/compile-errors.md")),
    ("models.md", include_str!("../docs/models.md")),
    ("features.md", include_str!("../docs/features.md")),
    ("durable-runs.md", include_str!("../docs/durable-runs.md")),
    ("testing.md", include_str!("../docs/testing.md")),
    ("reliability.md", include_str!("../docs/reliability.md")),
    ("reports.md", include_str!("../docs/reports.md")),
];

/// A fenced block: the line its fence opens on (from 1), its info string, its lines.
struct Block<'a> {
    line: usize,
    info: &'a str,
    lines: Vec<&'a str>,
}

/// The fenced blocks of a Markdown text (backtick fences, as the chapters write them).
fn blocks(text: &str) -> Vec<Block<'_>> {
    let mut found = Vec::new();
    let mut open: Option<Block<'_>> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => open = Some(Block { line: i + 1, info: info.trim(), lines: Vec::new() }),
            (Some(_), Some(_)) => found.extend(open.take()),
            (Some(block), None) => block.lines.push(line),
            (None, None) => {}
        }
    }
    found
}

/// Whether rustdoc reads the block as Rust: no info string, or `rust` among its words.
fn is_rust(info: &str) -> bool {
    info.is_empty() || info.split(',').any(|word| word.trim() == "rust")
}

/// Whether rustdoc hides the line: `#` alone or followed by a space (`##` is an escaped `#`).
fn is_hidden(line: &str) -> bool {
    let line = line.trim_start();
    line == "#" || line.starts_with("# ")
}

#[test]
fn no_rust_block_of_a_chapter_hides_more_than_a_few_lines() {
    let mut over = Vec::new();
    let mut rust_blocks = 0;
    for (name, text) in CHAPTERS {
        for block in blocks(text).into_iter().filter(|b| is_rust(b.info)) {
            rust_blocks += 1;
            let hidden = block.lines.iter().filter(|l| is_hidden(l)).count();
            if hidden > MAX_HIDDEN {
                over.push(format!("docs/{name}:{}: {hidden} hidden lines", block.line));
            }
        }
    }
    assert!(rust_blocks > 20, "the chapters' Rust blocks were not found ({rust_blocks})");
    assert!(over.is_empty(), "more than {MAX_HIDDEN} hidden lines in a block:\n{}", over.join("\n"));
}

#[test]
fn the_reader_sees_what_rustdoc_hides() {
    let text = "Intro\n\n```rust\n# use a::b;\n## not hidden\n#[derive(Debug)]\nstruct S;\n#\n```\n\n```text\n# a comment\n```\n";
    let found = blocks(text);
    assert_eq!(found.len(), 2);
    assert_eq!((found[0].line, found[0].info, is_rust(found[0].info)), (3, "rust", true));
    let hidden: Vec<&str> = found[0].lines.iter().copied().filter(|l| is_hidden(l)).collect();
    assert_eq!(hidden, ["# use a::b;", "#"]);
    assert!(!is_rust(found[1].info) && is_rust("rust,no_run") && is_rust(""));
}
