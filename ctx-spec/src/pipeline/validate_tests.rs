use serde_json::json;

use super::*;
use crate::pipeline::definition::{ModelSource, PromptSpec, UserPartSpec};
use crate::pipeline::testing::*;

fn opts() -> ValidateOptions {
    ValidateOptions { check_tokens: false, ..Default::default() }
}

fn check(def: &PipelineDef) -> Vec<ConfigIssue> {
    validate_definition(def, &opts())
}

fn only(def: &PipelineDef) -> ConfigIssue {
    let issues = check(def);
    assert_eq!(issues.len(), 1, "{:?}", codes(&issues));
    issues.into_iter().next().unwrap()
}

fn call_model_mut(def: &mut PipelineDef, i: usize) -> &mut CallModelSpec {
    match &mut def.steps[i].kind {
        StepKind::CallModel(c) => c,
        other => panic!("steps[{i}] is {}", other.keyword()),
    }
}

#[test]
fn the_spec_compaction_loop_is_valid() {
    assert_eq!(codes(&check(&compaction_loop())), vec![]);
}

#[test]
fn numbers_in_range() {
    let mut d = def(vec![search("s", "x"), expand("x", "f"), fetch("f", "end")]);
    if let StepKind::SearchNodes(s) = &mut d.steps[0].kind {
        s.top_k = 0;
    }
    if let StepKind::ExpandDependencyTree(s) = &mut d.steps[1].kind {
        s.max_depth = -1;
    }
    if let StepKind::FetchNodeTexts(s) = &mut d.steps[2].kind {
        s.evidence_tokens = -5;
    }
    let issues = check(&d);
    assert_eq!(
        codes(&issues),
        vec![
            ("INVALID_TOP_K", "steps[0].top_k".into()),
            ("INVALID_MAX_DEPTH", "steps[1].max_depth".into()),
            ("INVALID_EVIDENCE_TOKENS", "steps[2].evidence_tokens".into()),
        ]
    );
    assert!(issues[0].message.contains("`s` is 0"), "{}", issues[0].message);
    assert!(issues[2].message.contains("-5"), "{}", issues[2].message);
    // max_depth 0 is allowed (expansion off).
    if let StepKind::ExpandDependencyTree(s) = &mut d.steps[1].kind {
        s.max_depth = 0;
    }
    assert!(!codes(&check(&d)).iter().any(|(c, _)| *c == "INVALID_MAX_DEPTH"));
}

#[test]
fn call_model_output_limits_must_be_positive() {
    let mut d = def(vec![call("a", "answer", "end")]);
    call_model_mut(&mut d, 0).max_output_tokens = Some(0);
    call_model_mut(&mut d, 0).max_tokens = Some(-1);
    let expected = vec![
        ("INVALID_MAX_OUTPUT_TOKENS", "steps[0].max_output_tokens".to_owned()),
        ("INVALID_MAX_OUTPUT_TOKENS", "steps[0].max_tokens".to_owned()),
    ];
    assert_eq!(codes(&check(&d)), expected);
    // The contract finds the same problem; it is reported once.
    assert_eq!(codes(&validate_definition(&d, &ValidateOptions::default())), expected);
}

#[test]
fn unknown_prompt_suggests_the_close_one() {
    // The spec's own typo: `sumarizer`.
    let d = def(vec![call("summarize", "sumarizer", "end")]);
    let issue = only(&d);
    assert_eq!((issue.code.as_str(), issue.path.to_string()), ("UNKNOWN_PROMPT", "steps[0].prompt_key".into()));
    assert!(issue.message.contains("`sumarizer`"));
    assert_eq!(issue.help.as_deref(), Some("did you mean `summarizer`? (known prompts: `answer`, `summarizer`)"));
}

#[test]
fn duplicate_prompt_keys() {
    let mut d = def(vec![call("a", "answer", "end")]);
    d.prompts.push(PromptSpec { key: "answer".into(), text: None });
    assert_eq!(codes(&check(&d)), vec![("DUPLICATE_PROMPT_KEY", "prompts.answer".into())]);
}

