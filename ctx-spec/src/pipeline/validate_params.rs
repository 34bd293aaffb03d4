//! The rules of a model step's sampling parameters (`temperature`, `top_p`, the penalties, `stop`, `seed`,
//! `response_format`): the ranges the chat-completions API accepts, checked where they are
//! written so that a typo is a compile error instead of a 400 from the server at run time. Also
//! the names and JSON-schema objects the chat format accepts, which `response_format` and the
//! agent rules (`validate_agent.rs`, the floor above) both check.

use crate::codes::Code;
use crate::params::{MAX_STOP_SEQUENCES, ModelParams, ResponseFormat};
use crate::validation::{ConfigIssue, FieldPath};

/// The longest function name the chat format accepts.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Whether `name` is a function name the chat format accepts: 1 to 64 ASCII letters, digits,
/// `_` or `-`.
pub fn is_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_LEN).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Every problem of `params` of step `id`, each under its own key of `path`.
pub(crate) fn params_issues(path: &FieldPath, id: &str, params: &ModelParams, issues: &mut Vec<ConfigIssue>) {
    if let Some(t) = params.temperature.filter(|t| !(0.0..=2.0).contains(t)) {
        issues.push(
            ConfigIssue::new(
                Code::TemperatureOutOfRange,
                path.key("temperature"),
                format!("`temperature` of step `{id}` is {t}; it must be between 0 and 2"),
            )
            .with_help("use 0 for repeatable answers, about 0.2-0.7 for RAG, at most 2"),
        );
    }
    if let Some(p) = params.top_p.filter(|p| !(*p > 0.0 && *p <= 1.0)) {
        issues.push(
            ConfigIssue::new(
                Code::TopPOutOfRange,
                path.key("top_p"),
                format!("`top_p` of step `{id}` is {p}; it must be greater than 0 and at most 1"),
            )
            .with_help("`top_p` is the probability mass kept, e.g. `top_p: 0.9`; 1 keeps everything"),
        );
    }
    let penalties = [("presence_penalty", params.presence_penalty), ("frequency_penalty", params.frequency_penalty)];
    for (key, value) in penalties {
        if let Some(v) = value.filter(|v| !(-2.0..=2.0).contains(v)) {
            issues.push(
                ConfigIssue::new(
                    Code::PenaltyOutOfRange,
                    path.key(key),
                    format!("`{key}` of step `{id}` is {v}; it must be between -2 and 2"),
                )
                .with_help("about 0.1-1 discourages repetition; 0 is the server's default"),
            );
        }
    }
    stop_issues(path, id, &params.stop, issues);
    if let Some(seed) = params.seed.filter(|s| *s < 0) {
        issues.push(
            ConfigIssue::new(
                Code::SeedNegative,
                path.key("seed"),
                format!("`seed` of step `{id}` is {seed}; it must be 0 or more"),
            )
            .with_help("leave `seed` out for random sampling (llama.cpp's -1)"),
        );
    }
    if let Some(format) = &params.response_format {
        response_format_issues(&path.key("response_format"), id, format, issues);
    }
}

fn stop_issues(path: &FieldPath, id: &str, stop: &[String], issues: &mut Vec<ConfigIssue>) {
    if stop.len() > MAX_STOP_SEQUENCES {
        issues.push(
            ConfigIssue::new(
                Code::TooManyStopSequences,
                path.key("stop").index(MAX_STOP_SEQUENCES),
                format!(
                    "step `{id}` declares {} stop sequences; the chat-completions API takes at most {MAX_STOP_SEQUENCES}",
                    stop.len()
                ),
            )
            .with_help("keep the four that matter; a longer list is refused by the server"),
        );
    }
    for (j, sequence) in stop.iter().enumerate() {
        if sequence.is_empty() {
            issues.push(
                ConfigIssue::new(
                    Code::EmptyStopSequence,
                    path.key("stop").index(j),
                    format!("stop sequence {j} of step `{id}` is empty and would end every reply at once"),
                )
                .with_help("remove it, or write the text that ends a reply, e.g. \"\\n\\n###\""),
            );
        } else if stop[..j].contains(sequence) {
            issues.push(
                ConfigIssue::new(
                    Code::DuplicateStopSequence,
                    path.key("stop").index(j),
                    format!("stop sequence {j} of step `{id}` repeats an earlier one"),
                )
                .with_help("remove the repetition"),
            );
        }
    }
}

fn response_format_issues(path: &FieldPath, id: &str, format: &ResponseFormat, issues: &mut Vec<ConfigIssue>) {
    let ResponseFormat::JsonSchema { name, schema, .. } = format else { return };
    if !is_tool_name(name) {
        issues.push(
            ConfigIssue::new(
                Code::InvalidSchemaName,
                path.key("name"),
                format!("the response schema name `{name}` of step `{id}` is not a valid name"),
            )
            .with_help("use 1 to 64 letters, digits, `_` or `-`, e.g. `answer`"),
        );
    }
    if let Some(reason) = schema_problem(schema) {
        issues.push(
            ConfigIssue::new(
                Code::InvalidJsonSchema,
                path.key("schema"),
                format!("the response schema of step `{id}` {reason}"),
            )
            .with_help(r##"write an object schema as a raw string, e.g. r#"{"type":"object","properties":{"answer":{"type":"string"}}}"#"##),
        );
    }
}

/// Why a JSON-schema text cannot describe a JSON object, as tool arguments and structured
/// replies must: the one test of `response_format` schemas and `agent` tool parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SchemaProblem {
    /// The text is not JSON (the parser's message).
    InvalidJson(String),
    /// The JSON is a mapping whose `type` is not `"object"` (what it is, or `None` when absent).
    TypeNotObject(Option<String>),
    /// The JSON is not a mapping at all.
    NoMapping,
}

