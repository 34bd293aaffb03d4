//! A model block that names the model's files (`tokenizer: "…/tokenizer.json"` or
//! `gguf: "….gguf"`, feature `hf`): the files loaded into a [`ModelFiles`], and the window
//! resolved, with every problem a [`ConfigIssue`] at the key that caused it.
//!
//! The rules: the files must load (a missing or unreadable file, an unsupported tokenizer, a
//! template that does not compile are all `MODEL_FILE` at the key); the window is the one
//! written, else the GGUF's training context length; a tokenizer.json states no window, so one
//! must be written; a written window may not exceed the GGUF's training length (the model was
//! never trained to read further).

use std::path::Path;

use super::model::invalid_context_window;
use crate::codes::Code;
use crate::tokens::{ModelFiles, TokenError};
use crate::validation::{ConfigIssue, FieldPath, positive};

/// Which file a model block names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFileKind {
    /// A Hugging Face `tokenizer.json` (key `tokenizer`).
    Tokenizer,
    /// A GGUF model file (key `gguf`).
    Gguf,
}

impl ModelFileKind {
    /// The key that names the file.
    pub fn key(self) -> &'static str {
        match self {
            ModelFileKind::Tokenizer => "tokenizer",
            ModelFileKind::Gguf => "gguf",
        }
    }
}

/// The model's files and the window requests must fit.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ModelFilesConfig {
    /// The loaded files: counter (tokenizer + chat template) and the files read.
    pub files: ModelFiles,
    /// The context window: the one written, else the GGUF's.
    pub context_window: usize,
}

/// Loads the files a model block at `at` names (`path` already resolved against the crate or the
/// pipeline file) and resolves the window from `written_window` (`context_window`, as written).
pub fn model_files_config(
    kind: ModelFileKind,
    path: &Path,
    written_window: Option<i64>,
    at: &FieldPath,
) -> Result<ModelFilesConfig, Vec<ConfigIssue>> {
    let loaded = match kind {
        ModelFileKind::Tokenizer => ModelFiles::from_tokenizer_json(path),
        ModelFileKind::Gguf => ModelFiles::from_gguf(path),
    };
    let files = loaded.map_err(|e| vec![file_issue(kind, &e, at)])?;
    let window_at = at.key("context_window");
    let window = match written_window {
        Some(written) => match positive(written) {
            Some(w) => Some(w),
            None => {
                return Err(vec![invalid_context_window(window_at, "context_window", written)]);
            }
        },
        None => None,
    };
    match (window, files.context_window()) {
        (Some(w), Some(trained)) if w > trained => Err(vec![
            ConfigIssue::new(
                Code::ModelWindowAboveTraining,
                window_at,
                format!("context_window is {w} tokens but `{}` was trained on {trained}", path.display()),
            )
            .with_help(format!("set context_window to at most {trained}, or leave it out to use {trained}")),
        ]),
        (Some(w), _) => Ok(ModelFilesConfig { files, context_window: w }),
        (None, Some(trained)) => Ok(ModelFilesConfig { files, context_window: trained }),
        (None, None) => Err(vec![
            ConfigIssue::new(
                Code::ModelWindowMissing,
                window_at,
                format!("`{}` does not state a context window", path.display()),
            )
            .with_help("write context_window: the server's context size (e.g. vLLM's --max-model-len)"),
        ]),
    }
}

fn file_issue(kind: ModelFileKind, e: &TokenError, at: &FieldPath) -> ConfigIssue {
    let help = match kind {
        ModelFileKind::Tokenizer => {
            "name the model's tokenizer.json, with its tokenizer_config.json (or chat_template.jinja) beside it"
        }
        ModelFileKind::Gguf => "name the model's .gguf file (byte-level BPE tokenizers: Llama 3, Qwen 2, SmolLM, …)",
    };
    ConfigIssue::new(Code::ModelFile, at.key(kind.key()), e.to_string()).with_help(help)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> FieldPath {
        FieldPath::root().key("model")
    }

    #[test]
    fn a_missing_file_is_an_issue_at_its_key_naming_it() {
        let issues =
            model_files_config(ModelFileKind::Gguf, Path::new("/nonexistent/m.gguf"), None, &at()).unwrap_err();
        assert_eq!(issues.len(), 1);
        let text = format!("{:?}", issues[0]);
        assert!(
            issues[0].code == "MODEL_FILE" && text.contains("gguf") && text.contains("/nonexistent/m.gguf"),
            "{text}"
        );
        let issues =
            model_files_config(ModelFileKind::Tokenizer, Path::new("/nonexistent/tokenizer.json"), Some(10), &at())
                .unwrap_err();
        assert!(format!("{:?}", issues[0]).contains("tokenizer"));
    }

    #[test]
    fn a_file_that_is_not_a_gguf_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.gguf");
        std::fs::write(&path, b"not a model").unwrap();
        let issues = model_files_config(ModelFileKind::Gguf, &path, None, &at()).unwrap_err();
        assert!(format!("{:?}", issues[0]).contains("GGUF"), "{:?}", issues[0]);
    }
}
