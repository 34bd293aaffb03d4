//! A `pipeline!` pipeline on Claude: compiled with the estimate its contract reports, run
//! unchanged through `AnthropicClient` against a scripted Anthropic API on 127.0.0.1, and loaded
//! with the exact `count_tokens` counter.

#[path = "../../ctx-runtime/tests/anthropic_support/mod.rs"]
mod anthropic_support;

use anthropic_support::{MockAnthropic, Reply, message};
use ctx::PipelineState;
use ctx::pipeline::{LoadOptions, LoadedPipeline, Pipeline};
use ctx::tokens::Counting;
use ctx_runtime::llm::anthropic::RetryPolicy;
use serde_json::json;

ctx::pipeline! {
    /// Answers from the context with Claude.
    pub pipeline ClaudeQa {
        model { model: "claude-sonnet-4-5", context_window: 200_000, max_tokens: 1_024, encoding: o200k_base }
        settings { max_context_tokens: 6_000 }
        prompts { answer: "Answer the question from the context; quote identifiers verbatim." }
        steps {
            call_model_answer: call_model {
                prompt_key: answer,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                next: end,
            },
        }
    }
}

#[test]
fn the_compiled_contract_says_its_counts_are_estimated() {
    let pipeline = ClaudeQa::new().expect("loads");
    let loaded = pipeline.pipeline();
    assert_eq!(loaded.contract_report().counting, Counting::Estimated { margin_percent: 30 });
    assert_eq!(loaded.counter().backend_id(), "ctx/o200k_base+30%");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pipeline_runs_on_the_anthropic_client_unchanged() {
    let reply = message(json!([{"type": "text", "text": "It rounds half up."}]), "end_turn", 57, 6);
    let server =
        MockAnthropic::start_with_counts(vec![Reply::ok(reply)], vec![Reply::ok(json!({"input_tokens": 57}))]).await;
    let client = server.client(RetryPolicy::none());
    let exact = client.token_counter(1024).expect("counter").counter(ctx::Encoding::O200kBase, 30);
    let loaded = LoadedPipeline::load_with_counter(ClaudeQa::definition(), LoadOptions::default(), exact)
        .expect("loads with the exact counter");
    assert_eq!(loaded.contract_report().counting, Counting::Exact);
    let pipeline: Pipeline<_> = ClaudeQa::from_loaded(loaded).expect("same steps");
    let env = ClaudeQaEnv { model: &client };
    let (state, _) = pipeline.run(PipelineState::new("How is the total rounded?"), &env).await.expect("runs");
    assert_eq!(state.last_model_response.as_deref(), Some("It rounds half up."));
    let sent = server.requests();
    let paths: Vec<&str> = sent.iter().map(|r| r.path.as_str()).collect();
    assert!(paths.contains(&"/v1/messages/count_tokens"), "{paths:?}");
    let call = sent.iter().find(|r| r.path == "/v1/messages").expect("the model call");
    // The system prompt goes as a text block carrying a cache breakpoint (issue 27: the stable
    // prefix is marked for Anthropic's prompt cache).
    assert_eq!(call.body["system"][0]["text"], "Answer the question from the context; quote identifiers verbatim.");
    assert_eq!(call.body["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(call.body["max_tokens"], 1_024);
}
