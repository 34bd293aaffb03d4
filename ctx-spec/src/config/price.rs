//! Prices as data: what a model's tokens cost, per million, from a dated table or the model's
//! own `price` block, and the rules that need one.
//!
//! A [`Price`] has four rates in US dollars per million tokens: uncached input, input read from
//! the provider's prompt cache, input written to it, and output. [`PRICE_TABLE`] holds the
//! published list prices of the models in ctx's model table on [`PRICE_TABLE_DATE`]; prices change,
//! so a model's `price` block (a [`PriceSpec`]) overrides the table, and a model the table does
//! not price (a newer one, a fine-tune, a local model) has none. A rule that needs a price and
//! finds none is an error under that rule ([`Code::MissingPrice`]), never a silent zero.

use serde::{Deserialize, Serialize};

use crate::codes::Code;
use crate::pipeline::definition::{ModelSource, PipelineDef, PriceSpec};
use crate::validation::{ConfigIssue, FieldPath};

/// The day [`PRICE_TABLE`]'s prices were taken from the providers' published price lists
/// (`https://openai.com/api/pricing`, standard tier).
pub const PRICE_TABLE_DATE: &str = "2025-10-15";

/// What a model's tokens cost, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Price {
    /// Input tokens neither read from nor written to the prompt cache.
    pub input: f64,
    /// Input tokens read from the prompt cache.
    pub cached_input: f64,
    /// Input tokens written to the prompt cache (Anthropic bills them above `input`; OpenAI's
    /// automatic cache writes at `input`).
    pub cache_write: f64,
    /// Output tokens (reasoning tokens included).
    pub output: f64,
}

/// A request's tokens by how they are billed, for [`Price::cost`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BilledTokens {
    /// Input neither read from nor written to the prompt cache.
    pub input: usize,
    /// Input read from the prompt cache.
    pub cached_input: usize,
    /// Input written to the prompt cache.
    pub cache_write: usize,
    /// Output.
    pub output: usize,
}

impl BilledTokens {
    /// Tokens billed as `input` uncached input, `cached_input` cache reads, `cache_write` cache
    /// writes and `output` output.
    pub fn new(input: usize, cached_input: usize, cache_write: usize, output: usize) -> Self {
        BilledTokens { input, cached_input, cache_write, output }
    }
}

impl Price {
    /// A price with these rates (US dollars per million tokens).
    pub const fn new(input: f64, cached_input: f64, cache_write: f64, output: f64) -> Self {
        Price { input, cached_input, cache_write, output }
    }

    /// A price for a provider whose cache reads cost `cached_input` and whose cache writes cost
    /// the input price (OpenAI's automatic prompt caching).
    const fn openai(input: f64, cached_input: f64, output: f64) -> Self {
        Price { input, cached_input, cache_write: input, output }
    }

    /// A price for a model without prompt caching: every input token at `input`.
    pub(crate) const fn uncached(input: f64, output: f64) -> Self {
        Price { input, cached_input: input, cache_write: input, output }
    }

    /// The table's price of `model` ([`PRICE_TABLE`]): an exact name, or a dated snapshot
    /// (`gpt-4o-2024-08-06`) of a name the table prices, unless the table prices that snapshot
    /// apart. `None` for anything else, fine-tunes included (they are billed at their own rates).
    ///
    /// ```
    /// use ctx::config::Price;
    ///
    /// assert_eq!(Price::for_model("gpt-4o").map(|p| p.input), Some(2.50));
    /// assert_eq!(Price::for_model("gpt-4o-2024-11-20").map(|p| p.cached_input), Some(1.25));
    /// assert_eq!(Price::for_model("gpt-4o-2024-05-13").map(|p| p.input), Some(5.00));
    /// assert_eq!(Price::for_model("my-local-model"), None);
    /// ```
    pub fn for_model(model: &str) -> Option<Price> {
        let exact = |name: &str| PRICE_TABLE.iter().find(|(n, _)| *n == name).map(|(_, p)| *p);
        exact(model).or_else(|| {
            // `-YYYY-MM-DD`: the snapshot style of every family priced here.
            let (base, date) = model.rsplit_once('-').and_then(|(rest, day)| {
                let (rest, month) = rest.rsplit_once('-')?;
                let (base, year) = rest.rsplit_once('-')?;
                Some((base, [year, month, day]))
            })?;
            let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
            (digits(date[0], 4) && digits(date[1], 2) && digits(date[2], 2)).then(|| exact(base)).flatten()
        })
    }

