//! Runs the `rag_pipeline` example's own code (`examples/rag_pipeline/`) offline and checks its
//! budget trace against independent counts, then runs it against a scripted OpenAI-compatible
//! server on 127.0.0.1, as `CTX_BASE_URL` would.

#[path = "../../examples/rag_pipeline/mod.rs"]
mod rag;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::post;
use ctx::budget::BudgetDecision;
use ctx::config::{BilledTokens, PRICE_TABLE_DATE, Price};
use ctx::contract::nano_usd;
use ctx::llm::offline::OfflineModel;
use ctx::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use ctx::pipeline::{LoadOptions, StepDetail};
use ctx::state::SearchHit;
use ctx::{PipelineState, Role};
use serde_json::{Value, json};

use rag::pipeline::{CodebaseQa, CodebaseQaCustom, CodebaseQaNextBatchOutcome, NextBatch, node_ids};
use rag::trace::BudgetTrace;
use rag::{Args, Demo, Model, SAMPLE_QUESTION, USAGE, answer_once, choose_model, codebase_dir};

/// A model that records every request before passing it on.
struct Recording<M> {
    inner: M,
    requests: Mutex<Vec<ChatRequest>>,
}

impl<M> Recording<M> {
    fn new(inner: M) -> Self {
        Recording { inner, requests: Mutex::new(Vec::new()) }
    }

    fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().expect("not poisoned").clone()
    }
}

impl<M: ChatModel> ChatModel for Recording<M> {
    fn model_name(&self) -> &str {
        self.inner.model_name()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.requests.lock().expect("not poisoned").push(request.clone());
        self.inner.chat(request).await
    }
}

fn demo() -> Demo {
    Demo::new(codebase_dir(), LoadOptions::new()).expect("the sample code base and the pipeline load")
}

async fn offline_run(demo: &Demo, questions: &[&str]) -> (BudgetTrace, Vec<ChatRequest>) {
    let counter = demo.pipeline().pipeline().counter().clone();
    let model = Recording::new(OfflineModel::new(counter));
    let questions: Vec<String> = questions.iter().map(|q| (*q).to_owned()).collect();
    let trace = demo.conversation(&questions, &model).await.expect("the run succeeds");
    (trace, model.requests())
}

/// The `[id]` prefixes of the answer's lines.
fn cited_ids(answer: &str) -> Vec<&str> {
    answer.lines().filter_map(|l| l.strip_prefix('[')?.split_once(']').map(|(id, _)| id)).collect()
}

