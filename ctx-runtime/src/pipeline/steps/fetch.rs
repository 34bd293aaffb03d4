//! `fetch_node_texts`: the texts of the hits, best first, within the step's evidence budget.
//!
//! The evidence budget (`evidence_tokens`) bounds the sum of the exact token counts of the raw
//! texts, each counted on its own. That is the step's definition of the budget, not an estimate
//! of a rendered whole: `manage_context_budget` counts the texts again as it formats them, against
//! the global budget, so nothing here needs to predict the formatted size.
//!
//! Rules, applied to the hits in rank order (`search_results`, repeated ids ignored):
//! * a hit the store has no text for is skipped ([`SkipReason::NotFound`]);
//! * an empty or whitespace-only text is skipped ([`SkipReason::Empty`]);
//! * a text larger than what remains of the budget is **truncated** at a token boundary to what
//!   remains ([`TruncatedNode`]), provided at least [`MIN_TRUNCATED_TOKENS`] remain: a higher
//!   ranked text is worth more than the ones after it, so its start is kept rather than the whole
//!   node dropped;
//! * when less than that remains, the text is skipped ([`SkipReason::OverBudget`]) and the next
//!   hits are still tried, so a smaller, lower-ranked text can use the room left;
//! * once the budget is used up exactly, the remaining hits are skipped without being counted
//!   ([`SkipReason::BudgetExhausted`]): no non-empty text has zero tokens.
//!
//! Nothing is left out quietly: every truncation and every skip is in the step's [`FetchReport`]
//! and is logged at INFO level with the step id. The kept texts replace `node_texts`, in rank
//! order. Texts the store returns for ids that were not asked for are ignored.

use std::collections::{HashMap, HashSet};

use crate::error::CtxError;
use crate::pipeline::Transition;
use crate::pipeline::definition::FetchSpec;
use crate::pipeline::env::{NodeStore, StepEnv, need};
use crate::pipeline::error::PipelineError;
use crate::pipeline::loaded::LoadedPipeline;
use crate::state::{NodeText, PipelineState};

use super::report::{Done, FetchReport, SkipReason, SkippedNode, StepDetail, TruncatedNode};

/// The least room, in tokens, worth filling with the truncated start of a text: below it a cut
/// node is a fragment that costs context without telling the model anything, so it is skipped
/// ([`SkipReason::OverBudget`]) instead.
pub const MIN_TRUNCATED_TOKENS: usize = 64;

/// The metadata key a truncated node carries: `{"original_tokens": …, "kept_tokens": …}`, so
/// that later steps (and the model, through a custom frame) can tell the text is incomplete.
pub const TRUNCATED_METADATA_KEY: &str = "truncated";

