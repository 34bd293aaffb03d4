//! The floors of every crate, held: no file module of a crate may import from a module on a higher
//! floor, and no file modules may import each other in a circle, except the circles listed below,
//! each with its reason. The list can only shrink: a listed circle that changed (smaller, gone,
//! or grown) fails too, with the entry to write instead.
//!
//! "Import" means any path that names something of another file of the same crate: a `use`, a
//! qualified path in code (`crate::codes::Code::ModelFile`), a child module's `super::` —
//! followed through re-exports to the file that defines the item, so a `mod.rs` that only lists
//! names is no floor of its own. `#[cfg(test)]` items, comments and strings are not read.
//! ARCHITECTURE.md ("Floors") explains each crate's list, and its table is checked against `FLOORS`.

#[path = "module_floors/scan.rs"]
mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use scan::{Crate, ModPath, name};

/// Each crate's floors, bottom first: a module on floor `n` imports only from floors `0..=n`.
/// A file belongs to the floor of the longest prefix that names it (`pipeline::yaml` before
/// `pipeline`); every file must have one, so a new top-level module is placed on purpose.
const FLOORS: &[(&str, &[&[&str]])] = &[
    (
        "ctx-tokens",
        &[
            // Leaves: errors, names, messages, character classes, the filter, the count cache.
            &["error", "names", "chat", "char_classes", "filter", "cache", "gguf"],
            // Reading text: the pre-tokenizer scanners, the encodings and model table, templates.
            &["pretokenize", "encoding", "jinja"],
            // The OpenAI vocabularies' bytes, and counting by pieces over any vocabulary, on one
            // thread or several.
            &["token_bytes", "pieces", "parallel"],
            // The merge, on its rank index of the bytes.
            &["merge"],
            // The vocabularies: the OpenAI encodings over the merge, model files' BPE models.
            &["openai_vocab", "model_bpe"],
            // Backends over the merge.
            &["backend", "hf", "incremental"],
            // The chat formats as values: what a counter frames requests with.
            &["format", "anthropic", "template"],
            // The counter, and the growing text it keeps a count of.
            &["counter", "counted_text"],
            // Counting requests in each chat format, with the counter.
            &["format_counts", "anthropic_counts", "template_counts", "jinja_counts", "reasoning"],
            // Model files, which build counters.
            &["model_files"],
            &["lib"],
        ],
    ),
    (
        "ctx-spec",
        &[
            // Leaves: codes, names, values, the re-exported counter.
            &["codes", "lang", "params", "state", "validation", "tokens", "chat"],
            // The vocabulary: a definition as plain values, its schema, transitions and values.
            &[
                "pipeline::definition",
                "pipeline::schema",
                "pipeline::slot",
                "pipeline::transition",
                "pipeline::values",
                "engine::declaration",
                "budget::config",
            ],
            // Area rules.
            &[
                "engine",
                "turn",
                "config",
                "budget",
                "pipeline::graph",
                "pipeline::run_bound",
                "pipeline::suggest",
                "pipeline::context_flow",
            ],
            &["contract"],
            // Whole-pipeline checks.
            &["pipeline"],
            // Front ends.
            &["pipeline::yaml", "pipeline::decode", "lib"],
        ],
    ),
    (
        "ctx-runtime",
        &[
            // Helpers: the counter, lexers and scanners several areas use; the dyn-twin macro.
            &[
                "tokens",
                "dyn_twin",
                "compact::csharp",
                "compact::razor",
                "compact::emit",
                "retrieve::chunk",
                "retrieve::tokenize",
            ],
            // The model trait and history; classification.
            &["llm", "history", "classify"],
            // Compaction, negotiation; retrieval's error and its index (no pipeline in it).
            &["compact", "negotiate", "retrieve::error", "retrieve::index"],
            // Budget actions, turns, the context engine.
            &["budget", "turn", "engine"],
            // What a model step reports and the offline model.
            &["llm::offline", "report::anatomy", "report::trace", "report::cost"],
            // The pipeline's errors, what a backend returns (`BoxError`, `StepFuture`), the spend
            // caps the errors name; MCP's error.
            &["pipeline::error", "pipeline::spend", "mcp::error"],
            // The crate's error, which wraps every area's.
            &["error"],
            // What a run plugs in (`StepEnv`, the backend traits, tools, token sinks) and the
            // loaded pipeline it runs.
            &[
                "pipeline::env",
                "pipeline::tools",
                "pipeline::stream",
                "pipeline::load",
                "pipeline::loaded",
                "pipeline::inputs",
                "pipeline::mcp_listing",
            ],
            // The step actions and their reports; retrieval's adapters to the environment's traits.
            &["pipeline::steps", "retrieve::pipeline", "retrieve::rig"],
            // One step.
            &["pipeline::driver"],
            // Whole runs: to the end, typed, as a conversation, as a trace; the area lists.
            &["pipeline", "retrieve"],
            // What runs pipelines: reports of runs, MCP tools, the local model, durable runs.
            &["report", "mcp", "llm::llama_cpp", "durable"],
            &["lib"],
        ],
    ),
    (
        "ctx-macros",
        &[
            &["spans", "symbol"],
            &["ctxt", "companion::symbol"],
            &["ast", "krate", "located", "companion::header", "companion::shared"],
            &["fields"],
            &["companion"],
            &["lower"],
            &["valid", "backends", "defcode", "counts", "file"],
            &["expand"],
            &["lib"],
        ],
    ),
    ("ctx-cli", &[&["io", "render", "runnable", "models", "mcp", "schema"], &["check", "explain", "run"], &["lib"]]),
    (
        ".",
        &[
            // One file a module of the API, each listing its names from the runtime.
            &[
                "budget",
                "chat",
                "codes",
                "compact",
                "config",
                "contract",
                "definition",
                "durable",
                "engine",
                "history",
                "llm",
                "mcp",
                "negotiate",
                "pipeline",
                "report",
                "retrieve",
                "state",
                "tokens",
                "turn",
            ],
            &["lib"],
        ],
    ),
    ("ctx-tests", &[&["lib"]]),
];

