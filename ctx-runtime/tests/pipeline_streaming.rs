//! Streaming is a property of a run: the same pipeline run with a token sink, against a scripted
//! OpenAI-compatible server on 127.0.0.1 that streams server-sent events, sends the same request
//! (its sampling parameters included) once, delivers the reply piece by piece in order, and ends
//! with the same state and report as a run without a sink.

#![cfg(feature = "openai")]

mod client_support;

use std::sync::Mutex;

use client_support::{MockServer, Reply, completion, fast_retries};
use ctx_runtime::PipelineState;
use ctx_runtime::pipeline::*;
use serde_json::{Value, json};

const PIECES: [&str; 4] = ["Totals are ", "rounded per ", "invoice, to two ", "decimals."];

fn definition() -> PipelineDef {
    PipelineDef::new("Streamed")
        .model(ModelSource::Inline(
            ModelSpec::default().context_window(Some(4_096)).max_tokens(Some(512)).encoding(Some("cl100k_base".into())),
        ))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(Some(2_000))
                .max_history_tokens(Some(300))
                .budget_safety_margin_tokens(Some(128)),
        )
        .prompts(vec![PromptSpec::new("answer", Some("Answer from the context.".into()))])
        .steps(vec![StepDef::new(
            "answer",
            StepKind::CallModel(
                CallModelSpec::new("answer", END).max_output_tokens(Some(200)).use_history(true).params(
                    ModelParams::default()
                        .temperature(Some(0.2))
                        .top_p(Some(0.9))
                        .stop(vec!["\n\n###".into()])
                        .seed(Some(7)),
                ),
            ),
        )])
}

fn chunk(content: &str) -> String {
    let c = json!({"id": "c", "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]});
    format!("data: {c}\n\n")
}

fn event_stream() -> Reply {
    let mut chunks: Vec<String> = PIECES.iter().map(|p| chunk(p)).collect();
    chunks.push(format!(
        "data: {}\n\n",
        json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    ));
    chunks.push(format!(
        "data: {}\n\n",
        json!({"id": "c", "object": "chat.completion.chunk", "choices": [],
               "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}})
    ));
    chunks.push("data: [DONE]\n\n".into());
    Reply::Sse { chunks, then_hang: false }
}

fn state() -> PipelineState {
    let mut state = PipelineState::new("How are invoice totals rounded?");
    state.context_blocks = vec!["fn round_total(x: Money) -> Money { x.round_dp(2) }".into()];
    state
}

/// The request body without the streaming switches, for comparing the two runs.
fn without_stream_fields(mut body: Value) -> Value {
    if let Some(map) = body.as_object_mut() {
        map.remove("stream");
        map.remove("stream_options");
    }
    body
}

#[tokio::test]
async fn a_streamed_run_sends_the_same_request_and_ends_in_the_same_state() {
    let whole: String = PIECES.concat();
    let server = MockServer::start(vec![Reply::ok(completion(&whole, 40, 12)), event_stream()]).await;
    let client = server.client(fast_retries(0));
    let pipeline = LoadedPipeline::load(definition(), LoadOptions::new()).unwrap();
    let env = StepEnv::builder().model(&client);

    let (plain_state, plain_reports) = pipeline.run(state(), &env).await.unwrap();

    let pieces = Mutex::new(Vec::new());
    let sink = |t: Token<'_>| pieces.lock().unwrap().push((t.step.to_owned(), t.text.to_owned()));
    let (streamed_state, streamed_reports) = pipeline.run(state(), &env.tokens(&sink)).await.unwrap();

    // The pieces arrive in order, from the step that asked, and add up to the reply.
    let pieces = pieces.into_inner().unwrap();
    assert!(pieces.len() >= PIECES.len(), "{pieces:?}");
    assert!(pieces.iter().all(|(step, _)| step == "answer"));
    assert_eq!(pieces.iter().map(|(_, p)| p.as_str()).collect::<String>(), whole);

    // The same final state and the same reports, usage included.
    assert_eq!(streamed_state, plain_state);
    assert_eq!(streamed_reports, plain_reports);
    assert_eq!(streamed_state.last_model_response.as_deref(), Some(whole.as_str()));

    // One request each, identical but for the streaming switch, carrying the declared sampling
    // parameters and the default user message.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body["stream"], json!(true));
    assert_eq!(requests[0].body.get("stream"), None);
    let plain = without_stream_fields(requests[0].body.clone());
    assert_eq!(plain, without_stream_fields(requests[1].body.clone()));
    assert_eq!(
        (&plain["temperature"], &plain["top_p"], &plain["stop"], &plain["seed"]),
        (&json!(0.2), &json!(0.9), &json!(["\n\n###"]), &json!(7))
    );
    assert_eq!(
        plain["messages"][1]["content"],
        json!(
            "### Context:\nfn round_total(x: Money) -> Money { x.round_dp(2) }\n\n### User:\nHow are invoice totals rounded?\n\n"
        )
    );
    let StepDetail::CallModel(report) = &streamed_reports[0].detail else { panic!("{:?}", streamed_reports[0]) };
    assert_eq!(plain["max_tokens"], json!(report.request.max_output_tokens));
}
