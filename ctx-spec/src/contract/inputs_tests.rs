//! The input terms in the whole contract: declared, derived and default budgets, the issues they
//! raise, and what the report and the cost bound carry.

use super::*;
use crate::codes::Code;
use crate::config::{LimitsPolicy, ModelConfig, Settings};
use crate::contract::{ContractReport, call_model_checks, check_contract, pipeline_uses_history};
use crate::pipeline::definition::{END, ModelSource, PipelineDef, StepKind};
use crate::pipeline::testing::{call, def};
use crate::validation::{ConfigIssue, FieldPath};

fn check(d: &PipelineDef) -> Result<ContractReport, Vec<ConfigIssue>> {
    let ModelSource::Inline(spec) = &d.model else { unreachable!() };
    let model = ModelConfig::from_spec(spec, &FieldPath::root().key("model")).unwrap();
    let settings =
        Settings::from_spec(&d.settings, pipeline_uses_history(d), &FieldPath::root().key("settings")).unwrap();
    let prompts = Default::default();
    let checks = call_model_checks(d, &prompts).unwrap();
    check_contract(&model, &settings, &checks, &model.counter())
}

/// One `answer` step (the context, then the question) with `max_context_tokens: context`.
fn answer(context: i64, question: Option<i64>) -> PipelineDef {
    let mut d = def(vec![call("answer", "answer", END)]);
    d.settings = d.settings.clone().max_context_tokens(Some(context)).max_question_tokens(question);
    d
}

#[test]
fn a_declared_question_is_a_term_of_the_step_and_of_its_cost() {
    let without = check(&answer(9_000, Some(1))).unwrap();
    let with = check(&answer(9_000, Some(2_000))).unwrap();
    let (a, b) = (without.step("answer").unwrap(), with.step("answer").unwrap());
    assert_eq!(b.total_tokens() - a.total_tokens(), 1_999);
    assert_eq!(b.input_tokens, 2_000);
    assert_eq!(b.worst_request_tokens, b.total_tokens());
    let q = with.question().unwrap();
    assert_eq!((q.source.as_str(), q.tokens), ("user_question_en", 2_000));
    assert_eq!(q.origin, BudgetOrigin::Declared { setting: MAX_QUESTION_TOKENS });
    // The cost bound prices it as input.
    let d = answer(9_000, Some(2_000));
    let price = crate::config::Price::uncached(2.5, 10.0);
    let bound = crate::contract::cost_bound(&d, &with, &price, |_| 0).unwrap();
    assert_eq!(bound.steps[0].input_tokens, b.total_tokens() - b.output_tokens);
}

#[test]
fn a_question_the_window_cannot_hold_is_a_violation_with_its_term_and_its_fix() {
    // 16,384 - (fixed + 2,000 history? no: no use_history) …: the question pushes it over.
    let fits = check(&answer(9_000, Some(1))).unwrap();
    let room = fits.step("answer").unwrap().headroom() + 1;
    let issues = check(&answer(9_000, Some(room as i64 + 10))).unwrap_err();
    assert_eq!(issues.len(), 1, "{issues:?}");
    let issue = &issues[0];
    assert_eq!((issue.code, issue.path.to_string().as_str()), (Code::BudgetContractViolated, "steps.answer"));
    assert!(issue.message.contains("(over by 10)"), "{}", issue.message);
    assert!(
        issue.message.contains(&format!("+ question (`user_question_en`) {} (from `max_question_tokens`)", room + 10)),
        "{}",
        issue.message
    );
    let help = issue.help.as_deref().unwrap();
    assert!(help.contains(&format!("lower `settings.max_question_tokens` from {} to {room}", room + 10)), "{help}");
}

#[test]
fn an_undeclared_question_gets_the_room_the_window_leaves() {
    let declared = check(&answer(9_000, Some(1))).unwrap();
    let room = declared.step("answer").unwrap().headroom() + 1;
    let report = check(&answer(9_000, None)).unwrap();
    let step = report.step("answer").unwrap();
    // The whole window: the proof is for every question up to the room.
    assert_eq!((step.input_tokens, step.total_tokens()), (room, step.context_window));
    let q = report.question().unwrap();
    assert_eq!(q.origin, BudgetOrigin::Default { setting: MAX_QUESTION_TOKENS, step: "answer".into() });
    // The least room of the steps that render it sets it, for all of them.
    let mut two = answer(9_000, None);
    let mut small = call("small", "answer", "answer");
    if let StepKind::CallModel(c) = &mut small.kind {
        c.max_output_tokens = Some(3_000);
    }
    two.steps.insert(0, small);
    let report = check(&two).unwrap();
    let small = report.step("small").unwrap();
    assert_eq!(small.total_tokens(), small.context_window);
    assert_eq!(report.step("answer").unwrap().input_tokens, small.input_tokens);
    assert!(report.step("answer").unwrap().headroom() > 0);
}

