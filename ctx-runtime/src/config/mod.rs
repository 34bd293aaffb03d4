//! Model configuration and pipeline settings: the validated, typed values the budget contract
//! and the steps work with.
//!
//! A [`ModelSpec`](crate::pipeline::ModelSpec) or [`SettingsSpec`](crate::pipeline::SettingsSpec)
//! holds what was written; [`ModelConfig::from_spec`] and [`Settings::from_spec`] turn it into
//! typed values or report every problem at once as [`ConfigIssue`](crate::validation::ConfigIssue)s
//! with the field path of the offending value. The `pipeline!` macro calls the same functions at
//! compile time, so each rule is written here once. A `config.json` goes through the same rules
//! ([`ConfigFile::load`]) with its own key names, and its problems name the file and the key.
//!
//! Nothing here guesses: no window without a model table entry or an explicit number, no output
//! limit without one being configured, no `auto_clamp` without an explicit opt-in.

mod file;
mod model;
mod policy;
mod settings;

pub use file::{ConfigFile, ConfigFileError};
pub use model::ModelConfig;
pub use policy::{LIMITS_POLICY_ENV, LimitsPolicy, UnknownPolicy};
pub use settings::{DEFAULT_SAFETY_MARGIN_TOKENS, Settings};

pub(crate) use model::invalid_context_window;
pub(crate) use settings::{invalid_max_context_tokens, missing_history_budget};

/// The closest of `candidates` to `value`, when it is close enough to be a likely typo.
pub(crate) fn did_you_mean<'a>(value: &str, candidates: &[&'a str]) -> Option<&'a str> {
    // Case is compared away: `AUTO_CLAMP` should suggest `auto_clamp`.
    let value = value.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(&value, c), *c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// A positive `i64` as `usize`, or `None` when it is not positive or does not fit.
pub(crate) fn positive(value: i64) -> Option<usize> {
    if value > 0 { usize::try_from(value).ok() } else { None }
}

/// A non-negative `i64` as `usize`, or `None` when it is negative or does not fit.
pub(crate) fn non_negative(value: i64) -> Option<usize> {
    usize::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_only_for_near_misses() {
        assert_eq!(did_you_mean("auto_clmap", &["fail_fast", "auto_clamp"]), Some("auto_clamp"));
        assert_eq!(did_you_mean("cl100k", &["cl100k_base", "o200k_base"]), Some("cl100k_base"));
        assert_eq!(did_you_mean("AUTO_CLAMP", &["fail_fast", "auto_clamp"]), Some("auto_clamp"));
        assert_eq!(did_you_mean("zzz", &["fail_fast", "auto_clamp"]), None);
    }

    #[test]
    fn integer_conversions_reject_out_of_range_values() {
        assert_eq!(positive(0), None);
        assert_eq!(positive(-3), None);
        assert_eq!(positive(7), Some(7));
        assert_eq!(non_negative(0), Some(0));
        assert_eq!(non_negative(-1), None);
    }
}
