//! [`RigModel`]: any [rig](https://docs.rs/rig-core) completion model as a ctx [`ChatModel`]
//! (feature `rig`). ctx builds the request, counts it with the pipeline's counter and checks it
//! against the window, the budgets and the price, exactly as for its own clients; rig encodes it
//! for its provider and sends it. The provider's usage comes back in the reply, so the spend
//! ledger, the run report and the GenAI spans read it as they read any client's.
//!
//! Any `rig_core::Model` whose operation is a completion converts into the erased
//! `DynModel<Completion>` that [`RigModel::new`] takes, whatever its provider and transport:
//!
//! ```no_run
//! use ctx::llm::rig::RigModel;
//! use ctx::llm::rig::rig_core::{http_client::DynHttpClient, providers::openai::OpenAIConfig};
//! use ctx::llm::{ChatModel, ChatRequest};
//!
//! # async fn demo(http: DynHttpClient) -> Result<(), ctx::llm::ModelError> {
//! // Any transport: rig's bundled reqwest one (`.client()`, rig-core's feature `reqwest`) or your own.
//! let openai = OpenAIConfig::new("sk-…").connect(http);
//! let model = RigModel::new(openai.chat("gpt-4o-mini"));
//! let reply = model.chat(&ChatRequest::new(vec![ctx::ChatMessage::user("Hello")], 64)).await?;
//! println!("{} ({:?})", reply.content, reply.usage);
//! # Ok(()) }
//! ```
//!
//! # What ctx's count covers through rig
//!
//! ctx counts the messages it hands rig, rendered as the pipeline's counter renders them (the
//! model's chat format, or a local model's own template). The count equals the provider's as
//! long as rig sends those messages as ctx rendered them, which holds for the role and the text
//! of system, user and assistant messages and for tool results of one text. It cannot hold for
//! what rig adds or re-serialises (`docs/rig.md` lists each case): rig's tool-schema formatting
//! and the sanitising of a response schema, a tool call's arguments (rig keeps them as a JSON
//! object and writes them back with its own serialiser), provider-specific fields, and a content
//! shape the provider renders differently from a string (rig's OpenAI chat wire sends a system
//! message as an array of one text part). What ctx cannot express through rig is refused before
//! anything is sent ([`ModelError::UnsupportedRequest`]): a participant `name`, signed thinking
//! blocks, a tool call without an id or a tool message that answers no earlier call, a negative
//! seed.
//!
//! Retries and timeouts are rig's transport's (ctx's own clients retry themselves); a rig error
//! becomes the [`ModelError`] of the same meaning. Streaming is rig's stream: each text fragment
//! is handed on as it arrives.

/// [rig-core](https://docs.rs/rig-core), the version ctx is built with: its models and indexes
/// are what [`RigModel`] and `retrieve::RigIndex` take, so a program can name them without a
/// dependency of its own (or with its own `rig-core` of the same version).
pub use rig_core;
use rig_core::DynModel;
use rig_core::completion::{
    AssistantContent, AssistantMessage, CompletionRequest, CompletionResponse, FinishReason, Message, ToolDefinition,
};
use rig_core::error::ProviderError;
use rig_core::message::{CallId, ToolFunction, ToolName, ToolResultContent, UserContent};
use rig_core::operation::Completion;
use serde_json::Value;

use super::{ChatModel, ChatRequest, ChatResponse, ModelError, ResponseFormat, Usage};
use crate::chat::{ChatMessage, Role, ToolCall, ToolSchema};

/// A rig completion model, run by ctx: see the [module documentation](self).
#[derive(Clone)]
pub struct RigModel {
    model: DynModel<Completion>,
    name: String,
    provider: String,
}

impl std::fmt::Debug for RigModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RigModel").field("model", &self.name).field("provider", &self.provider).finish()
    }
}

impl RigModel {
    /// Runs ctx's requests on `model`: any rig completion model (a `rig_core::Model` of a
    /// completion wire on any transport, or one already erased).
    pub fn new(model: impl Into<DynModel<Completion>>) -> Self {
        let model = model.into();
        let provider = model.name().to_owned();
        let name = model.id().unwrap_or(&provider).to_owned();
        RigModel { model, name, provider }
    }

    /// The rig model requests are sent with.
    pub fn rig_model(&self) -> &DynModel<Completion> {
        &self.model
    }

