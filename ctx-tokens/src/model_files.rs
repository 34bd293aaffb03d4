//! [`ModelFiles`]: a counter exact for a local model, from its files alone (feature `hf`).
//!
//! Point it at either
//!
//! - a Hugging Face `tokenizer.json`: the tokenizer, with the chat template, BOS and EOS from the
//!   `tokenizer_config.json` beside it (or a `chat_template.jinja` beside it, which transformers
//!   prefers when both exist); or
//! - a GGUF model file: the tokenizer, chat template, BOS/EOS and training context length from its
//!   metadata (only the header and metadata are read, never the weights).
//!
//! and it gives a [`TokenCounter`] with the model's tokenizer and [`ChatFormat::Template`] of the
//! model's own template, the context window when the files state it, and the list of files read
//! (for a build script or a macro to track). Loads are remembered per process, keyed by path, size
//! and modification time, so many pipelines on one model parse its files once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use serde_json::Value;

use super::cache::CountCache;
use super::gguf::GgufMetadata;
use super::hf::HfTokenizer;
use super::jinja::JinjaTemplate;
use super::template::ChatTemplate;
use super::{ChatFormat, TokenCounter};
use crate::TokenError;

/// A local model's tokenizer, chat template and context window, read from its files.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    counter: TokenCounter,
    template: ChatTemplate,
    tokenizer: Arc<HfTokenizer>,
    context_window: Option<usize>,
    files: Vec<PathBuf>,
}

fn file_error(path: &Path, reason: impl Into<String>) -> TokenError {
    TokenError::ModelFile { path: path.display().to_string(), reason: reason.into() }
}

/// What identifies a file's content for the memo: its path, size and modification time.
type Stamp = (PathBuf, u64, Option<SystemTime>);

fn stamp(path: &Path) -> Result<Stamp, TokenError> {
    let meta = std::fs::metadata(path).map_err(|e| file_error(path, format!("cannot read it: {e}")))?;
    Ok((path.to_owned(), meta.len(), meta.modified().ok()))
}

fn memo() -> &'static Mutex<HashMap<Vec<Stamp>, ModelFiles>> {
    static MEMO: OnceLock<Mutex<HashMap<Vec<Stamp>, ModelFiles>>> = OnceLock::new();
    MEMO.get_or_init(|| Mutex::new(HashMap::new()))
}

