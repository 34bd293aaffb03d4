//! Token counting: ctx's `TokenCounter` (its own vocabularies, scanners and merge behind a piece
//! cache and a whole-text count cache) against raw tiktoken-rs `encode_ordinary(..).len()` and
//! bpe-openai's own `Tokenizer::count`, on the same texts in the same run.
//!
//! - `tokens/throughput/*`: the differential-test corpus (320 KB of prose, code, SQL, JSON,
//!   logs, multilingual text, emoji and whitespace), as whole files and as 1 KB prompt-sized
//!   chunks, on one thread. ctx cold = both caches emptied before every pass (the piece cache
//!   then only helps with the pieces a pass repeats); ctx warm-pieces = the piece cache as a
//!   long-running process has it, the whole-text cache cold (new texts made of known words);
//!   ctx cached = the same texts counted again.
//! - `tokens/interleaved`: the same contenders on the whole corpus, one pass each in turn for
//!   many rounds (so load on the machine hits them alike); prints medians and ratios, and the
//!   piece caches' memory, to stderr and to `$CTX_BENCH_OUT/tokens_interleaved.md`.
//! - `tokens/append`: a 1 MB context grown by 1 KB (`CountedText::push_str`) beside counting the
//!   1 KB alone and recounting the whole; `tokens/repeat`: an unchanged 1 MB text counted again.
//! - `tokens/parallel`: one thread against the count the backend chooses by the cores free
//!   (`with_threads(0)`) and against every core, 64 KB to 4 MB (where the parallel threshold
//!   comes from); then a request of a million tokens and more, cold, the three in turn for
//!   many rounds, in wall time, with the load and the threads each count chose, and what the
//!   choice costs (to stderr and `$CTX_BENCH_OUT/tokens_parallel.md`; run only when
//!   `CTX_BENCH_FILTER` is unset or names `tokens/parallel`).
//! - `tokens/scaling/*`: 10 KB → 10 MB of random letters without spaces and of a whitespace run
//!   ending in a word (the shape that overflows tiktoken-rs's regex stack). tiktoken-rs is
//!   measured where one probe run does not panic and finishes within a few seconds.
//! - `tokens/long-piece/*`: [`Ranks::count`] alone on one piece of 1 MB and 10 MB of random
//!   letters, mixed-case letters, random bytes and `abc` repeated, on both encodings (the merge's
//!   bound: ten times the piece in at most twelve times the time).
//!
//! - `tokens/merge/*`: what a cold count spends its time on, the merge of each distinct piece:
//!   bpe-openai's `count` against ctx's [`Ranks::count`] over the corpus's distinct pieces, by
//!   piece length (≤ 8, 9–64, > 64 bytes), and on single pieces of 100 to 16,000 random letters;
//!   the vocabulary's load time (decompression and rank index) and memory go to stderr.
//!
//! Run briefly: `cargo bench -p ctx-tokens --bench tokens --features __tiktoken -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use ctx_tokens::{BpeBackend, ChatFormat, CountedText, Encoding, PieceCache, Ranks, TokenCounter, TokenizerBackend};

fn raw_tiktoken(encoding: Encoding) -> &'static tiktoken_rs::CoreBPE {
    match encoding {
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
    }
}

#[path = "../tests/corpus/mod.rs"]
mod corpus;

/// The corpus files' texts, in name order.
fn corpus_files() -> Vec<String> {
    corpus::corpus_files().into_iter().map(|(_, text)| text).collect()
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

fn raw_bpe(encoding: Encoding) -> &'static bpe_openai::Tokenizer {
    match encoding {
        Encoding::Cl100kBase => bpe_openai::cl100k_base(),
        Encoding::O200kBase => bpe_openai::o200k_base(),
    }
}

/// One thread: the single-thread figures are the ones compared with the single-thread peers.
fn single(encoding: Encoding) -> BpeBackend {
    BpeBackend::new(encoding).with_threads(1)
}

fn fresh_counter(encoding: Encoding) -> TokenCounter {
    TokenCounter::with_backend(Arc::new(single(encoding)), ChatFormat::openai(), 65_536)
}