#[test]
fn user_part_sources() {
    let mut d = def(vec![call("a", "answer", "end")]);
    call_model_mut(&mut d, 0).user_parts = vec![
        UserPartSpec { source: "user_questoin_en".into(), template: "{}".into() },
        UserPartSpec { source: "node_texts".into(), template: "{}".into() },
        UserPartSpec { source: "summary".into(), template: "{}".into() },
    ];
    let issues = check(&d);
    assert_eq!(
        codes(&issues),
        vec![
            ("UNKNOWN_SOURCE", "steps[0].user_parts[0].source".into()),
            ("SOURCE_NOT_TEXT", "steps[0].user_parts[1].source".into()),
            ("UNKNOWN_SOURCE", "steps[0].user_parts[2].source".into()),
        ]
    );
    assert!(issues[0].help.as_deref().unwrap().starts_with("did you mean `user_question_en`?"));
    // Once a set_variables rule sets `summary`, it is a source.
    d.steps[0] = set("s", vec![from("summary", "last_model_response", None)], "a");
    d.steps.push(call("a", "answer", "end"));
    call_model_mut(&mut d, 1).user_parts = vec![UserPartSpec { source: "summary".into(), template: "{}".into() }];
    assert_eq!(codes(&check(&d)), vec![]);
}

#[test]
fn templates_hold_exactly_one_placeholder() {
    let mut d = def(vec![call("a", "answer", "end")]);
    call_model_mut(&mut d, 0).user_parts = vec![
        UserPartSpec { source: "context_blocks".into(), template: "### Context:\n".into() },
        UserPartSpec { source: "user_question".into(), template: "{} and {}".into() },
        UserPartSpec { source: "user_question_en".into(), template: "{{}}{}".into() },
    ];
    let issues = check(&d);
    // `{{}}{}` holds two `{}`: braces are not escapes, the template is taken literally.
    assert_eq!(
        codes(&issues),
        vec![
            ("TEMPLATE_PLACEHOLDER", "steps[0].user_parts[0].template".into()),
            ("TEMPLATE_PLACEHOLDER", "steps[0].user_parts[1].template".into()),
            ("TEMPLATE_PLACEHOLDER", "steps[0].user_parts[2].template".into()),
        ]
    );
    assert!(issues[0].message.contains("has no `{}`"), "{}", issues[0].message);
    assert!(issues[1].message.contains("has 2 `{}`"), "{}", issues[1].message);
}

#[test]
fn loop_guard_setting_must_exist_and_be_a_count() {
    let mut d = compaction_loop();
    if let StepKind::LoopGuard(g) = &mut d.steps[3].kind {
        g.max_turn_loops_from_settings = "max_turn_loop".into();
    }
    let issue = only(&d);
    assert_eq!(
        (issue.code.as_str(), issue.path.to_string()),
        ("UNKNOWN_SETTING", "steps[3].max_turn_loops_from_settings".into())
    );
    assert!(issue.help.as_deref().unwrap().starts_with("did you mean `max_turn_loops`?"));

    // A negative setting is the settings' own issue; a limit beyond a u32 is reported once, on
    // the setting, even when two guards use it.
    let mut d = def(vec![guard("g1", "g2", "end"), guard("g2", "g1", "end")]);
    d.settings.extra.insert("max_turn_loops".into(), -2);
    assert_eq!(codes(&check(&d)), vec![("INVALID_SETTING", "settings.max_turn_loops".into())]);
    d.settings.extra.insert("max_turn_loops".into(), 1 << 40);
    let issues = check(&d);
    assert_eq!(codes(&issues), vec![("INVALID_LOOP_LIMIT", "settings.max_turn_loops".into())]);
    assert!(issues[0].message.contains(&(1u64 << 40).to_string()) && issues[0].message.contains("`g1`"));
}

