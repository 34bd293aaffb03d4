//! A C# lexer precise enough to tell code from comments and literals.
//!
//! It knows every literal form of C# 11–12: regular `"…"` with backslash escapes, verbatim
//! `@"…"` with `""` escapes, interpolated `$"…{expr}…"` and `$@"…"` / `@$"…"` (the holes are
//! lexed as code, so a `"` or `}` inside a nested string does not end the outer one), raw
//! `"""…"""` with any number of quotes, interpolated raw `$$"""…{{expr}}…"""`, and character
//! literals. Comments are `//`, `///` and `/* … */`; preprocessor directives occupy a whole line.
//!
//! Used by the .NET compactor (comments, `#region` lines and insignificant whitespace go) and by
//! the classifier (string literals holding SQL).

use std::ops::Range;

use super::emit::Pieces;

/// Interpolation holes nest (`$"{$"{x}"}"`); deeper than this, the rest of the text is kept
/// verbatim instead of recursing further, so no input can exhaust the stack.
const MAX_NESTING: usize = 32;

/// The result of lexing a C# text.
#[derive(Debug)]
pub(crate) struct Lexed<'a> {
    /// Code, literals and separators, for the emitter.
    pub(crate) pieces: Pieces<'a>,
    /// Byte ranges of the top-level string literals (delimiters and prefixes included).
    pub(crate) strings: Vec<Range<usize>>,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Lexes `src`. Never fails: from the first construct that does not end (or that is not valid
/// C#), the rest of the text is one verbatim piece.
pub(crate) fn lex(src: &str) -> Lexed<'_> {
    let b = src.as_bytes();
    let n = b.len();
    let mut pieces = Pieces::new(src);
    let mut strings = Vec::new();
    let mut at_line_start = true;
    let mut i = 0;
    while i < n {
        let c = b[i];
        if is_space(c) {
            let start = i;
            while i < n && is_space(b[i]) {
                i += 1;
            }
            let newline = b[start..i].iter().any(|&x| x == b'\n' || x == b'\r');
            at_line_start |= newline;
            pieces.gap(newline);
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            pieces.gap(false);
            i = line_end(b, i);
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            match find(b, i + 2, b"*/") {
                Some(e) => {
                    pieces.gap(false);
                    i = e + 2;
                }
                None => {
                    pieces.text(i, n);
                    i = n;
                }
            }
            continue;
        }
        // Comments leave `at_line_start` alone: once they are dropped, a `#` after them starts
        // its line, and lexing the output must see what lexing the input saw.
        if std::mem::replace(&mut at_line_start, false) && c == b'#' {
            let end = line_end(b, i);
            if is_region_directive(&b[i + 1..end]) {
                pieces.gap(false);
            } else {
                pieces.text(i, end);
            }
            i = end;
            continue;
        }
        let end = match literal_at(b, i, 0) {
            Some(Some(e)) => {
                if b[i] != b'\'' {
                    strings.push(i..e);
                }
                Some(e)
            }
            Some(None) => None,
            None => Some(i + 1),
        };
        match end {
            Some(e) => {
                pieces.text(i, e);
                i = e;
            }
            None => {
                pieces.text(i, n);
                i = n;
            }
        }
    }
    Lexed { pieces, strings }
}

/// `#region` and `#endregion` only organise the editor's outline; every other directive
/// (`#if`, `#pragma`, `#nullable`, …) means something and is kept.
fn is_region_directive(after_hash: &[u8]) -> bool {
    let name_start = after_hash.iter().position(|&x| x != b' ' && x != b'\t').unwrap_or(after_hash.len());
    let rest = &after_hash[name_start..];
    [&b"region"[..], &b"endregion"[..]]
        .iter()
        .any(|kw| rest.starts_with(kw) && rest.get(kw.len()).is_none_or(|&x| !is_ident(x)))
}

fn line_end(b: &[u8], from: usize) -> usize {
    let mut j = from;
    while j < b.len() && b[j] != b'\n' && b[j] != b'\r' {
        j += 1;
    }
    j
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from > b.len() {
        return None;
    }
    b[from..].windows(needle.len()).position(|w| w == needle).map(|k| from + k)
}

