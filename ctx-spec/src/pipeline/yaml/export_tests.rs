use super::to_yaml;
use crate::params::{ModelParams, ResponseFormat};
use crate::pipeline::definition::*;
use crate::pipeline::yaml::PipelineFile;

const TRICKY: &str = "a \"quoted\" # not: a {comment} [x]\n\ttab \\ é 😀 \u{7} \u{85} \u{2028}";

fn def(steps: Vec<StepDef>) -> PipelineDef {
    PipelineDef {
        name: "Export".to_owned(),
        model: ModelSource::Inline(ModelSpec {
            model: Some("gpt-4o".to_owned()),
            context_window: Some(9600),
            max_tokens: Some(800),
            encoding: Some("o200k_base".to_owned()),
            tokenizer: None,
            price: None,
        }),
        models: Vec::new(),
        settings: SettingsSpec::default(),
        prompts: Vec::new(),
        steps,
        contexts: Default::default(),
    }
}

fn step(id: &str, kind: StepKind) -> StepDef {
    StepDef { id: id.to_owned(), kind }
}

/// `def` written and decoded back, with the text for failure messages.
fn round_trip(def: &PipelineDef) {
    let text = to_yaml(def);
    let back = PipelineFile::decode(&text, "/nowhere/export.yaml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(&back, def, "\n{text}");
    // What the loader reads back, the editors' schema accepts.
    super::super::json_schema::tests::assert_valid(&text);
}

fn call(next: &str) -> CallModelSpec {
    CallModelSpec {
        prompt_key: TRICKY.to_owned(),
        model: None,
        max_output_tokens: Some(2000),
        max_tokens: Some(-1),
        user_parts: vec![
            UserPartSpec { source: "context_blocks".to_owned(), template: "### Context:\n{}\n\n".to_owned() },
            UserPartSpec { source: "context_blocks".to_owned(), template: TRICKY.to_owned() },
        ],
        use_history: true,
        params: ModelParams {
            temperature: Some(0.1),
            top_p: Some(1e-300),
            presence_penalty: Some(-0.5),
            frequency_penalty: Some(1.25),
            stop: vec!["".to_owned(), TRICKY.to_owned()],
            seed: Some(i64::MIN),
            response_format: Some(ResponseFormat::JsonSchema {
                name: "answer".to_owned(),
                schema: r#"{"type": "object", "properties": {"a": {"type": "string"}}}"#.to_owned(),
                strict: true,
            }),
        },
        context: None,
        next: next.to_owned(),
    }
}

#[test]
fn the_top_level_round_trips() {
    let mut d = def(Vec::new());
    d.name = TRICKY.to_owned();
    round_trip(&d);
    d.model = ModelSource::Inline(ModelSpec::default());
    d.settings = SettingsSpec {
        max_context_tokens: Some(5000),
        max_history_tokens: Some(0),
        budget_safety_margin_tokens: Some(i64::MAX),
        limits_policy: Some("auto_clamp".to_owned()),
        compactors: vec!["yaml".to_owned(), TRICKY.to_owned()],
        node_frame: Some("--- {id} ---\n{text}".to_owned()),
        carry_context: Some(true),
        history_trim: Some(TRICKY.to_owned()),
        history_low_water_percent: Some(-1),
        max_cost_per_run: Some(0.1),
        billed_token_ratio: Some(1.5),
        max_question_tokens: Some(-3),
        max_variable_tokens: Some(250),
        extra: [("max_turn_loops".to_owned(), 3), (TRICKY.to_owned(), -7)].into_iter().collect(),
    };
    d.model = ModelSource::Inline(ModelSpec {
        tokenizer: Some("/models/x.gguf".to_owned()),
        price: Some(PriceSpec { input: Some(2.5), cached_input: None, cache_write: Some(1e-7), output: Some(0.0) }),
        ..ModelSpec::default()
    });
    round_trip(&d);
    d.prompts = vec![
        PromptSpec { key: "answer".to_owned(), text: Some(TRICKY.to_owned()) },
        PromptSpec { key: "null".to_owned(), text: None },
        PromptSpec { key: "".to_owned(), text: Some(String::new()) },
    ];
    round_trip(&d);
    d.model = ModelSource::ConfigFile("/etc/ctx/config.json".to_owned());
    round_trip(&d);
}

#[test]
fn search_expand_and_fetch_round_trip() {
    round_trip(&def(vec![
        step("search", StepKind::SearchNodes(SearchNodesSpec { top_k: 3, next: "expand".to_owned() })),
        step("expand", StepKind::ExpandDependencyTree(ExpandSpec { max_depth: -2, next: "fetch".to_owned() })),
        step("fetch", StepKind::FetchNodeTexts(FetchSpec { evidence_tokens: 3000, next: END.to_owned() })),
    ]));
}

#[test]
fn manage_context_budget_round_trips() {
    let rules = vec![
        CompactRuleSpec { language: "sql".to_owned(), policy: "always".to_owned(), threshold: None, inbox_key: None },
        CompactRuleSpec {
            language: "dotnet".to_owned(),
            policy: "threshold".to_owned(),
            threshold: Some(0.4),
            inbox_key: Some(TRICKY.to_owned()),
        },
    ];
    for compact_code in [Vec::new(), rules] {
        round_trip(&def(vec![step(
            "manage",
            StepKind::ManageContextBudget(ManageBudgetSpec {
                compact_code,
                divide_new_content: Some("<<<New content".to_owned()),
                on_ok: "a".to_owned(),
                on_over: END.to_owned(),
            }),
        )]));
    }
}

#[test]
fn call_model_round_trips() {
    round_trip(&def(vec![step("call", StepKind::CallModel(call(END)))]));
    let mut plain = call("x");
    plain.user_parts.clear();
    plain.use_history = false;
    plain.params = ModelParams { response_format: Some(ResponseFormat::JsonObject), ..ModelParams::default() };
    plain.max_tokens = None;
    round_trip(&def(vec![step("call", StepKind::CallModel(plain))]));
}

#[test]
fn agent_round_trips() {
    let tools = vec![ToolSpec {
        name: "lookup".to_owned(),
        description: TRICKY.to_owned(),
        parameters: r#"{"type":"object","properties":{}}"#.to_owned(),
    }];
    let servers = vec![
        McpServerSpec::new("files")
            .command(Some("node".into()))
            .args(vec!["server.js".into(), TRICKY.to_owned()])
            .tools(vec!["read_file".into(), "list-directory".into()]),
        McpServerSpec::new("web").url(Some("http://127.0.0.1:3001/mcp".into())),
        McpServerSpec::new("auth").url(Some("https://h/mcp".into())).bearer_token_env(Some("MCP_TOKEN".into())),
        McpServerSpec::new("bare"),
    ];
    for (tools, budget, mcp_servers) in [(tools, Some(4000), Vec::new()), (Vec::new(), None, servers)] {
        round_trip(&def(vec![step(
            "agent",
            StepKind::Agent(AgentSpec {
                call: call(END),
                tools,
                max_tool_calls: 4,
                turn_budget_tokens: budget,
                mcp_servers,
            }),
        )]));
    }
}

#[test]
fn loop_guard_set_variables_and_custom_round_trip() {
    let value = serde_json::json!({"a": [1, -2, 0.5, 1e300, true, null, "x\n\"y\""], "": {}});
    round_trip(&def(vec![
        step(
            "guard",
            StepKind::LoopGuard(LoopGuardSpec {
                max_turn_loops_from_settings: "max_turn_loops".to_owned(),
                on_allow: "set".to_owned(),
                on_deny: END.to_owned(),
            }),
        ),
        step(
            "set",
            StepKind::SetVariables(SetVariablesSpec {
                rules: vec![
                    SetRuleSpec {
                        set: "context_blocks".to_owned(),
                        value: SetValueSpec::From {
                            from: "last_model_response".to_owned(),
                            transform: Some("to_context_blocks".to_owned()),
                        },
                    },
                    SetRuleSpec {
                        set: "a".to_owned(),
                        value: SetValueSpec::From { from: "b".to_owned(), transform: None },
                    },
                    SetRuleSpec {
                        set: "last_model_response".to_owned(),
                        value: SetValueSpec::Value(serde_json::Value::Null),
                    },
                    SetRuleSpec { set: TRICKY.to_owned(), value: SetValueSpec::Value(value) },
                    SetRuleSpec { set: "s".to_owned(), value: SetValueSpec::Value("null".into()) },
                ],
                next: "custom".to_owned(),
            }),
        ),
        step(
            "custom",
            StepKind::Custom(CustomSpec {
                outcomes: vec![("yes".to_owned(), END.to_owned()), (TRICKY.to_owned(), "guard".to_owned())],
            }),
        ),
        step("empty", StepKind::Custom(CustomSpec { outcomes: Vec::new() })),
        step("none", StepKind::SetVariables(SetVariablesSpec { rules: Vec::new(), next: END.to_owned() })),
    ]));
}

#[test]
fn the_output_is_the_file_format() {
    let text =
        to_yaml(&def(vec![step("search", StepKind::SearchNodes(SearchNodesSpec { top_k: 3, next: END.to_owned() }))]));
    assert_eq!(
        text,
        "name: \"Export\"\nmodel: { model: \"gpt-4o\", context_window: 9600, max_tokens: 800, encoding: \
         \"o200k_base\" }\nsteps:\n  - id: \"search\"\n    action: search_nodes\n    top_k: 3\n    next: \"end\"\n"
    );
}

/// A pipeline's `contexts` and a model step's `context` key survive the round trip, tricky text,
/// every message kind and every policy key included.
#[test]
fn contexts_and_the_context_key_round_trip() {
    use crate::engine::*;
    let mut answer = call("end");
    answer.user_parts = Vec::new();
    answer.use_history = false;
    answer.context = Some("support".to_owned());
    let mut d = def(vec![step("answer", StepKind::CallModel(answer.clone()))]);
    d.steps.push(step("agent", StepKind::Agent(AgentSpec::new(answer, Vec::new(), 2))));
    d.contexts = EngineSpec {
        contexts: vec![
            ContextDeclaration {
                name: "support".to_owned(),
                inputs: vec!["user_question".to_owned(), "ticket".to_owned()],
                policy: Some(ContextPolicySpec {
                    input_budget: Some(InputBudgetSpec { max_tokens: 3_000 }),
                    pack_budget: Some(PackBudgetSpec { default_ratio: Some(0.25) }),
                    overflow: Some("compact".to_owned()),
                    compactor: Some(CompactorSpec { name: "truncate".to_owned() }),
                    expansion: Some(ExpansionSpec { max_pages: 3, min_fill_ratio: 1.0 }),
                }),
                messages: vec![
                    MessageSpec::System { content: TRICKY.to_owned() },
                    MessageSpec::Context(ContextInsert { ratio: Some(0.5), ..ContextInsert::new("kb") }),
                    MessageSpec::Context(ContextInsert {
                        placement: PackPlacement::Variable,
                        ..ContextInsert::new("faq")
                    }),
                    MessageSpec::History,
                    MessageSpec::Assistant { content: "Sure.".to_owned() },
                    MessageSpec::User { content: "{context.faq} {input.user_question}".to_owned() },
                ],
            },
            ContextDeclaration {
                name: "faq".to_owned(),
                messages: vec![MessageSpec::System { content: "FAQ".to_owned() }],
                ..ContextDeclaration::default()
            },
        ],
        retrievers: vec![RetrieverDecl { name: "kb".to_owned(), query: "{input.ticket}".to_owned(), limit: 4 }],
        compactors: vec!["summarize".to_owned()],
    };
    round_trip(&d);
    assert!(to_yaml(&d).contains("\n    context: \"support\"\n"), "{}", to_yaml(&d));
}
