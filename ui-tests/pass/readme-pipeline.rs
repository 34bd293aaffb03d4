// A crate whose one dependency is `ctx` declares the README's pipeline, implements its custom
// step through the generated trait, plugs in its backends through the generated environment,
// and runs it to the end (trybuild builds and runs this file as such a crate).
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use ctx::budget::NODE_HEADER;
use ctx::llm::offline::OfflineModel;
use ctx::pipeline::{BoxError, NodeSearch, NodeStore, StepDetail};
use ctx::state::SearchHit;
use ctx::{CtxError, NodeText, PipelineState};

ctx::pipeline! {
    /// Answers questions about a small invoicing code base.
    pub pipeline CodebaseQa {
        model { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base }
        settings {
            max_context_tokens: 4_000,
            max_history_tokens: 1_000,
            budget_safety_margin_tokens: 128,
            max_turn_loops: 2,
            max_evidence_batches: 2,
        }
        prompts {
            answer: "Answer from the context only; quote identifiers verbatim.",
            summarizer: "Summarise the context; keep identifiers and SQL verbatim.",
        }
        steps {
            search: search_nodes { top_k: 8, next: expand },
            expand: expand_dependency_tree { max_depth: 1, next: fetch },
            fetch: fetch_node_texts { max_tokens: 1_800, next: manage_budget },
            manage_budget: manage_context_budget {
                compact_code: [
                    { language: sql, policy: threshold, threshold: 0.5 },
                    { language: dotnet, policy: always },
                ],
                divide_new_content: "<<<New content",
                on_ok: next_batch,
                on_over: budget_loop_guard,
            },
            next_batch: custom { outcomes { more => evidence_guard, done => answer } },
            evidence_guard: loop_guard {
                max_turn_loops_from_settings: max_evidence_batches,
                on_allow: fetch,
                on_deny: answer,
            },
            budget_loop_guard: loop_guard {
                max_turn_loops_from_settings: max_turn_loops,
                on_allow: summarize,
                on_deny: answer,
            },
            summarize: call_model {
                prompt_key: summarizer,
                max_output_tokens: 1_200,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                next: set_context_from_summary,
            },
            set_context_from_summary: set_variables {
                rules: [ context_blocks <- last_model_response | to_context_blocks, last_model_response = null ],
                next: manage_budget,
            },
            answer: call_model {
                prompt_key: answer,
                use_history: true,
                max_output_tokens: 700,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                next: end,
            },
        }
    }
}

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

#[ctx::async_trait]
impl NodeSearch for Code {
    async fn search(&self, _query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        Ok(self.0.keys().take(top_k).map(|id| SearchHit { id: (*id).to_owned(), score: 1.0 }).collect())
    }
}

#[ctx::async_trait]
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

/// The custom step: drop the hits already in the context, go on while some are left.
struct Steps;

impl CodebaseQaCustom for Steps {
    async fn next_batch(&self, state: &mut PipelineState) -> Result<NextBatchOutcome, CtxError> {
        let context = state.context_blocks.join("\n");
        let read: Vec<String> = context
            .split(NODE_HEADER)
            .filter_map(|node| node.lines().find_map(|l| l.strip_prefix("id: ")).map(str::to_owned))
            .collect();
        state.search_results.retain(|hit| !read.contains(&hit.id));
        Ok(if state.search_results.is_empty() { NextBatchOutcome::Done } else { NextBatchOutcome::More })
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
    let env = CodebaseQaEnv { search: &code, store: &code, model: &model, custom: &Steps };
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
