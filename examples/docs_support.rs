//! A docs-support agent over the Ledgerly documentation shipped in `examples/docs_support/docs/`
//! (markdown written for this example): chunked retrieval, markdown compaction, an `agent` step
//! with two typed tools, streaming, and a conversation that carries its history.
//!
//! - The index cuts every page into sections by headings (at most 350 tokens each), so the
//!   largest page, the configuration reference, is found section by section instead of being
//!   skipped for being larger than the evidence budget.
//! - `fetch_node_texts` reads the best sections within `evidence_tokens`; `manage_context_budget`
//!   folds their blank lines and trailing spaces (`language: markdown`, never inside code fences).
//! - The `agent` step answers from that context and may call `search_docs` (more sections,
//!   packed into what the turn has left, each section once) or `read_page` (a whole page, cut at
//!   a token boundary when it does not fit), at most three times.
//! - The reply streams to stdout as it is generated; the second question is answered with the
//!   first exchange in the history.
//!
//! The guide's chapter *Agents, streaming and conversations* brings this file in as a module
//! (hence the `pub` items), so its examples show the code a reader writes, not this set-up again.
//!
//! Run with `cargo run --example docs_support`; `cargo test` runs it too. Without a server the
//! model is ctx's offline stand-in (it calls the first tool once, then quotes what it found);
//! `scripted_page_reader` shows a model that reads a page larger than the turn has room for.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use ctx::llm::offline::OfflineModel;
use ctx::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use ctx::pipeline::{AgentReport, BoxError, StepDetail, StepReport, Token, ToolOutput, ToolRequest};
use ctx::retrieve::{Bm25Index, ChunkOptions, IndexOptions, RetrieveError};
use ctx::turn::RankedDocument;
use ctx::{CtxError, ToolCall};

/// Where the documentation lives, from the crate root.
pub const DOCS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/docs_support/docs");

ctx::pipeline! {
    /// Answers questions about Ledgerly from its documentation.
    pub pipeline DocsSupport {
        model { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 2_400, max_history_tokens: 1_000, budget_safety_margin_tokens: 128 }
        prompts { support: include_str!("prompts/support.txt") }
        steps {
            search: search_nodes { top_k: 6, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 1_800, next: manage_budget },
            manage_budget: manage_context_budget {
                compact_code: [ { language: markdown, policy: always } ],
                on_ok: answer,
                on_over: answer,
            },
            answer: agent {
                prompt_key: support,
                tools: [
                    search_docs {
                        description: "Search the Ledgerly documentation; returns the best matching sections",
                        parameters: r#"{"type":"object","properties":{"query":{"type":"string","description":"what to look for"}},"required":["query"]}"#,
                    },
                    read_page {
                        description: "Read a whole documentation page, e.g. api-keys.md",
                        parameters: r#"{"type":"object","properties":{"page":{"type":"string","description":"the page's file name"}},"required":["page"]}"#,
                    },
                ],
                max_tool_calls: 3,
                // Input per turn is capped below what the window allows: context, history, tool
                // calls and results together.
                turn_budget_tokens: 3_000,
                max_output_tokens: 600,
                temperature: 0.2,
                use_history: true,
                next: end,
            },
        }
    }
}

/// The tools, over the chunked index.
#[derive(Debug)]
pub struct DocsTools<'a> {
    /// What both tools read.
    pub index: &'a Bm25Index,
}

// A tool's arguments, typed: serde comes with ctx (`ctx::serde`), no dependency of your own.
#[derive(ctx::serde::Deserialize)]
#[serde(crate = "ctx::serde")]
struct Search {
    query: String,
}

#[derive(ctx::serde::Deserialize)]
#[serde(crate = "ctx::serde")]
struct Page {
    page: String,
}

impl DocsSupportTools for DocsTools<'_> {
    async fn search_docs(&self, request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        let args: Search = request.args()?;
        let hits = self.index.search(&args.query, 4);
        let sections = hits
            .iter()
            .filter_map(|hit| self.index.text(&hit.id).map(|text| RankedDocument::new(hit.id.clone(), text)))
            .collect();
        Ok(ToolOutput::Documents(sections))
    }

    async fn read_page(&self, request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        let args: Page = request.args()?;
        // Only the shipped pages: the name is looked up among the index's paths, never joined
        // onto a directory.
        let path = self.index.ids().filter_map(|id| self.index.path_of(id)).find(|path| *path == args.page);
        let text = match path {
            Some(path) => std::fs::read_to_string(std::path::Path::new(DOCS_DIR).join(path))
                .map_err(|e| RetrieveError::Io { path: path.to_owned(), message: e.to_string() })?,
            None => format!("There is no page `{}`; search the documentation instead.", args.page),
        };
        Ok(ToolOutput::Text(text))
    }
}

/// A model that reads three whole pages, then answers with how much of them it saw: together they
/// are larger than what the turn has left, so the step cuts the last one at a token boundary.
#[derive(Default)]
struct ScriptedPageReader {
    requests: AtomicUsize,
    seen: Mutex<Vec<ChatRequest>>,
}

