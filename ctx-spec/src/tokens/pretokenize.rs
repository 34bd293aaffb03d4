//! The pre-tokenizers of cl100k_base and o200k_base, written out as scanners.
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
//! Exactness is tested against bpe-openai's own split on every pair and triple of characters
//! drawn from one representative of each class combination, on the corpus, and by proptest; the
//! character table against the regex engine on every code point.

use super::char_classes::{CharClasses, LETTER, LOWER, NUMBER, SPACE, UPPER};

/// Which encoding's pattern to cut by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pattern {
    Cl100k,
    O200k,
}

impl Pattern {
    /// The pattern of one of bpe-openai's two OpenAI tokenizers, by identity.
    pub(super) fn of(tokenizer: &bpe_openai::Tokenizer) -> Option<Pattern> {
        if std::ptr::eq(tokenizer, bpe_openai::cl100k_base()) {
            Some(Pattern::Cl100k)
        } else if std::ptr::eq(tokenizer, bpe_openai::o200k_base()) {
            Some(Pattern::O200k)
        } else {
            None
        }
    }
}

/// The pieces of `text` as `tokenizer` cuts it: by the scanner of its pattern when it is one of
/// the two OpenAI encodings, else by its own regex.
pub(super) fn split<'a>(tokenizer: &'a bpe_openai::Tokenizer, text: &'a str) -> Split<'a> {
    match Pattern::of(tokenizer) {
        Some(pattern) => Split::Scan(Pieces::new(pattern, text)),
        None => Split::Regex(Box::new(tokenizer.split(text))),
    }
}

/// The pieces of a text, by scanner or by regex.
pub(super) enum Split<'a> {
    Scan(Pieces<'a>),
    Regex(Box<dyn Iterator<Item = &'a str> + 'a>),
}

impl<'a> Iterator for Split<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        match self {
            Split::Scan(pieces) => pieces.next(),
            Split::Regex(pieces) => pieces.next(),
        }
    }
}

/// The pieces of a text, front to back.
pub(super) struct Pieces<'a> {
    text: &'a str,
    at: usize,
    scanner: Scanner<'a>,
}

impl<'a> Pieces<'a> {
    pub(super) fn new(pattern: Pattern, text: &'a str) -> Self {
        Pieces { text, at: 0, scanner: Scanner { bytes: text.as_bytes(), classes: CharClasses::get(), pattern } }
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
        let end = self.scanner.piece_end(start);
        // `end` is always a character boundary past `start` (every step moves by whole
        // characters); were it ever not, the rest would be one piece rather than lost or a panic.
        let piece = self.text.get(start..end).or_else(|| self.text.get(start..))?;
        self.at = start + piece.len();
        Some(piece)
    }
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

    /// Where the piece starting at `at` ends.
    #[inline]
    fn piece_end(&self, at: usize) -> usize {
        let (flags, len) = self.char_at(at);
        let words = match self.pattern {
            Pattern::Cl100k => self.cl100k_words(at, flags, len),
            Pattern::O200k => self.o200k_words(at, flags, len),
        };
        if let Some(end) = words {
            return end;
        }
        if flags & NUMBER != 0 {
            // \p{N}{1,3}
            let mut end = at + len;
            for _ in 0..2 {
                match self.peek(end) {
                    Some((f, l)) if f & NUMBER != 0 => end += l,
                    _ => break,
                }
            }
            return end;
        }
        if let Some(end) = self.punctuation(at, flags, len) {
            return end;
        }
        self.whitespace(at, len)
    }

    /// cl100k's contraction and word alternatives.
    fn cl100k_words(&self, at: usize, flags: u8, len: usize) -> Option<usize> {
        if let Some(end) = self.contraction(at) {
            return Some(end);
        }
        // [^\r\n\p{L}\p{N}]?\p{L}+ : a letter starts the run itself, or follows one prefix char.
        let is_letter = |f: u8| f & LETTER != 0;
        if is_letter(flags) {
            return Some(self.run(at + len, is_letter));
        }
        if self.prefix(at, flags)
            && let Some((next, next_len)) = self.peek(at + len)
            && is_letter(next)
        {
            return Some(self.run(at + len + next_len, is_letter));
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
            Some((f, l)) if f & LOWER != 0 => Some(self.run(end + l, |f| f & LOWER != 0)),
            // Otherwise U* gives back down to its last character in W, which W+ takes alone:
            // everything after it in the run is in U only, and the character after the run is
            // not in W.
            _ => last_lower.map(|(start, l)| start + l),
        }
    }

    /// `U+W*` at `at`: the end of its match, if any.
    fn upper_word(&self, at: usize) -> Option<usize> {
        let end = self.run(at, |f| f & UPPER != 0);
        (end > at).then(|| self.run(end, |f| f & LOWER != 0))
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
        let mut end = self.run(start, other);
        let slash = self.pattern == Pattern::O200k;
        while let Some(&b) = self.bytes.get(end) {
            if b == b'\r' || b == b'\n' || (slash && b == b'/') {
                end += 1;
            } else {
                break;
            }
        }
        Some(end)
    }

    /// `\s*[\r\n]+ | \s+$ | \s+(?!\S) | \s+` at `at`, a whitespace character `len` bytes long
    /// (every other character is taken by an earlier alternative).
    fn whitespace(&self, at: usize, len: usize) -> usize {
        let mut end = at;
        let mut last_start = at;
        let mut after_newline = None;
        while let Some((f, l)) = self.peek(end) {
            if f & SPACE == 0 {
                break;
            }
            if matches!(self.bytes[end], b'\r' | b'\n') {
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

#[cfg(test)]
mod tests;