    /// What `tokens` cost at this price, in US dollars.
    ///
    /// ```
    /// use ctx::config::{BilledTokens, Price};
    ///
    /// let price = Price::new(2.50, 1.25, 2.50, 10.00);
    /// let cost = price.cost(BilledTokens::new(1_000_000, 2_000_000, 0, 100_000));
    /// assert!((cost - (2.50 + 2.50 + 1.00)).abs() < 1e-9);
    /// ```
    pub fn cost(&self, tokens: BilledTokens) -> f64 {
        let part = |n: usize, rate: f64| n as f64 * rate / 1_000_000.0;
        part(tokens.input, self.input)
            + part(tokens.cached_input, self.cached_input)
            + part(tokens.cache_write, self.cache_write)
            + part(tokens.output, self.output)
    }

    /// The most one input token can cost: the uncached input rate, or the cache-write rate when
    /// that is higher (Anthropic bills cache writes at 1.25× input). A worst case prices every
    /// input token at it, since ctx cannot know what the provider will cache.
    pub fn worst_input(&self) -> f64 {
        self.input.max(self.cache_write)
    }

    /// The most a request of `input` tokens and `output` tokens can cost, in billionths of a US
    /// dollar (rounded as a request's spend is): every input token at [`Self::worst_input`].
    ///
    /// ```
    /// use ctx::config::Price;
    ///
    /// assert_eq!(Price::new(2.50, 1.25, 2.50, 10.00).worst_nano_usd(1_000, 100), 1_000 * 2_500 + 100 * 10_000);
    /// assert_eq!(Price::new(3.00, 0.30, 3.75, 15.00).worst_nano_usd(1_000, 0), 1_000 * 3_750);
    /// ```
    pub fn worst_nano_usd(&self, input: usize, output: usize) -> u64 {
        let billed = if self.cache_write > self.input {
            BilledTokens::new(0, 0, input, output)
        } else {
            BilledTokens::new(input, 0, 0, output)
        };
        (self.cost(billed) * 1e9).round() as u64
    }

    /// The price a `price { … }` block states, or every problem with it under `at`: `input` and
    /// `output` are required; `cached_input` and `cache_write` default to `input`; every rate is
    /// a finite number >= 0.
    pub fn from_spec(spec: &PriceSpec, at: &FieldPath) -> Result<Price, Vec<ConfigIssue>> {
        let mut issues = Vec::new();
        let mut rate = |key: &str, value: Option<f64>, required: bool| -> Option<f64> {
            match value {
                Some(v) if v.is_finite() && v >= 0.0 => Some(v),
                Some(v) => {
                    issues.push(
                        ConfigIssue::new(
                            Code::InvalidPrice,
                            at.key(key),
                            format!("`price.{key}` is {v}; a price is US dollars per million tokens, a number >= 0"),
                        )
                        .with_help(format!("write the provider's list price, e.g. `{key}: 2.50`")),
                    );
                    None
                }
                None if required => {
                    issues.push(
                        ConfigIssue::new(Code::InvalidPrice, at.key(key), format!("`price` has no `{key}`")).with_help(
                            format!(
                                "write `{key}:` in US dollars per million tokens; `input` and `output` are required"
                            ),
                        ),
                    );
                    None
                }
                None => None,
            }
        };
        let input = rate("input", spec.input, true);
        let output = rate("output", spec.output, true);
        let cached_input = rate("cached_input", spec.cached_input, false);
        let cache_write = rate("cache_write", spec.cache_write, false);
        match (input, output) {
            (Some(input), Some(output)) if issues.is_empty() => Ok(Price {
                input,
                cached_input: cached_input.unwrap_or(input),
                cache_write: cache_write.unwrap_or(input),
                output,
            }),
            _ => Err(issues),
        }
    }
}

