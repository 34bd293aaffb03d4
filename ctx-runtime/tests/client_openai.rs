//! `OpenAiClient` against a scripted server on 127.0.0.1: replies, retries, timeouts and every
//! kind of failure, non-streaming.

#![cfg(feature = "openai")]

mod client_support;

use std::time::Duration;

use client_support::{MockServer, Reply, completion, fast_retries};
use ctx_runtime::llm::openai::{MaxTokensParam, OpenAiClient, OpenAiConfig, RetryPolicy};
use ctx_runtime::llm::{ChatModel, ChatRequest, ModelError, Usage};
use ctx_runtime::{ChatMessage, ErrorCode, ToolCall, ToolSchema};
use serde_json::json;

fn request() -> ChatRequest {
    ChatRequest::new(vec![ChatMessage::system("Be brief."), ChatMessage::user("Say hi.")], 32)
}

#[tokio::test]
async fn a_normal_reply_and_the_request_that_produced_it() {
    let server = MockServer::start(vec![Reply::ok(completion("Hi!", 21, 2))]).await;
    let client = server.client(RetryPolicy::none());
    let mut req = request();
    req.params.temperature = Some(0.2);
    req.tools.push(ToolSchema::new(
        "search_code",
        "Searches the code base.",
        json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    ));
    let reply = client.chat(&req).await.expect("reply");
    assert_eq!(reply.content, "Hi!");
    assert_eq!(reply.usage, Some(Usage::new(21, 2)));
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(client.model_name(), "test-model");

    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].authorization.as_deref(), Some("Bearer sk-test-SECRET-0123456789"));
    let body = &sent[0].body;
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["max_tokens"], 32);
    assert!(body.get("max_completion_tokens").is_none());
    assert!(body.get("stream").is_none());
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hi."}])
    );
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "search_code");
    assert_eq!(body["temperature"].as_f64().map(|t| (t * 10.0).round()), Some(2.0));
}

#[tokio::test]
async fn tool_calls_and_null_content_are_read() {
    let body = json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "search_code", "arguments": "{\"query\":\"totals\"}"}}]
        }}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 12,
                  "prompt_tokens_details": {"cached_tokens": 32, "audio_tokens": 0}}
    });
    let server = MockServer::start(vec![Reply::ok(body)]).await;
    let reply = server.client(RetryPolicy::none()).chat(&request()).await.expect("reply");
    assert_eq!(reply.content, "");
    assert_eq!(reply.tool_calls, [ToolCall::new("call_1", "search_code", "{\"query\":\"totals\"}")]);
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    // `prompt_tokens_details.cached_tokens` is the part of the prompt read from the cache.
    assert_eq!(reply.usage, Some(Usage::new(50, 12).with_cache(Some(32), None)));
    assert_eq!(reply.usage.map(|u| u.uncached_prompt_tokens()), Some(18));
}

#[tokio::test]
async fn max_completion_tokens_when_configured_and_no_key_when_none() {
    let server = MockServer::start(vec![Reply::ok(completion("ok", 1, 1))]).await;
    let mut config = server.config(RetryPolicy::none());
    config.max_tokens_param = MaxTokensParam::MaxCompletionTokens;
    config.api_key = None;
    OpenAiClient::new(config).expect("valid").chat(&request()).await.expect("reply");
    let sent = &server.requests()[0];
    assert_eq!(sent.body["max_completion_tokens"], 32);
    assert!(sent.body.get("max_tokens").is_none());
    assert_eq!(sent.authorization, None);
}

