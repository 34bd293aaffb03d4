//! Lists of named blocks, read the same way wherever a key holds them (an agent's `tools`, its
//! `mcp_servers`, the context engine's `contexts` and `retrievers`): the DSL's
//! `[ name { key: … }, … ]` (or, where a form says so, its block `{ name { key: … } … }`), YAML's
//! list of `{ name, key, … }` and, where a form allows it, YAML's mapping `{ name: { key: … } }`.
//! Each item's name and block are located and read here; what its keys mean is the caller's.

use super::block::Block;
use super::decoder::{Decoder, Dialect};
use super::value::{Kind, Value};
use crate::codes::Code;
use crate::validation::FieldPath;

/// How one kind of named block is written.
pub(super) struct NamedForm<'f> {
    /// How messages name one item ("tool", "MCP server").
    pub(super) noun: &'f str,
    /// The same with its article ("a tool", "an MCP server").
    pub(super) a_noun: &'f str,
    /// The keys of an item's block besides its name.
    pub(super) keys: &'f [&'f str],
    /// Whether YAML may also write the items as a mapping by name.
    pub(super) yaml_mapping: bool,
    /// Whether the DSL writes the items as a block by name (`retrievers { kb { … } }`) rather
    /// than as a list.
    pub(super) dsl_block: bool,
    /// What to write instead, per dialect, when the value is not such a list.
    pub(super) expected_dsl: &'f str,
    /// As `expected_dsl`, for YAML.
    pub(super) expected_yaml: &'f str,
    /// Reads the name of YAML's list form (`name: …`): text only, or a bare name too.
    pub(super) name: fn(&mut Decoder, &Value, &FieldPath, &str) -> Option<String>,
    /// How messages name that key ("`name` of a tool").
    pub(super) name_what: &'f str,
}

/// One item: its path (`…[j]`), its name and its block (each `None` when it could not be read:
/// reported, and the caller then poisons the path).
pub(super) struct Named<'v> {
    pub(super) at: FieldPath,
    pub(super) name: Option<String>,
    pub(super) block: Option<Block<'v>>,
}

/// The items of `value` at `path` (`what` names the key in messages), each one a [`Named`], one
/// per item written so that the `j`-th is at `…[j]`; `None` (reported) when `value` is not a
/// list (or block, or mapping) of them. An item that is not a block is reported, its path
/// poisoned.
pub(super) fn named_blocks<'v>(
    dec: &mut Decoder,
    value: &'v Value,
    path: &FieldPath,
    what: &str,
    form: &NamedForm<'_>,
) -> Option<Vec<Named<'v>>> {
    dec.locate(path, value.at);
    let expected = match dec.dialect {
        Dialect::Dsl => form.expected_dsl,
        Dialect::Yaml => form.expected_yaml,
    };
    let items = match (&value.kind, dec.dialect) {
        (Kind::List(items), Dialect::Yaml) => items,
        (Kind::List(items), Dialect::Dsl) if !form.dsl_block => items,
        (Kind::Map(items), Dialect::Yaml) if form.yaml_mapping => items,
        (Kind::Map(items), Dialect::Dsl) if form.dsl_block => items,
        _ => {
            dec.wrong_type(value, path, what, expected);
            return None;
        }
    };
    let by_name = match dec.dialect {
        Dialect::Yaml => form.yaml_mapping,
        Dialect::Dsl => form.dsl_block,
    };
    let mut out = Vec::new();
    for (j, item) in items.iter().enumerate() {
        let at = path.index(j);
        dec.locate(&at, item.at);
        let (name, body) = match &item.kind {
            Kind::Named { name, body } if !by_name => (name, &**body),
            Kind::Entry { key, value } if by_name => (key, &**value),
            Kind::Map(_) if dec.dialect == Dialect::Yaml => {
                let label = format!("{} {j} of {what}", form.noun);
                let mut keys = vec!["name"];
                keys.extend(form.keys);
                let block = Block::read(dec, item, label, &at, &keys);
                let name = block
                    .as_ref()
                    .and_then(|b| b.require(dec, "name"))
                    .and_then(|v| (form.name)(dec, v, &at.key("name"), form.name_what));
                out.push(Named { at, name, block });
                continue;
            }
            _ => {
                dec.poison(&at);
                dec.report(
                    item.at,
                    Code::YamlWrongType,
                    &at,
                    format!("expected {} in {what}", form.a_noun),
                    format!("write {expected}"),
                );
                out.push(Named { at, name: None, block: None });
                continue;
            }
        };
        dec.locate(&at.key("name"), name.at);
        let label = format!("{} `{}`", form.noun, name.text);
        // A missing key is reported under the item's name, as a step's is under its kind.
        let block = match (&body.kind, dec.dialect) {
            (Kind::Map(items), _) => Some(Block::from_items(dec, items, name.at, label, &at, form.keys)),
            (_, Dialect::Yaml) => Block::read(dec, body, label, &at, form.keys),
            _ => {
                dec.wrong_type(body, &at, &label, "a block `{ … }`");
                None
            }
        };
        out.push(Named { at, name: Some(name.text.clone()), block });
    }
    Some(out)
}