    /// The rig request for `request`, as [`ChatModel::chat`] sends it; a request rig cannot
    /// carry as ctx counted it is refused here, before anything is sent.
    pub fn rig_request(&self, request: &ChatRequest) -> Result<CompletionRequest, ModelError> {
        let unsupported = |message: String| ModelError::UnsupportedRequest { model: self.name.clone(), message };
        let messages = rig_messages(&request.messages).map_err(unsupported)?;
        let tools = request.tools.iter().map(rig_tool).collect::<Result<Vec<_>, _>>().map_err(unsupported)?;
        let params = &request.params;
        let max_tokens = u64::try_from(request.max_tokens).unwrap_or(u64::MAX);
        let mut rig = CompletionRequest::from(messages).max_tokens(max_tokens).temperature(params.temperature);
        if !tools.is_empty() {
            rig = rig.tools(tools);
        }
        if let Some(top_p) = params.top_p {
            rig = rig.top_p(top_p);
        }
        if let Some(seed) = params.seed {
            let seed = u64::try_from(seed)
                .map_err(|_| unsupported(format!("`seed` is {seed}: rig carries only seeds of 0 and above")))?;
            rig = rig.seed(seed);
        }
        if !params.stop.is_empty() {
            rig = rig.stop(params.stop.iter().cloned());
        }
        // What rig has no portable field for goes as the OpenAI-compatible body keys, which is
        // what ctx's own client sends (an Anthropic wire has no such keys either way).
        let mut extra = serde_json::Map::new();
        if let Some(penalty) = params.presence_penalty {
            extra.insert("presence_penalty".into(), penalty.into());
        }
        if let Some(penalty) = params.frequency_penalty {
            extra.insert("frequency_penalty".into(), penalty.into());
        }
        match &params.response_format {
            None => {}
            Some(ResponseFormat::JsonSchema { name, schema, .. }) => {
                let mut schema: Value = serde_json::from_str(schema)
                    .map_err(|e| unsupported(format!("the response schema `{name}` is not JSON: {e}")))?;
                // rig names the schema after its `title`.
                if let Value::Object(object) = &mut schema {
                    object.entry("title").or_insert_with(|| Value::String(name.clone()));
                }
                let schema = rig_core::schemars::Schema::try_from(schema)
                    .map_err(|e| unsupported(format!("the response schema `{name}` is not a JSON schema: {e}")))?;
                rig = rig.output_schema(schema);
            }
            Some(other) => {
                extra.insert("response_format".into(), other.to_wire());
            }
        }
        if !extra.is_empty() {
            rig = rig.additional_params(Value::Object(extra));
        }
        Ok(rig)
    }
}

impl ChatModel for RigModel {
    fn model_name(&self) -> &str {
        &self.name
    }

    /// rig's name of the provider (`openai`, `anthropic`, `llamacpp`, …), which for the
    /// providers the GenAI conventions name is their well-known value.
    fn provider_name(&self) -> &str {
        &self.provider
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let rig = self.rig_request(request)?;
        let response = self.model.call(rig).await.map_err(|e| model_error(&self.name, &e))?;
        Ok(chat_response(&response))
    }

    /// rig's stream of the same request: each text fragment to `on_token` as it arrives, then
    /// the reply rig folds from the whole stream (with the usage, when the provider streams it).
    async fn chat_stream(
        &self,
        request: &ChatRequest,
        on_token: &mut (dyn for<'t> FnMut(&'t str) + Send),
    ) -> Result<ChatResponse, ModelError> {
        use futures_util::StreamExt;
        use rig_core::streaming::{Item, StreamEvent};

        let rig = self.rig_request(request)?;
        let error = |e: ProviderError| model_error(&self.name, &e);
        let mut stream = self.model.stream(rig).map_err(error)?;
        while let Some(item) = stream.next().await {
            if let Item::Event(StreamEvent::Text { text, .. }) = item.map_err(error)?
                && !text.is_empty()
            {
                on_token(&text);
            }
        }
        let response = stream.finish().await.map_err(error)?;
        Ok(chat_response(&response))
    }
}

/// ctx's messages as rig's, in order. A tool message answers the call of the same id made by an
/// earlier assistant message, whose function name rig's wires need.
fn rig_messages(messages: &[ChatMessage]) -> Result<Vec<Message>, String> {
    let mut out = Vec::with_capacity(messages.len());
    for (index, message) in messages.iter().enumerate() {
        if let Some(name) = &message.name {
            return Err(format!("message {index} has the participant name `{name}`, which rig has no field for"));
        }
        if !message.thinking.is_empty() {
            return Err(format!("message {index} carries signed thinking blocks, which rig's messages cannot replay"));
        }
        out.push(match message.role {
            Role::System => Message::system(message.content.clone()),
            Role::User => Message::user(message.content.clone()),
            Role::Assistant => Message::Assistant(assistant(index, message)?),
            Role::Tool => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                // rig gives an empty id a fresh random one, which would no longer match the call's.
                if id.is_empty() {
                    return Err(format!("tool message {index} names no call id"));
                }
                let Some(call) = messages[..index].iter().rev().flat_map(|m| &m.tool_calls).find(|c| c.id == id) else {
                    return Err(format!(
                        "tool message {index} answers `{id}`, which no earlier assistant message called"
                    ));
                };
                let name = tool_name(&call.name)?;
                Message::User {
                    content: vec![UserContent::tool_result(
                        CallId::from_wire(id),
                        name,
                        vec![ToolResultContent::text(message.content.clone())],
                    )],
                }
            }
        });
    }
    Ok(out)
}

