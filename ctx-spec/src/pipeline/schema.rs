//! The vocabulary of a pipeline, described once: every step kind, its keys (with their type and
//! whether they are required) and which keys are transitions.
//!
//! The `pipeline!` macro's keyword table is checked against this description by a test in
//! ctx-macros, and the definition's own `keyword()`/`transitions()` by the tests below, so a key
//! added in one place and forgotten in another fails the build's tests instead of a user's run.

use super::definition::StepKind;

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
}

/// One key of a step kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySchema {
    /// The key as written.
    pub name: &'static str,
    /// What its value is.
    pub ty: ValueType,
    /// Whether a step of the kind must write it.
    pub required: bool,
}

/// One step kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepSchema {
    /// The kind's keyword (`fetch_node_texts`).
    pub kind: &'static str,
    /// Its keys, in the order the documentation lists them.
    pub keys: &'static [KeySchema],
}

impl StepSchema {
    /// The keys that are transitions, in the order of `StepKind::transitions()` (custom steps'
    /// outcomes are named by the user and not listed).
    pub fn transition_keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.keys.iter().filter(|k| k.ty == ValueType::Target).map(|k| k.name)
    }

    /// The schema of the kind with this keyword.
    pub fn of(kind: &str) -> Option<&'static StepSchema> {
        STEP_SCHEMAS.iter().find(|s| s.kind == kind)
    }
}

const fn key(name: &'static str, ty: ValueType, required: bool) -> KeySchema {
    KeySchema { name, ty, required }
}

use ValueType::*;

/// The keys of a step that sends a model request (`call_model`, and `agent`, which adds its own
/// before `next`), written once so the two kinds cannot drift apart.
macro_rules! model_request_keys {
    ($($extra:expr),* $(,)?) => {
        &[
            key("prompt_key", PromptKey, true),
            key("max_output_tokens", Integer, false),
            key("max_tokens", Integer, false),
            key("user_parts", UserParts, false),
            key("use_history", Bool, false),
            key("temperature", Number, false),
            key("top_p", Number, false),
            key("stop", TextList, false),
            key("seed", Integer, false),
            key("response_format", ResponseFormat, false),
            $($extra,)*
            key("next", Target, true),
        ]
    };
}

/// Every step kind, in the order the documentation lists them.
pub const STEP_SCHEMAS: &[StepSchema] = &[
    StepSchema { kind: "search_nodes", keys: &[key("top_k", Integer, true), key("next", Target, true)] },
    StepSchema { kind: "expand_dependency_tree", keys: &[key("max_depth", Integer, true), key("next", Target, true)] },
    StepSchema { kind: "fetch_node_texts", keys: &[key("evidence_tokens", Integer, true), key("next", Target, true)] },
    StepSchema {
        kind: "manage_context_budget",
        keys: &[
            key("compact_code", CompactRules, false),
            key("divide_new_content", Text, false),
            key("on_ok", Target, true),
            key("on_over", Target, true),
        ],
    },
    StepSchema { kind: "call_model", keys: model_request_keys!() },
    StepSchema {
        kind: "agent",
        keys: model_request_keys!(
            key("tools", Tools, false),
            key("max_tool_calls", Integer, true),
            key("turn_budget_tokens", Integer, false),
        ),
    },
    StepSchema {
        kind: "loop_guard",
        keys: &[
            key("max_turn_loops_from_settings", SettingName, true),
            key("on_allow", Target, true),
            key("on_deny", Target, true),
        ],
    },
    StepSchema { kind: "set_variables", keys: &[key("rules", SetRules, true), key("next", Target, true)] },
    StepSchema { kind: "custom", keys: &[key("outcomes", Outcomes, true)] },
];

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
}
