//! Counting piece by piece: every distinct pre-tokenizer piece is tokenized once.
//!
//! BPE first cuts a text into pieces by the encoding's pattern (ctx's scanners in
//! `pretokenize.rs`, the same cuts as tiktoken's regex), then runs byte-pair
//! merges inside each piece on its own. A piece's count therefore never depends on its
//! neighbours, and a text's count is exactly the sum of its pieces' counts. Splitting runs several
//! times faster than merging, and most pieces of real text repeat (words, indentation, `": "`), so
//! [`PieceCache`] remembers the count of each distinct piece and a text costs one split plus one
//! lookup per piece; only pieces never seen before are merged.
//!
//! Keys are the piece's bytes themselves, never a hash of them, so a lookup cannot confuse two
//! pieces: a piece of at most 15 bytes is packed with its length into a `u128` (most pieces),
//! a longer one up to [`PieceCache::MAX_CACHED_PIECE`] bytes is stored as a byte string (that
//! part of the cache is bounded in bytes), and a longer piece still (a megabyte of letters is one
//! piece) is only remembered for the rest of the text being counted. Each encoding has its own
//! cache, so no entry is ever shared between vocabularies.
//!
//! `parallel.rs` counts a large text on several threads, each with a [`PieceCounter`] of this file.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use quick_cache::sync::{Cache, DefaultLifecycle};
use quick_cache::{DefaultHashBuilder, UnitWeighter, Weighter};

use super::cache::CacheStats;
use super::pretokenize::Pieces;

/// The longest piece packed inline into a `u128` key (the 16th byte holds the length).
pub(super) const INLINE: usize = 15;

/// Where a packed key's length starts: its top byte.
const LEN_SHIFT: u32 = 120;

/// Below this size a text is counted without a per-call memo: setting one up costs more than the
/// few repeated pieces of a short text save.
const MEMO_MIN_BYTES: usize = 2048;

/// The most entries a count's memo reserves before it starts (it grows past that as needed).
const MEMO_MAX_RESERVED: usize = 16 * 1024;

/// Pieces longer than this are not remembered even for the rest of one text (a 10 MB run of
/// letters is one piece: copying it into a memo would cost more than it could save).
const MEMO_MAX_PIECE: usize = 64 * 1024;

/// What a long piece weighs in the byte budget of the long-piece cache: its bytes plus the
/// entry's own footprint (key pointer and length, count, table slot, eviction state).
#[derive(Clone, Copy, Debug)]
struct PieceBytes;

impl Weighter<Box<[u8]>, u32> for PieceBytes {
    fn weight(&self, key: &Box<[u8]>, _: &u32) -> u64 {
        key.len() as u64 + PieceCache::LONG_ENTRY_OVERHEAD as u64
    }
}

type LongCache = Cache<Box<[u8]>, u32, PieceBytes, DefaultHashBuilder, DefaultLifecycle<Box<[u8]>, u32>>;

/// A bounded, thread-safe map from pre-tokenizer piece to token count, for one encoding.
pub struct PieceCache {
    short: Cache<u128, u32, UnitWeighter>,
    long: LongCache,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl fmt::Debug for PieceCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PieceCache").field("len", &self.len()).field("stats", &self.stats()).finish()
    }
}

impl PieceCache {
    /// Pieces longer than this are not kept from one count to the next.
    pub const MAX_CACHED_PIECE: usize = 1024;
    /// Entries for pieces of at most 15 bytes kept by the process-wide caches.
    pub const DEFAULT_SHORT_ENTRIES: usize = 131_072;
    /// Bytes (pieces plus [`Self::LONG_ENTRY_OVERHEAD`] each) of pieces of 16 to
    /// [`Self::MAX_CACHED_PIECE`] bytes kept by the process-wide caches.
    pub const DEFAULT_LONG_BYTES: usize = 4 << 20;
    /// What each long piece is charged beside its bytes.
    pub const LONG_ENTRY_OVERHEAD: usize = 64;

