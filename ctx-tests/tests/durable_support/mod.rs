//! What the durable-run tests and the load bench share: a pipeline with a model call, a
//! summarise loop and an answer; owned backends; a scripted OpenAI-compatible model server on
//! 127.0.0.1 that records every request; and a Restate engine of the test's own, started and
//! killed through `scripts/restate.sh`.

#![allow(dead_code)] // each user takes what it needs

use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use ctx::PipelineState;
use ctx::llm::ChatModel;
use ctx::llm::openai::{OpenAiClient, OpenAiConfig};
use ctx::pipeline::{Backends, BoxError, NodeSearch, NodeStore, StepEnv};
use ctx::state::{NodeText, SearchHit};
use serde_json::{Value, json};

ctx::pipeline! {
    /// Drafts an answer, reads the documents, summarises the context while it is over budget,
    /// and answers: three or more model calls per question.
    pub pipeline DurableQa {
        model { context_window: 8_192, max_tokens: 512, encoding: cl100k_base }
        settings { max_context_tokens: 500, max_history_tokens: 800, max_turn_loops: 2 }
        prompts {
            draft: "Draft notes for the question.",
            summarise: "Summarise the context in a few lines.",
            answer: "Answer the question from the context.",
        }
        steps {
            draft: call_model {
                prompt_key: draft,
                max_output_tokens: 400,
                user_parts: [ user_question => "### User:\n{}\n\n" ],
                next: keep_draft,
            },
            keep_draft: set_variables {
                rules: [ context_blocks <- last_model_response | to_context_blocks, last_model_response = null ],
                next: search,
            },
            search: search_nodes { top_k: 3, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 300, next: manage_budget },
            manage_budget: manage_context_budget {
                divide_new_content: "<<<New content",
                on_ok: answer,
                on_over: budget_guard,
            },
            budget_guard: loop_guard {
                max_turn_loops_from_settings: max_turn_loops,
                on_allow: summarise,
                on_deny: answer,
            },
            summarise: call_model {
                prompt_key: summarise,
                max_output_tokens: 200,
                user_parts: [ context_blocks => "### Context:\n{}\n\n" ],
                next: keep_summary,
            },
            keep_summary: set_variables {
                rules: [ context_blocks <- last_model_response | to_context_blocks, last_model_response = null ],
                next: manage_budget,
            },
            answer: call_model {
                prompt_key: answer,
                use_history: true,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question => "### User:\n{}\n\n" ],
                next: end,
            },
        }
    }
}

/// Three documents about invoices, each well over a hundred tokens.
pub struct Corpus {
    docs: Vec<NodeText>,
}

impl Corpus {
    pub fn new() -> Self {
        let para = |topic: &str, n: usize| -> String {
            (0..n)
                .map(|i| format!("{topic} rule {i}: the amount of line {i} is rounded half away from zero. "))
                .collect()
        };
        Corpus {
            docs: vec![
                NodeText::new("invoices/total.md", para("Invoice total", 12)),
                NodeText::new("invoices/tax.md", para("Tax per rate", 12)),
                NodeText::new("invoices/discount.md", para("Line discount", 12)),
            ],
        }
    }
}

impl NodeSearch for Corpus {
    async fn search(&self, _query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        Ok(self
            .docs
            .iter()
            .take(top_k)
            .enumerate()
            .map(|(i, d)| SearchHit::new(d.id.clone(), 1.0 / (i as f64 + 1.5)))
            .collect())
    }
}

impl NodeStore for Corpus {
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        Ok(self.docs.iter().filter(|d| ids.contains(&d.id)).cloned().collect())
    }

    async fn dependencies(&self, _id: &str) -> Result<Vec<String>, BoxError> {
        Ok(Vec::new())
    }
}

/// The pipeline's backends, owned (a service holds them for its whole life).
pub struct OwnedEnv<M> {
    pub corpus: Corpus,
    pub model: M,
}

impl<M: ChatModel> Backends<DurableQaStep> for OwnedEnv<M> {
    fn step_env(&self) -> StepEnv<'_> {
        StepEnv::builder().search(&self.corpus).store(&self.corpus).model(&self.model).build()
    }
}

/// A client of the scripted server: direct (no proxy), no client-side retries.
pub fn client(base_url: &str) -> OpenAiClient {
    let mut config = OpenAiConfig::new(base_url, "scripted");
    config.system_proxy = false;
    config.retry.max_retries = 0;
    OpenAiClient::new(config).expect("a valid configuration")
}

/// Every request body the scripted server received, in order.
pub type Received = Arc<Mutex<Vec<Value>>>;

/// The scripted reply to a request: decided by its system prompt and its content only, so the
/// same request always gets the same answer.
pub fn reply(body: &Value) -> String {
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    let user = body["messages"].as_array().and_then(|m| m.last()).and_then(|m| m["content"].as_str()).unwrap_or("");
    let fingerprint = user.len();
    if system.starts_with("Draft") {
        // Long enough that the context is over budget once the documents join it.
        (0..40).map(|i| format!("Draft note {i} on a request of {fingerprint} characters. ")).collect()
    } else if system.starts_with("Summarise") && user.contains("Draft note") {
        // The first summary of the loop is still too long, so the loop summarises again.
        (0..25).map(|i| format!("Summary point {i} of {fingerprint} characters: totals are rounded. ")).collect()
    } else if system.starts_with("Summarise") {
        format!("Summary of {fingerprint} characters of context: totals are rounded per line.")
    } else {
        format!("Answer after {fingerprint} characters: the total is the rounded sum of the lines.")
    }
}

