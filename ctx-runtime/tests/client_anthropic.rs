//! `AnthropicClient` and `AnthropicTokenCounter` against a scripted Anthropic API on 127.0.0.1:
//! the request as the API documents it, replies with tool use, streams, every error shape and
//! retry rule, and exact counting through `count_tokens` behind the cache.

#![cfg(feature = "anthropic")]

mod anthropic_support;

use std::time::Duration;

use anthropic_support::{KEY, MockAnthropic, Reply, fast_retries, message};
use ctx_runtime::contract::{ContractError, guard_request};
use ctx_runtime::llm::anthropic::{AnthropicTokenCounter, RetryPolicy};
use ctx_runtime::llm::{ChatModel, ChatRequest, ModelError, ResponseFormat, Usage};
use ctx_runtime::tokens::{Counting, RequestCounter};
use ctx_runtime::{ChatMessage, Encoding, ErrorCode, TokenError, ToolCall, ToolSchema};
use serde_json::{Value, json};

fn weather_tool() -> ToolSchema {
    ToolSchema::new(
        "weather",
        "Current weather in a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )
}

fn request() -> ChatRequest {
    let mut request =
        ChatRequest::new(vec![ChatMessage::system("Be brief."), ChatMessage::user("Weather in Oslo?")], 256);
    request.tools.push(weather_tool());
    request
}

#[tokio::test]
async fn a_reply_with_text_and_tool_use_and_the_request_that_produced_it() {
    let reply = message(
        json!([
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {"city": "Oslo"}}
        ]),
        "tool_use",
        391,
        27,
    );
    let server = MockAnthropic::start(vec![Reply::ok(reply)]).await;
    let client = server.client(RetryPolicy::none());
    let mut req = request();
    req.params.temperature = Some(0.25);
    req.params.top_p = Some(0.5);
    req.params.stop = vec!["\n\nHuman:".into()];
    let reply = client.chat(&req).await.expect("reply");
    assert_eq!(reply.content, "Checking.");
    assert_eq!(reply.tool_calls, [ToolCall::new("toolu_01", "weather", "{\"city\":\"Oslo\"}")]);
    assert_eq!(reply.usage, Some(Usage::new(391, 27)));
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));

    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].path, "/v1/messages");
    assert_eq!(sent[0].header("x-api-key"), Some(KEY));
    assert_eq!(sent[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent[0].header("authorization"), None);
    assert_eq!(
        sent[0].body,
        json!({
            "model": "claude-test",
            "max_tokens": 256,
            // Prompt-cache breakpoints after the system prompt, the tools and the prompt.
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?",
                                                     "cache_control": {"type": "ephemeral"}}]}],
            "tools": [{"name": "weather", "description": "Current weather in a city.",
                       "input_schema": weather_tool().parameters, "cache_control": {"type": "ephemeral"}}],
            "temperature": 0.25,
            "top_p": 0.5,
            "stop_sequences": ["\n\nHuman:"]
        })
    );
}

#[tokio::test]
async fn a_tool_round_trip_is_sent_as_tool_use_and_tool_result_blocks() {
    let server =
        MockAnthropic::start(vec![Reply::ok(message(json!([{"type": "text", "text": "4C."}]), "end_turn", 9, 2))])
            .await;
    let client = server.client(RetryPolicy::none());
    let mut req = request();
    req.messages
        .push(ChatMessage::assistant_tool_calls("", vec![ToolCall::new("toolu_01", "weather", "{\"city\":\"Oslo\"}")]));
    req.messages.push(ChatMessage::tool_result("toolu_01", "4C, light rain"));
    let reply = client.chat(&req).await.expect("reply");
    assert_eq!((reply.content.as_str(), reply.finish_reason.as_deref()), ("4C.", Some("stop")));
    let body = &server.requests()[0].body;
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_01", "name": "weather", "input": {"city": "Oslo"}}
        ]})
    );
    // No history before the question; the breakpoint is at the prompt's end, where the next
    // request of the turn, which appends to it, reads the cache up to.
    assert!(body["messages"][0]["content"][0].get("cache_control").is_none());
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "4C, light rain",
             "cache_control": {"type": "ephemeral"}}
        ]})
    );
}

