//! The contract inequality under both policies: every term named, one issue per failing step,
//! missing values always errors, clamp order and the warning on every clamp.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use ctx_runtime::config::{ConfigFile, LimitsPolicy, ModelConfig, Settings};
use ctx_runtime::contract::{
    CallModelCheck, ClampTarget, ContractReport, OutputSource, check_contract, fixed_prompt_tokens,
};
use ctx_runtime::pipeline::{CallModelSpec, SettingsSpec, UserPartSpec};
use ctx_runtime::{ConfigIssue, Encoding, FieldPath, TokenCounter};
use proptest::prelude::*;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

const SUMMARIZER: &str = "Summarise the context; keep identifiers and SQL verbatim.";
const ROUTER: &str = "Answer `search` or `answer`.";
const TEMPLATES: [&str; 2] = ["### Context:\n{}\n\n", "### User:\n{}\n\n"];
/// The question's declared budget: a term of every step here, which all render the question.
const QUESTION: usize = 1;

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

fn model(window: usize, max_tokens: Option<usize>) -> ModelConfig {
    ModelConfig::new(window, Encoding::Cl100kBase).model(None).max_tokens(max_tokens)
}

fn settings(ctx: usize, history: Option<usize>, margin: usize, policy: LimitsPolicy) -> Settings {
    Settings::new(ctx)
        .max_history_tokens(history)
        .safety_margin_tokens(margin)
        .policy(policy)
        .max_question_tokens(Some(QUESTION))
        .extra(BTreeMap::new())
}

fn step(prompt_key: &str, max_output: Option<i64>, use_history: bool) -> CallModelSpec {
    CallModelSpec::new(prompt_key, "end")
        .max_output_tokens(max_output)
        .user_parts(
            TEMPLATES
                .iter()
                .zip(["context_blocks", "user_question_en"])
                .map(|(t, s)| UserPartSpec::new(s, *t))
                .collect(),
        )
        .use_history(use_history)
}

fn check<'a>(id: &'a str, spec: &'a CallModelSpec, prompt: &'a str) -> CallModelCheck<'a> {
    CallModelCheck::new(FieldPath::root().key("steps").key(id), id, spec, prompt)
}

fn fixed(prompt: &str) -> usize {
    fixed_prompt_tokens(prompt, &TEMPLATES, &counter()).unwrap()
}

fn codes(issues: &[ConfigIssue]) -> Vec<(&'static str, String)> {
    issues.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect()
}

/// Every event's fields, as text, recorded by a test subscriber.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<BTreeMap<String, String>>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
}

impl<S: Subscriber> Layer<S> for Captured {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        fields.insert("level".to_owned(), event.metadata().level().to_string());
        fields.insert("target".to_owned(), event.metadata().target().to_owned());
        event.record(&mut Fields(&mut fields));
        if let Ok(mut events) = self.0.lock() {
            events.push(fields);
        }
    }
}

/// Runs `f` with a subscriber that records every event, and returns the events too.
fn capture<T>(f: impl FnOnce() -> T) -> (T, Vec<BTreeMap<String, String>>) {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry().with(captured.clone());
    // tracing caches each callsite's interest for the whole process, and while at most one
    // dispatcher exists it asks the subscriber of the thread that reaches the callsite first: a
    // test running in parallel without a subscriber would silence the callsite here too. With a
    // second dispatcher alive, the interest is asked of every live dispatcher, this one included.
    let _anchor = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
    let out = tracing::subscriber::with_default(subscriber, f);
    let events = captured.0.lock().unwrap().clone();
    (out, events)
}

#[test]
fn fail_fast_names_every_term_and_the_overflow() {
    let spec = step("summarizer", Some(2000), true);
    let steps = [check("summarize", &spec, SUMMARIZER)];
    let f = fixed(SUMMARIZER);
    let total = f + 1000 + 6000 + QUESTION + 2000 + 128;
    let over = total - 8192;
    let err = check_contract(
        &model(8192, None),
        &settings(6000, Some(1000), 128, LimitsPolicy::FailFast),
        &steps,
        &counter(),
    )
    .unwrap_err();
    assert_eq!(codes(&err), [("BUDGET_CONTRACT_VIOLATED", "steps.summarize".to_owned())]);
    let message = &err[0].message;
    for part in [
        "call_model step `summarize`".to_owned(),
        format!("fixed prompt {f} (system prompt `summarizer`"),
        "max_history_tokens 1000".to_owned(),
        "max_context_tokens 6000".to_owned(),
        "question (`user_question_en`) 1 (from `max_question_tokens`)".to_owned(),
        "max_output_tokens 2000 (from the step's `max_output_tokens`)".to_owned(),
        "budget_safety_margin_tokens 128".to_owned(),
        format!("= {total}"),
        "context window is 8192".to_owned(),
        format!("over by {over}"),
    ] {
        assert!(message.contains(&part), "`{part}` missing from: {message}");
    }
    let help = err[0].help.as_deref().unwrap();
    for part in [
        format!("lower `settings.max_context_tokens` from 6000 to {}", 6000 - over),
        format!("lower `steps.summarize.max_output_tokens` from 2000 to {}", 2000 - over),
        format!("lower `settings.max_history_tokens` from 1000 to {}", 1000 - over),
        format!("context window is at least {total}"),
        "auto_clamp".to_owned(),
    ] {
        assert!(help.contains(&part), "`{part}` missing from: {help}");
    }
}

