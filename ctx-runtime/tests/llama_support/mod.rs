//! The real local model for the `llama_*` integration tests: llama-cpp-python serving
//! SmolLM2-135M-Instruct, started by `scripts/llama-server.sh` and found through the variables
//! `scripts/llama-server.sh env` prints.
//!
//! Without `CTX_LLAMA_BASE_URL` a test is skipped with a message on a developer machine, and
//! fails under CI (`CI` set), where `.ci/run` must have started the server.

#![allow(dead_code)] // each test file uses a different part

pub mod server_log;

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use ctx_runtime::TokenCounter;
use ctx_runtime::llm::llama_cpp::LocalModel;
use ctx_runtime::llm::openai::{OpenAiClient, OpenAiConfig, RetryPolicy};
use ctx_runtime::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use ctx_runtime::tokens::{LlamaCppServer, ModelFiles};

/// The server, its context size, a counter exact for its model (offline, from its GGUF), and a
/// client.
pub struct Llama {
    /// The runtime's own handle ([`LocalModel::connect`]), as an application would build it.
    pub local: LocalModel,
    pub server: LlamaCppServer,
    pub window: usize,
    pub counter: TokenCounter,
    /// A client with long limits (a loaded 2-core machine is slow) and two quick retries: uvicorn
    /// closes idle keep-alive connections after 5 s, and a request that races that close fails
    /// with "connection closed before message completed" before the server saw it. A refusal
    /// is never retried, and a crashed server still fails the test.
    pub client: OpenAiClient,
}

/// The server named by the environment, or `None` (after saying why) when a developer runs the
/// tests without one.
pub fn llama(test: &str) -> Option<Llama> {
    let base_url = std::env::var("CTX_LLAMA_BASE_URL").ok().filter(|u| !u.is_empty());
    let Some(base_url) = base_url else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CTX_LLAMA_BASE_URL is not set under CI: .ci/run must run `scripts/llama-server.sh start` and \
             `eval \"$(scripts/llama-server.sh env)\"` before the tests"
        );
        // Straight to the stderr handle: libtest captures `eprintln!`, and a skip must show.
        let _ = writeln!(
            std::io::stderr(),
            "skipped {test}: CTX_LLAMA_BASE_URL is not set; to run it: \
             scripts/llama-server.sh start && eval \"$(scripts/llama-server.sh env)\""
        );
        return None;
    };
    let model = std::env::var("CTX_LLAMA_MODEL").unwrap_or_else(|_| "smollm2".to_owned());
    let gguf = std::env::var("CTX_LLAMA_GGUF").unwrap_or_else(|_| {
        panic!("CTX_LLAMA_GGUF is not set: `eval \"$(scripts/llama-server.sh env)\"` names the served model file")
    });
    // Offline: the GGUF's own tokenizer and chat template; the server is only asked for its
    // context size and for the replies whose usage the tests compare with ctx's prediction.
    let files = ModelFiles::from_gguf(&gguf).unwrap_or_else(|e| panic!("{e}"));
    let local = LocalModel::connect_with_files(&base_url, &model, &files).unwrap_or_else(|e| panic!("{e}"));
    let window = local.window();
    if let Some(configured) = std::env::var("CTX_LLAMA_N_CTX").ok().and_then(|n| n.parse::<usize>().ok()) {
        assert_eq!(window, configured, "the server's context differs from the one the script started it with");
    }
    let mut config = OpenAiConfig::new(local.server().openai_base_url(), model)
        .with_retry(RetryPolicy::default().max_retries(2).initial_backoff(Duration::from_millis(100)))
        .with_request_timeout(Duration::from_secs(900));
    config.system_proxy = false;
    config.stream_idle_timeout = Duration::from_secs(300);
    let client = OpenAiClient::new(config).unwrap_or_else(|e| panic!("{e}"));
    Some(Llama { server: local.server().clone(), counter: local.counter().clone(), window, client, local })
}

/// One request as ctx predicted it and as the server reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    pub step: String,
    pub predicted: Option<usize>,
    pub reported: Option<usize>,
    pub max_tokens: usize,
    pub completion: Option<usize>,
    pub finish_reason: Option<String>,
}

/// Forwards every request to the client with temperature 0 (greedy decoding, so a run repeats
/// itself; the temperature does not change the prompt) and records ctx's prediction next to the
/// server's usage.
pub struct Recorder<'a> {
    pub client: &'a OpenAiClient,
    pub exchanges: Mutex<Vec<Exchange>>,
}

impl<'a> Recorder<'a> {
    pub fn new(client: &'a OpenAiClient) -> Self {
        Recorder { client, exchanges: Mutex::new(Vec::new()) }
    }

    pub fn exchanges(&self) -> Vec<Exchange> {
        self.exchanges.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl ChatModel for Recorder<'_> {
    fn model_name(&self) -> &str {
        self.client.model_name()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let greedy = request.clone().params(request.params.clone().temperature(Some(0.0)));
        let response = self.client.chat(&greedy).await?;
        if let Ok(mut exchanges) = self.exchanges.lock() {
            exchanges.push(Exchange {
                step: request.step_id.clone().unwrap_or_default(),
                predicted: request.predicted_prompt_tokens,
                reported: response.usage.map(|u| u.prompt_tokens),
                max_tokens: request.max_tokens,
                completion: response.usage.map(|u| u.completion_tokens),
                finish_reason: response.finish_reason.clone(),
            });
        }
        Ok(response)
    }
}

/// A Markdown table of the exchanges, for the test log and the CI report.
pub fn table(title: &str, window: usize, exchanges: &[Exchange]) -> String {
    let mut out = format!(
        "### {title}\n\n| # | step | ctx predicted prompt | server usage.prompt_tokens | max_tokens | \
         prompt + max_tokens | n_ctx | completion | finish |\n|---|---|---|---|---|---|---|---|---|\n"
    );
    let show = |n: Option<usize>| n.map_or_else(|| "-".to_owned(), |n| n.to_string());
    for (i, e) in exchanges.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {window} | {} | {} |",
            i + 1,
            e.step,
            show(e.predicted),
            show(e.reported),
            e.max_tokens,
            show(e.predicted.map(|p| p + e.max_tokens)),
            show(e.completion),
            e.finish_reason.as_deref().unwrap_or("-"),
        );
    }
    out
}

/// Prints `text` and writes it to `target/tmp/llama-tables/{name}.md`, which `.ci/run` shows.
pub fn publish(name: &str, text: &str) {
    println!("{text}");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("llama-tables");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(format!("{name}.md")), text);
}
