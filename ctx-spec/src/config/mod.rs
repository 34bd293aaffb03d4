//! Model configuration and pipeline settings: the validated, typed values the budget contract
//! and the steps work with.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::config`.

pub(crate) mod file;
pub(crate) mod file_mcp;
mod history_trim;
mod model;
#[cfg(feature = "hf")]
mod model_files;
mod policy;
mod price;
mod settings;

pub use file::{ConfigFile, ConfigFileError, ConfigModel};
pub use file_mcp::apply_config_mcp_servers;
pub use history_trim::{DEFAULT_LOW_WATER_PERCENT, HistoryTrimPolicy};
pub use model::ModelConfig;
#[cfg(feature = "hf")]
#[cfg_attr(docsrs, doc(cfg(feature = "hf")))]
pub use model_files::{ModelFileKind, ModelFilesConfig, model_files_config};
pub use policy::{LIMITS_POLICY_ENV, LimitsPolicy, UnknownPolicy};
pub use price::{
    BilledTokens, DEFAULT_BILLED_TOKEN_RATIO, PRICE_TABLE, PRICE_TABLE_DATE, Price, billed_token_ratio_issue,
    model_price, price_issues, resolved_price,
};
pub use settings::{DEFAULT_SAFETY_MARGIN_TOKENS, SETTING_NAMES, Settings};

pub(crate) use model::invalid_context_window;
pub(crate) use settings::{invalid_max_context_tokens, missing_history_budget};
