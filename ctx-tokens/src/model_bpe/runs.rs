//! The merge of a long piece made of a few runs of one repeated byte (a line's indentation, a
//! run of spaces before a word, a rule of `=`), run by run instead of part by part.
//!
//! Such pieces are most of the long pieces of code and logs (150–300 bytes of indentation in the
//! benchmark corpus), and the part-by-part merge pays a heap push, a heap pop and a pair lookup
//! for each of their bytes. Here the parts are kept as runs of identical parts (one token id
//! repeated), so a step costs the number of runs, and the merges inside a run are applied all at
//! once when no merge they create can come before them (the rule is proven on
//! [`ModelBpe::merge_runs`]). A 280-space piece takes about ten steps instead of 280 merges.
//!
//! The result is exactly the list's merge, which `tokenizers` and llama.cpp run: at every step,
//! the pair of adjacent parts whose merge comes first in the list, the leftmost of those.

use super::{ModelBpe, NONE};

/// Pieces shorter than this go to the part-by-part merge at once (the runs cost more to set up
/// than they save).
pub(super) const RUNS_MIN_LEN: usize = 32;

/// The run-by-run merge applies to pieces of at most this many runs of one repeated byte...
const MAX_BYTE_RUNS: usize = 8;

/// ...and gives up (the part-by-part merge takes over) past this many runs of identical parts
/// or this many steps: its cost is steps × runs, small only while both are.
const MAX_RUNS: usize = 32;
const MAX_STEPS: usize = 4096;

/// `count` identical parts, each the token `id`, side by side.
#[derive(Clone, Copy, Debug)]
struct Run {
    id: u32,
    count: usize,
    /// The merge of two of these parts (`rank << 32 | merged`), [`NONE`] when there is none or
    /// the run has one part.
    inner: u64,
    /// The merge of this run's last part and the next run's first.
    next: u64,
    /// `inner` and `next` are out of date.
    dirty: bool,
}

impl Run {
    fn new(id: u32, count: usize) -> Self {
        Run { id, count, inner: NONE, next: NONE, dirty: true }
    }
}

impl ModelBpe {
    /// The number of tokens the merges leave of `piece` (every byte of which has a token) when
    /// it has at least [`RUNS_MIN_LEN`] bytes in at most [`MAX_BYTE_RUNS`] runs of one byte;
    /// `None` when the run-by-run merge does not apply or gives up.
    pub(super) fn merge_runs_if_few(&self, piece: &[u8]) -> Option<usize> {
        if piece.len() < RUNS_MIN_LEN {
            return None;
        }
        let mut runs = Vec::with_capacity(MAX_BYTE_RUNS);
        let mut start = 0;
        for i in 1..=piece.len() {
            if i == piece.len() || piece[i] != piece[start] {
                if runs.len() == MAX_BYTE_RUNS {
                    return None;
                }
                // Different bytes are different tokens: neighbouring runs never share a part.
                runs.push(Run::new(self.byte_ids[usize::from(piece[start])], i - start));
                start = i;
            }
        }
        self.merge_runs(runs)
    }

    /// The list's merge over runs of identical parts. Each step takes the first merge of the
    /// list among each run's inner pair and each pair across two runs, the leftmost on a tie
    /// (the runs are in order, and a run's inner pair comes before its pair across), applies it,
    /// and joins neighbouring runs of the same token.
    ///
    /// Batching. Say the chosen merge joins two parts `P` at the start of a run of `c ≥ 4` parts
    /// into `M`, with rank `r`; before the run, a run whose last part is `L` (or nothing). The
    /// part-by-part merge would give, after `k` merges of this run's pairs, left to right,
    /// `(M × k)(P × (c − 2k))`. If the merges of `M M`, `M P` and `L M` are absent or later
    /// than `r` in the list, then for every `k < c/2` the next merge is the `P P` pair just after
    /// the `M`s, because the candidates are:
    /// - pairs left of the run, unchanged: later than `r` (a pair with rank `r` is `P P`, and one
    ///   further left would have been chosen);
    /// - `L M`, `M M`, `M P`: later than `r` by the test (a rank is one pair of the list);
    /// - the `P P` pairs, at rank `r`: the leftmost is the one just after the `M`s;
    /// - the pair across to the next run (whose first part is not `P`, or the runs would have
    ///   been joined) and everything after it: unchanged, later than `r`.
    ///
    /// So the `⌊c/2⌋` merges come in a row, and are applied at once.
    fn merge_runs(&self, mut runs: Vec<Run>) -> Option<usize> {
        self.refresh(&mut runs);
        for _ in 0..MAX_STEPS {
            if runs.len() > MAX_RUNS {
                return None;
            }
            // (merge, run, across to the next run?); rank in the high half, so the smallest
            // value is the first merge of the list, and a strict comparison keeps the leftmost.
            let mut best = (NONE, 0, false);
            for (i, run) in runs.iter().enumerate() {
                if run.inner < best.0 {
                    best = (run.inner, i, false);
                }
                if run.next < best.0 {
                    best = (run.next, i, true);
                }
            }
            let (merge, i, across) = best;
            if merge == NONE {
                return Some(runs.iter().map(|r| r.count).sum());
            }
            let (run, merged) = (runs[i], merge as u32);
            let mut new = [Run::new(0, 0); 3];
            let mut len = 0;
            let mut push = |r: Run| {
                if r.count > 0 {
                    new[len] = r;
                    len += 1;
                }
            };
            let replaced = if across {
                let after = runs[i + 1];
                push(Run::new(run.id, run.count - 1));
                push(Run::new(merged, 1));
                push(Run::new(after.id, after.count - 1));
                i..i + 2
            } else {
                let pairs = if run.count >= 4 && self.batchable(&runs, i, merge) { run.count / 2 } else { 1 };
                push(Run::new(merged, pairs));
                push(Run::new(run.id, run.count - 2 * pairs));
                i..i + 1
            };
            runs.splice(replaced, new.into_iter().take(len));
            join(&mut runs);
            self.refresh(&mut runs);
        }
        None
    }

    /// Whether all the inner pairs of run `i` (at least 4 parts, its inner merge `merge`) can be
    /// merged at once; see [`Self::merge_runs`].
    fn batchable(&self, runs: &[Run], i: usize, merge: u64) -> bool {
        let (p, m) = (runs[i].id, merge as u32);
        let left = i.checked_sub(1).map_or(NONE, |j| self.pair(runs[j].id, m));
        self.pair(m, m) > merge && self.pair(m, p) > merge && left > merge
    }

    /// Looks up the merges of the runs that changed, and of the pairs across into them.
    fn refresh(&self, runs: &mut [Run]) {
        let last = runs.len().saturating_sub(1);
        for i in 0..runs.len() {
            let run = runs[i];
            if run.dirty {
                runs[i].inner = if run.count >= 2 { self.pair(run.id, run.id) } else { NONE };
            }
            if i == last {
                runs[i].next = NONE;
            } else if run.dirty || runs[i + 1].dirty {
                runs[i].next = self.pair(run.id, runs[i + 1].id);
            }
        }
        for run in runs.iter_mut() {
            run.dirty = false;
        }
    }
}

/// Joins neighbouring runs of the same token.
fn join(runs: &mut Vec<Run>) {
    let mut i = 1;
    while i < runs.len() {
        if runs[i - 1].id == runs[i].id {
            runs[i - 1] = Run::new(runs[i].id, runs[i - 1].count + runs[i].count);
            runs.remove(i);
        } else {
            i += 1;
        }
    }
}
