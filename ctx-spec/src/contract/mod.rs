//! The token budget contract between the model's limits, the pipeline's settings and its
//! `call_model` steps: no request may need more than the model's context window.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::contract`.

mod check;
mod context;
mod cost;
mod error;
mod fingerprint;
mod guard;
mod input_budget;
pub mod inputs;
mod report;
mod terms;
mod usable;

use std::collections::BTreeMap;

pub use check::{CallModelCheck, StepModel, check_contract};
pub use context::{ContextTerm, context_term};
pub use cost::{
    CostBound, StepCost, Unpaid, billed, cost_bound, cost_bound_billed, cost_bound_priced, cost_issues,
    cost_issues_at_least, loop_limit, nano_usd, usd, worst_input_tokens,
};
pub use error::ContractError;
pub use fingerprint::{ContractCache, ContractCacheStats, ContractOutcome, Fingerprint, FingerprintBuilder};
pub use guard::guard_request;
pub use input_budget::{BudgetOrigin, InputBudget, InputKind};
pub use inputs::proof_statement;
pub use report::{Clamp, ClampTarget, ContractReport, StepBudget};
pub(crate) use terms::invalid_output_limit;
pub use terms::{
    OutputLimit, OutputSource, fixed_prompt_tokens, max_output_tokens, output_limit, prompt_messages, render_template,
    render_user_message,
};
pub use usable::OUTPUT_FLOOR_TOKENS;

use crate::codes::Code;
use crate::pipeline::definition::{PipelineDef, StepKind};
use crate::validation::{ConfigIssue, FieldPath};

/// Whether any `call_model` or `agent` step of `def` has `use_history: true` (then `max_history_tokens` is
/// required).
pub fn pipeline_uses_history(def: &PipelineDef) -> bool {
    def.steps.iter().any(|s| match &s.kind {
        StepKind::CallModel(c) => c.use_history,
        StepKind::Agent(a) => a.call.use_history,
        _ => false,
    })
}

/// The `call_model` and `agent` steps of `def`, each with its system prompt's text: the definition's inline
/// text, else the one in `prompts` (texts provided at load time). A step whose prompt has no
/// text anywhere is a `MISSING_PROMPT_TEXT` issue under its `prompt_key`.
pub fn call_model_checks<'a>(
    def: &'a PipelineDef,
    prompts: &'a BTreeMap<String, String>,
) -> Result<Vec<CallModelCheck<'a>>, Vec<ConfigIssue>> {
    let (checks, issues) = call_model_checks_split(def, prompts);
    if issues.is_empty() { Ok(checks) } else { Err(issues) }
}

/// [`call_model_checks`], both halves: the checks of the steps whose prompt has text, and the
/// issues of those whose prompt has none. At compile time the contract of the first is checked
/// while the others wait for their text (or for their prompt key to be fixed).
pub fn call_model_checks_split<'a>(
    def: &'a PipelineDef,
    prompts: &'a BTreeMap<String, String>,
) -> (Vec<CallModelCheck<'a>>, Vec<ConfigIssue>) {
    let mut checks = Vec::new();
    let mut issues = Vec::new();
    // A context budget the help suggests must stay above every evidence budget (`usable.rs`).
    let evidence_tokens = def
        .steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::FetchNodeTexts(f) => usize::try_from(f.evidence_tokens).ok(),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    for step in &def.steps {
        let (spec, agent) = match &step.kind {
            StepKind::CallModel(spec) => (spec, None),
            StepKind::Agent(agent) => (&agent.call, Some(agent)),
            _ => continue,
        };
        let at = FieldPath::root().key("steps").key(step.id.as_str());
        let key = spec.prompt_key.as_str();
        let inline = def.prompts.iter().find(|p| p.key == key).and_then(|p| p.text.as_deref());
        match inline.or_else(|| prompts.get(key).map(String::as_str)) {
            Some(system_prompt) => {
                let mut check = CallModelCheck::new(at.clone(), &step.id, spec, system_prompt)
                    .with_evidence_tokens(evidence_tokens);
                if let Some(agent) = agent {
                    check = check.with_agent(agent);
                }
                // A step naming a context: its input budget is the request's; a context that
                // cannot give one is a structural issue (`validate_context`), the step waits.
                if let Some(name) = spec.context.as_deref() {
                    match context::context_term(&def.contexts, name, &step.id, &at) {
                        Ok(term) => check = check.with_context(term),
                        Err(_) => continue,
                    }
                }
                checks.push(check);
            }
            None => issues.push(
                ConfigIssue::new(
                    Code::MissingPromptText,
                    at.key("prompt_key"),
                    format!("{} step `{}` uses prompt `{key}`, which has no text", step.kind.keyword(), step.id),
                )
                .with_help(format!("declare `{key}` in `prompts` with its text, or provide it when loading")),
            ),
        }
    }
    (checks, issues)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::definition::{CallModelSpec, ModelSource, ModelSpec, PromptSpec, SettingsSpec, StepDef};

    fn def(history: [bool; 2]) -> PipelineDef {
        let call = |id: &str, use_history| StepDef {
            id: id.into(),
            kind: StepKind::CallModel(CallModelSpec {
                prompt_key: "p".into(),
                model: None,
                max_output_tokens: Some(10),
                max_tokens: None,
                user_parts: vec![],
                use_history,
                params: Default::default(),
                context: None,
                next: "end".into(),
            }),
        };
        PipelineDef {
            name: "T".into(),
            model: ModelSource::Inline(ModelSpec::default()),
            models: Vec::new(),
            settings: SettingsSpec::default(),
            prompts: vec![PromptSpec { key: "p".into(), text: Some("inline".into()) }],
            steps: vec![call("a", history[0]), call("b", history[1])],
            contexts: Default::default(),
        }
    }

    #[test]
    fn history_is_used_when_any_step_uses_it() {
        assert!(!pipeline_uses_history(&def([false, false])));
        assert!(pipeline_uses_history(&def([false, true])));
    }

    #[test]
    fn inline_prompt_text_wins_over_provided_text() {
        let d = def([false, false]);
        let provided = BTreeMap::from([("p".to_owned(), "provided".to_owned())]);
        let checks = call_model_checks(&d, &provided).unwrap();
        assert!(checks.iter().all(|c| c.system_prompt == "inline"));
        assert_eq!(checks[1].at.to_string(), "steps.b");
    }
}
