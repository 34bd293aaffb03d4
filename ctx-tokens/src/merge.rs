//! tiktoken's byte-pair merge, on ctx's own rank index of the OpenAI vocabularies.
//!
//! A cold count spends most of its time merging the distinct pieces of a text. Most pieces are
//! short, many are already one token, and the long ones are nearly all runs of one repeated
//! byte. So [`Ranks::count`] answers, in order:
//!
//! 1. a piece that is itself a token counts 1 (tiktoken returns its rank without merging, and
//!    every token of these vocabularies encodes to itself), one probe of the index;
//! 2. a piece of at least [`RUNS_MIN_LEN`] bytes made of a few runs of one repeated byte (280
//!    spaces, a tab then 120 spaces, a line of `=`) is merged run by run: identical parts side
//!    by side are one run, and the merges inside a run are applied all at once when no merge
//!    they create can come first;
//! 3. other pieces of up to [`SMALL_MAX`] bytes are merged on the stack, a linear scan per
//!    merge as tiktoken does (those of at most 15 bytes, when the piece cache has packed them,
//!    on the packed key: `merge/inline.rs`);
//! 4. longer ones are merged with a tournament tree of candidate pairs
//!    ([`Ranks::merge_long`]), in O(n log n) whatever the piece;
//! 5. pieces of more than [`WINDOWED_MIN`] bytes (megabytes of letters without a space) are
//!    merged with the same tree one window of the piece at a time, the windows joined by a
//!    check that makes the result exactly the whole piece's merge (`merge/windows.rs`), so that
//!    the tree's arrays stay in cache and the time stays linear in the piece's length.
//!
//! The thresholds come from `tokens/merge` in `benches/tokens.rs`.
//!
//! Each path computes exactly tiktoken's result: at every step, merge the leftmost of the
//! adjacent pairs whose concatenation has the lowest rank (ranks are token ids in both
//! encodings). The tests in `merge/tests.rs` check every path against bpe-openai and
//! tiktoken-rs.

use std::hash::BuildHasher;

use quick_cache::DefaultHashBuilder;

use super::encoding::Encoding;
use super::token_bytes::{TokenBytes, token_bytes};

/// No rank: the pair is not a token.
const NONE: u32 = u32::MAX;

/// The longest piece merged in an array when it is not a few runs; longer ones go to the tree
/// merge ([`Ranks::merge_long`]).
///
/// Up to this length the array merge beat a heap of candidate pairs (`tokens/merge` in
/// `benches/tokens.rs`).
pub(crate) const SMALL_MAX: usize = 64;

/// Bytes the windowed merge (`merge/windows.rs`) merges at once: the tree merge's arrays for this many bytes (about 150 KB) stay in
/// cache. Windows of 4 KB to 256 KB all merged a megabyte of letters in about the same time
/// (`tokens/long-piece` in `benches/tokens.rs`); a window costs a few fixed steps and re-merges
/// its last [`MARGIN`] bytes, so not much smaller.
pub(crate) const WINDOW: usize = 32 * 1024;

/// Pieces longer than this are merged window by window; shorter ones by the tree merge at once
/// (as fast up to here, and unchanged).
pub(crate) const WINDOWED_MIN: usize = 4 * WINDOW;

/// Parts within this many bytes of a window's end are merged again with the next window.
pub(crate) const MARGIN: usize = 512;

/// The run-by-run merge is tried on pieces of at least this many bytes...
pub(crate) const RUNS_MIN_LEN: usize = 32;

/// ...made of at most this many runs of one repeated byte.
pub(crate) const RUNS_MAX_BYTE_RUNS: usize = 8;

/// The run-by-run merge gives up (and the array or tree merge takes over) past this many runs of
/// identical parts, or this many steps: its cost is steps × runs, small only while both are.
const RUNS_MAX_RUNS: usize = 32;
const RUNS_MAX_STEPS: usize = 4096;

