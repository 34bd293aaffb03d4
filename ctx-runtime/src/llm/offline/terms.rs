//! The terms the offline model ranks lines by, computed without any crate (the offline model is
//! part of ctx's lean default): identifiers are split at `snake_case` and `CamelCase` boundaries
//! ([`split_identifier`]), words are lowercased, English stop words are dropped, and common
//! inflections are folded by a light suffix stemmer (`totals` → `total`, `computed`, `computes`,
//! `computing` → `comput`). A multi-word identifier also yields its whole lowercased form
//! (`computeordertotal`), so that an exact identifier in the question ranks the line that holds it
//! first.
//!
//! `crate::retrieve::Bm25Index` (feature `bm25`) stems with the full Snowball algorithm
//! instead; the offline model only needs a question's words to meet the context's.

use crate::retrieve::split_identifier;

/// English function words, sorted (searched by bisection).
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

fn has_vowel(word: &str) -> bool {
    word.bytes().any(|b| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y'))
}

/// Folds plural, past and progressive forms of a lowercase ASCII word onto one stem; other words
/// are returned as they are. Not a linguistic stemmer: it only has to map the forms of one word
/// to the same string, and short words are left alone.
pub(crate) fn stem(word: &str) -> String {
    if word.len() <= 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word.to_owned();
    }
    let mut w = word.to_owned();
    if let Some(base) = w.strip_suffix("sses") {
        w = format!("{base}ss");
    } else if let Some(base) = w.strip_suffix("ies").filter(|b| b.len() >= 2) {
        w = format!("{base}y");
    } else if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w.pop();
    }
    let inflected =
        ["ing", "ed"].iter().find_map(|suffix| w.strip_suffix(suffix).filter(|b| b.len() >= 3 && has_vowel(b)));
    if let Some(base) = inflected {
        w = base.to_owned();
        let bytes = w.as_bytes();
        let n = bytes.len();
        if n >= 2
            && bytes[n - 1] == bytes[n - 2]
            && !matches!(bytes[n - 1], b'l' | b's' | b'z')
            && !has_vowel(&w[n - 1..])
        {
            w.pop();
        }
    }
    if w.len() > 3 && w.ends_with('e') {
        w.pop();
    }
    w
}

/// The terms of `text`: stemmed words of split identifiers without stop words, then the whole
/// multi-word identifiers.
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut compounds = Vec::new();
    for ident in text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|s| !s.is_empty()) {
        let parts = split_identifier(ident);
        for part in &parts {
            let word = part.to_lowercase();
            if !is_stop_word(&word) {
                terms.push(stem(&word));
            }
        }
        if parts.len() > 1 {
            compounds.push(parts.concat().to_lowercase());
        }
    }
    terms.extend(compounds);
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_and_lowercase() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOP_WORDS.iter().all(|w| w.bytes().all(|b| b.is_ascii_lowercase())));
    }

    #[test]
    fn the_forms_of_a_word_share_a_stem() {
        for forms in [
            &["total", "totals", "totaled"][..],
            &["compute", "computes", "computed", "computing"],
            &["order", "orders", "ordered", "ordering"],
            &["round", "rounds", "rounded", "rounding"],
            &["tax", "taxes"],
            &["city", "cities"],
            &["stop", "stops", "stopped", "stopping"],
            &["class", "classes"],
            &["customer", "customers"],
        ] {
            let stems: Vec<String> = forms.iter().map(|w| stem(w)).collect();
            assert!(stems.iter().all(|s| *s == stems[0]), "{forms:?}: {stems:?}");
        }
        for kept in ["is", "bus", "status", "sql", "sha256", "über", "need", "red", "analysis"] {
            assert!(stem(kept).len() >= kept.len().min(3), "{kept} -> {}", stem(kept));
        }
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("need"), "need");
    }

    #[test]
    fn identifiers_and_questions_meet_in_the_same_terms() {
        let camel = terms("ComputeOrderTotals");
        assert_eq!(camel, terms("compute_order_totals"));
        assert_eq!(camel, ["comput", "order", "total", "computeordertotals"]);
        let question = terms("How are the order totals computed?");
        assert_eq!(question, ["order", "total", "comput"]);
    }
}