/// Checks that `text` is a JSON object schema (`{"type": "object", …}`).
pub(crate) fn object_schema(text: &str) -> Result<(), SchemaProblem> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Err(e) => Err(SchemaProblem::InvalidJson(e.to_string())),
        Ok(serde_json::Value::Object(map)) => match map.get("type") {
            Some(serde_json::Value::String(t)) if t == "object" => Ok(()),
            Some(other) => Err(SchemaProblem::TypeNotObject(Some(other.to_string()))),
            None => Err(SchemaProblem::TypeNotObject(None)),
        },
        Ok(_) => Err(SchemaProblem::NoMapping),
    }
}

/// Why `text` is not a JSON object schema, or `None` when it is one.
fn schema_problem(text: &str) -> Option<String> {
    match object_schema(text) {
        Ok(()) => None,
        Err(SchemaProblem::InvalidJson(e)) => Some(format!("is not JSON: {e}")),
        Err(SchemaProblem::TypeNotObject(Some(t))) => {
            Some(format!("has `\"type\": {t}`; it must describe an object (`\"type\": \"object\"`)"))
        }
        Err(SchemaProblem::TypeNotObject(None)) => Some("has no `\"type\": \"object\"`".to_owned()),
        Err(SchemaProblem::NoMapping) => Some("is not a JSON object".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(params: &ModelParams) -> Vec<(&'static str, String)> {
        let mut issues = Vec::new();
        params_issues(&FieldPath::root().key("steps").index(2), "answer", params, &mut issues);
        issues.into_iter().map(|i| (i.code.as_str(), i.path.to_string())).collect()
    }

    #[test]
    fn values_in_range_pass() {
        let params = ModelParams {
            temperature: Some(0.0),
            top_p: Some(1.0),
            presence_penalty: Some(-2.0),
            frequency_penalty: Some(2.0),
            stop: vec!["###".into(), "\n\n".into()],
            seed: Some(0),
            response_format: Some(ResponseFormat::JsonSchema {
                name: "answer".into(),
                schema: r#"{"type":"object"}"#.into(),
                strict: true,
            }),
        };
        assert!(codes(&params).is_empty(), "{:?}", codes(&params));
        assert!(codes(&ModelParams { temperature: Some(2.0), ..ModelParams::default() }).is_empty());
    }

    #[test]
    fn each_rule_is_reported_under_its_key() {
        let params = ModelParams {
            temperature: Some(2.5),
            top_p: Some(0.0),
            presence_penalty: Some(2.5),
            frequency_penalty: Some(-2.01),
            stop: vec!["a".into(), "".into(), "a".into(), "b".into(), "c".into()],
            seed: Some(-1),
            response_format: Some(ResponseFormat::JsonSchema {
                name: "my answer".into(),
                schema: "[1]".into(),
                strict: false,
            }),
        };
        let found = codes(&params);
        let expected = [
            ("TEMPERATURE_OUT_OF_RANGE", "steps[2].temperature"),
            ("TOP_P_OUT_OF_RANGE", "steps[2].top_p"),
            ("PENALTY_OUT_OF_RANGE", "steps[2].presence_penalty"),
            ("PENALTY_OUT_OF_RANGE", "steps[2].frequency_penalty"),
            ("TOO_MANY_STOP_SEQUENCES", "steps[2].stop[4]"),
            ("EMPTY_STOP_SEQUENCE", "steps[2].stop[1]"),
            ("DUPLICATE_STOP_SEQUENCE", "steps[2].stop[2]"),
            ("SEED_NEGATIVE", "steps[2].seed"),
            ("INVALID_SCHEMA_NAME", "steps[2].response_format.name"),
            ("INVALID_JSON_SCHEMA", "steps[2].response_format.schema"),
        ];
        assert_eq!(found, expected.map(|(c, p)| (c, p.to_owned())));
        assert!(codes(&ModelParams { temperature: Some(f64::NAN), ..ModelParams::default() }).len() == 1);
    }

    #[test]
    fn schema_problems_say_what_is_wrong() {
        assert_eq!(schema_problem(r#"{"type":"object","properties":{}}"#), None);
        assert!(schema_problem("{").unwrap().starts_with("is not JSON"));
        assert!(schema_problem(r#"{"type":"array"}"#).unwrap().contains("must describe an object"));
        assert!(schema_problem(r#"{"properties":{}}"#).unwrap().contains("no `\"type\""));
    }
}
