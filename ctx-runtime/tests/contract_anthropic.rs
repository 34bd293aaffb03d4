//! A Claude model's contract without a key: counted with the declared encoding raised by the
//! margin, and saying so — in the report, in the violation message — so an estimate never reads
//! as a count. The same prompt and window that fit under GPT-4o's exact count do not fit under
//! the Claude estimate.

use std::collections::BTreeMap;

use ctx_runtime::config::{LimitsPolicy, ModelConfig, Settings};
use ctx_runtime::contract::{CallModelCheck, check_contract};
use ctx_runtime::pipeline::{CallModelSpec, ModelSpec, UserPartSpec};
use ctx_runtime::tokens::{Counting, DEFAULT_ANTHROPIC_MARGIN_PERCENT};
use ctx_runtime::{ChatFormat, ChatMessage, Encoding, FieldPath, TokenCounter};

const PROMPT: &str = "You answer questions about the attached contracts. Quote clause numbers verbatim.";

fn model(name: &str, window: i64) -> ModelConfig {
    let spec = ModelSpec::default()
        .model(Some(name.into()))
        .context_window(Some(window))
        .max_tokens(Some(512))
        .encoding(Some("o200k_base".into()));
    ModelConfig::from_spec(&spec, &FieldPath::root().key("model")).expect("valid model block")
}

fn settings() -> Settings {
    Settings::new(2_000)
        .max_history_tokens(None)
        .safety_margin_tokens(0)
        .policy(LimitsPolicy::FailFast)
        .extra(BTreeMap::new())
}

fn step() -> CallModelSpec {
    CallModelSpec::new("answer", "end").user_parts(vec![UserPartSpec::new("context_blocks", "### Context:\n{}\n\n")])
}

#[test]
fn a_claude_model_is_counted_with_the_declared_encoding_plus_the_margin_and_says_so() {
    let claude = model("claude-sonnet-4-5", 200_000);
    let counter = claude.counter();
    assert_eq!(counter.backend_id(), "ctx/o200k_base+30%");
    assert_eq!(counter.format().counting(), Counting::Estimated { margin_percent: DEFAULT_ANTHROPIC_MARGIN_PERCENT });
    let exact = TokenCounter::for_encoding(Encoding::O200kBase);
    let raised = |n: usize| (n * 130).div_ceil(100);
    assert_eq!(counter.count(PROMPT).unwrap(), raised(exact.count(PROMPT).unwrap()));

    let spec = step();
    let checks = [CallModelCheck::new(FieldPath::root().key("steps").key("answer"), "answer", &spec, PROMPT)];
    let report = check_contract(&claude, &settings(), &checks, &counter).expect("fits 200k");
    assert_eq!(report.counting.to_string(), "estimated, +30% margin");
    let fixed = report.step("answer").unwrap().fixed_prompt_tokens;
    let system = ChatMessage::system(PROMPT);
    let user = ChatMessage::user("### Context:\n\n\n");
    assert_eq!(fixed, counter.count_messages(&[system, user]).unwrap());

    // Against GPT-4o's exact count on the same encoding, the estimate is larger.
    let gpt = model("gpt-4o", 200_000);
    let gpt_report = check_contract(&gpt, &settings(), &checks, &gpt.counter()).expect("fits");
    assert_eq!(gpt_report.counting, Counting::Exact);
    let gpt_total = gpt_report.step("answer").unwrap().total_tokens();
    let claude_total = report.step("answer").unwrap().total_tokens();
    assert!(claude_total > gpt_total, "{claude_total} vs {gpt_total}");

    // The window that GPT-4o's exact total fills exactly: it fits there, and the estimate does not.
    let window = i64::try_from(gpt_total).unwrap();
    let gpt = model("gpt-4o", window);
    check_contract(&gpt, &settings(), &checks, &gpt.counter()).expect("fits exactly");
    let claude = model("claude-sonnet-4-5", window);
    let issues = check_contract(&claude, &settings(), &checks, &claude.counter()).expect_err("over");
    assert_eq!(issues[0].code.as_str(), "BUDGET_CONTRACT_VIOLATED");
    assert!(issues[0].message.contains("(prompt counts estimated, +30% margin"), "{}", issues[0].message);
}

#[test]
fn only_claude_names_take_the_estimate() {
    assert_eq!(ChatFormat::for_model("claude-3-5-haiku-latest").counting(), Counting::Estimated { margin_percent: 30 });
    assert_eq!(ChatFormat::for_model("gpt-4o").counting(), Counting::Exact);
    assert_eq!(model("gpt-4o-mini", 128_000).counter().backend_id(), "ctx/o200k_base");
}