/// The circles left, each exactly as the scan finds it, with why it is left. Imports between two
/// files of one listed circle are covered by it, upward or not. Issue 38 broke every circle the
/// scan found; a new one fails the test, and is broken, or listed here with the reason it must stay.
const KNOWN_CIRCLES: &[(&str, &[&str], &str)] = &[];

/// The workspace root (this test belongs to the facade, whose manifest is there).
fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The floor of `module` in `floors`, by the longest prefix that names it.
fn floor_of(floors: &[&[&str]], module: &ModPath) -> Option<usize> {
    let name = name(module);
    let mut best: Option<(usize, usize)> = None;
    for (floor, prefixes) in floors.iter().enumerate() {
        for prefix in prefixes.iter() {
            let matches = name == *prefix || name.starts_with(&format!("{prefix}::"));
            if matches && best.is_none_or(|(_, len)| prefix.len() > len) {
                best = Some((floor, prefix.len()));
            }
        }
    }
    best.map(|(floor, _)| floor)
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn circles(krate: &Crate) -> Vec<BTreeSet<ModPath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        found: Vec<BTreeSet<ModPath>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a ModPath) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.insert(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges: &krate.edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for module in krate.modules() {
        if !state.index.contains_key(module) {
            visit(&mut state, module);
        }
    }
    state.found
}

