//! The rules of a pipeline's `contexts` and of the model steps that assemble one
//! (`call_model { context: NAME }`, `agent { context: NAME }`).
//!
//! The declarations are checked by the context engine's own rules (`engine::validate_spec_at`)
//! under the pipeline's path `contexts`, so a mistake there reads as it does in
//! `context_engine!`. A step that names a context:
//!
//! * names a declared context with an input budget (`contract::context_term`: the term that
//!   stands for the whole request in the budget contract);
//! * can give it every input it declares: each is read from the state as a `user_parts` source is
//!   (a text field of the state, or a variable some `set_variables` rule sets), and the dataflow
//!   warning `VARIABLE_MAYBE_UNSET` covers a path that does not set it;
//! * writes none of the keys the context replaces: `user_parts` (the context's messages make the
//!   user message) and `use_history` (the context's `history` message says where the pipeline's
//!   history goes).

use std::collections::BTreeSet;

use crate::codes::Code;
use crate::contract::context_term;
use crate::engine::validate_spec_at;
use crate::validation::{ConfigIssue, FieldPath};

use super::definition::{CallModelSpec, PipelineDef};

/// Every problem of `def.contexts`, under `contexts`.
pub(crate) fn contexts_issues(def: &PipelineDef) -> Vec<ConfigIssue> {
    validate_spec_at(&def.contexts, &FieldPath::root().key("contexts"))
}

/// The problems of a model step `id` at `path` that names a context; nothing when it names none.
/// `source_issue` is the rule of a `user_parts` source, applied to each declared input.
pub(crate) fn context_step_issues(
    def: &PipelineDef,
    path: &FieldPath,
    id: &str,
    s: &CallModelSpec,
    variables: &BTreeSet<&str>,
    source_issue: impl Fn(FieldPath, &str, &str, &BTreeSet<&str>) -> Option<ConfigIssue>,
) -> Vec<ConfigIssue> {
    let Some(name) = s.context.as_deref() else { return Vec::new() };
    let mut issues = Vec::new();
    if let Err(issue) = context_term(&def.contexts, name, id, path) {
        issues.push(issue);
    }
    if let Some(decl) = def.contexts.context(name) {
        for input in &decl.inputs {
            if let Some(mut issue) = source_issue(path.key("context"), id, input, variables) {
                issue.message = format!("context `{name}` takes input `{input}`: {}", issue.message);
                issues.push(issue);
            }
        }
    }
    let replaced = [
        ("user_parts", !s.user_parts.is_empty(), "the context's `user` message makes the user message"),
        ("use_history", s.use_history, "the context's `history` message says where the pipeline's history goes"),
    ];
    for (key, written, why) in replaced {
        if written {
            issues.push(
                ConfigIssue::new(
                    Code::ContractContextConflict,
                    path.key(key),
                    format!("step `{id}` assembles context `{name}`, which replaces `{key}`: {why}"),
                )
                .with_help(format!(
                    "remove `{key}` from step `{id}`, or remove `context` to lay the request out with `user_parts`"
                )),
            );
        }
    }
    issues
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{ContextDeclaration, ContextPolicySpec, EngineSpec, InputBudgetSpec, MessageSpec};
    use crate::pipeline::definition::{StepKind, UserPartSpec};
    use crate::pipeline::testing;
    use crate::pipeline::validate::structural_issues;

    fn engine() -> EngineSpec {
        EngineSpec {
            contexts: vec![ContextDeclaration {
                name: "support".into(),
                inputs: vec!["user_question".into(), "ticket".into()],
                policy: Some(ContextPolicySpec {
                    input_budget: Some(InputBudgetSpec { max_tokens: 3_000 }),
                    ..ContextPolicySpec::default()
                }),
                messages: vec![MessageSpec::User { content: "{input.ticket}: {input.user_question}".into() }],
            }],
            ..EngineSpec::default()
        }
    }

    fn with_context(name: &str, edit: impl FnOnce(&mut CallModelSpec)) -> PipelineDef {
        let mut def = testing::def(vec![testing::call("answer", "answer", "end")]).contexts(engine());
        let StepKind::CallModel(call) = &mut def.steps[0].kind else { unreachable!() };
        call.context = Some(name.into());
        call.user_parts = Vec::new();
        edit(call);
        def
    }

    fn found(def: &PipelineDef) -> Vec<(Code, String)> {
        structural_issues(def).into_iter().map(|i| (i.code, i.path.to_string())).collect()
    }

    #[test]
    fn an_unknown_context_is_named_with_the_nearest() {
        let def = with_context("suport", |_| {});
        let issues = structural_issues(&def);
        let issue = issues.iter().find(|i| i.code == Code::ContractUnknownContext).expect("reported");
        assert_eq!(issue.path.to_string(), "steps[0].context");
        assert_eq!(issue.help.as_deref(), Some("did you mean `support`? declared: support"));
    }

    #[test]
    fn each_input_must_be_a_state_field_or_a_variable_that_is_set() {
        // `user_question` is a field of the state; `ticket` no step sets.
        let def = with_context("support", |_| {});
        let issues = structural_issues(&def);
        assert_eq!(found(&def), [(Code::UnknownSource, "steps[0].context".to_owned())]);
        assert!(issues[0].message.starts_with("context `support` takes input `ticket`: "), "{}", issues[0].message);
        // Set by a rule before the step: accepted.
        let mut def = with_context("support", |c| c.next = "end".into());
        def.steps.insert(0, testing::set("load", vec![testing::literal("ticket", serde_json::json!("T-1"))], "answer"));
        assert_eq!(found(&def), []);
    }

    #[test]
    fn keys_the_context_replaces_are_each_a_conflict() {
        let def = with_context("support", |c| {
            c.user_parts = vec![UserPartSpec::new("user_question", "{}")];
            c.use_history = true;
        });
        let conflicts: Vec<String> = structural_issues(&def)
            .into_iter()
            .filter(|i| i.code == Code::ContractContextConflict)
            .map(|i| i.path.to_string())
            .collect();
        assert_eq!(conflicts, ["steps[0].user_parts", "steps[0].use_history"]);
    }

    #[test]
    fn the_declarations_are_checked_under_contexts() {
        let mut engine = engine();
        engine.contexts[0].messages.push(MessageSpec::Context(crate::engine::ContextInsert::new("kb")));
        let def = testing::def(vec![testing::call("answer", "answer", "end")]).contexts(engine);
        assert_eq!(contexts_issues(&def)[0].path.to_string(), "contexts.contexts[0].messages[1].name");
        assert_eq!(contexts_issues(&def)[0].code, Code::EngineUnknownPack);
    }
}
