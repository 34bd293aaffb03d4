//! `config.json`: the deployment's model limits, read with serde and checked with the same rules
//! as a `model { … }` block, every problem naming the file and the key.
//!
//! ```json
//! { "model": "gpt-4o", "model_context_window": 16384, "model_max_tokens": 1024,
//!   "encoding": "o200k_base", "allow_auto_clamp": false,
//!   "price": { "input": 2.50, "cached_input": 1.25, "output": 10.00 } }
//! ```
//!
//! `price` (US dollars per million tokens, the keys of a `model { price: … }` block) overrides
//! ctx's price table for the model, as the pipeline's own `price` would. `models` declares named
//! models besides the file's own, each an object of the same keys (but `allow_auto_clamp`):
//! `"models": { "small": { "model": "gpt-4o-mini", "model_context_window": 128000 } }`; a step
//! of the pipeline names one with `model: small`.
//!
//! `mcp_servers` places the pipeline's MCP servers: `"mcp_servers": { "files": { "command": "node",
//! "args": ["server.js"] } }` gives every agent step's server `files` that transport.
//!
//! `model_context_window` is required (the server's real window, which may differ from the
//! model table's); `encoding` is required unless `model` is in ctx's model table;
//! `model_max_tokens` is the output limit of steps that set none; `allow_auto_clamp: true` is the
//! file's explicit opt-in to [`LimitsPolicy::AutoClamp`](super::LimitsPolicy). Any other key is
//! an error: a misspelt `model_max_token` must not silently leave the output unlimited.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::file_mcp::{MCP_SERVERS, mcp_servers};
use super::model::{ModelConfig, ModelKeys, validate_model};
use super::price::Price;
use crate::codes::{Code, ErrorCode};
use crate::pipeline::definition::{ModelSpec, PriceSpec};
use crate::validation::{ConfigIssue, FieldPath, did_you_mean, render, shared_code};

/// Keys of `config.json`.
pub(crate) const FILE_KEYS: ModelKeys = ModelKeys {
    model: "model",
    context_window: "model_context_window",
    max_tokens: "model_max_tokens",
    encoding: "encoding",
    window_required: true,
};

/// The opt-in key.
pub(crate) const ALLOW_AUTO_CLAMP: &str = "allow_auto_clamp";

/// Every key a `config.json` may hold.
pub(crate) const KNOWN_KEYS: [&str; 8] =
    ["model", "model_context_window", "model_max_tokens", "encoding", ALLOW_AUTO_CLAMP, PRICE, MODELS, MCP_SERVERS];

/// The named models key.
pub(crate) const MODELS: &str = "models";

/// The price key.
const PRICE: &str = "price";

/// A validated `config.json`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ConfigFile {
    /// The model's limits.
    pub model: ModelConfig,
    /// `allow_auto_clamp` (default `false`): the file's explicit opt-in to `auto_clamp`.
    pub allow_auto_clamp: bool,
    /// `price`: the model's price, over ctx's price table.
    pub price: Option<Price>,
    /// `models: { small: { … } }`: named models besides the file's own, each with the same keys
    /// (but `allow_auto_clamp`); a pipeline's step names one with `model:`.
    pub models: Vec<ConfigModel>,
    /// `mcp_servers: { files: { command, args } }`: where the pipeline's MCP servers run, by
    /// name ([`apply_config_mcp_servers`](super::apply_config_mcp_servers)).
    pub mcp_servers: Vec<crate::pipeline::definition::McpServerSpec>,
}

/// One named model of a `config.json`'s `models`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ConfigModel {
    /// Its name, as a step's `model:` names it.
    pub name: String,
    /// Its limits.
    pub model: ModelConfig,
    /// Its `price`, over ctx's price table.
    pub price: Option<Price>,
}

/// Why a `config.json` could not be used. Every variant names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigFileError {
    /// The file could not be read.
    #[error("cannot read model config `{}`: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("model config `{}` is not valid JSON at line {line}, column {column}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The file is JSON but not an object.
    #[error("model config `{}` must be a JSON object of settings, found {found}", path.display())]
    NotAnObject {
        /// The file.
        path: PathBuf,
        /// The kind of JSON value found (`array`, `string`, …).
        found: &'static str,
    },
    /// Keys are missing, invalid or unknown; every one found is listed.
    #[error("model config `{}` has {} problem(s):\n{}", path.display(), issues.len(), render(issues))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The problems; each issue's path is the key.
        issues: Vec<ConfigIssue>,
    },
}

