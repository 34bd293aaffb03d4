//! Compactors by name: the built-in ones and those a user registers.
//!
//! One registry serves every caller of [`Compactor`]. It starts with [`BUILTIN_COMPACTORS`];
//! any other name is a user compactor, registered once under a plain name (letters, digits and
//! `_`, starting with a letter). A pipeline declares the names its rules use in
//! `settings { compactors: [yaml] }`, so that the compile-time check knows the name is meant and
//! still catches typos, and passes the registry at load time (`LoadOptions::compactor`); the
//! context engine declares them in `EngineSpec::compactors` and registers them on its builder.
//!
//! For `manage_context_budget`, a node's language ([`CompactorRegistry::language_of`]) is the
//! name of the first registered compactor whose [`Compactor::applies_to`] accepts it, else the
//! built-in classification: by path extension first (`md`/`markdown`/`mdx` → `markdown`,
//! `json` → `json`, `txt`/`text`/`log`/`rst`/`adoc` → `text`), then SQL and .NET by
//! [`classify`]; anything else is `unknown` and no rule applies to it. The node is then
//! compacted by the compactor of its language's name, losslessly
//! ([`CompactorRegistry::compact`]).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use super::compacted::{Compacted, guard_tokens};
use super::compactor::{CodeCompactor, CompactError, CompactRequest, Compactor, ProseCompactor, TruncateCompactor};
use crate::classify::{Language, classify};
use crate::codes::{Code, ErrorCode};
use crate::state::NodeText;
use crate::tokens::TokenCounter;
pub use ctx_spec::engine::{BUILTIN_COMPACTORS, TRUNCATE};
pub use ctx_spec::lang::{BUILTIN_LANGUAGES, NodeLanguage, is_language_name};

/// Why a compactor could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompactorError {
    /// The name is a built-in compactor's.
    #[error("compactor `{0}` is built in; give the compactor another name")]
    Builtin(String),
    /// A compactor of this name is already registered.
    #[error("a compactor named `{0}` is already registered")]
    Duplicate(String),
    /// The name is not a plain name.
    #[error("compactor name `{0:?}` must be a name of letters, digits and `_`, starting with a letter")]
    BadName(String),
}

impl CompactorError {
    /// The name that was refused.
    pub fn name(&self) -> &str {
        match self {
            CompactorError::Builtin(name) | CompactorError::Duplicate(name) | CompactorError::BadName(name) => name,
        }
    }
}

impl ErrorCode for CompactorError {
    fn code(&self) -> Code {
        match self {
            CompactorError::Builtin(_) => Code::CompactorBuiltin,
            CompactorError::Duplicate(_) => Code::CompactorDuplicate,
            CompactorError::BadName(_) => Code::CompactorBadName,
        }
    }
}

/// The built-in compactor `name`.
fn builtin(name: &str) -> Option<&'static dyn Compactor> {
    static TRUNCATE_C: TruncateCompactor = TruncateCompactor;
    static SQL: CodeCompactor = CodeCompactor::SQL;
    static DOTNET: CodeCompactor = CodeCompactor::DOTNET;
    static CODE: CodeCompactor = CodeCompactor::DETECT;
    static MARKDOWN: ProseCompactor = ProseCompactor::Markdown;
    static TEXT: ProseCompactor = ProseCompactor::Text;
    static JSON: ProseCompactor = ProseCompactor::Json;
    Some(match name {
        TRUNCATE => &TRUNCATE_C,
        "sql" => &SQL,
        "dotnet" => &DOTNET,
        "code" => &CODE,
        "markdown" => &MARKDOWN,
        "text" => &TEXT,
        "json" => &JSON,
        _ => return None,
    })
}

/// The compactors a pipeline run or a context engine can use: the built-in ones and those
/// registered by name. Cheap to clone.
#[derive(Clone, Default)]
pub struct CompactorRegistry {
    custom: Vec<(String, Arc<dyn Compactor>)>,
}

impl fmt::Debug for CompactorRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.user_names()).finish()
    }
}

impl PartialEq for CompactorRegistry {
    fn eq(&self, other: &Self) -> bool {
        self.custom.len() == other.custom.len()
            && self.custom.iter().zip(&other.custom).all(|((n, a), (m, b))| n == m && Arc::ptr_eq(a, b))
    }
}

impl Eq for CompactorRegistry {}

impl CompactorRegistry {
    /// The built-in compactors only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `compactor` as `name`, which must be a plain name, not built in and new.
    pub fn register(
        &mut self,
        name: impl Into<String>,
        compactor: impl Compactor + 'static,
    ) -> Result<&mut Self, CompactorError> {
        self.register_arc(name, Arc::new(compactor))
    }

