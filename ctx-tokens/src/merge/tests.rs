//! Every merge path against bpe-openai's count, piece by piece, and (feature `__tiktoken`) the
//! sums against tiktoken-rs.

use std::collections::HashSet;

use proptest::prelude::*;

use bpe_openai::byte_pair_encoding::BytePairEncoding;

use super::*;

/// Each encoding with bpe-openai's tokenizer of it, the reference.
fn tokenizers() -> [(Encoding, &'static bpe_openai::Tokenizer); 2] {
    [(Encoding::Cl100kBase, bpe_openai::cl100k_base()), (Encoding::O200kBase, bpe_openai::o200k_base())]
}

fn index(encoding: Encoding) -> &'static Ranks {
    Ranks::shared(encoding)
}

/// The whole corpus as one text.
fn corpus() -> String {
    crate::test_corpus::corpus_files().into_iter().map(|(_, text)| text).collect()
}

/// Every path that applies to `piece` gives bpe-openai's count; returns it.
#[track_caller]
fn check(ranks: &Ranks, bpe: &BytePairEncoding, piece: &[u8]) -> usize {
    let expected = bpe.count(piece);
    let shown = || String::from_utf8_lossy(piece).into_owned();
    assert_eq!(ranks.count(piece), expected, "count of {:?}", shown());
    if piece.len() >= 2 {
        if piece.len() <= SMALL_MAX {
            assert_eq!(ranks.count_small(piece), expected, "array merge of {:?}", shown());
        }
        if piece.len() <= super::super::pieces::INLINE && ranks.rank(piece).is_none() {
            let key = crate::pieces::pack(piece);
            assert_eq!(ranks.count_inline(piece, key), expected, "inline merge of {:?}", shown());
        }
        assert_eq!(ranks.merge_long(piece).0, expected, "heap merge of {:?}", shown());
        if let Some(runs) = byte_runs(piece, RUNS_MAX_BYTE_RUNS)
            && let Some(n) = ranks.count_runs(piece, &runs)
        {
            assert_eq!(n, expected, "run merge of {:?}", shown());
        }
    }
    expected
}

#[test]
fn every_distinct_piece_of_the_corpus_counts_as_bpe_openai_counts_it() {
    let corpus = corpus();
    for (encoding, tokenizer) in tokenizers() {
        let ranks = index(encoding);
        let pieces: HashSet<&str> = tokenizer.split(&corpus).collect();
        assert!(pieces.len() > 5_000, "{}", pieces.len());
        let mut by_runs = 0;
        for piece in &pieces {
            check(ranks, &tokenizer.bpe, piece.as_bytes());
            by_runs += usize::from(
                ranks.rank(piece.as_bytes()).is_none() && ranks.count_runs_if_few(piece.as_bytes()).is_some(),
            );
        }
        assert!(by_runs > 50, "the corpus's whitespace runs take the run-by-run path: {by_runs}");
    }
}

#[test]
fn every_token_is_found_with_its_own_rank() {
    for (encoding, tokenizer) in tokenizers() {
        let (ranks, bpe) = (index(encoding), &tokenizer.bpe);
        assert_eq!(ranks.tokens().len(), bpe.num_tokens());
        for id in 0..bpe.num_tokens() as u32 {
            assert_eq!(ranks.rank(bpe.token_bytes(id)), Some(id));
        }
        assert_eq!(ranks.rank(b""), None);
        assert_eq!(ranks.rank(&[b'q'; 200]), None);
        assert_eq!(ranks.count(b""), 0);
    }
}

#[test]
fn runs_of_every_byte_with_and_without_neighbours() {
    let around: [(&[u8], &[u8]); 7] =
        [(b"", b""), (b"\t", b""), (b"\n\t ", b""), (b"", b"\n"), (b"", b"x"), (b"", b"ab"), (b"\t", b"x")];
    for (encoding, tokenizer) in tokenizers() {
        let (ranks, bpe) = (index(encoding), &tokenizer.bpe);
        for byte in 0..=255u8 {
            // Bytes that form longer tokens get every length (in a debug build, every length to
            // 130 and every 23rd beyond: bpe-openai's own count, the reference, is slow on long
            // runs); the others a few.
            let step = if cfg!(debug_assertions) { 23 } else { 1 };
            let lengths: Vec<usize> = if ranks.uniform[usize::from(byte)].len() > 2 {
                (1..=130).chain((131..=600).step_by(step)).collect()
            } else {
                vec![1, 2, 3, 40, 301]
            };
            for &len in &lengths {
                let run = vec![byte; len];
                for (prefix, suffix) in around {
                    let piece = [prefix, &run, suffix].concat();
                    let expected = bpe.count(&piece);
                    assert_eq!(ranks.count(&piece), expected, "{piece:?}");
                    if let Some(runs) = byte_runs(&piece, RUNS_MAX_BYTE_RUNS) {
                        assert_eq!(ranks.count_runs(&piece, &runs).unwrap_or(expected), expected, "{piece:?}");
                    }
                }
            }
        }
    }
}

