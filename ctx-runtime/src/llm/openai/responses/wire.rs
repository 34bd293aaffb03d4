//! The Responses API's wire format (`POST /responses`): the request body built from ctx's
//! messages, and the reply read back from a response object.
//!
//! A request's messages become `input` items: system, user and assistant texts as messages of
//! their role; an assistant message's tool calls as `function_call` items preceded by the
//! reasoning items it carries, exactly as received; a tool result as a `function_call_output`.
//! Only the fields ctx uses are read back; unknown ones are ignored.

use serde::Serialize;
use serde_json::{Value, json};

use super::options::{ReasoningEffort, ResponsesOptions};
use crate::chat::{ChatMessage, Role, SignedThinking, ToolCall};
use crate::llm::{ChatRequest, ChatResponse, ModelError, ResponseFormat, Usage};
use crate::tokens::is_reasoning_item;

/// The request body.
#[derive(Debug, Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    input: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    max_output_tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Value>,
    /// `false` when reasoning is carried: the items come back whole (`encrypted_content`), so
    /// nothing needs to be kept on the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

impl<'a> WireRequest<'a> {
    /// The body for `request` sent to `model`, or what in it this API cannot express (nothing
    /// is sent then).
    pub(crate) fn new(
        model: &'a str,
        request: &'a ChatRequest,
        options: &ResponsesOptions,
        stream: bool,
    ) -> Result<Self, ModelError> {
        let unsupported = |what: &str| ModelError::UnsupportedRequest {
            model: model.to_owned(),
            message: format!("the Responses API has no `{what}` parameter; unset it for this model"),
        };
        let p = &request.params;
        if p.presence_penalty.is_some() {
            return Err(unsupported("presence_penalty"));
        }
        if p.frequency_penalty.is_some() {
            return Err(unsupported("frequency_penalty"));
        }
        if !p.stop.is_empty() {
            return Err(unsupported("stop"));
        }
        if p.seed.is_some() {
            return Err(unsupported("seed"));
        }
        let mut input = Vec::with_capacity(request.messages.len());
        for m in &request.messages {
            push_items(m, &mut input);
        }
        let tools = request
            .tools
            .iter()
            .map(|t| {
                // `strict` defaults to true here (not in chat completions), which would reject
                // every schema that is not written for strict mode: ask for what chat sends.
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.parameters, "strict": false})
            })
            .collect();
        let reasoning = options.reasoning_effort.map(|e: ReasoningEffort| json!({"effort": e.as_str()}));
        Ok(WireRequest {
            model,
            input,
            tools,
            max_output_tokens: request.max_tokens,
            temperature: p.temperature,
            top_p: p.top_p,
            text: p.response_format.as_ref().map(text_format),
            reasoning,
            store: options.carry_reasoning.then_some(false),
            include: if options.carry_reasoning { vec!["reasoning.encrypted_content"] } else { Vec::new() },
            stream,
        })
    }
}

/// The `text.format` of a response format: the chat API's `json_schema` wrapper flattened.
fn text_format(format: &ResponseFormat) -> Value {
    match format {
        ResponseFormat::JsonSchema { name, schema, strict } => {
            let schema = serde_json::from_str::<Value>(schema).unwrap_or_else(|_| Value::String(schema.clone()));
            json!({"format": {"type": "json_schema", "name": name, "schema": schema, "strict": strict}})
        }
        // `JsonObject`, and any format added later, as the chat API spells it.
        other => json!({ "format": other.to_wire() }),
    }
}

