//! tiktoken's merge for very long pieces, one window of the piece at a time.
//!
//! The tree merge ([`TreeMerge`]) applies merges in rank order, so on a piece of megabytes
//! consecutive merges land anywhere in it: once its arrays (five bytes or so per byte of the
//! piece) leave the cache, every merge waits on memory, and a piece ten times longer took
//! 28 times as long. Here the piece is merged [`WINDOW`] bytes at a time, whose arrays stay
//! in cache, and the windows' parts are joined so that the result is exactly tiktoken's.
//!
//! # Why the result is exact
//!
//! Call two tokens `a`, `b` *compatible* when tiktoken's merge of the bytes of `a` then `b`
//! ends in exactly the two parts `a`, `b`. For any text (the rule of the merge — at every step
//! the leftmost of the lowest-ranked mergeable pairs — and nothing about the vocabulary):
//!
//! **A sequence of tokens spelling the text is the text's merge iff every two neighbours in it
//! are compatible.**
//!
//! Take the text cut into regions, one per token of the sequence. While no merge crosses a
//! region border, the merges inside one region are those of the region merged alone, in the
//! same order (the globally chosen pair, when inside the region, is also the region's own
//! leftmost lowest pair, and the region's candidates change only by its own merges). For two
//! neighbouring regions, their merges interleave the same way in the whole text and in the
//! two regions merged alone: each next merge of either is the smaller (leftmost on a tie) of
//! their two next candidates, in both.
//!
//! *If* every two neighbours are compatible: say some merge crosses a border, the first at
//! step `s`, between regions `i` and `i + 1`, in states `(m, m')` that (by the interleaving)
//! the merge of the two regions alone goes through too. At `s` the crossing pair is below
//! every candidate of region `i` (all to its left) and at most every candidate of region
//! `i + 1` (to its right), so the two regions alone would merge it there too: not compatible.
//! So no merge crosses a border, each region merges to its token (as it does alone, its
//! neighbour's compatibility says), and the borders' pairs, not being tokens, stay unmerged.
//!
//! *Only if*: no merge crosses a border of the text's own parts (parts only grow). Two
//! neighbours merged alone interleave as in the text; at each of their states the pair across
//! was not merged before the next merge of either (or ever, for the final state), so it is
//! above their next candidates (or not a token), and alone they end in the same two parts.
//!
//! # The windows
//!
//! A window is merged with the tree merge; its parts are kept up to [`MARGIN`] bytes before
//! its end (the parts the cut changes are near the cut), and the next window starts where the
//! kept parts end. The parts of one window are one merge, so neighbours among them are
//! compatible (*only if*); the pair across two windows is checked with [`Ranks::compatible`].
//! When every check passes, every two neighbours of the whole sequence are compatible, and by
//! *if* it is the piece's merge. A failed check moves the window's start back to an earlier
//! border of the previous window's parts (still compatible among themselves) and merges again
//! from there; after a few failures in a row the whole piece goes to the tree merge. Either
//! way the answer is tiktoken's; the windows only make it fast.
//!
//! [`WINDOW`]: super::WINDOW
//! [`MARGIN`]: super::MARGIN

use super::long::TreeMerge;
use super::{Ranks, SMALL_MAX};

/// Failed checks in a row, each moving back twice as far, before the tree merge takes the
/// whole piece.
const MAX_RETRIES: u32 = 4;

/// How a windowed merge went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Windowed {
    /// Every part was given, in order; this many checks failed on the way and were redone.
    Done { retries: u32 },
    /// Too many checks failed: some parts were given, and the caller merges the whole piece.
    GaveUp,
}

impl Ranks {
    /// The count of `piece`, window by window (the tree merge's if the windows give up).
    pub(super) fn count_windowed(&self, piece: &[u8], window: usize, margin: usize) -> usize {
        let mut parts = 0;
        let how = self.merge_windows(piece, window, margin, &mut |_, _| parts += 1);
        match how {
            Windowed::Done { .. } => parts,
            Windowed::GaveUp => self.merge_long(piece).0,
        }
    }

