//! Compaction languages: the built-in ones and those a user registers.
//!
//! A `compact_code` rule's `language` names a compactor. The built-ins are [`BUILTIN_LANGUAGES`]:
//! `sql` and `dotnet` (the spec's code compactors), `markdown`, `text` and `json` (see
//! [`super::prose`]). Any other name is a user compactor: a type implementing [`TextCompactor`],
//! registered in a [`CompactorRegistry`] given to the pipeline at load time
//! (`LoadOptions::compactor`), and declared in the pipeline's `settings { compactors: [yaml] }`
//! so that the compile-time check knows the name is meant and still catches typos.
//!
//! A node's language ([`CompactorRegistry::language_of`]) is the language of the first
//! registered compactor whose [`TextCompactor::applies_to`] accepts it, else the built-in
//! classification: by path extension first (`md`/`markdown`/`mdx` → `markdown`, `json` →
//! `json`, `txt`/`text`/`log`/`rst`/`adoc` → `text`), then SQL and .NET by [`classify`];
//! anything else is `unknown` and no rule applies to it.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use super::{Compacted, guard_tokens, prose};
use crate::classify::{Language, classify};
use crate::state::NodeText;
use crate::tokens::{TokenCounter, TokenError};
pub use ctx_spec::lang::{BUILTIN_LANGUAGES, NodeLanguage, is_language_name};

/// A user compactor: it names its language, says which nodes are its, and compacts a text.
///
/// The result is counted: when it has more tokens than the input, the input is kept, so a
/// compactor cannot make a node larger.
///
/// ```
/// use ctx::compact::{CompactorRegistry, TextCompactor};
/// use ctx::state::NodeText;
///
/// /// YAML without comment lines.
/// struct Yaml;
/// impl TextCompactor for Yaml {
///     fn language(&self) -> &str { "yaml" }
///     fn applies_to(&self, node: &NodeText) -> bool {
///         node.source().is_some_and(|p| p.ends_with(".yaml") || p.ends_with(".yml"))
///     }
///     fn compact(&self, text: &str) -> String {
///         text.lines().filter(|l| !l.trim_start().starts_with('#')).map(|l| format!("{l}\n")).collect()
///     }
/// }
///
/// let registry = CompactorRegistry::new().with(Yaml)?;
/// let node = NodeText::new("ci", "# build\nrun: cargo test\n").with_path("ci.yaml");
/// assert_eq!(registry.language_of(&node).name(), "yaml");
/// assert_eq!(registry.language_of(&NodeText::new("n", "x").with_path("a.md")).name(), "markdown");
/// # Ok::<(), ctx::compact::CompactorError>(())
/// ```
pub trait TextCompactor: Send + Sync {
    /// The name rules use (`language: yaml`). Not one of [`BUILTIN_LANGUAGES`].
    fn language(&self) -> &str;
    /// Whether `node` is in this language.
    fn applies_to(&self, node: &NodeText) -> bool;
    /// `text` compacted.
    fn compact(&self, text: &str) -> String;
}

/// Why a compactor could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompactorError {
    /// Its language is a built-in one.
    #[error("compactor language `{0}` is built in; give the compactor another name")]
    Builtin(String),
    /// A compactor of this language is already registered.
    #[error("a compactor for language `{0}` is already registered")]
    Duplicate(String),
    /// Its language is not a plain name.
    #[error("compactor language `{0:?}` must be a name of letters, digits and `_`, starting with a letter")]
    BadName(String),
}

/// The user compactors a pipeline run can use. Cheap to clone.
#[derive(Clone, Default)]
pub struct CompactorRegistry {
    custom: Vec<Arc<dyn TextCompactor>>,
}

