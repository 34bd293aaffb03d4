//! Help lines for names that match nothing: a "did you mean …?" ([`did_you_mean`], the one rule)
//! and the list of what is known.

pub use crate::validation::did_you_mean;

/// The help line for an unknown name: a suggestion when one is close, and the list of what is
/// known (up to a dozen names, so the line stays readable).
pub fn help_for_unknown(unknown: &str, what: &str, candidates: &[&str]) -> String {
    let known = if candidates.is_empty() {
        format!("no {what} is declared")
    } else {
        let shown: Vec<String> = candidates.iter().take(12).map(|c| format!("`{c}`")).collect();
        let more = if candidates.len() > 12 { format!(" and {} more", candidates.len() - 12) } else { String::new() };
        format!("known {what}s: {}{more}", shown.join(", "))
    };
    match did_you_mean(unknown, candidates.iter().copied()) {
        Some(s) => format!("did you mean `{s}`? ({known})"),
        None => known,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let c = ["search", "fetch", "manage_budget", "answer"];
        assert_eq!(did_you_mean("fetc", c), Some("fetch"));
        assert_eq!(did_you_mean("manage_budgte", c), Some("manage_budget"));
        assert_eq!(did_you_mean("Answer", c), Some("answer"));
        assert_eq!(did_you_mean("summarize", c), None);
        assert_eq!(did_you_mean("x", c), None);
    }

    #[test]
    fn help_lists_known_names() {
        let h = help_for_unknown("fetc", "step", &["search", "fetch"]);
        assert_eq!(h, "did you mean `fetch`? (known steps: `search`, `fetch`)");
        assert_eq!(help_for_unknown("a", "prompt", &[]), "no prompt is declared");
    }
}