    /// A cache of at most `short_entries` pieces of up to 15 bytes, and longer pieces weighing
    /// at most `long_bytes` in all.
    pub fn new(short_entries: usize, long_bytes: usize) -> Self {
        let long_bytes = long_bytes.max(Self::MAX_CACHED_PIECE + Self::LONG_ENTRY_OVERHEAD);
        let long_items = long_bytes / (Self::LONG_ENTRY_OVERHEAD + 32);
        PieceCache {
            short: Cache::new(short_entries.max(1)),
            long: Cache::with(
                long_items,
                long_bytes as u64,
                PieceBytes,
                DefaultHashBuilder::default(),
                DefaultLifecycle::default(),
            ),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// Pieces currently held.
    pub fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// Whether no piece is held.
    pub fn is_empty(&self) -> bool {
        self.short.is_empty() && self.long.is_empty()
    }

    /// Forgets every piece (the statistics are kept).
    pub fn clear(&self) {
        self.short.clear();
        self.long.clear();
    }

    /// Lookups answered from the cache, and pieces that had to be merged. A piece of at most 15
    /// bytes that is itself one token is answered by the vocabulary and counted in neither.
    pub fn stats(&self) -> CacheStats {
        CacheStats { hits: self.hits.load(Ordering::Relaxed), misses: self.misses.load(Ordering::Relaxed) }
    }

    /// Bytes the cache's tables and keys occupy now.
    pub fn memory_bytes(&self) -> usize {
        let long_keys: usize = self.long.iter().map(|(k, _)| k.len()).sum();
        self.short.memory_used().total() + self.long.memory_used().total() + long_keys
    }

    fn record(&self, hits: u64, misses: u64) {
        if hits > 0 {
            self.hits.fetch_add(hits, Ordering::Relaxed);
        }
        if misses > 0 {
            self.misses.fetch_add(misses, Ordering::Relaxed);
        }
    }
}

/// The process-wide piece cache of one of the two built-in encodings (index 0 or 1).
pub(super) fn shared_cache(slot: usize) -> &'static PieceCache {
    static SHARED: [OnceLock<PieceCache>; 2] = [OnceLock::new(), OnceLock::new()];
    SHARED[slot.min(1)]
        .get_or_init(|| PieceCache::new(PieceCache::DEFAULT_SHORT_ENTRIES, PieceCache::DEFAULT_LONG_BYTES))
}

/// The key of a piece of at most [`INLINE`] bytes: its bytes in order (little-endian), zeros, and
/// its length in the top byte — so two pieces share a key only when they are equal.
///
/// Built from overlapping word reads rather than a copy into a buffer: most pieces are a few
/// bytes long, and a variable-length copy costs more than the lookup it prepares.
#[inline]
pub(super) fn pack(piece: &[u8]) -> u128 {
    let n = piece.len();
    debug_assert!(n <= INLINE);
    let word = |at: usize| u64::from_le_bytes(piece[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |at: usize| u64::from(u32::from_le_bytes(piece[at..at + 4].try_into().unwrap_or([0; 4])));
    let (lo, hi) = match n {
        // The last word overlaps the first: shifting drops the overlap, leaving bytes 8..n.
        9..=15 => (word(0), word(n - 8) >> (8 * (16 - n))),
        8 => (word(0), 0),
        // The same with two half-words for 4 to 7 bytes.
        4..=7 => (half(0) | ((half(n - 4) >> (8 * (8 - n))) << 32), 0),
        _ => (piece.iter().rev().fold(0, |acc, &b| (acc << 8) | u64::from(b)), 0),
    };
    (u128::from(hi | ((n as u64) << 56)) << 64) | u128::from(lo)
}

/// [`pack`] of the first `len` bytes (at most [`INLINE`]) of `word`, 16 bytes read as one
/// little-endian `u128`: the bytes past `len` masked off, the length in the top byte.
#[inline(always)]
fn packed_prefix(word: u128, len: usize) -> u128 {
    debug_assert!(len <= INLINE);
    (word & ((1u128 << (8 * len)) - 1)) | ((len as u128) << LEN_SHIFT)
}

/// The length a key from [`pack`] holds.
#[inline(always)]
pub(super) fn packed_len(key: u128) -> usize {
    (key >> LEN_SHIFT) as usize
}

/// [`pack`] of `piece[at..at + len]`, taken from `key`, the packed `piece`: its bytes shifted and
/// masked, no byte read again.
#[inline(always)]
pub(super) fn packed_span(key: u128, at: usize, len: usize) -> u128 {
    debug_assert!(at + len <= packed_len(key));
    ((key >> (8 * at)) & ((1u128 << (8 * len)) - 1)) | ((len as u128) << LEN_SHIFT)
}

/// What cuts a text into pieces and merges a piece: one of the OpenAI encodings
/// (`openai_vocab.rs`), or a byte-level BPE model of a model file (`model_bpe.rs`).
///
/// A trait the vocabularies implement, rather than a list of them here: each vocabulary owns a
/// piece cache and counts through [`PieceCounter`], so the counting by pieces stands below both
/// and names neither. The counter is generic over it, so each vocabulary's calls are direct.
pub(super) trait PieceVocab {
    /// The pieces of `text`.
    fn split<'t>(&self, text: &'t str) -> Pieces<'t>;

    /// Whether `piece` (at most [`INLINE`] bytes, packed as `key`) counts one token without a
    /// merge: a token of the vocabulary, under a rule that makes such a piece that token (always
    /// for the OpenAI encodings; with `ignore_merges` for a model file).
    fn is_one_token(&self, piece: &[u8], key: u128) -> bool;

    /// Whether a piece of one byte counts one token, answered from a table of the 256 bytes
    /// before any packing or lookup (`false` sends it the way of longer pieces). A fifth of a
    /// text's pieces are one byte (`(`, `"`, `.`, a newline).
    fn is_byte_token(&self, byte: u8) -> bool;

    /// The exact count of one piece, merged.
    fn count_piece(&self, piece: &[u8]) -> usize;

    /// [`Self::count_piece`] of a piece of at most [`INLINE`] bytes, packed as `key`, for which
    /// [`Self::is_one_token`] said no.
    fn count_short_piece(&self, piece: &[u8], key: u128) -> usize {
        let _ = key;
        self.count_piece(piece)
    }
}

/// The pieces one count has met so far.
#[derive(Default)]
struct Memo {
    short: HashMap<u128, u32, DefaultHashBuilder>,
    long: HashMap<Box<[u8]>, u32, DefaultHashBuilder>,
}

impl Memo {
    /// A memo sized for a text of `bytes` bytes: about one piece to merge per 128 bytes of real
    /// text (2,490 distinct in the 320 KB corpus), so that a count rarely grows the table while
    /// it fills; at most [`MEMO_MAX_RESERVED`] entries are reserved up front.
    fn for_text(bytes: usize) -> Self {
        let entries = (bytes / 128).min(MEMO_MAX_RESERVED);
        Memo {
            short: HashMap::with_capacity_and_hasher(entries, DefaultHashBuilder::default()),
            long: HashMap::default(),
        }
    }
}

/// One count: the tokenizer, the shared cache, and what this call has seen so far (a memo that
/// spares the shared cache's locks for pieces repeated inside one text).
pub(super) struct PieceCounter<'a, V: ?Sized> {
    vocab: &'a V,
    cache: &'a PieceCache,
    memo: Option<Memo>,
    hits: u64,
    misses: u64,
}

impl<'a, V: PieceVocab + ?Sized> PieceCounter<'a, V> {
    /// A counter over `vocab` for a text of about `bytes` bytes.
    pub(super) fn new(vocab: &'a V, cache: &'a PieceCache, bytes: usize) -> Self {
        let memo = (bytes >= MEMO_MIN_BYTES).then(|| Memo::for_text(bytes));
        PieceCounter { vocab, cache, memo, hits: 0, misses: 0 }
    }

