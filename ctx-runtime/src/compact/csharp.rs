//! A C# lexer precise enough to tell code from comments and literals.
//!
//! It knows every literal form of C# 11–12: regular `"…"` with backslash escapes, verbatim
//! `@"…"` with `""` escapes, interpolated `$"…{expr}…"` and `$@"…"` / `@$"…"` (the holes are
//! lexed as code, so a `"` or `}` inside a nested string does not end the outer one), raw
//! `"""…"""` with any number of quotes, interpolated raw `$$"""…{{expr}}…"""`, and character
//! literals. Comments are `//`, `///` and `/* … */`; preprocessor directives occupy a whole line.
//! Lines end at `\n`, `\r`, U+0085, U+2028 and U+2029, and whitespace is C#'s (Unicode spaces,
//! U+FEFF and U+001A included), as in the compiler.
//!
//! # Conditional compilation
//!
//! The compiler does not lex the text of an `#if`/`#elif`/`#else` branch whose condition is
//! false: in that text it only looks for lines whose first non-blank character is `#`. A `/*` or
//! an unfinished `@"` there opens nothing, and the next `#endif` line ends the branch. Which
//! symbols are defined is not known here, so every branch between `#if` and its `#endif` may be
//! such disabled text. Lexing it as code is harmless as long as every directive line is read as
//! the compiler reads it: what is removed from disabled text was never compiled. So inside a
//! conditional region (the lexer counts `#if` … `#endif` nesting on the directive lines it sees),
//! a comment or literal that would run across a line starting with `#` is uncertain: if its
//! branch is disabled, that line is a directive and what follows is other code. From such a
//! construct on, the rest of the text is kept as it is. A block comment followed on its line by
//! `#` is kept the same way: in disabled text that `#` starts no directive, in the output it
//! would. Outside every conditional region the text is certainly compiled, so a comment that
//! holds a directive line is just a comment.
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

/// The length of the C# new-line character at `i` (`\n`, `\r`, U+0085, U+2028, U+2029), or 0.
fn newline_len(b: &[u8], i: usize) -> usize {
    match b.get(i..).unwrap_or_default() {
        [b'\n' | b'\r', ..] => 1,
        [0xc2, 0x85, ..] => 2,
        [0xe2, 0x80, 0xa8 | 0xa9, ..] => 3,
        _ => 0,
    }
}

