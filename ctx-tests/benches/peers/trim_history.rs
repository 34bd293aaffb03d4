//! The Rust half of the history-trimming side-by-side with LangChain (see `README.md` beside this
//! file).
//!
//! It builds the ~217,000-token conversation of `ctx-runtime/benches/history.rs` (same generator,
//! same seed), writes it to `history_217k.json` for the Python side, reads that file back, and
//! times [`trim_history`] on exactly what Python reads: cold (a counter with an empty cache, so
//! every message is tokenized, as LangChain's counter does on every call) and warm (the shared
//! counter, as on the next turn of a conversation). The file also records the trim's result, so
//! the Python side can check that both keep the same messages.
//!
//! Output directory: `$CTX_BENCH_OUT`, else `$CARGO_TARGET_DIR/ctx-bench`, else `target/ctx-bench`.

#[path = "../../../ctx-runtime/tests/history_corpus/mod.rs"]
mod history_corpus;

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use ctx_runtime::history::trim_history;
use ctx_runtime::tokens::BpeBackend;
use ctx_runtime::{ChatFormat, ChatMessage, Encoding, TokenCounter};

/// The conversation's size: run-llama/llama_index#12264 took about a minute on 217,248 tokens.
const TARGET_TOKENS: usize = 217_000;
/// The seed `ctx-runtime/benches/history.rs` uses, so both benches trim the same conversation.
const SEED: u64 = 12_264;
/// The history budget both sides trim to.
const KEEP_TOKENS: usize = 16_000;

fn out_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CTX_BENCH_OUT") {
        return PathBuf::from(dir);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target"));
    target.join("ctx-bench")
}

/// The framing constants the Python side counts with, taken from the counter itself so that the
/// two sides cannot drift apart silently (the Python side also checks the conversation's total).
fn chat_format(counter: &TokenCounter) -> serde_json::Value {
    let ChatFormat::OpenAi(o) = counter.format() else {
        panic!("the peers benchmark mirrors the OpenAI chat format only");
    };
    serde_json::json!({
        "per_message": o.per_message,
        "per_name": o.per_name,
        "reply_priming": o.reply_priming,
        "tool_call_specials": o.tool_call_specials,
        "tool_result_specials": o.tool_result_specials,
    })
}

/// Writes the conversation and our trim's result, then reads the conversation back.
fn export(history: &[ChatMessage], total: usize, counter: &TokenCounter) -> Vec<ChatMessage> {
    let trim = trim_history(history, KEEP_TOKENS, counter).expect("trimming the corpus");
    let document = serde_json::json!({
        "description": "ctx history corpus (ctx-runtime/tests/history_corpus), seed 12264",
        "encoding": "cl100k_base",
        "chat_format": chat_format(counter),
        "total_tokens": total,
        "max_tokens": KEEP_TOKENS,
        "expected": {
            "first_kept": trim.first_kept,
            "kept_messages": history.len() - trim.first_kept,
            "kept_tokens": trim.kept_tokens,
        },
        "messages": history,
    });
    let dir = out_dir();
    std::fs::create_dir_all(&dir).expect("creating the bench output directory");
    let path = dir.join("history_217k.json");
    std::fs::write(&path, serde_json::to_vec(&document).expect("serializing the corpus")).expect("writing the corpus");
    let text = std::fs::read_to_string(&path).expect("reading the corpus back");
    let value: serde_json::Value = serde_json::from_str(&text).expect("parsing the corpus back");
    let messages: Vec<ChatMessage> =
        serde_json::from_value(value["messages"].clone()).expect("the corpus holds chat messages");
    assert_eq!(messages, history, "the JSON round trip changed the conversation");
    eprintln!(
        "peers: wrote {} ({} messages, {total} tokens; trim to {KEEP_TOKENS} keeps {} messages, {} tokens)",
        path.display(),
        messages.len(),
        messages.len() - trim.first_kept,
        trim.kept_tokens
    );
    messages
}

fn trim_217k(c: &mut Criterion) {
    let shared = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let (history, total) = history_corpus::conversation(&shared, TARGET_TOKENS, SEED);
    let history = export(&history, total, &shared);

    let mut group = c.benchmark_group("peers/trim_217k_to_16k");
    group.sample_size(10);
    group.bench_function("ctx_cold", |b| {
        b.iter_batched(
            || {
                // Nothing known: a fresh count cache, and the encoding's piece cache emptied.
                let backend = BpeBackend::new(Encoding::Cl100kBase);
                backend.piece_cache().clear();
                TokenCounter::with_backend(Arc::new(backend), ChatFormat::openai(), 1 << 20)
            },
            |counter| black_box(trim_history(black_box(&history), KEEP_TOKENS, &counter).expect("trim")),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("ctx_warm", |b| {
        b.iter(|| black_box(trim_history(black_box(&history), KEEP_TOKENS, &shared).expect("trim")))
    });
    group.finish();
}

criterion_group!(benches, trim_217k);
criterion_main!(benches);