    /// The exact count of one piece.
    pub(super) fn piece(&mut self, piece: &str) -> usize {
        let bytes = piece.as_bytes();
        if let &[byte] = bytes
            && self.vocab.is_byte_token(byte)
        {
            return 1;
        }
        if bytes.len() <= INLINE {
            return self.short_piece(bytes, pack(bytes));
        }
        if let Some(n) = self.memo.as_ref().and_then(|m| m.long.get(bytes)) {
            self.hits += 1;
            return *n as usize;
        }
        let n = if bytes.len() <= PieceCache::MAX_CACHED_PIECE {
            match self.cache.long.get(bytes) {
                Some(n) => {
                    self.hits += 1;
                    n
                }
                None => {
                    self.misses += 1;
                    let n = self.merge(bytes);
                    self.cache.long.insert(bytes.into(), n);
                    n
                }
            }
        } else if bytes.len() <= MEMO_MAX_PIECE {
            self.misses += 1;
            self.merge(bytes)
        } else {
            self.misses += 1;
            return self.vocab.count_piece(bytes);
        };
        if let Some(memo) = self.memo.as_mut() {
            memo.long.insert(bytes.into(), n);
        }
        n as usize
    }

    /// The exact count of a piece of at most [`INLINE`] bytes, packed as `key`.
    #[inline(always)]
    fn short_piece(&mut self, bytes: &[u8], key: u128) -> usize {
        // Most pieces of real text are one token (` the`, `(`, `    `): one probe of the
        // vocabulary answers them, cheaper than the cache's lookup (and, the first time, its
        // insert), and keeps the cache's room for pieces that need a merge.
        if self.vocab.is_one_token(bytes, key) {
            return 1;
        }
        let Some(memo) = self.memo.as_mut() else {
            return self.shared_short(bytes, key) as usize;
        };
        // One probe of the memo whether the piece is there or not: a piece new to this text
        // is then entered in the slot the probe found.
        match memo.short.entry(key) {
            Entry::Occupied(seen) => {
                self.hits += 1;
                *seen.get() as usize
            }
            Entry::Vacant(slot) => {
                let n = shared_short(self.vocab, self.cache, bytes, key, &mut self.hits, &mut self.misses);
                *slot.insert(n) as usize
            }
        }
    }

