//! History trimming and Anthropic's prompt cache (issue 27, "Measure"): the conversation of
//! `benches/prompt_cache.rs` through ctx's real `AnthropicClient` against a scripted Anthropic
//! server on 127.0.0.1 that applies Anthropic's prompt-caching rules to the body it receives
//! (`prompt_cache_support::anthropic_server`, which cites the page it follows).
//!
//! Whatever the figures, these must hold: every request within the window, the server's usage
//! adding up to the request's tokens, at most four breakpoints, the ledger billing exactly what
//! the server reported (cache reads and writes at their own rates), and fold trimming caching at
//! least as much of the input as oldest-first, for no more input cost. The rules themselves are
//! checked first, on prompts built by hand.

#![cfg(feature = "anthropic")]

mod prompt_cache_support;

use ctx_runtime::FieldPath;
use ctx_runtime::config::{BilledTokens, Price};
use ctx_runtime::llm::Usage;
use prompt_cache_support::anthropic_server::{Accounting, Block, LOOKBACK_BLOCKS, PromptCache};
use prompt_cache_support::{AnthropicRun, WINDOW, run_anthropic, sonnet_price};

/// Blocks named `name0`, `name1`, … of `tokens` each; `breakpoints` lists which carry one.
fn blocks(name: &str, tokens: &[usize], breakpoints: &[usize]) -> Vec<Block> {
    tokens
        .iter()
        .enumerate()
        .map(|(i, &t)| Block { key: format!("{name}{i}"), tokens: t, breakpoint: breakpoints.contains(&i) })
        .collect()
}

fn billed(prompt: usize, input: usize, read: usize, write: usize, breakpoints: usize) -> Accounting {
    Accounting { prompt_tokens: prompt, input_tokens: input, cache_read: read, cache_write: write, breakpoints }
}

#[test]
fn the_scripted_cache_writes_on_a_miss_and_reads_an_identical_prefix() {
    let mut cache = PromptCache::default();
    // Tools (a short prefix: not cacheable), system, history, question.
    let first = blocks("b", &[300, 900, 400, 50], &[0, 1, 3]);
    assert_eq!(cache.account(&first), billed(1_650, 0, 0, 1_650, 3), "a cold cache writes up to the last breakpoint");
    // The next request appends to the prompt: it reads what the first wrote, writes the rest.
    let mut second = blocks("b", &[300, 900, 400, 50, 70, 30], &[0, 1, 5]);
    second[3].breakpoint = false;
    assert_eq!(cache.account(&second), billed(1_750, 0, 1_650, 100, 3));
    // Tokens after the last breakpoint are neither read nor written.
    let third = blocks("b", &[300, 900, 400, 50, 70, 30, 25], &[0, 1, 5]);
    assert_eq!(cache.account(&third), billed(1_775, 25, 1_750, 0, 3));
    // A different history: only tools + system are read, the rest is written again.
    let mut shifted = blocks("b", &[300, 900], &[0, 1]);
    shifted.extend(blocks("c", &[400, 50], &[1]));
    assert_eq!(cache.account(&shifted), billed(1_650, 0, 1_200, 450, 3));
}

#[test]
fn a_prefix_under_the_minimum_is_not_cached() {
    let mut cache = PromptCache::default();
    let short = blocks("s", &[600, 400, 20], &[1, 2]);
    assert_eq!(cache.account(&short), billed(1_020, 1_020, 0, 0, 2));
    assert_eq!(cache.account(&short), billed(1_020, 1_020, 0, 0, 2), "nothing was written");
    // From 1,024 tokens on, the prefix is written, and only up to the breakpoint that reaches it.
    let long = blocks("s", &[600, 400, 24, 10], &[1, 2]);
    assert_eq!(cache.account(&long), billed(1_034, 10, 0, 1_024, 2));
}

