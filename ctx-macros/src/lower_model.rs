//! Lowering of a model step's sampling parameters:
//!
//! ```text
//! temperature: 0.2, top_p: 0.9, stop: [ "\n\n###" ], seed: 7,
//! response_format: json
//! response_format: json_schema { name: "answer", schema: r#"{"type":"object", …}"#, strict: true }
//! ```
//!
//! The macro reads the shapes; the ranges are the runtime validator's (`params_issues`), so a
//! pipeline loaded from a file gets the same messages.

use ctx_spec::params::{ModelParams, ResponseFormat};
use ctx_spec::pipeline::ToolSpec;
use proc_macro2::Ident;

use crate::ast::{Item, Value};
use crate::fields::{Fields, unraw, with_help};
use crate::lower_steps::StepReader;
use crate::spans::SpanRange;
use crate::symbol::*;

impl StepReader<'_, '_, '_> {
    /// The step's sampling parameters; a key with a value of the wrong shape is reported under
    /// the value and left unset.
    pub(crate) fn model_params(&mut self) -> ModelParams {
        ModelParams::default()
            .temperature(self.optional(TEMPERATURE, |r, p, k, v| r.float(p, k, v, "0.2")))
            .top_p(self.optional(TOP_P, |r, p, k, v| r.float(p, k, v, "0.9")))
            .presence_penalty(self.optional(PRESENCE_PENALTY, |r, p, k, v| r.float(p, k, v, "0.5")))
            .frequency_penalty(self.optional(FREQUENCY_PENALTY, |r, p, k, v| r.float(p, k, v, "0.5")))
            .stop(self.stop())
            .seed(self.optional(SEED, |r, p, k, v| r.int(p, k, v, "42")))
            .response_format(self.response_format())
    }

    /// `tools: [ name { description: "…", parameters: r#"{…}"# }, … ]`.
    pub(crate) fn tools(&mut self) -> Vec<ToolSpec> {
        let path = self.path(TOOLS);
        let example = "[ search_docs { description: \"Search the docs\", parameters: r#\"{\"type\":\"object\"}\"# } ]";
        let Some((k, v)) = self.f.take(TOOLS) else {
            return Vec::new();
        };
        let Some(items) = self.r.list(&path, k, v, example) else {
            return Vec::new();
        };
        let mut tools = Vec::new();
        for (j, item) in items.items.iter().enumerate() {
            let at = path.index(j);
            self.r.spans.record(&at, item.range());
            // `name { … }` in a list parses as an entry without a colon.
            let (tag, brace, body) = match item {
                Item::Entry { key, colon: None, value: Value::Map { brace, body } } => (key, brace, body),
                Item::Value(Value::Tagged { tag, brace, body }) => (tag, brace, body),
                _ => {
                    self.r.spans.poison(&path);
                    self.r.cx.error_range(
                        item.range(),
                        with_help(
                            "expected a tool `name { description: \"…\", parameters: r#\"{…}\"# }`",
                            "the name is the function the model calls; `parameters` is its JSON schema as a raw string",
                        ),
                    );
                    continue;
                }
            };
            self.r.spans.record(&at.key("name"), SpanRange::single(tag.span()));
            let range = SpanRange { start: brace.span.open(), end: brace.span.close() };
            let name = unraw(tag);
            let mut f = Fields::new(self.r.cx, format!("tool `{name}`"), range, body, at.clone());
            let mut text = |f: &mut Fields<'_>, k: Symbol, example: &str| {
                let p = at.key(k.as_str());
                let found = f.require(k, &format!("{k}: {example}"));
                let value = found.and_then(|(key, v)| self.r.string(&p, key, v, example));
                if value.is_none() {
                    self.r.spans.poison(&p);
                }
                value.unwrap_or_default()
            };
            let description = text(&mut f, DESCRIPTION, "\"What the tool does\"");
            let parameters = text(&mut f, PARAMETERS, "r#\"{\"type\":\"object\"}\"#");
            f.finish(self.r.cx, TOOL_KEYS, |_| &[]);
            tools.push(ToolSpec::new(name, description, parameters));
        }
        tools
    }

    /// `stop: [ "text", … ]`.
    fn stop(&mut self) -> Vec<String> {
        let path = self.path(STOP);
        let Some((k, v)) = self.f.take(STOP) else {
            return Vec::new();
        };
        let Some(items) = self.r.list(&path, k, v, "[ \"\\n\\n###\" ]") else {
            return Vec::new();
        };
        let mut stop = Vec::new();
        for (j, item) in items.items.iter().enumerate() {
            let at = path.index(j);
            self.r.spans.record(&at, item.range());
            match item {
                Item::Value(Value::Str(s)) => stop.push(s.value()),
                other => {
                    self.r.spans.poison(&at);
                    self.r.cx.error_range(
                        other.range(),
                        with_help("expected a stop sequence as a string", "write e.g. `stop: [\"\\n\\n###\"]`"),
                    );
                }
            }
        }
        stop
    }

    /// `response_format: json` or `response_format: json_schema { name, schema, strict? }`.
    fn response_format(&mut self) -> Option<ResponseFormat> {
        let path = self.path(RESPONSE_FORMAT);
        let (key, value) = self.f.take(RESPONSE_FORMAT)?;
        self.r.record(&path, value);
        match value {
            Value::Name(n) if *n == JSON => Some(ResponseFormat::JsonObject),
            Value::Tagged { tag, brace, body } if *tag == JSON_SCHEMA => {
                let range = SpanRange { start: brace.span.open(), end: brace.span.close() };
                let mut f = Fields::new(self.r.cx, "`json_schema`".into(), range, body, path.clone());
                let mut text = |f: &mut Fields<'_>, k: Symbol, example: &str| {
                    let p = path.key(k.as_str());
                    let found = f.require(k, &format!("{k}: {example}"));
                    let value = found.and_then(|(key, v)| self.r.string(&p, key, v, example));
                    if value.is_none() {
                        self.r.spans.poison(&p);
                    }
                    value.unwrap_or_default()
                };
                let name = text(&mut f, NAME, "\"answer\"");
                let schema = text(&mut f, SCHEMA, "r#\"{\"type\":\"object\"}\"#");
                let strict_path = path.key(STRICT.as_str());
                let strict = f.take(STRICT).and_then(|(k, v)| self.r.boolean(&strict_path, k, v)).unwrap_or(false);
                f.finish(self.r.cx, RESPONSE_FORMAT_KEYS, |_| &[]);
                Some(ResponseFormat::JsonSchema { name, schema, strict })
            }
            other => {
                self.r.spans.poison(&path);
                let found = match other {
                    Value::Name(n) | Value::Tagged { tag: n, .. } => format!("`{}`", unraw(n)),
                    _ => "this value".to_owned(),
                };
                self.r.cx.error_range(other.range(), response_format_help(key, &found));
                None
            }
        }
    }
}

fn response_format_help(key: &Ident, found: &str) -> String {
    with_help(
        format!("`{key}` takes `json` or `json_schema {{ … }}`, found {found}"),
        "write `response_format: json` for any JSON object, or `response_format: json_schema { name: \"answer\", \
         schema: r#\"{\"type\":\"object\", …}\"# }` for a schema",
    )
}