/// The input items of one message, appended to `input`. A participant `name` has no field in
/// this API and is not sent.
fn push_items(m: &ChatMessage, input: &mut Vec<Value>) {
    match m.role {
        Role::Tool => input.push(json!({
            "type": "function_call_output",
            "call_id": m.tool_call_id.as_deref().unwrap_or_default(),
            "output": m.content,
        })),
        Role::Assistant => {
            // The reasoning that led to the message first, as received; another provider's
            // thinking (Anthropic's) means nothing to this API and is not sent.
            input.extend(m.thinking.iter().filter(|t| is_reasoning_item(&t.block)).map(|t| t.block.clone()));
            if !m.content.is_empty() || m.tool_calls.is_empty() {
                input.push(json!({"role": "assistant", "content": m.content}));
            }
            for call in &m.tool_calls {
                input.push(json!({"type": "function_call", "call_id": call.id, "name": call.name,
                                  "arguments": call.arguments}));
            }
        }
        role => input.push(json!({"role": role.as_str(), "content": m.content})),
    }
}

/// The reply in a response object (`object: "response"`), whole or as a stream's last event
/// carries it. `Err` holds what is wrong with it, for the caller to wrap.
pub(crate) fn read_response(value: &Value, carry_reasoning: bool) -> Result<ChatResponse, String> {
    let output = value.get("output").and_then(Value::as_array).ok_or("the response has no `output` list")?;
    let mut content = String::new();
    let mut refusal = String::new();
    let mut tool_calls = Vec::new();
    let mut thinking = Vec::new();
    for item in output {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for part in item.get("content").and_then(Value::as_array).into_iter().flatten() {
                    let text = |key: &str| part.get(key).and_then(Value::as_str).unwrap_or_default();
                    match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => content.push_str(text("text")),
                        Some("refusal") => refusal.push_str(text("refusal")),
                        _ => {}
                    }
                }
            }
            Some("function_call") => {
                let field = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default();
                if field("name").is_empty() {
                    return Err(format!("a `function_call` item has no `name`: {item}"));
                }
                tool_calls.push(ToolCall::new(field("call_id"), field("name"), field("arguments")));
            }
            Some("reasoning") if carry_reasoning => thinking.push(SignedThinking::new(item.clone())),
            _ => {}
        }
    }
    let status = value.get("status").and_then(Value::as_str);
    let incomplete = value.pointer("/incomplete_details/reason").and_then(Value::as_str);
    let finish_reason = match (status, incomplete) {
        (Some("incomplete"), Some("max_output_tokens")) => "length",
        (Some("incomplete"), Some("content_filter")) => "content_filter",
        _ if content.is_empty() && !refusal.is_empty() => "refusal",
        _ if !tool_calls.is_empty() => "tool_calls",
        _ => "stop",
    };
    if content.is_empty() && tool_calls.is_empty() {
        // A refusal is the model's answer: its text is what there is to show.
        content = refusal;
    }
    Ok(ChatResponse::new(content)
        .tool_calls(tool_calls)
        .usage(value.get("usage").filter(|u| u.is_object()).map(usage))
        .finish_reason(Some(finish_reason.to_owned()))
        .thinking(thinking))
}

