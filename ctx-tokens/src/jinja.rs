//! A model's own chat template, rendered as the servers render it (feature `hf`).
//!
//! Every open-weight model ships its chat template as Jinja source (`chat_template` in
//! `tokenizer_config.json`, `tokenizer.chat_template` in a GGUF). Servers render it with the
//! request's messages into one prompt string — Hugging Face transformers, vLLM and
//! llama-cpp-python with Python's jinja2, TGI and mistral.rs with minijinja — and tokenize that
//! string. [`JinjaTemplate`] renders it the same way, with minijinja:
//!
//! - the environment of transformers' `apply_chat_template` (which llama-cpp-python copies):
//!   `trim_blocks` and `lstrip_blocks` on, loop controls, Python string and dict methods
//!   (`minijinja-contrib`'s pycompat: `.strip()`, `.startswith()`, `.items()`, …);
//! - the variables: `messages`, `add_generation_prompt`, `bos_token`, `eos_token`, `tools`
//!   (`none` without tools), `raise_exception(message)` (an error naming the template) and
//!   `strftime_now(format)` (the current UTC date, which Llama 3.x templates print);
//! - `tojson` as Python's `json.dumps` writes it (`", "` and `": "` separators, non-ASCII kept,
//!   `indent=` honoured), the filter transformers installs; minijinja's own would escape `<`,
//!   `>`, `&` and `'` and change the count.
//!
//! Messages are passed as the OpenAI wire format carries them: `role`, `content` (`none` for an
//! assistant message that only calls tools), `name` when set, `tool_calls` as
//! `{id, type: "function", function: {name, arguments}}` with the arguments as the JSON string
//! sent, and `tool_call_id` for a tool result.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use minijinja::value::{Enumerator, Kwargs, Object, ObjectRepr, Serde, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind};

use crate::TokenError;
use crate::chat::{ChatMessage, Role, ToolSchema};

const TEMPLATE: &str = "chat_template";

/// A compiled Jinja chat template with the model's BOS and EOS token texts.
#[derive(Clone)]
pub struct JinjaTemplate {
    name: String,
    source: Arc<str>,
    bos_token: String,
    eos_token: String,
    env: Arc<Environment<'static>>,
}

impl fmt::Debug for JinjaTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JinjaTemplate")
            .field("name", &self.name)
            .field("source_bytes", &self.source.len())
            .field("bos_token", &self.bos_token)
            .field("eos_token", &self.eos_token)
            .finish()
    }
}

impl PartialEq for JinjaTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.source == other.source
            && self.bos_token == other.bos_token
            && self.eos_token == other.eos_token
    }
}

impl Eq for JinjaTemplate {}

impl JinjaTemplate {
    /// Compiles `source`; `name` identifies it in errors (a model file's path, say). A syntax
    /// error is [`TokenError::TemplateRender`] naming the line.
    pub fn new(
        name: impl Into<String>,
        source: impl Into<String>,
        bos_token: impl Into<String>,
        eos_token: impl Into<String>,
    ) -> Result<Self, TokenError> {
        let name = name.into();
        let source: Arc<str> = Arc::from(source.into());
        let mut env = Environment::new();
        env.set_syntax(
            minijinja::syntax::SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .build()
                .map_err(|e| render_error(&name, &e))?,
        );
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson);
        env.add_function("raise_exception", |message: String| -> Result<Value, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, format!("raise_exception: {message}")))
        });
        env.add_function("strftime_now", |format: String| strftime(&format, now_utc()));
        env.add_template_owned(TEMPLATE, source.to_string()).map_err(|e| render_error(&name, &e))?;
        Ok(JinjaTemplate { name, source, bos_token: bos_token.into(), eos_token: eos_token.into(), env: Arc::new(env) })
    }

    /// The template's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Jinja source.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The BOS token text passed as `bos_token`.
    pub fn bos_token(&self) -> &str {
        &self.bos_token
    }

    /// The EOS token text passed as `eos_token`.
    pub fn eos_token(&self) -> &str {
        &self.eos_token
    }

    /// The prompt the server renders for `messages` and `tools`, with the reply primed when
    /// `add_generation_prompt`.
    pub fn render(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolSchema],
        add_generation_prompt: bool,
    ) -> Result<String, TokenError> {
        let template = self.env.get_template(TEMPLATE).map_err(|e| render_error(&self.name, &e))?;
        let messages: Vec<Value> = messages.iter().map(message_value).collect();
        let tools = if tools.is_empty() { Value::from(()) } else { tools.iter().map(tool_value).collect() };
        let ctx = minijinja::context! {
            messages => messages,
            add_generation_prompt => add_generation_prompt,
            bos_token => self.bos_token.as_str(),
            eos_token => self.eos_token.as_str(),
            tools => tools,
            tool_choice => (),
            functions => (),
            function_call => (),
        };
        template.render(ctx).map_err(|e| render_error(&self.name, &e))
    }
}

