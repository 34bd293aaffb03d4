//! Keeps the examples, the README and the guide (`docs/`) true: every example is run by `cargo
//! test`, the README's commands are the two a fresh clone needs and the second is what CI runs,
//! the README's code is the crate documentation's (which compiles it), and the compile errors
//! shown are the ones the trybuild cases record. (The worked example's pipeline and diagram are
//! checked against the example in `tests/rag_pipeline.rs`.)

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn read(relative: &str) -> String {
    let path = root().join(relative);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The fenced blocks of `markdown` as (info string, body), in order.
fn fenced_blocks(markdown: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in markdown.lines() {
        match open.take() {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    open = Some((info.trim().to_owned(), Vec::new()));
                }
            }
            Some((info, body)) if line.trim_end() == "```" => blocks.push((info, body.join("\n"))),
            Some((info, mut body)) => {
                body.push(line);
                open = Some((info, body));
            }
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    blocks
}

/// The code of a Rust block as shown: rustdoc's hidden lines (`# …`) left out.
fn visible(block: &str) -> String {
    let shown: Vec<&str> = block.lines().filter(|l| !(l.trim_start().starts_with("# ") || l.trim() == "#")).collect();
    shown.join("\n")
}

/// The text of section `heading` (a `## ` line) up to the next `## ` heading.
fn section<'a>(markdown: &'a str, heading: &str) -> &'a str {
    let start = markdown.find(&format!("\n## {heading}\n")).unwrap_or_else(|| panic!("no section `{heading}`"));
    let rest = &markdown[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    &rest[..end]
}

/// The example targets: `examples/<name>.rs` and `examples/<name>/main.rs`.
fn example_names() -> Vec<String> {
    let mut names = Vec::new();
    for entry in fs::read_dir(root().join("examples")).expect("examples/ exists") {
        let path: PathBuf = entry.expect("a directory entry").path();
        let name = path.file_stem().and_then(|s| s.to_str()).expect("a UTF-8 name").to_owned();
        if path.extension().is_some_and(|e| e == "rs") || path.join("main.rs").is_file() {
            names.push(name);
        }
    }
    names.sort();
    names
}

#[test]
fn every_example_is_run_by_cargo_test() {
    let manifest = read("Cargo.toml");
    let names = example_names();
    assert!(names.contains(&"rag_pipeline".to_owned()), "{names:?}");
    for name in names {
        // An `[[example]]` table naming it, with `test = true` before the next table.
        let table = manifest
            .split("[[example]]")
            .skip(1)
            .map(|t| t.split("\n[").next().unwrap_or(t))
            .find(|t| t.lines().any(|l| l.trim() == format!("name = \"{name}\"")));
        let table = table.unwrap_or_else(|| panic!("examples/{name}: no [[example]] entry in Cargo.toml"));
        assert!(
            table.lines().any(|l| l.trim() == "test = true"),
            "examples/{name}: its [[example]] entry lacks `test = true`, so `cargo test` only builds it"
        );
        let source = fs::read_to_string(root().join(format!("examples/{name}.rs")))
            .or_else(|_| fs::read_to_string(root().join(format!("examples/{name}/main.rs"))))
            .expect("the example's source");
        assert!(source.contains("#[test]") || source.contains("#[tokio::test]"), "examples/{name} has no test");
    }
}

#[test]
fn the_readme_commands_are_two_and_the_second_is_what_ci_runs() {
    let readme = read("README.md");
    let quick = section(&readme, "Try it on a sample code base");
    let blocks = fenced_blocks(quick);
    let (info, commands) = blocks.first().expect("a command block");
    assert_eq!(info, "sh");
    let commands: Vec<&str> = commands.lines().collect();
    assert_eq!(
        commands,
        [
            "cargo run --example rag_pipeline -- \"How is the invoice total computed?\"",
            "cargo test --workspace --all-features"
        ]
    );
    assert!(quick.contains("`bash .ci/run`"), "the README says what CI runs");
    let ci = read(".ci/run");
    assert!(ci.lines().any(|l| l.trim().starts_with(commands[1])), ".ci/run does not run `{}`", commands[1]);
    let testing = read("docs/testing.md");
    assert!(testing.contains(commands[1]) && testing.contains("bash .ci/run"), "docs/testing.md gives both commands");
}