#[test]
fn set_variables_targets() {
    let d = def(vec![set(
        "s",
        vec![
            literal("inbox", json!(null)),
            literal("loop_counts", json!({})),
            literal("2bad", json!(1)),
            literal("node_texts", json!(null)),
            literal("history_dialog", json!([])),
            literal("context_blocks", json!("one block")),
            literal("context_blocks", json!(["a", "b"])),
            literal("user_question_en", json!(3)),
            literal("anything", json!({"k": [1, 2]})),
        ],
        "end",
    )]);
    let issues = check(&d);
    assert_eq!(
        codes(&issues),
        vec![
            ("READ_ONLY_TARGET", "steps[0].rules[0].set".into()),
            ("READ_ONLY_TARGET", "steps[0].rules[1].set".into()),
            ("INVALID_VARIABLE_NAME", "steps[0].rules[2].set".into()),
            ("INVALID_VALUE", "steps[0].rules[4].value".into()),
            ("INVALID_VALUE", "steps[0].rules[5].value".into()),
            ("INVALID_VALUE", "steps[0].rules[7].value".into()),
        ]
    );
    assert!(issues[1].message.contains("loop_guard"), "{}", issues[1].message);
    assert!(issues[4].message.contains("\"one block\""), "{}", issues[4].message);
}

#[test]
fn set_variables_sources_and_transforms() {
    let d = def(vec![set(
        "s",
        vec![
            from("context_blocks", "last_model_respons", Some("to_context_blocks")),
            from("context_blocks", "last_model_response", Some("to_context_block")),
            from("context_blocks", "last_model_response", None),
            from("user_question_en", "context_blocks", None),
            from("user_question_en", "context_blocks", Some("to_string")),
            from("parsed", "context_blocks", Some("parse_json")),
            from("copy", "search_results", None),
            from("node_texts", "user_question", None),
        ],
        "end",
    )]);
    let issues = check(&d);
    assert_eq!(
        codes(&issues),
        vec![
            ("UNKNOWN_SOURCE", "steps[0].rules[0].from".into()),
            ("UNKNOWN_TRANSFORM", "steps[0].rules[1].transform".into()),
            ("INCOMPATIBLE_VALUE", "steps[0].rules[2].from".into()),
            ("INCOMPATIBLE_VALUE", "steps[0].rules[3].from".into()),
            ("TRANSFORM_TYPE", "steps[0].rules[5].transform".into()),
            ("SOURCE_NOT_TEXT", "steps[0].rules[6].from".into()),
            ("INCOMPATIBLE_VALUE", "steps[0].rules[7].from".into()),
        ]
    );
    assert!(issues[0].help.as_deref().unwrap().starts_with("did you mean `last_model_response`?"));
    assert!(issues[1].help.as_deref().unwrap().starts_with("did you mean `to_context_blocks`?"));
    assert!(issues[2].message.contains("to_context_blocks"), "{}", issues[2].message);
    assert!(issues[3].message.contains("to_string"), "{}", issues[3].message);
}

#[test]
fn custom_outcomes_are_unique() {
    let d = def(vec![custom("route", &[("done", "end"), ("done", "end")])]);
    assert_eq!(codes(&check(&d)), vec![("DUPLICATE_OUTCOME", "steps[0].outcomes.done".into())]);
}

#[test]
fn every_problem_is_reported_at_once() {
    let mut d = compaction_loop();
    d.steps[0] = search("search", "fetc");
    call_model_mut(&mut d, 4).prompt_key = "sumarizer".into();
    d.steps[6] = set("answer", vec![literal("inbox", json!(null))], "manage_budget");
    let c = codes(&check(&d));
    for expected in [
        ("UNKNOWN_STEP_TARGET", "steps[0].next"),
        ("UNGUARDED_CYCLE", "steps[6].next"),
        ("UNKNOWN_PROMPT", "steps[4].prompt_key"),
        ("READ_ONLY_TARGET", "steps[6].rules[0].set"),
    ] {
        assert!(c.contains(&(expected.0, expected.1.to_owned())), "missing {expected:?} in {c:?}");
    }
}

