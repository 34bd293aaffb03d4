//! The API key never reaches logs, traces, errors or `Debug`, whatever the server sends back.
//!
//! Servers, gateways and proxies echo what they receive: an "invalid key" message quoting the
//! key, an error page that dumps the request headers, a debugging endpoint configured as the base
//! URL by mistake that answers with the request it got. Every failure path of the client is
//! driven here with a body that contains the key, and every error (`Display`, `Debug`, wrapped in
//! `CtxError`) and every trace line (TRACE level, HTTP stack included) is searched for it.

#![cfg(feature = "openai")]

mod client_support;

use client_support::{Captured, KEY, MockServer, Reply, fast_retries};
use ctx_runtime::llm::openai::{OpenAiClient, OpenAiConfig};
use ctx_runtime::llm::{ChatModel, ChatRequest, ModelError};
use ctx_runtime::{ChatMessage, CtxError, ErrorCode};
use serde_json::json;

/// A request/response echo as a debugging endpoint would send it.
fn echo_of_the_request() -> serde_json::Value {
    json!({"method": "POST", "headers": {"authorization": format!("Bearer {KEY}"), "content-type": "application/json"}})
}

fn sse_chunk(body: &str) -> String {
    format!("data: {body}\n\n")
}

/// A scripted failure: its name, the replies, whether it is streamed, the error code it gives.
type Failure = (&'static str, Vec<Reply>, bool, &'static str);

fn proxy_page() -> String {
    format!("<html><body><h1>502 Bad Gateway</h1><pre>Authorization: Bearer {KEY}</pre></body></html>")
}

/// Error replies whose message the client quotes.
fn server_errors() -> Vec<Failure> {
    vec![
        (
            "401 quoting the key",
            vec![Reply::status(401, json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}))],
            false,
            "MODEL_HTTP_STATUS",
        ),
        (
            "context length error quoting the key",
            vec![Reply::status(
                400,
                json!({"error": {"message": format!("maximum context length exceeded for key {KEY}"), "code": "context_length_exceeded"}}),
            )],
            false,
            "MODEL_CONTEXT_LENGTH_EXCEEDED",
        ),
        (
            "503 proxy page with headers, retried until exhausted",
            vec![Reply::Text { status: 503, content_type: "text/html", body: proxy_page() }],
            false,
            "MODEL_RETRIES_EXHAUSTED",
        ),
        (
            "stream: error event quoting the key",
            vec![Reply::sse(&[&sse_chunk(&json!({"error": {"message": format!("bad key {KEY}")}}).to_string())])],
            true,
            "MODEL_HTTP_STATUS",
        ),
    ]
}

/// Successful replies that are not chat completions; the error quotes the start of the body.
fn malformed_bodies() -> Vec<Failure> {
    vec![
        (
            "200 HTML page with headers",
            vec![Reply::Text { status: 200, content_type: "text/html", body: proxy_page() }],
            false,
            "MODEL_MALFORMED_BODY",
        ),
        ("200 JSON echo of the request", vec![Reply::ok(echo_of_the_request())], false, "MODEL_MALFORMED_BODY"),
        (
            "200 JSON echo without choices",
            vec![Reply::ok(json!({"object": "chat.completion", "echo": format!("Bearer {KEY}")}))],
            false,
            "MODEL_MALFORMED_BODY",
        ),
        (
            "stream: malformed chunk echoing the key",
            vec![Reply::sse(&[&sse_chunk(&format!("{{not json, Authorization: Bearer {KEY}"))])],
            true,
            "MODEL_MALFORMED_BODY",
        ),
    ]
}

/// Runs each failure against a fresh server and returns every place the key showed up: errors
/// (`Display`, `Debug`, wrapped in `CtxError`) and trace lines at TRACE level.
async fn leaks_of(failures: Vec<Failure>) -> Vec<String> {
    let (captured, _guard) = Captured::traces();

    let mut leaks = Vec::new();
    for (name, script, stream, code) in failures {
        let server = MockServer::start(script).await;
        let client = server.client(fast_retries(1));
        let mut request = ChatRequest::new(vec![ChatMessage::user("hi")], 8);
        request.step_id = Some("answer".into());
        let err: ModelError = if stream {
            client.chat_stream(&request, &mut |_| {}).await.expect_err(name)
        } else {
            client.chat(&request).await.expect_err(name)
        };
        assert_eq!(
            server.requests()[0].authorization.as_deref(),
            Some(format!("Bearer {KEY}").as_str()),
            "{name}: the key is sent in the header"
        );
        assert_eq!(err.code(), code, "{name}: {err}");
        let wrapped = CtxError::from(err.clone());
        for shown in [err.to_string(), format!("{err:?}"), wrapped.to_string(), format!("{wrapped:?}")] {
            if shown.contains(KEY) {
                leaks.push(format!("{name}: {shown}"));
            }
        }
    }
    let log = captured.text();
    assert!(log.contains("model_call"), "the calls are traced");
    leaks.extend(log.lines().filter(|l| l.contains(KEY)).map(|l| format!("trace: {l}")));
    leaks
}

