use proptest::prelude::*;

use super::*;
use crate::Encoding;
use crate::openai_vocab::{self, OpenAiVocab};

fn vocab(encoding: Encoding) -> &'static OpenAiVocab {
    openai_vocab::vocab(encoding)
}

/// The count from the start on one thread, which the parallel count must equal.
fn sequential(encoding: Encoding, cache: &PieceCache, text: &str) -> usize {
    PieceCounter::new(vocab(encoding), cache, text.len()).count(text)
}

/// The reference: bpe-openai's own count.
fn reference(encoding: Encoding, text: &str) -> usize {
    match encoding {
        Encoding::Cl100kBase => bpe_openai::cl100k_base().count(text),
        Encoding::O200kBase => bpe_openai::o200k_base().count(text),
    }
}

#[test]
fn parallel_count_is_exact_whatever_the_seams() {
    let cache = PieceCache::new(1024, 64 * 1024);
    let unit = "The quick brown fox\n  jumps over\tthe lazy dog's 12345 back!!\n\n";
    let texts = [
        unit.repeat(PARALLEL_MIN_BYTES / unit.len() + 7),
        // No likely boundary at all: one piece, counted on one thread.
        "y".repeat(PARALLEL_MIN_BYTES + 3),
        // Seams inside whitespace runs, where a guessed start is usually wrong.
        format!("{}{}", " a".repeat(PARALLEL_MIN_BYTES / 2), "\n b".repeat(1000)),
        // Multi-byte characters everywhere, so even cuts fall inside them.
        "東京 é 🦀\u{3000}ß word ".repeat(PARALLEL_MIN_BYTES / 20),
    ];
    for encoding in Encoding::ALL {
        for text in &texts {
            for threads in [1, 2, 3, 7] {
                let n = count_parallel(vocab(encoding), &cache, text, threads);
                assert_eq!(n, reference(encoding, text), "{encoding} on {threads} threads");
            }
        }
    }
}

#[test]
fn the_setting_is_read_from_its_documented_values() {
    assert_eq!(parse_setting("auto"), Ok(Threads::Free));
    assert_eq!(parse_setting(" 0 "), Ok(Threads::Free));
    assert_eq!(parse_setting(""), Ok(Threads::Free));
    assert_eq!(parse_setting("1"), Ok(Threads::AtMost(NonZeroUsize::MIN)));
    assert_eq!(parse_setting("12"), Ok(Threads::from_count(12)));
    for wrong in ["two", "-1", "1.5", "Auto"] {
        let reason = parse_setting(wrong).unwrap_err();
        assert!(reason.contains(THREADS_ENV) && reason.contains(wrong), "{reason}");
    }
}

#[test]
fn short_texts_get_one_thread_and_long_ones_one_per_share_at_most() {
    let at_most = |n| Threads::from_count(n);
    assert_eq!(at_most(8).for_text(PARALLEL_MIN_BYTES - 1), Ok(1));
    assert_eq!(Threads::Free.for_text(PARALLEL_MIN_BYTES - 1), Ok(1));
    assert_eq!(at_most(8).for_text(PARALLEL_MIN_BYTES), Ok(2));
    assert_eq!(at_most(8).for_text(5 * MIN_BYTES_PER_THREAD + 1), Ok(5));
    assert_eq!(at_most(3).for_text(100 * MIN_BYTES_PER_THREAD), Ok(3));
    assert_eq!(at_most(1).for_text(100 * MIN_BYTES_PER_THREAD), Ok(1));
    assert_eq!(at_most(1000).for_text(usize::MAX), Ok(MAX_THREADS));
    let free = Threads::Free.for_text(100 * MIN_BYTES_PER_THREAD).unwrap();
    assert!((1..=allowed_cores()).contains(&free), "{free} of {} cores", allowed_cores());
}