/// A fresh counter with the encoding's piece cache emptied too: nothing is known.
fn cold_counter(encoding: Encoding) -> TokenCounter {
    single(encoding).piece_cache().clear();
    fresh_counter(encoding)
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
            let bpe = raw_bpe(encoding);
            g.bench_function(BenchmarkId::new("bpe-openai", encoding), |b| {
                b.iter(|| texts.iter().map(|t| bpe.count(black_box(t.as_str()))).sum::<usize>())
            });
            let backend = single(encoding);
            g.bench_function(BenchmarkId::new("ctx-cold-counter", encoding), |b| {
                // `_ref`: building and dropping the fresh caches stay outside the measurement.
                b.iter_batched_ref(
                    || cold_counter(encoding),
                    |counter| texts.iter().map(|t| counter.count(black_box(t)).unwrap_or(0)).sum::<usize>(),
                    BatchSize::PerIteration,
                )
            });
            for t in texts {
                backend.count(t).expect("count");
            }
            g.bench_function(BenchmarkId::new("ctx-warm-pieces", encoding), |b| {
                b.iter(|| texts.iter().map(|t| backend.count(black_box(t)).unwrap_or(0)).sum::<usize>())
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
    let backend = single(encoding);
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

/// `n` pseudo-random bytes drawn from `alphabet`.
fn drawn(n: usize, alphabet: &[u8]) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            alphabet[(state % alphabet.len() as u64) as usize]
        })
        .collect()
}

/// One long piece of `n` bytes: random letters, mixed-case letters, bytes, or `abc` repeated.
fn long_piece(shape: &str, n: usize) -> Vec<u8> {
    match shape {
        "letters" => letters(n).into_bytes(),
        "mixed-case" => drawn(n, &(b'a'..=b'z').chain(b'A'..=b'Z').collect::<Vec<u8>>()),
        "bytes" => drawn(n, &(0..=255).collect::<Vec<u8>>()),
        _ => b"abc".repeat(n.div_ceil(3))[..n].to_vec(),
    }
}

/// The merge of one long piece, by shape and length, checked against bpe-openai's count first.
fn long_pieces(c: &mut Criterion) {
    for encoding in Encoding::ALL {
        let (ranks, bpe) = (Ranks::shared(encoding), raw_bpe(encoding));
        let mut g = c.benchmark_group(format!("tokens/long-piece/{encoding}"));
        g.sampling_mode(SamplingMode::Flat).sample_size(10);
        for shape in ["letters", "mixed-case", "bytes", "abc-repeated"] {
            for n in [1_000_000usize, 10_000_000] {
                let piece = long_piece(shape, n);
                g.throughput(Throughput::Bytes(n as u64));
                // Checked once, and only when selected (criterion calls this for every sample).
                let mut checked = false;
                g.bench_with_input(BenchmarkId::new(shape, n), &piece, |b, p| {
                    if !checked {
                        assert_eq!(ranks.count(p), bpe.bpe.count(p), "{encoding} {shape} {n}");
                        checked = true;
                    }
                    b.iter(|| ranks.count(black_box(p)))
                });
            }
        }
        g.finish();
    }
}

/// `text` repeated (and cut on a character boundary) to `bytes` bytes.
fn sized(text: &str, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + text.len());
    while out.len() < bytes {
        out.push_str(text);
    }
    let mut end = bytes;
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out
}

