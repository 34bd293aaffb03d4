//! `set_variables`: rules applied in order, each seeing the effect of the ones before it, all or
//! nothing (the driver keeps the result only when every rule succeeded). The value model lives
//! in `ctx_spec::pipeline::values`, shared with validation.

use crate::error::CtxError;
use crate::pipeline::Transition;
use crate::pipeline::definition::{SetValueSpec, SetVariablesSpec};
use crate::pipeline::error::PipelineError;
use crate::state::PipelineState;
use ctx_spec::pipeline::values::{self, Transform, Val};

use super::report::{Done, StepDetail};

pub(crate) fn set_variables(step: &str, spec: &SetVariablesSpec, state: &mut PipelineState) -> Result<Done, CtxError> {
    let mut set = Vec::with_capacity(spec.rules.len());
    for (j, rule) in spec.rules.iter().enumerate() {
        let fail = |reason: String| PipelineError::SetVariable {
            step: step.to_owned(),
            rule: j,
            target: rule.set.clone(),
            reason,
        };
        let value = match &rule.value {
            SetValueSpec::Value(v) => Val::Json(v.clone()),
            SetValueSpec::From { from, transform } => {
                let value = values::read(state, from)
                    .ok_or_else(|| PipelineError::MissingSource { step: step.to_owned(), source_name: from.clone() })?;
                match transform {
                    None => value,
                    Some(name) => {
                        let t = Transform::parse(name).ok_or_else(|| fail(format!("unknown transform `{name}`")))?;
                        t.apply(value).map_err(&fail)?
                    }
                }
            }
        };
        let stored = values::convert(&rule.set, value).map_err(&fail)?;
        values::store(state, &rule.set, stored);
        set.push(rule.set.clone());
    }
    tracing::debug!(target: "ctx::pipeline", ?set, "set_variables");
    Ok((Transition::Next, StepDetail::SetVariables { set }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::codes::ErrorCode;
    use crate::pipeline::testing::{from, literal};

    fn spec(rules: Vec<crate::pipeline::definition::SetRuleSpec>) -> SetVariablesSpec {
        SetVariablesSpec::new(rules, "end")
    }

    #[test]
    fn the_spec_rules_replace_the_context_with_the_summary() {
        let mut state = PipelineState::new("q");
        state.context_blocks = vec!["long block 1".into(), "long block 2".into()];
        state.last_model_response = Some("Summary: totals come from vw_InvoiceTotals.".into());
        let rules = spec(vec![
            from("context_blocks", "last_model_response", Some("to_context_blocks")),
            literal("last_model_response", json!(null)),
        ]);
        let (t, detail) = set_variables("set_ctx", &rules, &mut state).unwrap();
        assert_eq!(t, Transition::Next);
        assert_eq!(state.context_blocks, vec!["Summary: totals come from vw_InvoiceTotals.".to_owned()]);
        assert_eq!(state.last_model_response, None);
        assert_eq!(
            detail,
            StepDetail::SetVariables { set: vec!["context_blocks".into(), "last_model_response".into()] }
        );
    }

    #[test]
    fn later_rules_see_earlier_ones() {
        let mut state = PipelineState::new("q");
        state.last_model_response = Some("  SQL  ".into());
        let rules = spec(vec![
            from("lang", "last_model_response", Some("trim")),
            from("lang", "lang", Some("to_lowercase")),
            from("user_question_en", "lang", None),
        ]);
        set_variables("s", &rules, &mut state).unwrap();
        assert_eq!(state.variables.get("lang"), Some(&json!("sql")));
        assert_eq!(state.user_question_en, "sql");
    }

    #[test]
    fn a_failing_rule_reports_step_rule_and_target() {
        let mut state = PipelineState::new("q");
        state.variables.insert("n".into(), json!(3));
        let rules = spec(vec![literal("a", json!(1)), from("context_blocks", "n", None)]);
        let err = set_variables("s", &rules, &mut state).unwrap_err();
        assert_eq!(err.code(), "PIPELINE_SET_VARIABLE");
        let text = err.to_string();
        assert!(
            text.contains("`s`") && text.contains("rule 1") && text.contains("context_blocks") && text.contains('3'),
            "{text}"
        );
        let rules = spec(vec![from("x", "never_set", None)]);
        let err = set_variables("s", &rules, &mut state).unwrap_err();
        assert_eq!(err.code(), "PIPELINE_MISSING_SOURCE");
    }
}
