use super::*;
use crate::config::{ModelConfig, Settings};
use crate::contract::{call_model_checks, check_contract, pipeline_uses_history};
use crate::pipeline::definition::{END, ModelSource, PriceSpec};
use crate::pipeline::testing::*;
use crate::pipeline::{ValidateOptions, validate_definition};

/// $2.50 per million input tokens, $10.00 per million output tokens.
fn priced(mut d: PipelineDef, cap: Option<f64>) -> PipelineDef {
    let ModelSource::Inline(spec) = &d.model else { unreachable!() };
    let spec = spec.clone().price(Some(PriceSpec::default().input(Some(2.5)).output(Some(10.0))));
    d.model = ModelSource::Inline(spec);
    d.settings = d.settings.clone().max_cost_per_run(cap);
    d
}

fn report(d: &PipelineDef) -> (ContractReport, Settings) {
    let ModelSource::Inline(spec) = &d.model else { unreachable!() };
    let model = ModelConfig::from_spec(spec, &FieldPath::root().key("model")).unwrap();
    let settings =
        Settings::from_spec(&d.settings, pipeline_uses_history(d), &FieldPath::root().key("settings")).unwrap();
    let prompts = Default::default();
    let checks = call_model_checks(d, &prompts).unwrap();
    (check_contract(&model, &settings, &checks, &model.counter()).unwrap(), settings)
}

fn bound(d: &PipelineDef) -> CostBound {
    let (report, settings) = report(d);
    let price = crate::config::model_price(d).unwrap();
    cost_bound(d, &report, &price, |i| loop_limit(d, &settings, i)).unwrap()
}

/// The compaction loop of the specification with the context carried from question to question,
/// so that `on_over` can be taken.
fn carried_loop() -> PipelineDef {
    let mut d = compaction_loop();
    d.settings.carry_context = Some(true);
    d
}

#[test]
fn each_step_runs_as_often_as_the_heaviest_run_and_costs_its_worst_request() {
    let d = priced(carried_loop(), None);
    let (report, _) = report(&d);
    let b = bound(&d);
    let ids: Vec<(&str, u64)> = b.steps.iter().map(|s| (s.step_id.as_str(), s.runs)).collect();
    // `max_turn_loops: 3`: the summariser three times, the answer once.
    assert_eq!(ids, [("summarize", 3), ("answer", 1)]);
    for s in &b.steps {
        let budget = report.step(&s.step_id).unwrap();
        // The contract's terms, margin included; the output limit in effect (the model's 1,024).
        // The question's budget too: here the default, the room the window leaves.
        assert!(budget.input_tokens > 0);
        assert_eq!(
            s.input_tokens,
            budget.fixed_prompt_tokens + budget.context_tokens + budget.input_tokens + budget.safety_margin_tokens
        );
        assert_eq!(s.output_tokens, 1_024);
        // Exact nano-dollars: input × 2,500 + output × 10,000 per token.
        assert_eq!(s.request_nano_usd, s.input_tokens as u64 * 2_500 + 1_024 * 10_000);
        assert_eq!(s.nano_usd, s.runs * s.request_nano_usd);
    }
    assert_eq!(b.nano_usd, b.steps.iter().map(|s| s.nano_usd).sum::<u64>());
    assert_eq!((b.requests, b.exact), (4, true));
    assert_eq!(b.dominant().map(|s| s.step_id.as_str()), Some("summarize"));
    // Nothing is left out: the bound holds for every starting context.
    assert_eq!((b.seeded_nano_usd, b.never_taken_on_over.len()), (None, 0));
    assert!(b.steps.iter().all(|s| s.unpaid.is_none()));
    // An agent: `max_tool_calls + 1` requests, each up to the window less its output.
    let d = priced(def(vec![search("search", "answer"), agent("answer", END)]), None);
    let b = bound(&d);
    let s = &b.steps[0];
    assert_eq!((s.kind, s.runs, s.requests_per_run, s.output_tokens), ("agent", 1, 3, 600));
    // The default turn budget fills the window but the output and the reply priming.
    assert!(s.input_tokens <= 16_384 - 600 && s.input_tokens + 10 > 16_384 - 600, "{}", s.input_tokens);
    assert_eq!(b.nano_usd, 3 * s.request_nano_usd);
}

