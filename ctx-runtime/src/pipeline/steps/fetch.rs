//! `fetch_node_texts`: the texts of the hits, best first, within the step's evidence budget.
//!
//! The evidence budget (`max_tokens`) bounds the sum of the exact token counts of the raw texts,
//! each counted on its own. That is the step's definition of the budget, not an estimate of a
//! rendered whole: `manage_context_budget` counts the texts again as it formats them, against the
//! global budget, so nothing here needs to predict the formatted size.
//!
//! Rules, applied to the hits in rank order (`search_results`, repeated ids ignored):
//! * a hit the store has no text for is skipped ([`SkipReason::NotFound`]);
//! * an empty or whitespace-only text is skipped ([`SkipReason::Empty`]);
//! * a text larger than what remains of the budget is skipped ([`SkipReason::OverBudget`]) and
//!   the next hits are still tried, so a smaller, lower-ranked text can use the room left;
//! * once the budget is used up exactly, the remaining hits are skipped without being counted
//!   ([`SkipReason::BudgetExhausted`]): no non-empty text has zero tokens.
//!
//! The kept texts replace `node_texts`, in rank order. Texts the store returns for ids that were
//! not asked for are ignored.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::error::CtxError;
use crate::pipeline::definition::FetchSpec;
use crate::pipeline::driver::StepEnv;
use crate::pipeline::error::PipelineError;
use crate::pipeline::loaded::LoadedPipeline;
use crate::state::{NodeText, PipelineState};

use super::{Done, StepDetail, Transition, need};

/// Why a hit's text was not fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SkipReason {
    /// The store has no text for it.
    NotFound,
    /// Its text is empty or only whitespace.
    Empty,
    /// Its text has more tokens than the `remaining` budget.
    OverBudget {
        /// The budget left when it was tried.
        remaining: usize,
    },
    /// The budget was used up before its turn.
    BudgetExhausted,
}

/// A hit whose text was not fetched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedNode {
    /// The node id.
    pub id: String,
    /// Why.
    pub reason: SkipReason,
}

/// What `fetch_node_texts` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FetchReport {
    /// The ids whose texts are now in `node_texts`, in rank order.
    pub fetched: Vec<String>,
    /// The sum of their token counts (each text counted on its own).
    pub tokens: usize,
    /// The evidence budget (`max_tokens`).
    pub budget: usize,
    /// The hits left out, in rank order.
    pub skipped: Vec<SkippedNode>,
}

