//! tiktoken's merge for pieces longer than the array merge takes, on a tournament tree of
//! candidate pairs.

use super::{NONE, Ranks};

/// Pairs per leaf of the tournament tree: two cache lines of ranks.
const LONG_BLOCK: usize = 32;

/// Where the parts of a long piece start, one bit per byte, and a last bit set at the piece's
/// end.
#[derive(Default)]
pub(super) struct Starts(Vec<u64>);

impl Starts {
    /// Every byte of a piece of `n` bytes a part of its own.
    fn reset(&mut self, n: usize) {
        self.0.clear();
        self.0.resize((n + 1).div_ceil(64), !0);
    }

    fn clear(&mut self, p: usize) {
        self.0[p / 64] &= !(1 << (p % 64));
    }

    /// The start of the part after the one starting at `p` (the piece's length after the last).
    ///
    /// A part is a token, at most 255 bytes: the search reads a few words.
    #[inline]
    pub(super) fn after(&self, p: usize) -> usize {
        let mut i = p + 1;
        loop {
            let w = i / 64;
            let bits = self.0[w] >> (i % 64);
            if bits != 0 {
                return i + bits.trailing_zeros() as usize;
            }
            i = (w + 1) * 64;
        }
    }

    /// The start of the part before the one starting at `p`, if there is one.
    #[inline]
    fn before(&self, p: usize) -> Option<usize> {
        let mut i = p.checked_sub(1)?;
        loop {
            let w = i / 64;
            let bits = self.0[w] << (63 - i % 64);
            if bits != 0 {
                return Some(i - bits.leading_zeros() as usize);
            }
            i = (w * 64).checked_sub(1)?;
        }
    }
}

/// The tree merge's arrays, kept from one piece to the next: the windowed merge of a very long
/// piece (`windows.rs`) merges hundreds of windows with one of these.
#[derive(Default)]
pub(super) struct TreeMerge {
    starts: Starts,
    pair: Vec<u32>,
    tree: Vec<u64>,
}

impl Ranks {
    /// tiktoken's merge for a piece of any length: returns the number of parts left and where
    /// they start ([`Starts::after`] from 0 visits them). See [`TreeMerge::run`].
    pub(super) fn merge_long(&self, piece: &[u8]) -> (usize, Starts) {
        let mut merge = TreeMerge::default();
        let parts = merge.run(self, piece);
        (parts, merge.starts)
    }
}

impl TreeMerge {
    /// Where the parts of the piece last merged start.
    pub(super) fn starts(&self) -> &Starts {
        &self.starts
    }

    /// tiktoken's merge of `piece` (any length): returns the number of parts left, whose starts
    /// are then in [`Self::starts`].
    ///
    /// Parts are spans of the piece, their starts kept as bits; the pair starting at part `p`
    /// is `p` and the part after it, its rank the rank of the two spans' bytes together (the
    /// concatenation is a token, or there is no merge). `pair[p]` always holds the rank of the
    /// pair starting at `p` now ([`NONE`] when there is none or `p` is no longer a part start):
    /// a merge changes only the pair it merges (gone), the pair starting at the merged part and
    /// the pair before it, and all three are recomputed. The candidates are kept in a
    /// tournament tree: the positions in blocks of [`LONG_BLOCK`], each leaf the smallest
    /// `rank << 32 | position` of its block (found by scanning the block's ranks), each inner
    /// node the smaller of its two children, and every block a merge changes is scanned again
    /// and its path updated. So the root is always the smallest key over the current pairs:
    /// the lowest rank, and among equal ranks the smallest start, which is the leftmost pair —
    /// tiktoken's choice at every step, hence the same merges in the same order.
    ///
    /// Why this shape: a merge of a long piece lands anywhere in it, so what it reads should be
    /// few cache lines. A heap of candidates walks a path as long as the piece is big (one
    /// piece of megabytes of letters ran ×23 slower for ×10 the input), and arrays of next and
    /// previous parts cost 8 bytes a byte; here a block is two cache lines of `pair`, which the
    /// merge has just touched, the starts an eighth of the piece's size, and the tree at most
    /// its size, its upper levels in cache; an update stops where a node's value does not
    /// change.
    pub(super) fn run(&mut self, ranks: &Ranks, piece: &[u8]) -> usize {
        const EMPTY: u64 = u64::MAX;
        let n = piece.len();
        // Positions share a key with the rank. A backend call turns this panic into
        // `TokenError::Backend`; no text has a 4 GiB piece in practice.
        assert!(n < u32::MAX as usize, "a pre-tokenizer piece of 4 GiB or more cannot be merged");
        let TreeMerge { starts, pair, tree } = self;
        starts.reset(n);
        pair.clear();
        pair.extend((0..n).map(|i| if i + 1 < n { ranks.rank_or_none(&piece[i..i + 2]) } else { NONE }));
        let blocks = n.div_ceil(LONG_BLOCK).max(1);
        let leaves = blocks.next_power_of_two();
        // The smallest key of block `b`'s pairs; a strict comparison keeps the leftmost of
        // equal ranks.
        let block_min = |pair: &[u32], b: usize| -> u64 {
            let start = b * LONG_BLOCK;
            let (mut best, mut at) = (NONE, 0);
            for (i, &r) in pair[start..(start + LONG_BLOCK).min(n)].iter().enumerate() {
                if r < best {
                    (best, at) = (r, i);
                }
            }
            if best == NONE { EMPTY } else { u64::from(best) << 32 | (start + at) as u64 }
        };
        tree.clear();
        tree.resize(2 * leaves, EMPTY);
        for b in 0..blocks {
            tree[leaves + b] = block_min(pair, b);
        }
        for i in (1..leaves).rev() {
            tree[i] = tree[2 * i].min(tree[2 * i + 1]);
        }
        let update = |tree: &mut [u64], pair: &[u32], b: usize| {
            let mut i = leaves + b;
            tree[i] = block_min(pair, b);
            while i > 1 {
                i /= 2;
                let smaller = tree[2 * i].min(tree[2 * i + 1]);
                if tree[i] == smaller {
                    break;
                }
                tree[i] = smaller;
            }
        };
        let mut parts = n;
        while tree[1] != EMPTY {
            let p = tree[1] as u32 as usize;
            // The root is a current pair: it has a part after it.
            let right = starts.after(p);
            let after = starts.after(right);
            starts.clear(right);
            pair[right] = NONE;
            parts -= 1;
            pair[p] = if after < n { ranks.rank_or_none(&piece[p..starts.after(after)]) } else { NONE };
            let left = starts.before(p);
            if let Some(l) = left {
                pair[l] = ranks.rank_or_none(&piece[l..after]);
            }
            let (bp, br) = (p / LONG_BLOCK, right / LONG_BLOCK);
            update(tree, pair, bp);
            if br != bp {
                update(tree, pair, br);
            }
            if let Some(bl) = left.map(|l| l / LONG_BLOCK)
                && bl != bp
                && bl != br
            {
                update(tree, pair, bl);
            }
        }
        parts
    }
}
