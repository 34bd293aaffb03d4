//! The DSL's keywords as named constants, so that a misspelling in the macro is a compile error
//! here rather than a key that silently never matches.

use std::fmt::{self, Display};

use proc_macro2::Ident;

/// A keyword of the `pipeline!` DSL.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Symbol(pub &'static str);

impl Symbol {
    /// The keyword's text.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl PartialEq<Symbol> for Ident {
    fn eq(&self, word: &Symbol) -> bool {
        // Raw identifiers (`r#type`) name the same key as their plain spelling.
        let text = self.to_string();
        text.strip_prefix("r#").unwrap_or(&text) == word.0
    }
}

impl PartialEq<Symbol> for &Ident {
    fn eq(&self, word: &Symbol) -> bool {
        *self == word
    }
}

/// Renders `[a, b]` as "`a`, `b`" for "expected one of …" messages.
pub(crate) fn one_of(words: &[Symbol]) -> String {
    words.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", ")
}

// The header.
pub(crate) const PIPELINE: Symbol = Symbol("pipeline");
/// The attribute holding the macro's own options: `#[ctx(crate = path)]`.
pub(crate) const CTX_ATTR: Symbol = Symbol("ctx");
/// `crate = path` in `#[ctx(…)]`: where the generated code finds ctx.
pub(crate) const CRATE: Symbol = Symbol("crate");

// Sections of a pipeline.
pub(crate) const MODEL: Symbol = Symbol("model");
/// `models { small { … }, strong { … } }`: named models besides the default.
pub(crate) const MODELS: Symbol = Symbol("models");
/// `file: "pipelines/qa.yaml"`: the pipeline is read from a YAML file.
pub(crate) const FILE: Symbol = Symbol("file");
pub(crate) const SETTINGS: Symbol = Symbol("settings");
pub(crate) const PROMPTS: Symbol = Symbol("prompts");
pub(crate) const STEPS: Symbol = Symbol("steps");
/// `contexts { … }`: the context engine's declarations, in `context_engine!`'s vocabulary.
pub(crate) const CONTEXTS: Symbol = Symbol("contexts");
pub(crate) const SECTIONS: &[Symbol] = &[MODEL, MODELS, SETTINGS, PROMPTS, STEPS, CONTEXTS];

// `model: config("…")`; the keys of `model { … }` and `settings { … }` are `ctx-spec`'s schema rows.
pub(crate) const CONFIG: Symbol = Symbol("config");

// `prompts { … }` values.
pub(crate) const INCLUDE_STR: Symbol = Symbol("include_str");
pub(crate) const AT_LOAD: Symbol = Symbol("at_load");

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::Span;

    #[test]
    fn idents_compare_with_symbols_including_raw_ones() {
        assert!(Ident::new("steps", Span::call_site()) == STEPS);
        assert!(Ident::new_raw("steps", Span::call_site()) == STEPS);
        assert!(Ident::new("step", Span::call_site()) != STEPS);
        assert_eq!(one_of(&[MODEL, STEPS]), "`model`, `steps`");
    }
}
