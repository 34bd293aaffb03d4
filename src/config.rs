//! Model configuration and pipeline settings: the validated, typed values the budget contract
//! and the steps work with.
//!
//! A [`ModelSpec`](crate::definition::ModelSpec) or [`SettingsSpec`](crate::definition::SettingsSpec)
//! holds what was written; [`ModelConfig::from_spec`] and [`Settings::from_spec`] turn it into
//! typed values or report every problem at once as [`ConfigIssue`](crate::ConfigIssue)s
//! with the field path of the offending value. The `pipeline!` macro calls the same functions at
//! compile time, so each rule is written here once. A `config.json` goes through the same rules
//! ([`ConfigFile::load`]) with its own key names, and its problems name the file and the key.
//!
//! Nothing here guesses: no window without a model table entry or an explicit number, no output
//! limit without one being configured, no `auto_clamp` without an explicit opt-in.

#[doc(inline)]
pub use ctx_runtime::config::{
    BilledTokens, ConfigFile, ConfigFileError, ConfigModel, HistoryTrimPolicy, LimitsPolicy, ModelConfig, PRICE_TABLE,
    PRICE_TABLE_DATE, Price, Settings, UnknownPolicy,
};
