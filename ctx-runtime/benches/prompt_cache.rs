//! What history trimming does to the prompt cache: a 40-turn agent conversation, run once with
//! `history_trim: oldest_first` and once per low-water mark with `history_trim: fold`, against
//! two scripted servers: one that applies OpenAI's prefix-cache rule, priced at gpt-4.1's and
//! gpt-5's list prices from ctx's table, and one that applies Anthropic's prompt-caching
//! breakpoints to what ctx's real `AnthropicClient` sends, priced at Claude Sonnet 4.5's list
//! price declared in the pipeline. The conversation is the same for every row
//! (`tests/prompt_cache_support`).
//!
//! A measurement of tokens and dollars, not of time, so it prints tables instead of timing
//! anything (`cargo bench -p ctx-runtime --bench prompt_cache --features anthropic`). Every
//! figure comes from counts; every request is checked against the window.
//!
//! OpenAI's rule (its published one): a request reuses the longest prefix it shares with an
//! earlier request of the conversation, counted in whole 128-token steps, once that prefix is at
//! least 1,024 tokens; the tool schemas come first in the prefix, then the messages. The shared
//! prefix is measured in whole messages (a message that differs anywhere counts as not shared),
//! which slightly understates the hits of both policies alike. Cache writes cost the input price.
//!
//! Anthropic's rules (`prompt_cache_support::anthropic_server`, with the page they follow):
//! prefixes in the order tools → system → messages, cached only at the `cache_control`
//! breakpoints ctx places (after the tools, the system prompt, the history and the whole prompt),
//! each looked up back to 20 blocks before it; a miss writes the prefix at 1.25× input, a hit
//! reads it at 0.1×; nothing under 1,024 tokens is cached. Token counts there are ctx's
//! `o200k_base` (Anthropic's tokenizer is not public), for both policies alike; the pipeline
//! itself counts the Claude model as ctx does without a key (`o200k_base` + 30%).
//!
//! Once the history is full, oldest-first drops a turn from the front on every turn, so each
//! turn's first request shares only the system prompt and the tools with anything the server has
//! seen, while a fold cuts the history to its low-water mark once and then only appends to it.

#[path = "../tests/prompt_cache_support/mod.rs"]
mod prompt_cache_support;

use std::sync::Mutex;

use ctx_runtime::config::{BilledTokens, Price};
use ctx_runtime::llm::{ChatModel, ChatRequest, ChatResponse, ModelError, Usage};
use ctx_runtime::pipeline::{LoadOptions, LoadedPipeline, ModelSpec, StepDetail, StepEnv};
use ctx_runtime::{ChatMessage, PipelineState, TokenCounter, ToolCall};
use prompt_cache_support::{Docs, HISTORY, SONNET, WINDOW, answer, definition, question, search_arguments};

const TURNS: usize = 40;
/// OpenAI's rule: no cache below this prefix length, and hits in steps of `CACHE_STEP`.
const CACHE_MIN: usize = 1_024;
const CACHE_STEP: usize = 128;
/// The OpenAI models priced, both from ctx's table: their cache discounts differ (25% and 10%
/// of the input price).
const OPENAI_MODELS: [&str; 2] = ["gpt-4.1", "gpt-5"];
const POLICIES: [(&str, Option<i64>); 4] =
    [("oldest_first", None), ("fold", Some(30)), ("fold", Some(50)), ("fold", Some(70))];

/// A server with OpenAI's prefix cache: remembers every prompt of the conversation (as the tool
/// schemas and the messages), reports the cached part of each new one in its usage, calls the
/// search tool once per question and then answers.
struct CachingServer {
    model: &'static str,
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
        self.model
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let prompt_tokens = self
            .counter
            .count_request(&request.messages, &request.tools)
            .map_err(|source| ModelError::Tokenizer { model: self.model.into(), source })?;
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
            (answer(&turn, seen.len()), Vec::new())
        } else {
            (String::new(), vec![ToolCall::new(format!("call_{}", seen.len()), "search_docs", search_arguments(&turn))])
        };
        let completion_tokens = self.counter.count(&content).unwrap_or(0)
            + tool_calls.iter().map(|c: &ToolCall| self.counter.count(&c.arguments).unwrap_or(0)).sum::<usize>();
        Ok(ChatResponse::new(content)
            .tool_calls(tool_calls)
            .usage(Some(Usage::new(prompt_tokens, completion_tokens).with_cache(Some(cached), None)))
            .finish_reason(Some("stop".into())))
    }
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Totals {
    requests: usize,
    input: usize,
    cached: usize,
    spend_nano_usd: u64,
    within: bool,
}

