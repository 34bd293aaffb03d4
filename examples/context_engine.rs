//! The context engine spec's four examples — basic usage, a retriever pack, expansion by paging,
//! compaction — declared with `context_engine!` (checked when compiled, by the same rules the
//! assembler applies) and run offline over a small in-memory help-centre corpus ranked with BM25.
//!
//! Every count printed is the exact token count (cl100k_base, OpenAI chat overhead included) of
//! the messages that would be sent. Run with `cargo run --example context_engine`; `cargo test`
//! runs it too and checks what it prints.

use std::sync::{Arc, Mutex};

use ctx::engine::*;
use ctx::retrieve::Bm25Index;
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
    index: Bm25Index,
    requests: Mutex<Vec<ContextRetrieverRequest>>,
}

impl HelpCentre {
    fn new() -> Arc<Self> {
        Arc::new(HelpCentre { index: Bm25Index::from_documents(ARTICLES), requests: Mutex::new(Vec::new()) })
    }

    fn take_requests(&self) -> Vec<ContextRetrieverRequest> {
        self.requests.lock().map(|mut r| std::mem::take(&mut *r)).unwrap_or_default()
    }
}

impl Retriever for HelpCentre {
    async fn retrieve(&self, request: &ContextRetrieverRequest) -> Result<ContextPack, RetrieverError> {
        self.requests.lock().map_err(|e| e.to_string())?.push(request.clone());
        // Best first, equal scores ordered by id, so pages are stable.
        let hits = self.index.search(&request.query, ARTICLES.len());
        let blocks = hits
            .into_iter()
            .skip(request.offset)
            .take(request.limit)
            .filter_map(|hit| {
                let text = self.index.text(&hit.id)?.to_owned();
                Some(ContextPackBlock::new(hit.id, text).with_metadata("score", hit.score))
            })
            .collect();
        Ok(ContextPack::new(blocks))
    }
}

// The four declarations, checked when compiled: a ratio out of (0, 1], a retriever or template
// variable that is not declared, an unknown compactor or a misspelt key would each be a compile
// error under its token.

ctx::context_engine! {
    /// 1. Basic usage: a system message and a user template.
    fn basic {
        contexts {
            support {
                inputs: [question],
                messages: [system: "You are a support agent.", user: "Question: {input.question}"],
            }
        }
    }
}

ctx::context_engine! {
    /// 2. A retriever pack under the spec's budget of 10, which the spec counts in words.
    fn retriever_pack_10 {
        retrievers { kb_search { query: "{input.question}", limit: 1 } }
        contexts {
            support {
                inputs: [question],
                policy { input_budget { max_tokens: 10 }, pack_budget { default_ratio: 1.0 }, overflow: error },
                messages: [system: "Use this context.", context: kb_search, user: "Question"],
            }
        }
    }
}

ctx::context_engine! {
    /// 2. The same pack with room for it.
    fn retriever_pack_60 {
        retrievers { kb_search { query: "{input.question}", limit: 1 } }
        contexts {
            support {
                inputs: [question],
                policy { input_budget { max_tokens: 60 }, pack_budget { default_ratio: 1.0 }, overflow: error },
                messages: [system: "Use this context.", context: kb_search, user: "Question"],
            }
        }
    }
}

ctx::context_engine! {
    /// 3. Expansion: pages of two articles until half of what the fixed messages leave is used.
    fn expansion {
        retrievers { kb_search { query: "{input.question}", limit: 2 } }
        contexts {
            support {
                inputs: [question],
                policy {
                    input_budget { max_tokens: 200 },
                    pack_budget { default_ratio: 0.5 },
                    overflow: error,
                    expansion { max_pages: 3, min_fill_ratio: 1.0 },
                },
                messages: [
                    system: "Answer from the articles.",
                    context: kb_search,
                    user: "Question: {input.question}",
                ],
            }
        }
    }
}

ctx::context_engine! {
    /// 4. Compaction: a budget too small for the best article; `truncate` cuts it token-exactly.
    fn compaction {
        retrievers { kb_search { query: "{input.question}", limit: 2 } }
        contexts {
            support {
                inputs: [question],
                policy { input_budget { max_tokens: 50 }, overflow: compact, compactor: truncate },
                messages: [
                    system: "Answer from the articles.",
                    context: kb_search,
                    history,
                    user: "Question: {input.question}",
                ],
            }
        }
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
    let engine = ContextAssembler::builder(basic(), counter.clone()).build()?;
    show(&mut out, "basic", &engine.assemble("support", &question).await?);

    // 2. A retriever pack: the spec's budget of 10 is counted in words there; exact counts show
    //    the two fixed messages alone need more.
    let engine =
        ContextAssembler::builder(retriever_pack_10(), counter.clone()).retriever("kb_search", help.clone()).build()?;
    match engine.assemble("support", &question).await {
        Err(e) => out.push(format!("== retriever pack, budget 10\nerror: {e}")),
        Ok(a) => show(&mut out, "retriever pack, budget 10", &a),
    }
    let engine =
        ContextAssembler::builder(retriever_pack_60(), counter.clone()).retriever("kb_search", help.clone()).build()?;
    show(&mut out, "retriever pack, budget 60", &engine.assemble("support", &question).await?);
    help.take_requests();

    // 3. Expansion.
    let engine =
        ContextAssembler::builder(expansion(), counter.clone()).retriever("kb_search", help.clone()).build()?;
    show(&mut out, "expansion", &engine.assemble("support", &question).await?);
    for r in help.take_requests() {
        out.push(format!("request offset {} limit {} max_tokens {:?}", r.offset, r.limit, r.max_tokens));
    }

    // 4. Compaction.
    let engine = ContextAssembler::builder(compaction(), counter).retriever("kb_search", help).build()?;
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
