//! Markdown by heading sections. Hand-written line scanning rather than a markdown parser: only
//! ATX headings and code fences matter here, and byte offsets must map back to the document.

use super::chunker::{ChunkError, Chunker, Piece, line_starts, pack};

/// A fence opener: its character and length (three or more backticks or tildes, indented at most 3 spaces).
pub(crate) fn fence(line: &str) -> Option<(u8, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let c = *trimmed.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = trimmed.bytes().take_while(|&b| b == c).count();
    // A backtick fence's info string cannot hold a backtick (CommonMark), so "```x```" is inline.
    (n >= 3 && !(c == b'`' && trimmed[n..].contains('`'))).then_some((c, n))
}

/// Whether `line` closes a fence opened with `open`.
pub(crate) fn closes(line: &str, open: (u8, usize)) -> bool {
    fence(line).is_some_and(|(c, n)| c == open.0 && n >= open.1 && line.trim().bytes().all(|b| b == c))
}

/// An ATX heading's level and text (`## Install ##` → (2, "Install")).
pub(crate) fn heading(line: &str) -> Option<(usize, String)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    let rest = rest.trim_end_matches(['\n', '\r']);
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let text = rest.trim().trim_end_matches('#').trim_end().to_owned();
    Some((level, text))
}

/// `Install from source!` → `install-from-source`; empty → `section`.
pub(crate) fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_owned();
    if out.is_empty() { "section".to_owned() } else { out }
}

/// The line at `start` (up to and including its `\n`).
fn line_at(text: &str, start: usize, end: usize) -> &str {
    let rest = &text[start..end];
    match rest.find('\n') {
        Some(i) => &rest[..=i],
        None => rest,
    }
}

pub(super) fn pieces(chunker: &Chunker, text: &str) -> Result<Vec<Piece>, ChunkError> {
    // (start offset, title, slug) of each section; the text before the first heading is a
    // section without title.
    let mut sections: Vec<(usize, Option<String>, String)> = Vec::new();
    let mut path: Vec<(usize, String)> = Vec::new();
    let mut open_fence = None;
    for start in line_starts(text, 0, text.len()) {
        let line = line_at(text, start, text.len());
        if let Some(open) = open_fence {
            if closes(line, open) {
                open_fence = None;
            }
            continue;
        }
        if let Some(f) = fence(line) {
            open_fence = Some(f);
            continue;
        }
        if let Some((level, title)) = heading(line) {
            while path.last().is_some_and(|(l, _)| *l >= level) {
                path.pop();
            }
            path.push((level, title.clone()));
            let full = path.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" > ");
            sections.push((start, Some(full), slug(&title)));
        }
    }
    if sections.first().is_none_or(|s| s.0 != 0) {
        sections.insert(0, (0, None, "preamble".to_owned()));
    }
    let mut pieces = Vec::new();
    for (i, (start, title, slug)) in sections.iter().enumerate() {
        let end = sections.get(i + 1).map_or(text.len(), |s| s.0);
        let parts = if chunker.fits(text, *start, end)? {
            vec![Piece { start: *start, end, title: None, slug: None }]
        } else {
            let bounds = paragraph_bounds(text, *start, end);
            pack(chunker, text, &bounds, &mut |s, e| chunker.windows(text, s, e, 0))?
        };
        for (j, mut part) in parts.into_iter().enumerate() {
            part.title = title.clone();
            part.slug = Some(if j == 0 { slug.clone() } else { format!("{slug}/part-{}", j + 1) });
            pieces.push(part);
        }
    }
    Ok(pieces)
}

/// Where paragraphs of `text[start..end]` start: after each run of blank lines outside fences,
/// plus `start` and `end`.
fn paragraph_bounds(text: &str, start: usize, end: usize) -> Vec<usize> {
    let mut bounds = vec![start];
    let mut open_fence = None;
    let mut after_blank = false;
    for line_start in line_starts(text, start, end) {
        let line = line_at(text, line_start, end);
        let blank = line.trim().is_empty();
        if let Some(open) = open_fence {
            if closes(line, open) {
                open_fence = None;
            }
            continue;
        }
        if after_blank && !blank && line_start > start {
            bounds.push(line_start);
        }
        after_blank = blank;
        if let Some(f) = fence(line) {
            open_fence = Some(f);
        }
    }
    bounds.push(end);
    bounds.dedup();
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_fences_and_slugs() {
        assert_eq!(heading("## Install ##\n"), Some((2, "Install".into())));
        assert_eq!(heading("#hashtag"), None);
        assert_eq!(heading("    # indented code"), None);
        assert_eq!(heading("#"), Some((1, String::new())));
        assert_eq!(fence("```rust\n"), Some((b'`', 3)));
        assert_eq!(fence("~~~~"), Some((b'~', 4)));
        assert_eq!(fence("``inline``"), None);
        assert!(closes("````\n", (b'`', 3)) && !closes("```x\n", (b'`', 3)) && !closes("~~~\n", (b'`', 3)));
        assert_eq!(slug("Install from source!"), "install-from-source");
        assert_eq!(slug("  ** "), "section");
    }

    #[test]
    fn paragraphs_do_not_break_inside_fences() {
        let text = "a\n\n```\nx\n\ny\n```\n\nb\n";
        let bounds = paragraph_bounds(text, 0, text.len());
        let parts: Vec<&str> = bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect();
        assert_eq!(parts, ["a\n\n", "```\nx\n\ny\n```\n\n", "b\n"]);
    }
}