impl ErrorCode for ConfigFileError {
    fn code(&self) -> Code {
        match self {
            ConfigFileError::Read { .. } => Code::ConfigFileUnreadable,
            ConfigFileError::Syntax { .. } => Code::ConfigFileSyntax,
            ConfigFileError::NotAnObject { .. } => Code::ConfigFileNotAnObject,
            ConfigFileError::Invalid { issues, .. } => shared_code(issues).unwrap_or(Code::ConfigFileInvalid),
        }
    }
}

impl ConfigFile {
    /// Reads and validates the `config.json` at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<ConfigFile, ConfigFileError> {
        let path = path.as_ref();
        let text =
            std::fs::read_to_string(path).map_err(|source| ConfigFileError::Read { path: path.to_owned(), source })?;
        Self::from_json_str(&text, path)
    }

    /// Validates `text` as the contents of the `config.json` at `path` (used in errors only).
    pub fn from_json_str(text: &str, path: impl AsRef<Path>) -> Result<ConfigFile, ConfigFileError> {
        let path = path.as_ref();
        let value: Value = serde_json::from_str(text).map_err(|e| ConfigFileError::Syntax {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        let Value::Object(object) = value else {
            return Err(ConfigFileError::NotAnObject { path: path.to_owned(), found: kind(&value) });
        };
        Self::from_object(&object).map_err(|issues| ConfigFileError::Invalid { path: path.to_owned(), issues })
    }

    fn from_object(object: &Map<String, Value>) -> Result<ConfigFile, Vec<ConfigIssue>> {
        let root = FieldPath::root();
        let mut issues = Vec::new();
        let (model, price) = model_object(object, &root, &KNOWN_KEYS, &mut issues);
        let allow_auto_clamp = match object.get(ALLOW_AUTO_CLAMP) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                issues.push(mistyped_issue(&root, ALLOW_AUTO_CLAMP, "true or false", other));
                false
            }
        };
        let mut models = Vec::new();
        match object.get(MODELS) {
            None | Some(Value::Null) => {}
            Some(Value::Object(named)) => {
                for (name, value) in named {
                    let at = root.key(MODELS).key(name.as_str());
                    let Value::Object(inner) = value else {
                        let mut issue = mistyped_issue(&root.key(MODELS), name, "an object of model keys", value);
                        issue.path = at;
                        issues.push(issue);
                        continue;
                    };
                    if let (Some(model), price) = model_object(inner, &at, &MODEL_OBJECT_KEYS, &mut issues) {
                        models.push(ConfigModel { name: name.clone(), model, price });
                    }
                }
            }
            Some(other) => issues.push(mistyped_issue(&root, MODELS, "an object of named models", other)),
        }
        let mcp_servers = mcp_servers(object.get(MCP_SERVERS), &mut issues);
        match model {
            Some(model) if issues.is_empty() => Ok(ConfigFile { model, allow_auto_clamp, price, models, mcp_servers }),
            _ => Err(issues),
        }
    }
}

/// The keys of one model of `models` in a `config.json`.
pub(crate) const MODEL_OBJECT_KEYS: [&str; 5] =
    ["model", "model_context_window", "model_max_tokens", "encoding", PRICE];

/// One model's keys of a `config.json` (the file's own, or one of its `models`) at `at`, any key
/// outside `known` an error: its limits checked by the model rules, and its `price`.
fn model_object(
    object: &Map<String, Value>,
    at: &FieldPath,
    known: &[&str],
    issues: &mut Vec<ConfigIssue>,
) -> (Option<ModelConfig>, Option<Price>) {
    // Keys whose value had the wrong type: reported once, not again as missing.
    let mut mistyped: Vec<&str> = Vec::new();
    for key in object.keys().filter(|k| !known.contains(&k.as_str())) {
        let help = match did_you_mean(key, known.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("the keys are: {}", known.join(", ")),
        };
        issues.push(
            ConfigIssue::new(Code::UnknownConfigKey, at.key(key.as_str()), format!("unknown key `{key}`"))
                .with_help(help),
        );
    }
    let mut string = |key: &'static str| -> Option<String> {
        match object.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                issues.push(mistyped_issue(at, key, "a string", other));
                mistyped.push(key);
                None
            }
        }
    };
    let model = string(FILE_KEYS.model);
    let encoding = string(FILE_KEYS.encoding);
    let mut integer = |key: &'static str| -> Option<i64> {
        match object.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64(),
            Some(other) => {
                issues.push(mistyped_issue(at, key, "an integer", other));
                mistyped.push(key);
                None
            }
        }
    };
    let context_window = integer(FILE_KEYS.context_window);
    let max_tokens = integer(FILE_KEYS.max_tokens);
    let price = match object.get(PRICE) {
        None | Some(Value::Null) => None,
        Some(Value::Object(rates)) => price(rates, &at.key(PRICE), issues),
        Some(other) => {
            issues.push(mistyped_issue(at, PRICE, "an object of rates (`input`, `output`, …)", other));
            None
        }
    };
    let spec = ModelSpec { model, context_window, max_tokens, encoding, tokenizer: None, price: None };
    let model = match validate_model(&spec, &FILE_KEYS, at) {
        Ok(model) => Some(model),
        Err(found) => {
            issues.extend(found.into_iter().filter(|i| !mistyped.iter().any(|k| i.path == at.key(*k))));
            None
        }
    };
    (model, price)
}

