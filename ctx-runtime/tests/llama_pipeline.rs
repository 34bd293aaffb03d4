//! The main pipeline (search → fetch → manage_context_budget → loop_guard → summarise →
//! set_context_from_summary → manage_context_budget → answer) against a real local model,
//! SmolLM2-135M-Instruct served by llama-cpp-python with a 2,048-token context, over the example
//! code base. The window is small enough that SQL/.NET compaction, the summarise loop and the
//! loop guard all really run; every request's prompt tokens, as ctx predicted them with the
//! model's own tokenizer and chat template, equal the server's `usage.prompt_tokens`.

mod llama_support;

use std::collections::BTreeMap;
use std::path::Path;

use ctx_runtime::budget::{BudgetDecision, BudgetReport};
use ctx_runtime::pipeline::*;
use ctx_runtime::retrieve::{Bm25Index, IndexOptions};
use ctx_runtime::state::{NodeText, PipelineState, SearchHit, render_context_blocks};
use ctx_runtime::{ChatMessage, ErrorCode};
use llama_support::{Llama, Recorder, llama, publish, table};

const QUESTION: &str = "How is the tax total of an invoice computed and rounded?";
const SUMMARIZER: &str = "Summarise the context in a few sentences; keep identifiers and SQL names verbatim.";
const ANSWER: &str = "Answer the question from the context. Be brief.";

/// The example code base as the pipeline's search and store (BM25 over its files).
struct CodeBase(Bm25Index);

impl NodeSearch for CodeBase {
    async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        Ok(self.0.search(query, top_k))
    }
}

impl NodeStore for CodeBase {
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        Ok(ids.iter().filter_map(|id| self.0.node_text(id).ok()).collect())
    }

    async fn dependencies(&self, _id: &str) -> Result<Vec<String>, BoxError> {
        Ok(Vec::new())
    }
}

fn codebase() -> CodeBase {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/codebase");
    CodeBase(Bm25Index::from_dir(root, &IndexOptions::default()).unwrap())
}

fn step(id: &str, kind: StepKind) -> StepDef {
    StepDef::new(id, kind)
}

fn call(prompt_key: &str, max_output_tokens: i64, use_history: bool, next: &str) -> StepKind {
    StepKind::CallModel(
        CallModelSpec::new(prompt_key, next)
            .max_output_tokens(Some(max_output_tokens))
            .user_parts(vec![
                UserPartSpec::new("context_blocks", "### Context:\n{}\n\n"),
                UserPartSpec::new("user_question_en", "### User:\n{}\n\n"),
            ])
            .use_history(use_history),
    )
}

/// The spec's `CodeQa` pipeline, scaled to a 2,048-token model.
fn code_qa(window: usize) -> PipelineDef {
    let rule = |language: &str, policy: &str, threshold: Option<f64>| {
        CompactRuleSpec::new(language, policy).threshold(threshold)
    };
    PipelineDef::new("CodeQaLocal")
        .model(ModelSource::Inline(
            ModelSpec::default()
                .context_window(Some(window as i64))
                .max_tokens(Some(256))
                .encoding(Some("cl100k_base".into())),
        ))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(Some(900))
                .max_history_tokens(Some(200))
                .budget_safety_margin_tokens(Some(64))
                .extra(BTreeMap::from([("max_turn_loops".to_owned(), 2)])),
        )
        .prompts(vec![
            PromptSpec::new("summarizer", Some(SUMMARIZER.into())),
            PromptSpec::new("answer", Some(ANSWER.into())),
        ])
        .steps(vec![
            step("search", StepKind::SearchNodes(SearchNodesSpec::new(6, "fetch"))),
            step("fetch", StepKind::FetchNodeTexts(FetchSpec::new(600, "manage_budget"))),
            step(
                "manage_budget",
                StepKind::ManageContextBudget(
                    ManageBudgetSpec::new("answer", "budget_loop_guard")
                        .compact_code(vec![rule("sql", "threshold", Some(0.4)), rule("dotnet", "always", None)])
                        .divide_new_content(Some("<<<New content".into())),
                ),
            ),
            step("budget_loop_guard", StepKind::LoopGuard(LoopGuardSpec::new("max_turn_loops", "summarize", "answer"))),
            step("summarize", call("summarizer", 200, false, "set_context_from_summary")),
            step(
                "set_context_from_summary",
                StepKind::SetVariables(SetVariablesSpec::new(
                    vec![
                        SetRuleSpec::new(
                            "context_blocks",
                            SetValueSpec::From {
                                from: "last_model_response".into(),
                                transform: Some("to_context_blocks".into()),
                            },
                        ),
                        SetRuleSpec::new("last_model_response", SetValueSpec::Value(serde_json::Value::Null)),
                    ],
                    "manage_budget",
                )),
            ),
            step("answer", call("answer", 700, true, END)),
        ])
}

