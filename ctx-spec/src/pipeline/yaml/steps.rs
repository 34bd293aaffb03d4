//! The `steps:` list: each step a mapping with `id:`, `action:` (the step kind's keyword) and
//! the kind's keys, turned into the located value tree and decoded by the one schema-driven
//! decoder ([`decode_step`]), which the `pipeline!` macro shares.

use super::error::{Location, YamlIssue};
use super::fields::Sink;
use super::node::{Node, Value as NodeValue};
use crate::codes::Code;
use crate::pipeline::decode::{Decoder, Dialect, Kind, Loc, Value, Word, kinds, read_step};
use crate::pipeline::definition::{CustomSpec, StepDef, StepKind};
use crate::pipeline::schema::{STEP_SCHEMAS, StepSchema};
use crate::validation::{FieldPath, did_you_mean};

/// YAML nodes as located values; a value's [`Loc`] indexes `locations`.
#[derive(Default)]
pub(crate) struct Tree {
    locations: Vec<Location>,
}

impl Tree {
    fn loc(&mut self, at: &Location) -> Loc {
        self.locations.push(at.clone());
        Loc(u32::try_from(self.locations.len() - 1).unwrap_or(u32::MAX))
    }

    pub(crate) fn at(&self, loc: Loc) -> &Location {
        // Every Loc was made by `loc`; the first location stands in for any other.
        self.locations.get(loc.0 as usize).unwrap_or(&self.locations[0])
    }

    /// `node` as a value: plain scalars typed by the YAML 1.2 core schema, quoted ones strings,
    /// a mapping's entries `key: value` (a key that is not a scalar is left as a bare item,
    /// which the decoder reports).
    pub(crate) fn value(&mut self, node: &Node) -> Value {
        let at = self.loc(&node.at);
        let kind = match &node.value {
            NodeValue::Scalar { text, plain: false } => Kind::Str(text.clone()),
            NodeValue::Scalar { .. } if node.is_null() => Kind::Null,
            NodeValue::Scalar { text, plain: true } => match (node.as_bool(), node.as_int(), node.as_number()) {
                (Some(b), _, _) => Kind::Bool(b),
                (_, Some(n), _) => Kind::Int(n),
                _ if looks_integer(text) => Kind::IntTooLarge(text.clone()),
                (_, _, Some(n)) => Kind::Number(n),
                _ => Kind::Word(text.clone()),
            },
            NodeValue::Seq(items) => Kind::List(items.iter().map(|n| self.value(n)).collect()),
            NodeValue::Map(entries) => Kind::Map(
                entries
                    .iter()
                    .map(|(k, v)| match k.as_text() {
                        Some(text) => {
                            let at = self.loc(&k.at);
                            let value = Box::new(self.value(v));
                            Value::new(Kind::Entry { key: Word { text: text.to_owned(), at }, value }, at)
                        }
                        None => self.value(k),
                    })
                    .collect(),
            ),
        };
        Value::new(kind, at)
    }
}

fn looks_integer(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Runs `f` with a located tree and a YAML decoder, then hands what the decoder found to `sink`:
/// each problem located in the file, each path read, each poisoned path.
pub(crate) fn decoding<R>(sink: &mut Sink, f: impl FnOnce(&mut Tree, &mut Decoder) -> R) -> R {
    let mut tree = Tree::default();
    let mut dec = Decoder::new(Dialect::Yaml);
    let out = f(&mut tree, &mut dec);
    for found in dec.issues.drain(..) {
        let i = found.issue;
        sink.issues.push(YamlIssue::new(tree.at(found.at), i.code, i.message).with_help_opt(i.help));
    }
    for (p, at) in &dec.locations {
        sink.locations.entry(p.clone()).or_insert_with(|| tree.at(*at).clone());
    }
    sink.poisoned.append(&mut dec.poisoned);
    out
}

/// Decodes the `steps:` node. `None` when it is not a list; otherwise every step, those that
/// could not be read whole standing as placeholders at poisoned paths.
pub(crate) fn decode_steps(sink: &mut Sink, node: &Node) -> Option<Vec<StepDef>> {
    let path = FieldPath::root().key("steps");
    sink.locate(&path, node);
    let Some(items) = node.as_seq() else {
        sink.wrong_type(node, "`steps`", "a list of steps");
        return None;
    };
    let (steps, complete) = decoding(sink, |tree, dec| {
        let steps: Vec<StepDef> = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let value = tree.value(item);
                decode_step_entry(dec, &value, &path.index(i), i)
            })
            .collect();
        let complete = dec.graph_complete(&steps);
        (steps, complete)
    });
    sink.graph_complete &= complete;
    Some(steps)
}

/// One step: `id`, `action`, then the kind's keys.
fn decode_step_entry(dec: &mut Decoder, value: &Value, path: &FieldPath, index: usize) -> StepDef {
    dec.locate(path, value.at);
    let placeholder = |dec: &mut Decoder, id: Option<String>| {
        dec.poison(path);
        StepDef::new(id.unwrap_or_default(), StepKind::Custom(CustomSpec::default()))
    };
    let Kind::Map(items) = &value.kind else {
        dec.wrong_type(value, path, &format!("`steps[{index}]`"), "a mapping with `id:` and `action:`");
        return placeholder(dec, None);
    };
    let get = |key: &str| {
        items.iter().find_map(|item| match &item.kind {
            Kind::Entry { key: k, value } if k.text == key => Some(&**value),
            _ => None,
        })
    };
    let id = match get("id") {
        Some(v) => dec.text(v, &path.key("id"), "a step's `id`"),
        None => {
            dec.report(value.at, Code::YamlMissingKey, &path.key("id"), "a step has no `id`", "add `id: <step id>`");
            None
        }
    };
    if id.is_none() {
        dec.poison(&path.key("id"));
    }
    let what = match &id {
        Some(id) => format!("step `{id}`"),
        None => "a step".to_owned(),
    };
    let Some(action_value) = get("action") else {
        let help = format!("add `action: <kind>`, one of {}", kinds());
        dec.report(value.at, Code::YamlMissingKey, &path.key("action"), format!("{what} has no `action`"), help);
        return placeholder(dec, id);
    };
    let Some(action) = dec.text(action_value, &path.key("action"), &format!("`action` of {what}")) else {
        return placeholder(dec, id);
    };
    let Some(schema) = StepSchema::of(&action) else {
        let mut message = format!("unknown action `{action}` in {what}; expected one of {}", kinds());
        let near = did_you_mean(&action, STEP_SCHEMAS.iter().map(|s| s.kind));
        if let Some(near) = near {
            message.push_str(&format!(", did you mean `{near}`?"));
        }
        let help = match near {
            Some(n) => format!("write `action: {n}`"),
            None => "a step written in code is `action: custom` with its `outcomes`".to_owned(),
        };
        dec.report(action_value.at, Code::YamlUnknownAction, &path.key("action"), message, help);
        return placeholder(dec, id);
    };
    let kind = read_step(dec, schema, items, value.at, what, path, &["id", "action"]);
    StepDef::new(id.unwrap_or_default(), kind)
}