/// Every problem of crate `dir` against its floors and known circles, one message each.
fn problems(dir: &str, floors: &[&[&str]], known: &[(&[&str], &str)], krate: &Crate) -> Vec<String> {
    let mut problems = Vec::new();
    let known_sets: Vec<BTreeSet<String>> =
        known.iter().map(|(files, _)| files.iter().map(|f| (*f).to_owned()).collect()).collect();
    let in_known =
        |a: &ModPath, b: &ModPath| known_sets.iter().any(|set| set.contains(&name(a)) && set.contains(&name(b)));
    for module in krate.modules() {
        if floor_of(floors, module).is_none() {
            problems.push(format!("{dir}: `{}` is on no floor; add it to FLOORS", name(module)));
        }
    }
    for (from, targets) in &krate.edges {
        for to in targets {
            if let (Some(a), Some(b)) = (floor_of(floors, from), floor_of(floors, to))
                && b > a
                && !in_known(from, to)
            {
                problems.push(format!(
                    "{dir}: `{}` (floor {a}) imports from `{}` (floor {b}), a higher floor",
                    name(from),
                    name(to)
                ));
            }
        }
    }
    let found: Vec<BTreeSet<String>> = circles(krate).iter().map(|c| c.iter().map(|m| name(m)).collect()).collect();
    for circle in &found {
        if !known_sets.contains(circle) {
            let edges: Vec<String> = krate
                .edges
                .iter()
                .filter(|(from, _)| circle.contains(&name(from)))
                .flat_map(|(from, to)| {
                    to.iter()
                        .filter(|t| circle.contains(&name(t)))
                        .map(move |t| format!("{} → {}", name(from), name(t)))
                })
                .collect();
            problems.push(format!(
                "{dir}: a circle not in KNOWN_CIRCLES: {circle:?}\n    imports: {}\n    break it, or (with a \
                 reason) list it as (\"{dir}\", &{circle:?}, \"…\") in place of the entry it changed",
                edges.join(", ")
            ));
        }
    }
    for set in &known_sets {
        if !found.contains(set) {
            problems
                .push(format!("{dir}: the known circle {set:?} is no longer there as listed: update KNOWN_CIRCLES"));
        }
    }
    problems
}

#[test]
fn every_crate_keeps_its_floors_and_no_new_circle() {
    let mut all = Vec::new();
    for (dir, floors) in FLOORS {
        let krate = Crate::read(&root().join(dir).join("src"));
        let known: Vec<(&[&str], &str)> =
            KNOWN_CIRCLES.iter().filter(|(d, _, _)| d == dir).map(|(_, files, why)| (*files, *why)).collect();
        all.extend(problems(dir, floors, &known, &krate));
    }
    for (dir, _, _) in KNOWN_CIRCLES {
        assert!(FLOORS.iter().any(|(d, _)| d == dir), "KNOWN_CIRCLES names `{dir}`, which FLOORS does not list");
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}

#[test]
fn every_library_of_the_workspace_is_checked() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("the workspace manifest");
    let members = manifest.lines().find_map(|l| l.strip_prefix("members = ")).expect("a one-line `members` list");
    for member in members.trim_matches(|c| c == '[' || c == ']').split(',') {
        let member = member.trim().trim_matches('"');
        if !member.is_empty() && member != "ui-tests" {
            assert!(FLOORS.iter().any(|(d, _)| *d == member), "{member} has no floors in FLOORS");
        }
    }
}

