//! The JSON Schema (draft-07) of pipeline files and of the `config.json` they name, generated
//! from what the decoder reads: the step kinds and their keys ([`STEP_SCHEMAS`]), the `model`
//! and `settings` blocks ([`MODEL_KEYS`], [`SETTINGS_KEYS`]), the top-level keys
//! ([`TOP_LEVEL_KEYS`]), the keys of the nested forms and of the context engine's declarations,
//! and `config.json`'s keys. Each row's [`ValueType`] becomes the YAML shapes the decoder accepts
//! for it, older spellings included, so an editor validating a file against the schema (the
//! `yaml-language-server` line of the guide's *Pipelines in files* chapter) flags an unknown
//! key, a value of the wrong shape or a missing key where decoding the file would, and accepts
//! every file the decoder reads (the export's round trips check it on every definition they
//! write).
//!
//! What a schema cannot say stays with `ctx check`: the rules over several values (a transition
//! to a step that exists, a prompt key that is declared, a value's range, the budget contract)
//! and what a file inherits through `extends` (a file is validated alone, so a base without
//! `steps` is valid; the loader wants them in the merged file).

use serde_json::{Map, Value, json};

use super::document::{PROMPT_KEYS, TOP_LEVEL_KEYS};
use crate::budget::PolicyKind;
use crate::config::file as config;
use crate::config::file_mcp;
use crate::config::{HistoryTrimPolicy, LimitsPolicy};
use crate::lang::BUILTIN_LANGUAGES;
use crate::pipeline::schema::engine::{CONTEXT, ENGINE, MESSAGE_KEYS, MESSAGE_KINDS, PLACEMENTS, POLICY, RETRIEVER};
use crate::pipeline::schema::{KeySchema, MODEL_KEYS, SETTINGS_KEYS, STEP_SCHEMAS, StepSchema, ValueType, forms};
use crate::tokens::Encoding;

/// Where the schema of pipeline files is published: the file `schema/pipeline.schema.json` of
/// the repository, which a test keeps equal to [`json_schema`].
pub const PIPELINE_SCHEMA_URL: &str = "https://raw.githubusercontent.com/ctx-llm/ctx/main/schema/pipeline.schema.json";

/// Where the schema of `config.json` is published: `schema/config.schema.json`, kept equal to
/// [`config_json_schema`].
pub const CONFIG_SCHEMA_URL: &str = "https://raw.githubusercontent.com/ctx-llm/ctx/main/schema/config.schema.json";

/// The draft the schemas are written in: draft-07, the newest that every editor's validator
/// (yaml-language-server, VS Code's JSON service, JetBrains') reads in full.
const DRAFT: &str = "http://json-schema.org/draft-07/schema#";

/// The JSON Schema (draft-07) of a pipeline file, generated from the tables the decoder reads
/// (the step kinds and keys of [`STEP_SCHEMAS`], the `model` and `settings` rows, the top-level
/// keys, the nested forms, the context engine's declarations). It holds exactly the shapes the
/// decoder reads: a file [`PipelineFile::decode`](super::PipelineFile::decode) reads is valid, and
/// an unknown key, a value of the wrong shape or a missing required key is not; the rules over
/// several values (targets, prompt keys, ranges, the budget contract) are
/// [`PipelineFile::load`](super::PipelineFile::load)'s. `ctx schema` prints it.
///
/// ```
/// let schema = ctx::pipeline::yaml::json_schema();
/// assert_eq!(schema["properties"]["steps"]["type"], "array");
/// ```
pub fn json_schema() -> Value {
    let properties: Map<String, Value> =
        TOP_LEVEL_KEYS.iter().filter_map(|key| Some(((*key).to_owned(), top_level(key)?))).collect();
    json!({
        "$schema": DRAFT,
        "$id": PIPELINE_SCHEMA_URL,
        "title": "ctx pipeline file",
        "description": "A ctx pipeline in YAML: its model, settings, prompts and steps. Generated from the \
                        decoder's own tables (`ctx schema`); `ctx check` runs the rules a schema cannot say.",
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
        // `steps` is not required: a base that other files extend is often settings and prompts
        // only, and a file is validated alone (loading the merged file requires the steps).
        "not": { "required": ["model", "config"] },
    })
}

