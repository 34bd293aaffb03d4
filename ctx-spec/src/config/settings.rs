//! [`Settings`]: the pipeline's budgets, validated from a [`SettingsSpec`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::history_trim::HistoryTrimPolicy;
use super::policy::LimitsPolicy;
use crate::codes::Code;
use crate::pipeline::definition::SettingsSpec;
use crate::validation::{ConfigIssue, FieldPath, non_negative, positive};

/// `budget_safety_margin_tokens` when the settings do not set it.
pub const DEFAULT_SAFETY_MARGIN_TOKENS: usize = 128;

/// The settings with a meaning of their own; any other key is a named integer setting
/// (`max_turn_loops`, …).
pub const SETTING_NAMES: [&str; 9] = [
    "max_context_tokens",
    "max_question_tokens",
    "max_variable_tokens",
    "max_history_tokens",
    "budget_safety_margin_tokens",
    "limits_policy",
    "compactors",
    "node_frame",
    "carry_context",
];

/// The pipeline's budgets and its limits policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Settings {
    /// The global budget of `context_blocks`. Always > 0 once validated, except in a pipeline
    /// that needs none (no request renders the context, nothing fetches or budgets it:
    /// [`pipeline_needs_context_budget`](crate::pipeline::pipeline_needs_context_budget)), where
    /// it may be 0 or left out (then 0).
    pub max_context_tokens: usize,
    /// The budget of `history_dialog`; present whenever a `call_model` step uses history. It
    /// bounds the history messages as the request counts them (contents, roles and
    /// per-message overhead), so that it adds exactly to the contract's fixed prompt.
    pub max_history_tokens: Option<usize>,
    /// `budget_safety_margin_tokens` (default [`DEFAULT_SAFETY_MARGIN_TOKENS`]).
    pub safety_margin_tokens: usize,
    /// What a violated contract does.
    pub policy: LimitsPolicy,
    /// `max_question_tokens`: the declared budget of the question, > 0; `None` lets the contract
    /// give it the room the window leaves ([`crate::contract::inputs`]).
    pub max_question_tokens: Option<usize>,
    /// `max_variable_tokens`: the declared budget of each variable a step renders, > 0; `None`
    /// lets the contract give it the room the window leaves.
    pub max_variable_tokens: Option<usize>,
    /// Every other named setting (`max_turn_loops`, …), each >= 0.
    pub extra: BTreeMap<String, u64>,
}

crate::setters!(Settings {
    max_history_tokens: Option<usize>,
    safety_margin_tokens: usize,
    policy: LimitsPolicy,
    max_question_tokens: Option<usize>,
    max_variable_tokens: Option<usize>,
    extra: BTreeMap<String, u64>,
});

impl Settings {
    /// Settings with `max_context_tokens`, no history budget, the default margin
    /// ([`DEFAULT_SAFETY_MARGIN_TOKENS`]) and policy (`fail_fast`), no named setting; set the
    /// others with the setters named after them. Not validated: [`Settings::from_spec`] is.
    ///
    /// ```
    /// use ctx::config::{LimitsPolicy, Settings};
    ///
    /// let settings = Settings::new(9_000).max_history_tokens(Some(2_000)).policy(LimitsPolicy::AutoClamp);
    /// assert_eq!(settings.safety_margin_tokens, 128);
    /// ```
    pub fn new(max_context_tokens: usize) -> Self {
        Settings {
            max_context_tokens,
            max_history_tokens: None,
            safety_margin_tokens: DEFAULT_SAFETY_MARGIN_TOKENS,
            policy: LimitsPolicy::default(),
            max_question_tokens: None,
            max_variable_tokens: None,
            extra: BTreeMap::new(),
        }
    }

