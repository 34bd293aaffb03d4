//! The vocabulary of a pipeline, described once: every step kind, its keys (with their type and
//! whether they are required) and which keys are transitions; and the keys of the `model` and
//! `settings` blocks.
//!
//! Every front end reads through these rows (the decoder, `decode`, for the `pipeline!` macro
//! and the YAML reader alike), the YAML export and the macro's generated `definition()` write
//! through them, and the definition's own `keyword()`/`transitions()` are checked against them by
//! the tests below, so a key is one row plus its field.

use super::definition::*;
use super::slot::{FieldValue, Slot, field, slot};

/// What a key's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// A whole number (`top_k: 20`).
    Integer,
    /// A string (`divide_new_content: "<<<New content"`).
    Text,
    /// `true` or `false`.
    Bool,
    /// A step id or `end`: a transition.
    Target,
    /// A key of the `prompts` section.
    PromptKey,
    /// The name of an integer setting.
    SettingName,
    /// `[ { language: …, policy: …, threshold?: …, inbox_key?: … }, … ]`.
    CompactRules,
    /// `[ source => "template with one {}", … ]`.
    UserParts,
    /// `[ target <- source | transform, target = literal, … ]`.
    SetRules,
    /// `{ outcome => step, … }`: the transitions of a custom step.
    Outcomes,
    /// A number, whole or not (`temperature: 0.2`).
    Number,
    /// `[ "text", … ]`.
    TextList,
    /// `json` or `json_schema { name: "…", schema: "…", strict?: bool }`.
    ResponseFormat,
    /// `[ name { description: "…", parameters: r#"{…json schema…}"# }, … ]`: an agent's tools.
    Tools,
    /// A keyword, bare or quoted (`limits_policy: fail_fast`, `encoding: cl100k_base`).
    Keyword,
    /// `[ name, … ]`: names, bare or quoted (`compactors: [yaml]`).
    Names,
    /// `{ input: 2.5, cached_input?: 1.25, cache_write?: 3.0, output: 10 }`: US dollars per
    /// million tokens.
    Price,
    /// The name of a context the pipeline's `contexts` declares.
    ContextName,
    /// `[ name { command: "…", args: [ "…" ], url?: "…", tools?: [ name ] } ]`: an agent's MCP
    /// servers.
    McpServers,
}

/// One key of a step kind (or, with `T` the block's spec, of `model` or `settings`): everything
/// the decoder, the YAML export and the macro's Rust export need to know about it, so a new key
/// is this row plus its field.
#[derive(Debug)]
pub struct KeySchema<T: 'static = StepKind> {
    /// The key as written.
    pub name: &'static str,
    /// What its value is.
    pub ty: ValueType,
    /// Whether a step of the kind must write it.
    pub required: bool,
    /// Older spellings still read (with a deprecation note), never written.
    pub aliases: &'static [&'static str],
    /// Where its value lives in the definition.
    pub slot: Slot<T>,
}

// By hand: a derive would ask `T: Clone` of the spec.
impl<T> Clone for KeySchema<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for KeySchema<T> {}

/// One step kind.
#[derive(Debug, Clone, Copy)]
pub struct StepSchema {
    /// The kind's keyword (`fetch_node_texts`).
    pub kind: &'static str,
    /// Its keys, in the order the documentation lists them.
    pub keys: &'static [KeySchema],
    /// A step of the kind with every field at its default, which the decoder fills key by key.
    pub empty: fn() -> StepKind,
}

impl StepSchema {
    /// A step of this kind with each `(key, value)` of `fields` set through the key's row (a
    /// name no row has is ignored, a value of another type too): how the `pipeline!` macro's
    /// generated `definition()` rebuilds the step it checked, with no code of its own per key.
    pub fn build(&self, fields: Vec<(&str, FieldValue)>) -> StepKind {
        let mut kind = (self.empty)();
        for (name, value) in fields {
            if let Some(key) = self.key(name) {
                (key.slot.set)(&mut kind, value);
            }
        }
        kind
    }

    /// The keys that are transitions, in the order of `StepKind::transitions()` (custom steps'
    /// outcomes are named by the user and not listed).
    pub fn transition_keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.keys.iter().filter(|k| k.ty == ValueType::Target).map(|k| k.name)
    }

    /// The schema of the kind with this keyword.
    pub fn of(kind: &str) -> Option<&'static StepSchema> {
        STEP_SCHEMAS.iter().find(|s| s.kind == kind)
    }

    /// The key named `name`, or whose older spelling `name` is.
    pub fn key(&self, name: &str) -> Option<&'static KeySchema> {
        self.keys.iter().find(|k| k.name == name || k.aliases.contains(&name))
    }
}