/// The JSON Schema (draft-07) of a `config.json`, the model's limits a pipeline names with
/// `config:`, generated from the loader's keys (typed by the `model` rows they spell), with
/// `model_context_window` required. `ctx schema config` prints it.
///
/// ```
/// let schema = ctx::pipeline::yaml::config_json_schema();
/// assert_eq!(schema["required"][0], "model_context_window");
/// ```
pub fn config_json_schema() -> Value {
    json!({
        "$schema": DRAFT,
        "$id": CONFIG_SCHEMA_URL,
        "title": "ctx config.json",
        "description": "The deployment's model limits and price, which a pipeline file names with `config:`. \
                        Generated from the loader's own keys (`ctx schema config`).",
        "type": "object",
        "properties": config_keys(&config::KNOWN_KEYS),
        "required": config_required(),
        "additionalProperties": false,
    })
}

/// The schema of each top-level key; `None` for a key this function does not know yet, which
/// the tests report.
fn top_level(key: &str) -> Option<Value> {
    Some(match key {
        "name" => described(scalar(), "The pipeline's name; by default the file's stem."),
        "extends" => described(
            json!({ "anyOf": [scalar(), { "type": "array", "items": scalar() }] }),
            "A base file, or a list of them merged left to right, relative to this file: settings, \
             prompts and models merge key by key, steps by `id`.",
        ),
        "model" => described(
            json!({ "anyOf": [scalar(), model_block(true)] }),
            "The model: a name from ctx's model table (`gpt-4o`), its keys inline, or `{ config: config.json }`.",
        ),
        "models" => described(
            json!({ "type": ["object", "null"], "additionalProperties": model_block(false) }),
            "Named models besides the default one, each a block of the `model` keys; a step names one with `model:`.",
        ),
        "config" => described(scalar(), "A `config.json` holding the model's limits, relative to this file."),
        "settings" => settings(),
        "prompts" => described(
            json!({ "type": ["object", "null"], "additionalProperties": prompt() }),
            "The prompts by key: text, `{ file: path }` (relative to this file), `{ text: … }`, or null \
             (given when the pipeline is loaded).",
        ),
        "steps" => {
            described(json!({ "type": "array", "items": step() }), "The steps, in order; a run starts at the first.")
        }
        "contexts" => contexts(),
        _ => return None,
    })
}

/// `schema` with a description.
fn described(mut schema: Value, description: impl Into<String>) -> Value {
    if let Value::Object(map) = &mut schema {
        map.insert("description".into(), Value::String(description.into()));
    }
    schema
}

/// What YAML's text is to the decoder: any scalar but null (`name: 2024` is the text `2024`).
fn scalar() -> Value {
    json!({ "type": ["string", "number", "boolean"] })
}

/// A string or a list of texts (YAML reads one string as a list of one).
fn text_list() -> Value {
    json!({ "anyOf": [{ "type": "string" }, { "type": "array", "items": scalar() }] })
}

/// A JSON Schema written as a mapping, or as JSON text.
fn json_text() -> Value {
    json!({ "type": ["string", "object", "array"] })
}

/// An object whose keys are exactly `keys` (each with the schema `of` gives it), `required`
/// among them.
fn closed(keys: &[&str], required: &[&str], of: impl Fn(&str) -> Value) -> Value {
    let properties: Map<String, Value> = keys.iter().map(|k| ((*k).to_owned(), of(k))).collect();
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

/// The values a keyword key takes, where the rules have a closed list of them. The schema offers
/// them as `examples` (editors complete them) rather than as an `enum`: the decoder reads any
/// keyword and the rules refuse an unknown one, with a "did you mean", so the schema stays the
/// decoder's shapes exactly (every file the decoder reads is valid).
fn keyword_values(name: &str) -> Option<Vec<&'static str>> {
    match name {
        "limits_policy" => Some(LimitsPolicy::NAMES.to_vec()),
        "history_trim" => Some(HistoryTrimPolicy::NAMES.to_vec()),
        "encoding" => Some(Encoding::ALL.iter().map(|e| e.name()).collect()),
        _ => None,
    }
}

