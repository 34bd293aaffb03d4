//! The ranks of the short tokens (up to [`MAX_LEN`] bytes, nearly all of a vocabulary) in one
//! flat table whose 16-byte slots hold a token's bytes, its length and its rank together.
//!
//! A cold count looks up every new piece whole and every pair a merge considers, at random
//! places: each lookup is a cache miss or two. A `HashMap` keyed by the packed bytes takes two
//! (control bytes, then a 24-byte entry) and 6.5 MiB for o200k_base; here a lookup reads one slot
//! (then its neighbours, linear probing, usually in the same cache line) and the table is 4 MiB.
//! The key is the piece cache's packing (`pieces::pack`: the bytes, zeros, the length in the top
//! byte); a token of at most 12 bytes leaves bytes 12 to 14 zero, where its rank goes.

use super::super::filter::{Filter, fold};
use super::super::pieces::pack;

/// The longest token kept here.
pub(super) const MAX_LEN: usize = 12;

/// Ranks up to this fit in the three free bytes.
pub(super) const MAX_RANK: u32 = (1 << 24) - 1;

const RANK_SHIFT: u32 = 8 * MAX_LEN as u32;
const RANK_MASK: u128 = (MAX_RANK as u128) << RANK_SHIFT;

pub(super) struct ShortRanks {
    /// A token's packed bytes with its rank in the free bytes; 0 (the empty string, never a
    /// token) marks a free slot.
    slots: Box<[u128]>,
    bits: u32,
    /// Most lookups of a merge are for concatenations that are not tokens: the filter turns
    /// nearly all of them away before a probe of `slots` (2 to 4 MiB, a cache miss).
    filter: Filter,
}

impl ShortRanks {
    /// A table for `entries` tokens, at most three quarters full.
    pub(super) fn with_capacity(entries: usize) -> Self {
        let size = (entries + entries / 3 + 1).next_power_of_two().max(16);
        ShortRanks {
            slots: vec![0; size].into_boxed_slice(),
            bits: size.trailing_zeros(),
            filter: Filter::with_capacity(entries, 8),
        }
    }

    #[inline]
    fn start(&self, key: u128) -> usize {
        (fold(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    /// Adds `bytes` (1 to [`MAX_LEN`] of them) with `rank` (at most [`MAX_RANK`]), unless it is
    /// there already: the first rank given stays, as in tiktoken's map built in rank order.
    pub(super) fn insert(&mut self, bytes: &[u8], rank: u32) {
        debug_assert!((1..=MAX_LEN).contains(&bytes.len()) && rank <= MAX_RANK);
        let key = pack(bytes);
        self.filter.insert(fold(key));
        let mask = self.slots.len() - 1;
        let mut i = self.start(key);
        while self.slots[i] != 0 {
            if self.slots[i] & !RANK_MASK == key {
                return;
            }
            i = (i + 1) & mask;
        }
        self.slots[i] = key | (u128::from(rank) << RANK_SHIFT);
    }

    /// The rank of `bytes` (1 to [`MAX_LEN`] of them), if it is a token.
    #[inline]
    pub(super) fn get(&self, bytes: &[u8]) -> Option<u32> {
        self.get_packed(pack(bytes))
    }

    /// [`Self::get`] for bytes the caller has packed already (`pieces::pack`).
    #[inline]
    pub(super) fn get_packed(&self, key: u128) -> Option<u32> {
        if !self.filter.may_hold(fold(key)) {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.start(key);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot & !RANK_MASK == key {
                return Some(((slot & RANK_MASK) >> RANK_SHIFT) as u32);
            }
            i = (i + 1) & mask;
        }
    }

    /// Bytes the table holds.
    pub(super) fn memory_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<u128>() + self.filter.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_and_rank_is_found_and_others_are_not() {
        let mut table = ShortRanks::with_capacity(3000);
        let token = |i: usize| -> Vec<u8> { (0..=i % MAX_LEN).map(|k| (i * 31 + k * 7) as u8).collect() };
        for i in 0..3000 {
            table.insert(&token(i), (i as u32 * 5591) % (MAX_RANK + 1));
        }
        for i in 0..3000 {
            // A byte string listed twice keeps its first rank.
            let first = (0..3000).find(|&j| token(j) == token(i)).unwrap_or(i);
            assert_eq!(table.get(&token(i)), Some((first as u32 * 5591) % (MAX_RANK + 1)), "{i}");
            let mut other = token(i);
            other.push(0);
            if other.len() <= MAX_LEN && (0..3000).all(|j| token(j) != other) {
                assert_eq!(table.get(&other), None, "{other:?}");
            }
        }
        table.insert(&[0xFF; MAX_LEN], MAX_RANK);
        assert_eq!(table.get(&[0xFF; MAX_LEN]), Some(MAX_RANK));
        assert_eq!(table.get(&[0; MAX_LEN]), None);
        assert!(table.memory_bytes() >= 3000 * 16);
    }
}
