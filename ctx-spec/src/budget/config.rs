//! The validated configuration of a `manage_context_budget` step.

use serde::Serialize;

use crate::lang::NodeLanguage;

/// The language a `compact_code` rule applies to: a built-in compactor or a registered one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleLanguage {
    /// SQL nodes.
    Sql,
    /// .NET nodes, with or without embedded SQL.
    Dotnet,
    /// Markdown nodes.
    Markdown,
    /// Plain-text nodes.
    Text,
    /// JSON nodes.
    Json,
    /// Nodes of a user compactor (declared in `settings { compactors: [...] }`, registered at
    /// load time).
    Custom(String),
}

impl RuleLanguage {
    /// The built-in names accepted in a rule's `language`.
    pub const NAMES: [&'static str; 5] = crate::lang::BUILTIN_LANGUAGES;

    /// The rule language that matches a node's language, if any (`unknown` matches none).
    pub fn of(language: &NodeLanguage) -> Option<Self> {
        match language {
            NodeLanguage::Unknown => None,
            other => Some(Self::parse(other.name()).unwrap_or_else(|| RuleLanguage::Custom(other.name().to_owned()))),
        }
    }

    /// The name as written in a rule (`sql`, `markdown`, `yaml`).
    pub fn name(&self) -> &str {
        match self {
            RuleLanguage::Sql => "sql",
            RuleLanguage::Dotnet => "dotnet",
            RuleLanguage::Markdown => "markdown",
            RuleLanguage::Text => "text",
            RuleLanguage::Json => "json",
            RuleLanguage::Custom(name) => name,
        }
    }

    /// A built-in language by name.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        match name {
            "sql" => Some(RuleLanguage::Sql),
            "dotnet" => Some(RuleLanguage::Dotnet),
            "markdown" => Some(RuleLanguage::Markdown),
            "text" => Some(RuleLanguage::Text),
            "json" => Some(RuleLanguage::Json),
            _ => None,
        }
    }
}

/// When a rule compacts a node.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "policy", rename_all = "snake_case")]
pub enum CompactPolicy {
    /// Every node of the language.
    Always,
    /// When the context with the raw node appended would exceed `fraction` of
    /// `max_context_tokens`. `fraction` is in (0, 1].
    Threshold {
        /// The trigger, as a fraction of the global budget.
        fraction: f64,
    },
    /// When the step received an inbox message addressed to it on this topic.
    Demand {
        /// The inbox topic.
        inbox_key: String,
    },
}

impl CompactPolicy {
    /// The policy's name as written in a rule.
    pub fn kind(&self) -> PolicyKind {
        match self {
            CompactPolicy::Always => PolicyKind::Always,
            CompactPolicy::Threshold { .. } => PolicyKind::Threshold,
            CompactPolicy::Demand { .. } => PolicyKind::Demand,
        }
    }
}

/// A policy's name, without its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyKind {
    /// `always`.
    Always,
    /// `threshold`.
    Threshold,
    /// `demand`.
    Demand,
}

impl PolicyKind {
    /// The names accepted in a rule's `policy`.
    pub const NAMES: [&'static str; 3] = ["always", "threshold", "demand"];

    /// The name as written in a rule.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Always => "always",
            PolicyKind::Threshold => "threshold",
            PolicyKind::Demand => "demand",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Self> {
        match name {
            "always" => Some(PolicyKind::Always),
            "threshold" => Some(PolicyKind::Threshold),
            "demand" => Some(PolicyKind::Demand),
            _ => None,
        }
    }
}

/// One validated `compact_code` rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct CompactRule {
    /// The nodes it applies to.
    pub language: RuleLanguage,
    /// When it compacts them.
    #[serde(flatten)]
    pub policy: CompactPolicy,
}

/// A `manage_context_budget` step, validated. Built only by
/// [`validate_manage_budget`](super::validate_manage_budget), so every value in it is valid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ManageBudgetConfig {
    pub(crate) rules: Vec<CompactRule>,
    pub(crate) divide_new_content: Option<String>,
    pub(crate) on_ok: String,
    pub(crate) on_over: String,
}

impl ManageBudgetConfig {
    /// The compaction rules, in order.
    pub fn rules(&self) -> &[CompactRule] {
        &self.rules
    }

    /// The divider put before each appended batch, if any.
    pub fn divide_new_content(&self) -> Option<&str> {
        self.divide_new_content.as_deref()
    }

    /// The step to go to when the batch was appended.
    pub fn on_ok(&self) -> &str {
        &self.on_ok
    }

    /// The step to go to when it did not fit.
    pub fn on_over(&self) -> &str {
        &self.on_over
    }

    /// The rules that apply to `language`, with their indices, in order.
    pub fn rules_for<'a>(&'a self, language: &'a RuleLanguage) -> impl Iterator<Item = (usize, &'a CompactRule)> {
        self.rules.iter().enumerate().filter(move |(_, r)| r.language == *language)
    }

    /// The user compactor languages the rules name, in rule order, each once.
    pub fn custom_languages(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for rule in &self.rules {
            if let RuleLanguage::Custom(name) = &rule.language
                && !names.contains(&name.as_str())
            {
                names.push(name);
            }
        }
        names
    }

    /// The inbox topics of the `demand` rules.
    pub fn demand_keys(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().filter_map(|r| match &r.policy {
            CompactPolicy::Demand { inbox_key } => Some(inbox_key.as_str()),
            _ => None,
        })
    }
}
