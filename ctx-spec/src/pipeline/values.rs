//! The values `set_variables` moves around: what each field accepts, the transforms, and the
//! conversions, written once for both the static check (validation) and the run.
//!
//! Fields fall in four groups:
//! * text fields — `context_blocks` (a list of blocks), `user_question`, `user_question_en` (a
//!   text), `last_model_response` (an optional text) — can be read and set;
//! * `node_texts`, `search_results`, `history_dialog` belong to the steps that fill them: a rule
//!   may only clear them (`value: null`);
//! * `inbox`, `inbox_last_consumed` (delivered by the driver), `loop_counts` (the loop guards'
//!   counts, which the termination proof relies on) and `variables` are read-only;
//! * any other name is a variable in `state.variables` (any JSON value; `null` removes it).

use serde_json::Value;

use crate::state::{BUDGET_REMAINING_USD, FieldKind, PipelineState, render_context_blocks};

/// The static type of a value in a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    Text,
    OptionalText,
    TextList,
    /// A variable: any JSON value, checked when the rule runs.
    Json,
}

impl ValueType {
    fn describe(self) -> &'static str {
        match self {
            ValueType::Text => "a text",
            ValueType::OptionalText => "an optional text",
            ValueType::TextList => "a list of text blocks",
            ValueType::Json => "a variable's value",
        }
    }
}

/// A value while a rule runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Text(String),
    Opt(Option<String>),
    List(Vec<String>),
    Json(Value),
}

/// What a name is as the target of a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    TextList,
    Text,
    OptionalText,
    ClearOnly,
    ReadOnly,
    Variable,
    /// Computed when a model request is rendered ([`BUDGET_REMAINING_USD`]): `user_parts` read it,
    /// nothing writes it.
    Computed,
}

/// Names that are not in [`PipelineState::FIELDS`] but are not variables either.
const RESERVED: [&str; 2] = ["loop_counts", "variables"];

pub fn target_kind(name: &str) -> TargetKind {
    if RESERVED.contains(&name) {
        return TargetKind::ReadOnly;
    }
    if name == BUDGET_REMAINING_USD {
        return TargetKind::Computed;
    }
    match PipelineState::field_kind(name) {
        None => TargetKind::Variable,
        Some(FieldKind::TextList) => TargetKind::TextList,
        Some(FieldKind::Text) => TargetKind::Text,
        Some(FieldKind::OptionalText) => TargetKind::OptionalText,
        Some(FieldKind::NodeTexts | FieldKind::SearchHits | FieldKind::Messages) => TargetKind::ClearOnly,
        Some(FieldKind::Inbox) => TargetKind::ReadOnly,
    }
}

/// The built-in fields a rule or a user part can read (the text fields).
pub fn readable_fields() -> impl Iterator<Item = &'static str> {
    PipelineState::FIELDS
        .iter()
        .filter(|(_, k)| matches!(k, FieldKind::TextList | FieldKind::Text | FieldKind::OptionalText))
        .map(|(n, _)| *n)
}

/// Whether `name` is a well-formed variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The static type of reading `name`, or `None` when it is a field that cannot be read as text.
pub fn source_type(name: &str) -> Option<ValueType> {
    match target_kind(name) {
        TargetKind::TextList => Some(ValueType::TextList),
        TargetKind::Text => Some(ValueType::Text),
        TargetKind::OptionalText => Some(ValueType::OptionalText),
        TargetKind::Variable => Some(ValueType::Json),
        TargetKind::ClearOnly | TargetKind::ReadOnly | TargetKind::Computed => None,
    }
}

/// Reads `name` from the state; `None` for a variable that is not set.
pub fn read(state: &PipelineState, name: &str) -> Option<Val> {
    Some(match name {
        "context_blocks" => Val::List(state.context_blocks.clone()),
        "user_question" => Val::Text(state.user_question.clone()),
        "user_question_en" => Val::Text(state.user_question_en.clone()),
        "last_model_response" => Val::Opt(state.last_model_response.clone()),
        _ => Val::Json(state.variables.get(name)?.clone()),
    })
}

/// A named transform of `set_variables`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transform {
    /// A text → the context blocks it becomes: the whole text as ONE block (none when it is
    /// empty or only whitespace). Splitting on the block separator would render the same prompt
    /// text (blocks are joined with that separator) but would cut a summary into paragraphs that
    /// later compaction would treat apart; one block keeps it whole. A list stays a list, minus
    /// blank blocks; a variable may hold a text, a list of texts or null.
    ToContextBlocks,
    /// Leading and trailing whitespace removed (of each block of a list; blank blocks dropped).
    Trim,
    /// Any value as one text: blocks rendered as the prompt renders them, an absent text or null
    /// as "", a non-text JSON value as its JSON text.
    ToString,
    /// Lowercase text (of each block of a list; blank blocks dropped).
    ToLowercase,
    /// Uppercase text (of each block of a list; blank blocks dropped).
    ToUppercase,
    /// A text parsed as JSON, for a variable.
    ParseJson,
}