/// What a value of `ty` is, for a row's description.
fn type_description(ty: ValueType) -> &'static str {
    use ValueType as T;
    match ty {
        T::Integer => "A whole number.",
        T::Text => "Text.",
        T::Bool => "`true` or `false`.",
        T::Target => "The id of the next step, or `end`.",
        T::PromptKey => "A key of `prompts`.",
        T::SettingName => "The name of an integer setting of `settings`.",
        T::CompactRules => {
            "Compaction rules: `{ rules: [ { language, policy, threshold?, inbox_key? } ] }`, \
                            or the list alone; the first rule matching a node's language wins."
        }
        T::UserParts => {
            "The parts of the user message: `name: { source?, template }` (the source defaults to \
                         the name) or a list of `{ source, template }`; each template holds one `{}`."
        }
        T::SetRules => "Rules `{ set, from, transform? }` (copy a field) or `{ set, value }` (a literal).",
        T::Outcomes => "`outcome: step` for each outcome the step's code returns.",
        T::Number => "A number.",
        T::TextList => "A string, or a list of strings.",
        T::ResponseFormat => "`json`, or `{ json_schema: { name, schema, strict? } }`.",
        T::Tools => {
            "The tools: `{ name, description, parameters }` each, `parameters` a JSON Schema (a mapping \
                     or JSON text)."
        }
        T::Keyword => "A keyword.",
        T::Names => "A name, or a list of names.",
        T::Price => "US dollars per million tokens: `{ input, cached_input?, cache_write?, output }`.",
        T::ContextName => "The name of a context declared under `contexts`.",
        T::McpServers => {
            "The MCP servers whose tools the step offers: `name: { command, args?, tools? }` (or \
                          `{ url, bearer_token_env? }`), or a list of `{ name, command, args?, url?, \
                          bearer_token_env?, tools? }`."
        }
    }
}

/// The YAML shapes the decoder reads as a `ty` (the key `name`'s, for keywords with a closed
/// list of values).
fn yaml_value(ty: ValueType, name: &str) -> Value {
    use ValueType as T;
    match ty {
        T::Integer => json!({ "type": "integer" }),
        T::Number => json!({ "type": "number" }),
        T::Bool => json!({ "type": "boolean" }),
        T::Text | T::Target | T::PromptKey | T::SettingName | T::ContextName => scalar(),
        T::Keyword => match keyword_values(name) {
            Some(values) => json!({ "type": ["string", "number", "boolean"], "examples": values }),
            None => scalar(),
        },
        T::TextList | T::Names => text_list(),
        T::CompactRules => {
            let rule = closed(&forms::COMPACT_RULE, &["language", "policy"], |key| match key {
                "language" => json!({ "type": ["string", "number", "boolean"], "examples": BUILTIN_LANGUAGES }),
                "policy" => json!({ "type": ["string", "number", "boolean"], "examples": PolicyKind::NAMES }),
                "threshold" => json!({ "type": "number" }),
                _ => scalar(),
            });
            let list = json!({ "type": "array", "items": rule });
            let wrapped = closed(&forms::COMPACT_CODE, &forms::COMPACT_CODE, |_| list.clone());
            json!({ "anyOf": [wrapped, list] })
        }
        T::UserParts => {
            // As a mapping the source defaults to the part's name; in a list it is required.
            let named = closed(&forms::USER_PART, &["template"], |_| scalar());
            let listed = closed(&forms::USER_PART, &forms::USER_PART, |_| scalar());
            json!({ "anyOf": [
                { "type": "object", "additionalProperties": named },
                { "type": "array", "items": listed },
            ] })
        }
        T::SetRules => {
            let mut rule = closed(&forms::SET_RULE, &["set"], |key| match key {
                "value" => json!(true),
                _ => scalar(),
            });
            // A rule copies `from` a field or sets a `value`, never both; `transform` goes with `from`.
            rule["oneOf"] = json!([{ "required": ["from"] }, { "required": ["value"] }]);
            rule["not"] = json!({ "required": ["value", "transform"] });
            json!({ "type": "array", "items": rule })
        }
        T::Outcomes => json!({ "type": "object", "additionalProperties": scalar() }),
        T::ResponseFormat => {
            let schema = closed(&forms::JSON_SCHEMA, &["name", "schema"], |key| match key {
                "schema" => json_text(),
                "strict" => json!({ "type": "boolean" }),
                _ => scalar(),
            });
            let wrapped = closed(&forms::RESPONSE_FORMAT, &forms::RESPONSE_FORMAT, |_| schema.clone());
            json!({ "anyOf": [{ "enum": forms::JSON_FORMATS }, wrapped] })
        }
        T::Tools => {
            let tool = closed(&forms::TOOL, &forms::TOOL, |key| match key {
                "parameters" => json_text(),
                _ => scalar(),
            });
            json!({ "type": "array", "items": tool })
        }
        T::Price => closed(&forms::PRICE, &[], |_| json!({ "type": "number" })),
        T::McpServers => {
            // Which of `command` and `url` a server has is a rule, not a shape (as in the decoder).
            let field = |key: &str| match key {
                "args" => text_list(),
                "tools" => json!({ "type": "array", "items": scalar() }),
                _ => scalar(),
            };
            let named = closed(&forms::MCP_SERVER, &[], field);
            let mut keys = vec!["name"];
            keys.extend(forms::MCP_SERVER);
            let listed = closed(&keys, &["name"], field);
            json!({ "anyOf": [
                { "type": "object", "additionalProperties": named },
                { "type": "array", "items": listed },
            ] })
        }
    }
}

