//! The API key never leaves the `Authorization` header: not in `Debug`, not in errors (even
//! when the server echoes it), not in traces.

#![cfg(feature = "openai")]

mod client_support;

use client_support::{Captured, KEY, MockServer, Reply, fast_retries};
use ctx_runtime::llm::openai::{OpenAiClient, OpenAiConfig};
use ctx_runtime::llm::{ChatModel, ChatRequest};
use ctx_runtime::{ChatMessage, CtxError};
use serde_json::json;

#[test]
fn debug_of_config_and_client_redacts_the_key() {
    let config = OpenAiConfig::new("http://127.0.0.1:9/v1", "m").with_api_key(KEY);
    let client = OpenAiClient::new(config.clone()).expect("valid");
    for shown in [format!("{config:?}"), format!("{client:?}"), format!("{client:#?}")] {
        assert!(!shown.contains(KEY), "{shown}");
        assert!(shown.contains("[REDACTED]"), "{shown}");
    }
}

#[tokio::test]
async fn errors_and_traces_never_carry_the_key() {
    let (captured, _guard) = Captured::traces();

    let limited = Reply::Json {
        status: 429,
        body: json!({"error": {"message": format!("Too many requests for key {KEY}")}}),
        headers: vec![("retry-after", "0".into())],
    };
    let echo = Reply::status(
        401,
        json!({"error": {"message": format!("Incorrect API key provided: {KEY}"), "code": "invalid_api_key"}}),
    );
    let server = MockServer::start(vec![limited, echo]).await;
    let client = server.client(fast_retries(2));
    let mut request = ChatRequest::new(vec![ChatMessage::user("hi")], 8);
    request.step_id = Some("answer".into());
    let err = client.chat(&request).await.expect_err("401");
    assert_eq!(server.hits(), 2);
    assert_eq!(server.requests()[0].authorization.as_deref(), Some(format!("Bearer {KEY}").as_str()));

    let wrapped = CtxError::from(err.clone());
    for shown in [err.to_string(), format!("{err:?}"), wrapped.to_string(), format!("{wrapped:?}")] {
        assert!(!shown.contains(KEY), "{shown}");
    }
    assert!(err.to_string().contains("Incorrect API key provided: [REDACTED]"), "{err}");

    let log = captured.text();
    assert!(log.contains("model_call"), "the call is traced: {log}");
    assert!(log.contains("retrying"), "the retry is traced: {log}");
    assert!(log.contains("step=\"answer\""), "the step is named: {log}");
    assert!(!log.contains(KEY), "{log}");
}
