//! A YAML document as a tree of located nodes, built from saphyr-parser's events.
//!
//! Only what a pipeline file needs: scalars (with whether they were quoted), sequences and
//! mappings in written order, aliases expanded. Nesting depth and the node count (aliases can
//! multiply it) are bounded, so no input can exhaust the stack or the memory.

use std::collections::HashMap;
use std::path::Path;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use super::error::{Location, YamlIssue};

use crate::codes::Code;

/// The deepest nesting accepted; a pipeline file needs about six levels.
pub(crate) const MAX_DEPTH: usize = 64;
/// The most nodes one document may expand to (aliases included).
pub(crate) const MAX_NODES: usize = 100_000;

/// One located YAML value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub value: Value,
    pub at: Location,
}

/// What a node holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A scalar's text, and whether it was plain (unquoted, not a block): only plain scalars
    /// are numbers, booleans or null.
    Scalar {
        text: String,
        plain: bool,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The node's kind, for "expected …, found …" messages.
    pub(crate) fn describe(&self) -> &'static str {
        match &self.value {
            Value::Scalar { plain: true, text } if is_null(text) => "null",
            Value::Scalar { plain: true, text } if parse_bool(text).is_some() => "a boolean",
            Value::Scalar { plain: true, text } if text.parse::<i64>().is_ok() => "an integer",
            Value::Scalar { plain: true, text } if text.parse::<f64>().is_ok() => "a number",
            Value::Scalar { .. } => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// Whether the node is a plain `null`, `~` or empty scalar.
    pub(crate) fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar { text, plain: true } if is_null(text))
    }

    /// The text of a scalar that is not null.
    pub(crate) fn as_text(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, plain } if !(*plain && is_null(text)) => Some(text),
            _ => None,
        }
    }

    /// A plain integer scalar.
    pub(crate) fn as_int(&self) -> Option<i64> {
        match &self.value {
            Value::Scalar { text, plain: true } => text.parse().ok(),
            _ => None,
        }
    }

    /// A plain number scalar (integer or not).
    pub(crate) fn as_number(&self) -> Option<f64> {
        match &self.value {
            Value::Scalar { text, plain: true } => text.parse::<f64>().ok().filter(|n| n.is_finite()),
            _ => None,
        }
    }

    /// A plain `true` or `false`.
    pub(crate) fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Scalar { text, plain: true } => parse_bool(text),
            _ => None,
        }
    }

    /// The entries of a mapping.
    pub(crate) fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// The items of a sequence.
    pub(crate) fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// The value of `key` in a mapping whose keys are scalars.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?.iter().find(|(k, _)| k.as_text() == Some(key)).map(|(_, v)| v)
    }
}

fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// A collection being built.
enum Frame {
    Seq { items: Vec<Node>, at: Location, anchor: usize },
    Map { entries: Vec<(Node, Node)>, key: Option<Node>, at: Location, anchor: usize },
}

/// Parses `text`, read from `file`, into its one document (an empty file is a null scalar). A
/// syntax error, a second document, too deep a nesting or too many nodes is one issue.
pub(crate) fn parse(text: &str, file: &Path) -> Result<Node, YamlIssue> {
    let loc = |span: &Span| Location::new(file, span.start.line(), span.start.col() + 1);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut root: Option<Node> = None;
    let mut documents = 0usize;
    let mut nodes = 0usize;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| {
            let m = e.marker();
            let message = format!("YAML syntax error: {}", e.info());
            // The scanner meets a tab that indents a line while still reading the line before
            // it, and reports there: point at the tab itself.
            if e.info().contains("tab")
                && let Some((line, column)) = tab_in_indentation(text, m.line())
            {
                return YamlIssue::new(&Location::new(file, line, column), Code::YamlSyntax, message)
                    .with_help("indent with spaces: YAML does not allow tabs in indentation");
            }
            YamlIssue::new(&Location::new(file, m.line(), m.col() + 1), Code::YamlSyntax, message)
        })?;
        let at = loc(&span);
        let done = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(YamlIssue::new(
                        &at,
                        Code::YamlMultipleDocuments,
                        "a pipeline file holds one YAML document",
                    )
                    .with_help("remove the `---` and everything after it, or split the file"));
                }
                None
            }
            Event::Scalar(value, style, anchor, _) => {
                let node =
                    Node { value: Value::Scalar { text: value.into_owned(), plain: style == ScalarStyle::Plain }, at };
                if anchor > 0 {
                    anchors.insert(anchor, node.clone());
                }
                nodes += 1;
                Some(node)
            }
            Event::Alias(id) => {
                let Some(node) = anchors.get(&id) else {
                    return Err(YamlIssue::new(&at, Code::YamlSyntax, "YAML syntax error: alias to an unknown anchor"));
                };
                nodes += count(node);
                Some(node.clone())
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(YamlIssue::new(
                        &at,
                        Code::YamlTooDeep,
                        format!("the YAML nests deeper than {MAX_DEPTH} levels"),
                    ));
                }
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq { items: Vec::new(), at, anchor }
                } else {
                    Frame::Map { entries: Vec::new(), key: None, at, anchor }
                });
                nodes += 1;
                None
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match stack.pop() {
                    Some(Frame::Seq { items, at, anchor }) => (Node { value: Value::Seq(items), at }, anchor),
                    Some(Frame::Map { entries, at, anchor, .. }) => (Node { value: Value::Map(entries), at }, anchor),
                    None => continue,
                };
                if anchor > 0 {
                    anchors.insert(anchor, node.clone());
                }
                Some(node)
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => None,
        };
        if nodes > MAX_NODES {
            return Err(YamlIssue::new(
                &loc(&span),
                Code::YamlTooLarge,
                format!("the YAML expands to more than {MAX_NODES} values"),
            ));
        }
        if let Some(node) = done {
            match stack.last_mut() {
                Some(Frame::Seq { items, .. }) => items.push(node),
                Some(Frame::Map { entries, key, .. }) => match key.take() {
                    Some(k) => entries.push((k, node)),
                    None => *key = Some(node),
                },
                None => root = Some(node),
            }
        }
    }
    Ok(root
        .unwrap_or(Node { value: Value::Scalar { text: String::new(), plain: true }, at: Location::new(file, 1, 1) }))
}

