//! SQL compaction: comments and insignificant whitespace go, everything else stays byte for byte.
//!
//! The lexer follows SQL Server (T-SQL), which is what the .NET code bases we target use, and
//! also understands PostgreSQL's quoting:
//!
//! - `-- …` line comments and `/* … */` block comments (nested, as in T-SQL and PostgreSQL) are
//!   dropped; optimizer hints `/*+ … */` and MySQL executable comments `/*! … */` carry meaning
//!   and are kept verbatim. A `--` comment that holds U+0085, U+2028 or U+2029, which other
//!   languages take as a line's end, is kept as written up to its `\n`; a text with a lone `\r`
//!   (a line's end for T-SQL, not for MySQL) is left as it is;
//! - string literals `'…'` with `''` escapes (and their `N'…'`, `X'…'`, `B'…'` forms), PostgreSQL
//!   `E'…'` strings with backslash escapes and `$tag$ … $tag$` dollar quotes, quoted identifiers
//!   `"…"`, `[…]` and `` `…` `` are kept verbatim, whitespace and line breaks inside included;
//! - whitespace between tokens is normalised by the `emit` module: line breaks are kept
//!   (so `GO` and `sqlcmd` commands stay on their own lines), indentation, trailing blanks and
//!   blank lines go.
//!
//! A backslash is an ordinary character in a T-SQL literal (`'C:\Backup\'`, `'\'`), so it never
//! stops compaction by itself. When the text uses syntax whose meaning differs between dialects
//! in a way that changes where a literal ends, the text is returned unchanged: we never guess.
//! That is Oracle's `q'[…]'` quoting, and a backslash-quote that reads as MySQL's escaped quote:
//! `'it\'s'` (the quote glued to a letter, digit or `_`) or `'\''` (the quote doubled), where the
//! T-SQL reading would be unusual (`'it\'` glued to an identifier) or the two readings differ.

use std::borrow::Cow;

use super::compacted::{Compacted, guard_tokens};
use super::emit::{Pieces, emit};
use crate::tokens::TokenCounter;
use crate::tokens::TokenError;

/// The text with comments and insignificant whitespace removed, or the text itself (borrowed)
/// when nothing changes or when it cannot be compacted safely (see the module documentation).
///
/// ```
/// use ctx::compact::sql::strip;
/// let text = "SELECT  N'--not a comment', [Net  Amount]  -- a comment\n\n    FROM dbo.T /* why */;\nGO";
/// assert_eq!(strip(text), "SELECT N'--not a comment', [Net  Amount]\nFROM dbo.T ;\nGO");
/// ```
pub fn strip(text: &str) -> Cow<'_, str> {
    match lex(text) {
        Some(pieces) => {
            let out = emit(&pieces.finish(), text.len());
            if out == text { Cow::Borrowed(text) } else { Cow::Owned(out) }
        }
        None => Cow::Borrowed(text),
    }
}

/// [`strip`], then the token guard: the result never has more tokens than `text`.
pub fn compact(text: &str, counter: &TokenCounter) -> Result<Compacted, TokenError> {
    guard_tokens(text, strip(text), counter)
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

/// Bytes that can continue an identifier, so that a quote right after them is not a prefixed
/// literal (`ELSE'x'` is `ELSE` then `'x'`, not an `E'…'` string).
fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'@' | b'#' | b'$') || b >= 0x80
}