fn stream_events(text_pieces: &[&str]) -> Vec<(&'static str, Value)> {
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                   "content": [], "model": "claude-test", "stop_reason": null,
                   "usage": {"input_tokens": 120, "cache_read_input_tokens": 1000, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        ("ping", json!({"type": "ping"})),
    ];
    for piece in text_pieces {
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}),
        ));
    }
    events.extend([
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 1,
                   "content_block": {"type": "tool_use", "id": "toolu_9", "name": "weather", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"ci"}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "ty\": \"Oslo\"}"}}),
        ),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 31}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    events
}

#[tokio::test]
async fn a_stream_hands_over_text_as_it_arrives_and_assembles_tool_calls() {
    let server = MockAnthropic::start(vec![Reply::events(&stream_events(&["Let me ", "look ", "that up."]))]).await;
    let client = server.client(RetryPolicy::none());
    let mut pieces = Vec::new();
    let reply = client.chat_stream(&request(), &mut |p| pieces.push(p.to_owned())).await.expect("reply");
    assert_eq!(pieces, ["Let me ", "look ", "that up."]);
    assert_eq!(reply.content, "Let me look that up.");
    assert_eq!(reply.tool_calls[0].arguments, "{\"city\": \"Oslo\"}");
    // The prompt is the uncached input plus what was read from the prompt cache, which the usage
    // keeps apart (the reply reported no cache write).
    assert_eq!(reply.usage, Some(Usage::new(1120, 31).with_cache(Some(1000), None)));
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    let sent = &server.requests()[0];
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
}

