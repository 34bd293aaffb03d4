//! Counting once, checked against tiktoken-rs: piece-cached counts, counts of growing texts
//! (`CountedText`, `count_appended`) and counts on several threads equal tiktoken-rs's
//! `encode_ordinary(..).len()` of the whole text, under both encodings — on the corpus, on the
//! `--- NODE ---` framing whose joins do not add up, and on generated texts and appends.

use std::sync::Arc;

use ctx_tokens::{
    BpeBackend, ChatFormat, CountCheckpoint, CountedText, Encoding, PARALLEL_MIN_BYTES, PieceCache, TiktokenBackend,
    TokenCounter, TokenizerBackend,
};
use proptest::prelude::*;

mod corpus;

use corpus::corpus_files as corpus;

fn tiktoken(encoding: Encoding, text: &str) -> usize {
    TiktokenBackend::new(encoding).count(text).unwrap()
}

fn counter(encoding: Encoding) -> TokenCounter {
    TokenCounter::for_encoding(encoding)
}

/// A `--- NODE ---` block as `budget::format_node` renders one.
fn node(id: &str, text: &str) -> String {
    format!("--- NODE ---\nid: {id}\nlanguage: text\ncompact: false\ntext:\n{text}")
}

#[test]
fn the_node_framing_does_not_add_up_and_the_counts_are_still_exact() {
    // Blocks joined by "\n\n" as `render_context_blocks` joins them; between the nodes, blocks that
    // do not start cleanly (a space, `/`, a combining mark, nothing), whose joins merge pieces.
    let unclean = ["   spaced", "/divider", "\u{300}mark", "", "\n\nmore lines"];
    let mut blocks = Vec::new();
    for (i, (name, text)) in corpus().iter().enumerate() {
        for (j, paragraph) in text.split("\n\n").take(20).enumerate() {
            blocks.push(node(name, paragraph));
            if j % 3 == 0 {
                blocks.push(unclean[(i + j) % unclean.len()].to_owned());
            }
        }
    }
    let joined = blocks.join("\n\n");
    for encoding in Encoding::ALL {
        let c = counter(encoding);
        let parts: usize =
            blocks.iter().map(|b| c.count(b).unwrap()).sum::<usize>() + (blocks.len() - 1) * c.count("\n\n").unwrap();
        let whole = tiktoken(encoding, &joined);
        assert_ne!(parts, whole, "{encoding}: the joins happened to add up; the test proves nothing");
        assert_eq!(c.count(&joined).unwrap(), whole, "{encoding}");
        let mut grown = CountedText::new(&c);
        for (i, block) in blocks.iter().enumerate() {
            if i > 0 {
                grown.push_str("\n\n").unwrap();
            }
            grown.push_str(block).unwrap();
        }
        assert_eq!(grown.tokens(), whole, "{encoding}: block by block");
    }
}

#[test]
fn the_corpus_grown_line_by_line_counts_as_a_whole() {
    for encoding in Encoding::ALL {
        let c = counter(encoding);
        for (name, text) in corpus() {
            let mut grown = CountedText::new(&c);
            for (i, line) in text.split_inclusive('\n').enumerate() {
                grown.push_str(line).unwrap();
                if i % 97 == 0 {
                    assert_eq!(grown.tokens(), tiktoken(encoding, grown.as_str()), "{encoding} {name} line {i}");
                }
            }
            assert_eq!(grown.tokens(), tiktoken(encoding, &text), "{encoding} {name}");
            // Appending costs what it adds: the re-split starts a few bytes before the end.
            let at = grown.checkpoint();
            assert!(at.bytes() - at.stable_bytes() < 200, "{encoding} {name}: {at:?}");
        }
    }
}

#[test]
fn large_texts_counted_on_several_threads_match_tiktoken() {
    let all: String = corpus().into_iter().map(|(_, t)| t).collect::<Vec<_>>().join("\n");
    let mut text = all.clone();
    while text.len() < 3 * PARALLEL_MIN_BYTES {
        text.push_str(&all);
    }
    for encoding in Encoding::ALL {
        let want = tiktoken(encoding, &text);
        for threads in [1, 2, 3, 5] {
            let backend = BpeBackend::new(encoding).with_threads(threads);
            assert_eq!(backend.count(&text).unwrap(), want, "{encoding} on {threads} threads");
        }
    }
}

#[test]
fn a_cold_piece_cache_and_a_warm_one_count_the_same() {
    for encoding in Encoding::ALL {
        let backend = BpeBackend::new(encoding).with_threads(1);
        let cache: &PieceCache = backend.piece_cache();
        for (name, text) in corpus() {
            cache.clear();
            let cold = backend.count(&text).unwrap();
            let warm = backend.count(&text).unwrap();
            assert_eq!((cold, warm), (tiktoken(encoding, &text), cold), "{encoding} {name}");
        }
        assert!(cache.stats().hits > 0);
    }
}

