//! Code-aware tokenisation for lexical ranking.
//!
//! A question says "how is the order total computed", the code says `ComputeOrderTotal` or
//! `compute_order_total`: identifiers are split at `_` and at case changes (`HTTPServer` →
//! `HTTP`, `Server`), then the words go through an English tokenizer (folded to ASCII, lowercase,
//! stop words removed, Snowball stemming). A multi-word identifier also yields its whole lowercased
//! form without separators (`computeordertotal`), so that an exact identifier in the query ranks
//! the file that defines it above files that merely use the same words.
//!
//! The English words are ctx's own tokenizer over the crates `bm25`'s default tokenizer is made
//! of (deunicode, unicode-segmentation, NLTK's stop words, Snowball's stemmer): the same tokens
//! (a test compares the two), without that tokenizer's cache macro, which brought a second `syn`,
//! darling, ahash and zerocopy into every build with `bm25`.

#[cfg(feature = "bm25")]
use std::collections::HashSet;

#[cfg(feature = "bm25")]
use bm25::Tokenizer;
#[cfg(feature = "bm25")]
use rust_stemmers::{Algorithm, Stemmer};
#[cfg(feature = "bm25")]
use unicode_segmentation::UnicodeSegmentation;

/// Splits one identifier into its words: at `_` and other non-alphanumeric characters, at a
/// lowercase letter or digit followed by an uppercase one, and before the last uppercase letter
/// of an uppercase run followed by a lowercase one.
///
/// ```
/// use ctx::retrieve::split_identifier;
/// assert_eq!(split_identifier("HTTPServerError_v2"), ["HTTP", "Server", "Error", "v2"]);
/// assert_eq!(split_identifier("order_total"), ["order", "total"]);
/// ```
pub fn split_identifier(ident: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for segment in ident.split(|c: char| !c.is_alphanumeric()).filter(|s| !s.is_empty()) {
        let chars: Vec<(usize, char)> = segment.char_indices().collect();
        let mut start = 0;
        for (i, window) in chars.windows(2).enumerate() {
            let [(_, prev), (at, cur)] = window else { continue };
            let next_is_lower = chars.get(i + 2).is_some_and(|(_, c)| c.is_lowercase());
            let lower_to_upper = (prev.is_lowercase() || prev.is_numeric()) && cur.is_uppercase();
            let acronym_end = prev.is_uppercase() && cur.is_uppercase() && next_is_lower;
            if lower_to_upper || acronym_end {
                parts.push(&segment[start..*at]);
                start = *at;
            }
        }
        parts.push(&segment[start..]);
    }
    parts
}

/// What unmapped characters become when text is folded to ASCII (as `bm25`'s tokenizer folds).
#[cfg(feature = "bm25")]
const UNMAPPED: &str = "[?]";

/// English words as BM25 ranks them: the text folded to ASCII (`é` → `e`, by deunicode),
/// lowercased, cut at Unicode word boundaries (UAX #29), NLTK's English stop words dropped and
/// the rest stemmed with Snowball's English stemmer.
#[cfg(feature = "bm25")]
struct EnglishWords {
    /// NLTK's English stop words, folded as the text is.
    stop_words: HashSet<String>,
    stemmer: Stemmer,
}

#[cfg(feature = "bm25")]
impl EnglishWords {
    fn new() -> Self {
        let stop_words = stop_words::get(stop_words::LANGUAGE::English)
            .iter()
            .map(|w| deunicode::deunicode_with_tofu_cow(w, UNMAPPED).into_owned())
            .collect();
        EnglishWords { stop_words, stemmer: Stemmer::create(Algorithm::English) }
    }

    fn tokenize(&self, text: &str) -> Vec<String> {
        let folded = deunicode::deunicode_with_tofu_cow(text, UNMAPPED).to_lowercase();
        folded
            .unicode_words()
            .filter(|word| !self.stop_words.contains(*word))
            .map(|word| self.stemmer.stem(word).into_owned())
            .collect()
    }
}

#[cfg(feature = "bm25")]
impl std::fmt::Debug for EnglishWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnglishWords").field("stop_words", &self.stop_words.len()).finish_non_exhaustive()
    }
}

/// The tokenizer of [`super::Bm25Index`] (feature `bm25`).
#[cfg(feature = "bm25")]
#[cfg_attr(docsrs, doc(cfg(feature = "bm25")))]
#[derive(Debug)]
pub struct CodeTokenizer {
    words: EnglishWords,
}

#[cfg(feature = "bm25")]
impl Default for CodeTokenizer {
    fn default() -> Self {
        CodeTokenizer { words: EnglishWords::new() }
    }
}

#[cfg(feature = "bm25")]
impl CodeTokenizer {
    /// A tokenizer for English prose and code.
    pub fn new() -> Self {
        Self::default()
    }