/// `i` written in `len` letters (base 26): distinct words for distinct `i`.
fn letters_of(mut i: usize, len: usize) -> String {
    (0..len)
        .map(|_| {
            let c = char::from(b'a' + (i % 26) as u8);
            i /= 26;
            c
        })
        .collect()
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

/// Every contender once per round, in turn, for `ROUNDS` rounds: load on the machine falls on
/// all of them alike, so the ratios hold even when the absolute figures wander.
fn interleaved(_c: &mut Criterion) {
    const ROUNDS: usize = 15;
    let corpus = corpus_files().concat();
    let mut report = format!(
        "Interleaved single-thread passes over the {} KB corpus (whole), {ROUNDS} rounds, medians:\n\n\
         | encoding | tiktoken-rs | bpe-openai | ctx cold (both caches empty) | ctx warm pieces | ×tiktoken cold / warm | ×bpe-openai cold / warm | pre-tokenizer alone: bpe-openai's regex / ctx's scanner (×faster) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
        corpus.len() / 1000
    );
    for encoding in Encoding::ALL {
        let (tk, bpe, backend) = (raw_tiktoken(encoding), raw_bpe(encoding), single(encoding));
        let mut times: [Vec<Duration>; 6] = Default::default();
        for round in 0..ROUNDS {
            for k in 0..6 {
                let which = (k + round) % 6;
                if which == 2 {
                    backend.piece_cache().clear();
                }
                let start = Instant::now();
                let n = match which {
                    0 => tk.encode_ordinary(black_box(&corpus)).len(),
                    1 => bpe.count(black_box(corpus.as_str())),
                    4 => bpe.split(black_box(corpus.as_str())).count(),
                    5 => encoding.pieces(black_box(corpus.as_str())).count(),
                    _ => backend.count(black_box(&corpus)).unwrap_or(0),
                };
                times[which].push(start.elapsed());
                black_box(n);
            }
        }
        let [t, b, cold, warm, split, scan] = times.map(median);
        let r = |x: Duration, y: Duration| x.as_secs_f64() / y.as_secs_f64();
        report.push_str(&format!(
            "| {encoding} | {t:.1?} | {b:.1?} | {cold:.1?} | {warm:.1?} | ×{:.2} / ×{:.2} | ×{:.2} / ×{:.2} | {split:.1?} / {scan:.1?} (×{:.2}) |\n",
            r(t, cold),
            r(t, warm),
            r(b, cold),
            r(b, warm),
            r(split, scan)
        ));
    }
    // Memory: the caches after the corpus, and after far more distinct pieces than they hold.
    for encoding in Encoding::ALL {
        let cache: &PieceCache = single(encoding).piece_cache();
        let after_corpus = (cache.len(), cache.memory_bytes());
        let churn: String = (0..200_000).map(|i| format!(" {} {}", letters_of(i, 6), letters_of(i, 20))).collect();
        single(encoding).count(&churn).expect("count");
        report.push_str(&format!(
            "\n{encoding} piece cache: {} pieces in {:.1} MiB after the corpus; {} pieces in {:.1} MiB after 400,000 \
             distinct ones (its bound: {} pieces of ≤ 15 bytes + {} MiB of longer ones, pieces over {} bytes not kept)",
            after_corpus.0,
            after_corpus.1 as f64 / 1048576.0,
            cache.len(),
            cache.memory_bytes() as f64 / 1048576.0,
            PieceCache::DEFAULT_SHORT_ENTRIES,
            PieceCache::DEFAULT_LONG_BYTES >> 20,
            PieceCache::MAX_CACHED_PIECE,
        ));
    }
    eprintln!("{report}");
    if let Ok(dir) = std::env::var("CTX_BENCH_OUT") {
        let _ = std::fs::write(PathBuf::from(dir).join("tokens_interleaved.md"), &report);
    }
}

/// Growing a counted 1 MB context by 1 KB, beside counting the 1 KB alone and recounting all.
fn append(c: &mut Criterion) {
    let corpus = corpus_files().concat();
    let kb = chunks(std::slice::from_ref(&corpus), 1024).into_iter().nth(100).expect("a 1 KB chunk");
    for encoding in Encoding::ALL {
        let counter = fresh_counter(encoding);
        let context = CountedText::with_text(&counter, sized(&corpus, 1_000_000)).expect("count");
        let backend = single(encoding);
        let whole = format!("{}{kb}", context.as_str());
        backend.count(&whole).expect("warm the piece cache alike for every contender");
        let mut g = c.benchmark_group(format!("tokens/append/{encoding}"));
        g.sample_size(30);
        g.bench_function("ctx-append-1KB-to-1MB", |b| {
            b.iter_batched_ref(
                || {
                    // A context that grows has room to grow (a String doubles its capacity):
                    // the clone's exact-fit allocation would add a 1 MB copy to the append.
                    let mut ctx = context.clone();
                    ctx.reserve(kb.len());
                    ctx
                },
                |ctx| ctx.push_str(black_box(&kb)).unwrap_or(0),
                BatchSize::LargeInput,
            )
        });
        g.bench_function("count-1KB-alone", |b| b.iter(|| backend.count(black_box(&kb)).unwrap_or(0)));
        g.bench_function("naive-recount-1MB+1KB", |b| b.iter(|| backend.count(black_box(&whole)).unwrap_or(0)));
        g.finish();

        let mut g = c.benchmark_group(format!("tokens/repeat/{encoding}"));
        let text = context.as_str().to_owned();
        counter.count(&text).expect("count");
        g.bench_function("ctx-cached-count-1MB", |b| b.iter(|| counter.count(black_box(&text)).unwrap_or(0)));
        g.bench_function("ctx-counted-text-1MB", |b| b.iter(|| black_box(&context).tokens()));
        g.bench_function("naive-recount-1MB", |b| b.iter(|| backend.count(black_box(&text)).unwrap_or(0)));
        g.finish();
    }
}

/// One thread against the chosen count and every core, by size: where counting in parallel
/// starts to pay, and what the choice gives on the machine as it is.
fn parallel(c: &mut Criterion) {
    let corpus = corpus_files().concat();
    let encoding = Encoding::Cl100kBase;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let one = single(encoding);
    let chosen = BpeBackend::new(encoding).with_threads(0);
    let every = BpeBackend::new(encoding).with_threads(cores);
    let mut g = c.benchmark_group("tokens/parallel");
    g.sample_size(20);
    for bytes in [64_000usize, 300_000, 1_000_000, 4_000_000] {
        let text = sized(&corpus, bytes);
        one.count(&text).expect("warm");
        g.throughput(Throughput::Bytes(bytes as u64));
        for (name, backend) in [("one-thread", &one), ("chosen-threads", &chosen), ("all-threads", &every)] {
            g.bench_with_input(BenchmarkId::new(name, bytes), &text, |b, t| {
                b.iter(|| backend.count(black_box(t)).unwrap_or(0))
            });
        }
    }
    g.finish();
    if std::env::var("CTX_BENCH_FILTER").is_ok_and(|f| !"tokens/parallel".contains(f.as_str())) {
        return;
    }
    let report = million_tokens(&corpus, cores);
    eprintln!("{report}");
    if let Ok(dir) = std::env::var("CTX_BENCH_OUT") {
        let _ = std::fs::write(PathBuf::from(dir).join("tokens_parallel.md"), &report);
    }
}

/// `text` with its ASCII letters rotated by `k` places: other words, the same shapes.
fn rotated(text: &str, k: u8) -> String {
    let turn = |c: char, base: u8| char::from(base + (c as u8 - base + k) % 26);
    text.chars()
        .map(|c| match c {
            'a'..='z' => turn(c, b'a'),
            'A'..='Z' => turn(c, b'A'),
            _ => c,
        })
        .collect()
}

/// The machine's load average and runnable threads now (`/proc/loadavg`, first four fields).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map_or_else(|_| "?".to_owned(), |l| l.split_ascii_whitespace().take(4).collect::<Vec<_>>().join(" "))
}