/// The C# whitespace or new-line character at `i`: its length and whether it ends a line.
/// Whitespace is the Unicode class Zs, tab, vertical tab, form feed, and (as in Roslyn) U+001A
/// and U+FEFF.
fn space_at(src: &str, i: usize) -> Option<(usize, bool)> {
    let b = src.as_bytes();
    match *b.get(i)? {
        b' ' | b'\t' | 0x0b | 0x0c | 0x1a => Some((1, false)),
        b'\n' | b'\r' => Some((1, true)),
        // The lead bytes of every other whitespace character, so `i` is a character boundary.
        0xc2 | 0xe1 | 0xe2 | 0xe3 | 0xef => {
            let c = src.get(i..)?.chars().next()?;
            let len = c.len_utf8();
            if newline_len(b, i) > 0 {
                Some((len, true))
            } else if c.is_whitespace() || c == '\u{feff}' {
                Some((len, false))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Whether a C# whitespace or new-line character of two or three bytes ends just before `i`.
fn space_ends_at(b: &[u8], i: usize) -> bool {
    (2..=3).any(|k| {
        i >= k
            && std::str::from_utf8(&b[i - k..i]).is_ok_and(|s| s.chars().all(|c| c.is_whitespace() || c == '\u{feff}'))
    })
}

/// Where the blanks (whitespace but no new line) from `i` end.
fn skip_blanks(src: &str, mut i: usize) -> usize {
    while let Some((len, false)) = space_at(src, i) {
        i += len;
    }
    i
}

/// Whether a line that starts within `start..end` begins, after blanks, with `#`: in disabled
/// text that line is a directive.
fn crosses_directive_line(src: &str, start: usize, end: usize) -> bool {
    let b = src.as_bytes();
    let mut k = start;
    while k < end {
        match newline_len(b, k) {
            0 => k += 1,
            len => {
                k += len;
                let first = skip_blanks(src, k);
                if first < end && b[first] == b'#' {
                    return true;
                }
            }
        }
    }
    false
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Lexes `src`. Never fails: from the first construct that does not end (or that is not valid
/// C#, or that may be read otherwise in disabled text: see the module documentation), the rest of
/// the text is one verbatim piece.
pub(crate) fn lex(src: &str) -> Lexed<'_> {
    let b = src.as_bytes();
    let n = b.len();
    let mut pieces = Pieces::new(src);
    let mut strings = Vec::new();
    let mut at_line_start = true;
    // How many `#if` regions the lexer is in: inside one, any text may be disabled.
    let mut conditional_depth = 0usize;
    let mut i = 0;
    while i < n {
        let c = b[i];
        if space_at(src, i).is_some() {
            let mut newline = false;
            while let Some((len, breaks)) = space_at(src, i) {
                newline |= breaks;
                i += len;
            }
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
            let end = find(b, i + 2, b"*/").map(|e| e + 2).filter(|&e| {
                b.get(skip_blanks(src, e)) != Some(&b'#')
                    && (conditional_depth == 0 || !crosses_directive_line(src, i, e))
            });
            match end {
                Some(e) => {
                    pieces.gap(false);
                    i = e;
                }
                None => {
                    pieces.text(i, n);
                    i = n;
                }
            }
            continue;
        }
        // Comments leave `at_line_start` alone: once they are dropped, a `#` after them starts
        // its line, and lexing the output must see what lexing the input saw. (A block comment
        // followed by `#` on its line is never dropped: see the module documentation.)
        if std::mem::replace(&mut at_line_start, false) && c == b'#' {
            let end = line_end(b, i);
            let name = directive_name(src, i + 1);
            if name == b"region" || name == b"endregion" {
                pieces.gap(false);
            } else {
                if name == b"if" {
                    conditional_depth += 1;
                } else if name == b"endif" {
                    conditional_depth = conditional_depth.saturating_sub(1);
                }
                pieces.text(i, end);
            }
            i = end;
            continue;
        }
        let end = match literal_at(b, i, 0) {
            Some(Some(e)) if conditional_depth > 0 && crosses_directive_line(src, i, e) => None,
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

/// The name of the directive whose `#` is just before `from` (`if`, `region`, …), as the
/// compiler reads it: after blanks, a run of ASCII letters. `#region` and `#endregion` only
/// organise the editor's outline; every other directive (`#if`, `#pragma`, `#nullable`, …)
/// means something and is kept.
fn directive_name(src: &str, from: usize) -> &[u8] {
    let b = src.as_bytes();
    let start = skip_blanks(src, from);
    let len = b[start..].iter().take_while(|x| x.is_ascii_alphabetic()).count();
    if b.get(start + len).is_some_and(|&x| is_ident(x)) && space_at(src, start + len).is_none() {
        // `#regionX`, `#if_` : not a directive name this lexer knows.
        return b"";
    }
    &b[start..start + len]
}

/// The start of the new-line character that ends the line `from` is on (or the text's end).
fn line_end(b: &[u8], from: usize) -> usize {
    let mut j = from;
    while j < b.len() && newline_len(b, j) == 0 {
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
    if i > 0 && b[i] != b'"' && is_ident(b[i - 1]) && !space_ends_at(b, i) {
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
        b'\'' => None,
        _ if newline_len(b, j) > 0 => None,
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
            _ if newline_len(b, j) > 0 => return None,
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

    /// Issue 26, item 1: C# does not lex disabled text, so a `/*` or an unfinished `@"` in an
    /// `#if` branch that may be disabled must not swallow the `#endif` and the code after it.
    #[test]
    fn disabled_text_never_opens_a_comment_or_string_across_a_directive() {
        let comment = "#if NEVER_DEFINED\n/* not a comment opener here\n#endif\npublic int Live;\n/* real */\n";
        let out = strip(comment);
        assert!(out.contains("#endif\npublic int Live;"), "{out:?}");
        let verbatim = "#if NEVER_DEFINED\nvar s = @\"open\n#endif\nvar url = \"https://example.com/api\"; // c\n";
        let out = strip(verbatim);
        assert!(out.contains("var url = \"https://example.com/api\";"), "{out:?}");
        for directive in ["#else", "#elif OTHER", "#pragma warning disable", "#region r", "  #endif"] {
            let src = format!("#if A\nx /* y\n{directive}\n*/ z;\n#endif\n");
            assert!(strip(&src).contains(directive.trim()), "{directive}: {:?}", strip(&src));
        }
        // Nested: the outer `#endif` closes the region, the inner one alone does not.
        let nested = "#if A\n#if B\n#endif\n@\"\n#endif\n\";";
        assert_eq!(strip(nested), nested);
        // Outside every conditional region the text is certainly lexed: a comment that holds a
        // directive line is a comment.
        assert_eq!(strip("int a; /* old:\n#if X\n#endif\n*/ int b;"), "int a; int b;");
        // Within a region, what closes before the next directive line is lexed as usual.
        assert_eq!(strip("#if A\nint  a; /* c */\n// d\n#endif\n"), "#if A\nint a;\n#endif");
        // A `#` after a comment does not start a directive in disabled text: kept as it was.
        let after_comment = "#if A\n/* c */ #endif\nx;\n#endif\n";
        assert!(strip(after_comment).contains("/* c */ #endif"), "{:?}", strip(after_comment));
    }

    /// Issue 26, item 2: C# ends a line at U+0085, U+2028 and U+2029 as at `\n` and `\r`.
    #[test]
    fn unicode_line_terminators_end_a_line_comment() {
        for nl in ["\u{85}", "\u{2028}", "\u{2029}"] {
            let out = strip(&format!("int a; // c{nl}int b;"));
            assert!(out.contains("int b;"), "{nl:?}: {out:?}");
            // A directive after one starts its line; its region is tracked.
            let src = format!("x;{nl}#if NEVER{nl}/*{nl}#endif{nl}int live; // c\n*/");
            assert!(strip(&src).contains("int live;"), "{nl:?}: {:?}", strip(&src));
        }
        // Unicode spaces before `#` leave it at the start of its line.
        let src = "\u{a0}#if NEVER\n/*\n#endif\nint live; // c\n*/";
        assert!(strip(src).contains("int live;"), "{:?}", strip(src));
    }

    #[test]
    fn verbatim_identifiers_and_lone_dollars_are_code() {
        assert_eq!(strip("var  @class = 1;  // c"), "var @class = 1;");
        assert_eq!(strings("var s = x$\"a\";"), vec!["\"a\""]);
    }
}
