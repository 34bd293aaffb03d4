//! Spend caps at run time, against the offline model (which reports its exact usage): a run that
//! loops on a `call_model` step is stopped exactly before the request that could pass
//! `max_cost_per_run`, with what was spent and what is left; the run's spend is what its step
//! reports say and never more than the cost bound proven at load; a conversation's cap counts
//! every run; the model reads what it has left through `budget_remaining_usd`; and, over random
//! loop limits, output limits, prices, questions and caps, no run spends more than its proven
//! bound or its cap — on one model, and on two named models with their own encodings and prices.

use std::collections::BTreeMap;

use ctx_runtime::ErrorCode;
use ctx_runtime::error::CtxError;
use ctx_runtime::llm::offline::OfflineModel;
use ctx_runtime::pipeline::{
    BUDGET_REMAINING_USD, CallModelSpec, CapScope, LoadOptions, LoadedConversation, LoadedPipeline, LoopGuardSpec,
    ModelSource, ModelSpec, PipelineDef, PipelineError, PriceSpec, PromptSpec, SettingsSpec, Snapshot, StepDef,
    StepDetail, StepEnv, StepKind, StepReport, UserPartSpec,
};
use ctx_runtime::state::PipelineState;

const LOOPS: i64 = 4;

/// `guard` allows `LOOPS` visits of `ask`, a `call_model` step that reads the question (and, with
/// `told`, the budget left); $1.00 per million input tokens, $2.00 per million output tokens.
fn definition(told: bool) -> PipelineDef {
    shaped(told, LOOPS, 200, (1.0, 2.0))
}

/// [`definition`] with `loops` visits of `ask`, its output limit and its price (input, output).
fn shaped(told: bool, loops: i64, output: i64, (input_price, output_price): (f64, f64)) -> PipelineDef {
    let mut parts = vec![UserPartSpec::new("user_question", "{}\n")];
    if told {
        parts.push(UserPartSpec::new(BUDGET_REMAINING_USD, "Budget left: {} USD"));
    }
    PipelineDef::new("Spend")
        .model(ModelSource::Inline(
            ModelSpec::default()
                .context_window(Some(8_192))
                .max_tokens(Some(256))
                .encoding(Some("cl100k_base".into()))
                .price(Some(PriceSpec::default().input(Some(input_price)).output(Some(output_price)))),
        ))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(Some(2_000))
                .budget_safety_margin_tokens(Some(128))
                .extra(BTreeMap::from([("max_turn_loops".to_owned(), loops)])),
        )
        .prompts(vec![PromptSpec::new("answer", Some("Answer the question in one sentence.".into()))])
        .steps(vec![
            StepDef::new("guard", StepKind::LoopGuard(LoopGuardSpec::new("max_turn_loops", "ask", "end"))),
            StepDef::new(
                "ask",
                StepKind::CallModel(
                    CallModelSpec::new("answer", "guard").max_output_tokens(Some(output)).user_parts(parts),
                ),
            ),
        ])
}

/// [`shaped`] on two named models: each pass first asks a `small` model (cl100k_base, a 4,096
/// window, `small_price`) to shorten the question, then the `strong` one (o200k_base, 8,192,
/// `strong_price`) to answer it. The two encodings count the same text differently, so a bound
/// that used the wrong model's counter or price for a step would show.
fn tiered(told: bool, loops: i64, output: i64, small_price: (f64, f64), strong_price: (f64, f64)) -> PipelineDef {
    let model = |window: i64, encoding: &str, (input, output): (f64, f64)| {
        ModelSpec::default()
            .context_window(Some(window))
            .max_tokens(Some(256))
            .encoding(Some(encoding.into()))
            .price(Some(PriceSpec::default().input(Some(input)).output(Some(output))))
    };
    let mut def = shaped(told, loops, output, strong_price);
    def.model = ModelSource::Inline(ModelSpec::default());
    def.models = vec![
        ("small".to_owned(), model(4_096, "cl100k_base", small_price)),
        ("strong".to_owned(), model(8_192, "o200k_base", strong_price)),
    ];
    def.prompts.push(PromptSpec::new("shorten", Some("Rewrite the question in one short line.".into())));
    def.steps = vec![
        StepDef::new("guard", StepKind::LoopGuard(LoopGuardSpec::new("max_turn_loops", "shorten", "end"))),
        StepDef::new(
            "shorten",
            StepKind::CallModel(
                CallModelSpec::new("shorten", "ask")
                    .model(Some("small".into()))
                    .max_output_tokens(Some(output.min(200)))
                    .user_parts(vec![UserPartSpec::new("user_question", "{}\n")]),
            ),
        ),
        def.steps[1].clone(),
    ];
    if let StepKind::CallModel(ask) = &mut def.steps[2].kind {
        *ask = ask.clone().model(Some("strong".into()));
    }
    def
}