/// A fix that fits the window but leaves the step unusable is not offered: no output limit below
/// the negotiation floor, no context budget at or below an evidence budget, no history budget of 0.
#[test]
fn the_help_suggests_no_value_that_leaves_the_step_unusable() {
    use ctx_runtime::contract::OUTPUT_FLOOR_TOKENS;
    let spec = step("router", Some(512), true);
    let f = fixed(ROUTER);
    let history = f + 148;
    let over = f + history + 7700 + QUESTION + 512 + 128 - 8192;
    assert!(512 - over < OUTPUT_FLOOR_TOKENS, "the output would fit at {}", 512 - over);
    let help = |evidence: usize| {
        let steps = [check("route", &spec, ROUTER).with_evidence_tokens(evidence)];
        let err = check_contract(
            &model(8192, None),
            &settings(7700, Some(history), 128, LimitsPolicy::FailFast),
            &steps,
            &counter(),
        )
        .unwrap_err();
        assert_eq!(codes(&err), [("BUDGET_CONTRACT_VIOLATED", "steps.route".to_owned())]);
        err[0].help.clone().unwrap()
    };
    // Before: "lower `steps.route.max_output_tokens` from 512 to 33"-like advice, and a history
    // budget lowered to 0.
    let without_evidence = help(0);
    assert!(!without_evidence.contains("max_output_tokens"), "{without_evidence}");
    assert!(!without_evidence.contains("max_history_tokens"), "{without_evidence}");
    let context = format!("lower `settings.max_context_tokens` from 7700 to {}", 7700 - over);
    assert!(without_evidence.contains(&context), "{without_evidence}");
    assert!(without_evidence.contains(&format!("context window is at least {}", 8192 + over)));
    // An evidence budget the lowered context would not hold: the context fix goes too.
    let with_evidence = help(7700 - over);
    assert!(!with_evidence.contains("max_context_tokens"), "{with_evidence}");
    assert!(with_evidence.starts_with("use a model whose context window is at least"), "{with_evidence}");
    assert!(help(7699 - over).contains(&context), "just above the evidence budget is usable");
}

#[test]
fn the_bound_is_exact_and_only_failing_steps_are_reported() {
    let summarize = step("summarizer", Some(2000), false);
    let route = step("router", Some(20), false);
    let answer = step("summarizer", Some(1500), false);
    let steps = [
        check("summarize", &summarize, SUMMARIZER),
        check("route", &route, ROUTER),
        check("answer", &answer, SUMMARIZER),
    ];
    let s = settings(5000, None, 128, LimitsPolicy::FailFast);
    // A window of exactly the summarizer's need: it fits with no headroom.
    let window = fixed(SUMMARIZER) + 5000 + QUESTION + 2000 + 128;
    let report = check_contract(&model(window, None), &s, &steps, &counter()).unwrap();
    assert_eq!(report.step("summarize").unwrap().total_tokens(), window);
    assert_eq!(report.step("summarize").unwrap().headroom(), 0);
    assert!(report.clamps.is_empty());
    // One token less: that step, and only it, fails by exactly 1.
    let err = check_contract(&model(window - 1, None), &s, &steps, &counter()).unwrap_err();
    assert_eq!(codes(&err), [("BUDGET_CONTRACT_VIOLATED", "steps.summarize".to_owned())]);
    assert!(err[0].message.contains("(over by 1)"), "{}", err[0].message);
    // 600 less: the answer step (500 less output) fails too, with its own issue.
    let err = check_contract(&model(window - 600, None), &s, &steps, &counter()).unwrap_err();
    assert_eq!(
        codes(&err),
        [
            ("BUDGET_CONTRACT_VIOLATED", "steps.summarize".to_owned()),
            ("BUDGET_CONTRACT_VIOLATED", "steps.answer".to_owned())
        ]
    );
    assert!(err[1].message.contains("(over by 100)"), "{}", err[1].message);
}

