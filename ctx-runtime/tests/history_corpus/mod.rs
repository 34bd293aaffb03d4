//! A deterministic, varied conversation for trimming tests and benchmarks: questions with pasted
//! logs, prose answers with code, tool calls with JSON arguments and JSON results, some text in
//! other scripts. Shared by `tests/history.rs` and `benches/history.rs`.

#![allow(dead_code)]

use std::collections::HashSet;

use ctx_runtime::history::history_tokens;
use ctx_runtime::{ChatMessage, Role, TokenCounter, ToolCall};

/// xorshift64*: reproducible without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const SUBJECTS: &[&str] = &[
    "the connection pool",
    "our retry policy",
    "the billing service",
    "the nightly import job",
    "this migration",
    "the cache layer",
    "the auth middleware",
    "the CSV exporter",
    "the search index",
    "the rate limiter",
    "the Kafka consumer",
    "the PDF renderer",
    "the GraphQL resolver",
    "the cron scheduler",
    "the S3 uploader",
];
const VERBS: &[&str] = &[
    "times out",
    "leaks memory",
    "returns stale data",
    "deadlocks under load",
    "drops messages",
    "double-charges customers",
    "ignores the config",
    "crashes on empty input",
    "blocks the event loop",
];
const FILLER: &[&str] = &[
    "In practice this depends on how the service is deployed.",
    "The simplest fix is to make the timeout configurable and log when it fires.",
    "You can verify this by running the integration suite with tracing enabled.",
    "Keep in mind that the default isolation level is READ COMMITTED.",
    "Note that the client reuses connections, so a slow handler starves the others.",
    "If the queue grows without bound, back-pressure is missing somewhere upstream.",
    "A bounded channel with a capacity of a few hundred items is usually enough.",
    "Measure before and after; p99 latency tells more than the average.",
    "The error message is misleading: the real cause is the expired certificate.",
    "Idempotency keys make the retry safe even when the first attempt succeeded.",
];
const FOREIGN: &[&str] = &[
    "Příliš žluťoučký kůň úpěl ďábelské ódy.",
    "Die Verbindung wurde vom Server unerwartet geschlossen.",
    "設定ファイルのパスが正しいか確認してください。",
    "La requête a échoué après trois tentatives.",
    "Запрос завершился с ошибкой тайм-аута.",
];
const IDENTS: &[&str] =
    &["user_id", "order_total", "retry_count", "created_at", "tenant", "invoice_no", "max_conns", "batch_size"];

fn sentence(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => rng.pick(FOREIGN).to_owned(),
        1 | 2 => format!(
            "It looks like {} {} when {} is above {}.",
            rng.pick(SUBJECTS),
            rng.pick(VERBS),
            rng.pick(IDENTS),
            rng.below(10_000)
        ),
        _ => rng.pick(FILLER).to_owned(),
    }
}

/// Between `min` and `min + spread - 1` sentences.
fn paragraph(rng: &mut Rng, min: usize, spread: usize) -> String {
    let sentences = min + rng.below(spread);
    (0..sentences).map(|_| sentence(rng)).collect::<Vec<_>>().join(" ")
}

fn code_block(rng: &mut Rng) -> String {
    let a = rng.pick(IDENTS);
    let b = rng.pick(IDENTS);
    match rng.below(3) {
        0 => format!(
            "```sql\nSELECT {a}, COUNT(*) AS n\nFROM orders o\nJOIN customers c ON c.id = o.customer_id\nWHERE o.{b} > {}\nGROUP BY {a}\nORDER BY n DESC\nLIMIT {};\n```",
            rng.below(5000),
            rng.below(100) + 1
        ),
        1 => format!(
            "```rust\nfn handle(req: Request) -> Result<Response, Error> {{\n    let {a} = req.param(\"{a}\")?.parse::<u64>()?;\n    let {b} = db.fetch({a}).await.map_err(Error::Db)?;\n    if {b}.len() > {} {{\n        return Err(Error::TooLarge);\n    }}\n    Ok(Response::json(&{b}))\n}}\n```",
            rng.below(1000)
        ),
        _ => format!(
            "```python\ndef process({a}, {b}=None):\n    for i in range({}):\n        if {a}[i] is None:\n            continue\n        yield {{\"{b}\": {a}[i] * {}}}\n```",
            rng.below(500),
            rng.below(9) + 2
        ),
    }
}

