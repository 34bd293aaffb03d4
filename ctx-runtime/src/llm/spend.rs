//! What a request cost: its tokens priced by kind (uncached input, cache reads, cache writes,
//! output) at the model's [`Price`].
//!
//! The tokens come from the provider's reported [`Usage`] when there is one, which is what the
//! provider bills; otherwise from ctx's own exact counts of the request and the reply, billed as
//! uncached input (ctx cannot know what the provider's cache held, and assuming a hit would
//! understate the bill).

use serde::Serialize;

use super::usage::Usage;
use crate::config::{BilledTokens, Price};

/// What one model request cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Spend {
    /// The request's tokens by how they are billed.
    pub billed: BilledTokens,
    /// The cost in billionths of a US dollar (rounded to the nearest), so reports stay exact
    /// integers; [`Spend::usd`] gives dollars.
    pub nano_usd: u64,
    /// Whether the tokens are the provider's reported usage (`true`) or ctx's exact counts.
    pub reported: bool,
}

impl Spend {
    /// The spend of a request whose provider reported `usage`.
    ///
    /// ```
    /// use ctx::config::Price;
    /// use ctx::llm::{Spend, Usage};
    ///
    /// let price = Price::new(2.50, 1.25, 2.50, 10.00);
    /// let usage = Usage::new(3_000, 100).with_cache(Some(2_048), None);
    /// let spend = Spend::from_usage(&usage, &price);
    /// // 952 uncached at $2.50/M, 2,048 cached at $1.25/M, 100 out at $10/M.
    /// assert_eq!(spend.nano_usd, 952 * 2_500 + 2_048 * 1_250 + 100 * 10_000);
    /// assert!(spend.reported);
    /// ```
    pub fn from_usage(usage: &Usage, price: &Price) -> Spend {
        let billed = BilledTokens::new(
            usage.uncached_prompt_tokens(),
            usage.cache_read_tokens.unwrap_or(0).min(usage.prompt_tokens),
            usage.cache_write_tokens.unwrap_or(0).min(usage.prompt_tokens),
            usage.completion_tokens,
        );
        Spend::priced(billed, price, true)
    }

    /// The spend of a request counted by ctx: `prompt_tokens` of input, all uncached, and
    /// `output_tokens` of output.
    pub fn from_counts(prompt_tokens: usize, output_tokens: usize, price: &Price) -> Spend {
        Spend::priced(BilledTokens::new(prompt_tokens, 0, 0, output_tokens), price, false)
    }

    fn priced(billed: BilledTokens, price: &Price, reported: bool) -> Spend {
        let usd = price.cost(billed);
        // A price is finite and >= 0 once validated; the conversion saturates on anything else.
        let nano_usd = (usd * 1e9).round() as u64;
        Spend { billed, nano_usd, reported }
    }

    /// The cost in US dollars.
    pub fn usd(&self) -> f64 {
        self.nano_usd as f64 / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_is_billed_by_kind_and_counts_as_uncached() {
        let price = Price::new(3.00, 0.30, 3.75, 15.00);
        let usage = Usage::new(10_000, 500).with_cache(Some(8_000), Some(1_500));
        let spend = Spend::from_usage(&usage, &price);
        assert_eq!(spend.billed, BilledTokens::new(500, 8_000, 1_500, 500));
        assert_eq!(spend.nano_usd, 500 * 3_000 + 8_000 * 300 + 1_500 * 3_750 + 500 * 15_000);
        // No cache counts reported: the whole prompt at the input price, never a guessed hit.
        let plain = Spend::from_usage(&Usage::new(10_000, 500), &price);
        assert_eq!(plain.billed, BilledTokens::new(10_000, 0, 0, 500));
        assert_eq!(Spend::from_counts(10_000, 500, &price).billed, plain.billed);
        assert!(!Spend::from_counts(1, 1, &price).reported);
        assert!((plain.usd() - 0.0375).abs() < 1e-12);
    }
}
