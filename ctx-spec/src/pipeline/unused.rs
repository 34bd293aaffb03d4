//! Declarations nothing uses: a prompt no step names (`DATAFLOW_PROMPT_UNUSED`), a named model
//! no step names (`DATAFLOW_MODEL_UNUSED`), a declared context no step assembles
//! (`DATAFLOW_CONTEXT_UNUSED`), and a setting nothing reads (`DATAFLOW_SETTING_UNUSED`): the
//! history settings of a pipeline whose steps never send history, an integer setting no
//! `loop_guard` names.
//!
//! Warnings, not errors: nothing is paid for or lost at run time, and a declaration can be unused
//! in one pipeline for a good reason. A base file shared through `extends` declares prompts,
//! models and settings for several pipelines, each using some of them, and the file that extends
//! it cannot remove what it inherits; an integer setting is also readable by the caller's own code
//! (`LoadedPipeline::setting`). Each warning still names the declaration and the way to use it,
//! because the usual cause is a step that was meant to use it and does not (a misspelt key, a
//! step left out).
//!
//! A step that names an undeclared prompt, model, context or setting has its own error, and the
//! declaration it meant is likely the unused one: no warning of that kind is given then, so one
//! mistake is reported once.

use crate::codes::Code;
use crate::engine::MessageSpec;
use crate::validation::{ConfigIssue, FieldPath};

use super::definition::{PipelineDef, StepKind};

/// Every declaration of `def` that no step uses.
pub(crate) fn unused_declarations(def: &PipelineDef) -> Vec<ConfigIssue> {
    let mut warnings = Vec::new();
    let calls: Vec<_> = def.steps.iter().filter_map(|s| s.kind.model_request()).collect();

    let prompt_named = |key: &str| calls.iter().any(|c| c.prompt_key == key);
    if calls.iter().all(|c| def.prompts.iter().any(|p| p.key == c.prompt_key)) {
        for prompt in def.prompts.iter().filter(|p| !prompt_named(p.key.as_str())) {
            warnings.push(
                ConfigIssue::new(
                    Code::DataflowPromptUnused,
                    FieldPath::root().key("prompts").key(&prompt.key),
                    format!(
                        "prompt `{}` is declared but no step uses it (no `prompt_key: {}`)",
                        prompt.key, prompt.key
                    ),
                )
                .with_help(format!(
                    "name it in the model step meant to use it (`prompt_key: {}`), or remove it",
                    prompt.key
                )),
            );
        }
    }

    let model_named = |name: &str| calls.iter().any(|c| c.model.as_deref() == Some(name));
    if calls.iter().all(|c| c.model.as_deref().is_none_or(|m| def.named_model(m).is_some())) {
        for (name, _) in def.models.iter().filter(|(n, _)| !model_named(n.as_str())) {
            warnings.push(
                ConfigIssue::new(
                    Code::DataflowModelUnused,
                    FieldPath::root().key("models").key(name),
                    format!("model `{name}` is declared in `models` but no step names it (no `model: {name}`)"),
                )
                .with_help(format!("name it in the step meant to use it (`model: {name}`), or remove it")),
            );
        }
    }

    let context_named = |name: &str| calls.iter().any(|c| c.context.as_deref() == Some(name));
    if calls.iter().all(|c| c.context.as_deref().is_none_or(|n| def.contexts.context(n).is_some())) {
        for (i, decl) in def.contexts.contexts.iter().enumerate().filter(|(_, d)| !context_named(d.name.as_str())) {
            warnings.push(
                ConfigIssue::new(
                    Code::DataflowContextUnused,
                    FieldPath::root().key("contexts").key("contexts").index(i).key("name"),
                    format!(
                        "context `{}` is declared but no step assembles it (no `context: {}`)",
                        decl.name, decl.name
                    ),
                )
                .with_help(format!(
                    "name it in the model step whose request it makes (`context: {}`), or remove it",
                    decl.name
                )),
            );
        }
    }

    warnings.extend(unused_settings(def));
    warnings
}

