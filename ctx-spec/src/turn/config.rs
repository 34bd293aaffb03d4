//! The settings of turn budgeting, as written and as used, and the one function that validates them.
//!
//! [`TurnBudgetSpec`] holds values as written (numbers as `i64`, the policy as a name) so that
//! [`validate_turn_budget`] can say what is wrong with a negative budget or a misspelt policy; the
//! `pipeline!` macro fills it from literals and reports the issues under the tokens they name.
//! [`TurnBudgetConfig`] is the typed form the runtime uses; it is validated by the same function.

use serde::{Deserialize, Serialize};

use crate::codes::Code;
use crate::validation::{ConfigIssue, FieldPath, did_you_mean};

/// What to do with the best-ranked document that does not fit whole in what a call may still use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartialPolicy {
    /// Leave it out (smaller, lower-ranked documents that fit whole are still packed).
    #[default]
    Skip,
    /// Keep its beginning, cut at a token boundary, followed by the truncation marker.
    Truncate,
    /// Hand it to a caller-supplied `Compactor` (ctx-runtime) with the tokens left.
    Compact,
}

impl PartialPolicy {
    /// The names accepted in a configuration, in declaration order.
    pub const NAMES: [&'static str; 3] = ["skip", "truncate", "compact"];

    /// The policy's configuration name.
    pub fn name(self) -> &'static str {
        match self {
            PartialPolicy::Skip => "skip",
            PartialPolicy::Truncate => "truncate",
            PartialPolicy::Compact => "compact",
        }
    }

    /// The policy called `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "skip" => Some(PartialPolicy::Skip),
            "truncate" => Some(PartialPolicy::Truncate),
            "compact" => Some(PartialPolicy::Compact),
            _ => None,
        }
    }
}

/// How retrieved documents are rendered into a tool result: each document through `template`
/// (`{id}` and `{text}` are replaced), documents joined by `separator`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentFormat {
    /// The block of one document; holds `{text}` exactly once and `{id}` any number of times.
    pub template: String,
    /// What separates two blocks.
    pub separator: String,
    /// Appended to the text of a truncated document, inside its block, so the model knows it is cut.
    pub truncation_marker: String,
}

impl DocumentFormat {
    /// The default block template.
    pub const DEFAULT_TEMPLATE: &'static str = "<document id=\"{id}\">\n{text}\n</document>";
    /// The default separator.
    pub const DEFAULT_SEPARATOR: &'static str = "\n\n";
    /// The default truncation marker.
    pub const DEFAULT_TRUNCATION_MARKER: &'static str = "\n[… truncated]";

    /// The block of one document. Placeholders are replaced in one pass over the template, so a
    /// `{text}` inside an id or a document is left alone.
    pub fn render(&self, id: &str, text: &str) -> String {
        let mut out = String::with_capacity(self.template.len() + id.len() + text.len());
        let mut rest = self.template.as_str();
        while let Some(pos) = rest.find('{') {
            let (before, tail) = rest.split_at(pos);
            out.push_str(before);
            if let Some(after) = tail.strip_prefix("{id}") {
                out.push_str(id);
                rest = after;
            } else if let Some(after) = tail.strip_prefix("{text}") {
                out.push_str(text);
                rest = after;
            } else {
                out.push('{');
                rest = tail.get(1..).unwrap_or("");
            }
        }
        out.push_str(rest);
        out
    }
}

impl Default for DocumentFormat {
    fn default() -> Self {
        DocumentFormat {
            template: Self::DEFAULT_TEMPLATE.to_owned(),
            separator: Self::DEFAULT_SEPARATOR.to_owned(),
            truncation_marker: Self::DEFAULT_TRUNCATION_MARKER.to_owned(),
        }
    }
}

/// Turn budgeting settings as written. `None` means "not given": required fields are reported,
/// optional ones take the defaults of [`TurnBudgetConfig`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnBudgetSpec {
    /// `budget_tokens` (required): what the conversation plus this turn's tool calls and results
    /// may hold.
    pub budget_tokens: Option<i64>,
    /// `context_window` (required): the model's window, for the fallback check.
    pub context_window: Option<i64>,
    /// `fallback_fraction`: the final request is checked against this fraction of the window.
    pub fallback_fraction: Option<f64>,
    /// `on_partial`: `skip`, `truncate` or `compact`.
    pub on_partial: Option<String>,
    /// `min_partial_tokens`: a partial document is only packed when at least this much room is left.
    pub min_partial_tokens: Option<i64>,
    /// `document_template`: see [`DocumentFormat::template`].
    pub document_template: Option<String>,
    /// `document_separator`: see [`DocumentFormat::separator`].
    pub document_separator: Option<String>,
}

/// Turn budgeting settings as the runtime uses them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnBudgetConfig {
    /// Tokens the conversation plus this turn's tool calls and results may hold.
    pub budget_tokens: usize,
    /// The model's context window.
    pub context_window: usize,
    /// The fallback check fires when the final request exceeds this fraction of the window.
    pub fallback_fraction: f64,
    /// What to do with the best document that does not fit whole.
    pub on_partial: PartialPolicy,
    /// The least room worth filling with a partial document.
    pub min_partial_tokens: usize,
    /// How documents are rendered into a tool result.
    pub format: DocumentFormat,
}

