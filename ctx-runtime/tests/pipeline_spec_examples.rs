//! The spec's `manage_context_budget` examples as whole pipelines, run step by step against
//! in-memory backends and a deterministic model, checking every change each step makes to the
//! state (and that it changes nothing else).

mod pipeline_support;

use ctx_runtime::budget::{BudgetDecision, BudgetReport, PolicyKind, format_node};
use ctx_runtime::chat::ChatMessage;
use ctx_runtime::classify::{Language, classify};
use ctx_runtime::pipeline::{LoadOptions, LoadedPipeline, Snapshot, StepDetail, StepEnv, StepReport};
use ctx_runtime::state::{InboxMessage, NodeText, PipelineState, SearchHit, render_context_blocks};
use pipeline_support::defs::{self, ANSWER, SUMMARIZER, rule};
use pipeline_support::{Corpus, ScriptedModel, Summaries, WordSearch};

const QUESTION: &str = "How is the invoice tax total computed?";

/// The hits the word search gives for `QUESTION`: two words ("invoice", "total") for the
/// service and the view (ties by id), one for the lines table; the tax table has neither.
const RANKED: [&str; 3] = ["InvoiceService", "vw_InvoiceTotals", "InvoiceLines"];

struct Fixture {
    corpus: Corpus,
    model: ScriptedModel,
}

impl Fixture {
    fn new(summaries: Summaries) -> Self {
        Fixture { corpus: Corpus::invoicing(), model: ScriptedModel::new(SUMMARIZER, summaries) }
    }

    fn node(&self, id: &str) -> NodeText {
        self.corpus.nodes[id].clone()
    }
}

/// Old context blocks of about `tokens` tokens (at most that many).
fn old_context(p: &LoadedPipeline, tokens: usize) -> Vec<String> {
    let mut blocks = Vec::new();
    for i in 0.. {
        let block = format!(
            "Finding {i}: in module {i} the invoice total is the sum of the line amounts plus the tax of the \
             customer's country, rounded per invoice to two decimals."
        );
        blocks.push(block);
        if p.counter().count(&render_context_blocks(&blocks)).unwrap() > tokens {
            blocks.pop();
            break;
        }
    }
    blocks
}

async fn advance(p: &LoadedPipeline, snapshot: &mut Snapshot, env: &StepEnv<'_>) -> StepReport {
    p.advance(snapshot, env).await.unwrap().expect("the run is not over")
}

fn budget_report(report: &StepReport) -> &BudgetReport {
    match &report.detail {
        StepDetail::ManageContextBudget(r) => r,
        other => panic!("not a budget report: {other:?}"),
    }
}

fn block(node: &NodeText) -> String {
    format_node(node, classify(&node.text, node.source()), false, &node.text)
}

/// search → fetch: the hits, then their texts, and nothing else.
async fn search_and_fetch(f: &Fixture, p: &LoadedPipeline, snapshot: &mut Snapshot, env: &StepEnv<'_>) {
    let mut expected = snapshot.state.clone();
    let r = advance(p, snapshot, env).await;
    assert_eq!((r.step_id.as_str(), snapshot.next_step.as_str()), ("search", "fetch"));
    expected.search_results =
        vec![SearchHit::new(RANKED[0], 2.0), SearchHit::new(RANKED[1], 2.0), SearchHit::new(RANKED[2], 1.0)];
    assert_eq!(snapshot.state, expected);

    let r = advance(p, snapshot, env).await;
    assert_eq!((r.step_id.as_str(), snapshot.next_step.as_str()), ("fetch", "manage_budget"));
    expected.node_texts = RANKED.iter().map(|id| f.node(id)).collect();
    assert_eq!(snapshot.state, expected);
}