#[tokio::test]
async fn an_overloaded_stream_is_retried_only_while_no_text_has_been_handed_over() {
    let overloaded =
        ("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
    let mut early = stream_events(&[]);
    early.truncate(1);
    early.push(overloaded.clone());
    let server = MockAnthropic::start(vec![Reply::events(&early), Reply::events(&stream_events(&["fine"]))]).await;
    let client = server.client(fast_retries(2));
    let mut pieces = Vec::new();
    let reply = client.chat_stream(&request(), &mut |p| pieces.push(p.to_owned())).await.expect("retried");
    assert_eq!((server.hits(), pieces.as_slice(), reply.content.as_str()), (2, &["fine".to_owned()][..], "fine"));

    let mut late = stream_events(&["partial"]);
    late.truncate(4);
    late.push(overloaded);
    let server = MockAnthropic::start(vec![Reply::events(&late), Reply::events(&stream_events(&["again"]))]).await;
    let client = server.client(fast_retries(2));
    let mut pieces = Vec::new();
    let err = client.chat_stream(&request(), &mut |p| pieces.push(p.to_owned())).await.expect_err("not retried");
    assert_eq!(server.hits(), 1);
    assert_eq!(pieces, ["partial"]);
    assert!(
        matches!(err, ModelError::Http { status: 529, ref error_type, .. } if error_type.as_deref() == Some("overloaded_error")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_stream_without_message_stop_is_truncated() {
    let mut events = stream_events(&["cut"]);
    events.pop();
    let server = MockAnthropic::start(vec![Reply::events(&events)]).await;
    let err = server.client(RetryPolicy::none()).chat_stream(&request(), &mut |_| {}).await.expect_err("truncated");
    assert_eq!(err.code(), "MODEL_TRUNCATED_BODY", "{err}");
}

#[tokio::test]
async fn rate_limits_carry_retry_after_and_overload_is_retried() {
    let limited = Reply::error(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit.")
        .with_header("retry-after", "7");
    let server = MockAnthropic::start(vec![limited]).await;
    let err = server.client(RetryPolicy::none()).chat(&request()).await.expect_err("limited");
    assert_eq!(err.code(), "MODEL_RATE_LIMITED");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(7)));

    // A wait longer than the policy accepts ends the retries at once, carrying the server's wait.
    let server =
        MockAnthropic::start(vec![Reply::error(429, "rate_limit_error", "slow down").with_header("retry-after", "30")])
            .await;
    let err = server.client(fast_retries(3)).chat(&request()).await.expect_err("gave up");
    assert_eq!((server.hits(), err.root().retry_after()), (1, Some(Duration::from_secs(30))));

    let server = MockAnthropic::start(vec![
        Reply::error(529, "overloaded_error", "Overloaded"),
        Reply::error(429, "rate_limit_error", "slow down").with_header("retry-after", "0"),
        Reply::ok(message(json!([{"type": "text", "text": "ok"}]), "end_turn", 5, 1)),
    ])
    .await;
    let reply = server.client(fast_retries(3)).chat(&request()).await.expect("third attempt");
    assert_eq!((server.hits(), reply.content.as_str()), (3, "ok"));

    let server = MockAnthropic::start(vec![Reply::error(529, "overloaded_error", "Overloaded")]).await;
    let err = server.client(fast_retries(2)).chat(&request()).await.expect_err("exhausted");
    assert_eq!((err.code().as_str(), server.hits()), ("MODEL_RETRIES_EXHAUSTED", 3));
    assert!(matches!(err.root(), ModelError::Http { status: 529, .. }), "{err:?}");
}

#[tokio::test]
async fn final_errors_are_typed_and_never_retried() {
    let server = MockAnthropic::start(vec![Reply::error(
        400,
        "invalid_request_error",
        "prompt is too long: 208451 tokens > 200000 maximum",
    )])
    .await;
    let err = server.client(fast_retries(3)).chat(&request()).await.expect_err("too long");
    assert_eq!((err.code().as_str(), server.hits()), ("MODEL_CONTEXT_LENGTH_EXCEEDED", 1));

    let echo = format!("invalid x-api-key {KEY}");
    let server = MockAnthropic::start(vec![Reply::error(401, "authentication_error", &echo)]).await;
    let err = server.client(fast_retries(3)).chat(&request()).await.expect_err("unauthorized");
    match &err {
        ModelError::Http { status: 401, error_type, message, .. } => {
            assert_eq!(error_type.as_deref(), Some("authentication_error"));
            assert!(message.contains("[REDACTED]") && !message.contains(KEY), "{message}");
        }
        other => panic!("expected HTTP 401, got {other:?}"),
    }
    assert_eq!(server.hits(), 1);
    assert!(!format!("{err} {err:?}").contains(KEY));

    let server = MockAnthropic::start(vec![Reply::ok(json!({"id": "msg_1", "type": "message"}))]).await;
    let err = server.client(RetryPolicy::none()).chat(&request()).await.expect_err("no content");
    assert_eq!(err.code(), "MODEL_MALFORMED_BODY");
}

#[tokio::test]
async fn requests_the_api_cannot_express_are_refused_before_sending() {
    let server = MockAnthropic::start(vec![Reply::ok(message(json!([]), "end_turn", 1, 1))]).await;
    let client = server.client(RetryPolicy::none());
    let mut json_mode = request();
    json_mode.params.response_format = Some(ResponseFormat::JsonObject);
    let mut late_system = request();
    late_system.messages.push(ChatMessage::system("late"));
    for (req, expected) in [(json_mode, "`response_format`"), (late_system, "message 2 is a system message")] {
        let err = client.chat(&req).await.expect_err("refused");
        assert_eq!(err.code(), "MODEL_UNSUPPORTED_REQUEST");
        assert!(err.to_string().contains(expected), "{err}");
        let err = client.chat_stream(&req, &mut |_| {}).await.expect_err("refused");
        assert_eq!(err.code(), "MODEL_UNSUPPORTED_REQUEST");
    }
    assert_eq!(server.hits(), 0);
}

// Counting blocks the calling thread while the scripted server answers on another worker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_tokens_counts_whole_requests_once_behind_the_cache() {
    let server = MockAnthropic::start(vec![Reply::ok(json!({"input_tokens": 397}))]).await;
    let counter = AnthropicTokenCounter::new(server.config(RetryPolicy::none()), 1024).expect("valid config");
    let req = request();
    assert_eq!(counter.count_request(&req.messages, &req.tools), Ok(397));
    assert_eq!(counter.count_request(&req.messages, &req.tools), Ok(397));
    assert_eq!(server.hits(), 1, "the second count is a cache hit");
    assert_eq!((counter.cache_stats().hits, counter.cache_stats().misses), (1, 1));
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages/count_tokens");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        sent.body,
        json!({
            "model": "claude-test",
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?",
                                                     "cache_control": {"type": "ephemeral"}}]}],
            "tools": [{"name": "weather", "description": "Current weather in a city.",
                       "input_schema": weather_tool().parameters, "cache_control": {"type": "ephemeral"}}]
        }),
        "the counted body is the sent body without max_tokens"
    );
    // Another request is another body: counted again.
    assert_eq!(counter.count_request(&req.messages[..1], &[]), Ok(397));
    assert_eq!(server.hits(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_time_guard_counts_with_the_endpoint() {
    let server =
        MockAnthropic::start(vec![Reply::ok(json!({"input_tokens": 1000})), Reply::ok(json!({"input_tokens": 1012}))])
            .await;
    let exact = AnthropicTokenCounter::new(server.config(RetryPolicy::none()), 64).expect("valid config");
    let counter = exact.counter(Encoding::O200kBase, 30);
    assert_eq!(counter.format().counting(), Counting::Exact);
    let req = request();
    assert_eq!(guard_request("answer", &req.messages, &req.tools, 200, 1200, &counter), Ok(1000));
    let err = guard_request("answer", &req.messages, &req.tools, 201, 1200, &counter).expect_err("one over");
    assert!(matches!(err, ContractError::RequestTooLarge { prompt_tokens: 1000, overflow: 1, .. }), "{err:?}");
    assert_eq!(server.hits(), 1, "the guard's second count is a cache hit");
    // Per-message costs are differences of exact prefix counts and sum to the whole.
    // Per-message costs are differences of exact prefix counts; the system prompt is counted with
    // the first message (a request of a system prompt alone is not one the API takes).
    let costs = counter.message_costs(&req.messages).expect("costs");
    assert_eq!(costs, [0, 1012]);
    assert_eq!(counter.count_messages(&req.messages), Ok(1012));
    assert_eq!(server.hits(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_failures_are_token_errors_naming_the_endpoint() {
    let server = MockAnthropic::start(vec![
        Reply::error(529, "overloaded_error", "Overloaded"),
        Reply::ok(json!({"input_tokens": 12})),
    ])
    .await;
    let counter = AnthropicTokenCounter::new(server.config(fast_retries(2)), 16).expect("valid config");
    assert_eq!(counter.count_request(&[ChatMessage::user("hi")], &[]), Ok(12), "retried after the 529");

    let server = MockAnthropic::start(vec![Reply::error(404, "not_found_error", "model: claude-test")]).await;
    let counter = AnthropicTokenCounter::new(server.config(fast_retries(2)), 16).expect("valid config");
    match counter.count_request(&[ChatMessage::user("hi")], &[]) {
        Err(TokenError::Backend { backend, reason }) => {
            assert!(backend.starts_with("anthropic-count-tokens/claude-test@http://127.0.0.1:"), "{backend}");
            assert!(reason.contains("HTTP 404") && reason.contains("model: claude-test"), "{reason}");
        }
        other => panic!("expected a backend error, got {other:?}"),
    }
    let server = MockAnthropic::start(vec![Reply::ok(json!({"tokens": 3}))]).await;
    let counter = AnthropicTokenCounter::new(server.config(RetryPolicy::none()), 16).expect("valid config");
    let err = counter.count_request(&[ChatMessage::user("hi")], &[]).expect_err("no input_tokens");
    assert!(err.to_string().contains("input_tokens"), "{err}");
    // A request the API cannot express is refused without a call.
    let err = counter.count_request(&[ChatMessage::user("hi").with_name("ann")], &[]).expect_err("name");
    assert!(err.to_string().contains("`name`"), "{err}");
    assert_eq!(server.hits(), 1);
}