/// Between `min` and `min + spread - 1` log lines.
fn log_lines(rng: &mut Rng, min: usize, spread: usize) -> String {
    let n = min + rng.below(spread);
    (0..n)
        .map(|i| {
            format!(
                "2024-03-{:02}T{:02}:{:02}:{:02}.{:03}Z ERROR [{}] {} {}: {}={} (attempt {}/5)",
                rng.below(28) + 1,
                rng.below(24),
                rng.below(60),
                rng.below(60),
                rng.below(1000),
                rng.pick(SUBJECTS).replace(' ', "_"),
                rng.pick(VERBS),
                i,
                rng.pick(IDENTS),
                rng.next() % 100_000,
                rng.below(5) + 1
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Between `min` and `min + spread - 1` result rows.
fn json_result(rng: &mut Rng, min: usize, spread: usize) -> String {
    let rows = min + rng.below(spread);
    let items: Vec<String> = (0..rows)
        .map(|i| {
            format!(
                "{{\"id\":\"doc-{:06}\",\"score\":0.{:04},\"title\":\"{} {}\",\"url\":\"https://kb.example.com/a/{}\",\"snippet\":\"{}\"}}",
                rng.below(1_000_000),
                rng.below(10_000),
                rng.pick(SUBJECTS),
                rng.pick(VERBS),
                i * 7 + rng.below(7),
                paragraph(rng, 2, 3).replace('"', "'")
            )
        })
        .collect();
    format!("{{\"results\":[{}],\"total\":{}}}", items.join(","), rows + rng.below(50))
}

/// The next group of messages: a user question, or an answer, or a tool call with its results.
fn next_group(rng: &mut Rng, n: usize) -> Vec<ChatMessage> {
    match rng.below(10) {
        0..=2 => {
            let mut q = format!("Why does {} {}? {}", rng.pick(SUBJECTS), rng.pick(VERBS), paragraph(rng, 1, 3));
            if rng.below(3) == 0 {
                q.push_str("\n\nHere is the log:\n");
                q.push_str(&log_lines(rng, 3, 25));
            }
            vec![ChatMessage::user(q)]
        }
        3..=6 => {
            let mut a = paragraph(rng, 2, 8);
            for _ in 0..rng.below(3) {
                a.push_str("\n\n");
                a.push_str(&code_block(rng));
                a.push_str("\n\n");
                a.push_str(&paragraph(rng, 1, 4));
            }
            vec![ChatMessage::assistant(a)]
        }
        _ => {
            let calls: Vec<ToolCall> = (0..1 + rng.below(3))
                .map(|k| {
                    ToolCall::new(
                        format!("call_{n}_{k}"),
                        ["search_kb", "get_logs", "query_db"][rng.below(3)].to_owned(),
                        format!(
                            "{{\"query\":\"{} {}\",\"top_k\":{}}}",
                            rng.pick(SUBJECTS),
                            rng.pick(VERBS),
                            rng.below(20) + 1
                        ),
                    )
                })
                .collect();
            let mut group = vec![ChatMessage::assistant_tool_calls("", calls.clone())];
            for call in &calls {
                let body = if call.name == "get_logs" { log_lines(rng, 5, 40) } else { json_result(rng, 1, 8) };
                group.push(ChatMessage::tool_result(call.id.clone(), body));
            }
            group
        }
    }
}

/// A conversation of at least `target_tokens` tokens (as [`ctx_runtime::history::history_tokens`] counts it), built
/// from `seed`; returns it with its exact total.
pub fn conversation(counter: &TokenCounter, target_tokens: usize, seed: u64) -> (Vec<ChatMessage>, usize) {
    let mut rng = Rng::new(seed);
    let mut history = Vec::new();
    let mut total = 0;
    let mut n = 0;
    while total < target_tokens {
        // A group holds its tool calls together with their results, so its messages cost the
        // same here as anywhere in the conversation.
        let group = next_group(&mut rng, n);
        total += counter.message_costs(&group).expect("counting generated text").iter().sum::<usize>();
        history.extend(group);
        n += 1;
    }
    (history, total)
}

/// Every tool result in `kept` answers a call made earlier in `kept`.
pub fn no_orphans(kept: &[ChatMessage]) -> bool {
    let mut calls: HashSet<&str> = HashSet::new();
    for m in kept {
        if m.role == Role::Tool && !m.tool_call_id.as_deref().is_some_and(|id| calls.contains(id)) {
            return false;
        }
        calls.extend(m.tool_calls.iter().map(|c| c.id.as_str()));
    }
    true
}

/// The naive trim the tests and the benchmark compare with: drop one message at a time,
/// recounting the whole kept part each time.
pub fn naive_trim(history: &[ChatMessage], max: usize, counter: &TokenCounter) -> usize {
    let mut first = 0;
    while first < history.len() {
        let kept = &history[first..];
        if no_orphans(kept) && history_tokens(counter, kept).unwrap() <= max {
            return first;
        }
        first += 1;
    }
    history.len()
}
