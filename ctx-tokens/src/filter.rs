//! A blocked Bloom filter in front of the vocabulary tables.
//!
//! A cold count is bound by memory latency: every new piece is looked up whole, and every step
//! of a merge looks up the concatenations beside the part it made, at random places in tables
//! of megabytes (the short-token ranks of the OpenAI encodings, a model's tokens and merge
//! pairs). Many of those lookups find nothing: a piece of several tokens is not a token, and
//! most concatenations beside a new part are not tokens or merges. The filter answers "certainly
//! absent" for nearly all of them from a few hundred kilobytes that stay in the CPU's caches,
//! so only lookups that may succeed touch the table.
//!
//! Each key sets three bits of one 64-bit word (one cache line read per query); with about
//! eight bits per key a few percent of absent keys pass. It never rejects a key it was given.

/// The filter: words of bits, sized for the keys it will hold.
pub(super) struct Filter {
    words: Box<[u64]>,
}

impl Filter {
    /// A filter for `entries` keys at about `bits_per_key` bits each (at least one word).
    pub(super) fn with_capacity(entries: usize, bits_per_key: usize) -> Self {
        Filter { words: vec![0; (entries * bits_per_key / 64).max(1)].into_boxed_slice() }
    }

    /// The word of `key` and the three bits it sets there. The key is mixed again here so that
    /// the filter's bits are independent of the hash that places it in a table.
    #[inline(always)]
    fn place(&self, key: u64) -> (usize, u64) {
        let h = (key ^ (key >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        // The word by multiply-shift over the top bits (any number of words), the three bits
        // from the low eighteen.
        let word = ((u128::from(h) * self.words.len() as u128) >> 64) as usize;
        (word, 1 << (h & 63) | 1 << ((h >> 6) & 63) | 1 << ((h >> 12) & 63))
    }

    /// Adds `key`.
    pub(super) fn insert(&mut self, key: u64) {
        let (word, bits) = self.place(key);
        self.words[word] |= bits;
    }

    /// Whether `key` may have been added (`false`: it certainly was not).
    #[inline(always)]
    pub(super) fn may_hold(&self, key: u64) -> bool {
        let (word, bits) = self.place(key);
        self.words[word] & bits == bits
    }

    /// Bytes the filter holds.
    pub(super) fn memory_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// The 64-bit key the filter takes for a packed piece (`pieces::pack`): its two halves folded.
#[inline(always)]
pub(super) fn fold(packed: u128) -> u64 {
    (packed as u64) ^ ((packed >> 64) as u64).rotate_left(29)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_added_is_held_and_most_others_are_turned_away() {
        let mut filter = Filter::with_capacity(100_000, 8);
        let key = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 17);
        for i in 0..100_000 {
            filter.insert(key(i));
        }
        assert!((0..100_000).all(|i| filter.may_hold(key(i))));
        let passed = (100_000..200_000).filter(|&i| filter.may_hold(key(i))).count();
        // Three bits of one word at eight bits per key: about 4% of absent keys pass.
        assert!(passed < 8_000, "{passed} of 100,000 absent keys passed");
        assert_eq!(filter.memory_bytes(), 100_000);
    }

    #[test]
    fn an_empty_or_tiny_filter_still_answers() {
        let mut filter = Filter::with_capacity(0, 8);
        assert!(!filter.may_hold(7));
        filter.insert(7);
        assert!(filter.may_hold(7));
    }
}
