//! The cost of one retrieval call in an agent turn, as a function of how many calls came before
//! it (1…64): ours (a ledger updated as messages arrive; a call counts only what it adds) beside a
//! faithful port of progressive_budgeting.md (every call walks `runtime.state.messages`, re-parses
//! every earlier tool result into articles, de-duplicates them by id and re-counts everything),
//! in the same run. Both pack the same ranked documents with the same packer; every call brings
//! three documents never seen before (tokenized in both) and one repeat of an earlier document.

#[path = "../tests/history_corpus/mod.rs"]
mod history_corpus;

use std::collections::HashSet;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use ctx_runtime::history::history_tokens;
use ctx_runtime::turn::{DocumentFormat, Partial, RankedDocument, TurnBudgetConfig, TurnLedger, pack_documents};
use ctx_runtime::{ChatMessage, Encoding, Role, TokenCounter, ToolCall};

const BUDGET: usize = 200_000;
const CALLS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
const DOC_TOKENS: usize = 150;

fn call(k: usize) -> ToolCall {
    ToolCall::new(format!("call_{k}"), "retrieve_context", format!("{{\"query\":\"topic {k}\"}}"))
}

/// The ranked results of call `k`: three new documents and, after the first call, the best
/// document of the previous call again.
fn ranked(pool: &[String], k: usize) -> Vec<RankedDocument> {
    let mut docs: Vec<RankedDocument> = (0..3)
        .map(|j| RankedDocument::new(format!("kb-{}", 3 * k + j), pool[(3 * k + j) % pool.len()].clone()))
        .collect();
    if k > 0 {
        docs.insert(1, RankedDocument::new(format!("kb-{}", 3 * (k - 1)), pool[(3 * (k - 1)) % pool.len()].clone()));
    }
    docs
}

/// The same documents with texts no counter has seen, so every iteration tokenizes them.
fn fresh(docs: &[RankedDocument], nonce: &AtomicU64) -> Vec<RankedDocument> {
    let n = nonce.fetch_add(1, Ordering::Relaxed);
    docs.iter().map(|d| RankedDocument::new(d.id.clone(), format!("{} (rev {n})", d.text))).collect()
}

/// progressive_budgeting.md's per-call accounting: walk every message, parse tool results into
/// articles, de-duplicate by id, count every article and every conversation message again.
fn spec_reserved(messages: &[ChatMessage], count: &dyn Fn(&str) -> usize) -> (usize, HashSet<String>) {
    let mut conversation = 0;
    let mut accumulated = 0;
    let mut seen = HashSet::new();
    for m in messages {
        if m.role == Role::Tool {
            for (id, text) in parse_articles(&m.content) {
                if seen.insert(id.to_owned()) {
                    accumulated += count(text);
                }
            }
        } else if m.tool_calls.is_empty() {
            conversation += count(&m.content);
        }
    }
    (conversation + accumulated, seen)
}

/// The articles of a tool result rendered with the default [`DocumentFormat`].
fn parse_articles(content: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = content;
    while let Some(start) = rest.find("<document id=\"") {
        let after = &rest[start + 14..];
        let Some(id_end) = after.find("\">\n") else { break };
        let body = &after[id_end + 3..];
        let Some(text_end) = body.find("\n</document>") else { break };
        out.push((&after[..id_end], &body[..text_end]));
        rest = &body[text_end + 12..];
    }
    out
}

fn spec_call(
    mut messages: Vec<ChatMessage>,
    k: usize,
    docs: &[RankedDocument],
    counter: &TokenCounter,
    count: &dyn Fn(&str) -> usize,
) -> Vec<ChatMessage> {
    let tc = call(k);
    messages.push(ChatMessage::assistant_tool_calls("", vec![tc.clone()]));
    let (reserved, seen) = spec_reserved(&messages, count);
    let budget = BUDGET.saturating_sub(reserved);
    let format = DocumentFormat::default();
    let packed = pack_documents(docs, &|id| seen.contains(id), budget, &format, Partial::Skip, 0, counter).unwrap();
    messages.push(ChatMessage::tool_result(tc.id, packed.rendered));
    messages
}

fn ours_call(mut ledger: TurnLedger, k: usize, docs: &[RankedDocument]) -> TurnLedger {
    let tc = call(k);
    ledger.add_message(&ChatMessage::assistant_tool_calls("", vec![tc.clone()])).unwrap();
    ledger.answer_call(&tc, docs, None).unwrap();
    ledger
}

fn per_call(c: &mut Criterion) {
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let (corpus, _) = history_corpus::conversation(&counter, 160_000, 6);
    let pool: Vec<String> = corpus
        .iter()
        .filter(|m| counter.count(&m.content).unwrap() >= DOC_TOKENS)
        .map(|m| counter.truncate_to(&m.content, DOC_TOKENS).unwrap())
        .collect();
    assert!(pool.len() >= 3 * 64, "{} documents", pool.len());
    let conversation: Vec<ChatMessage> =
        corpus.iter().filter(|m| m.role != Role::Tool && m.tool_calls.is_empty()).take(8).cloned().collect();
    eprintln!(
        "conversation: {} tokens; {} documents of {DOC_TOKENS} tokens",
        history_tokens(&counter, &conversation).unwrap(),
        pool.len()
    );

    let backend = counter.backend().clone();
    let uncached = move |t: &str| backend.count(t).unwrap();
    let cached = |t: &str| counter.count(t).unwrap();
    let nonce = AtomicU64::new(0);

    let mut group = c.benchmark_group("turn_call");
    group.sample_size(20);
    for &n in &CALLS {
        // The state after n - 1 calls, built by each approach from the same documents.
        let mut ledger =
            TurnLedger::with_messages(TurnBudgetConfig::new(BUDGET, 272_000), counter.clone(), &conversation).unwrap();
        let mut messages = conversation.clone();
        for k in 0..n - 1 {
            ledger = ours_call(ledger, k, &ranked(&pool, k));
            messages = spec_call(messages, k, &ranked(&pool, k), &counter, &cached);
        }
        assert_eq!(ledger.reserved(), history_tokens(&counter, &messages).unwrap(), "same transcript");
        let docs = ranked(&pool, n - 1);

        group.bench_with_input(BenchmarkId::new("ours_ledger", n), &n, |b, &n| {
            b.iter_batched(
                || (ledger.clone(), fresh(&docs, &nonce)),
                |(l, d)| ours_call(l, n - 1, black_box(&d)),
                BatchSize::SmallInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("spec_reparse", n), &n, |b, &n| {
            b.iter_batched(
                || (messages.clone(), fresh(&docs, &nonce)),
                |(m, d)| spec_call(m, n - 1, black_box(&d), &counter, &uncached),
                BatchSize::SmallInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("spec_reparse_cached_counts", n), &n, |b, &n| {
            b.iter_batched(
                || (messages.clone(), fresh(&docs, &nonce)),
                |(m, d)| spec_call(m, n - 1, black_box(&d), &counter, &cached),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, per_call);
criterion_main!(benches);
