// A crate whose one dependency is `ctx` declares the pipeline of the guide's worked example and
// implements its custom step through the generated trait (both in
// examples/rag_pipeline/pipeline.rs), plugs in its backends through the generated environment,
// and runs it to the end (trybuild builds and runs this file as such a crate).
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use ctx::llm::offline::OfflineModel;
use ctx::pipeline::{BoxError, NodeSearch, NodeStore, StepDetail};
use ctx::state::SearchHit;
use ctx::{NodeText, PipelineState};

// The worked example's pipeline (docs/tour.md), from the example's own file: `ctx::pipeline!`
// with its prompts, and `NextBatch`, which implements the generated `CodebaseQaCustom`.
#[path = "../../examples/rag_pipeline/pipeline.rs"]
mod pipeline;

use pipeline::{CodebaseQa, CodebaseQaEnv, CodebaseQaStep, NextBatch};

/// Three files, one hit a batch: `next_batch` moves on until every hit was read.
struct Code(BTreeMap<&'static str, (&'static str, &'static str)>);

impl Code {
    fn new() -> Self {
        Code(BTreeMap::from([
            ("total.sql", ("sql/total.sql", "CREATE PROCEDURE dbo.usp_Total AS SELECT SUM(Amount) FROM dbo.Lines;")),
            ("round.sql", ("sql/round.sql", "CREATE FUNCTION dbo.fn_Round(@a DECIMAL(19,4)) RETURNS DECIMAL(19,2) AS BEGIN RETURN ROUND(@a, 2) END")),
            ("Invoice.cs", ("src/Invoice.cs", "public sealed class Invoice { /* the total */ public decimal Total { get; set; } }")),
        ]))
    }
}

impl NodeSearch for Code {
    async fn search(&self, _query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        Ok(self.0.keys().take(top_k).map(|id| SearchHit::new(*id, 1.0)).collect())
    }
}

impl NodeStore for Code {
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        // One text a batch, so that the evidence loop runs.
        Ok(ids
            .iter()
            .filter_map(|id| self.0.get(id.as_str()).map(|(path, text)| NodeText::new(id.clone(), *text).with_path(*path)))
            .take(1)
            .collect())
    }

    async fn dependencies(&self, _id: &str) -> Result<Vec<String>, BoxError> {
        Ok(Vec::new())
    }
}

/// Every backend here answers at once, so polling once with a no-op waker finishes each future.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

fn main() {
    let qa = CodebaseQa::new().expect("checked when compiled, so it loads");
    let code = Code::new();
    let model = OfflineModel::default();
    // One field per declared model; one client serves both.
    let env =
        CodebaseQaEnv { search: &code, store: &code, model_small: &model, model_strong: &model, custom: &NextBatch };
    let (state, reports) = block_on(qa.run(PipelineState::new("How is the invoice total computed?"), &env))
        .expect("the pipeline runs to the end");
    let outcomes: Vec<&str> = reports
        .iter()
        .filter_map(|r| match &r.detail {
            StepDetail::Custom { outcome } => Some(outcome.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(outcomes, ["more", "more", "done"], "one batch a hit, three hits");
    assert_eq!(reports.last().map(|r| r.step_id.as_str()), Some("answer"));
    assert!(state.last_model_response.is_some_and(|a| !a.is_empty()));
    assert_eq!(CodebaseQaStep::FIRST, CodebaseQaStep::Search);
    assert!(CodebaseQa::MERMAID.contains("next_batch"));
}
