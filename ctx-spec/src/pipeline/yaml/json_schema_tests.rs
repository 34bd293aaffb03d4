//! The JSON Schemas held against the decoder: every key it reads is in them, every pipeline file
//! of the repository validates, a file the decoder refuses for an unknown key or a value of the
//! wrong shape fails validation too, and the committed files are the generated ones.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::super::document::{PROMPT_KEYS, TOP_LEVEL_KEYS};
use super::super::{PipelineFile, contexts, node};
use super::*;
use crate::config::file as config;
use crate::pipeline::schema::engine::{CONTEXT, ENGINE, MESSAGE_KEYS, POLICY, RETRIEVER};
use crate::pipeline::schema::{MODEL_KEYS, SETTINGS_KEYS, STEP_SCHEMAS};

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft7::new(schema).unwrap_or_else(|e| panic!("not a draft-07 schema: {e}"))
}

/// YAML text as the JSON value an editor validates: plain scalars typed as the decoder types
/// them (`3` an integer, `true` a boolean, `"3"` text).
fn as_json(text: &str) -> Option<Value> {
    node::parse(text, Path::new("t.yaml")).ok().map(|n| contexts::json(&n))
}

/// The problems the pipeline schema finds in `text`, one line each.
fn problems(text: &str) -> Vec<String> {
    let value = as_json(text).expect("YAML");
    validator(&json_schema()).iter_errors(&value).map(|e| format!("{e} (at `{}`)", e.instance_path())).collect()
}

/// Whether the decoder reads `text` (decoding only: unknown keys, wrong shapes, missing keys).
fn decodes(text: &str, path: &Path) -> Result<(), String> {
    PipelineFile::decode(text, path).map(|_| ()).map_err(|e| e.to_string())
}

/// Asserts that `text`, a file the decoder reads, is valid under the schema: what the export's
/// round trips call on every definition they write.
pub(in crate::pipeline::yaml) fn assert_valid(text: &str) {
    let found = problems(text);
    assert!(found.is_empty(), "the schema refuses a file the decoder reads:\n{}\n{text}", found.join("\n"));
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn the_committed_schemas_are_the_generated_ones() {
    for (file, schema) in
        [("schema/pipeline.schema.json", json_schema()), ("schema/config.schema.json", config_json_schema())]
    {
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        let path = repo().join(file);
        if std::env::var_os("CTX_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == text,
            "{file} is not the generated schema: write it with `CTX_WRITE_SCHEMA=1 cargo test -p ctx-spec \
             --features yaml --lib json_schema` (or `ctx schema`, `ctx schema config`) and commit it"
        );
        // Both are schemas of their draft (the meta-schema is checked when a validator is built).
        validator(&schema);
    }
}

/// The property names of the object schema `schema`.
fn properties(schema: &Value) -> Vec<&str> {
    schema["properties"].as_object().map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn assert_has(schema: &Value, keys: impl IntoIterator<Item = impl AsRef<str>>, what: &str) {
    let have = properties(schema);
    for key in keys {
        assert!(have.contains(&key.as_ref()), "`{}` is missing from the schema of {what}: {have:?}", key.as_ref());
    }
}

#[test]
fn every_key_the_decoder_reads_is_in_the_schemas() {
    let schema = json_schema();
    assert_has(&schema, TOP_LEVEL_KEYS, "the top level");
    let step = &schema["properties"]["steps"]["items"];
    let kinds: Vec<&str> =
        step["properties"]["action"]["enum"].as_array().unwrap().iter().flat_map(Value::as_str).collect();
    for kind in STEP_SCHEMAS {
        assert!(kinds.contains(&kind.kind), "{}", kind.kind);
        let then = step["allOf"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["if"]["properties"]["action"]["const"] == kind.kind)
            .map(|c| &c["then"])
            .unwrap_or_else(|| panic!("no keys for `{}`", kind.kind));
        let keys = kind.keys.iter().flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied()));
        assert_has(then, keys.chain(["id", "action"]), kind.kind);
    }
    let model = &schema["properties"]["model"]["anyOf"][1];
    let model_keys: Vec<&str> =
        MODEL_KEYS.iter().flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied())).collect();
    assert_has(model, model_keys.iter().chain(&["config"]), "`model`");
    assert_has(&schema["properties"]["models"]["additionalProperties"], &model_keys, "`models`");
    assert_has(&schema["properties"]["settings"], SETTINGS_KEYS.iter().map(|k| k.name), "`settings`");
    assert_has(&schema["properties"]["prompts"]["additionalProperties"]["anyOf"][2], PROMPT_KEYS, "a prompt");
    let engine = &schema["properties"]["contexts"];
    assert_has(engine, ENGINE.keys, "`contexts`");
    let context = &engine["properties"]["contexts"]["items"];
    assert_has(context, CONTEXT.keys.iter().chain(&["name"]), "a context");
    let message_keys = MESSAGE_KEYS.iter().flat_map(|(_, keys)| keys.iter()).chain(&["type"]);
    assert_has(&context["properties"]["messages"]["items"], message_keys, "a message");
    assert_has(&context["properties"]["policy"], POLICY.keys, "a policy");
    assert_has(&engine["properties"]["retrievers"]["items"], RETRIEVER.keys.iter().chain(&["name"]), "a retriever");
    let file = config_json_schema();
    assert_has(&file, config::KNOWN_KEYS, "config.json");
    assert_has(
        &file["properties"]["models"]["additionalProperties"],
        config::MODEL_OBJECT_KEYS,
        "config.json's models",
    );
}

