//! Load: N concurrent pipeline runs (N = 200 unless `CTX_DURABLE_N` says otherwise) through one
//! durable service on the Restate engine, against the same N runs in process, in the same run.
//! One pipeline value (one tokenizer, one count cache) and one model client serve every run in
//! both; the model is a scripted server on 127.0.0.1 that answers at once, so what differs is
//! the engine: a journal round trip per step, the ingress, the invocation.
//!
//! Prints throughput (runs/s, steps/s), step latency p50/p99 (the time from the end of a run's
//! previous step to the end of this one, so the engine's journaling between steps counts), and
//! memory (peak resident set of this process and of the engine).
//!
//! `scripts/restate.sh provision`, then `cargo bench --features restate --bench durable_load`.

#[path = "../tests/durable_support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ctx::durable::{DurableSteps, PipelineObject, RunOutcome, StepRecordFuture, StepRunner};
use ctx::llm::openai::OpenAiClient;
use ctx::pipeline::{Pipeline, Snapshot, StepMachine};
use ctx::{CtxError, PipelineState};
use futures_util::future::join_all;
use serde_json::json;

use support::{Corpus, DurableQa, DurableQaStep, Engine, OwnedEnv};

type Env = OwnedEnv<OpenAiClient>;

/// Per-run step timings: the end of each run's last step, and every step's latency.
#[derive(Default)]
struct Timings {
    last_end: Mutex<HashMap<String, Instant>>,
    samples: Mutex<Vec<Duration>>,
}

impl Timings {
    fn record(&self, run: &str, started: Instant) {
        let end = Instant::now();
        let mut last = self.last_end.lock().expect("not poisoned");
        let from = last.get(run).copied().unwrap_or(started);
        last.insert(run.to_owned(), end);
        self.samples.lock().expect("not poisoned").push(end - from);
    }

    fn samples(&self) -> Vec<Duration> {
        let mut s = self.samples.lock().expect("not poisoned").clone();
        s.sort();
        s
    }
}

/// The service's steps, timed.
struct Timed {
    inner: DurableSteps<DurableQaStep, Env>,
    timings: Arc<Timings>,
}

impl StepRunner for Timed {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn start(&self, state: PipelineState) -> Snapshot {
        self.inner.start(state)
    }

    fn follow_up(&self, kept: Option<&PipelineState>, question: String) -> PipelineState {
        self.inner.follow_up(kept, question)
    }

    fn step_bound(&self) -> u64 {
        self.inner.step_bound()
    }

