//! The two lookups a model's merge makes for every new piece, as flat open-addressing tables.
//!
//! A cold count is bound by memory latency: each piece never seen before is looked up whole
//! (`ignore_merges`) and each merge step looks up one or two pairs, at random places in tables of
//! several megabytes. A `HashMap` probe touches two cache lines (its control bytes, then the
//! entry); these tables keep the key and the value in one slot, probed linearly from the hash, so
//! a lookup usually touches one line. Both are filled once when the model is read and never
//! change after, so the longest probe is fixed by the vocabulary, whatever text is counted.
//!
//! Many lookups find nothing (every pair left when a piece is done merging, most pairs beside a
//! new part, every piece of several tokens looked up whole), so both tables have a filter in
//! front (`filter.rs`): a few hundred kilobytes that stay in the CPU's caches where the tables
//! (8 MiB of pairs and 4 MiB of tokens for Llama 3) do not. A key the filter rejects is
//! certainly absent and costs no miss.

use super::super::filter::{Filter, fold};

/// Slots at least 4/3 of the entries, a power of two: at most three quarters full.
fn slots_for(entries: usize) -> usize {
    (entries + entries / 3 + 1).next_power_of_two().max(16)
}

/// Fibonacci hashing: the top bits of the product spread structured keys (two token ids side by
/// side) over the table.
#[inline]
fn spread(key: u64, bits: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// From a pair of token ids (`left << 32 | right`) to its merge (`rank << 32 | merged`).
pub(super) struct PairTable {
    /// `(key, value)`; [`Self::EMPTY`] keys mark free slots.
    slots: Box<[(u64, u64)]>,
    bits: u32,
    /// About 8 bits per key (`filter.rs`): a few percent of absent pairs pass.
    filter: Filter,
}

impl PairTable {
    /// No pair has this key: token ids are below `u32::MAX` (`ModelBpe::from_spec` checks).
    const EMPTY: u64 = u64::MAX;

    /// A table with room for `entries` pairs.
    pub(super) fn with_capacity(entries: usize) -> Self {
        let size = slots_for(entries);
        PairTable {
            slots: vec![(Self::EMPTY, 0); size].into_boxed_slice(),
            bits: size.trailing_zeros(),
            filter: Filter::with_capacity(entries, 8),
        }
    }

    /// Whether `key` may be in the table (`false`: it certainly is not).
    #[inline]
    fn may_hold(&self, key: u64) -> bool {
        self.filter.may_hold(key)
    }

    /// Sets the merge of `key`, replacing an earlier one (a pair listed twice: the later rank
    /// counts, as in `tokenizers`' map).
    pub(super) fn insert(&mut self, key: u64, value: u64) {
        debug_assert_ne!(key, Self::EMPTY);
        self.filter.insert(key);
        let mask = self.slots.len() - 1;
        let mut i = spread(key, self.bits);
        loop {
            let slot = &mut self.slots[i];
            if slot.0 == key || slot.0 == Self::EMPTY {
                *slot = (key, value);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// The merge of `key`, or `none`.
    #[inline]
    pub(super) fn get(&self, key: u64, none: u64) -> u64 {
        if !self.may_hold(key) {
            return none;
        }
        let i = spread(key, self.bits);
        self.resolve(key, i, self.slots[i], none)
    }

    /// The merges of two keys, both first slots read before either is compared: on a cold
    /// count each lookup is usually a cache miss, and the two then overlap instead of following
    /// one another (a merge step looks up the pairs on both sides of the part it made).
    #[inline]
    pub(super) fn get2(&self, a: u64, b: u64, none: u64) -> (u64, u64) {
        match (self.may_hold(a), self.may_hold(b)) {
            (true, true) => {}
            (true, false) => return (self.get(a, none), none),
            (false, true) => return (none, self.get(b, none)),
            (false, false) => return (none, none),
        }
        let (i, j) = (spread(a, self.bits), spread(b, self.bits));
        let (first_a, first_b) = (self.slots[i], self.slots[j]);
        (self.resolve(a, i, first_a, none), self.resolve(b, j, first_b, none))
    }

    /// The end of a lookup of `key` whose first slot, at `i`, held `slot`.
    #[inline]
    fn resolve(&self, key: u64, mut i: usize, mut slot: (u64, u64), none: u64) -> u64 {
        let mask = self.slots.len() - 1;
        loop {
            if slot.0 == key {
                return slot.1;
            }
            if slot.0 == Self::EMPTY {
                return none;
            }
            i = (i + 1) & mask;
            slot = self.slots[i];
        }
    }

    /// Bytes the table holds.
    pub(super) fn memory_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<(u64, u64)>() + self.filter.memory_bytes()
    }
}

/// A set of byte strings of 1 to 15 bytes, each packed with its length into two words (the piece
/// cache's key, `pieces::pack`).
pub(super) struct ShortSet {
    /// `(low word, high word)`; `(0, 0)` is the empty string's key, never inserted: a free slot.
    slots: Box<[(u64, u64)]>,
    bits: u32,
    filter: Filter,
}

impl ShortSet {
    /// A set with room for `entries` strings.
    pub(super) fn with_capacity(entries: usize) -> Self {
        let size = slots_for(entries);
        ShortSet {
            slots: vec![(0, 0); size].into_boxed_slice(),
            bits: size.trailing_zeros(),
            filter: Filter::with_capacity(entries, 8),
        }
    }

    #[inline]
    fn split(key: u128) -> (u64, u64) {
        (key as u64, (key >> 64) as u64)
    }

    #[inline]
    fn start(&self, (lo, hi): (u64, u64)) -> usize {
        spread(lo ^ hi.rotate_left(29), self.bits)
    }

    /// Adds a packed non-empty string.
    pub(super) fn insert(&mut self, key: u128) {
        self.filter.insert(fold(key));
        let key = Self::split(key);
        debug_assert_ne!(key, (0, 0));
        let mask = self.slots.len() - 1;
        let mut i = self.start(key);
        while self.slots[i] != (0, 0) && self.slots[i] != key {
            i = (i + 1) & mask;
        }
        self.slots[i] = key;
    }

    /// Whether the packed string is in the set.
    #[inline]
    pub(super) fn contains(&self, key: u128) -> bool {
        if !self.filter.may_hold(fold(key)) {
            return false;
        }
        let key = Self::split(key);
        let mask = self.slots.len() - 1;
        let mut i = self.start(key);
        loop {
            let slot = self.slots[i];
            if slot == (0, 0) {
                return false;
            }
            if slot == key {
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    /// Bytes the set holds.
    pub(super) fn memory_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<(u64, u64)>() + self.filter.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pieces::pack;

    #[test]
    fn pairs_are_found_replaced_and_missed() {
        let mut table = PairTable::with_capacity(1000);
        for k in 0..1000u64 {
            table.insert(k << 32 | (k * 7 % 13), k);
        }
        table.insert(5 << 32 | (35 % 13), 99);
        for k in 0..1000u64 {
            assert_eq!(table.get(k << 32 | (k * 7 % 13), u64::MAX), if k == 5 { 99 } else { k });
            assert_eq!(table.get(k << 32 | 20, u64::MAX), u64::MAX);
            let (a, b) = (k << 32 | (k * 7 % 13), (k / 2) << 32 | ((k / 2) * 7 % 13));
            assert_eq!(table.get2(a, b, u64::MAX), (table.get(a, u64::MAX), table.get(b, u64::MAX)));
            assert_eq!(table.get2(a, k << 32 | 20, u64::MAX), (table.get(a, u64::MAX), u64::MAX));
        }
        assert!(table.memory_bytes() >= 1000 * 16);
    }

    #[test]
    fn the_filter_keeps_every_pair_and_turns_most_absent_ones_away() {
        let mut table = PairTable::with_capacity(100_000);
        let key = |k: u64| (k * 31 % 50_000) << 32 | (k * 7919 % 100_003);
        for k in 0..100_000 {
            table.insert(key(k), k);
        }
        assert!((0..100_000).all(|k| table.may_hold(key(k))));
        let absent = (0..100_000u64).map(|k| (k + 60_000) << 32 | k).filter(|&k| table.may_hold(k)).count();
        assert!(absent < 10_000, "{absent} of 100,000 absent pairs pass the filter");
    }

    #[test]
    fn short_strings_are_found_and_missed() {
        let words: Vec<String> = (0..5000).map(|i| format!("w{i}")).collect();
        let mut set = ShortSet::with_capacity(words.len());
        for w in &words {
            set.insert(pack(w.as_bytes()));
        }
        set.insert(pack(b"w1"));
        for w in &words {
            assert!(set.contains(pack(w.as_bytes())), "{w}");
            assert!(!set.contains(pack(format!("{w}x").as_bytes())), "{w}x");
        }
        assert!(!set.contains(pack(b"")));
        assert!(set.memory_bytes() >= 5000 * 16);
    }
}