/// A block read by rows: its properties (each row, each older spelling), its required keys, and
/// the constraints the older spellings add (one of the spellings of a required key present,
/// never a key and its older spelling together).
struct Rows {
    properties: Map<String, Value>,
    required: Vec<&'static str>,
    constraints: Vec<Value>,
}

impl Rows {
    fn of<T>(keys: &[KeySchema<T>]) -> Rows {
        let mut rows = Rows { properties: Map::new(), required: Vec::new(), constraints: Vec::new() };
        for key in keys {
            let mut description = type_description(key.ty).to_owned();
            if key.required {
                description.push_str(" Required.");
            }
            let spelt: Vec<String> = key.aliases.iter().map(|a| format!("`{a}`")).collect();
            if !spelt.is_empty() {
                description.push_str(&format!(" Also read as {} (not both).", spelt.join(", ")));
            }
            rows.properties.insert(key.name.to_owned(), described(yaml_value(key.ty, key.name), description));
            for alias in key.aliases {
                let note = format!("Another name of `{}` (not both): {}", key.name, type_description(key.ty));
                rows.properties.insert((*alias).to_owned(), described(yaml_value(key.ty, key.name), note));
                rows.constraints.push(json!({ "not": { "required": [key.name, alias] } }));
            }
            match (key.required, key.aliases.is_empty()) {
                (true, true) => rows.required.push(key.name),
                (true, false) => {
                    let spellings = std::iter::once(&key.name).chain(key.aliases);
                    let one_of: Vec<Value> = spellings.map(|s| json!({ "required": [s] })).collect();
                    rows.constraints.push(json!({ "anyOf": one_of }));
                }
                (false, _) => {}
            }
        }
        rows
    }

    /// An object of these properties only.
    fn block(self) -> Value {
        let mut schema = json!({ "type": "object", "properties": self.properties, "additionalProperties": false });
        if !self.required.is_empty() {
            schema["required"] = json!(self.required);
        }
        if !self.constraints.is_empty() {
            schema["allOf"] = Value::Array(self.constraints);
        }
        schema
    }
}

/// A model block ([`MODEL_KEYS`]); the default model's may instead name a `config.json` alone.
fn model_block(with_config: bool) -> Value {
    let mut rows = Rows::of(MODEL_KEYS);
    if with_config {
        rows.properties.insert(
            "config".into(),
            described(
                scalar(),
                "A `config.json` holding the model's limits, relative to this file; alone in the block.",
            ),
        );
        rows.constraints.push(json!({ "if": { "required": ["config"] }, "then": { "maxProperties": 1 } }));
    }
    rows.block()
}