fn assistant(index: usize, message: &ChatMessage) -> Result<AssistantMessage, String> {
    let mut content = Vec::new();
    if !message.content.is_empty() || message.tool_calls.is_empty() {
        content.push(AssistantContent::text(message.content.clone()));
    }
    for call in &message.tool_calls {
        if call.id.is_empty() {
            return Err(format!("message {index} has a tool call without an id, which its result could not name"));
        }
        let name = tool_name(&call.name).map_err(|e| format!("message {index}: {e}"))?;
        content.push(AssistantContent::ToolCall(rig_core::message::ToolCall::from_wire(
            call.id.clone(),
            ToolFunction::parse(name, &call.arguments),
        )));
    }
    Ok(AssistantMessage::new(content))
}

fn tool_name(name: &str) -> Result<ToolName, String> {
    ToolName::new(name).map_err(|_| "a tool call has an empty function name".to_owned())
}

fn rig_tool(tool: &ToolSchema) -> Result<ToolDefinition, String> {
    Ok(ToolDefinition::new(tool_name(&tool.name)?, tool.description.clone(), tool.parameters.clone()))
}

/// rig's reply as ctx's: the text blocks joined, the tool calls with their arguments as JSON
/// text, the usage when the provider reported both counts (else ctx's own counts are billed).
fn chat_response(response: &CompletionResponse) -> ChatResponse {
    let tool_calls = response
        .tool_calls()
        .map(|call| {
            let arguments = call
                .function
                .invalid_arguments
                .clone()
                .unwrap_or_else(|| Value::Object(call.function.arguments.clone()).to_string());
            ToolCall::new(call.id.wire(), call.function.name.as_str(), arguments)
        })
        .collect();
    let count = |n: Option<u64>| n.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let reported = &response.usage;
    let usage = match (count(reported.input_tokens), count(reported.output_tokens)) {
        (Some(input), Some(output)) => Some(
            Usage::new(input, output)
                .with_cache(count(reported.cached_input_tokens), count(reported.cache_creation_input_tokens)),
        ),
        _ => None,
    };
    let finish_reason = response.finish_reason().map(|reason| match reason {
        FinishReason::Stop => "stop".to_owned(),
        FinishReason::Length => "length".to_owned(),
        FinishReason::ToolCalls => "tool_calls".to_owned(),
        FinishReason::ContentFilter => "content_filter".to_owned(),
        FinishReason::Other(other) => other,
        other => format!("{other:?}").to_lowercase(),
    });
    ChatResponse::new(response.text()).tool_calls(tool_calls).usage(usage).finish_reason(finish_reason)
}