#[test]
fn the_output_term_follows_the_precedence() {
    let mut spec = step("router", None, false);
    let m = model(4096, Some(700));
    let s = settings(1000, None, 128, LimitsPolicy::FailFast);
    let r = check_contract(&m, &s, &[check("route", &spec, ROUTER)], &counter()).unwrap();
    let b = r.step("route").unwrap();
    assert_eq!((b.output_tokens, b.output_source), (700, OutputSource::ModelMaxTokens));
    spec.max_tokens = Some(300);
    let r = check_contract(&m, &s, &[check("route", &spec, ROUTER)], &counter()).unwrap();
    assert_eq!(r.step("route").unwrap().output_source, OutputSource::StepMaxTokens);
    spec.max_output_tokens = Some(40);
    let r = check_contract(&m, &s, &[check("route", &spec, ROUTER)], &counter()).unwrap();
    let b = r.step("route").unwrap();
    assert_eq!((b.output_tokens, b.output_source), (40, OutputSource::StepMaxOutputTokens));
    assert_eq!(b.total_tokens(), fixed(ROUTER) + 1000 + QUESTION + 40 + 128);

    // A fallback to the model's limit is named, and the fix is to set one on the step (one that
    // leaves at least the output floor: 900 less the overflow).
    let spec = step("router", None, false);
    let err = check_contract(&model(1800, Some(900)), &s, &[check("route", &spec, ROUTER)], &counter()).unwrap_err();
    assert!(err[0].message.contains("(from the model's `max_tokens`"), "{}", err[0].message);
    assert!(err[0].help.as_deref().unwrap().contains("set `max_output_tokens:"), "{:?}", err[0].help);
}

#[test]
fn missing_values_are_errors_under_both_policies() {
    let with_history = step("summarizer", Some(100), true);
    let no_limit = step("router", None, false);
    let steps = [check("summarize", &with_history, SUMMARIZER), check("route", &no_limit, ROUTER)];
    for policy in [LimitsPolicy::FailFast, LimitsPolicy::AutoClamp] {
        let (result, events) =
            capture(|| check_contract(&model(0, None), &settings(0, None, 128, policy), &steps, &counter()));
        let err = result.unwrap_err();
        assert_eq!(
            codes(&err),
            [
                ("INVALID_CONTEXT_WINDOW", "model.context_window".to_owned()),
                ("INVALID_MAX_CONTEXT_TOKENS", "settings.max_context_tokens".to_owned()),
                ("MISSING_MAX_HISTORY_TOKENS", "steps.summarize.use_history".to_owned()),
                ("NO_OUTPUT_LIMIT", "steps.route".to_owned()),
            ],
            "{policy}"
        );
        assert!(err[2].message.contains("`summarize`"), "{}", err[2].message);
        assert!(events.is_empty(), "nothing may be clamped around a missing value: {events:?}");
    }
    // Invalid written output limits are reported under their key.
    let bad = step("router", Some(0), false);
    let err = check_contract(
        &model(4096, Some(100)),
        &settings(100, None, 0, LimitsPolicy::AutoClamp),
        &[check("r", &bad, ROUTER)],
        &counter(),
    )
    .unwrap_err();
    assert_eq!(codes(&err), [("INVALID_MAX_OUTPUT_TOKENS", "steps.r.max_output_tokens".to_owned())]);
}