    /// The count of a piece of at most [`INLINE`] bytes, packed as `key`, that is not one token:
    /// from the shared cache, or merged and entered there.
    fn shared_short(&mut self, bytes: &[u8], key: u128) -> u32 {
        shared_short(self.vocab, self.cache, bytes, key, &mut self.hits, &mut self.misses)
    }

    fn merge(&self, bytes: &[u8]) -> u32 {
        // Only pieces of at most MEMO_MAX_PIECE bytes get here: at most that many tokens.
        u32::try_from(self.vocab.count_piece(bytes)).unwrap_or(u32::MAX)
    }

    /// The exact count of `text`: the sum of its pieces.
    pub(super) fn count(&mut self, text: &str) -> usize {
        let vocab = self.vocab;
        let all = text.as_bytes();
        // Through `fold`, not a `for` loop: the scanner then keeps its position in a local
        // rather than storing it back into the iterator for every piece (`Pieces::fold`).
        vocab.split(text).fold(0, |total, piece| {
            let bytes = piece.as_bytes();
            // A piece of 2 to 15 bytes with 16 bytes of the text from its start is packed by one
            // load and a mask rather than by `pack`'s branch on its length. The scanner's pieces
            // are slices of `text`, so `at` is the piece's offset; `window` then starts at the
            // piece's first byte (the same address), whatever `at` is.
            let at = (bytes.as_ptr() as usize).wrapping_sub(all.as_ptr() as usize);
            total
                + match all.get(at..at.wrapping_add(16)) {
                    Some(window)
                        if (2..=INLINE).contains(&bytes.len()) && std::ptr::eq(window.as_ptr(), bytes.as_ptr()) =>
                    {
                        let word = u128::from_le_bytes(window.try_into().unwrap_or([0; 16]));
                        self.short_piece(bytes, packed_prefix(word, bytes.len()))
                    }
                    _ => self.piece(piece),
                }
        })
    }
}

/// [`PieceCounter::shared_short`], on the counter's parts (so that the memo's slot can stay
/// borrowed meanwhile).
fn shared_short<V: PieceVocab + ?Sized>(
    vocab: &V,
    cache: &PieceCache,
    bytes: &[u8],
    key: u128,
    hits: &mut u64,
    misses: &mut u64,
) -> u32 {
    if let Some(n) = cache.short.get(&key) {
        *hits += 1;
        return n;
    }
    *misses += 1;
    // At most 15 bytes: at most 15 tokens.
    let n = u32::try_from(vocab.count_short_piece(bytes, key)).unwrap_or(u32::MAX);
    cache.short.insert(key, n);
    n
}

impl<V: ?Sized> Drop for PieceCounter<'_, V> {
    fn drop(&mut self) {
        self.cache.record(self.hits, self.misses);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openai_vocab::OpenAiVocab;

    fn cl100k() -> &'static OpenAiVocab {
        super::super::openai_vocab::vocab(super::super::Encoding::Cl100kBase)
    }

    /// The reference: bpe-openai's own count.
    fn reference(text: &str) -> usize {
        bpe_openai::cl100k_base().count(text)
    }

    #[test]
    fn packed_keys_are_the_bytes_then_the_length() {
        let bytes: Vec<u8> = (1..=15).map(|i| i * 17).collect();
        for n in 0..=INLINE {
            let mut expected = [0u8; 16];
            expected[..n].copy_from_slice(&bytes[..n]);
            expected[INLINE] = n as u8;
            assert_eq!(pack(&bytes[..n]), u128::from_le_bytes(expected), "{n} bytes");
        }
    }

    #[test]
    fn packed_keys_differ_for_every_short_piece_and_length() {
        assert_ne!(pack(b"a"), pack(b"a\0"));
        assert_ne!(pack(b""), pack(b"\0"));
        assert_ne!(pack(b"abcdefghijklmno"), pack(b"abcdefghijklmn"));
    }