/// `settings` ([`SETTINGS_KEYS`]): any other name is an integer setting.
fn settings() -> Value {
    let Rows { properties, .. } = Rows::of(SETTINGS_KEYS);
    json!({
        "type": ["object", "null"],
        "description": "Budgets, the limits policy and the other settings; any other name is an integer \
                        setting (`max_turn_loops: 3`) that steps name.",
        "properties": properties,
        "additionalProperties": { "type": "integer", "description": "A named integer setting." },
    })
}

/// One prompt: text, `{ file }` or `{ text }`, or null.
fn prompt() -> Value {
    let one = closed(&PROMPT_KEYS, &[], |_| scalar());
    let mut one = described(one, "`{ file: path }` (relative to this file) or `{ text: … }`: one of the two.");
    one["minProperties"] = json!(1);
    one["maxProperties"] = json!(1);
    json!({ "anyOf": [{ "type": "null" }, scalar(), one] })
}

/// One step: `id`, `action`, then the keys of the kind `action` names.
fn step() -> Value {
    let kinds: Vec<&str> = STEP_SCHEMAS.iter().map(|s| s.kind).collect();
    let by_kind: Vec<Value> = STEP_SCHEMAS
        .iter()
        .map(|s| json!({ "if": { "properties": { "action": { "const": s.kind } }, "required": ["action"] }, "then": kind(s) }))
        .collect();
    json!({
        "type": "object",
        "properties": {
            "id": described(scalar(), "The step's id, which transitions name."),
            "action": described(json!({ "enum": kinds }), "The step's kind."),
        },
        "required": ["id", "action"],
        "allOf": by_kind,
    })
}

/// The keys of a step of kind `schema`, besides `id` and `action`.
fn kind(schema: &StepSchema) -> Value {
    let mut rows = Rows::of(schema.keys);
    for key in ["id", "action"] {
        rows.properties.insert(key.into(), json!(true));
    }
    let keys: Vec<String> = schema.keys.iter().map(|k| format!("`{}`", k.name)).collect();
    described(rows.block(), format!("A `{}` step: {}.", schema.kind, keys.join(", ")))
}

