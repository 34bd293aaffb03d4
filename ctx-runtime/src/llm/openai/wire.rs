//! The chat-completions wire format: what is sent and what is read back.
//!
//! Only the fields ctx uses are modelled; unknown response fields (`system_fingerprint`,
//! llama.cpp's `timings`, reasoning text) are ignored, so every OpenAI-compatible server parses.

use serde::{Deserialize, Serialize};

use super::config::MaxTokensParam;
use crate::chat::{ChatMessage, ToolCall, ToolSchema};
use crate::llm::{ChatRequest, Usage};

/// The request body.
#[derive(Debug, Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    presence_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frequency_penalty: Option<f64>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    /// `null` for an assistant message that only calls tools, as the API documents.
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireToolCallOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct WireToolCallOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionOut<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunctionOut<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionDecl<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunctionDecl<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
}

impl<'a> WireRequest<'a> {
    /// The body for `request` sent to `model`.
    pub(crate) fn new(
        model: &'a str,
        request: &'a ChatRequest,
        param: MaxTokensParam,
        stream: bool,
        include_usage: bool,
    ) -> Self {
        let (max_tokens, max_completion_tokens) = match param {
            MaxTokensParam::MaxTokens => (Some(request.max_tokens), None),
            MaxTokensParam::MaxCompletionTokens => (None, Some(request.max_tokens)),
            MaxTokensParam::Both => (Some(request.max_tokens), Some(request.max_tokens)),
        };
        WireRequest {
            model,
            messages: request.messages.iter().map(WireMessage::from_message).collect(),
            tools: request.tools.iter().map(WireTool::from_schema).collect(),
            max_tokens,
            max_completion_tokens,
            temperature: request.params.temperature,
            top_p: request.params.top_p,
            presence_penalty: request.params.presence_penalty,
            frequency_penalty: request.params.frequency_penalty,
            stop: &request.params.stop,
            seed: request.params.seed,
            response_format: request.params.response_format.as_ref().map(|f| f.to_wire()),
            stream,
            stream_options: (stream && include_usage).then_some(StreamOptions { include_usage: true }),
        }
    }
}

impl<'a> WireMessage<'a> {
    fn from_message(m: &'a ChatMessage) -> Self {
        let only_calls = m.content.is_empty() && !m.tool_calls.is_empty();
        WireMessage {
            role: m.role.as_str(),
            content: if only_calls { None } else { Some(&m.content) },
            name: m.name.as_deref(),
            tool_calls: m
                .tool_calls
                .iter()
                .map(|c| WireToolCallOut {
                    id: &c.id,
                    kind: "function",
                    function: WireFunctionOut { name: &c.name, arguments: &c.arguments },
                })
                .collect(),
            tool_call_id: m.tool_call_id.as_deref(),
        }
    }
}

impl<'a> WireTool<'a> {
    fn from_schema(t: &'a ToolSchema) -> Self {
        WireTool {
            kind: "function",
            function: WireFunctionDecl { name: &t.name, description: &t.description, parameters: &t.parameters },
        }
    }
}

