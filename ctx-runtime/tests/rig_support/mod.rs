//! rig on the local model server of the `llama_*` tests (`scripts/llama-server.sh`): its chat
//! model through rig's OpenAI provider, its embeddings (`/v1/embeddings`, the alias
//! `CTX_LLAMA_EMBED_MODEL`) through the same provider, and a recorder of ctx's prediction beside
//! the server's usage for any model.

#![allow(dead_code)] // each test file uses a different part

use std::io::Write as _;
use std::sync::Mutex;

use ctx_runtime::llm::rig::RigModel;
use ctx_runtime::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use rig_core::DynModel;
use rig_core::providers::openai::OpenAIConfig;
use rig_core::providers::openai::wire::{BodyRewrite, Dialect, LLAMACPP};

use crate::llama_support::{Exchange, Llama};

/// rig's llama.cpp dialect, with text-only content arrays sent as one string.
///
/// rig's chat wire sends a system message's content as an array of one text part. llama.cpp's
/// own `llama-server` joins such parts, but llama-cpp-python's request schema takes a system
/// message's content only as a string and refuses the request. rig's Perplexity rewrite sends text-only arrays as one string,
/// which is what ctx counted (`docs/rig.md`, "Where the count is exact").
pub fn string_content_dialect() -> Dialect {
    let mut quirks = LLAMACPP.quirks;
    quirks.rewrite = BodyRewrite::Perplexity;
    LLAMACPP.with_quirks(quirks)
}

/// The configuration of the local server for rig, in `dialect`.
fn config(l: &Llama, dialect: &Dialect) -> OpenAIConfig {
    OpenAIConfig::with_key(dialect, "").with_base_url(l.server.openai_base_url())
}

/// The local chat model as a rig completion model, run by ctx.
pub fn chat_model(l: &Llama, dialect: &Dialect) -> RigModel {
    let model = std::env::var("CTX_LLAMA_MODEL").unwrap_or_else(|_| "smollm2".to_owned());
    RigModel::new(config(l, dialect).client().chat(model))
}

/// The local server's embedding model (`CTX_LLAMA_EMBED_MODEL`), or `None` (after saying why)
/// on a developer machine whose server predates it; under CI its absence fails the test.
pub fn embedding_model(l: &Llama, test: &str) -> Option<DynModel<rig_core::operation::Embedding>> {
    let Some(name) = std::env::var("CTX_LLAMA_EMBED_MODEL").ok().filter(|n| !n.is_empty()) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CTX_LLAMA_EMBED_MODEL is not set under CI: `eval \"$(scripts/llama-server.sh env)\"` names it"
        );
        let _ = writeln!(
            std::io::stderr(),
            "skipped {test}: CTX_LLAMA_EMBED_MODEL is not set; restart the server with scripts/llama-server.sh"
        );
        return None;
    };
    Some(config(l, &LLAMACPP).client().embedding(name, None).erase())
}

/// Forwards every request to `model` with temperature 0 (a run repeats itself; the temperature
/// does not change the prompt) and records ctx's prediction next to the server's usage.
pub struct Recorder<M> {
    pub model: M,
    pub exchanges: Mutex<Vec<Exchange>>,
}

impl<M: ChatModel> Recorder<M> {
    pub fn new(model: M) -> Self {
        Recorder { model, exchanges: Mutex::new(Vec::new()) }
    }

    pub fn exchanges(&self) -> Vec<Exchange> {
        self.exchanges.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl<M: ChatModel> ChatModel for Recorder<M> {
    fn model_name(&self) -> &str {
        self.model.model_name()
    }

    fn provider_name(&self) -> &str {
        self.model.provider_name()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let greedy = request.clone().params(request.params.clone().temperature(Some(0.0)));
        let response = self.model.chat(&greedy).await?;
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