/// `contexts`: the context engine's declarations in its serde form, the keys of each block those
/// the decoder reads ([`schema::engine`](crate::pipeline::schema::engine)).
fn contexts() -> Value {
    let text = || json!({ "type": "string" });
    let policy = closed(POLICY.keys, &[], |key| {
        // A block left `null` is one left out; `overflow` is a row, read as a keyword.
        let block = key != "overflow";
        let schema = match key {
            "input_budget" => {
                json!({ "type": "object", "properties": { "max_tokens": { "type": "integer" } }, "required": ["max_tokens"] })
            }
            "pack_budget" => {
                json!({ "type": "object", "properties": { "default_ratio": { "type": "number" } } })
            }
            "compactor" => json!({
                "anyOf": [
                    text(),
                    { "type": "object", "properties": { "type": text() }, "required": ["type"] },
                    { "type": "null" },
                ],
            }),
            "expansion" => json!({
                "type": "object",
                "properties": { "max_pages": { "type": "integer" }, "min_fill_ratio": { "type": "number" } },
                "required": ["max_pages", "min_fill_ratio"],
            }),
            _ => text(),
        };
        if block { or_null(schema) } else { schema }
    });
    let mut message_keys = vec!["type"];
    message_keys.extend(MESSAGE_KEYS.iter().flat_map(|(_, keys)| keys.iter()));
    message_keys.dedup();
    let mut message = closed(&message_keys, &["type"], |key| match key {
        "type" => json!({ "enum": MESSAGE_KINDS }),
        "ratio" => json!({ "type": "number" }),
        "placement" => json!({ "enum": PLACEMENTS }),
        _ => text(),
    });
    message["allOf"] = json!([
        { "if": { "properties": { "type": { "enum": ["system", "user", "assistant"] } } }, "then": { "required": ["content"] } },
        { "if": { "properties": { "type": { "const": "context" } } }, "then": { "required": ["name"] } },
    ]);
    let named = |keys: &[&'static str]| [&["name"][..], keys].concat();
    let context = closed(&named(CONTEXT.keys), &["name", "messages"], |key| match key {
        "inputs" => json!({ "type": "array", "items": text() }),
        "policy" => or_null(policy.clone()),
        "messages" => json!({ "type": "array", "items": message.clone() }),
        _ => text(),
    });
    let retriever = closed(&named(RETRIEVER.keys), &["name", "query"], |key| match key {
        "limit" => json!({ "type": "integer" }),
        _ => text(),
    });
    let engine = closed(ENGINE.keys, &["contexts"], |key| match key {
        "contexts" => json!({ "type": "array", "items": context.clone() }),
        "retrievers" => json!({ "type": "array", "items": retriever.clone() }),
        _ => json!({ "type": "array", "items": text() }),
    });
    described(
        or_null(engine),
        "The context engine's declarations: `contexts` (`{ name, inputs, policy, messages }`), `retrievers` \
         (`{ name, query, limit }`) and the names of registered `compactors`.",
    )
}

/// `schema`, or `null` (an optional value of a serde form, a key of `config.json` left out).
fn or_null(mut schema: Value) -> Value {
    let ty = schema.get("type").cloned();
    if let Some(Value::String(ty)) = ty {
        schema["type"] = json!([ty, "null"]);
    }
    schema
}

/// The properties of a `config.json` object of `keys`: each a model key under its `config.json`
/// name (typed by the model block's row it spells), `allow_auto_clamp` and `models`. JSON has
/// no plain scalars, so types are exact, and `null` is an absent key.
fn config_keys(keys: &[&str]) -> Map<String, Value> {
    let required = config_required();
    keys.iter()
        .map(|key| {
            let schema = if *key == config::ALLOW_AUTO_CLAMP {
                described(
                    json!({ "type": ["boolean", "null"] }),
                    "The file's explicit opt-in to the `auto_clamp` limits policy (default false).",
                )
            } else if *key == config::MODELS {
                let model = json!({
                    "type": "object",
                    "properties": config_keys(&config::MODEL_OBJECT_KEYS),
                    "required": required,
                    "additionalProperties": false,
                });
                described(
                    json!({ "type": ["object", "null"], "additionalProperties": model }),
                    "Named models besides the file's own, each with the same keys but `allow_auto_clamp`.",
                )
            } else if *key == file_mcp::MCP_SERVERS {
                let server = closed(&file_mcp::SERVER_KEYS, &[], |key| match key {
                    "args" => json!({ "type": "array", "items": { "type": "string" } }),
                    _ => json!({ "type": "string" }),
                });
                described(
                    json!({ "type": ["object", "null"], "additionalProperties": server }),
                    "Where the pipeline's MCP servers run in this deployment, by server name: a `command` \
                     with its `args`, or a `url` (with `bearer_token_env`, the variable holding its token); \
                     it replaces the pipeline's own.",
                )
            } else {
                config_model_key(key, required.contains(&Value::from(*key)))
            };
            ((*key).to_owned(), schema)
        })
        .collect()
}

/// The required keys of a `config.json` model: its window, the server's real one.
fn config_required() -> Vec<Value> {
    let keys = config::FILE_KEYS;
    if keys.window_required { vec![Value::from(keys.context_window)] } else { Vec::new() }
}

/// A model key of `config.json`, typed by the [`MODEL_KEYS`] row whose name or older spelling it is.
fn config_model_key(key: &str, required: bool) -> Value {
    let Some(row) = MODEL_KEYS.iter().find(|k| k.name == key || k.aliases.contains(&key)) else {
        return json!(true);
    };
    let mut schema = match (row.ty, keyword_values(row.name)) {
        (ValueType::Integer, _) => json!({ "type": "integer" }),
        (ValueType::Price, _) => closed(&forms::PRICE, &[], |_| json!({ "type": ["number", "null"] })),
        (ValueType::Keyword, Some(values)) => json!({ "type": "string", "examples": values }),
        _ => json!({ "type": "string" }),
    };
    if !required {
        schema = or_null(schema);
    }
    let mut description = type_description(row.ty).to_owned();
    if key != row.name {
        description = format!("The model's `{}`: {description}", row.name);
    }
    if required {
        description.push_str(" Required.");
    }
    described(schema, description)
}

#[cfg(test)]
#[path = "json_schema_tests.rs"]
pub(super) mod tests;
