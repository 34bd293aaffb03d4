//! Differential test: ctx's own OpenAI backend (`BpeBackend`) against tiktoken-rs, token
//! sequence for token sequence, on a committed corpus and on generated strings, under both
//! encodings. Any disagreement is a counting bug in one of them.

use ctx_tokens::{BpeBackend, ChatFormat, Encoding, TiktokenBackend, TokenCounter, TokenizerBackend};
use proptest::prelude::*;
use std::sync::Arc;

mod corpus;

use corpus::corpus_files as corpus;

#[track_caller]
fn assert_same_tokens(encoding: Encoding, text: &str, what: &str) {
    let backend = BpeBackend::new(encoding);
    let ours = backend.encode(text).unwrap();
    let theirs = TiktokenBackend::new(encoding).encode(text).unwrap();
    // ctx counts without building the token list: check the count too.
    assert_eq!(backend.count(text).unwrap(), theirs.len(), "{encoding}: {what}: count differs from tiktoken's length");
    if ours != theirs {
        let at = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
        panic!(
            "{encoding}: {what}: sequences differ at token {at} (ours {} tokens, tiktoken {}): {:?} vs {:?}",
            ours.len(),
            theirs.len(),
            &ours[at..(at + 5).min(ours.len())],
            &theirs[at..(at + 5).min(theirs.len())],
        );
    }
}

#[test]
fn the_corpus_is_large_and_varied_enough_to_mean_something() {
    let files = corpus();
    let total: usize = files.iter().map(|(_, t)| t.len()).sum();
    assert!(total >= 300_000, "corpus shrank to {total} bytes");
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for kind in ["prose", "rust", "sql", "csharp", "json", "multilingual", "emoji", "whitespace"] {
        assert!(names.iter().any(|n| n.contains(kind)), "no {kind} file in {names:?}");
    }
    let all: String = files.iter().map(|(_, t)| t.as_str()).collect();
    for needle in ["\r\n", "\t", "\u{a0}", "\u{3000}", "\u{2028}", "\u{200d}", "\u{301}", "🏴\u{e0067}"] {
        assert!(all.contains(needle), "corpus lacks {needle:?}");
    }
}

#[test]
fn whole_files_encode_identically() {
    for (name, text) in corpus() {
        for encoding in Encoding::ALL {
            assert_same_tokens(encoding, &text, &name);
        }
    }
}

#[test]
fn lines_and_random_slices_encode_identically() {
    // Lines and slices start and end in places a whole file never does (mid-word, mid-run of
    // spaces, right after a combining mark), which is where pre-tokenizers differ if they do.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound.max(1) as u64) as usize
    };
    for (name, text) in corpus() {
        for encoding in Encoding::ALL {
            for (i, line) in text.split_inclusive('\n').enumerate() {
                assert_same_tokens(encoding, line, &format!("{name} line {i}"));
            }
            for _ in 0..40 {
                let mut start = next(text.len());
                let mut end = (start + 1 + next(600)).min(text.len());
                while !text.is_char_boundary(start) {
                    start -= 1;
                }
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                assert_same_tokens(encoding, &text[start..end], &format!("{name}[{start}..{end}]"));
            }
        }
    }
}

#[test]
fn counter_counts_equal_tiktoken_lengths_on_the_corpus() {
    for encoding in Encoding::ALL {
        let ours = TokenCounter::for_encoding(encoding);
        let theirs = TiktokenBackend::new(encoding);
        let uncached = TokenCounter::with_backend(Arc::new(BpeBackend::new(encoding)), ChatFormat::openai(), 1);
        for (name, text) in corpus() {
            let want = theirs.count(&text).unwrap();
            assert_eq!(ours.count(&text).unwrap(), want, "{encoding} {name}");
            assert_eq!(uncached.count(&text).unwrap(), want, "{encoding} {name} (fresh cache)");
            assert_eq!(ours.count_up_to(&text, want).unwrap(), Some(want), "{encoding} {name}");
            assert_eq!(uncached.count_up_to(&text, want - 1).unwrap(), None, "{encoding} {name}");
        }
    }
}

/// Fragments real text is made of, including the ones the two pre-tokenizer implementations
/// handle with different machinery (contractions, digit runs, whitespace before letters).
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z]{1,12}",
        "[0-9]{1,9}",
        Just("'s".to_owned()),
        Just("'LL".to_owned()),
        Just("'Re".to_owned()),
        Just("n't".to_owned()),
        "[ \t\n\r]{1,6}",
        "[\u{a0}\u{2000}-\u{200a}\u{3000}\u{85}\u{2028}\u{2029}\u{b}\u{c}]{1,3}",
        "[.,;:!?(){}<>/\\\\\"'`~@#$%^&*_+=|-]{1,4}",
        "[À-ÿĀ-ſ]{1,6}",
        "[\u{300}-\u{36f}]{1,2}",
        "[Α-ωА-я]{1,8}",
        "[\u{4e00}-\u{9fff}\u{3040}-\u{30ff}\u{ac00}-\u{d7a3}]{1,5}",
        "[\u{600}-\u{6ff}\u{900}-\u{97f}\u{e00}-\u{e7f}]{1,6}",
        "[\u{1f300}-\u{1faff}\u{2600}-\u{27bf}\u{fe0f}\u{200d}\u{1f3fb}-\u{1f3ff}]{1,4}",
        Just("<|endoftext|>".to_owned()),
        Just("<|im_start|>".to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_unicode_encodes_identically(text in any::<String>()) {
        for encoding in Encoding::ALL {
            assert_same_tokens(encoding, &text, "arbitrary string");
        }
    }

    #[test]
    fn whitespace_mixes_encode_identically(
        text in "[ \t\n\r\u{b}\u{c}\u{a0}\u{85}\u{2028}\u{3000}a1.é]{0,300}"
    ) {
        for encoding in Encoding::ALL {
            assert_same_tokens(encoding, &text, "whitespace mix");
        }
    }

    #[test]
    fn text_like_strings_encode_identically(parts in prop::collection::vec(fragment(), 0..60)) {
        let text = parts.concat();
        for encoding in Encoding::ALL {
            assert_same_tokens(encoding, &text, "fragments");
        }
    }
}
