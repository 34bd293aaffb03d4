//! The agent scenario of the progressive-budgeting spec, shared by the agent tests: a pipeline
//! with one `agent` step, a retrieval tool that returns scripted articles per call, and a reader
//! of the request bodies a server received.

#![allow(dead_code)] // each test file uses a different part

use std::sync::Mutex;

use ctx_runtime::pipeline::BoxError;
use ctx_runtime::pipeline::{
    AgentSpec, CallModelSpec, LoadOptions, LoadedPipeline, ModelSource, ModelSpec, PipelineDef, PromptSpec,
    SettingsSpec, StepDef, StepKind, ToolHandlers, ToolOutput, ToolRequest, ToolSpec, UserPartSpec,
};
use ctx_runtime::turn::RankedDocument;
use ctx_runtime::{ChatMessage, ToolCall, ToolSchema};
use serde_json::Value;

/// The retrieval tool's parameters.
pub const SEARCH_PARAMETERS: &str = r#"{"type":"object","properties":{"query":{"type":"string","description":"What to look for"}},"required":["query"]}"#;

/// A pipeline named `Agent` with one agent step `answer` (tool `search_docs`).
pub fn definition(window: i64, output: i64, max_tool_calls: i64, tools: Vec<ToolSpec>) -> PipelineDef {
    PipelineDef::new("Agent")
        .model(ModelSource::Inline(
            ModelSpec::default()
                .context_window(Some(window))
                .max_tokens(Some(output))
                .encoding(Some("cl100k_base".into())),
        ))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(Some(1))
                .max_history_tokens(Some(window / 8))
                .budget_safety_margin_tokens(Some(128)),
        )
        .prompts(vec![PromptSpec::new(
            "answer",
            Some("Answer from the documents the search returns; cite their ids.".into()),
        )])
        .steps(vec![StepDef::new(
            "answer",
            StepKind::Agent(AgentSpec::new(
                CallModelSpec::new("answer", "end")
                    .max_output_tokens(Some(output))
                    .user_parts(vec![UserPartSpec::new("user_question", "{}")])
                    .use_history(true),
                tools,
                max_tool_calls,
            )),
        )])
}

/// The `search_docs` tool.
pub fn search_tool() -> ToolSpec {
    ToolSpec::new("search_docs", "Search the knowledge base", SEARCH_PARAMETERS)
}

/// Loads `def` (panics with every issue when it does not load).
pub fn load(def: PipelineDef) -> LoadedPipeline {
    match LoadedPipeline::load(def, LoadOptions::new()) {
        Ok(p) => p,
        Err(e) => panic!("the agent pipeline does not load: {e}"),
    }
}

/// An article of about `tokens` tokens whose lines mention the platform's features.
pub fn article(id: &str, tokens: usize) -> RankedDocument {
    let line = format!("Comindware platform feature notes, article {id}: workflow automation and integrations.\n");
    RankedDocument::new(id, line.repeat(tokens / 16 + 1))
}

/// What the retriever saw for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub call_id: String,
    pub query: String,
    /// Tokens the result may hold.
    pub content_tokens: usize,
    /// The ledger's reserved tokens and unique documents when the call was budgeted.
    pub reserved: usize,
    pub unique_documents: usize,
}

/// Returns the i-th scripted result for the i-th call (the last one again after that).
pub struct Retriever {
    pub results: Vec<Vec<RankedDocument>>,
    pub seen: Mutex<Vec<Seen>>,
}

impl Retriever {
    pub fn new(results: Vec<Vec<RankedDocument>>) -> Self {
        Retriever { results, seen: Mutex::new(Vec::new()) }
    }

    /// The spec's three calls: A B C, then A (again) D E, then F G.
    pub fn spec_scenario() -> Self {
        Self::new(vec![
            vec![article("A", 3_600), article("B", 2_000), article("C", 1_500)],
            vec![article("A", 3_600), article("D", 2_500), article("E", 2_000)],
            vec![article("F", 2_200), article("G", 1_800)],
        ])
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

#[derive(serde::Deserialize)]
struct Search {
    query: String,
}

impl ToolHandlers for Retriever {
    async fn call(&self, _step_id: &str, request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        let args: Search = request.args()?;
        let mut seen = self.seen.lock().map_err(|_| std::io::Error::other("poisoned")).expect("lock");
        seen.push(Seen {
            call_id: request.call_id.to_owned(),
            query: args.query,
            content_tokens: request.budget.content_tokens,
            reserved: request.budget.breakdown.reserved,
            unique_documents: request.budget.breakdown.unique_documents,
        });
        let i = (seen.len() - 1).min(self.results.len().saturating_sub(1));
        Ok(ToolOutput::Documents(self.results.get(i).cloned().unwrap_or_default()))
    }
}

/// The messages, tools and output limit of an OpenAI chat-completions request body.
pub fn read_body(body: &Value) -> (Vec<ChatMessage>, Vec<ToolSchema>, usize) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let messages = body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            let content = text(&m["content"]);
            let calls: Vec<ToolCall> = m["tool_calls"]
                .as_array()
                .map(|calls| {
                    calls
                        .iter()
                        .map(|c| {
                            ToolCall::new(
                                text(&c["id"]),
                                text(&c["function"]["name"]),
                                text(&c["function"]["arguments"]),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            match m["role"].as_str() {
                Some("system") => ChatMessage::system(content),
                Some("user") => ChatMessage::user(content),
                Some("assistant") if !calls.is_empty() => ChatMessage::assistant_tool_calls(content, calls),
                Some("assistant") => ChatMessage::assistant(content),
                Some("tool") => ChatMessage::tool_result(text(&m["tool_call_id"]), content),
                other => panic!("unexpected role {other:?}"),
            }
        })
        .collect();
    let tools = body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| {
                    ToolSchema::new(
                        text(&t["function"]["name"]),
                        text(&t["function"]["description"]),
                        t["function"]["parameters"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let max_tokens = body["max_tokens"].as_u64().or_else(|| body["max_completion_tokens"].as_u64()).expect("limit");
    (messages, tools, usize::try_from(max_tokens).expect("fits"))
}

/// How many times document `id` appears in `messages`' tool results.
pub fn occurrences(messages: &[ChatMessage], id: &str) -> usize {
    let tag = format!("<document id=\"{id}\">");
    messages.iter().map(|m| m.content.matches(&tag).count()).sum()
}
