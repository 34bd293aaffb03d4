//! The named models of a pipeline (`models { small { … }, strong { … } }`), resolved as the
//! default model is: each block checked by the model rules under `models.NAME`, its counter (its
//! encoding with its chat format, or its own model files) and its price (its `price` block, else
//! ctx's price table by its name). `resolve` attaches each to the steps that name it, so their
//! contract, counts and cost use it.

use std::path::Path;

use crate::config::{ModelConfig, Price};
use crate::tokens::TokenCounter;
use crate::validation::{ConfigIssue, FieldPath};

use super::definition::{ModelSpec, PipelineDef};

/// A named model, resolved.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct NamedModel {
    /// The name declared in `models { … }` (or `config.json`'s `models`).
    pub name: String,
    /// Its window, output limit and encoding.
    pub config: ModelConfig,
    /// What its requests are counted with.
    pub counter: TokenCounter,
    /// Its price: its `price` block, else the price table's for its name.
    pub price: Option<Price>,
}

crate::setters!(NamedModel { counter: TokenCounter });

impl NamedModel {
    /// A resolved named model; its counter is its encoding's with its chat format.
    pub fn new(name: impl Into<String>, config: ModelConfig, price: Option<Price>) -> Self {
        let counter = config.counter();
        NamedModel { name: name.into(), config, counter, price }
    }
}

/// One model block checked under `at`: its limits (completed from its model files, when it names
/// them) and its counter. Every problem is appended to `found`.
pub(crate) fn resolve_spec(
    spec: &ModelSpec,
    base_dir: Option<&Path>,
    at: &FieldPath,
    found: &mut Vec<ConfigIssue>,
) -> Option<(ModelConfig, Option<TokenCounter>)> {
    if spec.tokenizer.is_some() {
        match super::model_files::complete_spec(spec, base_dir, at) {
            Ok((completed, counter)) => {
                ModelConfig::from_spec(&completed, at).map_err(|e| found.extend(e)).ok().map(|m| (m, Some(counter)))
            }
            Err(issues) => {
                found.extend(issues);
                None
            }
        }
    } else {
        ModelConfig::from_spec(spec, at).map_err(|e| found.extend(e)).ok().map(|m| (m, None))
    }
}

/// Every named model of `def` that resolves, in declaration order (a model declared twice is kept
/// once: the name rules report it); the problems of the others are appended to `found`.
pub(crate) fn resolve_named(
    def: &PipelineDef,
    base_dir: Option<&Path>,
    config: Option<&[crate::config::ConfigModel]>,
    found: &mut Vec<ConfigIssue>,
) -> Vec<NamedModel> {
    let mut models: Vec<NamedModel> = Vec::new();
    for (name, spec) in &def.models {
        if models.iter().any(|m| &m.name == name) {
            continue;
        }
        let at = FieldPath::root().key("models").key(name);
        let price = match &spec.price {
            Some(block) => Price::from_spec(block, &at.key("price")).map_err(|e| found.extend(e)).ok(),
            None => None,
        };
        let Some((config, files)) = resolve_spec(spec, base_dir, &at, found) else { continue };
        let price = price
            .or_else(|| spec.price.is_none().then(|| config.model.as_deref().and_then(Price::for_model)).flatten());
        let counter = files.unwrap_or_else(|| config.counter());
        models.push(NamedModel { name: name.clone(), config, counter, price });
    }
    // A `config.json`'s named models, once it is read: the steps' names are checked against all.
    if let Some(config) = config {
        for m in config {
            if models.iter().any(|known| known.name == m.name) {
                found.push(
                    ConfigIssue::new(
                        crate::codes::Code::DuplicateModelName,
                        FieldPath::root().key("models").key(&m.name),
                        format!("model `{}` is declared both in the pipeline and in its config.json", m.name),
                    )
                    .with_help("keep one declaration of each named model"),
                );
                continue;
            }
            let price = m.price.or_else(|| m.model.model.as_deref().and_then(Price::for_model));
            models.push(NamedModel::new(m.name.clone(), m.model.clone(), price));
        }
        let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
        super::validate_models::step_model_issues(def, &names, true, found);
    }
    models
}
