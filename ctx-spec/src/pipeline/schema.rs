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

/// The context engine's declarations — a pipeline's `contexts` (in `pipeline!` and in YAML) and
/// the body of `context_engine!` — block by block: each block's keys, and the rows of those
/// holding a plain value, which the decoder reads through their slots as it reads a step's. The
/// keys whose value is a form of its own (the list of contexts, a `policy` block, the messages)
/// are read by the decoder's reader of that form.
pub mod engine {
    // Paths from the crate's root: this module is inline, and the module-floors scan reads a
    // `super::` as the file's parent.
    use crate::engine::{
        CompactorSpec, ContextDeclaration, ContextInsert, ContextPolicySpec, EngineSpec, ExpansionSpec,
        InputBudgetSpec, PackBudgetSpec, RetrieverDecl,
    };
    use crate::pipeline::schema::ValueType::*;
    use crate::pipeline::schema::{KeySchema, key};
    use crate::pipeline::slot::field;

    /// One block of the declarations.
    #[derive(Debug)]
    pub struct EngineBlock<T: 'static> {
        /// Every key of the block, in the order messages and the documentation list them (a YAML
        /// item of a list of contexts or retrievers adds `name`).
        pub keys: &'static [&'static str],
        /// The keys of [`EngineBlock::keys`] that hold a plain value.
        pub rows: &'static [KeySchema<T>],
    }

    /// The declarations themselves: `contexts` (required), `retrievers`, `compactors`.
    pub const ENGINE: EngineBlock<EngineSpec> = EngineBlock {
        keys: &["contexts", "retrievers", "compactors"],
        rows: &[key("compactors", Names, false, field!(EngineSpec, compactors))],
    };
    /// A context: `inputs`, `policy`, `messages` (required).
    pub const CONTEXT: EngineBlock<ContextDeclaration> = EngineBlock {
        keys: &["inputs", "policy", "messages"],
        rows: &[key("inputs", Names, false, field!(ContextDeclaration, inputs))],
    };
    /// A retriever: `query` (required) and `limit` (3 when left out).
    pub const RETRIEVER: EngineBlock<RetrieverDecl> = EngineBlock {
        keys: &["query", "limit"],
        rows: &[
            key("query", Text, true, field!(RetrieverDecl, query)),
            key("limit", Integer, false, field!(RetrieverDecl, limit)),
        ],
    };
    /// A context's `policy`.
    pub const POLICY: EngineBlock<ContextPolicySpec> = EngineBlock {
        keys: &["input_budget", "pack_budget", "overflow", "compactor", "expansion"],
        rows: &[key("overflow", Keyword, false, field!(ContextPolicySpec, overflow))],
    };
    /// `input_budget`.
    pub const INPUT_BUDGET: EngineBlock<InputBudgetSpec> = EngineBlock {
        keys: &["max_tokens"],
        rows: &[key("max_tokens", Integer, true, field!(InputBudgetSpec, max_tokens))],
    };
    /// `pack_budget`.
    pub const PACK_BUDGET: EngineBlock<PackBudgetSpec> = EngineBlock {
        keys: &["default_ratio"],
        rows: &[key("default_ratio", Number, false, field!(PackBudgetSpec, default_ratio))],
    };
    /// `expansion`.
    pub const EXPANSION: EngineBlock<ExpansionSpec> = EngineBlock {
        keys: &["max_pages", "min_fill_ratio"],
        rows: &[
            key("max_pages", Integer, true, field!(ExpansionSpec, max_pages)),
            key("min_fill_ratio", Number, true, field!(ExpansionSpec, min_fill_ratio)),
        ],
    };
    /// `compactor` written as a block, the serde form `{ type: truncate }` (or by its name alone).
    pub const COMPACTOR: EngineBlock<CompactorSpec> =
        EngineBlock { keys: &["type"], rows: &[key("type", Keyword, true, field!(CompactorSpec, name))] };
    /// A pack, a `context` message: `ratio` and `placement` (`message` or `variable`).
    pub const PACK: EngineBlock<ContextInsert> = EngineBlock {
        keys: &["ratio", "placement"],
        rows: &[key("ratio", Number, false, field!(ContextInsert, ratio))],
    };
    /// The kinds of message, in the DSL the key of each item of `messages` (`system: "…"`,
    /// `history`), in YAML its `type`.
    pub const MESSAGE_KINDS: [&str; 5] = ["system", "user", "assistant", "context", "history"];
    /// YAML's message, `{ type, … }`: the keys each kind takes besides `type`.
    pub const MESSAGE_KEYS: [(&str, &[&str]); 5] = [
        ("system", &["content"]),
        ("user", &["content"]),
        ("assistant", &["content"]),
        ("context", &["name", "ratio", "placement"]),
        ("history", &[]),
    ];
    /// The values of a pack's `placement`.
    pub const PLACEMENTS: [&str; 2] = ["message", "variable"];
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

    /// The keys the items of a cell of `docs/dsl.md`'s table name, each with whether it is marked
    /// optional (`key?`): an item is one comma-separated part outside code spans and parentheses,
    /// naming its key by the code span it starts with (prose items name none); "every key of
    /// `kind`" names the keys of a row above, `documented`.
    fn documented_keys(cell: &str, documented: &[(String, Vec<(String, bool)>)]) -> Vec<(String, bool)> {
        let mut items = vec![String::new()];
        let (mut in_code, mut depth) = (false, 0usize);
        for c in cell.chars() {
            match c {
                '`' => in_code = !in_code,
                '(' if !in_code => depth += 1,
                ')' if !in_code => depth = depth.saturating_sub(1),
                ',' if !in_code && depth == 0 => {
                    items.push(String::new());
                    continue;
                }
                _ => {}
            }
            items.last_mut().expect("one item at least").push(c);
        }
        let mut keys = Vec::new();
        for item in &items {
            let item = item.trim();
            let item = item.strip_prefix("plus ").unwrap_or(item);
            if let Some(rest) = item.strip_prefix("every key of `") {
                let kind = &rest[..rest.find('`').unwrap_or(rest.len())];
                let row = documented.iter().find(|(k, _)| k == kind);
                keys.extend(row.unwrap_or_else(|| panic!("`{kind}` is not a row above")).1.iter().cloned());
                continue;
            }
            let Some(code) = item.strip_prefix('`') else { continue };
            let name: String = code.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let optional = code[name.len()..].starts_with('?');
            keys.push((name, optional));
        }
        keys
    }

    /// `docs/dsl.md`'s table of step kinds says what [`STEP_SCHEMAS`] holds: a row per kind, in
    /// the table's order, naming every key of the kind and no other, each marked `key?` exactly
    /// when a step may leave it out. On a difference the test shows the row the table needs.
    #[test]
    fn the_dsl_chapter_lists_every_key_of_every_kind() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/dsl.md");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let table = text.split("| kind | keys |\n|---|---|\n").nth(1).expect("the table of step kinds");
        let mut documented: Vec<(String, Vec<(String, bool)>)> = Vec::new();
        for line in table.lines().take_while(|l| l.starts_with('|')) {
            let row = line.trim_start_matches("| ").trim_end_matches(" |");
            let (kind, cell) = row.split_once(" | ").unwrap_or_else(|| panic!("a row of two cells: {line}"));
            let keys = documented_keys(cell, &documented);
            documented.push((kind.trim_matches('`').to_owned(), keys));
        }
        let kinds: Vec<&str> = documented.iter().map(|(k, _)| k.as_str()).collect();
        let expected: Vec<&str> = STEP_SCHEMAS.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, expected, "docs/dsl.md: the rows of the table of step kinds");
        for (schema, (_, keys)) in STEP_SCHEMAS.iter().zip(&documented) {
            let mut written = keys.clone();
            written.sort();
            let mut rows: Vec<(String, bool)> = schema.keys.iter().map(|k| (k.name.to_owned(), !k.required)).collect();
            rows.sort();
            let needed: Vec<String> =
                schema.keys.iter().map(|k| format!("`{}{}`", k.name, if k.required { "" } else { "?" })).collect();
            assert_eq!(
                written,
                rows,
                "docs/dsl.md: the row of `{}` names other keys than its schema rows (`key?`: optional); it \
                 needs, in some form: | `{}` | {} |",
                schema.kind,
                schema.kind,
                needed.join(", ")
            );
        }
    }

    #[test]
    fn the_dsl_chapter_check_finds_a_missing_an_extra_and_a_misdescribed_key() {
        let rows = |cell: &str| documented_keys(cell, &[("a".to_owned(), vec![("x".to_owned(), false)])]);
        assert_eq!(rows("`top_k`, `next`"), [("top_k".into(), false), ("next".into(), false)]);
        assert_eq!(
            rows("every key of `a`, plus `tools?: [ n { d: \"…\" }, … ]` (a, b), prose, `m`"),
            [("x".into(), false), ("tools".into(), true), ("m".into(), false)]
        );
        // Each of these differs from the rows of `search_nodes` (`top_k` and `next`, required).
        let search: Vec<(String, bool)> = vec![("next".into(), false), ("top_k".into(), false)];
        for wrong in ["`top_k`", "`top_k`, `next`, `seed?`", "`top_k?`, `next`"] {
            let mut found = rows(wrong);
            found.sort();
            assert_ne!(found, search, "{wrong}");
        }
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