#[test]
fn every_issue_names_its_value_and_says_how_to_fix_it() {
    let mut d = compaction_loop();
    d.steps[0] = search("search", "fetc");
    d.steps.push(fetch("orphan", "end"));
    for issue in check(&d) {
        assert!(issue.message.contains('`'), "{issue}");
        assert!(issue.help.as_deref().is_some_and(|h| !h.is_empty()), "{issue}");
    }
}

#[test]
fn the_contract_is_checked_with_the_real_tokenizer() {
    let all = ValidateOptions::default();
    assert_eq!(codes(&validate_definition(&compaction_loop(), &all)), vec![]);
    // 9_000 + 1_024 + 128 + the prompt do not fit 10_000.
    let mut d = compaction_loop();
    if let ModelSource::Inline(m) = &mut d.model {
        m.context_window = Some(10_000);
    }
    let issues = validate_definition(&d, &all);
    let c = codes(&issues);
    // Both call_model steps violate it, each reported under its own index.
    assert!(c.iter().any(|(_, p)| p.starts_with("steps[4]")), "{c:?}");
    assert!(c.iter().any(|(_, p)| p.starts_with("steps[6]")), "{c:?}");
    assert!(c.iter().all(|(code, _)| *code == "BUDGET_CONTRACT_VIOLATED"), "{c:?}");
    // Without token checks, the same definition passes.
    assert_eq!(codes(&check(&d)), vec![]);
    // Under auto_clamp (chosen by the environment), the contract clamps instead of failing.
    let clamp = ValidateOptions { env_limits_policy: Some("auto_clamp".into()), ..ValidateOptions::default() };
    // A clamp fills the window: the question it clamped for must have a declared budget.
    assert_eq!(codes(&validate_definition(&d, &clamp)), [("INPUT_BUDGET_NO_ROOM", "steps[4]".to_owned())]);
    d.settings.max_question_tokens = Some(200);
    assert_eq!(codes(&validate_definition(&d, &clamp)), vec![]);
}

#[test]
fn model_settings_and_budget_rules_are_checked_with_index_paths() {
    let mut d = compaction_loop();
    d.model = ModelSource::Inline(crate::pipeline::definition::ModelSpec {
        encoding: Some("cl100k".into()),
        ..Default::default()
    });
    d.settings.max_context_tokens = None;
    if let StepKind::ManageContextBudget(b) = &mut d.steps[2].kind {
        b.compact_code.push(crate::pipeline::definition::CompactRuleSpec {
            language: "sql".into(),
            policy: "threshold".into(),
            threshold: Some(1.5),
            inbox_key: None,
        });
    }
    let c = codes(&check(&d));
    for expected in [
        ("UNKNOWN_ENCODING", "model.encoding"),
        ("MISSING_CONTEXT_WINDOW", "model.context_window"),
        ("MISSING_MAX_CONTEXT_TOKENS", "settings.max_context_tokens"),
        ("COMPACT_RULE_THRESHOLD_OUT_OF_RANGE", "steps[2].compact_code[0].threshold"),
    ] {
        assert!(c.contains(&(expected.0, expected.1.to_owned())), "missing {expected:?} in {c:?}");
    }
}

#[test]
fn the_evidence_budget_must_fit_the_global_budget() {
    let mut d = compaction_loop();
    if let StepKind::FetchNodeTexts(f) = &mut d.steps[1].kind {
        f.evidence_tokens = 9_000;
    }
    assert_eq!(codes(&check(&d)), vec![("PIPELINE_BUDGET_MISCONFIG", "steps[1].evidence_tokens".into())]);
}

