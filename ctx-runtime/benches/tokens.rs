//! Token counting: ctx's `TokenCounter` (bpe-openai behind a count cache) against raw tiktoken-rs
//! `encode_ordinary(..).len()`, on the same texts in the same run.
//!
//! - `tokens/throughput/*`: the differential-test corpus (323 KB of prose, code, SQL, JSON,
//!   logs, multilingual text, emoji and whitespace), as whole files and as 1 KB prompt-sized
//!   chunks. ctx cold = the uncached backend, and a `TokenCounter` with a fresh cache; ctx
//!   cached = the same texts counted again.
//! - `tokens/scaling/*`: 10 KB → 10 MB of random letters without spaces and of a whitespace run
//!   ending in a word (the shape that overflows tiktoken-rs's regex stack). tiktoken-rs is
//!   measured where one probe run does not panic and finishes within a few seconds.
//!
//! Run briefly: `cargo bench -p ctx-runtime --bench tokens -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use ctx_runtime::tokens::{BpeBackend, ChatFormat, Encoding, TokenCounter, TokenizerBackend};

fn raw_tiktoken(encoding: Encoding) -> &'static tiktoken_rs::CoreBPE {
    match encoding {
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
    }
}

fn corpus_files() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tokens");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x != "py") && p.file_name().is_some_and(|n| n != ".gitattributes"))
        .collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read_to_string(p).expect("corpus file")).collect()
}

/// The corpus cut into chunks of about `size` bytes (on character boundaries), like the
/// messages and retrieved passages a pipeline counts one by one.
fn chunks(files: &[String], size: usize) -> Vec<String> {
    let mut out = Vec::new();
    for text in files {
        let mut start = 0;
        while start < text.len() {
            let mut end = (start + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            out.push(text[start..end].to_owned());
            start = end;
        }
    }
    out
}

fn fresh_counter(encoding: Encoding) -> TokenCounter {
    TokenCounter::with_backend(Arc::new(BpeBackend::new(encoding)), ChatFormat::openai(), 65_536)
}

fn throughput(c: &mut Criterion) {
    let files = corpus_files();
    let inputs = [("files", files.clone()), ("1KB-chunks", chunks(&files, 1024))];
    for (input, texts) in &inputs {
        let bytes: usize = texts.iter().map(String::len).sum();
        let mut g = c.benchmark_group(format!("tokens/throughput/{input}"));
        g.throughput(Throughput::Bytes(bytes as u64)).sample_size(10);
        for encoding in Encoding::ALL {
            let tk = raw_tiktoken(encoding);
            g.bench_function(BenchmarkId::new("tiktoken-rs", encoding), |b| {
                b.iter(|| texts.iter().map(|t| tk.encode_ordinary(black_box(t)).len()).sum::<usize>())
            });
            let backend = BpeBackend::new(encoding);
            g.bench_function(BenchmarkId::new("ctx-cold-backend", encoding), |b| {
                b.iter(|| texts.iter().map(|t| backend.count(black_box(t)).unwrap_or(0)).sum::<usize>())
            });
            g.bench_function(BenchmarkId::new("ctx-cold-counter", encoding), |b| {
                // `_ref`: building and dropping the fresh cache stay outside the measurement.
                b.iter_batched_ref(
                    || fresh_counter(encoding),
                    |counter| texts.iter().map(|t| counter.count(black_box(t)).unwrap_or(0)).sum::<usize>(),
                    BatchSize::LargeInput,
                )
            });
            let warm = fresh_counter(encoding);
            for t in texts {
                warm.count(t).expect("count");
            }
            g.bench_function(BenchmarkId::new("ctx-cached", encoding), |b| {
                b.iter(|| texts.iter().map(|t| warm.count(black_box(t)).unwrap_or(0)).sum::<usize>())
            });
        }
        g.finish();
    }
}

/// Random lowercase letters: one pre-tokenizer piece as long as the text.
fn letters(n: usize) -> String {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(b'a' + (state % 26) as u8)
        })
        .collect()
}

/// A whitespace run that ends in a word.
fn whitespace(n: usize) -> String {
    let mut s = " ".repeat(n.saturating_sub(1));
    s.push('x');
    s
}

/// Longest single tiktoken-rs run the scaling benchmark waits for (criterion needs ten).
const PROBE_LIMIT: Duration = Duration::from_secs(4);

/// One run of raw tiktoken-rs, or why it cannot be benchmarked on `text`. `previous` is the
/// probe of a ten times shorter input: if ten times that exceeds the limit, the run is skipped
/// without being attempted (tiktoken-rs is at best linear).
fn tiktoken_probe(encoding: Encoding, text: &str, previous: Option<Duration>) -> Result<Duration, String> {
    if let Some(p) = previous
        && p * 10 > PROBE_LIMIT
    {
        return Err(format!("10x the input took {p:.1?}; this one would take at least {:.1?}", p * 10));
    }
    let tk = raw_tiktoken(encoding);
    let start = Instant::now();
    let outcome = catch_unwind(AssertUnwindSafe(|| tk.encode_ordinary(text).len()));
    let took = start.elapsed();
    match outcome {
        Err(_) => Err("panicked".to_owned()),
        Ok(_) if took > PROBE_LIMIT => Err(format!("one run took {took:.1?}")),
        Ok(_) => Ok(took),
    }
}

fn scaling(c: &mut Criterion) {
    let encoding = Encoding::Cl100kBase;
    let backend = BpeBackend::new(encoding);
    let tk = raw_tiktoken(encoding);
    for (shape, make) in [("letters", letters as fn(usize) -> String), ("whitespace", whitespace)] {
        let mut g = c.benchmark_group(format!("tokens/scaling/{shape}"));
        let mut previous: Option<Duration> = None;
        for n in [10_000usize, 100_000, 1_000_000, 10_000_000] {
            let text = make(n);
            g.throughput(Throughput::Bytes(n as u64));
            if n >= 1_000_000 {
                // Ten samples of one run each: the minimum criterion accepts.
                g.sampling_mode(SamplingMode::Flat).sample_size(10);
            } else {
                g.sampling_mode(SamplingMode::Auto).sample_size(20);
            }
            g.bench_with_input(BenchmarkId::new("ctx", n), &text, |b, t| {
                b.iter(|| backend.count(black_box(t)).unwrap_or(0))
            });
            let probe = tiktoken_probe(encoding, &text, previous.take());
            match probe {
                Ok(took) => {
                    previous = Some(took);
                    g.bench_with_input(BenchmarkId::new("tiktoken-rs", n), &text, |b, t| {
                        b.iter(|| tk.encode_ordinary(black_box(t)).len())
                    });
                }
                Err(why) => eprintln!("tokens/scaling/{shape}/tiktoken-rs/{n}: not benchmarked: {why}"),
            }
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = throughput, scaling
}
criterion_main!(benches);