const fn key<T>(name: &'static str, ty: ValueType, required: bool, slot: Slot<T>) -> KeySchema<T> {
    KeySchema { name, ty, required, aliases: &[], slot }
}

use ValueType::*;

/// The keys of a step that sends a model request (`call_model`, and `agent`, which adds its own
/// before `next`), written once so the two kinds cannot drift apart.
macro_rules! model_request_keys {
    ($($extra:expr),* $(,)?) => {
        &[
            key("prompt_key", PromptKey, true, slot!(CallModelSpec, prompt_key)),
            key("model", Keyword, false, slot!(CallModelSpec, model)),
            key("max_output_tokens", Integer, false, slot!(CallModelSpec, max_output_tokens)),
            key("max_tokens", Integer, false, slot!(CallModelSpec, max_tokens)),
            key("user_parts", UserParts, false, slot!(CallModelSpec, user_parts)),
            key("use_history", Bool, false, slot!(CallModelSpec, use_history)),
            key("context", ContextName, false, slot!(CallModelSpec, context)),
            key("temperature", Number, false, slot!(CallModelSpec, params.temperature)),
            key("top_p", Number, false, slot!(CallModelSpec, params.top_p)),
            key("presence_penalty", Number, false, slot!(CallModelSpec, params.presence_penalty)),
            key("frequency_penalty", Number, false, slot!(CallModelSpec, params.frequency_penalty)),
            key("stop", TextList, false, slot!(CallModelSpec, params.stop)),
            key("seed", Integer, false, slot!(CallModelSpec, params.seed)),
            key("response_format", ResponseFormat, false, slot!(CallModelSpec, params.response_format)),
            $($extra,)*
            key("next", Target, true, slot!(CallModelSpec, next)),
        ]
    };
}

/// Every step kind, in the order the documentation lists them.
pub const STEP_SCHEMAS: &[StepSchema] = &[
    StepSchema {
        kind: "search_nodes",
        keys: &[
            key("top_k", Integer, true, slot!(SearchNodesSpec, top_k)),
            key("next", Target, true, slot!(SearchNodesSpec, next)),
        ],
        empty: || StepKind::SearchNodes(SearchNodesSpec::default()),
    },
    StepSchema {
        kind: "expand_dependency_tree",
        keys: &[
            key("max_depth", Integer, true, slot!(ExpandSpec, max_depth)),
            key("next", Target, true, slot!(ExpandSpec, next)),
        ],
        empty: || StepKind::ExpandDependencyTree(ExpandSpec::default()),
    },
    StepSchema {
        kind: "fetch_node_texts",
        keys: &[
            // `max_tokens` is the specification's name of the evidence budget.
            KeySchema {
                aliases: &["max_tokens"],
                ..key("evidence_tokens", Integer, true, slot!(FetchSpec, evidence_tokens))
            },
            key("next", Target, true, slot!(FetchSpec, next)),
        ],
        empty: || StepKind::FetchNodeTexts(FetchSpec::default()),
    },
    StepSchema {
        kind: "manage_context_budget",
        keys: &[
            key("compact_code", CompactRules, false, slot!(ManageBudgetSpec, compact_code)),
            key("divide_new_content", Text, false, slot!(ManageBudgetSpec, divide_new_content)),
            key("on_ok", Target, true, slot!(ManageBudgetSpec, on_ok)),
            key("on_over", Target, true, slot!(ManageBudgetSpec, on_over)),
        ],
        empty: || StepKind::ManageContextBudget(ManageBudgetSpec::default()),
    },
    StepSchema {
        kind: "call_model",
        keys: model_request_keys!(),
        empty: || StepKind::CallModel(CallModelSpec::default()),
    },
    StepSchema {
        kind: "agent",
        keys: model_request_keys!(
            key("tools", Tools, false, slot!(AgentSpec, tools)),
            key("max_tool_calls", Integer, true, slot!(AgentSpec, max_tool_calls)),
            key("turn_budget_tokens", Integer, false, slot!(AgentSpec, turn_budget_tokens)),
            key("mcp_servers", McpServers, false, slot!(AgentSpec, mcp_servers)),
        ),
        empty: || StepKind::Agent(AgentSpec::default()),
    },
    StepSchema {
        kind: "loop_guard",
        keys: &[
            key("max_turn_loops_from_settings", SettingName, true, slot!(LoopGuardSpec, max_turn_loops_from_settings)),
            key("on_allow", Target, true, slot!(LoopGuardSpec, on_allow)),
            key("on_deny", Target, true, slot!(LoopGuardSpec, on_deny)),
        ],
        empty: || StepKind::LoopGuard(LoopGuardSpec::default()),
    },
    StepSchema {
        kind: "set_variables",
        keys: &[
            key("rules", SetRules, true, slot!(SetVariablesSpec, rules)),
            key("next", Target, true, slot!(SetVariablesSpec, next)),
        ],
        empty: || StepKind::SetVariables(SetVariablesSpec::default()),
    },
    StepSchema {
        kind: "custom",
        keys: &[key("outcomes", Outcomes, true, slot!(CustomSpec, outcomes))],
        empty: || StepKind::Custom(CustomSpec::default()),
    },
];