#[test]
fn a_checkpoint_that_cannot_belong_to_the_text_is_ignored() {
    let backend = BpeBackend::new(Encoding::Cl100kBase);
    let long = backend.count_appended("a much longer text than the next one", CountCheckpoint::default()).unwrap();
    let short = "short";
    assert_eq!(backend.count_appended(short, long).unwrap().tokens(), tiktoken(Encoding::Cl100kBase, short));
    // Two bytes: inside the `é` of the next text.
    let wide = backend.count_appended("é", CountCheckpoint::default()).unwrap();
    let text = "aé";
    assert!(!text.is_char_boundary(wide.bytes()));
    assert_eq!(backend.count_appended(text, wide).unwrap().tokens(), tiktoken(Encoding::Cl100kBase, text));
}

#[test]
fn try_push_str_leaves_the_text_as_it_was_when_it_does_not_fit() {
    let c = counter(Encoding::O200kBase);
    let mut text = CountedText::with_text(&c, "Intro:\n").unwrap();
    let before = (text.as_str().to_owned(), text.tokens(), text.checkpoint());
    assert_eq!(text.try_push_str(&" many words".repeat(50), 10).unwrap(), None);
    assert_eq!((text.as_str().to_owned(), text.tokens(), text.checkpoint()), before);
    let fits = text.try_push_str(" two words", 10).unwrap();
    assert_eq!(fits, Some(c.count(text.as_str()).unwrap()));
    // Another backend (no incremental support) falls back to whole counts, still exact.
    let tk = TokenCounter::with_backend(Arc::new(TiktokenBackend::new(Encoding::O200kBase)), ChatFormat::openai(), 16);
    let mut other = CountedText::new(&tk);
    other.push_str("Intro:\n two words").unwrap();
    assert_eq!(other.tokens(), text.tokens());
}

/// Pieces of text chosen to sit on the pre-tokenizer's edges: whitespace runs with and without
/// newlines, contractions cut in half, digit runs, punctuation with newlines and `/`, marks and
/// letters outside ASCII, non-ASCII whitespace.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z]{1,8}",
        "[0-9]{1,5}",
        Just("'".to_owned()),
        "'[sStTmMdDlLrRvVeE]{0,2}",
        "[ \t\n\r]{1,6}",
        Just("\r\n".to_owned()),
        "[\u{a0}\u{2000}\u{3000}\u{85}\u{2028}\u{b}\u{c}]{1,2}",
        "[.,;:!?(){}<>/\\\\\"`~@#$%^&*_+=|-]{1,4}",
        "[À-ÿſ]{1,4}",
        "[\u{300}-\u{36f}]{1,2}",
        "[Α-ωА-я]{1,5}",
        "[\u{4e00}-\u{9fff}\u{3040}-\u{30ff}]{1,4}",
        "[，。、「」！？・…—]{1,2}",
        "[٠-٩Ⅰ-Ⅻ½¾]{1,3}",
        "[\u{1f300}-\u{1f3ff}\u{fe0f}\u{200d}]{1,3}",
        Just("--- NODE ---\nid: x\ntext:\n".to_owned()),
    ]
}

fn text_of(parts: Vec<String>) -> String {
    parts.concat()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Appends of any size, cut anywhere (on character boundaries), count as the whole text.
    #[test]
    fn appending_counts_as_counting_the_whole(
        parts in prop::collection::vec(fragment(), 0..40),
        cuts in prop::collection::vec(0usize..1000, 0..12),
    ) {
        let text = text_of(parts);
        let mut points: Vec<usize> = cuts.into_iter().map(|c| c * text.len() / 1000).filter(|&c| text.is_char_boundary(c)).collect();
        points.push(text.len());
        points.sort_unstable();
        for encoding in Encoding::ALL {
            let c = counter(encoding);
            let mut grown = CountedText::new(&c);
            for &end in &points {
                let more = &text[grown.len()..end];
                grown.push_str(more).unwrap();
                prop_assert_eq!(grown.tokens(), tiktoken(encoding, &text[..end]), "{} {:?}", encoding, &text[..end]);
            }
        }
    }

    /// One character at a time, the finest growth there is.
    #[test]
    fn growing_one_character_at_a_time_counts_as_the_whole(parts in prop::collection::vec(fragment(), 0..16)) {
        let text = text_of(parts);
        for encoding in Encoding::ALL {
            let c = counter(encoding);
            let mut grown = CountedText::new(&c);
            for ch in text.chars() {
                let mut buf = [0u8; 4];
                grown.push_str(ch.encode_utf8(&mut buf)).unwrap();
                prop_assert_eq!(grown.tokens(), tiktoken(encoding, grown.as_str()), "{} {:?}", encoding, grown.as_str());
            }
        }
    }

    /// Any Unicode at all, appended to any Unicode.
    #[test]
    fn arbitrary_strings_grow_exactly(a in any::<String>(), b in any::<String>(), c in any::<String>()) {
        for encoding in Encoding::ALL {
            let counter = counter(encoding);
            let mut grown = CountedText::with_text(&counter, a.clone()).unwrap();
            grown.push_str(&b).unwrap();
            grown.push_str(&c).unwrap();
            let whole = format!("{a}{b}{c}");
            prop_assert_eq!(grown.tokens(), tiktoken(encoding, &whole));
            prop_assert_eq!(counter.count(&whole).unwrap(), tiktoken(encoding, &whole));
        }
    }
}