fn render_error(name: &str, e: &Error) -> TokenError {
    let mut reason = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let _ = write!(reason, ": {cause}");
        source = cause.source();
    }
    TokenError::TemplateRender { template: name.to_owned(), reason }
}

/// A map whose keys keep the order they were written in (the wire order a server's Python
/// dictionaries keep, which `tojson` and `.items()` show).
#[derive(Debug)]
struct Fields(Vec<(&'static str, Value)>);

impl Object for Fields {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str()?;
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone())
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.0.iter().map(|(k, _)| Value::from(*k)).collect())
    }
}

fn fields(pairs: Vec<(&'static str, Value)>) -> Value {
    Value::from_object(Fields(pairs))
}

/// A message as the OpenAI wire format carries it (see the module documentation).
pub(crate) fn message_value(m: &ChatMessage) -> Value {
    let mut pairs: Vec<(&'static str, Value)> = vec![("role", Value::from(m.role.as_str()))];
    let only_calls = m.role == Role::Assistant && m.content.is_empty() && !m.tool_calls.is_empty();
    pairs.push(("content", if only_calls { Value::from(()) } else { Value::from(m.content.as_str()) }));
    if let Some(name) = &m.name {
        pairs.push(("name", Value::from(name.as_str())));
    }
    if !m.tool_calls.is_empty() {
        let calls: Value = m
            .tool_calls
            .iter()
            .map(|c| {
                let function = fields(vec![
                    ("name", Value::from(c.name.as_str())),
                    ("arguments", Value::from(c.arguments.as_str())),
                ]);
                fields(vec![
                    ("id", Value::from(c.id.as_str())),
                    ("type", Value::from("function")),
                    ("function", function),
                ])
            })
            .collect();
        pairs.push(("tool_calls", calls));
    }
    if let Some(id) = &m.tool_call_id {
        pairs.push(("tool_call_id", Value::from(id.as_str())));
    }
    fields(pairs)
}

/// A tool as the OpenAI wire format carries it: `{type: "function", function: {…}}`.
fn tool_value(t: &ToolSchema) -> Value {
    let function = fields(vec![
        ("name", Value::from(t.name.as_str())),
        ("description", Value::from(t.description.as_str())),
        ("parameters", Value::from(Serde(&t.parameters))),
    ]);
    fields(vec![("type", Value::from("function")), ("function", function)])
}

/// `tojson` as Python's `json.dumps(x, ensure_ascii=False, indent=indent, sort_keys=sort_keys)`.
fn tojson(value: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    // `ensure_ascii` and `separators` are accepted; only the defaults are written.
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    let _: Option<Value> = kwargs.get("separators")?;
    kwargs.assert_all_used()?;
    let mut out = String::new();
    write_json(&mut out, value, indent, sort_keys.unwrap_or(false), 0)?;
    Ok(Value::from_safe_string(out))
}

fn write_json(out: &mut String, value: &Value, indent: Option<usize>, sort: bool, level: usize) -> Result<(), Error> {
    let newline = |out: &mut String, level: usize| {
        if let Some(width) = indent {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', width * level));
        }
    };
    let item_sep = if indent.is_some() { "," } else { ", " };
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => {
            if value.is_integer() {
                out.push_str(&value.to_string());
            } else {
                let x = f64::try_from(value.clone())?;
                out.push_str(&python_float(x));
            }
        }
        ValueKind::String => {
            let text = value.as_str().unwrap_or_default();
            out.push_str(
                &serde_json::to_string(text).map_err(|e| Error::new(ErrorKind::BadSerialization, e.to_string()))?,
            );
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let items: Vec<Value> = value.try_iter()?.collect();
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                write_json(out, item, indent, sort, level + 1)?;
            }
            newline(out, level);
            out.push(']');
        }
        ValueKind::Map => {
            let mut keys: Vec<Value> = value.try_iter()?.collect();
            if sort {
                keys.sort();
            }
            if keys.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            out.push('{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                let key_text = key.as_str().map_or_else(|| key.to_string(), str::to_owned);
                out.push_str(
                    &serde_json::to_string(&key_text)
                        .map_err(|e| Error::new(ErrorKind::BadSerialization, e.to_string()))?,
                );
                out.push_str(": ");
                write_json(out, &value.get_item(key)?, indent, sort, level + 1)?;
            }
            newline(out, level);
            out.push('}');
        }
        _ => {
            return Err(Error::new(ErrorKind::BadSerialization, format!("tojson cannot write a {}", value.kind())));
        }
    }
    Ok(())
}

