//! The pre-tokenizers of cl100k_base and o200k_base, and of the byte-level BPE models ctx reads
//! from model files (Llama 3, Qwen 2, GPT-2, SmolLM), written out as scanners.
//!
//! BPE merges inside pieces the encoding's regex cuts the text into, so the split decides the
//! count as much as the merges do. bpe-openai cuts with a regex engine (an anchored leftmost-first
//! search per piece); these scanners make the same cuts by walking the text once, testing each
//! character's classes in one table read ([`CharClasses`]). The regex split is about a quarter of
//! bpe-openai's count and would be most of a count whose pieces are cached; the scanners run it
//! about three times faster (`tokens/interleaved` in `benches/tokens.rs`).
//!
//! Each scanner follows its pattern alternative by alternative, in the pattern's order, with the
//! choices a backtracking engine would make (greedy quantifiers give back only as far as the rest
//! needs), which is what leftmost-first matching means. The patterns, as bpe-openai writes them
//! (its `\s+$`, `\s+\s` minus the last character, and `\s+` stand for tiktoken's `\s+(?!\S)|\s+`):
//!
//! ```text
//! cl100k: (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3}
//!       | ' '?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+$ | \s+\s (minus the last char) | \s+
//! o200k:  [^\r\n\p{L}\p{N}]?U*W+C? | [^\r\n\p{L}\p{N}]?U+W*C? | \p{N}{1,3}
//!       | ' '?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+$ | \s+\s (minus the last char) | \s+
//!   with U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}], C = (?i:'s|'t|'re|'ve|'m|'ll|'d)
//! ```
//!
//! The open models' patterns, as their `tokenizer.json` (Hugging Face `tokenizers`, fancy-regex)
//! and llama.cpp write them: Llama 3's is cl100k's, character for character; Qwen 2's is cl100k's
//! with `\p{N}` for `\p{N}{1,3}`; GPT-2's (the `ByteLevel` pre-tokenizer's own) is
//! `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`; SmolLM and
//! StarCoder first cut every digit out (`Digits`, one by one) and run GPT-2's pattern on each
//! stretch between digits, whose ends are then ends of the text for `\s+(?!\S)`.
//! `model_bpe/tests.rs` checks these against the `tokenizers` pre-tokenizers themselves.
//!
//! Exactness is tested against bpe-openai's own split on every pair and triple of characters
//! drawn from one representative of each class combination, on the corpus, and by proptest; the
//! character table against the regex engine on every code point. A piece whose first byte is
//! ASCII is usually cut by a dispatch on that byte's class (`pretokenize/ascii.rs`), tested
//! against the alternatives tried in turn at every position of arbitrary texts.

use super::char_classes::{CharClasses, LETTER, LOWER, NUMBER, SPACE, UPPER};

/// Which pattern to cut by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pattern {
    /// cl100k_base's, which is also Llama 3's (`tokenizer.ggml.pre = llama-bpe`).
    Cl100k,
    O200k,
    /// Qwen 2's: cl100k's with one digit per piece (`\p{N}` for `\p{N}{1,3}`).
    Qwen2,
    /// GPT-2's byte-level pattern (the `ByteLevel` pre-tokenizer's own regex).
    #[cfg_attr(not(feature = "hf"), allow(dead_code))] // only models read from files use it
    Gpt2,
    /// Every digit a piece of its own, then GPT-2's pattern on the text between digits
    /// (SmolLM, StarCoder: a `Digits` pre-tokenizer before `ByteLevel`).
    #[cfg_attr(not(feature = "hf"), allow(dead_code))]
    Gpt2Digits,
}

/// The pieces of a text, front to back.
pub(super) struct Pieces<'a> {
    text: &'a str,
    at: usize,
    scanner: Scanner<'a>,
    /// Under [`Pattern::Gpt2Digits`], the end of the stretch without digits being cut (the
    /// scanner sees it as the whole text, as GPT-2's regex sees each part the digits leave).
    span_end: usize,
}

impl<'a> Pieces<'a> {
    pub(super) fn new(pattern: Pattern, text: &'a str) -> Self {
        let scanner = Scanner { bytes: text.as_bytes(), classes: CharClasses::get(), pattern };
        Pieces { text, at: 0, scanner, span_end: 0 }
    }

