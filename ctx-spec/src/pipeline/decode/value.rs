//! The located value tree both front ends produce: the `pipeline!` macro from its tokens, the
//! YAML reader from its nodes. Each value carries a [`Loc`], an opaque index the front end maps
//! back to what it can point at (a token span, a file:line:column), so this crate needs neither
//! proc_macro2 nor a YAML parser to say where a problem is.

/// Where a value was written: an index into the front end's own table of locations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Loc(pub u32);

/// A word with its location: a key, a step id, the left side of `=>` or `<-`.
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    /// The word as written (a raw identifier without its `r#`).
    pub text: String,
    /// Where it was written.
    pub at: Loc,
}

/// One value and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// What it holds.
    pub kind: Kind,
    /// Where it was written.
    pub at: Loc,
}

/// What a value holds. Scalars, lists and maps are common to both front ends; the arrow forms
/// and `name { … }` are the DSL's special forms, which YAML writes as maps instead.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `null` (YAML `~`, an empty value).
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A whole number too large for 64 bits, as written.
    IntTooLarge(String),
    /// A number with a fraction or an exponent.
    Number(f64),
    /// A quoted string.
    Str(String),
    /// A bare word: an identifier in the DSL, a plain scalar in YAML.
    Word(String),
    /// `[ … ]`, or a YAML sequence.
    List(Vec<Value>),
    /// `{ … }`, or a YAML mapping: its items, [`Kind::Entry`] for `key: value`.
    Map(Vec<Value>),
    /// `key: value`, an item of a map.
    Entry {
        /// The key.
        key: Word,
        /// The value.
        value: Box<Value>,
    },
    /// `from => to`: a user part (`source => "template"`) or an outcome (`done => end`).
    Arrow {
        /// The left side.
        from: Word,
        /// The right side.
        to: Box<Value>,
    },
    /// `target <- source | transform`: a `set_variables` rule.
    Copy {
        /// What is set.
        target: Word,
        /// Where the value comes from.
        source: Word,
        /// The optional transform.
        transform: Option<Word>,
    },
    /// `target = value`: a `set_variables` rule setting a literal.
    Assign {
        /// What is set.
        target: Word,
        /// The literal.
        value: Box<Value>,
    },
    /// `name(…)` or `name!(…)`: a call, which only the DSL writes (`config("config.json")`,
    /// `include_str!("…")`).
    Call {
        /// The function or macro called.
        name: Word,
        /// The arguments (a macro's are not kept).
        args: Vec<Value>,
    },
    /// `name { … }`: a tool, or `json_schema { … }`; the body is a [`Kind::Map`].
    Named {
        /// The name before the braces.
        name: Word,
        /// The block.
        body: Box<Value>,
    },
}

impl Value {
    /// A value at `at`.
    pub fn new(kind: Kind, at: Loc) -> Self {
        Value { kind, at }
    }

    /// The value's kind, for "expected …, found …" messages.
    pub fn describe(&self) -> &'static str {
        match &self.kind {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Int(_) | Kind::IntTooLarge(_) => "an integer",
            Kind::Number(_) => "a number",
            Kind::Str(_) => "a string",
            Kind::Word(_) => "a name",
            Kind::List(_) => "a list",
            Kind::Map(_) => "a mapping",
            Kind::Entry { .. } => "an entry `key: value`",
            Kind::Arrow { .. } => "an arrow `a => b`",
            Kind::Copy { .. } => "a rule `a <- b`",
            Kind::Assign { .. } => "an assignment `a = b`",
            Kind::Named { .. } => "a block `name { … }`",
            Kind::Call { .. } => "a call `name(…)`",
        }
    }

    /// The value for "found …" in a message: a bare word as written (`xml`), so the reader sees
    /// what was read; anything else by its kind.
    pub fn shown(&self) -> String {
        match &self.kind {
            Kind::Word(w) if w.len() <= 40 => format!("`{w}`"),
            _ => self.describe().to_owned(),
        }
    }

    /// The items of a map or a list.
    pub fn items(&self) -> Option<&[Value]> {
        match &self.kind {
            Kind::Map(items) | Kind::List(items) => Some(items),
            _ => None,
        }
    }

    /// The text of a string or a word.
    pub fn as_text(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str(s) | Kind::Word(s) => Some(s),
            _ => None,
        }
    }

    /// The value as JSON (a map's entries as an object; the DSL's special forms have none).
    pub fn to_json(&self) -> Option<serde_json::Value> {
        use serde_json::Value as J;
        Some(match &self.kind {
            Kind::Null => J::Null,
            Kind::Bool(b) => J::Bool(*b),
            Kind::Int(i) => J::from(*i),
            Kind::Number(n) => J::Number(serde_json::Number::from_f64(*n)?),
            Kind::Str(s) | Kind::Word(s) => J::String(s.clone()),
            Kind::List(items) => J::Array(items.iter().map(Value::to_json).collect::<Option<_>>()?),
            Kind::Map(items) => {
                let mut object = serde_json::Map::new();
                for item in items {
                    let Kind::Entry { key, value } = &item.kind else { return None };
                    object.insert(key.text.clone(), value.to_json()?);
                }
                J::Object(object)
            }
            _ => return None,
        })
    }
}