/// When a string or character literal starts at `i`: `Some(Some(end))` (exclusive), or
/// `Some(None)` when it does not end or is malformed. `None` when no literal starts here.
fn literal_at(b: &[u8], i: usize, depth: usize) -> Option<Option<usize>> {
    if depth > MAX_NESTING {
        return Some(None);
    }
    if b[i] == b'\'' {
        return Some(char_end(b, i));
    }
    // Prefix: `$`* then an optional `@`, or `@` then `$`*.
    let mut j = i;
    let mut dollars = 0;
    let mut verbatim = false;
    if b[j] == b'@' {
        verbatim = true;
        j += 1;
    }
    while j < b.len() && b[j] == b'$' {
        dollars += 1;
        j += 1;
    }
    if !verbatim && b.get(j) == Some(&b'@') {
        verbatim = true;
        j += 1;
    }
    if b.get(j) != Some(&b'"') {
        return None;
    }
    if i > 0 && b[i] != b'"' && is_ident(b[i - 1]) {
        // `x$"…"` is not C#; treat the prefix as code and let the quote start the literal.
        return None;
    }
    let quotes = b[j..].iter().take_while(|&&x| x == b'"').count();
    Some(if verbatim {
        verbatim_end(b, j + 1, dollars > 0, depth)
    } else if quotes >= 3 {
        raw_end(b, j + quotes, quotes, dollars, depth)
    } else if quotes == 2 {
        Some(j + 2)
    } else {
        regular_end(b, j + 1, dollars > 0, depth)
    })
}

fn char_end(b: &[u8], i: usize) -> Option<usize> {
    let j = i + 1;
    match b.get(j)? {
        b'\\' => {
            // `'\n'`, `'\''`, `'\u0041'`, `'\x41'`, `'\U0001F600'`: at most 10 bytes of escape.
            let k = (j + 2..b.len().min(j + 12)).find(|&k| b[k] == b'\'')?;
            Some(k + 1)
        }
        b'\'' | b'\n' | b'\r' => None,
        &lead => {
            let len = utf8_len(lead)?;
            (b.get(j + len) == Some(&b'\'')).then_some(j + len + 1)
        }
    }
}

fn utf8_len(lead: u8) -> Option<usize> {
    match lead {
        0x00..=0x7f => Some(1),
        0xc0..=0xdf => Some(2),
        0xe0..=0xef => Some(3),
        0xf0..=0xf7 => Some(4),
        _ => None,
    }
}

/// A regular string (or its interpolated form) from `j`, just after the opening quote.
fn regular_end(b: &[u8], mut j: usize, interpolated: bool, depth: usize) -> Option<usize> {
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            // A regular string cannot span lines (only its holes can).
            b'\n' | b'\r' => return None,
            b'{' if interpolated => {
                if b.get(j + 1) == Some(&b'{') {
                    j += 2;
                } else {
                    j = hole_end(b, j + 1, 1, depth)?;
                }
            }
            _ => j += 1,
        }
    }
    None
}

/// A verbatim string (or its interpolated form) from `j`, just after the opening quote.
fn verbatim_end(b: &[u8], mut j: usize, interpolated: bool, depth: usize) -> Option<usize> {
    while j < b.len() {
        match b[j] {
            b'"' if b.get(j + 1) == Some(&b'"') => j += 2,
            b'"' => return Some(j + 1),
            b'{' if interpolated => {
                if b.get(j + 1) == Some(&b'{') {
                    j += 2;
                } else {
                    j = hole_end(b, j + 1, 1, depth)?;
                }
            }
            _ => j += 1,
        }
    }
    None
}

/// A raw string from `j`, just after its `quotes` opening quotes; `dollars` braces open a hole.
fn raw_end(b: &[u8], mut j: usize, quotes: usize, dollars: usize, depth: usize) -> Option<usize> {
    while j < b.len() {
        match b[j] {
            b'"' => {
                let run = b[j..].iter().take_while(|&&x| x == b'"').count();
                if run >= quotes {
                    return Some(j + run);
                }
                j += run;
            }
            b'{' if dollars > 0 => {
                let run = b[j..].iter().take_while(|&&x| x == b'{').count();
                j += run;
                if run >= dollars {
                    j = hole_end(b, j, dollars, depth)?;
                }
            }
            _ => j += 1,
        }
    }
    None
}