    fn step<'a>(&'a self, snapshot: &'a Snapshot) -> StepRecordFuture<'a> {
        Box::pin(async move {
            let started = Instant::now();
            let record = self.inner.step(snapshot).await?;
            self.timings.record(&snapshot.state.user_question, started);
            Ok::<_, CtxError>(record)
        })
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn kib(status: &str, field: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn peak_rss_mib(pid: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    kib(&status, "VmHWM:") as f64 / 1024.0
}

fn question(i: usize) -> String {
    format!("Run {i}: how is the invoice total computed?")
}

struct Figures {
    wall: Duration,
    runs: usize,
    steps: usize,
    samples: Vec<Duration>,
}

impl Figures {
    fn row(&self, name: &str) -> String {
        let secs = self.wall.as_secs_f64();
        format!(
            "| {name} | {} | {:.1} | {:.0} | {:.2} | {:.2} |",
            self.runs,
            self.runs as f64 / secs,
            self.steps as f64 / secs,
            percentile(&self.samples, 0.5).as_secs_f64() * 1e3,
            percentile(&self.samples, 0.99).as_secs_f64() * 1e3,
        )
    }
}

async fn in_process(n: usize, pipeline: &Pipeline<DurableQaStep>, env: &Env) -> Figures {
    in_process_timed(n, pipeline, env, &Timings::default()).await
}

async fn in_process_timed(n: usize, pipeline: &Pipeline<DurableQaStep>, env: &Env, timings: &Timings) -> Figures {
    let started = Instant::now();
    let runs = (0..n).map(|i| async move {
        let q = question(i);
        let mut at = DurableQaStep::FIRST;
        let mut state = Snapshot::start(pipeline.pipeline(), PipelineState::new(q.clone())).state;
        let mut steps = 0;
        while at != DurableQaStep::END {
            let t = Instant::now();
            at = pipeline.step(at, &mut state, env).await.expect("a step succeeds");
            timings.record(&q, t);
            steps += 1;
        }
        steps
    });
    let steps: usize = join_all(runs).await.into_iter().sum();
    Figures { wall: started.elapsed(), runs: n, steps, samples: timings.samples() }
}

async fn durable(n: usize, ingress: &str, timings: &Timings) -> Figures {
    durable_from(0, n, ingress, timings).await
}

/// Runs `first..first + n` at once, each in a conversation of its own.
async fn durable_from(first: usize, n: usize, ingress: &str, timings: &Timings) -> Figures {
    let client = reqwest::Client::builder().no_proxy().pool_max_idle_per_host(n).build().expect("a client");
    let started = Instant::now();
    let runs = (first..first + n).map(|i| {
        let client = client.clone();
        async move {
            let response = client
                .post(format!("{ingress}/CtxPipeline/load-{i}/ask"))
                .json(&json!({ "question": question(i) }))
                .send()
                .await
                .expect("the engine answers");
            assert!(response.status().is_success(), "{}", response.status());
            response.json::<RunOutcome>().await.expect("a run outcome").reports.len()
        }
    });
    let steps: usize = join_all(runs).await.into_iter().sum();
    Figures { wall: started.elapsed(), runs: n, steps, samples: timings.samples() }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs it once as a check.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if !support::engine_available("durable_load") {
        return;
    }
    let n: usize = std::env::var("CTX_DURABLE_N").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let (model_url, received) = support::scripted_server().await;
        let pipeline = DurableQa::new().expect("loads");
        let env = OwnedEnv { corpus: Corpus::new(), model: support::client(&model_url) };

        // Warm the count cache as the service will find it warm after its first runs.
        let _ = in_process(4, &pipeline, &env).await;
        let local = in_process(n, &pipeline, &env).await;
        let rss_in_process = peak_rss_mib("self");

        let engine = Engine::start();
        let timings = Arc::new(Timings::default());
        let steps = Timed { inner: DurableSteps::new(pipeline.clone(), env), timings: Arc::clone(&timings) };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let port = listener.local_addr().expect("bound").port();
        let service = tokio::spawn(PipelineObject::new(steps).serve(listener));
        engine.register(port);
        let _ = durable(4, &engine.ingress, &Timings::default()).await; // warm up the connections
        timings.samples.lock().expect("not poisoned").clear();
        timings.last_end.lock().expect("not poisoned").clear();
        let remote = durable(n, &engine.ingress, &timings).await;
        let rss_with_service = peak_rss_mib("self");

        // Unloaded: one run at a time, so the latency is the step's own plus the journal round trip.
        const ALONE: usize = 20;
        let alone_local = Timings::default();
        let started = Instant::now();
        let mut alone_local_steps = 0;
        for _ in 0..ALONE {
            alone_local.last_end.lock().expect("not poisoned").clear();
            alone_local_steps += in_process_timed(1, &pipeline, &OwnedEnv { corpus: Corpus::new(), model: support::client(&model_url) }, &alone_local).await.steps;
        }
        let alone_local = Figures { wall: started.elapsed(), runs: ALONE, steps: alone_local_steps, samples: alone_local.samples() };
        timings.samples.lock().expect("not poisoned").clear();
        let started = Instant::now();
        let mut alone_remote_steps = 0;
        for i in 0..ALONE {
            alone_remote_steps += durable_from(10_000 + i, 1, &engine.ingress, &timings).await.steps;
        }
        let alone_remote = Figures { wall: started.elapsed(), runs: ALONE, steps: alone_remote_steps, samples: timings.samples() };
        let engine_rss = engine.pid().map_or(0.0, |pid| peak_rss_mib(&pid));
        service.abort();

        let calls = received.lock().expect("not poisoned").len();
        println!("\nN = {n} concurrent runs ({} steps each, {calls} model calls in all), one service, one tokenizer and count cache", local.steps / n);
        println!("\n| path | runs | runs/s | steps/s | step p50 (ms) | step p99 (ms) |");
        println!("|---|---|---|---|---|---|");
        println!("{}", local.row("in process"));
        println!("{}", remote.row("Restate (journaled steps)"));
        println!("{}", alone_local.row("in process, one run at a time"));
        println!("{}", alone_remote.row("Restate, one run at a time"));
        let overhead = |a: &Figures, b: &Figures, p| {
            (percentile(&a.samples, p).as_secs_f64() - percentile(&b.samples, p).as_secs_f64()) * 1e3
        };
        println!(
            "\nengine overhead per step: at N = {n} p50 {:.2} ms, p99 {:.2} ms; one run at a time p50 {:.2} ms, p99 {:.2} ms",
            overhead(&remote, &local, 0.5),
            overhead(&remote, &local, 0.99),
            overhead(&alone_remote, &alone_local, 0.5),
            overhead(&alone_remote, &alone_local, 0.99),
        );
        println!(
            "peak RSS: bench process {rss_in_process:.0} MiB after the in-process runs, {rss_with_service:.0} MiB with \
             the service; restate-server {engine_rss:.0} MiB"
        );
    });
}