#[tokio::test]
async fn a_429_is_retried_after_the_servers_retry_after() {
    let limited = Reply::Json {
        status: 429,
        body: json!({"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}),
        headers: vec![("retry-after", "0".into())],
    };
    let server = MockServer::start(vec![limited, Reply::ok(completion("after the wait", 3, 3))]).await;
    let reply = server.client(fast_retries(3)).chat(&request()).await.expect("second attempt succeeds");
    assert_eq!(reply.content, "after the wait");
    assert_eq!(server.hits(), 2);
}

#[tokio::test]
async fn a_retry_after_beyond_the_policy_is_returned_at_once() {
    let limited = Reply::Json {
        status: 429,
        body: json!({"error": {"message": "Slow down"}}),
        headers: vec![("retry-after", "120".into())],
    };
    let server = MockServer::start(vec![limited]).await;
    let err = server.client(fast_retries(3)).chat(&request()).await.expect_err("gives up");
    assert_eq!(err.code(), "MODEL_RATE_LIMITED");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(120)));
    assert!(err.to_string().contains("Slow down"), "{err}");
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn server_errors_are_retried_until_the_retries_run_out() {
    let failing = Reply::status(500, json!({"error": {"message": "The server had an error", "type": "server_error"}}));
    let server = MockServer::start(vec![failing]).await;
    let err = server.client(fast_retries(2)).chat(&request()).await.expect_err("always 500");
    match &err {
        ModelError::RetriesExhausted { attempts, last, .. } => {
            assert_eq!(*attempts, 3);
            assert!(
                matches!(last.as_ref(), ModelError::Http { status: 500, message, .. } if message == "The server had an error"),
                "{last:?}"
            );
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
    assert_eq!(err.code(), "MODEL_RETRIES_EXHAUSTED");
    assert_eq!(server.hits(), 3);
}

#[tokio::test]
async fn a_server_that_does_not_answer_times_out_on_every_attempt() {
    let server = MockServer::start(vec![Reply::Hang]).await;
    let mut config = server.config(fast_retries(1));
    config.request_timeout = Duration::from_millis(200);
    let err = OpenAiClient::new(config).expect("valid").chat(&request()).await.expect_err("no answer");
    match &err {
        ModelError::RetriesExhausted { attempts: 2, last, .. } => assert_eq!(
            **last,
            ModelError::Timeout { model: "test-model".into(), phase: "response", limit: Duration::from_millis(200) }
        ),
        other => panic!("expected two timeouts, got {other:?}"),
    }
    assert_eq!(err.root().code(), "MODEL_TIMEOUT");
    assert_eq!(server.hits(), 2);
}

#[tokio::test]
async fn malformed_json_is_not_retried() {
    let server = MockServer::start(vec![Reply::Text {
        status: 200,
        content_type: "application/json",
        body: "<html>upstream says hello</html>".into(),
    }])
    .await;
    let err = server.client(fast_retries(3)).chat(&request()).await.expect_err("not JSON");
    assert_eq!(err.code(), "MODEL_MALFORMED_BODY");
    assert!(err.to_string().contains("<html>upstream says hello</html>"), "{err}");
    assert_eq!(server.hits(), 1);

    let server = MockServer::start(vec![Reply::ok(json!({"id": "x", "object": "chat.completion"}))]).await;
    let err = server.client(RetryPolicy::none()).chat(&request()).await.expect_err("no choices field");
    assert_eq!(err.code(), "MODEL_MALFORMED_BODY");
    assert!(err.to_string().contains("no `choices` field"), "{err}");
}

#[tokio::test]
async fn a_body_cut_by_the_connection_is_truncated() {
    let full = completion("a reply that will not arrive whole", 5, 9).to_string();
    let sent = full[..full.len() / 2].to_owned();
    let server = MockServer::start(vec![Reply::Truncated { declared_len: full.len(), sent: sent.clone() }]).await;
    let err = server.client(RetryPolicy::none()).chat(&request()).await.expect_err("cut");
    assert_eq!(err.code(), "MODEL_TRUNCATED_BODY", "{err:?}");
    assert!(err.is_retryable());
}

#[tokio::test]
async fn json_that_stops_early_is_truncated_and_retried() {
    let full = completion("cut short", 5, 2).to_string();
    let cut = Reply::Text { status: 200, content_type: "application/json", body: full[..full.len() - 20].to_owned() };
    let server = MockServer::start(vec![cut, Reply::ok(completion("whole", 5, 1))]).await;
    let reply = server.client(fast_retries(1)).chat(&request()).await.expect("retry succeeds");
    assert_eq!(reply.content, "whole");
    assert_eq!(server.hits(), 2);

    let server = MockServer::start(vec![Reply::Text {
        status: 200,
        content_type: "application/json",
        body: full[..full.len() - 20].to_owned(),
    }])
    .await;
    match server.client(RetryPolicy::none()).chat(&request()).await {
        Err(ModelError::TruncatedBody { received_bytes, .. }) => assert_eq!(received_bytes, full.len() - 20),
        other => panic!("expected TruncatedBody, got {other:?}"),
    }
}

#[tokio::test]
async fn context_length_errors_of_openai_vllm_and_llama_cpp() {
    let bodies = [
        json!({"error": {"message": "This model's maximum context length is 16385 tokens. However, your messages resulted in 17000 tokens. Please reduce the length of the messages.",
                         "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
        json!({"object": "error", "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
               "type": "BadRequestError", "param": null, "code": 400}),
        json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                         "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}}),
    ];
    for body in bodies {
        let server = MockServer::start(vec![Reply::status(400, body.clone())]).await;
        let err = server.client(fast_retries(3)).chat(&request()).await.expect_err("too long");
        match &err {
            ModelError::ContextLengthExceeded { model, message } => {
                assert_eq!(model, "test-model");
                assert!(!message.is_empty());
            }
            other => panic!("expected ContextLengthExceeded for {body}, got {other:?}"),
        }
        assert_eq!(server.hits(), 1, "not retried");
    }
}

#[tokio::test]
async fn other_client_errors_keep_the_servers_words() {
    let body = json!({"error": {"message": "The model `gpt-9` does not exist", "type": "invalid_request_error", "code": "model_not_found"}});
    let server = MockServer::start(vec![Reply::status(404, body)]).await;
    let err = server.client(fast_retries(3)).chat(&request()).await.expect_err("404");
    assert_eq!(
        err,
        ModelError::Http {
            model: "test-model".into(),
            status: 404,
            message: "The model `gpt-9` does not exist".into(),
            error_type: Some("invalid_request_error".into()),
            error_code: Some("model_not_found".into()),
        }
    );
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn no_choices_is_its_own_error() {
    let server = MockServer::start(vec![Reply::ok(
        json!({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 0}}),
    )])
    .await;
    let err = server.client(RetryPolicy::none()).chat(&request()).await.expect_err("empty");
    assert_eq!(err, ModelError::EmptyChoices { model: "test-model".into() });
    assert_eq!(err.code(), "MODEL_EMPTY_CHOICES");
}

#[tokio::test]
async fn a_closed_port_is_a_connect_error() {
    // Take a free port on 127.0.0.1 and close it again: nothing listens there.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    drop(listener);
    let mut config = OpenAiConfig::new(format!("http://{addr}/v1"), "m").with_retry(fast_retries(1));
    config.system_proxy = false;
    let err = OpenAiClient::new(config).expect("valid").chat(&request()).await.expect_err("refused");
    match err.root() {
        root @ ModelError::Connect { url, .. } => {
            assert_eq!(url, &format!("http://{addr}/v1/chat/completions"));
            assert_eq!(root.code(), "MODEL_CONNECT");
        }
        other => panic!("expected Connect, got {other:?}"),
    }
    assert!(matches!(err, ModelError::RetriesExhausted { attempts: 2, .. }), "{err:?}");
}

#[tokio::test]
async fn invalid_configurations_are_reported_whole() {
    let mut config = OpenAiConfig::new("localhost:8080", "");
    config.connect_timeout = Duration::ZERO;
    let err = OpenAiClient::new(config).expect_err("invalid");
    let ModelError::Config(issues) = &err else { panic!("expected Config, got {err:?}") };
    let paths: Vec<String> = issues.issues.iter().map(|i| i.path.to_string()).collect();
    assert_eq!(paths, ["base_url", "model", "connect_timeout"], "{err}");
}

/// A base URL without `/v1` reaches a path the server does not serve: the 404 names the URL the
/// client posted to and says what is probably missing.
#[tokio::test]
async fn a_404_names_the_url_and_hints_at_a_missing_v1() {
    let server = MockServer::start(vec![Reply::ok(completion("unused", 1, 1))]).await;
    let mut config = server.config(fast_retries(0));
    config.base_url = config.base_url.trim_end_matches("/v1").to_owned();
    let client = OpenAiClient::new(config).expect("valid config");
    let err = client.chat(&request()).await.expect_err("no route at /chat/completions");
    let text = err.to_string();
    assert!(matches!(&err, ModelError::Http { status: 404, .. }), "{err:?}");
    assert!(text.contains(client.endpoint()), "the URL is named: {text}");
    assert!(text.contains("/v1"), "the hint names /v1: {text}");
    assert_eq!(server.hits(), 0);
}
