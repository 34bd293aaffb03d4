//! An `agent` step on `ResponsesClient` against a scripted server on 127.0.0.1: the reasoning
//! item of the reply that called the tool goes back with that call in the next request, counted
//! (its visible text exactly, its encrypted part by the reasoning tokens the server reported);
//! every body the server received, recounted from scratch, is the count ctx guarded and fits the
//! window; the spend ledger prices the reported usage with its cached input; and a request over
//! the window is refused before anything is sent.

#![cfg(feature = "openai")]

mod agent_support;
mod client_support;
mod responses_support;

use agent_support::{Retriever, article, definition, load, search_tool};
use client_support::{MockServer, Reply, fast_retries};
use ctx_runtime::llm::openai::ResponsesOptions;
use ctx_runtime::pipeline::{AgentEnd, AgentReport, ModelSource, PriceSpec, StepDetail, StepEnv, StepReport};
use ctx_runtime::state::TokenRatio;
use ctx_runtime::tokens::REASONING_ITEM_SPECIALS;
use ctx_runtime::{ErrorCode, PipelineState};
use responses_support::{client, function_call, message, read_input, reasoning_item, response, usage};
use serde_json::{Value, json};

const WINDOW: usize = 16_384;
const OUTPUT: usize = 1_000;
const QUESTION: &str = "What does the platform integrate with?";
const SUMMARY: &str = "The docs will list the integrations; search them.";

fn agent_report(reports: &[StepReport]) -> &AgentReport {
    match reports.iter().map(|r| &r.detail).next() {
        Some(StepDetail::Agent(report)) => report,
        other => panic!("{other:?}"),
    }
}

/// The agent pipeline at $2.50 / $1.25 cached / $10 per million tokens.
fn priced(window: usize) -> ctx_runtime::pipeline::LoadedPipeline {
    let def = definition(window as i64, OUTPUT as i64, 2, vec![search_tool()]);
    let ModelSource::Inline(spec) = &def.model else { panic!("inline model") };
    let price = PriceSpec::default().input(Some(2.5)).cached_input(Some(1.25)).output(Some(10.0));
    let model = ModelSource::Inline(spec.clone().price(Some(price)));
    load(def.model(model))
}

/// The first reply: reasoning, then a call of the search tool, with `reasoning` tokens reported.
fn calls_the_tool(reasoning: usize) -> Reply {
    let call = function_call("call_1", "search_docs", &json!({"query": "integrations"}));
    Reply::ok(response(vec![reasoning_item("rs_1", SUMMARY), call], usage(700, 512, reasoning + 20, reasoning)))
}

fn input_types(body: &Value) -> Vec<String> {
    let items = body["input"].as_array().expect("input");
    items.iter().map(|i| i["type"].as_str().or(i["role"].as_str()).unwrap_or_default().to_owned()).collect()
}

