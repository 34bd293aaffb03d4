//! [`HistoryTrimPolicy`]: how a conversation's history is cut when it is over `max_history_tokens`.
//!
//! Today's policy, `oldest_first`, drops the fewest oldest messages that bring the history
//! within its budget. Once the history is full, every turn then drops a little from the front,
//! so every request starts with a prefix the provider has never seen and its prompt cache misses:
//! fewer tokens, a higher bill (cloudflare/agents#2200). `fold` cuts the history back to a
//! low-water mark in one go when it is over the budget, so the turns that follow append to an
//! unchanged prefix until it is full again. Both keep every request within the budget.
//!
//! Written as `history_trim: fold` (or `oldest_first`) and `history_low_water_percent: 50` in
//! `settings`; the rule is [`HistoryTrimPolicy::from_spec`], called by the settings check.

use serde::{Deserialize, Serialize};

use crate::codes::Code;
use crate::pipeline::definition::SettingsSpec;
use crate::validation::{ConfigIssue, FieldPath, did_you_mean};

/// The low-water mark of `fold` when `history_low_water_percent` is not written: half the budget.
pub const DEFAULT_LOW_WATER_PERCENT: u8 = 50;

/// How history over its budget is cut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HistoryTrimPolicy {
    /// Drop the fewest oldest messages that bring the history within its budget (the default).
    #[default]
    OldestFirst,
    /// When the history is over its budget, drop the oldest messages until it is within
    /// `low_water_percent` percent of the budget, in one fold; while it fits, drop nothing.
    Fold {
        /// The share of the budget the history is cut back to, 1 to 99.
        low_water_percent: u8,
    },
}

