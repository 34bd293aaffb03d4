//! [`ApiKey`]: an API key that never shows up in logs, traces, errors or `Debug` output.
//!
//! The key lives in a [`secrecy::SecretString`] (wiped from memory on drop). The only way to the
//! text is [`ApiKey::expose`], which the HTTP client calls once per request to set the
//! `Authorization` header (marked sensitive). `ApiKey` has no `Display` and no `Serialize`, so a
//! key cannot be formatted or serialized by accident; its `Debug` prints a placeholder.

use std::borrow::Cow;
use std::fmt;

use secrecy::{ExposeSecret, SecretString};

/// What a redacted key is shown as.
pub const REDACTED: &str = "[REDACTED]";

/// An API key. `Debug` prints `ApiKey([REDACTED])`.
///
/// ```
/// use ctx::llm::ApiKey;
///
/// let key = ApiKey::new("sk-test-123\n").expect("not empty"); // as read from a key file
/// assert_eq!(format!("{key:?}"), "ApiKey([REDACTED])");
/// assert_eq!(key.redact("401: invalid key sk-test-123"), "401: invalid key [REDACTED]");
/// assert!(ApiKey::new("  ").is_none());
/// ```
#[derive(Clone)]
pub struct ApiKey(SecretString);

impl ApiKey {
    /// Wraps a key. Leading and trailing whitespace (a newline from a key file) is dropped;
    /// `None` for an empty key, so "no key" has one representation.
    pub fn new(key: impl Into<String>) -> Option<Self> {
        let key: String = key.into();
        let trimmed = key.trim();
        if trimmed.is_empty() { None } else { Some(ApiKey(SecretString::from(trimmed.to_owned()))) }
    }

    /// The key's text. Call it only to put the key on the wire.
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }

    /// `text` with every occurrence of the key replaced by [`REDACTED`]: applied to anything a
    /// server sends back before it becomes part of an error, since some servers echo the key.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let key = self.expose();
        if text.contains(key) { Cow::Owned(text.replace(key, REDACTED)) } else { Cow::Borrowed(text) }
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({REDACTED})")
    }
}

/// [`ApiKey::redact`] when there is a key, the text unchanged otherwise.
pub fn redact_with<'a>(key: Option<&ApiKey>, text: &'a str) -> Cow<'a, str> {
    match key {
        Some(key) => key.redact(text),
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_key() {
        let key = ApiKey::new("sk-test-1234567890").expect("non-empty");
        let shown = format!("{key:?} {:?} {:#?}", Some(&key), vec![key.clone()]);
        assert!(!shown.contains("sk-test"), "{shown}");
        assert!(shown.contains(REDACTED), "{shown}");
        assert_eq!(key.expose(), "sk-test-1234567890");
    }

    #[test]
    fn empty_and_padded_keys() {
        assert!(ApiKey::new("").is_none());
        assert!(ApiKey::new("  \n").is_none());
        assert_eq!(ApiKey::new(" k1 \n").map(|k| k.expose().to_owned()), Some("k1".to_owned()));
    }

    #[test]
    fn redact_removes_every_echo() {
        let key = ApiKey::new("sk-abc").expect("non-empty");
        assert_eq!(key.redact("bad key sk-abc, again sk-abc"), "bad key [REDACTED], again [REDACTED]");
        assert!(matches!(key.redact("nothing here"), Cow::Borrowed(_)));
        assert_eq!(redact_with(None, "sk-abc"), "sk-abc");
    }
}