#[test]
fn the_readme_code_is_the_crate_documentation_which_compiles_it() {
    let readme = read("README.md");
    let lib = read("src/lib.rs");
    let crate_docs: Vec<&str> =
        lib.lines().filter_map(|l| l.strip_prefix("//!")).map(|l| l.strip_prefix(' ').unwrap_or(l)).collect();
    let crate_docs = crate_docs.join("\n");
    let rust: Vec<String> =
        fenced_blocks(&readme).into_iter().filter(|(info, _)| info.starts_with("rust")).map(|(_, b)| b).collect();
    assert!(!rust.is_empty(), "the README shows a pipeline");
    for block in rust {
        assert!(crate_docs.contains(&block), "README block is not in src/lib.rs's crate docs:\n{block}");
    }
}

#[test]
fn the_gallery_shows_the_recorded_compile_errors() {
    let readme = read("README.md");
    let shown = [
        ("README.md", section(&readme, "The mistake it prevents").to_owned()),
        ("docs/compile-errors.md", read("docs/compile-errors.md")),
    ];
    let mut checked = 0;
    for (file, gallery) in &shown {
        // Each case is named as "(`ui-tests/cases/<name>.rs`):" right before its block.
        for (i, _) in gallery.match_indices("(`ui-tests/cases/") {
            let rest = &gallery[i + 2..];
            let case = &rest[..rest.find('`').expect("a closing backtick")];
            let stem = case.strip_suffix(".rs").expect("a .rs case");
            let (info, shown) = fenced_blocks(rest).into_iter().next().expect("a block after the case name");
            assert_eq!(info, "text");
            let recorded = read(&format!("{stem}.stderr"));
            assert_eq!(shown.trim_end(), recorded.trim_end(), "{file}: block for {case} differs from its .stderr");
            assert!(root().join(case).is_file(), "{case}");
            checked += 1;
        }
    }
    assert!(checked >= 4, "README and docs/compile-errors.md show {checked} recorded cases");
}

#[test]
fn the_agent_chapter_shows_the_examples_own_pipeline_and_tools() {
    let agents = read("docs/agents.md");
    let example = read("examples/docs_support.rs");
    // The chapter's prompt path is written from `docs/`, the example's from `examples/`.
    let rust: Vec<String> = fenced_blocks(&agents)
        .into_iter()
        .filter(|(info, _)| info.starts_with("rust"))
        .map(|(_, b)| visible(&b).replace("\"../examples/prompts/", "\"prompts/"))
        .collect();
    assert!(rust.len() >= 2, "the chapter shows the pipeline and the tools");
    // The pipeline as the example declares it, and its tools implementation.
    for block in &rust[..2] {
        assert!(example.contains(block.as_str()), "docs/agents.md block is not in examples/docs_support.rs:\n{block}");
    }
}

/// The prefixes of an absolute link into this repository, as the READMEs and the guide write them.
const INTO_REPO: [&str; 3] = [
    "https://github.com/ctx-llm/ctx/blob/main/",
    "https://github.com/ctx-llm/ctx/tree/main/",
    "https://raw.githubusercontent.com/ctx-llm/ctx/main/",
];

/// The READMEs crates.io shows with each package (the facade's and every crate's) link with
/// absolute URLs, since a relative link there resolves against nothing, and each link into the
/// repository names a file or directory that exists in it.
#[test]
fn the_readmes_links_work_from_the_packages() {
    let mut checked = 0;
    for readme in
        ["README.md", "ctx-spec/README.md", "ctx-macros/README.md", "ctx-runtime/README.md", "ctx-cli/README.md"]
    {
        let text = read(readme);
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let target = &rest[..rest.find(')').expect("a closing parenthesis")];
            assert!(
                target.starts_with("https://") || target.starts_with('#'),
                "{readme}: the link `{target}` is relative; crates.io cannot follow it"
            );
            if let Some(path) = INTO_REPO.iter().find_map(|prefix| target.strip_prefix(prefix)) {
                let path = path.split('#').next().unwrap_or_default();
                assert!(
                    root().join(path).exists(),
                    "{readme}: `{target}` names `{path}`, which is not in the repository"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} links");
}

/// The facade's user features (`[features]` of the root manifest, but `default` and the internal
/// `__` ones): the README names each, and the guide's *Cargo features* chapter has a row for each.
#[test]
fn the_readme_and_the_features_chapter_name_every_feature() {
    let manifest = read("Cargo.toml");
    let table = manifest.split("\n[features]\n").nth(1).expect("a [features] table");
    let table = table.split("\n[").next().unwrap_or(table);
    let features: Vec<&str> = table
        .lines()
        .filter_map(|l| l.split_once(" = ").map(|(name, _)| name.trim()))
        .filter(|name| !name.starts_with('#') && *name != "default" && !name.starts_with("__"))
        .collect();
    assert!(features.len() >= 10 && features.contains(&"otel"), "{features:?}");
    let readme = read("README.md");
    let chapter = read("docs/features.md");
    for feature in features {
        assert!(readme.contains(&format!("`{feature}`")), "README.md does not name the feature `{feature}`");
        assert!(chapter.contains(&format!("\n| `{feature}` |")), "docs/features.md has no row for `{feature}`");
    }
}

/// The anchor a forge gives a heading: lower case, only letters, digits, `-` and `_` kept,
/// spaces written `-` ("OpenAI's Responses API" → `openais-responses-api`).
fn heading_anchor(heading: &str) -> String {
    let kept: String =
        heading.trim().to_lowercase().chars().filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' ')).collect();
    kept.replace(' ', "-")
}

