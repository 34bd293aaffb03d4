//! What a compaction hands back ([`Compacted`]) and the one guard every compaction goes through:
//! the compacted text is kept only when the real tokenizer counts no more tokens than the input.
//!
//! A leaf, so that each language's rules (`sql`, `dotnet`), the trait's compactors and the
//! registry all return the same result through the same guard without depending on each other.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::tokens::{TokenCounter, TokenError};

/// The result of compacting one text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Compacted {
    /// The compacted text, or the input when compaction did not reduce the token count.
    pub text: String,
    /// Tokens of the input.
    pub tokens_before: usize,
    /// Tokens of [`Compacted::text`]; never more than `tokens_before`.
    pub tokens_after: usize,
    /// Whether [`Compacted::text`] differs from the input.
    pub changed: bool,
}

/// Keeps `stripped` only when it has no more tokens than `original`.
pub(crate) fn guard_tokens(
    original: &str,
    stripped: Cow<'_, str>,
    counter: &TokenCounter,
) -> Result<Compacted, TokenError> {
    let before = counter.count(original)?;
    let unchanged =
        || Compacted { text: original.to_owned(), tokens_before: before, tokens_after: before, changed: false };
    match stripped {
        Cow::Borrowed(_) => Ok(unchanged()),
        Cow::Owned(text) => match counter.count_up_to(&text, before)? {
            Some(after) => Ok(Compacted { text, tokens_before: before, tokens_after: after, changed: true }),
            None => Ok(unchanged()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    #[test]
    fn a_compaction_that_would_count_more_returns_the_input() {
        let counter = TokenCounter::for_encoding(Encoding::O200kBase);
        let spaced = Cow::Owned("h e l l o   w o r l d".to_owned());
        let kept = guard_tokens("hello world", spaced, &counter).expect("counted");
        assert_eq!((kept.text.as_str(), kept.changed), ("hello world", false));
        assert_eq!(kept.tokens_after, kept.tokens_before);
        let fewer = guard_tokens("hello    world  ", Cow::Owned("hello world".to_owned()), &counter).expect("counted");
        assert!(fewer.changed && fewer.tokens_after < fewer.tokens_before, "{fewer:?}");
    }
}