impl HistoryTrimPolicy {
    /// The policy names `history_trim` accepts.
    pub const NAMES: [&'static str; 2] = ["oldest_first", "fold"];

    /// The budget the history is cut back to when it is over `max_tokens`: `max_tokens` itself
    /// for `oldest_first`, the low-water mark for `fold` (rounded down, never above `max_tokens`).
    pub fn cut_to(self, max_tokens: usize) -> usize {
        match self {
            HistoryTrimPolicy::OldestFirst => max_tokens,
            HistoryTrimPolicy::Fold { low_water_percent } => {
                let percent = usize::from(low_water_percent.min(100));
                // max_tokens * percent / 100 without overflow for any usize budget.
                (max_tokens / 100).saturating_mul(percent).saturating_add((max_tokens % 100) * percent / 100)
            }
        }
    }

    /// Reads `history_trim` and `history_low_water_percent` from `settings { … }` found at `at`,
    /// reporting every problem under its key.
    ///
    /// ```
    /// use ctx::config::HistoryTrimPolicy;
    /// use ctx::definition::SettingsSpec;
    /// use ctx::FieldPath;
    ///
    /// let at = FieldPath::root().key("settings");
    /// assert_eq!(HistoryTrimPolicy::from_spec(&SettingsSpec::default(), &at), Ok(HistoryTrimPolicy::OldestFirst));
    /// let fold = SettingsSpec::default().history_trim(Some("fold".into())).history_low_water_percent(Some(40));
    /// assert_eq!(HistoryTrimPolicy::from_spec(&fold, &at), Ok(HistoryTrimPolicy::Fold { low_water_percent: 40 }));
    /// assert_eq!(HistoryTrimPolicy::Fold { low_water_percent: 40 }.cut_to(1_000), 400);
    /// ```
    pub fn from_spec(spec: &SettingsSpec, at: &FieldPath) -> Result<HistoryTrimPolicy, Vec<ConfigIssue>> {
        let mut issues = Vec::new();
        let low_water = match spec.history_low_water_percent {
            None => Some(DEFAULT_LOW_WATER_PERCENT),
            Some(v) => match u8::try_from(v) {
                Ok(p) if (1..=99).contains(&p) => Some(p),
                _ => {
                    issues.push(
                        ConfigIssue::new(
                            Code::InvalidHistoryLowWater,
                            at.key("history_low_water_percent"),
                            format!("`history_low_water_percent` is {v}; it must be a percentage from 1 to 99"),
                        )
                        .with_help(format!(
                            "the share of `max_history_tokens` a fold cuts the history back to, e.g. \
                             {DEFAULT_LOW_WATER_PERCENT}"
                        )),
                    );
                    None
                }
            },
        };
        let policy = match spec.history_trim.as_deref() {
            None | Some("oldest_first") => {
                if spec.history_low_water_percent.is_some() && spec.history_trim.is_none() {
                    issues.push(
                        ConfigIssue::new(
                            Code::InvalidHistoryLowWater,
                            at.key("history_low_water_percent"),
                            "`history_low_water_percent` is set but `history_trim` is not `fold`, the only \
                             policy it applies to",
                        )
                        .with_help("add `history_trim: fold`, or remove `history_low_water_percent`"),
                    );
                }
                Some(HistoryTrimPolicy::OldestFirst)
            }
            Some("fold") => low_water.map(|low_water_percent| HistoryTrimPolicy::Fold { low_water_percent }),
            Some(other) => {
                let help = match did_you_mean(other, HistoryTrimPolicy::NAMES) {
                    Some(near) => format!("did you mean `{near}`?"),
                    None => "use `oldest_first` (the default) or `fold`".to_owned(),
                };
                issues.push(
                    ConfigIssue::new(
                        Code::UnknownHistoryTrim,
                        at.key("history_trim"),
                        format!("unknown history trimming policy `{other}`"),
                    )
                    .with_help(help),
                );
                None
            }
        };
        match policy {
            Some(policy) if issues.is_empty() => Ok(policy),
            _ => Err(issues),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> FieldPath {
        FieldPath::root().key("settings")
    }

    fn codes(spec: &SettingsSpec) -> Vec<(&'static str, String)> {
        HistoryTrimPolicy::from_spec(spec, &at())
            .unwrap_err()
            .iter()
            .map(|i| (i.code.as_str(), i.path.to_string()))
            .collect()
    }

    #[test]
    fn the_policy_is_read_and_every_mistake_reported_under_its_key() {
        let fold = SettingsSpec::default().history_trim(Some("fold".into()));
        assert_eq!(HistoryTrimPolicy::from_spec(&fold, &at()), Ok(HistoryTrimPolicy::Fold { low_water_percent: 50 }));
        let oldest = SettingsSpec::default().history_trim(Some("oldest_first".into()));
        assert_eq!(HistoryTrimPolicy::from_spec(&oldest, &at()), Ok(HistoryTrimPolicy::OldestFirst));
        assert_eq!(
            codes(&SettingsSpec::default().history_trim(Some("folded".into()))),
            [("UNKNOWN_HISTORY_TRIM", "settings.history_trim".to_owned())]
        );
        let both = SettingsSpec::default().history_trim(Some("fold".into())).history_low_water_percent(Some(100));
        assert_eq!(codes(&both), [("INVALID_HISTORY_LOW_WATER", "settings.history_low_water_percent".to_owned())]);
        let zero = SettingsSpec::default().history_trim(Some("fold".into())).history_low_water_percent(Some(0));
        assert_eq!(codes(&zero).len(), 1);
        let alone = SettingsSpec::default().history_low_water_percent(Some(40));
        assert_eq!(codes(&alone), [("INVALID_HISTORY_LOW_WATER", "settings.history_low_water_percent".to_owned())]);
    }

    #[test]
    fn the_low_water_mark_is_a_share_of_the_budget_and_never_above_it() {
        let fold = |p| HistoryTrimPolicy::Fold { low_water_percent: p };
        assert_eq!(fold(50).cut_to(1_001), 500);
        assert_eq!(fold(99).cut_to(usize::MAX), usize::MAX / 100 * 99 + (usize::MAX % 100) * 99 / 100);
        assert_eq!(HistoryTrimPolicy::OldestFirst.cut_to(77), 77);
        for budget in [0usize, 1, 99, 100, 12_345] {
            for p in [1u8, 50, 99] {
                assert!(fold(p).cut_to(budget) <= budget);
            }
        }
    }
}
