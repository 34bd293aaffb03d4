//! The scanners' dispatch on the first byte of a piece, when it is ASCII.
//!
//! Most pieces of most text start with an ASCII byte, and that byte's class (letter, digit,
//! line break, other whitespace, punctuation) alone rules out most of the pattern's
//! alternatives: a letter can only open `\p{L}+` (cl100k) or `W+` (o200k, lowercase), a digit
//! only `\p{N}{1,3}`, a line break only the whitespace alternatives. Trying the alternatives in
//! turn, as [`Scanner::general_piece_end`] does, reads the first character again for each and
//! costs a branch per alternative; here one table read picks the alternative, and the next
//! character is read only when the first may be a prefix (`[^\r\n\p{L}\p{N}]?` before a word,
//! `' '?` before punctuation).
//!
//! Each case below is the end the general scanner finds, derived from the pattern (written out in
//! `pretokenize.rs`); cases the first two or three ASCII bytes do not decide (an apostrophe,
//! which may open a contraction under cl100k; an uppercase letter under o200k that no lowercase
//! one follows, where `U*W+` and `U+W*` compete; a non-ASCII character next) return `None` and
//! the general scanner takes them. The tests check
//! this dispatch against the general scanner at every character boundary of arbitrary texts
//! (`pretokenize/tests.rs`), besides the splits against bpe-openai's regex.

use super::{LETTER, NUMBER, Pattern, SPACE, Scanner, other};

impl Scanner<'_> {
    /// Where the piece starting at `at` ends, when its first byte is ASCII and two bytes decide
    /// which alternative matches; `None` otherwise.
    #[inline(always)]
    pub(super) fn ascii_piece_end(&self, at: usize) -> Option<usize> {
        let b0 = *self.bytes.get(at)?;
        if b0 >= 0x80 {
            return None;
        }
        match self.pattern {
            Pattern::Cl100k | Pattern::Qwen2 => self.cl100k_ascii(at, b0),
            Pattern::O200k => self.o200k_ascii(at, b0),
            Pattern::Gpt2 | Pattern::Gpt2Digits => None,
        }
    }

    /// The ASCII byte at `at` and its flags, if there is one.
    #[inline(always)]
    fn ascii_at(&self, at: usize) -> Option<(u8, u8)> {
        let b = *self.bytes.get(at)?;
        (b < 0x80).then(|| (b, self.classes.ascii[usize::from(b)]))
    }

    /// cl100k's (and Llama 3's, Qwen 2's) alternatives for an ASCII byte `b0` at `at`.
    #[inline(always)]
    fn cl100k_ascii(&self, at: usize, b0: u8) -> Option<usize> {
        let flags = self.classes.ascii[usize::from(b0)];
        if flags & LETTER != 0 {
            // `\p{L}+` without a prefix (a letter is not `[^\r\n\p{L}\p{N}]`).
            return Some(self.class_run(at + 1, LETTER));
        }
        if flags & NUMBER != 0 {
            return Some(self.number(at, 1));
        }
        if b0 == b'\r' || b0 == b'\n' {
            // Not a prefix, not punctuation: only the whitespace alternatives take it.
            return Some(self.whitespace(at, 1, true));
        }
        if b0 == b'\'' {
            return None;
        }
        // A prefix character: a word when a letter follows.
        let (_, next) = self.ascii_at(at + 1)?;
        if next & LETTER != 0 {
            return Some(self.class_run(at + 2, LETTER));
        }
        Some(self.punctuation_or_space(at, b0, flags, next))
    }

    /// o200k's alternatives for an ASCII byte `b0` at `at`.
    #[inline(always)]
    fn o200k_ascii(&self, at: usize, b0: u8) -> Option<usize> {
        if b0.is_ascii_lowercase() {
            // `U*W+C?`: `U*` takes nothing (a lowercase letter is not in U), `W+` the run.
            return Some(self.lower_run_and_contraction(at + 1));
        }
        let flags = self.classes.ascii[usize::from(b0)];
        if flags & NUMBER != 0 {
            return Some(self.number(at, 1));
        }
        if b0 == b'\r' || b0 == b'\n' {
            return Some(self.whitespace(at, 1, true));
        }
        if flags & LETTER != 0 {
            // An uppercase letter: `U*` takes it alone when a lowercase one follows (that one is
            // not in U), and `W+` the rest; otherwise `U*W+` and `U+W*` compete.
            return self.capitalised(at + 1);
        }
        // A prefix character (the apostrophe too: o200k has no contraction of its own).
        let (b1, next) = self.ascii_at(at + 1)?;
        if b1.is_ascii_lowercase() {
            return Some(self.lower_run_and_contraction(at + 2));
        }
        if next & LETTER != 0 {
            // The prefix, then an uppercase letter: as above, one byte further.
            return self.capitalised(at + 2);
        }
        Some(self.punctuation_or_space(at, b0, flags, next))
    }

    /// o200k's `U*W+C?` after an uppercase ASCII letter ending at `at`, when a lowercase ASCII
    /// letter follows it.
    #[inline(always)]
    fn capitalised(&self, at: usize) -> Option<usize> {
        match self.ascii_at(at) {
            Some((b, _)) if b.is_ascii_lowercase() => Some(self.lower_run_and_contraction(at + 1)),
            _ => None,
        }
    }

    /// o200k's `W+C?` once its first character (a lowercase ASCII letter) is taken, up to `at`.
    #[inline(always)]
    fn lower_run_and_contraction(&self, at: usize) -> usize {
        let end = self.class_run(at, super::LOWER);
        self.contraction(end).unwrap_or(end)
    }

    /// The end of a piece opening with `b0` (flags `flags`: no letter, no number, no line break)
    /// followed by an ASCII character of flags `next` (no letter), under cl100k's or o200k's
    /// pattern: punctuation, a space before punctuation, or whitespace.
    #[inline(always)]
    fn punctuation_or_space(&self, at: usize, b0: u8, flags: u8, next: u8) -> usize {
        if flags & SPACE == 0 {
            // `[^\s\p{L}\p{N}]+` from `b0` itself.
            return self.punctuation_from(at + 1);
        }
        if b0 == b' ' && other(next) {
            // `' '?` then the punctuation.
            return self.punctuation_from(at + 2);
        }
        // Whitespace before a digit, a space or a line break: no earlier alternative matches.
        self.whitespace(at, 1, true)
    }
}