/// A file with every key of every step kind, of the `model` and `settings` blocks, of the
/// nested forms and of the context engine's declarations.
const EVERY_KEY: &str = r####"
name: Everything
model:
  model: gpt-4o
  context_window: 16000
  max_tokens: 800
  encoding: o200k_base
  tokenizer: tokenizer.json
  price: { input: 2.5, cached_input: 1.25, cache_write: 3, output: 10 }
models:
  small: { model: gpt-4o-mini, context_window: 8000, price: { input: 0.15, output: 0.6 } }
settings:
  max_context_tokens: 5000
  max_history_tokens: 1000
  budget_safety_margin_tokens: 128
  limits_policy: fail_fast
  compactors: [yaml, toml]
  node_frame: "--- {id} ---\n{text}"
  carry_context: true
  history_trim: fold
  history_low_water_percent: 60
  max_cost_per_run: 0.05
  billed_token_ratio: 1.2
  max_question_tokens: 500
  max_variable_tokens: 200
  max_turn_loops: 3
prompts:
  answer: Answer from the context.
  summarize: { text: "Summarize." }
  later: null
steps:
  - id: search
    action: search_nodes
    top_k: 3
    next: expand
  - id: expand
    action: expand_dependency_tree
    max_depth: 2
    next: fetch
  - id: fetch
    action: fetch_node_texts
    evidence_tokens: 3000
    next: budget
  - id: budget
    action: manage_context_budget
    compact_code:
      rules:
        - { language: sql, policy: demand, inbox_key: compact_sql }
        - { language: dotnet, policy: threshold, threshold: 0.4 }
    divide_new_content: "<<<New content"
    on_ok: answer
    on_over: guard
  - id: guard
    action: loop_guard
    max_turn_loops_from_settings: max_turn_loops
    on_allow: summarize
    on_deny: answer
  - id: summarize
    action: call_model
    prompt_key: summarize
    model: small
    max_output_tokens: 400
    max_tokens: 400
    user_parts:
      context: { source: context_blocks, template: "### Context:\n{}\n\n" }
      user_question: { template: "### User:\n{}\n\n" }
    use_history: false
    context: support
    temperature: 0.2
    top_p: 1
    presence_penalty: 0
    frequency_penalty: 0.5
    stop: "\n\nUser:"
    seed: 7
    response_format: json
    next: set
  - id: set
    action: set_variables
    rules:
      - { set: context_blocks, from: last_model_response, transform: to_context_blocks }
      - { set: last_model_response, value: null }
    next: route
  - id: route
    action: custom
    outcomes: { done: answer, again: budget }
  - id: answer
    action: agent
    prompt_key: answer
    model: small
    context: support
    max_output_tokens: 600
    max_tokens: 600
    use_history: true
    temperature: 0
    top_p: 0.9
    presence_penalty: 0.1
    frequency_penalty: 0
    seed: 1
    user_parts: [ { source: user_question, template: "{}" } ]
    stop: ["\n\nUser:", "END"]
    response_format:
      json_schema: { name: answer, schema: { type: object }, strict: true }
    tools:
      - { name: search_docs, description: Search the docs, parameters: { type: object } }
      - { name: read_doc, description: Read one doc, parameters: '{"type": "object"}' }
    max_tool_calls: 2
    turn_budget_tokens: 4000
    mcp_servers:
      files: { command: npx, args: [server-filesystem, /srv/docs], tools: [read_file] }
    next: end