#[test]
fn a_branch_counts_once_not_with_the_other_branch() {
    // One branch calls the model once, the other sends an agent's three requests.
    let d = priced(
        def(vec![custom("route", &[("a", "one"), ("b", "agent")]), call("one", "answer", END), agent("agent", END)]),
        None,
    );
    let b = bound(&d);
    let runs: Vec<(&str, u64)> = b.steps.iter().map(|s| (s.step_id.as_str(), s.runs)).collect();
    // The agent's three requests cost more than the one call: its branch is the costliest run.
    assert!(b.steps[1].request_nano_usd * 3 > b.steps[0].request_nano_usd);
    assert_eq!(runs, [("one", 0), ("agent", 1)]);
    assert_eq!(b.nano_usd, b.steps[1].nano_usd);
    assert!(b.arithmetic().starts_with("step `agent` 1 run × 3 requests × ("), "{}", b.arithmetic());
}

#[test]
fn over_the_cap_is_an_error_with_the_arithmetic_and_at_the_cap_is_not() {
    let b = bound(&priced(carried_loop(), None));
    let at_cap = b.nano_usd as f64 / 1e9;
    let issues = cost_issues(&priced(carried_loop(), Some(at_cap)), Some(&b));
    assert!(issues.is_empty(), "{issues:?}");

    let just_under = (b.nano_usd - 1) as f64 / 1e9;
    let issues = cost_issues(&priced(carried_loop(), Some(just_under)), Some(&b));
    assert_eq!(codes(&issues), [("MAX_COST_PER_RUN_EXCEEDED", "settings.max_cost_per_run".into())]);
    let message = &issues[0].message;
    let summarize = &b.steps[0];
    for part in [
        format!("can cost {}", usd(b.nano_usd)),
        format!("more than `max_cost_per_run` {}", usd(b.nano_usd - 1)),
        format!("step `summarize` 3 runs × 1 request × ({} input × $2.50/M", thousands(summarize.input_tokens)),
        "1,024 output × $10.00/M".to_owned(),
        "step `summarize` dominates".to_owned(),
        " + step `answer` 1 run × 1 request".to_owned(),
    ] {
        assert!(message.contains(&part), "{part:?} missing from {message}");
    }
    assert!(issues[0].help.as_deref().unwrap_or_default().contains("`summarize`"), "{:?}", issues[0].help);
}

#[test]
fn the_rule_runs_through_validation_and_a_missing_price_is_its_own_error() {
    let opts = ValidateOptions::default();
    let cheap = priced(carried_loop(), Some(100.0));
    assert_eq!(codes(&validate_definition(&cheap, &opts)), vec![]);
    let tight = priced(carried_loop(), Some(0.001));
    assert_eq!(
        codes(&validate_definition(&tight, &opts)),
        [("MAX_COST_PER_RUN_EXCEEDED", "settings.max_cost_per_run".into())]
    );
    // No price at all: the price rule's error, never a bound at zero dollars.
    let mut unpriced = carried_loop();
    unpriced.settings = unpriced.settings.clone().max_cost_per_run(Some(0.001));
    assert_eq!(codes(&validate_definition(&unpriced, &opts)), [("MISSING_PRICE", "settings.max_cost_per_run".into())]);
    // A loop limit of 1: the summariser runs once, and a cap of exactly that run compiles.
    let mut once = priced(carried_loop(), None);
    once.settings.extra.insert("max_turn_loops".into(), 1);
    let b = bound(&once);
    assert_eq!(b.steps.iter().map(|s| s.runs).collect::<Vec<_>>(), [1, 1]);
    let mut over = once.clone();
    over.settings = over.settings.clone().max_cost_per_run(Some((b.nano_usd - 1) as f64 / 1e9));
    assert_eq!(codes(&validate_definition(&over, &opts)).len(), 1);
    let mut fits = once.clone();
    fits.settings = fits.settings.clone().max_cost_per_run(Some(b.nano_usd as f64 / 1e9));
    assert_eq!(codes(&validate_definition(&fits, &opts)), vec![]);
}

#[test]
fn dollars_are_shown_exactly() {
    assert_eq!(usd(50_000_000), "$0.05");
    assert_eq!(usd(60_312_000), "$0.060312");
    assert_eq!(usd(12_500_000_000), "$12.50");
    assert_eq!(usd(1), "$0.000000001");
    assert_eq!(usd(0), "$0.00");
    assert_eq!(nano_usd(0.075), 75_000_000);
    assert_eq!(thousands(6_016), "6,016");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_234_567), "1,234,567");
}