#[tokio::test]
async fn minimal_step_appends_the_batch_and_answers() {
    let f = Fixture::new(Summaries::Short);
    let p = LoadedPipeline::load(defs::pipeline("Minimal", vec![], false), LoadOptions::new()).unwrap();
    let search = WordSearch(&f.corpus);
    let env = StepEnv::builder().search(&search).store(&f.corpus).model(&f.model).build();
    let mut snapshot = Snapshot::start(&p, PipelineState::new(QUESTION));
    search_and_fetch(&f, &p, &mut snapshot, &env).await;

    // on_ok: the formatted nodes are appended in order and the buffer is cleared.
    let mut expected = snapshot.state.clone();
    let r = advance(&p, &mut snapshot, &env).await;
    assert_eq!((r.transition_key.as_str(), snapshot.next_step.as_str()), ("on_ok", "call_model_answer"));
    let report = budget_report(&r);
    assert_eq!(report.decision, BudgetDecision::Ok);
    assert!(report.nodes.iter().all(|n| !n.compacted && n.rule.is_none()));
    expected.context_blocks = RANKED.iter().map(|id| block(&f.node(id))).collect();
    expected.node_texts.clear();
    assert_eq!(snapshot.state, expected);
    assert_eq!(
        report.context_tokens_after,
        p.counter().count(&render_context_blocks(&expected.context_blocks)).unwrap()
    );

    // The answer sees exactly that context and the question; the turn joins the history.
    let r = advance(&p, &mut snapshot, &env).await;
    assert_eq!(r.step_id, "call_model_answer");
    assert!(snapshot.is_finished());
    let requests = f.model.requests();
    assert_eq!(requests.len(), 1);
    let user =
        format!("### Context:\n{}\n\n### User:\n{QUESTION}\n\n", render_context_blocks(&expected.context_blocks));
    assert_eq!(requests[0].messages, vec![ChatMessage::system(ANSWER), ChatMessage::user(user)]);
    assert_eq!(requests[0].max_tokens, 400);
    let answer = "Answer #2: the total is net plus tax.".to_owned();
    expected.last_model_response = Some(answer.clone());
    expected.history_dialog = vec![ChatMessage::user(QUESTION), ChatMessage::assistant(answer)];
    assert_eq!(snapshot.state, expected);
}

#[tokio::test]
async fn minimal_step_over_budget_leaves_the_context_and_the_buffer_alone() {
    let f = Fixture::new(Summaries::Short);
    let p = LoadedPipeline::load(defs::pipeline("Minimal", vec![], false), LoadOptions::new()).unwrap();
    let search = WordSearch(&f.corpus);
    let env = StepEnv::builder().search(&search).store(&f.corpus).model(&f.model).build();
    let mut state = PipelineState::new(QUESTION);
    state.context_blocks = old_context(&p, 1_900);
    let mut snapshot = Snapshot::start(&p, state);
    search_and_fetch(&f, &p, &mut snapshot, &env).await;

    // on_over: nothing changes at all.
    let expected = snapshot.state.clone();
    let r = advance(&p, &mut snapshot, &env).await;
    assert_eq!((r.transition_key.as_str(), snapshot.next_step.as_str()), ("on_over", "call_summarize_context"));
    let report = budget_report(&r);
    assert_eq!(report.decision, BudgetDecision::Over);
    assert!(report.candidate_tokens > 2_000 && report.context_tokens_before <= 1_900, "{report:?}");
    assert_eq!(snapshot.state, expected);

    // The summariser gets the old context; its summary replaces the context; the answer follows.
    let r = advance(&p, &mut snapshot, &env).await;
    assert_eq!(r.step_id, "call_summarize_context");
    let summary_request = &f.model.requests()[0];
    assert_eq!(summary_request.messages[0], ChatMessage::system(SUMMARIZER));
    assert_eq!(summary_request.max_tokens, 300);
    let summary = snapshot.state.last_model_response.clone().unwrap();
    assert!(summary.starts_with("Summary of "), "{summary}");
    let mut expected = expected;
    expected.last_model_response = Some(summary.clone());
    assert_eq!(snapshot.state, expected);

    advance(&p, &mut snapshot, &env).await;
    expected.context_blocks = vec![summary];
    expected.last_model_response = None;
    assert_eq!(snapshot.state, expected);
    assert_eq!(snapshot.next_step, "call_model_answer");
    // The retrieved texts were never appended: they are still waiting.
    assert_eq!(snapshot.state.node_texts.len(), 3);
}

fn demand_threshold_always() -> LoadedPipeline {
    let rules = vec![
        rule("sql", "demand", None, Some("compact_sql")),
        rule("sql", "threshold", Some(0.4), None),
        rule("dotnet", "always", None, None),
    ];
    LoadedPipeline::load(defs::pipeline("Compacting", rules, false), LoadOptions::new()).unwrap()
}

/// Runs search, fetch and manage_budget; returns the budget report.
async fn up_to_the_budget(f: &Fixture, p: &LoadedPipeline, state: PipelineState) -> (Snapshot, BudgetReport) {
    let search = WordSearch(&f.corpus);
    let env = StepEnv::builder().search(&search).store(&f.corpus).model(&f.model).build();
    let mut snapshot = Snapshot::start(p, state);
    search_and_fetch(f, p, &mut snapshot, &env).await;
    let r = advance(p, &mut snapshot, &env).await;
    let report = budget_report(&r).clone();
    (snapshot, report)
}

