//! A step's keys decoded by its schema rows: each row's [`ValueType`] picks the reader, its
//! [`Slot`](crate::pipeline::slot::Slot) stores the value, a required key missing or unreadable
//! leaves a placeholder at a poisoned path.

use super::block::Block;
use super::decoder::{AliasUse, Decoder, Dialect};
use super::named::{Named, NamedForm, named_blocks};
use super::value::{Kind, Loc, Value};
use crate::codes::Code;
use crate::params::ResponseFormat;
use crate::pipeline::definition::PriceSpec;
use crate::pipeline::definition::{CompactRuleSpec, END, SetRuleSpec, SetValueSpec, StepKind, ToolSpec, UserPartSpec};
use crate::pipeline::schema::{KeySchema, STEP_SCHEMAS, StepSchema, ValueType, forms};
use crate::pipeline::slot::FieldValue;
use crate::validation::{FieldPath, PathSegment};

/// "`search_nodes`, `expand_dependency_tree`, …": every step kind, for messages.
pub fn kinds() -> String {
    STEP_SCHEMAS.iter().map(|s| format!("`{}`", s.kind)).collect::<Vec<_>>().join(", ")
}

/// The step of kind `schema` written as `items` (a block's contents, which may also hold the
/// front end's own keys `extra`, such as YAML's `id` and `action`): the block read with the
/// schema's keys and aliases allowed, then [`decode_step`]. An unknown key that belongs to other
/// step kinds says so, since it is most often a key written in the wrong step.
pub fn read_step(
    dec: &mut Decoder,
    schema: &StepSchema,
    items: &[Value],
    at: Loc,
    what: String,
    path: &FieldPath,
    extra: &[&str],
) -> StepKind {
    let mut allowed: Vec<&str> = extra.to_vec();
    allowed.extend(schema.keys.iter().map(|k| k.name));
    let aliases: Vec<&str> = schema.keys.iter().flat_map(|k| k.aliases.iter().copied()).collect();
    allowed.extend(&aliases);
    let first = dec.issues.len();
    let block = Block::from_items_hiding(dec, items, at, what, path, &allowed, &aliases);
    for found in &mut dec.issues[first..] {
        let issue = &mut found.issue;
        let Some(PathSegment::Key(key)) = issue.path.0.last() else { continue };
        if issue.code != Code::YamlUnknownKey || issue.path.0.len() != path.0.len() + 1 {
            continue;
        }
        let owners: Vec<String> =
            STEP_SCHEMAS.iter().filter(|s| s.key(key).is_some()).map(|s| format!("`{}`", s.kind)).collect();
        if !owners.is_empty() {
            let help = issue.help.get_or_insert_with(String::new);
            help.push_str(&format!(" (`{key}` is a key of {})", owners.join(", ")));
        }
    }
    decode_step(dec, schema, &block)
}

/// The step of kind `schema` whose keys are `block` (read with the schema's keys and aliases
/// allowed). Never fails: what cannot be read is reported and replaced by a placeholder at a
/// poisoned path.
pub fn decode_step(dec: &mut Decoder, schema: &StepSchema, block: &Block<'_>) -> StepKind {
    let mut kind = (schema.empty)();
    decode_keys(dec, schema.keys, block, &mut kind);
    kind
}