impl fmt::Debug for CompactorRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl PartialEq for CompactorRegistry {
    fn eq(&self, other: &Self) -> bool {
        self.custom.len() == other.custom.len() && self.custom.iter().zip(&other.custom).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

impl Eq for CompactorRegistry {}

impl CompactorRegistry {
    /// No user compactors.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `compactor`; its language must be new and not built in.
    pub fn register(&mut self, compactor: impl TextCompactor + 'static) -> Result<(), CompactorError> {
        self.register_arc(Arc::new(compactor))
    }

    /// Adds a shared compactor; its language must be new and not built in.
    pub fn register_arc(&mut self, compactor: Arc<dyn TextCompactor>) -> Result<(), CompactorError> {
        let name = compactor.language().to_owned();
        if BUILTIN_LANGUAGES.contains(&name.as_str()) {
            return Err(CompactorError::Builtin(name));
        }
        if !is_language_name(&name) {
            return Err(CompactorError::BadName(name));
        }
        if self.get(&name).is_some() {
            return Err(CompactorError::Duplicate(name));
        }
        self.custom.push(compactor);
        Ok(())
    }

    /// This registry with `compactor` added.
    pub fn with(mut self, compactor: impl TextCompactor + 'static) -> Result<Self, CompactorError> {
        self.register(compactor)?;
        Ok(self)
    }

    /// The compactor of `language`.
    pub fn get(&self, language: &str) -> Option<&dyn TextCompactor> {
        self.custom.iter().find(|c| c.language() == language).map(|c| c.as_ref())
    }

    /// The registered languages, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.custom.iter().map(|c| c.language())
    }

    /// The language of `node` (see the module documentation).
    pub fn language_of(&self, node: &NodeText) -> NodeLanguage {
        if let Some(c) = self.custom.iter().find(|c| c.applies_to(node)) {
            return NodeLanguage::Custom(c.language().to_owned());
        }
        let ext = node
            .source()
            .and_then(|p| p.rsplit(['/', '\\']).next())
            .and_then(|name| name.rfind('.').filter(|&i| i > 0).map(|i| name[i + 1..].to_ascii_lowercase()));
        match ext.as_deref() {
            Some("md" | "markdown" | "mdx") => return NodeLanguage::Prose("markdown"),
            Some("json") => return NodeLanguage::Prose("json"),
            Some("txt" | "text" | "log" | "rst" | "adoc") => return NodeLanguage::Prose("text"),
            _ => {}
        }
        match classify(&node.text, node.source()) {
            Language::Unknown => NodeLanguage::Unknown,
            code => NodeLanguage::Code(code),
        }
    }

    /// `node`'s text compacted as `language`, never to more tokens than it had.
    pub fn compact(
        &self,
        language: &NodeLanguage,
        node: &NodeText,
        counter: &TokenCounter,
    ) -> Result<Compacted, TokenError> {
        let text = node.text.as_str();
        match language {
            NodeLanguage::Code(code) => super::compact(*code, text, node.source(), counter),
            NodeLanguage::Prose("markdown") => guard_tokens(text, prose::compact_markdown(text), counter),
            NodeLanguage::Prose("json") => guard_tokens(text, prose::compact_json(text), counter),
            NodeLanguage::Prose(_) => guard_tokens(text, prose::compact_text(text), counter),
            NodeLanguage::Custom(name) => match self.get(name) {
                Some(c) => {
                    let out = c.compact(text);
                    guard_tokens(text, if out == text { Cow::Borrowed(text) } else { Cow::Owned(out) }, counter)
                }
                None => guard_tokens(text, Cow::Borrowed(text), counter),
            },
            NodeLanguage::Unknown => guard_tokens(text, Cow::Borrowed(text), counter),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    struct Upper(&'static str);
    impl TextCompactor for Upper {
        fn language(&self) -> &str {
            self.0
        }
        fn applies_to(&self, node: &NodeText) -> bool {
            node.source().is_some_and(|p| p.ends_with(".up"))
        }
        fn compact(&self, text: &str) -> String {
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        }
    }

    #[test]
    fn registration_rules_and_languages() {
        let mut r = CompactorRegistry::new();
        assert_eq!(r.register(Upper("sql")), Err(CompactorError::Builtin("sql".into())));
        assert_eq!(r.register(Upper("no spaces")), Err(CompactorError::BadName("no spaces".into())));
        r.register(Upper("up")).unwrap();
        assert_eq!(r.register(Upper("up")), Err(CompactorError::Duplicate("up".into())));
        let node = |p: &str, t: &str| NodeText::new("n", t).with_path(p);
        assert_eq!(r.language_of(&node("a.up", "x")), NodeLanguage::Custom("up".into()));
        assert_eq!(r.language_of(&node("a.sql", "SELECT 1")).name(), "sql");
        assert_eq!(r.language_of(&node("a/B.Markdown", "# x")).name(), "markdown");
        assert_eq!(r.language_of(&node("x.json", "{}")).name(), "json");
        assert_eq!(r.language_of(&node("notes.txt", "hi")).name(), "text");
        assert_eq!(r.language_of(&node("main.py", "print(1)")), NodeLanguage::Unknown);
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let n = node("a.up", "a    b\n\n\n c");
        let c = r.compact(&NodeLanguage::Custom("up".into()), &n, &counter).unwrap();
        assert_eq!((c.text.as_str(), c.changed), ("a b c", true));
        let j = node("x.json", "{ \"a\" : [ 1, 2 ] }");
        assert_eq!(r.compact(&r.language_of(&j), &j, &counter).unwrap().text, "{\"a\":[1,2]}");
    }
}