#[tokio::test]
async fn the_reasoning_goes_back_with_its_call_and_every_body_is_the_count_that_was_guarded() {
    const REASONING: usize = 400;
    let p = priced(WINDOW);
    let server = MockServer::start(vec![
        calls_the_tool(REASONING),
        Reply::ok(response(
            vec![reasoning_item("rs_2", ""), message("It integrates with LDAP [A].")],
            usage(1_500, 0, 90, 60),
        )),
    ])
    .await;
    let client = client(&server, fast_retries(0), ResponsesOptions::default());
    let retriever = Retriever::new(vec![vec![article("A", 300)]]);
    let env = StepEnv::builder().model(&client).tools(&retriever);
    let (state, reports) = p.run(PipelineState::new(QUESTION), &env).await.expect("the run");
    let report = agent_report(&reports);
    assert_eq!(report.end, AgentEnd::Answered);
    assert_eq!(state.last_model_response.as_deref(), Some("It integrates with LDAP [A]."));
    assert_eq!(server.hits(), 2);

    let bodies = server.requests();
    // The first reply's reasoning item, exactly as received, then its call and the result.
    assert_eq!(input_types(&bodies[1].body)[2..], ["reasoning", "function_call", "function_call_output"]);
    assert_eq!(bodies[1].body["input"][2], reasoning_item("rs_1", SUMMARY));
    let counter = p.counter();
    for (i, recorded) in bodies.iter().enumerate() {
        // The server reported the first reply's reasoning tokens; they are what the item holds.
        let (messages, tools, max_tokens) = read_input(&recorded.body, Some(REASONING));
        let prompt = counter.count_request(&messages, &tools).expect("counted");
        assert_eq!(prompt, report.requests[i].request.prompt_tokens, "request {i}");
        assert_eq!(max_tokens, report.requests[i].request.max_output_tokens, "request {i}");
        assert!(prompt + max_tokens <= WINDOW, "request {i}: {prompt} + {max_tokens}");
    }
    // What the carried item added to the second request: its frame and summary counted exactly,
    // and the reported reasoning tokens.
    let (mut messages, tools, _) = read_input(&bodies[1].body, Some(REASONING));
    let with = counter.count_request(&messages, &tools).unwrap();
    messages[2] = messages[2].clone().with_thinking(Vec::new()).with_reasoning_tokens(None);
    let frame = REASONING_ITEM_SPECIALS + counter.count("assistant").unwrap() + counter.count("analysis").unwrap();
    assert_eq!(
        with - counter.count_request(&messages, &tools).unwrap(),
        frame + counter.count(SUMMARY).unwrap() + REASONING
    );

    // The spend ledger priced the reported usage: 512 of the first request's 700 input tokens
    // read from the cache, the reasoning billed as output.
    let spend = report.requests[0].request.spend.expect("priced");
    assert!(spend.reported);
    let b = spend.billed;
    assert_eq!((b.input, b.cached_input, b.output), (188, 512, REASONING + 20));
    assert_eq!(spend.nano_usd, 188 * 2_500 + 512 * 1_250 + 420 * 10_000);
    assert_eq!(report.requests[0].request.usage.and_then(|u| u.reasoning_tokens), Some(REASONING));
    // The provider's output ratio, which prices later requests' worst case, is of the visible
    // reply only: the first reply's 20 visible tokens for its call's arguments, not 420.
    let arguments = p.counter().count(r#"{"query":"integrations"}"#).unwrap() as u64;
    let seen = state.spend.seen_ratios("default").output;
    assert_eq!(
        seen,
        TokenRatio::new(20, arguments)
            .max(TokenRatio::new(90 - 60, p.counter().count("It integrates with LDAP [A].").unwrap() as u64))
    );
    // The history keeps the question and the answer; the turn's reasoning stays in the turn.
    assert!(state.history_dialog.iter().all(|m| m.thinking.is_empty() && m.tool_calls.is_empty()));
}

#[tokio::test]
async fn reasoning_the_turn_cannot_hold_is_not_sent_and_the_answer_is_asked_for_without_tools() {
    // The server reports more reasoning than the window holds: carrying the item would overflow.
    let p = priced(WINDOW);
    let server = MockServer::start(vec![
        calls_the_tool(WINDOW),
        Reply::ok(response(vec![message("No room to search; LDAP, from memory.")], usage(60, 0, 12, 0))),
    ])
    .await;
    let client = client(&server, fast_retries(0), ResponsesOptions::default());
    let retriever = Retriever::new(vec![vec![article("A", 300)]]);
    let env = StepEnv::builder().model(&client).tools(&retriever);
    let (_, reports) = p.run(PipelineState::new(QUESTION), &env).await.expect("the run");
    let report = agent_report(&reports);
    assert_eq!(report.end, AgentEnd::BudgetExhausted);
    assert!(retriever.seen().is_empty(), "the call was not run");
    let bodies = server.requests();
    assert_eq!(bodies.len(), 2);
    // The second request carries neither the reasoning nor the call, and fits.
    assert_eq!(input_types(&bodies[1].body), ["system", "user"].map(str::to_owned));
    assert!(bodies[1].body.get("tools").is_none());
    let (messages, tools, max_tokens) = read_input(&bodies[1].body, None);
    let prompt = p.counter().count_request(&messages, &tools).unwrap();
    assert_eq!(prompt, report.requests[1].request.prompt_tokens);
    assert!(prompt + max_tokens <= WINDOW);
}

#[tokio::test]
async fn a_request_over_the_window_is_refused_before_anything_is_sent() {
    let p = priced(WINDOW);
    let server = MockServer::start(vec![Reply::ok(response(vec![message("never")], usage(1, 0, 1, 0)))]).await;
    let client = client(&server, fast_retries(3), ResponsesOptions::default());
    let retriever = Retriever::new(vec![Vec::new()]);
    let env = StepEnv::builder().model(&client).tools(&retriever);
    let question = "Which integrations does the platform support, and how is each configured? ".repeat(2_000);
    let err = p.run(PipelineState::new(question), &env).await.expect_err("over the window");
    // The question is over the budget the contract gave it: refused before any request.
    assert_eq!((err.code().as_str(), server.hits()), ("PIPELINE_INPUT_OVER_BUDGET", 0), "{err}");
}