#[tokio::test]
async fn the_sample_question_compacts_summarises_and_stays_inside_the_window() {
    let demo = demo();
    let loaded = demo.pipeline().pipeline();
    let counter = loaded.counter();
    let window = loaded.context_window();
    let budget = loaded.max_context_tokens();
    let (trace, requests) = offline_run(&demo, &[SAMPLE_QUESTION]).await;
    assert_eq!((trace.context_window, trace.max_context_tokens, trace.policy.as_str()), (8_192, 4_000, "fail_fast"));
    assert!(trace.clamps.is_empty(), "{:?}", trace.clamps);
    assert!(trace.contract.iter().all(|s| s.total_tokens() <= window));
    let turn = &trace.turns[0];

    // Compaction happened, on nodes that joined the context, and saved tokens.
    let compactions = turn.compactions();
    assert!(compactions.nodes >= 2 && compactions.tokens_saved > 0, "{compactions:?}");
    let policies: Vec<&str> = turn
        .budget_reports()
        .flat_map(|r| &r.nodes)
        .filter(|n| n.compacted)
        .filter_map(|n| n.rule.map(|r| r.policy.name()))
        .collect();
    assert!(policies.contains(&"always") && policies.contains(&"threshold"), "{policies:?}");

    // A batch was refused, the context summarised under the loop guard, and the batch retried.
    assert!(turn.loop_passes("budget_loop_guard") >= 1);
    let path: Vec<&str> = turn.steps.iter().map(|s| s.step_id.as_str()).collect();
    let over = turn
        .steps
        .iter()
        .position(|s| matches!(&s.detail, StepDetail::ManageContextBudget(r) if r.decision == BudgetDecision::Over))
        .expect("a batch is refused");
    assert_eq!(
        path.get(over..over + 5),
        Some(&["manage_budget", "budget_loop_guard", "summarize", "set_context_from_summary", "manage_budget"][..])
    );
    let StepDetail::ManageContextBudget(refused) = &turn.steps[over].detail else { unreachable!() };
    let StepDetail::ManageContextBudget(retried) = &turn.steps[over + 4].detail else { unreachable!() };
    assert!(refused.candidate_tokens > budget);
    assert_eq!(retried.decision, BudgetDecision::Ok);
    let ids = |r: &ctx::budget::BudgetReport| r.nodes.iter().map(|n| n.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(refused), ids(retried), "the refused batch is the one retried");
    assert!(turn.steps[over + 3].context_after < turn.steps[over].context_after, "the summary is smaller");
    assert!(turn.loop_passes("evidence_guard") >= 1, "more than one batch was read");

    // The context never exceeds its budget, and each step's measured context agrees with the
    // budget step's own report.
    for step in &turn.steps {
        assert!(step.context_after <= budget, "{}: {}", step.step_id, step.context_after);
        if let StepDetail::ManageContextBudget(r) = &step.detail {
            assert_eq!((step.context_before, step.context_after), (r.context_tokens_before, r.context_tokens_after));
        }
    }

    // Every request, recounted here from what the model received: the predicted prompt is exact
    // and the prompt plus max_tokens fits the window.
    assert_eq!(requests.len(), turn.requests().count());
    assert!(requests.len() >= 2);
    for (request, (step, report)) in requests.iter().zip(turn.requests()) {
        let exact = counter.count_request(&request.messages, &request.tools).expect("counts");
        assert_eq!(request.predicted_prompt_tokens, Some(exact), "{step}");
        assert_eq!(
            (report.request.prompt_tokens, report.request.max_output_tokens),
            (exact, request.max_tokens),
            "{step}"
        );
        assert!(exact + request.max_tokens <= window, "{step}: {exact} + {}", request.max_tokens);
        assert_eq!(request.step_id.as_deref(), Some(step));
    }

    // The answer quotes the code base and cites its files by id.
    let cited = cited_ids(&turn.answer);
    assert!(!cited.is_empty(), "{}", turn.answer);
    for id in &cited {
        assert!(demo.index().text(id).is_some(), "`{id}` is a file of the code base");
    }
    assert!(cited.contains(&"sql/procedures/usp_ComputeInvoiceTotal.sql"), "{cited:?}");

    // The generated `run` takes the same path as the step-by-step loop of the trace.
    assert_eq!(answer_once(SAMPLE_QUESTION).await.expect("runs"), turn.answer);

    let printed = trace.render();
    for expected in
        ["Clamps: none.", "on_over -> budget_loop_guard", "compacted (always)", "Answer (offline-extractive)"]
    {
        assert!(printed.contains(expected), "`{expected}` missing from:\n{printed}");
    }
}

#[tokio::test]
async fn a_follow_up_question_keeps_the_history_and_the_context() {
    let demo = demo();
    let (trace, requests) = offline_run(&demo, &[SAMPLE_QUESTION, "Where is the tax rounded?"]).await;
    let [first, second] = &trace.turns[..] else { panic!("two turns") };
    let (_, first_answer) = first.requests().last().expect("an answer");
    let (_, second_answer) = second.requests().last().expect("an answer");
    assert_eq!(first_answer.history_messages, 0);
    assert_eq!(second_answer.history_messages, 2);
    let sent = requests.last().expect("a request");
    assert_eq!(sent.messages[1].role, Role::User);
    assert_eq!(sent.messages[1].content, SAMPLE_QUESTION);
    assert_eq!(sent.messages[2].content, first.answer);
    // The second question starts from the context the first one left.
    assert_eq!(second.steps[0].context_before, first.steps.last().expect("steps").context_after);
    assert!(second.steps[0].context_before > 0);
    assert!(second.answer.contains("fn_RoundCurrency") || second.answer.contains("Money.Round"), "{}", second.answer);
}

