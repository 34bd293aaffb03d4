//! Pathological inputs and early exit: no panic, exact counts, and "does it fit" answered without
//! tokenizing what need not be tokenized.
//!
//! The expected counts of the huge inputs are derived, not measured on the code under test:
//!
//! 1. **Pre-tokenization.** Both encodings' regexes keep a run of one letter together as one
//!    piece, a whitespace run at the end of the text as one piece, and split a whitespace run
//!    followed by a letter into the run less its last space plus that space joined to the letter.
//! 2. **A run of one character.** BPE's encoding of a token sequence is valid iff every adjacent
//!    pair is (the property bpe-openai's backtracking encoder is built on: a pair `(a, b)` is
//!    valid iff `a`'s bytes followed by `b`'s bytes encode to exactly `[a, b]`). tiktoken encodes
//!    `c^n0` for a small anchor `n0` as `[T, T, …, T] ++ tail` with `T = c^k`. Inserting more `T`s
//!    in front of the tail creates no adjacent pair that was not already there, so `c^(n0 + m·k)`
//!    encodes as `m` more tokens than `c^n0`. The test checks this extrapolation against tiktoken
//!    at a second, larger size before trusting it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ctx_tokens::TokenError;
use ctx_tokens::{BpeBackend, ChatFormat, Encoding, TiktokenBackend, TokenCounter, TokenizerBackend};
use proptest::prelude::*;

/// The token count of `c` repeated `n` times, derived from tiktoken on small anchors (see the
/// module documentation for why the extrapolation is sound).
fn run_count(encoding: Encoding, c: char, n: usize) -> usize {
    let tk = TiktokenBackend::new(encoding);
    let probe: String = std::iter::repeat_n(c, 4096).collect();
    let ids = tk.encode(&probe).unwrap();
    let t = ids[0];
    let k_bytes = tk.decode(&[t]).unwrap().len();
    let k = k_bytes / c.len_utf8();
    assert!(ids.len() > 2 && ids[1] == t, "{encoding}: {c:?} does not open with a repeated token");

    let anchor_len = |target: usize| 4 * k + target % k;
    let anchor = |len: usize| -> (usize, usize) {
        let text: String = std::iter::repeat_n(c, len).collect();
        let ids = tk.encode(&text).unwrap();
        let leading = ids.iter().take_while(|&&id| id == t).count();
        assert!(leading >= 2, "{encoding}: {c:?}x{len} has fewer than two leading {t}");
        assert!(!ids[leading..].contains(&t), "{encoding}: {c:?}x{len}: {t} inside the tail");
        (len, ids.len())
    };
    let (n0, count0) = anchor(anchor_len(n));
    let extrapolate = |from: (usize, usize), to: usize| from.1 + (to - from.0) / k;

    // Check the extrapolation where tiktoken can still answer directly.
    let check = n0 + 200 * k;
    let direct = tk.count(&std::iter::repeat_n(c, check).collect::<String>()).unwrap();
    assert_eq!(extrapolate((n0, count0), check), direct, "{encoding}: extrapolation disagrees with tiktoken");

    if n < n0 {
        return tk.count(&std::iter::repeat_n(c, n).collect::<String>()).unwrap();
    }
    extrapolate((n0, count0), n)
}

#[test]
fn ten_megabytes_of_one_letter() {
    for encoding in Encoding::ALL {
        let counter = TokenCounter::for_encoding(encoding);
        let text = "a".repeat(10_000_000);
        let want = run_count(encoding, 'a', text.len());
        assert_eq!(want, 1_250_000, "{encoding}: derivation changed");
        assert_eq!(counter.count(&text).unwrap(), want, "{encoding}");
        // The bound path: a limit below the count answers None; at the count, the count.
        assert_eq!(counter.count_up_to(&text, 1_000).unwrap(), None);
        let fresh = TokenCounter::with_backend(Arc::new(BpeBackend::new(encoding)), ChatFormat::openai(), 16);
        assert_eq!(fresh.count_up_to(&text, want - 1).unwrap(), None, "{encoding}");
        assert_eq!(fresh.count_up_to(&text, want).unwrap(), Some(want), "{encoding}");
    }
}

#[test]
fn one_megabyte_whitespace_runs() {
    const N: usize = 1_000_000;
    for encoding in Encoding::ALL {
        let counter = TokenCounter::for_encoding(encoding);

        let spaces = " ".repeat(N);
        let want_spaces = run_count(encoding, ' ', N);
        assert_eq!(counter.count(&spaces).unwrap(), want_spaces, "{encoding}: spaces");

        let newlines = "\n".repeat(N);
        assert_eq!(counter.count(&newlines).unwrap(), run_count(encoding, '\n', N), "{encoding}: newlines");

        // The shape that makes tiktoken-rs's regex overflow its backtracking stack.
        let before_word = format!("{spaces}x");
        let tiktoken = TiktokenBackend::new(encoding);
        let want = run_count(encoding, ' ', N - 1) + tiktoken.count(" x").unwrap();
        assert_eq!(counter.count(&before_word).unwrap(), want, "{encoding}: spaces then a word");
        assert_eq!(BpeBackend::new(encoding).encode(&before_word).unwrap().len(), want);
        // tiktoken-rs 0.12 panics here; the backend reports it as an error instead of unwinding.
        match tiktoken.count(&before_word) {
            Ok(n) => assert_eq!(n, want, "{encoding}: tiktoken answered, and differently"),
            Err(e) => assert!(matches!(e, TokenError::Backend { .. }), "{e}"),
        }
    }
}

