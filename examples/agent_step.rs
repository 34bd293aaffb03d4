//! An `agent` step running the progressive_budgeting spec's turn: the model calls a retrieval
//! tool three times ("features" → A B C, "integrations" → A D E, "architecture" → F G), each call
//! is budgeted with what the conversation and the earlier results left, article A is sent once,
//! and the turn ends with an answer. The pipeline is declared with `pipeline!` (its tool becomes a
//! method of the generated `SupportAgentTools` trait) and run twice: with the offline model, which calls the
//! tool once and answers extractively, and with a scripted OpenAI-compatible server on
//! 127.0.0.1 that asks for the spec's three calls and counts every request body it receives.
//!
//! Run with `cargo run --example agent_step`; `cargo test` runs it too and checks it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use ctx::llm::offline::OfflineModel;
use ctx::llm::openai::{OpenAiClient, OpenAiConfig};
use ctx::pipeline::{AgentReport, BoxError, LoadedPipeline, StepDetail, ToolOutput, ToolRequest};
use ctx::turn::RankedDocument;
use ctx::{ChatMessage, CtxError, PipelineState, ToolCall, ToolSchema};
use serde_json::{Value, json};

const WINDOW: usize = 16_384;

ctx::pipeline! {
    /// One agent step with a `search_docs` tool and up to four calls.
    pub pipeline SupportAgent {
        model { context_window: 16_384, max_tokens: 1_000, encoding: cl100k_base }
        settings { max_context_tokens: 1, max_history_tokens: 2_000, budget_safety_margin_tokens: 128 }
        prompts { answer: "Answer from the search results." }
        steps {
            answer: agent {
                prompt_key: answer,
                tools: [
                    search_docs {
                        description: "Search the product documentation",
                        parameters: r#"{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}"#,
                    },
                ],
                max_tool_calls: 4,
                max_output_tokens: 1_000,
                user_parts: [ user_question => "{}" ],
                use_history: true,
                next: end,
            },
        }
    }
}

/// The arguments of `search_docs`, as its schema declares them (with ctx's serde: the program
/// needs no dependency of its own).
#[derive(ctx::serde::Deserialize)]
#[serde(crate = "ctx::serde")]
struct Search {
    query: String,
}

/// The spec's retriever: results by call, A returned twice; each call prints its budget.
struct Articles {
    calls: AtomicUsize,
}

fn article(id: &str, lines: usize) -> RankedDocument {
    RankedDocument::new(id, format!("Comindware platform features, article {id}: process automation.\n").repeat(lines))
}

impl SupportAgentTools for Articles {
    async fn search_docs(&self, request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        let args: Search = request.args()?;
        let b = &request.budget.breakdown;
        println!(
            "  search_docs({:?}): reserved {} (conversation {}, tools {}, unique articles {}), result may use {}",
            args.query,
            b.reserved,
            b.conversation,
            b.accumulated_tools,
            b.unique_documents,
            request.budget.content_tokens
        );
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(ToolOutput::Documents(match call {
            1 => vec![article("A", 240), article("B", 130), article("C", 100)],
            2 => vec![article("A", 240), article("D", 160), article("E", 130)],
            _ => vec![article("F", 150), article("G", 120)],
        }))
    }
}

fn report(reports: &[ctx::pipeline::StepReport]) -> &AgentReport {
    match reports.first().map(|r| &r.detail) {
        Some(StepDetail::Agent(report)) => report,
        other => panic!("not an agent report: {other:?}"),
    }
}

/// A request body as the server received it, turned back into ctx's values to count it.
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
    let prompt = p.counter().count_request(&messages, &tools).unwrap_or(usize::MAX);
    prompt.saturating_add(body["max_tokens"].as_u64().map_or(usize::MAX, |n| n as usize))
}

/// The scripted server: the spec's three calls, then an answer; it keeps every body.
async fn serve(bodies: Arc<Mutex<Vec<Value>>>) -> String {
    async fn handle(State(bodies): State<Arc<Mutex<Vec<Value>>>>, Json(body): Json<Value>) -> Json<Value> {
        let n = bodies.lock().map(|mut b| {
            b.push(body);
            b.len()
        });
        let queries = ["Comindware features", "Comindware integrations", "Comindware architecture"];
        let message = match n.ok().and_then(|n| queries.get(n - 1)) {
            Some(q) => json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{q:.13}"),
                "type": "function", "function": {"name": "search_docs", "arguments": json!({"query": q}).to_string()}}]}),
            None => json!({"role": "assistant", "content": "Articles A to G describe the features."}),
        };
        Json(json!({"id": "x", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}))
    }
    let app = Router::new().route("/v1/chat/completions", post(handle)).with_state(bodies);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/v1")
}

#[tokio::main]
async fn main() -> Result<(), CtxError> {
    run().await
}

/// The whole example; its assertions are what `cargo test` checks.
async fn run() -> Result<(), CtxError> {
    let agent = SupportAgent::new()?;
    let p = agent.pipeline();
    let budget = p.contract_report().step("answer").cloned().unwrap_or_else(|| panic!("the step is in the contract"));
    println!(
        "contract: tool schemas {} tokens, turn budget {}, at most {} model requests",
        budget.tool_schema_tokens,
        budget.turn_budget_tokens.unwrap_or(0),
        budget.max_model_requests
    );
    let mut question = PipelineState::new("What are the Comindware platform features?");
    question.history_dialog = vec![ChatMessage::user("Is there a trial?"), ChatMessage::assistant("Yes, 30 days.")];

    println!("offline model:");
    let offline = OfflineModel::new(p.counter().clone());
    let tools = Articles { calls: AtomicUsize::new(0) };
    let (state, reports) = agent.run(question.clone(), &SupportAgentEnv { model: &offline, tools: &tools }).await?;
    let r = report(&reports);
    println!(
        "  {} requests, ended {:?}; answer:\n{}",
        r.requests.len(),
        r.end,
        state.last_model_response.unwrap_or_default()
    );
    assert!(r.requests.iter().all(|q| q.request.prompt_tokens + q.request.max_output_tokens <= WINDOW));

    println!("scripted server:");
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let client = OpenAiClient::new(OpenAiConfig::new(serve(Arc::clone(&bodies)).await, "scripted"))?;
    let tools = Articles { calls: AtomicUsize::new(0) };
    let (_, reports) = agent.run(question, &SupportAgentEnv { model: &client, tools: &tools }).await?;
    let r = report(&reports);
    let bodies = bodies.lock().map(|b| b.clone()).unwrap_or_default();
    for (i, body) in bodies.iter().enumerate() {
        println!("  request {i}: {} of {WINDOW} tokens with the output limit, counted by the server", counted(p, body));
        assert!(counted(p, body) <= WINDOW, "no request over the window");
    }
    let last = bodies.last().map(|b| b.to_string()).unwrap_or_default();
    for id in ["A", "B", "C", "D", "E", "F", "G"] {
        assert_eq!(last.matches(&format!("<document id=\\\"{id}\\\">")).count(), 1, "article {id} is sent once");
    }
    println!(
        "  {} requests, {} tool calls, ended {:?}, {} unique articles",
        bodies.len(),
        r.tool_calls.len(),
        r.end,
        r.ledger.unique_documents
    );
    assert_eq!((bodies.len(), r.ledger.unique_documents), (4, 7), "three calls and the answer; A counted once");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn the_specs_turn_runs_within_the_window_with_each_article_once() {
        super::run().await.unwrap_or_else(|e| panic!("{e}"));
    }
}
