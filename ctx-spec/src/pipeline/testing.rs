//! Builders of `PipelineDef` values for the unit tests of this crate and of ctx-runtime (feature
//! `__test-util`). Not a public API.
#![allow(missing_docs)]

use std::collections::BTreeMap;

use crate::validation::ConfigIssue;

use super::definition::*;

pub fn def(steps: Vec<StepDef>) -> PipelineDef {
    PipelineDef {
        name: "Test".into(),
        model: ModelSource::Inline(ModelSpec {
            model: None,
            context_window: Some(16_384),
            max_tokens: Some(1_024),
            encoding: Some("cl100k_base".into()),
            tokenizer: None,
            price: None,
        }),
        models: Vec::new(),
        settings: SettingsSpec {
            max_context_tokens: Some(9_000),
            max_history_tokens: Some(2_000),
            budget_safety_margin_tokens: Some(128),
            limits_policy: None,
            extra: BTreeMap::from([("max_turn_loops".to_owned(), 3)]),
            ..SettingsSpec::default()
        },
        prompts: vec![
            PromptSpec { key: "answer".into(), text: Some("Answer the question.".into()) },
            PromptSpec { key: "summarizer".into(), text: Some("Summarise the context.".into()) },
        ],
        steps,
        contexts: Default::default(),
    }
}

fn step(id: &str, kind: StepKind) -> StepDef {
    StepDef { id: id.into(), kind }
}

pub fn search(id: &str, next: &str) -> StepDef {
    step(id, StepKind::SearchNodes(SearchNodesSpec { top_k: 5, next: next.into() }))
}

pub fn expand(id: &str, next: &str) -> StepDef {
    step(id, StepKind::ExpandDependencyTree(ExpandSpec { max_depth: 1, next: next.into() }))
}

pub fn fetch(id: &str, next: &str) -> StepDef {
    step(id, StepKind::FetchNodeTexts(FetchSpec { evidence_tokens: 3_000, next: next.into() }))
}

pub fn budget(id: &str, on_ok: &str, on_over: &str) -> StepDef {
    step(
        id,
        StepKind::ManageContextBudget(ManageBudgetSpec {
            compact_code: vec![],
            divide_new_content: None,
            on_ok: on_ok.into(),
            on_over: on_over.into(),
        }),
    )
}

pub fn call(id: &str, prompt: &str, next: &str) -> StepDef {
    step(
        id,
        StepKind::CallModel(CallModelSpec {
            prompt_key: prompt.into(),
            model: None,
            max_output_tokens: None,
            max_tokens: None,
            user_parts: vec![
                UserPartSpec { source: "context_blocks".into(), template: "### Context:\n{}\n\n".into() },
                UserPartSpec { source: "user_question_en".into(), template: "### User:\n{}\n\n".into() },
            ],
            use_history: false,
            params: Default::default(),
            context: None,
            next: next.into(),
        }),
    )
}

pub fn guard(id: &str, on_allow: &str, on_deny: &str) -> StepDef {
    step(
        id,
        StepKind::LoopGuard(LoopGuardSpec {
            max_turn_loops_from_settings: "max_turn_loops".into(),
            on_allow: on_allow.into(),
            on_deny: on_deny.into(),
        }),
    )
}

pub fn from(set: &str, from: &str, transform: Option<&str>) -> SetRuleSpec {
    SetRuleSpec {
        set: set.into(),
        value: SetValueSpec::From { from: from.into(), transform: transform.map(Into::into) },
    }
}

pub fn literal(set: &str, value: serde_json::Value) -> SetRuleSpec {
    SetRuleSpec { set: set.into(), value: SetValueSpec::Value(value) }
}

pub fn set(id: &str, rules: Vec<SetRuleSpec>, next: &str) -> StepDef {
    step(id, StepKind::SetVariables(SetVariablesSpec { rules, next: next.into() }))
}

pub fn custom(id: &str, outcomes: &[(&str, &str)]) -> StepDef {
    step(
        id,
        StepKind::Custom(CustomSpec {
            outcomes: outcomes.iter().map(|(o, t)| ((*o).to_owned(), (*t).to_owned())).collect(),
        }),
    )
}

/// The parameters of the `search_docs` tool of [`agent`].
pub(crate) const SEARCH_PARAMETERS: &str = r#"{"type":"object","properties":{"query":{"type":"string","description":"What to look for"}},"required":["query"]}"#;

/// An agent step with one `search_docs` tool, two tool calls, history and a 600-token output.
pub fn agent(id: &str, next: &str) -> StepDef {
    step(
        id,
        StepKind::Agent(AgentSpec {
            call: CallModelSpec {
                prompt_key: "answer".into(),
                model: None,
                max_output_tokens: Some(600),
                max_tokens: None,
                user_parts: vec![UserPartSpec { source: "user_question".into(), template: "{}".into() }],
                use_history: true,
                params: Default::default(),
                context: None,
                next: next.into(),
            },
            tools: vec![ToolSpec {
                name: "search_docs".into(),
                description: "Search the docs".into(),
                parameters: SEARCH_PARAMETERS.into(),
            }],
            max_tool_calls: 2,
            turn_budget_tokens: None,
            mcp_servers: Vec::new(),
        }),
    )
}

/// The spec's on_over compaction loop, as the README writes it.
pub fn compaction_loop() -> PipelineDef {
    def(vec![
        search("search", "fetch"),
        fetch("fetch", "manage_budget"),
        budget("manage_budget", "answer", "budget_loop_guard"),
        guard("budget_loop_guard", "summarize", "answer"),
        call("summarize", "summarizer", "set_context_from_summary"),
        set(
            "set_context_from_summary",
            vec![
                from("context_blocks", "last_model_response", Some("to_context_blocks")),
                literal("last_model_response", serde_json::Value::Null),
            ],
            "manage_budget",
        ),
        call("answer", "answer", END),
    ])
}

/// `(code, path)` of every issue, for compact assertions.
pub fn codes(issues: &[ConfigIssue]) -> Vec<(&'static str, String)> {
    issues.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect()
}
