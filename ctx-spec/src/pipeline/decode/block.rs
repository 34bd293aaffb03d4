//! One `{ … }` block (a YAML mapping) read by key: unknown and duplicate keys reported as the
//! block is read, missing ones when asked for, and a key that is explained elsewhere — written
//! malformed (`max_tokens = 2_000`), or misspelt next to a suggestion — never also "missing".

use super::decoder::Decoder;
use super::value::{Kind, Loc, Value, Word};
use crate::codes::Code;
use crate::validation::{FieldPath, did_you_mean};

/// The entries of one block.
#[derive(Debug)]
pub struct Block<'v> {
    /// How messages name the block ("step `answer`").
    pub what: String,
    /// Where "missing key" problems point.
    pub at: Loc,
    /// The block's path; a key's path is `path.key(key)`.
    pub path: FieldPath,
    entries: Vec<(&'v Word, &'v Value)>,
    /// Keys already reported: written malformed, or misspelt with this key suggested.
    explained: Vec<String>,
}

impl<'v> Block<'v> {
    /// The entries of `value`, which must be a map whose keys are among `allowed`. `None`
    /// (reported, path poisoned) when it is not a map.
    pub fn read(
        dec: &mut Decoder,
        value: &'v Value,
        what: impl Into<String>,
        path: &FieldPath,
        allowed: &[&str],
    ) -> Option<Self> {
        let what = what.into();
        dec.locate(path, value.at);
        let Kind::Map(items) = &value.kind else {
            dec.wrong_type(value, path, &what, "a mapping");
            return None;
        };
        Some(Self::from_items(dec, items, value.at, what, path, allowed))
    }

    /// The entries of `items` (a block's contents), which may only be `key: value` with keys
    /// among `allowed`; problems point at `at` when no item is to blame.
    pub fn from_items(
        dec: &mut Decoder,
        items: &'v [Value],
        at: Loc,
        what: String,
        path: &FieldPath,
        allowed: &[&str],
    ) -> Self {
        Self::from_items_hiding(dec, items, at, what, path, allowed, &[])
    }

    /// As [`Block::from_items`], with the keys `hidden` (older spellings) read but neither
    /// listed nor suggested when a key is unknown.
    pub fn from_items_hiding(
        dec: &mut Decoder,
        items: &'v [Value],
        at: Loc,
        what: String,
        path: &FieldPath,
        allowed: &[&str],
        hidden: &[&str],
    ) -> Self {
        let listed: Vec<&str> = allowed.iter().copied().filter(|a| !hidden.contains(a)).collect();
        let mut block = Block { what, at, path: path.clone(), entries: Vec::new(), explained: Vec::new() };
        for item in items {
            let (key, value) = match &item.kind {
                Kind::Entry { key, value } => (key, &**value),
                other => {
                    let (message, help) = match other {
                        Kind::Assign { target, .. } => {
                            block.explained.push(target.text.clone());
                            (
                                format!("expected `key: value` in {}", block.what),
                                format!("write `{}: …` with a colon, not `=`", target.text),
                            )
                        }
                        Kind::Arrow { from: key, .. } | Kind::Copy { target: key, .. } => {
                            block.explained.push(key.text.clone());
                            (
                                format!("expected `key: value` in {}", block.what),
                                "write entries as `key: value`, separated by commas".to_owned(),
                            )
                        }
                        _ => (
                            format!("expected `key: value` in {}, found {}", block.what, item.describe()),
                            "write entries as `key: value`".to_owned(),
                        ),
                    };
                    dec.report(item.at, Code::YamlWrongType, &block.path, message, help);
                    continue;
                }
            };
            if block.entries.iter().any(|(k, _)| k.text == key.text) {
                dec.report(
                    key.at,
                    Code::YamlDuplicateKey,
                    &block.path.key(&key.text),
                    format!("duplicate key `{}` in {}", key.text, block.what),
                    format!("`{}` is already set above; remove one of the two", key.text),
                );
                continue;
            }
            if !allowed.contains(&key.text.as_str()) {
                let expected = listed.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ");
                let near = did_you_mean(&key.text, listed.iter().copied());
                let mut message = format!("unknown key `{}` in {}; expected one of {expected}", key.text, block.what);
                if let Some(near) = near {
                    message.push_str(&format!(", did you mean `{near}`?"));
                    block.explained.push(near.to_owned());
                }
                let help = match near {
                    Some(near) => format!("rename it to `{near}`"),
                    None => "remove it".to_owned(),
                };
                dec.report(key.at, Code::YamlUnknownKey, &block.path.key(&key.text), message, help);
                continue;
            }
            block.entries.push((key, value));
        }
        block
    }

    /// Every entry read, in the order written.
    pub fn entries(&self) -> impl Iterator<Item = (&'v Word, &'v Value)> + '_ {
        self.entries.iter().copied()
    }

    /// `key`'s entry, when written.
    pub fn get(&self, key: &str) -> Option<(&'v Word, &'v Value)> {
        self.entries.iter().find(|(k, _)| k.text == key).copied()
    }

    /// Whether `key` is already reported (written malformed, or suggested for a misspelt key).
    pub fn is_explained(&self, key: &str) -> bool {
        self.explained.iter().any(|k| k == key)
    }

    /// `key`'s value; when absent, a missing-key problem (unless already explained) and its path
    /// poisoned.
    pub fn require(&self, dec: &mut Decoder, key: &str) -> Option<&'v Value> {
        if let Some((_, value)) = self.get(key) {
            return Some(value);
        }
        self.missing(dec, key);
        None
    }

    /// Reports `key` missing (unless explained) and poisons its path.
    pub fn missing(&self, dec: &mut Decoder, key: &str) {
        self.missing_as(dec, key, "…");
    }

    /// Reports `key` missing (unless explained), its help showing `example` as the value, and
    /// poisons its path.
    pub fn missing_as(&self, dec: &mut Decoder, key: &str, example: &str) {
        let path = self.path.key(key);
        dec.poison(&path);
        if !self.is_explained(key) {
            dec.report(
                self.at,
                Code::YamlMissingKey,
                &path,
                format!("{} has no `{key}`", self.what),
                format!("add `{key}: {example}`"),
            );
        }
    }
}