#[test]
fn the_remaining_budget_is_a_template_value_of_user_parts_only() {
    use crate::pipeline::definition::{StepKind, UserPartSpec};
    use crate::state::BUDGET_REMAINING_USD;
    let opts = ValidateOptions::default();
    let mut d = priced(def(vec![call("answer", "answer", END)]), Some(100.0));
    let StepKind::CallModel(spec) = &mut d.steps[0].kind else { unreachable!() };
    spec.user_parts.push(UserPartSpec::new(BUDGET_REMAINING_USD, "Budget left: {} USD"));
    assert_eq!(codes(&validate_definition(&d, &opts)), vec![]);
    // `set_variables` can neither read nor write it.
    let d = def(vec![
        set("copy", vec![from("note", BUDGET_REMAINING_USD, None)], "write"),
        set("write", vec![literal(BUDGET_REMAINING_USD, "1".into())], END),
    ]);
    assert_eq!(
        codes(&validate_definition(&d, &opts)),
        [("SOURCE_NOT_TEXT", "steps[0].rules[0].from".into()), ("READ_ONLY_TARGET", "steps[1].rules[0].set".into())]
    );
}

/// A step that assembles a declared context costs, at worst, the context's input budget plus the
/// margin: not the fixed prompt, `max_context_tokens` or the history it would lay out itself.
#[test]
fn a_step_assembling_a_context_is_priced_at_its_input_budget() {
    use crate::engine::{ContextDeclaration, ContextPolicySpec, EngineSpec, InputBudgetSpec, MessageSpec};
    let engine = EngineSpec {
        contexts: vec![ContextDeclaration {
            name: "support".into(),
            inputs: vec!["user_question".into()],
            policy: Some(ContextPolicySpec {
                input_budget: Some(InputBudgetSpec { max_tokens: 2_500 }),
                ..ContextPolicySpec::default()
            }),
            messages: vec![MessageSpec::User { content: "{input.user_question}".into() }],
        }],
        ..EngineSpec::default()
    };
    let mut d = priced(def(vec![call("answer", "answer", END)]), None).contexts(engine);
    let crate::pipeline::StepKind::CallModel(c) = &mut d.steps[0].kind else { unreachable!() };
    c.context = Some("support".into());
    c.user_parts = Vec::new();
    assert_eq!(validate_definition(&d, &ValidateOptions::default()), []);
    let (report, _) = report(&d);
    let budget = report.step("answer").unwrap();
    assert_eq!((budget.fixed_prompt_tokens, budget.context_tokens, budget.history_tokens), (2_500, 0, 0));
    let s = &bound(&d).steps[0];
    assert_eq!((s.input_tokens, s.output_tokens), (2_500 + 128, 1_024));
    assert_eq!(s.request_nano_usd, (2_500 + 128) * 2_500 + 1_024 * 10_000);
}

/// A provider assumed to bill more than ctx counts (`settings.billed_token_ratio`): every
/// request's tokens are priced at that ratio, rounded up, so the bound holds for such a
/// provider; the arithmetic shows the counted and the billed tokens; the validated definition's
/// bound is the same one.
#[test]
fn a_declared_billed_token_ratio_prices_every_request_at_it() {
    let d = priced(carried_loop(), None);
    let (report, settings) = report(&d);
    let price = crate::config::model_price(&d).unwrap();
    let at_one = cost_bound(&d, &report, &price, |i| loop_limit(&d, &settings, i)).unwrap();
    let at =
        |ratio: f64| cost_bound_billed(&d, &report, |_| Some(price), |i| loop_limit(&d, &settings, i), ratio).unwrap();
    // At or below 1 (and for a ratio that is not a number) the bound is ctx's count.
    for r in [1.0, 0.5, f64::NAN] {
        assert_eq!(at(r).nano_usd, at_one.nano_usd, "{r}");
    }
    let b = at(1.5);
    assert_eq!(b.billed_token_ratio, 1.5);
    for (s, one) in b.steps.iter().zip(&at_one.steps) {
        assert_eq!((s.input_tokens, s.output_tokens), (one.input_tokens, one.output_tokens), "counted tokens");
        let billed_in = (s.input_tokens * 3).div_ceil(2) as u64;
        let billed_out = (s.output_tokens * 3).div_ceil(2) as u64;
        assert_eq!(s.request_nano_usd, billed_in * 2_500 + billed_out * 10_000);
    }
    assert!(b.nano_usd > at_one.nano_usd);
    let first = &b.steps[0];
    assert!(
        b.arithmetic().contains(&format!("(billed as {})", thousands(billed(first.input_tokens, 1.5)))),
        "{}",
        b.arithmetic()
    );
    // The rules price the bound at the declared ratio too.
    let declared = d.clone().settings(d.settings.clone().billed_token_ratio(Some(1.5)));
    let issues = validate_definition(
        &declared.clone().settings(declared.settings.clone().max_cost_per_run(Some(0.000_001))),
        &ValidateOptions::default(),
    );
    let over = issues.iter().find(|i| i.code == crate::codes::Code::MaxCostPerRunExceeded).expect("over the cap");
    assert!(over.message.contains("billed as"), "{}", over.message);
    assert!(over.message.contains(&usd(b.nano_usd)), "{} should state {}", over.message, usd(b.nano_usd));
}