/// A request of at least a million tokens (the corpus, then copies with rotated letters: new
/// words, not answered from the first copy's pieces), counted cold on one thread, on the count
/// `with_threads(0)` chooses, and on every core, in turn, in wall time; the counts must be equal,
/// and equal to bpe-openai's. Then what the choice costs.
fn million_tokens(corpus: &str, cores: usize) -> String {
    const ROUNDS: usize = 21;
    let mut out = format!(
        "A request of a million tokens or more (the corpus, then copies of it with their letters rotated: new \
         words), counted cold (piece cache emptied before each pass) on one thread, on the threads the backend \
         chooses as the count starts (`with_threads(0)`: the cores free then) and on every core \
         (`with_threads({cores})`), {ROUNDS} interleaved rounds, medians of wall time; the load is \
         `/proc/loadavg`'s averages and runnable/all threads before and after each encoding:\n\n\
         | encoding | bytes | tokens | load before → after | one thread | chosen | threads chosen | every core | \
         chosen ×one | every core ×one |\n|---|---:|---:|---|---:|---:|---|---:|---:|---:|\n"
    );
    let (mut choices, mut one_thread) = (Vec::new(), Vec::new());
    for encoding in Encoding::ALL {
        let one = single(encoding);
        let chosen = BpeBackend::new(encoding).with_threads(0);
        let every = BpeBackend::new(encoding).with_threads(cores);
        let (mut text, mut tokens, mut k) = (String::new(), 0, 0u8);
        while tokens < 1_000_000 {
            let copy = rotated(corpus, k);
            tokens += one.count(&copy).expect("count");
            text.push_str(&copy);
            k = (k + 1) % 26;
        }
        let before = load();
        let mut times: [Vec<Duration>; 3] = Default::default();
        let mut picked = Vec::new();
        for round in 0..ROUNDS {
            let mut counts = [0usize; 3];
            for k in 0..3 {
                let which = (k + round) % 3;
                one.piece_cache().clear();
                let backend = [&one, &chosen, &every][which];
                if which == 1 {
                    picked.push(chosen.threads_for(text.len()).expect("threads"));
                }
                let start = Instant::now();
                counts[which] = backend.count(black_box(&text)).expect("count");
                times[which].push(start.elapsed());
            }
            assert!(counts.iter().all(|&n| n == counts[0]), "{encoding}: {counts:?} on 1, chosen, {cores} threads");
            tokens = counts[0];
        }
        let after = load();
        assert_eq!(tokens, raw_bpe(encoding).count(&text), "{encoding}: bpe-openai's count");
        let [t1, tc, tn] = times.map(median);
        let r = |x: Duration, y: Duration| x.as_secs_f64() / y.as_secs_f64();
        let spread = |xs: &[usize]| {
            let (lo, hi) = (xs.iter().min().unwrap_or(&0), xs.iter().max().unwrap_or(&0));
            let many = xs.iter().filter(|&&n| n > 1).count();
            format!("{lo}–{hi} ({many} of {} rounds > 1)", xs.len())
        };
        out.push_str(&format!(
            "| {encoding} | {} | {tokens} | {before} → {after} | {t1:.1?} | {tc:.1?} | {} | {tn:.1?} | ×{:.2} | ×{:.2} |\n",
            text.len(),
            spread(&picked),
            r(t1, tc),
            r(t1, tn),
        ));
        // The choice alone, as a count of this text makes it: batches of 100 calls.
        choices.extend((0..200).map(|_| {
            let start = Instant::now();
            for _ in 0..100 {
                black_box(chosen.threads_for(black_box(text.len())).expect("threads"));
            }
            start.elapsed() / 100
        }));
        one_thread.push(t1);
    }
    let probe: Vec<Duration> = (0..200)
        .map(|_| {
            let start = Instant::now();
            black_box(std::thread::available_parallelism().map_or(1, |n| n.get()));
            start.elapsed()
        })
        .collect();
    let choice = median(choices);
    let fastest = one_thread.into_iter().min().unwrap_or(Duration::MAX);
    out.push_str(&format!(
        "\nThe choice (`threads_for`: one read of `/proc/loadavg` on Linux; the affinity, cgroup quota and online CPUs \
         read once per process): {choice:.2?} per count (median of 400 batches of 100), {:.3}% of the faster one-thread \
         count above ({fastest:.1?}); `available_parallelism()` read every time instead would cost {:.2?}.\n",
        100.0 * choice.as_secs_f64() / fastest.as_secs_f64(),
        median(probe),
    ));
    out
}