/// Reads each row of `keys` from `block` into `target` through the row's slot: a key and its
/// older spelling both written, a value of the wrong type, a required key missing — each
/// reported once, a required key's placeholder left at a poisoned path.
pub fn decode_keys<T>(dec: &mut Decoder, keys: &[KeySchema<T>], block: &Block<'_>, target: &mut T) {
    for key in keys {
        let path = block.path.key(key.name);
        let what = format!("`{}` in {}", key.name, block.what);
        let alias = key.aliases.iter().find_map(|a| block.get(a).map(|entry| (*a, entry)));
        let value = match (block.get(key.name), alias) {
            (Some(_), Some((alias, (word, _)))) => {
                dec.poison(&path);
                dec.report(
                    word.at,
                    Code::YamlConflictingKeys,
                    &path,
                    format!("{} writes both `{}` and `{alias}`", block.what, key.name),
                    format!("`{alias}` is another name of `{}`: keep `{}`", key.name, key.name),
                );
                None
            }
            (None, Some((alias, (word, value)))) => {
                dec.aliases.push(AliasUse { at: word.at, alias, key: key.name });
                read(dec, key.ty, value, &path, &format!("`{alias}` in {}", block.what))
            }
            (Some((_, value)), None) => {
                let first = dec.issues.len();
                let read = read(dec, key.ty, value, &path, &what);
                // A value of the wrong type: the help shows the key with a value of its type.
                for found in &mut dec.issues[first..] {
                    let issue = &mut found.issue;
                    let generic = issue.help.as_deref().is_some_and(|h| h.starts_with("write "))
                        && issue.message.contains(" must be ");
                    if issue.code == Code::YamlWrongType && issue.path == path && generic && example(key.ty) != "…" {
                        issue.help = Some(match corrected(key.ty, value) {
                            Some(fixed) => format!("write `{}: {fixed}`", key.name),
                            None => format!("write `{}: {}`", key.name, example(key.ty)),
                        });
                    }
                }
                read
            }
            (None, None) => {
                if key.required {
                    if key.aliases.iter().any(|a| block.is_explained(a)) {
                        dec.poison(&path);
                    } else {
                        block.missing_as(dec, key.name, example(key.ty));
                    }
                }
                None
            }
        };
        match value {
            Some(value) => (key.slot.set)(target, value),
            None if key.required => {
                dec.poison(&path);
                let placeholder = match key.ty {
                    ValueType::Integer => FieldValue::Int(1),
                    ValueType::Target => FieldValue::Text(END.to_owned()),
                    _ => continue,
                };
                (key.slot.set)(target, placeholder);
            }
            None => {}
        }
    }
}

/// The value the writer meant, when a value of the wrong type says it unambiguously: `"20"` for
/// an integer is `20`, `"0.5"` for a number is `0.5`, `"yes"` for a flag is `true`, `3.0` for an
/// integer is `3`. `None` when it does not (`"16k"`: 16,000 or 16,384?), so the help shows the
/// type's placeholder instead of a guess.
fn corrected(ty: ValueType, value: &Value) -> Option<String> {
    use ValueType as T;
    let text = match &value.kind {
        Kind::Str(text) => text.trim().replace('_', ""),
        Kind::Number(n) if ty == T::Integer && n.fract() == 0.0 && n.abs() < 9.0e15 => {
            return Some(format!("{}", *n as i64));
        }
        _ => return None,
    };
    match ty {
        T::Integer => text.parse::<i64>().ok().map(|n| n.to_string()),
        T::Number => text.parse::<f64>().ok().filter(|n| n.is_finite()).map(|n| n.to_string()),
        T::Bool => match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Some("true".into()),
            "false" | "no" | "off" => Some("false".into()),
            _ => None,
        },
        _ => None,
    }
}

/// What a missing key's value looks like, for the help line.
fn example(ty: ValueType) -> &'static str {
    use ValueType as T;
    match ty {
        T::Integer => "<integer>",
        T::Number => "<number>",
        T::Text => "\"…\"",
        T::Bool => "true",
        T::Target => "<step id or end>",
        T::PromptKey => "<prompt key>",
        T::ContextName => "<context name>",
        T::SettingName => "<setting name>",
        T::TextList => "[ \"…\" ]",
        T::SetRules => "[ target <- source ]",
        T::Outcomes => "{ done => end }",
        T::Keyword => "<keyword>",
        T::Names => "[ name ]",
        T::Price => "{ input: 2.5, output: 10 }",
        _ => "…",
    }
}

/// Reads `value` as a `ty`.
fn read(dec: &mut Decoder, ty: ValueType, value: &Value, path: &FieldPath, what: &str) -> Option<FieldValue> {
    use ValueType as T;
    match ty {
        T::Integer => dec.int(value, path, what).map(FieldValue::Int),
        T::Number => dec.number(value, path, what).map(FieldValue::Number),
        T::Text => dec.text(value, path, what).map(FieldValue::Text),
        T::Bool => dec.boolean(value, path, what).map(FieldValue::Bool),
        T::Target | T::PromptKey | T::SettingName | T::ContextName => dec.name(value, path, what).map(FieldValue::Text),
        T::TextList => dec.text_list(value, path, what).map(FieldValue::TextList),
        T::CompactRules => compact_rules(dec, value, path, what).map(FieldValue::CompactRules),
        T::UserParts => user_parts(dec, value, path, what).map(FieldValue::UserParts),
        T::SetRules => set_rules(dec, value, path, what).map(FieldValue::SetRules),
        T::Outcomes => outcomes(dec, value, path, what).map(FieldValue::Outcomes),
        T::ResponseFormat => response_format(dec, value, path, what).map(FieldValue::ResponseFormat),
        T::Tools => tools(dec, value, path, what).map(FieldValue::Tools),
        T::Keyword => dec.name_or_text(value, path, what).map(FieldValue::Text),
        T::Names => names(dec, value, path, what).map(FieldValue::TextList),
        T::Price => price(dec, value, path, what).map(FieldValue::Price),
        T::McpServers => super::mcp::mcp_servers(dec, value, path, what).map(FieldValue::McpServers),
    }
}

