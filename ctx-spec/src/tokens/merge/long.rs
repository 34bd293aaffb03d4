//! tiktoken's merge for pieces longer than the array merge takes, on a tournament tree of
//! candidate pairs.

use super::{NONE, Ranks};

/// Pairs per leaf of the tournament tree: two cache lines of ranks.
const LONG_BLOCK: usize = 32;

impl Ranks {
    /// tiktoken's merge for a piece of any length: returns the number of parts left and `next`,
    /// where following `next` from 0 visits the parts' starts (`next[p]` is the start of the
    /// part after the one starting at `p`, the piece's length after the last).
    ///
    /// Parts are spans of the piece; the pair starting at part `p` is `p` and the part after
    /// it, its rank the rank of the two spans' bytes together (the concatenation is a token, or
    /// there is no merge). `pair[p]` always holds the rank of the pair starting at `p` now
    /// ([`NONE`] when there is none or `p` is no longer a part start): a merge changes only the
    /// pair it merges (gone), the pair starting at the merged part and the pair before it, and
    /// all three are recomputed. The candidates are kept in a tournament tree: the positions
    /// in blocks of [`LONG_BLOCK`], each leaf the smallest `rank << 32 | position` of its
    /// block (found by scanning the block's ranks), each inner node the smaller of its two
    /// children, and every block a merge changes is scanned again and its path updated. So the
    /// root is always the smallest key over the current pairs: the lowest rank, and among
    /// equal ranks the smallest start, which is the leftmost pair — tiktoken's choice at every
    /// step, hence the same merges in the same order.
    ///
    /// Why a tree over blocks rather than a heap of candidates: a merge of a long piece lands
    /// anywhere in it, and a heap's pop walks a path of cache lines as long as the piece is
    /// big (one piece of megabytes of letters ran ×23 slower for ×10 the input). A block is
    /// two cache lines of `pair`, which the merge has just touched, and the tree takes at most
    /// one byte per byte of the piece, its upper levels in cache; an update stops where a
    /// node's value does not change.
    pub(crate) fn merge_long(&self, piece: &[u8]) -> (usize, Vec<u32>) {
        const END: u32 = u32::MAX;
        const EMPTY: u64 = u64::MAX;
        let n = piece.len();
        // Positions share a key with the rank. A backend call turns this panic into
        // `TokenError::Backend`; no text has a 4 GiB piece in practice.
        assert!(n < END as usize, "a pre-tokenizer piece of 4 GiB or more cannot be merged");
        let n32 = n as u32;
        let mut next: Vec<u32> = (1..=n32).collect();
        let mut prev: Vec<u32> = (0..n32).map(|i| i.wrapping_sub(1)).collect();
        let mut pair: Vec<u32> =
            (0..n).map(|i| if i + 1 < n { self.rank_or_none(&piece[i..i + 2]) } else { NONE }).collect();
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
        let mut tree = vec![EMPTY; 2 * leaves];
        for b in 0..blocks {
            tree[leaves + b] = block_min(&pair, b);
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
            let at = tree[1] as u32;
            let p = at as usize;
            // The root is a current pair: it has a part after it.
            let right = next[p] as usize;
            let after = next[right];
            next[p] = after;
            if after < n32 {
                prev[after as usize] = at;
            }
            pair[right] = NONE;
            parts -= 1;
            pair[p] = if after < n32 { self.rank_or_none(&piece[p..next[after as usize] as usize]) } else { NONE };
            let left = prev[p];
            if left != END {
                let l = left as usize;
                pair[l] = self.rank_or_none(&piece[l..after as usize]);
            }
            let (bp, br) = (p / LONG_BLOCK, right / LONG_BLOCK);
            update(&mut tree, &pair, bp);
            if br != bp {
                update(&mut tree, &pair, br);
            }
            if left != END {
                let bl = left as usize / LONG_BLOCK;
                if bl != bp && bl != br {
                    update(&mut tree, &pair, bl);
                }
            }
        }
        (parts, next)
    }
}
