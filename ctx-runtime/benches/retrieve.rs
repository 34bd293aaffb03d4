//! The offline retriever and the offline model on a synthetic code base.
//!
//! - `search`: `Bm25Index::search` (inverted index, only documents sharing a token are scored)
//!   against the naive approach of tokenising every document for every query and counting the
//!   query's tokens in it.
//! - `offline_summary`: `OfflineModel` summarising a context of about 8k tokens into 1k.

use std::collections::HashSet;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ctx_runtime::llm::offline::{OfflineModel, OfflineTask};
use ctx_runtime::llm::{ChatModel, ChatRequest};
use ctx_runtime::retrieve::{Bm25Index, CodeTokenizer};
use ctx_runtime::{ChatMessage, Encoding, TokenCounter};

const ENTITIES: &[&str] = &["Order", "Customer", "Invoice", "Shipment", "Product", "Payment", "Refund", "Supplier"];
const VERBS: &[&str] = &["Get", "Compute", "Validate", "Update", "Archive", "Merge", "Export", "Schedule"];

/// `n` files of C# and SQL built from entity and verb names, deterministic.
fn corpus(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let entity = ENTITIES[i % ENTITIES.len()];
            let verb = VERBS[(i / ENTITIES.len()) % VERBS.len()];
            if i % 2 == 0 {
                let id = format!("Sql/usp_{verb}{entity}{i}.sql");
                let mut text = format!("CREATE PROCEDURE dbo.usp_{verb}{entity}{i} @{entity}Id INT AS\nBEGIN\n");
                for j in 0..30 {
                    text.push_str(&format!(
                        "  SELECT t{j}.{entity}Id, SUM(t{j}.Amount) AS Total{j} FROM dbo.{entity}s t{j} WHERE t{j}.Status = {j};\n"
                    ));
                }
                text.push_str("END\n");
                (id, text)
            } else {
                let id = format!("Src/{entity}/{verb}{entity}Service{i}.cs");
                let mut text = format!("public class {verb}{entity}Service{i}\n{{\n");
                for j in 0..30 {
                    text.push_str(&format!(
                        "    public decimal {verb}{entity}Amount{j}({entity} item) => item.Lines.Sum(l => l.Price * {j});\n"
                    ));
                }
                text.push_str("}\n");
                (id, text)
            }
        })
        .collect()
}

fn naive_search(
    tokenizer: &CodeTokenizer,
    docs: &[(String, String)],
    query: &str,
    top_k: usize,
) -> Vec<(usize, usize)> {
    let wanted: HashSet<String> = tokenizer.tokenize(query).into_iter().collect();
    let mut scored: Vec<(usize, usize)> = docs
        .iter()
        .enumerate()
        .map(|(i, (id, text))| {
            let hits = tokenizer.tokenize(&format!("{id}\n{text}")).iter().filter(|t| wanted.contains(*t)).count();
            (hits, i)
        })
        .filter(|(hits, _)| *hits > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(top_k);
    scored
}

fn bench(c: &mut Criterion) {
    let docs = corpus(400);
    let index = Bm25Index::from_documents(docs.clone());
    let tokenizer = CodeTokenizer::new();
    let query = "how is the refund amount of a supplier computed";
    let mut group = c.benchmark_group("search_400_files");
    group.sample_size(10);
    group.bench_function("bm25_index", |b| b.iter(|| black_box(index.search(black_box(query), 10))));
    group.bench_function("naive_rescan", |b| {
        b.iter(|| black_box(naive_search(&tokenizer, &docs, black_box(query), 10)))
    });
    group.finish();

    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let mut context = String::new();
    for (id, text) in docs.iter().take(12) {
        context.push_str(&format!("--- NODE ---\nid: {id}\ntext:\n{text}\n\n"));
    }
    let user = format!("### Context:\n{context}### User:\n{query}\n");
    let request = ChatRequest::new(vec![ChatMessage::system("Summarise the context."), ChatMessage::user(user)], 1_000);
    let context_tokens = counter.count(&context).unwrap_or(0);
    let model = OfflineModel::new(counter).with_task(OfflineTask::Summarize);
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let mut group = c.benchmark_group(format!("offline_summary_{context_tokens}_tokens_to_1000"));
    group.sample_size(10);
    group.bench_function("offline_model", |b| {
        b.iter(|| black_box(runtime.block_on(model.chat(black_box(&request))).map(|r| r.content.len())))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
