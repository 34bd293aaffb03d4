//! The typed path of an agent step: a step enum and backends as `pipeline!` generates them (here
//! written by hand), whose `Backends::run_tool` receives the tool calls; without it the call is a
//! typed error naming the step and the tool.

mod agent_support;

use agent_support::{Retriever, definition, search_tool};
use ctx_runtime::llm::offline::OfflineModel;
use ctx_runtime::pipeline::{
    AgentEnd, Backends, Pipeline, PipelineDef, StepDetail, StepEnv, StepFuture, StepMachine, ToolHandlers, ToolOutput,
    ToolRequest, Transition,
};
use ctx_runtime::{ErrorCode, PipelineState};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Step {
    Answer,
    End,
}

impl StepMachine for Step {
    const NAME: &'static str = "Agent";
    const MERMAID: &'static str = "flowchart TD\n  answer --> end";
    const FIRST: Self = Step::Answer;
    const END: Self = Step::End;
    const ALL: &'static [Self] = &[Step::Answer, Step::End];

    fn definition() -> PipelineDef {
        definition(16_384, 1_000, 2, vec![search_tool()])
    }

    fn id(self) -> &'static str {
        match self {
            Step::Answer => "answer",
            Step::End => "end",
        }
    }

    fn index(self) -> Option<usize> {
        (self == Step::Answer).then_some(0)
    }

    fn next(self, transition: Transition) -> Option<Self> {
        (self == Step::Answer && transition == Transition::Next).then_some(Step::End)
    }
}

/// Backends whose tools are typed methods (`run_tool`), as the macro generates them.
struct Typed {
    model: OfflineModel,
    retriever: Retriever,
}

impl Backends<Step> for Typed {
    fn step_env(&self) -> StepEnv<'_> {
        StepEnv::builder().model(&self.model)
    }

    fn run_tool<'a>(&'a self, step: Step, request: ToolRequest<'a>) -> StepFuture<'a, ToolOutput> {
        assert_eq!(step, Step::Answer);
        Box::pin(async move { self.retriever.call(step.id(), request).await })
    }
}

/// Backends that forgot the tools.
struct Untyped {
    model: OfflineModel,
}

impl Backends<Step> for Untyped {
    fn step_env(&self) -> StepEnv<'_> {
        StepEnv::builder().model(&self.model)
    }
}

fn question() -> PipelineState {
    PipelineState::new("What are the Comindware platform features?")
}

#[tokio::test]
async fn tool_calls_reach_the_typed_backends() {
    let pipeline = Pipeline::<Step>::new().unwrap();
    let backends = Typed {
        model: OfflineModel::new(pipeline.pipeline().counter().clone()),
        retriever: Retriever::spec_scenario(),
    };
    let (state, reports) = pipeline.run(question(), &backends).await.unwrap();
    assert_eq!(backends.retriever.seen().len(), 1);
    let StepDetail::Agent(report) = &reports[0].detail else { panic!("{:?}", reports[0].detail) };
    assert_eq!(report.end, AgentEnd::Answered);
    assert!(state.last_model_response.unwrap().contains("[A]"));
}

#[tokio::test]
async fn backends_without_tools_fail_with_a_typed_error_and_change_nothing() {
    let pipeline = Pipeline::<Step>::new().unwrap();
    let backends = Untyped { model: OfflineModel::new(pipeline.pipeline().counter().clone()) };
    let mut state = question();
    let before = state.clone();
    let err = pipeline.step(Step::Answer, &mut state, &backends).await.unwrap_err();
    assert_eq!(err.code(), "AGENT_TOOL_FAILED");
    // The handler's error (the default `run_tool`) inside the step's, both naming the tool.
    let text = err.to_string();
    assert!(text.contains("tool `search_docs` failed on call `offline_call_1`"), "{text}");
    assert!(text.contains("has no tool `search_docs`"), "{text}");
    assert_eq!(state, before);
}
