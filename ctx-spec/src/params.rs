//! Sampling parameters of a chat request: what a `call_model` step declares besides its prompt
//! and output limit, and what a client sends with it.
//!
//! None of them changes how many tokens the prompt has, so none takes part in budgeting; the
//! pipeline validator checks their ranges where they are written (compile time for `pipeline!`).

use serde::{Deserialize, Serialize};

/// How the model must shape its reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseFormat {
    /// Any valid JSON object (OpenAI's "JSON mode"): the prompt must ask for JSON too.
    JsonObject,
    /// JSON conforming to a schema ("structured outputs").
    JsonSchema {
        /// The schema's name: letters, digits, `_` and `-`, at most 64.
        name: String,
        /// The JSON schema, as written (an object schema).
        schema: String,
        /// Whether the server must follow the schema exactly (`strict`).
        #[serde(default)]
        strict: bool,
    },
}

impl ResponseFormat {
    /// The `response_format` value of the chat-completions API. A schema that is not JSON is
    /// sent as a string; validation rejects it long before a request is built.
    pub fn to_wire(&self) -> serde_json::Value {
        match self {
            ResponseFormat::JsonObject => serde_json::json!({ "type": "json_object" }),
            ResponseFormat::JsonSchema { name, schema, strict } => {
                let schema = serde_json::from_str::<serde_json::Value>(schema)
                    .unwrap_or_else(|_| serde_json::Value::String(schema.clone()));
                serde_json::json!({
                    "type": "json_schema",
                    "json_schema": { "name": name, "schema": schema, "strict": strict },
                })
            }
        }
    }
}

/// Sampling parameters; every one is optional and left to the server's default when unset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelParams {
    /// Sampling temperature, 0 to 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling: the probability mass kept, in (0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Penalizes tokens already present in the reply, -2 to 2 (positive values push towards new
    /// topics). Sent to OpenAI-compatible servers; Anthropic's API has no such parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    /// Penalizes tokens by how often they already appear in the reply, -2 to 2 (positive values
    /// make repetition less likely). Sent to OpenAI-compatible servers; Anthropic's API has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    /// Sequences that end generation (at most 4, none empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// A seed for repeatable sampling, where the server supports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// The reply's format (JSON mode or a JSON schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
}

impl ModelParams {
    /// Whether nothing is set (the server's defaults apply).
    pub fn is_empty(&self) -> bool {
        *self == ModelParams::default()
    }
}

/// The most stop sequences the chat-completions API accepts.
pub const MAX_STOP_SEQUENCES: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_formats_render_as_the_api_documents_them() {
        assert_eq!(ResponseFormat::JsonObject.to_wire(), serde_json::json!({"type": "json_object"}));
        let schema = ResponseFormat::JsonSchema {
            name: "answer".into(),
            schema: r#"{"type":"object","properties":{"a":{"type":"string"}}}"#.into(),
            strict: true,
        };
        assert_eq!(
            schema.to_wire(),
            serde_json::json!({"type": "json_schema", "json_schema": {
                "name": "answer",
                "schema": {"type": "object", "properties": {"a": {"type": "string"}}},
                "strict": true,
            }})
        );
    }

    #[test]
    fn unset_parameters_serialize_to_nothing() {
        assert!(ModelParams::default().is_empty());
        assert_eq!(serde_json::to_value(ModelParams::default()).unwrap(), serde_json::json!({}));
        let p = ModelParams { seed: Some(7), stop: vec!["\n\n".into()], ..ModelParams::default() };
        assert_eq!(serde_json::to_value(&p).unwrap(), serde_json::json!({"stop": ["\n\n"], "seed": 7}));
    }
}