/// The first tab in the indentation of a line from `from_line` (1-based) on, as (line, column).
fn tab_in_indentation(text: &str, from_line: usize) -> Option<(usize, usize)> {
    text.lines().enumerate().skip(from_line.saturating_sub(1)).find_map(|(i, line)| {
        let indent = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
        indent.find('\t').map(|col| (i + 1, col + 1))
    })
}

fn count(node: &Node) -> usize {
    match &node.value {
        Value::Scalar { .. } => 1,
        Value::Seq(items) => 1 + items.iter().map(count).sum::<usize>(),
        Value::Map(entries) => 1 + entries.iter().map(|(k, v)| count(k) + count(v)).sum::<usize>(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Node, YamlIssue> {
        parse(text, Path::new("t.yaml"))
    }

    #[test]
    fn nodes_keep_their_line_and_column() {
        let root = p("a: 1\nb:\n  - x: \"2\"\n    y: [true, ~]\n").unwrap();
        assert_eq!((root.at.line, root.at.column), (1, 1));
        let a = root.get("a").unwrap();
        assert_eq!((a.at.line, a.at.column, a.as_int()), (1, 4, Some(1)));
        let item = &root.get("b").unwrap().as_seq().unwrap()[0];
        let x = item.get("x").unwrap();
        assert_eq!((x.at.line, x.at.column, x.as_int(), x.as_text()), (3, 8, None, Some("2")));
        let y = item.get("y").unwrap().as_seq().unwrap();
        assert_eq!((y[0].as_bool(), y[1].is_null(), y[1].at.column), (Some(true), true, 15));
    }

    #[test]
    fn syntax_errors_depth_and_alias_bombs_are_issues() {
        let e = p("a: [1, 2\nb: 3\n").unwrap_err();
        assert_eq!(e.code.as_str(), "YAML_SYNTAX");
        assert!(e.line >= 1, "{e}");
        assert_eq!(p(&"[".repeat(200)).unwrap_err().code, "YAML_TOO_DEEP");
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 0..8 {
            bomb.push_str(&format!(
                "b{i}: &b{i} [*{}, *{0}, *{0}, *{0}, *{0}, *{0}, *{0}, *{0}, *{0}, *{0}]\n",
                if i == 0 { "a".to_owned() } else { format!("b{}", i - 1) }
            ));
        }
        assert_eq!(p(&bomb).unwrap_err().code, "YAML_TOO_LARGE");
        assert_eq!(p("a: 1\n---\nb: 2\n").unwrap_err().code, "YAML_MULTIPLE_DOCUMENTS");
        assert!(p("").unwrap().is_null());
    }

    /// Issue 26 item 12: a tab indenting a line is reported on that line, not the one before.
    #[test]
    fn a_tab_in_indentation_is_reported_on_its_own_line() {
        for text in ["a:\n  b: 1\n\tc: 2\n", "steps:\n- id: x\n\taction: y\n", "a:\n\tb: 1\n"] {
            let e = p(text).unwrap_err();
            let tab_line = text.lines().position(|l| l.starts_with('\t')).unwrap() + 1;
            assert_eq!((e.code.as_str(), e.line, e.column), ("YAML_SYNTAX", tab_line, 1), "{text:?}: {e}");
            assert!(e.help.as_deref().unwrap_or_default().contains("spaces"), "{e}");
        }
    }
}
