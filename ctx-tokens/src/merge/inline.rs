//! The merge of a piece of at most 15 bytes, on the piece's packed key.
//!
//! Nine in ten pieces a cold count merges are this short (2,175 of the 2,498 distinct pieces of
//! the 320 KB corpus that are not one token, under cl100k). The array merge
//! ([`Ranks::merge_small`]) looks each new concatenation up by its bytes: it packs the span again
//! (a branch on its length, then overlapping loads) and goes through [`Ranks::rank`]'s match on
//! the length. The piece cache has packed the whole piece already (`pieces::pack`: byte `i` in
//! bits `8i..8i + 8`, the length in the top byte), so the key of any span is that key shifted and
//! masked, with the span's length put in the top byte: no load, no branch on the length.
//!
//! The merge itself is tiktoken's, step for step, as in [`Ranks::merge_small`]: the leftmost
//! lowest-ranked adjacent pair merged, its two neighbouring pairs re-ranked.

use super::super::pieces::{INLINE, packed_len, packed_span};
use super::{NONE, Ranks};

impl Ranks {
    /// Exactly tiktoken's count of `piece`, 2 to [`INLINE`] bytes packed as `key`
    /// (`pieces::pack`), which is **not itself a token** (the caller has looked it up whole;
    /// tiktoken returns a token without merging, and a merge of its bytes need not end in it).
    /// Any other piece is handed to [`Self::count`].
    ///
    /// Parts are not moved as they merge (a move of a few bytes is a call to `memmove`): each
    /// keeps its start's slot, `next` and `prev` link the parts, and a slot that no longer starts
    /// a part holds no rank, so the scan for the lowest rank still meets the parts left to right.
    pub(crate) fn count_inline(&self, piece: &[u8], key: u128) -> usize {
        let n = piece.len();
        if !(2..=INLINE).contains(&n) || packed_len(key) != n {
            return self.count(piece);
        }
        // ranks[i]: the rank of the part starting at i followed by the next part ([`NONE`] when
        // no part starts at i, or it is the last); next[i], prev[i]: the parts around it.
        let mut ranks = [NONE; INLINE];
        let mut next = [0u8; INLINE];
        let mut prev = [0u8; INLINE];
        for i in 0..n {
            next[i] = (i + 1) as u8;
            prev[i] = i.saturating_sub(1) as u8;
        }
        for i in 0..n - 1 {
            ranks[i] = self.pairs[usize::from(piece[i]) << 8 | usize::from(piece[i + 1])];
        }
        let mut parts = n;
        loop {
            let (mut best, mut at) = (NONE, 0);
            for (i, &r) in ranks[..n - 1].iter().enumerate() {
                if r < best {
                    (best, at) = (r, i);
                }
            }
            if best == NONE {
                return parts;
            }
            // The part at `at` takes in the next one; `end` is where the merged part ends.
            let joined = usize::from(next[at]);
            let end = usize::from(next[joined]);
            ranks[joined] = NONE;
            next[at] = end as u8;
            parts -= 1;
            ranks[at] = if end < n {
                prev[end] = at as u8;
                self.packed_span_rank(piece, key, at, usize::from(next[end]))
            } else {
                NONE
            };
            if at > 0 {
                let before = usize::from(prev[at]);
                ranks[before] = self.packed_span_rank(piece, key, before, end);
            }
        }
    }

    /// The rank of `piece[a..b]` (at least three bytes), from `key`, the packed piece.
    #[inline(always)]
    fn packed_span_rank(&self, piece: &[u8], key: u128, a: usize, b: usize) -> u32 {
        let len = b - a;
        if len <= self.short_max {
            self.short.get_packed(packed_span(key, a, len)).unwrap_or(NONE)
        } else {
            self.rank_or_none(&piece[a..b])
        }
    }
}
