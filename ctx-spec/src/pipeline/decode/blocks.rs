//! The top-level blocks `model { … }` and `settings { … }` decoded by their schema rows
//! ([`MODEL_KEYS`], [`SETTINGS_KEYS`]), the same way for the `pipeline!` macro and the YAML
//! reader. The outer forms each front end has of its own (`model: config("…")`, YAML's
//! `model: gpt-4o` and top-level `config:`) stay with the front end.

use super::block::Block;
use super::decoder::Decoder;
use super::steps::decode_keys;
use super::value::{Kind, Value};
use crate::codes::Code;
use crate::pipeline::definition::{ModelSpec, SettingsSpec};
use crate::pipeline::schema::{KeySchema, MODEL_KEYS, SETTINGS_KEYS};
use crate::validation::{FieldPath, Likeness, did_you_mean_by};

/// The names and the older spellings of `keys`.
fn names<T>(keys: &[KeySchema<T>]) -> (Vec<&'static str>, Vec<&'static str>) {
    let aliases = keys.iter().flat_map(|k| k.aliases.iter().copied()).collect();
    (keys.iter().map(|k| k.name).collect(), aliases)
}

/// `model { … }` (at `path`), whose keys are [`MODEL_KEYS`] plus the front end's own `extra`
/// (YAML's `config`). `None` (reported) when `value` is not a mapping; otherwise the spec, with
/// what could not be read left unset at a poisoned path, and the block, for the `extra` keys.
pub fn read_model<'v>(
    dec: &mut Decoder,
    value: &'v Value,
    path: &FieldPath,
    extra: &[&str],
) -> Option<(ModelSpec, Block<'v>)> {
    dec.locate(path, value.at);
    let Kind::Map(items) = &value.kind else {
        dec.wrong_type(value, path, "`model`", "a mapping");
        return None;
    };
    let (mut allowed, aliases) = names(MODEL_KEYS);
    allowed.extend(extra);
    allowed.extend(&aliases);
    let block = Block::from_items_hiding(dec, items, value.at, "`model`".into(), path, &allowed, &aliases);
    let mut spec = ModelSpec::default();
    decode_keys(dec, MODEL_KEYS, &block, &mut spec);
    // `gguf` is `tokenizer` that also says what kind of file it names.
    let tokenizer = path.key("tokenizer");
    if let (Some((_, written)), Some(file)) = (block.get("gguf"), &spec.tokenizer)
        && !file.to_ascii_lowercase().ends_with(".gguf")
        && !dec.is_poisoned(&tokenizer)
    {
        dec.poison(&tokenizer);
        dec.report(
            written.at,
            Code::YamlWrongType,
            &tokenizer,
            format!("`gguf` names `{file}`, not a `.gguf` file"),
            "use `tokenizer:` for a `tokenizer.json`",
        );
        spec.tokenizer = None;
    }
    // A tokenizer written but unreadable here (both spellings, or a `gguf` that is not one):
    // whether the model still needs an `encoding` or a `context_window` depends on the file it
    // was meant to name, so those checks would only echo the mistake already reported.
    if dec.is_poisoned(&tokenizer) && spec.tokenizer.is_none() {
        dec.poison(&path.key("encoding"));
        dec.poison(&path.key("context_window"));
    }
    Some((spec, block))
}

/// `models { small { … }, strong { … } }` (at `path`): each name a model block read by
/// [`read_model`], in declaration order. `null` is no named model. `None` (reported) when `value`
/// is not a mapping; a model whose block could not be read is left out (its issue reported), and
/// each name is located at its own token, where the rules about the name point.
pub fn read_models(dec: &mut Decoder, value: &Value, path: &FieldPath) -> Option<Vec<(String, ModelSpec)>> {
    let Some(block) = named_block(dec, value, path, "`models`", "a mapping of names to model blocks")? else {
        return Some(Vec::new());
    };
    let mut models = Vec::new();
    for (name, value) in block.entries() {
        let at = path.key(&name.text);
        dec.locate(&at, name.at);
        if let Some((spec, _)) = read_model(dec, value, &at, &[]) {
            models.push((name.text.clone(), spec));
        }
    }
    Some(models)
}

/// A block whose every written name is one of its keys (`settings`, `models`), located at `path`:
/// `Some(None)` for `null` (an empty block), `None` (reported) when `value` is not a mapping.
/// Duplicate and malformed entries are reported by [`Block::from_items`].
fn named_block<'v>(
    dec: &mut Decoder,
    value: &'v Value,
    path: &FieldPath,
    what: &str,
    expected: &str,
) -> Option<Option<Block<'v>>> {
    dec.locate(path, value.at);
    let items = match &value.kind {
        Kind::Null => return Some(None),
        Kind::Map(items) => items,
        _ => {
            dec.wrong_type(value, path, what, expected);
            return None;
        }
    };
    let written: Vec<&str> = items
        .iter()
        .filter_map(|item| match &item.kind {
            Kind::Entry { key, .. } => Some(key.text.as_str()),
            _ => None,
        })
        .collect();
    Some(Some(Block::from_items(dec, items, value.at, what.to_owned(), path, &written)))
}

/// `settings { … }` (at `path`): the keys of [`SETTINGS_KEYS`], and any other name an integer
/// setting (read by steps such as `loop_guard`). `null` is no settings. `None` (reported) when
/// `value` is not a mapping.
pub fn read_settings(dec: &mut Decoder, value: &Value, path: &FieldPath) -> Option<SettingsSpec> {
    // Every name is a key (a named setting); duplicates and malformed entries are still reported.
    let Some(block) = named_block(dec, value, path, "`settings`", "a mapping")? else {
        return Some(SettingsSpec::default());
    };
    let mut spec = SettingsSpec::default();
    decode_keys(dec, SETTINGS_KEYS, &block, &mut spec);
    let (typed, _) = names(SETTINGS_KEYS);
    for (key, value) in block.entries() {
        if typed.contains(&key.text.as_str()) {
            continue;
        }
        let at = path.key(&key.text);
        if let Kind::Int(n) = value.kind {
            dec.locate(&at, value.at);
            spec.extra.insert(key.text.clone(), n);
            continue;
        }
        // A misspelt typed setting would otherwise read as a named integer and fail on its value;
        // only a typo is suggested, since named settings (`max_turn_loops`) look like typed ones.
        match did_you_mean_by(&key.text, typed.iter().copied(), Likeness::Typo) {
            Some(near) => {
                dec.locate(&at, key.at);
                dec.poison(&at);
                dec.report(
                    key.at,
                    Code::YamlUnknownKey,
                    &at,
                    format!("unknown setting `{}`", key.text),
                    format!("did you mean `{near}`?"),
                );
            }
            None => {
                dec.int(value, &at, &format!("setting `{}` (a named setting is an integer)", key.text));
            }
        }
    }
    Some(spec)
}