/// The price of `def`'s model: its `price` block when it has one (an invalid block gives
/// `None`; [`price_issues`] reports it), else the table's price of its name.
pub fn model_price(def: &PipelineDef) -> Option<Price> {
    match &def.model {
        ModelSource::Inline(spec) => match &spec.price {
            Some(block) => Price::from_spec(block, &FieldPath::root()).ok(),
            None => spec.model.as_deref().and_then(Price::for_model),
        },
        ModelSource::ConfigFile(_) => None,
    }
}

/// The price of `def`'s model as the rules see it: its `price` block when it has one (`None` when
/// the block is invalid: never the table's price instead), else the table's price of
/// `model_name`, the model's name as resolved (from the block, or `config.json`'s `model_name`).
pub fn resolved_price(def: &PipelineDef, model_name: Option<&str>) -> Option<Price> {
    match &def.model {
        ModelSource::Inline(spec) if spec.price.is_some() => model_price(def),
        _ => model_name.and_then(Price::for_model),
    }
}

/// The price rules of `def`: a `price` block is valid, and `settings.max_cost_per_run` is a
/// positive number of dollars with a price to apply it to. `model_name` is the model's name as
/// resolved (from the block, or `config.json`'s `model_name`), for the table.
pub fn price_issues(def: &PipelineDef, model_name: Option<&str>) -> Vec<ConfigIssue> {
    let mut issues = Vec::new();
    let root = FieldPath::root();
    let block = match &def.model {
        ModelSource::Inline(spec) => spec.price.as_ref(),
        ModelSource::ConfigFile(_) => None,
    };
    let price = match block {
        Some(block) => Price::from_spec(block, &root.key("model").key("price")).map_err(|e| issues.extend(e)).ok(),
        None => model_name.and_then(Price::for_model),
    };
    if let Some(ratio) = def.settings.billed_token_ratio {
        let at = root.key("settings").key("billed_token_ratio");
        issues.extend(billed_token_ratio_issue(ratio, at, "billed_token_ratio"));
    }
    if let Some(cap) = def.settings.max_cost_per_run {
        let at = root.key("settings").key("max_cost_per_run");
        if !(cap.is_finite() && cap > 0.0) {
            issues.push(
                ConfigIssue::new(
                    Code::InvalidMaxCostPerRun,
                    at.clone(),
                    format!("`max_cost_per_run` is {cap}; it must be a number of US dollars > 0"),
                )
                .with_help("write the most one run may spend, e.g. `max_cost_per_run: 0.05`"),
            );
        }
        // The default model needs a price only when a step uses it (named models: `resolve`).
        let default_used = def.models.is_empty()
            || def.steps.iter().any(|s| s.kind.model_request().is_some_and(|c| c.model.is_none()));
        if price.is_none() && block.is_none() && default_used {
            let named = match model_name {
                Some(name) => format!("model `{name}` has no price in ctx's price table ({PRICE_TABLE_DATE})"),
                None => "the model has no name, so ctx's price table cannot price it".to_owned(),
            };
            issues.push(
                ConfigIssue::new(
                    Code::MissingPrice,
                    at,
                    format!("`max_cost_per_run` needs the model's price, and {named}"),
                )
                .with_help(
                    "give the model its price: `price: { input: 2.50, cached_input: 1.25, output: 10.00 }` \
                     (US dollars per million tokens)",
                ),
            );
        }
    }
    issues
}

/// What the run-time spend caps assume a provider bills per token ctx counts, before its usage
/// shows the ratio, when `settings.billed_token_ratio` is not written: exactly ctx's count.
pub const DEFAULT_BILLED_TOKEN_RATIO: f64 = 1.0;

