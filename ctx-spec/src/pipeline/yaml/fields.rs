//! Reading a YAML mapping's fields with their types: each read records the value's location
//! under its [`FieldPath`], each problem becomes a located [`YamlIssue`], and keys that no
//! reader knows are reported with a "did you mean" suggestion.

use std::collections::{BTreeMap, BTreeSet};

use super::error::{Location, YamlIssue};
use super::node::Node;
use super::sources::Sources;
use crate::codes::Code;
use crate::validation::{FieldPath, did_you_mean};

/// What decoding collects: the problems, and where each field was written.
#[derive(Debug)]
pub(crate) struct Sink {
    pub issues: Vec<YamlIssue>,
    pub locations: BTreeMap<FieldPath, Location>,
    /// Prompt files read while decoding.
    pub sources: Sources,
    /// The paths whose value could not be read (a placeholder stands there).
    pub poisoned: BTreeSet<FieldPath>,
    /// Whether every step and transition was read as written.
    pub graph_complete: bool,
}

impl Default for Sink {
    fn default() -> Self {
        Sink {
            issues: Vec::new(),
            locations: BTreeMap::new(),
            sources: Sources::default(),
            poisoned: BTreeSet::new(),
            graph_complete: true,
        }
    }
}

impl Sink {
    /// Records where `path` was written.
    pub(crate) fn locate(&mut self, path: &FieldPath, node: &Node) {
        self.locations.entry(path.clone()).or_insert_with(|| node.at.clone());
    }

    /// A value of the wrong type.
    pub(crate) fn wrong_type(&mut self, node: &Node, what: &str, expected: &str) {
        self.issues.push(
            YamlIssue::new(
                &node.at,
                Code::YamlWrongType,
                format!("{what} must be {expected}, found {}", node.describe()),
            )
            .with_help(format!("write {expected}")),
        );
    }

    /// Reads `node` as text (a scalar that is not null).
    pub(crate) fn text(&mut self, node: &Node, path: &FieldPath, what: &str) -> Option<String> {
        self.locate(path, node);
        match node.as_text() {
            Some(t) => Some(t.to_owned()),
            None => {
                self.wrong_type(node, what, "a string");
                None
            }
        }
    }
}

/// The fields of one mapping, by key, with the keys it may hold.
pub(crate) struct Fields<'n> {
    /// The mapping node (missing keys are reported at it).
    pub node: &'n Node,
    /// What the mapping is, for messages ("step `manage_budget`").
    pub what: String,
    entries: Vec<(&'n str, &'n Node, &'n Node)>,
}

impl<'n> Fields<'n> {
    /// The fields of `node`, which must be a mapping of scalar keys among `allowed`; every
    /// problem (not a mapping, unknown or duplicate key) is reported to `sink`. `None` when
    /// `node` is not a mapping.
    pub(crate) fn read(sink: &mut Sink, node: &'n Node, what: impl Into<String>, allowed: &[&str]) -> Option<Self> {
        let what = what.into();
        let Some(map) = node.as_map() else {
            sink.wrong_type(node, &what, "a mapping");
            return None;
        };
        let mut entries: Vec<(&str, &Node, &Node)> = Vec::new();
        for (k, v) in map {
            let Some(key) = k.as_text() else {
                sink.wrong_type(k, &format!("a key in {what}"), "a string");
                continue;
            };
            if let Some((_, first, _)) = entries.iter().find(|(name, _, _)| *name == key) {
                sink.issues.push(
                    YamlIssue::new(&k.at, Code::YamlDuplicateKey, format!("duplicate key `{key}` in {what}"))
                        .with_help(format!("the first `{key}` is at line {}", first.at.line)),
                );
                continue;
            }
            if !allowed.contains(&key) {
                let expected = allowed.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ");
                let mut message = format!("unknown key `{key}` in {what}; expected one of {expected}");
                if let Some(near) = did_you_mean(key, allowed.iter().copied()) {
                    message.push_str(&format!(", did you mean `{near}`?"));
                }
                let issue = YamlIssue::new(&k.at, Code::YamlUnknownKey, message);
                sink.issues.push(match did_you_mean(key, allowed.iter().copied()) {
                    Some(near) => issue.with_help(format!("rename it to `{near}`")),
                    None => issue.with_help("remove it"),
                });
                continue;
            }
            entries.push((key, k, v));
        }
        Some(Fields { node, what, entries })
    }

    /// The value of `key`, when written.
    pub(crate) fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries.iter().find(|(k, _, _)| *k == key).map(|(_, _, v)| *v)
    }

    /// The value of `key`, or a `YAML_MISSING_KEY` issue at the mapping.
    pub(crate) fn require(&self, sink: &mut Sink, key: &str) -> Option<&'n Node> {
        let value = self.get(key);
        if value.is_none() {
            sink.issues.push(
                YamlIssue::new(&self.node.at, Code::YamlMissingKey, format!("{} has no `{key}`", self.what))
                    .with_help(format!("add `{key}: …`")),
            );
        }
        value
    }

    /// The written keys, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = (&'n str, &'n Node, &'n Node)> + '_ {
        self.entries.iter().copied()
    }

    /// `key` read as text, when written.
    pub(crate) fn text(&self, sink: &mut Sink, key: &str, path: &FieldPath) -> Option<String> {
        let node = self.get(key)?;
        sink.text(node, &path.key(key), &format!("`{key}` in {}", self.what))
    }
}
