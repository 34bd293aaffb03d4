//! `model { tokenizer: "models/x/tokenizer.json" }` / `model { gguf: "models/x.gguf" }`: a model
//! counted with its own files, at compile time and at load time alike.
//!
//! The files give the counter (the model's tokenizer and Jinja chat template, see
//! [`ModelFiles`](crate::tokens::ModelFiles)) and, for a GGUF, the context window when the
//! pipeline does not write one. The rest of the model rules are the usual ones, run on the spec
//! completed from the files.

use std::path::Path;

use crate::tokens::TokenCounter;
use crate::validation::{ConfigIssue, FieldPath};

use super::definition::ModelSpec;

/// `spec` completed from its model files, with their counter; or why the files cannot be used
/// (issues under `model.tokenizer` / `model.context_window`, the rules of
/// [`model_files_config`](crate::config::model_files_config)). Relative paths start at
/// `base_dir` (the crate's root when compiled, [`LoadOptions::base_dir`](super::LoadOptions::base_dir)
/// when loaded).
#[cfg(feature = "hf")]
pub(crate) fn complete_spec(
    spec: &ModelSpec,
    base_dir: Option<&Path>,
    at: &FieldPath,
) -> Result<(ModelSpec, TokenCounter), Vec<ConfigIssue>> {
    use crate::config::{ModelFileKind, model_files_config};

    let written = spec.tokenizer.as_deref().unwrap_or_default();
    let path = match base_dir {
        Some(dir) => dir.join(written),
        None => Path::new(written).to_owned(),
    };
    let kind =
        if written.to_ascii_lowercase().ends_with(".gguf") { ModelFileKind::Gguf } else { ModelFileKind::Tokenizer };
    // Both spellings are one field of the definition: report at the one it keeps.
    let at_tokenizer = |mut issue: ConfigIssue| {
        if issue.path == at.key(ModelFileKind::Gguf.key()) {
            issue.path = at.key("tokenizer");
        }
        issue
    };
    let config = model_files_config(kind, &path, spec.context_window, at)
        .map_err(|issues| issues.into_iter().map(at_tokenizer).collect::<Vec<_>>())?;
    let mut completed = spec.clone();
    completed.context_window = i64::try_from(config.context_window).ok();
    // The files count; an encoding is neither needed nor used. A written one is still checked.
    if completed.encoding.is_none() {
        completed.encoding = Some(crate::tokens::Encoding::Cl100kBase.name().to_owned());
    }
    Ok((completed, config.files.counter().clone()))
}

/// Without the `hf` feature a model's files cannot be read: say which feature to enable.
#[cfg(not(feature = "hf"))]
pub(crate) fn complete_spec(
    spec: &ModelSpec,
    _base_dir: Option<&Path>,
    at: &FieldPath,
) -> Result<(ModelSpec, TokenCounter), Vec<ConfigIssue>> {
    let written = spec.tokenizer.as_deref().unwrap_or_default();
    Err(vec![
        ConfigIssue::new(
            crate::codes::Code::ModelFilesNeedFeature,
            at.key("tokenizer"),
            format!("counting with the model files `{written}` needs the `hf` feature of ctx"),
        )
        .with_help("enable it: `ctx = { version = \"…\", features = [\"hf\"] }`"),
    ])
}
