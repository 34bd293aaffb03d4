//! The top-level `contexts:` of a pipeline file: the context engine's declarations in the
//! engine's own serde form (`contexts`, `retrievers`, `compactors`; messages as
//! `{ type: system, content: "…" }`), read by the decoder `pipeline!` and `context_engine!`
//! share ([`read_engine`]), every value's location recorded under `contexts.<path>` so that the
//! engine's rules (run by the validation, under the same paths) point at the line that wrote it.
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

use super::fields::Sink;
use super::node::Node;
use super::steps::decoding;
use crate::engine::EngineSpec;
use crate::pipeline::decode::{Kind, read_engine};
use crate::validation::FieldPath;

/// Decodes `contexts:` with the decoder `pipeline!` shares, each value located under
/// `contexts.<path>`. `None` (reported) when it is not a mapping; otherwise the declarations,
/// what could not be read left out or standing as placeholders at poisoned paths.
pub(crate) fn decode_contexts(sink: &mut Sink, node: &Node) -> Option<EngineSpec> {
    let path = FieldPath::root().key("contexts");
    sink.locate(&path, node);
    if node.is_null() {
        return Some(EngineSpec::default());
    }
    decoding(sink, |tree, dec| {
        let value = tree.value(node);
        let Kind::Map(items) = &value.kind else {
            dec.wrong_type(&value, &path, "`contexts`", "a mapping of `contexts`, `retrievers` and `compactors`");
            return None;
        };
        Some(read_engine(dec, items, value.at, "`contexts`".to_owned(), &path))
    })
}

/// A node as JSON, which the JSON Schema tests validate: a plain scalar as YAML reads it (null,
/// boolean, integer, number or text), a quoted one as text.
#[cfg(test)]
pub(super) fn json(node: &Node) -> serde_json::Value {
    use super::node::Value;
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
