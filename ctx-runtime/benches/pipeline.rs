//! What validating a pipeline costs — the work the `pipeline!` macro adds to a compile and
//! `LoadedPipeline::load` to a start-up:
//!
//! * the graph rules on a generated 300-step pipeline (100 guarded loops in a row): our
//!   depth-first search of the graph without `on_allow` edges, linear in steps + transitions,
//!   against the naive way to decide "is there a cycle that avoids every guard" — a transitive
//!   closure (Floyd–Warshall), cubic in steps;
//! * `validate_definition` on the spec's compaction loop, with and without the token check (the
//!   budget contract counted with the real tokenizer).
//! * one `call_model` request end to end (`LoadedPipeline::run` of a one-step pipeline: render,
//!   history trim, negotiation, the guard's exact count, the send to a model that answers at
//!   once), with the context of twenty nodes and a ten-message history: the run time's own
//!   overhead per model request, with no subscriber listening (the common case) and with the
//!   run's report built from its step reports (the request's anatomy cut into parts).
//!
//! Run briefly: `cargo bench -p ctx-runtime --bench pipeline -- --warm-up-time 1 --measurement-time 3`.

use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ctx_runtime::llm::{ChatModel, ChatRequest, ChatResponse, ModelError, Usage};
use ctx_runtime::pipeline::*;
use ctx_runtime::{ChatMessage, PipelineState};

fn step(id: String, kind: StepKind) -> StepDef {
    StepDef::new(id, kind)
}

fn base(name: &str, steps: Vec<StepDef>) -> PipelineDef {
    PipelineDef::new(name)
        .model(ModelSource::Inline(
            ModelSpec::default()
                .context_window(Some(16_384))
                .max_tokens(Some(1_024))
                .encoding(Some("cl100k_base".into())),
        ))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(Some(9_000))
                .max_history_tokens(Some(2_000))
                .budget_safety_margin_tokens(Some(128))
                .extra(BTreeMap::from([("max_turn_loops".to_owned(), 3)])),
        )
        .prompts(vec![
            PromptSpec::new("answer", Some("Answer from the context; quote identifiers exactly.".into())),
            PromptSpec::new("summarizer", Some("Summarise the context; keep SQL verbatim.".into())),
        ])
        .steps(steps)
}

/// `loops` guarded loops in a row: work_k → guard_k (on_allow: work_k, on_deny: next_k) → next_k → work_{k+1}.
fn chain(loops: usize) -> PipelineDef {
    let mut steps = Vec::with_capacity(3 * loops);
    for k in 0..loops {
        let after = if k + 1 == loops { END.to_owned() } else { format!("work_{}", k + 1) };
        steps.push(step(
            format!("work_{k}"),
            StepKind::SetVariables(SetVariablesSpec::default().next(format!("guard_{k}"))),
        ));
        steps.push(step(
            format!("guard_{k}"),
            StepKind::LoopGuard(LoopGuardSpec::new("max_turn_loops", format!("work_{k}"), format!("next_{k}"))),
        ));
        steps.push(step(format!("next_{k}"), StepKind::SearchNodes(SearchNodesSpec::new(5, after))));
    }
    base("Chain", steps)
}

/// The naive decision: close the graph without `on_allow` edges transitively and look for a step
/// that reaches itself.
fn naive_has_unguarded_cycle(def: &PipelineDef) -> bool {
    let index: HashMap<&str, usize> = def.steps.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
    let n = def.steps.len();
    let mut reach = vec![vec![false; n]; n];
    for (i, s) in def.steps.iter().enumerate() {
        let guard = matches!(s.kind, StepKind::LoopGuard(_));
        for (key, target) in s.kind.transitions() {
            if guard && key == "on_allow" {
                continue;
            }
            if let Some(&j) = index.get(target) {
                reach[i][j] = true;
            }
        }
    }
    for k in 0..n {
        let through_k = reach[k].clone();
        for row in reach.iter_mut() {
            if row[k] {
                for (cell, &via) in row.iter_mut().zip(&through_k) {
                    *cell |= via;
                }
            }
        }
    }
    (0..n).any(|i| reach[i][i])
}