/// The merge alone: every distinct piece of the corpus, by length, bpe-openai against ctx.
fn merge(c: &mut Criterion) {
    let corpus = corpus_files().concat();
    for encoding in Encoding::ALL {
        let bpe = raw_bpe(encoding);
        let builds: Vec<Duration> = (0..5)
            .map(|_| {
                let start = Instant::now();
                black_box(Ranks::build(encoding));
                start.elapsed()
            })
            .collect();
        let ranks = Ranks::build(encoding);
        let mut pieces: Vec<&str> = bpe.split(&corpus).collect();
        pieces.sort_unstable();
        pieces.dedup();
        let single = pieces.iter().filter(|p| ranks.rank(p.as_bytes()).is_some()).count();
        eprintln!(
            "{encoding}: vocabulary loaded and indexed in {:.1?} (median of 5), {:.2} MiB; corpus: {} distinct pieces, {single} of them one token",
            median(builds),
            ranks.memory_bytes() as f64 / 1048576.0,
            pieces.len(),
        );
        let mut g = c.benchmark_group(format!("tokens/merge/{encoding}"));
        g.sample_size(20);
        // Long pieces that are not runs (the heap merge).
        let long_words: Vec<String> = [100, 300, 1000, 4000, 16000].map(letters).into();
        let buckets = [("le8", 1..=8), ("9-64", 9..=64), ("gt64", 65..=usize::MAX)].map(|(bucket, lengths)| {
            (bucket, pieces.iter().map(|p| p.as_bytes()).filter(|p| lengths.contains(&p.len())).collect::<Vec<_>>())
        });
        let letters_bucket = ("letters-100-to-16000", long_words.iter().map(|w| w.as_bytes()).collect());
        for (bucket, some) in buckets.into_iter().chain([letters_bucket]) {
            let expected: usize = some.iter().map(|p| bpe.bpe.count(p)).sum();
            assert_eq!(some.iter().map(|p| ranks.count(p)).sum::<usize>(), expected, "{encoding} {bucket}");
            eprintln!("{encoding} {bucket}: {} distinct pieces, {expected} tokens", some.len());
            g.bench_with_input(BenchmarkId::new("bpe-openai", bucket), &some, |b, some| {
                b.iter(|| some.iter().map(|p| bpe.bpe.count(black_box(p))).sum::<usize>())
            });
            g.bench_with_input(BenchmarkId::new("ctx-ranks", bucket), &some, |b, some| {
                b.iter(|| some.iter().map(|p| ranks.count(black_box(p))).sum::<usize>())
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = interleaved, throughput, append, parallel, scaling, long_pieces, merge
}
criterion_main!(benches);
