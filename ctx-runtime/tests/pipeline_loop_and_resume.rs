//! The spec's on_over compaction loop (manage_budget → loop_guard → summarise →
//! set_context_from_summary → manage_budget): it converges with a model that summarises, it
//! ends through the loop guard with a model that never makes the context smaller, and a run
//! saved after any step and resumed elsewhere ends in the same state as one never interrupted.

mod pipeline_support;

use std::sync::Mutex;

use ctx_runtime::ErrorCode;
use ctx_runtime::budget::BudgetDecision;
use ctx_runtime::pipeline::{LoadOptions, LoadedPipeline, Snapshot, StepDetail, StepEnv, StepReport};
use ctx_runtime::state::{PipelineState, render_context_blocks};
use pipeline_support::defs::{self, SUMMARIZER};
use pipeline_support::{Corpus, Flaky, ScriptedModel, Summaries, WordSearch};

const QUESTION: &str = "How is the invoice tax total computed?";

fn compaction_loop() -> LoadedPipeline {
    LoadedPipeline::load(defs::pipeline("CompactionLoop", vec![], true), LoadOptions::new()).unwrap()
}

/// A question whose context is already close to the budget (2_000 tokens), so that the
/// retrieved batch does not fit next to it.
fn crowded_state(p: &LoadedPipeline) -> PipelineState {
    let mut state = PipelineState::new(QUESTION);
    let mut blocks = Vec::new();
    for i in 0.. {
        blocks.push(format!(
            "Finding {i}: in module {i} the invoice total is the sum of the line amounts plus the tax of the \
             customer's country, rounded per invoice to two decimals."
        ));
        if p.counter().count(&render_context_blocks(&blocks)).unwrap() > 1_900 {
            blocks.pop();
            break;
        }
    }
    state.context_blocks = blocks;
    state
}

fn path(reports: &[StepReport]) -> Vec<&str> {
    reports.iter().map(|r| r.step_id.as_str()).collect()
}

