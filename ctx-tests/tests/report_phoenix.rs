//! Feature `otel`: the spans of the README's example run (`cargo run --example rag_pipeline`,
//! offline) reach a real OpenTelemetry backend, Arize Phoenix (`scripts/phoenix.sh`, on
//! 127.0.0.1), through [`OtlpTracing`], and are read back from Phoenix's REST API: one `chat`
//! span per model request of the run, whose token counts — ctx's own attributes and the ones
//! Phoenix derived from the GenAI conventions (`llm.token_count.*`, span kind `LLM`) — are ctx's
//! exact counts, and the run → step → request nesting is the one ctx traced.
//!
//! Outside CI, without a Phoenix server (`CTX_PHOENIX_URL`, set by `scripts/phoenix.sh env`) the
//! test is skipped with a printed reason; under `CI=true` it must run (`.ci/run` starts Phoenix).
//! The OTLP wire format itself is checked without any backend by ctx-runtime's
//! `tests/otel_export.rs`, against a receiver of its own.

#[path = "../../examples/rag_pipeline/mod.rs"]
#[allow(dead_code, reason = "this test runs the demo's pipeline only, not its trace or its CLI")]
mod rag;

use std::io::Write as _;
use std::time::{Duration, SystemTime};

use ctx::PipelineState;
use ctx::llm::offline::{OFFLINE_PROVIDER_NAME, OfflineModel};
use ctx::pipeline::LoadOptions;
use ctx::report::{OtlpTracing, RunReport};
use serde_json::Value;
use tracing_subscriber::layer::SubscriberExt as _;

use rag::{Demo, SAMPLE_QUESTION, codebase_dir};

/// Phoenix files spans without an `openinference.project.name` resource attribute here.
const PROJECT: &str = "default";

/// Phoenix's base URL, or `None` (with the reason printed) when the test is to be skipped.
fn phoenix_url() -> Option<String> {
    match std::env::var("CTX_PHOENIX_URL") {
        Ok(url) => {
            assert!(url.starts_with("http://127.0.0.1:"), "CTX_PHOENIX_URL must be a loopback URL: {url}");
            Some(url)
        }
        Err(_) => {
            assert!(
                std::env::var("CI").ok().as_deref() != Some("true"),
                "CTX_PHOENIX_URL is not set under CI: .ci/run must run scripts/phoenix.sh start"
            );
            let _ = writeln!(
                std::io::stderr(),
                "skipped the_readme_runs_requests_reach_phoenix_with_exact_token_counts: no Phoenix server \
                 (scripts/phoenix.sh start; eval \"$(scripts/phoenix.sh env)\")"
            );
            None
        }
    }
}

/// The README's run, offline, inside a span of the test's own that carries `nonce`, so the run's
/// trace can be found among whatever else the server holds.
fn readme_run(runtime: &tokio::runtime::Runtime, otlp: &OtlpTracing, nonce: &str) -> RunReport {
    let demo = Demo::new(codebase_dir(), LoadOptions::new()).expect("the sample code base loads");
    let model = OfflineModel::default();
    let env = demo.env(&model);
    let qa = demo.pipeline();
    let subscriber = tracing_subscriber::registry().with(otlp.layer());
    let reports = tracing::subscriber::with_default(subscriber, || {
        let root = tracing::info_span!("ctx phoenix test", ctx.test.nonce = %nonce);
        let _entered = root.enter();
        runtime.block_on(qa.run(PipelineState::new(SAMPLE_QUESTION), &env))
    })
    .expect("the example runs")
    .1;
    qa.pipeline().report(&reports)
}

/// `GET {url}/v1/projects/default/spans` with `query`, every page.
async fn spans(client: &reqwest::Client, url: &str, query: &[(&str, &str)]) -> Vec<Value> {
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut q: Vec<(&str, &str)> = query.to_vec();
        if let Some(c) = &cursor {
            q.push(("cursor", c));
        }
        let reply = client
            .get(format!("{url}/v1/projects/{PROJECT}/spans"))
            .query(&q)
            .send()
            .await
            .expect("Phoenix answers")
            .error_for_status()
            .expect("Phoenix lists the spans");
        let body: Value = reply.json().await.expect("a JSON body");
        all.extend(body["data"].as_array().expect("a list of spans").iter().cloned());
        cursor = body["next_cursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            return all;
        }
    }
}

/// An ISO 8601 time in UTC (`2026-11-26T05:36:37.467Z`, `…:37+00:00`, `…:37`) as text that sorts
/// in time order: the fraction of the second always written to nine digits.
fn time_key(time: &str) -> String {
    let time = time.trim_end_matches('Z').trim_end_matches("+00:00");
    let (whole, fraction) = time.split_once('.').unwrap_or((time, ""));
    assert!(fraction.len() <= 9 && fraction.bytes().all(|b| b.is_ascii_digit()), "a UTC time: {time}");
    format!("{whole}.{fraction:0<9}")
}

fn int(span: &Value, key: &str) -> i64 {
    span["attributes"][key].as_i64().unwrap_or_else(|| panic!("{key} in {:#}", span["attributes"]))
}