    /// Validates `settings { … }` found at `at`, with the policy chosen by the settings alone
    /// (`limits_policy`, default `fail_fast`). `uses_history` says whether any `call_model` step
    /// has `use_history: true`. Every problem is reported, each under its key.
    ///
    /// ```
    /// use ctx::config::{LimitsPolicy, Settings};
    /// use ctx::definition::SettingsSpec;
    /// use ctx::FieldPath;
    ///
    /// let spec = SettingsSpec::default().max_context_tokens(Some(9_000));
    /// let settings = Settings::from_spec(&spec, false, &FieldPath::root().key("settings")).unwrap();
    /// assert_eq!((settings.safety_margin_tokens, settings.policy), (128, LimitsPolicy::FailFast));
    /// ```
    pub fn from_spec(spec: &SettingsSpec, uses_history: bool, at: &FieldPath) -> Result<Settings, Vec<ConfigIssue>> {
        Self::from_spec_with(spec, uses_history, at, false, None)
    }

    /// [`Self::from_spec`] with the other places that may choose the policy: `config.json`'s
    /// `allow_auto_clamp` and the value of `PIPELINE_LIMITS_POLICY` (see
    /// [`LimitsPolicy::resolve`] for the precedence).
    pub fn from_spec_with(
        spec: &SettingsSpec,
        uses_history: bool,
        at: &FieldPath,
        allow_auto_clamp: bool,
        env_value: Option<&str>,
    ) -> Result<Settings, Vec<ConfigIssue>> {
        Self::for_pipeline(spec, (uses_history, true), at, allow_auto_clamp, env_value)
    }

