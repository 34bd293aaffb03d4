//! A text that keeps its exact count as it grows ([`CountedText`]): each append is counted by the
//! counter's backend from the last checkpoint an append can change (`incremental.rs` says which
//! pieces those are), never from the start.
//!
//! Above the counter, which it holds; the checkpoint it keeps is below the backends, which take
//! and return it.

use super::counter::TokenCounter;
use super::error::TokenError;
use super::incremental::CountCheckpoint;

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
                Ok(at.tokens())
            }
            Err(e) => {
                self.text.truncate(self.at.bytes());
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
        self.text.truncate(before.bytes());
        self.at = before;
    }

    /// Makes room for `additional` more bytes, so that appending them does not move the text.
    pub fn reserve(&mut self, additional: usize) {
        self.text.reserve(additional);
    }

    /// The exact token count of [`Self::as_str`].
    pub fn tokens(&self) -> usize {
        self.at.tokens()
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
    use crate::Encoding;

    #[test]
    fn a_whitespace_run_then_newline_is_recounted_from_its_start() {
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let mut text = CountedText::with_text(&counter, "a \n ").unwrap();
        for more in ["\n", " ", "b", "'", "s", "\r\n", "  ", "1234"] {
            text.push_str(more).unwrap();
            assert_eq!(text.tokens(), counter.count(text.as_str()).unwrap(), "{:?}", text.as_str());
        }
    }
}
