//! Pipeline validation and loading on any definition: duplicate and unknown step ids, cycles
//! with and without guards, unreachable steps, numbers of any sign and size, unknown names. Never
//! a panic; every problem is an issue with a stable code and a path; a definition that
//! validates also loads, and one that does not is refused with the same issues.

#![no_main]

use std::collections::BTreeMap;

use arbitrary::Arbitrary;
use ctx_runtime::pipeline::*;
use libfuzzer_sys::fuzz_target;

/// Step ids and names come from small sets, so that references hit, miss and loop.
const IDS: [&str; 6] = ["search", "fetch", "manage", "guard", "answer", "end"];
const NAMES: [&str; 6] = ["answer", "summarizer", "context_blocks", "user_question_en", "max_turn_loops", "sql"];

fn id(i: u8) -> String {
    IDS[usize::from(i) % IDS.len()].to_owned()
}

fn name(i: u8) -> String {
    NAMES[usize::from(i) % NAMES.len()].to_owned()
}

#[derive(Arbitrary, Debug)]
struct Step {
    id: u8,
    kind: u8,
    number: i64,
    a: u8,
    b: u8,
    c: u8,
    flag: bool,
    text: String,
}

#[derive(Arbitrary, Debug)]
struct Input {
    window: Option<i64>,
    max_tokens: Option<i64>,
    encoding: u8,
    max_context: Option<i64>,
    max_history: Option<i64>,
    margin: Option<i64>,
    loops: Option<i64>,
    policy: u8,
    prompts: Vec<(u8, Option<String>)>,
    steps: Vec<Step>,
}

fn call(s: &Step) -> CallModelSpec {
    CallModelSpec::new(name(s.c), id(s.a))
        .max_output_tokens(s.flag.then_some(s.number))
        .max_tokens((!s.flag).then_some(s.number / 2))
        .user_parts(if s.b % 4 == 0 { Vec::new() } else { vec![UserPartSpec::new(name(s.b), s.text.clone())] })
        .use_history(s.flag)
        .params(
            ModelParams::default()
                .temperature(s.flag.then(|| s.number as f64 / 100.0))
                .top_p((!s.flag).then(|| s.number as f64 / 1000.0))
                .stop((0..usize::from(s.c % 6)).map(|i| s.text.chars().take(i).collect()).collect())
                .seed(s.flag.then_some(s.number))
                .response_format((s.a % 3 == 0).then(|| ResponseFormat::JsonSchema {
                    name: s.text.clone(),
                    schema: s.text.clone(),
                    strict: s.flag,
                })),
        )
}

fn kind(s: &Step) -> StepKind {
    match s.kind % 8 {
        0 => StepKind::SearchNodes(SearchNodesSpec::new(s.number, id(s.a))),
        1 => StepKind::ExpandDependencyTree(ExpandSpec::new(s.number, id(s.a))),
        2 => StepKind::FetchNodeTexts(FetchSpec::new(s.number, id(s.a))),
        3 => StepKind::ManageContextBudget(
            ManageBudgetSpec::new(id(s.a), id(s.b))
                .compact_code(
                    (0..usize::from(s.c % 3))
                        .map(|j| {
                            CompactRuleSpec::new(
                                ["sql", "dotnet", "python"][(usize::from(s.c) + j) % 3],
                                ["always", "threshold", "demand", "sometimes"][(usize::from(s.b) + j) % 4],
                            )
                            .threshold(s.flag.then(|| s.number as f64 / 1000.0))
                            .inbox_key((!s.flag).then(|| s.text.clone()))
                        })
                        .collect(),
                )
                .divide_new_content(s.flag.then(|| s.text.clone())),
        ),
        4 => StepKind::CallModel(call(s)),
        6 => StepKind::Agent(
            AgentSpec::new(
                call(s),
                (0..usize::from(s.c % 3))
                    .map(|j| {
                        ToolSpec::new(
                            if j == 0 { name(s.b) } else { s.text.clone() },
                            s.text.clone(),
                            if s.flag { s.text.clone() } else { r#"{"type":"object"}"#.to_owned() },
                        )
                    })
                    .collect(),
                s.number,
            )
            .turn_budget_tokens((!s.flag).then_some(s.number)),
        ),
        5 => StepKind::LoopGuard(LoopGuardSpec::new(name(s.c), id(s.a), id(s.b))),
        _ => StepKind::SetVariables(SetVariablesSpec::new(
            vec![SetRuleSpec::new(
                name(s.c),
                if s.flag {
                    SetValueSpec::From { from: name(s.b), transform: Some(s.text.clone()) }
                } else {
                    SetValueSpec::Value(serde_json::Value::String(s.text.clone()))
                },
            )],
            id(s.a),
        )),
    }
}

fuzz_target!(|input: Input| {
    let def = PipelineDef::new("Fuzzed")
        .model(ModelSource::Inline(
            ModelSpec::default()
                .context_window(input.window)
                .max_tokens(input.max_tokens)
                .encoding(Some(["cl100k_base", "o200k_base", "p50k"][usize::from(input.encoding % 3)].into())),
        ))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(input.max_context)
                .max_history_tokens(input.max_history)
                .budget_safety_margin_tokens(input.margin)
                .limits_policy(Some(["fail_fast", "auto_clamp", "yolo"][usize::from(input.policy % 3)].into()))
                .extra(input.loops.map(|l| ("max_turn_loops".to_owned(), l)).into_iter().collect::<BTreeMap<_, _>>()),
        )
        .prompts(input.prompts.iter().take(4).map(|(k, text)| PromptSpec::new(name(*k), text.clone())).collect())
        .steps(input.steps.iter().take(10).map(|s| StepDef::new(id(s.id), kind(s))).collect());
    let issues = validate_definition(&def, &ValidateOptions::default());
    for issue in &issues {
        assert!(
            !issue.code.as_str().is_empty()
                && issue.code.as_str().chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
        );
        assert!(!issue.message.is_empty());
    }
    match LoadedPipeline::load(def, LoadOptions::new()) {
        Ok(p) => {
            assert!(issues.is_empty(), "validation found {issues:?} but load accepted the pipeline");
            assert!(p.step_bound() >= 1);
            // A pipeline in which no step renders, fetches or budgets a context needs no budget.
            assert!(p.context_window() > 0);
            assert!(p.max_context_tokens() > 0 || !pipeline_needs_context_budget(p.definition()));
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
