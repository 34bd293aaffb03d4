//! Counting a text that grows by appending, for what it adds.
//!
//! Appending can change the last pieces of a text, never the earlier ones, as long as the
//! pre-tokenizer could not have looked at the end from there. The pre-tokenizer matches each piece
//! anchored at its start, against the text after it (never before), with leftmost-first priority
//! among its alternatives; a match that never reached the end of the text is decided by what it
//! saw, so appending cannot change it. A piece can only change when some alternative, starting at
//! that piece, could have consumed everything up to the end: then more text might let it match
//! longer (` \n ` + `\n` is one piece, `\n` followed by spaces is two).
//!
//! [`open_tail_start`] finds the first position from which the rest of the text could still be
//! consumed whole by one of the pre-tokenizer's alternatives, over-approximating each of them
//! (cl100k and o200k): at most 3 characters (contractions, `\p{N}{1,3}`); one optional character
//! then letters, then part of a contraction (`[^\r\n\p{L}\p{N}]?\p{L}+`, o200k's cased words);
//! an optional space then punctuation and `[\r\n/]` (` ?[^\s\p{L}\p{N}]+[\r\n/]*`); whitespace only
//! (`\s*[\r\n]+`, `\s+$`, `\s+(?!\S)`, `\s+`). Every such language is closed under taking
//! prefixes and suffixes, so the positions it accepts form one interval reaching the end, and they
//! only move forward as the text grows. Characters are classified by the pre-tokenizer's own
//! classes ([`CharClasses`], the regex's Unicode tables), so a paragraph of Chinese keeps its
//! open tail after its last `，` or `。`, not back at its last line break. Pieces starting before
//! that position are final; a [`CountCheckpoint`] remembers the
//! last piece start at or before it and the tokens before it, and the next count re-splits from
//! there. The proptest in `tests/incremental.rs` checks incremental == whole count on
//! random texts and random appends, under both encodings.

use super::char_classes::{CharClasses, LETTER, LOWER, NUMBER, SPACE, UPPER};
use super::openai_vocab::OpenAiVocab;
use super::pieces::{PieceCache, PieceCounter};

/// Where the count of a growing text stands: the whole count, and a prefix whose pieces no append
/// can change, with its count. Taken by [`TokenizerBackend::count_appended`](super::TokenizerBackend::count_appended)
/// and kept by [`CountedText`](super::CountedText).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CountCheckpoint {
    bytes: usize,
    tokens: usize,
    stable_bytes: usize,
    stable_tokens: usize,
}

impl CountCheckpoint {
    /// A checkpoint that only knows the text's total: the next count re-splits from the start.
    pub fn whole(bytes: usize, tokens: usize) -> Self {
        CountCheckpoint { bytes, tokens, stable_bytes: 0, stable_tokens: 0 }
    }

    /// The length of the text counted, in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The exact token count of the text counted.
    pub fn tokens(&self) -> usize {
        self.tokens
    }

    /// The length of the prefix no append can change (the next count re-splits from there).
    pub fn stable_bytes(&self) -> usize {
        self.stable_bytes
    }

    /// Whether this checkpoint can describe a prefix of `text` (lengths and character
    /// boundaries; the content is the caller's promise).
    pub(super) fn fits_within(&self, text: &str) -> bool {
        self.stable_bytes <= self.bytes
            && self.stable_tokens <= self.tokens
            && text.is_char_boundary(self.bytes)
            && text.is_char_boundary(self.stable_bytes)
    }
}

fn flags(c: char) -> u8 {
    CharClasses::get().of(u32::from(c))
}

/// A character of a word run of either encoding: cl100k's `\p{L}`, o200k's cased classes (which
/// also take combining marks).
fn maybe_letter(c: char) -> bool {
    flags(c) & (LETTER | UPPER | LOWER) != 0
}

/// `[^\s\p{L}\p{N}]`.
fn maybe_punct(c: char) -> bool {
    flags(c) & (SPACE | LETTER | NUMBER) == 0
}

/// `[^\r\n\p{L}\p{N}]`.
fn maybe_letter_prefix(c: char) -> bool {
    c != '\r' && c != '\n' && flags(c) & (LETTER | NUMBER) == 0
}