    /// Appends the token ids of `piece` to `ids`, window by window (the tree merge's if the
    /// windows give up); panics as [`Ranks::encode_piece`] does, never for these vocabularies.
    pub(super) fn encode_windowed(&self, piece: &[u8], window: usize, margin: usize, ids: &mut Vec<u32>) {
        let had = ids.len();
        let id = |start: usize, end: usize| self.rank(&piece[start..end]).expect("every part of a merge is a token");
        let how = self.merge_windows(piece, window, margin, &mut |start, end| ids.push(id(start, end)));
        if how == Windowed::GaveUp {
            ids.truncate(had);
            let (_, starts) = self.merge_long(piece);
            let mut at = 0;
            while at < piece.len() {
                let end = starts.after(at);
                ids.push(id(at, end));
                at = end;
            }
        }
    }

    /// Whether tokens `a` and `b` are compatible: tiktoken's merge of `a` then `b` (the merge
    /// itself, not the shortcut for a piece that is one token) ends in the two parts `a`, `b`.
    pub(super) fn compatible(&self, a: &[u8], b: &[u8]) -> bool {
        let joined = [a, b].concat();
        if joined.len() <= SMALL_MAX {
            let mut starts = [0u8; SMALL_MAX + 1];
            self.merge_small(&joined, &mut starts) == 2 && usize::from(starts[1]) == a.len()
        } else {
            let (parts, starts) = self.merge_long(&joined);
            parts == 2 && starts.after(0) == a.len()
        }
    }

    /// tiktoken's merge of `piece`, `window` bytes at a time, parts within `margin` bytes of a
    /// window's end merged again with the next (see the module's comment): calls `part(start,
    /// end)` for each part in order, and says whether it got to the end.
    pub(super) fn merge_windows(
        &self,
        piece: &[u8],
        window: usize,
        margin: usize,
        part: &mut impl FnMut(usize, usize),
    ) -> Windowed {
        let n = piece.len();
        // Every window but the last then keeps at least one part (a part is a token).
        let window = window.max(margin.saturating_add(self.longest + 1));
        // Enough failures for every window to fail once, and then some: each is one window's
        // work, so the total stays linear; it bounds the loop whatever the piece.
        let budget = n / window + MAX_RETRIES as usize;
        let mut tree = TreeMerge::default();
        // Starts of the parts held back until the next check: they end at `pos`.
        let mut pending: Vec<usize> = Vec::new();
        let mut fresh: Vec<usize> = Vec::new();
        // The last part given (the check before the held-back parts passed against it).
        let mut given: Option<(usize, usize)> = None;
        let (mut pos, mut in_a_row, mut retries) = (0, 0u32, 0u32);
        while pos < n {
            let end = n.min(pos.saturating_add(window));
            let text = &piece[pos..end];
            tree.run(self, text);
            let starts = tree.starts();
            let keep = if end == n { text.len() } else { text.len() - margin };
            fresh.clear();
            let mut at = 0;
            while at < keep {
                let next = starts.after(at);
                if next > keep {
                    break;
                }
                fresh.push(pos + at);
                at = next;
            }
            let first = (pos, pos + starts.after(0));
            let before = pending.last().map(|&s| (s, pos)).or(given);
            if let Some((s, e)) = before
                && !self.compatible(&piece[s..e], &piece[first.0..first.1])
            {
                in_a_row += 1;
                retries += 1;
                if in_a_row > MAX_RETRIES || retries as usize > budget || pending.is_empty() {
                    return Windowed::GaveUp;
                }
                // Start again at an earlier border of the held-back parts.
                let back_to = pos.saturating_sub(margin.saturating_mul(1 << in_a_row));
                while let Some(s) = pending.pop() {
                    pos = s;
                    if s <= back_to {
                        break;
                    }
                }
                continue;
            }
            in_a_row = 0;
            give(&pending, pos, part);
            if let Some(&s) = pending.last() {
                given = Some((s, pos));
            }
            std::mem::swap(&mut pending, &mut fresh);
            pos += at;
        }
        give(&pending, n, part);
        Windowed::Done { retries }
    }
}

/// Gives the parts starting at `starts`, the last of which ends at `end`.
fn give(starts: &[usize], end: usize, part: &mut impl FnMut(usize, usize)) {
    for (i, &s) in starts.iter().enumerate() {
        part(s, starts.get(i + 1).copied().unwrap_or(end));
    }
}

#[cfg(test)]
mod tests;