/// `price: { input, cached_input, cache_write, output }`, checked by the rules of a `price` block
/// (under `price.*`); every problem is appended to `issues`.
fn price(rates: &Map<String, Value>, at: &FieldPath, issues: &mut Vec<ConfigIssue>) -> Option<Price> {
    const RATES: [&str; 4] = crate::pipeline::schema::forms::PRICE;
    let before = issues.len();
    for key in rates.keys().filter(|k| !RATES.contains(&k.as_str())) {
        let help = match did_you_mean(key, RATES) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("the rates are: {}", RATES.join(", ")),
        };
        issues.push(
            ConfigIssue::new(Code::UnknownConfigKey, at.key(key.as_str()), format!("unknown key `price.{key}`"))
                .with_help(help),
        );
    }
    let mut rate = |key: &str| match rates.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(other) => {
            issues.push(mistyped_issue(at, key, "a number of US dollars per million tokens", other));
            None
        }
    };
    let spec = PriceSpec {
        input: rate("input"),
        cached_input: rate("cached_input"),
        cache_write: rate("cache_write"),
        output: rate("output"),
    };
    let price = Price::from_spec(&spec, at).map_err(|e| issues.extend(e)).ok();
    // A mistyped rate reads as missing: only its own issue is kept.
    if issues.len() > before {
        let mistyped: Vec<FieldPath> = issues[before..].iter().map(|i| i.path.clone()).collect();
        let mut seen = Vec::new();
        let mut i = before;
        while i < issues.len() {
            let path = issues[i].path.clone();
            if seen.contains(&path) && mistyped.contains(&path) {
                issues.remove(i);
            } else {
                seen.push(path);
                i += 1;
            }
        }
    }
    price
}