/// Counts the calls that reach the real backend and the longest text it was given.
#[derive(Debug)]
struct Spy {
    inner: BpeBackend,
    calls: AtomicUsize,
    longest: AtomicUsize,
}

impl Spy {
    fn saw(&self, text: &str) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.longest.fetch_max(text.len(), Ordering::SeqCst);
    }
}

impl TokenizerBackend for Spy {
    fn id(&self) -> &str {
        self.inner.id()
    }
    fn count(&self, text: &str) -> Result<usize, TokenError> {
        self.saw(text);
        self.inner.count(text)
    }
    fn count_up_to(&self, text: &str, limit: usize) -> Result<Option<usize>, TokenError> {
        self.saw(text);
        self.inner.count_up_to(text, limit)
    }
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenError> {
        self.saw(text);
        self.inner.encode(text)
    }
    fn decode(&self, ids: &[u32]) -> Result<String, TokenError> {
        self.inner.decode(ids)
    }
    fn max_token_bytes(&self) -> Option<usize> {
        self.inner.max_token_bytes()
    }
}

fn spied() -> (TokenCounter, Arc<Spy>) {
    let spy = Arc::new(Spy {
        inner: BpeBackend::new(Encoding::Cl100kBase),
        calls: AtomicUsize::new(0),
        longest: AtomicUsize::new(0),
    });
    (TokenCounter::with_backend(spy.clone(), ChatFormat::openai(), 1024), spy)
}

#[test]
fn answers_known_without_tokenizing_are_given_without_tokenizing() {
    let (counter, spy) = spied();
    let prose = "The quick brown fox jumps over the lazy dog. ".repeat(20_000);
    // Within the byte budget: fits, no count at all.
    assert!(counter.fits("short text", 10).unwrap());
    assert!(counter.fits(&prose, prose.len()).unwrap());
    // Over 128 bytes a token for the whole text: cannot fit, no count either.
    assert_eq!(counter.count_up_to(&prose, prose.len() / 200).unwrap(), None);
    assert!(!counter.fits(&prose, 100).unwrap());
    assert_eq!(spy.calls.load(Ordering::SeqCst), 0);
    assert_eq!(counter.cache_stats().hits + counter.cache_stats().misses, 0);
    // In between, the backend is asked and the answer is exact.
    let n = counter.count(&prose).unwrap();
    assert_eq!(counter.count_up_to(&prose, n).unwrap(), Some(n));
    assert_eq!(spy.calls.load(Ordering::SeqCst), 1, "the second question came from the cache");
}

#[test]
fn truncation_of_a_huge_text_reads_only_its_start() {
    let (counter, spy) = spied();
    let text = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(200_000);
    let cut = counter.truncate_to(&text, 50).unwrap();
    assert!(text.starts_with(&cut));
    let n = counter.count(&cut).unwrap();
    assert!((45..=50).contains(&n), "{n}");
    // 51 tokens of at most 128 bytes each: nothing past that window was tokenized.
    assert!(spy.longest.load(Ordering::SeqCst) <= 51 * 128, "{}", spy.longest.load(Ordering::SeqCst));
}

#[test]
fn bad_token_ids_are_errors() {
    for encoding in Encoding::ALL {
        let c = TokenCounter::for_encoding(encoding);
        assert!(matches!(c.decode(&[u32::MAX]), Err(TokenError::Decode { .. })));
        assert!(matches!(c.decode(&[0, 250_000]), Err(TokenError::Decode { .. })));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn count_up_to_agrees_with_count_at_every_limit(text in any::<String>(), slack in 0usize..4) {
        let c = TokenCounter::with_backend(Arc::new(BpeBackend::new(Encoding::O200kBase)), ChatFormat::openai(), 8);
        let n = BpeBackend::new(Encoding::O200kBase).count(&text).unwrap();
        for limit in [0, n / 2, n.saturating_sub(1), n, n + slack] {
            prop_assert_eq!(c.count_up_to(&text, limit).unwrap(), (n <= limit).then_some(n));
            prop_assert_eq!(c.fits(&text, limit).unwrap(), n <= limit);
        }
    }

    #[test]
    fn no_input_makes_any_operation_fail(text in any::<String>(), ids in prop::collection::vec(any::<u32>(), 0..20), max in 0usize..40) {
        for encoding in Encoding::ALL {
            let c = TokenCounter::for_encoding(encoding);
            let ids_of_text = c.encode(&text).unwrap();
            prop_assert_eq!(c.count(&text).unwrap(), ids_of_text.len());
            prop_assert_eq!(c.decode(&ids_of_text).unwrap(), text.clone());
            let cut = c.truncate_to(&text, max).unwrap();
            prop_assert!(text.starts_with(&cut));
            prop_assert!(c.count(&cut).unwrap() <= max);
            // Arbitrary ids decode or fail with a typed error; they never panic.
            let _ = c.decode(&ids);
        }
    }
}