#[test]
fn the_readme_runs_requests_reach_phoenix_with_exact_token_counts() {
    let Some(url) = phoenix_url() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).expect("after 1970").as_nanos();
    let nonce = format!("run-{}-{nanos}", std::process::id());
    let otlp = OtlpTracing::http(&url, "ctx-report-phoenix").expect("the exporter is set up");
    let report = readme_run(&runtime, &otlp, &nonce);
    otlp.flush().expect("Phoenix accepts the spans");
    otlp.shutdown().expect("the exporter stops");
    assert!(report.requests.len() >= 2, "the run summarises, then answers: {:?}", report.steps);

    // Phoenix inserts what it receives in batches: ask until the run's requests are all there.
    let client = reqwest::Client::builder().no_proxy().build().expect("an HTTP client");
    let nonce_filter = format!("ctx.test.nonce:{nonce}");
    // The test's span, the run's, one per step and one per request.
    let expected = 2 + report.steps.len() + report.requests.len();
    let (root, all) = runtime.block_on(async {
        for _ in 0..240 {
            let roots = spans(&client, &url, &[("attribute", &nonce_filter)]).await;
            if let [root] = roots.as_slice() {
                let trace = root["context"]["trace_id"].as_str().expect("a trace id").to_owned();
                let all = spans(&client, &url, &[("trace_id", &trace), ("limit", "1000")]).await;
                if all.len() >= expected {
                    return (root.clone(), all);
                }
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        panic!("Phoenix never listed the run's {expected} spans under the trace of {nonce}");
    });
    assert_eq!(root["name"], "ctx phoenix test");
    assert_eq!(all.len(), expected, "{all:#?}");
    let named = |name: &str| all.iter().filter(|s| s["name"] == name).collect::<Vec<_>>();
    let by_id = |id: &Value| all.iter().find(|s| s["context"]["span_id"] == *id);
    // The nesting as Phoenix stored it: the test's span → the run → its steps → their requests.
    let run = named(&format!("run {}", report.pipeline));
    assert_eq!(run.len(), 1, "{all:#?}");
    assert_eq!(run[0]["parent_id"], root["context"]["span_id"]);
    let steps = named("ctx.step");
    assert_eq!(steps.len(), report.steps.len());
    assert!(steps.iter().all(|s| s["parent_id"] == run[0]["context"]["span_id"]));
    let chats: Vec<Value> =
        all.iter().filter(|s| s["name"].as_str().is_some_and(|n| n.starts_with("chat "))).cloned().collect();
    assert_eq!(chats.len(), report.requests.len(), "one chat span per model request: {chats:#?}");
    for chat in &chats {
        let step = by_id(&chat["parent_id"]).expect("a request's parent is stored");
        assert_eq!(step["name"], "ctx.step", "{chat:#}");
        assert_eq!(step["attributes"]["step"], chat["attributes"]["ctx.step.id"], "{step:#}");
    }

    // The requests in the order they were sent.
    let mut chats = chats;
    chats.sort_by_key(|s| time_key(s["start_time"].as_str().expect("a start time")));
    for (span, request) in chats.iter().zip(&report.requests) {
        let exact = request.anatomy.prompt_tokens as i64;
        let completion = request.completion_tokens.expect("the offline model reports usage") as i64;
        assert_eq!(span["attributes"]["ctx.step.id"], request.step_id.as_str(), "{span:#}");
        // What ctx wrote: its exact count, the server's (the offline model counts exactly too),
        // and the parts, which add up to the exact count.
        assert_eq!(int(span, "ctx.budget.prompt_tokens"), exact);
        assert_eq!(int(span, "gen_ai.usage.input_tokens"), exact);
        assert_eq!(int(span, "gen_ai.usage.output_tokens"), completion);
        assert_eq!(int(span, "gen_ai.request.max_tokens"), request.anatomy.max_output_tokens as i64);
        assert_eq!(int(span, "ctx.budget.context_window"), report.context_window as i64);
        // The conventions' required provider, and the finish reasons as an array of strings (set
        // on the OpenTelemetry span itself: a tracing field holds no array), one per reply.
        let attributes = &span["attributes"];
        assert_eq!(attributes["gen_ai.operation.name"], "chat", "{span:#}");
        assert_eq!(attributes["gen_ai.provider.name"], OFFLINE_PROVIDER_NAME, "{span:#}");
        let reason = attributes["ctx.response.finish_reason"].as_str().expect("the offline model says why it stopped");
        assert_eq!(attributes["gen_ai.response.finish_reasons"], serde_json::json!([reason]), "{span:#}");
        let parts: i64 = span["attributes"]
            .as_object()
            .expect("attributes")
            .iter()
            .filter(|(k, _)| k.starts_with("ctx.budget.parts."))
            .map(|(k, v)| v.as_i64().unwrap_or_else(|| panic!("{k}: {v}")))
            .sum();
        assert_eq!(parts, exact, "{span:#}");
        if let Some(worst) = &request.worst_case {
            assert_eq!(int(span, "ctx.budget.worst_case_tokens"), worst.total_tokens() as i64);
        }
        // What Phoenix read from the GenAI conventions: an LLM span with the same counts.
        assert_eq!(span["span_kind"], "LLM", "{span:#}");
        assert_eq!(
            span["attributes"]["llm.system"], OFFLINE_PROVIDER_NAME,
            "the provider, as Phoenix read it: {span:#}"
        );
        assert_eq!(int(span, "llm.token_count.prompt"), exact);
        assert_eq!(int(span, "llm.token_count.completion"), completion);
        assert_eq!(int(span, "llm.token_count.total"), exact + completion);
    }
}
