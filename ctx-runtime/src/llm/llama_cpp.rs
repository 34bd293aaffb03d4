//! [`LocalModel`]: a model served by llama-cpp-python on this machine, ready for a pipeline —
//! its context window as the server states it, a [`TokenCounter`] exact for its tokenizer and
//! chat template, and an [`OpenAiClient`] for its OpenAI-compatible API.
//!
//! The counter is offline: the tokenizer and chat template are read from the served GGUF file
//! ([`ModelFiles`]), so counting never calls the server. ([`LocalModel::connect`] still builds a
//! counter on the server's tokenize endpoint for a template given by hand.)
//!
//! `scripts/llama-server.sh start` provisions and starts such a server (SmolLM2-135M-Instruct);
//! `eval "$(scripts/llama-server.sh env)"` sets the variables [`LocalModel::from_env`] reads:
//!
//! | variable | meaning |
//! |---|---|
//! | `CTX_LLAMA_BASE_URL` | the server's base URL, `http://127.0.0.1:18080/v1` |
//! | `CTX_LLAMA_MODEL` | the served model's name (`--model_alias`); `smollm2` when unset |
//! | `CTX_LLAMA_GGUF` | the served model file, read for its tokenizer and chat template |
//!
//! ```no_run
//! # async fn demo(def: ctx::definition::PipelineDef) -> Result<(), ctx::CtxError> {
//! use ctx::llm::llama_cpp::LocalModel;
//! use ctx::pipeline::LoadOptions;
//!
//! let Some(local) = LocalModel::from_env()? else { return Ok(()) };
//! // The pipeline counts with the server's tokenizer and uses the server's context size.
//! let pipeline = local.load(def, LoadOptions::new())?;
//! assert_eq!(pipeline.context_window(), local.window());
//! # Ok(()) }
//! ```

use std::time::Duration;

use super::openai::{OpenAiClient, OpenAiConfig};
use crate::codes::Code;
use crate::error::CtxError;
use crate::pipeline::{LoadOptions, LoadedPipeline, ModelSource, PipelineDef};
use crate::tokens::{ChatTemplate, LlamaCppServer, ModelFiles, TokenCounter};
use crate::validation::{ConfigIssue, ConfigIssues, FieldPath};

/// The variable naming the server's base URL.
pub const ENV_BASE_URL: &str = "CTX_LLAMA_BASE_URL";
/// The variable naming the served model.
pub const ENV_MODEL: &str = "CTX_LLAMA_MODEL";
/// The variable naming the served GGUF file.
pub const ENV_GGUF: &str = "CTX_LLAMA_GGUF";
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
    /// with the server's tokenizer (its tokenize endpoint) and `template`. The client has the
    /// default timeouts and retries of [`OpenAiConfig::new`] and no proxy.
    pub fn connect(base_url: &str, model: &str, template: ChatTemplate) -> Result<Self, CtxError> {
        let server = LlamaCppServer::connect(base_url, model)?;
        let counter = server.default_counter(template);
        Self::with_counter(server, model, counter)
    }

    /// Connects to `model` at `base_url`, served from the file `files` were read from: counts
    /// offline with the model's own tokenizer and chat template; the window is the server's
    /// context size (`--n_ctx`, at most the model's training length).
    pub fn connect_with_files(base_url: &str, model: &str, files: &ModelFiles) -> Result<Self, CtxError> {
        let server = LlamaCppServer::connect(base_url, model)?;
        Self::with_counter(server, model, files.counter().clone())
    }

    fn with_counter(server: LlamaCppServer, model: &str, counter: TokenCounter) -> Result<Self, CtxError> {
        let window = server.context_window(WINDOW_PROBE_CEILING)?;
        let mut config = OpenAiConfig::new(server.openai_base_url(), model);
        config.system_proxy = false;
        // One request at a time on a small CPU: a long summary can take minutes.
        config.request_timeout = Duration::from_secs(600);
        let client = OpenAiClient::new(config)?;
        Ok(LocalModel { server, window, counter, client })
    }

    /// The server named by [`ENV_BASE_URL`], counted with the model file named by [`ENV_GGUF`]
    /// ([`Self::connect_with_files`]), or `None` when [`ENV_BASE_URL`] is unset or empty. A
    /// server without [`ENV_GGUF`] is a configuration error: its chat template is in the file.
    pub fn from_env() -> Result<Option<Self>, CtxError> {
        let Some(base_url) = std::env::var(ENV_BASE_URL).ok().filter(|u| !u.trim().is_empty()) else {
            return Ok(None);
        };
        let model = std::env::var(ENV_MODEL).ok().filter(|m| !m.trim().is_empty());
        let Some(gguf) = std::env::var_os(ENV_GGUF).filter(|g| !g.is_empty()) else {
            let issue = ConfigIssue::new(
                Code::LocalModelFileMissing,
                FieldPath::root().key(ENV_GGUF),
                format!("{ENV_BASE_URL} is set but {ENV_GGUF} is not: ctx counts with the served model's own files"),
            )
            .with_help("`eval \"$(scripts/llama-server.sh env)\"` sets both");
            ConfigIssues::check("the local model", vec![issue])?;
            return Ok(None);
        };
        let files = ModelFiles::from_gguf(std::path::Path::new(&gguf))?;
        Self::connect_with_files(&base_url, model.as_deref().unwrap_or(DEFAULT_MODEL), &files).map(Some)
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
    /// size, and so does each named model's (`models { … }`: the server answers for every name);
    /// a `config.json` keeps its own windows, which must not exceed the server's.
    pub fn load(&self, mut def: PipelineDef, opts: LoadOptions) -> Result<LoadedPipeline, CtxError> {
        let window = Some(i64::try_from(self.window).unwrap_or(i64::MAX));
        // Only a declared default model: writing into the empty block of a pipeline that has
        // only named models would declare one.
        if def.has_default_model()
            && let ModelSource::Inline(spec) = &mut def.model
        {
            spec.context_window = window;
        }
        for (_, spec) in &mut def.models {
            spec.context_window = window;
        }
        let name = def.name.clone();
        let loaded = LoadedPipeline::load_with_counter(def, opts, self.counter.clone())?;
        let default = (loaded.context_window(), FieldPath::root().key("model").key("context_window"));
        let named = loaded.named_models().iter().map(|m| {
            (m.config.context_window, FieldPath::root().key("models").key(&m.name).key("model_context_window"))
        });
        let issues: Vec<ConfigIssue> = std::iter::once(default)
            .chain(named)
            .filter(|(window, _)| *window > self.window)
            .map(|(window, at)| {
                ConfigIssue::new(
                    Code::LocalModelWindowTooLarge,
                    at,
                    format!(
                        "the pipeline's window is {window} tokens but the server at {} holds {}",
                        self.server.openai_base_url(),
                        self.window
                    ),
                )
                .with_help(format!("set `model_context_window` to at most {} (the server's `--n_ctx`)", self.window))
            })
            .collect();
        ConfigIssues::check(format!("pipeline `{name}`"), issues)?;
        Ok(loaded)
    }
}