/// `[ name, … ]`, each bare or quoted (in YAML, a single name is a list of one).
fn names(dec: &mut Decoder, value: &Value, path: &FieldPath, what: &str) -> Option<Vec<String>> {
    if dec.dialect == Dialect::Yaml && value.as_text().is_some() {
        return dec.name_or_text(value, path, what).map(|n| vec![n]);
    }
    let items = list(dec, value, path, what, "a list of names `[ yaml, toml ]`")?;
    let mut out = Some(Vec::new());
    for (j, item) in items.iter().enumerate() {
        match dec.name_or_text(item, &path.index(j), what) {
            Some(name) => out.as_mut().map(|o| o.push(name)),
            None => out.take().map(|_| ()),
        };
    }
    out
}

/// `{ input, cached_input?, cache_write?, output }`: numbers; which are required and their
/// ranges are the price rule's (`Price::from_spec`).
fn price(dec: &mut Decoder, value: &Value, path: &FieldPath, what: &str) -> Option<PriceSpec> {
    let b = Block::read(dec, value, format!("`price` of {what}"), path, &forms::PRICE)?;
    let mut rate = |key: &str| b.get(key).and_then(|(_, v)| dec.number(v, &path.key(key), &format!("`price.{key}`")));
    Some(PriceSpec {
        input: rate("input"),
        cached_input: rate("cached_input"),
        cache_write: rate("cache_write"),
        output: rate("output"),
    })
}

/// The items of a list, or a wrong-type problem.
fn list<'v>(dec: &mut Decoder, value: &'v Value, path: &FieldPath, what: &str, expected: &str) -> Option<&'v [Value]> {
    dec.locate(path, value.at);
    match &value.kind {
        Kind::List(items) => Some(items),
        _ => {
            dec.wrong_type(value, path, what, expected);
            None
        }
    }
}

/// `[ { language, policy, threshold?, inbox_key? }, … ]`, or YAML's `{ rules: [ … ] }`.
fn compact_rules(dec: &mut Decoder, value: &Value, path: &FieldPath, what: &str) -> Option<Vec<CompactRuleSpec>> {
    dec.locate(path, value.at);
    let value = match (&value.kind, dec.dialect) {
        (Kind::Map(_), Dialect::Yaml) => {
            Block::read(dec, value, what, path, &forms::COMPACT_CODE)?.require(dec, "rules")?
        }
        _ => value,
    };
    let items = list(dec, value, path, what, "a list of rules `{ language: …, policy: … }`")?;
    let mut rules = Vec::new();
    for (j, item) in items.iter().enumerate() {
        let at = path.index(j);
        let label = format!("compact_code rule {j} of {what}");
        let Some(b) = Block::read(dec, item, label, &at, &forms::COMPACT_RULE) else {
            rules.push(CompactRuleSpec::default());
            continue;
        };
        let name = |dec: &mut Decoder, key: &str| {
            let p = at.key(key);
            let read = b.require(dec, key).and_then(|v| dec.name(v, &p, &format!("`{key}` in {}", b.what)));
            read.unwrap_or_else(|| {
                dec.poison(&p);
                String::new()
            })
        };
        let language = name(dec, "language");
        let policy = name(dec, "policy");
        let threshold = b.get("threshold").and_then(|(_, v)| dec.number(v, &at.key("threshold"), "`threshold`"));
        let inbox_key = b.get("inbox_key").and_then(|(_, v)| dec.name_or_text(v, &at.key("inbox_key"), "`inbox_key`"));
        rules.push(CompactRuleSpec::new(language, policy).threshold(threshold).inbox_key(inbox_key));
    }
    Some(rules)
}

