//! Fault injection: a pipeline run with the real OpenAI-compatible client against a scripted
//! server on 127.0.0.1 that fails in the middle of the run — a timeout, 5xx until the retries
//! run out, malformed JSON, a truncated body, a context-length error, a rate limit.
//!
//! Each fault must surface as a typed error with its stable code, naming the step; the snapshot
//! must be exactly where the failed step found it; and the run, resumed from that snapshot (also
//! after a JSON round trip, as another process would) once the server recovers, must end in the
//! same state as a run that never failed: nothing lost, nothing applied twice.

#![cfg(feature = "openai")]

mod client_support;

use std::time::Duration;

use client_support::{MockServer, Reply, completion, fast_retries};
use ctx_runtime::llm::openai::OpenAiClient;
use ctx_runtime::pipeline::*;
use ctx_runtime::state::{NodeText, PipelineState, SearchHit};
use ctx_runtime::{ChatMessage, CtxError, ErrorCode, Role};
use serde_json::json;

const QUESTION: &str = "how is the invoice total computed";
const REWRITTEN: &str = "How is the invoice total computed?";
const ANSWERED: &str = "The total is the sum of the line amounts plus tax, rounded to two decimals.";

/// rewrite (call 1) → set_question → search → fetch → manage → answer (call 2, with history).
fn definition() -> PipelineDef {
    let call = |prompt: &str, parts: Vec<UserPartSpec>, use_history, next: &str| {
        StepKind::CallModel(
            CallModelSpec::new(prompt, next).max_output_tokens(Some(200)).user_parts(parts).use_history(use_history),
        )
    };
    let part = |source: &str, template: &str| UserPartSpec::new(source, template);
    let step = |id: &str, kind| StepDef::new(id, kind);
    PipelineDef::new("Faulty")
        .model(ModelSource::Inline(
            ModelSpec::default().context_window(Some(4_096)).max_tokens(Some(256)).encoding(Some("cl100k_base".into())),
        ))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(Some(2_000))
                .max_history_tokens(Some(500))
                .budget_safety_margin_tokens(Some(128)),
        )
        .prompts(vec![
            PromptSpec::new("rewrite", Some("Rewrite the question in plain English.".into())),
            PromptSpec::new("answer", Some("Answer from the context.".into())),
        ])
        .steps(vec![
            step("rewrite", call("rewrite", vec![part("user_question", "Question: {}")], false, "set_question")),
            step(
                "set_question",
                StepKind::SetVariables(SetVariablesSpec::new(
                    vec![SetRuleSpec::new(
                        "user_question_en",
                        SetValueSpec::From { from: "last_model_response".into(), transform: Some("trim".into()) },
                    )],
                    "search",
                )),
            ),
            step("search", StepKind::SearchNodes(SearchNodesSpec::new(2, "fetch"))),
            step("fetch", StepKind::FetchNodeTexts(FetchSpec::new(800, "manage"))),
            step("manage", StepKind::ManageContextBudget(ManageBudgetSpec::new("answer", "answer"))),
            step(
                "answer",
                call(
                    "answer",
                    vec![part("context_blocks", "### Context:\n{}\n\n"), part("user_question_en", "### User:\n{}\n\n")],
                    true,
                    END,
                ),
            ),
        ])
}

struct Store;

const NODES: [(&str, &str, &str); 2] = [
    (
        "vw_InvoiceTotals",
        "sql/views/vw_InvoiceTotals.sql",
        "CREATE VIEW dbo.vw_InvoiceTotals AS SELECT InvoiceId, SUM(Net) AS Net FROM dbo.InvoiceLines GROUP BY InvoiceId;",
    ),
    (
        "InvoiceService",
        "src/Billing/InvoiceService.cs",
        "public decimal GrossTotal(int id) => decimal.Round(Net(id) + Tax(id), 2);",
    ),
];