pub(crate) async fn fetch_node_texts(
    p: &LoadedPipeline,
    step: &str,
    spec: &FetchSpec,
    state: &mut PipelineState,
    env: &StepEnv<'_>,
) -> Result<Done, CtxError> {
    let store = need(env.store_backend(), step, "fetch_node_texts", "NodeStore", "store")?;
    let budget = usize::try_from(spec.evidence_tokens).unwrap_or(0);
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
    let mut report = FetchReport { fetched: Vec::new(), tokens: 0, budget, truncated: Vec::new(), skipped: Vec::new() };
    for id in ids {
        let reason = if remaining == 0 {
            SkipReason::BudgetExhausted
        } else {
            match by_id.remove(&id) {
                None => SkipReason::NotFound,
                Some(node) if node.text.trim().is_empty() => SkipReason::Empty,
                Some(mut node) => match counter.count_up_to(&node.text, remaining)? {
                    Some(n) => {
                        remaining -= n;
                        report.tokens += n;
                        report.fetched.push(id);
                        kept.push(node);
                        continue;
                    }
                    None if remaining >= MIN_TRUNCATED_TOKENS => {
                        let original_tokens = counter.count(&node.text)?;
                        let prefix = counter.truncate_to(&node.text, remaining)?;
                        let kept_tokens = counter.count(&prefix)?;
                        if prefix.trim().is_empty() {
                            SkipReason::OverBudget { remaining }
                        } else {
                            tracing::info!(
                                target: "ctx::pipeline",
                                step,
                                id = %id,
                                original_tokens,
                                kept_tokens,
                                remaining,
                                "fetch_node_texts: node truncated to fit the evidence budget"
                            );
                            node.text = prefix;
                            node.metadata.insert(
                                TRUNCATED_METADATA_KEY.to_owned(),
                                serde_json::json!({ "original_tokens": original_tokens, "kept_tokens": kept_tokens }),
                            );
                            remaining -= kept_tokens;
                            report.tokens += kept_tokens;
                            report.truncated.push(TruncatedNode { id: id.clone(), original_tokens, kept_tokens });
                            report.fetched.push(id);
                            kept.push(node);
                            continue;
                        }
                    }
                    None => SkipReason::OverBudget { remaining },
                },
            }
        };
        tracing::info!(target: "ctx::pipeline", step, id = %id, reason = ?reason, "fetch_node_texts: node skipped");
        report.skipped.push(SkippedNode { id, reason });
    }
    tracing::info!(
        target: "ctx::pipeline",
        step,
        fetched = report.fetched.len(),
        tokens = report.tokens,
        budget,
        truncated = report.truncated.len(),
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

    /// A report written as JSON names why a hit was skipped as the files name things.
    #[test]
    fn skip_reasons_serialise_in_snake_case() {
        let json = |r: SkipReason| serde_json::to_value(r).unwrap();
        assert_eq!(json(SkipReason::NotFound), serde_json::json!("not_found"));
        assert_eq!(json(SkipReason::BudgetExhausted), serde_json::json!("budget_exhausted"));
        assert_eq!(
            json(SkipReason::OverBudget { remaining: 3 }),
            serde_json::json!({ "over_budget": { "remaining": 3 } })
        );
    }

    fn state_with_hits(ids: &[&str]) -> PipelineState {
        let mut s = PipelineState::new("q");
        s.search_results = ids.iter().map(|id| SearchHit::new(*id, 1.0)).collect();
        s
    }

    fn spec(evidence_tokens: i64) -> FetchSpec {
        FetchSpec::new(evidence_tokens, "end")
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

#[cfg(test)]
mod truncation_tests {
    use proptest::prelude::*;

    use super::*;
    use crate::pipeline::steps::test_backends::Graph;
    use crate::pipeline::testing;
    use crate::state::SearchHit;

    fn state_with_hits(ids: &[&str]) -> PipelineState {
        let mut s = PipelineState::new("q");
        s.search_results = ids.iter().map(|id| SearchHit::new(*id, 1.0)).collect();
        s
    }

    fn long_text(lines: usize) -> String {
        (0..lines).map(|i| format!("SELECT col_{i}, SUM(amount_{i}) FROM invoices_{i} GROUP BY col_{i};\n")).collect()
    }

    async fn run(budget: usize, texts: &[(&str, &str)], hits: &[&str]) -> (PipelineState, FetchReport) {
        let p = testing::loaded(testing::def(vec![testing::fetch("f", "end")]));
        let store = Graph::with_texts(texts);
        let env = StepEnv::builder().store(&store);
        let mut state = state_with_hits(hits);
        let spec = FetchSpec::new(budget as i64, "end");
        let (_, detail) = fetch_node_texts(&p, "f", &spec, &mut state, &env).await.expect("fetch");
        let StepDetail::FetchNodeTexts(report) = detail else { panic!("{detail:?}") };
        (state, report)
    }

    #[tokio::test]
    async fn a_node_larger_than_the_budget_is_cut_to_it_and_reported() {
        let big = long_text(200);
        let counter = testing::loaded(testing::def(vec![testing::fetch("f", "end")])).counter().clone();
        let whole = counter.count(&big).unwrap();
        let (state, report) = run(500, &[("big", &big), ("small", "SELECT 1;")], &["big", "small"]).await;
        assert_eq!(report.fetched, ["big"]);
        let [cut] = report.truncated.as_slice() else { panic!("{report:?}") };
        assert_eq!((cut.id.as_str(), cut.original_tokens), ("big", whole));
        assert!(cut.kept_tokens <= 500 && cut.kept_tokens + 2 >= 500, "{cut:?}");
        assert_eq!(counter.count(&state.node_texts[0].text).unwrap(), cut.kept_tokens);
        assert!(big.starts_with(&state.node_texts[0].text));
        assert_eq!(
            state.node_texts[0].metadata[TRUNCATED_METADATA_KEY],
            serde_json::json!({ "original_tokens": whole, "kept_tokens": cut.kept_tokens })
        );
        assert_eq!(report.tokens, cut.kept_tokens);
        // Less than MIN_TRUNCATED_TOKENS were left for `small`, but it is small enough to fit or
        // it is reported: never dropped without a reason.
        assert_eq!(report.fetched.len() + report.skipped.len(), 2);
    }

    #[tokio::test]
    async fn too_little_room_is_a_reported_skip_not_a_fragment() {
        let big = long_text(50);
        let (state, report) = run(MIN_TRUNCATED_TOKENS - 1, &[("big", &big)], &["big"]).await;
        assert!(state.node_texts.is_empty() && report.truncated.is_empty());
        assert_eq!(
            report.skipped,
            vec![SkippedNode {
                id: "big".into(),
                reason: SkipReason::OverBudget { remaining: MIN_TRUNCATED_TOKENS - 1 }
            }]
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Whatever the budget and the texts, the kept texts never exceed it, each truncated text
        /// is a prefix of its original, and every hit is either fetched or skipped.
        #[test]
        fn kept_texts_never_exceed_the_budget(budget in 0usize..900, sizes in prop::collection::vec(0usize..120, 1..5)) {
            let texts: Vec<(String, String)> =
                sizes.iter().enumerate().map(|(i, n)| (format!("n{i}"), long_text(*n))).collect();
            let refs: Vec<(&str, &str)> = texts.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
            let hits: Vec<&str> = texts.iter().map(|(a, _)| a.as_str()).collect();
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let (state, report) = rt.block_on(run(budget, &refs, &hits));
            let counter = testing::loaded(testing::def(vec![testing::fetch("f", "end")])).counter().clone();
            let total: usize = state.node_texts.iter().map(|n| counter.count(&n.text).unwrap()).sum();
            prop_assert!(total <= budget);
            prop_assert_eq!(total, report.tokens);
            prop_assert_eq!(report.fetched.len() + report.skipped.len(), hits.len());
            for node in &state.node_texts {
                let original = &texts.iter().find(|(id, _)| *id == node.id).unwrap().1;
                prop_assert!(original.starts_with(&node.text));
            }
        }
    }
}

#[cfg(test)]
mod spelling_tests {
    use crate::pipeline::definition::FetchSpec;

    #[test]
    fn serialized_definitions_with_the_old_key_still_read() {
        let old: FetchSpec = serde_json::from_value(serde_json::json!({ "max_tokens": 5, "next": "end" })).unwrap();
        let new: FetchSpec =
            serde_json::from_value(serde_json::json!({ "evidence_tokens": 5, "next": "end" })).unwrap();
        assert_eq!(old, new);
        assert_eq!(serde_json::to_value(&new).unwrap()["evidence_tokens"], 5);
    }
}