/// The issue with a `billed_token_ratio` of `ratio` under `at`, if any: it must be a finite
/// number >= 1 (a provider billing less than ctx counts needs no assumption; the caps never price
/// a token below ctx's count). `source` names where it was written, for the message.
pub fn billed_token_ratio_issue(ratio: f64, at: FieldPath, source: &str) -> Option<ConfigIssue> {
    (!(ratio.is_finite() && ratio >= 1.0)).then(|| {
        ConfigIssue::new(
            Code::InvalidBilledTokenRatio,
            at,
            format!(
                "`{source}` is {ratio}; it must be a number >= 1, the most tokens the provider bills per token \
                 ctx counts"
            ),
        )
        .with_help("write 1 when the provider counts as ctx does, or a larger ratio, e.g. `billed_token_ratio: 1.2`")
    })
}

/// OpenAI's list prices (standard tier) on [`PRICE_TABLE_DATE`], US dollars per million tokens,
/// for the chat models of ctx's model table whose price is published. Models without prompt
/// caching bill cached input at the input price. Embedding models, open-weight models and the
/// models released after the table's date are not here: give them a `price` block.
pub const PRICE_TABLE: &[(&str, Price)] = &[
    ("gpt-3.5-turbo", Price::uncached(0.50, 1.50)),
    ("gpt-4", Price::uncached(30.00, 60.00)),
    ("gpt-4-32k", Price::uncached(60.00, 120.00)),
    ("gpt-4-turbo", Price::uncached(10.00, 30.00)),
    ("gpt-4-turbo-preview", Price::uncached(10.00, 30.00)),
    ("gpt-4-1106-preview", Price::uncached(10.00, 30.00)),
    ("gpt-4-0125-preview", Price::uncached(10.00, 30.00)),
    ("gpt-4o", Price::openai(2.50, 1.25, 10.00)),
    // The first gpt-4o snapshot kept its launch price and has no cache discount.
    ("gpt-4o-2024-05-13", Price::uncached(5.00, 15.00)),
    ("gpt-4o-mini", Price::openai(0.15, 0.075, 0.60)),
    ("chatgpt-4o-latest", Price::uncached(5.00, 15.00)),
    ("gpt-4.1", Price::openai(2.00, 0.50, 8.00)),
    ("gpt-4.1-mini", Price::openai(0.40, 0.10, 1.60)),
    ("gpt-4.1-nano", Price::openai(0.10, 0.025, 0.40)),
    ("gpt-4.5-preview", Price::openai(75.00, 37.50, 150.00)),
    ("o1", Price::openai(15.00, 7.50, 60.00)),
    ("o1-pro", Price::uncached(150.00, 600.00)),
    ("o1-mini", Price::openai(1.10, 0.55, 4.40)),
    ("o1-preview", Price::openai(15.00, 7.50, 60.00)),
    ("o3", Price::openai(2.00, 0.50, 8.00)),
    ("o3-pro", Price::uncached(20.00, 80.00)),
    ("o3-mini", Price::openai(1.10, 0.55, 4.40)),
    ("o4-mini", Price::openai(1.10, 0.275, 4.40)),
    ("codex-mini-latest", Price::openai(1.50, 0.375, 6.00)),
    ("gpt-5", Price::openai(1.25, 0.125, 10.00)),
    ("gpt-5-mini", Price::openai(0.25, 0.025, 2.00)),
    ("gpt-5-nano", Price::openai(0.05, 0.005, 0.40)),
    ("gpt-5-pro", Price::uncached(15.00, 120.00)),
    ("gpt-5-codex", Price::openai(1.25, 0.125, 10.00)),
    ("gpt-5-chat-latest", Price::openai(1.25, 0.125, 10.00)),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::definition::{ModelSpec, SettingsSpec};
    use crate::tokens::ModelInfo;

    #[test]
    fn every_priced_model_is_in_the_model_table_and_every_rate_is_sane() {
        for (name, price) in PRICE_TABLE {
            assert!(ModelInfo::lookup(name).is_ok(), "{name} is not in the model table");
            assert!(price.cached_input <= price.input && price.input <= price.cache_write, "{name}");
            assert!(price.input > 0.0 && price.output >= price.input, "{name}");
        }
        assert_eq!(Price::for_model("ft:gpt-4o-mini-2024-07-18:org::id"), None);
        assert_eq!(Price::for_model("gpt-4o-typo"), None);
        assert_eq!(Price::for_model("gpt-4o-2024-13"), None);
        assert_eq!(Price::for_model("gpt-4.1-mini-2025-04-14"), Price::for_model("gpt-4.1-mini"));
    }

    fn def(price: Option<PriceSpec>, cap: Option<f64>, model: Option<&str>) -> PipelineDef {
        let spec = ModelSpec::default().model(model.map(Into::into)).price(price);
        PipelineDef::new("P").model(ModelSource::Inline(spec)).settings(SettingsSpec::default().max_cost_per_run(cap))
    }

    fn found(def: &PipelineDef, name: Option<&str>) -> Vec<(&'static str, String)> {
        price_issues(def, name).iter().map(|i| (i.code.as_str(), i.path.to_string())).collect()
    }

    #[test]
    fn a_cap_without_a_price_is_an_error_never_a_silent_zero() {
        let local = def(None, Some(0.05), Some("my-local-model"));
        assert_eq!(found(&local, Some("my-local-model")), [("MISSING_PRICE", "settings.max_cost_per_run".into())]);
        assert_eq!(found(&def(None, Some(0.05), None), None).len(), 1);
        // The table prices gpt-4o; a block prices anything.
        assert!(found(&def(None, Some(0.05), Some("gpt-4o")), Some("gpt-4o")).is_empty());
        let block = PriceSpec::default().input(Some(0.2)).output(Some(0.8));
        let priced = def(Some(block.clone()), Some(0.05), Some("my-local-model"));
        assert!(found(&priced, Some("my-local-model")).is_empty());
        assert_eq!(model_price(&priced), Some(Price::new(0.2, 0.2, 0.2, 0.8)));
        assert_eq!(
            found(&def(None, Some(-1.0), Some("gpt-4o")), Some("gpt-4o")),
            [("INVALID_MAX_COST_PER_RUN", "settings.max_cost_per_run".into())]
        );
        // Without a cap, no price is needed.
        assert!(found(&def(None, None, Some("my-local-model")), Some("my-local-model")).is_empty());
    }

    #[test]
    fn a_billed_token_ratio_is_a_number_of_at_least_one() {
        let ratio = |r: f64| {
            let mut d = def(None, Some(0.05), Some("gpt-4o"));
            d.settings = d.settings.billed_token_ratio(Some(r));
            found(&d, Some("gpt-4o"))
        };
        assert!(ratio(1.0).is_empty());
        assert!(ratio(3.5).is_empty());
        for bad in [0.99, 0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(ratio(bad), [("INVALID_BILLED_TOKEN_RATIO", "settings.billed_token_ratio".into())], "{bad}");
        }
    }

    #[test]
    fn a_price_block_reports_every_mistake_under_its_key() {
        let bad = PriceSpec::default().input(Some(f64::NAN)).cached_input(Some(-0.5));
        assert_eq!(
            found(&def(Some(bad), None, None), None),
            [
                ("INVALID_PRICE", "model.price.input".into()),
                ("INVALID_PRICE", "model.price.output".into()),
                ("INVALID_PRICE", "model.price.cached_input".into()),
            ]
        );
        let full =
            PriceSpec::default().input(Some(3.0)).cached_input(Some(0.3)).cache_write(Some(3.75)).output(Some(15.0));
        assert_eq!(Price::from_spec(&full, &FieldPath::root()), Ok(Price::new(3.0, 0.3, 3.75, 15.0)));
        assert_eq!(model_price(&def(Some(full), None, Some("gpt-4o"))).map(|p| p.cache_write), Some(3.75));
        assert_eq!(model_price(&def(None, None, Some("gpt-4o"))).map(|p| p.input), Some(2.50));
    }
}
