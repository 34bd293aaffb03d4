//! Shared by the engine integration tests: an offline, deterministic retriever over an
//! in-memory corpus, and small builders.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use ctx_runtime::engine::*;
use ctx_runtime::tokens::{Encoding, TokenCounter};

pub fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

/// Ranks documents by how many distinct query words they contain (ties by id), pages them with
/// `offset`/`limit`, and — when `respect_budget` — stops before the joined page would exceed
/// `max_tokens` (always returning at least one block, so an oversized first block reaches the
/// engine). Records every request.
pub struct CorpusRetriever {
    docs: Vec<(String, String)>,
    respect_budget: bool,
    counter: TokenCounter,
    pub requests: Mutex<Vec<ContextRetrieverRequest>>,
}

impl CorpusRetriever {
    pub fn new(docs: &[(&str, &str)], respect_budget: bool) -> Arc<Self> {
        Arc::new(CorpusRetriever {
            docs: docs.iter().map(|(id, text)| (id.to_string(), text.to_string())).collect(),
            respect_budget,
            counter: counter(),
            requests: Mutex::new(Vec::new()),
        })
    }

    pub fn requests(&self) -> Vec<ContextRetrieverRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Retriever for CorpusRetriever {
    async fn retrieve(&self, request: &ContextRetrieverRequest) -> Result<ContextPack, RetrieverError> {
        self.requests.lock().map_err(|e| e.to_string())?.push(request.clone());
        let words: Vec<String> = request.query.to_lowercase().split_whitespace().map(str::to_owned).collect();
        let mut ranked: Vec<(usize, &(String, String))> = self
            .docs
            .iter()
            .map(|doc| {
                let text = doc.1.to_lowercase();
                (words.iter().filter(|w| text.contains(w.as_str())).count(), doc)
            })
            .filter(|(score, _)| words.is_empty() || *score > 0)
            .collect();
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.0.cmp(&b.1.0)));
        let mut blocks: Vec<ContextPackBlock> = Vec::new();
        for (score, (id, text)) in ranked.into_iter().skip(request.offset).take(request.limit) {
            let block = ContextPackBlock::new(id.clone(), text.clone()).with_metadata("score", score);
            if self.respect_budget
                && !blocks.is_empty()
                && let Some(max) = request.max_tokens
            {
                let joined = join_blocks(blocks.iter().chain([&block]).map(|b| b.text.as_str()));
                if !self.counter.fits(&joined, max)? {
                    break;
                }
            }
            blocks.push(block);
        }
        Ok(ContextPack::new(blocks))
    }
}

pub fn system(t: &str) -> MessageSpec {
    MessageSpec::System { content: t.into() }
}

pub fn user(t: &str) -> MessageSpec {
    MessageSpec::User { content: t.into() }
}

pub fn pack(name: &str) -> MessageSpec {
    MessageSpec::Context(ContextInsert::new(name))
}

pub fn budget_policy(max_tokens: i64, overflow: &str) -> ContextPolicySpec {
    ContextPolicySpec {
        input_budget: Some(InputBudgetSpec { max_tokens }),
        overflow: Some(overflow.into()),
        ..Default::default()
    }
}

pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().build().expect("a current-thread runtime").block_on(f)
}
