//! The windowed merge against bpe-openai's merge and (feature `__tiktoken`) tiktoken-rs's, token
//! ids and all, on long pieces of many shapes: with windows small enough that a piece of a few
//! kilobytes has dozens of joins (some of whose checks fail and are redone), and with the real
//! windows on pieces around [`WINDOWED_MIN`].

use proptest::prelude::*;

use super::*;
use crate::encoding::Encoding;
use crate::merge::{MARGIN, WINDOW, WINDOWED_MIN};

fn tokenizers() -> [(Encoding, &'static bpe_openai::Tokenizer); 2] {
    [(Encoding::Cl100kBase, bpe_openai::cl100k_base()), (Encoding::O200kBase, bpe_openai::o200k_base())]
}

/// `n` bytes of units drawn from `units` (xorshift from `seed`), cut at `n`.
fn draw(seed: u64, n: usize, units: &[&[u8]]) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.extend_from_slice(units[(state % units.len() as u64) as usize]);
    }
    out.truncate(n);
    out
}

/// Each character of `s`, as its UTF-8 bytes.
fn chars(s: &str) -> Vec<&[u8]> {
    s.char_indices().map(|(i, c)| &s.as_bytes()[i..i + c.len_utf8()]).collect()
}

const SHAPES: usize = 13;

/// Shape `shape` (of [`SHAPES`]) of a long piece: `n` bytes from `seed`.
fn shape(shape: usize, n: usize, seed: u64) -> Vec<u8> {
    const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
    const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let bytes: Vec<u8> = (0..=255).collect();
    let repeated = |unit: &[u8]| unit.repeat(n / unit.len() + 1)[..n].to_vec();
    match shape {
        0 => draw(seed, n, &chars(LOWER)),
        1 => draw(seed, n, &chars("ab")),
        2 => draw(seed, n, &chars("etaoinshr")),
        3 => draw(seed, n, &chars(&[LOWER, UPPER].concat())),
        // Capitals then small letters: one piece of o200k's pattern.
        4 => [draw(seed, n / 2, &chars(UPPER)), draw(seed + 1, n - n / 2, &chars(LOWER))].concat(),
        5 => draw(seed, n, &bytes.chunks(1).collect::<Vec<_>>()),
        6 => draw(seed, n, &bytes[0x80..].chunks(1).collect::<Vec<_>>()),
        7 => draw(seed, n, &chars("джяш東京語éß")),
        8 => repeated(b"abc"),
        9 => repeated(b"ab"),
        10 => repeated(b"hello"),
        11 => repeated(b"Ab"),
        // A repeated pattern with a letter out of place now and then.
        _ => draw(seed, n, &["abcabcabcabcabc", "abcabcabcabcabcabcabcabcabcabcabcabcabcabc", "x"].map(str::as_bytes)),
    }
}

/// The parts of the windowed merge of `piece` as ids, and how it went.
fn windowed(ranks: &Ranks, piece: &[u8], window: usize, margin: usize) -> (Vec<u32>, Windowed) {
    let mut ids = Vec::new();
    let how = ranks.merge_windows(piece, window, margin, &mut |s, e| ids.extend(ranks.rank(&piece[s..e])));
    (ids, how)
}

/// Both windowed entry points give `expected`; returns how the merge itself went.
#[track_caller]
fn check(ranks: &Ranks, piece: &[u8], window: usize, margin: usize, expected: &[u32]) -> Windowed {
    let mut ids = vec![7];
    ranks.encode_windowed(piece, window, margin, &mut ids);
    assert_eq!(ids[1..], *expected, "window {window}, margin {margin}: {:?}", String::from_utf8_lossy(piece));
    assert_eq!(ranks.count_windowed(piece, window, margin), expected.len());
    let (ids, how) = windowed(ranks, piece, window, margin);
    if how != Windowed::GaveUp {
        assert_eq!(ids, expected);
    }
    how
}

#[test]
fn small_windows_merge_every_shape_as_bpe_openai_does() {
    for (encoding, tokenizer) in tokenizers() {
        let ranks = Ranks::shared(encoding);
        let (mut done, mut retries, mut gave_up) = (0, 0, 0);
        for (seed, n) in [(1, 700), (2, 2500)] {
            for s in 0..SHAPES {
                let piece = shape(s, n, seed);
                let expected = tokenizer.bpe.encode_via_backtracking(&piece);
                // Window 0: the smallest there is, `margin` + the longest token + 1.
                for (window, margin) in [(0, 0), (0, 1), (0, 4), (0, 16), (200, 8), (300, 64)] {
                    match check(ranks, &piece, window, margin, &expected) {
                        Windowed::Done { retries: r } => (done, retries) = (done + 1, retries + r),
                        Windowed::GaveUp => gave_up += 1,
                    }
                }
            }
        }
        eprintln!("{encoding}: {done} merged window by window ({retries} checks redone), {gave_up} gave up");
        assert!(done > gave_up, "{encoding}: {done} done, {gave_up} gave up");
        assert!(retries > 0, "{encoding}: no check failed, the retries went untested");
    }
}