#[test]
fn auto_clamp_lowers_the_context_budget_to_the_worst_step_first() {
    let summarize = step("summarizer", Some(2000), true);
    let route = step("router", Some(20), true);
    let steps = [check("route", &route, ROUTER), check("summarize", &summarize, SUMMARIZER)];
    let s = settings(6000, Some(1000), 128, LimitsPolicy::AutoClamp);
    let room = 8192 - (fixed(SUMMARIZER) + 1000 + QUESTION + 2000 + 128);
    let (report, events) = capture(|| check_contract(&model(8192, None), &s, &steps, &counter()));
    let report: ContractReport = report.unwrap();

    assert_eq!(report.max_context_tokens, room);
    assert_eq!(report.effective_settings(&s).max_context_tokens, room);
    assert_eq!(report.clamps.len(), 1, "{:?}", report.clamps);
    let c = &report.clamps[0];
    assert_eq!(
        (&c.target, c.step_id.as_str(), c.before, c.after),
        (&ClampTarget::MaxContextTokens, "summarize", 6000, room)
    );
    // The outputs were not touched: lowering the shared budget was enough.
    assert_eq!(report.step("summarize").unwrap().output_tokens, 2000);
    assert_eq!(report.step("summarize").unwrap().headroom(), 0);
    assert!(report.steps.iter().all(|b| b.total_tokens() <= 8192 && b.context_tokens == room));

    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!(e["level"], "WARN");
    assert_eq!(e["target"], "ctx::contract");
    assert_eq!(e["setting"], "max_context_tokens");
    assert_eq!(e["step"], "summarize");
    assert_eq!(e["before"], "6000");
    assert_eq!(e["after"], room.to_string());
    assert!(e["reason"].contains(&format!("leaves {room} of the 8192-token window")), "{}", e["reason"]);
    assert!(e["message"].contains(&format!("from 6000 to {room}")), "{}", e["message"]);
}

#[test]
fn auto_clamp_lowers_the_output_when_the_context_is_at_its_floor() {
    // The summarizer's output alone overflows the window: the context budget goes to 1, then the
    // output is lowered by what is still over.
    let summarize = step("summarizer", Some(4000), false);
    let route = step("router", Some(20), false);
    let steps = [check("summarize", &summarize, SUMMARIZER), check("route", &route, ROUTER)];
    let s = settings(2000, None, 100, LimitsPolicy::AutoClamp);
    let window = 3000;
    let (report, events) = capture(|| check_contract(&model(window, None), &s, &steps, &counter()));
    let report = report.unwrap();
    let out = window - (fixed(SUMMARIZER) + 1 + QUESTION + 100);
    assert_eq!(report.max_context_tokens, 1);
    let targets: Vec<_> =
        report.clamps.iter().map(|c| (c.target.clone(), c.step_id.as_str(), c.before, c.after)).collect();
    assert_eq!(
        targets,
        [(ClampTarget::MaxContextTokens, "summarize", 2000, 1), (ClampTarget::MaxOutputTokens, "summarize", 4000, out)]
    );
    let b = report.step("summarize").unwrap();
    assert_eq!((b.output_tokens, b.requested_output_tokens, b.total_tokens()), (out, 4000, window));
    assert_eq!(report.step("route").unwrap().output_tokens, 20);

    let seen: Vec<_> =
        events.iter().map(|e| (e["setting"].as_str(), e["before"].as_str(), e["after"].clone())).collect();
    assert_eq!(seen, [("max_context_tokens", "2000", "1".to_owned()), ("max_output_tokens", "4000", out.to_string())]);
    assert!(events[0]["reason"].contains("floor of 1"), "{}", events[0]["reason"]);
    assert!(events[1]["reason"].contains("with max_context_tokens at 1"), "{}", events[1]["reason"]);
    assert!(events.iter().all(|e| e["level"] == "WARN"));
}

#[test]
fn auto_clamp_refuses_a_step_that_cannot_fit_at_all() {
    let spec = step("summarizer", Some(500), true);
    let steps = [check("summarize", &spec, SUMMARIZER)];
    let window = fixed(SUMMARIZER) + QUESTION + 300 + 128 + 1; // one short of prompt + 1 context + 1 output
    let (result, events) = capture(|| {
        check_contract(
            &model(window, None),
            &settings(1000, Some(300), 128, LimitsPolicy::AutoClamp),
            &steps,
            &counter(),
        )
    });
    let err = result.unwrap_err();
    assert_eq!(codes(&err), [("BUDGET_CONTRACT_UNSATISFIABLE", "steps.summarize".to_owned())]);
    assert!(err[0].message.contains(&format!("{window}-token window")), "{}", err[0].message);
    assert!(events.is_empty(), "no clamp is logged for a check that failed: {events:?}");
    // One more token of window and it fits, with both clamps at their floor.
    let report = check_contract(
        &model(window + 1, None),
        &settings(1000, Some(300), 128, LimitsPolicy::AutoClamp),
        &steps,
        &counter(),
    )
    .unwrap();
    let b = report.step("summarize").unwrap();
    assert_eq!((b.context_tokens, b.output_tokens), (1, 1));
}

