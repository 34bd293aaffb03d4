//! Razor (`.cshtml`, `.razor`) compaction: Razor comments only.
//!
//! A Razor comment `@* … *@` is removed by the server before rendering, so dropping it cannot
//! change the page. Everything else in a Razor file is HTML, C# or both, where whitespace can be
//! significant (`<pre>`, attribute values, multi-line C# literals in code blocks), so it is left
//! exactly as written. A line that held nothing but a comment goes as a whole, unless the page
//! has a `<pre>` or `<textarea>`, whose content keeps its line breaks.
//!
//! `@*` is not a comment inside a C# string or comment, and a C# string can span lines
//! (verbatim `@"…"` with `""` escapes, raw `"""…"""`, interpolated forms with holes). Without a
//! full Razor parser we cannot tell markup from code, so the file is read under every plausible
//! reading at once (see [`Reading`]): a comment goes only when every reading agrees that it is
//! one. Where the readings disagree, that spot is kept and the rest of the file is still
//! compacted.

use std::borrow::Cow;

/// What kind of C# string a reading is inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `"…"` (C#, backslash escapes) or an HTML attribute value; ends at the line's end at the latest.
    Regular,
    /// `@"…"`: `""` is an escaped quote, line breaks are part of the string.
    Verbatim,
    /// `"""…"""` with this many quotes: ends only at as many quotes.
    Raw(usize),
}

/// Where one reading of the text is at a given byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Markup or C# code, where `@*` opens a Razor comment.
    Code,
    /// Inside `@* … *@`.
    Razor,
    /// Inside a C# `// …` comment.
    LineComment,
    /// Inside a C# `/* … */` comment.
    BlockComment,
    /// Inside a string. `holes` is how many `$` an interpolated string has (0: none); `depth` is
    /// the nesting of interpolation holes the reading is in, and `nested` is whether it is inside
    /// a plain string within such a hole.
    Str { kind: Kind, holes: usize, depth: usize, nested: bool },
}

/// One reading: its state and the first byte it has not consumed yet (a reading that took a
/// multi-byte token in one step skips the bytes up to `at`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reading {
    state: State,
    at: usize,
}

/// Razor directives that open a line, lower-cased.
const DIRECTIVES: &[&str] = &[
    "@model ",
    "@using ",
    "@inject ",
    "@page",
    "@{",
    "@foreach",
    "@if ",
    "@if(",
    "@section ",
    "@inherits ",
    "@addtaghelper ",
    "@removetaghelper ",
    "@code",
    "@layout ",
    "@implements ",
    "@namespace ",
    "@typeparam ",
    "@rendermode ",
    "@attribute [",
    "@await render",
    "<pagetitle>",
];

/// Razor expressions over a view's own objects (case matters: they are C# members).
const EXPRESSIONS: &[&str] =
    &["@Html.", "@RenderBody()", "@RenderSection", "@ViewData[", "@ViewBag.", "@Model.", "@Url."];

/// Whether `line` is Razor beyond doubt: a Razor directive opens it, or it holds an expression
/// over the view's own objects. The one test the classifier and the compactor share, so a
/// file classified as Razor from its content is compacted as Razor.
pub(crate) fn is_razor_line(line: &str) -> bool {
    let lower = line.trim_start().to_ascii_lowercase();
    DIRECTIVES.iter().any(|d| lower.starts_with(d)) || EXPRESSIONS.iter().any(|e| line.contains(e))
}

/// The text without its Razor comments (see the module documentation).
pub(crate) fn strip(src: &str) -> Cow<'_, str> {
    if !src.contains("@*") {
        return Cow::Borrowed(src);
    }
    let lower = src.to_ascii_lowercase();
    let keep_lines = lower.contains("<pre") || lower.contains("<textarea");
    let removals = comments(src, keep_lines);
    if removals.is_empty() {
        return Cow::Borrowed(src);
    }
    let mut out = String::with_capacity(src.len());
    let mut copied = 0;
    for (start, end) in removals {
        out.push_str(src.get(copied..start).unwrap_or(""));
        copied = end;
    }
    out.push_str(src.get(copied..).unwrap_or(""));
    if out == src { Cow::Borrowed(src) } else { Cow::Owned(out) }
}