#[test]
fn pieces_around_the_threshold_encode_as_bpe_openai_does() {
    for (encoding, tokenizer) in tokenizers() {
        let ranks = Ranks::shared(encoding);
        let lengths = |s: usize| {
            if s == 0 {
                vec![WINDOWED_MIN, WINDOWED_MIN + 1, WINDOWED_MIN + WINDOW + 17]
            } else {
                vec![WINDOWED_MIN + 1]
            }
        };
        for s in [0, 3, 5, 8, 12] {
            for n in lengths(s) {
                let piece = shape(s, n, 3);
                let expected = tokenizer.bpe.encode_via_backtracking(&piece);
                let mut ids = Vec::new();
                ranks.encode_piece(&piece, &mut ids);
                assert!(ids == expected, "{encoding}: shape {s}, {n} bytes: encode_piece");
                assert_eq!(ranks.count(&piece), expected.len(), "{encoding}: shape {s}, {n} bytes: count");
                // Past the threshold, by the windows themselves (not their fallback).
                if n > WINDOWED_MIN {
                    let (ids, how) = windowed(ranks, &piece, WINDOW, MARGIN);
                    assert!(matches!(how, Windowed::Done { .. }), "{encoding}: shape {s}, {n} bytes gave up");
                    assert!(ids == expected, "{encoding}: shape {s}, {n} bytes: windows");
                }
            }
        }
    }
}

#[test]
fn compatible_is_whether_the_two_tokens_merge_back_to_themselves() {
    for (encoding, tokenizer) in tokenizers() {
        let (ranks, bpe) = (Ranks::shared(encoding), &tokenizer.bpe);
        let (mut yes, mut no) = (0, 0);
        for s in 0..SHAPES {
            let ids = bpe.encode_via_backtracking(&shape(s, 300, 5));
            // Neighbours (compatible), and tokens three apart (often not).
            for (a, b) in ids.windows(2).map(|w| (w[0], w[1])).chain(ids.windows(4).map(|w| (w[0], w[3]))) {
                let (x, y) = (bpe.token_bytes(a), bpe.token_bytes(b));
                let expected = bpe.encode_via_backtracking(&[x, y].concat()) == [a, b];
                assert_eq!(ranks.compatible(x, y), expected, "{encoding}: {x:?} {y:?}");
                (yes, no) = if expected { (yes + 1, no) } else { (yes, no + 1) };
            }
        }
        assert!(yes > 100 && no > 100, "{encoding}: {yes} compatible, {no} not");
        assert!(!ranks.compatible(b"a", b"b"), "{encoding}: `ab` is a token");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_window_merges_any_shape_as_bpe_openai_does(
        s in 0..SHAPES, seed in any::<u64>(), n in 65usize..1500, window in 0usize..400, margin in 0usize..48,
    ) {
        let piece = shape(s, n, seed);
        for (encoding, tokenizer) in tokenizers() {
            let expected = tokenizer.bpe.encode_via_backtracking(&piece);
            check(Ranks::shared(encoding), &piece, window, margin, &expected);
        }
    }
}

#[cfg(feature = "__tiktoken")]
mod against_tiktoken {
    use std::collections::HashMap;
    use std::sync::OnceLock;

    use super::*;

    type Split = Box<dyn Fn(&[u8]) -> Vec<u32> + Send + Sync>;

    /// tiktoken-rs's merge (`byte_pair_split`, the merge itself) of a piece, as ids, on the
    /// token bytes of bpe-openai's tokenizer.
    fn splitter(tokenizer: &bpe_openai::Tokenizer) -> Split {
        let bpe = &tokenizer.bpe;
        // The map's hasher is tiktoken-rs's, inferred from the call.
        let map: HashMap<Vec<u8>, u32, _> =
            (0..bpe.num_tokens() as u32).map(|id| (bpe.token_bytes(id).to_vec(), id)).collect();
        Box::new(move |piece| tiktoken_rs::byte_pair_split(piece, &map).into_iter().map(|part| map[part]).collect())
    }

    fn tiktoken_ids(encoding: Encoding, piece: &[u8]) -> Vec<u32> {
        static SPLITS: OnceLock<[Split; 2]> = OnceLock::new();
        SPLITS.get_or_init(|| tokenizers().map(|(_, t)| splitter(t)))[usize::from(encoding == Encoding::O200kBase)](
            piece,
        )
    }

    #[test]
    fn small_windows_merge_every_shape_as_tiktoken_does() {
        for encoding in Encoding::ALL {
            let ranks = Ranks::shared(encoding);
            for s in 0..SHAPES {
                let piece = shape(s, 1500, 11);
                let expected = tiktoken_ids(encoding, &piece);
                let mut ids = Vec::new();
                ranks.encode_piece(&piece, &mut ids);
                assert_eq!(ids, expected, "{encoding}: shape {s}: the tree merge");
                for (window, margin) in [(0, 0), (0, 2), (0, 8), (250, 16)] {
                    check(ranks, &piece, window, margin, &expected);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn any_window_merges_any_shape_as_tiktoken_does(
            s in 0..SHAPES, seed in any::<u64>(), n in 65usize..1200, window in 0usize..300, margin in 0usize..32,
        ) {
            let piece = shape(s, n, seed);
            for encoding in Encoding::ALL {
                check(Ranks::shared(encoding), &piece, window, margin, &tiktoken_ids(encoding, &piece));
            }
        }
    }
}