/// Lexes `src` into pieces; `None` when the text must be left alone.
fn lex(src: &str) -> Option<Pieces<'_>> {
    let b = src.as_bytes();
    let n = b.len();
    // A lone `\r` ends a `--` comment for T-SQL and PostgreSQL, not for MySQL, and whether
    // `sqlcmd` reads a `GO` after one as on its own line is not known: such a text is left alone.
    if b.iter().enumerate().any(|(k, &x)| x == b'\r' && b.get(k + 1) != Some(&b'\n')) {
        return None;
    }
    let mut p = Pieces::new(src);
    let mut i = 0;
    while i < n {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if is_space(c) {
            let start = i;
            while i < n && is_space(b[i]) {
                i += 1;
            }
            p.gap(b[start..i].iter().any(|&x| x == b'\n' || x == b'\r'));
            continue;
        }
        let end = match (c, next) {
            (b'-', Some(b'-')) => {
                // Other languages also end a line at U+0085, U+2028 or U+2029: when the comment
                // holds one, it is kept as written up to the `\n` where every reading ends it.
                let to_newline = find(b, i, b"\n").unwrap_or(n);
                if unicode_line_break(&b[i..to_newline]) {
                    p.text(i, to_newline);
                    i = to_newline;
                } else {
                    p.gap(false);
                    i = if to_newline > i && b[to_newline - 1] == b'\r' { to_newline - 1 } else { to_newline };
                }
                continue;
            }
            (b'/', Some(b'*')) if matches!(b.get(i + 2), Some(b'+' | b'!')) => find(b, i + 3, b"*/").map(|e| e + 2),
            (b'/', Some(b'*')) => match block_comment_end(b, i) {
                Some(e) => {
                    p.gap(false);
                    i = e;
                    continue;
                }
                None => None,
            },
            (b'\'', _) => {
                let prefix = |k: usize| i.checked_sub(k).map(|j| b[j]);
                let standalone = |k: usize| i.checked_sub(k).is_none_or(|j| !is_ident(b[j]));
                let oracle_q = matches!(prefix(1), Some(b'q' | b'Q'))
                    && (standalone(2) || (matches!(prefix(2), Some(b'n' | b'N')) && standalone(3)));
                if oracle_q {
                    return None;
                }
                if matches!(prefix(1), Some(b'e' | b'E')) && standalone(2) {
                    backslash_string_end(b, i)
                } else {
                    quoted_end(b, i, b'\'', b'\'', true)?
                }
            }
            (b'"', _) => quoted_end(b, i, b'"', b'"', true)?,
            (b'`', _) => quoted_end(b, i, b'`', b'`', false)?,
            (b'[', _) => quoted_end(b, i, b'[', b']', false)?,
            (b'$', _) if i == 0 || !is_ident(b[i - 1]) => match dollar_tag(b, i) {
                Some(tag_end) => find(b, tag_end, &b[i..tag_end]).map(|e| e + (tag_end - i)),
                None => Some(i + 1),
            },
            _ => Some(i + 1),
        };
        match end {
            Some(e) => {
                p.text(i, e);
                i = e;
            }
            None => {
                // Unterminated: the rest is kept exactly as it is.
                p.text(i, n);
                i = n;
            }
        }
    }
    Some(p)
}

/// Whether `b` holds U+0085, U+2028 or U+2029: line terminators in some languages (C#,
/// JavaScript), not in SQL as far as known.
fn unicode_line_break(b: &[u8]) -> bool {
    b.windows(2).any(|w| w == [0xc2, 0x85]) || b.windows(3).any(|w| matches!(w, [0xe2, 0x80, 0xa8 | 0xa9]))
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || from > b.len() {
        return None;
    }
    b[from..].windows(needle.len()).position(|w| w == needle).map(|k| from + k)
}