contexts:
  retrievers:
    - { name: kb, query: "{input.user_question}", limit: 3 }
  compactors: [summarize]
  contexts:
    - name: support
      inputs: [user_question]
      policy:
        input_budget: { max_tokens: 3000 }
        pack_budget: { default_ratio: 0.5 }
        overflow: compact
        compactor: { type: truncate }
        expansion: { max_pages: 2, min_fill_ratio: 0.8 }
      messages:
        - { type: system, content: "Answer from the documents." }
        - { type: context, name: kb, ratio: 0.5, placement: message }
        - { type: history }
        - { type: assistant, content: "Noted." }
        - { type: user, content: "{input.user_question}" }
"####;

#[test]
fn a_file_with_every_key_decodes_and_validates() {
    decodes(EVERY_KEY, Path::new("/nowhere/every.yaml")).unwrap();
    assert_valid(EVERY_KEY);
    // It does hold every key of every row.
    let value = as_json(EVERY_KEY).unwrap();
    for kind in STEP_SCHEMAS {
        let written: Vec<&str> = value["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["action"] == kind.kind)
            .flat_map(|s| s.as_object().unwrap().keys().map(String::as_str))
            .collect();
        for key in kind.keys {
            assert!(written.contains(&key.name), "EVERY_KEY has no `{}` step with `{}`", kind.kind, key.name);
        }
    }
    for key in MODEL_KEYS {
        assert!(value["model"].get(key.name).is_some(), "model.{}", key.name);
    }
    for key in SETTINGS_KEYS {
        assert!(value["settings"].get(key.name).is_some(), "settings.{}", key.name);
    }
}

/// Each older spelling alone, and the top-level forms the file above cannot hold with its own.
#[test]
fn older_spellings_and_other_forms_decode_and_validate() {
    let files = [
        "config: config.json\nsteps:\n  - { id: f, action: fetch_node_texts, max_tokens: 300, next: end }\n",
        "model: { model_context_window: 8000, model_max_tokens: 100, encoding: cl100k_base, gguf: m.gguf }\nsteps: []\n",
        "model: gpt-4o\nsteps: []\n",
        "model: { config: config.json }\nsteps: []\n",
        "extends: base.yaml\n",
        "extends: [a.yaml, b.yaml]\nsettings: ~\nprompts: ~\nmodels: ~\ncontexts: ~\n",
        "name: 2024\nsteps:\n  - { id: c, action: manage_context_budget, compact_code: [ { language: sql, policy: always } ], on_ok: end, on_over: end }\n",
        "steps:\n  - { id: 1, action: custom, outcomes: { done: end } }\n",
    ];
    for text in files {
        if !text.starts_with("extends") {
            decodes(text, Path::new("/nowhere/p.yaml")).unwrap_or_else(|e| panic!("{e}\n{text}"));
        }
        assert_valid(text);
    }
}

/// Files the decoder refuses for their shape, each refused by the schema too.
#[test]
fn what_the_decoder_refuses_for_its_shape_the_schema_refuses() {
    let step = |body: &str| format!("prompts: {{ answer: A }}\nsteps:\n  - id: s\n{body}");
    let call = |extra: &str| step(&format!("    action: call_model\n    prompt_key: answer\n    next: end\n{extra}"));
    let cases = [
        ("an unknown key in a step", call("    nxt: end\n")),
        ("an unknown top-level key", "stpes: []\n".to_owned()),
        ("text for an integer", step("    action: search_nodes\n    top_k: three\n    next: end\n")),
        ("quoted digits for an integer", call("    max_output_tokens: \"500\"\n")),
        ("a missing required key", step("    action: search_nodes\n    next: end\n")),
        ("a step without an id", "steps:\n  - { action: search_nodes, top_k: 1, next: end }\n".to_owned()),
        ("an unknown action", "steps:\n  - { id: s, action: serch_nodes, top_k: 1, next: end }\n".to_owned()),
        (
            "a key and its older spelling",
            step("    action: fetch_node_texts\n    evidence_tokens: 1\n    max_tokens: 1\n    next: end\n"),
        ),
        ("a setting that is not an integer", "settings: { max_turn_loops: lots }\nsteps: []\n".to_owned()),
        ("a flag that is not a boolean", call("    use_history: 1\n")),
        ("a number for a list of texts", call("    stop: 3\n")),
        ("an unknown response format", call("    response_format: xml\n")),
        (
            "a tool without parameters",
            step(
                "    action: agent\n    prompt_key: answer\n    max_tool_calls: 1\n    tools: [ { name: t, description: d } ]\n    next: end\n",
            ),
        ),
        (
            "a rule with `from` and `value`",
            step("    action: set_variables\n    rules: [ { set: a, from: b, value: 1 } ]\n    next: end\n"),
        ),
        ("a rule with neither", step("    action: set_variables\n    rules: [ { set: a } ]\n    next: end\n")),
        (
            "a compaction rule without a policy",
            step(
                "    action: manage_context_budget\n    compact_code: { rules: [ { language: sql } ] }\n    on_ok: end\n    on_over: end\n",
            ),
        ),
        ("a user part without a template", call("    user_parts: { q: { source: user_question } }\n")),
        (
            "a price in text",
            "model: { context_window: 8000, encoding: cl100k_base, price: { input: cheap } }\nsteps: []\n".to_owned(),
        ),
        ("an unknown model key", "model: { context_windw: 8000 }\nsteps: []\n".to_owned()),
        ("a model written twice", "model: gpt-4o\nconfig: config.json\nsteps: []\n".to_owned()),
        ("a config beside model keys", "model: { config: config.json, max_tokens: 10 }\nsteps: []\n".to_owned()),
        ("a prompt with a file and a text", "prompts: { a: { file: a.txt, text: A } }\nsteps: []\n".to_owned()),
        (
            "a message with an unknown key",
            "steps: []\ncontexts: { contexts: [ { name: c, messages: [ { type: system, content: x, role: y } ] } ] }\n"
                .to_owned(),
        ),
    ];
    for (what, text) in cases {
        assert!(decodes(&text, Path::new("/nowhere/p.yaml")).is_err(), "the decoder reads {what}:\n{text}");
        assert!(!problems(&text).is_empty(), "the schema accepts {what}:\n{text}");
    }
}

/// Every `*.yaml` under `dir`, recursively.
fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// The repository's pipeline files: the examples (the specification's examples, verbatim), and
/// the fixtures of the loader's and the macro's tests. A file alone validates exactly when the
/// decoder reads it alone; one that `extends` a base is checked for its own keys (what it
/// inherits is the base's to validate).
#[test]
fn every_pipeline_file_of_the_repository_validates_where_it_decodes() {
    let mut files = Vec::new();
    for dir in ["examples", "ctx-runtime/tests/data", "ctx-macros/src/tests", "docs"] {
        yaml_files(&repo().join(dir), &mut files);
    }
    assert!(files.len() >= 20, "{files:?}");
    let mut valid = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let Some(value) = as_json(&text) else {
            // Not YAML (a fixture of syntax errors): the decoder refuses it too.
            assert!(decodes(&text, file).is_err(), "{}", file.display());
            continue;
        };
        let found = problems(&text);
        if value.get("extends").is_some() {
            assert!(found.is_empty(), "{}: {found:?}", file.display());
        } else {
            let decoded = decodes(&text, file);
            assert_eq!(found.is_empty(), decoded.is_ok(), "{}: schema {found:?}, decoder {decoded:?}", file.display());
        }
        valid += usize::from(found.is_empty());
    }
    for example in ["minimal", "compaction_loop", "demand_threshold_always"] {
        let file = repo().join(format!("examples/pipelines/{example}.yaml"));
        assert_eq!(problems(&std::fs::read_to_string(file).unwrap()), Vec::<String>::new(), "{example}");
    }
    assert!(valid >= 15, "{valid} of {} files valid", files.len());
}