fn is_space(c: char) -> bool {
    flags(c) & SPACE != 0
}

/// The smallest position at or after `floor` from which the rest of `text` could be a prefix of
/// one pre-tokenizer match (see the module's documentation).
pub(super) fn open_tail_start(text: &str, floor: usize) -> usize {
    let tail = text.get(floor..).unwrap_or("");
    let len = tail.len();
    let mut best = len;
    let mut rev = tail.char_indices().rev().peekable();

    // At most 3 characters.
    if let Some((i, _)) = tail.char_indices().rev().nth(2).or_else(|| tail.char_indices().next()) {
        best = best.min(i);
    }
    // Whitespace only.
    let mut at = len;
    while let Some(&(i, c)) = rev.peek() {
        if !is_space(c) {
            break;
        }
        at = i;
        rev.next();
    }
    best = best.min(at);
    // An optional space, punctuation, then `[\r\n/]`: line breaks only at the end (`/` is
    // punctuation too), so a match of this kind never reaches back past an earlier line break.
    let mut at = len;
    let mut it = tail.char_indices().rev().peekable();
    while let Some(&(i, c)) = it.peek() {
        if !matches!(c, '\r' | '\n' | '/') {
            break;
        }
        at = i;
        it.next();
    }
    while let Some(&(i, c)) = it.peek() {
        if !maybe_punct(c) {
            break;
        }
        at = i;
        it.next();
    }
    if let Some(&(i, ' ')) = it.peek() {
        at = i;
    }
    best = best.min(at);
    // An optional character, letters, then part of a contraction: the quote, when there is one,
    // is one of the last three characters.
    let letters_before = |end: usize| {
        let mut at = end;
        let mut it = tail[..end].char_indices().rev().peekable();
        while let Some(&(i, c)) = it.peek() {
            if !maybe_letter(c) {
                break;
            }
            at = i;
            it.next();
        }
        if let Some(&(i, c)) = it.peek()
            && maybe_letter_prefix(c)
        {
            at = i;
        }
        at
    };
    best = best.min(letters_before(len));
    for (i, c) in tail.char_indices().rev().take(3) {
        if c == '\'' {
            best = best.min(letters_before(i));
        }
    }
    floor + best
}

/// Counts `text`, which extends the text `from` was taken of, re-splitting from `from`'s stable
/// prefix.
pub(super) fn advance(vocab: &OpenAiVocab, cache: &PieceCache, text: &str, from: CountCheckpoint) -> CountCheckpoint {
    let floor = from.stable_bytes;
    let open = open_tail_start(text, floor);
    let mut counter = PieceCounter::new(vocab, cache, text.len() - floor);
    let (mut at, mut tokens) = (floor, from.stable_tokens);
    let (mut stable_bytes, mut stable_tokens) = (floor, from.stable_tokens);
    for piece in vocab.split(&text[floor..]) {
        if at <= open {
            (stable_bytes, stable_tokens) = (at, tokens);
        }
        tokens += counter.piece(piece);
        at += piece.len();
    }
    CountCheckpoint { bytes: text.len(), tokens, stable_bytes, stable_tokens }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_tail_covers_what_an_append_can_change() {
        // `\n` then spaces: appending `\n` merges the whole run into one piece.
        let text = "word\n     ";
        assert_eq!(open_tail_start(text, 0), 4);
        // A word at the end may grow; the words before it cannot.
        assert_eq!(open_tail_start("one two three", 0), 7);
        // A contraction in progress.
        assert_eq!(open_tail_start("it was John'", 0), 6);
        assert_eq!(open_tail_start("x = 1;\n", 0), 4);
        assert_eq!(open_tail_start("", 0), 0);
        assert_eq!(open_tail_start("abc def", 4), 4);
        // Text outside ASCII is open up to the last line break, not further.
        assert_eq!(open_tail_start("中文。\n中文字", 0), "中文。\n".len());
        // Chinese punctuation ends a word run: the tail opens at the last `。`, not the text's start.
        assert_eq!(open_tail_start("中文中文，中文中文。中文", 0), "中文中文，中文中文".len());
        assert_eq!(open_tail_start("a.\n\n", 0), 1);
    }
}
