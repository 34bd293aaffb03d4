//! `manage_context_budget` on a large batch: 1,000 nodes of the sample code base (about 500K
//! tokens), decision time with cold counts (a fresh count cache and the encoding's piece cache
//! emptied per run) and with a warm cache (the same step retried, as after an `on_over` loop that
//! did not change the batch), under three rule sets. Against, in the same run, the naive exact
//! implementation of the spec's "if adding a node would exceed": re-render and re-count the whole
//! context after every node (on 100 nodes, because it is quadratic).
//!
//! Run: `cargo bench -p ctx-runtime --bench manage_budget -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use ctx_runtime::budget::{ManageBudgetConfig, format_node, manage_context_budget, validate_manage_budget};
use ctx_runtime::classify::{Language, classify};
use ctx_runtime::pipeline::{CompactRuleSpec, ManageBudgetSpec};
use ctx_runtime::state::{NodeText, PipelineState, render_context_blocks};
use ctx_runtime::tokens::{BpeBackend, ChatFormat, CountCache, Encoding, TokenCounter, TokenizerBackend};
use ctx_runtime::validation::FieldPath;

/// SQL and C# files of the sample code base, with their paths.
fn corpus() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/codebase");
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("examples/codebase") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if matches!(path.extension().and_then(|e| e.to_str()), Some("sql" | "cs")) {
                let name = path.strip_prefix(&root).expect("under root").to_string_lossy().into_owned();
                files.push((name, std::fs::read_to_string(&path).expect("sample file")));
            }
        }
    }
    files.sort();
    files
}

/// `n` distinct nodes: each is a sample file (every third one followed by the next file of the
/// same kind, for about 500 tokens a node on average), with a first comment line naming the
/// chunk, so that no two node texts share a cache entry.
fn nodes(n: usize) -> Vec<NodeText> {
    let files = corpus();
    (0..n)
        .map(|i| {
            let (path, text) = &files[i % files.len()];
            let sql = path.ends_with(".sql");
            let k = i % files.len();
            let next =
                files[k + 1..].iter().chain(&files[..]).find(|(p, _)| p.ends_with(".sql") == sql).expect("a pair");
            let marker = if sql { format!("-- chunk {i}\n") } else { format!("// chunk {i}\n") };
            let text = if i % 3 == 0 { format!("{marker}{text}\n{}", next.1) } else { format!("{marker}{text}") };
            NodeText::new(format!("chunk-{i}"), text).with_path(path.as_str())
        })
        .collect()
}

fn config(rules: Vec<(&str, &str, Option<f64>, Option<&str>)>) -> ManageBudgetConfig {
    let compact_code = rules
        .into_iter()
        .map(|(language, policy, threshold, inbox_key)| {
            CompactRuleSpec::new(language, policy).threshold(threshold).inbox_key(inbox_key.map(Into::into))
        })
        .collect();
    let spec = ManageBudgetSpec::new("answer", "summarize")
        .compact_code(compact_code)
        .divide_new_content(Some("<<<New content".into()));
    validate_manage_budget(&spec, &FieldPath::root()).expect("valid")
}

fn fresh_counter() -> TokenCounter {
    // Cold means nothing known: the encoding's process-wide piece cache is emptied as well.
    let backend = BpeBackend::new(Encoding::Cl100kBase);
    backend.piece_cache().clear();
    TokenCounter::with_backend(Arc::new(backend), ChatFormat::openai(), CountCache::DEFAULT_ENTRIES)
}

/// The naive exact check: after each node, render everything and count it from scratch.
fn naive_recount(state: &PipelineState, max: usize, backend: &BpeBackend) -> bool {
    let mut blocks = state.context_blocks.clone();
    blocks.push("<<<New content".to_owned());
    for node in &state.node_texts {
        let language: Language = classify(&node.text, node.source());
        blocks.push(format_node(node, language, false, &node.text));
        if backend.count(&render_context_blocks(&blocks)).expect("count") > max {
            return false;
        }
    }
    true
}

fn bench(c: &mut Criterion) {
    let batch = nodes(1_000);
    let mut state = PipelineState::new("How is the invoice total computed?");
    state.context_blocks = vec!["Summary of the conversation so far: the user asked about invoice totals.".into()];
    state.node_texts = batch;
    let counter = fresh_counter();
    let raw_tokens: usize = state.node_texts.iter().map(|n| counter.count(&n.text).expect("count")).sum();
    eprintln!("batch: {} nodes, {raw_tokens} tokens of node text (cl100k_base)", state.node_texts.len());
    let max = raw_tokens * 2;

    let rule_sets = [
        ("no_rules", config(vec![])),
        ("always_sql_dotnet", config(vec![("sql", "always", None, None), ("dotnet", "always", None, None)])),
        (
            "spec_example_demand_threshold_always",
            config(vec![
                ("sql", "demand", None, Some("compact_sql")),
                ("sql", "threshold", Some(0.4), None),
                ("dotnet", "always", None, None),
            ]),
        ),
    ];

    let mut group = c.benchmark_group("manage_context_budget/1000_nodes");
    group.sample_size(10);
    for (name, cfg) in &rule_sets {
        // One run to report what was decided.
        let mut probe = state.clone();
        let report = manage_context_budget("manage_budget", cfg, max, &mut probe, &fresh_counter()).expect("decides");
        eprintln!(
            "{name}: {:?}, candidate {} tokens, saved {} tokens by compaction",
            report.decision,
            report.candidate_tokens,
            report.tokens_saved()
        );
        group.bench_function(format!("{name}/cold_counts"), |b| {
            b.iter_batched(
                || (state.clone(), fresh_counter()),
                |(mut s, counter)| black_box(manage_context_budget("manage_budget", cfg, max, &mut s, &counter)),
                BatchSize::PerIteration,
            )
        });
        let warm = fresh_counter();
        manage_context_budget("manage_budget", cfg, max, &mut state.clone(), &warm).expect("warms the cache");
        group.bench_function(format!("{name}/warm_cache"), |b| {
            b.iter_batched(
                || state.clone(),
                |mut s| black_box(manage_context_budget("manage_budget", cfg, max, &mut s, &warm)),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();

    let mut small = state.clone();
    small.node_texts.truncate(100);
    let small_max: usize = small.node_texts.iter().map(|n| counter.count(&n.text).expect("count")).sum::<usize>() * 2;
    let backend = BpeBackend::new(Encoding::Cl100kBase);
    let mut group = c.benchmark_group("manage_context_budget/100_nodes_vs_naive");
    group.sample_size(10);
    group.bench_function("naive_recount_after_each_node", |b| {
        b.iter(|| black_box(naive_recount(&small, small_max, &backend)))
    });
    let no_rules = config(vec![]);
    group.bench_function("ours_cold_counts", |b| {
        b.iter_batched(
            || (small.clone(), fresh_counter()),
            |(mut s, counter)| {
                black_box(manage_context_budget("manage_budget", &no_rules, small_max, &mut s, &counter))
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