fn unused_settings(def: &PipelineDef) -> Vec<ConfigIssue> {
    let at = FieldPath::root().key("settings");
    let mut warnings = Vec::new();
    let sends_history = def.steps.iter().filter_map(|s| s.kind.model_request()).any(|c| match c.context.as_deref() {
        None => c.use_history,
        // An undeclared context is its own error; assume it draws the history.
        Some(name) => {
            def.contexts.context(name).is_none_or(|d| d.messages.iter().any(|m| matches!(m, MessageSpec::History)))
        }
    });
    if !sends_history {
        let s = &def.settings;
        let written = [
            ("max_history_tokens", s.max_history_tokens.is_some()),
            ("history_trim", s.history_trim.is_some()),
            ("history_low_water_percent", s.history_low_water_percent.is_some()),
        ];
        for (key, _) in written.into_iter().filter(|(_, w)| *w) {
            warnings.push(
                ConfigIssue::new(
                    Code::DataflowSettingUnused,
                    at.key(key),
                    format!(
                        "setting `{key}` is never used: no step sends history (no `use_history: true`, no context \
                         with a `history` message), so the history stays empty"
                    ),
                )
                .with_help(format!(
                    "set `use_history: true` on the model step that should see the conversation, or remove `{key}`"
                )),
            );
        }
    }
    let guards: Vec<&str> = def
        .steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::LoopGuard(g) => Some(g.max_turn_loops_from_settings.as_str()),
            _ => None,
        })
        .collect();
    // A guard naming an undeclared setting is UNKNOWN_SETTING, likely for one of these.
    if guards.iter().all(|g| def.settings.extra.contains_key(*g)) {
        for name in def.settings.extra.keys().filter(|n| !guards.contains(&n.as_str())) {
            warnings.push(
                ConfigIssue::new(
                    Code::DataflowSettingUnused,
                    at.key(name),
                    format!("setting `{name}` is declared but no `loop_guard` reads it"),
                )
                .with_help(format!(
                    "name it in the guard meant to use it (`max_turn_loops_from_settings: {name}`), or remove it if \
                     your own code does not read it (`LoadedPipeline::setting`)"
                )),
            );
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::definition::{END, ModelSpec};
    use crate::pipeline::testing::*;

    fn found(def: &PipelineDef) -> Vec<(&'static str, String)> {
        codes(&unused_declarations(def))
    }

    #[test]
    fn the_specification_loop_uses_everything_it_declares_but_its_history_budget() {
        // Its answer step does not send the history.
        assert_eq!(found(&compaction_loop()), [("DATAFLOW_SETTING_UNUSED", "settings.max_history_tokens".to_owned())]);
    }

    #[test]
    fn a_prompt_no_step_names_is_reported_unless_a_step_names_an_unknown_one() {
        let def = def(vec![call("answer", "answer", END)]);
        assert_eq!(
            found(&def),
            [
                ("DATAFLOW_PROMPT_UNUSED", "prompts.summarizer".to_owned()),
                ("DATAFLOW_SETTING_UNUSED", "settings.max_history_tokens".to_owned()),
                ("DATAFLOW_SETTING_UNUSED", "settings.max_turn_loops".to_owned()),
            ]
        );
        // `summarise` is a misspelling of `summarizer`: UNKNOWN_PROMPT says so, once.
        let def2 = def.clone().steps(vec![call("answer", "answer", "s"), call("s", "summarise", END)]);
        assert!(found(&def2).iter().all(|(c, _)| *c != "DATAFLOW_PROMPT_UNUSED"), "{:?}", found(&def2));
    }

    #[test]
    fn a_named_model_and_a_context_no_step_names_are_reported() {
        use crate::engine::{ContextDeclaration, EngineSpec};
        let engine = EngineSpec {
            contexts: vec![ContextDeclaration {
                name: "support".into(),
                inputs: vec![],
                policy: None,
                messages: vec![MessageSpec::History],
            }],
            ..EngineSpec::default()
        };
        let mut def = compaction_loop().contexts(engine);
        def.models = vec![("small".into(), ModelSpec::default()), ("strong".into(), ModelSpec::default())];
        if let StepKind::CallModel(c) = &mut def.steps[6].kind {
            c.model = Some("strong".into());
            c.use_history = true;
        }
        assert_eq!(
            found(&def),
            [
                ("DATAFLOW_MODEL_UNUSED", "models.small".to_owned()),
                ("DATAFLOW_CONTEXT_UNUSED", "contexts.contexts[0].name".to_owned()),
            ]
        );
        // A step that names an undeclared model or context: their errors, no warning.
        if let StepKind::CallModel(c) = &mut def.steps[6].kind {
            c.model = Some("smal".into());
            c.context = Some("suport".into());
        }
        assert_eq!(found(&def), []);
    }

    #[test]
    fn history_settings_are_used_only_by_a_step_that_sends_history() {
        let mut def = compaction_loop();
        def.settings.history_trim = Some("fold".into());
        assert_eq!(
            found(&def),
            [
                ("DATAFLOW_SETTING_UNUSED", "settings.max_history_tokens".to_owned()),
                ("DATAFLOW_SETTING_UNUSED", "settings.history_trim".to_owned()),
            ]
        );
        if let StepKind::CallModel(c) = &mut def.steps[6].kind {
            c.use_history = true;
        }
        assert_eq!(found(&def), []);
    }

    #[test]
    fn a_guard_naming_an_undeclared_setting_hides_the_unused_ones() {
        let mut def = compaction_loop();
        def.settings.extra.insert("retries".into(), 2);
        if let StepKind::CallModel(c) = &mut def.steps[6].kind {
            c.use_history = true;
        }
        assert_eq!(found(&def), [("DATAFLOW_SETTING_UNUSED", "settings.retries".to_owned())]);
        if let StepKind::LoopGuard(g) = &mut def.steps[3].kind {
            g.max_turn_loops_from_settings = "max_turn_loop".into();
        }
        assert_eq!(found(&def), []);
    }
}
