//! The rules of named models: `models { small { … }, strong { … } }` declares each name once (and
//! none of them `default`, the `model` block's place), and every `call_model` or `agent` step's
//! `model: NAME` names one of them; without a default `model` block, every such step must name
//! one. What each model's block holds is checked by the model rules (`config/model`), under
//! `models.NAME`, when the pipeline is resolved.

use std::collections::HashSet;

use crate::codes::Code;
use crate::validation::{ConfigIssue, FieldPath};

use super::definition::{ModelSource, PipelineDef};
use super::graph::step_path;
use super::suggest::help_for_unknown;

/// The name a named model may not take: it is how messages name the `model` block.
pub const DEFAULT_MODEL_NAME: &str = "default";

/// Every problem with the names of `def`'s models and the steps' `model:` keys.
pub(crate) fn model_name_issues(def: &PipelineDef, issues: &mut Vec<ConfigIssue>) {
    let at = FieldPath::root().key("models");
    let mut seen = HashSet::new();
    for (name, _) in &def.models {
        if name == DEFAULT_MODEL_NAME {
            issues.push(
                ConfigIssue::new(
                    Code::DuplicateModelName,
                    at.key(name),
                    "a named model cannot be called `default`: that is the pipeline's `model` block",
                )
                .with_help("give it its own name (e.g. `small`), or write its keys in `model { … }` instead"),
            );
        } else if !seen.insert(name.as_str()) {
            issues.push(
                ConfigIssue::new(Code::DuplicateModelName, at.key(name), format!("model `{name}` is declared twice"))
                    .with_help("keep one declaration of each named model"),
            );
        }
    }
    let names: Vec<&str> = def.models.iter().map(|(n, _)| n.as_str()).collect();
    // A `config.json` may declare more: its names are checked once it is read (`resolve`).
    let from_file = matches!(def.model, ModelSource::ConfigFile(_));
    step_model_issues(def, &names, !from_file, issues);
}

/// The steps' `model:` keys against the declared `names` (when `check_names`), and a step that
/// names none in a pipeline without a default model.
pub(crate) fn step_model_issues(def: &PipelineDef, names: &[&str], check_names: bool, issues: &mut Vec<ConfigIssue>) {
    let has_default = def.has_default_model();
    for (i, step) in def.steps.iter().enumerate() {
        let Some(spec) = step.kind.model_request() else { continue };
        let kind = step.kind.keyword();
        match &spec.model {
            Some(name) if check_names && !names.contains(&name.as_str()) => issues.push(
                ConfigIssue::new(
                    Code::UnknownModelName,
                    step_path(i).key("model"),
                    format!("{kind} step `{}` uses model `{name}`, which `models` does not declare", step.id),
                )
                .with_help(format!(
                    "{}; or remove `model:` to use the default `model`",
                    help_for_unknown(name, "model", names)
                )),
            ),
            Some(_) => {}
            None if has_default || !check_names => {}
            None => issues.push(
                ConfigIssue::new(
                    Code::StepModelRequired,
                    step_path(i),
                    format!(
                        "{kind} step `{}` names no model, and the pipeline has named `models` but no default `model`",
                        step.id
                    ),
                )
                .with_help(format!(
                    "add `model: {}` (or another declared model) to the step, or declare a default `model {{ … }}`",
                    names.first().copied().unwrap_or("NAME")
                )),
            ),
        }
    }
}