fn policies(report: &BudgetReport) -> Vec<(&str, Option<PolicyKind>, bool)> {
    report.nodes.iter().map(|n| (n.id.as_str(), n.rule.map(|r| r.policy), n.compacted)).collect()
}

#[tokio::test]
async fn always_compacts_dotnet_and_sql_waits_for_its_rules() {
    let f = Fixture::new(Summaries::Short);
    let p = demand_threshold_always();
    let (snapshot, report) = up_to_the_budget(&f, &p, PipelineState::new(QUESTION)).await;
    assert_eq!(report.decision, BudgetDecision::Ok);
    // No demand, and the small batch stays under 40% of the budget: SQL is appended raw.
    assert_eq!(
        policies(&report),
        [
            ("InvoiceService", Some(PolicyKind::Always), true),
            ("vw_InvoiceTotals", None, false),
            ("InvoiceLines", None, false),
        ]
    );
    let service = f.node("InvoiceService");
    assert_eq!(classify(&service.text, service.source()), Language::Dotnet);
    assert!(snapshot.state.context_blocks[0].contains("language: dotnet\ncompact: true\n"));
    assert_eq!(snapshot.state.context_blocks[1], block(&f.node("vw_InvoiceTotals")));
    assert_eq!(report.tokens_saved(), report.nodes[0].tokens_before - report.nodes[0].tokens_after);
}

#[tokio::test]
async fn a_demand_compacts_sql_and_is_used_up_on_ok() {
    let f = Fixture::new(Summaries::Short);
    let p = demand_threshold_always();
    let mut state = PipelineState::new(QUESTION);
    let demand = InboxMessage::new("manage_budget", "compact_sql");
    state.enqueue(demand.clone());
    let (snapshot, report) = up_to_the_budget(&f, &p, state).await;
    assert_eq!(report.decision, BudgetDecision::Ok);
    assert_eq!(report.demands, ["compact_sql"]);
    assert_eq!(
        policies(&report),
        [
            ("InvoiceService", Some(PolicyKind::Always), true),
            ("vw_InvoiceTotals", Some(PolicyKind::Demand), true),
            ("InvoiceLines", Some(PolicyKind::Demand), true),
        ]
    );
    assert!(snapshot.state.context_blocks.iter().all(|b| b.contains("compact: true")));
    // Consumed on entry, not put back on `on_ok`.
    assert_eq!(snapshot.state.inbox_last_consumed, vec![demand]);
    assert!(snapshot.state.inbox.is_empty());
}

#[tokio::test]
async fn the_threshold_compacts_sql_once_the_context_passes_it() {
    let f = Fixture::new(Summaries::Short);
    let p = demand_threshold_always();
    let mut state = PipelineState::new(QUESTION);
    // 40% of 2_000 is 800: with 780 tokens of context, any raw SQL node passes the trigger.
    state.context_blocks = old_context(&p, 780);
    let (_, report) = up_to_the_budget(&f, &p, state).await;
    assert_eq!(report.decision, BudgetDecision::Ok);
    assert_eq!(
        policies(&report),
        [
            ("InvoiceService", Some(PolicyKind::Always), true),
            ("vw_InvoiceTotals", Some(PolicyKind::Threshold), true),
            ("InvoiceLines", Some(PolicyKind::Threshold), true),
        ]
    );
}

#[tokio::test]
async fn over_budget_puts_the_demand_back_for_the_retry() {
    let f = Fixture::new(Summaries::Short);
    let p = demand_threshold_always();
    let mut state = PipelineState::new(QUESTION);
    state.context_blocks = old_context(&p, 1_950);
    let demand = InboxMessage::new("manage_budget", "compact_sql");
    state.enqueue(demand.clone());
    let (snapshot, report) = up_to_the_budget(&f, &p, state.clone()).await;
    assert_eq!(report.decision, BudgetDecision::Over);
    assert_eq!(report.reenqueued, vec![demand.clone()]);
    assert_eq!(snapshot.next_step, "call_summarize_context");
    // Context and buffer untouched; the demand waits in the inbox for the next entry.
    assert_eq!(snapshot.state.context_blocks, state.context_blocks);
    assert_eq!(snapshot.state.node_texts.len(), 3);
    assert_eq!(snapshot.state.inbox, vec![demand.clone()]);
    assert_eq!(snapshot.state.inbox_last_consumed, vec![demand]);
}
