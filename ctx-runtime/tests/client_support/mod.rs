//! A scripted OpenAI-compatible server on 127.0.0.1 for the client tests: it answers each
//! request with the next reply of its script (the last one repeats) and records what it got.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use axum::routing::post;
use ctx_runtime::llm::openai::{OpenAiClient, OpenAiConfig, RetryPolicy};
use futures_util::StreamExt;
use serde_json::{Value, json};

/// The API key every test client is configured with; secrets tests search output for it.
pub const KEY: &str = "sk-test-SECRET-0123456789";

#[path = "../trace_capture/mod.rs"]
mod trace_capture;
#[allow(unused_imports)] // not every test binary that includes this module captures traces
pub use trace_capture::Captured;

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A JSON body with a status and extra headers.
    Json { status: u16, body: Value, headers: Vec<(&'static str, String)> },
    /// Any body with a status and content type.
    Text { status: u16, content_type: &'static str, body: String },
    /// A 200 whose `Content-Length` promises more than is sent before the connection breaks.
    Truncated { declared_len: usize, sent: String },
    /// An event stream sent as these chunks; then either the end of the body or silence.
    Sse { chunks: Vec<String>, then_hang: bool },
    /// No answer at all.
    Hang,
}

impl Reply {
    /// 200 with this JSON.
    pub fn ok(body: Value) -> Self {
        Reply::Json { status: 200, body, headers: Vec::new() }
    }

    /// This status with this JSON.
    pub fn status(status: u16, body: Value) -> Self {
        Reply::Json { status, body, headers: Vec::new() }
    }

    /// A whole event stream, one chunk per string.
    pub fn sse(chunks: &[&str]) -> Self {
        Reply::Sse { chunks: chunks.iter().map(|c| (*c).to_owned()).collect(), then_hang: false }
    }
}

/// A chat completion as OpenAI sends it.
pub fn completion(content: &str, prompt_tokens: usize, completion_tokens: usize) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "logprobs": null,
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
        "system_fingerprint": "fp_test"
    })
}

/// What the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// The `Accept` header.
    pub accept: Option<String>,
    /// The JSON body.
    pub body: Value,
}

struct Shared {
    script: Mutex<VecDeque<Reply>>,
    recorded: Mutex<Vec<Recorded>>,
}

/// The running server; it stops with the test's runtime.
pub struct MockServer {
    /// `http://127.0.0.1:<port>/v1`.
    pub base_url: String,
    shared: Arc<Shared>,
}

impl MockServer {
    /// Starts a server that answers with `script`.
    pub async fn start(script: Vec<Reply>) -> Self {
        let shared = Arc::new(Shared { script: Mutex::new(script.into()), recorded: Mutex::new(Vec::new()) });
        // The same script answers either OpenAI API (`ResponsesClient` posts to `/v1/responses`).
        let app = Router::new()
            .route("/v1/chat/completions", post(handle))
            .route("/v1/responses", post(handle))
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockServer { base_url: format!("http://{addr}/v1"), shared }
    }

    /// How many requests arrived.
    pub fn hits(&self) -> usize {
        self.shared.recorded.lock().expect("lock").len()
    }

    /// The requests, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.recorded.lock().expect("lock").clone()
    }

    /// A client for this server with `retry`.
    pub fn client(&self, retry: RetryPolicy) -> OpenAiClient {
        OpenAiClient::new(self.config(retry)).expect("valid config")
    }

    /// The configuration [`Self::client`] uses.
    pub fn config(&self, retry: RetryPolicy) -> OpenAiConfig {
        let mut config = OpenAiConfig::new(&self.base_url, "test-model").with_api_key(KEY);
        // Generous: a passing test never waits for them; the timeout tests set their own.
        config.request_timeout = Duration::from_secs(20);
        config.stream_idle_timeout = Duration::from_secs(20);
        config.retry = retry;
        // Whatever proxy the environment names, the test talks to 127.0.0.1 directly.
        config.system_proxy = false;
        config
    }
}

/// Retries with waits of a few milliseconds.
pub fn fast_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy::default()
        .max_retries(max_retries)
        .initial_backoff(Duration::from_millis(1))
        .max_backoff(Duration::from_millis(4))
        .jitter(true)
        .max_retry_after(Duration::from_secs(1))
}

async fn handle(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    shared.recorded.lock().expect("lock").push(Recorded {
        authorization: text(header::AUTHORIZATION),
        accept: text(header::ACCEPT),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    });
    let reply = {
        let mut script = shared.script.lock().expect("lock");
        if script.len() > 1 { script.pop_front() } else { script.front().cloned() }
    };
    let Some(reply) = reply else { return respond(500, "text/plain", Body::from("empty script"), &[]) };
    match reply {
        Reply::Json { status, body, headers } => {
            respond(status, "application/json", Body::from(body.to_string()), &headers)
        }
        Reply::Text { status, content_type, body } => respond(status, content_type, Body::from(body), &[]),
        Reply::Truncated { declared_len, sent } => {
            // The body stream pauses once before failing, so that hyper flushes the head and the
            // first bytes before it drops the connection.
            let parts = futures_util::stream::iter([Ok(Bytes::from(sent))]).chain(futures_util::stream::once(async {
                tokio::task::yield_now().await;
                Err(std::io::Error::other("connection cut by the test server"))
            }));
            let mut response = respond(200, "application/json", Body::from_stream(parts), &[]);
            response.headers_mut().insert(header::CONTENT_LENGTH, declared_len.into());
            response
        }
        Reply::Sse { chunks, then_hang } => {
            let sent = futures_util::stream::iter(chunks.into_iter().map(|c| Ok::<_, Infallible>(Bytes::from(c))));
            let body = if then_hang {
                Body::from_stream(sent.chain(futures_util::stream::pending()))
            } else {
                Body::from_stream(sent)
            };
            respond(200, "text/event-stream", body, &[])
        }
        Reply::Hang => std::future::pending().await,
    }
}

fn respond(status: u16, content_type: &str, body: Body, headers: &[(&'static str, String)]) -> Response {
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, content_type);
    for (name, value) in headers {
        builder = builder.header(*name, value.as_str());
    }
    builder.body(body).unwrap_or_else(|_| Response::new(Body::from("bad test response")))
}