/// A non-streaming response body. `choices` is optional here so that a body without it is
/// reported as malformed rather than as a serde message.
#[derive(Debug, Deserialize)]
pub(crate) struct WireCompletion {
    #[serde(default)]
    pub(crate) choices: Option<Vec<WireChoice>>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireChoice {
    #[serde(default)]
    pub(crate) index: u32,
    pub(crate) message: WireResponseMessage,
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireResponseMessage {
    #[serde(default)]
    pub(crate) content: Option<String>,
    #[serde(default)]
    pub(crate) tool_calls: Option<Vec<WireToolCallIn>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireToolCallIn {
    #[serde(default)]
    pub(crate) id: String,
    pub(crate) function: WireFunctionIn,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireFunctionIn {
    #[serde(default)]
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) arguments: String,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub(crate) prompt_tokens: usize,
    #[serde(default)]
    pub(crate) completion_tokens: usize,
    /// `prompt_tokens_details`: OpenAI's (and vLLM's, with prefix caching on) breakdown of the
    /// prompt; `null` or absent on servers that do not report it.
    #[serde(default)]
    pub(crate) prompt_tokens_details: Option<WirePromptDetails>,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct WirePromptDetails {
    /// Prompt tokens served from the prompt cache (part of `prompt_tokens`).
    #[serde(default)]
    pub(crate) cached_tokens: Option<usize>,
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Self {
        // Chat completions has no cache-write count: OpenAI writes the cache at the input price.
        let cached = u.prompt_tokens_details.and_then(|d| d.cached_tokens);
        Usage::new(u.prompt_tokens, u.completion_tokens).with_cache(cached, None)
    }
}

impl WireToolCallIn {
    pub(crate) fn into_tool_call(self) -> ToolCall {
        ToolCall::new(self.id, self.function.name, self.function.arguments)
    }
}

/// One chunk of a stream.
#[derive(Debug, Deserialize)]
pub(crate) struct WireChunk {
    #[serde(default)]
    pub(crate) choices: Vec<WireChunkChoice>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireChunkChoice {
    #[serde(default)]
    pub(crate) index: u32,
    #[serde(default)]
    pub(crate) delta: Option<WireDelta>,
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireDelta {
    #[serde(default)]
    pub(crate) content: Option<String>,
    #[serde(default)]
    pub(crate) tool_calls: Option<Vec<WireToolCallDelta>>,
}

/// A piece of a tool call: the first piece of call `index` carries its id and name, later
/// pieces append to its arguments.
#[derive(Debug, Deserialize)]
pub(crate) struct WireToolCallDelta {
    #[serde(default)]
    pub(crate) index: u32,
    #[serde(default)]
    pub(crate) id: Option<String>,
    #[serde(default)]
    pub(crate) function: Option<WireFunctionDelta>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireFunctionDelta {
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) arguments: Option<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn request_body_matches_the_api() {
        let request = ChatRequest {
            messages: vec![
                ChatMessage::system("sys"),
                ChatMessage::user("hi").with_name("ann"),
                ChatMessage::assistant_tool_calls("", vec![ToolCall::new("c1", "search", "{\"q\":\"x\"}")]),
                ChatMessage::tool_result("c1", "found"),
            ],
            tools: vec![ToolSchema::new("search", "Searches.", json!({"type": "object", "properties": {}}))],
            max_tokens: 64,
            params: crate::llm::ModelParams::default()
                .temperature(Some(0.0))
                .top_p(Some(0.9))
                .presence_penalty(Some(0.5))
                .frequency_penalty(Some(-0.25))
                .stop(vec!["###".into()])
                .seed(Some(7))
                .response_format(Some(crate::llm::ResponseFormat::JsonObject)),
            predicted_prompt_tokens: Some(10),
            step_id: Some("answer".into()),
        };
        let body = serde_json::to_value(WireRequest::new("m", &request, MaxTokensParam::Both, true, true))
            .expect("serializable");
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "hi", "name": "ann"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\":\"x\"}"}}
                    ]},
                    {"role": "tool", "content": "found", "tool_call_id": "c1"}
                ],
                "tools": [{"type": "function", "function": {
                    "name": "search", "description": "Searches.", "parameters": {"type": "object", "properties": {}}
                }}],
                "max_tokens": 64,
                "max_completion_tokens": 64,
                "temperature": 0.0,
                "top_p": 0.9,
                "presence_penalty": 0.5,
                "frequency_penalty": -0.25,
                "stop": ["###"],
                "seed": 7,
                "response_format": {"type": "json_object"},
                "stream": true,
                "stream_options": {"include_usage": true}
            })
        );
        let plain =
            serde_json::to_value(WireRequest::new("m", &request, MaxTokensParam::MaxCompletionTokens, false, true))
                .expect("serializable");
        assert!(plain.get("max_tokens").is_none() && plain.get("stream").is_none());
        assert_eq!(plain["max_completion_tokens"], 64);
    }
}