async fn complete(State(received): State<Received>, Json(body): Json<Value>) -> Json<Value> {
    let content = reply(&body);
    received.lock().expect("not poisoned").push(body);
    Json(json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": "scripted",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2 }
    }))
}

/// Starts the scripted server on 127.0.0.1; returns its base URL (`…/v1`) and what it receives.
pub async fn scripted_server() -> (String, Received) {
    let received: Received = Arc::default();
    let app = Router::new().route("/v1/chat/completions", post(complete)).with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let address = listener.local_addr().expect("bound");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/v1"), received)
}

/// A free TCP port on 127.0.0.1 (free when asked; the OS hands out fresh ports in turn).
pub fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a: SocketAddr| a.port()).expect("a free port")
}

/// The repository's `scripts/restate.sh`.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/restate.sh")
}

/// Whether tests needing the engine must run: in CI always, elsewhere when it is installed.
/// Outside CI a missing engine is a skip, said on stderr.
pub fn engine_available(test: &str) -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if ci {
        return true;
    }
    let installed = Command::new(script()).arg("installed").stderr(Stdio::null()).status().is_ok_and(|s| s.success());
    if !installed {
        eprintln!(
            "{test}: skipped: restate-server is not installed (run `scripts/restate.sh provision`; CI=true runs it)"
        );
    }
    installed
}

/// A Restate engine of the caller's own: its own ports and run directory, started, killed and
/// restarted through `scripts/restate.sh`. Stopped when dropped.
pub struct Engine {
    pub ingress: String,
    pub admin: String,
    vars: Vec<(&'static str, String)>,
    _dir: tempfile::TempDir,
}

impl Engine {
    pub fn start() -> Engine {
        let dir = tempfile::tempdir().expect("a temporary directory");
        // Three ports held at once, so that they differ.
        let held: Vec<StdListener> = (0..3).map(|_| StdListener::bind("127.0.0.1:0").expect("a free port")).collect();
        let port = |i: usize| held[i].local_addr().expect("bound").port();
        let (ingress, admin, node) = (port(0), port(1), port(2));
        drop(held);
        let vars = vec![
            ("CTX_RESTATE_INGRESS_PORT", ingress.to_string()),
            ("CTX_RESTATE_ADMIN_PORT", admin.to_string()),
            ("CTX_RESTATE_NODE_PORT", node.to_string()),
            ("CTX_RESTATE_RUN_DIR", dir.path().display().to_string()),
        ];
        let engine = Engine {
            ingress: format!("http://127.0.0.1:{ingress}"),
            admin: format!("http://127.0.0.1:{admin}"),
            vars,
            _dir: dir,
        };
        engine.script(&["start"]);
        engine
    }

    fn script(&self, args: &[&str]) -> String {
        let out = Command::new(script())
            .args(args)
            .envs(self.vars.iter().map(|(k, v)| (*k, v.as_str())))
            .stderr(Stdio::inherit())
            .output()
            .expect("scripts/restate.sh runs");
        assert!(out.status.success(), "scripts/restate.sh {args:?} failed");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Registers the service listening on `port`.
    pub fn register(&self, port: u16) {
        self.script(&["register", &format!("http://127.0.0.1:{port}")]);
    }

    /// Kills the engine at once (SIGKILL, no shutdown) by its recorded process id.
    pub fn kill(&self) {
        let pid = self.script(&["pid"]);
        let status = Command::new("kill").args(["-KILL", &pid]).status().expect("kill runs");
        assert!(status.success());
        while Path::new(&format!("/proc/{pid}")).exists() && !is_zombie(&pid) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// The engine's process id, while it runs.
    pub fn pid(&self) -> Option<String> {
        let out =
            Command::new(script()).arg("pid").envs(self.vars.iter().map(|(k, v)| (*k, v.as_str()))).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Starts the engine again on the data it had.
    pub fn restart(&self) {
        self.script(&["restart"]);
    }
}

fn is_zombie(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')))
        .unwrap_or(true)
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = Command::new(script()).arg("stop").envs(self.vars.iter().map(|(k, v)| (*k, v.as_str()))).status();
    }
}

/// The in-process run the durable runs must equal: final state and reports as JSON.
pub async fn in_process(question: &str, base_url: &str) -> (PipelineState, Vec<Value>) {
    let pipeline = DurableQa::new().expect("the pipeline loads");
    let env = OwnedEnv { corpus: Corpus::new(), model: client(base_url) };
    let (state, reports) = pipeline.run(PipelineState::new(question), &env).await.expect("the run succeeds");
    (state, reports.iter().map(|r| serde_json::to_value(r).expect("a report serialises")).collect())
}
