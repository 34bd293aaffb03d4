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

use super::TokenCounter;
use super::char_classes::{CharClasses, LETTER, LOWER, NUMBER, SPACE, UPPER};
use super::error::TokenError;
use super::openai_vocab::OpenAiVocab;
use super::pieces::{PieceCache, PieceCounter};

/// Where the count of a growing text stands: the whole count, and a prefix whose pieces no append
/// can change, with its count. Taken by [`TokenizerBackend::count_appended`](super::TokenizerBackend::count_appended)
/// and kept by [`CountedText`].
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

/// A text that knows its exact token count and keeps it up to date as it grows: appending costs
/// the appended bytes plus the last few pieces before them, never a recount from the start, and
/// reading the count costs nothing.
///
/// ```
/// use ctx_tokens::{CountedText, Encoding, TokenCounter};
///
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// let mut context = CountedText::new(&counter);
/// context.push_str("--- NODE ---\nid: a\ntext:\nfirst document\n")?;
/// context.push_str("--- NODE ---\nid: b\ntext:\nsecond document\n")?;
/// assert_eq!(context.tokens(), counter.count(context.as_str())?);
/// // Append only if the result still fits the limit; otherwise nothing changes.
/// let limit = context.tokens() + 3;
/// assert_eq!(context.try_push_str(" and a great deal more text than fits", limit)?, None);
/// assert_eq!(context.try_push_str(" end", limit)?, Some(context.tokens()));
/// assert_eq!(context.tokens(), counter.count(context.as_str())?);
/// # Ok::<(), ctx_tokens::TokenError>(())
/// ```
#[derive(Debug, Clone)]
pub struct CountedText {
    counter: TokenCounter,
    text: String,
    at: CountCheckpoint,
}

impl CountedText {
    /// An empty text counted with `counter`.
    pub fn new(counter: &TokenCounter) -> Self {
        CountedText { counter: counter.clone(), text: String::new(), at: CountCheckpoint::default() }
    }

    /// `text`, counted with `counter`.
    pub fn with_text(counter: &TokenCounter, text: impl Into<String>) -> Result<Self, TokenError> {
        let mut out = Self::new(counter);
        let text = text.into();
        out.at = counter.backend().count_appended(&text, CountCheckpoint::default())?;
        out.text = text;
        Ok(out)
    }

    /// Appends `more` and returns the new count. On error the text and its count are unchanged.
    pub fn push_str(&mut self, more: &str) -> Result<usize, TokenError> {
        self.text.push_str(more);
        match self.counter.backend().count_appended(&self.text, self.at) {
            Ok(at) => {
                self.at = at;
                Ok(at.tokens)
            }
            Err(e) => {
                self.text.truncate(self.at.bytes);
                Err(e)
            }
        }
    }

    /// Appends `more` only when the text then has at most `limit` tokens: `Some(new count)`, or
    /// `None` with the text unchanged.
    pub fn try_push_str(&mut self, more: &str, limit: usize) -> Result<Option<usize>, TokenError> {
        let before = self.at;
        let tokens = self.push_str(more)?;
        if tokens <= limit {
            return Ok(Some(tokens));
        }
        self.restore(before);
        Ok(None)
    }

    /// The count the text would have with `more` appended, leaving the text as it is. Costs what
    /// appending costs (the appended bytes and the last pieces before them), never a recount.
    ///
    /// ```
    /// use ctx_tokens::{CountedText, Encoding, TokenCounter};
    ///
    /// let counter = TokenCounter::for_encoding(Encoding::O200kBase);
    /// let mut context = CountedText::with_text(&counter, "retrieved passages\n\n")?;
    /// let with = context.tokens_with("  an indented candidate")?;
    /// assert_eq!(with, counter.count("retrieved passages\n\n  an indented candidate")?);
    /// assert_eq!(context.as_str(), "retrieved passages\n\n");
    /// # Ok::<(), ctx_tokens::TokenError>(())
    /// ```
    pub fn tokens_with(&mut self, more: &str) -> Result<usize, TokenError> {
        let before = self.at;
        let tokens = self.push_str(more)?;
        self.restore(before);
        Ok(tokens)
    }

    /// Back to the exact text `before` was taken of, so `before` is exact again.
    fn restore(&mut self, before: CountCheckpoint) {
        self.text.truncate(before.bytes);
        self.at = before;
    }

    /// Makes room for `additional` more bytes, so that appending them does not move the text.
    pub fn reserve(&mut self, additional: usize) {
        self.text.reserve(additional);
    }

    /// The exact token count of [`Self::as_str`].
    pub fn tokens(&self) -> usize {
        self.at.tokens
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Where the count stands.
    pub fn checkpoint(&self) -> CountCheckpoint {
        self.at
    }

    /// The counter it counts with.
    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// The text, giving up its count.
    pub fn into_string(self) -> String {
        self.text
    }
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

    #[test]
    fn a_whitespace_run_then_newline_is_recounted_from_its_start() {
        let counter = TokenCounter::for_encoding(super::super::Encoding::Cl100kBase);
        let mut text = CountedText::with_text(&counter, "a \n ").unwrap();
        for more in ["\n", " ", "b", "'", "s", "\r\n", "  ", "1234"] {
            text.push_str(more).unwrap();
            assert_eq!(text.tokens(), counter.count(text.as_str()).unwrap(), "{:?}", text.as_str());
        }
    }
}
