//! What the `ResponsesClient` tests share: response objects and event streams as OpenAI's
//! Responses API sends them, a client of the scripted server (`client_support`, which answers
//! `/v1/responses` too), and a reader that turns a request body the server received back into
//! ctx's messages, so that its count can be recomputed from scratch.

#![allow(dead_code)] // each test file uses a different part

use ctx_runtime::chat::SignedThinking;
use ctx_runtime::llm::openai::{ResponsesClient, ResponsesOptions, RetryPolicy};
use ctx_runtime::{ChatMessage, ToolCall, ToolSchema};
use serde_json::{Value, json};

use crate::client_support::MockServer;

/// A reasoning item as a reasoning model returns it with `include: ["reasoning.encrypted_content"]`.
pub fn reasoning_item(id: &str, summary: &str) -> Value {
    let summary: Vec<Value> =
        if summary.is_empty() { Vec::new() } else { vec![json!({"type": "summary_text", "text": summary})] };
    json!({"type": "reasoning", "id": id, "summary": summary,
           "encrypted_content": format!("gAAAAB-{id}-opaque-ciphertext==")})
}

/// A `function_call` output item.
pub fn function_call(call_id: &str, name: &str, arguments: &Value) -> Value {
    json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id, "name": name,
           "arguments": arguments.to_string(), "status": "completed"})
}

/// An assistant `message` output item with one text part.
pub fn message(text: &str) -> Value {
    json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

/// `usage` as the API reports it.
pub fn usage(input: usize, cached: usize, output: usize, reasoning: usize) -> Value {
    json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
           "output_tokens": output, "output_tokens_details": {"reasoning_tokens": reasoning},
           "total_tokens": input + output})
}

/// A completed response object with these output items and usage.
pub fn response(output: Vec<Value>, usage: Value) -> Value {
    json!({"id": "resp_1", "object": "response", "created_at": 1_700_000_000, "status": "completed",
           "error": null, "incomplete_details": null, "model": "test-model", "output": output, "usage": usage})
}

/// The event stream of `response`: created, one delta per text piece, then completed.
pub fn events(pieces: &[&str], response: &Value) -> Vec<String> {
    let event = |value: Value| format!("event: {}\ndata: {value}\n\n", value["type"].as_str().unwrap_or_default());
    let mut out = vec![event(json!({"type": "response.created",
                                    "response": {"status": "in_progress", "output": []}}))];
    for piece in pieces {
        out.push(event(json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                              "delta": piece})));
    }
    out.push(event(json!({"type": "response.completed", "response": response})));
    out
}

/// A Responses client of `server` (the chat client's test configuration) with `options`.
pub fn client(server: &MockServer, retry: RetryPolicy, options: ResponsesOptions) -> ResponsesClient {
    ResponsesClient::with_options(server.config(retry), options).expect("valid config")
}

/// The messages, tools and output limit of a Responses request body, as ctx's messages: each
/// run of reasoning items, assistant text and function calls is one assistant message carrying
/// the reasoning items as received, with `reasoning_tokens` (what the server reported for the
/// reply that produced them) when they are encrypted.
pub fn read_input(body: &Value, reasoning_tokens: Option<usize>) -> (Vec<ChatMessage>, Vec<ToolSchema>, usize) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut messages: Vec<ChatMessage> = Vec::new();
    let mut thinking: Vec<SignedThinking> = Vec::new();
    // Whether the last message is an assistant message that later function calls belong to.
    let mut open = false;
    for item in body["input"].as_array().expect("input") {
        match (item["type"].as_str(), item["role"].as_str()) {
            (Some("reasoning"), _) => {
                thinking.push(SignedThinking::new(item.clone()));
                open = false;
            }
            (Some("function_call"), _) => {
                let call = ToolCall::new(text(&item["call_id"]), text(&item["name"]), text(&item["arguments"]));
                match messages.last_mut() {
                    Some(last) if open => last.tool_calls.push(call),
                    _ => {
                        messages.push(assistant(
                            ChatMessage::assistant_tool_calls("", vec![call]),
                            &mut thinking,
                            reasoning_tokens,
                        ));
                        open = true;
                    }
                }
            }
            (Some("function_call_output"), _) => {
                messages.push(ChatMessage::tool_result(text(&item["call_id"]), text(&item["output"])));
                open = false;
            }
            (_, Some("assistant")) => {
                messages.push(assistant(
                    ChatMessage::assistant(text(&item["content"])),
                    &mut thinking,
                    reasoning_tokens,
                ));
                open = true;
            }
            (_, Some("system")) => {
                messages.push(ChatMessage::system(text(&item["content"])));
                open = false;
            }
            (_, Some("user")) => {
                messages.push(ChatMessage::user(text(&item["content"])));
                open = false;
            }
            other => panic!("unexpected input item {other:?}: {item}"),
        }
    }
    assert!(thinking.is_empty(), "reasoning items with no assistant output after them");
    let tools = body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| {
                    assert_eq!((t["type"].as_str(), t["strict"].as_bool()), (Some("function"), Some(false)));
                    ToolSchema::new(text(&t["name"]), text(&t["description"]), t["parameters"].clone())
                })
                .collect()
        })
        .unwrap_or_default();
    let limit = body["max_output_tokens"].as_u64().expect("max_output_tokens");
    (messages, tools, usize::try_from(limit).expect("fits"))
}

fn assistant(m: ChatMessage, thinking: &mut Vec<SignedThinking>, reasoning_tokens: Option<usize>) -> ChatMessage {
    if thinking.is_empty() {
        return m;
    }
    m.with_thinking(std::mem::take(thinking)).with_reasoning_tokens(reasoning_tokens)
}