#[test]
fn a_top_k_of_any_size_is_checked_without_rendering_a_frame_per_node() {
    // Found by fuzzing (pipeline_load): the frames of `top_k` nodes were rendered one per node,
    // so a `top_k` near i64::MAX asked for an allocation of that many frames and panicked.
    let mut d = compaction_loop();
    d.settings.max_context_tokens = Some(i64::MAX);
    for step in &mut d.steps {
        match &mut step.kind {
            StepKind::SearchNodes(s) => s.top_k = i64::MAX,
            StepKind::FetchNodeTexts(f) => f.evidence_tokens = i64::MAX - 1,
            _ => {}
        }
    }
    // Whatever the huge values break, validation reports rather than panics.
    let _ = validate_definition(&d, &ValidateOptions::default());
}

#[test]
fn a_top_k_above_the_framed_nodes_is_still_refused_when_its_frames_cannot_fit() {
    // 2,000 nodes, more than `MAX_FRAMED_NODES`: their frames are counted as 1,024 frames (a lower
    // bound), which alone pass the 1,000 tokens `evidence_tokens` leaves of `max_context_tokens`.
    let mut d = compaction_loop();
    d.settings.max_context_tokens = Some(4_000);
    for step in &mut d.steps {
        match &mut step.kind {
            StepKind::SearchNodes(s) => s.top_k = 2_000,
            StepKind::FetchNodeTexts(f) => f.evidence_tokens = 3_000,
            _ => {}
        }
    }
    let issues = validate_definition(&d, &ValidateOptions::default());
    let frames = issues.iter().find(|i| i.path.to_string() == "steps[1].evidence_tokens");
    let frames = frames.unwrap_or_else(|| panic!("not refused: {:?}", codes(&issues)));
    assert_eq!(frames.code.as_str(), "PIPELINE_BUDGET_MISCONFIG");
    assert!(frames.message.contains("the frames of 2000 node(s)"), "{}", frames.message);
}

#[test]
fn prompts_provided_later_wait_for_the_contract_but_nothing_else() {
    let mut d = compaction_loop();
    d.prompts[1].text = None;
    // No MISSING_PROMPT_TEXT at compile time: the text comes at load time.
    assert_eq!(codes(&validate_definition(&d, &ValidateOptions::default())), vec![]);
    // A model in a config.json is only known at load time; the rest is still checked.
    d.model = ModelSource::ConfigFile("config.json".into());
    d.settings.max_history_tokens = None;
    call_model_mut(&mut d, 6).use_history = true;
    assert_eq!(
        codes(&validate_definition(&d, &ValidateOptions::default())),
        vec![("MISSING_MAX_HISTORY_TOKENS", "steps[6].use_history".into())]
    );
}

#[test]
fn the_contract_of_valid_steps_is_checked_while_other_steps_have_errors() {
    // Step 6 (`answer`) names an unknown prompt and step 1 an unknown target; step 4
    // (`summarize`) is fine, and its contract still fails in a 10_000-token window: all three
    // are reported at once, not the contract only after the rest is fixed.
    let mut d = compaction_loop();
    if let ModelSource::Inline(m) = &mut d.model {
        m.context_window = Some(10_000);
    }
    call_model_mut(&mut d, 6).prompt_key = "answr".into();
    if let StepKind::FetchNodeTexts(f) = &mut d.steps[1].kind {
        f.next = "manage_budgt".into();
    }
    let c = codes(&validate_definition(&d, &ValidateOptions::default()));
    assert!(c.contains(&("UNKNOWN_STEP_TARGET", "steps[1].next".into())), "{c:?}");
    assert!(c.iter().any(|(code, p)| *code == "UNKNOWN_PROMPT" && p == "steps[6].prompt_key"), "{c:?}");
    assert!(c.iter().any(|(code, p)| *code == "BUDGET_CONTRACT_VIOLATED" && p.starts_with("steps[4]")), "{c:?}");
    // The step whose prompt is unknown has no contract finding of its own.
    assert!(!c.iter().any(|(code, p)| *code == "BUDGET_CONTRACT_VIOLATED" && p.starts_with("steps[6]")), "{c:?}");
}