#[tokio::test]
async fn next_batch_drops_the_hits_read_and_stops_when_nothing_was_added() {
    let node = |id: &str| format!("--- NODE ---\nid: {id}\npath: {id}\nlanguage: sql\ncompact: false\ntext:\nSELECT 1");
    let hit = |id: &str| SearchHit::new(id, 1.0);
    let blocks = vec![format!("{}\n\n{}", node("a.sql"), node("b.sql")), "<<<New content".into(), node("c.sql")];
    assert_eq!(node_ids(&blocks), ["a.sql", "b.sql", "c.sql"]);

    let mut state = PipelineState::new("q");
    state.context_blocks = blocks;
    state.search_results = vec![hit("c.sql"), hit("d.sql"), hit("a.sql")];
    assert_eq!(NextBatch.next_batch(&mut state).await.expect("runs"), CodebaseQaNextBatchOutcome::More);
    assert_eq!(state.search_results, vec![hit("d.sql")]);
    // Nothing new in the context (d.sql did not fit the evidence budget): stop.
    assert_eq!(NextBatch.next_batch(&mut state).await.expect("runs"), CodebaseQaNextBatchOutcome::Done);
    // Everything read: stop.
    state.context_blocks.push(node("d.sql"));
    assert_eq!(NextBatch.next_batch(&mut state).await.expect("runs"), CodebaseQaNextBatchOutcome::Done);
    assert!(state.search_results.is_empty());
    assert_eq!(CodebaseQaNextBatchOutcome::More.name(), "more");
}

#[test]
fn arguments_and_diagram() {
    let parse = |args: &[&str]| Args::parse(args.iter().map(|a| (*a).to_owned()));
    let default = parse(&[]).expect("valid");
    assert_eq!(default.questions, [SAMPLE_QUESTION]);
    assert!(!default.mermaid && !default.offline && !default.help);
    let args = parse(&["--offline", "Q1?", "--mermaid", "--", "--not-a-flag?"]).expect("valid");
    assert_eq!(args.questions, ["Q1?", "--not-a-flag?"]);
    assert!(args.mermaid && args.offline);
    assert!(parse(&["-h"]).expect("valid").help);
    assert!(parse(&["--verbose"]).expect_err("unknown").contains("`--verbose`"));
    assert!(parse(&["  "]).is_err());
    for documented in ["--mermaid", "--offline", "CTX_BASE_URL", "CTX_MODEL", "OPENAI_API_KEY"] {
        assert!(USAGE.contains(documented), "{documented}");
    }

    let diagram = CodebaseQa::MERMAID;
    assert!(diagram.starts_with("flowchart"), "{diagram}");
    for step in ["search", "expand", "fetch", "manage_budget", "next_batch", "evidence_guard", "summarize", "answer"] {
        assert!(diagram.contains(step), "`{step}` missing from:\n{diagram}");
    }
}

#[test]
fn the_model_is_offline_unless_a_base_url_is_set() {
    let demo = demo();
    let counter = demo.pipeline().pipeline().counter();
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    };
    assert_eq!(rag::ENV_BASE_URL, ctx::llm::openai::ENV_BASE_URL);
    let none = choose_model(false, vars(&[]), counter).expect("offline");
    assert!(matches!(none, Model::Offline(_)));
    let blank = choose_model(false, vars(&[("CTX_BASE_URL", " "), ("CTX_MODEL", "m")]), counter).expect("offline");
    assert!(matches!(blank, Model::Offline(_)));
    let server = vars(&[("CTX_BASE_URL", "http://127.0.0.1:9/v1"), ("CTX_MODEL", "llama3.1:8b")]);
    let forced = choose_model(true, server, counter).expect("offline");
    assert!(matches!(forced, Model::Offline(_)));
    let client = choose_model(false, server, counter).expect("a client");
    assert!(matches!(client, Model::Server(_)));
    assert_eq!(client.describe(), "llama3.1:8b at http://127.0.0.1:9/v1/chat/completions");
    let err = choose_model(false, vars(&[("CTX_BASE_URL", "http://127.0.0.1:9/v1")]), counter).expect_err("no model");
    assert!(err.to_string().contains("CTX_MODEL"), "{err}");
}