impl Transform {
    /// Every transform by name, in the order help lists them.
    pub const ALL: [(&'static str, Transform); 6] = [
        ("to_context_blocks", Transform::ToContextBlocks),
        ("trim", Transform::Trim),
        ("to_string", Transform::ToString),
        ("to_lowercase", Transform::ToLowercase),
        ("to_uppercase", Transform::ToUppercase),
        ("parse_json", Transform::ParseJson),
    ];

    pub fn parse(name: &str) -> Option<Transform> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    pub fn names() -> impl Iterator<Item = &'static str> {
        Self::ALL.iter().map(|(n, _)| *n)
    }

    fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, t)| *t == self).map_or("?", |(n, _)| n)
    }

    /// The type this transform produces from `input`, or why it cannot take it.
    pub fn output_type(self, input: ValueType) -> Result<ValueType, String> {
        use ValueType as T;
        match (self, input) {
            (Transform::ToContextBlocks, _) => Ok(T::TextList),
            (Transform::ToString, _) => Ok(T::Text),
            (Transform::Trim | Transform::ToLowercase | Transform::ToUppercase, T::Json) => Ok(T::OptionalText),
            (Transform::Trim | Transform::ToLowercase | Transform::ToUppercase, t) => Ok(t),
            (Transform::ParseJson, T::TextList) => Err(format!(
                "`parse_json` takes a text, not {}; apply `to_string` first, in a rule of its own",
                input.describe()
            )),
            (Transform::ParseJson, _) => Ok(T::Json),
        }
    }

    /// Applies the transform.
    pub fn apply(self, value: Val) -> Result<Val, String> {
        let text_map = |f: fn(&str) -> String, v: Val| -> Result<Val, String> {
            Ok(match v {
                Val::Text(s) => Val::Text(f(&s)),
                Val::Opt(o) => Val::Opt(o.map(|s| f(&s))),
                Val::List(l) => Val::List(l.iter().map(|s| f(s)).filter(|s| !s.trim().is_empty()).collect()),
                Val::Json(Value::String(s)) => Val::Opt(Some(f(&s))),
                Val::Json(Value::Null) => Val::Opt(None),
                Val::Json(other) => return Err(format!("`{}` takes a text, got the JSON value {other}", self.name())),
            })
        };
        match self {
            Transform::ToContextBlocks => to_context_blocks(value).map(Val::List),
            Transform::ToString => Ok(Val::Text(to_text(value))),
            Transform::Trim => text_map(|s| s.trim().to_owned(), value),
            Transform::ToLowercase => text_map(str::to_lowercase, value),
            Transform::ToUppercase => text_map(str::to_uppercase, value),
            Transform::ParseJson => {
                let text = match value {
                    Val::Text(s) | Val::Opt(Some(s)) | Val::Json(Value::String(s)) => s,
                    Val::Opt(None) | Val::Json(Value::Null) => return Ok(Val::Json(Value::Null)),
                    Val::List(_) | Val::Json(_) => return Err("`parse_json` takes a text".to_owned()),
                };
                serde_json::from_str(&text)
                    .map(Val::Json)
                    .map_err(|e| format!("`parse_json`: the text is not JSON ({e})"))
            }
        }
    }
}

fn to_context_blocks(value: Val) -> Result<Vec<String>, String> {
    let one = |s: String| if s.trim().is_empty() { Vec::new() } else { vec![s] };
    match value {
        Val::Text(s) | Val::Opt(Some(s)) | Val::Json(Value::String(s)) => Ok(one(s)),
        Val::Opt(None) | Val::Json(Value::Null) => Ok(Vec::new()),
        Val::List(l) => Ok(l.into_iter().filter(|s| !s.trim().is_empty()).collect()),
        Val::Json(Value::Array(items)) => {
            json_strings(items).map(|l| l.into_iter().filter(|s| !s.trim().is_empty()).collect())
        }
        Val::Json(other) => {
            Err(format!("`to_context_blocks` takes a text or a list of texts, got the JSON value {other}"))
        }
    }
}

fn json_strings(items: Vec<Value>) -> Result<Vec<String>, String> {
    items
        .into_iter()
        .map(|v| match v {
            Value::String(s) => Ok(s),
            other => Err(format!("expected a list of texts, found the element {other}")),
        })
        .collect()
}

fn to_text(value: Val) -> String {
    match value {
        Val::Text(s) | Val::Opt(Some(s)) | Val::Json(Value::String(s)) => s,
        Val::Opt(None) | Val::Json(Value::Null) => String::new(),
        Val::List(l) => render_context_blocks(&l),
        Val::Json(other) => other.to_string(),
    }
}