#[test]
fn a_loop_limit_of_zero_makes_the_guard_dead() {
    let mut d = compaction_loop();
    d.settings.extra.insert("max_turn_loops".into(), 0);
    let issues = check(&d);
    assert_eq!(codes(&issues), vec![("LOOP_LIMIT_ZERO", "settings.max_turn_loops".into())]);
    assert!(issues[0].message.contains("`summarize`"), "{}", issues[0].message);
}

#[test]
fn history_needs_a_history_budget_above_zero_named_under_the_step() {
    let mut d = compaction_loop();
    call_model_mut(&mut d, 6).use_history = true;
    d.settings.max_history_tokens = Some(0);
    let issues = check(&d);
    assert_eq!(codes(&issues), vec![("HISTORY_BUDGET_ZERO", "steps[6].use_history".into())]);
    assert!(issues[0].message.contains("`answer`"), "{}", issues[0].message);
    d.settings.max_history_tokens = None;
    let issues = validate_definition(&d, &ValidateOptions::default());
    assert_eq!(codes(&issues), vec![("MISSING_MAX_HISTORY_TOKENS", "steps[6].use_history".into())]);
    assert!(issues[0].message.contains("`answer`"), "{}", issues[0].message);
}

#[test]
fn an_output_limit_larger_than_the_window_is_reported_under_that_value() {
    let mut d = compaction_loop();
    call_model_mut(&mut d, 4).max_output_tokens = Some(20_000);
    let issues = validate_definition(&d, &ValidateOptions::default());
    let c = codes(&issues);
    assert!(c.contains(&("OUTPUT_EXCEEDS_WINDOW", "steps[4].max_output_tokens".into())), "{c:?}");
    let issue = issues.iter().find(|i| i.code == "OUTPUT_EXCEEDS_WINDOW").expect("reported");
    assert!(issue.message.contains("20000") && issue.message.contains("`summarize`"), "{}", issue.message);
}

#[test]
fn a_pipeline_whose_requests_never_render_the_context_needs_no_context_budget() {
    // A tools-only agent: its user message is the question.
    let mut d = def(vec![agent("answer", "end")]);
    for budget in [None, Some(0)] {
        d.settings.max_context_tokens = budget;
        assert_eq!(codes(&check(&d)), vec![], "{budget:?}");
        // The contract and the cost bound too, with the real tokenizer.
        assert_eq!(codes(&validate_definition(&d, &ValidateOptions::default())), vec![], "{budget:?}");
    }
    assert!(!crate::pipeline::pipeline_needs_context_budget(&d));
    d.settings.max_context_tokens = Some(-1);
    assert_eq!(codes(&check(&d)), [("INVALID_MAX_CONTEXT_TOKENS", "settings.max_context_tokens".to_owned())]);

    // The default parts render the context, so they need its budget.
    let StepKind::Agent(a) = &mut d.steps[0].kind else { unreachable!() };
    a.call.user_parts.clear();
    assert!(crate::pipeline::pipeline_needs_context_budget(&d));
    d.settings.max_context_tokens = None;
    assert_eq!(codes(&check(&d)), [("MISSING_MAX_CONTEXT_TOKENS", "settings.max_context_tokens".to_owned())]);
    d.settings.max_context_tokens = Some(0);
    assert_eq!(codes(&check(&d)), [("INVALID_MAX_CONTEXT_TOKENS", "settings.max_context_tokens".to_owned())]);

    // So does a manage_context_budget step, or a fetch, whatever the model steps render.
    // (The fetch's texts reach no request here, which the dataflow check reports on its own.)
    for first in [budget("b", "answer", "answer"), fetch("f", "answer")] {
        let mut d = def(vec![first, agent("answer", "end")]);
        d.settings.max_context_tokens = None;
        let found: Vec<_> = codes(&check(&d)).into_iter().filter(|(c, _)| !c.starts_with("DATAFLOW_")).collect();
        assert_eq!(found, [("MISSING_MAX_CONTEXT_TOKENS", "settings.max_context_tokens".to_owned())]);
    }
}
