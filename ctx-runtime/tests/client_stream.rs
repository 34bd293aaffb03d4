//! `OpenAiClient::chat_stream` against a scripted server on 127.0.0.1 sending server-sent events.

#![cfg(feature = "openai")]

mod client_support;

use client_support::{MockServer, Reply, completion, fast_retries};
use ctx_runtime::llm::openai::RetryPolicy;
use ctx_runtime::llm::{ChatModel, ChatRequest, ModelError, Usage};
use ctx_runtime::{ChatMessage, ErrorCode, ToolCall};
use serde_json::json;

fn request() -> ChatRequest {
    ChatRequest::new(vec![ChatMessage::user("Count to three.")], 16)
}

fn chunk(content: &str) -> String {
    let c = json!({"id": "c", "object": "chat.completion.chunk", "model": "test-model",
                   "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]});
    format!("data: {c}\n\n")
}

fn last_chunk() -> String {
    let c = json!({"id": "c", "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    format!("data: {c}\n\n")
}

fn usage_chunk(prompt: usize, completion: usize) -> String {
    let c = json!({"id": "c", "object": "chat.completion.chunk", "choices": [],
                   "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}});
    format!("data: {c}\n\n")
}

#[tokio::test]
async fn tokens_arrive_in_order_and_add_up_to_the_reply() {
    let first = chunk("One");
    // Split one event across two network chunks, and send a keep-alive comment.
    let (head, tail) = first.split_at(first.len() / 2);
    let chunks = [
        ": ping\n\n".to_owned(),
        head.to_owned(),
        tail.to_owned(),
        chunk(", two"),
        chunk(", three."),
        last_chunk(),
        usage_chunk(11, 5),
        "data: [DONE]\n\n".to_owned(),
    ];
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![Reply::sse(&chunks)]).await;
    let client = server.client(RetryPolicy::none());
    let mut tokens = Vec::new();
    let reply = client.chat_stream(&request(), &mut |t| tokens.push(t.to_owned())).await.expect("stream");
    assert_eq!(tokens, ["One", ", two", ", three."]);
    assert_eq!(reply.content, "One, two, three.");
    assert_eq!(reply.usage, Some(Usage::new(11, 5)));
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));

    let sent = &server.requests()[0];
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(sent.accept.as_deref(), Some("text/event-stream"));
}

#[tokio::test]
async fn streamed_tool_calls_are_assembled() {
    let call_start = json!({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "call_9", "type": "function", "function": {"name": "search_code", "arguments": ""}}]}}]});
    let call_args = json!({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"arguments": "{\"query\":"}}]}}]});
    let call_end = json!({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"arguments": "\"totals\"}"}}]}, "finish_reason": "tool_calls"}]});
    let chunks: Vec<String> = [call_start, call_args, call_end]
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .chain(["data: [DONE]\n\n".into()])
        .collect();
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![Reply::sse(&chunks)]).await;
    let reply = server.client(RetryPolicy::none()).chat_stream(&request(), &mut |_| {}).await.expect("stream");
    assert_eq!(reply.tool_calls, [ToolCall::new("call_9", "search_code", "{\"query\":\"totals\"}")]);
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
}

#[tokio::test]
async fn a_stream_cut_after_text_is_truncated_and_not_retried() {
    let chunks = [chunk("partial"), chunk(" answ")];
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![Reply::sse(&chunks), Reply::sse(&["data: [DONE]\n\n"])]).await;
    let mut tokens = String::new();
    let err = server
        .client(fast_retries(3))
        .chat_stream(&request(), &mut |t| tokens.push_str(t))
        .await
        .expect_err("no end of stream");
    assert_eq!(err.code(), "MODEL_TRUNCATED_BODY", "{err:?}");
    assert_eq!(tokens, "partial answ");
    assert_eq!(server.hits(), 1, "text already delivered: no retry");
}

#[tokio::test]
async fn a_silent_stream_times_out() {
    let server = MockServer::start(vec![Reply::Sse { chunks: vec![chunk("Hel")], then_hang: true }]).await;
    let mut config = server.config(fast_retries(2));
    config.stream_idle_timeout = std::time::Duration::from_millis(300);
    let limit = config.stream_idle_timeout;
    let client = ctx_runtime::llm::openai::OpenAiClient::new(config).expect("valid");
    let err = client.chat_stream(&request(), &mut |_| {}).await.expect_err("silence");
    assert_eq!(err, ModelError::Timeout { model: "test-model".into(), phase: "stream chunk", limit });
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn failures_before_any_text_are_retried() {
    let busy = Reply::status(503, json!({"error": {"message": "overloaded"}}));
    let chunks = [chunk("ok"), last_chunk(), "data: [DONE]\n\n".to_owned()];
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![busy, Reply::sse(&chunks)]).await;
    let reply = server.client(fast_retries(2)).chat_stream(&request(), &mut |_| {}).await.expect("second try");
    assert_eq!(reply.content, "ok");
    assert_eq!(server.hits(), 2);
}

#[tokio::test]
async fn context_length_errors_come_as_status_or_inside_the_stream() {
    let status = Reply::status(
        400,
        json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                         "type": "exceed_context_size_error"}}),
    );
    let server = MockServer::start(vec![status]).await;
    let err = server.client(fast_retries(2)).chat_stream(&request(), &mut |_| {}).await.expect_err("too long");
    assert_eq!(err.code(), "MODEL_CONTEXT_LENGTH_EXCEEDED", "{err:?}");

    let in_stream = format!(
        "data: {}\n\n",
        json!({"error": {"message": "This model's maximum context length is 4096 tokens.", "code": 400}})
    );
    let server = MockServer::start(vec![Reply::sse(&[in_stream.as_str()])]).await;
    let err = server.client(fast_retries(2)).chat_stream(&request(), &mut |_| {}).await.expect_err("too long");
    assert_eq!(err.code(), "MODEL_CONTEXT_LENGTH_EXCEEDED", "{err:?}");
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn a_malformed_chunk_is_reported_with_its_text() {
    let server = MockServer::start(vec![Reply::sse(&["data: {\"choices\": [nope\n\n"])]).await;
    let err = server.client(RetryPolicy::none()).chat_stream(&request(), &mut |_| {}).await.expect_err("bad chunk");
    assert_eq!(err.code(), "MODEL_MALFORMED_BODY");
    assert!(err.to_string().contains("[nope"), "{err}");
}

#[tokio::test]
async fn an_endless_line_is_refused_instead_of_filling_memory() {
    // 33 MiB without a line break: more than the client reads of any body.
    let endless = format!("data: {}", "a".repeat(33 * 1024 * 1024));
    let server = MockServer::start(vec![Reply::sse(&[endless.as_str()])]).await;
    let err = server.client(RetryPolicy::none()).chat_stream(&request(), &mut |_| {}).await.expect_err("too large");
    assert_eq!(err.code(), "MODEL_MALFORMED_BODY");
    assert!(err.to_string().contains("larger than"), "{err}");
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_still_works() {
    let server = MockServer::start(vec![Reply::ok(completion("whole reply", 4, 2))]).await;
    let mut tokens = Vec::new();
    let reply = server
        .client(RetryPolicy::none())
        .chat_stream(&request(), &mut |t| tokens.push(t.to_owned()))
        .await
        .expect("json reply");
    assert_eq!(tokens, ["whole reply"]);
    assert_eq!(reply.usage, Some(Usage::new(4, 2)));
}