fn decisions(reports: &[StepReport]) -> Vec<BudgetDecision> {
    reports
        .iter()
        .filter_map(|r| match &r.detail {
            StepDetail::ManageContextBudget(b) => Some(b.decision),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_loop_compacts_the_context_then_appends_the_batch() {
    let p = compaction_loop();
    let corpus = Corpus::invoicing();
    let search = WordSearch(&corpus);
    let model = ScriptedModel::new(SUMMARIZER, Summaries::Short);
    let env = StepEnv::builder().search(&search).store(&corpus).model(&model).build();
    let state = crowded_state(&p);
    let old_context = render_context_blocks(&state.context_blocks);

    let (state, reports) = p.run(state, &env).await.unwrap();
    assert_eq!(
        path(&reports),
        [
            "search",
            "fetch",
            "manage_budget",
            "budget_loop_guard",
            "call_summarize_context",
            "set_context_from_summary",
            "manage_budget",
            "call_model_answer"
        ]
    );
    assert_eq!(decisions(&reports), [BudgetDecision::Over, BudgetDecision::Ok]);
    // The summariser read the old context; its summary replaced it, then the batch joined it.
    let requests = model.requests();
    assert!(requests[0].messages[1].content.contains(&old_context));
    let summary = format!("Summary of {} characters of context.", requests[0].messages[1].content.len());
    assert_eq!(state.context_blocks[0], summary);
    assert_eq!(state.context_blocks.len(), 4);
    assert!(state.context_blocks[1..].iter().all(|b| b.starts_with("--- NODE ---")));
    assert!(state.node_texts.is_empty());
    assert_eq!(state.loop_counts.get("budget_loop_guard"), Some(&1));
    // The answer was asked with the new context, inside the window.
    let answer_request = &requests[1];
    assert!(answer_request.messages[1].content.contains(&render_context_blocks(&state.context_blocks)));
    assert!(answer_request.predicted_prompt_tokens.unwrap() + answer_request.max_tokens <= 4_096);
    assert_eq!(state.last_model_response.as_deref(), Some("Answer #2: the total is net plus tax."));
}

#[tokio::test]
async fn a_model_that_never_shrinks_the_context_is_stopped_by_the_guard() {
    let p = compaction_loop();
    let corpus = Corpus::invoicing();
    let search = WordSearch(&corpus);
    let model = ScriptedModel::new(SUMMARIZER, Summaries::Unchanged);
    let env = StepEnv::builder().search(&search).store(&corpus).model(&model).build();
    let state = crowded_state(&p);
    let old_tokens = p.counter().count(&render_context_blocks(&state.context_blocks)).unwrap();

    let (state, reports) = p.run(state, &env).await.unwrap();
    let retry = ["budget_loop_guard", "call_summarize_context", "set_context_from_summary", "manage_budget"];
    let mut expected = vec!["search", "fetch", "manage_budget"];
    for _ in 0..3 {
        expected.extend(retry);
    }
    expected.extend(["budget_loop_guard", "call_model_answer"]);
    assert_eq!(path(&reports), expected);
    assert_eq!(decisions(&reports), [BudgetDecision::Over; 4]);
    // The guard allowed max_turn_loops = 3 loops, then denied.
    let guard: Vec<bool> = reports
        .iter()
        .filter_map(|r| match r.detail {
            StepDetail::LoopGuard { allowed, .. } => Some(allowed),
            _ => None,
        })
        .collect();
    assert_eq!(guard, [true, true, true, false]);
    assert_eq!(state.loop_counts.get("budget_loop_guard"), Some(&3));
    assert!(reports.len() as u64 <= p.step_bound(), "{} > {}", reports.len(), p.step_bound());
    // The context is as large as before (now one block); the batch never joined it.
    assert_eq!(p.counter().count(&render_context_blocks(&state.context_blocks)).unwrap(), old_tokens);
    assert_eq!(state.node_texts.len(), 3);
    assert_eq!(model.requests().len(), 4);
}

#[tokio::test]
async fn a_run_resumed_from_any_step_ends_like_an_uninterrupted_one() {
    let p = compaction_loop();
    let corpus = Corpus::invoicing();
    let search = WordSearch(&corpus);
    for summaries in [Summaries::Short, Summaries::Unchanged] {
        let model = ScriptedModel::new(SUMMARIZER, summaries);
        let env = StepEnv::builder().search(&search).store(&corpus).model(&model).build();
        let (uninterrupted, reports) = p.run(crowded_state(&p), &env).await.unwrap();
        for stop_after in 0..=reports.len() {
            let mut snapshot = Snapshot::start(&p, crowded_state(&p));
            for _ in 0..stop_after {
                p.advance(&mut snapshot, &env).await.unwrap();
            }
            // Persisted and restored, then finished by another process's backends.
            let saved = serde_json::to_string(&snapshot).unwrap();
            let mut restored: Snapshot = serde_json::from_str(&saved).unwrap();
            let other_model = ScriptedModel::new(SUMMARIZER, summaries);
            let other_env = StepEnv::builder().search(&search).store(&corpus).model(&other_model).build();
            let rest = p.resume(&mut restored, &other_env).await.unwrap();
            assert_eq!(stop_after + rest.len(), reports.len(), "{summaries:?}, stopped after {stop_after}");
            assert_eq!(restored.state, uninterrupted, "{summaries:?}, stopped after {stop_after}");
        }
    }
}

#[tokio::test]
async fn a_failed_model_call_can_be_retried_from_the_snapshot() {
    let p = compaction_loop();
    let corpus = Corpus::invoicing();
    let search = WordSearch(&corpus);
    let model = ScriptedModel::new(SUMMARIZER, Summaries::Short);
    let env = StepEnv::builder().search(&search).store(&corpus).model(&model).build();
    let (uninterrupted, _) = p.run(crowded_state(&p), &env).await.unwrap();

    let inner = ScriptedModel::new(SUMMARIZER, Summaries::Short);
    let flaky = Flaky { inner: &inner, failures: Mutex::new(1) };
    let flaky_env = StepEnv::builder().search(&search).store(&corpus).model(&flaky).build();
    let mut snapshot = Snapshot::start(&p, crowded_state(&p));
    let err = p.resume(&mut snapshot, &flaky_env).await.unwrap_err();
    assert_eq!(err.code(), "MODEL_CALL_FAILED");
    assert!(err.to_string().contains("call_summarize_context"), "{err}");
    // The snapshot is at the failed step, with the state that step found.
    assert_eq!(snapshot.next_step, "call_summarize_context");
    assert_eq!(snapshot.state.loop_counts.get("budget_loop_guard"), Some(&1));
    assert_eq!(snapshot.state.last_model_response, None);
    p.resume(&mut snapshot, &flaky_env).await.unwrap();
    assert_eq!(snapshot.state, uninterrupted);
}

/// The loop behind `on_over` runs in a conversation only when the pipeline carries the context
/// (`carry_context: true`): each question's batch joins what the earlier questions left, until
/// one does not fit and the context is summarised first. Without it every question starts with
/// an empty context, `on_over` is never taken, and loading says so. (A `Conversation` once
/// started every question with an empty context, whatever the pipeline, and nothing said so.)
#[tokio::test]
async fn a_conversation_that_carries_the_context_takes_on_over_when_it_fills_up() {
    let corpus = Corpus::invoicing();
    let search = WordSearch(&corpus);
    let model = ScriptedModel::new(SUMMARIZER, Summaries::Short);
    let env = StepEnv::builder().search(&search).store(&corpus).model(&model).build();

    let fresh = compaction_loop();
    let warned: Vec<(&str, String)> = fresh.warnings().iter().map(|w| (w.code.as_str(), w.path.to_string())).collect();
    assert_eq!(warned, [("BUDGET_ON_OVER_NEVER_TAKEN", "steps[2].on_over".to_owned())]);
    let mut chat = fresh.conversation();
    for _ in 0..4 {
        let answer = chat.ask(QUESTION, &env).await.unwrap();
        assert_eq!(decisions(&answer.reports), [BudgetDecision::Ok], "each question starts empty");
        assert!(chat.context().is_empty());
    }

    let mut def = defs::pipeline("CompactionLoop", vec![], true);
    def.settings.carry_context = Some(true);
    let carrying = LoadedPipeline::load(def, LoadOptions::new()).unwrap();
    assert!(carrying.warnings().is_empty() && carrying.carries_context());
    let budget = carrying.max_context_tokens();
    let counter = carrying.counter().clone();
    let mut chat = carrying.conversation();
    chat.set_variable("customer", "ACME");
    let mut seen = Vec::new();
    for turn in 0..6 {
        let before = render_context_blocks(chat.context());
        let answer = chat.ask(QUESTION, &env).await.unwrap();
        seen.extend(decisions(&answer.reports));
        // The first request of the question saw what the last one left.
        if turn > 0 {
            assert!(!before.is_empty());
        }
        assert!(counter.count(&render_context_blocks(chat.context())).unwrap() <= budget);
        if seen.contains(&BudgetDecision::Over) {
            assert!(path(&answer.reports).contains(&"call_summarize_context"), "{:?}", path(&answer.reports));
            break;
        }
    }
    assert!(seen.contains(&BudgetDecision::Over), "the context filled up and was summarised: {seen:?}");
    assert_eq!(chat.variables()["customer"], "ACME");
    assert!(!chat.history().is_empty());
    chat.clear();
    assert!(chat.context().is_empty() && chat.history().is_empty());
}
