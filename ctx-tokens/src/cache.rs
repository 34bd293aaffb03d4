//! The content-addressed count cache.
//!
//! Keys are a 128-bit XXH3 of the text seeded with the backend id, so equal texts share a count
//! across steps, retries and concurrent requests, and two vocabularies never share an entry even
//! when their counters share one cache. Only the key and the count are stored, never the text,
//! so memory is bounded by the entry count whatever the texts' sizes. quick_cache evicts with
//! CLOCK-Pro and shards its locks, so concurrent counters rarely contend.
//!
//! A 128-bit key makes a collision (two texts taken for one) a ~2^-64 event even after 2^32
//! distinct texts; ctx accepts that risk rather than store and compare whole texts.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use quick_cache::sync::Cache;
use xxhash_rust::xxh3::{xxh3_64, xxh3_128_with_seed};

/// Hit/miss counters of a [`CountCache`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that had to tokenize.
    pub misses: u64,
}

/// A bounded, thread-safe map from (vocabulary, text) to token count.
pub struct CountCache {
    counts: Cache<u128, usize>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl fmt::Debug for CountCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountCache").field("len", &self.counts.len()).field("stats", &self.stats()).finish()
    }
}

impl CountCache {
    /// Entries kept by the shared per-encoding counters (about 3 MiB).
    pub const DEFAULT_ENTRIES: usize = 65_536;

    /// A cache holding at most `entries` counts.
    pub fn new(entries: usize) -> Self {
        CountCache { counts: Cache::new(entries.max(1)), hits: AtomicU64::new(0), misses: AtomicU64::new(0) }
    }

    /// The key of `text` under the vocabulary `backend_id`.
    pub fn key(&self, backend_id: &str, text: &str) -> u128 {
        xxh3_128_with_seed(text.as_bytes(), xxh3_64(backend_id.as_bytes()))
    }

    /// The cached count, if any.
    pub fn get(&self, key: u128) -> Option<usize> {
        let found = self.counts.get(&key);
        match found {
            Some(_) => self.hits.fetch_add(1, Ordering::Relaxed),
            None => self.misses.fetch_add(1, Ordering::Relaxed),
        };
        found
    }

    /// The cached count, if any, counting a hit but not a miss: for a caller that has a cheaper
    /// answer than tokenizing when the count is not held.
    pub(crate) fn get_held(&self, key: u128) -> Option<usize> {
        let found = self.counts.get(&key);
        if found.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// Remembers a count.
    pub fn insert(&self, key: u128, count: usize) {
        self.counts.insert(key, count);
    }

    /// Counts currently held.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether the cache holds no count.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The most counts the cache holds at once (the requested size, rounded up to whole shards).
    pub fn capacity(&self) -> usize {
        usize::try_from(self.counts.capacity()).unwrap_or(usize::MAX)
    }

    /// Hits and misses so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats { hits: self.hits.load(Ordering::Relaxed), misses: self.misses.load(Ordering::Relaxed) }
    }

    /// The counts held, as bytes [`Self::read_bytes`] takes back: a header, then each key and
    /// count as little-endian integers. The texts are not in it (only their keys), so a saved
    /// cache says nothing of what was counted.
    ///
    /// This is how the `pipeline!` macro keeps its counts between compiler runs: each `cargo
    /// check` is a new process, and without them it would load the vocabulary (a few hundred
    /// milliseconds in an unoptimised macro build) to count prompts that did not change.
    ///
    /// ```
    /// use ctx_tokens::CountCache;
    ///
    /// let cache = CountCache::new(16);
    /// cache.insert(cache.key("ctx/cl100k_base", "hello world"), 2);
    /// let saved = cache.to_bytes();
    ///
    /// let again = CountCache::new(16);
    /// assert_eq!(again.read_bytes(&saved), 1);
    /// assert_eq!(again.get(again.key("ctx/cl100k_base", "hello world")), Some(2));
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(SAVED_MAGIC.len() + self.len() * SAVED_ENTRY);
        out.extend_from_slice(SAVED_MAGIC);
        for (key, count) in self.counts.iter() {
            out.extend_from_slice(&key.to_le_bytes());
            out.extend_from_slice(&(count as u64).to_le_bytes());
        }
        out
    }

    /// Adds the counts of `bytes` written by [`Self::to_bytes`]; returns how many were read.
    /// Bytes in another format (a foreign or truncated file) add nothing: a count is taken only
    /// from a whole, well-formed file, never guessed.
    pub fn read_bytes(&self, bytes: &[u8]) -> usize {
        let Some(body) = bytes.strip_prefix(SAVED_MAGIC) else { return 0 };
        if body.len() % SAVED_ENTRY != 0 {
            return 0;
        }
        let mut read = 0;
        for entry in body.chunks_exact(SAVED_ENTRY) {
            let (key, count) = entry.split_at(16);
            let key = u128::from_le_bytes(key.try_into().unwrap_or([0; 16]));
            let Ok(count) = usize::try_from(u64::from_le_bytes(count.try_into().unwrap_or([0; 8]))) else { continue };
            self.counts.insert(key, count);
            read += 1;
        }
        read
    }
}

/// The first bytes of a saved cache: the format's name and version.
const SAVED_MAGIC: &[u8] = b"ctx-count-cache v1\n";
/// One saved entry: a 128-bit key and a 64-bit count.
const SAVED_ENTRY: usize = 16 + 8;
