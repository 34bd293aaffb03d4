//! A scripted Anthropic API on 127.0.0.1 (`/v1/messages` and `/v1/messages/count_tokens`): each
//! request gets the next reply of the script (the last one repeats), and is recorded with its
//! path, its headers and its body.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use axum::routing::post;
use ctx_runtime::llm::anthropic::{AnthropicClient, AnthropicConfig, RetryPolicy};
use serde_json::{Value, json};

/// The key every test client sends; tests search errors and output for it.
pub const KEY: &str = "sk-ant-test-SECRET-0123456789";

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A JSON body with a status and extra headers.
    Json { status: u16, body: Value, headers: Vec<(&'static str, String)> },
    /// An event stream of these events.
    Sse(Vec<String>),
}

impl Reply {
    /// 200 with this JSON.
    pub fn ok(body: Value) -> Self {
        Reply::Json { status: 200, body, headers: Vec::new() }
    }

    /// An Anthropic error body (`{"type": "error", "error": {…}}`) with this status.
    pub fn error(status: u16, error_type: &str, message: &str) -> Self {
        Reply::Json {
            status,
            body: json!({"type": "error", "error": {"type": error_type, "message": message}}),
            headers: Vec::new(),
        }
    }

    /// The same reply with one more header.
    pub fn with_header(self, name: &'static str, value: &str) -> Self {
        match self {
            Reply::Json { status, body, mut headers } => {
                headers.push((name, value.to_owned()));
                Reply::Json { status, body, headers }
            }
            other => other,
        }
    }

    /// A stream of these events, each `(event name, data)`.
    pub fn events(events: &[(&str, Value)]) -> Self {
        Reply::Sse(events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect())
    }
}

/// A whole Messages reply as the API sends it.
pub fn message(content: Value, stop_reason: &str, input_tokens: usize, output_tokens: usize) -> Value {
    json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
        "content": content, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}
    })
}

/// What the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The request path.
    pub path: String,
    /// Every header, lowercase names.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Value,
}

impl Recorded {
    /// The value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

struct Shared {
    script: Mutex<VecDeque<Reply>>,
    /// Replies for `count_tokens` when given apart; else that route reads `script` too.
    counts: Mutex<VecDeque<Reply>>,
    recorded: Mutex<Vec<Recorded>>,
}

/// The running server; it stops with the test's runtime.
pub struct MockAnthropic {
    /// `http://127.0.0.1:<port>/v1`.
    pub base_url: String,
    shared: Arc<Shared>,
}

impl MockAnthropic {
    /// Starts a server that answers every route with `script`.
    pub async fn start(script: Vec<Reply>) -> Self {
        Self::start_with_counts(script, Vec::new()).await
    }

    /// Starts a server that answers `/v1/messages` with `script` and `count_tokens` with `counts`.
    pub async fn start_with_counts(script: Vec<Reply>, counts: Vec<Reply>) -> Self {
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            counts: Mutex::new(counts.into()),
            recorded: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/v1/messages", post(handle))
            .route("/v1/messages/count_tokens", post(handle))
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockAnthropic { base_url: format!("http://{addr}/v1"), shared }
    }

    /// The requests, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.recorded.lock().expect("lock").clone()
    }

    /// How many requests arrived.
    pub fn hits(&self) -> usize {
        self.shared.recorded.lock().expect("lock").len()
    }

    /// The configuration of a test client: the key, short limits, no proxy, `retry`.
    pub fn config(&self, retry: RetryPolicy) -> AnthropicConfig {
        let mut config = AnthropicConfig::new(&self.base_url, "claude-test").with_api_key(KEY).with_retry(retry);
        config.request_timeout = Duration::from_secs(20);
        config.stream_idle_timeout = Duration::from_secs(20);
        config.system_proxy = false;
        config
    }

    /// A client for this server.
    pub fn client(&self, retry: RetryPolicy) -> AnthropicClient {
        AnthropicClient::new(self.config(retry)).expect("valid config")
    }
}

/// Retries with waits of a few milliseconds, accepting a server-asked wait of up to 1 s.
pub fn fast_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy::default()
        .max_retries(max_retries)
        .initial_backoff(Duration::from_millis(1))
        .max_backoff(Duration::from_millis(4))
        .jitter(false)
        .max_retry_after(Duration::from_secs(1))
}

async fn handle(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    shared.recorded.lock().expect("lock").push(Recorded {
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or_default().to_owned()))
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    });
    let reply = {
        let mut counts = shared.counts.lock().expect("lock");
        let mut script = shared.script.lock().expect("lock");
        let script =
            if uri.path().ends_with("/count_tokens") && !counts.is_empty() { &mut *counts } else { &mut *script };
        if script.len() > 1 { script.pop_front() } else { script.front().cloned() }
    };
    let mut builder = Response::builder();
    let body = match reply {
        None => {
            builder = builder.status(StatusCode::INTERNAL_SERVER_ERROR);
            Body::from("empty script")
        }
        Some(Reply::Json { status, body, headers }) => {
            builder = builder
                .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
                .header(header::CONTENT_TYPE, "application/json");
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
            Body::from(body.to_string())
        }
        Some(Reply::Sse(chunks)) => {
            // One body: how events are cut into chunks is the SSE parser's unit tests' concern.
            builder = builder.status(StatusCode::OK).header(header::CONTENT_TYPE, "text/event-stream");
            Body::from(chunks.concat())
        }
    };
    builder.body(body).unwrap_or_else(|_| Response::new(Body::from("bad test response")))
}