impl TurnBudgetConfig {
    /// The default fallback fraction (the spec's 80 % check).
    pub const DEFAULT_FALLBACK_FRACTION: f64 = 0.8;
    /// The default [`Self::min_partial_tokens`].
    pub const DEFAULT_MIN_PARTIAL_TOKENS: usize = 32;

    /// A configuration with the given budget and window and every default.
    pub fn new(budget_tokens: usize, context_window: usize) -> Self {
        TurnBudgetConfig {
            budget_tokens,
            context_window,
            fallback_fraction: Self::DEFAULT_FALLBACK_FRACTION,
            on_partial: PartialPolicy::default(),
            min_partial_tokens: Self::DEFAULT_MIN_PARTIAL_TOKENS,
            format: DocumentFormat::default(),
        }
    }

    /// This configuration with another partial-document policy.
    #[must_use]
    pub fn with_partial(mut self, policy: PartialPolicy) -> Self {
        self.on_partial = policy;
        self
    }

    /// This configuration's values as written, for [`validate_turn_budget`].
    pub fn to_spec(&self) -> TurnBudgetSpec {
        TurnBudgetSpec {
            budget_tokens: Some(i64::try_from(self.budget_tokens).unwrap_or(i64::MAX)),
            context_window: Some(i64::try_from(self.context_window).unwrap_or(i64::MAX)),
            fallback_fraction: Some(self.fallback_fraction),
            on_partial: Some(self.on_partial.name().to_owned()),
            min_partial_tokens: Some(i64::try_from(self.min_partial_tokens).unwrap_or(i64::MAX)),
            document_template: Some(self.format.template.clone()),
            document_separator: Some(self.format.separator.clone()),
        }
    }

    /// Every problem with this configuration (empty when valid), with paths from the root.
    pub fn validate(&self) -> Vec<ConfigIssue> {
        validate_turn_budget(&self.to_spec(), &FieldPath::root())
    }
}

impl TurnBudgetSpec {
    /// The typed configuration, or every problem found (paths under `at`).
    pub fn resolve(&self, at: &FieldPath) -> Result<TurnBudgetConfig, Vec<ConfigIssue>> {
        let issues = validate_turn_budget(self, at);
        if !issues.is_empty() {
            return Err(issues);
        }
        // Validation guarantees presence and ranges; the fallbacks below are unreachable.
        let size = |v: Option<i64>, default: usize| v.and_then(|v| usize::try_from(v).ok()).unwrap_or(default);
        let defaults = DocumentFormat::default();
        Ok(TurnBudgetConfig {
            budget_tokens: size(self.budget_tokens, 0),
            context_window: size(self.context_window, 0),
            fallback_fraction: self.fallback_fraction.unwrap_or(TurnBudgetConfig::DEFAULT_FALLBACK_FRACTION),
            on_partial: self.on_partial.as_deref().and_then(PartialPolicy::from_name).unwrap_or_default(),
            min_partial_tokens: size(self.min_partial_tokens, TurnBudgetConfig::DEFAULT_MIN_PARTIAL_TOKENS),
            format: DocumentFormat {
                template: self.document_template.clone().unwrap_or(defaults.template),
                separator: self.document_separator.clone().unwrap_or(defaults.separator),
                truncation_marker: defaults.truncation_marker,
            },
        })
    }
}

