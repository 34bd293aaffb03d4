//! `search_nodes` and `expand_dependency_tree`: they fill `state.search_results`.

use std::collections::HashSet;

use crate::error::CtxError;
use crate::pipeline::Transition;
use crate::pipeline::definition::{ExpandSpec, SearchNodesSpec};
use crate::pipeline::env::{NodeSearch, NodeStore, StepEnv, need};
use crate::pipeline::error::PipelineError;
use crate::state::{PipelineState, SearchHit};

use super::report::{Done, StepDetail};

/// Asks the search backend for `top_k` hits for the user's question (`user_question_en`, or
/// `user_question` when the translation is empty) and replaces `search_results` with them, best
/// first. A backend that returns more than `top_k` hits is cut to `top_k`; a repeated id keeps
/// its first (best) rank.
pub(crate) async fn search_nodes(
    step: &str,
    spec: &SearchNodesSpec,
    state: &mut PipelineState,
    env: &StepEnv<'_>,
) -> Result<Done, CtxError> {
    let search = need(env.search_backend(), step, "search_nodes", "NodeSearch", "search")?;
    // Validation guarantees top_k >= 1 and that it fits a usize.
    let top_k = usize::try_from(spec.top_k).unwrap_or(usize::MAX).max(1);
    let query = if state.user_question_en.trim().is_empty() { &state.user_question } else { &state.user_question_en };
    let hits = search.search(query, top_k).await.map_err(|source| PipelineError::Backend {
        step: step.to_owned(),
        backend: "NodeSearch::search",
        source,
    })?;
    let mut seen = HashSet::new();
    let kept: Vec<SearchHit> = hits.into_iter().filter(|h| seen.insert(h.id.clone())).take(top_k).collect();
    tracing::debug!(target: "ctx::pipeline", hits = kept.len(), top_k, "search_nodes");
    let detail = StepDetail::SearchNodes { query: query.clone(), hits: kept.len() };
    state.search_results = kept;
    Ok((Transition::Next, detail))
}

