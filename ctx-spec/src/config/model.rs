//! [`ModelConfig`]: the model's window, default output limit and encoding, resolved from a
//! [`ModelSpec`] (the `model { … }` block) or, with other key names, from a `config.json`.

use serde::{Deserialize, Serialize};

use crate::codes::Code;
use crate::pipeline::definition::ModelSpec;
use crate::tokens::TokenError;
use crate::tokens::{ChatFormat, Counting, Encoding, ModelInfo, TokenCounter, estimated_counter};
use crate::validation::{ConfigIssue, FieldPath, did_you_mean, positive};

/// The model's limits as the contract and the steps use them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelConfig {
    /// The model name, when one was given (it also selects the chat format).
    pub model: Option<String>,
    /// `model_context_window`: prompt plus output, in tokens. Always > 0 once validated.
    pub context_window: usize,
    /// `model_max_tokens`: the output limit of `call_model` steps that set none.
    pub max_tokens: Option<usize>,
    /// The BPE the prompts are counted with.
    pub encoding: Encoding,
}

/// The names a source uses for the model fields, so that one rule reports the key as written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ModelKeys {
    pub model: &'static str,
    pub context_window: &'static str,
    pub max_tokens: &'static str,
    pub encoding: &'static str,
    /// Whether the window must be written even when the model table knows it. A `config.json`
    /// is the deployment's statement of the server's real window, so it must say it.
    pub window_required: bool,
}

/// Keys of the `model { … }` block.
pub(crate) const DSL_KEYS: ModelKeys = ModelKeys {
    model: "model",
    context_window: "context_window",
    max_tokens: "max_tokens",
    encoding: "encoding",
    window_required: false,
};

crate::setters!(ModelConfig { model: Option<String>, max_tokens: Option<usize> });

impl ModelConfig {
    /// A model of `context_window` tokens counted with `encoding`, no name and no output limit;
    /// set those with [`model`](Self::model) and [`max_tokens`](Self::max_tokens). Not
    /// validated: [`ModelConfig::from_spec`] is.
    ///
    /// ```
    /// use ctx::Encoding;
    /// use ctx::config::ModelConfig;
    ///
    /// let model = ModelConfig::new(16_384, Encoding::Cl100kBase).max_tokens(Some(1_024));
    /// assert_eq!(model.context_window, 16_384);
    /// ```
    pub fn new(context_window: usize, encoding: Encoding) -> Self {
        ModelConfig { model: None, context_window, max_tokens: None, encoding }
    }

    /// Validates a `model { … }` block found at `at`.
    ///
    /// A `model` name in ctx's model table gives the encoding and window; an explicit
    /// `context_window` or `encoding` overrides the table (fine-tunes, proxies, local servers).
    /// Without a known model both must be given. Every problem is reported, each under the path
    /// of its key.
    ///
    /// ```
    /// use ctx::config::ModelConfig;
    /// use ctx::definition::ModelSpec;
    /// use ctx::{Encoding, FieldPath};
    ///
    /// let spec = ModelSpec::default().context_window(Some(16_384)).encoding(Some("cl100k_base".into()));
    /// let model = ModelConfig::from_spec(&spec, &FieldPath::root().key("model")).unwrap();
    /// assert_eq!((model.context_window, model.encoding), (16_384, Encoding::Cl100kBase));
    /// ```
    pub fn from_spec(spec: &ModelSpec, at: &FieldPath) -> Result<ModelConfig, Vec<ConfigIssue>> {
        validate_model(spec, &DSL_KEYS, at)
    }

    /// The table's entry for `name`: its encoding and window, no default output limit.
    pub fn from_model_table(name: &str) -> Result<ModelConfig, TokenError> {
        let info = ModelInfo::lookup(name)?;
        Ok(ModelConfig {
            model: Some(info.model),
            context_window: info.context_window,
            max_tokens: None,
            encoding: info.encoding,
        })
    }

    /// The chat format of this model (gpt-3.5/gpt-4 count tool blocks differently).
    pub fn chat_format(&self) -> ChatFormat {
        ChatFormat::for_model(self.model.as_deref().unwrap_or_default())
    }

    /// The process-wide counter for this model's encoding, with its chat format. A Claude model
    /// is counted with the encoding as its declared tokenizer, raised by the format's margin
    /// ([`crate::tokens::estimated_counter`]): Anthropic publishes no tokenizer.
    pub fn counter(&self) -> TokenCounter {
        match self.chat_format().counting() {
            Counting::Estimated { margin_percent } => estimated_counter(self.encoding, margin_percent),
            Counting::Exact => TokenCounter::for_encoding(self.encoding).with_format(self.chat_format()),
        }
    }
}

/// The issue for a context window that is not > 0 (written under `key`), shared by the model
/// rules and the contract check (which also sees a `ModelConfig` built field by field).
pub(crate) fn invalid_context_window(path: FieldPath, key: &str, value: impl std::fmt::Display) -> ConfigIssue {
    ConfigIssue::new(
        Code::InvalidContextWindow,
        path,
        format!("`{key}` is {value}; the context window must be an integer > 0"),
    )
    .with_help("set it to the number of tokens the model accepts (prompt plus output), e.g. 16384")
}