/// The rank of every token of one vocabulary, by the token's bytes: tiktoken's encoder map.
///
/// Tokens of at most 12 bytes (nearly all) are in a flat table whose slots hold the bytes, the
/// length and the rank together (`ShortRanks`): one probe, usually one cache line, no pointer
/// to follow, which is what makes the merge's many pair lookups cheap;
/// two-byte tokens, the first lookups of every merge, are also in a table indexed by the two
/// bytes. Longer tokens go in an open-addressing table
/// of `u32` slots, each holding a rank and the top bits of its bytes' hash; a probe whose hash
/// bits match is confirmed against the vocabulary's own bytes ([`TokenBytes`]),
/// so that table stores no keys and is at most half full. Beside them, for each byte value, the
/// ranks of the tokens made of that byte repeated, by length (runs of spaces, `=`, `-`,
/// newlines), for the run-by-run merge.
///
/// Built once per process and encoding, when the first text is counted with it, from the token
/// bytes embedded in ctx-tokens (`openai_vocab.rs`); `tokens/merge` in `benches/tokens.rs` prints
/// the load's time and the memory.
pub struct Ranks {
    tokens: TokenBytes,
    short: ShortRanks,
    /// Tokens up to this many bytes are in `short` (12, or 0 for a vocabulary whose ranks do
    /// not fit its slots).
    short_max: usize,
    /// `bytes[b]`: the rank of the byte `b` alone ([`NONE`] when not a token): a fifth of a
    /// text's pieces are one byte.
    bytes: [u32; 256],
    /// `pairs[a << 8 | b]`: the rank of the two bytes `a b` ([`NONE`] when not a token); every
    /// merge starts with the pairs of bytes.
    pairs: Box<[u32]>,
    hasher: DefaultHashBuilder,
    slots: Box<[u32]>,
    /// `slots.len() - 1`.
    mask: usize,
    /// The slot bits holding the hash tag; the others hold rank + 1 (0 is an empty slot).
    tag_mask: u32,
    /// `uniform[b][k]`: the rank of byte `b` repeated `k` times, [`NONE`] when not a token.
    uniform: Vec<Box<[u32]>>,
    longest: usize,
}

impl std::fmt::Debug for Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ranks").field("tokens", &self.tokens.len()).field("memory_bytes", &self.memory_bytes()).finish()
    }
}

impl Ranks {
    /// The index of a vocabulary whose token ids are its merge ranks (so of cl100k_base and
    /// o200k_base). Ids from `u32::MAX - 1` on, if any, are left out.
    pub(super) fn new(vocab: TokenBytes) -> Self {
        let tokens = vocab.len().min(u32::MAX as usize - 1);
        let short_max = if tokens <= short_ranks::MAX_RANK as usize + 1 { short_ranks::MAX_LEN } else { 0 };
        let long = vocab.iter().take(tokens).filter(|bytes| bytes.len() > short_max).count();
        let size = (long * 2).next_power_of_two().max(16);
        // Rank + 1 needs `rank_bits`; the rest of the slot carries hash bits.
        let rank_bits = usize::BITS - tokens.leading_zeros();
        let tag_mask = if rank_bits >= 32 { 0 } else { !((1u32 << rank_bits) - 1) };
        let mut ranks = Ranks {
            tokens: vocab,
            short: ShortRanks::with_capacity(tokens - long),
            short_max,
            bytes: [NONE; 256],
            pairs: vec![NONE; 1 << 16].into_boxed_slice(),
            hasher: DefaultHashBuilder::default(),
            slots: vec![0; size].into_boxed_slice(),
            mask: size - 1,
            tag_mask,
            uniform: vec![Box::default(); 256],
            longest: 0,
        };
        let mut uniform: Vec<Vec<u32>> = vec![Vec::new(); 256];
        // The index is filled from its own token store: each token's (at most 255) bytes are
        // copied out while the tables change.
        let mut buf = [0u8; 256];
        for id in (0..tokens).filter_map(|id| u32::try_from(id).ok()) {
            let Some(token) = ranks.tokens.get(id) else { continue };
            let Some(bytes) = buf.get_mut(..token.len()) else { continue };
            bytes.copy_from_slice(token);
            let bytes = &*bytes;
            let Some(&first) = bytes.first() else { continue };
            ranks.longest = ranks.longest.max(bytes.len());
            match *bytes {
                [a] => ranks.bytes[usize::from(a)] = ranks.bytes[usize::from(a)].min(id),
                [a, b] => {
                    let pair = &mut ranks.pairs[usize::from(a) << 8 | usize::from(b)];
                    *pair = (*pair).min(id);
                }
                _ => {}
            }
            if bytes.len() <= short_max {
                ranks.short.insert(bytes, id);
            } else if ranks.rank(bytes).is_none() {
                ranks.insert(bytes, id);
            }
            if bytes.iter().all(|&b| b == first) {
                let table = &mut uniform[usize::from(first)];
                if table.len() <= bytes.len() {
                    table.resize(bytes.len() + 1, NONE);
                }
                table[bytes.len()] = table[bytes.len()].min(id);
            }
        }
        ranks.uniform = uniform.into_iter().map(Vec::into_boxed_slice).collect();
        ranks
    }

