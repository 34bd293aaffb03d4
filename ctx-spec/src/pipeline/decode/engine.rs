//! The context engine's declarations — a pipeline's `contexts` in `pipeline!` and in YAML, and
//! the body of `context_engine!` — decoded by the blocks of
//! [`schema::engine`](crate::pipeline::schema::engine), with the messages every other block of
//! a pipeline gets (unknown, missing, duplicate keys, wrong types).
//!
//! The two front ends write the same declarations in two forms:
//!
//! | | the DSL | YAML (the engine's serde form) |
//! |---|---|---|
//! | contexts, retrievers | blocks by name: `contexts { support { … } }` | lists: `contexts: [ { name: support, … } ]` |
//! | a message | `system: "…"`, `context: kb { ratio: 0.5 }`, `history` | `{ type: system, content: "…" }`, `{ type: context, name: kb, ratio: 0.5 }`, `{ type: history }` |
//! | a compactor | `compactor: truncate` or `compactor { type: truncate }` | the same |
//!
//! Only the shape is judged here; whether a value is acceptable (a ratio in range, a known
//! retriever) is a rule of [`validate_spec`](crate::engine::validate_spec), reported at the
//! location this decoder records for the value's path. A value that cannot be read leaves a
//! placeholder at a poisoned path, so the rules never judge it.

use super::block::Block;
use super::decoder::{Decoder, Dialect};
use super::named::{Named, NamedForm, named_blocks};
use super::steps::decode_keys;
use super::value::{Kind, Loc, Value, Word};
use crate::codes::Code;
use crate::engine::{
    CompactorSpec, ContextDeclaration, ContextInsert, ContextPolicySpec, DEFAULT_LIMIT, EngineSpec, ExpansionSpec,
    InputBudgetSpec, MessageSpec, PackBudgetSpec, PackPlacement, RetrieverDecl,
};
use crate::pipeline::schema::engine::{
    COMPACTOR, CONTEXT, ENGINE, EXPANSION, EngineBlock, INPUT_BUDGET, MESSAGE_KEYS, MESSAGE_KINDS, PACK, PACK_BUDGET,
    PLACEMENTS, POLICY, RETRIEVER,
};
use crate::validation::{FieldPath, did_you_mean};

/// The declarations written as `items` (a block's contents), named `what` in messages ("context
/// engine `help_centre`", "`contexts`"), at `path`; problems of the block as a whole point at
/// `at`. Never fails: what cannot be read is reported and left out or replaced by a placeholder
/// at a poisoned path.
pub fn read_engine(dec: &mut Decoder, items: &[Value], at: Loc, what: String, path: &FieldPath) -> EngineSpec {
    dec.locate(path, at);
    let b = Block::from_items(dec, items, at, what, path, ENGINE.keys);
    unsure(dec, &b, ENGINE.keys);
    let mut spec = EngineSpec::default();
    decode_keys(dec, ENGINE.rows, &b, &mut spec);
    if let Some((key, value)) = present(&b, "retrievers") {
        let form = named_form("retriever", "a retriever", RETRIEVER.keys);
        spec.retrievers = items_of(dec, key, value, &path.key("retrievers"), &form)
            .into_iter()
            .map(|named| retriever(dec, named))
            .collect();
    }
    match present(&b, "contexts") {
        Some((key, value)) => {
            let form = named_form("context", "a context", CONTEXT.keys);
            spec.contexts = items_of(dec, key, value, &path.key("contexts"), &form)
                .into_iter()
                .map(|named| context(dec, named))
                .collect();
        }
        None => {
            let example = match dec.dialect {
                Dialect::Dsl => "{ support { messages: [user: \"{input.question}\"] } }",
                Dialect::Yaml => "[ { name: support, messages: [ { type: user, content: \"{input.question}\" } ] } ]",
            };
            b.missing_as(dec, "contexts", example);
        }
    }
    spec
}

/// When a key of `b` was misspelt (an unknown key next to it is suggested) or written malformed,
/// what the block meant is not known, and its rules would judge it without that key (a template
/// naming an input of the misspelt `inputs`): its path is poisoned, so only the mistake is
/// reported.
fn unsure(dec: &mut Decoder, b: &Block<'_>, keys: &[&str]) {
    if keys.iter().any(|k| b.is_explained(k)) {
        dec.poison(&b.path);
    }
}

/// `key`'s entry in `b`, unless its value is `null` (an optional value of the serde form left
/// out).
fn present<'v>(b: &Block<'v>, key: &str) -> Option<(&'v Word, &'v Value)> {
    b.get(key).filter(|(_, v)| v.kind != Kind::Null)
}