/// What the scripted server received, in order.
type Received = Arc<Mutex<Vec<Value>>>;

/// A chat-completions endpoint that summarises into one node and answers with a citation.
async fn complete(State(received): State<Received>, Json(body): Json<Value>) -> Json<Value> {
    let system = body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
    received.lock().expect("not poisoned").push(body);
    let content = if system.to_lowercase().contains("summarize") {
        "--- NODE ---\nid: sql/procedures/usp_ComputeInvoiceTotal.sql\ntext:\n\
         Total = net of the lines + tax per rate, each rounded by dbo.fn_RoundCurrency."
    } else {
        "dbo.usp_ComputeInvoiceTotal sums the net line amounts, adds the tax computed once per rate and \
         rounds with dbo.fn_RoundCurrency [sql/procedures/usp_ComputeInvoiceTotal.sql]."
    };
    Json(json!({
        "id": "chatcmpl-demo",
        "object": "chat.completion",
        "model": "scripted",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2 }
    }))
}

#[tokio::test]
async fn with_ctx_base_url_the_same_run_talks_to_a_server() {
    let received: Received = Arc::default();
    let app = Router::new().route("/v1/chat/completions", post(complete)).with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let address = listener.local_addr().expect("bound");
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let demo = demo();
    let env: HashMap<&str, String> =
        HashMap::from([("CTX_BASE_URL", format!("http://{address}/v1")), ("CTX_MODEL", "scripted-model".to_owned())]);
    let model =
        choose_model(false, |name| env.get(name).cloned(), demo.pipeline().pipeline().counter()).expect("a client");
    assert!(matches!(model, Model::Server(_)));
    let trace = demo.conversation(&[SAMPLE_QUESTION.to_owned()], model.as_chat_model()).await.expect("runs");
    server.abort();

    let turn = &trace.turns[0];
    assert_eq!(trace.model, "scripted-model");
    assert!(turn.answer.contains("[sql/procedures/usp_ComputeInvoiceTotal.sql]"), "{}", turn.answer);
    assert!(turn.loop_passes("budget_loop_guard") >= 1);
    let bodies = received.lock().expect("not poisoned").clone();
    let calls: Vec<(&str, &ctx::pipeline::CallReport)> = turn.requests().collect();
    assert_eq!(bodies.len(), calls.len());
    let loaded = demo.pipeline().pipeline();
    for (body, (step, report)) in bodies.iter().zip(&calls) {
        assert_eq!(body["model"], "scripted-model");
        assert_eq!(body["max_tokens"].as_u64(), loaded.output_tokens(step).map(|n| n as u64), "{step}");
        assert!(report.request.prompt_tokens + report.request.max_output_tokens <= loaded.context_window());
    }
    // The server's summary replaced the context before the refused batch was retried.
    let summary_at = turn.steps.iter().position(|s| s.step_id == "set_context_from_summary").expect("summarised");
    assert!(turn.steps[summary_at].context_after < 50, "{}", turn.steps[summary_at].context_after);
}

#[test]
fn the_guides_worked_example_is_this_example() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).expect("readable");
    let tour = read("docs/tour.md");
    let block = |fence: &str, nth: usize| -> String {
        let start = tour.match_indices(fence).nth(nth).map(|(i, _)| i + fence.len()).expect("a block");
        let body = &tour[start..];
        let body = body[..body.find("\n```").expect("closed")].trim_start_matches('\n');
        // As shown: rustdoc's hidden lines left out, prompt paths written from `docs/`.
        let shown: Vec<&str> =
            body.lines().filter(|l| !(l.trim_start().starts_with("# ") || l.trim() == "#")).collect();
        shown.join("\n").replace("\"../examples/prompts/", "\"../prompts/")
    };
    // The pipeline and the run are copied from the example's sources, the diagram from the macro.
    assert!(
        read("examples/rag_pipeline/pipeline.rs").contains(&block("```rust\n", 0)),
        "docs/tour.md pipeline differs"
    );
    assert!(
        read("examples/rag_pipeline/pipeline.rs").contains(&block("```rust\n", 1)),
        "docs/tour.md custom step differs"
    );
    assert!(read("examples/rag_pipeline/mod.rs").contains(&block("```rust\n", 2)), "docs/tour.md run differs");
    assert_eq!(block("```mermaid", 0).trim_end(), CodebaseQa::MERMAID.trim_end());
}