/// Whether a value of type `ty` can be stored in a target of kind `kind`; `Json` values pass
/// here and are checked when the rule runs.
pub fn check_assign(name: &str, kind: TargetKind, ty: ValueType) -> Result<(), String> {
    use ValueType as T;
    let fail = |fix: &str| Err(format!("`{name}` cannot hold {} {fix}", ty.describe()));
    match (kind, ty) {
        (TargetKind::ReadOnly, _) => Err(read_only_reason(name)),
        (TargetKind::ClearOnly, _) => Err(format!("`{name}` can only be cleared, with `value: null`")),
        (TargetKind::TextList, T::Text | T::OptionalText) => fail("(add `| to_context_blocks`)"),
        (TargetKind::Text | TargetKind::OptionalText, T::TextList) => fail("(add `| to_string`)"),
        _ => Ok(()),
    }
}

pub fn read_only_reason(name: &str) -> String {
    match name {
        "loop_counts" => {
            "`loop_counts` is read-only: only loop_guard steps change it, which is what bounds every loop".into()
        }
        "variables" => "`variables` is the map of all variables; set one variable by its own name".into(),
        BUDGET_REMAINING_USD => {
            format!("`{BUDGET_REMAINING_USD}` is computed from the spend caps when a model request is rendered")
        }
        _ => format!("`{name}` is read-only: the driver delivers inbox messages when their step starts"),
    }
}

/// The value a target will hold; applying it cannot fail.
#[derive(Debug, Clone, PartialEq)]
pub enum Stored {
    List(Vec<String>),
    Text(String),
    Opt(Option<String>),
    Var(Value),
    RemoveVar,
    Clear,
}

/// Converts `value` for `name`, or says why it does not fit.
pub fn convert(name: &str, value: Val) -> Result<Stored, String> {
    let kind = target_kind(name);
    let mismatch = |v: &Val| format!("`{name}` cannot hold {}", describe_val(v));
    Ok(match (kind, value) {
        (TargetKind::ReadOnly | TargetKind::Computed, _) => return Err(read_only_reason(name)),
        (TargetKind::ClearOnly, Val::Json(Value::Null)) => Stored::Clear,
        (TargetKind::ClearOnly, v) => {
            return Err(format!("`{name}` can only be cleared with `value: null`, not set to {}", describe_val(&v)));
        }
        (TargetKind::TextList, Val::List(l)) => Stored::List(l),
        (TargetKind::TextList, Val::Json(Value::Null)) => Stored::List(Vec::new()),
        (TargetKind::TextList, Val::Json(Value::Array(items))) => Stored::List(json_strings(items)?),
        (TargetKind::Text, Val::Text(s) | Val::Opt(Some(s)) | Val::Json(Value::String(s))) => Stored::Text(s),
        (TargetKind::Text, Val::Opt(None) | Val::Json(Value::Null)) => Stored::Text(String::new()),
        (TargetKind::OptionalText, Val::Text(s) | Val::Opt(Some(s)) | Val::Json(Value::String(s))) => {
            Stored::Opt(Some(s))
        }
        (TargetKind::OptionalText, Val::Opt(None) | Val::Json(Value::Null)) => Stored::Opt(None),
        (TargetKind::Variable, Val::Text(s) | Val::Opt(Some(s))) => Stored::Var(Value::String(s)),
        (TargetKind::Variable, Val::Opt(None) | Val::Json(Value::Null)) => Stored::RemoveVar,
        (TargetKind::Variable, Val::List(l)) => Stored::Var(Value::Array(l.into_iter().map(Value::String).collect())),
        (TargetKind::Variable, Val::Json(v)) => Stored::Var(v),
        (TargetKind::TextList | TargetKind::Text | TargetKind::OptionalText, v) => return Err(mismatch(&v)),
    })
}

fn describe_val(v: &Val) -> String {
    match v {
        Val::Text(_) => "a text".into(),
        Val::Opt(_) => "an optional text".into(),
        Val::List(_) => "a list of text blocks".into(),
        Val::Json(j) => format!("the JSON value {j}"),
    }
}

/// Stores a converted value.
pub fn store(state: &mut PipelineState, name: &str, value: Stored) {
    match (name, value) {
        ("context_blocks", Stored::List(l)) => state.context_blocks = l,
        ("user_question", Stored::Text(s)) => state.user_question = s,
        ("user_question_en", Stored::Text(s)) => state.user_question_en = s,
        ("last_model_response", Stored::Opt(o)) => state.last_model_response = o,
        ("node_texts", Stored::Clear) => state.node_texts.clear(),
        ("search_results", Stored::Clear) => state.search_results.clear(),
        ("history_dialog", Stored::Clear) => state.history_dialog.clear(),
        (_, Stored::Var(v)) => {
            state.variables.insert(name.to_owned(), v);
        }
        (_, Stored::RemoveVar) => {
            state.variables.remove(name);
        }
        // `convert` pairs every field with its own kind of value; nothing else reaches here.
        _ => {}
    }
}

#[cfg(test)]
#[path = "values_tests.rs"]
mod tests;