/// How the contexts or the retrievers are written.
fn named_form<'f>(noun: &'f str, a_noun: &'f str, keys: &'f [&'f str]) -> NamedForm<'f> {
    NamedForm {
        noun,
        a_noun,
        keys,
        yaml_mapping: false,
        dsl_block: true,
        expected_dsl: "a block of `name { … }`",
        expected_yaml: "a list of `{ name, … }`",
        name: Decoder::name_or_text,
        name_what: "`name`",
    }
}

/// The items of `contexts` or `retrievers`, the section located at its key (where a rule of the
/// whole list points).
fn items_of<'v>(
    dec: &mut Decoder,
    key: &Word,
    value: &'v Value,
    path: &FieldPath,
    form: &NamedForm<'_>,
) -> Vec<Named<'v>> {
    dec.locate(path, key.at);
    named_blocks(dec, value, path, &format!("`{}`", key.text), form).unwrap_or_default()
}

/// A retriever: `query`, `limit`.
fn retriever(dec: &mut Decoder, Named { at, name, block }: Named<'_>) -> RetrieverDecl {
    let mut decl = RetrieverDecl { name: name.clone().unwrap_or_default(), query: String::new(), limit: DEFAULT_LIMIT };
    if name.is_none() {
        dec.poison(&at.key("name"));
    }
    match block {
        Some(b) => {
            unsure(dec, &b, RETRIEVER.keys);
            decode_keys(dec, RETRIEVER.rows, &b, &mut decl);
        }
        None => dec.poison(&at),
    }
    decl
}

/// A context: `inputs`, `policy`, `messages`. One whose block cannot be read is kept (empty, at
/// a poisoned path), so that the messages naming it still find it.
fn context(dec: &mut Decoder, Named { at, name, block }: Named<'_>) -> ContextDeclaration {
    let mut decl = ContextDeclaration { name: name.clone().unwrap_or_default(), ..ContextDeclaration::default() };
    if name.is_none() {
        dec.poison(&at.key("name"));
    }
    let Some(b) = block else {
        dec.poison(&at);
        return decl;
    };
    unsure(dec, &b, CONTEXT.keys);
    decode_keys(dec, CONTEXT.rows, &b, &mut decl);
    if let Some((key, value)) = present(&b, "policy") {
        decl.policy = policy(dec, key, value, &at.key("policy"));
    }
    match present(&b, "messages") {
        Some((key, value)) => decl.messages = messages(dec, key, value, &at.key("messages"), &b.what),
        None => {
            let example = match dec.dialect {
                Dialect::Dsl => "[system: \"…\", user: \"{input.question}\"]",
                Dialect::Yaml => "[ { type: user, content: \"{input.question}\" } ]",
            };
            b.missing_as(dec, "messages", example);
        }
    }
    decl
}

/// The block `value` of `key` (at `path`, located at the key, where the block's missing keys are
/// reported too), with the keys `allowed`; `None` (reported) when it is not a block.
fn sub_block<'v>(
    dec: &mut Decoder,
    key: &Word,
    value: &'v Value,
    path: &FieldPath,
    allowed: &[&str],
) -> Option<Block<'v>> {
    dec.locate(path, key.at);
    let what = format!("`{}`", key.text);
    let Kind::Map(items) = &value.kind else {
        let expected = match dec.dialect {
            Dialect::Dsl => "a block `{ … }`",
            Dialect::Yaml => "a mapping",
        };
        dec.wrong_type(value, path, &what, expected);
        return None;
    };
    Some(Block::from_items(dec, items, key.at, what, path, allowed))
}

/// The block of `key` in `parent`, when written, read by the rows of `schema` into `spec`.
fn leaf<T>(dec: &mut Decoder, parent: &Block<'_>, key: &str, schema: &EngineBlock<T>, mut spec: T) -> Option<T> {
    let (word, value) = present(parent, key)?;
    let b = sub_block(dec, word, value, &parent.path.key(key), schema.keys)?;
    unsure(dec, &b, schema.keys);
    decode_keys(dec, schema.rows, &b, &mut spec);
    Some(spec)
}

/// `policy { input_budget, pack_budget, overflow, compactor, expansion }`.
fn policy(dec: &mut Decoder, key: &Word, value: &Value, path: &FieldPath) -> Option<ContextPolicySpec> {
    let b = sub_block(dec, key, value, path, POLICY.keys)?;
    unsure(dec, &b, POLICY.keys);
    let mut policy = ContextPolicySpec::default();
    decode_keys(dec, POLICY.rows, &b, &mut policy);
    policy.input_budget = leaf(dec, &b, "input_budget", &INPUT_BUDGET, InputBudgetSpec { max_tokens: 1 });
    policy.pack_budget = leaf(dec, &b, "pack_budget", &PACK_BUDGET, PackBudgetSpec { default_ratio: None });
    policy.compactor = compactor(dec, &b);
    policy.expansion = leaf(dec, &b, "expansion", &EXPANSION, ExpansionSpec { max_pages: 1, min_fill_ratio: 1.0 });
    Some(policy)
}

