//! Where each step key lives in the definition: a [`Slot`] reads and writes one field of a
//! [`StepKind`] as a [`FieldValue`], so the decoder, the YAML export and the macro's Rust
//! export go through the schema rows instead of naming each key and field by hand.

use super::definition::*;
use crate::params::ResponseFormat;

/// A key's value, typed as the definition holds it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FieldValue {
    /// A whole number.
    Int(i64),
    /// A number.
    Number(f64),
    /// Text: a string, a name, a step id.
    Text(String),
    /// `true` or `false`.
    Bool(bool),
    /// A list of strings.
    TextList(Vec<String>),
    /// `compact_code` rules.
    CompactRules(Vec<CompactRuleSpec>),
    /// `user_parts`.
    UserParts(Vec<UserPartSpec>),
    /// `set_variables` rules.
    SetRules(Vec<SetRuleSpec>),
    /// A custom step's outcomes.
    Outcomes(Vec<(String, String)>),
    /// `response_format`.
    ResponseFormat(ResponseFormat),
    /// An agent's tools.
    Tools(Vec<ToolSpec>),
    /// A model's `price`.
    Price(PriceSpec),
    /// An agent's MCP servers.
    McpServers(Vec<McpServerSpec>),
}

/// Reads and writes one field of a `T`: a step kind ([`StepKind`], the default), or the
/// [`ModelSpec`] or [`SettingsSpec`] of the top-level blocks.
pub struct Slot<T: 'static = StepKind> {
    /// The field's value; `None` when the step is not of the slot's kind or the field holds its
    /// default (an absent option, an empty list, `false`), which an export leaves out.
    pub get: fn(&T) -> Option<FieldValue>,
    /// Sets the field; a value of another type or a step of another kind is ignored.
    pub set: fn(&mut T, FieldValue),
}

// By hand: a derive would ask `T: Clone` of the spec, which a slot does not hold.
impl<T> Clone for Slot<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Slot<T> {}

impl<T> std::fmt::Debug for Slot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot").finish_non_exhaustive()
    }
}

/// A step kind's spec struct, found in a [`StepKind`].
pub(crate) trait SpecOf {
    fn of(kind: &StepKind) -> Option<&Self>;
    fn of_mut(kind: &mut StepKind) -> Option<&mut Self>;
}

macro_rules! spec_of {
    ($($spec:ty => $variant:ident),* $(,)?) => {$(
        impl SpecOf for $spec {
            fn of(kind: &StepKind) -> Option<&Self> {
                match kind { StepKind::$variant(s) => Some(s), _ => None }
            }
            fn of_mut(kind: &mut StepKind) -> Option<&mut Self> {
                match kind { StepKind::$variant(s) => Some(s), _ => None }
            }
        }
    )*};
}

spec_of!(
    SearchNodesSpec => SearchNodes,
    ExpandSpec => ExpandDependencyTree,
    FetchSpec => FetchNodeTexts,
    ManageBudgetSpec => ManageContextBudget,
    AgentSpec => Agent,
    LoopGuardSpec => LoopGuard,
    SetVariablesSpec => SetVariables,
    CustomSpec => Custom,
);

/// The model request of `call_model`, and the one inside an `agent`: their shared keys have one
/// slot each.
impl SpecOf for CallModelSpec {
    fn of(kind: &StepKind) -> Option<&Self> {
        match kind {
            StepKind::CallModel(s) => Some(s),
            StepKind::Agent(a) => Some(&a.call),
            _ => None,
        }
    }
    fn of_mut(kind: &mut StepKind) -> Option<&mut Self> {
        match kind {
            StepKind::CallModel(s) => Some(s),
            StepKind::Agent(a) => Some(&mut a.call),
            _ => None,
        }
    }
}

/// A field's type, as a [`FieldValue`].
pub(crate) trait Part {
    fn get(&self) -> Option<FieldValue>;
    fn set(&mut self, value: FieldValue);
}

macro_rules! part {
    ($ty:ty, $variant:ident, $skip:expr) => {
        impl Part for $ty {
            fn get(&self) -> Option<FieldValue> {
                let skip: fn(&$ty) -> bool = $skip;
                (!skip(self)).then(|| FieldValue::$variant(self.clone()))
            }
            fn set(&mut self, value: FieldValue) {
                if let FieldValue::$variant(v) = value {
                    *self = v;
                }
            }
        }
        impl Part for Option<$ty> {
            fn get(&self) -> Option<FieldValue> {
                self.clone().map(FieldValue::$variant)
            }
            fn set(&mut self, value: FieldValue) {
                if let FieldValue::$variant(v) = value {
                    *self = Some(v);
                }
            }
        }
    };
}

part!(i64, Int, |_| false);
part!(f64, Number, |_| false);
part!(String, Text, |_| false);
part!(bool, Bool, |b| !*b);
part!(Vec<String>, TextList, Vec::is_empty);
part!(Vec<CompactRuleSpec>, CompactRules, Vec::is_empty);
part!(Vec<UserPartSpec>, UserParts, Vec::is_empty);
part!(Vec<SetRuleSpec>, SetRules, Vec::is_empty);
part!(Vec<(String, String)>, Outcomes, Vec::is_empty);
part!(ResponseFormat, ResponseFormat, |_| false);
part!(Vec<ToolSpec>, Tools, Vec::is_empty);
part!(PriceSpec, Price, |_| false);
part!(Vec<McpServerSpec>, McpServers, Vec::is_empty);

/// The slot of `field` (a path such as `params.top_p`) of the spec struct `$spec`.
macro_rules! slot {
    ($spec:ty, $($field:ident).+) => {
        $crate::pipeline::slot::Slot {
            get: |k| {
                <$spec as $crate::pipeline::slot::SpecOf>::of(k)
                    .and_then(|s| $crate::pipeline::slot::Part::get(&s.$($field).+))
            },
            set: |k, v| {
                if let Some(s) = <$spec as $crate::pipeline::slot::SpecOf>::of_mut(k) {
                    $crate::pipeline::slot::Part::set(&mut s.$($field).+, v);
                }
            },
        }
    };
}
pub(crate) use slot;

/// The slot of `field` of the struct `$spec` itself (`ModelSpec`, `SettingsSpec`).
macro_rules! field {
    ($spec:ty, $($field:ident).+) => {
        $crate::pipeline::slot::Slot::<$spec> {
            get: |s| $crate::pipeline::slot::Part::get(&s.$($field).+),
            set: |s, v| $crate::pipeline::slot::Part::set(&mut s.$($field).+, v),
        }
    };
}
pub(crate) use field;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_reads_and_writes_its_field_and_leaves_defaults_out() {
        let top_p: Slot = slot!(CallModelSpec, params.top_p);
        let mut agent = StepKind::Agent(AgentSpec::default());
        assert_eq!((top_p.get)(&agent), None);
        (top_p.set)(&mut agent, FieldValue::Number(0.5));
        assert_eq!((top_p.get)(&agent), Some(FieldValue::Number(0.5)));
        (top_p.set)(&mut agent, FieldValue::Text("wrong type".into()));
        assert_eq!((top_p.get)(&agent), Some(FieldValue::Number(0.5)));
        let history: Slot = slot!(CallModelSpec, use_history);
        assert_eq!((history.get)(&agent), None, "false is the default");
        let mut search = StepKind::SearchNodes(SearchNodesSpec::default());
        (top_p.set)(&mut search, FieldValue::Number(0.5));
        assert_eq!((top_p.get)(&search), None, "another kind has no such field");
    }
}
