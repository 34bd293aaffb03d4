//! What each part of a request cost: the request's billed tokens ([`Spend::billed`]) laid over
//! its anatomy and priced at the model's [`Price`].
//!
//! A provider's prompt cache serves a prefix of the prompt: the tokens it read from the cache
//! are the prompt's first ones, the tokens it wrote to the cache (Anthropic) come right after
//! them, and the rest is billed as plain input. So the parts, in the order the model reads them,
//! take the cached tokens first, then the written ones, then plain input, and each part's price
//! is its tokens of each kind at that kind's rate. The prices are summed cumulatively and
//! rounded to billionths of a dollar at each part's end, so they add up exactly to the prompt's
//! price, and with the reply's output to the request's.
//!
//! The cache counts are the provider's, in its tokens; when its count of the prompt differs from
//! ctx's exact one, the cached prefix is laid over ctx's parts as far as they reach, and the
//! parts' total is shown beside the provider's bill ([`RequestCost::billed_nano_usd`]).

use serde::Serialize;

use crate::config::Price;
use crate::llm::Spend;

use super::anatomy::RequestAnatomy;

/// The price of one part of a request's prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PartCost {
    /// Its tokens read from the provider's prompt cache (billed at the cached-input rate).
    pub cached_tokens: usize,
    /// Its tokens written to the prompt cache (billed at the cache-write rate).
    pub cache_write_tokens: usize,
    /// Its other tokens (billed at the input rate).
    pub uncached_tokens: usize,
    /// What it cost, in billionths of a US dollar.
    pub nano_usd: u64,
}

/// A request's cost cut along its anatomy (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RequestCost {
    /// The prompt's first tokens, read from the provider's prompt cache.
    pub cached_prefix_tokens: usize,
    /// The tokens after them written to the cache.
    pub cache_write_tokens: usize,
    /// One price per part of the anatomy's prompt, in the same order.
    pub parts: Vec<PartCost>,
    /// The tokens generated.
    pub output_tokens: usize,
    /// What they cost, in billionths of a US dollar.
    pub output_nano_usd: u64,
    /// The parts' and the output's prices added up, in billionths of a US dollar.
    pub nano_usd: u64,
    /// The request's bill ([`Spend::nano_usd`]): the same as [`Self::nano_usd`] when the
    /// provider's prompt count is ctx's.
    pub billed_nano_usd: u64,
    /// Whether the tokens billed are the provider's reported usage ([`Spend::reported`]).
    pub reported: bool,
}

impl RequestCost {
    /// The cost of the request cut into `anatomy`, billed as `spend` at `price`.
    ///
    /// ```
    /// use ctx::config::Price;
    /// use ctx::llm::{Spend, Usage};
    /// use ctx::report::{PartKind, RequestAnatomy, RequestCost, RequestPart};
    ///
    /// let anatomy = RequestAnatomy::unsplit("example", 3_000, 500, 128, 8_192).parts(vec![
    ///     RequestPart::new(PartKind::System, "system prompt", 2_000),
    ///     RequestPart::new(PartKind::Question, "user_question", 1_000),
    /// ]);
    /// let price = Price::new(2.50, 1.25, 2.50, 10.00);
    /// // The server read 1,024 tokens from its cache: the start of the system prompt.
    /// let spend = Spend::from_usage(&Usage::new(3_000, 100).with_cache(Some(1_024), None), &price);
    /// let cost = RequestCost::new(&anatomy, &spend, &price);
    /// assert_eq!(cost.cached_prefix_tokens, 1_024);
    /// assert_eq!(cost.parts[0].cached_tokens, 1_024);
    /// assert_eq!(cost.parts[0].nano_usd, 1_024 * 1_250 + 976 * 2_500);
    /// assert_eq!(cost.parts[1].nano_usd, 1_000 * 2_500);
    /// assert_eq!(cost.output_nano_usd, 100 * 10_000);
    /// assert_eq!(cost.nano_usd, spend.nano_usd);
    /// ```
    pub fn new(anatomy: &RequestAnatomy, spend: &Spend, price: &Price) -> Self {
        let billed = spend.billed;
        let mut cached_left = billed.cached_input;
        let mut write_left = billed.cache_write;
        // Billionths of a dollar per token: the rates are per million tokens.
        let nano = |tokens: usize, rate: f64| tokens as f64 * rate * 1_000.0;
        let mut running = 0.0f64;
        let mut rounded = 0u64;
        let mut close = |cost: f64| {
            running += cost;
            let end = running.round() as u64;
            let part = end.saturating_sub(rounded);
            rounded = end;
            part
        };
        let parts = anatomy
            .parts
            .iter()
            .map(|p| {
                let cached = p.tokens.min(cached_left);
                cached_left -= cached;
                let written = (p.tokens - cached).min(write_left);
                write_left -= written;
                let uncached = p.tokens - cached - written;
                let cost =
                    nano(cached, price.cached_input) + nano(written, price.cache_write) + nano(uncached, price.input);
                PartCost {
                    cached_tokens: cached,
                    cache_write_tokens: written,
                    uncached_tokens: uncached,
                    nano_usd: close(cost),
                }
            })
            .collect::<Vec<_>>();
        let output_nano_usd = close(nano(billed.output, price.output));
        RequestCost {
            cached_prefix_tokens: billed.cached_input - cached_left,
            cache_write_tokens: billed.cache_write - write_left,
            parts,
            output_tokens: billed.output,
            output_nano_usd,
            nano_usd: rounded,
            billed_nano_usd: spend.nano_usd,
            reported: spend.reported,
        }
    }
}