#[test]
fn config_files_validate_where_the_loader_reads_them() {
    let schema = validator(&config_json_schema());
    let cases = [
        (r#"{"model_context_window": 9600, "model_max_tokens": 512, "encoding": "cl100k_base"}"#, true),
        (
            r#"{"model": "gpt-4o", "model_context_window": 16384, "allow_auto_clamp": true, "price": {"input": 3, "output": 12.5}}"#,
            true,
        ),
        (
            r#"{"model": "gpt-4o", "model_context_window": 16384, "models": {"small": {"model": "gpt-4o-mini", "model_context_window": 8192}}}"#,
            true,
        ),
        (r#"{"model": "gpt-4o", "model_context_window": 16384, "model_max_tokens": null, "encoding": null}"#, true),
        (r#"{"model": "gpt-4o"}"#, false),
        (r#"{"model_context_window": "9600", "encoding": "cl100k_base"}"#, false),
        (r#"{"model_context_window": 9600, "encoding": "cl100k_base", "model_max_token": 10}"#, false),
        (r#"{"model_context_window": 9600, "encoding": "cl100k_base", "allow_auto_clamp": "yes"}"#, false),
        (r#"{"model": "gpt-4o", "model_context_window": 16384, "price": {"input": "3"}}"#, false),
        (
            r#"{"model": "gpt-4o", "model_context_window": 16384, "models": {"small": {"model": "x", "allow_auto_clamp": true}}}"#,
            false,
        ),
        (r#"{"model": "gpt-4o", "model_context_window": 16384, "models": {"bad": 3}}"#, false),
    ];
    for (text, ok) in cases {
        let loaded = crate::config::ConfigFile::from_json_str(text, "config.json");
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(loaded.is_ok(), ok, "loader on {text}: {loaded:?}");
        assert_eq!(schema.is_valid(&value), ok, "schema on {text}");
    }
    let examples = repo().join("examples/pipelines/config.json");
    assert!(schema.is_valid(&serde_json::from_str(&std::fs::read_to_string(examples).unwrap()).unwrap()));
}

/// The context engine's declarations as its own serde writes them validate, so the schema's
/// account of that form holds for every field it sets.
#[test]
fn the_engines_own_form_validates() {
    let value = as_json(EVERY_KEY).unwrap();
    let spec: crate::engine::EngineSpec = serde_json::from_value(value["contexts"].clone()).unwrap();
    let written = serde_json::to_value(&spec).unwrap();
    let file = json!({ "steps": [], "contexts": written });
    let found: Vec<String> = validator(&json_schema()).iter_errors(&file).map(|e| e.to_string()).collect();
    assert!(found.is_empty(), "{found:?}");
}