/// Loaded through [`LocalModel::load`](ctx_runtime::llm::llama_cpp::LocalModel::load): the
/// window written in the definition (8,192, the model's training context) is replaced by the
/// server's, and every count uses the server's tokenizer.
fn load(l: &Llama) -> LoadedPipeline {
    let p = l.local.load(code_qa(8_192), LoadOptions::new()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.context_window(), l.window);
    assert_eq!(p.counter().backend_id(), l.counter.backend_id());
    p
}

/// A question asked after an earlier turn, with a context already near the 900-token budget
/// (earlier findings, from the code base's own documentation), so that the retrieved batch
/// cannot join it without compaction.
fn crowded_state(p: &LoadedPipeline, docs: &str) -> PipelineState {
    let mut state = PipelineState::new(QUESTION);
    state.history_dialog = vec![
        ChatMessage::user("Which table holds the tax rates?"),
        ChatMessage::assistant("dbo.TaxRates, one rate per country and validity period."),
    ];
    let mut blocks = Vec::new();
    for paragraph in docs.split("\n\n").filter(|p| !p.trim().is_empty()).cycle().take(200) {
        blocks.push(paragraph.trim().to_owned());
        if p.counter().count(&render_context_blocks(&blocks)).unwrap() > 800 {
            blocks.pop();
            break;
        }
    }
    state.context_blocks = blocks;
    state
}