fn mistyped_issue(at: &FieldPath, key: &str, expected: &str, found: &Value) -> ConfigIssue {
    let shown = match found {
        Value::Number(n) => format!("the number {n}"),
        other => format!("{} {other}", kind(other)),
    };
    ConfigIssue::new(Code::InvalidConfigValue, at.key(key), format!("`{key}` must be {expected}, found {shown}"))
        .with_help(format!("write `{key}` as {expected}, or remove it"))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

// Written here, not beside the model's other constructors: reading a file is this module's
// work, and the model rules it applies know nothing of files.
impl ModelConfig {
    /// Reads a `config.json` (see [`ConfigFile::load`]) and keeps the model part; use
    /// [`ConfigFile::load`] to also see its `allow_auto_clamp` opt-in.
    pub fn from_json_file(path: impl AsRef<std::path::Path>) -> Result<ModelConfig, ConfigFileError> {
        ConfigFile::load(path).map(|file| file.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    fn parse(text: &str) -> Result<ConfigFile, ConfigFileError> {
        ConfigFile::from_json_str(text, "conf/config.json")
    }

    #[test]
    fn a_complete_file_is_read() {
        let f = parse(r#"{"model_context_window": 9600, "model_max_tokens": 512, "encoding": "cl100k_base"}"#).unwrap();
        assert_eq!(f.model.context_window, 9600);
        assert_eq!(f.model.max_tokens, Some(512));
        assert_eq!(f.model.encoding, Encoding::Cl100kBase);
        assert!(!f.allow_auto_clamp);
        let f = parse(r#"{"model": "gpt-4o", "model_context_window": 16384, "allow_auto_clamp": true}"#).unwrap();
        assert_eq!((f.model.encoding, f.allow_auto_clamp), (Encoding::O200kBase, true));
    }

    #[test]
    fn wrong_types_are_reported_once_each() {
        let err = parse(
            r#"{"model_context_window": "9600", "model_max_tokens": 1.5, "encoding": 3, "allow_auto_clamp": "yes"}"#,
        )
        .unwrap_err();
        let ConfigFileError::Invalid { issues, .. } = &err else { panic!("{err}") };
        let keys: Vec<String> = issues.iter().map(|i| i.path.to_string()).collect();
        assert_eq!(keys, ["encoding", "model_context_window", "model_max_tokens", "allow_auto_clamp"]);
        assert!(issues.iter().all(|i| i.code == "INVALID_CONFIG_VALUE"));
        assert!(issues[1].message.contains("must be an integer, found string \"9600\""), "{}", issues[1].message);
        assert!(issues[2].message.contains("found the number 1.5"), "{}", issues[2].message);
        assert_eq!(err.code(), "INVALID_CONFIG_VALUE");
    }

    #[test]
    fn a_price_overrides_the_table_and_is_checked() {
        let f = parse(r#"{"model": "gpt-4o", "model_context_window": 16384, "price": {"input": 3, "output": 12.5}}"#)
            .unwrap();
        let price = f.price.unwrap();
        assert_eq!((price.input, price.cached_input, price.output), (3.0, 3.0, 12.5));
        assert_eq!(parse(r#"{"model": "gpt-4o", "model_context_window": 16384}"#).unwrap().price, None);
        let err = parse(
            r#"{"model": "gpt-4o", "model_context_window": 16384, "price": {"input": "3", "ouptut": 1, "cache_write": -1}}"#,
        )
        .unwrap_err();
        let ConfigFileError::Invalid { issues, .. } = &err else { panic!("{err}") };
        let found: Vec<(&str, String)> = issues.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect();
        assert_eq!(
            found,
            [
                ("UNKNOWN_CONFIG_KEY", "price.ouptut".to_owned()),
                ("INVALID_CONFIG_VALUE", "price.input".to_owned()),
                ("INVALID_PRICE", "price.output".to_owned()),
                ("INVALID_PRICE", "price.cache_write".to_owned()),
            ]
        );
        assert_eq!(issues[0].help.as_deref(), Some("did you mean `output`?"));
        let err = parse(r#"{"model": "gpt-4o", "model_context_window": 16384, "price": 2.5}"#).unwrap_err();
        assert_eq!(err.code(), "INVALID_CONFIG_VALUE");
    }

    #[test]
    fn named_models_are_read_with_the_same_keys_and_rules() {
        let f = parse(
            r#"{"model": "gpt-4o", "model_context_window": 16384,
                "models": {"small": {"model": "gpt-4o-mini", "model_context_window": 8192, "price": {"input": 0.2, "output": 0.8}},
                           "local": {"model_context_window": 4096, "encoding": "cl100k_base"}}}"#,
        )
        .unwrap();
        let named = |name: &str| f.models.iter().find(|m| m.name == name).expect(name);
        assert_eq!(f.models.len(), 2);
        assert_eq!((named("small").model.context_window, named("small").price.map(|p| p.input)), (8192, Some(0.2)));
        assert_eq!((named("local").model.encoding, named("local").price), (Encoding::Cl100kBase, None));
        let err = parse(
            r#"{"model": "gpt-4o", "model_context_window": 16384,
                "models": {"small": {"model": "gpt-4o-mini", "allow_auto_clamp": true}, "bad": 3}}"#,
        )
        .unwrap_err();
        let ConfigFileError::Invalid { issues, .. } = &err else { panic!("{err}") };
        let mut found: Vec<(&str, String)> = issues.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect();
        found.sort();
        assert_eq!(
            found,
            [
                ("INVALID_CONFIG_VALUE", "models.bad".to_owned()),
                ("MISSING_CONTEXT_WINDOW", "models.small.model_context_window".to_owned()),
                ("UNKNOWN_CONFIG_KEY", "models.small.allow_auto_clamp".to_owned()),
            ]
        );
    }

    #[test]
    fn syntax_and_shape_errors_name_the_file() {
        let err = parse("{\n  \"model_context_window\": ,\n}").unwrap_err();
        assert!(matches!(err, ConfigFileError::Syntax { line: 2, .. }), "{err:?}");
        assert!(err.to_string().contains("conf/config.json"), "{err}");
        let err = parse("[1, 2]").unwrap_err();
        assert!(matches!(err, ConfigFileError::NotAnObject { found: "array", .. }), "{err:?}");
        assert_eq!(err.code(), "CONFIG_FILE_NOT_AN_OBJECT");
    }
}
