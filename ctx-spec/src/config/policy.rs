//! [`LimitsPolicy`]: what happens when the budget contract does not hold.
//!
//! `fail_fast` is the default and the production policy: a violated contract is an error.
//! `auto_clamp` lowers limits in memory instead, and is only ever chosen by an explicit opt-in:
//! `PIPELINE_LIMITS_POLICY=auto_clamp` in the environment, `limits_policy: auto_clamp` in the
//! pipeline's settings, or `"allow_auto_clamp": true` in `config.json`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::codes::Code;
use crate::validation::{ConfigIssue, FieldPath, did_you_mean};

/// The environment variable an operator sets to choose the policy of a deployment.
pub const LIMITS_POLICY_ENV: &str = "PIPELINE_LIMITS_POLICY";

/// What the contract check does with a step that does not fit the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitsPolicy {
    /// Reject the configuration (default; required for production).
    #[default]
    FailFast,
    /// Lower `max_context_tokens`, then the step's output limit, in memory, with a warning for
    /// each change. Missing values are still errors.
    AutoClamp,
}

impl LimitsPolicy {
    /// Every policy name, in a stable order.
    pub const NAMES: [&'static str; 2] = ["fail_fast", "auto_clamp"];

    /// The policy's name as written in settings and the environment.
    pub fn name(self) -> &'static str {
        match self {
            LimitsPolicy::FailFast => "fail_fast",
            LimitsPolicy::AutoClamp => "auto_clamp",
        }
    }

    /// Decides the policy from every place that may choose it. Nothing is read from the process:
    /// the caller passes the environment's value (see [`Self::env_value`]), so tests and the
    /// `pipeline!` macro decide what the environment says.
    ///
    /// Precedence: a non-empty `env_value` (the operator can force `fail_fast` in production
    /// whatever the files say), then the settings' `limits_policy`, then `config.json`'s
    /// `allow_auto_clamp`, then `fail_fast`. An unknown name in either place is an issue, never
    /// a silent default; `settings_at` is the path of the settings block.
    ///
    /// ```
    /// use ctx::config::LimitsPolicy;
    /// use ctx::FieldPath;
    ///
    /// let at = FieldPath::root().key("settings");
    /// assert_eq!(LimitsPolicy::resolve(None, false, None, &at), Ok(LimitsPolicy::FailFast));
    /// assert_eq!(LimitsPolicy::resolve(None, true, None, &at), Ok(LimitsPolicy::AutoClamp));
    /// assert_eq!(LimitsPolicy::resolve(Some("auto_clamp"), false, Some("fail_fast"), &at), Ok(LimitsPolicy::FailFast));
    /// ```
    pub fn resolve(
        settings_value: Option<&str>,
        allow_auto_clamp: bool,
        env_value: Option<&str>,
        settings_at: &FieldPath,
    ) -> Result<LimitsPolicy, Vec<ConfigIssue>> {
        let mut issues = Vec::new();
        let from_settings = settings_value
            .and_then(|name| parse_or_report(name, settings_at.key("limits_policy"), "`limits_policy`", &mut issues));
        let env_path = FieldPath::root().key("env").key(LIMITS_POLICY_ENV);
        let env_name = format!("the environment variable {LIMITS_POLICY_ENV}");
        let from_env = env_value
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .and_then(|name| parse_or_report(name, env_path, &env_name, &mut issues));
        if !issues.is_empty() {
            return Err(issues);
        }
        Ok(from_env.or(from_settings).unwrap_or(if allow_auto_clamp {
            LimitsPolicy::AutoClamp
        } else {
            LimitsPolicy::FailFast
        }))
    }

    /// The value of [`LIMITS_POLICY_ENV`] in this process, for [`Self::resolve`]. A value that
    /// is not Unicode is returned lossily so that `resolve` reports it instead of ignoring it.
    pub fn env_value() -> Option<String> {
        std::env::var_os(LIMITS_POLICY_ENV).map(|v| v.to_string_lossy().into_owned())
    }
}

fn parse_or_report(name: &str, path: FieldPath, what: &str, issues: &mut Vec<ConfigIssue>) -> Option<LimitsPolicy> {
    match name.parse() {
        Ok(policy) => Some(policy),
        Err(UnknownPolicy) => {
            let help = match did_you_mean(name, LimitsPolicy::NAMES) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "use `fail_fast` (production) or `auto_clamp` (dev/test, explicit opt-in)".to_owned(),
            };
            issues.push(
                ConfigIssue::new(Code::UnknownLimitsPolicy, path, format!("unknown limits policy `{name}` in {what}"))
                    .with_help(help),
            );
            None
        }
    }
}

/// A name that is not a [`LimitsPolicy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownPolicy;

impl fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown limits policy: expected `fail_fast` or `auto_clamp`")
    }
}

impl std::error::Error for UnknownPolicy {}

impl FromStr for LimitsPolicy {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "fail_fast" => Ok(LimitsPolicy::FailFast),
            "auto_clamp" => Ok(LimitsPolicy::AutoClamp),
            _ => Err(UnknownPolicy),
        }
    }
}

impl fmt::Display for LimitsPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> FieldPath {
        FieldPath::root().key("settings")
    }

    #[test]
    fn fail_fast_unless_someone_opts_in() {
        use LimitsPolicy::*;
        let r = |s, allow, env| LimitsPolicy::resolve(s, allow, env, &at()).unwrap();
        assert_eq!(r(None, false, None), FailFast);
        assert_eq!(r(None, false, Some("")), FailFast);
        assert_eq!(r(None, false, Some("auto_clamp")), AutoClamp);
        assert_eq!(r(Some("auto_clamp"), false, None), AutoClamp);
        assert_eq!(r(None, true, None), AutoClamp);
        // The settings' explicit choice beats the file's permission; the operator beats both.
        assert_eq!(r(Some("fail_fast"), true, None), FailFast);
        assert_eq!(r(Some("auto_clamp"), true, Some(" fail_fast ")), FailFast);
    }

    #[test]
    fn unknown_names_are_errors_in_both_places() {
        let err = LimitsPolicy::resolve(Some("auto-clamp"), false, Some("yes"), &at()).unwrap_err();
        let found: Vec<_> = err.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect();
        assert_eq!(
            found,
            [
                ("UNKNOWN_LIMITS_POLICY", "settings.limits_policy".to_owned()),
                ("UNKNOWN_LIMITS_POLICY", "env.PIPELINE_LIMITS_POLICY".to_owned()),
            ]
        );
        assert_eq!(err[0].help.as_deref(), Some("did you mean `auto_clamp`?"));
        assert!(err[1].message.contains("PIPELINE_LIMITS_POLICY"), "{}", err[1].message);
    }

    #[test]
    fn names_round_trip() {
        for name in LimitsPolicy::NAMES {
            assert_eq!(name.parse::<LimitsPolicy>().unwrap().name(), name);
        }
        assert_eq!(LimitsPolicy::default(), LimitsPolicy::FailFast);
    }
}