#[test]
fn the_file_opt_in_turns_a_violation_into_clamps() {
    let file = ConfigFile::from_json_str(
        r#"{"model_context_window": 4096, "model_max_tokens": 1024, "encoding": "cl100k_base", "allow_auto_clamp": true}"#,
        "config.json",
    )
    .unwrap();
    let spec = SettingsSpec::default().max_context_tokens(Some(4000)).max_question_tokens(Some(QUESTION as i64));
    let at = FieldPath::root().key("settings");
    let strict = Settings::from_spec(&spec, false, &at).unwrap();
    let relaxed = Settings::from_spec_with(&spec, false, &at, file.allow_auto_clamp, None).unwrap();
    let forced = Settings::from_spec_with(&spec, false, &at, file.allow_auto_clamp, Some("fail_fast")).unwrap();
    let answer = step("summarizer", None, false);
    let steps = [check("answer", &answer, SUMMARIZER)];
    assert!(check_contract(&file.model, &strict, &steps, &counter()).is_err());
    assert!(check_contract(&file.model, &forced, &steps, &counter()).is_err());
    let report = check_contract(&file.model, &relaxed, &steps, &counter()).unwrap();
    assert_eq!(report.policy, LimitsPolicy::AutoClamp);
    assert_eq!(report.max_context_tokens, 4096 - fixed(SUMMARIZER) - QUESTION - 1024 - 128);
}

fn prompt_strategy() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just(SUMMARIZER), Just(ROUTER), Just(""), Just("Réponds en français, avec des exemples SQL.")]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever the limits: `fail_fast` passes exactly when every step fits; `auto_clamp` either
    /// fails only for a step that cannot fit at all, or returns limits that fit, only ever
    /// lowered, with the output lowered only once the context budget is at its floor.
    #[test]
    fn policies_agree_with_the_inequality(
        window in 1usize..20_000,
        ctx in 1usize..20_000,
        history in 0usize..3_000,
        margin in 0usize..300,
        outputs in proptest::collection::vec((1i64..6_000, any::<bool>(), prompt_strategy()), 1..4),
    ) {
        let specs: Vec<(String, CallModelSpec, &str)> = outputs
            .iter()
            .enumerate()
            .map(|(i, (out, hist, prompt))| (format!("s{i}"), step("p", Some(*out), *hist), *prompt))
            .collect();
        let steps: Vec<CallModelCheck<'_>> = specs.iter().map(|(id, s, p)| check(id, s, p)).collect();
        let m = model(window, None);
        let need = |c: &CallModelCheck<'_>, ctx: usize, out: usize| {
            fixed(c.system_prompt) + QUESTION + if c.spec.use_history { history } else { 0 } + ctx + out + margin
        };
        let configured_out = |c: &CallModelCheck<'_>| c.spec.max_output_tokens.unwrap_or(0) as usize;

        let strict = check_contract(&m, &settings(ctx, Some(history), margin, LimitsPolicy::FailFast), &steps, &counter());
        let failing = steps.iter().filter(|c| need(c, ctx, configured_out(c)) > window).count();
        match &strict {
            Ok(r) => {
                prop_assert_eq!(failing, 0);
                prop_assert!(r.steps.iter().all(|b| b.total_tokens() <= window));
            }
            Err(issues) => {
                prop_assert_eq!(issues.len(), failing);
                // A step whose output limit alone reaches the window is reported under that limit.
                for (issue, c) in issues.iter().zip(steps.iter().filter(|c| need(c, ctx, configured_out(c)) > window)) {
                    let expected = if configured_out(c) >= window { "OUTPUT_EXCEEDS_WINDOW" } else { "BUDGET_CONTRACT_VIOLATED" };
                    prop_assert_eq!(issue.code.as_str(), expected);
                }
            }
        }

        let clamped = check_contract(&m, &settings(ctx, Some(history), margin, LimitsPolicy::AutoClamp), &steps, &counter());
        match clamped {
            Ok(r) => {
                prop_assert!(r.max_context_tokens >= 1 && r.max_context_tokens <= ctx);
                prop_assert_eq!(r.clamps.is_empty(), strict.is_ok());
                for b in &r.steps {
                    prop_assert!(b.total_tokens() <= window);
                    prop_assert!(b.output_tokens >= 1 && b.output_tokens <= b.requested_output_tokens);
                    if b.output_tokens < b.requested_output_tokens {
                        prop_assert_eq!(r.max_context_tokens, 1);
                    }
                }
            }
            Err(issues) => {
                prop_assert!(issues.iter().all(|i| i.code == "BUDGET_CONTRACT_UNSATISFIABLE"));
                prop_assert!(steps.iter().any(|c| need(c, 1, 1) > window));
            }
        }
    }
}
