//! The contract term of a model step whose request is a declared context's assembly.
//!
//! The context engine fits everything it assembles — the step's system prompt (as the base
//! system prompt), the history, the packs and the user message — into the context's
//! `input_budget.max_tokens`, counted exactly on the messages it returns. For such a step that
//! budget is the whole input of the request, so in the inequality it stands where the fixed
//! prompt, the history budget and `max_context_tokens` stand for a step that lays out its own
//! request:
//!
//! ```text
//! input_budget.max_tokens(context) + tool_schema_tokens (agent) + max_output_tokens(step)
//!     + budget_safety_margin_tokens  <=  model_context_window
//! ```
//!
//! A context without an input budget has no bound, so a step cannot use it.

use crate::codes::Code;
use crate::engine::{EngineSpec, Policy};
use crate::validation::{ConfigIssue, FieldPath, did_you_mean};

/// What a step that assembles a declared context brings to the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ContextTerm<'a> {
    /// The context's name.
    pub name: &'a str,
    /// Its `input_budget.max_tokens`: the most the assembled messages count, chat overhead
    /// included.
    pub input_tokens: usize,
}

/// The term of step `step_id` (at `at`), which names the context `name` (written at
/// `at.context`): the context must be declared in `engine` and have an input budget.
pub fn context_term<'a>(
    engine: &'a EngineSpec,
    name: &str,
    step_id: &str,
    at: &FieldPath,
) -> Result<ContextTerm<'a>, ConfigIssue> {
    let path = at.key("context");
    let Some(decl) = engine.contexts.iter().find(|c| c.name == name) else {
        let declared: Vec<&str> = engine.contexts.iter().map(|c| c.name.as_str()).collect();
        let help = match (did_you_mean(name, declared.iter().copied()), declared.is_empty()) {
            (Some(near), _) => format!("did you mean `{near}`? declared: {}", declared.join(", ")),
            (None, true) => "declare the context, with its messages and an input budget".to_owned(),
            (None, false) => format!("name one of the declared contexts: {}", declared.join(", ")),
        };
        return Err(ConfigIssue::new(
            Code::ContractUnknownContext,
            path,
            format!("step `{step_id}` assembles context `{name}`, which is not declared"),
        )
        .with_help(help));
    };
    match decl.policy.as_ref().map(Policy::from_spec).and_then(|p| p.max_tokens).filter(|t| *t > 0) {
        Some(input_tokens) => Ok(ContextTerm { name: decl.name.as_str(), input_tokens }),
        None => Err(ConfigIssue::new(
            Code::ContractUnboundedContext,
            path,
            format!(
                "step `{step_id}` assembles context `{name}`, which declares no `input_budget.max_tokens`: \
                 its request would have no bound"
            ),
        )
        .with_help(format!(
            "give context `{name}` a policy with `input_budget: {{ max_tokens: … }}`: what the window leaves \
             after the step's output and the safety margin"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{ContextDeclaration, ContextPolicySpec, InputBudgetSpec, MessageSpec};

    fn engine(budget: Option<i64>) -> EngineSpec {
        let policy = budget.map(|max_tokens| ContextPolicySpec {
            input_budget: Some(InputBudgetSpec { max_tokens }),
            ..ContextPolicySpec::default()
        });
        EngineSpec {
            contexts: vec![ContextDeclaration {
                name: "support".into(),
                inputs: vec![],
                policy,
                messages: vec![MessageSpec::User { content: "Question".into() }],
            }],
            ..EngineSpec::default()
        }
    }

    #[test]
    fn a_declared_bounded_context_is_its_input_budget() {
        let engine = engine(Some(3_000));
        let at = FieldPath::root().key("steps").key("answer");
        assert_eq!(
            context_term(&engine, "support", "answer", &at),
            Ok(ContextTerm { name: "support", input_tokens: 3_000 })
        );
    }

    #[test]
    fn an_unknown_or_unbounded_context_is_an_issue_under_the_step_key() {
        let at = FieldPath::root().key("steps").key("answer");
        let issue = context_term(&engine(Some(3_000)), "suport", "answer", &at).unwrap_err();
        assert_eq!(
            (issue.code, issue.path.to_string().as_str()),
            (Code::ContractUnknownContext, "steps.answer.context")
        );
        assert_eq!(issue.help.as_deref(), Some("did you mean `support`? declared: support"));
        let issue = context_term(&EngineSpec::default(), "support", "answer", &at).unwrap_err();
        assert!(issue.help.as_deref().is_some_and(|h| h.starts_with("declare the context")), "{issue}");
        for unbounded in [None, Some(0)] {
            let issue = context_term(&engine(unbounded), "support", "answer", &at).unwrap_err();
            assert_eq!(issue.code, Code::ContractUnboundedContext, "{unbounded:?}");
        }
    }
}