/// The backticked names of `text`, in order (`` `a`, `b::c` `` → `a`, `b::c`).
fn backticked(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The floors ARCHITECTURE.md's "Floors" table gives each crate: a row per crate, its directory
/// the first backticked name of the first cell, its floors the second cell cut at `→`, each floor
/// the backticked names in it (the words around them describe it and are not read).
fn documented_floors(markdown: &str) -> BTreeMap<String, Vec<BTreeSet<String>>> {
    let section = markdown.split("\n## Floors\n").nth(1).expect("ARCHITECTURE.md has a `## Floors` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut rows = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').collect();
        let (Some(first), Some(floors)) = (cells.first(), cells.get(1)) else { continue };
        let Some(dir) = backticked(first).into_iter().next() else { continue };
        let floors: Vec<BTreeSet<String>> =
            floors.split('→').map(|floor| backticked(floor).into_iter().collect()).collect();
        assert!(rows.insert(dir.clone(), floors).is_none(), "ARCHITECTURE.md lists the floors of `{dir}` twice");
    }
    rows
}

#[test]
fn architecture_md_names_every_floor_as_the_code_has_it() {
    let markdown = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let documented = documented_floors(&markdown);
    let mut problems = Vec::new();
    for (dir, floors) in FLOORS {
        let code: Vec<BTreeSet<String>> =
            floors.iter().map(|floor| floor.iter().map(|m| (*m).to_owned()).collect()).collect();
        match documented.get(*dir) {
            None => {
                problems.push(format!("`{dir}` has no row in ARCHITECTURE.md's Floors table; its floors: {code:?}"))
            }
            Some(written) if *written != code => {
                problems.push(format!("`{dir}`: ARCHITECTURE.md says {written:?}\n    FLOORS says {code:?}"));
            }
            Some(_) => {}
        }
    }
    for dir in documented.keys() {
        if !FLOORS.iter().any(|(d, _)| *d == dir.as_str()) {
            problems.push(format!("ARCHITECTURE.md gives floors to `{dir}`, which FLOORS does not list"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_floors_table_is_read_floor_by_floor() {
    let markdown = "# A\n## Floors\n| crate | floors |\n|---|---|\n\
                    | `demo` (why) | leaves: `a`, `b::c` → `lib` |\n## Next\n| `other` | `x` |\n";
    let rows = documented_floors(markdown);
    let floors: Vec<BTreeSet<String>> = vec![["a", "b::c"].map(String::from).into(), ["lib"].map(String::from).into()];
    assert_eq!(rows.get("demo"), Some(&floors));
    assert!(!rows.contains_key("other"), "a table after the section is not read: {rows:?}");
}

/// Writes `files` (path, text) under a temporary `src/` and scans it.
fn scan_files(files: &[(&str, &str)]) -> Crate {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (path, text) in files {
        let path = dir.path().join("src").join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("the directory");
        std::fs::write(path, text).expect("the file");
    }
    Crate::read(&dir.path().join("src"))
}

fn named_edges(krate: &Crate) -> BTreeSet<(String, String)> {
    krate.edges.iter().flat_map(|(a, to)| to.iter().map(move |b| (name(a), name(b)))).collect()
}

#[test]
fn imports_are_followed_through_re_exports_and_tests_are_not_read() {
    let krate = scan_files(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\npub use b::{Thing as Renamed, helper};\n"),
        (
            "a.rs",
            "use crate::Renamed;\n// use crate::c::Gone;\nfn f() { let _ = \"crate::c::X\"; super::helper(); }\n#[cfg(test)]\nmod tests { use crate::c::Y; }\n",
        ),
        ("b.rs", "pub struct Thing;\npub fn helper() {}\n"),
        ("c.rs", "pub struct Y;\nfn g() { crate::setters!(Y); }\n"),
    ]);
    let edges = named_edges(&krate);
    assert!(edges.contains(&("a".into(), "b".into())), "{edges:?}");
    assert!(!edges.iter().any(|(_, to)| to == "c"), "a comment, a string, a test or a macro is no import: {edges:?}");
    assert!(edges.contains(&("lib".into(), "b".into())), "{edges:?}");
}

#[test]
fn a_circle_and_an_upward_import_are_found() {
    let krate = scan_files(&[
        ("lib.rs", "mod low;\nmod high;\nmod nested;\n"),
        ("low.rs", "use crate::high::Up;\npub struct Down;\n"),
        ("high.rs", "pub struct Up;\n"),
        ("nested/mod.rs", "mod x;\n#[path = \"why.rs\"]\nmod y;\n"),
        ("nested/x.rs", "pub struct X(super::y::Y);\n"),
        ("nested/why.rs", "pub struct Y(Box<super::x::X>);\n"),
    ]);
    let floors: &[&[&str]] = &[&["low", "nested"], &["high"], &["lib"]];
    let found = problems("demo", floors, &[], &krate);
    assert!(found.iter().any(|p| p.contains("`low` (floor 0) imports from `high` (floor 1)")), "{found:?}");
    assert!(found.iter().any(|p| p.contains("a circle not in KNOWN_CIRCLES") && p.contains("nested::x")), "{found:?}");
    // Listed, the circle is accepted; listed but gone, it must be removed.
    let known: &[(&[&str], &str)] = &[(&["nested::x", "nested::y"], "demo"), (&["low", "lib"], "gone")];
    let found = problems("demo", floors, known, &krate);
    assert!(!found.iter().any(|p| p.contains("a circle not in")), "{found:?}");
    assert!(found.iter().any(|p| p.contains("no longer there")), "{found:?}");
}
