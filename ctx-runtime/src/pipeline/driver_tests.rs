use serde_json::json;

use super::*;
use crate::codes::ErrorCode;
use crate::pipeline::Snapshot;
use crate::pipeline::testing::{self, *};
use crate::state::InboxMessage;

/// search → guard ⇄ bump (a set_variables) → end: a loop driven only by the guard.
fn guarded_loop() -> crate::pipeline::LoadedPipeline {
    testing::loaded(testing::def(vec![
        set("start", vec![literal("greeting", json!("hi"))], "g"),
        guard("g", "bump", "done"),
        set("bump", vec![from("trace", "greeting", Some("to_uppercase"))], "g"),
        set("done", vec![literal("finished", json!(true))], "end"),
    ]))
}

#[tokio::test]
async fn run_step_consumes_the_inbox_and_reports_the_transition() {
    let p = guarded_loop();
    let mut state = PipelineState::new("q");
    state.enqueue(InboxMessage::new("start", "hello"));
    state.enqueue(InboxMessage::new("g", "later"));
    let out = run_step(&p, 0, &mut state, &StepEnv::builder()).await.unwrap();
    assert_eq!(out.transition, Transition::Next);
    assert_eq!(out.report.step_id, "start");
    assert_eq!(out.report.kind, "set_variables");
    assert_eq!(out.report.transition_key, "next");
    assert_eq!(out.report.target, Target::Step(1));
    assert_eq!(state.inbox_last_consumed, vec![InboxMessage::new("start", "hello")]);
    assert_eq!(state.inbox, vec![InboxMessage::new("g", "later")]);
    assert_eq!(state.variables.get("greeting"), Some(&json!("hi")));
}

#[tokio::test]
async fn a_failed_step_leaves_the_state_as_it_found_it() {
    // The first rule succeeds, the second fails: nothing is kept, the inbox included.
    let p = testing::loaded(testing::def(vec![set(
        "s",
        vec![literal("a", json!(1)), from("context_blocks", "n", None), literal("n", json!(2))],
        "end",
    )]));
    let mut state = PipelineState::new("q");
    state.variables.insert("n".into(), json!(3));
    state.enqueue(InboxMessage::new("s", "topic"));
    let before = state.clone();
    let err = run_step(&p, 0, &mut state, &StepEnv::builder()).await.unwrap_err();
    assert_eq!(err.code(), "PIPELINE_SET_VARIABLE");
    assert_eq!(state, before);
}

#[tokio::test]
async fn a_missing_backend_fails_before_anything_changes() {
    let p = testing::loaded(testing::def(vec![search("find", "end")]));
    let mut state = PipelineState::new("q");
    state.enqueue(InboxMessage::new("find", "x"));
    let before = state.clone();
    let err = run_step(&p, 0, &mut state, &StepEnv::builder()).await.unwrap_err();
    assert_eq!(err.code(), "PIPELINE_MISSING_BACKEND");
    assert!(err.to_string().contains("StepEnv::builder().search("), "{err}");
    assert_eq!(state, before);
}

#[tokio::test]
async fn out_of_range_index_is_an_error() {
    let p = guarded_loop();
    let mut state = PipelineState::new("q");
    let err = run_step(&p, 9, &mut state, &StepEnv::builder()).await.unwrap_err();
    assert_eq!(err.code(), "PIPELINE_STEP_INDEX");
    assert!(err.to_string().contains("index 9"), "{err}");
}

#[tokio::test]
async fn a_run_takes_the_guard_exactly_limit_times_and_ends() {
    let p = guarded_loop();
    let (state, reports) = p.run(PipelineState::new("q"), &StepEnv::builder()).await.unwrap();
    let path: Vec<&str> = reports.iter().map(|r| r.step_id.as_str()).collect();
    // max_turn_loops = 3.
    assert_eq!(path, ["start", "g", "bump", "g", "bump", "g", "bump", "g", "done"]);
    assert_eq!(state.loop_counts.get("g"), Some(&3));
    assert_eq!(state.variables.get("trace"), Some(&json!("HI")));
    assert_eq!(state.variables.get("finished"), Some(&json!(true)));
    // The proven bound is this very run: start, g, 3 × (bump, g), done (the product bound said 12).
    assert_eq!(p.step_bound(), 9);
    assert!(reports.len() as u64 <= p.step_bound());
}

