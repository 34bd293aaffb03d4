//! Keyed access to one `{ … }` block, the way the lowering reads it: take each known key once,
//! then report every key nobody took. Duplicate keys, missing required keys and values of the
//! wrong type are reported here, under the offending token, with the fix spelled out.

use ctx_spec::validation::FieldPath;
use proc_macro2::Ident;

use crate::ast::{Item, Items, Value};
use crate::ctxt::Ctxt;
use crate::spans::{SpanMap, SpanRange};
use crate::symbol::{Symbol, one_of};

pub(crate) use crate::ctxt::with_help;

/// `ctx_spec`'s one "did you mean" rule, so a key misspelt in the DSL and one misspelt in a
/// `config.json` get the same suggestion.
pub(crate) use ctx_spec::validation::did_you_mean;

/// The entries of one block, consumed key by key.
pub(crate) struct Fields<'a> {
    /// How messages name the block: "`fetch_node_texts` step `fetch`", "`settings`".
    owner: String,
    /// Where "missing key" errors go: the step kind keyword, the pipeline's name, a rule's braces.
    owner_span: SpanRange,
    entries: Vec<(&'a Ident, &'a Value)>,
    used: Vec<bool>,
    /// Required keys not written, with an example of each, reported by [`Fields::finish`].
    missing: Vec<(Symbol, String)>,
    /// Keys written in a malformed entry (`max_tokens = 2_000`): already reported, so never
    /// also "missing".
    malformed: Vec<&'a Ident>,
}

impl<'a> Fields<'a> {
    /// Collects the `key: value` entries of `items`, reporting the items' syntax errors, items
    /// that are not entries, and duplicate keys (on the second occurrence).
    pub(crate) fn new(cx: &Ctxt, owner: String, owner_span: SpanRange, items: &'a Items) -> Self {
        for error in &items.errors {
            cx.syn_error(error.clone());
        }
        let mut entries: Vec<(&'a Ident, &'a Value)> = Vec::new();
        let mut malformed = Vec::new();
        for item in &items.items {
            match item {
                Item::Entry { key, value, .. } => {
                    if let Some((first, _)) = entries.iter().find(|(k, _)| *k == key) {
                        cx.error_at(
                            key.span(),
                            with_help(
                                format!("duplicate key `{key}` in {owner}"),
                                format!("`{first}` is already set above; remove one of the two"),
                            ),
                        );
                    } else {
                        entries.push((key, value));
                    }
                }
                other => {
                    let key = match other {
                        Item::Assign { target: key, .. }
                        | Item::Copy { target: key, .. }
                        | Item::Arrow { from: key, .. } => {
                            malformed.push(key);
                            Some(key)
                        }
                        _ => None,
                    };
                    let help = match (other, key) {
                        (Item::Assign { .. }, Some(key)) => format!("write `{key}: …` with a colon, not `=`"),
                        _ => "write entries as `key: value`, separated by commas".to_owned(),
                    };
                    cx.error_range(other.range(), with_help(format!("expected `key: value` in {owner}"), help));
                }
            }
        }
        let used = vec![false; entries.len()];
        Fields { owner, owner_span, entries, used, missing: Vec::new(), malformed }
    }

    /// Takes `key`'s entry, if written.
    pub(crate) fn take(&mut self, key: Symbol) -> Option<(&'a Ident, &'a Value)> {
        let index = self.entries.iter().position(|(k, _)| *k == key)?;
        self.used[index] = true;
        Some(self.entries[index])
    }

    /// Whether `key` was written in a malformed entry (already reported).
    pub(crate) fn is_malformed(&self, key: Symbol) -> bool {
        self.malformed.iter().any(|k| **k == key)
    }

    /// Takes `key`'s entry; when absent, it is reported as missing (with `example` as the fix) by
    /// [`Fields::finish`], unless a misspelt key explains it.
    pub(crate) fn require(&mut self, key: Symbol, example: &str) -> Option<(&'a Ident, &'a Value)> {
        let found = self.take(key);
        if found.is_none() && !self.is_malformed(key) {
            self.missing.push((key, example.to_owned()));
        }
        found
    }

    /// The entries nobody took, in order (for open blocks such as `settings` and `prompts`).
    pub(crate) fn rest(&mut self) -> Vec<(&'a Ident, &'a Value)> {
        let mut rest = Vec::new();
        for (entry, used) in self.entries.iter().zip(self.used.iter_mut()) {
            if !*used {
                *used = true;
                rest.push(*entry);
            }
        }
        rest
    }