/// The lines of `markdown` outside its fenced blocks (and not their fences).
fn prose_lines(markdown: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    markdown.lines().filter(move |line| {
        if line.starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The anchors of the headings of `markdown` (headings inside fenced blocks are code).
fn anchors(markdown: &str) -> Vec<String> {
    prose_lines(markdown).filter(|l| l.starts_with('#')).map(|l| heading_anchor(l.trim_start_matches('#'))).collect()
}

/// The guide's chapters (and the READMEs, ARCHITECTURE.md, CHANGELOG.md, BENCHMARKS.md) are read
/// on a forge, where a rustdoc path (`crate::guide::…`) or a relative link resolves to nothing:
/// every link is absolute or an anchor of its own file, every link into the repository names a
/// file that exists, and every anchor names a heading of the file it points into.
#[test]
fn the_guide_links_work_on_a_forge() {
    let mut files: Vec<String> =
        ["README.md", "ARCHITECTURE.md", "CHANGELOG.md", "BENCHMARKS.md", "ctx-tokens/README.md"]
            .map(str::to_owned)
            .to_vec();
    for entry in fs::read_dir(root().join("docs")).expect("docs/") {
        let name = entry.expect("an entry").file_name().into_string().expect("a UTF-8 name");
        if name.ends_with(".md") {
            files.push(format!("docs/{name}"));
        }
    }
    let mut checked = 0;
    let mut broken = Vec::new();
    for file in &files {
        let text = read(file);
        // Links outside fenced blocks.
        let prose: String = prose_lines(&text).flat_map(|line| [line, "\n"]).collect();
        for (i, _) in prose.match_indices("](") {
            let rest = &prose[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.contains(char::is_whitespace) {
                continue;
            }
            checked += 1;
            if let Some(anchor) = target.strip_prefix('#') {
                if !anchors(&text).iter().any(|a| a == anchor) {
                    broken.push(format!("{file}: `{target}`: no such heading"));
                }
            } else if let Some(path) = INTO_REPO.iter().find_map(|prefix| target.strip_prefix(prefix)) {
                let (path, anchor) = path.split_once('#').unwrap_or((path, ""));
                if !root().join(path).exists() {
                    broken.push(format!("{file}: `{target}`: `{path}` is not in the repository"));
                } else if !anchor.is_empty() && !anchors(&read(path)).iter().any(|a| a == anchor) {
                    broken.push(format!("{file}: `{target}`: `{path}` has no such heading"));
                }
            } else if !target.starts_with("https://") {
                broken.push(format!("{file}: `{target}` resolves to nothing on a forge"));
            }
        }
    }
    assert!(checked >= 60, "{checked} links");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert_eq!(heading_anchor(" OpenAI's Responses API"), "openais-responses-api");
    assert_eq!(heading_anchor(" The `pipeline!` DSL"), "the-pipeline-dsl");
}

/// The README is read on a forge and on crates.io as one page: under 200 lines, as axum keeps
/// its own, with the rest in the guide.
#[test]
fn the_readme_stays_under_200_lines() {
    let lines = read("README.md").lines().count();
    assert!(lines < 200, "README.md has {lines} lines; move the detail into docs/");
}