#[tokio::test]
async fn server_errors_quoting_the_key_are_redacted_in_errors_and_traces() {
    let leaks = leaks_of(server_errors()).await;
    assert!(leaks.is_empty(), "the API key leaked:\n{}", leaks.join("\n"));
}

/// Regression test for a leak found by this suite (fixed by redacting every attempt's error): `ModelError::MalformedBody` quotes the first
/// 300 bytes of the body (`excerpt`) without redacting the key, on four paths of
/// `llm/openai/mod.rs` and `failure.rs` (`parse_error`, "not a chat completion", "no `choices`",
/// a malformed stream chunk). A proxy error page or a debugging endpoint that echoes the request
/// headers puts the key into the error's `Display` and `Debug`.
#[tokio::test]
async fn malformed_bodies_echoing_the_key_are_redacted_in_errors_and_traces() {
    let leaks = leaks_of(malformed_bodies()).await;
    assert!(leaks.is_empty(), "the API key leaked:\n{}", leaks.join("\n"));
}

#[test]
fn debug_and_configuration_errors_never_show_the_key() {
    // A key read from a file usually ends with a newline; the trimmed key is what must not show.
    let config = OpenAiConfig::new("http://127.0.0.1:9/v1", "m").with_api_key(format!("  {KEY}\n"));
    assert_eq!(config.api_key.as_ref().map(|k| k.expose()), Some(KEY));
    let client = OpenAiClient::new(config.clone()).expect("valid");
    for shown in [format!("{config:?}"), format!("{config:#?}"), format!("{client:?}")] {
        assert!(!shown.contains(KEY), "{shown}");
    }

    // An invalid configuration read from the environment: every issue listed, the key in none.
    let env = |name: &str| match name {
        "OPENAI_API_KEY" => Some(KEY.to_owned()),
        "CTX_MODEL" => Some(" ".to_owned()),
        _ => None,
    };
    let err = OpenAiConfig::from_lookup(env).expect_err("no model");
    for shown in [err.to_string(), format!("{err:?}")] {
        assert!(!shown.contains(KEY), "{shown}");
    }
    let env = |name: &str| match name {
        "OPENAI_API_KEY" => Some(KEY.to_owned()),
        "CTX_MODEL" => Some("gpt-4o".to_owned()),
        "CTX_BASE_URL" => Some(format!("ftp://user:{KEY}@example.invalid/v1")),
        _ => None,
    };
    let config = OpenAiConfig::from_lookup(env).expect("read");
    let err = OpenAiClient::new(config).expect_err("bad base URL");
    for shown in [err.to_string(), format!("{err:?}"), CtxError::from(err.clone()).to_string()] {
        assert!(!shown.contains(KEY), "{shown}");
    }
}

/// A pipeline run with the real client, traced at TRACE level (the pipeline's step spans, the
/// client's call spans, the HTTP stack): neither a successful run nor a failed one writes the
/// key anywhere, and the failed run's error does not carry it.
#[tokio::test]
async fn a_traced_pipeline_run_never_writes_the_key() {
    use ctx_runtime::pipeline::*;
    use ctx_runtime::state::PipelineState;

    let (captured, _guard) = Captured::traces();

    let definition = PipelineDef::new("Keyed")
        .model(ModelSource::Inline(
            ModelSpec::default().context_window(Some(4_096)).max_tokens(Some(256)).encoding(Some("cl100k_base".into())),
        ))
        .settings(SettingsSpec::default().max_context_tokens(Some(1_000)))
        .prompts(vec![PromptSpec::new("answer", Some("Answer.".into()))])
        .steps(vec![StepDef::new(
            "answer",
            StepKind::CallModel(
                CallModelSpec::new("answer", END)
                    .max_output_tokens(Some(50))
                    .user_parts(vec![UserPartSpec::new("user_question", "Q: {}")]),
            ),
        )]);
    let p = LoadedPipeline::load(definition, LoadOptions::new()).expect("loads");
    let server = MockServer::start(vec![
        Reply::ok(client_support::completion("fine", 10, 1)),
        Reply::status(401, json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}})),
    ])
    .await;
    let client = server.client(fast_retries(0));
    let env = StepEnv::builder().model(&client).build();
    p.run(PipelineState::new("first question"), &env).await.expect("the first run succeeds");
    let err = p.run(PipelineState::new("second question"), &env).await.expect_err("401");
    for shown in [err.to_string(), format!("{err:?}")] {
        assert!(!shown.contains(KEY), "{shown}");
    }
    let log = captured.text();
    assert!(log.contains("ctx.step"), "the steps are traced");
    let leaked: Vec<&str> = log.lines().filter(|l| l.contains(KEY)).collect();
    assert!(leaked.is_empty(), "the key is in the trace: {leaked:#?}");
}