pub(crate) async fn fetch_node_texts(
    p: &LoadedPipeline,
    step: &str,
    spec: &FetchSpec,
    state: &mut PipelineState,
    env: &StepEnv<'_>,
) -> Result<Done, CtxError> {
    let store = need(env.store_backend(), step, "fetch_node_texts", "NodeStore", "store")?;
    let budget = usize::try_from(spec.max_tokens).unwrap_or(0);
    let mut seen = HashSet::new();
    let ids: Vec<String> =
        state.search_results.iter().map(|h| h.id.clone()).filter(|id| seen.insert(id.clone())).collect();
    let mut by_id: HashMap<String, NodeText> = HashMap::new();
    if !ids.is_empty() {
        let texts = store.texts(&ids).await.map_err(|source| PipelineError::Backend {
            step: step.to_owned(),
            backend: "NodeStore::texts",
            source,
        })?;
        for text in texts {
            if seen.contains(&text.id) {
                by_id.entry(text.id.clone()).or_insert(text);
            }
        }
    }
    let counter = p.counter();
    let mut remaining = budget;
    let mut kept = Vec::new();
    let mut report = FetchReport { fetched: Vec::new(), tokens: 0, budget, skipped: Vec::new() };
    for id in ids {
        let skip = |reason| SkippedNode { id: id.clone(), reason };
        if remaining == 0 {
            report.skipped.push(skip(SkipReason::BudgetExhausted));
            continue;
        }
        let Some(node) = by_id.remove(&id) else {
            report.skipped.push(skip(SkipReason::NotFound));
            continue;
        };
        if node.text.trim().is_empty() {
            report.skipped.push(skip(SkipReason::Empty));
            continue;
        }
        match counter.count_up_to(&node.text, remaining)? {
            Some(n) => {
                remaining -= n;
                report.tokens += n;
                report.fetched.push(id);
                kept.push(node);
            }
            None => report.skipped.push(skip(SkipReason::OverBudget { remaining })),
        }
    }
    tracing::debug!(
        fetched = report.fetched.len(),
        tokens = report.tokens,
        budget,
        skipped = report.skipped.len(),
        "fetch_node_texts"
    );
    state.node_texts = kept;
    Ok((Transition::Next, StepDetail::FetchNodeTexts(report)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::steps::test_backends::Graph;
    use crate::pipeline::testing;
    use crate::state::SearchHit;

    fn state_with_hits(ids: &[&str]) -> PipelineState {
        let mut s = PipelineState::new("q");
        s.search_results = ids.iter().map(|id| SearchHit { id: (*id).into(), score: 1.0 }).collect();
        s
    }

    fn spec(max_tokens: i64) -> FetchSpec {
        FetchSpec { max_tokens, next: "end".into() }
    }

    #[tokio::test]
    async fn keeps_rank_order_within_the_budget_and_tries_smaller_texts() {
        let p = testing::loaded(testing::def(vec![testing::fetch("f", "end")]));
        let counter = p.counter();
        let big = "SELECT customer_id, SUM(amount) FROM invoices GROUP BY customer_id HAVING SUM(amount) > 1000;";
        let small = "SELECT 1;";
        let medium = "UPDATE invoices SET paid = 1 WHERE id = @id;";
        let (nb, ns, nm) = (counter.count(big).unwrap(), counter.count(small).unwrap(), counter.count(medium).unwrap());
        assert!(nb > nm && nm > ns);
        let mut store = Graph::with_texts(&[("big", big), ("small", small), ("medium", medium), ("blank", " \n")]);
        store.unasked.push(NodeText::new("intruder", "not asked for"));
        let env = StepEnv::builder().store(&store);
        // Budget: medium + small fit, big does not once medium is in.
        let budget = nm + ns;
        let mut state = state_with_hits(&["medium", "missing", "big", "blank", "small", "medium"]);
        let (_, detail) = fetch_node_texts(&p, "f", &spec(budget as i64), &mut state, &env).await.unwrap();
        let ids: Vec<_> = state.node_texts.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["medium", "small"]);
        let StepDetail::FetchNodeTexts(report) = detail else { panic!("{detail:?}") };
        assert_eq!(report.tokens, nm + ns);
        assert_eq!(report.fetched, ["medium", "small"]);
        assert_eq!(
            report.skipped,
            vec![
                SkippedNode { id: "missing".into(), reason: SkipReason::NotFound },
                SkippedNode { id: "big".into(), reason: SkipReason::OverBudget { remaining: ns } },
                SkippedNode { id: "blank".into(), reason: SkipReason::Empty },
            ]
        );
        assert_eq!(state.node_texts[0].path.as_deref(), Some("medium.sql"));
    }

    #[tokio::test]
    async fn stops_once_the_budget_is_used_up_exactly() {
        let p = testing::loaded(testing::def(vec![testing::fetch("f", "end")]));
        let a = "SELECT a FROM t;";
        let n = p.counter().count(a).unwrap();
        let store = Graph::with_texts(&[("a", a), ("b", "SELECT b;")]);
        let env = StepEnv::builder().store(&store);
        let mut state = state_with_hits(&["a", "b"]);
        state.node_texts.push(NodeText::new("stale", "from an earlier fetch"));
        let (_, detail) = fetch_node_texts(&p, "f", &spec(n as i64), &mut state, &env).await.unwrap();
        let StepDetail::FetchNodeTexts(report) = detail else { panic!("{detail:?}") };
        assert_eq!(report.fetched, ["a"]);
        assert_eq!(report.skipped, vec![SkippedNode { id: "b".into(), reason: SkipReason::BudgetExhausted }]);
        // The buffer is replaced, not appended to.
        assert_eq!(state.node_texts.len(), 1);
    }

    #[tokio::test]
    async fn no_hits_means_no_store_call_and_an_empty_buffer() {
        let p = testing::loaded(testing::def(vec![testing::fetch("f", "end")]));
        let store = Graph { fail: Some("must not be called".into()), ..Graph::default() };
        let env = StepEnv::builder().store(&store);
        let mut state = state_with_hits(&[]);
        fetch_node_texts(&p, "f", &spec(10), &mut state, &env).await.unwrap();
        assert!(state.node_texts.is_empty());
        let mut state = state_with_hits(&["a"]);
        let err = fetch_node_texts(&p, "f", &spec(10), &mut state, &env).await.unwrap_err();
        assert!(err.to_string().contains("must not be called") && err.to_string().contains("`f`"), "{err}");
    }
}