/// `compactor: truncate`, or the serde form `compactor { type: truncate }`; its path is located
/// at the name, which the rule of known compactors judges.
fn compactor(dec: &mut Decoder, parent: &Block<'_>) -> Option<CompactorSpec> {
    let (word, value) = present(parent, "compactor")?;
    let path = parent.path.key("compactor");
    let what = format!("`compactor` in {}", parent.what);
    match &value.kind {
        Kind::Word(_) | Kind::Str(_) => dec.name_or_text(value, &path, &what).map(|name| CompactorSpec { name }),
        Kind::Map(_) => {
            let spec = leaf(dec, parent, "compactor", &COMPACTOR, CompactorSpec { name: String::new() })?;
            let name = path.key("type");
            if dec.is_poisoned(&name) {
                dec.poison(&path);
                return None;
            }
            if let Some(at) = dec.locations.get(&name).copied() {
                dec.locations.insert(path.clone(), at);
            }
            Some(spec)
        }
        _ => {
            dec.locate(&path, word.at);
            dec.wrong_type(value, &path, &what, "a compactor's name (`truncate`) or `{ type: truncate }`");
            None
        }
    }
}

/// How to write each message, for errors.
fn message_forms(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Dsl => {
            "`system: \"…\"`, `user: \"…\"`, `assistant: \"…\"`, `context: retriever_or_context`, or `history`"
        }
        Dialect::Yaml => {
            "`{ type: system, content: \"…\" }` (or `user`, `assistant`), `{ type: context, name: \
             retriever_or_context }`, or `{ type: history }`"
        }
    }
}

/// `messages: [ … ]` of `owner` (a context). A message that cannot be read becomes an empty
/// system message at a poisoned path: positions stay those the user wrote.
fn messages(dec: &mut Decoder, key: &Word, value: &Value, path: &FieldPath, owner: &str) -> Vec<MessageSpec> {
    dec.locate(path, key.at);
    let Kind::List(items) = &value.kind else {
        let expected = match dec.dialect {
            Dialect::Dsl => "a list `[system: \"…\", user: \"…\"]`",
            Dialect::Yaml => "a list of messages `{ type, … }`",
        };
        dec.wrong_type(value, path, &format!("`messages` of {owner}"), expected);
        return Vec::new();
    };
    let mut out = Vec::new();
    for (j, item) in items.iter().enumerate() {
        let at = path.index(j);
        let message = message(dec, item, &at, owner).unwrap_or_else(|| {
            dec.poison(&at);
            MessageSpec::System { content: String::new() }
        });
        out.push(message);
    }
    out
}