    /// Under [`Pattern::Gpt2Digits`]: the end of the digit at `at`, if one is there; otherwise
    /// the scanner is limited to the stretch up to the next digit.
    ///
    /// Digits are what `tokenizers`' `Digits` takes, `char::is_numeric`: the standard library's
    /// Unicode tables, which can be newer than the regex tables of `\p{N}` (U+11DE0 is a digit
    /// to one and not yet to the other).
    fn digit_or_span(&mut self, at: usize) -> Option<usize> {
        if at < self.span_end {
            return None;
        }
        let rest = self.text.get(at..)?;
        let first = rest.chars().next()?;
        if first.is_numeric() {
            return Some(at + first.len_utf8());
        }
        self.span_end = rest.char_indices().find(|(_, c)| c.is_numeric()).map_or(self.text.len(), |(i, _)| at + i);
        self.scanner.bytes = &self.text.as_bytes()[..self.span_end];
        None
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.at >= self.text.len() {
            return None;
        }
        let start = self.at;
        let digit = match self.scanner.pattern {
            Pattern::Gpt2Digits => self.digit_or_span(start),
            _ => None,
        };
        let end = match digit {
            Some(end) => end,
            None => self.scanner.piece_end(start),
        };
        // `end` is always a character boundary past `start` (every step moves by whole
        // characters); were it ever not, the rest would be one piece rather than lost or a panic.
        let piece = self.text.get(start..end).or_else(|| self.text.get(start..))?;
        self.at = start + piece.len();
        Some(piece)
    }

    /// The same pieces as [`Self::next`], in one loop over the text (what `count`, `sum` and
    /// `for_each` run on, and what a counter of pieces should count through).
    ///
    /// The loop keeps the position in a local, which stays in a register: through `next` it
    /// is a field of the iterator, stored and read back for every piece, on the one chain of
    /// dependencies a scan cannot overlap (each piece starts where the last ended). On the
    /// token corpus this loop cut the scan alone by about a sixth.
    #[inline]
    fn fold<B, F: FnMut(B, &'a str) -> B>(mut self, init: B, mut f: F) -> B {
        let mut accumulated = init;
        if self.scanner.pattern == Pattern::Gpt2Digits {
            for piece in self.by_ref() {
                accumulated = f(accumulated, piece);
            }
            return accumulated;
        }
        let (text, scanner) = (self.text, &self.scanner);
        let mut at = self.at;
        while at < text.len() {
            let end = scanner.piece_end(at);
            let Some(piece) = text.get(at..end).or_else(|| text.get(at..)) else { break };
            at += piece.len();
            accumulated = f(accumulated, piece);
        }
        accumulated
    }
}

/// The ASCII characters in a class flag, as a range of bytes after `| 0x20` (for both cases) or
/// as they are: the ASCII members of `\p{L}`, of o200k's lower and of its upper class.
#[derive(Clone, Copy)]
struct AsciiRange {
    fold: u8,
    first: u8,
    last: u8,
}

#[inline(always)]
fn ascii_range(class: u8) -> Option<AsciiRange> {
    match class {
        LETTER => Some(AsciiRange { fold: 0x20, first: b'a', last: b'z' }),
        LOWER => Some(AsciiRange { fold: 0, first: b'a', last: b'z' }),
        UPPER => Some(AsciiRange { fold: 0, first: b'A', last: b'Z' }),
        _ => None,
    }
}

/// How many of the eight bytes of `word` (in text order, little-endian), from the first, are
/// ASCII characters of `range`.
///
/// Each byte's top bit marks a member: the low seven bits of a byte plus at most `0x7F` never
/// carry into the next byte, so `x + (0x80 - first)` sets the top bit exactly when
/// `x >= first`, and `x + (0x7F - last)` exactly when `x > last`; bytes of `0x80` and above
/// (not ASCII) are masked out.
#[inline(always)]
fn ascii_in_range(word: u64, range: AsciiRange) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let x = (word | (u64::from(range.fold) * ONES)) & !HIGH;
    let at_least_first = x + u64::from(0x80 - range.first) * ONES;
    let above_last = x + u64::from(0x7F - range.last) * ONES;
    let members = at_least_first & !above_last & !word & HIGH;
    ((!members & HIGH).trailing_zeros() / 8) as usize
}

struct Scanner<'a> {
    bytes: &'a [u8],
    classes: &'static CharClasses,
    pattern: Pattern,
}

/// Characters in none of `\s`, `\p{L}`, `\p{N}`: what the punctuation alternative takes.
#[inline]
fn other(flags: u8) -> bool {
    flags & (SPACE | LETTER | NUMBER) == 0
}