/// The byte ranges to remove, in order: comments every reading agrees on, with their whole line
/// when they stand alone on it.
fn comments(src: &str, keep_lines: bool) -> Vec<(usize, usize)> {
    let b = src.as_bytes();
    let mut readings = vec![Reading { state: State::Code, at: 0 }];
    let mut next: Vec<Reading> = Vec::new();
    // Comments every reading agreed on: (opener, end of `*@`, opener's line).
    let mut agreed: Vec<(usize, usize, usize)> = Vec::new();
    // Lines where some reading reached the line's end inside a one-line string: a quote on it was
    // read wrongly by one of the readings, so nothing on that line is certain.
    let mut unsure_lines: Vec<usize> = Vec::new();
    let mut line = 0usize;
    let mut i = 0usize;
    while i < b.len() {
        if b[i] == b'@' && b.get(i + 1) == Some(&b'*') {
            let all_code = readings.iter().all(|r| r.state == State::Code && r.at <= i);
            if all_code && let Some(end) = find(b, i + 2, b"*@").map(|k| k + 2) {
                agreed.push((i, end, line));
            }
        }
        next.clear();
        for r in &readings {
            if r.at > i {
                push(&mut next, *r);
                continue;
            }
            let ended_unsure = step(b, i, r.state, &mut next);
            if ended_unsure && unsure_lines.last() != Some(&line) {
                unsure_lines.push(line);
            }
        }
        std::mem::swap(&mut readings, &mut next);
        if b[i] == b'\n' {
            line += 1;
        }
        i += 1;
    }
    // The text's end is a line's end too.
    let one_line =
        |r: &Reading| matches!(r.state, State::Str { kind: Kind::Regular, .. } | State::Str { nested: true, .. });
    if readings.iter().any(one_line) && unsure_lines.last() != Some(&line) {
        unsure_lines.push(line);
    }
    let mut removals: Vec<(usize, usize)> = Vec::new();
    for (start, end, line) in agreed {
        if unsure_lines.binary_search(&line).is_ok() || removals.last().is_some_and(|&(_, e)| e > start) {
            continue;
        }
        let line_start = src[..start].rfind('\n').map_or(0, |k| k + 1);
        let line_end = src[end..].find('\n').map_or(b.len(), |k| end + k);
        let alone = src[line_start..start].trim().is_empty() && src[end..line_end].trim().is_empty();
        if alone && !keep_lines {
            let drop_to = if line_end < b.len() { line_end + 1 } else { line_end };
            removals.push((line_start, drop_to));
        } else {
            removals.push((start, end));
        }
    }
    removals
}

fn push(readings: &mut Vec<Reading>, r: Reading) {
    if !readings.contains(&r) {
        readings.push(r);
    }
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|k| from + k)
}

/// How many times `c` repeats from `i` on.
fn run_of(b: &[u8], i: usize, c: u8) -> usize {
    b.get(i..).map_or(0, |rest| rest.iter().take_while(|&&x| x == c).count())
}

/// Advances one reading that is at byte `i` in `state`, pushing what it may become. Returns true
/// when the reading hits a line break inside a one-line string.
fn step(b: &[u8], i: usize, state: State, out: &mut Vec<Reading>) -> bool {
    let c = b[i];
    let next = b.get(i + 1).copied();
    let go = |out: &mut Vec<Reading>, state: State, at: usize| push(out, Reading { state, at });
    match state {
        State::Code => match (c, next) {
            (b'@', Some(b'*')) => go(out, State::Razor, i + 2),
            (b'@', Some(b'@')) => go(out, State::Code, i + 2),
            // In markup these are text (`http://`), in code comments: both readings go on.
            (b'/', Some(b'/')) => {
                go(out, State::LineComment, i + 2);
                go(out, State::Code, i + 1);
            }
            (b'/', Some(b'*')) => {
                go(out, State::BlockComment, i + 2);
                go(out, State::Code, i + 1);
            }
            (b'\'', _) => match char_literal_end(b, i) {
                // `'"'` is a C# char literal, or a quote in a single-quoted attribute.
                Some(end) if b[i + 1..end].contains(&b'"') => {
                    go(out, State::Code, end);
                    go(out, State::Code, i + 1);
                }
                _ => go(out, State::Code, i + 1),
            },
            (b'"', _) => {
                let (s, at) = open_string(b, i);
                go(out, s, at);
            }
            _ => go(out, State::Code, i + 1),
        },
        State::Razor => match (c, next) {
            (b'*', Some(b'@')) => go(out, State::Code, i + 2),
            _ => go(out, State::Razor, i + 1),
        },
        State::LineComment if c == b'\n' => go(out, State::Code, i + 1),
        // C# also ends the comment at `\r`, U+0085, U+2028 and U+2029; whether Razor's tokenizer
        // does is not certain here, so both readings go on.
        State::LineComment if other_newline_len(b, i) > 0 => {
            go(out, State::Code, i + other_newline_len(b, i));
            go(out, State::LineComment, i + 1);
        }
        State::LineComment => go(out, State::LineComment, i + 1),
        State::BlockComment => match (c, next) {
            (b'*', Some(b'/')) => go(out, State::Code, i + 2),
            _ => go(out, State::BlockComment, i + 1),
        },
        State::Str { kind, holes, depth, nested } => return step_string(b, i, kind, holes, depth, nested, out),
    }
    false
}

