//! The conversation of the prompt-cache measurement (issue 27, "Measure"), shared by
//! `benches/prompt_cache.rs` (both providers' tables) and `tests/anthropic_prompt_cache.rs` (the
//! invariants of the Anthropic variant).
//!
//! A support assistant with one `agent` step: a system prompt of about 1,165 tokens (rules and a
//! glossary), one `search_docs` tool, and per turn one question, one search whose result is a
//! few hundred tokens, and an answer of about 300 tokens. The history keeps the questions and
//! answers (`max_history_tokens` 4,000 in a 16,384-token window) and is trimmed oldest-first or
//! by a fold, as the pipeline declares. The scripted servers (OpenAI's rule in the bench, Anthropic's
//! in [`anthropic_server`]) answer alike: the first request of a turn calls the tool, the second
//! answers with [`answer`].

#![allow(dead_code)]

pub mod anthropic_server;

use ctx_runtime::llm::anthropic::{AnthropicClient, AnthropicConfig, RetryPolicy};
use ctx_runtime::llm::{Spend, Usage};
use ctx_runtime::pipeline::{
    AgentSpec, BoxError, CallModelSpec, LoadOptions, LoadedPipeline, ModelSource, ModelSpec, PipelineDef, PriceSpec,
    PromptSpec, SettingsSpec, StepDef, StepDetail, StepEnv, StepKind, ToolHandlers, ToolOutput, ToolRequest, ToolSpec,
    UserPartSpec,
};
use ctx_runtime::{ChatMessage, Encoding, PipelineState, TokenCounter};

use anthropic_server::{ScriptedAnthropic, Served};

pub const WINDOW: i64 = 16_384;
pub const HISTORY: i64 = 4_000;
pub const OUTPUT: i64 = 600;

/// The Claude model the Anthropic variant names; its price is declared in the pipeline.
pub const SONNET: &str = "claude-sonnet-4-5";

/// Claude Sonnet 4.5's list price in US dollars per million tokens, as the pricing table of
/// Anthropic's prompt-caching page gives it (https://platform.claude.com/docs/en/build-with-claude/prompt-caching,
/// "Pricing"; read 2026-11-26): base input $3, 5-minute cache writes $3.75 (1.25×), cache hits
/// and refreshes $0.30 (0.1×), output $15. ctx's price table holds OpenAI's models only, so the
/// pipeline declares it: `price: { input: 3.00, cached_input: 0.30, cache_write: 3.75, output: 15.00 }`.
pub fn sonnet_price() -> PriceSpec {
    PriceSpec::default().input(Some(3.00)).cached_input(Some(0.30)).cache_write(Some(3.75)).output(Some(15.00))
}

pub const SEARCH_PARAMETERS: &str = r#"{"type":"object","properties":{"query":{"type":"string","description":"What to look for in the product documentation"}},"required":["query"]}"#;

pub fn system_prompt() -> String {
    let rules = [
        "You are the support assistant of a workflow automation platform.",
        "Answer from the documentation the search tool returns, and cite the article ids you used.",
        "When the documentation does not answer the question, say so and suggest what to search next.",
        "Keep answers short: a paragraph, then the steps as a numbered list when there are steps.",
        "Never invent configuration keys, menu names or version numbers.",
    ];
    let mut text = rules.join("\n");
    // A realistic instruction block: the product's glossary, which every answer must respect.
    for (i, term) in ["workflow", "process", "record template", "account", "role", "integration", "connector"]
        .iter()
        .cycle()
        .take(60)
        .enumerate()
    {
        text.push_str(&format!(
            "\nGlossary {i}: a {term} is configured from the administration area; see its article."
        ));
    }
    text
}

/// The question of turn `turn`.
pub fn question(turn: usize) -> String {
    format!("Question {turn}: how do I configure the approval workflow for record template number {turn}?")
}

/// The scripted answer to `question`, given by the `request`-th request of the conversation
/// (1-based), so every answer differs.
pub fn answer(question: &str, request: usize) -> String {
    format!(
        "{question} The documentation covers this in the administration area: open the settings, choose the \
         record template, and configure the workflow step that handles it. Steps: 1. open the template; \
         2. add the step; 3. publish. Sources: kb-{request}."
    )
    .repeat(4)
}

/// The arguments of the search the scripted model asks for `question`.
pub fn search_arguments(question: &str) -> String {
    format!("{{\"query\":\"{}\"}}", question.replace('"', ""))
}