/// The worked example's trace (`docs/tour.md`, abridged: `...` stands for lines left out, `; ...`
/// for the end of a line) is what the example prints for the tour's question, line for line.
#[tokio::test]
async fn the_tours_trace_is_what_the_example_prints() {
    let tour = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/tour.md")).expect("readable");
    let open = tour.find("```text\n").expect("a text block") + "```text\n".len();
    let shown = &tour[open..open + tour[open..].find("```").expect("closed")];
    assert!(tour.contains(&format!("cargo run --example rag_pipeline -- \"{SAMPLE_QUESTION}\"")));
    let (trace, _) = offline_run(&demo(), &[SAMPLE_QUESTION]).await;
    let printed = trace.render();
    let mut compared = 0;
    for line in shown.lines().filter(|l| l.trim() != "...") {
        let found = match line.strip_suffix("; ...") {
            Some(start) => printed.lines().any(|p| p.starts_with(start)),
            None => printed.lines().any(|p| p == line),
        };
        assert!(found, "docs/tour.md shows a line the example does not print:\n{line}\n\nprinted:\n{printed}");
        compared += 1;
    }
    assert!(compared >= 20, "{compared} lines");
}

/// Each contract line the example prints adds up: its terms (the question's budget included)
/// sum to the total it compares with the window.
#[tokio::test]
async fn the_printed_contract_adds_up() {
    let (trace, _) = offline_run(&demo(), &[SAMPLE_QUESTION]).await;
    let printed = trace.render();
    let mut lines = 0;
    for line in printed.lines().filter(|l| l.contains(" to spare)")) {
        let (terms, total) = line.split_once(" = ").expect("terms = total");
        let total: usize = total.split(' ').next().and_then(|n| n.parse().ok()).expect("a total");
        let sum: usize =
            terms.split(" + ").map(|t| t.rsplit(' ').next().and_then(|n| n.parse::<usize>().ok()).expect(t)).sum();
        assert_eq!(sum, total, "{line}");
        assert!(line.contains(" + question "), "the question's term is shown: {line}");
        lines += 1;
    }
    assert_eq!(lines, 2, "{printed}");
}

#[test]
fn the_models_are_priced_at_the_price_tables_list_prices() {
    let demo = demo();
    let loaded = demo.pipeline().pipeline();
    for (step, model, listed) in [("summarize", "small", "gpt-4.1-mini"), ("answer", "strong", "gpt-4.1")] {
        let used = loaded.step_model(step);
        assert_eq!(used.name, Some(model), "{step}");
        assert_eq!(used.price, Price::for_model(listed), "{step} on `{model}` is priced as {listed}");
        assert_eq!(used.config.context_window, 8_192, "{step}");
    }
    // The comment that names the prices' source names the table's date.
    let source = std::fs::read_to_string(format!(
        "{}/examples/rag_pipeline/pipeline.rs",
        concat!(env!("CARGO_MANIFEST_DIR"), "/..")
    ))
    .expect("readable");
    assert!(source.contains("gpt-4.1-mini and gpt-4.1") && source.contains(PRICE_TABLE_DATE), "pipeline.rs");
}

/// What `tokens` cost at `price`, rounded to the billionth as each request's spend is.
fn priced(price: &Price, tokens: BilledTokens) -> u64 {
    nano_usd(price.cost(tokens))
}

