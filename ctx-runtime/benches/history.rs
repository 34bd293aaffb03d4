//! History trimming on a ~217,000-token conversation (the size of run-llama/llama_index#12264),
//! ours (each message counted once, running total, one confirming count) cold and warm, beside
//! the naive trim that recounts the whole kept history after every removal, in the same run.

#[path = "../tests/history_corpus/mod.rs"]
mod history_corpus;

use history_corpus::naive_trim;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use ctx_runtime::history::trim_history;
use ctx_runtime::tokens::BpeBackend;
use ctx_runtime::{ChatFormat, Encoding, TokenCounter};

/// A counter with its own empty cache and the encoding's piece cache emptied: every text is
/// tokenized on first sight, and every piece merged on first sight.
fn cold_counter(entries: usize) -> TokenCounter {
    let backend = BpeBackend::new(Encoding::Cl100kBase);
    backend.piece_cache().clear();
    TokenCounter::with_backend(Arc::new(backend), ChatFormat::openai(), entries)
}

fn bench_case(c: &mut Criterion, name: &str, target: usize, keep: usize, naive_uncached: bool) {
    let shared = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let (history, total) = history_corpus::conversation(&shared, target, 12_264);
    let expected = trim_history(&history, keep, &shared).unwrap();
    assert_eq!(naive_trim(&history, keep, &shared), expected.first_kept);
    eprintln!(
        "{name}: {} messages, {total} tokens; trimming to {keep} drops {} messages",
        history.len(),
        expected.removed
    );

    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    group.bench_function("ours_cold", |b| {
        b.iter_batched(
            || cold_counter(1 << 20),
            |counter| black_box(trim_history(black_box(&history), keep, &counter).unwrap()),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("ours_warm", |b| {
        b.iter(|| black_box(trim_history(black_box(&history), keep, &shared).unwrap()))
    });
    group.bench_function("naive_recount_warm_cache", |b| {
        b.iter(|| black_box(naive_trim(black_box(&history), keep, &shared)))
    });
    if naive_uncached {
        // A one-entry cache: every recount tokenizes again, as a counter without a cache does.
        let uncached = cold_counter(1);
        group.bench_function("naive_recount_no_cache", |b| {
            b.iter(|| black_box(naive_trim(black_box(&history), keep, &uncached)))
        });
    }
    group.finish();
}

fn trims(c: &mut Criterion) {
    bench_case(c, "trim_217k_to_16k", 217_000, 16_000, false);
    bench_case(c, "trim_22k_to_2k", 22_000, 2_000, true);
}

criterion_group!(benches, trims);
criterion_main!(benches);