/// Every problem with turn budgeting settings, each with the path (under `at`) of the offending
/// value. Empty when the settings are valid.
pub fn validate_turn_budget(spec: &TurnBudgetSpec, at: &FieldPath) -> Vec<ConfigIssue> {
    let mut issues = Vec::new();
    let positive = |issues: &mut Vec<ConfigIssue>, name: &str, value: Option<i64>, help: &str| match value {
        None => {
            issues.push(
                ConfigIssue::new(Code::TurnSettingMissing, at.key(name), format!("`{name}` is required"))
                    .with_help(help.to_owned()),
            );
            None
        }
        Some(v) if v <= 0 => {
            issues.push(
                ConfigIssue::new(Code::TurnSettingInvalid, at.key(name), format!("`{name}` is {v}; it must be > 0"))
                    .with_help(help.to_owned()),
            );
            None
        }
        Some(v) => Some(v),
    };
    let budget = positive(
        &mut issues,
        "budget_tokens",
        spec.budget_tokens,
        "set the tokens the conversation and this turn's tool results may hold, e.g. 100_000",
    );
    let window = positive(
        &mut issues,
        "context_window",
        spec.context_window,
        "set the model's context window in tokens, e.g. 128_000",
    );
    if let (Some(budget), Some(window)) = (budget, window)
        && budget > window
    {
        issues.push(
            ConfigIssue::new(
                Code::TurnBudgetExceedsWindow,
                at.key("budget_tokens"),
                format!("`budget_tokens` is {budget}, more than the context window of {window}"),
            )
            .with_help(format!("lower `budget_tokens` to at most {window}, leaving room for the answer")),
        );
    }
    if let Some(f) = spec.fallback_fraction
        && !(f.is_finite() && f > 0.0 && f <= 1.0)
    {
        issues.push(
            ConfigIssue::new(
                Code::TurnFallbackFractionInvalid,
                at.key("fallback_fraction"),
                format!("`fallback_fraction` is {f}; it must be in (0, 1]"),
            )
            .with_help("use a fraction of the window such as 0.8"),
        );
    }
    if let Some(name) = spec.on_partial.as_deref()
        && PartialPolicy::from_name(name).is_none()
    {
        let closest =
            did_you_mean(name, PartialPolicy::NAMES).map(|n| format!("did you mean `{n}`? ")).unwrap_or_default();
        issues.push(
            ConfigIssue::new(
                Code::TurnPartialPolicyUnknown,
                at.key("on_partial"),
                format!("`on_partial` is `{name}`, which is not a policy"),
            )
            .with_help(format!("{closest}expected one of: {}", PartialPolicy::NAMES.join(", "))),
        );
    }
    if let Some(m) = spec.min_partial_tokens
        && m < 0
    {
        issues.push(
            ConfigIssue::new(
                Code::TurnSettingInvalid,
                at.key("min_partial_tokens"),
                format!("`min_partial_tokens` is {m}; it must be >= 0"),
            )
            .with_help("use 0 to pack a partial document into any room left"),
        );
    }
    if let Some(template) = spec.document_template.as_deref() {
        let n = template.matches("{text}").count();
        if n != 1 {
            issues.push(
                ConfigIssue::new(
                    Code::TurnDocumentTemplateInvalid,
                    at.key("document_template"),
                    format!("`document_template` holds `{{text}}` {n} times; it must hold it exactly once"),
                )
                .with_help(
                    "write the block of one document, e.g. \"<document id=\\\"{id}\\\">\\n{text}\\n</document>\"",
                ),
            );
        }
    }
    issues
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_replaces_placeholders_in_the_template_only() {
        let f = DocumentFormat { template: "[{id}] {text} {x}".into(), ..DocumentFormat::default() };
        assert_eq!(f.render("a{text}", "b{id}"), "[a{text}] b{id} {x}");
    }

    #[test]
    fn defaults_are_valid_and_resolve() {
        let spec = TurnBudgetSpec { budget_tokens: Some(1000), context_window: Some(4096), ..Default::default() };
        let config = spec.resolve(&FieldPath::root()).unwrap();
        assert_eq!(config, TurnBudgetConfig::new(1000, 4096));
        assert!(config.validate().is_empty());
    }

    #[test]
    fn every_problem_is_reported_with_its_path() {
        let at = FieldPath::root().key("settings").key("turn_budget");
        let spec = TurnBudgetSpec {
            budget_tokens: Some(-5),
            context_window: None,
            fallback_fraction: Some(1.5),
            on_partial: Some("trunc".into()),
            min_partial_tokens: Some(-1),
            document_template: Some("{id}".into()),
            document_separator: None,
        };
        let issues = validate_turn_budget(&spec, &at);
        let got: Vec<(String, &str)> = issues.iter().map(|i| (i.path.to_string(), i.code.as_str())).collect();
        assert_eq!(
            got,
            vec![
                ("settings.turn_budget.budget_tokens".into(), "TURN_SETTING_INVALID"),
                ("settings.turn_budget.context_window".into(), "TURN_SETTING_MISSING"),
                ("settings.turn_budget.fallback_fraction".into(), "TURN_FALLBACK_FRACTION_INVALID"),
                ("settings.turn_budget.on_partial".into(), "TURN_PARTIAL_POLICY_UNKNOWN"),
                ("settings.turn_budget.min_partial_tokens".into(), "TURN_SETTING_INVALID"),
                ("settings.turn_budget.document_template".into(), "TURN_DOCUMENT_TEMPLATE_INVALID"),
            ]
        );
        assert!(issues[3].help.as_deref().unwrap().contains("did you mean `truncate`?"));
        assert!(issues[0].message.contains("-5"));
    }

    #[test]
    fn fraction_bounds_and_budget_against_window() {
        let base = TurnBudgetConfig::new(100, 1000);
        for (f, ok) in [(1.0, true), (0.01, true), (0.0, false), (-0.5, false), (f64::NAN, false), (1.0001, false)] {
            let config = TurnBudgetConfig { fallback_fraction: f, ..base.clone() };
            assert_eq!(config.validate().is_empty(), ok, "fraction {f}");
        }
        let issues = TurnBudgetConfig::new(2000, 1000).validate();
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].code.as_str(), "TURN_BUDGET_EXCEEDS_WINDOW");
        assert_eq!(TurnBudgetConfig::new(0, 1000).validate()[0].path.to_string(), "budget_tokens");
    }
}
