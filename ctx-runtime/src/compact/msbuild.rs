//! MSBuild project files (`.csproj`, `.props`, `.targets`, …): XML comments only.
//!
//! MSBuild ignores comments, so `<!-- … -->` is dropped (but not inside attribute values, CDATA
//! sections or processing instructions, where it is not a comment). A line that held nothing but
//! a comment goes as a whole when it sits between sibling elements, where whitespace means
//! nothing; inside a leaf element (`<NoWarn>` … `</NoWarn>`) the surrounding whitespace is part
//! of the value and is kept.

use std::borrow::Cow;

/// The project text without its comments (see the module documentation).
pub fn strip(src: &str) -> Cow<'_, str> {
    if !src.contains("<!--") {
        return Cow::Borrowed(src);
    }
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        let rest = &src[i..];
        let skip_to = |close: &str, from: usize| src[from..].find(close).map(|k| from + k + close.len());
        let end = if rest.starts_with("<!--") {
            let Some(close) = skip_to("-->", i + 4) else { break };
            let line_start = src[..i].rfind('\n').map_or(0, |k| k + 1).max(copied);
            let line_end = src[close..].find('\n').map_or(b.len(), |k| close + k);
            let alone = src[line_start..i].trim().is_empty() && src[close..line_end].trim().is_empty();
            if alone && line_end < b.len() && between_siblings(&out, &src[copied..line_start], &src[line_end..]) {
                out.push_str(&src[copied..line_start]);
                copied = line_end + 1;
            } else {
                out.push_str(&src[copied..i]);
                copied = close;
            }
            copied.max(close)
        } else if rest.starts_with("<![CDATA[") {
            let Some(e) = skip_to("]]>", i + 9) else { break };
            e
        } else if rest.starts_with("<?") {
            let Some(e) = skip_to("?>", i + 2) else { break };
            e
        } else {
            match tag_end(b, i) {
                Some(e) => e,
                None => break,
            }
        };
        i = end;
    }
    out.push_str(&src[copied..]);
    if out == src { Cow::Borrowed(src) } else { Cow::Owned(out) }
}

/// End of a tag starting at `i`, skipping quoted attribute values.
fn tag_end(b: &[u8], i: usize) -> Option<usize> {
    let mut quote = None;
    for (k, &c) in b.iter().enumerate().skip(i + 1) {
        match (quote, c) {
            (None, b'"' | b'\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, b'>') => return Some(k + 1),
            _ => {}
        }
    }
    None
}

/// Whether the whitespace around a removed comment line separates sibling elements: it does
/// unless it is the whole content of a leaf element (`<A>` … `</A>`).
fn between_siblings(out: &str, before: &str, after: &str) -> bool {
    // The text already emitted plus what precedes the line, minus trailing whitespace.
    let prev = format!("{out}{before}");
    let prev = prev.trim_end();
    let next = after.trim_start();
    let Some(prev_tag_start) = prev.rfind('<') else { return false };
    if !prev.ends_with('>') || !next.starts_with('<') {
        return false;
    }
    let prev_tag = &prev[prev_tag_start..];
    let prev_opens = !prev_tag.starts_with("</") && !prev_tag.ends_with("/>") && !prev_tag.starts_with("<!");
    let next_closes = next.starts_with("</");
    !(prev_opens && next_closes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_lines_between_elements_go() {
        let src = "<Project>\n  <PropertyGroup>\n    <!-- why -->\n    <A>1</A>\n  </PropertyGroup>\n</Project>\n";
        assert_eq!(strip(src), "<Project>\n  <PropertyGroup>\n    <A>1</A>\n  </PropertyGroup>\n</Project>\n");
    }

    #[test]
    fn values_attributes_and_cdata_are_untouched() {
        let leaf = "<NoWarn>\n  <!-- c -->\n</NoWarn>";
        assert_eq!(strip(leaf), "<NoWarn>\n  \n</NoWarn>");
        let attr = "<A Condition=\"'$(X)' == '<!-- -->'\" />";
        assert_eq!(strip(attr), attr);
        let cdata = "<A><![CDATA[ <!-- kept --> ]]></A>";
        assert_eq!(strip(cdata), cdata);
        assert_eq!(strip("<A>x<!-- c -->y</A>"), "<A>xy</A>");
    }
}