    /// [`Self::from_spec_with`] for a pipeline whose needs are known: `(uses_history,
    /// needs_context)`, the second `pipeline::pipeline_needs_context_budget`. Without a need for
    /// it, `max_context_tokens` may be 0 or left out (0).
    pub(crate) fn for_pipeline(
        spec: &SettingsSpec,
        (uses_history, needs_context): (bool, bool),
        at: &FieldPath,
        allow_auto_clamp: bool,
        env_value: Option<&str>,
    ) -> Result<Settings, Vec<ConfigIssue>> {
        let mut issues = Vec::new();
        // A misspelt budget (`max_context_token: 4000`) is reported once, as the unknown setting
        // it is, not a second time as the budget it fails to set.
        let misspelt = |setting: &str| spec.extra.keys().any(|name| misspelling_of(name) == Some(setting));

        let max_context_tokens = match spec.max_context_tokens {
            None if misspelt("max_context_tokens") => None,
            // No request renders the context: its budget is 0, and a 0 says so.
            None | Some(0) if !needs_context => Some(0),
            None => {
                issues.push(
                    ConfigIssue::new(
                        Code::MissingMaxContextTokens,
                        at.key("max_context_tokens"),
                        "`max_context_tokens` is missing; the context budget is required",
                    )
                    .with_help("set `max_context_tokens` to about 60-70% of the model's context window"),
                );
                None
            }
            Some(v) => positive(v).or_else(|| {
                issues.push(invalid_max_context_tokens(at.key("max_context_tokens"), v));
                None
            }),
        };

        let max_history_tokens = match spec.max_history_tokens {
            None => {
                if uses_history {
                    issues.push(missing_history_budget(at.key("max_history_tokens"), None));
                }
                None
            }
            Some(v) => non_negative(v).or_else(|| {
                issues.push(
                    ConfigIssue::new(
                        Code::InvalidMaxHistoryTokens,
                        at.key("max_history_tokens"),
                        format!("`max_history_tokens` is {v}; it must be an integer >= 0"),
                    )
                    .with_help("set `max_history_tokens` to about 10-15% of the model's context window"),
                );
                None
            }),
        };

        let safety_margin_tokens = match spec.budget_safety_margin_tokens {
            None => Some(DEFAULT_SAFETY_MARGIN_TOKENS),
            Some(v) => non_negative(v).or_else(|| {
                issues.push(
                    ConfigIssue::new(
                        Code::InvalidSafetyMargin,
                        at.key("budget_safety_margin_tokens"),
                        format!("`budget_safety_margin_tokens` is {v}; it must be an integer >= 0"),
                    )
                    .with_help(format!("use 128-256, or remove it for the default {DEFAULT_SAFETY_MARGIN_TOKENS}")),
                );
                None
            }),
        };

        // The budgets of the run-time inputs: when written, a positive number of tokens.
        let mut input_budget = |key: &str, written: Option<i64>| match written {
            None => Some(None),
            Some(v) => match positive(v) {
                Some(tokens) => Some(Some(tokens)),
                None => {
                    issues.push(invalid_input_budget(at.key(key), key, v));
                    None
                }
            },
        };
        let max_question_tokens = input_budget("max_question_tokens", spec.max_question_tokens);
        let max_variable_tokens = input_budget("max_variable_tokens", spec.max_variable_tokens);

        let mut extra = BTreeMap::new();
        for (name, &v) in &spec.extra {
            // `max_context_token: 4000` would otherwise be a new named setting, and the budget
            // the user meant to set would silently keep its default (or be reported missing).
            if let Some(near) = misspelling_of(name) {
                issues.push(
                    ConfigIssue::new(Code::UnknownSetting, at.key(name.as_str()), format!("unknown setting `{name}`"))
                        .with_help(format!("did you mean `{near}`?")),
                );
                continue;
            }
            match u64::try_from(v) {
                Ok(v) => {
                    extra.insert(name.clone(), v);
                }
                Err(_) => issues.push(
                    ConfigIssue::new(
                        Code::InvalidSetting,
                        at.key(name.as_str()),
                        format!("setting `{name}` is {v}; settings must be integers >= 0"),
                    )
                    .with_help(format!("set `{name}` to 0 or more")),
                ),
            }
        }

        let policy = match LimitsPolicy::resolve(spec.limits_policy.as_deref(), allow_auto_clamp, env_value, at) {
            Ok(policy) => Some(policy),
            Err(found) => {
                issues.extend(found);
                None
            }
        };

        // How history over its budget is cut: checked here so every settings mistake is reported
        // at once; the runtime reads the policy with the same function when it loads.
        if let Err(found) = HistoryTrimPolicy::from_spec(spec, at) {
            issues.extend(found);
        }

        match (max_context_tokens, safety_margin_tokens, policy, max_question_tokens, max_variable_tokens) {
            (
                Some(max_context_tokens),
                Some(safety_margin_tokens),
                Some(policy),
                Some(max_question_tokens),
                Some(max_variable_tokens),
            ) if issues.is_empty() => Ok(Settings {
                max_context_tokens,
                max_history_tokens,
                safety_margin_tokens,
                policy,
                max_question_tokens,
                max_variable_tokens,
                extra,
            }),
            _ => Err(issues),
        }
    }

    /// A named extra setting (`max_turn_loops`, …).
    pub fn get(&self, name: &str) -> Option<u64> {
        self.extra.get(name).copied()
    }
}

/// The issue for a `max_context_tokens` that is not > 0, shared by the settings check and the
/// contract check (which also sees `Settings` built without [`Settings::from_spec`]).
pub(crate) fn invalid_max_context_tokens(path: FieldPath, value: impl std::fmt::Display) -> ConfigIssue {
    ConfigIssue::new(
        Code::InvalidMaxContextTokens,
        path,
        format!("`max_context_tokens` is {value}; it must be an integer > 0"),
    )
    .with_help("set `max_context_tokens` to about 60-70% of the model's context window")
}

/// The issue for a run-time input's budget (`max_question_tokens`, `max_variable_tokens`) written
/// as `value`, which is not an integer > 0.
fn invalid_input_budget(path: FieldPath, key: &str, value: i64) -> ConfigIssue {
    ConfigIssue::new(Code::InvalidInputBudget, path, format!("`{key}` is {value}; it must be an integer > 0"))
        .with_help(format!(
            "set `{key}` to the longest value a run may bring, in tokens (e.g. 1000), or remove it to give it the \
             room the window leaves"
        ))
}

