//! The character classes of the OpenAI pre-tokenizer patterns, as one flag byte per character.
//!
//! The classes are the code point ranges `regex-syntax` — the very parser and Unicode tables that
//! compile bpe-openai's (and tiktoken's) patterns — gives for each class pattern, written once
//! into `char_classes/ranges.rs` (`CTX_UPDATE_CHAR_CLASSES=1 cargo test -p ctx-tokens --lib
//! char_classes` rewrites it). A character is a letter here exactly when `\p{L}` matches it
//! there, for the Unicode version of the regex-syntax release the file was written from:
//! the tests compare every range with the regex-syntax of the workspace's lock file and every
//! character with regex-automata, so a regex-syntax update with new Unicode tables fails them
//! until the file is rewritten. Taken from a file rather than from the parser at first use, the
//! program that counts does not build regex-syntax (3.7 s on the chain of a user's first build,
//! BENCHMARKS.md, "Issue 39, goal 3").
//!
//! Lookup is one table read for the Basic Multilingual Plane and a binary search over merged
//! ranges above it (emoji, rare CJK, historic scripts).

use std::sync::OnceLock;

mod ranges;

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

/// Code point ranges, inclusive, in order.
type Ranges = &'static [(u32, u32)];

/// The pattern fragment of each flag, in flag order, with the code point ranges regex-syntax
/// parses it to.
const CLASSES: [(u8, &str, Ranges); 5] = [
    (LETTER, r"\p{L}", ranges::LETTER),
    (NUMBER, r"\p{N}", ranges::NUMBER),
    (SPACE, r"\s", ranges::SPACE),
    (UPPER, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", ranges::UPPER),
    (LOWER, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", ranges::LOWER),
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
    /// The table, built on first use (the 64 KiB table filled from the five classes' ranges).
    pub(super) fn get() -> &'static CharClasses {
        static TABLE: OnceLock<CharClasses> = OnceLock::new();
        TABLE.get_or_init(CharClasses::build)
    }

    fn build() -> CharClasses {
        let mut bmp = vec![0u8; ASTRAL as usize].into_boxed_slice();
        let mut bounds: Vec<u32> = vec![ASTRAL];
        let mut astral_ranges: Vec<(u32, u32, u8)> = Vec::new();
        for (flag, _, ranges) in CLASSES {
            for &(start, end) in ranges {
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

#[cfg(test)]
mod tests {
    use regex_syntax::hir::{Class, HirKind};

    use super::*;

    /// The code point ranges (inclusive) a class pattern matches, from the regex parser itself.
    fn parsed(pattern: &str) -> Vec<(u32, u32)> {
        match regex_syntax::parse(pattern).as_ref().map(|h| h.kind()) {
            Ok(HirKind::Class(Class::Unicode(class))) => {
                class.ranges().iter().map(|r| (u32::from(r.start()), u32::from(r.end()))).collect()
            }
            other => panic!("{pattern} is no Unicode class: {other:?}"),
        }
    }

    /// `ranges.rs` as regex-syntax gives the classes: eight ranges a line, one constant a class.
    fn generated() -> String {
        let names = ["LETTER", "NUMBER", "SPACE", "UPPER", "LOWER"];
        let mut out = String::from(
            "//! The code point ranges (inclusive) of the pre-tokenizer's character classes, as\n\
             //! regex-syntax 0.8 parses them (see `char_classes.rs`). Written by\n\
             //! `CTX_UPDATE_CHAR_CLASSES=1 cargo test -p ctx-tokens --lib char_classes`; not edited by hand.\n",
        );
        for ((_, pattern, _), name) in CLASSES.iter().zip(names) {
            out.push_str(&format!(
                "\n/// `{pattern}`.\n#[rustfmt::skip]\npub(super) const {name}: &[(u32, u32)] = &[\n"
            ));
            for line in parsed(pattern).chunks(8) {
                let cells: Vec<String> = line.iter().map(|(s, e)| format!("(0x{s:X}, 0x{e:X})")).collect();
                out.push_str(&format!("    {},\n", cells.join(", ")));
            }
            out.push_str("];\n");
        }
        out
    }

    #[test]
    fn the_ranges_are_regex_syntaxs() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/char_classes/ranges.rs");
        if std::env::var_os("CTX_UPDATE_CHAR_CLASSES").is_some() {
            std::fs::write(&path, generated()).expect("write ranges.rs");
        }
        for (_, pattern, ranges) in CLASSES {
            assert_eq!(
                ranges,
                parsed(pattern),
                "{pattern}: run CTX_UPDATE_CHAR_CLASSES=1 cargo test -p ctx-tokens --lib char_classes"
            );
        }
        assert_eq!(std::fs::read_to_string(&path).expect("ranges.rs"), generated(), "ranges.rs is as written");
    }

    #[test]
    fn flags_agree_with_the_regex_engine_on_every_character() {
        let table = CharClasses::get();
        let regexes: Vec<(u8, regex_automata::meta::Regex)> = CLASSES
            .iter()
            .map(|&(flag, pattern, _)| {
                (flag, regex_automata::meta::Regex::new(&format!("^{pattern}$")).expect("pattern"))
            })
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
