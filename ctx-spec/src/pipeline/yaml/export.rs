//! [`to_yaml`]: a [`PipelineDef`] written back as a pipeline file, in the forms the loader reads
//! back to an equal definition.

use std::fmt::Write as _;

use crate::params::ResponseFormat;
use crate::pipeline::definition::*;
use crate::pipeline::schema::{MODEL_KEYS, SETTINGS_KEYS, ValueType};
use crate::pipeline::slot::FieldValue;

/// Writes `def` as a pipeline file (see the [module documentation](super) for the format) that
/// [`PipelineFile::decode`](super::PipelineFile::decode) reads back to an equal definition.
///
/// Every string is a double-quoted scalar (JSON string syntax, with every control character,
/// `U+2028`, `U+2029` and `U+FEFF` escaped), so no text can change its meaning; integers are
/// written as they are, and numbers in their shortest form that reads back exactly. Prompts are
/// written inline (a prompt given at load time as `null`), `user_parts` as a list of
/// `{ source, template }`, `compact_code` as `{ rules: [ … ] }`, JSON schemas as JSON text, and
/// a `config.json` as the top-level `config:` with the path as held (the loader resolves a
/// relative path against the file's directory, so an absolute path reads back unchanged).
///
/// What cannot be read back: a number that is not finite (`NaN`, infinities), two prompts or
/// named settings with the same key, and a named setting whose key is one of the typed settings
/// (`max_context_tokens`, …) — none of which a loaded or validated definition holds.
pub fn to_yaml(def: &PipelineDef) -> String {
    let mut out = String::new();
    let w = &mut out;
    line(w, 0, &format!("name: {}", quote(&def.name)));
    match &def.model {
        ModelSource::ConfigFile(path) => line(w, 0, &format!("config: {}", quote(path))),
        ModelSource::Inline(m) => line(w, 0, &format!("model: {}", model_map(m))),
    }
    if !def.models.is_empty() {
        line(w, 0, "models:");
        for (name, m) in &def.models {
            line(w, 1, &format!("{}: {}", quote(name), model_map(m)));
        }
    }
    settings(w, &def.settings);
    if !def.prompts.is_empty() {
        line(w, 0, "prompts:");
        for p in &def.prompts {
            let text = p.text.as_deref().map_or_else(|| "null".to_owned(), quote);
            line(w, 1, &format!("{}: {text}", quote(&p.key)));
        }
    }
    if def.steps.is_empty() {
        line(w, 0, "steps: []");
    } else {
        line(w, 0, "steps:");
        for step in &def.steps {
            line(w, 1, &format!("- id: {}", quote(&step.id)));
            line(w, 2, &format!("action: {}", step.kind.keyword()));
            step_keys(w, &step.kind);
        }
    }
    // The context engine's declarations in its own serde form, as JSON (which YAML reads).
    if !def.contexts.is_empty()
        && let Ok(contexts) = serde_json::to_value(&def.contexts)
    {
        line(w, 0, &format!("contexts: {}", json(&contexts)));
    }
    out
}

/// A model block as a flow mapping (`{}` when empty).
fn model_map(m: &ModelSpec) -> String {
    let fields: Vec<String> = MODEL_KEYS
        .iter()
        .filter_map(|key| (key.slot.get)(m).map(|value| format!("{}: {}", key.name, flow(&value))))
        .collect();
    if fields.is_empty() { "{}".to_owned() } else { format!("{{ {} }}", fields.join(", ")) }
}

fn settings(w: &mut String, s: &SettingsSpec) {
    if *s == SettingsSpec::default() {
        return;
    }
    line(w, 0, "settings:");
    for key in SETTINGS_KEYS {
        if let Some(value) = (key.slot.get)(s) {
            line(w, 1, &format!("{}: {}", key.name, flow(&value)));
        }
    }
    for (key, value) in &s.extra {
        line(w, 1, &format!("{}: {value}", quote(key)));
    }
}

/// The keys of one step after `id` and `action`, at the step's indentation: each row of the
/// kind's schema whose field is not at its default, in the schema's order. A required list left
/// empty is still written, so the key is not missing when read back.
fn step_keys(w: &mut String, kind: &StepKind) {
    for key in kind.schema().keys {
        match (key.slot.get)(kind) {
            Some(value) => field(w, key.name, value),
            None if key.required && key.ty == ValueType::SetRules => line(w, 2, &format!("{}: []", key.name)),
            None if key.required && key.ty == ValueType::Outcomes => line(w, 2, &format!("{}: {{}}", key.name)),
            None => {}
        }
    }
}