/// The pipeline: `model` for the model block, the history trimmed by `policy` (`oldest_first`
/// or `fold` down to `low_water` percent).
pub fn definition(model: ModelSpec, policy: &str, low_water: Option<i64>) -> PipelineDef {
    PipelineDef::new("Support")
        .model(ModelSource::Inline(model.context_window(Some(WINDOW)).max_tokens(Some(OUTPUT))))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(Some(1))
                .max_history_tokens(Some(HISTORY))
                .budget_safety_margin_tokens(Some(128))
                .history_trim(Some(policy.into()))
                .history_low_water_percent(low_water),
        )
        .prompts(vec![PromptSpec::new("answer", Some(system_prompt()))])
        .steps(vec![StepDef::new(
            "answer",
            StepKind::Agent(AgentSpec::new(
                CallModelSpec::new("answer", "end")
                    .max_output_tokens(Some(OUTPUT))
                    .user_parts(vec![UserPartSpec::new("user_question", "{}")])
                    .use_history(true),
                vec![ToolSpec::new("search_docs", "Search the product documentation", SEARCH_PARAMETERS)],
                3,
            )),
        )])
}

/// The Claude model block: Sonnet 4.5 with its declared price, counted as ctx counts a Claude
/// model without a key (`o200k_base` raised by the default 30% margin: Anthropic publishes no
/// tokenizer).
pub fn claude_model() -> ModelSpec {
    ModelSpec::default().model(Some(SONNET.into())).encoding(Some("o200k_base".into())).price(Some(sonnet_price()))
}

/// Returns a few hundred tokens of documentation per search.
pub struct Docs;

impl ToolHandlers for Docs {
    async fn call(&self, _step: &str, request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        let line = format!(
            "Article for {}: the administration area lists every record template; a workflow step is added \
             from the template's designer and takes effect when the template is published.\n",
            request.arguments
        );
        Ok(ToolOutput::Text(line.repeat(8)))
    }
}

/// What the pipeline's own reports say of one request.
#[derive(Debug, Clone, Copy)]
pub struct Reported {
    /// ctx's count of the request (estimated for a Claude model: o200k + 30%).
    pub prompt_tokens: usize,
    /// The output limit sent.
    pub max_output_tokens: usize,
    /// The usage the client read from the reply.
    pub usage: Option<Usage>,
    /// The ledger's price of the request.
    pub spend: Option<Spend>,
}

/// One conversation against the scripted Anthropic server: what the server served, and what
/// the step reports say, request by request (in the order they were sent).
pub struct AnthropicRun {
    pub served: Vec<Served>,
    pub reported: Vec<Reported>,
}

/// Runs `turns` turns of the conversation through ctx's `AnthropicClient` against a fresh
/// scripted Anthropic server on 127.0.0.1 (a cold cache), with the history trimmed by `policy`.
pub fn run_anthropic(turns: usize, policy: &str, low_water: Option<i64>) -> AnthropicRun {
    let p = LoadedPipeline::load(definition(claude_model(), policy, low_water), LoadOptions::new())
        .expect("the pipeline loads");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        // The server counts with ctx's o200k_base, unraised, for both policies alike.
        let server = ScriptedAnthropic::start(TokenCounter::for_encoding(Encoding::O200kBase)).await;
        let mut config = AnthropicConfig::new(&server.base_url, SONNET).with_retry(RetryPolicy::none());
        config.system_proxy = false;
        let client = AnthropicClient::new(config).expect("a valid client configuration");
        let env = StepEnv::builder().model(&client).tools(&Docs);
        let mut history: Vec<ChatMessage> = Vec::new();
        let mut reported = Vec::new();
        for turn in 0..turns {
            let mut state = PipelineState::new(question(turn));
            state.history_dialog = history;
            let (state, reports) = p.run(state, &env).await.expect("the turn runs");
            history = state.history_dialog;
            for report in &reports {
                if let StepDetail::Agent(agent) = &report.detail {
                    reported.extend(agent.requests.iter().map(|r| Reported {
                        prompt_tokens: r.request.prompt_tokens,
                        max_output_tokens: r.request.max_output_tokens,
                        usage: r.request.usage,
                        spend: r.request.spend,
                    }));
                }
            }
        }
        AnthropicRun { served: server.served(), reported }
    })
}