/// `[ source => "template {}", … ]`; YAML's `{ name: { source?, template } }` (the source
/// defaults to the name) or `[ { source, template }, … ]`.
fn user_parts(dec: &mut Decoder, value: &Value, path: &FieldPath, what: &str) -> Option<Vec<UserPartSpec>> {
    dec.locate(path, value.at);
    let (Kind::List(items) | Kind::Map(items)) = &value.kind else {
        let expected = match dec.dialect {
            Dialect::Dsl => "a list `[ source => \"template {}\", … ]`",
            Dialect::Yaml => "a mapping of `name: { source, template }`",
        };
        dec.wrong_type(value, path, what, expected);
        return None;
    };
    if items.is_empty() && dec.dialect == Dialect::Dsl {
        dec.poison(path);
        dec.report(
            value.at,
            Code::YamlWrongType,
            path,
            "`user_parts` is empty: the step would send an empty user message",
            "remove `user_parts` to send the default (the context under `### Context:`, then the question under \
             `### User:`), or list the parts, e.g. `[ user_question => \"{}\" ]`",
        );
    }
    let mut parts = Vec::new();
    for (j, item) in items.iter().enumerate() {
        let at = path.index(j);
        dec.locate(&at, item.at);
        let (name, body) = match &item.kind {
            Kind::Arrow { from, to } => {
                dec.locate(&at.key("source"), from.at);
                match dec.text(to, &at.key("template"), &format!("the template of user part `{}`", from.text)) {
                    Some(template) => parts.push(UserPartSpec::new(&from.text, template)),
                    None => dec.poison(&at),
                }
                continue;
            }
            Kind::Entry { key, value } if dec.dialect == Dialect::Yaml => (Some(key), &**value),
            Kind::Map(_) if dec.dialect == Dialect::Yaml => (None, item),
            _ => {
                dec.poison(&at);
                dec.report(
                    item.at,
                    Code::YamlWrongType,
                    &at,
                    format!("expected a user part `source => \"template\"` in {what}"),
                    "write e.g. `user_question_en => \"### User:\\n{}\\n\\n\"`: the template holds one `{}` for the \
                     source's text",
                );
                continue;
            }
        };
        let label = match name {
            Some(n) => format!("user part `{}` of {what}", n.text),
            None => format!("user part {j} of {what}"),
        };
        let Some(b) = Block::read(dec, body, label, &at, &forms::USER_PART) else { continue };
        let source = match (b.get("source"), name) {
            (Some((_, v)), _) => dec.text(v, &at.key("source"), &format!("`source` in {}", b.what)),
            (None, Some(n)) => {
                dec.locate(&at.key("source"), n.at);
                Some(n.text.clone())
            }
            (None, None) => b.require(dec, "source").and_then(|v| dec.text(v, &at.key("source"), "`source`")),
        };
        let template = b
            .require(dec, "template")
            .and_then(|v| dec.text(v, &at.key("template"), &format!("`template` in {}", b.what)));
        match (source, template) {
            (Some(s), Some(t)) => parts.push(UserPartSpec::new(s, t)),
            _ => dec.poison(&at),
        }
    }
    Some(parts)
}