fn budgets(reports: &[StepReport]) -> Vec<&BudgetReport> {
    reports
        .iter()
        .filter_map(|r| match &r.detail {
            StepDetail::ManageContextBudget(b) => Some(b),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_main_pipeline_compacts_loops_and_answers_with_exact_budgets() {
    let Some(l) = llama("the_main_pipeline_compacts_loops_and_answers_with_exact_budgets") else { return };
    let p = load(&l);
    let code = codebase();
    let model = Recorder::new(&l.client);
    let env = StepEnv::builder().search(&code).store(&code).model(&model).build();
    let docs = code.0.text("docs/README.md").unwrap().to_owned();
    let state = crowded_state(&p, &docs);
    assert!(!state.context_blocks.is_empty());

    let (state, reports) = p.run(state, &env).await.unwrap_or_else(|e| panic!("{e}"));
    let path: Vec<&str> = reports.iter().map(|r| r.step_id.as_str()).collect();
    let exchanges = model.exchanges();
    let budget_lines: Vec<String> = budgets(&reports)
        .iter()
        .map(|b| {
            format!(
                "- manage_budget: {:?}, context {} → candidate {} of {} tokens, {} tokens saved by compaction",
                b.decision,
                b.context_tokens_before,
                b.candidate_tokens,
                b.max_context_tokens,
                b.tokens_saved()
            )
        })
        .collect();
    publish(
        "pipeline_run",
        &format!(
            "{}\nPath: {}\n\n{}\n",
            table("Main pipeline against SmolLM2-135M (n_ctx from the server)", l.window, &exchanges),
            path.join(" → "),
            budget_lines.join("\n")
        ),
    );

    // The crowded context could not take the batch: the loop ran through the guard.
    assert_eq!(path[..4], ["search", "fetch", "manage_budget", "budget_loop_guard"]);
    assert_eq!(path.last(), Some(&"answer"));
    let budgets = budgets(&reports);
    assert_eq!(budgets[0].decision, BudgetDecision::Over);
    assert!(budgets[0].candidate_tokens > budgets[0].max_context_tokens);
    // .NET code was compacted on the way in (policy `always`).
    assert!(budgets.iter().any(|b| b.tokens_saved() > 0), "no compaction: {budgets:?}");
    let guards: Vec<bool> = reports
        .iter()
        .filter_map(|r| match r.detail {
            StepDetail::LoopGuard { allowed, .. } => Some(allowed),
            _ => None,
        })
        .collect();
    assert_eq!(guards.first(), Some(&true));
    let summaries = path.iter().filter(|s| **s == "summarize").count();
    assert!(summaries >= 1);
    // The guard allowed at most max_turn_loops = 2 summaries; a last Over decision means it denied.
    assert!(summaries <= 2);
    let last = budgets.last().unwrap();
    if last.decision == BudgetDecision::Over {
        assert_eq!(guards.last(), Some(&false));
    } else {
        assert!(last.context_tokens_after <= last.max_context_tokens);
    }

    // Every request: ctx's prediction is the server's count, and prompt + output fits n_ctx.
    assert_eq!(exchanges.len(), summaries + 1);
    for e in &exchanges {
        let predicted = e.predicted.unwrap();
        assert_eq!(Some(predicted), e.reported, "{e:?}");
        assert!(predicted + e.max_tokens <= l.window, "{e:?}");
    }
    // The step reports carry the same numbers.
    let calls: Vec<_> = reports
        .iter()
        .filter_map(|r| match &r.detail {
            StepDetail::CallModel(c) => Some(c),
            _ => None,
        })
        .collect();
    for (c, e) in calls.iter().zip(&exchanges) {
        assert_eq!(c.request.usage.map(|u| u.prompt_tokens), Some(c.request.prompt_tokens));
        assert_eq!(Some(c.request.prompt_tokens), e.predicted);
        assert_eq!(c.context_window, l.window);
    }
    assert!(!state.last_model_response.unwrap_or_default().trim().is_empty());
    // The answer's turn joined the history.
    assert_eq!(state.history_dialog.len(), 4);
}

/// A context a caller set past `max_context_tokens` (bypassing `manage_context_budget`), though
/// it would still leave the output floor in the window: the contract bounds the context by its
/// budget, so the step refuses it before anything is sent (`PIPELINE_INPUT_OVER_BUDGET`) instead
/// of shrinking the answer to make it fit, and the state is unchanged.
#[tokio::test]
async fn a_context_over_its_budget_is_refused_before_it_is_sent_not_squeezed_in() {
    let Some(l) = llama("a_context_over_its_budget_is_refused_before_it_is_sent_not_squeezed_in") else { return };
    let p = load(&l);
    let model = Recorder::new(&l.client);
    let env = StepEnv::builder().model(&model).build();
    let code = codebase();
    let source = code.0.text("src/Invoicing.Services/InvoiceTotalCalculator.cs").unwrap().repeat(8);
    // Window - 680 tokens: over the 900-token context budget, under the window.
    let block = l.counter.truncate_to(&source, l.window - 680).unwrap();
    assert!(l.counter.count(&block).unwrap() > p.max_context_tokens());
    let mut state = PipelineState::new(QUESTION);
    state.context_blocks = vec![block];
    let before = state.clone();
    let answer = p.step_index("answer").unwrap();
    let err = run_step(&p, answer, &mut state, &env).await.unwrap_err();
    assert_eq!(err.code(), "PIPELINE_INPUT_OVER_BUDGET", "{err}");
    assert!(err.to_string().contains("`answer`") && err.to_string().contains("max_context_tokens"), "{err}");
    assert!(model.exchanges().is_empty(), "the request was sent");
    assert_eq!(state, before);
}

#[tokio::test]
async fn a_call_that_would_overflow_the_window_is_refused_before_it_is_sent() {
    let Some(l) = llama("a_call_that_would_overflow_the_window_is_refused_before_it_is_sent") else { return };
    let p = load(&l);
    let model = Recorder::new(&l.client);
    let env = StepEnv::builder().model(&model).build();
    // A caller hands the answer step a context far beyond the window (the whole code base's
    // SQL), bypassing manage_context_budget.
    let code = codebase();
    let mut state = PipelineState::new(QUESTION);
    state.context_blocks =
        code.0.ids().filter(|id| id.ends_with(".sql")).filter_map(|id| code.0.text(id)).map(str::to_owned).collect();
    let before = state.clone();
    let answer = p.step_index("answer").unwrap();
    let err = run_step(&p, answer, &mut state, &env).await.unwrap_err();
    // The context is over its budget in the contract, so the step refuses it before it is
    // counted against the window: nothing leaves.
    assert_eq!(err.code(), "PIPELINE_INPUT_OVER_BUDGET", "{err}");
    assert!(err.to_string().contains("`answer`") && err.to_string().contains("max_context_tokens"), "{err}");
    assert!(model.exchanges().is_empty(), "the request was sent");
    assert_eq!(state, before);
}