/// The length of a line terminator of C# other than `\n` at `i` (`\r`, U+0085, U+2028, U+2029),
/// or 0.
fn other_newline_len(b: &[u8], i: usize) -> usize {
    match b.get(i..).unwrap_or_default() {
        [b'\r', ..] => 1,
        [0xc2, 0x85, ..] => 2,
        [0xe2, 0x80, 0xa8 | 0xa9, ..] => 3,
        _ => 0,
    }
}

/// The end (exclusive) of a C# char literal starting at `i` (`'x'`, `'\n'`, `'\u0022'`).
fn char_literal_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i + 1)? {
        b'\\' => (i + 3..(i + 12).min(b.len())).find(|&j| b[j] == b'\'').map(|j| j + 1),
        b'\'' | b'\n' => None,
        &lead => {
            // One UTF-8 character, then the closing quote.
            let width = match lead {
                0..0xc0 => 1,
                0xc0..0xe0 => 2,
                0xe0..0xf0 => 3,
                _ => 4,
            };
            (b.get(i + 1 + width) == Some(&b'\'')).then_some(i + 2 + width)
        }
    }
}

/// The string a `"` at `i` opens, read with the `@`/`$` prefix before it and the quotes after it,
/// and the first byte after the opening delimiter.
fn open_string(b: &[u8], i: usize) -> (State, usize) {
    let mut k = i;
    let mut verbatim = false;
    let mut holes = 0;
    while k > 0 && matches!(b[k - 1], b'@' | b'$') {
        // `*@"`: a Razor comment's end, then a quote.
        if b[k - 1] == b'@' && k >= 2 && b[k - 2] == b'*' {
            break;
        }
        k -= 1;
        if b[k] == b'@' {
            verbatim = true;
        } else {
            holes += 1;
        }
    }
    let quotes = run_of(b, i, b'"');
    let (kind, at) = if verbatim {
        (Kind::Verbatim, i + 1)
    } else if quotes >= 3 {
        (Kind::Raw(quotes), i + quotes)
    } else if quotes == 2 && holes == 0 {
        // `""`: an empty string.
        return (State::Code, i + 2);
    } else {
        (Kind::Regular, i + 1)
    };
    (State::Str { kind, holes, depth: 0, nested: false }, at)
}