    /// The vocabulary of `encoding`, read and indexed now (not the process-wide one: for
    /// `benches/tokens.rs`, which times the load).
    pub fn build(encoding: Encoding) -> Self {
        Ranks::new(token_bytes(encoding))
    }

    /// The token bytes, by rank.
    pub fn tokens(&self) -> &TokenBytes {
        &self.tokens
    }

    /// The byte length of the longest token.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// Bytes held by the index (its tables) and the token bytes.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.tokens.memory_bytes()
            + self.short.memory_bytes()
            + self.slots.len() * 4
            + self.pairs.len() * 4
            + self.uniform.iter().map(|t| t.len() * 4 + std::mem::size_of::<Box<[u32]>>()).sum::<usize>()
    }

    fn hash(&self, bytes: &[u8]) -> u64 {
        self.hasher.hash_one(bytes)
    }

    fn tag(&self, hash: u64) -> u32 {
        ((hash >> 32) as u32) & self.tag_mask
    }

    fn insert(&mut self, bytes: &[u8], rank: u32) {
        let hash = self.hash(bytes);
        let slot = self.tag(hash) | (rank + 1);
        let mut i = hash as usize & self.mask;
        // The table is at most half full: an empty slot is always found.
        while self.slots[i] != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = slot;
    }

    /// The rank of the token whose bytes are `bytes`, if there is one.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        let rank = match *bytes {
            [] => return None,
            [a] => self.bytes[usize::from(a)],
            [a, b] => self.pairs[usize::from(a) << 8 | usize::from(b)],
            _ if bytes.len() > self.longest => return None,
            _ => return self.rank_of_longer(bytes),
        };
        (rank != NONE).then_some(rank)
    }

    /// Whether the byte `byte` alone is a token (every byte is one in both encodings).
    #[inline]
    pub(crate) fn is_byte_token(&self, byte: u8) -> bool {
        self.bytes[usize::from(byte)] != NONE
    }

    /// [`Self::rank`] of three bytes or more, at most [`Self::longest`].
    fn rank_of_longer(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() <= self.short_max {
            return self.short.get(bytes);
        }
        let hash = self.hash(bytes);
        let tag = self.tag(hash);
        let mut i = hash as usize & self.mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot & self.tag_mask == tag {
                let rank = (slot & !self.tag_mask) - 1;
                if self.tokens.get(rank) == Some(bytes) {
                    return Some(rank);
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Whether `bytes`, at most 15 of them and packed as `key` by the piece cache
    /// (`pieces::pack`), is a token: one probe, reusing the packing the caller has done.
    #[inline]
    pub(crate) fn is_token_packed(&self, bytes: &[u8], key: u128) -> bool {
        // The lengths `rank` answers from the short table, without packing again; it takes the
        // others (one byte, the pair table, the long tokens).
        if (3..=self.short_max).contains(&bytes.len()) {
            self.short.get_packed(key).is_some()
        } else {
            self.rank(bytes).is_some()
        }
    }

    fn rank_or_none(&self, bytes: &[u8]) -> u32 {
        self.rank(bytes).unwrap_or(NONE)
    }

    /// The rank of byte `byte` repeated `len` times.
    fn uniform_rank(&self, byte: u8, len: usize) -> u32 {
        self.uniform[usize::from(byte)].get(len).copied().unwrap_or(NONE)
    }

    /// Exactly tiktoken's token count of one pre-tokenizer piece (any bytes; 0 for none).
    pub fn count(&self, piece: &[u8]) -> usize {
        match piece.len() {
            0 => 0,
            1 => 1,
            len => {
                if self.rank(piece).is_some() {
                    1
                } else if let Some(n) = self.count_runs_if_few(piece) {
                    n
                } else if len <= SMALL_MAX {
                    self.count_small(piece)
                } else if len <= WINDOWED_MIN {
                    self.merge_long(piece).0
                } else {
                    self.count_windowed(piece, WINDOW, MARGIN)
                }
            }
        }
    }

    /// tiktoken's merge as tiktoken runs it: parts in an array, a scan for the leftmost
    /// lowest-ranked pair, one merge, the two neighbouring pairs re-ranked. Pieces longer than
    /// [`SMALL_MAX`] bytes go to the tree merge.
    pub(crate) fn count_small(&self, piece: &[u8]) -> usize {
        if piece.len() > SMALL_MAX {
            return self.merge_long(piece).0;
        }
        let mut starts = [0u8; SMALL_MAX + 1];
        self.merge_small(piece, &mut starts)
    }

    /// The array merge of a piece of at most [`SMALL_MAX`] bytes: returns the number of parts
    /// left, whose starts are `starts[..parts]` (and `starts[parts]` is the piece's length).
    #[inline(always)]
    fn merge_small(&self, piece: &[u8], starts: &mut [u8; SMALL_MAX + 1]) -> usize {
        let n = piece.len();
        debug_assert!(n <= SMALL_MAX);
        // starts[i]: where part i starts (starts[parts] == n); ranks[i]: rank of parts i, i + 1.
        let mut ranks = [NONE; SMALL_MAX];
        for (i, start) in starts.iter_mut().enumerate().take(n + 1) {
            *start = i as u8;
        }
        for (i, rank) in ranks.iter_mut().enumerate().take(n.saturating_sub(1)) {
            *rank = self.rank_or_none(&piece[i..i + 2]);
        }
        let span = |starts: &[u8], a: usize, b: usize| &piece[usize::from(starts[a])..usize::from(starts[b])];
        let mut parts = n;
        while parts > 1 {
            let (mut best, mut at) = (NONE, 0);
            for (i, &r) in ranks[..parts - 1].iter().enumerate() {
                if r < best {
                    (best, at) = (r, i);
                }
            }
            if best == NONE {
                break;
            }
            starts.copy_within(at + 2..=parts, at + 1);
            ranks.copy_within(at + 1..parts - 1, at);
            parts -= 1;
            if at > 0 {
                ranks[at - 1] = self.rank_or_none(span(starts, at - 1, at + 1));
            }
            if at + 1 < parts {
                ranks[at] = self.rank_or_none(span(starts, at, at + 2));
            }
        }
        parts
    }

    /// Appends the token ids of one piece to `ids`: tiktoken's merge, then each part's rank.
    ///
    /// # Panics
    ///
    /// Never for these vocabularies: every part is a token (every byte is one, and a merge makes
    /// one), which the tests check; a backend call would turn the panic into an error.
    pub(crate) fn encode_piece(&self, piece: &[u8], ids: &mut Vec<u32>) {
        if piece.len() > WINDOWED_MIN {
            self.encode_windowed(piece, WINDOW, MARGIN, ids);
            return;
        }
        let mut push = |span: &[u8]| ids.push(self.rank(span).expect("every part of a merge is a token"));
        match piece.len() {
            0 => {}
            len if self.rank(piece).is_some() || len == 1 => push(piece),
            len if len <= SMALL_MAX => {
                let mut starts = [0u8; SMALL_MAX + 1];
                let parts = self.merge_small(piece, &mut starts);
                for w in starts[..=parts].windows(2) {
                    push(&piece[usize::from(w[0])..usize::from(w[1])]);
                }
            }
            len => {
                let (_, starts) = self.merge_long(piece);
                let mut at = 0;
                while at < len {
                    let end = starts.after(at);
                    push(&piece[at..end]);
                    at = end;
                }
            }
        }
    }
}

/// Identical parts side by side: `count` copies of `piece[pos..pos + len]`.
#[derive(Clone, Copy, Debug)]
struct Run {
    pos: usize,
    len: usize,
    count: usize,
    /// Rank of two of these parts (meaningful when `count >= 2`).
    inner: u32,
    /// Rank of this run's last part followed by the next run's first.
    next: u32,
    /// `inner` and `next` are out of date.
    dirty: bool,
}

impl Run {
    fn new(pos: usize, len: usize, count: usize) -> Self {
        Run { pos, len, count, inner: NONE, next: NONE, dirty: true }
    }

    fn end(&self) -> usize {
        self.pos + self.len * self.count
    }
}

/// The maximal runs of one repeated byte in `piece`, as (start, end); `None` past `max`.
fn byte_runs(piece: &[u8], max: usize) -> Option<Vec<(usize, usize)>> {
    let mut runs = Vec::with_capacity(max);
    let mut start = 0;
    for i in 1..=piece.len() {
        if i == piece.len() || piece[i] != piece[start] {
            if runs.len() == max {
                return None;
            }
            runs.push((start, i));
            start = i;
        }
    }
    Some(runs)
}

impl Ranks {
    /// The run-by-run merge when `piece` has at least [`RUNS_MIN_LEN`] bytes in at most
    /// [`RUNS_MAX_BYTE_RUNS`] runs of one repeated byte; `None` when it does not apply.
    fn count_runs_if_few(&self, piece: &[u8]) -> Option<usize> {
        if piece.len() < RUNS_MIN_LEN {
            return None;
        }
        self.count_runs(piece, &byte_runs(piece, RUNS_MAX_BYTE_RUNS)?)
    }

    /// The rank of `piece[a..b]`, from the repeated-byte tables when the span lies inside one
    /// of the piece's byte runs.
    fn span_rank(&self, piece: &[u8], bytes: &[(usize, usize)], a: usize, b: usize) -> u32 {
        match bytes.iter().find(|&&(s, e)| s <= a && a < e) {
            Some(&(_, e)) if b <= e => self.uniform_rank(piece[a], b - a),
            _ => self.rank_or_none(&piece[a..b]),
        }
    }

    /// tiktoken's merge over runs of identical parts. Each step finds the leftmost
    /// lowest-ranked candidate among each run's first pair of its own parts and each pair
    /// across two runs, applies it, and joins neighbouring runs of identical parts.
    ///
    /// Batching. Say the chosen pair is two parts `P` at the start of a run of `c ≥ 4` parts,
    /// with rank `r`; before it, a run whose last part is `L` (or nothing). Merging the run's
    /// pairs left to right gives, after `k` merges, `(PP × k)(P × (c − 2k))`. If `PPP`,
    /// `PPPP` and `L·PP` are not tokens of rank below `r`, then for every `k < c/2` the next
    /// merge is the `P·P` pair just after the `PP`s: the candidates are
    /// - pairs left of the run, unchanged: above `r`, or they would have come first;
    /// - `L·PP`, `PP·PP`, `PP·P`: above `r` by the test (they differ in length from `PP`, so
    ///   cannot tie with it);
    /// - the `P·P` pairs: rank `r`, the leftmost one first;
    /// - the pair across to the next run and everything after it: unchanged, at least `r`, and
    ///   to the right of that `P·P` pair.
    ///
    /// So the `⌊c/2⌋` merges come in a row, and are applied at once.
    fn count_runs(&self, piece: &[u8], bytes: &[(usize, usize)]) -> Option<usize> {
        let mut runs: Vec<Run> = bytes.iter().map(|&(s, e)| Run::new(s, 1, e - s)).collect();
        self.refresh(piece, bytes, &mut runs);
        for _ in 0..RUNS_MAX_STEPS {
            if runs.len() > RUNS_MAX_RUNS {
                return None;
            }
            // (rank, position, run, across to the next run?)
            let mut best = (NONE, usize::MAX, 0, false);
            for (i, run) in runs.iter().enumerate() {
                if run.count >= 2 && (run.inner, run.pos) < (best.0, best.1) {
                    best = (run.inner, run.pos, i, false);
                }
                let across = run.end() - run.len;
                if i + 1 < runs.len() && (run.next, across) < (best.0, best.1) {
                    best = (run.next, across, i, true);
                }
            }
            let (rank, _, i, across) = best;
            if rank == NONE {
                return Some(runs.iter().map(|r| r.count).sum());
            }
            let run = runs[i];
            if across {
                let after = runs[i + 1];
                let joined = Run::new(run.end() - run.len, run.len + after.len, 1);
                let mut new = Vec::with_capacity(3);
                if run.count > 1 {
                    new.push(Run::new(run.pos, run.len, run.count - 1));
                }
                new.push(joined);
                if after.count > 1 {
                    new.push(Run::new(after.pos + after.len, after.len, after.count - 1));
                }
                runs.splice(i..i + 2, new);
            } else {
                let (pos, len, c) = (run.pos, run.len, run.count);
                let pairs = if c >= 4 && self.batchable(piece, bytes, &runs, i, rank) { c / 2 } else { 1 };
                let mut new = Vec::with_capacity(2);
                new.push(Run::new(pos, 2 * len, pairs));
                if c > 2 * pairs {
                    new.push(Run::new(pos + 2 * len * pairs, len, c - 2 * pairs));
                }
                runs.splice(i..=i, new);
            }
            self.join(piece, &mut runs);
            self.refresh(piece, bytes, &mut runs);
        }
        None
    }

    /// Whether the pairs of run `i` (its inner pair has rank `rank`, at least 4 parts) can all
    /// be merged at once; see [`Self::count_runs`].
    fn batchable(&self, piece: &[u8], bytes: &[(usize, usize)], runs: &[Run], i: usize, rank: u32) -> bool {
        let Run { pos, len, .. } = runs[i];
        let three = self.span_rank(piece, bytes, pos, pos + 3 * len);
        let four = self.span_rank(piece, bytes, pos, pos + 4 * len);
        let left = match i.checked_sub(1).map(|j| runs[j]) {
            Some(before) => self.span_rank(piece, bytes, pos - before.len, pos + 2 * len),
            None => NONE,
        };
        three > rank && four > rank && left > rank
    }

    /// Joins neighbouring runs whose parts have the same bytes.
    fn join(&self, piece: &[u8], runs: &mut Vec<Run>) {
        let mut i = 1;
        while i < runs.len() {
            let (a, b) = (runs[i - 1], runs[i]);
            if a.len == b.len && piece[a.pos..a.pos + a.len] == piece[b.pos..b.pos + b.len] {
                runs[i - 1] = Run::new(a.pos, a.len, a.count + b.count);
                runs.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Re-ranks the candidates of runs that changed, and the pairs across into them.
    fn refresh(&self, piece: &[u8], bytes: &[(usize, usize)], runs: &mut [Run]) {
        for i in 0..runs.len() {
            let run = runs[i];
            if run.dirty {
                runs[i].inner =
                    if run.count >= 2 { self.span_rank(piece, bytes, run.pos, run.pos + 2 * run.len) } else { NONE };
            }
            if let Some(after) = runs.get(i + 1).copied()
                && (run.dirty || after.dirty)
            {
                runs[i].next = self.span_rank(piece, bytes, run.end() - run.len, after.pos + after.len);
            }
        }
        for run in runs.iter_mut() {
            run.dirty = false;
        }
    }
}

mod inline;
mod long;
mod short_ranks;
#[cfg(test)]
mod tests;
mod windows;

use short_ranks::ShortRanks;