/// End (exclusive) of the nested block comment starting at `i`.
fn block_comment_end(b: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = i;
    while j + 1 < b.len() {
        match (b[j], b[j + 1]) {
            (b'/', b'*') => {
                depth += 1;
                j += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                j += 2;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => j += 1,
        }
    }
    None
}

/// End (exclusive) of a literal opened by `open` at `i`, closed by `close`, where a doubled
/// `close` is an escaped one. `Some(None)` when unterminated. `None` when a backslash precedes a
/// quote inside (`check_backslash`) in a way MySQL reads as an escape and T-SQL would not write
/// (see the module documentation): the two readings end the literal in different places.
fn quoted_end(b: &[u8], i: usize, open: u8, close: u8, check_backslash: bool) -> Option<Option<usize>> {
    debug_assert_eq!(b[i], open);
    let mut j = i + 1;
    while j < b.len() {
        if b[j] == close {
            let after = b.get(j + 1).copied();
            let mysql_escape = after.is_some_and(|a| a == close || a.is_ascii_alphanumeric() || a == b'_');
            if check_backslash && b[j - 1] == b'\\' && mysql_escape {
                return None;
            }
            if b.get(j + 1) == Some(&close) {
                j += 2;
                continue;
            }
            return Some(Some(j + 1));
        }
        j += 1;
    }
    Some(None)
}

/// End (exclusive) of a PostgreSQL `E'…'` string, where a backslash escapes the next byte.
fn backslash_string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'\'' if b.get(j + 1) == Some(&b'\'') => j += 2,
            b'\'' => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// When a PostgreSQL dollar-quote delimiter (`$$` or `$tag$`) starts at `i`, the index just
/// after it.
fn dollar_tag(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    if let Some(&first) = b.get(j)
        && (first.is_ascii_alphabetic() || first == b'_')
    {
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
    }
    (b.get(j) == Some(&b'$')).then_some(j + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> String {
        strip(text).into_owned()
    }

    #[test]
    fn drops_comments_indentation_and_blank_lines() {
        let input = "/* header\n   comment */\nCREATE TABLE dbo.T\n(\n    Id INT NOT NULL,   -- the key\n\n\n    Name NVARCHAR(10) NULL\n);\nGO\n";
        assert_eq!(s(input), "CREATE TABLE dbo.T\n(\nId INT NOT NULL,\nName NVARCHAR(10) NULL\n);\nGO");
    }

    #[test]
    fn literals_and_quoted_identifiers_are_untouched() {
        let input = "SELECT  'a  --  b', N'it''s  /* x */', [my   col], \"q  \"\"id\"\"\"  FROM t -- c";
        assert_eq!(s(input), "SELECT 'a  --  b', N'it''s  /* x */', [my   col], \"q  \"\"id\"\"\" FROM t");
        let multiline = "SELECT 'line 1\n\n    line 3'\n  FROM t";
        assert_eq!(s(multiline), "SELECT 'line 1\n\n    line 3'\nFROM t");
        assert_eq!(s("SELECT [a]]  b]  FROM x"), "SELECT [a]]  b] FROM x");
    }

    #[test]
    fn a_removed_comment_never_glues_tokens() {
        assert_eq!(s("SELECT a/*x*/FROM t"), "SELECT a FROM t");
        assert_eq!(s("SELECT 1 -/**/- 1"), "SELECT 1 - - 1");
        assert_eq!(s("SELECT 1--c\nFROM t"), "SELECT 1\nFROM t");
    }

    #[test]
    fn nested_comments_hints_and_dollar_quotes() {
        assert_eq!(s("SELECT 1 /* outer /* inner */ still comment */ + 2"), "SELECT 1 + 2");
        assert_eq!(s("SELECT /*+ INDEX(t ix) */  a FROM t"), "SELECT /*+ INDEX(t ix) */ a FROM t");
        assert_eq!(s("SELECT $tag$ -- not a comment\n $tag$;"), "SELECT $tag$ -- not a comment\n $tag$;");
        assert_eq!(s("SELECT E'a\\'  -- b'  -- c"), "SELECT E'a\\'  -- b'");
    }

    #[test]
    fn a_backslash_in_a_tsql_literal_is_an_ordinary_character() {
        // As in SQL Server maintenance scripts: directories end in a backslash.
        let input = "-- Backup directory\nSET @Directory = N'C:\\Backup\\'   -- default\n    IF RIGHT(@Directory, 1) = '\\' SET @Directory = LEFT(@Directory, LEN(@Directory) - 1)\n\n/* per instance */\nSET @Path = @Directory + '\\' + REPLACE(@@SERVERNAME, '\\', '$') + '\\'\nGO\n";
        assert_eq!(
            s(input),
            "SET @Directory = N'C:\\Backup\\'\nIF RIGHT(@Directory, 1) = '\\' SET @Directory = LEFT(@Directory, LEN(@Directory) - 1)\nSET @Path = @Directory + '\\' + REPLACE(@@SERVERNAME, '\\', '$') + '\\'\nGO"
        );
        // The same in double-quoted identifiers.
        assert_eq!(s("SELECT 1 AS \"a\\\"   -- c"), "SELECT 1 AS \"a\\\"");
    }

    #[test]
    fn dialect_ambiguity_leaves_the_text_alone() {
        let mysql = "SELECT 'it\\'s' -- c\n FROM t";
        assert!(matches!(strip(mysql), Cow::Borrowed(_)));
        let doubled = "SELECT '\\'' -- c\n, 'x'";
        assert!(matches!(strip(doubled), Cow::Borrowed(_)));
        let oracle = "SELECT q'[it's -- x]' FROM dual -- c";
        assert!(matches!(strip(oracle), Cow::Borrowed(_)));
        // An identifier ending in q is not Oracle quoting.
        assert_eq!(s("SELECT seq'x'  -- c"), "SELECT seq'x'");
    }

    #[test]
    fn unterminated_constructs_keep_the_rest_verbatim() {
        assert_eq!(s("SELECT  1 /* never   closed\n  x"), "SELECT 1 /* never   closed\n  x");
        assert_eq!(s("SELECT  'open   \n  x"), "SELECT 'open   \n  x");
    }

    /// Issue 26, item 2's class in SQL: where a `--` comment ends differs between readings (MySQL
    /// ends it at `\n` only; a dialect that ended it at U+0085, U+2028 or U+2029 would run the code
    /// after one): such a comment is kept as written to the `\n`, so every reading stays the same.
    #[test]
    fn a_line_comment_holding_another_line_terminator_is_kept() {
        assert_eq!(s("SELECT  1 -- c\r\nFROM t -- d\r\n"), "SELECT 1\nFROM t");
        let lone_cr = "SELECT  1 -- c\rDROP TABLE t\n  GO";
        assert!(matches!(strip(lone_cr), Cow::Borrowed(_)));
        for nl in ["\u{85}", "\u{2028}", "\u{2029}"] {
            let src = format!("SELECT  1 -- c{nl}DROP TABLE t\nGO");
            assert_eq!(s(&src), format!("SELECT 1 -- c{nl}DROP TABLE t\nGO"), "{nl:?}");
        }
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        assert!(matches!(strip("SELECT 1"), Cow::Borrowed(_)));
        assert_eq!(s(""), "");
        assert_eq!(s("  -- only a comment\n"), "");
    }
}
