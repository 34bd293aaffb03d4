//! [`LocalModel`]: a model served by llama-cpp-python on this machine, ready for a pipeline —
//! its context window as the server states it, a [`TokenCounter`] exact for its tokenizer and
//! chat template, and an [`OpenAiClient`] for its OpenAI-compatible API.
//!
//! `scripts/llama-server.sh start` provisions and starts such a server (SmolLM2-135M-Instruct);
//! `eval "$(scripts/llama-server.sh env)"` sets the variables [`LocalModel::from_env`] reads:
//!
//! | variable | meaning |
//! |---|---|
//! | `CTX_LLAMA_BASE_URL` | the server's base URL, `http://127.0.0.1:18080/v1` |
//! | `CTX_LLAMA_MODEL` | the served model's name (`--model_alias`); `smollm2` when unset |
//!
//! ```no_run
//! # async fn demo(def: ctx_runtime::pipeline::PipelineDef) -> Result<(), ctx_runtime::CtxError> {
//! use ctx_runtime::llm::llama_cpp::LocalModel;
//! use ctx_runtime::pipeline::LoadOptions;
//!
//! let Some(local) = LocalModel::from_env()? else { return Ok(()) };
//! // The pipeline counts with the server's tokenizer and uses the server's context size.
//! let pipeline = local.load(def, LoadOptions::new())?;
//! assert_eq!(pipeline.context_window(), local.window());
//! # Ok(()) }
//! ```

use std::time::Duration;

use super::openai::{OpenAiClient, OpenAiConfig};
use crate::error::CtxError;
use crate::pipeline::{LoadOptions, LoadedPipeline, ModelSource, PipelineDef};
use crate::tokens::{ChatTemplate, LlamaCppServer, TokenCounter};
use crate::validation::{ConfigIssue, ConfigIssues, FieldPath};

/// The variable naming the server's base URL.
pub const ENV_BASE_URL: &str = "CTX_LLAMA_BASE_URL";
/// The variable naming the served model.
pub const ENV_MODEL: &str = "CTX_LLAMA_MODEL";
/// The model name when [`ENV_MODEL`] is unset (the alias `scripts/llama-server.sh` serves).
pub const DEFAULT_MODEL: &str = "smollm2";
/// The window probe's ceiling ([`LlamaCppServer::context_window`]): above any context a local
/// server of this class is started with, and cheap to tokenize.
pub const WINDOW_PROBE_CEILING: usize = 1 << 17;

/// A locally served model: server, window, exact counter and client.
#[derive(Debug, Clone)]
pub struct LocalModel {
    server: LlamaCppServer,
    window: usize,
    counter: TokenCounter,
    client: OpenAiClient,
}

impl LocalModel {
    /// Connects to `model` at `base_url`, reads the server's context size, and builds a counter
    /// with the server's tokenizer and `template` (the model's chat template). The client has
    /// the default timeouts and retries of [`OpenAiConfig::new`] and no proxy.
    pub fn connect(base_url: &str, model: &str, template: ChatTemplate) -> Result<Self, CtxError> {
        let server = LlamaCppServer::connect(base_url, model)?;
        let window = server.context_window(WINDOW_PROBE_CEILING)?;
        let counter = server.default_counter(template);
        let mut config = OpenAiConfig::new(server.openai_base_url(), model);
        config.system_proxy = false;
        // One request at a time on a small CPU: a long summary can take minutes.
        config.request_timeout = Duration::from_secs(600);
        let client = OpenAiClient::new(config)?;
        Ok(LocalModel { server, window, counter, client })
    }

    /// The server named by [`ENV_BASE_URL`] serving SmolLM2 ([`ChatTemplate::smollm2`]), or
    /// `None` when the variable is unset or empty.
    pub fn from_env() -> Result<Option<Self>, CtxError> {
        let Some(base_url) = std::env::var(ENV_BASE_URL).ok().filter(|u| !u.trim().is_empty()) else {
            return Ok(None);
        };
        let model = std::env::var(ENV_MODEL).ok().filter(|m| !m.trim().is_empty());
        Self::connect(&base_url, model.as_deref().unwrap_or(DEFAULT_MODEL), ChatTemplate::smollm2()).map(Some)
    }

    /// The server.
    pub fn server(&self) -> &LlamaCppServer {
        &self.server
    }

    /// The server's context size (prompt plus output), in tokens.
    pub fn window(&self) -> usize {
        self.window
    }

    /// The counter: the server's tokenizer behind a count cache, with the model's chat template.
    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// The client for the server's chat completions.
    pub fn client(&self) -> &OpenAiClient {
        &self.client
    }

    /// Loads `def` to run against this model: every count (the contract at load time, then every
    /// step) uses [`Self::counter`]. A `model { … }` block's window becomes the server's context
    /// size; a `config.json` keeps its own window, which must not exceed the server's.
    pub fn load(&self, mut def: PipelineDef, opts: LoadOptions) -> Result<LoadedPipeline, CtxError> {
        if let ModelSource::Inline(spec) = &mut def.model {
            spec.context_window = Some(i64::try_from(self.window).unwrap_or(i64::MAX));
        }
        let name = def.name.clone();
        let loaded = LoadedPipeline::load_with_counter(def, opts, self.counter.clone())?;
        if loaded.context_window() > self.window {
            let issue = ConfigIssue::new(
                "LOCAL_MODEL_WINDOW_TOO_LARGE",
                FieldPath::root().key("model").key("context_window"),
                format!(
                    "the pipeline's window is {} tokens but the server at {} holds {}",
                    loaded.context_window(),
                    self.server.openai_base_url(),
                    self.window
                ),
            )
            .with_help(format!("set `model_context_window` to at most {} (the server's `--n_ctx`)", self.window));
            ConfigIssues::check(format!("pipeline `{name}`"), vec![issue])?;
        }
        Ok(loaded)
    }
}