/// `usage` of a response object.
fn usage(u: &Value) -> Usage {
    let n = |pointer: &str| u.pointer(pointer).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok());
    Usage::new(n("/input_tokens").unwrap_or(0), n("/output_tokens").unwrap_or(0))
        // No cache-write count: OpenAI writes the cache at the input price.
        .with_cache(n("/input_tokens_details/cached_tokens"), None)
        .with_reasoning(n("/output_tokens_details/reasoning_tokens"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ToolSchema;
    use crate::llm::ModelParams;

    fn reasoning_item() -> Value {
        json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look it up."}],
               "encrypted_content": "gAAAAB-opaque"})
    }

    #[test]
    fn request_body_matches_the_api() {
        let request = ChatRequest::new(
            vec![
                ChatMessage::system("sys"),
                ChatMessage::user("hi").with_name("ann"),
                ChatMessage::assistant_tool_calls("", vec![ToolCall::new("c1", "search", "{\"q\":\"x\"}")])
                    .with_thinking(vec![
                        SignedThinking::new(reasoning_item()),
                        SignedThinking::new(json!({"type": "thinking", "thinking": "t", "signature": "s"})),
                    ])
                    .with_reasoning_tokens(Some(12)),
                ChatMessage::tool_result("c1", "found"),
                ChatMessage::assistant("done"),
            ],
            64,
        )
        .tools(vec![ToolSchema::new("search", "Searches.", json!({"type": "object", "properties": {}}))])
        .params(ModelParams::default().temperature(Some(0.0)).response_format(Some(ResponseFormat::JsonObject)));
        let options = ResponsesOptions::default().reasoning_effort(Some(ReasoningEffort::Low));
        let body = serde_json::to_value(WireRequest::new("m", &request, &options, true).expect("expressible"))
            .expect("serializable");
        assert_eq!(
            body,
            json!({
                "model": "m",
                "input": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "hi"},
                    reasoning_item(),
                    {"type": "function_call", "call_id": "c1", "name": "search", "arguments": "{\"q\":\"x\"}"},
                    {"type": "function_call_output", "call_id": "c1", "output": "found"},
                    {"role": "assistant", "content": "done"}
                ],
                "tools": [{"type": "function", "name": "search", "description": "Searches.",
                           "parameters": {"type": "object", "properties": {}}, "strict": false}],
                "max_output_tokens": 64,
                "temperature": 0.0,
                "text": {"format": {"type": "json_object"}},
                "reasoning": {"effort": "low"},
                "store": false,
                "include": ["reasoning.encrypted_content"],
                "stream": true
            })
        );
        let plain = ResponsesOptions::default().carry_reasoning(false);
        let body = serde_json::to_value(WireRequest::new("m", &request, &plain, false).expect("expressible"))
            .expect("serializable");
        assert!(body.get("store").is_none() && body.get("include").is_none() && body.get("stream").is_none());
    }

    #[test]
    fn parameters_the_api_lacks_are_refused_before_sending() {
        let request =
            ChatRequest::new(vec![ChatMessage::user("q")], 8).params(ModelParams::default().stop(vec!["###".into()]));
        match WireRequest::new("m", &request, &ResponsesOptions::default(), false) {
            Err(ModelError::UnsupportedRequest { message, .. }) => assert!(message.contains("`stop`"), "{message}"),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_response_object_becomes_the_reply() {
        let value = json!({
            "object": "response", "status": "completed", "error": null,
            "output": [
                reasoning_item(),
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hel"},
                                                                      {"type": "output_text", "text": "lo"}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "search", "arguments": "{}"}
            ],
            "usage": {"input_tokens": 30, "input_tokens_details": {"cached_tokens": 16},
                      "output_tokens": 90, "output_tokens_details": {"reasoning_tokens": 64}}
        });
        let reply = read_response(&value, true).expect("a response");
        assert_eq!(reply.content, "Hello");
        assert_eq!(reply.tool_calls, [ToolCall::new("call_1", "search", "{}")]);
        assert_eq!(reply.thinking, [SignedThinking::new(reasoning_item())]);
        assert_eq!(reply.usage, Some(Usage::new(30, 90).with_cache(Some(16), None).with_reasoning(Some(64))));
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert!(read_response(&value, false).expect("a response").thinking.is_empty());

        let cut = json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
                         "output": [reasoning_item()], "usage": {"input_tokens": 5, "output_tokens": 8}});
        let reply = read_response(&cut, true).expect("a response");
        assert_eq!((reply.content.as_str(), reply.finish_reason.as_deref()), ("", Some("length")));
        let refused = json!({"status": "completed", "output": [{"type": "message", "content": [
            {"type": "refusal", "refusal": "I can't help with that."}]}]});
        let reply = read_response(&refused, true).expect("a response");
        assert_eq!(
            (reply.content.as_str(), reply.finish_reason.as_deref()),
            ("I can't help with that.", Some("refusal"))
        );
        assert!(read_response(&json!({"status": "completed"}), true).is_err());
    }
}
