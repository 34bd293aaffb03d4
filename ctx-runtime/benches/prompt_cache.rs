//! What history trimming does to the prompt cache: a 40-turn agent conversation, run once with
//! `history_trim: oldest_first` and once with `history_trim: fold`, against a scripted server
//! that applies OpenAI's prefix-cache rule, priced at gpt-4.1's list price from ctx's table.
//!
//! A measurement of tokens and dollars, not of time, so it prints a table instead of timing
//! anything (`cargo bench -p ctx-runtime --bench prompt_cache`). Every figure comes from exact
//! counts; every request is checked against the window.
//!
//! The server's cache rule (OpenAI's published one): a request reuses the longest prefix it
//! shares with an earlier request of the conversation, counted in whole 128-token steps, once
//! that prefix is at least 1,024 tokens; the tool schemas come first in the prefix, then the
//! messages. The shared prefix is measured in whole messages (a message that differs anywhere
//! counts as not shared), which slightly understates the hits of both policies alike.
//!
//! The conversation: a system prompt, one `search_docs` tool, and per turn one question, one tool
//! call with its retrieved result, and an answer. The history keeps the questions and answers
//! (`max_history_tokens` 4,000 in a 16,384-token window); once it is full, oldest-first drops a
//! turn from the front on every turn, so each turn's first request shares only the system prompt
//! and the tools with anything the server has seen, while a fold cuts the history to half its
//! budget once and then only appends to it.

use std::sync::Mutex;

use ctx_runtime::config::{BilledTokens, Price};
use ctx_runtime::llm::{ChatModel, ChatRequest, ChatResponse, ModelError, Usage};
use ctx_runtime::pipeline::{
    AgentSpec, BoxError, CallModelSpec, LoadOptions, LoadedPipeline, ModelSource, ModelSpec, PipelineDef, PromptSpec,
    SettingsSpec, StepDef, StepDetail, StepEnv, StepKind, ToolHandlers, ToolOutput, ToolRequest, ToolSpec,
    UserPartSpec,
};
use ctx_runtime::{ChatMessage, PipelineState, TokenCounter, ToolCall};

const TURNS: usize = 40;
const WINDOW: i64 = 16_384;
const HISTORY: i64 = 4_000;
const OUTPUT: i64 = 600;
/// OpenAI's rule: no cache below this prefix length, and hits in steps of `CACHE_STEP`.
const CACHE_MIN: usize = 1_024;
const CACHE_STEP: usize = 128;
const MODEL: &str = "gpt-4.1";

const SEARCH_PARAMETERS: &str = r#"{"type":"object","properties":{"query":{"type":"string","description":"What to look for in the product documentation"}},"required":["query"]}"#;