/// [`step`] inside a string.
fn step_string(
    b: &[u8],
    i: usize,
    kind: Kind,
    holes: usize,
    depth: usize,
    nested: bool,
    out: &mut Vec<Reading>,
) -> bool {
    let c = b[i];
    let same = |depth: usize, nested: bool| State::Str { kind, holes, depth, nested };
    let go = |out: &mut Vec<Reading>, state: State, at: usize| push(out, Reading { state, at });
    if c == b'\n' && (kind == Kind::Regular || nested) {
        // C# cannot break a one-line string (only a hole of an interpolated one, since C# 11), so a
        // reading here misread a quote: it goes on as code, and the line is unsure.
        go(out, State::Code, i + 1);
        if depth > 0 && !nested {
            go(out, same(depth, nested), i + 1);
        }
        return true;
    }
    let other_newline = other_newline_len(b, i);
    if other_newline > 0 && (kind == Kind::Regular || nested) {
        // The other C# line terminators end a one-line C# string as `\n` does, but not an HTML
        // attribute value: both readings go on, and the line is unsure.
        go(out, State::Code, i + other_newline);
        go(out, same(depth, nested), i + 1);
        return true;
    }
    if nested {
        match c {
            b'\\' => go(out, same(depth, true), i + 2),
            b'"' => go(out, same(depth, false), i + 1),
            _ => go(out, same(depth, true), i + 1),
        }
        return false;
    }
    if depth > 0 {
        match c {
            b'"' => go(out, same(depth, true), i + 1),
            b'{' => go(out, same(depth + 1, false), i + 1),
            b'}' => go(out, same(depth - 1, false), i + 1),
            _ => go(out, same(depth, false), i + 1),
        }
        return false;
    }
    if holes > 0 && c == b'{' {
        // A hole opens with `holes` braces; fewer (and `{{` in a one-`$` string) are text.
        let run = run_of(b, i, b'{');
        if (holes == 1 && run >= 2 && !matches!(kind, Kind::Raw(_))) || run < holes {
            let taken = if holes == 1 { 2.min(run) } else { run };
            go(out, same(0, false), i + taken);
        } else {
            go(out, same(1, false), i + run);
        }
        return false;
    }
    match (kind, c) {
        (Kind::Regular, b'\\') => go(out, same(0, false), i + 2),
        (Kind::Regular, b'"') => {
            go(out, State::Code, i + 1);
            // The quote may open a string instead of closing one (a stray quote earlier in
            // markup): when that reading would be a multi-line string, follow it too.
            let (s, at) = open_string(b, i);
            if matches!(s, State::Str { kind: Kind::Verbatim | Kind::Raw(_), .. }) {
                go(out, s, at);
            }
        }
        (Kind::Verbatim, b'"') if b.get(i + 1) == Some(&b'"') => go(out, same(0, false), i + 2),
        (Kind::Verbatim, b'"') => go(out, State::Code, i + 1),
        (Kind::Raw(n), b'"') => {
            let run = run_of(b, i, b'"');
            if run >= n {
                go(out, State::Code, i + run);
            } else {
                go(out, same(0, false), i + run);
            }
        }
        _ => go(out, same(0, false), i + 1),
    }
    false
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

    #[test]
    fn a_comment_inside_a_multi_line_csharp_string_stays() {
        let verbatim = "@{ var help = @\"Usage:\n@* text *@\ndone\"; }\n@* gone *@\n<p>x</p>";
        assert_eq!(strip(verbatim), "@{ var help = @\"Usage:\n@* text *@\ndone\"; }\n<p>x</p>");
        let escaped = "@{ var s = @\"say \"\"hi\"\"\n@* text *@\n\"; }";
        assert!(matches!(strip(escaped), Cow::Borrowed(_)));
        let raw = "@{ var s = \"\"\"\n  \"quoted\" @* text *@\n  \"\"\"; }";
        assert!(matches!(strip(raw), Cow::Borrowed(_)));
        let interpolated = "@{ var s = $@\"{Name(\"a\")}\n@* text *@\n\"; }";
        assert!(matches!(strip(interpolated), Cow::Borrowed(_)));
        let raw_interpolated = "@{ var s = $\"\"\"\n{x} @* text *@\n\"\"\"; }";
        assert!(matches!(strip(raw_interpolated), Cow::Borrowed(_)));
        let char_quote = "@{ var q = '\"'; var s = @\"\n@* text *@\n\"; }";
        assert!(matches!(strip(char_quote), Cow::Borrowed(_)));
    }

    #[test]
    fn a_stray_quote_in_markup_does_not_hide_a_later_string() {
        // Read as C#, the quote after 5 would close at `@"` and the comment would look like code.
        let src = "<p>5\" tall</p> @{ var s = @\"x\n@* text *@\n\"; }";
        assert!(matches!(strip(src), Cow::Borrowed(_)));
        let same_line = "<p>5\" tall</p> @{ var s = \"@* text *@\"; }";
        assert!(matches!(strip(same_line), Cow::Borrowed(_)));
    }

    #[test]
    fn a_comment_in_a_csharp_line_comment_spanning_lines_stays() {
        let src = "@{\n    // see @* this\n    Work();\n    // *@\n}";
        assert!(matches!(strip(src), Cow::Borrowed(_)));
    }

    /// Issue 26, item 2 in Razor: C# ends a `//` comment at `\r`, U+0085, U+2028 and U+2029 too,
    /// so the verbatim string after one holds the `@*`.
    #[test]
    fn a_line_comment_ends_at_every_csharp_line_terminator() {
        for nl in ["\r", "\u{85}", "\u{2028}", "\u{2029}"] {
            let src = format!("@{{ // see @\"x{nl}var s = @\"a\n@* text *@\n\"; }}");
            assert!(matches!(strip(&src), Cow::Borrowed(_)), "{nl:?}: {:?}", strip(&src));
        }
    }

    #[test]
    fn an_opener_inside_an_attribute_is_kept_and_the_rest_compacted() {
        let src = "<a title=\"x @* y\">link</a>\n@* drop *@\n<p>hi</p>@* inline *@\n";
        assert_eq!(strip(src), "<a title=\"x @* y\">link</a>\n<p>hi</p>\n");
        let closed = "<a title=\"x @* y *@\">link</a>\n@* drop *@\n<p>hi</p>";
        assert_eq!(strip(closed), "<a title=\"x @* y *@\">link</a>\n<p>hi</p>");
    }

    #[test]
    fn odd_inputs_never_panic() {
        for src in ["@*", "\"@*", "@\"", "'", "'\\", "$\"{", "$\"{\"", "\"\"\"", "@* \"*@", "'é'@*x*@", "é'\"'@**@"] {
            let _ = strip(src);
        }
    }
}