/// Adds the dependencies of the hits, breadth first, level by level up to `max_depth` levels:
/// level 1 is the direct dependencies of every hit (in rank order, each hit's dependencies in
/// the order the store gives them), level 2 theirs, and so on. A node already in the results is
/// never added twice, so dependency cycles end. Added hits go after the existing ones (a direct
/// hit outranks a dependency) and carry the score of the hit they were reached from.
pub(crate) async fn expand(
    step: &str,
    spec: &ExpandSpec,
    state: &mut PipelineState,
    env: &StepEnv<'_>,
) -> Result<Done, CtxError> {
    let depth = u32::try_from(spec.max_depth).unwrap_or(0);
    let store = need(env.store_backend(), step, "expand_dependency_tree", "NodeStore", "store")?;
    let mut seen: HashSet<String> = state.search_results.iter().map(|h| h.id.clone()).collect();
    let mut frontier: Vec<SearchHit> = state.search_results.clone();
    let mut added = Vec::new();
    for _ in 0..depth {
        let mut next = Vec::new();
        for parent in &frontier {
            let deps = store.dependencies(&parent.id).await.map_err(|source| PipelineError::Backend {
                step: step.to_owned(),
                backend: "NodeStore::dependencies",
                source,
            })?;
            for id in deps {
                if seen.insert(id.clone()) {
                    next.push(SearchHit::new(id, parent.score));
                }
            }
        }
        if next.is_empty() {
            break;
        }
        added.extend(next.iter().map(|h| h.id.clone()));
        state.search_results.extend(next.iter().cloned());
        frontier = next;
    }
    tracing::debug!(target: "ctx::pipeline", added = added.len(), depth, "expand_dependency_tree");
    Ok((Transition::Next, StepDetail::ExpandDependencyTree { added }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::steps::test_backends::{Graph, Search};

    fn spec(top_k: i64) -> SearchNodesSpec {
        SearchNodesSpec::new(top_k, "end")
    }

    #[tokio::test]
    async fn search_keeps_top_k_distinct_hits_for_the_english_question() {
        let search = Search::new(&[("a", 0.9), ("b", 0.8), ("a", 0.7), ("c", 0.6), ("d", 0.5)]);
        let env = StepEnv::builder().search(&search);
        let mut state = PipelineState::new("Wie wird die Summe berechnet?");
        state.user_question_en = "How is the total computed?".into();
        let (t, detail) = search_nodes("s", &spec(3), &mut state, &env).await.unwrap();
        assert_eq!(t, Transition::Next);
        let ids: Vec<_> = state.search_results.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert_eq!(detail, StepDetail::SearchNodes { query: "How is the total computed?".into(), hits: 3 });
        assert_eq!(search.queries(), vec![("How is the total computed?".to_owned(), 3)]);
    }

    #[tokio::test]
    async fn search_falls_back_to_the_question_and_replaces_old_results() {
        let search = Search::new(&[("x", 1.0)]);
        let env = StepEnv::builder().search(&search);
        let mut state = PipelineState::new("q");
        state.user_question_en.clear();
        state.search_results = vec![SearchHit::new("old", 1.0)];
        search_nodes("s", &spec(5), &mut state, &env).await.unwrap();
        assert_eq!(state.search_results, vec![SearchHit::new("x", 1.0)]);
        assert_eq!(search.queries()[0].0, "q");
    }

    #[tokio::test]
    async fn missing_backend_and_backend_errors_name_the_step() {
        let mut state = PipelineState::new("q");
        let err = search_nodes("find", &spec(5), &mut state, &StepEnv::builder()).await.unwrap_err();
        assert!(err.to_string().contains("`find`") && err.to_string().contains(".search("), "{err}");
        let failing = Search::failing("index offline");
        let err = search_nodes("find", &spec(5), &mut state, &StepEnv::builder().search(&failing)).await.unwrap_err();
        assert!(err.to_string().contains("`find`") && err.to_string().contains("index offline"), "{err}");
    }

    #[tokio::test]
    async fn expand_adds_dependencies_breadth_first_without_duplicates() {
        // a → b, c; b → d; c → a (a cycle), d → e.
        let store = Graph::new(&[("a", &["b", "c"]), ("b", &["d"]), ("c", &["a"]), ("d", &["e"])]);
        let env = StepEnv::builder().store(&store);
        let mut state = PipelineState::new("q");
        state.search_results = vec![SearchHit::new("a", 0.9), SearchHit::new("d", 0.5)];
        let (_, detail) = expand("x", &ExpandSpec::new(2, "end"), &mut state, &env).await.unwrap();
        let ids: Vec<_> = state.search_results.iter().map(|h| (h.id.as_str(), h.score)).collect();
        // Level 1: b, c (from a), e (from d); level 2: nothing new from b (d is a hit), c (a), e.
        assert_eq!(ids, [("a", 0.9), ("d", 0.5), ("b", 0.9), ("c", 0.9), ("e", 0.5)]);
        assert_eq!(detail, StepDetail::ExpandDependencyTree { added: vec!["b".into(), "c".into(), "e".into()] });
    }

    #[tokio::test]
    async fn expand_stops_at_max_depth() {
        let store = Graph::new(&[("a", &["b"]), ("b", &["c"]), ("c", &["d"])]);
        let env = StepEnv::builder().store(&store);
        for (depth, expect) in
            [(0, vec!["a"]), (1, vec!["a", "b"]), (2, vec!["a", "b", "c"]), (9, vec!["a", "b", "c", "d"])]
        {
            let mut state = PipelineState::new("q");
            state.search_results = vec![SearchHit::new("a", 1.0)];
            expand("x", &ExpandSpec::new(depth, "end"), &mut state, &env).await.unwrap();
            let ids: Vec<_> = state.search_results.iter().map(|h| h.id.as_str()).collect();
            assert_eq!(ids, expect, "max_depth {depth}");
        }
    }
}
