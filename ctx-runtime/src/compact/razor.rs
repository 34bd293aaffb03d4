//! Razor (`.cshtml`, `.razor`) compaction: Razor comments only.
//!
//! A Razor comment `@* … *@` is removed by the server before rendering, so dropping it cannot
//! change the page. Everything else in a Razor file is HTML, C# or both, where whitespace can be
//! significant (`<pre>`, attribute values, multi-line C# literals in code blocks), so it is left
//! exactly as written. A line that held nothing but a comment goes as a whole, unless the page
//! has a `<pre>` or `<textarea>`, whose content keeps its line breaks. A comment opener after an
//! odd number of `"` on its line may sit inside a C# string or an attribute value; then the text
//! is returned unchanged.

use std::borrow::Cow;

/// The text without its Razor comments (see the module documentation).
pub fn strip(src: &str) -> Cow<'_, str> {
    let b = src.as_bytes();
    if !src.contains("@*") {
        return Cow::Borrowed(src);
    }
    let lower = src.to_ascii_lowercase();
    let keep_lines = lower.contains("<pre") || lower.contains("<textarea");
    let mut out = String::with_capacity(src.len());
    let mut copied = 0; // bytes of `src` already handled
    let mut i = 0;
    while i + 1 < b.len() {
        match (b[i], b[i + 1]) {
            // `@@` is an escaped `@`: `@@*` is text.
            (b'@', b'@') => i += 2,
            (b'@', b'*') => {
                let line_start = src[..i].rfind('\n').map_or(0, |k| k + 1).max(copied);
                if src[line_start..i].bytes().filter(|&x| x == b'"').count() % 2 == 1 {
                    return Cow::Borrowed(src);
                }
                let Some(close) = src[i + 2..].find("*@").map(|k| i + 2 + k + 2) else {
                    // Never closed: Razor would reject the page; keep it as it is.
                    break;
                };
                let line_end = src[close..].find('\n').map_or(b.len(), |k| close + k);
                let alone = src[line_start..i].trim().is_empty() && src[close..line_end].trim().is_empty();
                if alone && !keep_lines {
                    // Drop the whole line, its line break included.
                    out.push_str(&src[copied..line_start]);
                    copied = if line_end < b.len() { line_end + 1 } else { line_end };
                } else {
                    out.push_str(&src[copied..i]);
                    copied = close;
                }
                i = copied.max(close);
            }
            _ => i += 1,
        }
    }
    out.push_str(&src[copied..]);
    if out == src { Cow::Borrowed(src) } else { Cow::Owned(out) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_go_markup_stays() {
        let src = "@model X\n\n@* header\n   comment *@\n<div  class=\"a\">\n    <p>@Model.Name</p>@* inline *@<br/>\n</div>\n";
        assert_eq!(strip(src), "@model X\n\n<div  class=\"a\">\n    <p>@Model.Name</p><br/>\n</div>\n");
    }

    #[test]
    fn escaped_at_pre_and_quotes_are_respected() {
        assert_eq!(strip("mail: a@@*b*@"), "mail: a@@*b*@");
        let pre = "<pre>\n@* c *@\nx</pre>";
        assert_eq!(strip(pre), "<pre>\n\nx</pre>");
        let quoted = "@{ var s = \"@* not a comment *@\"; }";
        assert!(matches!(strip(quoted), Cow::Borrowed(_)));
        assert_eq!(strip("a @* open"), "a @* open");
    }
}
