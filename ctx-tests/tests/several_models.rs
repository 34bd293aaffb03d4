//! Several models in one pipeline: a summarise step on a small model and an answer step on a
//! strong one, each against its own scripted client. Each request must reach its own client,
//! be counted with its model's encoding, fit its model's window and be priced at its model's
//! price; the cost bound names each step's model; a missing client is a typed error.

use std::sync::Mutex;

use ctx::codes::ErrorCode as _;
use ctx::config::{ModelConfig, Price};
use ctx::definition::ModelSpec;
use ctx::llm::{ChatModel, ChatModelDyn, ChatRequest, ChatResponse, ModelError, Spend};
use ctx::pipeline::{LoadedPipeline, StepDetail, StepEnv};
use ctx::{FieldPath, PipelineState};

ctx::pipeline! {
    /// Summarises the question with a small model, answers with a strong one.
    pub pipeline Tiered {
        models {
            small { model: "gpt-4o-mini", context_window: 4_096, max_tokens: 200, encoding: cl100k_base,
                    price: { input: 0.15, cached_input: 0.075, output: 0.60 } },
            strong { model: "gpt-4o", context_window: 16_384, max_tokens: 512,
                     price: { input: 2.50, cached_input: 1.25, output: 10.00 } },
        }
        settings { max_context_tokens: 2_000, max_cost_per_run: 0.05 }
        prompts {
            summarise: "Rewrite the question in one short line.",
            answer: "Answer the question in one paragraph.",
        }
        steps {
            summarise: call_model { prompt_key: summarise, model: small, user_parts: [ user_question => "{}" ], next: answer },
            answer: call_model { prompt_key: answer, model: strong, user_parts: [ last_model_response => "{}" ], next: end },
        }
    }
}

/// Replies with its own text and keeps every request it is sent.
struct Scripted {
    name: &'static str,
    reply: &'static str,
    requests: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    fn new(name: &'static str, reply: &'static str) -> Self {
        Scripted { name, reply, requests: Mutex::new(Vec::new()) }
    }

