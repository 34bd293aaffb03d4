//! The report of an agent turn: each request after the first says which tool results joined the
//! turn and which documents were deduplicated, and its parts hold one block per call.

use super::*;
use crate::pipeline::definition::StepKind;
use crate::pipeline::steps::test_backends::{Scripted, Tools};
use crate::pipeline::{StepEnv, ToolOutput, testing};
use crate::report::PartKind;
use crate::state::PipelineState;
use crate::turn::RankedDocument;

#[tokio::test]
async fn an_agent_turn_shows_its_tool_results_and_what_was_deduplicated() {
    let mut def = testing::def(vec![testing::agent("answer", "end")]);
    let StepKind::Agent(spec) = &mut def.steps[0].kind else { unreachable!() };
    spec.max_tool_calls = 3;
    let p = testing::loaded(def);
    let model = Scripted::always_calling(3);
    let docs = |ids: &[&str]| {
        ToolOutput::Documents(
            ids.iter().map(|id| RankedDocument::new(*id, format!("Article {id}. ").repeat(50))).collect(),
        )
    };
    let tools = Tools::new(vec![("c1", docs(&["a", "b"])), ("c2", docs(&["a", "c"])), ("c3", docs(&["b", "d"]))]);
    let env = StepEnv::builder().model(&model).tools(&tools);
    let (_, reports) = p.run(PipelineState::new("What are the features?"), &env).await.unwrap();
    let report = RunReport::new(&p, &reports);

    assert_eq!(report.requests.len(), 4);
    assert_eq!(report.steps.len(), 1);
    let numbers: Vec<usize> = report.requests.iter().map(|r| r.number_in_step).collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
    for (i, r) in report.requests.iter().enumerate() {
        assert_eq!(r.anatomy.parts_total(), r.anatomy.prompt_tokens);
        // The n-th request holds the n - 1 calls answered before it, each with its result.
        let blocks = r.anatomy.parts.iter().filter(|p| p.kind == PartKind::ToolTurn).count();
        assert_eq!(blocks, i, "request {}", i + 1);
        assert!(r.worst_case.is_some());
    }
    let changes = |i: usize| -> Vec<(ChangeKind, &str)> {
        report.requests[i].changes.iter().map(|c| (c.kind, c.what.as_str())).collect()
    };
    assert!(changes(0).is_empty(), "{:?}", changes(0));
    assert_eq!(changes(1).len(), 1);
    assert_eq!(changes(1)[0].0, ChangeKind::Added);
    assert!(changes(2).contains(&(ChangeKind::Deduplicated, "document a already in the turn")), "{:?}", changes(2));
    assert!(changes(3).contains(&(ChangeKind::Deduplicated, "document b already in the turn")), "{:?}", changes(3));
    assert!(changes(3).iter().any(|(k, what)| *k == ChangeKind::Dropped && what.contains("tools no longer offered")));
    let dedup = &report.requests[2].changes.iter().find(|c| c.kind == ChangeKind::Deduplicated).unwrap().by;
    assert_eq!(dedup, "answer, tool `search_docs` (c2)");

    let html = report.to_html();
    assert_eq!(html.matches("<section class=\"request\"").count(), 4);
    assert_eq!(html.matches("data-change=\"deduplicated\"").count(), 2);
    assert!(html.contains("(call 4)"));
}
