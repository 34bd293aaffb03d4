//! The terms of the contract inequality that depend on one `call_model` step: its output limit
//! (with the spec's precedence) and its fixed prompt (system prompt, empty templates, chat
//! overhead), plus the one rendering of a step's user message that both the contract and the
//! step use, so that what is measured is what is sent.

use serde::{Deserialize, Serialize};

use crate::chat::ChatMessage;
use crate::codes::Code;
use crate::config::ModelConfig;
use crate::pipeline::definition::CallModelSpec;
use crate::tokens::TokenCounter;
use crate::tokens::TokenError;
use crate::validation::{ConfigIssue, FieldPath, positive};

/// Where a step's output limit came from. Written as `ctx explain --format json` shows it, in
/// the files' spelling (`step_max_output_tokens`, `model_max_tokens`); the variant names of
/// earlier versions are still read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputSource {
    /// The step's `max_output_tokens` (first in precedence).
    #[serde(alias = "StepMaxOutputTokens")]
    StepMaxOutputTokens,
    /// The step's `max_tokens`.
    #[serde(alias = "StepMaxTokens")]
    StepMaxTokens,
    /// The model's `max_tokens` (`model_max_tokens` in `config.json`), the fallback.
    #[serde(alias = "ModelMaxTokens")]
    ModelMaxTokens,
}

impl OutputSource {
    /// Where the value is written, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            OutputSource::StepMaxOutputTokens => "the step's `max_output_tokens`",
            OutputSource::StepMaxTokens => "the step's `max_tokens`",
            // Not "in config.json": most models are written inline, where no such file exists
            // (and a `config.json`'s own errors name the file and its key).
            OutputSource::ModelMaxTokens => "the model's `max_tokens`, as the step sets no limit",
        }
    }
}

/// A step's output limit and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OutputLimit {
    /// The limit, > 0.
    pub tokens: usize,
    /// Which setting gave it.
    pub source: OutputSource,
}

/// The output limit of a step: its `max_output_tokens`, else its `max_tokens`, else the model's
/// `max_tokens`. `None` when none is set, or when the one that wins is not a positive integer
/// (an invalid value is never skipped in favour of the next one; [`output_limit`] says which
/// problem it is).
///
/// ```
/// use ctx::config::ModelConfig;
/// use ctx::contract::max_output_tokens;
/// use ctx::definition::CallModelSpec;
///
/// let model = ModelConfig::from_model_table("gpt-4o").unwrap().max_tokens(Some(1024));
/// let mut step = CallModelSpec::new("answer", "end").max_tokens(Some(300));
/// assert_eq!(max_output_tokens(&step, &model), Some(300));
/// step.max_output_tokens = Some(200);
/// assert_eq!(max_output_tokens(&step, &model), Some(200));
/// ```
pub fn max_output_tokens(spec: &CallModelSpec, model: &ModelConfig) -> Option<usize> {
    output_limit(spec, model, "", &FieldPath::root()).ok().map(|o| o.tokens)
}

/// [`max_output_tokens`] with its source, or the issue explaining why there is none:
/// `INVALID_MAX_OUTPUT_TOKENS` under the offending key, or `NO_OUTPUT_LIMIT` under the step
/// (`at`, the step `step_id`'s path).
pub fn output_limit(
    spec: &CallModelSpec,
    model: &ModelConfig,
    step_id: &str,
    at: &FieldPath,
) -> Result<OutputLimit, ConfigIssue> {
    let written = [
        ("max_output_tokens", spec.max_output_tokens, OutputSource::StepMaxOutputTokens),
        ("max_tokens", spec.max_tokens, OutputSource::StepMaxTokens),
    ];
    for (key, value, source) in written {
        if let Some(v) = value {
            return match positive(v) {
                Some(tokens) => Ok(OutputLimit { tokens, source }),
                None => Err(invalid_output_limit(step_id, at, key, v)),
            };
        }
    }
    match model.max_tokens {
        Some(tokens) if tokens > 0 => Ok(OutputLimit { tokens, source: OutputSource::ModelMaxTokens }),
        _ => Err(ConfigIssue::new(
            Code::NoOutputLimit,
            at.clone(),
            format!(
                "step `{step_id}` has no output limit: no `max_output_tokens` or `max_tokens` on the step \
                 and no `max_tokens` (`model_max_tokens`) for the model"
            ),
        )
        .with_help("set `max_output_tokens` on the step, or a default `max_tokens` in the model configuration")),
    }
}

