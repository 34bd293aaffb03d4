//! Choosing lines: BM25 relevance of each context line to the question, and the greedy choice
//! of the best lines whose rendering fits an exact token limit.

use std::collections::HashMap;

use super::terms::terms;
use crate::tokens::TokenCounter;
use crate::tokens::TokenError;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalisation.
const B: f32 = 0.75;

/// The BM25 score of each line (as a document among the lines, k1 = 1.2, b = 0.75, the average
/// length fitted to the lines) for `question`; 0 for a line sharing no term with it.
pub(crate) fn score_lines(lines: &[&str], question: &str) -> Vec<f32> {
    let docs: Vec<Vec<String>> = lines.iter().map(|line| terms(line)).collect();
    let mut scores = vec![0.0; lines.len()];
    let total: usize = docs.iter().map(Vec::len).sum();
    if total == 0 {
        return scores;
    }
    let n = docs.len() as f32;
    let average = total as f32 / n;
    let mut query = terms(question);
    query.sort_unstable();
    query.dedup();
    let frequencies: Vec<HashMap<&str, usize>> = docs
        .iter()
        .map(|doc| {
            let mut tf = HashMap::new();
            for term in doc {
                *tf.entry(term.as_str()).or_insert(0) += 1;
            }
            tf
        })
        .collect();
    for term in &query {
        let df = frequencies.iter().filter(|tf| tf.contains_key(term.as_str())).count();
        if df == 0 {
            continue;
        }
        let idf = (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln();
        for ((score, tf), doc) in scores.iter_mut().zip(&frequencies).zip(&docs) {
            if let Some(&f) = tf.get(term.as_str()) {
                let f = f as f32;
                *score += idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * doc.len() as f32 / average));
            }
        }
    }
    scores
}

/// Line indices with a positive score, best first; equal scores in document order.
pub(crate) fn ranked_positive(scores: &[f32]) -> Vec<usize> {
    let mut ranked: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] > 0.0).collect();
    ranked.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    ranked
}

/// A rendering that fits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fitted {
    /// The text, at most the limit's tokens.
    pub(crate) content: String,
    /// Whether the text ends where the model chose to end it: `false` only when even the
    /// rendering without any pick was over the limit and was cut at a token boundary. Leaving
    /// out lower-ranked lines is the model choosing what to say, not a reply cut short, so it
    /// does not make the reply incomplete (a pipeline warns about every incomplete reply).
    pub(crate) complete: bool,
}

/// Picks candidates in rank order while their estimated cost fits `max_tokens`, then checks the
/// real rendering and drops the lowest-ranked picks until it fits: BPE counts are not additive,
/// so the sum of pieces only guides the choice and the count of the rendered whole decides.
///
/// `render(picks)` renders the picks (given in rank order); `piece(candidate, picks)` is the
/// text that adding `candidate` to `picks` adds. If even `render(&[])` is over the limit, its
/// longest token-boundary prefix that fits is returned.
pub(crate) fn fit(
    counter: &TokenCounter,
    ranked: &[usize],
    max_tokens: usize,
    render: impl Fn(&[usize]) -> String,
    piece: impl Fn(usize, &[usize]) -> String,
) -> Result<Fitted, TokenError> {
    let mut picks = Vec::new();
    let mut estimate = counter.count(&render(&[]))?;
    for &candidate in ranked {
        if estimate >= max_tokens {
            break;
        }
        let cost = counter.count(&piece(candidate, &picks))?;
        if estimate + cost <= max_tokens {
            picks.push(candidate);
            estimate += cost;
        }
    }
    loop {
        let text = render(&picks);
        if counter.fits(&text, max_tokens)? {
            return Ok(Fitted { content: text, complete: true });
        }
        if picks.pop().is_none() {
            return Ok(Fitted { content: counter.truncate_to(&text, max_tokens)?, complete: false });
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::tokens::Encoding;

    #[test]
    fn lines_sharing_terms_with_the_question_score_and_rank() {
        let lines = ["SELECT SUM(total) FROM Orders", "public class Customer", "-- order totals per day"];
        let scores = score_lines(&lines, "how are order totals computed");
        assert!(scores[0] > 0.0 && scores[2] > 0.0 && scores[1] == 0.0, "{scores:?}");
        assert_eq!(ranked_positive(&scores), [0, 2], "{scores:?}");
        assert_eq!(ranked_positive(&[1.0, 2.0, 1.0, 0.0]), [1, 0, 2]);
        assert!(score_lines(&[], "order").is_empty());
        assert_eq!(score_lines(&["", "the"], "order"), [0.0, 0.0]);
    }

    #[test]
    fn rarer_terms_weigh_more_and_an_exact_identifier_ranks_first() {
        let lines = ["order total", "order", "order", "total"];
        let scores = score_lines(&lines, "order total");
        assert!(scores[0] > scores[3] && scores[3] > scores[1], "{scores:?}");
        let lines = ["compute the order total", "fn ComputeOrderTotal() {}"];
        assert_eq!(ranked_positive(&score_lines(&lines, "where is ComputeOrderTotal?")), [1, 0]);
    }

    fn lines_render(lines: &[String]) -> impl Fn(&[usize]) -> String + '_ {
        move |picks: &[usize]| {
            let mut out = String::from("Header:");
            for &i in picks {
                out.push('\n');
                out.push_str(&lines[i]);
            }
            out
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Whatever the lines and the limit, the result never exceeds the limit, and it is
        /// complete (not cut) exactly when the header fits: then it is whole lines under it.
        #[test]
        fn never_over_the_limit(
            lines in proptest::collection::vec("[a-zA-Z0-9 (){};=_.]{0,40}", 0..20),
            max_tokens in 0usize..80,
        ) {
            let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
            let ranked: Vec<usize> = (0..lines.len()).collect();
            let fitted = fit(&counter, &ranked, max_tokens, lines_render(&lines), |i, _| format!("\n{}", lines[i]))
                .expect("counts");
            prop_assert!(counter.count(&fitted.content).expect("counts") <= max_tokens);
            let header_fits = counter.fits(&lines_render(&lines)(&[]), max_tokens).expect("counts");
            prop_assert_eq!(fitted.complete, header_fits);
            if fitted.complete {
                prop_assert!(fitted.content.starts_with("Header:"));
            }

        }
    }

    #[test]
    fn a_header_over_the_limit_is_cut_on_a_token_boundary() {
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let lines = vec!["one".to_owned()];
        let fitted = fit(&counter, &[0], 1, lines_render(&lines), |i, _| lines[i].clone()).expect("counts");
        assert_eq!(fitted, Fitted { content: "Header".into(), complete: false });
        let none = fit(&counter, &[0], 0, lines_render(&lines), |i, _| lines[i].clone()).expect("counts");
        assert_eq!(none.content, "");
    }
}
