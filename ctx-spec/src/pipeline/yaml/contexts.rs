//! The top-level `contexts:` of a pipeline file: the context engine's declarations in the
//! engine's own serde form (`contexts`, `retrievers`, `compactors`; messages as
//! `{ type: system, content: "…" }`), every value's location recorded under
//! `contexts.<path>` so that the engine's rules (run by the validation, under the same paths)
//! point at the line that wrote the value.
//!
//! ```yaml
//! contexts:
//!   retrievers:
//!     - { name: kb, query: "{input.user_question}", limit: 3 }
//!   contexts:
//!     - name: support
//!       inputs: [user_question]
//!       policy: { input_budget: { max_tokens: 3000 } }
//!       messages:
//!         - { type: system, content: "Answer from the documents." }
//!         - { type: context, name: kb }
//!         - { type: user, content: "{input.user_question}" }
//! ```

use super::error::YamlIssue;
use super::fields::Sink;
use super::node::{Node, Value};
use crate::codes::Code;
use crate::engine::{ContextDeclaration, EngineSpec, RetrieverDecl};
use crate::validation::{FieldPath, did_you_mean};

/// The keys of each mapping of the engine's form, by where the mapping sits.
pub(super) const ENGINE: &[&str] = &["contexts", "retrievers", "compactors"];
pub(super) const CONTEXT: &[&str] = &["name", "inputs", "policy", "messages"];
pub(super) const RETRIEVER: &[&str] = &["name", "query", "limit"];
pub(super) const MESSAGE: &[&str] = &["type", "content", "name", "ratio", "placement"];
pub(super) const POLICY: &[&str] = &["input_budget", "pack_budget", "overflow", "compactor", "expansion"];

/// Decodes `contexts:`. `None` (with the problems reported) when a declaration cannot be read.
pub(crate) fn decode_contexts(sink: &mut Sink, node: &Node) -> Option<EngineSpec> {
    let path = FieldPath::root().key("contexts");
    locate_all(sink, &path, node);
    if node.is_null() {
        return Some(EngineSpec::default());
    }
    let Some(entries) = node.as_map() else {
        sink.wrong_type(node, "`contexts`", "a mapping of `contexts`, `retrievers` and `compactors`");
        return None;
    };
    let before = sink.issues.len();
    check_keys(sink, node, "`contexts`", ENGINE);
    let mut spec = EngineSpec::default();
    for (key, value) in entries {
        match key.as_text() {
            Some("contexts") => {
                spec.contexts = items(sink, value, "context", |sink, item| {
                    check_keys(sink, item, "a context", CONTEXT);
                    if let Some(policy) = item.get("policy") {
                        check_keys(sink, policy, "`policy`", POLICY);
                    }
                    for message in item.get("messages").and_then(Node::as_seq).unwrap_or_default() {
                        check_keys(sink, message, "a message", MESSAGE);
                    }
                    read::<ContextDeclaration>(sink, item, "a context")
                })?
            }
            Some("retrievers") => {
                spec.retrievers = items(sink, value, "retriever", |sink, item| {
                    check_keys(sink, item, "a retriever", RETRIEVER);
                    read::<RetrieverDecl>(sink, item, "a retriever")
                })?
            }
            Some("compactors") => spec.compactors = read(sink, value, "`compactors`")?,
            _ => {}
        }
    }
    (sink.issues.len() == before).then_some(spec)
}

/// Each item of the list `node`, read by `item`; every item is read, so each problem is reported.
fn items<T>(
    sink: &mut Sink,
    node: &Node,
    what: &str,
    mut item: impl FnMut(&mut Sink, &Node) -> Option<T>,
) -> Option<Vec<T>> {
    let Some(list) = node.as_seq() else {
        sink.wrong_type(node, &format!("the {what}s"), &format!("a list of {what}s"));
        return None;
    };
    let read: Vec<Option<T>> = list.iter().map(|n| item(sink, n)).collect();
    read.into_iter().collect()
}

/// `node` read with the engine's serde form, a problem located at the node.
fn read<T: serde::de::DeserializeOwned>(sink: &mut Sink, node: &Node, what: &str) -> Option<T> {
    match serde_json::from_value(json(node)) {
        Ok(value) => Some(value),
        Err(e) => {
            sink.issues.push(
                YamlIssue::new(&node.at, Code::YamlWrongType, format!("{what} of `contexts` cannot be read: {e}"))
                    .with_help(
                        "write the context engine's declarations: contexts `{ name, inputs, policy, messages }`, \
                         messages `{ type: system | user | assistant, content }`, `{ type: context, name }` or \
                         `{ type: history }`, retrievers `{ name, query, limit }`",
                    ),
            );
            None
        }
    }
}

/// Reports each key of the mapping `node` that is not among `allowed` (serde would skip it).
fn check_keys(sink: &mut Sink, node: &Node, what: &str, allowed: &[&str]) {
    for (key, _) in node.as_map().unwrap_or_default() {
        let Some(text) = key.as_text() else { continue };
        if allowed.contains(&text) {
            continue;
        }
        let help = match did_you_mean(text, allowed.iter().copied()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("{what} has the keys {}", allowed.join(", ")),
        };
        sink.issues.push(
            YamlIssue::new(&key.at, Code::YamlUnknownKey, format!("unknown key `{text}` in {what}")).with_help(help),
        );
    }
}

/// Records the location of every value under `path`: mapping keys as keys, list items by index,
/// which are the paths the engine's rules report (`contexts.contexts[0].messages[1].name`).
fn locate_all(sink: &mut Sink, path: &FieldPath, node: &Node) {
    sink.locate(path, node);
    match &node.value {
        Value::Map(entries) => {
            for (key, value) in entries {
                if let Some(k) = key.as_text() {
                    locate_all(sink, &path.key(k), value);
                }
            }
        }
        Value::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                locate_all(sink, &path.index(i), item);
            }
        }
        Value::Scalar { .. } => {}
    }
}

/// A node as JSON: a plain scalar as YAML reads it (null, boolean, integer, number or text), a
/// quoted one as text.
pub(super) fn json(node: &Node) -> serde_json::Value {
    use serde_json::Value as J;
    match &node.value {
        Value::Scalar { text, plain: false } => J::String(text.clone()),
        Value::Scalar { .. } if node.is_null() => J::Null,
        Value::Scalar { text, .. } => {
            if let Some(b) = node.as_bool() {
                J::Bool(b)
            } else if let Some(i) = node.as_int() {
                J::from(i)
            } else if let Some(n) = node.as_number().and_then(serde_json::Number::from_f64) {
                J::Number(n)
            } else {
                J::String(text.clone())
            }
        }
        Value::Seq(items) => J::Array(items.iter().map(json).collect()),
        Value::Map(entries) => {
            J::Object(entries.iter().filter_map(|(k, v)| Some((k.as_text()?.to_owned(), json(v)))).collect())
        }
    }
}