fn load(opts: LoadOptions) -> LoadedPipeline {
    LoadedPipeline::load(definition(false), opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Each request's (spend, worst case) in nano-USD, from a run's reports.
fn requests(reports: &[StepReport]) -> Vec<(u64, u64)> {
    reports
        .iter()
        .filter_map(|r| match &r.detail {
            StepDetail::CallModel(c) => {
                let spend = c.request.spend.expect("priced").nano_usd;
                // The worst case the cap is checked against: the exact prompt at the input price,
                // the whole output limit at the output price.
                let worst = c.request.prompt_tokens as u64 * 1_000 + c.request.max_output_tokens as u64 * 2_000;
                Some((spend, worst))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_run_stops_exactly_before_the_request_that_could_pass_its_cap() {
    let question = "What does the invoice total include?";
    // Uncapped: every request's spend, from the offline model's exact usage.
    let free = load(LoadOptions::new());
    let model = Recorder::new(free.counter());
    let env = StepEnv::builder().model(&model);
    let (state, reports) = free.run(PipelineState::new(question), &env).await.unwrap();
    let sent = requests(&reports);
    assert_eq!(sent.len(), LOOPS as usize);
    let spent: u64 = sent.iter().map(|(s, _)| s).sum();
    assert_eq!(state.spend.run_nano_usd, spent);
    let report = free.report(&reports);
    assert_eq!(report.spent_nano_usd, Some(spent));
    // The proven bound: `ask` runs LOOPS times, and no run spends more.
    let bound = free.cost_bound().expect("priced");
    assert_eq!(bound.steps.iter().map(|s| (s.step_id.as_str(), s.runs)).collect::<Vec<_>>(), [("ask", 4)]);
    assert!(spent <= bound.nano_usd, "{spent} > {}", bound.nano_usd);
    assert_eq!(report.worst_case_nano_usd, Some(bound.nano_usd));

    // A cap one billionth short of the third request's worst case: two requests are sent, and
    // the run stops before the third, naming what was spent and what is left.
    let before_third = sent[0].0 + sent[1].0;
    let cap = before_third + sent[2].1 - 1;
    let capped = load(LoadOptions::new().max_cost_per_run(cap as f64 / 1e9));
    assert_eq!(capped.spend_caps().per_run_nano_usd, Some(cap));
    let recorder = Recorder::new(capped.counter());
    let env = StepEnv::builder().model(&recorder);
    let mut snapshot = Snapshot::start(&capped, PipelineState::new(question));
    let err = capped.resume(&mut snapshot, &env).await.unwrap_err();
    assert_eq!(err.code(), "PIPELINE_SPEND_CAP_REACHED");
    let CtxError::Pipeline(PipelineError::SpendCapReached {
        step,
        scope,
        cap_nano_usd,
        spent_nano_usd,
        request_nano_usd,
        ..
    }) = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((step.as_str(), *scope), ("ask", CapScope::Run));
    assert_eq!((*cap_nano_usd, *spent_nano_usd, *request_nano_usd), (cap, before_third, sent[2].1));
    assert_eq!(recorder.count(), 2, "the third request was never sent");
    // The snapshot is at the step that stopped, with the spend of the two requests.
    assert_eq!(snapshot.next_step, "ask");
    assert_eq!(snapshot.state.spend.run_nano_usd, before_third);
    let text = err.to_string();
    for part in ["step `ask`", "the run has spent", "left", "could cost"] {
        assert!(text.contains(part), "{part:?} missing from {text}");
    }

    // At exactly the third request's worst case the third request is sent.
    let capped = load(LoadOptions::new().max_cost_per_run((before_third + sent[2].1) as f64 / 1e9));
    let recorder = Recorder::new(capped.counter());
    let env = StepEnv::builder().model(&recorder);
    let err = capped.run(PipelineState::new(question), &env).await.unwrap_err();
    assert_eq!(err.code(), "PIPELINE_SPEND_CAP_REACHED");
    assert_eq!(recorder.count(), 3);
}

#[tokio::test]
async fn the_settings_cap_holds_and_a_conversation_cap_counts_every_run() {
    // `settings.max_cost_per_run`, large enough for a whole run: the runs end normally.
    let mut def = definition(false);
    def.settings = def.settings.clone().max_cost_per_run(Some(1.0));
    let p = LoadedPipeline::load(def, LoadOptions::new().max_cost_per_conversation(1.0)).unwrap();
    assert_eq!(p.spend_caps().per_run_nano_usd, Some(1_000_000_000));
    let model = OfflineModel::new(p.counter().clone());
    let env = StepEnv::builder().model(&model);
    let (_, reports) = p.run(PipelineState::new("Why?"), &env).await.unwrap();
    let sent = requests(&reports);
    let one_run: u64 = sent.iter().map(|(s, _)| s).sum();
    // Every request of these runs is the same (no history): `a` spent, `w` at worst.
    let (a, w) = sent[0];
    assert!(sent.iter().all(|&r| r == (a, w)));

    // A conversation capped so that the third question's second request could pass it: the two
    // first questions end, the third stops there, and the conversation's spend is carried from
    // question to question.
    let cap = 2 * one_run + a + w - 1;
    let p = load(LoadOptions::new().max_cost_per_conversation(cap as f64 / 1e9));
    let model = OfflineModel::new(p.counter().clone());
    let env = StepEnv::builder().model(&model);
    let mut conversation = LoadedConversation::new(p);
    conversation.ask("Why?", &env).await.unwrap();
    assert_eq!(conversation.state().spend.conversation_nano_usd, one_run);
    conversation.ask("Why?", &env).await.unwrap();
    assert_eq!(conversation.state().spend.conversation_nano_usd, 2 * one_run);
    let err = conversation.ask("Why?", &env).await.unwrap_err();
    let CtxError::Pipeline(PipelineError::SpendCapReached { scope, spent_nano_usd, cap_nano_usd, .. }) = &err else {
        panic!("{err:?}")
    };
    assert_eq!((*scope, *cap_nano_usd, *spent_nano_usd), (CapScope::Conversation, cap, 2 * one_run + a));
    // The failed question's first request was paid for: the conversation counts it, nothing else
    // of that run is kept.
    assert_eq!(conversation.state().spend.conversation_nano_usd, 2 * one_run + a);
    assert_eq!(conversation.turns(), 2);
}

#[tokio::test]
async fn the_model_is_told_what_it_has_left() {
    let told = |opts| LoadedPipeline::load(definition(true), opts).unwrap_or_else(|e| panic!("{e}"));
    let free = told(LoadOptions::new());
    let recorder = Recorder::new(free.counter());
    let env = StepEnv::builder().model(&recorder);
    free.run(PipelineState::new("Why?"), &env).await.unwrap();
    assert_eq!(recorder.budget_lines(), vec!["Budget left: unlimited USD"; LOOPS as usize]);

    // With a cap: before each request, the cap less what the requests before it cost.
    let cap = 1_000_000_000;
    let capped = told(LoadOptions::new().max_cost_per_run(1.0));
    let recorder = Recorder::new(capped.counter());
    let env = StepEnv::builder().model(&recorder);
    let (_, reports) = capped.run(PipelineState::new("Why?"), &env).await.unwrap();
    let mut left = cap;
    let mut expected = Vec::new();
    for (spend, _) in requests(&reports) {
        expected.push(budget_line(left));
        left -= spend;
    }
    assert_eq!(recorder.budget_lines(), expected);
}

#[test]
fn a_cap_needs_a_price_and_a_positive_amount() {
    let err = LoadedPipeline::load(definition(false), LoadOptions::new().max_cost_per_run(-1.0)).unwrap_err();
    assert_eq!(err.code(), "INVALID_MAX_COST_PER_RUN");
    let mut unpriced = definition(false);
    let ModelSource::Inline(spec) = &unpriced.model else { unreachable!() };
    unpriced.model = ModelSource::Inline(spec.clone().price(None));
    let err = LoadedPipeline::load(unpriced, LoadOptions::new().max_cost_per_conversation(0.5)).unwrap_err();
    assert_eq!(err.code(), "MISSING_PRICE");
    assert!(err.to_string().contains("max_cost_per_conversation"), "{err}");
}

fn budget_line(left_nano: u64) -> String {
    format!("Budget left: {} USD", ctx_runtime::contract::usd(left_nano).trim_start_matches('$'))
}

/// The offline model, recording the requests it answers.
struct Recorder {
    inner: OfflineModel,
    seen: std::sync::Mutex<Vec<ctx_runtime::llm::ChatRequest>>,
}

impl Recorder {
    fn new(counter: &ctx_runtime::tokens::TokenCounter) -> Self {
        Recorder { inner: OfflineModel::new(counter.clone()), seen: std::sync::Mutex::new(Vec::new()) }
    }

    fn count(&self) -> usize {
        self.seen.lock().map(|s| s.len()).unwrap_or(0)
    }

    /// The `Budget left` line of each request's user message.
    fn budget_lines(&self) -> Vec<String> {
        let seen = self.seen.lock().map(|s| s.clone()).unwrap_or_default();
        seen.iter()
            .filter_map(|r| r.messages.last())
            .filter_map(|m| m.content.lines().find(|l| l.starts_with("Budget left")).map(str::to_owned))
            .collect()
    }
}

impl ctx_runtime::llm::ChatModel for Recorder {
    fn model_name(&self) -> &str {
        "recorder"
    }

    async fn chat(
        &self,
        request: &ctx_runtime::llm::ChatRequest,
    ) -> Result<ctx_runtime::llm::ChatResponse, ctx_runtime::llm::ModelError> {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(request.clone());
        }
        self.inner.chat(request).await
    }
}

mod spend_props {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// No run spends more than the bound proven at load, nor more than its cap; a capped run
        /// either ends or stops with `PIPELINE_SPEND_CAP_REACHED` before the request that could
        /// pass it.
        #[test]
        fn no_run_spends_more_than_its_bound_or_its_cap(
            loops in 1i64..6,
            output in 16i64..600,
            input_price in prop::sample::select(vec![0.05, 0.4, 1.25, 2.5, 15.0]),
            output_factor in prop::sample::select(vec![1.0, 4.0, 8.0]),
            words in 1usize..300,
            told in any::<bool>(),
            cap_share in 0.0f64..1.2,
            small_price in prop::option::of(prop::sample::select(vec![0.02, 0.15, 0.4])),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let strong_price = (input_price, input_price * output_factor);
            // With a small model's price, the pipeline runs on two named models (see `tiered`).
            let def = match small_price {
                Some(p) => tiered(told, loops, output, (p, p * output_factor), strong_price),
                None => shaped(told, loops, output, strong_price),
            };
            let steps_per_pass = if small_price.is_some() { 2 } else { 1 };
            let question = "why is the invoice total higher than the sum of its lines ".repeat(words / 10 + 1);
            let free = LoadedPipeline::load(def.clone(), LoadOptions::new()).unwrap();
            let bound = free.cost_bound().expect("priced").nano_usd;
            // Each named model gets its own client, counting with that model's counter.
            let small = OfflineModel::new(free.step_model("shorten").counter.clone());
            let strong = OfflineModel::new(free.step_model("ask").counter.clone());
            let models: [(&str, &dyn ctx_runtime::llm::ChatModelDyn); 2] = [("small", &small), ("strong", &strong)];
            let env = if small_price.is_some() {
                StepEnv::builder().models(&models)
            } else {
                StepEnv::builder().model(&strong)
            };
            let (state, reports) = runtime.block_on(free.run(PipelineState::new(question.clone()), &env)).unwrap();
            prop_assert_eq!(requests(&reports).len(), loops as usize * steps_per_pass);
            prop_assert!(state.spend.run_nano_usd <= bound, "{} > {}", state.spend.run_nano_usd, bound);
            if small_price.is_some() {
                // The bound names each step on its own model.
                let report = free.cost_bound().expect("priced");
                let on = |id: &str| report.steps.iter().find(|s| s.step_id == id).map(|s| s.runs);
                prop_assert_eq!((on("shorten"), on("ask")), (Some(loops as u64), Some(loops as u64)));
            }

            let cap = ((bound as f64 * cap_share) as u64).max(1);
            let capped = LoadedPipeline::load(def, LoadOptions::new().max_cost_per_run(cap as f64 / 1e9)).unwrap();
            let mut snapshot = Snapshot::start(&capped, PipelineState::new(question));
            match runtime.block_on(capped.resume(&mut snapshot, &env)) {
                Ok(_) => prop_assert!(snapshot.is_finished()),
                Err(e) => prop_assert_eq!(e.code(), "PIPELINE_SPEND_CAP_REACHED"),
            }
            prop_assert!(snapshot.state.spend.run_nano_usd <= cap, "{} > {}", snapshot.state.spend.run_nano_usd, cap);
        }
    }
}