/// The end of an interpolation hole whose code starts at `j`: just after the `closing` braces
/// that close it at nesting depth 0.
fn hole_end(b: &[u8], mut j: usize, closing: usize, depth: usize) -> Option<usize> {
    let mut nesting = 0usize;
    let mut in_format = false;
    while j < b.len() {
        let c = b[j];
        if in_format && c != b'}' {
            j += 1;
            continue;
        }
        match c {
            b'}' if nesting > 0 => {
                nesting -= 1;
                j += 1;
            }
            b'}' => {
                let run = b[j..].iter().take_while(|&&x| x == b'}').count();
                if run >= closing {
                    return Some(j + closing);
                }
                j += run;
            }
            b'(' | b'[' | b'{' => {
                nesting += 1;
                j += 1;
            }
            b')' | b']' => {
                nesting = nesting.saturating_sub(1);
                j += 1;
            }
            b':' if nesting == 0 && b.get(j + 1) == Some(&b':') => j += 2,
            // `{value:N2}`: the format specifier runs to the closing brace.
            b':' if nesting == 0 && (j == 0 || b[j - 1] != b':') => {
                in_format = true;
                j += 1;
            }
            b'/' if b.get(j + 1) == Some(&b'/') => j = line_end(b, j),
            b'/' if b.get(j + 1) == Some(&b'*') => j = find(b, j + 2, b"*/")? + 2,
            _ => match literal_at(b, j, depth + 1) {
                Some(end) => j = end?,
                None => j += 1,
            },
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::emit::emit;
    use super::*;

    fn strip(src: &str) -> String {
        emit(&lex(src).pieces.finish(), src.len())
    }

    fn strings(src: &str) -> Vec<&str> {
        lex(src).strings.into_iter().map(|r| &src[r]).collect()
    }

    #[test]
    fn comments_regions_and_whitespace_go() {
        let src = "namespace A;\n\n/// <summary>Doc.</summary>\npublic class B // trailing\n{\n    #region Fields\n    private int  _x; /* why */\n    #endregion\n}\n";
        assert_eq!(strip(src), "namespace A;\npublic class B\n{\nprivate int _x;\n}");
    }

    #[test]
    fn other_directives_stay_on_their_own_lines() {
        let src = "    #if DEBUG // note\n    Log();\n    #endif\n#nullable enable\n";
        assert_eq!(strip(src), "#if DEBUG // note\nLog();\n#endif\n#nullable enable");
    }

    #[test]
    fn every_string_form_is_kept_verbatim() {
        let cases = [
            r#"var a = "x  // not a comment \" still";"#,
            "var b = @\"C:\\temp\\  \"\"q\"\"  /* no */\";",
            "var c = $\"{x:N2}  {{ }} {(y ? \"a  b\" : \"c\")}\";",
            "var d = $@\"{x}\n   -- keep\n\";",
            "var e = \"\"\"\n    SELECT  1 -- keep\n      FROM t\n    \"\"\";",
            "var f = $$\"\"\"\n    {\"json\": {{value}} }\n    \"\"\";",
            "var g = '\"'; var h = '\\''; var i = '\\u0041';",
            "var j = $\"{$\"{inner  // x\n}\"}\";",
        ];
        for src in cases {
            let out = strip(src);
            for lit in strings(src) {
                assert!(out.contains(lit), "{lit:?} lost in {out:?} (from {src:?})");
            }
        }
        assert_eq!(strings(cases[2]), vec!["$\"{x:N2}  {{ }} {(y ? \"a  b\" : \"c\")}\""]);
        assert_eq!(strings(cases[5]).len(), 1);
    }

    #[test]
    fn malformed_text_is_kept_from_the_first_problem_on() {
        assert_eq!(strip("int  a;\nvar s = \"open\n  x  // y"), "int a;\nvar s = \"open\n  x  // y");
        assert_eq!(strip("x  /* open\n  y"), "x /* open\n  y");
        let deep = "$\"{".repeat(100);
        assert_eq!(strip(&deep), deep);
    }

    #[test]
    fn verbatim_identifiers_and_lone_dollars_are_code() {
        assert_eq!(strip("var  @class = 1;  // c"), "var @class = 1;");
        assert_eq!(strings("var s = x$\"a\";"), vec!["\"a\""]);
    }
}