    fn sent(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl ChatModel for Scripted {
    fn model_name(&self) -> &str {
        self.name
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        Ok(ChatResponse::new(self.reply))
    }
}

/// A question whose count differs between cl100k_base and o200k_base, so a request counted with
/// the wrong model's encoding would show.
const QUESTION: &str = "Которые из наших сервисов работают на Kubernetes, а какие — на виртуальных машинах?";

/// The model's own counter, built here from its declaration, not taken from the pipeline.
fn counter_of(model: &str, window: i64, encoding: Option<&str>) -> ctx::TokenCounter {
    let spec =
        ModelSpec::default().model(Some(model.into())).context_window(Some(window)).encoding(encoding.map(Into::into));
    ModelConfig::from_spec(&spec, &FieldPath::root().key("models")).unwrap().counter()
}

#[tokio::test]
async fn each_step_uses_its_own_model_for_the_request_the_count_the_window_and_the_price() {
    let small = Scripted::new("gpt-4o-mini", "Which services run on Kubernetes or on VMs?");
    let strong = Scripted::new("gpt-4o", "The API and the workers run on Kubernetes; the database on VMs.");
    let env = TieredEnv { model_small: &small, model_strong: &strong };
    let (_, reports) = Tiered::new().unwrap().run(PipelineState::new(QUESTION), &env).await.unwrap();

    // Each request went to its own client, once.
    let (to_small, to_strong) = (small.sent(), strong.sent());
    assert_eq!((to_small.len(), to_strong.len()), (1, 1));
    assert!(to_small[0].messages[0].content.starts_with("Rewrite"), "{:?}", to_small[0].messages);
    assert!(to_strong[0].messages[0].content.starts_with("Answer"), "{:?}", to_strong[0].messages);

    // Counted with its model's encoding: the guard's count is exactly that of the model's counter.
    let cl100k = counter_of("gpt-4o-mini", 4_096, Some("cl100k_base"));
    let o200k = counter_of("gpt-4o", 16_384, None);
    let small_count = cl100k.count_messages(&to_small[0].messages).unwrap();
    let strong_count = o200k.count_messages(&to_strong[0].messages).unwrap();
    assert_eq!(to_small[0].predicted_prompt_tokens, Some(small_count));
    assert_eq!(to_strong[0].predicted_prompt_tokens, Some(strong_count));
    assert_ne!(
        small_count,
        o200k.count_messages(&to_small[0].messages).unwrap(),
        "the question must count differently in the two encodings for this test to tell them apart"
    );

    // Within each model's own window and output limit.
    assert!(to_small[0].max_tokens <= 200 && small_count + to_small[0].max_tokens <= 4_096);
    assert!(to_strong[0].max_tokens <= 512 && strong_count + to_strong[0].max_tokens <= 16_384);
    assert!(to_strong[0].max_tokens > 200, "the strong step has the strong model's output limit");

    // Priced at each model's price (from the exact counts: the clients report no usage).
    let small_price = Price::from_spec(
        &ctx::definition::PriceSpec::default().input(Some(0.15)).cached_input(Some(0.075)).output(Some(0.60)),
        &FieldPath::root(),
    )
    .unwrap();
    let strong_price = Price::from_spec(
        &ctx::definition::PriceSpec::default().input(Some(2.50)).cached_input(Some(1.25)).output(Some(10.00)),
        &FieldPath::root(),
    )
    .unwrap();
    let spend = |i: usize| match &reports[i].detail {
        StepDetail::CallModel(c) => (c.request.prompt_tokens, c.context_window, c.request.spend.expect("priced")),
        other => panic!("{other:?}"),
    };
    let (prompt, window, spent) = spend(0);
    assert_eq!((prompt, window), (small_count, 4_096));
    let expected = Spend::from_counts(prompt, cl100k.count(small.reply).unwrap(), &small_price);
    assert_eq!(spent.nano_usd, expected.nano_usd);
    let (prompt, window, spent) = spend(1);
    assert_eq!((prompt, window), (strong_count, 16_384));
    let expected = Spend::from_counts(prompt, o200k.count(strong.reply).unwrap(), &strong_price);
    assert_eq!(spent.nano_usd, expected.nano_usd);
}

#[test]
fn the_cost_bound_prices_each_step_at_its_model() {
    let loaded = LoadedPipeline::load(Tiered::definition(), Default::default()).unwrap();
    let bound = loaded.cost_bound().expect("every model has a price");
    let arithmetic = bound.arithmetic();
    assert!(arithmetic.contains("step `summarise` on model `small`"), "{arithmetic}");
    assert!(arithmetic.contains("step `answer` on model `strong`"), "{arithmetic}");
    assert!(arithmetic.contains("$0.15/M") && arithmetic.contains("$2.50/M"), "{arithmetic}");
    let report = loaded.contract_report();
    assert_eq!(report.step("summarise").unwrap().context_window, 4_096);
    assert_eq!(report.step("answer").unwrap().context_window, 16_384);
    assert_eq!(report.step("summarise").unwrap().model.as_deref(), Some("small"));
}

#[tokio::test]
async fn a_missing_client_is_a_typed_error_naming_the_model() {
    let loaded = LoadedPipeline::load(Tiered::definition(), Default::default()).unwrap();
    let small = Scripted::new("gpt-4o-mini", "short");
    let models: [(&str, &dyn ChatModelDyn); 1] = [("small", &small)];
    let env = StepEnv::builder().models(&models);
    let err = loaded.run(PipelineState::new(QUESTION), &env).await.unwrap_err();
    assert_eq!(err.code(), "PIPELINE_MISSING_MODEL");
    assert!(err.to_string().contains("step `answer`") && err.to_string().contains("model `strong`"), "{err}");
    assert_eq!(small.sent().len(), 1, "the summarise step ran on its client");
}

#[tokio::test]
async fn a_config_json_declares_the_models_and_the_loaded_pipeline_takes_their_clients_by_name() {
    let dir = std::env::temp_dir().join(format!("ctx-several-models-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"model": "gpt-4o", "model_context_window": 16384,
            "models": {
              "small": {"model": "gpt-4o-mini", "model_context_window": 4096, "model_max_tokens": 200,
                        "encoding": "cl100k_base", "price": {"input": 0.30, "output": 1.20}},
              "strong": {"model": "gpt-4o", "model_context_window": 16384, "model_max_tokens": 512,
                         "price": {"input": 5.00, "output": 20.00}}}}"#,
    )
    .unwrap();
    let def =
        Tiered::definition().model(ctx::definition::ModelSource::ConfigFile("config.json".into())).models(Vec::new());
    let loaded = LoadedPipeline::load(def, ctx::pipeline::LoadOptions::new().base_dir(&dir)).unwrap();
    assert_eq!(loaded.step_model("summarise").config.context_window, 4_096);
    assert_eq!(loaded.step_model("answer").price.map(|p| p.input), Some(5.00));

    let small = Scripted::new("gpt-4o-mini", "Which services run on VMs?");
    let strong = Scripted::new("gpt-4o", "The database runs on VMs.");
    let models: [(&str, &dyn ChatModelDyn); 2] = [("small", &small), ("strong", &strong)];
    let (_, reports) = loaded.run(PipelineState::new(QUESTION), &StepEnv::builder().models(&models)).await.unwrap();
    assert_eq!((small.sent().len(), strong.sent().len()), (1, 1));
    let price = |input, output| {
        Price::from_spec(
            &ctx::definition::PriceSpec::default().input(Some(input)).output(Some(output)),
            &FieldPath::root(),
        )
        .unwrap()
    };
    let counter = loaded.step_model("answer").counter;
    let StepDetail::CallModel(answer) = &reports[1].detail else { panic!("{:?}", reports[1].detail) };
    let expected =
        Spend::from_counts(answer.request.prompt_tokens, counter.count(strong.reply).unwrap(), &price(5.00, 20.00));
    assert_eq!(answer.request.spend.map(|s| s.nano_usd), Some(expected.nano_usd));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_counter_given_to_the_loader_counts_for_every_named_model() {
    // A locally served model (`LocalModel::load`) counts every step with the server's tokenizer,
    // whichever model the step names; o200k_base stands in for it here.
    let o200k = counter_of("gpt-4o", 16_384, None);
    let loaded = LoadedPipeline::load_with_counter(Tiered::definition(), Default::default(), o200k.clone()).unwrap();
    let expected = o200k.count(QUESTION).unwrap();
    for step in ["summarise", "answer"] {
        assert_eq!(loaded.step_model(step).counter.count(QUESTION).unwrap(), expected, "{step}");
    }
    // Loaded without it, the small model counts with its own encoding, which counts differently.
    let own = LoadedPipeline::load(Tiered::definition(), Default::default()).unwrap();
    assert_ne!(own.step_model("summarise").counter.count(QUESTION).unwrap(), expected);
}