/// `[ target <- source | transform, target = literal ]`; YAML's `{ set, from, transform? }` and
/// `{ set, value }`.
fn set_rules(dec: &mut Decoder, value: &Value, path: &FieldPath, what: &str) -> Option<Vec<SetRuleSpec>> {
    let expected = match dec.dialect {
        Dialect::Dsl => "a list of rules `[ target <- source | transform, target = value ]`",
        Dialect::Yaml => "a list of `{ set, from }` or `{ set, value }`",
    };
    let items = list(dec, value, path, what, expected)?;
    let mut rules = Vec::new();
    for (j, item) in items.iter().enumerate() {
        let at = path.index(j);
        dec.locate(&at, item.at);
        match &item.kind {
            Kind::Copy { target, source, transform } => {
                dec.locate(&at.key("set"), target.at);
                dec.locate(&at.key("from"), source.at);
                if let Some(t) = transform {
                    dec.locate(&at.key("transform"), t.at);
                }
                let from = SetValueSpec::From {
                    from: source.text.clone(),
                    transform: transform.as_ref().map(|t| t.text.clone()),
                };
                rules.push(SetRuleSpec::new(&target.text, from));
            }
            Kind::Assign { target, value } => {
                dec.locate(&at.key("set"), target.at);
                dec.locate(&at.key("value"), value.at);
                match literal(value) {
                    Some(json) => rules.push(SetRuleSpec::new(&target.text, SetValueSpec::Value(json))),
                    None => {
                        dec.poison(&at);
                        dec.report(
                            value.at,
                            Code::YamlWrongType,
                            &at,
                            format!(
                                "`{} = …` takes a literal (`null`, a string, a number or a boolean), found {}",
                                target.text,
                                value.describe()
                            ),
                            format!("to copy a field, write `{} <- field`", target.text),
                        );
                    }
                }
            }
            Kind::Map(_) if dec.dialect == Dialect::Yaml => {
                let label = format!("rule {j} of {what}");
                let Some(b) = Block::read(dec, item, label, &at, &forms::SET_RULE) else {
                    continue;
                };
                match set_rule(dec, &b, &at) {
                    Some(rule) => rules.push(rule),
                    None => dec.poison(&at),
                }
            }
            _ => {
                dec.poison(&at);
                let (message, help) = match dec.dialect {
                    Dialect::Dsl => (
                        "expected a rule `target <- source`, `target <- source | transform` or `target = value`",
                        "write e.g. `context_blocks <- last_model_response | to_context_blocks` or \
                         `last_model_response = null`",
                    ),
                    Dialect::Yaml => {
                        ("expected a rule `{ set, from }` or `{ set, value }`", "write e.g. `{ set: tries, value: 0 }`")
                    }
                };
                dec.report(item.at, Code::YamlWrongType, &at, message, help);
            }
        }
    }
    Some(rules)
}

/// YAML's `{ set, from, transform? }` or `{ set, value }`.
fn set_rule(dec: &mut Decoder, b: &Block<'_>, at: &FieldPath) -> Option<SetRuleSpec> {
    let set = b.require(dec, "set").and_then(|v| dec.text(v, &at.key("set"), &format!("`set` in {}", b.what)));
    let conflict = |dec: &mut Decoder, help: &str| {
        dec.report(b.at, Code::YamlConflictingKeys, at, format!("{} mixes `from` and `value`", b.what), help);
        None
    };
    let value = match (b.get("from"), b.get("value"), b.get("transform")) {
        (_, Some(_), Some(_)) => conflict(dec, "`value` takes no `transform`: use `from` to transform a field"),
        (Some(_), Some(_), None) => conflict(dec, "a rule sets its target `from` a field or to a `value`, not both"),
        (Some((_, from)), None, transform) => {
            let from = dec.text(from, &at.key("from"), &format!("`from` in {}", b.what));
            let transform = match transform {
                Some((_, t)) => Some(dec.text(t, &at.key("transform"), &format!("`transform` in {}", b.what))?),
                None => None,
            };
            Some(SetValueSpec::From { from: from?, transform })
        }
        (None, Some((_, value)), None) => {
            dec.locate(&at.key("value"), value.at);
            match value.to_json() {
                Some(json) => Some(SetValueSpec::Value(json)),
                None => {
                    dec.wrong_type(value, &at.key("value"), "`value`", "a JSON value");
                    None
                }
            }
        }
        (None, None, _) => {
            b.missing(dec, "from");
            None
        }
    };
    Some(SetRuleSpec::new(set?, value?))
}

/// A literal of `target = value`, as JSON.
fn literal(value: &Value) -> Option<serde_json::Value> {
    match &value.kind {
        Kind::Null | Kind::Bool(_) | Kind::Int(_) | Kind::Number(_) | Kind::Str(_) => value.to_json(),
        _ => None,
    }
}