impl NodeSearch for Store {
    async fn search(&self, _query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        Ok(NODES.iter().take(top_k).map(|(id, _, _)| SearchHit::new(*id, 1.0)).collect())
    }
}

impl NodeStore for Store {
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        Ok(NODES
            .iter()
            .filter(|(id, _, _)| ids.iter().any(|i| i == id))
            .map(|(id, path, text)| NodeText::new(*id, *text).with_path(*path))
            .collect())
    }

    async fn dependencies(&self, _id: &str) -> Result<Vec<String>, BoxError> {
        Ok(Vec::new())
    }
}

fn state() -> PipelineState {
    let mut s = PipelineState::new(QUESTION);
    s.history_dialog = vec![
        ChatMessage::user("What does usp_IssueInvoice do?"),
        ChatMessage::assistant("It numbers and issues an invoice."),
    ];
    s
}

/// The server's answers when nothing fails: the rewrite, then the answer.
fn healthy() -> Vec<Reply> {
    vec![Reply::ok(completion(REWRITTEN, 30, 8)), Reply::ok(completion(ANSWERED, 300, 20))]
}

fn client(server: &MockServer, request_timeout: Duration) -> OpenAiClient {
    let mut config = server.config(fast_retries(1));
    config.request_timeout = request_timeout;
    OpenAiClient::new(config).expect("valid client")
}

/// The final state of a run that never failed.
async fn reference(p: &LoadedPipeline) -> PipelineState {
    let server = MockServer::start(healthy()).await;
    let model = client(&server, Duration::from_secs(20));
    let env = StepEnv::builder().search(&Store).store(&Store).model(&model).build();
    let (state, _) = p.run(state(), &env).await.expect("a healthy run");
    assert_eq!(state.last_model_response.as_deref(), Some(ANSWERED));
    state
}

struct Fault {
    name: &'static str,
    /// Which model call fails: 0 = the rewrite (first step), 1 = the answer (last step).
    call: usize,
    /// The replies that make that call fail (a retryable fault repeats for the retry).
    replies: Vec<Reply>,
    code: &'static str,
    timeout: Duration,
}