#[test]
fn the_lookup_reaches_twenty_blocks_before_a_breakpoint_and_no_further() {
    for gap in [LOOKBACK_BLOCKS, LOOKBACK_BLOCKS + 1] {
        let mut cache = PromptCache::default();
        let written = blocks("l", &[2_000], &[0]);
        cache.account(&written);
        // The same first block, `gap` more blocks, a breakpoint on the last one only.
        let mut tokens = vec![2_000];
        tokens.extend(std::iter::repeat_n(10, gap));
        let later = blocks("l", &tokens, &[gap]);
        let expected = if gap <= LOOKBACK_BLOCKS {
            billed(2_000 + 10 * gap, 0, 2_000, 10 * gap, 1)
        } else {
            billed(2_000 + 10 * gap, 0, 0, 2_000 + 10 * gap, 1)
        };
        assert_eq!(cache.account(&later), expected, "{gap} blocks after the written prefix");
    }
}

/// The invariants of one run; returns (prompt tokens, tokens read, input cost in dollars).
fn check(run: &AnthropicRun, policy: &str) -> (usize, usize, f64) {
    let price = Price::from_spec(&sonnet_price(), &FieldPath::root()).expect("a valid price");
    assert_eq!(run.served.len(), run.reported.len(), "{policy}: every request reached the server once");
    let (mut prompt, mut read, mut cost) = (0, 0, 0.0);
    for (i, (served, reported)) in run.served.iter().zip(&run.reported).enumerate() {
        let a = served.accounting;
        assert!(a.prompt_tokens + served.max_tokens <= WINDOW as usize, "{policy} #{i}: {a:?} over the window");
        assert!(
            reported.prompt_tokens + reported.max_output_tokens <= WINDOW as usize,
            "{policy} #{i}: ctx's count over the window"
        );
        assert_eq!(a.input_tokens + a.cache_read + a.cache_write, a.prompt_tokens, "{policy} #{i}: {a:?}");
        assert!((1..=4).contains(&a.breakpoints), "{policy} #{i}: {} breakpoints", a.breakpoints);
        // The client read the usage as the API reports it, and the ledger billed it by kind.
        let usage =
            Usage::new(a.prompt_tokens, served.output_tokens).with_cache(Some(a.cache_read), Some(a.cache_write));
        assert_eq!(reported.usage, Some(usage), "{policy} #{i}");
        let spend = reported.spend.expect("a priced model: every request has its spend");
        let tokens = BilledTokens::new(a.input_tokens, a.cache_read, a.cache_write, served.output_tokens);
        assert_eq!(spend.billed, tokens, "{policy} #{i}");
        assert!(spend.reported);
        assert_eq!(spend.nano_usd, (price.cost(tokens) * 1e9).round() as u64, "{policy} #{i}");
        prompt += a.prompt_tokens;
        read += a.cache_read;
        cost += price.cost(BilledTokens::new(a.input_tokens, a.cache_read, a.cache_write, 0));
    }
    (prompt, read, cost)
}

#[test]
fn fold_trimming_keeps_anthropics_prompt_cache_within_the_window() {
    const TURNS: usize = 40;
    let oldest = run_anthropic(TURNS, "oldest_first", None);
    let fold = run_anthropic(TURNS, "fold", Some(50));
    let (oldest_prompt, oldest_read, oldest_cost) = check(&oldest, "oldest_first");
    let (fold_prompt, fold_read, fold_cost) = check(&fold, "fold");
    // Two requests a turn: a search, then the answer.
    assert_eq!(oldest.served.len(), 2 * TURNS);
    assert_eq!(fold.served.len(), 2 * TURNS);
    let share = |read: usize, prompt: usize| read as f64 / prompt as f64;
    let (oldest_share, fold_share) = (share(oldest_read, oldest_prompt), share(fold_read, fold_prompt));
    println!(
        "oldest_first: {oldest_prompt} prompt tokens, {:.1}% read from the cache, input ${oldest_cost:.4}; \
         fold 50%: {fold_prompt}, {:.1}%, ${fold_cost:.4}; ratio {:.2}",
        100.0 * oldest_share,
        100.0 * fold_share,
        fold_cost / oldest_cost
    );
    assert!(fold_share >= oldest_share, "fold caches a smaller share: {fold_share} < {oldest_share}");
    assert!(fold_cost <= oldest_cost, "fold's input costs more: {fold_cost} > {oldest_cost}");
}
