//! The character classes of the OpenAI pre-tokenizer patterns, as one flag byte per character.
//!
//! The classes are taken from `regex-syntax` — the very parser and Unicode tables that compile
//! bpe-openai's (and tiktoken's) patterns — so a character is a letter here exactly when `\p{L}`
//! matches it there, for the Unicode version that regex build knows. Cargo unifies the one
//! `regex-syntax` 0.8 of the dependency graph, so the two can never disagree.
//!
//! Lookup is one table read for the Basic Multilingual Plane and a binary search over merged
//! ranges above it (emoji, rare CJK, historic scripts).

use std::sync::OnceLock;

use regex_syntax::hir::{Class, HirKind};

/// `\p{L}`.
pub(super) const LETTER: u8 = 1;
/// `\p{N}`.
pub(super) const NUMBER: u8 = 2;
/// `\s` (Unicode `White_Space`).
pub(super) const SPACE: u8 = 4;
/// o200k's capital-or-caseless class `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
pub(super) const UPPER: u8 = 8;
/// o200k's lower-or-caseless class `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
pub(super) const LOWER: u8 = 16;

/// The pattern fragment of each flag, in flag order.
const CLASSES: [(u8, &str); 5] = [
    (LETTER, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (UPPER, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    (LOWER, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
];

/// First code point above the Basic Multilingual Plane.
const ASTRAL: u32 = 0x1_0000;

/// The flags of every character.
pub(super) struct CharClasses {
    /// The first 128 entries of `bmp`, kept apart so that ASCII text reads one small array.
    pub(super) ascii: [u8; 128],
    bmp: Box<[u8]>,
    /// Starts of the ranges above the BMP, each with the flags up to the next start.
    astral: Vec<(u32, u8)>,
}

impl CharClasses {
    /// The table, built on first use (about a millisecond: the regex parser builds the five
    /// classes, and the 64 KiB table is filled from their ranges).
    pub(super) fn get() -> &'static CharClasses {
        static TABLE: OnceLock<CharClasses> = OnceLock::new();
        TABLE.get_or_init(CharClasses::build)
    }

    fn build() -> CharClasses {
        let mut bmp = vec![0u8; ASTRAL as usize].into_boxed_slice();
        let mut bounds: Vec<u32> = vec![ASTRAL];
        let mut astral_ranges: Vec<(u32, u32, u8)> = Vec::new();
        for (flag, pattern) in CLASSES {
            for (start, end) in ranges(pattern) {
                for cp in start..=end.min(ASTRAL - 1) {
                    bmp[cp as usize] |= flag;
                }
                if end >= ASTRAL {
                    let start = start.max(ASTRAL);
                    bounds.extend([start, end + 1]);
                    astral_ranges.push((start, end, flag));
                }
            }
        }
        bounds.sort_unstable();
        bounds.dedup();
        // Each segment between two bounds lies wholly inside or outside every class range.
        let astral = bounds
            .iter()
            .map(|&at| {
                let flags = astral_ranges.iter().filter(|&&(s, e, _)| s <= at && at <= e).fold(0, |f, r| f | r.2);
                (at, flags)
            })
            .collect();
        let mut ascii = [0u8; 128];
        ascii.copy_from_slice(&bmp[..128]);
        CharClasses { ascii, bmp, astral }
    }

    /// The flags of the character whose code point is `cp`.
    #[inline]
    pub(super) fn of(&self, cp: u32) -> u8 {
        match self.bmp.get(cp as usize) {
            Some(&flags) => flags,
            None => {
                let i = self.astral.partition_point(|&(start, _)| start <= cp);
                i.checked_sub(1).map_or(0, |i| self.astral[i].1)
            }
        }
    }
}

/// The code point ranges (inclusive) a class pattern matches, from the regex parser itself.
fn ranges(pattern: &str) -> Vec<(u32, u32)> {
    let hir = regex_syntax::parse(pattern);
    match hir.as_ref().map(|h| h.kind()) {
        Ok(HirKind::Class(Class::Unicode(class))) => {
            class.ranges().iter().map(|r| (u32::from(r.start()), u32::from(r.end()))).collect()
        }
        // The patterns are constants of this file; a test parses every one of them.
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_pattern_parses_to_a_unicode_class() {
        for (_, pattern) in CLASSES {
            assert!(!ranges(pattern).is_empty(), "{pattern}");
        }
    }

    #[test]
    fn flags_agree_with_the_regex_engine_on_every_character() {
        let table = CharClasses::get();
        let regexes: Vec<(u8, regex_automata::meta::Regex)> = CLASSES
            .iter()
            .map(|&(flag, pattern)| (flag, regex_automata::meta::Regex::new(&format!("^{pattern}$")).expect("pattern")))
            .collect();
        let mut buf = [0u8; 4];
        for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
            let text: &str = c.encode_utf8(&mut buf);
            let expected = regexes.iter().filter(|(_, re)| re.is_match(text)).fold(0, |f, (flag, _)| f | flag);
            assert_eq!(table.of(u32::from(c)), expected, "{c:?} U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn a_few_known_characters() {
        let t = CharClasses::get();
        assert_eq!(t.of('a'.into()), LETTER | LOWER);
        assert_eq!(t.of('A'.into()), LETTER | UPPER);
        assert_eq!(t.of('東'.into()), LETTER | UPPER | LOWER);
        assert_eq!(t.of('\u{301}'.into()), UPPER | LOWER); // a combining mark is no letter
        assert_eq!(t.of('7'.into()), NUMBER);
        assert_eq!(t.of('\u{3000}'.into()), SPACE);
        assert_eq!(t.of('🦀'.into()), 0);
        assert_eq!(t.of('𝔸'.into()), LETTER | UPPER);
        assert_eq!(t.of('𠀀'.into()), LETTER | UPPER | LOWER);
    }
}
