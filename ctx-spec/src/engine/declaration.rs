//! Context declarations as plain values: what a `pipeline!` expansion generates or a loader reads.
//!
//! Values are kept *as written* (numbers as `i64`/`f64`, names and policy keywords as strings)
//! so that [`validate_spec`](super::validate_spec) can say what is wrong with each one under its
//! field path; [`ContextAssembler`](super::ContextAssembler) turns them into typed settings only
//! after they passed. The serde form is the spec's: `{"type": "system", "content": "…"}`.

use serde::{Deserialize, Serialize};

/// The name of the built-in token-exact truncating compactor.
pub const TRUNCATE: &str = "truncate";

/// The names every compactor registry starts with: `truncate` (cuts only), the code compactors
/// `sql`, `dotnet` and `code` (whichever of the two a text is), and the document compactors
/// `markdown`, `text` and `json`. Each language a `compact_code` rule can name
/// ([`BUILTIN_LANGUAGES`](crate::lang::BUILTIN_LANGUAGES)) is compacted by the compactor of the
/// same name.
pub const BUILTIN_COMPACTORS: [&str; 7] = [TRUNCATE, "sql", "dotnet", "code", "markdown", "text", "json"];

/// Everything the context engine is configured with: the declarations, the retrievers they draw
/// packs from, and the names of compactors the application registers at run time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineSpec {
    /// Named contexts, in declaration order.
    #[serde(default)]
    pub contexts: Vec<ContextDeclaration>,
    /// Named retrievers; their implementations are registered with the assembler.
    #[serde(default)]
    pub retrievers: Vec<RetrieverDecl>,
    /// Compactors the application registers by name besides the built-in ones
    /// ([`BUILTIN_COMPACTORS`](super::BUILTIN_COMPACTORS)), e.g. `summarize`, so that policies
    /// naming them can be checked.
    #[serde(default)]
    pub compactors: Vec<String>,
}

impl EngineSpec {
    /// Whether nothing is declared: no context, no retriever, no compactor.
    pub fn is_empty(&self) -> bool {
        self.contexts.is_empty() && self.retrievers.is_empty() && self.compactors.is_empty()
    }

    /// The context named `name`.
    pub fn context(&self, name: &str) -> Option<&ContextDeclaration> {
        self.contexts.iter().find(|c| c.name == name)
    }
}

/// One named context: the messages to assemble and the policy that sizes them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextDeclaration {
    /// The context's name (what `ContextAssembler::assemble` (ctx-runtime) is called with,
    /// and what a `context` message names to nest it).
    pub name: String,
    /// The input variables its templates may use as `{input.<name>}`.
    #[serde(default)]
    pub inputs: Vec<String>,
    /// Budgeting, compaction and expansion. A nested context without a policy uses its parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<ContextPolicySpec>,
    /// The messages, in the order they are sent.
    pub messages: Vec<MessageSpec>,
}

/// One message directive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MessageSpec {
    /// A system message rendered from a template. Leading system messages (and leading packs)
    /// are joined into the system prompt.
    System {
        /// The template.
        content: String,
    },
    /// A user message rendered from a template. The last one becomes the user message.
    User {
        /// The template.
        content: String,
    },
    /// An assistant message rendered from a template (a few-shot answer, for instance).
    Assistant {
        /// The template.
        content: String,
    },
    /// A context pack: the text of a retriever's blocks or of a nested context.
    Context(ContextInsert),
    /// Where the caller's history goes. Without it, history follows the system prompt.
    History,
}

/// A `context` directive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextInsert {
    /// A retriever's name or another context's name.
    pub name: String,
    /// This pack's share of the pack room, in (0, 1]; `pack_budget.default_ratio` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// Whether the pack is sent as its own system message or only through `{context.<name>}`.
    #[serde(default, skip_serializing_if = "PackPlacement::is_message")]
    pub placement: PackPlacement,
}

impl ContextInsert {
    /// A pack sent as its own message, with the default ratio.
    pub fn new(name: impl Into<String>) -> Self {
        ContextInsert { name: name.into(), ratio: None, placement: PackPlacement::Message }
    }
}

/// Where a pack's text appears.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PackPlacement {
    /// As a system message at the directive's position (omitted when the pack is empty). It can
    /// also be referred to as `{context.<name>}`.
    #[default]
    Message,
    /// Only where a template says `{context.<name>}`.
    Variable,
}

impl PackPlacement {
    fn is_message(&self) -> bool {
        *self == PackPlacement::Message
    }
}

/// A retriever declaration: its name, how its query is built, and its page size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrieverDecl {
    /// The name `context` directives use.
    pub name: String,
    /// The query template, e.g. `{input.question}`; only `input.*` variables.
    pub query: String,
    /// Blocks per request (the `limit` of each page), at least 1.
    #[serde(default = "default_limit")]
    pub limit: i64,
}

/// A retriever's `limit` when its declaration leaves it out.
pub(crate) const DEFAULT_LIMIT: i64 = 3;

fn default_limit() -> i64 {
    DEFAULT_LIMIT
}

/// `policy { … }` as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextPolicySpec {
    /// The budget of the assembled input. Absent: unbounded (no compaction, no fill target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_budget: Option<InputBudgetSpec>,
    /// How the pack room is shared between packs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack_budget: Option<PackBudgetSpec>,
    /// `compact` or `error` (the default): what to do when content does not fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow: Option<String>,
    /// The compactor used under `overflow: compact` (default `truncate`; also built in: `sql`,
    /// `dotnet`, `code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compactor: Option<CompactorSpec>,
    /// Paging of retrievers until packs are filled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expansion: Option<ExpansionSpec>,
}

/// `input_budget`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputBudgetSpec {
    /// The most tokens the assembled messages may count, chat overhead included.
    pub max_tokens: i64,
}

/// `pack_budget`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackBudgetSpec {
    /// The ratio of packs without their own. Absent: they share what explicit ratios leave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_ratio: Option<f64>,
}

/// `compactor`: a compactor by registered name (`{"type": "truncate"}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactorSpec {
    /// The registered name.
    #[serde(rename = "type")]
    pub name: String,
}

/// `expansion`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpansionSpec {
    /// The most requests per pack, at least 1.
    pub max_pages: i64,
    /// Paging stops once a pack holds this share of its allocation, in (0, 1].
    pub min_fill_ratio: f64,
}

impl ContextDeclaration {
    /// The names of the packs this declaration inserts, in directive order, with the directive's
    /// index in `messages`.
    pub fn packs(&self) -> impl Iterator<Item = (usize, &ContextInsert)> {
        self.messages.iter().enumerate().filter_map(|(i, m)| match m {
            MessageSpec::Context(c) => Some((i, c)),
            _ => None,
        })
    }

    /// The template of message `index`, when it has one.
    pub fn template(&self, index: usize) -> Option<&str> {
        match self.messages.get(index)? {
            MessageSpec::System { content } | MessageSpec::User { content } | MessageSpec::Assistant { content } => {
                Some(content)
            }
            _ => None,
        }
    }
}
