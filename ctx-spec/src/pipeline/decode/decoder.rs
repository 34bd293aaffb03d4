//! The decoder's state — the problems found, where each value was written, the poisoned paths —
//! and its readers of one scalar value, each with the one message of its kind.

use std::collections::{BTreeMap, BTreeSet};

use super::value::{Kind, Loc, Value};
use crate::codes::Code;
use crate::validation::{ConfigIssue, FieldPath};

/// The front end being decoded: the DSL and YAML write a few things differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dialect {
    /// `pipeline!`: names are bare words, text is quoted.
    Dsl,
    /// A YAML file: a plain scalar is text or a name alike, a single string is a list of one.
    Yaml,
}

/// One problem, with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeIssue {
    /// Where to point.
    pub at: Loc,
    /// The code, the path of the value, the message and the help.
    pub issue: ConfigIssue,
}

/// An older spelling of a key that was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasUse {
    /// Where the old spelling was written.
    pub at: Loc,
    /// The old spelling.
    pub alias: &'static str,
    /// The key it spells.
    pub key: &'static str,
}

/// What decoding collects.
#[derive(Debug)]
pub struct Decoder {
    /// The front end.
    pub dialect: Dialect,
    /// Every problem, in the order found.
    pub issues: Vec<DecodeIssue>,
    /// Where each value was written (the first record of a path wins).
    pub locations: BTreeMap<FieldPath, Loc>,
    /// The paths whose value could not be read: a placeholder stands there.
    pub poisoned: BTreeSet<FieldPath>,
    /// Older spellings read, for the front end to warn about.
    pub aliases: Vec<AliasUse>,
}

impl Decoder {
    /// An empty decoder for `dialect`.
    pub fn new(dialect: Dialect) -> Self {
        Decoder {
            dialect,
            issues: Vec::new(),
            locations: BTreeMap::new(),
            poisoned: BTreeSet::new(),
            aliases: Vec::new(),
        }
    }

    /// Records where `path` was written.
    pub fn locate(&mut self, path: &FieldPath, at: Loc) {
        self.locations.entry(path.clone()).or_insert(at);
    }

    /// Marks `path` (and everything under it) as not read.
    pub fn poison(&mut self, path: &FieldPath) {
        self.poisoned.insert(path.clone());
    }

    /// Whether `path` or one of its ancestors is poisoned.
    pub fn is_poisoned(&self, path: &FieldPath) -> bool {
        let mut segments = path.0.clone();
        loop {
            if self.poisoned.contains(&FieldPath(segments.clone())) {
                return true;
            }
            if segments.pop().is_none() {
                return false;
            }
        }
    }

    /// Reports a problem at `at`.
    pub fn report(
        &mut self,
        at: Loc,
        code: Code,
        path: &FieldPath,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        let issue = ConfigIssue::new(code, path.clone(), message.into()).with_help(help.into());
        self.issues.push(DecodeIssue { at, issue });
    }

    /// A value of the wrong type: reported under the value, its path poisoned.
    pub fn wrong_type(&mut self, value: &Value, path: &FieldPath, what: &str, expected: &str) {
        self.poison(path);
        self.report(
            value.at,
            Code::YamlWrongType,
            path,
            format!("{what} must be {expected}, found {}", value.shown()),
            format!("write {expected}"),
        );
    }

    /// A whole number.
    pub fn int(&mut self, value: &Value, path: &FieldPath, what: &str) -> Option<i64> {
        self.locate(path, value.at);
        match &value.kind {
            Kind::Int(n) => Some(*n),
            Kind::IntTooLarge(text) => {
                self.poison(path);
                self.report(
                    value.at,
                    Code::YamlWrongType,
                    path,
                    format!("{what} is too large for a 64-bit integer: {text}"),
                    "write a smaller integer",
                );
                None
            }
            _ => {
                self.wrong_type(value, path, what, "an integer");
                None
            }
        }
    }

    /// A number; whole numbers are numbers too.
    pub fn number(&mut self, value: &Value, path: &FieldPath, what: &str) -> Option<f64> {
        self.locate(path, value.at);
        match &value.kind {
            Kind::Int(n) => Some(*n as f64),
            Kind::Number(n) if n.is_finite() => Some(*n),
            _ => {
                self.wrong_type(value, path, what, "a number");
                None
            }
        }
    }

    /// `true` or `false`.
    pub fn boolean(&mut self, value: &Value, path: &FieldPath, what: &str) -> Option<bool> {
        self.locate(path, value.at);
        match &value.kind {
            Kind::Bool(b) => Some(*b),
            _ => {
                self.wrong_type(value, path, what, "`true` or `false`");
                None
            }
        }
    }