/// The keys of `model { … }`. `context_window` and `max_tokens` are also read under
/// `config.json`'s names; `gguf` is `tokenizer` naming a GGUF file.
pub const MODEL_KEYS: &[KeySchema<ModelSpec>] = &[
    key("model", Text, false, field!(ModelSpec, model)),
    KeySchema {
        aliases: &["model_context_window"],
        ..key("context_window", Integer, false, field!(ModelSpec, context_window))
    },
    KeySchema { aliases: &["model_max_tokens"], ..key("max_tokens", Integer, false, field!(ModelSpec, max_tokens)) },
    key("encoding", Keyword, false, field!(ModelSpec, encoding)),
    KeySchema { aliases: &["gguf"], ..key("tokenizer", Text, false, field!(ModelSpec, tokenizer)) },
    key("price", Price, false, field!(ModelSpec, price)),
];

/// The keys of `settings { … }` with a field of their own; any other name is an integer setting
/// (`max_turn_loops`), read by the steps that name it.
pub const SETTINGS_KEYS: &[KeySchema<SettingsSpec>] = &[
    key("max_context_tokens", Integer, false, field!(SettingsSpec, max_context_tokens)),
    key("max_history_tokens", Integer, false, field!(SettingsSpec, max_history_tokens)),
    key("budget_safety_margin_tokens", Integer, false, field!(SettingsSpec, budget_safety_margin_tokens)),
    key("limits_policy", Keyword, false, field!(SettingsSpec, limits_policy)),
    key("compactors", Names, false, field!(SettingsSpec, compactors)),
    key("node_frame", Text, false, field!(SettingsSpec, node_frame)),
    key("carry_context", Bool, false, field!(SettingsSpec, carry_context)),
    key("history_trim", Keyword, false, field!(SettingsSpec, history_trim)),
    key("history_low_water_percent", Integer, false, field!(SettingsSpec, history_low_water_percent)),
    key("max_cost_per_run", Number, false, field!(SettingsSpec, max_cost_per_run)),
    key("billed_token_ratio", Number, false, field!(SettingsSpec, billed_token_ratio)),
    key("max_question_tokens", Integer, false, field!(SettingsSpec, max_question_tokens)),
    key("max_variable_tokens", Integer, false, field!(SettingsSpec, max_variable_tokens)),
];

/// A `T` (a [`ModelSpec`], a [`SettingsSpec`]) with each `(key, value)` of `fields` set through
/// its row of `keys`, as [`StepSchema::build`] makes a step.
pub fn from_fields<T: Default>(keys: &[KeySchema<T>], fields: Vec<(&str, FieldValue)>) -> T {
    let mut spec = T::default();
    for (name, value) in fields {
        if let Some(key) = keys.iter().find(|k| k.name == name) {
            (key.slot.set)(&mut spec, value);
        }
    }
    spec
}

/// The `(key, value)` of each row of `keys` whose field in `spec` is not at its default, in the
/// rows' order: what an export writes, and what [`from_fields`] reads back to an equal `T`.
pub fn to_fields<T>(keys: &[KeySchema<T>], spec: &T) -> Vec<(&'static str, FieldValue)> {
    keys.iter().filter_map(|k| (k.slot.get)(spec).map(|v| (k.name, v))).collect()
}