/// The [`ModelError`] of the same meaning as rig's `error`.
pub(crate) fn model_error(model: &str, error: &ProviderError) -> ModelError {
    let model = model.to_owned();
    if let Some(status) = error.provider_response_status() {
        let body = error.provider_response_body().unwrap_or_default();
        let parsed = error.provider_response_json().ok().flatten();
        let field = |key: &str| {
            let error = parsed.as_ref()?.get("error")?;
            match error.get(key)? {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            }
        };
        let message = field("message")
            .or_else(|| parsed.as_ref()?.get("error")?.as_str().map(str::to_owned))
            .unwrap_or_else(|| body.chars().take(300).collect());
        let (error_type, error_code) = (field("type"), field("code"));
        if super::error::is_context_length(error_code.as_deref(), error_type.as_deref(), &message) {
            return ModelError::ContextLengthExceeded { model, message };
        }
        if status.as_u16() == 429 && error_code.as_deref() != Some("insufficient_quota") {
            let retry_after = error
                .provider_response_headers()
                .and_then(|h| h.get("retry-after"))
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok());
            return ModelError::RateLimited { model, message, retry_after };
        }
        return ModelError::Http { model, status: status.as_u16(), message, error_type, error_code };
    }
    let message = error.to_string();
    match error {
        ProviderError::Http(_) => ModelError::Transport { model, url: "rig transport".into(), message },
        ProviderError::Truncated => ModelError::TruncatedBody { model, message, received_bytes: 0 },
        ProviderError::Json(_) | ProviderError::Response(_) => {
            ModelError::MalformedBody { model, message, excerpt: String::new() }
        }
        ProviderError::Request(_) | ProviderError::UnsupportedOption(_) => {
            ModelError::UnsupportedRequest { model, message }
        }
        _ => ModelError::Failed { model, message },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall::new(id, name, arguments)
    }

    #[test]
    fn messages_keep_roles_texts_and_calls() {
        let messages = vec![
            ChatMessage::system("Be brief."),
            ChatMessage::user("Weather in Oslo?"),
            ChatMessage::assistant_tool_calls("", vec![call("c1", "weather", r#"{"city":"Oslo"}"#)]),
            ChatMessage::tool_result("c1", "4 °C"),
            ChatMessage::assistant("It is 4 °C."),
        ];
        let rig = rig_messages(&messages).unwrap();
        assert_eq!(rig.len(), 5);
        assert_eq!(rig[0], Message::system("Be brief."));
        assert_eq!(rig[1], Message::user("Weather in Oslo?"));
        let Message::Assistant(turn) = &rig[2] else { panic!("{:?}", rig[2]) };
        let [AssistantContent::ToolCall(c)] = turn.content.as_slice() else { panic!("{turn:?}") };
        assert_eq!((c.id.wire().as_ref(), c.function.name.as_str()), ("c1", "weather"));
        assert_eq!(c.function.arguments["city"], "Oslo");
        let Message::User { content } = &rig[3] else { panic!("{:?}", rig[3]) };
        let [UserContent::ToolResult(result)] = content.as_slice() else { panic!("{content:?}") };
        assert_eq!((result.call.wire().as_ref(), result.name.as_str()), ("c1", "weather"));
        assert_eq!(rig[4], Message::assistant("It is 4 °C."));
    }

    #[test]
    fn what_rig_cannot_carry_is_refused_with_its_place() {
        let mut named = ChatMessage::user("hi");
        named.name = Some("ann".into());
        let err = rig_messages(&[named]).unwrap_err();
        assert!(err.contains("message 0") && err.contains("`ann`"), "{err}");
        let orphan = ChatMessage::tool_result("c9", "result");
        let err = rig_messages(&[ChatMessage::user("q"), orphan]).unwrap_err();
        assert!(err.contains("tool message 1") && err.contains("`c9`"), "{err}");
        let unnamed = ChatMessage::assistant_tool_calls("", vec![call("", "search", "{}")]);
        let err = rig_messages(&[ChatMessage::user("q"), unnamed]).unwrap_err();
        assert!(err.contains("message 1") && err.contains("without an id"), "{err}");
        let model_name = "m";
        let model = ModelError::UnsupportedRequest { model: model_name.into(), message: err };
        assert_eq!(crate::codes::ErrorCode::code(&model), "MODEL_UNSUPPORTED_REQUEST");
    }

    #[test]
    fn replies_bring_text_calls_usage_and_finish() {
        use rig_core::completion::Usage as RigUsage;
        let choice = vec![
            AssistantContent::text("Checking."),
            AssistantContent::tool_call("c2", ToolName::new("search").unwrap(), serde_json::json!({"q": "tax"})),
        ];
        let usage = RigUsage::new().input_tokens(120).output_tokens(9).cached_input_tokens(64);
        let response =
            CompletionResponse::new(choice, usage, origin(), Value::Null).with_finish_reason(FinishReason::ToolCalls);
        let reply = chat_response(&response);
        assert_eq!(reply.content, "Checking.");
        assert_eq!(reply.tool_calls, [call("c2", "search", r#"{"q":"tax"}"#)]);
        assert_eq!(reply.usage, Some(Usage::new(120, 9).with_cache(Some(64), None)));
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        // Only one count reported: ctx bills its own counts instead of a half-known usage.
        let partial = CompletionResponse::new(
            vec![AssistantContent::text("x")],
            RigUsage::new().input_tokens(5),
            origin(),
            Value::Null,
        );
        assert_eq!(chat_response(&partial).usage, None);
    }

    #[test]
    fn provider_errors_keep_their_meaning() {
        let context = ProviderError::from_http_response(
            http_status(400),
            r#"{"error":{"message":"Requested tokens (3000) exceed context window of 2048","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        );
        assert!(matches!(model_error("m", &context), ModelError::ContextLengthExceeded { .. }));
        let limited = ProviderError::from_http_response(http_status(429), r#"{"error":{"message":"slow down"}}"#);
        assert!(
            matches!(model_error("m", &limited), ModelError::RateLimited { ref message, .. } if message == "slow down")
        );
        let other = ProviderError::from_http_response(http_status(500), "boom");
        assert!(
            matches!(model_error("m", &other), ModelError::Http { status: 500, ref message, .. } if message == "boom")
        );
        assert!(matches!(model_error("m", &ProviderError::Truncated), ModelError::TruncatedBody { .. }));
    }

    fn origin() -> rig_core::message::Origin {
        rig_core::message::Origin::new(rig_core::message::Api::from_static("openai.chat"), "openai", "m")
    }

    fn http_status(code: u16) -> http::StatusCode {
        http::StatusCode::from_u16(code).unwrap()
    }
}