impl Scanner<'_> {
    /// The flags and UTF-8 length of the character at `at` (a character boundary before the end).
    #[inline(always)]
    fn char_at(&self, at: usize) -> (u8, usize) {
        let b0 = self.bytes[at];
        if b0 < 0x80 {
            return (self.classes.ascii[usize::from(b0)], 1);
        }
        self.wide_char_at(at, b0)
    }

    /// [`Self::char_at`] for a character of two to four bytes starting with `b0`.
    #[inline(never)]
    fn wide_char_at(&self, at: usize, b0: u8) -> (u8, usize) {
        let b = self.bytes;
        let cont = |i: usize| u32::from(b.get(at + i).copied().unwrap_or(0) & 0x3F);
        let (cp, len) = if b0 < 0xE0 {
            ((u32::from(b0 & 0x1F) << 6) | cont(1), 2)
        } else if b0 < 0xF0 {
            ((u32::from(b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3)
        } else {
            ((u32::from(b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4)
        };
        (self.classes.of(cp), len)
    }

    /// The flags and length of the character at `at`, or `None` at the end.
    #[inline(always)]
    fn peek(&self, at: usize) -> Option<(u8, usize)> {
        (at < self.bytes.len()).then(|| self.char_at(at))
    }

    /// The end of the run of characters from `at` whose flags satisfy `keep`.
    #[inline(always)]
    fn run(&self, mut at: usize, keep: impl Fn(u8) -> bool) -> usize {
        while let Some(&b) = self.bytes.get(at) {
            let (flags, len) =
                if b < 0x80 { (self.classes.ascii[usize::from(b)], 1) } else { self.wide_char_at(at, b) };
            if !keep(flags) {
                break;
            }
            at += len;
        }
        at
    }

    /// The end of the run of characters from `at` in `class` (one flag): [`Self::run`], with
    /// ASCII letters taken eight bytes at a time first.
    ///
    /// Most words of most text are ASCII: testing eight bytes in a few word operations, rather
    /// than reading the table byte by byte, ends a word's run without a loop whose exit the
    /// branch predictor cannot guess.
    #[inline(always)]
    fn class_run(&self, mut at: usize, class: u8) -> usize {
        if let Some(range) = ascii_range(class) {
            while let Some(chunk) = self.bytes.get(at..at + 8) {
                let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
                let taken = ascii_in_range(word, range);
                at += taken;
                if taken < 8 {
                    break;
                }
            }
        }
        self.run(at, |f| f & class != 0)
    }

    /// The end of `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `at`, if it matches there.
    fn contraction(&self, at: usize) -> Option<usize> {
        let b = self.bytes;
        if b.get(at) != Some(&b'\'') {
            return None;
        }
        let letter = |i: usize| b.get(at + i).map(u8::to_ascii_lowercase);
        match letter(1)? {
            b's' | b't' | b'm' | b'd' => Some(at + 2),
            b'r' | b'v' if letter(2) == Some(b'e') => Some(at + 3),
            b'l' if letter(2) == Some(b'l') => Some(at + 3),
            // Under Unicode case folding `s` also matches U+017F LATIN SMALL LETTER LONG S.
            0xC5 if b.get(at + 2) == Some(&0xBF) => Some(at + 3),
            _ => None,
        }
    }

    /// Where the piece starting at `at` ends: the first byte's ASCII class picks the
    /// alternative when it can (`pretokenize/ascii.rs`), the alternatives in turn otherwise.
    #[inline]
    fn piece_end(&self, at: usize) -> usize {
        if let Some(end) = self.ascii_piece_end(at) {
            return end;
        }
        self.general_piece_end(at)
    }

    /// Where the piece starting at `at` ends, the pattern's alternatives tried in turn.
    #[inline]
    fn general_piece_end(&self, at: usize) -> usize {
        if let Some(end) = self.space_word(at) {
            return end;
        }
        let (flags, len) = self.char_at(at);
        let words = match self.pattern {
            Pattern::Cl100k | Pattern::Qwen2 => self.cl100k_words(at, flags, len),
            Pattern::O200k => self.o200k_words(at, flags, len),
            Pattern::Gpt2 | Pattern::Gpt2Digits => return self.gpt2_piece_end(at, flags, len),
        };
        if let Some(end) = words {
            return end;
        }
        if flags & NUMBER != 0 {
            return self.number(at, len);
        }
        if let Some(end) = self.punctuation(at, flags, len) {
            return end;
        }
        self.whitespace(at, len, true)
    }

    /// `\p{N}{1,3}`, or `\p{N}` for Qwen 2, at `at`, a number character `len` bytes long.
    #[inline(always)]
    fn number(&self, at: usize, len: usize) -> usize {
        let more = if self.pattern == Pattern::Qwen2 { 0 } else { 2 };
        let mut end = at + len;
        for _ in 0..more {
            match self.peek(end) {
                Some((f, l)) if f & NUMBER != 0 => end += l,
                _ => break,
            }
        }
        end
    }

    /// The commonest piece of most text, a space and a word starting with an ASCII letter,
    /// taken without the general alternatives (the same end as theirs, which the tests check).
    ///
    /// cl100k (and Llama 3, Qwen 2): the space is the optional prefix of `\p{L}+`. o200k, for a
    /// lowercase letter only: the space is the prefix, `U*` takes nothing (the letter is not in
    /// U), `W+` the lowercase run, then the optional contraction.
    #[inline(always)]
    fn space_word(&self, at: usize) -> Option<usize> {
        let b = self.bytes;
        if b.get(at) != Some(&b' ') {
            return None;
        }
        let next = *b.get(at + 1)?;
        match self.pattern {
            Pattern::Cl100k | Pattern::Qwen2 if next.is_ascii_alphabetic() => Some(self.class_run(at + 2, LETTER)),
            Pattern::O200k if next.is_ascii_lowercase() => {
                let end = self.class_run(at + 2, LOWER);
                Some(self.contraction(end).unwrap_or(end))
            }
            _ => None,
        }
    }

    /// GPT-2's pattern, `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`:
    /// case-sensitive contractions, then a run of one class with an optional leading space.
    fn gpt2_piece_end(&self, at: usize, flags: u8, len: usize) -> usize {
        if let Some(end) = self.contraction_cased(at) {
            return end;
        }
        // The character after a leading space, which opens the run in its place.
        let after_space = if self.bytes[at] == b' ' { self.peek(at + 1) } else { None };
        for class in [LETTER, NUMBER] {
            if flags & class != 0 {
                return self.class_run(at + len, class);
            }
            if let Some((f, l)) = after_space
                && f & class != 0
            {
                return self.class_run(at + 1 + l, class);
            }
        }
        if other(flags) {
            return self.run(at + len, other);
        }
        if let Some((f, l)) = after_space
            && other(f)
        {
            return self.run(at + 1 + l, other);
        }
        self.whitespace(at, len, false)
    }

    /// The end of `'s|'t|'re|'ve|'m|'ll|'d` (lowercase only) at `at`, if it matches there.
    fn contraction_cased(&self, at: usize) -> Option<usize> {
        let b = self.bytes;
        if b.get(at) != Some(&b'\'') {
            return None;
        }
        match *b.get(at + 1)? {
            b's' | b't' | b'm' | b'd' => Some(at + 2),
            b'r' | b'v' if b.get(at + 2) == Some(&b'e') => Some(at + 3),
            b'l' if b.get(at + 2) == Some(&b'l') => Some(at + 3),
            _ => None,
        }
    }

    /// cl100k's contraction and word alternatives.
    fn cl100k_words(&self, at: usize, flags: u8, len: usize) -> Option<usize> {
        if let Some(end) = self.contraction(at) {
            return Some(end);
        }
        // [^\r\n\p{L}\p{N}]?\p{L}+ : a letter starts the run itself, or follows one prefix char.
        let is_letter = |f: u8| f & LETTER != 0;
        if is_letter(flags) {
            return Some(self.class_run(at + len, LETTER));
        }
        if self.prefix(at, flags)
            && let Some((next, next_len)) = self.peek(at + len)
            && is_letter(next)
        {
            return Some(self.class_run(at + len + next_len, LETTER));
        }
        None
    }

    /// Whether the character at `at` may open a word as `[^\r\n\p{L}\p{N}]`.
    #[inline]
    fn prefix(&self, at: usize, flags: u8) -> bool {
        flags & (LETTER | NUMBER) == 0 && self.bytes[at] != b'\r' && self.bytes[at] != b'\n'
    }

    /// o200k's two word alternatives, each tried with its optional prefix char first.
    fn o200k_words(&self, at: usize, flags: u8, len: usize) -> Option<usize> {
        // Both need a character of U or W, at `at` or right after a prefix character.
        let wordy = |f: u8| f & (UPPER | LOWER) != 0;
        let prefix = self.prefix(at, flags) && self.peek(at + len).is_some_and(|(next, _)| wordy(next));
        if !prefix && !wordy(flags) {
            return None;
        }
        let end = prefix
            .then(|| self.lower_word(at + len))
            .flatten()
            .or_else(|| self.lower_word(at))
            .or_else(|| prefix.then(|| self.upper_word(at + len)).flatten())
            .or_else(|| self.upper_word(at))?;
        Some(self.contraction(end).unwrap_or(end))
    }

    /// `U*W+` at `at`: the end of its match, if any.
    fn lower_word(&self, at: usize) -> Option<usize> {
        // U* greedy, remembering the last character that W also takes.
        let mut end = at;
        let mut last_lower = None;
        while let Some((f, l)) = self.peek(end) {
            if f & UPPER == 0 {
                break;
            }
            if f & LOWER != 0 {
                last_lower = Some((end, l));
            }
            end += l;
        }
        match self.peek(end) {
            // W+ right after the whole U run (necessarily a lowercase letter first).
            Some((f, l)) if f & LOWER != 0 => Some(self.class_run(end + l, LOWER)),
            // Otherwise U* gives back down to its last character in W, which W+ takes alone:
            // everything after it in the run is in U only, and the character after the run is
            // not in W.
            _ => last_lower.map(|(start, l)| start + l),
        }
    }

    /// `U+W*` at `at`: the end of its match, if any.
    fn upper_word(&self, at: usize) -> Option<usize> {
        let end = self.class_run(at, UPPER);
        (end > at).then(|| self.class_run(end, LOWER))
    }

    /// ` ?[^\s\p{L}\p{N}]+` followed by `[\r\n]*` (cl100k) or `[\r\n/]*` (o200k).
    fn punctuation(&self, at: usize, flags: u8, len: usize) -> Option<usize> {
        let start = if other(flags) {
            at
        } else {
            match self.peek(at + len) {
                Some((next, _)) if self.bytes[at] == b' ' && other(next) => at + 1,
                _ => return None,
            }
        };
        Some(self.punctuation_from(start))
    }

    /// `[^\s\p{L}\p{N}]+` from `start` (a character of that class), then `[\r\n]*` (cl100k)
    /// or `[\r\n/]*` (o200k).
    #[inline(always)]
    fn punctuation_from(&self, start: usize) -> usize {
        let mut end = self.run(start, other);
        let slash = self.pattern == Pattern::O200k;
        while let Some(&b) = self.bytes.get(end) {
            if b == b'\r' || b == b'\n' || (slash && b == b'/') {
                end += 1;
            } else {
                break;
            }
        }
        end
    }

    /// How many bytes from `at` are ASCII spaces, counted a word of eight at a time while eight
    /// bytes remain (the last few are left to the caller's loop).
    #[inline(always)]
    fn spaces(&self, at: usize) -> usize {
        const SPACES: u64 = 0x2020_2020_2020_2020;
        let mut end = at;
        while let Some(chunk) = self.bytes.get(end..end + 8) {
            // Zero bytes where the text has a space: the lowest nonzero byte is the first other.
            let differ = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])) ^ SPACES;
            if differ != 0 {
                return end - at + (differ.trailing_zeros() / 8) as usize;
            }
            end += 8;
        }
        end - at
    }

    /// `\s*[\r\n]+ | \s+$ | \s+(?!\S) | \s+` at `at`, a whitespace character `len` bytes long
    /// (every other character is taken by an earlier alternative); without the first alternative
    /// when `newlines` is false (GPT-2).
    fn whitespace(&self, at: usize, len: usize, newlines: bool) -> usize {
        let mut end = at;
        let mut last_start = at;
        let mut after_newline = None;
        loop {
            // Spaces eight at a time (indentation, padded columns): each a whole character of
            // `\s`, none a line break.
            let spaces = self.spaces(end);
            if spaces > 0 {
                end += spaces;
                last_start = end - 1;
            }
            let Some((f, l)) = self.peek(end) else { break };
            if f & SPACE == 0 {
                break;
            }
            if newlines && matches!(self.bytes[end], b'\r' | b'\n') {
                after_newline = Some(end + 1);
            }
            last_start = end;
            end += l;
        }
        if let Some(newline_end) = after_newline {
            // \s* gives back to the last line break of the run; [\r\n]+ takes it.
            newline_end
        } else if end == self.bytes.len() || last_start == at {
            // To the end of the text, or a single whitespace character.
            end.max(at + len)
        } else {
            // All but the last character, which stays to open the next piece.
            last_start
        }
    }
}

mod ascii;
#[cfg(test)]
mod tests;