/// The one set of model rules, reporting keys by the names `keys` gives them.
pub(crate) fn validate_model(
    spec: &ModelSpec,
    keys: &ModelKeys,
    at: &FieldPath,
) -> Result<ModelConfig, Vec<ConfigIssue>> {
    let mut issues = Vec::new();
    let window_path = at.key(keys.context_window);
    let encoding_path = at.key(keys.encoding);

    // `Err(())` marks a value that was written but is invalid (already reported), so that it is
    // not reported a second time as missing.
    let window: Result<Option<usize>, ()> = match spec.context_window {
        None => Ok(None),
        Some(w) => match positive(w) {
            Some(w) => Ok(Some(w)),
            None => {
                issues.push(invalid_context_window(window_path.clone(), keys.context_window, w));
                Err(())
            }
        },
    };

    let encoding: Result<Option<Encoding>, ()> = match &spec.encoding {
        None => Ok(None),
        Some(name) => match name.parse::<Encoding>() {
            Ok(e) => Ok(Some(e)),
            Err(_) => {
                let names: Vec<&str> = Encoding::ALL.iter().map(|e| e.name()).collect();
                let help = match did_you_mean(name, names.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("use one of: {}", names.join(", ")),
                };
                issues.push(
                    ConfigIssue::new(
                        Code::UnknownEncoding,
                        encoding_path.clone(),
                        format!("unknown encoding `{name}` in `{}`", keys.encoding),
                    )
                    .with_help(help),
                );
                Err(())
            }
        },
    };

    let max_tokens = match spec.max_tokens {
        None => None,
        Some(m) => match positive(m) {
            Some(m) => Some(m),
            None => {
                issues.push(
                    ConfigIssue::new(
                        Code::InvalidMaxTokens,
                        at.key(keys.max_tokens),
                        format!("`{}` is {m}; the default output limit must be an integer > 0", keys.max_tokens),
                    )
                    .with_help(format!("set `{}` to a positive number of tokens, or remove it", keys.max_tokens)),
                );
                None
            }
        },
    };

    if keys.window_required && window == Ok(None) {
        issues.push(
            ConfigIssue::new(
                Code::MissingContextWindow,
                window_path.clone(),
                format!("`{}` is missing; it is required", keys.context_window),
            )
            .with_help(format!("add `\"{}\": <tokens>` with the model server's real window", keys.context_window)),
        );
    }

    // Ask the model table only for what was not written: a model whose encoding is known but
    // whose window is not can still be used with an explicit window.
    let need_window = window == Ok(None) && !keys.window_required;
    let need_encoding = encoding == Ok(None);
    let looked_up: Option<(Option<usize>, Option<Encoding>)> = match &spec.model {
        Some(name) if need_window || need_encoding => {
            let found = if need_window {
                ModelInfo::lookup(name).map(|info| (Some(info.context_window), Some(info.encoding)))
            } else {
                Encoding::for_model(name).map(|e| (None, Some(e)))
            };
            match found {
                Ok(found) => Some(found),
                Err(err) => {
                    let suggestion = match err {
                        TokenError::UnknownModel { suggestion: Some(s), .. } => format!(" (did you mean `{s}`?)"),
                        _ => String::new(),
                    };
                    let mut missing = Vec::new();
                    if need_window {
                        missing.push(format!("`{}`", keys.context_window));
                    }
                    if need_encoding {
                        missing.push(format!("`{}`", keys.encoding));
                    }
                    issues.push(
                        ConfigIssue::new(
                            Code::UnknownModel,
                            at.key(keys.model),
                            format!(
                                "model `{name}` is not in ctx's model table{suggestion}, so its {} cannot be looked up",
                                missing.join(" and ")
                            ),
                        )
                        .with_help(format!(
                            "write {} explicitly (encoding: {})",
                            missing.join(" and "),
                            Encoding::ALL.map(|e| e.name()).join(" or ")
                        )),
                    );
                    None
                }
            }
        }
        _ => None,
    };
    let (table_window, table_encoding) = looked_up.unwrap_or((None, None));

    if spec.model.is_none() {
        if need_window {
            issues.push(
                ConfigIssue::new(
                    Code::MissingContextWindow,
                    window_path.clone(),
                    format!("no `{}` and no `{}` to look it up by", keys.context_window, keys.model),
                )
                .with_help(format!(
                    "set `{}` to the model's window, or `{}` to a model in ctx's model table",
                    keys.context_window, keys.model
                )),
            );
        }
        if need_encoding {
            issues.push(
                ConfigIssue::new(
                    Code::MissingEncoding,
                    encoding_path,
                    format!("no `{}` and no `{}` to look it up by", keys.encoding, keys.model),
                )
                .with_help(format!(
                    "set `{}` to {}, or `{}` to a model in ctx's model table",
                    keys.encoding,
                    Encoding::ALL.map(|e| e.name()).join(" or "),
                    keys.model
                )),
            );
        }
    }

    let window = window.ok().flatten().or(table_window);
    let encoding = encoding.ok().flatten().or(table_encoding);

    if let (Some(w), Some(m)) = (window, max_tokens)
        && m >= w
    {
        issues.push(
            ConfigIssue::new(
                Code::InvalidMaxTokens,
                at.key(keys.max_tokens),
                format!("`{}` is {m} but the context window is {w}: no prompt would fit", keys.max_tokens),
            )
            .with_help(format!("lower `{}` well below {w}", keys.max_tokens)),
        );
    }

    match (window, encoding) {
        (Some(context_window), Some(encoding)) if issues.is_empty() => {
            Ok(ModelConfig { model: spec.model.clone(), context_window, max_tokens, encoding })
        }
        _ => Err(issues),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> FieldPath {
        FieldPath::root().key("model")
    }

    fn spec(model: Option<&str>, window: Option<i64>, max: Option<i64>, enc: Option<&str>) -> ModelSpec {
        ModelSpec {
            model: model.map(Into::into),
            context_window: window,
            max_tokens: max,
            encoding: enc.map(Into::into),
            tokenizer: None,
            price: None,
        }
    }

    fn codes(issues: &[ConfigIssue]) -> Vec<(&'static str, String)> {
        issues.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect()
    }

    #[test]
    fn a_known_model_gives_window_and_encoding() {
        let m = ModelConfig::from_spec(&spec(Some("gpt-4o"), None, Some(1024), None), &at()).unwrap();
        assert_eq!(m.context_window, 128_000);
        assert_eq!(m.encoding, Encoding::O200kBase);
        assert_eq!(m.max_tokens, Some(1024));
        assert_eq!(m.model.as_deref(), Some("gpt-4o"));
        assert_eq!(ModelConfig::from_model_table("gpt-4o").unwrap().context_window, 128_000);
    }

    #[test]
    fn explicit_values_override_the_table() {
        let m = ModelConfig::from_spec(&spec(Some("gpt-4o"), Some(9600), None, Some("cl100k_base")), &at()).unwrap();
        assert_eq!((m.context_window, m.encoding), (9600, Encoding::Cl100kBase));
    }

    #[test]
    fn an_unknown_model_needs_window_and_encoding() {
        let err = ModelConfig::from_spec(&spec(Some("llama3.2:3b"), None, None, None), &at()).unwrap_err();
        assert_eq!(codes(&err), vec![("UNKNOWN_MODEL", "model.model".to_owned())]);
        assert!(err[0].message.contains("`context_window` and `encoding`"), "{}", err[0].message);
        let err = ModelConfig::from_spec(&spec(Some("llama3.2:3b"), Some(8192), None, None), &at()).unwrap_err();
        assert!(err[0].message.contains("its `encoding` cannot"), "{}", err[0].message);
        let ok = ModelConfig::from_spec(&spec(Some("llama3.2:3b"), Some(8192), None, Some("cl100k_base")), &at());
        assert_eq!(ok.unwrap().context_window, 8192);
        assert!(ModelConfig::from_model_table("llama3.2:3b").is_err());
    }

    #[test]
    fn every_problem_is_reported_under_its_key() {
        let err = ModelConfig::from_spec(&spec(None, Some(0), Some(-5), Some("cl100k")), &at()).unwrap_err();
        assert_eq!(
            codes(&err),
            vec![
                ("INVALID_CONTEXT_WINDOW", "model.context_window".to_owned()),
                ("UNKNOWN_ENCODING", "model.encoding".to_owned()),
                ("INVALID_MAX_TOKENS", "model.max_tokens".to_owned()),
            ]
        );
        assert_eq!(err[1].help.as_deref(), Some("did you mean `cl100k_base`?"));
        let err = ModelConfig::from_spec(&ModelSpec::default(), &at()).unwrap_err();
        assert_eq!(
            codes(&err),
            vec![
                ("MISSING_CONTEXT_WINDOW", "model.context_window".to_owned()),
                ("MISSING_ENCODING", "model.encoding".to_owned()),
            ]
        );
    }

    #[test]
    fn an_output_limit_must_leave_room_for_a_prompt() {
        let err = ModelConfig::from_spec(&spec(None, Some(4096), Some(4096), Some("o200k_base")), &at()).unwrap_err();
        assert_eq!(codes(&err), vec![("INVALID_MAX_TOKENS", "model.max_tokens".to_owned())]);
        assert!(err[0].message.contains("4096"), "{}", err[0].message);
    }

    #[test]
    fn the_counter_follows_the_model() {
        let m = ModelConfig::from_model_table("gpt-4").unwrap();
        assert_eq!(m.chat_format(), ChatFormat::openai_gpt4());
        assert_eq!(m.counter().backend_id(), TokenCounter::for_encoding(Encoding::Cl100kBase).backend_id());
    }
}