/// The issue for a step output limit written as `key: value` (`max_output_tokens` or
/// `max_tokens`) that is not an integer > 0, under `at.key`: the one rule for both keys, used by
/// [`output_limit`] and by pipeline validation (which also checks the key that does not win).
pub(crate) fn invalid_output_limit(step_id: &str, at: &FieldPath, key: &str, value: i64) -> ConfigIssue {
    ConfigIssue::new(
        Code::InvalidMaxOutputTokens,
        at.key(key),
        format!("step `{step_id}` has `{key}: {value}`; an output limit must be an integer > 0"),
    )
    .with_help(format!("set `{key}` to the longest reply this step may produce, e.g. 512"))
}

/// Renders one template: its `{}` replaced by `value`. A template is validated to hold exactly
/// one `{}`; only the first is replaced.
pub fn render_template(template: &str, value: &str) -> String {
    match template.split_once("{}") {
        Some((before, after)) => {
            let mut out = String::with_capacity(before.len() + value.len() + after.len());
            out.push_str(before);
            out.push_str(value);
            out.push_str(after);
            out
        }
        None => template.to_owned(),
    }
}

/// The user message of a `call_model` step: each `(template, value)` rendered and concatenated
/// in order, with nothing in between. The step sends exactly this string; the contract measures
/// it with empty values.
pub fn render_user_message<'a>(parts: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    parts.into_iter().map(|(template, value)| render_template(template, value)).collect()
}

/// The messages of a `call_model` request: the system prompt, the history (when used), then the
/// user message. One layout for the contract, the step and the guard.
pub fn prompt_messages(system_prompt: &str, history: &[ChatMessage], user_message: String) -> Vec<ChatMessage> {
    let mut messages = Vec::with_capacity(history.len() + 2);
    messages.push(ChatMessage::system(system_prompt));
    messages.extend_from_slice(history);
    messages.push(ChatMessage::user(user_message));
    messages
}

