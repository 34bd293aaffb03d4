//! Chat models: the trait pipelines call, and its implementations.
//!
//! The trait is object-safe (`dyn ChatModel`) so a pipeline run can hold any model behind one
//! reference; implementations live in submodules.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::chat::{ChatMessage, ToolCall, ToolSchema};
use crate::error::ErrorCode;

/// One request to a chat model. ctx builds it only after checking that its exact prompt plus
/// `max_tokens` fits the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The messages, system prompt first.
    pub messages: Vec<ChatMessage>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSchema>,
    /// The output limit sent to the server.
    pub max_tokens: usize,
    /// Sampling temperature, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// ctx's exact count of the prompt (messages, tools and chat overhead), for comparison with
    /// the server's `usage.prompt_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_prompt_tokens: Option<usize>,
    /// The pipeline step that sends it, for traces and errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
}

/// Token usage reported by the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens as the server counted them.
    pub prompt_tokens: usize,
    /// Generated tokens.
    pub completion_tokens: usize,
}

/// A model's reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The reply text.
    pub content: String,
    /// Tool calls the model made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Usage, when the server reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why generation stopped (`stop`, `length`, …), when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The server said the prompt plus output does not fit its context.
    #[error("model `{model}` rejected the request: context length exceeded ({message})")]
    ContextLengthExceeded {
        /// The model name.
        model: String,
        /// The server's message.
        message: String,
    },
    /// The model could not be reached or answered with an error.
    #[error("model `{model}` call failed: {message}")]
    Failed {
        /// The model name.
        model: String,
        /// What happened.
        message: String,
    },
}

impl ErrorCode for ModelError {
    fn code(&self) -> &'static str {
        match self {
            ModelError::ContextLengthExceeded { .. } => "MODEL_CONTEXT_LENGTH_EXCEEDED",
            ModelError::Failed { .. } => "MODEL_CALL_FAILED",
        }
    }
}

/// A chat model.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// The model's name (as sent to the server).
    fn model_name(&self) -> &str;

    /// Sends one request and waits for the whole reply.
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError>;
}