#[test]
fn free_cores_are_the_online_ones_less_the_others_runnable() {
    // 2 CPUs: the caller alone, one build besides it, four builds besides it.
    assert_eq!(free_of(2, 1, 2), 2);
    assert_eq!(free_of(2, 2, 2), 1);
    assert_eq!(free_of(2, 5, 2), 1);
    // Never more than the process may use (affinity, cgroup quota), never fewer than 1.
    assert_eq!(free_of(64, 3, 4), 4);
    assert_eq!(free_of(64, 62, 8), 3);
    assert_eq!(free_of(4, 0, 4), 4);
    assert_eq!(free_of(0, 9, 0), 1);
    let now = free_cores();
    assert!((1..=allowed_cores()).contains(&now), "{now} of {} cores", allowed_cores());
}

#[test]
fn the_kernel_files_are_read_as_written() {
    assert_eq!(runnable_in("0.52 0.41 0.30 3/114 32038\n"), Some(3));
    assert_eq!(runnable_in("15.21 14.90 12.02 17/1021 4711"), Some(17));
    assert_eq!(runnable_in("0.52 0.41 0.30"), None);
    assert_eq!(runnable_in("0.52 0.41 0.30 x/114 1"), None);
    assert_eq!(cpus_in_list("0-1\n"), Some(2));
    assert_eq!(cpus_in_list("0"), Some(1));
    assert_eq!(cpus_in_list("0-3,6,8-9"), Some(7));
    assert_eq!(cpus_in_list("3-1"), None);
    assert_eq!(cpus_in_list("a-b"), None);
    #[cfg(target_os = "linux")]
    {
        assert!(runnable_now().is_some_and(|n| n >= 1), "the caller itself is runnable");
        assert!(online_cpus() >= 1);
    }
}

/// Pieces of text that make seams hard: multi-byte characters (a cut inside one must move),
/// whitespace runs of any length (where a piece may end one space early), contractions,
/// digits, line ends, combining marks, and letters without spaces (no likely boundary).
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "the",
            " quick",
            " brown",
            "Fox",
            " ",
            "\n",
            "\n\n",
            "\r\n",
            "\t",
            "'s",
            "'LL",
            "12345",
            "!!",
            " (a)",
            "é",
            "e\u{301}",
            "東京",
            "🦀",
            "\u{3000}",
            "ß",
            " Привет",
            "\u{a0}",
            ":",
            "\"",
            "  x",
            "\n a",
        ])
        .prop_map(str::to_owned),
        (1usize..600, prop::sample::select(vec![" ", "\n", "\t", " \n"])).prop_map(|(n, s)| s.repeat(n)),
        (1usize..300).prop_map(|n| "y".repeat(n)),
        any::<char>().prop_map(String::from),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..300).prop_map(|parts| parts.concat())
}

/// `at` moved forward to a character boundary of `text`.
fn boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_parallel_count_is_the_sequential_one_on_any_thread_count(
        text in text(),
        threads in 1usize..10,
        o200k in any::<bool>(),
    ) {
        let encoding = if o200k { Encoding::O200kBase } else { Encoding::Cl100kBase };
        let cache = PieceCache::new(256, 16 * 1024);
        let n = count_parallel(vocab(encoding), &cache, &text, threads);
        prop_assert_eq!(n, sequential(encoding, &cache, &text));
    }

    /// Cuts anywhere, not only at likely boundaries: most guesses are then wrong, and the runs
    /// must meet the true split later (or the rest be counted from the true boundary).
    #[test]
    fn the_count_is_exact_whatever_the_cuts(
        text in text(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..9),
        o200k in any::<bool>(),
    ) {
        let encoding = if o200k { Encoding::O200kBase } else { Encoding::Cl100kBase };
        let mut cuts: Vec<usize> = cuts.iter().map(|i| boundary(&text, i.index(text.len().max(1)))).collect();
        cuts.retain(|&c| c > 0 && c < text.len());
        cuts.sort_unstable();
        cuts.dedup();
        let cache = PieceCache::new(256, 16 * 1024);
        let n = count_at_cuts(vocab(encoding), &cache, &text, &cuts);
        prop_assert_eq!(n, sequential(encoding, &cache, &text), "cuts {:?}", cuts);
    }
}