    /// The tokens of `text`: stemmed words of split identifiers, plus whole multi-word
    /// identifiers.
    pub fn tokenize(&self, text: &str) -> Vec<String> {
        let mut words = String::with_capacity(text.len() + text.len() / 4);
        let mut compounds = Vec::new();
        for ident in text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|s| !s.is_empty()) {
            let parts = split_identifier(ident);
            for part in &parts {
                words.push_str(part);
                words.push(' ');
            }
            if parts.len() > 1 {
                compounds.push(parts.concat().to_lowercase());
            }
        }
        let mut tokens = self.words.tokenize(&words);
        tokens.extend(compounds);
        tokens
    }
}

#[cfg(feature = "bm25")]
impl Tokenizer for CodeTokenizer {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        CodeTokenizer::tokenize(self, input_text)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn identifiers_split_at_case_and_underscores() {
        assert_eq!(split_identifier("getOrderTotal"), ["get", "Order", "Total"]);
        assert_eq!(split_identifier("XMLHttpRequest"), ["XML", "Http", "Request"]);
        assert_eq!(split_identifier("usp_GetOrders"), ["usp", "Get", "Orders"]);
        assert_eq!(split_identifier("__init__"), ["init"]);
        assert_eq!(split_identifier("sha256Sum"), ["sha256", "Sum"]);
        assert_eq!(split_identifier("ÄrgerÜber"), ["Ärger", "Über"]);
        assert!(split_identifier("___").is_empty());
    }

    #[cfg(feature = "bm25")]
    #[test]
    fn snake_and_camel_case_meet_in_the_same_tokens() {
        let t = CodeTokenizer::new();
        let camel = t.tokenize("ComputeOrderTotals");
        let snake = t.tokenize("compute_order_totals");
        assert_eq!(camel, snake);
        assert!(camel.contains(&"order".to_owned()), "{camel:?}");
        assert!(camel.contains(&"total".to_owned()), "stemmed: {camel:?}");
        assert!(camel.contains(&"computeordertotals".to_owned()), "{camel:?}");
        let question = t.tokenize("How are the order totals computed?");
        assert!(question.contains(&"comput".to_owned()), "{question:?}");
        assert!(!question.contains(&"the".to_owned()), "stop words dropped: {question:?}");
    }

    /// The English words are the tokens of `bm25`'s own English tokenizer (normalisation, stop
    /// words and stemming on), which ranked `Bm25Index` before ctx had its own.
    #[cfg(feature = "bm25")]
    fn bm25_english() -> bm25::DefaultTokenizer {
        bm25::DefaultTokenizer::builder()
            .language_mode(bm25::Language::English)
            .normalization(true)
            .stopwords(true)
            .stemming(true)
            .build()
    }

    #[cfg(feature = "bm25")]
    #[test]
    fn english_words_are_bm25s_tokens() {
        let ours = EnglishWords::new();
        let theirs = bm25_english();
        for text in [
            "",
            "How is the invoice total computed? The totals are summed per line, then taxed.",
            "Don't stop: they're running, ran, runs; THE END.",
            "Crème brûlée, naïve café, Ærøskøbing, straße, İstanbul, ΑΘΗΝΑ, Москва, 東京, 🍕 pizza",
            "compute_order_totals ComputeOrderTotals HTTPServerError_v2 3.14 1,000 e-mail user@example.com",
            "  \t\n  ",
            "It's the user's choice; we've ours and yours, ourselves.",
        ] {
            assert_eq!(ours.tokenize(text), Tokenizer::tokenize(&theirs, text), "{text:?}");
        }
    }

    #[cfg(feature = "bm25")]
    proptest! {
        /// On any text, letters of every script, digits, punctuation and emoji alike.
        #[test]
        fn english_words_match_bm25_on_any_text(text in "\\PC{0,64}") {
            let theirs = bm25_english();
            prop_assert_eq!(EnglishWords::new().tokenize(&text), Tokenizer::tokenize(&theirs, &text));
        }

        /// On English-looking text: words, some of them stop words, with punctuation between.
        #[test]
        fn english_words_match_bm25_on_sentences(text in "((the|The|and|running|isn't|computed|Totals|[a-zA-Z]{1,9})[ ,.;'!?-]{1,2}){0,16}") {
            let theirs = bm25_english();
            prop_assert_eq!(EnglishWords::new().tokenize(&text), Tokenizer::tokenize(&theirs, &text));
        }
    }

    proptest! {
        /// Splitting only cuts: the parts, in order, are the identifier without its separators.
        #[test]
        fn parts_reassemble_the_identifier(ident in "[A-Za-z0-9_]{0,24}") {
            let parts = split_identifier(&ident);
            prop_assert_eq!(parts.concat(), ident.replace('_', ""));
            prop_assert!(parts.iter().all(|p| !p.is_empty()));
        }
    }
}