impl ChatModel for ScriptedPageReader {
    fn model_name(&self) -> &str {
        "scripted-page-reader"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(request.clone());
        }
        let n = self.requests.fetch_add(1, Ordering::SeqCst);
        if let Some(page) = PAGES_READ.get(n) {
            let call = ToolCall::new(format!("call_{n}"), "read_page", serde_json::json!({ "page": page }).to_string());
            return Ok(ChatResponse::default().tool_calls(vec![call]));
        }
        let read: usize = request.messages.iter().filter(|m| m.tool_call_id.is_some()).map(|m| m.content.len()).sum();
        Ok(ChatResponse::new(format!("I read {read} bytes of documentation.")))
    }
}

/// The pages the scripted model reads, largest first.
const PAGES_READ: [&str; 3] = ["configuration-reference.md", "troubleshooting.md", "api-keys.md"];

fn agent_report(reports: &[StepReport]) -> Option<&AgentReport> {
    reports.iter().find_map(|r| match &r.detail {
        StepDetail::Agent(report) => Some(report),
        _ => None,
    })
}

#[tokio::main]
async fn main() -> Result<(), CtxError> {
    run().await
}

/// The whole example; its assertions are what `cargo test` checks.
async fn run() -> Result<(), CtxError> {
    let chunking = ChunkOptions::new(350);
    let index = Bm25Index::from_dir(DOCS_DIR, &IndexOptions::default().chunking(Some(chunking)))?;
    let pages = index.ids().filter(|id| id.starts_with("configuration-reference.md#")).count();
    println!("indexed {} sections; the configuration reference is {pages} of them", index.len());
    assert!(pages > 3, "the largest page is indexed in sections");

    let support = DocsSupport::new()?;
    let window = support.pipeline().context_window();
    let budget = support.pipeline().contract_report().step("answer").cloned();
    if let Some(b) = &budget {
        println!(
            "contract of `answer`: fixed prompt {} + tool schemas {} + output {} + margin {} within {window}; \
             turn budget {}, at most {} model requests",
            b.fixed_prompt_tokens,
            b.tool_schema_tokens,
            b.output_tokens,
            b.safety_margin_tokens,
            b.turn_budget_tokens.unwrap_or(0),
            b.max_model_requests
        );
    }

    // A conversation with the offline model, streamed.
    let model = OfflineModel::new(support.pipeline().counter().clone());
    let tools = DocsTools { index: &index };
    let env = DocsSupportEnv { search: &index, store: &index, model: &model, tools: &tools };
    let mut chat = support.clone().conversation();
    for question in ["How do I rotate an API key without downtime?", "How long can the old key keep working?"] {
        println!("\n> {question}");
        let streamed = Mutex::new(String::new());
        // Each piece comes with its step as `DocsSupportStep`: a service shows the answer's.
        let sink = |t: Token<'_, DocsSupportStep>| {
            if t.step != DocsSupportStep::Answer {
                return;
            }
            print!("{}", t.text);
            if let Ok(mut s) = streamed.lock() {
                s.push_str(t.text);
            }
        };
        let answer = chat.ask_streaming(question, &env, sink).await?;
        println!();
        assert_eq!(streamed.into_inner().unwrap_or_default(), answer.text, "the stream is the answer");
        let Some(report) = agent_report(&answer.reports) else { unreachable!("the pipeline ends with its agent") };
        for request in &report.requests {
            assert!(
                request.request.prompt_tokens + request.request.max_output_tokens <= window,
                "no request over the window"
            );
        }
        let fetch = answer.reports.iter().find_map(|r| match &r.detail {
            StepDetail::FetchNodeTexts(f) => Some(f),
            _ => None,
        });
        if let Some(f) = fetch {
            println!(
                "[fetched {} sections, {} of {} evidence tokens; {} truncated, {} skipped]",
                f.fetched.len(),
                f.tokens,
                f.budget,
                f.truncated.len(),
                f.skipped.len()
            );
        }
        println!(
            "[{} model requests, {} tool calls ({}), {}]",
            report.requests.len(),
            report.tool_calls.len(),
            report.tool_calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
            report.end.describe()
        );
        assert!(answer.text.contains("Roll key") || answer.text.contains("overlap"), "{}", answer.text);
    }
    assert_eq!(chat.history().len(), 4, "two questions and two answers");

    // A model that asks for the largest page whole: the page is cut to what the turn has left.
    let reader = ScriptedPageReader::default();
    let env = DocsSupportEnv { search: &index, store: &index, model: &reader, tools: &tools };
    let (_, reports) =
        support.run(ctx::PipelineState::new("Which settings and errors concern API keys?"), &env).await?;
    let Some(report) = agent_report(&reports) else { unreachable!("the pipeline ends with its agent") };
    println!();
    for call in &report.tool_calls {
        println!(
            "read_page: a result message of {} tokens; its text had room for {}{}",
            call.tokens,
            call.content_budget,
            if call.truncated { " (cut at a token boundary)" } else { "" }
        );
    }
    assert!(report.tool_calls.iter().any(|c| c.truncated), "the pages are larger than the turn's room, so one is cut");
    for request in reader.seen.lock().map(|s| s.clone()).unwrap_or_default() {
        let prompt = support.pipeline().counter().count_request(&request.messages, &request.tools)?;
        assert!(prompt + request.max_tokens <= window, "recounted: no request over the window");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn the_docs_agent_answers_within_its_budgets() {
        super::run().await.unwrap_or_else(|e| panic!("{e}"));
    }
}
