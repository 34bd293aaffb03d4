//! The journaled unit on its own (no engine): a step's record is what the in-process step does,
//! survives the journal's JSON round trip, and bad snapshots are typed errors.

use std::time::Duration;

use serde_json::json;

use crate::error::CtxError;
use crate::llm::ModelError;
use crate::pipeline::testing::{def, literal, set};
use crate::pipeline::{Backends, Pipeline, PipelineDef, PipelineError, Snapshot, StepEnv, StepMachine, Transition};
use crate::state::PipelineState;

use super::service::is_transient;
use super::{DurableSteps, StepRecord, StepRunner};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Step {
    Tag,
    Mark,
    End,
}

impl StepMachine for Step {
    const NAME: &'static str = "Test";
    const MERMAID: &'static str = "flowchart TD\n  tag --> mark --> end";
    const FIRST: Self = Step::Tag;
    const END: Self = Step::End;
    const ALL: &'static [Self] = &[Step::Tag, Step::Mark, Step::End];

    fn definition() -> PipelineDef {
        def(vec![
            set("tag", vec![literal("tenant", json!("acme"))], "mark"),
            set("mark", vec![literal("attempt", json!(1.25))], "end"),
        ])
    }

    fn id(self) -> &'static str {
        match self {
            Step::Tag => "tag",
            Step::Mark => "mark",
            Step::End => "end",
        }
    }

    fn index(self) -> Option<usize> {
        match self {
            Step::Tag => Some(0),
            Step::Mark => Some(1),
            Step::End => None,
        }
    }

    fn next(self, transition: Transition) -> Option<Self> {
        match (self, transition) {
            (Step::Tag, Transition::Next) => Some(Step::Mark),
            (Step::Mark, Transition::Next) => Some(Step::End),
            _ => None,
        }
    }
}

struct NoBackends;

impl Backends<Step> for NoBackends {
    fn step_env(&self) -> StepEnv<'_> {
        StepEnv::builder()
    }
}

fn steps() -> DurableSteps<Step, NoBackends> {
    DurableSteps::new(Pipeline::<Step>::new().expect("the test pipeline loads"), NoBackends)
}

#[tokio::test]
async fn records_replay_the_in_process_run_step_by_step() {
    let durable = steps();
    let mut snapshot = durable.start(PipelineState::new("Which tenant?"));
    let (expected_state, expected_reports) =
        durable.pipeline().run(PipelineState::new("Which tenant?"), &NoBackends).await.expect("runs");
    let mut reports = Vec::new();
    while !snapshot.is_finished() {
        let record = durable.step(&snapshot).await.expect("a step");
        // What the engine stores and hands back on replay: JSON, read back equal.
        let journaled: StepRecord =
            serde_json::from_str(&serde_json::to_string(&record).expect("serialises")).expect("reads back");
        assert_eq!(journaled, record);
        reports.push(journaled.report);
        snapshot = journaled.snapshot;
        assert!(reports.len() as u64 <= durable.step_bound());
    }
    let expected: Vec<_> = expected_reports.iter().map(|r| serde_json::to_value(r).expect("serialises")).collect();
    assert_eq!(reports, expected);
    assert_eq!(snapshot.state, expected_state);
    assert_eq!(snapshot.state.variables["tenant"], json!("acme"));
}

#[tokio::test]
async fn a_snapshot_at_an_unknown_or_finished_step_is_a_typed_error() {
    let durable = steps();
    for step in ["nowhere", "end"] {
        let snapshot = Snapshot { next_step: step.to_owned(), state: PipelineState::new("Q") };
        let error = durable.step(&snapshot).await.expect_err("no such step to perform");
        assert!(
            matches!(&error, CtxError::Pipeline(PipelineError::UnknownSnapshotStep { step: s, .. }) if s == step),
            "{error}"
        );
    }
}

#[test]
fn only_model_failures_another_attempt_may_fix_are_retried_by_the_engine() {
    let http = |status| ModelError::Http {
        model: "m".into(),
        status,
        message: "boom".into(),
        error_type: None,
        error_code: None,
    };
    let in_step =
        |e: ModelError| CtxError::Pipeline(PipelineError::Model { step: "answer".into(), source: Box::new(e) });
    let timeout = ModelError::Timeout { model: "m".into(), phase: "response", limit: Duration::from_secs(1) };
    assert!(is_transient(&in_step(http(503))));
    assert!(is_transient(&in_step(timeout.clone())));
    assert!(is_transient(&CtxError::Model(http(500))));
    let exhausted = ModelError::RetriesExhausted { model: "m".into(), attempts: 3, last: Box::new(http(502)) };
    assert!(is_transient(&in_step(exhausted)));
    assert!(!is_transient(&in_step(http(400))));
    assert!(!is_transient(&CtxError::Pipeline(PipelineError::StepBoundExceeded { pipeline: "p".into(), bound: 3 })));
}