fn system_prompt() -> String {
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

fn definition(policy: &str, low_water: Option<i64>) -> PipelineDef {
    PipelineDef::new("Support")
        .model(ModelSource::Inline(
            ModelSpec::default().model(Some(MODEL.into())).context_window(Some(WINDOW)).max_tokens(Some(OUTPUT)),
        ))
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

/// A server with OpenAI's prefix cache: remembers every prompt of the conversation (as the tool
/// schemas and the messages), reports the cached part of each new one in its usage, calls the
/// search tool once per question and then answers.
struct CachingServer {
    counter: TokenCounter,
    seen: Mutex<Vec<ChatRequest>>,
    /// (prompt tokens, cached tokens) of each request, and whether it was within the window.
    log: Mutex<Vec<(usize, usize, bool)>>,
}

impl CachingServer {
    /// Tokens of the longest prefix `request` shares with an earlier request, in whole messages.
    fn shared_prefix(&self, request: &ChatRequest, earlier: &ChatRequest) -> usize {
        if request.tools != earlier.tools {
            return 0;
        }
        let common = request.messages.iter().zip(&earlier.messages).take_while(|(a, b)| a == b).count();
        if common == 0 && request.tools.is_empty() {
            return 0;
        }
        let priming = self.counter.count_messages(&[]).unwrap_or(0);
        let messages = request.messages.get(..common).unwrap_or(&[]);
        self.counter.count_request(messages, &request.tools).unwrap_or(0).saturating_sub(priming)
    }
}

impl ChatModel for CachingServer {
    fn model_name(&self) -> &str {
        MODEL
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let prompt_tokens = self
            .counter
            .count_request(&request.messages, &request.tools)
            .map_err(|source| ModelError::Tokenizer { model: MODEL.into(), source })?;
        let mut seen = self.seen.lock().unwrap();
        let shared = seen.iter().map(|earlier| self.shared_prefix(request, earlier)).max().unwrap_or(0);
        let cached = if shared >= CACHE_MIN { shared / CACHE_STEP * CACHE_STEP } else { 0 };
        seen.push(request.clone());
        let within = prompt_tokens + request.max_tokens <= WINDOW as usize;
        self.log.lock().unwrap().push((prompt_tokens, cached, within));
        let question = request.messages.iter().rev().find(|m| m.role == ctx_runtime::Role::User);
        let turn = question.map(|q| q.content.clone()).unwrap_or_default();
        let searched = request.messages.last().is_some_and(|m| m.role == ctx_runtime::Role::Tool);
        let (content, tool_calls) = if searched || request.tools.is_empty() {
            let answer = format!(
                "{turn} The documentation covers this in the administration area: open the settings, choose the \
                 record template, and configure the workflow step that handles it. Steps: 1. open the template; \
                 2. add the step; 3. publish. Sources: kb-{}.",
                seen.len()
            );
            (answer.repeat(4), Vec::new())
        } else {
            let call = ToolCall::new(
                format!("call_{}", seen.len()),
                "search_docs",
                format!("{{\"query\":\"{}\"}}", turn.replace('"', "")),
            );
            (String::new(), vec![call])
        };
        let completion_tokens = self.counter.count(&content).unwrap_or(0)
            + tool_calls.iter().map(|c: &ToolCall| self.counter.count(&c.arguments).unwrap_or(0)).sum::<usize>();
        Ok(ChatResponse::new(content)
            .tool_calls(tool_calls)
            .usage(Some(Usage::new(prompt_tokens, completion_tokens).with_cache(Some(cached), None)))
            .finish_reason(Some("stop".into())))
    }
}

/// Returns a few hundred tokens of documentation per search.
struct Docs;

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

#[derive(Debug, Default)]
struct Totals {
    requests: usize,
    input: usize,
    cached: usize,
    spend_nano_usd: u64,
    within: bool,
}

fn run(policy: &str, low_water: Option<i64>, price: &Price) -> Totals {
    let p = LoadedPipeline::load(definition(policy, low_water), LoadOptions::new()).expect("the pipeline loads");
    assert_eq!(p.price(), Some(*price), "the ledger prices at the table's price");
    let server =
        CachingServer { counter: p.counter().clone(), seen: Mutex::new(Vec::new()), log: Mutex::new(Vec::new()) };
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let env = StepEnv::builder().model(&server).tools(&Docs);
    let mut history: Vec<ChatMessage> = Vec::new();
    let mut totals = Totals { within: true, ..Totals::default() };
    for turn in 0..TURNS {
        let mut state = PipelineState::new(format!(
            "Question {turn}: how do I configure the approval workflow for record template number {turn}?"
        ));
        state.history_dialog = history;
        let (state, reports) = runtime.block_on(p.run(state, &env)).expect("the turn runs");
        history = state.history_dialog;
        for report in &reports {
            if let StepDetail::Agent(agent) = &report.detail {
                for r in &agent.requests {
                    let spend = r.spend.expect("a priced model: every request has its spend");
                    totals.spend_nano_usd += spend.nano_usd;
                }
            }
        }
    }
    for (prompt, cached, within) in server.log.lock().unwrap().iter() {
        totals.requests += 1;
        totals.input += prompt;
        totals.cached += cached;
        totals.within &= within;
    }
    totals
}

fn main() {
    // `cargo test --benches` runs benches with `--bench` absent; the simulation is cheap either way.
    let price = Price::for_model(MODEL).expect("gpt-4.1 is in the price table");
    println!(
        "prompt cache, {TURNS}-turn agent conversation, window {WINDOW}, max_history_tokens {HISTORY}, \
         {MODEL} at ${}/M input, ${}/M cached input (table of {})",
        price.input,
        price.cached_input,
        ctx_runtime::config::PRICE_TABLE_DATE
    );
    let counter = ctx_runtime::TokenCounter::for_model(MODEL).expect("a known model");
    println!("system prompt: {} tokens", counter.count(&system_prompt()).expect("counted"));
    println!(
        "{:<14} {:>8} {:>12} {:>12} {:>8} {:>12} {:>12} {:>7}",
        "policy", "requests", "input tok", "cached tok", "cached", "input $", "total $", "window"
    );
    let mut input_costs = Vec::new();
    for (policy, low_water) in [("oldest_first", None), ("fold", Some(30)), ("fold", Some(50)), ("fold", Some(70))] {
        let t = run(policy, low_water, &price);
        let label = match low_water {
            Some(p) => format!("{policy} {p}%"),
            None => policy.to_owned(),
        };
        let input_cost = price.cost(BilledTokens::new(t.input - t.cached, t.cached, 0, 0));
        input_costs.push(input_cost);
        println!(
            "{:<14} {:>8} {:>12} {:>12} {:>7.1}% {:>12.4} {:>12.4} {:>7}",
            label,
            t.requests,
            t.input,
            t.cached,
            100.0 * t.cached as f64 / t.input.max(1) as f64,
            input_cost,
            t.spend_nano_usd as f64 / 1e9,
            if t.within { "ok" } else { "OVER" }
        );
        assert!(t.within, "{policy}: a request exceeded the window");
    }
    for (i, p) in [30, 50, 70].iter().enumerate() {
        println!("fold {p}% input cost / oldest-first input cost: {:.2}", input_costs[i + 1] / input_costs[0]);
    }
}