    /// Text: a quoted string (in YAML, any scalar that is not null).
    pub fn text(&mut self, value: &Value, path: &FieldPath, what: &str) -> Option<String> {
        self.locate(path, value.at);
        match (&value.kind, self.dialect) {
            (Kind::Str(s), _) | (Kind::Word(s), Dialect::Yaml) => Some(s.clone()),
            (Kind::Int(n), Dialect::Yaml) => Some(n.to_string()),
            (Kind::IntTooLarge(t), Dialect::Yaml) => Some(t.clone()),
            (Kind::Number(n), Dialect::Yaml) => Some(n.to_string()),
            (Kind::Bool(b), Dialect::Yaml) => Some(b.to_string()),
            _ => {
                self.wrong_type(value, path, what, "a string");
                None
            }
        }
    }

    /// A name: a step id, a prompt key, a field (in YAML, any text).
    pub fn name(&mut self, value: &Value, path: &FieldPath, what: &str) -> Option<String> {
        match (&value.kind, self.dialect) {
            (Kind::Word(w), _) => {
                self.locate(path, value.at);
                Some(w.clone())
            }
            (_, Dialect::Yaml) => self.text(value, path, what),
            (Kind::Str(s), Dialect::Dsl) => {
                self.locate(path, value.at);
                self.poison(path);
                self.report(
                    value.at,
                    Code::YamlWrongType,
                    path,
                    format!("{what} must be a name, not a string"),
                    format!("remove the quotes: `{s}`"),
                );
                None
            }
            _ => {
                self.locate(path, value.at);
                self.wrong_type(value, path, what, "a name");
                None
            }
        }
    }

    /// A name or a quoted string (a free-form identifier such as an inbox topic).
    pub fn name_or_text(&mut self, value: &Value, path: &FieldPath, what: &str) -> Option<String> {
        match &value.kind {
            Kind::Str(s) | Kind::Word(s) => {
                self.locate(path, value.at);
                Some(s.clone())
            }
            _ => self.text(value, path, what),
        }
    }

    /// A list of strings (in YAML, a single string is a list of one).
    pub fn text_list(&mut self, value: &Value, path: &FieldPath, what: &str) -> Option<Vec<String>> {
        self.locate(path, value.at);
        let items = match &value.kind {
            Kind::List(items) => items,
            Kind::Str(_) | Kind::Word(_) if self.dialect == Dialect::Yaml => {
                return self.text(value, path, what).map(|t| vec![t]);
            }
            _ => {
                self.wrong_type(value, path, what, "a list of strings");
                return None;
            }
        };
        let mut out = Vec::new();
        for (j, item) in items.iter().enumerate() {
            out.push(self.text(item, &path.index(j), what)?);
        }
        Some(out)
    }

    /// JSON text: a string kept as written, or (YAML) a mapping or list serialized.
    pub fn json_text(&mut self, value: &Value, path: &FieldPath, what: &str) -> Option<String> {
        self.locate(path, value.at);
        match &value.kind {
            Kind::Str(s) => Some(s.clone()),
            Kind::Word(s) if self.dialect == Dialect::Yaml => Some(s.clone()),
            Kind::Map(_) | Kind::List(_) if self.dialect == Dialect::Yaml => match value.to_json() {
                Some(json) => Some(json.to_string()),
                None => {
                    self.wrong_type(value, path, what, "a JSON schema");
                    None
                }
            },
            _ => {
                let expected = match self.dialect {
                    Dialect::Yaml => "a JSON schema (a mapping, or a string of JSON)",
                    Dialect::Dsl => "a JSON schema as a string, e.g. r#\"{\"type\":\"object\"}\"#",
                };
                self.wrong_type(value, path, what, expected);
                None
            }
        }
    }
}

impl Decoder {
    /// Whether every step (at `steps[i]`) and each of its transitions was read as written, so
    /// that the graph the rules see is the user's: when not, problems of the whole graph
    /// (unreachable steps, cycles) would only follow from a problem already reported.
    pub fn graph_complete(&self, steps: &[crate::pipeline::definition::StepDef]) -> bool {
        use crate::pipeline::definition::StepKind;
        steps.iter().enumerate().all(|(i, step)| {
            let path = FieldPath::root().key("steps").index(i);
            match &step.kind {
                _ if self.is_poisoned(&path) => false,
                StepKind::Custom(spec) => {
                    let outcomes = path.key("outcomes");
                    !self.is_poisoned(&outcomes)
                        && spec.outcomes.iter().all(|(o, _)| !self.is_poisoned(&outcomes.key(o)))
                }
                other => other.transitions().iter().all(|(key, _)| !self.is_poisoned(&path.key(*key))),
            }
        })
    }
}
