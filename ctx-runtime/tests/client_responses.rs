//! `ResponsesClient` against a scripted server on 127.0.0.1: the request body it sends, the reply
//! it reads (reasoning items, tool calls, usage with cached input and reasoning), streaming,
//! retries and every kind of failure, and the guard's count of a request carrying reasoning.

#![cfg(feature = "openai")]

mod client_support;
mod responses_support;

use client_support::{KEY, MockServer, Reply, fast_retries};
use ctx_runtime::chat::SignedThinking;
use ctx_runtime::contract::{ContractError, guard_request};
use ctx_runtime::llm::openai::{ReasoningEffort, ResponsesOptions, RetryPolicy};
use ctx_runtime::llm::{ChatModel, ChatRequest, ModelError, ModelParams, Usage};
use ctx_runtime::tokens::REASONING_ITEM_SPECIALS;
use ctx_runtime::{ChatMessage, Encoding, ErrorCode, TokenCounter, ToolCall, ToolSchema};
use responses_support::{client, events, function_call, message, read_input, reasoning_item, response, usage};
use serde_json::json;

fn request() -> ChatRequest {
    ChatRequest::new(vec![ChatMessage::system("Be brief."), ChatMessage::user("Say hi.")], 32)
}

fn search_tool() -> ToolSchema {
    ToolSchema::new(
        "search",
        "Searches the docs.",
        json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    )
}

#[tokio::test]
async fn a_reply_and_the_request_that_produced_it() {
    let server = MockServer::start(vec![Reply::ok(response(vec![message("Hi!")], usage(21, 16, 2, 0)))]).await;
    let options = ResponsesOptions::default().reasoning_effort(Some(ReasoningEffort::Medium));
    let client = client(&server, RetryPolicy::none(), options);
    let reply = client.chat(&request().tools(vec![search_tool()])).await.expect("reply");
    assert_eq!(reply.content, "Hi!");
    assert_eq!(reply.usage, Some(Usage::new(21, 2).with_cache(Some(16), None).with_reasoning(Some(0))));
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert!(reply.thinking.is_empty());
    assert_eq!((client.model_name(), client.provider_name()), ("test-model", "openai"));

    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].authorization.as_deref(), Some(format!("Bearer {KEY}").as_str()));
    let body = &sent[0].body;
    assert_eq!(
        body,
        &json!({
            "model": "test-model",
            "input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hi."}],
            "tools": [{"type": "function", "name": "search", "description": "Searches the docs.",
                       "parameters": search_tool().parameters, "strict": false}],
            "max_output_tokens": 32,
            "reasoning": {"effort": "medium"},
            "store": false,
            "include": ["reasoning.encrypted_content"]
        })
    );
}

