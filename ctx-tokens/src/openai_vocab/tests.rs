//! The embedded vocabularies against bpe-openai's and tiktoken-rs's, rank by rank, and counts and
//! token sequences against theirs on arbitrary text, long pieces included.

use proptest::prelude::*;

use super::*;
use crate::{BpeBackend, TokenizerBackend};

/// Each encoding with bpe-openai's tokenizer of it, the reference.
fn references() -> [(Encoding, &'static bpe_openai::Tokenizer); 2] {
    [(Encoding::Cl100kBase, bpe_openai::cl100k_base()), (Encoding::O200kBase, bpe_openai::o200k_base())]
}

#[test]
fn the_embedded_vocabularies_equal_bpe_openai_token_for_token() {
    for (encoding, reference) in references() {
        let tokens = vocab(encoding).ranks().tokens();
        assert_eq!(tokens.len(), reference.bpe.num_tokens(), "{encoding}");
        assert_eq!(tokens.len(), if encoding == Encoding::Cl100kBase { 100_256 } else { 199_998 });
        for (rank, token) in (0u32..).zip(tokens.iter()) {
            assert_eq!(token, reference.bpe.token_bytes(rank), "{encoding}: rank {rank}");
            assert_eq!(tokens.get(rank), Some(token));
        }
        assert_eq!(tokens.get(tokens.len() as u32), None);
        assert_eq!(tokens.get(u32::MAX), None);
    }
}

#[cfg(feature = "__tiktoken")]
#[test]
fn the_embedded_vocabularies_equal_tiktoken_rs_token_for_token() {
    for encoding in Encoding::ALL {
        let tiktoken = match encoding {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        };
        let tokens = vocab(encoding).ranks().tokens();
        for (rank, token) in (0u32..).zip(tokens.iter()) {
            assert_eq!(tiktoken.decode_bytes(&[rank]).ok().as_deref(), Some(token), "{encoding}: rank {rank}");
        }
        // No rank past ours is an ordinary token of tiktoken's (its special tokens come after).
        assert!(tiktoken.decode_bytes(&[tokens.len() as u32]).map_or(true, |b| b.starts_with(b"<|")));
    }
}

/// What `Ranks::encode_piece` relies on: every byte is a token, so every part of a merge is one.
#[test]
fn every_byte_is_a_token() {
    for encoding in Encoding::ALL {
        let ranks = vocab(encoding).ranks();
        for byte in 0..=255u8 {
            assert!(ranks.rank(&[byte]).is_some(), "{encoding}: byte {byte}");
        }
    }
}

#[test]
fn decode_refuses_ids_out_of_the_vocabulary_and_cut_characters() {
    for encoding in Encoding::ALL {
        let vocab = vocab(encoding);
        let ids = vocab.encode("naïve 東京 🦀");
        assert_eq!(vocab.decode(&ids).as_deref(), Some("naïve 東京 🦀"));
        assert_eq!(vocab.decode(&[vocab.ranks().tokens().len() as u32]), None);
        let crab = vocab.encode("🦀");
        if crab.len() > 1 {
            assert_eq!(vocab.decode(&crab[..1]), None);
        }
    }
}

/// Texts whose pieces are often longer than the array merge's 64 bytes: runs of one byte or a
/// few, random letters (one piece under both patterns), random punctuation, and any characters.
fn long_piece_text() -> impl Strategy<Value = String> {
    let run =
        (prop::sample::select(vec![" ", "\t", "\n", "=", "-", "a", "x", "é", "東", "🦀", "!", "0", "'"]), 1usize..300)
            .prop_map(|(unit, n)| unit.repeat(n));
    let letters =
        prop::collection::vec(prop::sample::select(('a'..='z').chain('A'..='Z').collect::<Vec<_>>()), 60..400)
            .prop_map(|cs| cs.into_iter().collect::<String>());
    let mixed_letters = "[a-zA-Zéüß東語]{60,300}";
    let punctuation = "[!-/:-@\\[-`{-~]{60,300}";
    let any = any::<String>();
    let part = prop_oneof![run, letters, mixed_letters.prop_map(String::from), punctuation.prop_map(String::from), any];
    prop::collection::vec(part, 1..6).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn counts_and_tokens_equal_bpe_openai_on_long_pieces(text in long_piece_text()) {
        for (encoding, reference) in references() {
            let expected = reference.encode(&text);
            prop_assert_eq!(&vocab(encoding).encode(&text), &expected, "{} tokens of {:?}", encoding, text);
            prop_assert_eq!(BpeBackend::new(encoding).count(&text).ok(), Some(expected.len()));
            prop_assert_eq!(BpeBackend::new(encoding).count_up_to(&text, expected.len()).ok(), Some(Some(expected.len())));
        }
    }
}

#[cfg(feature = "__tiktoken")]
proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn counts_and_tokens_equal_tiktoken_on_long_pieces(text in long_piece_text()) {
        for encoding in Encoding::ALL {
            let tiktoken = match encoding {
                Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
                Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            };
            let expected = tiktoken.encode_ordinary(&text);
            prop_assert_eq!(&vocab(encoding).encode(&text), &expected, "{} tokens of {:?}", encoding, text);
            prop_assert_eq!(BpeBackend::new(encoding).count(&text).ok(), Some(expected.len()));
        }
    }
}