    /// Registers a shared compactor as `name` (the rules of [`register`](Self::register)).
    pub fn register_arc(
        &mut self,
        name: impl Into<String>,
        compactor: Arc<dyn Compactor>,
    ) -> Result<&mut Self, CompactorError> {
        let name = name.into();
        if builtin(&name).is_some() {
            return Err(CompactorError::Builtin(name));
        }
        if !is_language_name(&name) {
            return Err(CompactorError::BadName(name));
        }
        if self.custom.iter().any(|(n, _)| *n == name) {
            return Err(CompactorError::Duplicate(name));
        }
        self.custom.push((name, compactor));
        Ok(self)
    }

    /// This registry with `compactor` registered as `name`.
    pub fn with(
        mut self,
        name: impl Into<String>,
        compactor: impl Compactor + 'static,
    ) -> Result<Self, CompactorError> {
        self.register(name, compactor)?;
        Ok(self)
    }

    /// The compactor `name`, built in or registered.
    pub fn get(&self, name: &str) -> Option<&dyn Compactor> {
        builtin(name).or_else(|| self.custom.iter().find(|(n, _)| n == name).map(|(_, c)| c.as_ref()))
    }

    /// Whether `name` is a compactor of this registry.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every name: the built-in ones ([`BUILTIN_COMPACTORS`]), then the registered ones in
    /// registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        BUILTIN_COMPACTORS.into_iter().chain(self.user_names())
    }

    /// The registered (not built-in) names, in registration order.
    pub fn user_names(&self) -> impl Iterator<Item = &str> {
        self.custom.iter().map(|(n, _)| n.as_str())
    }

    /// The language of `node` (see the module documentation).
    pub fn language_of(&self, node: &NodeText) -> NodeLanguage {
        if let Some((name, _)) = self.custom.iter().find(|(_, c)| c.applies_to(node)) {
            return NodeLanguage::Custom(name.clone());
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

    /// `node`'s text compacted losslessly by the compactor of `language`'s name, never to more
    /// tokens than it had: an answer with more tokens is dropped and the text kept. A language
    /// with no compactor (`unknown`, an unregistered name) keeps the text.
    pub fn compact(
        &self,
        language: &NodeLanguage,
        node: &NodeText,
        counter: &TokenCounter,
    ) -> Result<Compacted, CompactError> {
        let text = node.text.as_str();
        let compactor = match language {
            NodeLanguage::Unknown => None,
            named => self.get(named.name()),
        };
        let out = match compactor {
            Some(c) => {
                let request =
                    CompactRequest::new(&node.id, text, counter).with_path(node.source()).with_language(language);
                match c.compact(&request)? {
                    Cow::Owned(out) if out == text => Cow::Borrowed(text),
                    out => out,
                }
            }
            None => Cow::Borrowed(text),
        };
        Ok(guard_tokens(text, out, counter)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::FnCompactor;
    use crate::tokens::Encoding;

    struct Fold;
    impl Compactor for Fold {
        fn compact<'t>(&self, request: &CompactRequest<'t>) -> Result<Cow<'t, str>, CompactError> {
            Ok(Cow::Owned(request.text.split_whitespace().collect::<Vec<_>>().join(" ")))
        }
        fn applies_to(&self, node: &NodeText) -> bool {
            node.source().is_some_and(|p| p.ends_with(".up"))
        }
    }

    #[test]
    fn registration_rules_and_languages() {
        let mut r = CompactorRegistry::new();
        for name in BUILTIN_COMPACTORS {
            assert_eq!(r.register(name, Fold).err(), Some(CompactorError::Builtin(name.into())));
            assert!(r.contains(name), "{name}");
        }
        assert_eq!(r.register("no spaces", Fold).err(), Some(CompactorError::BadName("no spaces".into())));
        r.register("up", Fold).unwrap();
        assert_eq!(r.register("up", Fold).err(), Some(CompactorError::Duplicate("up".into())));
        assert_eq!(CompactorError::Duplicate("up".into()).code(), Code::CompactorDuplicate);
        assert_eq!(r.user_names().collect::<Vec<_>>(), ["up"]);
        assert_eq!(r.names().count(), BUILTIN_COMPACTORS.len() + 1);
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

    #[test]
    fn the_registry_keeps_the_text_when_an_answer_is_longer_or_fails() {
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let mut r = CompactorRegistry::new();
        r.register("longer", FnCompactor::new(|q: &CompactRequest<'_>| Ok(format!("{} and more", q.text)))).unwrap();
        r.register("broken", FnCompactor::new(|_: &CompactRequest<'_>| Err(CompactError::Other("no".into())))).unwrap();
        let n = NodeText::new("n", "short text");
        let c = r.compact(&NodeLanguage::Custom("longer".into()), &n, &counter).unwrap();
        assert_eq!((c.text.as_str(), c.changed, c.tokens_after), ("short text", false, c.tokens_before));
        let err = r.compact(&NodeLanguage::Custom("broken".into()), &n, &counter).unwrap_err();
        assert_eq!(err.code(), Code::CompactorFailed);
        // Without a budget, even `truncate` keeps every token.
        let t = r.compact(&NodeLanguage::Custom(TRUNCATE.into()), &n, &counter).unwrap();
        assert!(!t.changed);
    }
}