/// A float as Python's `repr` writes it: `1.0`, `0.5`, `1e-05`, `1e+16`, `NaN`, `Infinity`.
fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    let abs = x.abs();
    if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
        let text = format!("{x:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let (sign, digits) = exponent.strip_prefix('-').map_or(("+", exponent), |d| ("-", d));
        return format!("{mantissa}e{sign}{digits:0>2}");
    }
    let text = format!("{x:?}");
    if text.contains('.') || text.contains('e') { text } else { format!("{text}.0") }
}

/// Seconds since the Unix epoch, now.
fn now_utc() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The civil date (year, month 1–12, day 1–31) of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Python's `strftime` for the directives chat templates use (`%d %b %Y`, `%B`, `%m`, `%y`,
/// `%H:%M:%S`, `%A`, `%a`, `%j`, `%%`), in UTC. Another directive is an error, not a guess.
fn strftime(format: &str, epoch_seconds: i64) -> Result<String, Error> {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    const DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
    let days = epoch_seconds.div_euclid(86_400);
    let secs = epoch_seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let month_name = MONTHS.get(month as usize - 1).copied().unwrap_or_default();
    // 1970-01-01 was a Thursday (index 3).
    let weekday = DAYS.get(usize::try_from((days + 3).rem_euclid(7)).unwrap_or(0)).copied().unwrap_or_default();
    let day_of_year = days - civil_days_before_year(year) + 1;
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => {
                let _ = write!(out, "{day:02}");
            }
            Some('m') => {
                let _ = write!(out, "{month:02}");
            }
            Some('Y') => {
                let _ = write!(out, "{year}");
            }
            Some('y') => {
                let _ = write!(out, "{:02}", year.rem_euclid(100));
            }
            Some('b') => out.push_str(month_name.get(..3).unwrap_or_default()),
            Some('B') => out.push_str(month_name),
            Some('a') => out.push_str(weekday.get(..3).unwrap_or_default()),
            Some('A') => out.push_str(weekday),
            Some('H') => {
                let _ = write!(out, "{:02}", secs / 3600);
            }
            Some('M') => {
                let _ = write!(out, "{:02}", secs / 60 % 60);
            }
            Some('S') => {
                let _ = write!(out, "{:02}", secs % 60);
            }
            Some('j') => {
                let _ = write!(out, "{day_of_year:03}");
            }
            Some('%') => out.push('%'),
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("strftime_now: unsupported directive %{}", other.map(String::from).unwrap_or_default()),
                ));
            }
        }
    }
    Ok(out)
}

/// Days from 1970-01-01 to January 1st of `year`.
fn civil_days_before_year(year: i64) -> i64 {
    // Inverse of civil_from_days for (year, 1, 1).
    let y = year - 1;
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let doy = (153 * 10 + 2) / 5; // March-based day of year of January 1st
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

// What a template drops, asked of the template itself: rendering a chat template refuses it
// (`template.rs`), and counting with one (`jinja_counts.rs`) refuses it first.

/// Refuses a message whose name or tool calls the template drops: rendered with and without the
/// field, the prompt is the same.
pub(crate) fn check_supported(t: &JinjaTemplate, messages: &[ChatMessage]) -> Result<(), TokenError> {
    for (index, m) in messages.iter().enumerate() {
        let mut fields = Vec::new();
        if m.name.is_some() {
            fields.push("message names");
        }
        if !m.tool_calls.is_empty() {
            fields.push("tool calls");
        }
        for what in fields {
            let mut stripped = messages[..=index].to_vec();
            let last = &mut stripped[index];
            match what {
                "message names" => last.name = None,
                _ => {
                    last.tool_calls.clear();
                }
            }
            if t.render(&messages[..=index], &[], false)? == t.render(&stripped, &[], false)? {
                return Err(TokenError::TemplateUnsupported {
                    template: t.name().to_owned(),
                    what: format!("{what} (message {index}, role {})", m.role.as_str()),
                });
            }
        }
    }
    Ok(())
}

/// The conversation every tool-schema probe renders with.
pub(crate) fn probe() -> [ChatMessage; 1] {
    [ChatMessage::user("")]
}

/// Refuses tool schemas the template does not render.
pub(crate) fn check_tools_supported(t: &JinjaTemplate, tools: &[ToolSchema]) -> Result<(), TokenError> {
    let Some(first) = tools.first() else { return Ok(()) };
    if t.render(&probe(), tools, false)? == t.render(&probe(), &[], false)? {
        return Err(TokenError::TemplateUnsupported {
            template: t.name().to_owned(),
            what: format!("tool schemas (`{}`)", first.name),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