/// Billionths of a dollar as dollars, to the hundredth of a cent below a cent and to four
/// significant places above (`$0.0123`, `$0.000045`).
pub(crate) fn usd(nano_usd: u64) -> String {
    let dollars = nano_usd as f64 / 1e9;
    if nano_usd == 0 {
        "$0".to_owned()
    } else if dollars >= 0.01 {
        format!("${dollars:.4}")
    } else {
        format!("${dollars:.6}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Usage;
    use crate::report::{PartKind, RequestPart};

    fn anatomy(parts: &[(PartKind, usize)]) -> RequestAnatomy {
        let total = parts.iter().map(|p| p.1).sum();
        let mut a = RequestAnatomy::unsplit("test", total, 256, 64, 16_384);
        a.parts = parts.iter().map(|&(kind, tokens)| RequestPart::new(kind, kind.name(), tokens)).collect();
        a
    }

    #[test]
    fn the_cached_prefix_covers_the_first_parts_and_the_writes_follow_it() {
        let a = anatomy(&[(PartKind::System, 1_500), (PartKind::History, 800), (PartKind::Question, 300)]);
        let price = Price::new(3.00, 0.30, 3.75, 15.00);
        let usage = Usage::new(2_600, 50).with_cache(Some(1_024), Some(1_100));
        let spend = Spend::from_usage(&usage, &price);
        let cost = RequestCost::new(&a, &spend, &price);
        let kinds: Vec<(usize, usize, usize)> =
            cost.parts.iter().map(|p| (p.cached_tokens, p.cache_write_tokens, p.uncached_tokens)).collect();
        assert_eq!(kinds, [(1_024, 476, 0), (0, 624, 176), (0, 0, 300)]);
        assert_eq!(cost.parts[0].nano_usd, 1_024 * 300 + 476 * 3_750);
        assert_eq!(cost.parts[1].nano_usd, 624 * 3_750 + 176 * 3_000);
        assert_eq!(cost.output_nano_usd, 50 * 15_000);
        // The provider counted the prompt as ctx did: the parts add up to its bill.
        assert_eq!(cost.nano_usd, spend.nano_usd);
        assert_eq!(cost.billed_nano_usd, spend.nano_usd);
        assert!(cost.reported);
    }

    #[test]
    fn prices_round_cumulatively_so_the_parts_add_up_to_the_prompts_price() {
        // 0.1 nano-dollar per token: every part alone would round to nothing.
        let a = anatomy(&[(PartKind::System, 3), (PartKind::Context, 3), (PartKind::Question, 4)]);
        let price = Price::new(0.0001, 0.0001, 0.0001, 0.0);
        let spend = Spend::from_counts(10, 0, &price);
        let cost = RequestCost::new(&a, &spend, &price);
        assert_eq!(cost.parts.iter().map(|p| p.nano_usd).collect::<Vec<_>>(), [0, 1, 0]);
        assert_eq!(cost.nano_usd, 1);
        assert_eq!(cost.nano_usd, spend.nano_usd);
        assert!(!cost.reported);
    }

    #[test]
    fn a_cache_count_past_ctxs_prompt_is_laid_only_as_far_as_the_parts_reach() {
        // The provider counted 12 more prompt tokens than ctx and read all of them from cache.
        let a = anatomy(&[(PartKind::System, 100), (PartKind::Question, 20)]);
        let price = Price::new(1.0, 0.5, 1.0, 2.0);
        let spend = Spend::from_usage(&Usage::new(132, 5).with_cache(Some(132), None), &price);
        let cost = RequestCost::new(&a, &spend, &price);
        assert_eq!(cost.cached_prefix_tokens, 120);
        assert!(cost.parts.iter().all(|p| p.uncached_tokens == 0));
        assert_eq!(cost.nano_usd, 120 * 500 + 5 * 2_000);
        assert_eq!(cost.billed_nano_usd, 132 * 500 + 5 * 2_000);
    }

    #[test]
    fn dollars_are_written_to_a_readable_precision() {
        assert_eq!(usd(0), "$0");
        assert_eq!(usd(45_000), "$0.000045");
        assert_eq!(usd(12_345_678), "$0.0123");
    }
}
