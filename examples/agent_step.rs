//! An `agent` step running the progressive_budgeting spec's turn: the model calls a retrieval
//! tool three times ("features" → A B C, "integrations" → A D E, "architecture" → F G), each call
//! is budgeted with what the conversation and the earlier results left, article A is sent once,
//! and the turn ends with an answer. The pipeline is declared with `pipeline!` (its tool becomes a
//! method of the generated `SupportAgentTools` trait) and run twice: with the offline model, which
//! calls the tool once and answers extractively, and with a scripted model that asks for the
//! spec's three calls and keeps every request it receives, each checked against the window with
//! the pipeline's own count. `ctx-tests/tests/agent_step.rs` runs the same turn through the
//! OpenAI client against a scripted server on 127.0.0.1 and counts the request bodies it receives.
//!
//! Run with `cargo run --example agent_step`; `cargo test` runs it too and checks it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use ctx::llm::offline::OfflineModel;
use ctx::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use ctx::pipeline::{AgentReport, BoxError, StepDetail, ToolOutput, ToolRequest};
use ctx::turn::RankedDocument;
use ctx::{ChatMessage, CtxError, PipelineState, ToolCall};
use serde_json::json;

/// The window the pipeline declares.
pub const WINDOW: usize = 16_384;

/// The spec's three searches, in the order the scripted model asks for them.
pub const QUERIES: [&str; 3] = ["Comindware features", "Comindware integrations", "Comindware architecture"];

/// The scripted model's answer once the three searches are done.
pub const ANSWER: &str = "Articles A to G describe the features.";

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
#[derive(Debug, Default)]
pub struct Articles {
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

/// The `search_docs` call the scripted model makes as its `n`th request (from 1), or `None` for
/// the answer.
pub fn scripted_call(n: usize) -> Option<ToolCall> {
    let query = QUERIES.get(n.checked_sub(1)?)?;
    Some(ToolCall::new(format!("call_{query:.13}"), "search_docs", json!({ "query": query }).to_string()))
}

/// The scripted model: the spec's three calls, then the answer; it keeps every request.
#[derive(Default)]
struct Scripted {
    requests: Mutex<Vec<ChatRequest>>,
}

impl ChatModel for Scripted {
    fn model_name(&self) -> &str {
        "scripted"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let n = self.requests.lock().map_or(0, |mut requests| {
            requests.push(request.clone());
            requests.len()
        });
        Ok(match scripted_call(n) {
            Some(call) => ChatResponse::default().tool_calls(vec![call]),
            None => ChatResponse::new(ANSWER),
        })
    }
}

/// The agent report of a run's only step.
pub fn report(reports: &[ctx::pipeline::StepReport]) -> &AgentReport {
    match reports.first().map(|r| &r.detail) {
        Some(StepDetail::Agent(report)) => report,
        other => panic!("not an agent report: {other:?}"),
    }
}

#[tokio::main]
async fn main() -> Result<(), CtxError> {
    run().await
}

/// The whole example; its assertions are what `cargo test` checks.
pub async fn run() -> Result<(), CtxError> {
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
    let tools = Articles::default();
    let (state, reports) = agent.run(question.clone(), &SupportAgentEnv { model: &offline, tools: &tools }).await?;
    let r = report(&reports);
    println!(
        "  {} requests, ended {:?}; answer:\n{}",
        r.requests.len(),
        r.end,
        state.last_model_response.unwrap_or_default()
    );
    assert!(r.requests.iter().all(|q| q.request.prompt_tokens + q.request.max_output_tokens <= WINDOW));

    println!("scripted model:");
    let scripted = Scripted::default();
    let tools = Articles::default();
    let (state, reports) = agent.run(question, &SupportAgentEnv { model: &scripted, tools: &tools }).await?;
    let r = report(&reports);
    let requests = scripted.requests.lock().map(|r| r.clone()).unwrap_or_default();
    for (i, request) in requests.iter().enumerate() {
        // What ctx predicted for the request is the pipeline's count of what the model received.
        let counted = p.counter().count_request(&request.messages, &request.tools)?;
        assert_eq!(request.predicted_prompt_tokens, Some(counted), "request {i}");
        let total = counted + request.max_tokens;
        println!("  request {i}: {total} of {WINDOW} tokens with the output limit, counted as the model received it");
        assert!(total <= WINDOW, "no request over the window");
    }
    let last: String = requests.last().into_iter().flat_map(|r| &r.messages).map(|m| m.content.as_str()).collect();
    for id in ["A", "B", "C", "D", "E", "F", "G"] {
        assert_eq!(last.matches(&format!("<document id=\"{id}\">")).count(), 1, "article {id} is sent once");
    }
    println!(
        "  {} requests, {} tool calls, ended {:?}, {} unique articles; answer: {}",
        requests.len(),
        r.tool_calls.len(),
        r.end,
        r.ledger.unique_documents,
        state.last_model_response.unwrap_or_default()
    );
    assert_eq!((requests.len(), r.ledger.unique_documents), (4, 7), "three calls and the answer; A counted once");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn the_specs_turn_runs_within_the_window_with_each_article_once() {
        super::run().await.unwrap_or_else(|e| panic!("{e}"));
    }
}
