//! The built-in compactors for documents rather than code: `markdown`, `text` and `json`.
//!
//! `markdown` and `text` fold whitespace that carries no meaning: trailing spaces and tabs are
//! removed and a run of blank lines becomes one blank line; `text` also folds runs of spaces and
//! tabs inside a line (after its indentation) into one space. Neither touches a line inside a
//! fenced code block (backticks or tildes), fences included, since whitespace in code can
//! matter. Markdown keeps inner spacing because two trailing spaces are a line break there —
//! those are the one exception to the trailing-space rule: a markdown line (not a heading)
//! ending in two or more spaces keeps two.
//!
//! `json` removes the whitespace between tokens, keeping key order and every string byte for
//! byte; a text that is not valid JSON is returned unchanged.
//!
//! Each is idempotent: compacting its own output changes nothing.

use std::borrow::Cow;

use crate::retrieve::chunk::markdown::{closes, fence, heading};

/// Markdown with meaningless whitespace folded (see the module documentation).
pub fn compact_markdown(text: &str) -> Cow<'_, str> {
    fold(text, false)
}

/// Plain text with meaningless whitespace folded (see the module documentation).
pub fn compact_text(text: &str) -> Cow<'_, str> {
    fold(text, true)
}

fn fold(text: &str, inner: bool) -> Cow<'_, str> {
    let mut out = String::with_capacity(text.len());
    let mut open_fence = None;
    let mut blank_run = 0usize;
    for raw in text.split_inclusive('\n') {
        let (line, eol) = match raw.strip_suffix('\n') {
            Some(l) => (l.strip_suffix('\r').unwrap_or(l), &raw[l.strip_suffix('\r').unwrap_or(l).len()..]),
            None => (raw, ""),
        };
        if let Some(open) = open_fence {
            if closes(line, open) {
                open_fence = None;
            }
            out.push_str(raw);
            blank_run = 0;
            continue;
        }
        if let Some(f) = fence(line) {
            open_fence = Some(f);
            out.push_str(raw);
            blank_run = 0;
            continue;
        }
        let trimmed = line.trim_end_matches([' ', '\t']);
        if trimmed.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
            out.push_str(eol);
            continue;
        }
        blank_run = 0;
        if inner {
            let body = trimmed.trim_start_matches([' ', '\t']);
            out.push_str(&trimmed[..trimmed.len() - body.len()]);
            let mut previous_space = false;
            for c in body.chars() {
                let space = c == ' ' || c == '\t';
                if !(space && previous_space) {
                    out.push(if space { ' ' } else { c });
                }
                previous_space = space;
            }
        } else {
            out.push_str(trimmed);
            // A markdown hard line break: two trailing spaces before a line end.
            if !eol.is_empty()
                && line.len() - trimmed.len() >= 2
                && line[trimmed.len()..].bytes().all(|b| b == b' ')
                && heading(trimmed).is_none()
            {
                out.push_str("  ");
            }
        }
        out.push_str(eol);
    }
    if out == text { Cow::Borrowed(text) } else { Cow::Owned(out) }
}

/// JSON without insignificant whitespace, or the text unchanged when it is not valid JSON.
pub fn compact_json(text: &str) -> Cow<'_, str> {
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    if out == text { Cow::Borrowed(text) } else { Cow::Owned(out) }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn folds_blank_lines_and_trailing_spaces_outside_fences() {
        let md = "# T \n\n\n\nText\t\nhard break     \n```\ncode   \n\n\n  x\n```\n\n\nend\t\n";
        assert_eq!(compact_markdown(md), "# T\n\nText\nhard break  \n```\ncode   \n\n\n  x\n```\n\nend\n");
        assert_eq!(compact_text("a    b\t\tc  \n\n\n  indented   word\n"), "a b c\n\n  indented word\n");
        assert!(matches!(compact_text("already tight\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_is_minified_in_order_and_invalid_json_is_kept() {
        assert_eq!(compact_json("{\n  \"b\": 1,\n  \"a\": \"x  y\\\" z\"\n}\n"), "{\"b\":1,\"a\":\"x  y\\\" z\"}");
        assert_eq!(compact_json("{ not json }"), "{ not json }");
        assert_eq!(compact_json("[1, 2]"), "[1,2]");
    }

    fn doc() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            Just("```\n".to_owned()),
            Just("~~~~\n".to_owned()),
            Just("\n".to_owned()),
            Just("   \n".to_owned()),
            "[a-z \t]{0,20}\n",
            "[a-z \t]{0,10}",
        ];
        prop::collection::vec(line, 0..30).prop_map(|l| l.concat())
    }

    /// The fenced lines of `text`, in order, fences included.
    fn fenced(text: &str) -> Vec<String> {
        let mut open = None;
        let mut lines = Vec::new();
        for raw in text.split_inclusive('\n') {
            let line = raw.trim_end_matches('\n');
            if let Some(o) = open {
                lines.push(raw.to_owned());
                if closes(line, o) {
                    open = None;
                }
            } else if let Some(f) = fence(line) {
                open = Some(f);
                lines.push(raw.to_owned());
            }
        }
        lines
    }

    proptest! {
        /// Compaction is idempotent and never changes a line inside a code fence.
        #[test]
        fn idempotent_and_fences_untouched(text in doc()) {
            for compact in [compact_markdown as fn(&str) -> Cow<'_, str>, compact_text] {
                let once = compact(&text).into_owned();
                prop_assert_eq!(compact(&once).into_owned(), once.clone());
                prop_assert_eq!(fenced(&once), fenced(&text));
            }
        }
    }
}