/// What a message holds besides its kind.
enum Body<'v> {
    /// The DSL's value after `kind:`, if any (`history` has none).
    Dsl(Option<&'v Value>),
    /// YAML's block, read with the keys of its `type`.
    Yaml(Block<'v>),
}

/// One message at `path`.
fn message(dec: &mut Decoder, item: &Value, path: &FieldPath, owner: &str) -> Option<MessageSpec> {
    dec.locate(path, item.at);
    let (kind, body) = match (&item.kind, dec.dialect) {
        (Kind::Entry { key, value }, Dialect::Dsl) => (key.clone(), Body::Dsl(Some(&**value))),
        (Kind::Word(word), Dialect::Dsl) => (Word { text: word.clone(), at: item.at }, Body::Dsl(None)),
        (Kind::Map(items), Dialect::Yaml) => {
            let written = |key: &str| {
                items.iter().find_map(|i| match &i.kind {
                    Kind::Entry { key: k, value } if k.text == key => Some(&**value),
                    _ => None,
                })
            };
            let kind = written("type").and_then(|v| match &v.kind {
                Kind::Word(w) | Kind::Str(w) => Some(Word { text: w.clone(), at: v.at }),
                _ => None,
            });
            let extra = kind.as_ref().and_then(|k| MESSAGE_KEYS.iter().find(|(name, _)| *name == k.text));
            let mut allowed = vec!["type"];
            match extra {
                Some((_, keys)) => allowed.extend(keys.iter()),
                None => allowed.extend(MESSAGE_KEYS.iter().flat_map(|(_, keys)| keys.iter())),
            }
            allowed.dedup();
            let label = match &kind {
                Some(k) if extra.is_some() => format!("a `{}` message of {owner}", k.text),
                _ => format!("a message of {owner}"),
            };
            let b = Block::from_items(dec, items, item.at, label, path, &allowed);
            let kind = match (kind, b.get("type")) {
                (Some(kind), _) => kind,
                (None, Some((_, v))) => {
                    dec.wrong_type(v, &path.key("type"), "`type` of a message", "a kind of message, e.g. `user`");
                    return None;
                }
                (None, None) => {
                    b.missing_as(dec, "type", "user");
                    return None;
                }
            };
            (kind, Body::Yaml(b))
        }
        _ => {
            dec.report(
                item.at,
                Code::YamlWrongType,
                path,
                format!("expected a message in `messages` of {owner}, found {}", item.describe()),
                format!("write {}", message_forms(dec.dialect)),
            );
            return None;
        }
    };
    match kind.text.as_str() {
        "system" | "user" | "assistant" => {
            let value = match body {
                Body::Dsl(Some(value)) => value,
                Body::Dsl(None) => return needs_a_value(dec, &kind, path),
                Body::Yaml(b) => b.require(dec, "content")?,
            };
            let what = format!("the template of a `{}` message", kind.text);
            let content = dec.text(value, &path.key("content"), &what)?;
            Some(match kind.text.as_str() {
                "system" => MessageSpec::System { content },
                "user" => MessageSpec::User { content },
                _ => MessageSpec::Assistant { content },
            })
        }
        "context" => {
            let insert = match body {
                Body::Dsl(None) => return needs_a_value(dec, &kind, path),
                Body::Dsl(Some(value)) => match &value.kind {
                    Kind::Named { name, body } => {
                        dec.locate(&path.key("name"), name.at);
                        let b = Block::read(dec, body, format!("pack `{}`", name.text), path, PACK.keys)?;
                        pack(dec, &b, ContextInsert::new(&name.text))
                    }
                    _ => ContextInsert::new(dec.name(value, &path.key("name"), "`context`")?),
                },
                Body::Yaml(b) => {
                    let name = b.require(dec, "name")?;
                    let name = dec.name_or_text(name, &path.key("name"), "`name` of a `context` message")?;
                    pack(dec, &b, ContextInsert::new(name))
                }
            };
            Some(MessageSpec::Context(insert))
        }
        "history" => {
            if let Body::Dsl(Some(value)) = body {
                dec.report(
                    value.at,
                    Code::YamlWrongType,
                    path,
                    "`history` takes no value",
                    "write `history` alone where the caller's history goes",
                );
            }
            Some(MessageSpec::History)
        }
        other => {
            let expected = MESSAGE_KINDS.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
            let help = match did_you_mean(other, MESSAGE_KINDS) {
                Some(near) => format!("did you mean `{near}`?"),
                None => format!("write {}", message_forms(dec.dialect)),
            };
            dec.report(
                kind.at,
                Code::YamlUnknownKey,
                path,
                format!("unknown message `{other}`; expected one of {expected}"),
                help,
            );
            None
        }
    }
}

/// `user` written without its value.
fn needs_a_value<T>(dec: &mut Decoder, kind: &Word, path: &FieldPath) -> Option<T> {
    let example =
        if kind.text == "context" { "context: kb_search".to_owned() } else { format!("{}: \"…\"", kind.text) };
    dec.report(
        kind.at,
        Code::YamlMissingKey,
        path,
        format!("`{}` needs a value", kind.text),
        format!("write `{example}`"),
    );
    None
}

/// A pack's `ratio` (by its row) and `placement`.
fn pack(dec: &mut Decoder, b: &Block<'_>, mut insert: ContextInsert) -> ContextInsert {
    unsure(dec, b, PACK.keys);
    decode_keys(dec, PACK.rows, b, &mut insert);
    let path = b.path.key("placement");
    let Some((_, value)) = present(b, "placement") else { return insert };
    let Some(word) = dec.name(value, &path, &format!("`placement` in {}", b.what)) else { return insert };
    match word.as_str() {
        "variable" => insert.placement = PackPlacement::Variable,
        "message" => insert.placement = PackPlacement::Message,
        _ => {
            dec.poison(&path);
            let expected = PLACEMENTS.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ");
            let help = match did_you_mean(&word, PLACEMENTS) {
                Some(near) => format!("did you mean `{near}`?"),
                None => "`message` sends the pack as its own system message; `variable` only where a template \
                         says `{context.<name>}`"
                    .to_owned(),
            };
            dec.report(
                value.at,
                Code::YamlWrongType,
                &path,
                format!("unknown placement `{word}`; expected one of {expected}"),
                help,
            );
        }
    }
    insert
}