/// The keys of the nested forms the decoder's readers accept (`price`, compaction rules, user
/// parts, …), listed once for the readers and for the JSON Schema of pipeline files, so that the
/// two cannot list different keys.
pub(crate) mod forms {
    /// `price: { … }`: US dollars per million tokens.
    pub(crate) const PRICE: [&str; 4] = ["input", "cached_input", "cache_write", "output"];
    /// YAML's `compact_code: { rules: [ … ] }`.
    pub(crate) const COMPACT_CODE: [&str; 1] = ["rules"];
    /// One compaction rule.
    pub(crate) const COMPACT_RULE: [&str; 4] = ["language", "policy", "threshold", "inbox_key"];
    /// One user part.
    pub(crate) const USER_PART: [&str; 2] = ["source", "template"];
    /// YAML's `set_variables` rule.
    pub(crate) const SET_RULE: [&str; 4] = ["set", "from", "transform", "value"];
    /// The words `response_format` takes for a JSON object.
    pub(crate) const JSON_FORMATS: [&str; 2] = ["json", "json_object"];
    /// YAML's `response_format: { json_schema: … }`.
    pub(crate) const RESPONSE_FORMAT: [&str; 1] = ["json_schema"];
    /// `json_schema { … }`.
    pub(crate) const JSON_SCHEMA: [&str; 3] = ["name", "schema", "strict"];
    /// YAML's tool: `{ name, description, parameters }` (the DSL's `name { … }` has the last two).
    pub(crate) const TOOL: [&str; 3] = ["name", "description", "parameters"];
    /// One MCP server of an agent's `mcp_servers` (YAML's list form adds `name`).
    pub(crate) const MCP_SERVER: [&str; 5] = ["command", "args", "url", "bearer_token_env", "tools"];
}

impl StepKind {
    /// The description of this step's kind.
    pub fn schema(&self) -> &'static StepSchema {
        // Every kind's keyword is in the table (checked by the tests below).
        StepSchema::of(self.keyword()).unwrap_or(&STEP_SCHEMAS[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::testing;

    #[test]
    fn every_kind_is_described_and_its_transitions_are_the_target_keys() {
        let mut steps = testing::compaction_loop().steps;
        steps.push(testing::expand("x", "end"));
        steps.push(testing::custom("c", &[("done", "end")]));
        steps.push(testing::agent("a", "end"));
        let mut seen = std::collections::BTreeSet::new();
        for step in &steps {
            let schema = step.kind.schema();
            assert_eq!(schema.kind, step.kind.keyword());
            seen.insert(schema.kind);
            if let StepKind::Custom(_) = step.kind {
                continue;
            }
            let keys: Vec<&str> = step.kind.transitions().iter().map(|(k, _)| *k).collect();
            assert_eq!(keys, schema.transition_keys().collect::<Vec<_>>(), "{}", schema.kind);
        }
        assert_eq!(seen.len(), STEP_SCHEMAS.len(), "a sample of every kind: {seen:?}");
    }

    /// What the macro's generated code does: each step, the model and the settings rebuilt
    /// from the fields their rows read are equal to the originals.
    #[test]
    fn every_spec_is_rebuilt_from_its_rows() {
        let mut steps = testing::compaction_loop().steps;
        steps.push(testing::custom("c", &[("done", "end")]));
        steps.push(testing::agent("a", "end"));
        for step in &steps {
            let schema = step.kind.schema();
            assert_eq!(schema.build(to_fields(schema.keys, &step.kind)), step.kind, "{}", schema.kind);
        }
        let model = ModelSpec::default()
            .model(Some("gpt-4o".into()))
            .context_window(Some(8_000))
            .price(Some(PriceSpec::default().input(Some(2.5)).output(Some(10.0))));
        assert_eq!(from_fields(MODEL_KEYS, to_fields(MODEL_KEYS, &model)), model);
        let settings = SettingsSpec::default()
            .max_context_tokens(Some(4_000))
            .compactors(vec!["yaml".into()])
            .carry_context(Some(false))
            .history_trim(Some("fold".into()))
            .max_cost_per_run(Some(0.05))
            .billed_token_ratio(Some(1.25))
            .max_question_tokens(Some(1_000))
            .max_variable_tokens(Some(200));
        assert_eq!(from_fields(SETTINGS_KEYS, to_fields(SETTINGS_KEYS, &settings)), settings);
    }
}
