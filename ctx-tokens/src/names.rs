//! The closest known name to an unknown one, for "did you mean …?" help: the one rule ctx
//! suggests names by, from the model table here to every step, setting and key of a pipeline.
//!
//! ```
//! use ctx_tokens::names::did_you_mean;
//!
//! assert_eq!(did_you_mean("gpt4o", ["gpt-4o", "gpt-4"]), Some("gpt-4o"));
//! assert_eq!(did_you_mean("llama", ["gpt-4o", "gpt-4"]), None);
//! ```

/// The candidate closest to `unknown` when it is close enough to be a likely typo, for "did you
/// mean …?" help lines: the one rule every validation uses. Names are compared case-insensitively
/// by Jaro–Winkler similarity, which favours a shared prefix (`cl100k` finds `cl100k_base`), and
/// must reach 0.8. A candidate equal to `unknown` is no suggestion; ties go to the earliest
/// candidate, so the answer is deterministic. (ctx's own rule for its crates, which
/// re-export it as `ctx_spec::validation::did_you_mean`; its examples are the unit tests below.)
pub fn did_you_mean<'a>(unknown: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    did_you_mean_by(unknown, candidates, Likeness::Similar)
}

/// How alike a name and a candidate must be for [`did_you_mean_by`] to suggest it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Likeness {
    /// Jaro–Winkler similarity of at least 0.8, ignoring case (the rule of [`did_you_mean`]).
    Similar,
    /// At most two edits apart, ignoring case: for names that sit among legitimate look-alikes
    /// (`max_turn_loops` is a named setting, not a typo of `max_history_tokens`).
    Typo,
}

/// The one "did you mean" of ctx: the candidate most like `unknown` under `likeness` — the
/// fewest edits, then the higher Jaro–Winkler score, then the earliest — or `None`.
pub fn did_you_mean_by<'a>(
    unknown: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    likeness: Likeness,
) -> Option<&'a str> {
    let folded = unknown.to_lowercase();
    // Candidates must look alike; among those, the fewest edits wins and the closer prefix breaks
    // ties: `user_question_fr` suggests `user_question_en`, not the shorter `user_question` that
    // merely shares the longer prefix.
    let mut best: Option<(usize, f64, &'a str)> = None;
    for candidate in candidates {
        let lower = candidate.to_lowercase();
        if candidate == unknown || lower == folded && likeness == Likeness::Typo {
            continue;
        }
        let score = strsim::jaro_winkler(&folded, &lower);
        let edits = strsim::levenshtein(&folded, &lower);
        let alike = match likeness {
            Likeness::Similar => score >= 0.8,
            Likeness::Typo => edits <= 2,
        };
        if alike && best.is_none_or(|(e, s, _)| edits < e || (edits == e && score > s)) {
            best = Some((edits, score, candidate));
        }
    }
    best.map(|(_, _, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_examples() {
        assert_eq!(did_you_mean("fetc", ["search", "fetch"]), Some("fetch"));
        assert_eq!(did_you_mean("AUTO_CLAMP", ["fail_fast", "auto_clamp"]), Some("auto_clamp"));
        assert_eq!(did_you_mean("summarize", ["search", "fetch"]), None);
        let typo = |name| did_you_mean_by(name, ["max_history_tokens"], Likeness::Typo);
        assert_eq!(typo("max_histroy_tokens"), Some("max_history_tokens"));
        assert_eq!(typo("max_turn_loops"), None);
    }

    #[test]
    fn suggestions_are_near_misses_and_deterministic() {
        assert_eq!(did_you_mean("cl100k", ["o200k_base", "cl100k_base"]), Some("cl100k_base"));
        assert_eq!(did_you_mean("auto_clmap", ["fail_fast", "auto_clamp"]), Some("auto_clamp"));
        assert_eq!(did_you_mean("zzz", ["fail_fast", "auto_clamp"]), None);
        // The name itself is no suggestion; equally close candidates: the first one.
        assert_eq!(did_you_mean("fetch", ["fetch"]), None);
        assert_eq!(did_you_mean("ab", ["abx", "aby"]), Some("abx"));
    }
}
