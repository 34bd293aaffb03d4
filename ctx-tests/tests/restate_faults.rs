//! Fault tests of durable runs on a real Restate engine (feature `restate`; the engine from
//! `scripts/restate.sh`). Each scenario starts its own engine, a scripted model server and the
//! service as a separate process (this test binary, re-run with `serve`), kills a process in the
//! middle of a run, restarts it, and checks that the run completes with exactly the final state
//! and the reports of an uninterrupted in-process run, while the model server saw each model
//! request once: the same requests, in the same order, none twice.
//!
//! The service pauses before its Nth model call of the process (printing so), which is where the
//! test kills it: the calls before were answered and journaled, the Nth was never sent. Outside
//! CI the scenarios are skipped when the engine is not installed; with CI=true they always run.
//!
//! A fourth scenario puts two instances behind one load balancer and kills the one running the
//! question: the other finishes it.
//!
//! A harness-less test (`harness = false`): the scenarios run one after the other, and the same
//! binary serves as the service process.

#[path = "durable_support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use ctx::PipelineState;
use ctx::durable::{DurableSteps, PipelineObject, RunOutcome};
use ctx::llm::openai::OpenAiClient;
use ctx::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use serde_json::{Value, json};

use support::{Corpus, DurableQa, Engine, OwnedEnv, Received};

const QUESTION: &str = "How is the invoice total computed?";
/// Guards against a hang only; a healthy scenario takes a few seconds.
const PATIENCE: Duration = Duration::from_secs(180);

/// A fault scenario, run on the test's runtime.
type Scenario = fn(&tokio::runtime::Runtime);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        serve(&args[1..]);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return; // no harness to list tests for
    }
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let scenarios: [(&str, Scenario); 4] = [
        ("the_service_killed_after_a_model_call_replays_it", service_killed_after_a_model_call),
        ("the_service_killed_inside_the_summarise_loop_resumes_it", service_killed_inside_the_summarise_loop),
        ("the_engine_killed_and_restarted_mid_run_resumes_it", engine_killed_mid_run),
        ("another_instance_behind_a_balancer_finishes_a_run_whose_instance_died", failover_to_another_instance),
    ];
    let filter = args.iter().find(|a| !a.starts_with('-'));
    for (name, scenario) in scenarios {
        if filter.is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        if !support::engine_available(name) {
            continue;
        }
        eprintln!("test {name} ...");
        scenario(&runtime);
        eprintln!("test {name} ... ok");
    }
}

/// Service mode: `serve PORT MODEL_URL PAUSE_AT` serves the pipeline on 127.0.0.1:PORT, pausing
/// for good before model call PAUSE_AT of this process (0: never).
fn serve(args: &[String]) {
    let [port, model_url, pause_at] = args else { panic!("serve PORT MODEL_URL PAUSE_AT, got {args:?}") };
    let pause_at: usize = pause_at.parse().expect("PAUSE_AT is a number");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let model = Pausing { inner: support::client(model_url), calls: AtomicUsize::new(0), pause_at };
        let steps = DurableSteps::new(DurableQa::new().expect("loads"), OwnedEnv { corpus: Corpus::new(), model });
        let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await.expect("the port is free");
        println!("listening");
        PipelineObject::new(steps).serve(listener).await;
    });
}

/// The scripted client, stopping for good before call `pause_at`.
struct Pausing {
    inner: OpenAiClient,
    calls: AtomicUsize,
    pause_at: usize,
}

impl ChatModel for Pausing {
    fn model_name(&self) -> &str {
        self.inner.model_name()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if call == self.pause_at {
            println!("paused before model call {call}");
            std::future::pending::<()>().await;
        }
        self.inner.chat(request).await
    }
}