fn run_openai(model: &'static str, policy: &str, low_water: Option<i64>, price: &Price) -> Totals {
    let def = definition(ModelSpec::default().model(Some(model.into())), policy, low_water);
    let p = LoadedPipeline::load(def, LoadOptions::new()).expect("the pipeline loads");
    assert_eq!(p.price(), Some(*price), "the ledger prices at the table's price");
    let server = CachingServer {
        model,
        counter: p.counter().clone(),
        seen: Mutex::new(Vec::new()),
        log: Mutex::new(Vec::new()),
    };
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let env = StepEnv::builder().model(&server).tools(&Docs);
    let mut history: Vec<ChatMessage> = Vec::new();
    let mut totals = Totals { within: true, ..Totals::default() };
    for turn in 0..TURNS {
        let mut state = PipelineState::new(question(turn));
        state.history_dialog = history;
        let (state, reports) = runtime.block_on(p.run(state, &env)).expect("the turn runs");
        history = state.history_dialog;
        for report in &reports {
            if let StepDetail::Agent(agent) = &report.detail {
                for r in &agent.requests {
                    let spend = r.request.spend.expect("a priced model: every request has its spend");
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

fn label(policy: &str, low_water: Option<i64>) -> String {
    match low_water {
        Some(p) => format!("{policy} {p}%"),
        None => policy.to_owned(),
    }
}

fn openai_table() {
    println!(
        "\nOpenAI's prefix-cache rule (>= {CACHE_MIN} tokens, {CACHE_STEP}-token steps), ctx's price table of {}",
        ctx_runtime::config::PRICE_TABLE_DATE
    );
    println!(
        "{:<8} {:<14} {:>8} {:>10} {:>10} {:>7} {:>9} {:>9} {:>9} {:>6}",
        "model", "policy", "requests", "input tok", "cached tok", "cached", "input $", "total $", "vs oldest", "window"
    );
    let mut tokens_of_policy: Vec<(usize, usize)> = Vec::new();
    for (m, model) in OPENAI_MODELS.into_iter().enumerate() {
        let price = Price::for_model(model).expect("the model is in the price table");
        let mut oldest = None;
        for (i, (policy, low_water)) in POLICIES.into_iter().enumerate() {
            let t = run_openai(model, policy, low_water, &price);
            assert!(t.within, "{model} {policy}: a request exceeded the window");
            // The same conversation for every model: the tokens do not depend on the price.
            if m == 0 {
                tokens_of_policy.push((t.input, t.cached));
            } else {
                assert_eq!(tokens_of_policy[i], (t.input, t.cached), "{model} {policy}: another conversation");
            }
            let input_cost = price.cost(BilledTokens::new(t.input - t.cached, t.cached, 0, 0));
            let base = *oldest.get_or_insert(input_cost);
            println!(
                "{:<8} {:<14} {:>8} {:>10} {:>10} {:>6.1}% {:>9.4} {:>9.4} {:>9.2} {:>6}",
                model,
                label(policy, low_water),
                t.requests,
                t.input,
                t.cached,
                100.0 * t.cached as f64 / t.input.max(1) as f64,
                input_cost,
                t.spend_nano_usd as f64 / 1e9,
                input_cost / base,
                "ok"
            );
        }
        println!(
            "({model}: ${}/M input, ${}/M cached input, ${}/M output)",
            price.input, price.cached_input, price.output
        );
    }
}

fn anthropic_table() {
    let price = Price::from_spec(&prompt_cache_support::sonnet_price(), &ctx_runtime::FieldPath::root())
        .expect("a valid price");
    println!(
        "\nAnthropic's breakpoints (ctx's AnthropicClient, >= 1,024-token prefixes, 20-block lookback), {SONNET} at \
         ${}/M input, ${}/M cache read, ${}/M cache write (5 min), ${}/M output",
        price.input, price.cached_input, price.cache_write, price.output
    );
    println!(
        "{:<14} {:>8} {:>10} {:>10} {:>10} {:>7} {:>9} {:>9} {:>9} {:>6}",
        "policy",
        "requests",
        "input tok",
        "read tok",
        "write tok",
        "cached",
        "input $",
        "total $",
        "vs oldest",
        "window"
    );
    let mut oldest = None;
    for (policy, low_water) in POLICIES {
        let run = prompt_cache_support::run_anthropic(TURNS, policy, low_water);
        assert_eq!(run.served.len(), run.reported.len(), "every request reached the server once");
        let (mut input, mut read, mut write, mut uncached, mut ledger) = (0, 0, 0, 0, 0u64);
        for (served, reported) in run.served.iter().zip(&run.reported) {
            let a = served.accounting;
            assert!(a.prompt_tokens + served.max_tokens <= WINDOW as usize, "{policy}: over the window");
            assert!(reported.prompt_tokens + reported.max_output_tokens <= WINDOW as usize, "{policy}: over");
            assert!(a.breakpoints <= 4, "{policy}: {} breakpoints", a.breakpoints);
            let spend = reported.spend.expect("a priced model: every request has its spend");
            // The ledger bills what the server reported: cache reads and writes apart.
            assert_eq!(
                spend.billed,
                BilledTokens::new(a.input_tokens, a.cache_read, a.cache_write, served.output_tokens)
            );
            input += a.prompt_tokens;
            read += a.cache_read;
            write += a.cache_write;
            uncached += a.input_tokens;
            ledger += spend.nano_usd;
        }
        let input_cost = price.cost(BilledTokens::new(uncached, read, write, 0));
        let base = *oldest.get_or_insert(input_cost);
        println!(
            "{:<14} {:>8} {:>10} {:>10} {:>10} {:>6.1}% {:>9.4} {:>9.4} {:>9.2} {:>6}",
            label(policy, low_water),
            run.served.len(),
            input,
            read,
            write,
            100.0 * read as f64 / input.max(1) as f64,
            input_cost,
            ledger as f64 / 1e9,
            input_cost / base,
            "ok"
        );
    }
}

fn main() {
    // `cargo test --benches` runs benches with `--bench` absent; the simulation is cheap either way.
    let counter = TokenCounter::for_model("gpt-4.1").expect("a known model");
    println!(
        "prompt cache, {TURNS}-turn agent conversation, window {WINDOW}, max_history_tokens {HISTORY}; system \
         prompt {} tokens (o200k_base)",
        counter.count(&prompt_cache_support::system_prompt()).expect("counted")
    );
    openai_table();
    anthropic_table();
}
