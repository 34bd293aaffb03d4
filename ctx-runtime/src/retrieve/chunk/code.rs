//! Code by top-level items.
//!
//! The rule, deliberately simple and language-agnostic so that it is predictable:
//! * a line **starts an item** when it begins at column 0 (no indentation) and its first word,
//!   after any modifiers ([`MODIFIERS`]: `pub`, `pub(crate)`, `export`, `async`, `public`,
//!   `static`, …), is one of [`ITEM_WORDS`] (compared without regard to ASCII case, so SQL's
//!   `CREATE PROCEDURE` and `create procedure` both count);
//! * the comment, doc-comment, attribute and decorator lines directly above it (column-0 lines
//!   starting with `//`, `/*`, ` *`, `--`, `#[`, `#!`, `@`, `[`, or `#` followed by a space in
//!   Python) belong to the item: the cut moves up to the first of them;
//! * the pieces between cuts are merged, in order, while the merged text fits the size; a piece
//!   larger than the size is cut at line ends, and a line larger than the size at tokens.
//!
//! Nested items (methods inside a class) are not cut points: a class that fits is one chunk.

use super::chunker::{ChunkError, Chunker, Piece, line_starts, pack};

/// Words that start a top-level item.
pub const ITEM_WORDS: &[&str] = &[
    // Rust
    "fn",
    "struct",
    "enum",
    "impl",
    "trait",
    "mod",
    "type",
    "const",
    "static",
    "union",
    "macro_rules!",
    // C#, Java, Kotlin, TypeScript
    "class",
    "interface",
    "record",
    "namespace",
    "delegate",
    "object",
    "fun",
    // Python, JavaScript, Go
    "def",
    "function",
    "func",
    "var",
    "let",
    // SQL (batch separator `GO` included: it ends a T-SQL batch)
    "create",
    "alter",
    "drop",
    "go",
    "declare",
    "insert",
    "update",
    "delete",
    "select",
    "with",
    "merge",
];

/// Words skipped before the item word.
pub const MODIFIERS: &[&str] = &[
    "pub",
    "pub(crate)",
    "pub(super)",
    "export",
    "default",
    "async",
    "unsafe",
    "extern",
    "public",
    "private",
    "protected",
    "internal",
    "abstract",
    "sealed",
    "partial",
    "static",
    "readonly",
    "final",
    "data",
    "open",
];

/// Whether `line` starts a top-level item.
pub fn starts_item(line: &str) -> bool {
    if line.starts_with([' ', '\t']) {
        return false;
    }
    for word in line.split_whitespace() {
        let lower = word.to_ascii_lowercase();
        if MODIFIERS.contains(&lower.as_str()) {
            continue;
        }
        let head = lower.split(['(', '{', '<', ';', ':']).next().unwrap_or("");
        return ITEM_WORDS.contains(&head) || ITEM_WORDS.contains(&lower.as_str());
    }
    false
}

/// Whether `line` is a comment, attribute or decorator that belongs to the item below it.
fn is_preamble(line: &str) -> bool {
    ["//", "/*", " *", "--", "#[", "#!", "@", "[", "# "].iter().any(|p| line.starts_with(p))
}

pub(super) fn pieces(chunker: &Chunker, text: &str) -> Result<Vec<Piece>, ChunkError> {
    let lines = line_starts(text, 0, text.len());
    let line = |i: usize| {
        let end = lines.get(i + 1).copied().unwrap_or(text.len());
        &text[lines[i]..end]
    };
    let mut bounds = vec![0];
    for i in 0..lines.len() {
        if i == 0 || !starts_item(line(i)) {
            continue;
        }
        let mut cut = i;
        while cut > 0 && is_preamble(line(cut - 1)) && !starts_item(line(cut - 1)) {
            cut -= 1;
        }
        let at = lines[cut];
        if at > *bounds.last().unwrap_or(&0) {
            bounds.push(at);
        }
    }
    bounds.push(text.len());
    let mut pieces = pack(chunker, text, &bounds, &mut |s, e| {
        let mut line_bounds = line_starts(text, s, e);
        line_bounds.push(e);
        pack(chunker, text, &line_bounds, &mut |ls, le| chunker.windows(text, ls, le, 0))
    })?;
    for piece in &mut pieces {
        let first = text[piece.start..piece.end].lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let title: String = first.trim().chars().take(80).collect();
        piece.title = (!title.is_empty()).then_some(title);
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_starts() {
        for yes in [
            "fn main() {",
            "pub(crate) async fn run(",
            "pub struct A;",
            "impl<T> Foo for T {",
            "CREATE PROCEDURE dbo.usp_X AS",
            "create or replace function f()",
            "GO",
            "public sealed class OrderService",
            "def handler(event):",
            "export default function App() {",
            "class Money:",
        ] {
            assert!(starts_item(yes), "{yes}");
        }
        for no in ["    fn inner() {", "let_me = 3", "}", "", "// fn commented", "return x;", "\tdef f():"] {
            assert!(!starts_item(no), "{no}");
        }
    }
}