fn faults() -> Vec<Fault> {
    let fast = Duration::from_secs(20);
    let retryable = |reply: Reply| vec![reply.clone(), reply];
    vec![
        Fault { name: "timeout", call: 1, replies: retryable(Reply::Hang), code: "MODEL_RETRIES_EXHAUSTED", timeout: Duration::from_millis(300) },
        Fault { name: "503 until the retries run out", call: 1, replies: retryable(Reply::status(503, json!({"error": {"message": "overloaded"}}))), code: "MODEL_RETRIES_EXHAUSTED", timeout: fast },
        Fault { name: "502 HTML from a proxy", call: 0, replies: retryable(Reply::Text { status: 502, content_type: "text/html", body: "<html>Bad Gateway</html>".into() }), code: "MODEL_RETRIES_EXHAUSTED", timeout: fast },
        Fault { name: "malformed JSON", call: 1, replies: vec![Reply::Text { status: 200, content_type: "application/json", body: "{\"choices\": [oops".into() }], code: "MODEL_MALFORMED_BODY", timeout: fast },
        Fault { name: "a body that is not a completion", call: 0, replies: vec![Reply::ok(json!({"object": "list", "data": []}))], code: "MODEL_MALFORMED_BODY", timeout: fast },
        Fault { name: "truncated body", call: 1, replies: retryable(Reply::Truncated { declared_len: 4_000, sent: "{\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"The total".into() }), code: "MODEL_RETRIES_EXHAUSTED", timeout: fast },
        Fault { name: "context length exceeded", call: 1, replies: vec![Reply::status(400, json!({"error": {"message": "This model's maximum context length is 4096 tokens.", "code": "context_length_exceeded"}}))], code: "MODEL_CONTEXT_LENGTH_EXCEEDED", timeout: fast },
        Fault { name: "rate limited beyond the policy", call: 1, replies: vec![Reply::Json { status: 429, body: json!({"error": {"message": "slow down"}}), headers: vec![("retry-after", "3600".into())] }], code: "MODEL_RATE_LIMITED", timeout: fast },
        Fault { name: "quota exhausted", call: 0, replies: vec![Reply::status(429, json!({"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}))], code: "MODEL_HTTP_STATUS", timeout: fast },
    ]
}

#[tokio::test]
async fn a_failure_mid_run_is_typed_and_the_run_resumes_with_nothing_lost() {
    let p = LoadedPipeline::load(definition(), LoadOptions::new()).expect("loads");
    let expected = reference(&p).await;
    for fault in faults() {
        let name = fault.name;
        let mut script = healthy();
        let tail = script.split_off(fault.call);
        script.extend(fault.replies);
        script.extend(tail);
        let server = MockServer::start(script).await;
        let model = client(&server, fault.timeout);
        let env = StepEnv::builder().search(&Store).store(&Store).model(&model).build();

        let mut snapshot = Snapshot::start(&p, state());
        let before_failure = loop {
            let before = snapshot.clone();
            match p.advance(&mut snapshot, &env).await {
                Ok(Some(_)) => {}
                Ok(None) => panic!("{name}: the run ended without the fault"),
                Err(err) => {
                    assert_eq!(err.code(), fault.code, "{name}: {err}");
                    let failed_step = if fault.call == 0 { "rewrite" } else { "answer" };
                    assert!(
                        matches!(&err, CtxError::Pipeline(PipelineError::Model { step, .. }) if step == failed_step),
                        "{name}: the error must name step `{failed_step}`: {err:?}"
                    );
                    assert!(err.to_string().contains(failed_step), "{name}: {err}");
                    break before;
                }
            }
        };
        assert_eq!(snapshot, before_failure, "{name}: the failed step changed the snapshot");
        assert_eq!(snapshot.next_step, if fault.call == 0 { "rewrite" } else { "answer" }, "{name}");

        // Another process picks the run up from the stored snapshot.
        let stored = serde_json::to_string(&snapshot).expect("snapshot serializes");
        let mut resumed: Snapshot = serde_json::from_str(&stored).expect("snapshot deserializes");
        let reloaded = LoadedPipeline::load(definition(), LoadOptions::new()).expect("loads");
        let reports = reloaded.resume(&mut resumed, &env).await.unwrap_or_else(|e| panic!("{name}: resume: {e}"));
        assert!(!reports.is_empty() && resumed.is_finished(), "{name}");
        assert_eq!(resumed.state, expected, "{name}: the resumed run lost or repeated something");
        let history: Vec<(Role, &str)> =
            resumed.state.history_dialog.iter().map(|m| (m.role, m.content.as_str())).collect();
        assert_eq!(history.len(), 4, "{name}: history {history:?}");
        assert_eq!(history[2..], [(Role::User, QUESTION), (Role::Assistant, ANSWERED)], "{name}");
    }
}

#[tokio::test]
async fn a_transient_fault_is_retried_inside_the_step_and_the_run_does_not_notice() {
    let p = LoadedPipeline::load(definition(), LoadOptions::new()).expect("loads");
    let expected = reference(&p).await;
    for (name, fault) in [
        ("503", Reply::status(503, json!({"error": {"message": "overloaded"}}))),
        (
            "429 with retry-after",
            Reply::Json {
                status: 429,
                body: json!({"error": {"message": "slow"}}),
                headers: vec![("retry-after", "0".into())],
            },
        ),
        ("truncated", Reply::Truncated { declared_len: 1_000, sent: "{\"id\":".into() }),
    ] {
        let mut script = healthy();
        script.insert(1, fault);
        let server = MockServer::start(script).await;
        let model = client(&server, Duration::from_secs(20));
        let env = StepEnv::builder().search(&Store).store(&Store).model(&model).build();
        let (state, _) = p.run(state(), &env).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(state, expected, "{name}");
        assert_eq!(server.hits(), 3, "{name}: one retry");
    }
}

#[tokio::test]
async fn the_request_the_server_sees_is_the_one_the_guard_counted() {
    let p = LoadedPipeline::load(definition(), LoadOptions::new()).expect("loads");
    let server = MockServer::start(healthy()).await;
    let model = client(&server, Duration::from_secs(20));
    let env = StepEnv::builder().search(&Store).store(&Store).model(&model).build();
    let (_, reports) = p.run(state(), &env).await.expect("runs");
    let calls: Vec<&CallReport> = reports
        .iter()
        .filter_map(|r| match &r.detail {
            StepDetail::CallModel(c) => Some(c),
            _ => None,
        })
        .collect();
    let requests = server.requests();
    assert_eq!((calls.len(), requests.len()), (2, 2));
    for (call, request) in calls.iter().zip(&requests) {
        let messages: Vec<ChatMessage> = serde_json::from_value(request.body["messages"].clone()).expect("messages");
        let exact = p.counter().count_request(&messages, &[]).expect("count");
        assert_eq!(exact, call.request.prompt_tokens, "the server received a different prompt than was counted");
        assert_eq!(request.body["max_tokens"].as_u64(), Some(call.request.max_output_tokens as u64));
        assert!(exact + call.request.max_output_tokens <= p.context_window());
    }
}

/// A search backend and a store that fail the first time each is called (an index being
/// rebuilt, a store timing out), then recover.
struct FlakyBackends {
    search_failures: std::sync::atomic::AtomicUsize,
    store_failures: std::sync::atomic::AtomicUsize,
}

impl FlakyBackends {
    fn fail(counter: &std::sync::atomic::AtomicUsize, what: &str) -> Result<(), BoxError> {
        use std::sync::atomic::Ordering;
        if counter.load(Ordering::SeqCst) > 0 {
            counter.fetch_sub(1, Ordering::SeqCst);
            return Err(format!("{what} unavailable").into());
        }
        Ok(())
    }
}

impl NodeSearch for FlakyBackends {
    async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        Self::fail(&self.search_failures, "search index")?;
        Store.search(query, top_k).await
    }
}

impl NodeStore for FlakyBackends {
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        Self::fail(&self.store_failures, "node store")?;
        Store.texts(ids).await
    }

    async fn dependencies(&self, id: &str) -> Result<Vec<String>, BoxError> {
        Store.dependencies(id).await
    }
}

#[tokio::test]
async fn a_failing_retriever_mid_run_is_typed_and_the_run_resumes() {
    let p = LoadedPipeline::load(definition(), LoadOptions::new()).expect("loads");
    let expected = reference(&p).await;
    let backends = FlakyBackends { search_failures: 1.into(), store_failures: 1.into() };
    let server = MockServer::start(healthy()).await;
    let model = client(&server, Duration::from_secs(20));
    let env = StepEnv::builder().search(&backends).store(&backends).model(&model).build();
    let mut snapshot = Snapshot::start(&p, state());
    let mut failed = Vec::new();
    while !snapshot.is_finished() {
        let before = snapshot.clone();
        match p.advance(&mut snapshot, &env).await {
            Ok(_) => {}
            Err(err) => {
                assert_eq!(err.code(), "PIPELINE_BACKEND_FAILED", "{err}");
                assert!(err.to_string().contains(&before.next_step), "the error names the step: {err}");
                assert_eq!(snapshot, before, "the failed step changed the snapshot");
                failed.push(before.next_step.clone());
                // The next attempt at the same step finds the backend recovered.
            }
        }
    }
    assert_eq!(failed, ["search", "fetch"]);
    assert_eq!(snapshot.state, expected, "the resumed run lost or repeated something");
    assert_eq!(server.hits(), 2, "each model call was made exactly once");
}