/// One key of a step, in the forms the decoder reads.
fn field(w: &mut String, name: &str, value: FieldValue) {
    match value {
        FieldValue::Int(n) => line(w, 2, &format!("{name}: {n}")),
        FieldValue::Number(n) => line(w, 2, &format!("{name}: {}", number(n))),
        FieldValue::Text(t) => line(w, 2, &format!("{name}: {}", quote(&t))),
        FieldValue::Bool(b) => line(w, 2, &format!("{name}: {b}")),
        FieldValue::TextList(items) => line(w, 2, &format!("{name}: {}", list(&items))),
        FieldValue::CompactRules(rules) => {
            line(w, 2, &format!("{name}:"));
            line(w, 3, "rules:");
            for r in &rules {
                let mut fields = vec![format!("language: {}", quote(&r.language))];
                fields.push(format!("policy: {}", quote(&r.policy)));
                if let Some(t) = r.threshold {
                    fields.push(format!("threshold: {}", number(t)));
                }
                if let Some(k) = &r.inbox_key {
                    fields.push(format!("inbox_key: {}", quote(k)));
                }
                line(w, 4, &format!("- {{ {} }}", fields.join(", ")));
            }
        }
        FieldValue::UserParts(parts) => {
            line(w, 2, &format!("{name}:"));
            for p in &parts {
                line(w, 3, &format!("- {{ source: {}, template: {} }}", quote(&p.source), quote(&p.template)));
            }
        }
        FieldValue::SetRules(rules) => {
            line(w, 2, &format!("{name}:"));
            for r in &rules {
                let value = match &r.value {
                    SetValueSpec::From { from, transform } => {
                        let mut v = format!("from: {}", quote(from));
                        if let Some(t) = transform {
                            let _ = write!(v, ", transform: {}", quote(t));
                        }
                        v
                    }
                    SetValueSpec::Value(v) => format!("value: {}", json(v)),
                };
                line(w, 3, &format!("- {{ set: {}, {value} }}", quote(&r.set)));
            }
        }
        FieldValue::Outcomes(outcomes) => {
            line(w, 2, &format!("{name}:"));
            for (outcome, target) in &outcomes {
                line(w, 3, &format!("{}: {}", quote(outcome), quote(target)));
            }
        }
        FieldValue::ResponseFormat(ResponseFormat::JsonObject) => line(w, 2, &format!("{name}: json")),
        FieldValue::ResponseFormat(ResponseFormat::JsonSchema { name: schema_name, schema, strict }) => {
            line(w, 2, &format!("{name}:"));
            line(w, 3, "json_schema:");
            line(w, 4, &format!("name: {}", quote(&schema_name)));
            line(w, 4, &format!("schema: {}", quote(&schema)));
            line(w, 4, &format!("strict: {strict}"));
        }
        FieldValue::Price(p) => line(w, 2, &format!("{name}: {}", flow(&FieldValue::Price(p)))),
        FieldValue::Tools(tools) => {
            line(w, 2, &format!("{name}:"));
            for t in &tools {
                line(w, 3, &format!("- name: {}", quote(&t.name)));
                line(w, 4, &format!("description: {}", quote(&t.description)));
                line(w, 4, &format!("parameters: {}", quote(&t.parameters)));
            }
        }
        FieldValue::McpServers(servers) => {
            line(w, 2, &format!("{name}:"));
            for s in &servers {
                line(w, 3, &format!("{}:", quote(&s.name)));
                if let Some(command) = &s.command {
                    line(w, 4, &format!("command: {}", quote(command)));
                }
                if !s.args.is_empty() {
                    line(w, 4, &format!("args: {}", list(&s.args)));
                }
                if let Some(url) = &s.url {
                    line(w, 4, &format!("url: {}", quote(url)));
                }
                if let Some(variable) = &s.bearer_token_env {
                    line(w, 4, &format!("bearer_token_env: {}", quote(variable)));
                }
                if !s.tools.is_empty() {
                    line(w, 4, &format!("tools: {}", list(&s.tools)));
                }
                if s.command.is_none()
                    && s.args.is_empty()
                    && s.url.is_none()
                    && s.bearer_token_env.is_none()
                    && s.tools.is_empty()
                {
                    // A server with nothing set is still a mapping the decoder reads back.
                    line(w, 4, "{}");
                }
            }
        }
    }
}

/// A value of `model` or `settings` in flow style, as the decoder reads it back.
fn flow(value: &FieldValue) -> String {
    match value {
        FieldValue::Int(n) => n.to_string(),
        FieldValue::Number(n) => number(*n),
        FieldValue::Text(t) => quote(t),
        FieldValue::Bool(b) => b.to_string(),
        FieldValue::TextList(items) => list(items),
        FieldValue::Price(p) => {
            let rates = [("input", p.input), ("cached_input", p.cached_input), ("cache_write", p.cache_write)];
            let rates = rates.into_iter().chain([("output", p.output)]);
            let fields: Vec<String> = rates.filter_map(|(k, v)| v.map(|v| format!("{k}: {}", number(v)))).collect();
            format!("{{ {} }}", fields.join(", "))
        }
        // Not a value of these blocks; the steps' own forms are written by `field`.
        _ => "null".to_owned(),
    }
}

/// One line at `depth` levels of two spaces.
fn line(w: &mut String, depth: usize, text: &str) {
    for _ in 0..depth {
        w.push_str("  ");
    }
    w.push_str(text);
    w.push('\n');
}

/// A flow list of strings.
fn list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|s| quote(s)).collect();
    format!("[{}]", items.join(", "))
}

/// A number in the shortest form that parses back to the same `f64` (`0.1`, `1.0`, `1e300`).
fn number(n: f64) -> String {
    format!("{n:?}")
}

/// A JSON value in YAML flow style (JSON syntax, strings quoted by [`quote`]).
fn json(v: &serde_json::Value) -> String {
    use serde_json::Value as J;
    match v {
        J::Null => "null".to_owned(),
        J::Bool(b) => b.to_string(),
        J::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) if n.is_f64() => number(f),
            _ => n.to_string(),
        },
        J::String(s) => quote(s),
        J::Array(items) => format!("[{}]", items.iter().map(json).collect::<Vec<_>>().join(", ")),
        J::Object(entries) => {
            let entries: Vec<String> = entries.iter().map(|(k, v)| format!("{}: {}", quote(k), json(v))).collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

/// `s` as a YAML double-quoted scalar: JSON string syntax, every character YAML would not keep
/// as written (control characters, `U+2028`, `U+2029`, `U+FEFF`) escaped.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