    /// Reports every entry nobody took as an unknown key (suggesting the closest expected key),
    /// then the required keys that are missing, in one error. A missing key that an unknown key
    /// misspells is not reported twice: "did you mean `next`?" under `nxt` says it all.
    pub(crate) fn finish(mut self, cx: &Ctxt, expected: &[Symbol]) {
        for ((key, _), used) in self.entries.iter().zip(&self.used) {
            if *used {
                continue;
            }
            let name = key.to_string();
            let suggestion = did_you_mean(&name, expected.iter().map(|s| s.as_str()));
            let help = match suggestion {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!("remove it, or use one of {}", one_of(expected)),
            };
            self.missing.retain(|(missing, _)| Some(missing.as_str()) != suggestion);
            cx.error_at(
                key.span(),
                with_help(
                    format!("unknown key `{name}` in {}; expected one of {}", self.owner, one_of(expected)),
                    help,
                ),
            );
        }
        if !self.missing.is_empty() {
            let keys: Vec<String> = self.missing.iter().map(|(k, _)| format!("`{k}`")).collect();
            let examples: Vec<String> = self.missing.iter().map(|(_, e)| format!("`{e}`")).collect();
            cx.error_range(
                self.owner_span,
                with_help(
                    format!("{} is missing {}", self.owner, keys.join(" and ")),
                    format!("add {}", examples.join(" and ")),
                ),
            );
        }
    }
}

/// Reads typed values, reporting a value of the wrong type under the value and poisoning its path
/// so that the rules' checks of the placeholder are not reported on top.
pub(crate) struct Reader<'c> {
    /// Where errors go.
    pub cx: &'c Ctxt,
    /// Where spans and poisoned paths go.
    pub spans: &'c mut SpanMap,
}

impl Reader<'_> {
    /// Records the value's span at `path`.
    pub(crate) fn record(&mut self, path: &FieldPath, value: &Value) {
        self.spans.record(path, value.range());
    }

    fn wrong_type(&mut self, path: &FieldPath, key: &Ident, value: &Value, expected: &str, example: &str) {
        self.spans.poison(path);
        self.cx.error_range(
            value.range(),
            with_help(
                format!("`{key}` takes {expected}, found {}", value.describe()),
                format!("write `{key}: {example}`"),
            ),
        );
    }

    /// An integer (`20`, `-1`, `16_384`).
    pub(crate) fn int(&mut self, path: &FieldPath, key: &Ident, value: &Value, example: &str) -> Option<i64> {
        self.record(path, value);
        match value {
            Value::Int { neg, lit } => match lit.base10_parse::<i64>() {
                Ok(n) => Some(if neg.is_some() { -n } else { n }),
                Err(_) => {
                    self.spans.poison(path);
                    self.cx.error_range(
                        value.range(),
                        with_help(
                            format!("`{key}` is too large for a 64-bit integer"),
                            format!("write `{key}: {example}`"),
                        ),
                    );
                    None
                }
            },
            _ => {
                self.wrong_type(path, key, value, "an integer", example);
                None
            }
        }
    }

    /// A decimal number; integers are accepted (`threshold: 1`).
    pub(crate) fn float(&mut self, path: &FieldPath, key: &Ident, value: &Value, example: &str) -> Option<f64> {
        self.record(path, value);
        let parsed = match value {
            Value::Float { neg, lit } => lit.base10_parse::<f64>().ok().map(|f| if neg.is_some() { -f } else { f }),
            Value::Int { neg, lit } => lit.base10_parse::<f64>().ok().map(|f| if neg.is_some() { -f } else { f }),
            _ => None,
        };
        if parsed.is_none() {
            self.wrong_type(path, key, value, "a number", example);
        }
        parsed
    }

    /// A string literal.
    pub(crate) fn string(&mut self, path: &FieldPath, key: &Ident, value: &Value, example: &str) -> Option<String> {
        self.record(path, value);
        match value {
            Value::Str(s) => Some(s.value()),
            _ => {
                self.wrong_type(path, key, value, "a string", example);
                None
            }
        }
    }

    /// A bare name (a step id, a field, a keyword such as `sql`).
    pub(crate) fn name(&mut self, path: &FieldPath, key: &Ident, value: &Value, example: &str) -> Option<String> {
        self.record(path, value);
        match value {
            Value::Name(n) => Some(unraw(n)),
            Value::Str(s) => {
                self.spans.poison(path);
                self.cx.error_range(
                    value.range(),
                    with_help(
                        format!("`{key}` takes a name, not a string"),
                        format!("remove the quotes: `{key}: {}`", s.value()),
                    ),
                );
                None
            }
            _ => {
                self.wrong_type(path, key, value, "a name", example);
                None
            }
        }
    }
}

pub(crate) use crate::located::unraw;

/// The range of a `key: value` entry.
pub(crate) fn entry_range(key: &Ident, value: &Value) -> SpanRange {
    SpanRange::single(key.span()).to(value.range())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_picks_close_words_only() {
        let kinds = ["fetch_node_texts", "search_nodes", "call_model"];
        assert_eq!(did_you_mean("fetch_node_text", kinds), Some("fetch_node_texts"));
        assert_eq!(did_you_mean("call_modle", kinds), Some("call_model"));
        assert_eq!(did_you_mean("banana", kinds), None);
    }
}
