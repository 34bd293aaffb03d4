//! The context engine spec's four examples — basic usage, a retriever pack, expansion by paging,
//! compaction — run offline over a small in-memory help-centre corpus ranked with BM25.
//!
//! Every count printed is the exact token count (cl100k_base, OpenAI chat overhead included) of
//! the messages that would be sent. Run with `cargo run --example context_engine`; `cargo test`
//! runs it too and checks what it prints.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bm25::{Document, Language, SearchEngine, SearchEngineBuilder};
use ctx::engine::*;
use ctx::tokens::{Encoding, TokenCounter};

const ARTICLES: [(&str, &str); 8] = [
    (
        "track",
        "Track an order: open Orders, pick the order and choose Track parcel. Tracking starts once the order ships.",
    ),
    ("late", "A late order is one not delivered within 5 working days of shipping. Contact us with the order number."),
    ("returns", "Returns are free within 30 days of delivery. Items must be unused and in their original packaging."),
    ("refunds", "Refunds reach your card 5 to 10 days after the return arrives at our warehouse."),
    ("address", "You can change the delivery address of an order until it ships, from the order page."),
    ("cancel", "Cancel an order from the order page before it ships; after that, return it instead."),
    ("gift", "Gift cards cannot be refunded or exchanged for cash and never expire."),
    ("customs", "Orders shipped abroad may be held at customs; the carrier contacts you about duties."),
];

/// BM25 over the articles, paged with offset/limit; records the requests it receives.
struct HelpCentre {
    engine: SearchEngine<String>,
    requests: Mutex<Vec<ContextRetrieverRequest>>,
}

impl HelpCentre {
    fn new() -> Arc<Self> {
        let documents = ARTICLES.iter().map(|(id, text)| Document { id: id.to_string(), contents: text.to_string() });
        let engine = SearchEngineBuilder::<String>::with_documents(Language::English, documents).build();
        Arc::new(HelpCentre { engine, requests: Mutex::new(Vec::new()) })
    }

    fn take_requests(&self) -> Vec<ContextRetrieverRequest> {
        self.requests.lock().map(|mut r| std::mem::take(&mut *r)).unwrap_or_default()
    }
}

#[async_trait]
impl Retriever for HelpCentre {
    async fn retrieve(&self, request: &ContextRetrieverRequest) -> Result<ContextPack, RetrieverError> {
        self.requests.lock().map_err(|e| e.to_string())?.push(request.clone());
        let mut hits = self.engine.search(&request.query, ARTICLES.len());
        // Equal scores are ordered by id, so pages are stable.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.document.id.cmp(&b.document.id)));
        let blocks = hits
            .into_iter()
            .skip(request.offset)
            .take(request.limit)
            .map(|hit| ContextPackBlock::new(hit.document.id, hit.document.contents).with_metadata("score", hit.score))
            .collect();
        Ok(ContextPack::new(blocks))
    }
}

fn support(policy: Option<ContextPolicySpec>, messages: Vec<MessageSpec>) -> ContextDeclaration {
    ContextDeclaration { name: "support".into(), inputs: vec!["question".into()], policy, messages }
}

fn system(text: &str) -> MessageSpec {
    MessageSpec::System { content: text.into() }
}

fn user(text: &str) -> MessageSpec {
    MessageSpec::User { content: text.into() }
}

fn kb_search(limit: i64) -> RetrieverDecl {
    RetrieverDecl { name: "kb_search".into(), query: "{input.question}".into(), limit }
}

fn policy(max_tokens: i64, overflow: &str) -> ContextPolicySpec {
    ContextPolicySpec {
        input_budget: Some(InputBudgetSpec { max_tokens }),
        overflow: Some(overflow.into()),
        ..Default::default()
    }
}

fn show(out: &mut Vec<String>, title: &str, assembly: &ContextAssembly) {
    out.push(format!("== {title}"));
    for message in assembly.messages() {
        out.push(format!("[{}] {}", message.role.as_str(), message.content.replace('\n', "⏎")));
    }
    let r = &assembly.report;
    let budget = r.max_tokens.map_or_else(|| "unbounded".to_owned(), |b| b.to_string());
    out.push(format!("tokens: {} of {budget} (fixed {})", r.total_tokens, r.fixed_tokens));
    for p in &r.packs {
        out.push(format!(
            "pack {}: {} tokens of {:?}, {} page(s), included {:?}, compacted: {}",
            p.name, p.tokens, p.allocation, p.pages, p.included, p.compacted
        ));
    }
}