/// The rule "a step that uses history needs `max_history_tokens`", shared by the settings check
/// and the contract check. `step` names the step when the problem is reported under it.
/// The typed setting `name` is a typo of (at most two edits away, ignoring case), if any. Looser
/// likeness (`did_you_mean`) would take legitimate named settings such as `max_turn_loops` for
/// typos of `max_history_tokens`.
fn misspelling_of(name: &str) -> Option<&'static str> {
    crate::validation::did_you_mean_by(name, SETTING_NAMES, crate::validation::Likeness::Typo)
}

pub(crate) fn missing_history_budget(path: FieldPath, step: Option<&str>) -> ConfigIssue {
    let who = match step {
        Some(id) => format!("call_model step `{id}` has"),
        None => "a call_model step has".to_owned(),
    };
    ConfigIssue::new(
        Code::MissingMaxHistoryTokens,
        path,
        format!("{who} `use_history: true` but `settings.max_history_tokens` is not set"),
    )
    .with_help("set `max_history_tokens` in the settings (about 10-15% of the window), or remove `use_history`")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> FieldPath {
        FieldPath::root().key("settings")
    }

    fn found(issues: &[ConfigIssue]) -> Vec<(&'static str, String)> {
        issues.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect()
    }

    fn spec(ctx: Option<i64>, hist: Option<i64>, margin: Option<i64>) -> SettingsSpec {
        SettingsSpec {
            max_context_tokens: ctx,
            max_history_tokens: hist,
            budget_safety_margin_tokens: margin,
            ..Default::default()
        }
    }

    #[test]
    fn defaults_and_values() {
        let s = Settings::from_spec(&spec(Some(9000), None, None), false, &at()).unwrap();
        assert_eq!(s.max_context_tokens, 9000);
        assert_eq!(s.max_history_tokens, None);
        assert_eq!(s.safety_margin_tokens, DEFAULT_SAFETY_MARGIN_TOKENS);
        assert_eq!(s.policy, LimitsPolicy::FailFast);
        let s = Settings::from_spec(&spec(Some(1), Some(0), Some(0)), true, &at()).unwrap();
        assert_eq!((s.max_history_tokens, s.safety_margin_tokens), (Some(0), 0));
    }

    #[test]
    fn max_context_tokens_must_exist_and_be_positive() {
        let e = Settings::from_spec(&spec(None, None, None), false, &at()).unwrap_err();
        assert_eq!(found(&e), [("MISSING_MAX_CONTEXT_TOKENS", "settings.max_context_tokens".to_owned())]);
        for bad in [0, -1] {
            let e = Settings::from_spec(&spec(Some(bad), None, None), false, &at()).unwrap_err();
            assert_eq!(found(&e), [("INVALID_MAX_CONTEXT_TOKENS", "settings.max_context_tokens".to_owned())]);
            assert!(e[0].message.contains(&bad.to_string()), "{}", e[0].message);
        }
    }

    #[test]
    fn input_budgets_are_positive_when_written() {
        let s = Settings::from_spec(&spec(Some(10), None, None), false, &at()).unwrap();
        assert_eq!((s.max_question_tokens, s.max_variable_tokens), (None, None));
        let written = spec(Some(10), None, None).max_question_tokens(Some(700)).max_variable_tokens(Some(40));
        let s = Settings::from_spec(&written, false, &at()).unwrap();
        assert_eq!((s.max_question_tokens, s.max_variable_tokens), (Some(700), Some(40)));
        let bad = spec(Some(10), None, None).max_question_tokens(Some(0)).max_variable_tokens(Some(-5));
        let e = Settings::from_spec(&bad, false, &at()).unwrap_err();
        assert_eq!(
            found(&e),
            [
                ("INVALID_INPUT_BUDGET", "settings.max_question_tokens".to_owned()),
                ("INVALID_INPUT_BUDGET", "settings.max_variable_tokens".to_owned()),
            ]
        );
        assert!(e[1].message.contains("`max_variable_tokens` is -5"), "{}", e[1].message);
        // A typo is one error, not a named setting that leaves the budget to its default.
        let mut typo = spec(Some(10), None, None);
        typo.extra.insert("max_question_token".into(), 500);
        let e = Settings::from_spec(&typo, false, &at()).unwrap_err();
        assert_eq!(e[0].help.as_deref(), Some("did you mean `max_question_tokens`?"));
    }

    #[test]
    fn a_misspelt_setting_is_one_error_not_a_new_named_setting() {
        let mut typo = spec(None, None, None);
        typo.extra.insert("max_context_token".into(), 4000);
        typo.extra.insert("max_turn_loops".into(), 3);
        let e = Settings::from_spec(&typo, false, &at()).unwrap_err();
        assert_eq!(found(&e), [("UNKNOWN_SETTING", "settings.max_context_token".to_owned())]);
        assert_eq!(e[0].help.as_deref(), Some("did you mean `max_context_tokens`?"));
    }

    #[test]
    fn history_budget_is_required_only_with_history() {
        assert!(Settings::from_spec(&spec(Some(10), None, None), false, &at()).is_ok());
        let e = Settings::from_spec(&spec(Some(10), None, None), true, &at()).unwrap_err();
        assert_eq!(found(&e), [("MISSING_MAX_HISTORY_TOKENS", "settings.max_history_tokens".to_owned())]);
        // A negative budget is wrong whether or not it is used.
        let e = Settings::from_spec(&spec(Some(10), Some(-1), None), false, &at()).unwrap_err();
        assert_eq!(found(&e), [("INVALID_MAX_HISTORY_TOKENS", "settings.max_history_tokens".to_owned())]);
    }

    #[test]
    fn margin_extras_and_policy_are_checked_together() {
        let mut s = spec(Some(0), Some(-2), Some(-1));
        s.extra.insert("max_turn_loops".into(), -3);
        s.extra.insert("top_k".into(), 5);
        s.limits_policy = Some("clamp".into());
        let e = Settings::from_spec(&s, true, &at()).unwrap_err();
        assert_eq!(
            found(&e),
            [
                ("INVALID_MAX_CONTEXT_TOKENS", "settings.max_context_tokens".to_owned()),
                ("INVALID_MAX_HISTORY_TOKENS", "settings.max_history_tokens".to_owned()),
                ("INVALID_SAFETY_MARGIN", "settings.budget_safety_margin_tokens".to_owned()),
                ("INVALID_SETTING", "settings.max_turn_loops".to_owned()),
                ("UNKNOWN_LIMITS_POLICY", "settings.limits_policy".to_owned()),
            ]
        );
        s = spec(Some(5), None, None);
        s.extra.insert("max_turn_loops".into(), 3);
        let ok = Settings::from_spec(&s, false, &at()).unwrap();
        assert_eq!(ok.get("max_turn_loops"), Some(3));
        assert_eq!(ok.get("nope"), None);
    }

    #[test]
    fn opt_ins_reach_the_policy() {
        let s = spec(Some(5), None, None);
        assert_eq!(Settings::from_spec_with(&s, false, &at(), true, None).unwrap().policy, LimitsPolicy::AutoClamp);
        let s2 = SettingsSpec { limits_policy: Some("auto_clamp".into()), ..s.clone() };
        assert_eq!(Settings::from_spec(&s2, false, &at()).unwrap().policy, LimitsPolicy::AutoClamp);
        let env = Some("auto_clamp");
        assert_eq!(Settings::from_spec_with(&s, false, &at(), false, env).unwrap().policy, LimitsPolicy::AutoClamp);
        let e = Settings::from_spec_with(&s, false, &at(), false, Some("loose")).unwrap_err();
        assert_eq!(found(&e), [("UNKNOWN_LIMITS_POLICY", "env.PIPELINE_LIMITS_POLICY".to_owned())]);
    }
}