/// Without batching these would need far more than `RUNS_MAX_STEPS` steps and come back `None`.
#[test]
fn huge_runs_take_the_run_path_and_stay_exact() {
    for (encoding, tokenizer) in tokenizers() {
        let (ranks, bpe) = (index(encoding), &tokenizer.bpe);
        for piece in [vec![b' '; 200_000], [&b"\t"[..], &[b' '; 70_001]].concat(), vec![b'x'; 100_003]] {
            let runs = byte_runs(&piece, RUNS_MAX_BYTE_RUNS).expect("few runs");
            assert_eq!(ranks.count_runs(&piece, &runs), Some(bpe.count(&piece)));
        }
    }
}

fn alphabet_text() -> impl Strategy<Value = String> {
    let parts = prop::sample::select(vec![
        " ", "  ", "    ", "\t", "\n", "\n\n", "a", "b", "ab", "'", "'s", "=", "==", "é", "東", "🦀", "0", "12", "999",
    ]);
    prop::collection::vec((parts, 1usize..40), 0..24)
        .prop_map(|parts| parts.into_iter().map(|(p, n)| p.repeat(n)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn pieces_of_small_alphabet_text_count_as_bpe_openai_counts_them(text in alphabet_text()) {
        for (encoding, tokenizer) in tokenizers() {
            let ranks = index(encoding);
            let ours: usize = tokenizer.split(&text).map(|p| check(ranks, &tokenizer.bpe, p.as_bytes())).sum();
            prop_assert_eq!(ours, tokenizer.count(text.as_str()));
        }
    }

    #[test]
    fn short_pieces_merge_on_their_packed_key_as_bpe_openai_counts_them(
        bytes in prop::collection::vec(prop_oneof![any::<u8>(), prop::sample::select(b" etainos\n".to_vec())], 2..=15)
    ) {
        for (encoding, tokenizer) in tokenizers() {
            check(index(encoding), &tokenizer.bpe, &bytes);
        }
    }

    #[test]
    fn any_bytes_count_without_panic_as_bpe_openai_counts_them(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        for (encoding, tokenizer) in tokenizers() {
            check(index(encoding), &tokenizer.bpe, &bytes);
        }
    }
}

#[cfg(feature = "__tiktoken")]
mod against_tiktoken {
    use super::*;

    fn tiktoken(encoding: Encoding) -> &'static tiktoken_rs::CoreBPE {
        match encoding {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        }
    }

    fn ours(encoding: Encoding, text: &str) -> usize {
        encoding.pieces(text).map(|p| index(encoding).count(p.as_bytes())).sum()
    }

    #[test]
    fn the_corpus_counts_as_tiktoken_counts_it() {
        let corpus = corpus();
        for encoding in Encoding::ALL {
            assert_eq!(ours(encoding, &corpus), tiktoken(encoding).encode_ordinary(&corpus).len());
        }
    }

    #[test]
    fn whitespace_runs_count_as_tiktoken_counts_them() {
        for encoding in Encoding::ALL {
            for len in 1..=400 {
                for text in [" ".repeat(len), format!("\t{}x", " ".repeat(len)), format!("x{}\n", "=".repeat(len))] {
                    assert_eq!(ours(encoding, &text), tiktoken(encoding).encode_ordinary(&text).len(), "{text:?}");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn small_alphabet_text_counts_as_tiktoken_counts_it(text in alphabet_text()) {
            for encoding in Encoding::ALL {
                prop_assert_eq!(ours(encoding, &text), tiktoken(encoding).encode_ordinary(&text).len());
            }
        }
    }
}