/// Runs the four examples and returns what they print.
async fn run() -> Result<Vec<String>, EngineError> {
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let help = HelpCentre::new();
    let question = AssemblyInput::new().input("question", "my order is late, where is it");
    let mut out = Vec::new();

    // 1. Basic usage.
    let spec = EngineSpec {
        contexts: vec![support(None, vec![system("You are a support agent."), user("Question: {input.question}")])],
        ..Default::default()
    };
    let engine = ContextAssembler::builder(spec, counter.clone()).build()?;
    show(&mut out, "basic", &engine.assemble("support", &question).await?);

    // 2. A retriever pack: the spec's budget of 10 is counted in words there; exact counts show
    //    the two fixed messages alone need more.
    let retriever_spec = |max_tokens| EngineSpec {
        contexts: vec![support(
            Some(ContextPolicySpec {
                pack_budget: Some(PackBudgetSpec { default_ratio: Some(1.0) }),
                ..policy(max_tokens, "error")
            }),
            vec![system("Use this context."), MessageSpec::Context(ContextInsert::new("kb_search")), user("Question")],
        )],
        retrievers: vec![kb_search(1)],
        compactors: vec![],
    };
    let engine =
        ContextAssembler::builder(retriever_spec(10), counter.clone()).retriever("kb_search", help.clone()).build()?;
    match engine.assemble("support", &question).await {
        Err(e) => out.push(format!("== retriever pack, budget 10\nerror: {e}")),
        Ok(a) => show(&mut out, "retriever pack, budget 10", &a),
    }
    let engine =
        ContextAssembler::builder(retriever_spec(60), counter.clone()).retriever("kb_search", help.clone()).build()?;
    show(&mut out, "retriever pack, budget 60", &engine.assemble("support", &question).await?);
    help.take_requests();

    // 3. Expansion: pages of two articles until half of what the fixed messages leave is used.
    let spec = EngineSpec {
        contexts: vec![support(
            Some(ContextPolicySpec {
                pack_budget: Some(PackBudgetSpec { default_ratio: Some(0.5) }),
                expansion: Some(ExpansionSpec { max_pages: 3, min_fill_ratio: 1.0 }),
                ..policy(200, "error")
            }),
            vec![
                system("Answer from the articles."),
                MessageSpec::Context(ContextInsert::new("kb_search")),
                user("Question: {input.question}"),
            ],
        )],
        retrievers: vec![kb_search(2)],
        compactors: vec![],
    };
    let engine = ContextAssembler::builder(spec, counter.clone()).retriever("kb_search", help.clone()).build()?;
    show(&mut out, "expansion", &engine.assemble("support", &question).await?);
    for r in help.take_requests() {
        out.push(format!("request offset {} limit {} max_tokens {:?}", r.offset, r.limit, r.max_tokens));
    }

    // 4. Compaction: a budget too small for the best article; `truncate` cuts it token-exactly.
    let spec = EngineSpec {
        contexts: vec![support(
            Some(ContextPolicySpec {
                compactor: Some(CompactorSpec { name: TRUNCATE.into() }),
                ..policy(50, "compact")
            }),
            vec![
                system("Answer from the articles."),
                MessageSpec::Context(ContextInsert::new("kb_search")),
                MessageSpec::History,
                user("Question: {input.question}"),
            ],
        )],
        retrievers: vec![kb_search(2)],
        compactors: vec![],
    };
    let engine = ContextAssembler::builder(spec, counter).retriever("kb_search", help).build()?;
    show(&mut out, "compaction", &engine.assemble("support", &question).await?);
    Ok(out)
}

#[cfg_attr(test, allow(dead_code))]
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), EngineError> {
    for line in run().await? {
        println!("{line}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_examples_run_within_their_budgets() {
        let lines = run().await.unwrap();
        let text = lines.join("\n");
        // Deterministic: a second run prints the same.
        assert_eq!(run().await.unwrap(), lines);
        assert!(
            text.contains("== basic\n[system] You are a support agent.\n[user] Question: my order is late"),
            "{text}"
        );
        assert!(text.contains("error: context `support`: the fixed messages alone are 16 tokens"), "{text}");
        assert!(text.contains("request offset 0 limit 2") && text.contains("request offset 2 limit 2"), "{text}");
        for line in lines.iter().filter(|l| l.starts_with("tokens: ")) {
            let mut numbers = line.split_whitespace().filter_map(|w| w.parse::<usize>().ok());
            let (used, budget) = (numbers.next().unwrap(), numbers.next());
            assert!(budget.is_none_or(|b| used <= b), "{line}");
        }
        assert!(text.contains("compacted: true"), "{text}");
    }
}