fn compaction_loop() -> PipelineDef {
    let call = |prompt: &str, next: &str, history: bool| {
        StepKind::CallModel(
            CallModelSpec::new(prompt, next)
                .user_parts(vec![
                    UserPartSpec::new("context_blocks", "### Context:\n{}\n\n"),
                    UserPartSpec::new("user_question_en", "### User:\n{}\n\n"),
                ])
                .use_history(history),
        )
    };
    base(
        "CodeQa",
        vec![
            step("search".into(), StepKind::SearchNodes(SearchNodesSpec::new(20, "fetch"))),
            step("fetch".into(), StepKind::FetchNodeTexts(FetchSpec::new(3_000, "manage_budget"))),
            step(
                "manage_budget".into(),
                StepKind::ManageContextBudget(
                    ManageBudgetSpec::new("answer", "guard")
                        .compact_code(vec![CompactRuleSpec::new("sql", "threshold").threshold(Some(0.4))])
                        .divide_new_content(Some("<<<New content".into())),
                ),
            ),
            step("guard".into(), StepKind::LoopGuard(LoopGuardSpec::new("max_turn_loops", "summarize", "answer"))),
            step("summarize".into(), call("summarizer", "set_context", false)),
            step(
                "set_context".into(),
                StepKind::SetVariables(SetVariablesSpec::new(
                    vec![SetRuleSpec::new(
                        "context_blocks",
                        SetValueSpec::From {
                            from: "last_model_response".into(),
                            transform: Some("to_context_blocks".into()),
                        },
                    )],
                    "manage_budget",
                )),
            ),
            step("answer".into(), call("answer", END, true)),
        ],
    )
}

fn bench(c: &mut Criterion) {
    let structural = ValidateOptions::default().check_tokens(false).env_limits_policy(None).base_dir(None);
    let big = chain(100);
    assert!(validate_definition(&big, &structural).is_empty());
    assert!(!naive_has_unguarded_cycle(&big));
    let mut g = c.benchmark_group("graph_rules_300_steps");
    g.bench_function("validate_definition_structural", |b| {
        b.iter(|| validate_definition(black_box(&big), &structural))
    });
    g.bench_function("naive_transitive_closure_cycle_check_only", |b| {
        b.iter(|| naive_has_unguarded_cycle(black_box(&big)))
    });
    g.finish();

    let spec = compaction_loop();
    let full = ValidateOptions::default();
    assert!(validate_definition(&spec, &full).is_empty());
    let mut g = c.benchmark_group("validate_spec_pipeline");
    g.bench_function("structural", |b| b.iter(|| validate_definition(black_box(&spec), &structural)));
    g.bench_function("with_contract_token_check", |b| b.iter(|| validate_definition(black_box(&spec), &full)));
    g.finish();
}

/// A model that answers at once, so a request's time is ctx's own.
struct Instant;

impl ChatModel for Instant {
    fn model_name(&self) -> &str {
        "instant"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        Ok(ChatResponse::new("The procedure reads dbo.Orders and returns the total per customer.")
            .usage(request.predicted_prompt_tokens.map(|p| Usage::new(p, 14)))
            .finish_reason(Some("stop".into())))
    }
}

/// One `answer` step with the context and the history in its request.
fn one_request() -> (LoadedPipeline, PipelineState) {
    let def = base(
        "OneRequest",
        vec![step(
            "answer".into(),
            StepKind::CallModel(
                CallModelSpec::new("answer", END)
                    .user_parts(vec![
                        UserPartSpec::new("context_blocks", "### Context:\n{}\n\n"),
                        UserPartSpec::new("user_question", "### User:\n{}\n\n"),
                    ])
                    .use_history(true),
            ),
        )],
    );
    let p = LoadedPipeline::load(def, LoadOptions::new()).expect("the pipeline loads");
    let mut state = PipelineState::new("Which tables does usp_Total read, and what does it return per customer?");
    state.context_blocks = (0..20)
        .map(|i| {
            format!(
                "--- NODE ---\nid: dbo.usp_Total_{i}\n\nCREATE PROCEDURE dbo.usp_Total_{i} @CustomerId INT AS\n\
                 SELECT c.Name, SUM(o.Amount) AS Total FROM dbo.Orders o JOIN dbo.Customers c ON c.Id = o.CustomerId\n\
                 WHERE o.CustomerId = @CustomerId AND o.Status <> 'cancelled' GROUP BY c.Name; -- node {i}"
            )
        })
        .collect();
    state.history_dialog = (0..5)
        .flat_map(|i| {
            [
                ChatMessage::user(format!("Earlier question {i}: what does usp_Total_{i} join?")),
                ChatMessage::assistant(format!("It joins dbo.Orders with dbo.Customers on the customer id ({i}).")),
            ]
        })
        .collect();
    (p, state)
}

fn request(c: &mut Criterion) {
    let (p, state) = one_request();
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let env = StepEnv::builder().model(&Instant);
    let (_, reports) = runtime.block_on(p.run(state.clone(), &env)).expect("the request runs");
    let report = p.report(&reports);
    assert_eq!(report.requests.len(), 1);
    assert_eq!(report.requests[0].anatomy.parts_total(), report.requests[0].anatomy.prompt_tokens);
    let mut g = c.benchmark_group("call_model_request");
    g.bench_function("run", |b| b.iter(|| runtime.block_on(p.run(black_box(state.clone()), &env)).expect("runs")));
    g.bench_function("run_and_report", |b| {
        b.iter(|| {
            let (_, reports) = runtime.block_on(p.run(black_box(state.clone()), &env)).expect("runs");
            p.report(&reports)
        })
    });
    g.finish();
}

criterion_group!(benches, bench, request);
criterion_main!(benches);