/// The loop asked one question with an empty context: `on_over` is never taken
/// (`BUDGET_ON_OVER_NEVER_TAKEN`), so the summariser behind it costs nothing, and says why; the
/// bound of a run whose caller seeds the context is the carried loop's, by hand.
#[test]
fn a_branch_behind_an_on_over_never_taken_costs_nothing_and_says_why() {
    let fresh = bound(&priced(compaction_loop(), None));
    let carried = bound(&priced(carried_loop(), None));
    let runs: Vec<(&str, u64)> = fresh.steps.iter().map(|s| (s.step_id.as_str(), s.runs)).collect();
    assert_eq!(runs, [("summarize", 0), ("answer", 1)]);
    let (summarize, answer) = (&fresh.steps[0], &fresh.steps[1]);
    assert_eq!(summarize.unpaid, Some(Unpaid::BehindNeverTakenOnOver { steps: vec!["manage_budget".to_owned()] }));
    assert!(summarize.unpaid.as_ref().unwrap().describe().contains("`on_over` of `manage_budget`"));
    assert_eq!((summarize.nano_usd, answer.unpaid.clone()), (0, None));
    // The answer alone, one request: its worst input at $2.50/M and 1,024 output tokens at $10/M.
    assert_eq!(fresh.nano_usd, answer.input_tokens as u64 * 2_500 + 1_024 * 10_000);
    assert_eq!(fresh.requests, 1);
    assert_eq!(fresh.never_taken_on_over, ["manage_budget"]);
    // Seeded: three summaries and the answer, exactly what the carried loop costs.
    assert_eq!(fresh.seeded_nano_usd, Some(carried.nano_usd));
    assert_eq!(carried.nano_usd, 3 * carried.steps[0].request_nano_usd + carried.steps[1].request_nano_usd);
    // The cap is held to the fresh bound: a cap between the two passes.
    let cap = (fresh.nano_usd + carried.nano_usd) as f64 / 2e9;
    let d = priced(compaction_loop(), Some(cap));
    assert!(cost_issues(&d, Some(&bound(&d))).is_empty());
    let d = priced(carried_loop(), Some(cap));
    assert_eq!(cost_issues(&d, Some(&bound(&d)))[0].code, crate::codes::Code::MaxCostPerRunExceeded);
}

/// A step the costliest run does not reach, though a run from an empty context can, says so.
#[test]
fn a_cheaper_branch_says_it_is_not_on_the_costliest_run() {
    let d = priced(
        def(vec![custom("route", &[("a", "one"), ("b", "agent")]), call("one", "answer", END), agent("agent", END)]),
        None,
    );
    let b = bound(&d);
    assert_eq!(b.steps[0].unpaid, Some(Unpaid::NotOnCostliestRun));
    assert_eq!((b.steps[1].unpaid.clone(), b.seeded_nano_usd), (None, None));
}

/// Every mistake at once (issue 37): a misspelled prompt key leaves its step unchecked, but the
/// steps already checked bound the run's cost from below, so the cost cap they pass is reported
/// beside the prompt's error, saying the cost is at least that much.
#[test]
fn a_misspelled_prompt_key_does_not_hide_the_cost_cap() {
    let opts = ValidateOptions::default();
    let mut tight = priced(carried_loop(), Some(0.001));
    let StepKind::CallModel(answer) = &mut tight.steps[6].kind else { unreachable!("the answer") };
    answer.prompt_key = "answr".into();
    let issues = validate_definition(&tight, &opts);
    let found = codes(&issues);
    assert!(found.iter().any(|(_, path)| path.starts_with("steps[6].prompt_key")), "{found:?}");
    let over = issues.iter().find(|i| i.code == crate::codes::Code::MaxCostPerRunExceeded).expect("the cap");
    assert!(over.message.contains("step `summarize` 3 runs"), "{}", over.message);
    assert!(
        over.message
            .ends_with("at least: step `answer` is not priced yet (fix its issue first), so a run can cost more still"),
        "{}",
        over.message
    );
    // A cap the checked steps stay under says nothing yet: the answer may still pass it.
    let roomy = priced(tight.clone(), Some(100.0));
    assert!(!codes(&validate_definition(&roomy, &opts)).iter().any(|(c, _)| *c == "MAX_COST_PER_RUN_EXCEEDED"));
}