#[tokio::test]
async fn a_new_run_resets_loop_counts_but_resume_does_not() {
    let p = guarded_loop();
    let mut state = PipelineState::new("q");
    state.loop_counts.insert("g".into(), 3);
    let (_, reports) = p.run(state.clone(), &StepEnv::builder()).await.unwrap();
    assert_eq!(reports.len(), 9);
    let mut snapshot = Snapshot { next_step: "g".into(), state };
    let reports = p.resume(&mut snapshot, &StepEnv::builder()).await.unwrap();
    let path: Vec<&str> = reports.iter().map(|r| r.step_id.as_str()).collect();
    assert_eq!(path, ["g", "done"]);
    assert!(snapshot.is_finished());
    assert_eq!(p.advance(&mut snapshot, &StepEnv::builder()).await.unwrap(), None);
}

#[tokio::test]
async fn snapshots_resume_to_the_same_final_state() {
    let p = guarded_loop();
    let env = StepEnv::builder();
    let (uninterrupted, _) = p.run(PipelineState::new("q"), &env).await.unwrap();
    for stop_after in 0..9 {
        let mut snapshot = Snapshot::start(&p, PipelineState::new("q"));
        for _ in 0..stop_after {
            p.advance(&mut snapshot, &env).await.unwrap();
        }
        let saved = serde_json::to_string(&snapshot).unwrap();
        let mut restored: Snapshot = serde_json::from_str(&saved).unwrap();
        p.resume(&mut restored, &env).await.unwrap();
        assert_eq!(restored.state, uninterrupted, "stopped after {stop_after} steps");
    }
}

#[tokio::test]
async fn an_unknown_snapshot_step_is_an_error() {
    let p = guarded_loop();
    let mut snapshot = Snapshot { next_step: "gone".into(), state: PipelineState::new("q") };
    let err = p.resume(&mut snapshot, &StepEnv::builder()).await.unwrap_err();
    assert_eq!(err.code(), "PIPELINE_UNKNOWN_SNAPSHOT_STEP");
    assert!(err.to_string().contains("`gone`"), "{err}");
}

/// `search → fetch → answer` sends the request `search → fetch → manage_budget → answer` sends,
/// when the budget step has no rule: the answer step appends the fetched texts itself.
#[tokio::test]
async fn a_fetch_straight_into_a_model_step_sends_what_a_budget_step_between_them_would() {
    use crate::pipeline::steps::test_backends::{Graph, Model, Search};
    let texts = [("a.md", "Totals are rounded half-even."), ("b.sql", "SELECT SUM(NetAmount) FROM dbo.InvoiceLines;")];
    let hits = Search::new(&[("a.md", 2.0), ("b.sql", 1.0)]);
    let store = Graph::with_texts(&texts);
    let mut requests = Vec::new();
    let mut finals = Vec::new();
    for with_budget in [false, true] {
        let steps = if with_budget {
            vec![
                search("search", "fetch"),
                fetch("fetch", "budget"),
                budget("budget", "answer", "end"),
                call("answer", "answer", "end"),
            ]
        } else {
            vec![search("search", "fetch"), fetch("fetch", "answer"), call("answer", "answer", "end")]
        };
        let p = testing::loaded(testing::def(steps));
        let model = Model::replying("Half-even.");
        let env = StepEnv::builder().search(&hits).store(&store).model(&model);
        let (state, reports) = p.run(PipelineState::new("How are totals rounded?"), &env).await.unwrap();
        let crate::pipeline::StepDetail::CallModel(call) = &reports.last().unwrap().detail else { panic!() };
        // Who appended the texts: the answer step, or the budget step before it.
        assert_eq!(call.evidence.is_some(), !with_budget);
        requests.push(model.requests()[0].messages.clone());
        finals.push((state.context_blocks, state.node_texts));
    }
    assert_eq!(requests[0], requests[1]);
    assert_eq!(finals[0], finals[1]);
    assert!(requests[0][1].content.contains("--- NODE ---\nid: a.md\n"));
}
