//! A model step whose request is a declared context's assembly, in the contract: the context's
//! input budget stands for the fixed prompt, the history and `max_context_tokens`, and what the
//! engine assembles within it always passes the last guard of the request the contract admitted.

use std::collections::BTreeMap;

use ctx_runtime::config::{LimitsPolicy, ModelConfig, Settings};
use ctx_runtime::contract::{CallModelCheck, ClampTarget, check_contract, context_term, guard_request};
use ctx_runtime::engine::{
    AssemblyInput, ContextAssembler, ContextDeclaration, ContextPolicySpec, EngineSpec, InputBudgetSpec, MessageSpec,
};
use ctx_runtime::pipeline::CallModelSpec;
use ctx_runtime::{ChatMessage, Encoding, FieldPath, TokenCounter};
use proptest::prelude::*;

const PROMPT: &str = "Answer from the policy.";

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

fn model(window: usize) -> ModelConfig {
    ModelConfig::new(window, Encoding::Cl100kBase).model(None).max_tokens(None)
}

fn settings(ctx: usize, margin: usize, policy: LimitsPolicy) -> Settings {
    // A step laying out its own request renders the question: a one-token budget, declared.
    Settings::new(ctx)
        .max_history_tokens(None)
        .safety_margin_tokens(margin)
        .policy(policy)
        .max_question_tokens(Some(1))
        .extra(BTreeMap::new())
}

/// One context, `support`, bounded by `budget`: the history, then the question.
fn engine(budget: i64) -> EngineSpec {
    EngineSpec {
        contexts: vec![ContextDeclaration {
            name: "support".into(),
            inputs: vec!["question".into()],
            policy: Some(ContextPolicySpec {
                input_budget: Some(InputBudgetSpec { max_tokens: budget }),
                overflow: Some("compact".into()),
                ..ContextPolicySpec::default()
            }),
            messages: vec![MessageSpec::History, MessageSpec::User { content: "Question: {input.question}".into() }],
        }],
        ..EngineSpec::default()
    }
}

fn at(id: &str) -> FieldPath {
    FieldPath::root().key("steps").key(id)
}

#[test]
fn the_input_budget_replaces_prompt_history_and_context() {
    let engine = engine(300);
    // `use_history` needs no `max_history_tokens` here: the context bounds the history it assembles.
    let spec = CallModelSpec::new("answer", "end").max_output_tokens(Some(200)).use_history(true);
    let term = context_term(&engine, "support", "answer", &at("answer")).unwrap();
    let check = || CallModelCheck::new(at("answer"), "answer", &spec, PROMPT).with_context(term);

    let report = check_contract(&model(550), &settings(4_000, 50, LimitsPolicy::FailFast), &[check()], &counter())
        .expect("300 + 200 + 50 fits 550");
    let step = report.step("answer").unwrap();
    assert_eq!((step.fixed_prompt_tokens, step.history_tokens, step.context_tokens), (300, 0, 0));
    assert_eq!((step.total_tokens(), step.headroom()), (550, 0));

    let issues =
        check_contract(&model(549), &settings(4_000, 50, LimitsPolicy::FailFast), &[check()], &counter()).unwrap_err();
    assert_eq!(issues.len(), 1);
    let text = issues[0].to_string();
    assert_eq!(issues[0].code, "BUDGET_CONTRACT_VIOLATED");
    assert!(
        text.contains("context `support` input_budget.max_tokens 300 (system prompt, history, packs and user message")
            && text.contains("= 550")
            && text.contains("lower `input_budget.max_tokens` of context `support` from 300 to 299"),
        "{text}"
    );
    assert!(!text.contains("max_context_tokens 4000"), "the step does not use max_context_tokens: {text}");
}

#[test]
fn auto_clamp_lowers_max_context_tokens_for_the_other_steps_only() {
    let engine = engine(900);
    let plain = CallModelSpec::new("answer", "end").max_output_tokens(Some(100));
    let assembled = CallModelSpec::new("answer", "end").max_output_tokens(Some(300));
    let term = context_term(&engine, "support", "support", &at("support")).unwrap();
    let checks = [
        CallModelCheck::new(at("plain"), "plain", &plain, PROMPT),
        CallModelCheck::new(at("support"), "support", &assembled, PROMPT).with_context(term),
    ];
    let report =
        check_contract(&model(1_000), &settings(5_000, 0, LimitsPolicy::AutoClamp), &checks, &counter()).unwrap();
    let targets: Vec<(ClampTarget, &str)> =
        report.clamps.iter().map(|c| (c.target.clone(), c.step_id.as_str())).collect();
    assert_eq!(targets, [(ClampTarget::MaxContextTokens, "plain"), (ClampTarget::MaxOutputTokens, "support")]);
    let support = report.step("support").unwrap();
    assert_eq!((support.output_tokens, support.context_tokens, support.total_tokens()), (100, 0, 1_000));
    assert!(report.step("plain").unwrap().total_tokens() <= 1_000);
}

#[test]
fn a_context_that_cannot_fit_even_clamped_is_unsatisfiable() {
    let engine = engine(1_000);
    let spec = CallModelSpec::new("answer", "end").max_output_tokens(Some(100));
    let term = context_term(&engine, "support", "answer", &at("answer")).unwrap();
    let checks = [CallModelCheck::new(at("answer"), "answer", &spec, PROMPT).with_context(term)];
    let issues =
        check_contract(&model(1_000), &settings(10, 0, LimitsPolicy::AutoClamp), &checks, &counter()).unwrap_err();
    assert_eq!(issues[0].code, "BUDGET_CONTRACT_UNSATISFIABLE");
    let text = issues[0].to_string();
    assert!(text.contains("context `support` input_budget.max_tokens 1000 + margin 0 + 1 = 1001"), "{text}");
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever the history and the question, the assembly of a context the contract admitted
    /// passes the last guard with the step's output limit: the contract's term is sound.
    #[test]
    fn an_admitted_context_always_passes_the_guard(
        turns in prop::collection::vec("[a-z ]{0,120}", 0..12),
        question in "[a-z ?]{1,80}",
        budget in 120i64..400,
        output in 1usize..300,
        margin in 0usize..40,
    ) {
        let c = counter();
        let engine = engine(budget);
        let spec = CallModelSpec::new("answer", "end").max_output_tokens(Some(output as i64)).use_history(true);
        let term = context_term(&engine, "support", "answer", &at("answer")).unwrap();
        let window = budget as usize + output + margin;
        let check = CallModelCheck::new(at("answer"), "answer", &spec, PROMPT).with_context(term);
        let report = check_contract(&model(window), &settings(1, margin, LimitsPolicy::FailFast), &[check], &c).unwrap();
        let granted = report.step("answer").unwrap().output_tokens;

        let history: Vec<ChatMessage> = turns
            .iter()
            .enumerate()
            .map(|(i, t)| if i % 2 == 0 { ChatMessage::user(t.as_str()) } else { ChatMessage::assistant(t.as_str()) })
            .collect();
        let assembler = ContextAssembler::builder(engine.clone(), c.clone()).build().unwrap();
        let input = AssemblyInput::new().input("question", question.as_str()).history(history).base_system_prompt(PROMPT);
        // A question too long for the budget is the engine's typed error; anything it returns fits.
        if let Ok(assembly) = block_on(assembler.assemble("support", &input)) {
            let messages = assembly.messages();
            prop_assert!(assembly.report.total_tokens <= budget as usize);
            prop_assert!(guard_request("answer", &messages, &[], granted, window, &c).is_ok());
        }
    }
}