#[test]
fn no_room_for_an_undeclared_input_is_an_issue_at_the_step() {
    let declared = check(&answer(9_000, Some(1))).unwrap();
    let room = declared.step("answer").unwrap().headroom() + 1;
    // The context takes exactly the room the question had.
    let full = answer(9_000 + room as i64, None);
    let issues = check(&full).unwrap_err();
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!((issues[0].code, issues[0].path.to_string().as_str()), (Code::InputBudgetNoRoom, "steps.answer"));
    assert!(issues[0].message.contains("renders `user_question_en` with no budget declared"), "{}", issues[0].message);
    assert!(issues[0].help.as_deref().unwrap().contains("declare `max_question_tokens`"), "{:?}", issues[0].help);
    // Declared, it is a plain violation instead; one token less of context and it fits.
    let mut declared_full = full.clone();
    declared_full.settings = declared_full.settings.clone().max_question_tokens(Some(1));
    assert_eq!(check(&declared_full).unwrap_err()[0].code, Code::BudgetContractViolated);
    assert!(check(&answer(9_000 + room as i64 - 1, None)).is_ok());
    // Under auto_clamp, a clamp fills the window: a clamped step's question must be declared.
    let mut clamped = answer(20_000, None);
    clamped.settings = clamped.settings.clone().limits_policy(Some("auto_clamp".into()));
    assert_eq!(check(&clamped).unwrap_err()[0].code, Code::InputBudgetNoRoom);
    clamped.settings = clamped.settings.clone().max_question_tokens(Some(500));
    let report = check(&clamped).unwrap();
    assert_eq!(report.policy, LimitsPolicy::AutoClamp);
    let step = report.step("answer").unwrap();
    assert_eq!((step.input_tokens, step.total_tokens()), (500, step.context_window));
}

#[test]
fn an_earlier_reply_is_bounded_by_the_largest_output_limit_and_variables_by_their_setting() {
    let mut d = def(vec![call("draft", "answer", "answer"), call("answer", "answer", END)]);
    d.settings = d.settings.clone().max_question_tokens(Some(300)).max_variable_tokens(Some(40));
    if let StepKind::CallModel(c) = &mut d.steps[0].kind {
        c.max_output_tokens = Some(700);
    }
    if let StepKind::CallModel(c) = &mut d.steps[1].kind {
        c.max_output_tokens = Some(200);
        c.user_parts = vec![
            crate::pipeline::definition::UserPartSpec::new("last_model_response", "Draft: {}\n"),
            crate::pipeline::definition::UserPartSpec::new("ticket", "Ticket: {}\n"),
            crate::pipeline::definition::UserPartSpec::new("user_question", "{}"),
        ];
    }
    let report = check(&d).unwrap();
    let step = report.step("answer").unwrap();
    let got: Vec<(&str, usize)> = step.inputs.iter().map(|b| (b.source.as_str(), b.tokens)).collect();
    assert_eq!(got, [("last_model_response", 700), ("ticket", 40), ("user_question", 300)]);
    assert_eq!(step.input_tokens, 1_040);
    assert!(report.input("last_model_response").unwrap().origin.describe().contains("step `draft`'s"));
    assert_eq!(report.input("ticket").unwrap().origin, BudgetOrigin::Declared { setting: MAX_VARIABLE_TOKENS });
    // The report lists each source once, the question under both of its names.
    let sources: Vec<&str> = report.inputs.iter().map(|b| b.source.as_str()).collect();
    assert_eq!(sources, ["user_question_en", "last_model_response", "ticket", "user_question"]);
}

#[test]
fn the_proof_states_its_inputs_and_its_assumptions() {
    let report = check(&answer(9_000, Some(1_000))).unwrap();
    let d = answer(9_000, Some(1_000));
    let bound = crate::contract::cost_bound(&d, &report, &crate::config::Price::uncached(2.5, 10.0), |_| 0).unwrap();
    let lines = proof_statement(&report, Some(&bound));
    let step = report.step("answer").unwrap();
    assert_eq!(
        lines[0],
        format!(
            "for any question up to 1000 tokens (`max_question_tokens`): every request fits its window (the fullest: \
             step `answer`, {} of 16384 tokens at most); a run costs at most {} (1 model request).",
            step.worst_request_tokens,
            crate::contract::usd(bound.nano_usd)
        )
    );
    assert!(lines[1].starts_with("assumed: prompt counts exact"), "{}", lines[1]);
    let default = check(&answer(9_000, None)).unwrap();
    let lines = proof_statement(&default, None);
    assert!(lines[0].contains("(the default: the room step `answer` leaves, as `max_question_tokens` is not set)"));
}