/// `{ outcome => step, … }`; YAML's `{ outcome: step }`.
fn outcomes(dec: &mut Decoder, value: &Value, path: &FieldPath, what: &str) -> Option<Vec<(String, String)>> {
    dec.locate(path, value.at);
    let items = match (&value.kind, dec.dialect) {
        (Kind::Map(items), _) | (Kind::List(items), Dialect::Dsl) => items,
        _ => {
            let expected = match dec.dialect {
                Dialect::Dsl => "a block of `outcome => step`",
                Dialect::Yaml => "a mapping of `outcome: step`",
            };
            dec.wrong_type(value, path, what, expected);
            return None;
        }
    };
    let mut outcomes: Vec<(String, String)> = Vec::new();
    for item in items {
        let (name, target) = match &item.kind {
            Kind::Arrow { from, to } => (from, &**to),
            Kind::Entry { key, value } if dec.dialect == Dialect::Yaml => (key, &**value),
            _ => {
                dec.poison(path);
                dec.report(
                    item.at,
                    Code::YamlWrongType,
                    path,
                    format!("expected an outcome `name => step` in {what}"),
                    "write e.g. `done => end` or `retry => search`",
                );
                continue;
            }
        };
        if outcomes.iter().any(|(o, _)| *o == name.text) {
            dec.report(
                name.at,
                Code::YamlDuplicateKey,
                &path.key(&name.text),
                format!("duplicate outcome `{}` in {what}", name.text),
                "each outcome names one next step; remove one of the two",
            );
            continue;
        }
        let at = path.key(&name.text);
        // The outcome's own name, for problems with the enum variant it becomes.
        dec.locate(&at.key("name"), name.at);
        match dec.name(target, &at, &format!("outcome `{}`", name.text)) {
            Some(t) => outcomes.push((name.text.clone(), t)),
            None => dec.poison(&at),
        }
    }
    Some(outcomes)
}

/// `json`, or `json_schema { name, schema, strict? }` (YAML: `{ json_schema: { … } }`).
fn response_format(dec: &mut Decoder, value: &Value, path: &FieldPath, what: &str) -> Option<ResponseFormat> {
    dec.locate(path, value.at);
    let body = match &value.kind {
        Kind::Word(w) | Kind::Str(w) if forms::JSON_FORMATS.contains(&w.as_str()) => {
            return Some(ResponseFormat::JsonObject);
        }
        Kind::Named { name, body } if name.text == "json_schema" => &**body,
        Kind::Map(_) if dec.dialect == Dialect::Yaml => {
            Block::read(dec, value, what, path, &forms::RESPONSE_FORMAT)?.require(dec, "json_schema")?
        }
        _ => {
            let expected = match dec.dialect {
                Dialect::Dsl => "`json` or `json_schema { name: \"answer\", schema: r#\"{…}\"# }`",
                Dialect::Yaml => "`json` or `{ json_schema: { name, schema, strict } }`",
            };
            dec.wrong_type(value, path, what, expected);
            return None;
        }
    };
    let b = Block::read(dec, body, format!("`json_schema` of {what}"), path, &forms::JSON_SCHEMA)?;
    let name = b.require(dec, "name").and_then(|v| dec.text(v, &path.key("name"), "`name` of `json_schema`"));
    let schema = b.require(dec, "schema").and_then(|v| dec.json_text(v, &path.key("schema"), "`schema`"));
    let strict = match b.get("strict") {
        Some((_, v)) => Some(dec.boolean(v, &path.key("strict"), "`strict`")?),
        None => None,
    };
    Some(ResponseFormat::JsonSchema { name: name?, schema: schema?, strict: strict.unwrap_or(false) })
}

/// `[ name { description, parameters }, … ]`; YAML's `[ { name, description, parameters } ]`.
fn tools(dec: &mut Decoder, value: &Value, path: &FieldPath, what: &str) -> Option<Vec<ToolSpec>> {
    let form = NamedForm {
        noun: "tool",
        a_noun: "a tool",
        keys: &forms::TOOL[1..],
        yaml_mapping: false,
        dsl_block: false,
        expected_dsl: "a list of tools `[ name { description: \"…\", parameters: r#\"{…}\"# } ]`",
        expected_yaml: "a list of `{ name, description, parameters }`",
        name: Decoder::text,
        name_what: "`name` of a tool",
    };
    let mut tools = Vec::new();
    for Named { at, name, block: b } in named_blocks(dec, value, path, what, &form)? {
        let Some(b) = b else { continue };
        let description =
            b.require(dec, "description").and_then(|v| dec.text(v, &at.key("description"), "`description`"));
        let parameters =
            b.require(dec, "parameters").and_then(|v| dec.json_text(v, &at.key("parameters"), "`parameters`"));
        match (name, description, parameters) {
            (Some(n), Some(d), Some(p)) => tools.push(ToolSpec::new(n, d, p)),
            _ => dec.poison(&at),
        }
    }
    Some(tools)
}
