//! Decoding every step kind and top-level form, and the YAML-level problems, located.

use super::*;
use crate::params::ResponseFormat;
use crate::pipeline::definition::*;
use crate::validation::FieldPath;

const HEAD: &str = "model: { model: gpt-4o, context_window: 16000, max_tokens: 800 }
settings: { max_context_tokens: 4000, max_history_tokens: 500 }
prompts:
  answer: \"Answer from the context.\"
steps:
";

fn load(steps: &str) -> Result<LoadedFile, PipelineFileError> {
    PipelineFile::parse(&format!("{HEAD}{steps}"), "/nonexistent/p.yaml")
}

/// (line, column, code) of each issue; lines count from the first step line as `HEAD` is 5 lines.
fn issues(steps: &str) -> Vec<(usize, usize, &'static str)> {
    let err = load(steps).expect_err("the file is broken");
    err.issues().iter().map(|i| (i.line - 5, i.column, i.code.as_str())).collect()
}

#[test]
fn agent_steps_with_tools_and_model_parameters_decode() {
    let file = load(
        "- id: answer
  action: agent
  prompt_key: answer
  max_output_tokens: 600
  temperature: 0.3
  top_p: 1
  seed: 7
  stop: \"END\"
  response_format: { json_schema: { name: reply, schema: { type: object, properties: { a: { type: string } } }, strict: true } }
  tools:
    - name: search_docs
      description: Search the docs
      parameters:
        type: object
        properties: { query: { type: string } }
        required: [query]
  max_tool_calls: 3
  turn_budget_tokens: 9000
  user_parts:
    - { source: user_question_en, template: \"{}\" }
  use_history: true
  next: end
",
    )
    .unwrap();
    let StepKind::Agent(agent) = &file.definition().steps[0].kind else { panic!("an agent") };
    assert_eq!((agent.max_tool_calls, agent.turn_budget_tokens), (3, Some(9000)));
    let params = &agent.call.params;
    assert_eq!((params.temperature, params.top_p, params.seed), (Some(0.3), Some(1.0), Some(7)));
    assert_eq!(params.stop, ["END"]);
    let Some(ResponseFormat::JsonSchema { name, schema, strict }) = &params.response_format else { panic!() };
    assert_eq!((name.as_str(), *strict), ("reply", true));
    assert_eq!(serde_json::from_str::<serde_json::Value>(schema).unwrap()["type"], "object");
    assert_eq!(agent.tools[0].schema().unwrap().parameters["required"][0], "query");
    assert_eq!(agent.call.user_parts[0].source, "user_question_en");
    let at = file.locations().get(&FieldPath::parse("steps[0].tools[0].name")).unwrap();
    assert_eq!((at.line, at.column), (16, 13));
}

#[test]
fn mcp_servers_decode_as_a_mapping_or_a_list_and_are_located() {
    let file = load(
        "- id: answer
  action: agent
  prompt_key: answer
  max_tool_calls: 3
  mcp_servers:
    files:
      command: node
      args: [server.js, ./docs]
      tools: [read_text_file, list_directory]
    web: { url: \"http://127.0.0.1:3001/mcp\", bearer_token_env: WEB_TOKEN }
  next: again
- id: again
  action: agent
  prompt_key: answer
  max_tool_calls: 1
  mcp_servers:
    - { name: files, command: node, args: [server.js] }
  next: end
",
    )
    .unwrap();
    let steps = &file.definition().steps;
    let StepKind::Agent(agent) = &steps[0].kind else { panic!("an agent") };
    let files = McpServerSpec::new("files")
        .command(Some("node".into()))
        .args(vec!["server.js".into(), "./docs".into()])
        .tools(vec!["read_text_file".into(), "list_directory".into()]);
    let web = McpServerSpec::new("web")
        .url(Some("http://127.0.0.1:3001/mcp".into()))
        .bearer_token_env(Some("WEB_TOKEN".into()));
    assert_eq!(agent.mcp_servers, [files, web]);
    assert!(agent.tools.is_empty());
    let StepKind::Agent(again) = &steps[1].kind else { panic!("an agent") };
    assert_eq!(
        again.mcp_servers,
        [McpServerSpec::new("files").command(Some("node".into())).args(vec!["server.js".into()])]
    );
    let at = file.locations().get(&FieldPath::parse("steps[0].mcp_servers[1].name")).unwrap();
    assert_eq!((at.line, at.column), (15, 5));

    // A misspelt key of a server, and a server without a transport, each where written.
    assert_eq!(
        issues(
            "- id: answer
  action: agent
  prompt_key: answer
  max_tool_calls: 3
  mcp_servers:
    files: { comand: node }
  next: end
"
        ),
        [(6, 14, "YAML_UNKNOWN_KEY"), (6, 5, "AGENT_MCP_SERVER_TRANSPORT")]
    );

    // An `https://` URL, refused at the value by the rule `pipeline!` and `ctx check` share,
    // with the two ways to reach such a server.
    let remote = "- id: answer
  action: agent
  prompt_key: answer
  max_tool_calls: 3
  mcp_servers:
    remote: { url: \"https://mcp.example.com/mcp\" }
  next: end
";
    assert_eq!(issues(remote), [(6, 20, "AGENT_MCP_SERVER_TRANSPORT")]);
    let err = load(remote).unwrap_err();
    assert!(err.issues()[0].message.contains("plain HTTP only"), "{}", err.issues()[0].message);
    let help = err.issues()[0].help.as_deref().unwrap_or_default();
    assert!(help.contains("stdio") && help.contains("TLS-terminating proxy"), "{help}");
}

#[test]
fn custom_steps_set_rules_and_user_part_names_decode() {
    let file = load(
        "- id: route
  action: custom
  outcomes: { simple: answer, hard: set }
- id: set
  action: set_variables
  rules:
    - { set: tries, value: 1 }
    - { set: context_blocks, from: user_question_en, transform: to_context_blocks }
  next: answer
- id: answer
  action: call_model
  prompt_key: answer
  response_format: json
  user_parts:
    user_question_en: { template: \"Q: {}\" }
  next: end
",
    )
    .unwrap();
    let steps = &file.definition().steps;
    let StepKind::Custom(custom) = &steps[0].kind else { panic!() };
    assert_eq!(custom.outcomes, [("simple".into(), "answer".into()), ("hard".into(), "set".into())]);
    let StepKind::SetVariables(set) = &steps[1].kind else { panic!() };
    assert_eq!(set.rules[0].value, SetValueSpec::Value(serde_json::json!(1)));
    assert_eq!(
        set.rules[1].value,
        SetValueSpec::From { from: "user_question_en".into(), transform: Some("to_context_blocks".into()) }
    );
    let StepKind::CallModel(call) = &steps[2].kind else { panic!() };
    assert_eq!(
        (call.user_parts[0].source.as_str(), call.user_parts[0].template.as_str()),
        ("user_question_en", "Q: {}")
    );
    assert_eq!(call.params.response_format, Some(ResponseFormat::JsonObject));
    assert!(file.locations().get(&FieldPath::parse("steps[0].outcomes.hard")).is_some());
}

#[test]
fn yaml_level_problems_are_all_reported_where_written() {
    let found = issues(
        "- id: search
  action: serch_nodes
  top_k: 3
  next: fetch
- id: fetch
  action: fetch_node_texts
  evidence_tokens: 100
  max_tokens: 100
  next: answer
- id: answer
  action: call_model
  prompt_key: answer
  prompt_key: again
  use_history: yes
  next: end
- id: set
  action: set_variables
  rules: [ { set: a, from: b, value: 1 } ]
  next: end
- just a string
",
    );
    assert_eq!(
        found,
        [
            (2, 11, "YAML_UNKNOWN_ACTION"),
            (8, 3, "YAML_CONFLICTING_KEYS"),
            (13, 3, "YAML_DUPLICATE_KEY"),
            (14, 16, "YAML_WRONG_TYPE"),
            (18, 12, "YAML_CONFLICTING_KEYS"),
            (20, 3, "YAML_WRONG_TYPE"),
        ]
    );
    let err = load("- id: s\n  action: serch_nodes\n").unwrap_err();
    assert!(err.issues()[0].message.ends_with("did you mean `search_nodes`?"), "{}", err.issues()[0]);
}

#[test]
fn top_level_keys_models_and_prompts() {
    let text = "name: Demo
model: gpt-4o
settings:
  max_context_tokens: 4000
  max_turn_loops: 2
prompts:
  answer: { text: \"Answer.\" }
  later: null
steps:
- { id: answer, action: call_model, prompt_key: answer, next: end }
";
    let file = PipelineFile::load_with_text(text);
    let def = file.definition();
    assert_eq!(def.name, "Demo");
    assert_eq!(def.model, ModelSource::Inline(ModelSpec { model: Some("gpt-4o".into()), ..ModelSpec::default() }));
    assert_eq!(def.settings.extra.get("max_turn_loops"), Some(&2));
    assert_eq!(def.prompts[1], PromptSpec { key: "later".into(), text: None });

    let twice = PipelineFile::parse("config: c.json\nmodel: { model: gpt-4o }\nsteps: []\n", "/nonexistent/p.yaml");
    assert_eq!(twice.unwrap_err().issues()[0].code.as_str(), "YAML_CONFLICTING_KEYS");
    let typo = PipelineFile::parse("setings: {}\nsteps: []\n", "/nonexistent/p.yaml").unwrap_err();
    assert_eq!((typo.issues()[0].code.as_str(), typo.issues()[0].line), ("YAML_UNKNOWN_KEY", 1));
    assert!(typo.issues()[0].message.contains("did you mean `settings`?"));
    let named = PipelineFile::parse("settings: { max_turn_loops: many }\nsteps: []\n", "/nonexistent/p.yaml");
    assert_eq!(named.unwrap_err().issues()[0].code.as_str(), "YAML_WRONG_TYPE");
    let missing = PipelineFile::parse("prompts: { a: { file: nowhere.txt } }\nsteps: []\n", "/nonexistent/p.yaml");
    assert_eq!(missing.unwrap_err().issues()[0].code.as_str(), "PROMPT_FILE_UNREADABLE");
    let config = PipelineFile::parse("config: nowhere.json\nsteps: []\n", "/nonexistent/p.yaml").unwrap_err();
    assert_eq!((config.issues()[0].line, config.issues()[0].column), (1, 9));
}

#[test]
fn validation_issues_fall_back_to_the_nearest_located_ancestor() {
    let file = PipelineFile::load_with_text("steps:\n- { id: a, action: search_nodes, top_k: 0, next: end }\n");
    let issue = crate::validation::ConfigIssue::new(
        crate::codes::Code::InvalidValue,
        FieldPath::parse("steps[0].nowhere[3]"),
        "m",
    );
    let located = file.locate(&issue);
    assert_eq!((located.line, located.column, located.code.as_str()), (2, 3, "INVALID_VALUE"));
    let root = file.locate(&crate::validation::ConfigIssue::new(
        crate::codes::Code::InvalidValue,
        FieldPath::parse("elsewhere"),
        "m",
    ));
    assert_eq!((root.line, root.column), (1, 1));
}

/// Issue 26 item 10: under `auto_clamp` a file that needs a clamp loads, and says what was
/// lowered, located at the value, with before, after and why; the environment's policy counts.
#[test]
fn auto_clamps_are_kept_and_located_as_warnings() {
    let text = "model: { model: gpt-4o, context_window: 4000, max_tokens: 800 }
settings: { max_context_tokens: 3900, max_question_tokens: 100, limits_policy: auto_clamp }
prompts:
  answer: \"Answer from the context.\"
steps:
- { id: answer, action: call_model, prompt_key: answer, next: end }
";
    let file = PipelineFile::parse(text, "/nonexistent/p.yaml").expect("auto_clamp makes it fit");
    assert_eq!(file.clamps().len(), 1, "{:?}", file.clamps());
    let clamp = &file.clamps()[0];
    assert_eq!((clamp.target.clone(), clamp.before), (crate::contract::ClampTarget::MaxContextTokens, 3900));
    assert!(clamp.after < 3900);
    let warning = file.clamp_warning(clamp);
    assert_eq!((warning.line, warning.code), (2, crate::codes::Code::BudgetAutoClamped));
    assert!(
        warning.message.contains(&format!("from 3900 to {}", clamp.after)) && warning.message.contains("step `answer`"),
        "{}",
        warning.message
    );

    // The same file under `fail_fast` has no clamp; the environment's policy wins over the file's.
    let fail_fast = text.replace("limits_policy: auto_clamp", "limits_policy: fail_fast");
    assert!(PipelineFile::parse(&fail_fast, "/nonexistent/p.yaml").is_err());
    let opts = crate::pipeline::ValidateOptions { env_limits_policy: Some("auto_clamp".into()), ..Default::default() };
    let dir = std::env::temp_dir().join(format!("ctx-clamp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("p.yaml");
    std::fs::write(&path, &fail_fast).expect("write");
    let loaded = PipelineFile::load_with(&path, &opts).expect("the environment's auto_clamp applies");
    assert_eq!(loaded.clamps().len(), 1);
    std::fs::remove_dir_all(&dir).ok();
}

impl PipelineFile {
    /// Decodes `text` without the validation rules (tests of decoding).
    fn load_with_text(text: &str) -> LoadedFile {
        match PipelineFile::read(text, std::path::Path::new("/nonexistent/p.yaml")) {
            Ok((file, _)) => file,
            Err(e) => panic!("{e}"),
        }
    }
}

/// Issue 26 item 11: a problem of decoding in one step no longer hides a rule's problem in
/// another: the rules run on the partial definition, less what only echoes the first problem.
#[test]
fn a_wrong_type_and_a_rule_in_other_steps_are_reported_in_one_run() {
    let found = issues(
        "- id: search
  action: search_nodes
  top_k: many
  next: fetch
- id: budget
  action: manage_context_budget
  compact_code:
    rules:
      - { language: sql, policy: threshold, threshold: 1.5 }
  on_ok: answer
  on_over: answer
- id: answer
  action: call_model
  prompt_key: answer
  next: end
- id: fetch
  action: fetch_node_texts
  evidence_tokens: 1000
  next: budget
",
    );
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0], (3, 10, "YAML_WRONG_TYPE"));
    assert_eq!(found[1], (9, 56, "COMPACT_RULE_THRESHOLD_OUT_OF_RANGE"));
    // The placeholder of `top_k` is not judged by the rules, and a lost transition hides only
    // the problems of the whole graph.
    let lost = issues(
        "- id: a\n  action: search_nodes\n  top_k: 3\n  next: [b]\n- id: b\n  action: call_model\n  prompt_key: answer\n  next: end\n",
    );
    assert_eq!(lost, [(4, 9, "YAML_WRONG_TYPE")]);
}

/// Issue 26 item 12: every location names its file one way, absolute, whether the loader was
/// given a bare file name or a path (so `ctx check`'s JSON `file` field does not mix forms), and a
/// file that is not UTF-8 is reported where its first bad byte is.
#[test]
fn locations_name_files_alike_and_point_at_the_first_bad_byte() {
    let bare = PipelineFile::parse("steps: 3\n", "p.yaml").unwrap_err();
    let file = &bare.issues()[0].file;
    assert!(file.is_absolute() && file.ends_with("p.yaml"), "{}", file.display());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("main.yaml");
    std::fs::write(&path, b"steps:\n- id: a\n  action: caf\xe9\n").unwrap();
    let err = PipelineFile::load(&path).unwrap_err();
    let issue = &err.issues()[0];
    assert_eq!((issue.code.as_str(), issue.line, issue.column), ("PIPELINE_FILE_UNREADABLE", 3, 14), "{issue}");
    assert!(issue.to_string().starts_with(&format!("{}:3:14: ", path.display())), "{issue}");
    let gone = PipelineFile::load(dir.path().join("gone.yaml")).unwrap_err();
    assert!(!gone.issues()[0].to_string().contains(":0:0"), "{}", gone.issues()[0]);
}

/// `presence_penalty` and `frequency_penalty`, added as two schema rows and two fields: decoded,
/// exported and checked with nothing written for them in the YAML front end.
#[test]
fn the_penalties_are_read_checked_and_written_back() {
    let step = "- id: answer
  action: call_model
  prompt_key: answer
  presence_penalty: 0.5
  frequency_penalty: -1
  next: end
";
    let file = load(step).unwrap();
    let StepKind::CallModel(call) = &file.definition().steps[0].kind else { panic!() };
    assert_eq!((call.params.presence_penalty, call.params.frequency_penalty), (Some(0.5), Some(-1.0)));
    let text = to_yaml(file.definition());
    assert!(text.contains("presence_penalty: 0.5") && text.contains("frequency_penalty: -1.0"), "{text}");
    assert_eq!(&PipelineFile::decode(&text, "/nonexistent/p.yaml").unwrap(), file.definition());
    assert_eq!(
        issues(&step.replace("-1\n", "2.5\n").replace("0.5", "high")),
        [(4, 21, "YAML_WRONG_TYPE"), (5, 22, "PENALTY_OUT_OF_RANGE")]
    );
}

/// A required key left out is reported at its step, once.
#[test]
fn a_missing_key_is_reported_at_its_step() {
    assert_eq!(issues("- id: a\n  action: search_nodes\n  next: end\n"), [(1, 3, "YAML_MISSING_KEY")]);
}

/// The keys whose rules came before any front end read them: `history_trim`,
/// `history_low_water_percent`, `max_cost_per_run` and the model's `price`, read through their
/// schema rows, checked by their rules, and written back by the export.
#[test]
fn history_trim_the_cost_cap_and_the_price_are_read_checked_and_written_back() {
    let head = |model: &str, settings: &str| {
        format!(
            "model: {{ model: gpt-4o, context_window: 16000, max_tokens: 800{model} }}
settings: {{ max_context_tokens: 4000, max_history_tokens: 500{settings} }}
prompts: {{ answer: \"Answer.\" }}
steps:
- {{ id: answer, action: call_model, prompt_key: answer, use_history: true, next: end }}
"
        )
    };
    let good = head(
        ", price: { input: 2.5, cached_input: 1.25, output: 10 }",
        ", history_trim: fold, history_low_water_percent: 60, max_cost_per_run: 0.05",
    );
    let file = PipelineFile::load_with_text(&good);
    let def = file.definition();
    let ModelSource::Inline(model) = &def.model else { panic!("{:?}", def.model) };
    let price = model.price.as_ref().expect("the price is read");
    assert_eq!(
        (price.input, price.cached_input, price.cache_write, price.output),
        (Some(2.5), Some(1.25), None, Some(10.0))
    );
    let s = &def.settings;
    assert_eq!(
        (s.history_trim.as_deref(), s.history_low_water_percent, s.max_cost_per_run),
        (Some("fold"), Some(60), Some(0.05))
    );
    let text = to_yaml(def);
    assert!(text.contains("price: { input: 2.5, cached_input: 1.25, output: 10.0 }"), "{text}");
    assert!(text.contains("history_trim: \"fold\"") && text.contains("max_cost_per_run: 0.05"), "{text}");
    assert_eq!(&PipelineFile::decode(&text, "/nonexistent/p.yaml").unwrap(), def);

    // Each bad value is reported where it is written, by the decoder (a wrong type) or by its
    // rule, and its message names the key.
    let found = |model: &str, settings: &str, value: &str| {
        let text = head(model, settings);
        let err = PipelineFile::parse(&text, "/nonexistent/p.yaml").expect_err("broken");
        let line = text.lines().position(|l| l.contains(value)).expect("written") + 1;
        let column = text.lines().nth(line - 1).and_then(|l| l.find(value)).expect("written") + 1;
        let found: Vec<_> = err.issues().iter().map(|i| (i.code.as_str(), i.message.clone())).collect();
        let at: Vec<_> = err.issues().iter().map(|i| (i.line, i.column)).collect();
        assert_eq!(at, [(line, column)], "{found:?}");
        found.into_iter().next().expect("one issue")
    };
    let (code, message) = found("", ", history_trim: newest_first", "newest_first");
    assert_eq!(code, "UNKNOWN_HISTORY_TRIM", "{message}");
    let (code, message) = found("", ", history_trim: fold, history_low_water_percent: 150", "150");
    assert_eq!(code, "INVALID_HISTORY_LOW_WATER");
    assert!(message.contains("history_low_water_percent"), "{message}");
    let (code, message) = found(", price: { input: 2.5, output: 10 }", ", max_cost_per_run: lots", "lots");
    assert_eq!(code, "YAML_WRONG_TYPE");
    assert!(message.contains("`max_cost_per_run` in `settings` must be a number, found `lots`"), "{message}");
    let (code, message) = found(", price: { input: 2.5, output: 10 }", ", max_cost_per_run: -1", "-1");
    assert_eq!(code, "INVALID_MAX_COST_PER_RUN");
    assert!(message.contains("max_cost_per_run"), "{message}");
    // A wrong type under `price`, and not also the missing `input` its rule would see.
    let (code, message) = found(", price: { input: cheap, output: 10 }", "", "cheap");
    assert_eq!(code, "YAML_WRONG_TYPE");
    assert!(message.contains("`price.input` must be a number"), "{message}");
    let (code, message) = found(", price: { input: -1, output: 10 }", "", "-1");
    assert_eq!(code, "INVALID_PRICE");
    assert!(message.contains("price.input"), "{message}");
}

/// `contexts:` at the top level: read in the engine's form, its rules located at the line of the
/// value, a typo'd key and an unknown context named where they are written.
#[test]
fn contexts_decode_and_their_problems_are_located() {
    const CONTEXTS: &str = "contexts:
  contexts:
    - name: support
      inputs: [user_question]
      policy: { input_budget: { max_tokens: 3000 } }
      messages:
        - { type: system, content: \"Answer from the documents.\" }
        - { type: context, name: kb }
        - { type: user, content: \"{input.user_question}\" }
  retrievers:
    - { name: kb, query: \"{input.user_question}\", limit: 3 }
";
    let step = |context: &str| {
        format!(
            "- id: answer\n  action: call_model\n  prompt_key: answer\n  context: {context}\n  next: end\n{CONTEXTS}"
        )
    };
    let file = load(&step("support")).unwrap_or_else(|e| panic!("{e}"));
    let def = file.definition();
    let StepKind::CallModel(call) = &def.steps[0].kind else { panic!("a call") };
    assert_eq!(call.context.as_deref(), Some("support"));
    assert_eq!(def.contexts.contexts[0].inputs, ["user_question"]);
    assert_eq!(def.contexts.retrievers[0].limit, 3);
    // The step's name of a context: the line and column of its value (line 4 of the steps).
    assert_eq!(issues(&step("suport")), [(4, 12, "CONTRACT_UNKNOWN_CONTEXT")]);
    // A rule of the engine, at the line of the value it judges: the pack `kbb` (line 13).
    let broken = step("support").replace("{ type: context, name: kb }", "{ type: context, name: kbb }");
    assert_eq!(issues(&broken), [(13, 34, "ENGINE_UNKNOWN_PACK")]);
    let err = load(&broken).unwrap_err();
    assert_eq!(err.issues()[0].help.as_deref(), Some("did you mean `kb`?"));
    // A key the engine does not know, at the key, with the nearest.
    let typo = step("support").replace("inputs:", "input:");
    let err = load(&typo).unwrap_err();
    let found: Vec<_> = err.issues().iter().map(|i| (i.line - 5, i.code.as_str(), i.help.clone())).collect();
    assert_eq!(found, [(9, "YAML_UNKNOWN_KEY", Some("rename it to `inputs`".to_owned()))]);
    // A message's shape, read by the decoder `pipeline!` and `context_engine!` share: an unknown
    // kind with the nearest one, a message without its text, a key its kind does not take.
    let shape = |from: &str, to: &str| {
        let err = load(&step("support").replace(from, to)).unwrap_err();
        err.issues().iter().map(|i| (i.code.as_str(), i.message.clone(), i.help.clone())).collect::<Vec<_>>()
    };
    assert_eq!(
        shape("type: system", "type: sytem"),
        [(
            "YAML_UNKNOWN_KEY",
            "unknown message `sytem`; expected one of `system`, `user`, `assistant`, `context`, `history`".to_owned(),
            Some("did you mean `system`?".to_owned())
        )]
    );
    assert_eq!(
        shape("{ type: user, content: \"{input.user_question}\" }", "{ type: user }"),
        [(
            "YAML_MISSING_KEY",
            "a `user` message of context 0 of `contexts` has no `content`".to_owned(),
            Some("add `content: …`".to_owned())
        )]
    );
    let found = shape("{ type: context, name: kb }", "{ type: history, name: kb }");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "YAML_UNKNOWN_KEY");
    assert!(found[0].1.starts_with("unknown key `name` in a `history` message"), "{}", found[0].1);
}
