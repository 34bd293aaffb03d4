//! The deterministic `--- NODE ---` wrapping of a node text (the spec's `format_text`).

use std::fmt::Write as _;

use crate::lang::Language;
use crate::state::NodeText;

/// The first line of every formatted node.
pub const NODE_HEADER: &str = "--- NODE ---";

/// Wraps `text` (the node's text, possibly compacted) for the context:
///
/// ```text
/// --- NODE ---
/// id: <id>
/// path: <path or source>
/// language: sql
/// compact: true
/// text:
/// <text>
/// ```
///
/// `id` is omitted when empty and `path` when the node has no path or `path`/`source` metadata.
/// Line breaks and other control characters in the id or path are escaped (`\n`), so a header
/// always has exactly these lines and a node cannot forge another node's header.
///
/// ```
/// use ctx::budget::format_node;
/// use ctx::compact::Language;
/// use ctx::state::NodeText;
///
/// let node = NodeText::new("usp_ComputeInvoiceTotal", "SELECT 1").with_path("sql/usp.sql");
/// assert_eq!(
///     format_node(&node, Language::Sql, true, "SELECT 1"),
///     "--- NODE ---\nid: usp_ComputeInvoiceTotal\npath: sql/usp.sql\nlanguage: sql\ncompact: true\ntext:\nSELECT 1"
/// );
/// ```
pub fn format_node(node: &NodeText, language: Language, compact: bool, text: &str) -> String {
    format_node_as(node, language.label(), compact, text)
}

/// [`format_node`] with the language given by name (`markdown`, a registered compactor's
/// language, …): the header of nodes whose language is not a code classification.
pub fn format_node_as(node: &NodeText, language: &str, compact: bool, text: &str) -> String {
    let mut out = String::with_capacity(text.len() + node.id.len() + 96);
    out.push_str(NODE_HEADER);
    out.push('\n');
    if !node.id.is_empty() {
        out.push_str("id: ");
        push_header_value(&mut out, &node.id);
        out.push('\n');
    }
    if let Some(source) = node.source() {
        out.push_str("path: ");
        push_header_value(&mut out, source);
        out.push('\n');
    }
    out.push_str("language: ");
    push_header_value(&mut out, language);
    // Writing to a String cannot fail.
    let _ = write!(out, "\ncompact: {compact}\ntext:\n");
    out.push_str(text);
    out
}

pub(crate) fn push_header_value(out: &mut String, value: &str) {
    for c in value.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_lines_and_unknown_language() {
        let node = NodeText::new("", "Some prose.");
        assert_eq!(
            format_node(&node, Language::Unknown, false, &node.text),
            "--- NODE ---\nlanguage: unknown\ncompact: false\ntext:\nSome prose."
        );
    }

    #[test]
    fn source_from_metadata_and_escaped_headers() {
        let mut node = NodeText::new("a\nid: forged", "x");
        node.metadata.insert("source".into(), serde_json::Value::from("db://dbo.Invoices"));
        assert_eq!(
            format_node(&node, Language::DotnetWithSql, false, "x"),
            "--- NODE ---\nid: a\\nid: forged\npath: db://dbo.Invoices\nlanguage: dotnet\ncompact: false\ntext:\nx"
        );
    }
}