impl ModelFiles {
    /// Loads a GGUF file (a path ending in `.gguf`) or a `tokenizer.json` (any other path).
    pub fn load(path: impl AsRef<Path>) -> Result<Self, TokenError> {
        let path = path.as_ref();
        if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf")) {
            Self::from_gguf(path)
        } else {
            Self::from_tokenizer_json(path)
        }
    }

    /// The model of a Hugging Face `tokenizer.json`, with the chat template and BOS/EOS of the
    /// `tokenizer_config.json` (or `chat_template.jinja`) beside it. No context window: a
    /// tokenizer's files do not state one.
    pub fn from_tokenizer_json(path: impl AsRef<Path>) -> Result<Self, TokenError> {
        let path = path.as_ref();
        let dir = path.parent().unwrap_or(Path::new("."));
        let config_path = dir.join("tokenizer_config.json");
        let jinja_path = dir.join("chat_template.jinja");
        let mut files = vec![path.to_owned()];
        for extra in [&config_path, &jinja_path] {
            if extra.is_file() {
                files.push(extra.clone());
            }
        }
        let stamps = files.iter().map(|f| stamp(f)).collect::<Result<Vec<_>, _>>()?;
        if let Some(found) = memo().lock().ok().and_then(|m| m.get(&stamps).cloned()) {
            return Ok(found);
        }
        let tokenizer = Arc::new(HfTokenizer::from_file(path)?);
        let config: Value = if config_path.is_file() {
            let text =
                std::fs::read(&config_path).map_err(|e| file_error(&config_path, format!("cannot read it: {e}")))?;
            serde_json::from_slice(&text).map_err(|e| file_error(&config_path, format!("not JSON: {e}")))?
        } else {
            Value::Null
        };
        let (source, template_file) = if jinja_path.is_file() {
            let text = std::fs::read_to_string(&jinja_path)
                .map_err(|e| file_error(&jinja_path, format!("cannot read it: {e}")))?;
            (text, jinja_path.clone())
        } else {
            let source = config_chat_template(&config, &config_path)?.ok_or_else(|| {
                file_error(
                    path,
                    "no chat template beside it (no `chat_template` in tokenizer_config.json, no chat_template.jinja): \
                     a chat request cannot be counted without the model's template",
                )
            })?;
            (source, config_path.clone())
        };
        let bos = token_setting(&config, "bos_token");
        let eos = token_setting(&config, "eos_token");
        let template = JinjaTemplate::new(template_file.display().to_string(), source, bos, eos)?;
        let loaded = Self::assemble(tokenizer, template, None, files);
        if let Ok(mut m) = memo().lock() {
            m.insert(stamps, loaded.clone());
        }
        Ok(loaded)
    }

    /// The model of a GGUF file: tokenizer, chat template, BOS/EOS and context length from its
    /// metadata.
    pub fn from_gguf(path: impl AsRef<Path>) -> Result<Self, TokenError> {
        let path = path.as_ref();
        let stamps = vec![stamp(path)?];
        if let Some(found) = memo().lock().ok().and_then(|m| m.get(&stamps).cloned()) {
            return Ok(found);
        }
        let meta = GgufMetadata::read(path)?;
        let tokenizer = Arc::new(HfTokenizer::from_gguf(&meta)?);
        let source = meta.chat_template()?.ok_or_else(|| {
            file_error(path, "it has no `tokenizer.chat_template`: a chat request cannot be counted without it")
        })?;
        // llama-cpp-python passes the texts of these ids as `bos_token` / `eos_token`.
        let bos = meta.token_text("tokenizer.ggml.bos_token_id")?.unwrap_or_default().to_owned();
        let eos = meta.token_text("tokenizer.ggml.eos_token_id")?.unwrap_or_default().to_owned();
        let template = JinjaTemplate::new(path.display().to_string(), source, bos, eos)?;
        let window = meta.context_length()?.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let loaded = Self::assemble(tokenizer, template, window, vec![path.to_owned()]);
        if let Ok(mut m) = memo().lock() {
            m.insert(stamps, loaded.clone());
        }
        Ok(loaded)
    }

    /// A model of parts read elsewhere: a tokenizer, a template, the window if known, and the
    /// files they came from. The template's special tokens are found as [`Self::load`] finds
    /// them.
    pub fn from_parts(
        tokenizer: HfTokenizer,
        template: JinjaTemplate,
        context_window: Option<usize>,
        files: Vec<PathBuf>,
    ) -> Self {
        Self::assemble(Arc::new(tokenizer), template, context_window, files)
    }

    fn assemble(
        tokenizer: Arc<HfTokenizer>,
        template: JinjaTemplate,
        context_window: Option<usize>,
        files: Vec<PathBuf>,
    ) -> Self {
        // The specials the template writes: every added token its source spells out, and BOS /
        // EOS when it prints them.
        let mut specials: Vec<String> =
            tokenizer.special_tokens().iter().filter(|s| template.source().contains(s.as_str())).cloned().collect();
        for (variable, text) in [("bos_token", template.bos_token()), ("eos_token", template.eos_token())] {
            if !text.is_empty()
                && template.source().contains(variable)
                && tokenizer.special_tokens().iter().any(|s| s == text)
                && !specials.iter().any(|s| s == text)
            {
                specials.push(text.to_owned());
            }
        }
        let template = ChatTemplate::jinja(template, specials);
        let counter = TokenCounter::with_backend(
            tokenizer.clone(),
            ChatFormat::Template(template.clone()),
            CountCache::DEFAULT_ENTRIES,
        );
        ModelFiles { counter, template, tokenizer, context_window, files }
    }

    /// The counter: the model's tokenizer behind a count cache (shared by every load of these
    /// files in this process), with the model's chat template.
    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// The model's chat template.
    pub fn template(&self) -> &ChatTemplate {
        &self.template
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Arc<HfTokenizer> {
        &self.tokenizer
    }

    /// The context window the files state (a GGUF's `<architecture>.context_length`), if any.
    pub fn context_window(&self) -> Option<usize> {
        self.context_window
    }

    /// Every file read, the one named first.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

/// `chat_template` of a tokenizer_config.json: a string, or a list of named templates of which
/// the one named `default` is used (as transformers does).
fn config_chat_template(config: &Value, path: &Path) -> Result<Option<String>, TokenError> {
    match config.get("chat_template") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Array(named)) => {
            let default = named.iter().find(|t| t.get("name").and_then(Value::as_str) == Some("default"));
            match default.and_then(|t| t.get("template")).and_then(Value::as_str) {
                Some(s) => Ok(Some(s.to_owned())),
                None => Err(file_error(path, "`chat_template` is a list without a template named `default`")),
            }
        }
        Some(_) => Err(file_error(path, "`chat_template` is neither a string nor a list of named templates")),
    }
}

/// A token setting of tokenizer_config.json (`"<s>"` or `{"content": "<s>", …}`); empty when
/// absent.
fn token_setting(config: &Value, key: &str) -> String {
    match config.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => o.get("content").and_then(Value::as_str).unwrap_or_default().to_owned(),
        _ => String::new(),
    }
}
