//! The `agent_step` example's turn (`examples/agent_step.rs`, its own code) through the OpenAI
//! client, against a scripted OpenAI-compatible server on 127.0.0.1 that plays the example's
//! scripted model: the spec's three `search_docs` calls, then the answer. The server keeps every
//! request body it receives; each is turned back into ctx's messages and tools and counted, and
//! must fit the window with its output limit, and the last one carries each article once. (The
//! example checks the same turn in process; this is the same turn as a server sees it.)

// The example's `main` is not called here; its test (`tests` in the file) runs here too.
#[allow(dead_code, reason = "the example's `main` is its binary's entry point, not this test's")]
#[path = "../../examples/agent_step.rs"]
mod example;

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use ctx::llm::openai::{OpenAiClient, OpenAiConfig};
use ctx::pipeline::LoadedPipeline;
use ctx::{ChatMessage, PipelineState, ToolCall, ToolSchema};
use serde_json::{Value, json};

use example::{ANSWER, Articles, SupportAgent, SupportAgentEnv, WINDOW, report, scripted_call};

/// The bodies the server received, in order.
type Bodies = Arc<Mutex<Vec<Value>>>;

/// The example's script as a chat-completions endpoint: the `n`th body gets the example's `n`th
/// call, then the answer.
async fn complete(State(bodies): State<Bodies>, Json(body): Json<Value>) -> Json<Value> {
    let n = {
        let mut bodies = bodies.lock().expect("not poisoned");
        bodies.push(body);
        bodies.len()
    };
    let message = match scripted_call(n) {
        Some(call) => json!({"role": "assistant", "content": null, "tool_calls": [{"id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": call.arguments}}]}),
        None => json!({"role": "assistant", "content": ANSWER}),
    };
    Json(json!({"id": "x", "object": "chat.completion", "created": 0, "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}))
}

/// A request body as the server received it, turned back into ctx's values and counted, with its
/// output limit.
fn counted(p: &LoadedPipeline, body: &Value) -> usize {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut messages = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        let calls: Vec<ToolCall> = m["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| ToolCall::new(s(&c["id"]), s(&c["function"]["name"]), s(&c["function"]["arguments"])))
            .collect();
        messages.push(match s(&m["role"]).as_str() {
            "system" => ChatMessage::system(s(&m["content"])),
            "user" => ChatMessage::user(s(&m["content"])),
            "tool" => ChatMessage::tool_result(s(&m["tool_call_id"]), s(&m["content"])),
            _ => ChatMessage::assistant_tool_calls(s(&m["content"]), calls),
        });
    }
    let tools: Vec<ToolSchema> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            ToolSchema::new(
                s(&t["function"]["name"]),
                s(&t["function"]["description"]),
                t["function"]["parameters"].clone(),
            )
        })
        .collect();
    let prompt = p.counter().count_request(&messages, &tools).expect("counts");
    prompt + body["max_tokens"].as_u64().map(|n| n as usize).expect("a max_tokens")
}

#[tokio::test]
async fn the_specs_turn_over_http_fits_the_window_with_each_article_once() {
    let bodies: Bodies = Arc::default();
    let app = Router::new().route("/v1/chat/completions", post(complete)).with_state(Arc::clone(&bodies));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let address = listener.local_addr().expect("bound");
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let agent = SupportAgent::new().expect("loads");
    let p = agent.pipeline();
    let client = OpenAiClient::new(OpenAiConfig::new(format!("http://{address}/v1"), "scripted")).expect("a client");
    let mut question = PipelineState::new("What are the Comindware platform features?");
    question.history_dialog = vec![ChatMessage::user("Is there a trial?"), ChatMessage::assistant("Yes, 30 days.")];
    let tools = Articles::default();
    let (state, reports) = agent.run(question, &SupportAgentEnv { model: &client, tools: &tools }).await.expect("runs");
    server.abort();

    let r = report(&reports);
    let bodies = bodies.lock().expect("not poisoned").clone();
    for (i, body) in bodies.iter().enumerate() {
        assert!(counted(p, body) <= WINDOW, "request {i} is over the window: {}", counted(p, body));
    }
    let last = bodies.last().map(|b| b.to_string()).unwrap_or_default();
    for id in ["A", "B", "C", "D", "E", "F", "G"] {
        assert_eq!(last.matches(&format!("<document id=\\\"{id}\\\">")).count(), 1, "article {id} is sent once");
    }
    assert_eq!((bodies.len(), r.tool_calls.len(), r.ledger.unique_documents), (4, 3, 7));
    assert_eq!(state.last_model_response.as_deref(), Some(ANSWER));
}