/// The tokens a step's prompt costs before any state is put in it: the system prompt, the user
/// message rendered from `user_templates` with every `{}` empty, and the chat format's overhead
/// for those two messages and the reply priming, counted exactly as one request.
///
/// The history's messages are not included: `max_history_tokens` bounds them as counted in the
/// request, per-message overhead included, so the two terms add up exactly (each message is
/// counted on its own). The values put into the user message are not additive with the
/// templates (BPE can merge across the seam); the safety margin absorbs that, and
/// [`super::guard_request`] re-checks the exact rendered request before it is sent.
///
/// ```
/// use ctx::contract::fixed_prompt_tokens;
/// use ctx::{Encoding, TokenCounter};
///
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// let n = fixed_prompt_tokens("You answer questions.", &["### Context:\n{}\n\n"], &counter).unwrap();
/// assert!(n > counter.count("You answer questions.").unwrap());
/// ```
pub fn fixed_prompt_tokens(
    system_prompt: &str,
    user_templates: &[&str],
    counter: &TokenCounter,
) -> Result<usize, TokenError> {
    let user = render_user_message(user_templates.iter().map(|t| (*t, "")));
    counter.count_messages(&prompt_messages(system_prompt, &[], user))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::definition::UserPartSpec;
    use crate::tokens::Encoding;

    fn step(max_output: Option<i64>, max_tokens: Option<i64>) -> CallModelSpec {
        CallModelSpec {
            prompt_key: "p".into(),
            model: None,
            max_output_tokens: max_output,
            max_tokens,
            user_parts: vec![UserPartSpec { source: "user_question".into(), template: "Q: {}".into() }],
            use_history: false,
            params: Default::default(),
            context: None,
            next: "end".into(),
        }
    }

    fn model(max_tokens: Option<usize>) -> ModelConfig {
        ModelConfig { model: None, context_window: 8192, max_tokens, encoding: Encoding::Cl100kBase }
    }

    #[test]
    fn precedence_is_step_output_then_step_max_then_model() {
        let at = FieldPath::root().key("steps").key("s");
        let src = |s: &CallModelSpec, m: &ModelConfig| output_limit(s, m, "s", &at).map(|o| (o.tokens, o.source));
        assert_eq!(src(&step(Some(10), Some(20)), &model(Some(30))), Ok((10, OutputSource::StepMaxOutputTokens)));
        assert_eq!(src(&step(None, Some(20)), &model(Some(30))), Ok((20, OutputSource::StepMaxTokens)));
        assert_eq!(src(&step(None, None), &model(Some(30))), Ok((30, OutputSource::ModelMaxTokens)));
        let none = src(&step(None, None), &model(None)).unwrap_err();
        assert_eq!((none.code.as_str(), none.path.to_string()), ("NO_OUTPUT_LIMIT", "steps.s".to_owned()));
        assert_eq!(max_output_tokens(&step(None, None), &model(None)), None);
    }

    /// Each description names a key the pipeline has, wherever its model is written: the
    /// message of an inline `model { … }` once spoke of a `config.json` that did not exist.
    #[test]
    fn output_sources_name_no_file() {
        for source in [OutputSource::StepMaxOutputTokens, OutputSource::StepMaxTokens, OutputSource::ModelMaxTokens] {
            assert!(!source.describe().contains("config.json"), "{}", source.describe());
        }
    }

    #[test]
    fn an_invalid_winner_is_not_skipped() {
        let at = FieldPath::root().key("steps").key("s");
        let e = output_limit(&step(Some(0), Some(20)), &model(Some(30)), "s", &at).unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.path.to_string()),
            ("INVALID_MAX_OUTPUT_TOKENS", "steps.s.max_output_tokens".to_owned())
        );
        let e = output_limit(&step(None, Some(-4)), &model(Some(30)), "s", &at).unwrap_err();
        assert_eq!(e.path.to_string(), "steps.s.max_tokens");
        assert!(e.message.contains("`max_tokens: -4`"), "{}", e.message);
        assert_eq!(max_output_tokens(&step(Some(-1), Some(20)), &model(Some(30))), None);
    }

    #[test]
    fn user_message_is_the_templates_concatenated() {
        let msg = render_user_message([("### Context:\n{}\n\n", "ctx"), ("### User:\n{}\n\n", "q")]);
        assert_eq!(msg, "### Context:\nctx\n\n### User:\nq\n\n");
        assert_eq!(render_template("a {} b {}", "x"), "a x b {}");
        assert_eq!(render_user_message([("{}", ""), ("{}", "")]), "");
    }

    #[test]
    fn fixed_prompt_is_the_exact_count_of_the_empty_request() {
        let c = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let templates = ["### Context:\n{}\n\n", "### User:\n{}\n\n"];
        let n = fixed_prompt_tokens("Be brief.", &templates, &c).unwrap();
        let expected = c
            .count_messages(&[ChatMessage::system("Be brief."), ChatMessage::user("### Context:\n\n\n### User:\n\n\n")])
            .unwrap();
        assert_eq!(n, expected);
        // Two messages of the OpenAI format: 3 each plus a role token each, and 3 to prime the reply.
        let bare = c.count("Be brief.").unwrap() + c.count("### Context:\n\n\n### User:\n\n\n").unwrap();
        assert_eq!(n, bare + 2 * (3 + 1) + 3);
    }
}