#[tokio::test]
async fn each_models_cost_is_its_proven_worst_case_and_what_its_requests_were_billed() {
    let demo = demo();
    let loaded = demo.pipeline().pipeline();
    let (trace, _) = offline_run(&demo, &[SAMPLE_QUESTION]).await;
    let turn = &trace.turns[0];
    let plan = trace.cost.as_ref().expect("both models are priced");
    let cost = plan.run(turn).expect("every request is priced");
    let [small, strong] = &cost.models[..] else { panic!("two models: {:?}", cost.models) };
    assert_eq!((small.model.as_str(), &small.steps[..]), ("small", &["summarize".to_owned()][..]));
    assert_eq!((strong.model.as_str(), &strong.steps[..]), ("strong", &["answer".to_owned()][..]));
    let (small_price, strong_price) =
        (Price::for_model("gpt-4.1-mini").expect("listed"), Price::for_model("gpt-4.1").expect("listed"));

    // The worst case, recomputed here from the contract: a question summarises at most
    // `max_turn_loops` (2) times and answers once; each request carries at most its contract's
    // terms (the output aside) as input and its output limit as output, every input token at the
    // uncached price.
    let worst = |step: &str, price: &Price| {
        let s = loaded.contract_report().step(step).expect("a model step");
        price.worst_nano_usd(s.total_tokens() - s.output_tokens, s.output_tokens)
    };
    assert_eq!((small.worst_requests, strong.worst_requests), (2, 1));
    assert_eq!(small.worst_nano_usd, 2 * worst("summarize", &small_price));
    assert_eq!(strong.worst_nano_usd, worst("answer", &strong_price));
    assert_eq!(cost.worst_nano_usd, small.worst_nano_usd + strong.worst_nano_usd);
    assert_eq!(Some(cost.worst_nano_usd), loaded.cost_bound().map(|b| b.nano_usd), "what `ctx explain` shows");
    assert_eq!(
        cost.all_strong_worst_nano_usd,
        2 * worst("summarize", &strong_price) + worst("answer", &strong_price),
        "the same worst case with the summariser at the strong model's price"
    );

    // What was spent: each request's tokens (the offline model's usage: its exact counts) at its
    // model's price; and the same tokens at the strong model's price.
    let (mut spent, mut all_strong) = ([0u64; 2], 0u64);
    let mut requests = [0usize; 2];
    for (step, call) in turn.requests() {
        let usage = call.request.usage.expect("the offline model reports usage");
        assert_eq!(usage.prompt_tokens, call.request.prompt_tokens, "{step}");
        let tokens = BilledTokens::new(usage.prompt_tokens, 0, 0, usage.completion_tokens);
        let (i, price) = if step == "summarize" { (0, &small_price) } else { (1, &strong_price) };
        spent[i] += priced(price, tokens);
        requests[i] += 1;
        all_strong += priced(&strong_price, tokens);
    }
    assert_eq!((small.requests, strong.requests), (requests[0], requests[1]));
    assert!(requests[0] >= 1 && requests[1] == 1, "{requests:?}");
    assert_eq!((small.spent_nano_usd, strong.spent_nano_usd), (spent[0], spent[1]));
    assert_eq!(cost.spent_nano_usd, spent[0] + spent[1]);
    assert_eq!(cost.all_strong_spent_nano_usd, all_strong);

    // No run spends more than its proven worst case, and the small summariser saves money.
    assert!(small.spent_nano_usd <= small.worst_nano_usd && strong.spent_nano_usd <= strong.worst_nano_usd);
    assert!(cost.all_strong_spent_nano_usd <= cost.all_strong_worst_nano_usd);
    assert!(cost.spent_saved() > 0 && cost.worst_saved() > 0);
    assert_eq!(cost.worst_saved(), cost.all_strong_worst_nano_usd - cost.worst_nano_usd);
}

#[tokio::test]
async fn the_readmes_cost_figures_are_what_the_example_prints() {
    let readme =
        std::fs::read_to_string(format!("{}/README.md", concat!(env!("CARGO_MANIFEST_DIR"), "/.."))).expect("readable");
    let start = readme.find("\n## What a run costs\n").expect("the README's section on cost");
    let section = &readme[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    // The section's one `text` block: the lines the example prints for the README's question.
    let open = section.find("```text\n").expect("a text block") + "```text\n".len();
    let shown = &section[open..open + section[open..].find("```").expect("closed")];
    assert!(shown.lines().count() >= 5, "{shown}");
    let (trace, _) = offline_run(&demo(), &[SAMPLE_QUESTION]).await;
    let printed = trace.render();
    assert!(printed.contains(shown), "README.md's cost figures differ from what the example prints:\n{printed}");
    assert!(section.contains(PRICE_TABLE_DATE) && section.contains("gpt-4.1-mini"), "{section}");
}
