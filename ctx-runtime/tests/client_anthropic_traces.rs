//! The Anthropic client never shows its key: not in `Debug`, errors or traces.
//!
//! Alone in its binary: the trace is captured with a thread's default subscriber, and a tracing
//! callsite first reached by another test thread (with no subscriber) would cache "never" for it
//! and lose lines from the capture.

mod anthropic_support;
mod trace_capture;

use anthropic_support::{KEY, MockAnthropic, Reply, fast_retries};
use ctx_runtime::ChatMessage;
use ctx_runtime::llm::{ChatModel, ChatRequest};
use ctx_runtime::tokens::RequestCounter;
use trace_capture::Captured;

fn request() -> ChatRequest {
    ChatRequest::new(vec![ChatMessage::system("Be brief."), ChatMessage::user("Weather in Oslo?")], 256)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_stays_in_its_header_not_in_debug_errors_or_traces() {
    let (captured, _guard) = Captured::traces();

    let echo = format!("rate limited for key {KEY}");
    let server = MockAnthropic::start(vec![
        Reply::error(429, "rate_limit_error", &echo).with_header("retry-after", "0"),
        Reply::error(401, "authentication_error", &format!("invalid x-api-key: {KEY}")),
    ])
    .await;
    let client = server.client(fast_retries(2));
    let counter = client.token_counter(16).expect("counter");
    for shown in [format!("{client:?}"), format!("{:?}", client.config()), format!("{counter:?}")] {
        assert!(!shown.contains(KEY) && !shown.contains("SECRET"), "{shown}");
    }
    let mut req = request();
    req.step_id = Some("answer".into());
    let err = client.chat(&req).await.expect_err("401 after the retried 429");
    assert_eq!(server.hits(), 2);
    assert!(err.to_string().contains("invalid x-api-key: [REDACTED]"), "{err}");
    let count_err = counter.count_request(&req.messages, &[]).expect_err("401");
    for shown in [err.to_string(), format!("{err:?}"), count_err.to_string(), format!("{count_err:?}")] {
        assert!(!shown.contains(KEY), "{shown}");
    }
    let log = captured.text();
    assert!(log.contains("model_call") && log.contains("retrying"), "traced: {log}");
    assert!(!log.contains(KEY), "{log}");
}
