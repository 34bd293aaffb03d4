//! The names of the languages a node can be in: what the classifier finds, what a `compact_code`
//! rule names and what the `--- NODE ---` header prints. The classifier and the compactors that
//! act on these names run in `ctx-runtime`; the rules that check a pipeline's names need only the
//! names, so they live here.

use serde::{Deserialize, Serialize};

/// The classification of a node's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// SQL: DDL, DML, procedures, views, migrations.
    Sql,
    /// .NET: C#, Razor, MSBuild and other .NET project files.
    Dotnet,
    /// C# (or Razor) with SQL statements in its string literals.
    DotnetWithSql,
    /// Anything else: prose, Python, JavaScript, …
    Unknown,
}

impl Language {
    /// The name a `compact_code` rule and the `--- NODE ---` header use: `sql`, `dotnet`
    /// (for both .NET kinds) or `unknown`.
    pub fn label(self) -> &'static str {
        match self {
            Language::Sql => "sql",
            Language::Dotnet | Language::DotnetWithSql => "dotnet",
            Language::Unknown => "unknown",
        }
    }
}

/// The languages a rule can name without registering anything.
pub const BUILTIN_LANGUAGES: [&str; 5] = ["sql", "dotnet", "markdown", "text", "json"];

/// A node's compaction language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeLanguage {
    /// SQL or .NET, as the classifier found.
    Code(Language),
    /// `markdown`, `text` or `json`.
    Prose(&'static str),
    /// A registered compactor's language.
    Custom(String),
    /// None of these: no rule applies.
    Unknown,
}

impl NodeLanguage {
    /// The name rules and the node frame use.
    pub fn name(&self) -> &str {
        match self {
            NodeLanguage::Code(l) => l.label(),
            NodeLanguage::Prose(name) => name,
            NodeLanguage::Custom(name) => name,
            NodeLanguage::Unknown => "unknown",
        }
    }
}

/// Whether `name` can name a compactor: what the DSL accepts as a name.
pub fn is_language_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