    #[test]
    fn a_prefix_of_sixteen_bytes_packs_as_the_prefix() {
        let window: Vec<u8> = (0..16u8).map(|i| 0xA5 ^ i.wrapping_mul(91)).collect();
        let word = u128::from_le_bytes(window.clone().try_into().unwrap());
        for len in 0..=INLINE {
            assert_eq!(packed_prefix(word, len), pack(&window[..len]), "{len}");
        }
    }

    #[test]
    fn a_span_of_a_packed_key_is_the_span_packed() {
        let piece: Vec<u8> = (0..INLINE as u8).map(|i| 0xF0 ^ i.wrapping_mul(37)).collect();
        for n in 0..=INLINE {
            let key = pack(&piece[..n]);
            assert_eq!(packed_len(key), n);
            for at in 0..=n {
                for len in 0..=n - at {
                    assert_eq!(packed_span(key, at, len), pack(&piece[at..at + len]), "{n} {at} {len}");
                }
            }
        }
    }

    #[test]
    fn the_sum_of_cached_pieces_is_the_tokenizer_count() {
        let cache = PieceCache::new(64, 4096);
        let text = "fn main() {\n    println!(\"héllo, wörld\");\n}\n\n\n   trailing   \u{3000}東京 🦀 ".repeat(300);
        for _ in 0..2 {
            assert_eq!(PieceCounter::new(cl100k(), &cache, text.len()).count(&text), reference(&text));
        }
        assert!(cache.len() <= cache.short.capacity() as usize + cache.long.capacity() as usize);
        let stats = cache.stats();
        assert!(stats.hits > stats.misses, "{stats:?}");
    }

    #[test]
    fn pieces_packed_from_the_text_count_as_pieces_packed_alone() {
        // Short texts (where the last pieces have no 16 bytes after their start and take `pack`)
        // and long ones (where most pieces are packed from a window of the text), with a memo
        // and without, against the reference and against the pieces counted one by one.
        let parts = ["the", " quick", "  ", "\n", "東京", "'ll", "123456", "(", "ünïcödé", "🦀", " x", ",\n\n"];
        let cache = PieceCache::new(256, 8192);
        for seed in 0..400usize {
            let len = if seed % 2 == 0 { seed % 23 } else { 300 + seed % 700 };
            let text: String = (0..len).map(|i| parts[(i * 7 + seed * 13 + i / 3) % parts.len()]).collect();
            let whole = PieceCounter::new(cl100k(), &cache, text.len()).count(&text);
            let mut alone = PieceCounter::new(cl100k(), &cache, text.len());
            let by_piece: usize = cl100k().split(&text).map(|p| alone.piece(p)).sum();
            assert_eq!((whole, by_piece), (reference(&text), reference(&text)), "{text:?}");
        }
    }

    #[test]
    fn pieces_too_long_to_cache_are_counted_directly() {
        let cache = PieceCache::new(16, 4096);
        let word = "x".repeat(PieceCache::MAX_CACHED_PIECE + 1);
        assert_eq!(PieceCounter::new(cl100k(), &cache, word.len()).count(&word), reference(&word));
        assert!(cache.is_empty());
    }

    /// `i` in `len` letters (base 26): distinct words for distinct `i`.
    fn word(mut i: usize, len: usize) -> String {
        (0..len)
            .map(|_| {
                let c = char::from(b'a' + (i % 26) as u8);
                i /= 26;
                c
            })
            .collect()
    }

    #[test]
    fn memory_stops_growing_once_the_cache_is_full() {
        let cache = PieceCache::new(512, 16 * 1024);
        // Distinct short pieces (` abcde`) and distinct long ones (a space and 20 to 59 letters).
        let distinct = |from: usize, n: usize| -> String {
            (from..from + n).map(|i| format!(" {} {}", word(i, 5), word(i, 20 + i % 40))).collect()
        };
        PieceCounter::new(cl100k(), &cache, 0).count(&distinct(0, 2_000));
        let full = cache.memory_bytes();
        PieceCounter::new(cl100k(), &cache, 0).count(&distinct(2_000, 50_000));
        let churned = cache.memory_bytes();
        assert!(churned <= full + full / 2, "{full} bytes after 2,000 pieces, {churned} after 52,000");
        assert!(cache.short.len() as u64 <= cache.short.capacity(), "{}", cache.short.len());
        assert!(cache.long.weight() <= 16 * 1024, "{}", cache.long.weight());
        assert!(cache.long.len() > 16, "long pieces are cached: {}", cache.long.len());
    }
}