/// A service process of this binary; killed (SIGKILL) when dropped.
struct Service {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Service {
    fn spawn(port: u16, model_url: &str, pause_at: usize) -> Service {
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .args(["serve", &port.to_string(), model_url, &pause_at.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the service starts");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let service = Service { child, lines };
        service.expect_line("listening");
        service
    }

    fn expect_line(&self, wanted: &str) {
        loop {
            match self.lines.recv_timeout(PATIENCE) {
                Ok(line) if line == wanted => return,
                Ok(_) => {}
                Err(e) => panic!("the service never printed `{wanted}`: {e}"),
            }
        }
    }

    /// SIGKILL: no shutdown, no flush, as a crash.
    fn kill(mut self) {
        self.child.kill().expect("the service is ours to kill");
        self.child.wait().expect("reaped");
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Asks the question through the engine's ingress, with an idempotency key so that the same
/// call made again attaches to the same invocation.
async fn ask(ingress: &str, conversation: &str, key: &str) -> Result<RunOutcome, String> {
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?
        .post(format!("{ingress}/CtxPipeline/{conversation}/ask"))
        .header("idempotency-key", key)
        .json(&json!({ "question": QUESTION }))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    let body = response.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("{status}: {body}"));
    }
    serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))
}

/// The uninterrupted in-process run: its state, reports and the requests its model saw.
async fn reference() -> (PipelineState, Vec<Value>, Vec<Value>) {
    let (url, received) = support::scripted_server().await;
    let (state, reports) = support::in_process(QUESTION, &url).await;
    let requests = received.lock().expect("not poisoned").clone();
    (state, reports, requests)
}

fn requests(received: &Received) -> Vec<Value> {
    received.lock().expect("not poisoned").clone()
}

fn step_ids(reports: &[Value]) -> Vec<&str> {
    reports.iter().map(|r| r["step_id"].as_str().unwrap_or("?")).collect()
}

/// Checks a durable run against the reference: same state, same reports, same requests once.
fn check(outcome: &RunOutcome, reference: &(PipelineState, Vec<Value>, Vec<Value>), received: &Received) {
    let (state, reports, expected_requests) = reference;
    assert_eq!(step_ids(&outcome.reports), step_ids(reports), "the same path");
    assert_eq!(&outcome.reports, reports, "the reports of an uninterrupted run");
    assert_eq!(&outcome.state, state, "the final state of an uninterrupted run");
    let seen = requests(received);
    assert_eq!(seen.len(), expected_requests.len(), "each model request once");
    assert_eq!(&seen, expected_requests, "the same model requests, in order");
}

/// Kills the service paused before model call `pause_at`, restarts it, and checks the run.
fn kill_service_before_call(runtime: &tokio::runtime::Runtime, pause_at: usize, conversation: &str) {
    let reference = runtime.block_on(reference());
    let path = step_ids(&reference.1);
    assert_eq!(path.iter().filter(|s| **s == "summarise").count(), 2, "the loop summarises twice: {path:?}");
    let engine = Engine::start();
    let (model_url, received) = runtime.block_on(support::scripted_server());
    let port = support::free_port();
    let service = Service::spawn(port, &model_url, pause_at);
    engine.register(port);

    let call = runtime.spawn(ask_owned(engine.ingress.clone(), conversation.to_owned()));
    service.expect_line(&format!("paused before model call {pause_at}"));
    assert_eq!(requests(&received).len(), pause_at - 1, "the calls before the pause were answered");
    service.kill();

    let _restarted = Service::spawn(port, &model_url, 0);
    let outcome = runtime
        .block_on(async { tokio::time::timeout(PATIENCE, call).await })
        .expect("the run completes")
        .expect("the call task")
        .expect("the run succeeds");
    check(&outcome, &reference, &received);

    // The conversation keeps the final state.
    let kept = runtime.block_on(conversation_state(&engine.ingress, conversation));
    assert_eq!(kept.as_ref(), Some(&outcome.state));
}

async fn ask_owned(ingress: String, conversation: String) -> Result<RunOutcome, String> {
    ask(&ingress, &conversation, &format!("{conversation}-q1")).await
}

async fn conversation_state(ingress: &str, conversation: &str) -> Option<PipelineState> {
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client")
        .post(format!("{ingress}/CtxPipeline/{conversation}/state"))
        .send()
        .await
        .expect("the engine answers");
    assert!(response.status().is_success(), "{}", response.status());
    response.json().await.expect("a state or null")
}

/// After the draft was answered and journaled, before the summarise loop's first call.
fn service_killed_after_a_model_call(runtime: &tokio::runtime::Runtime) {
    kill_service_before_call(runtime, 2, "after-a-call");
}

/// Between the loop's two summarise calls: the first summary was journaled, the budget step
/// refused it again, and the guard allowed another pass.
fn service_killed_inside_the_summarise_loop(runtime: &tokio::runtime::Runtime) {
    kill_service_before_call(runtime, 3, "inside-the-loop");
}

/// The engine dies while the service waits inside the summarise loop; it comes back on its data,
/// resumes the invocation, and the same call (same idempotency key) gets the result.
fn engine_killed_mid_run(runtime: &tokio::runtime::Runtime) {
    let reference = runtime.block_on(reference());
    let engine = Engine::start();
    let (model_url, received) = runtime.block_on(support::scripted_server());
    let port = support::free_port();
    let service = Service::spawn(port, &model_url, 3);
    engine.register(port);

    let conversation = "engine-restart";
    let first = runtime.spawn(ask_owned(engine.ingress.clone(), conversation.to_owned()));
    service.expect_line("paused before model call 3");
    assert_eq!(requests(&received).len(), 2);
    engine.kill();
    let dropped = runtime.block_on(first).expect("the call task");
    assert!(dropped.is_err(), "the engine died under the call");
    engine.restart();

    let outcome = runtime
        .block_on(async {
            tokio::time::timeout(PATIENCE, ask_owned(engine.ingress.clone(), conversation.to_owned())).await
        })
        .expect("the run completes")
        .expect("the run succeeds");
    check(&outcome, &reference, &received);
    drop(service);
}

/// A TCP load balancer on 127.0.0.1 in front of service instances: each connection goes to the
/// next instance that accepts it, round robin (HTTP/2 connections, so per connection).
async fn balancer(instances: Vec<u16>) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let port = listener.local_addr().expect("bound").port();
    let next = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let first = next.fetch_add(1, Ordering::SeqCst);
            let instances = instances.clone();
            tokio::spawn(async move {
                for k in 0..instances.len() {
                    let port = instances[(first + k) % instances.len()];
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        return;
                    }
                }
            });
        }
    });
    port
}

/// Scale out: two instances behind one balancer, registered once. The run starts on the first
/// (the second is not up yet), which dies inside the summarise loop; the engine's retry reaches
/// the second instance, a process that never saw the run, which replays the journal and finishes.
fn failover_to_another_instance(runtime: &tokio::runtime::Runtime) {
    let reference = runtime.block_on(reference());
    let engine = Engine::start();
    let (model_url, received) = runtime.block_on(support::scripted_server());
    let (first_port, second_port) = (support::free_port(), support::free_port());
    let front = runtime.block_on(balancer(vec![first_port, second_port]));
    let first = Service::spawn(first_port, &model_url, 3);
    engine.register(front);

    let conversation = "failover";
    let call = runtime.spawn(ask_owned(engine.ingress.clone(), conversation.to_owned()));
    first.expect_line("paused before model call 3");
    let _second = Service::spawn(second_port, &model_url, 0);
    first.kill();

    let outcome = runtime
        .block_on(async { tokio::time::timeout(PATIENCE, call).await })
        .expect("the run completes")
        .expect("the call task")
        .expect("the run succeeds");
    check(&outcome, &reference, &received);
}