#[tokio::test]
async fn reasoning_items_come_back_on_the_reply_and_go_out_again_before_their_calls() {
    let item = reasoning_item("rs_1", "Search first, then answer.");
    let call = function_call("call_1", "search", &json!({"query": "budget"}));
    let server = MockServer::start(vec![
        Reply::ok(response(vec![item.clone(), call], usage(40, 0, 300, 280))),
        Reply::ok(response(vec![reasoning_item("rs_2", ""), message("The budget is 4K.")], usage(360, 0, 90, 80))),
    ])
    .await;
    let client = client(&server, RetryPolicy::none(), ResponsesOptions::default());
    let first = request().tools(vec![search_tool()]);
    let reply = client.chat(&first).await.expect("first reply");
    assert_eq!(reply.thinking, [SignedThinking::new(item.clone())]);
    assert_eq!(reply.tool_calls, [ToolCall::new("call_1", "search", r#"{"query":"budget"}"#)]);
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(reply.usage.and_then(|u| u.reasoning_tokens), Some(280));

    // The turn goes on as an agent step carries it: the reasoning on the message of its calls.
    let mut messages = first.messages.clone();
    messages.push(
        ChatMessage::assistant_tool_calls(reply.content.clone(), reply.tool_calls.clone())
            .with_thinking(reply.thinking.clone())
            .with_reasoning_tokens(Some(280)),
    );
    messages.push(ChatMessage::tool_result("call_1", "The budget is 4,096 tokens."));
    let second = ChatRequest::new(messages.clone(), 200).tools(vec![search_tool()]);
    let answer = client.chat(&second).await.expect("second reply");
    assert_eq!(answer.content, "The budget is 4K.");

    let sent = server.requests();
    let input = sent[1].body["input"].as_array().expect("input").clone();
    // The item exactly as received, right before the call it led to.
    assert_eq!(input[2], item);
    assert_eq!(
        input[3],
        json!({"type": "function_call", "call_id": "call_1", "name": "search",
                                "arguments": "{\"query\":\"budget\"}"})
    );
    assert_eq!(
        input[4],
        json!({"type": "function_call_output", "call_id": "call_1",
                                "output": "The budget is 4,096 tokens."})
    );

    // Recounted from the body alone: the same count as ctx's messages, and the reasoning in it is
    // its visible summary counted exactly plus the 280 tokens the server reported.
    let counter = TokenCounter::for_encoding(Encoding::O200kBase);
    let (received, tools, limit) = read_input(&sent[1].body, Some(280));
    assert_eq!(received, messages);
    assert_eq!((tools.as_slice(), limit), (&[search_tool()][..], 200));
    let with = counter.count_request(&received, &tools).expect("counted");
    let mut without = received.clone();
    without[2] = without[2].clone().with_thinking(Vec::new()).with_reasoning_tokens(None);
    let frame = REASONING_ITEM_SPECIALS + counter.count("assistant").unwrap() + counter.count("analysis").unwrap();
    let summary = counter.count("Search first, then answer.").unwrap();
    assert_eq!(with - counter.count_request(&without, &tools).unwrap(), frame + summary + 280);
}

#[tokio::test]
async fn encrypted_reasoning_without_a_count_is_refused_by_the_counter() {
    let counter = TokenCounter::for_encoding(Encoding::O200kBase);
    let carried = ChatMessage::assistant_tool_calls("", vec![ToolCall::new("call_1", "search", "{}")])
        .with_thinking(vec![SignedThinking::new(reasoning_item("rs_9", "x"))]);
    let err = counter.count_request(&[ChatMessage::user("q"), carried], &[]).expect_err("uncounted");
    assert_eq!(err.code().as_str(), "REASONING_UNCOUNTED");
    assert!(err.to_string().contains("`rs_9`"), "{err}");
}

#[test]
fn the_last_guard_counts_the_carried_reasoning_and_refuses_a_request_it_overflows() {
    let counter = TokenCounter::for_encoding(Encoding::O200kBase);
    let carried = |hidden: usize| {
        vec![
            ChatMessage::user("What is the budget?"),
            ChatMessage::assistant_tool_calls("", vec![ToolCall::new("call_1", "search", "{}")])
                .with_thinking(vec![SignedThinking::new(reasoning_item("rs_1", "Search."))])
                .with_reasoning_tokens(Some(hidden)),
            ChatMessage::tool_result("call_1", "4,096 tokens."),
        ]
    };
    let small = counter.count_request(&carried(10), &[]).unwrap();
    let window = small + 100;
    // 10 reasoning tokens fit beside 100 of output; 11 do not, by exactly one token.
    assert_eq!(guard_request("answer", &carried(10), &[], 100, window, &counter), Ok(small));
    match guard_request("answer", &carried(11), &[], 100, window, &counter) {
        Err(err @ ContractError::RequestTooLarge { overflow: 1, .. }) => {
            assert_eq!(err.code().as_str(), "REQUEST_EXCEEDS_CONTEXT_WINDOW")
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn streaming_hands_over_the_deltas_and_returns_the_last_events_response() {
    let done = response(vec![reasoning_item("rs_1", ""), message("Hello there")], usage(12, 0, 40, 37));
    let server = MockServer::start(vec![Reply::sse(
        &events(&["Hello", " there"], &done).iter().map(String::as_str).collect::<Vec<_>>(),
    )])
    .await;
    let client = client(&server, RetryPolicy::none(), ResponsesOptions::default());
    let mut pieces = Vec::new();
    let reply = client.chat_stream(&request(), &mut |p| pieces.push(p.to_owned())).await.expect("streamed");
    assert_eq!(pieces, ["Hello", " there"]);
    assert_eq!(reply.content, "Hello there");
    assert_eq!(reply.thinking.len(), 1);
    assert_eq!(reply.usage, Some(Usage::new(12, 40).with_cache(Some(0), None).with_reasoning(Some(37))));
    let sent = server.requests();
    assert_eq!((sent[0].body["stream"].as_bool(), sent[0].accept.as_deref()), (Some(true), Some("text/event-stream")));
}

#[tokio::test]
async fn a_stream_that_fails_before_any_text_is_retried_and_after_text_is_not() {
    let done = response(vec![message("fine")], usage(5, 0, 1, 0));
    let failed = "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\
                  \"error\":{\"code\":\"server_error\",\"message\":\"overloaded\"}}}\n\n";
    let server = MockServer::start(vec![
        Reply::Text { status: 503, content_type: "application/json", body: r#"{"error":{"message":"busy"}}"#.into() },
        Reply::sse(&events(&["fine"], &done).iter().map(String::as_str).collect::<Vec<_>>()),
    ])
    .await;
    let mut pieces = Vec::new();
    let reply =
        client_of(&server, 2).chat_stream(&request(), &mut |p| pieces.push(p.to_owned())).await.expect("retried");
    assert_eq!((server.hits(), pieces.as_slice(), reply.content.as_str()), (2, &["fine".to_owned()][..], "fine"));

    // Text reached the caller, then the response failed: a retry would hand it over twice.
    let mut late = events(&["partial"], &done);
    late.pop();
    late.push(failed.to_owned());
    let server = MockServer::start(vec![
        Reply::sse(&late.iter().map(String::as_str).collect::<Vec<_>>()),
        Reply::ok(response(vec![message("again")], usage(5, 0, 1, 0))),
    ])
    .await;
    let mut pieces = Vec::new();
    let err = client_of(&server, 2)
        .chat_stream(&request(), &mut |p| pieces.push(p.to_owned()))
        .await
        .expect_err("not retried");
    assert_eq!((server.hits(), pieces.as_slice()), (1, &["partial".to_owned()][..]));
    assert!(err.to_string().contains("overloaded"), "{err}");

    // A stream cut before its last event is truncated, and retried while nothing was handed over.
    let mut cut = events(&[], &done);
    cut.pop();
    let server = MockServer::start(vec![Reply::sse(&cut.iter().map(String::as_str).collect::<Vec<_>>())]).await;
    let err = client_of(&server, 1).chat_stream(&request(), &mut |_| {}).await.expect_err("truncated");
    assert_eq!((server.hits(), err.code().as_str()), (2, "MODEL_RETRIES_EXHAUSTED"));
    assert!(matches!(err.root(), ModelError::TruncatedBody { .. }), "{err:?}");
}

fn client_of(server: &MockServer, retries: u32) -> ctx_runtime::llm::openai::ResponsesClient {
    client(server, fast_retries(retries), ResponsesOptions::default())
}

#[tokio::test]
async fn retryable_failures_are_retried_and_final_ones_are_typed() {
    let server = MockServer::start(vec![
        Reply::status(500, json!({"error": {"message": "internal", "type": "server_error"}})),
        Reply::Json {
            status: 429,
            body: json!({"error": {"message": "slow down", "type": "rate_limit_error"}}),
            headers: vec![("retry-after-ms", "1".into())],
        },
        Reply::ok(response(vec![message("ok")], usage(5, 0, 1, 0))),
    ])
    .await;
    let reply = client_of(&server, 3).chat(&request()).await.expect("third attempt");
    assert_eq!((server.hits(), reply.content.as_str()), (3, "ok"));

    let too_long = json!({"error": {"message": "Your input exceeds the context window of this model.",
                                     "type": "invalid_request_error", "code": "context_length_exceeded"}});
    let server = MockServer::start(vec![Reply::status(400, too_long)]).await;
    let err = client_of(&server, 3).chat(&request()).await.expect_err("too long");
    assert_eq!((err.code().as_str(), server.hits()), ("MODEL_CONTEXT_LENGTH_EXCEEDED", 1));

    let echo = format!("Incorrect API key provided: {KEY}");
    let server = MockServer::start(vec![Reply::status(401, json!({"error": {"message": echo}}))]).await;
    let err = client_of(&server, 3).chat(&request()).await.expect_err("unauthorized");
    assert_eq!(server.hits(), 1);
    assert!(!err.to_string().contains(KEY) && err.to_string().contains("[REDACTED]"), "{err}");

    // A response that failed on the server is its error, even with a 200.
    let failed = json!({"object": "response", "status": "failed", "output": [],
                        "error": {"code": "server_error", "message": "The model produced invalid content."}});
    let server = MockServer::start(vec![Reply::ok(failed)]).await;
    let err = client_of(&server, 0).chat(&request()).await.expect_err("failed");
    assert!(err.to_string().contains("invalid content"), "{err}");

    let server = MockServer::start(vec![Reply::ok(json!({"object": "response", "status": "completed"}))]).await;
    let err = client_of(&server, 0).chat(&request()).await.expect_err("no output");
    assert!(matches!(err, ModelError::MalformedBody { .. }), "{err:?}");

    let server =
        MockServer::start(vec![Reply::Text { status: 404, content_type: "text/plain", body: "Not Found".into() }])
            .await;
    let err = client_of(&server, 0).chat(&request()).await.expect_err("no such API");
    assert!(err.to_string().contains("/v1/responses") && err.to_string().contains("Responses API"), "{err}");
}

#[tokio::test]
async fn parameters_the_api_lacks_are_refused_before_anything_is_sent() {
    let server = MockServer::start(vec![Reply::ok(response(vec![message("never")], usage(1, 0, 1, 0)))]).await;
    let client = client_of(&server, 3);
    for params in [
        ModelParams::default().stop(vec!["###".into()]),
        ModelParams::default().seed(Some(7)),
        ModelParams::default().presence_penalty(Some(0.5)),
        ModelParams::default().frequency_penalty(Some(0.5)),
    ] {
        let err = client.chat(&request().params(params)).await.expect_err("refused");
        assert!(matches!(err, ModelError::UnsupportedRequest { .. }), "{err:?}");
    }
    assert_eq!(server.hits(), 0);
}

#[tokio::test]
async fn an_incomplete_response_is_cut_at_the_limit_and_reasoning_is_dropped_when_not_carried() {
    let mut cut = response(vec![reasoning_item("rs_1", "long thought")], usage(9, 0, 32, 32));
    cut["status"] = json!("incomplete");
    cut["incomplete_details"] = json!({"reason": "max_output_tokens"});
    let server = MockServer::start(vec![Reply::ok(cut)]).await;
    let client = client(&server, RetryPolicy::none(), ResponsesOptions::default().carry_reasoning(false));
    let reply = client.chat(&request()).await.expect("a reply");
    assert_eq!((reply.content.as_str(), reply.finish_reason.as_deref()), ("", Some("length")));
    // Every output token went to reasoning, inside the limit sent.
    assert_eq!(reply.usage.map(|u| (u.completion_tokens, u.reasoning_tokens)), Some((32, Some(32))));
    assert!(reply.thinking.is_empty());
    let body = &server.requests()[0].body;
    assert!(body.get("include").is_none() && body.get("store").is_none(), "{body}");
}
