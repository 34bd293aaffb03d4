//! Reading a request the way the offline model needs it: the question, and the context as
//! lines, each attributed to the `--- NODE ---` block (and so the node id) it comes from.
//!
//! Conventions (those of ctx's prompts; see `manage_context_budget`'s node format):
//! - the question is the text under the last heading of the last user message that names the
//!   user or a question (`### User:`, `## Question:`), up to the next heading; without such a
//!   heading it is the last user message's text outside node blocks;
//! - the context is every line of the user and tool messages except headings and the question:
//!   a `--- NODE ---` line opens a block whose header lines (`id:`, `path:`, `language:`,
//!   `compact:`) end at `text:`; the body runs to the next `--- NODE ---` or heading of the
//!   question (a blank line does not end it: node texts contain blank lines); lines outside
//!   blocks are context without a node id — except, when the last user message has no question
//!   heading, its lines outside blocks, which are the question;
//! - a `<document id="…">` … `</document>` block of a tool result (the turn ledger's document
//!   format) is a node block with that id.
//!
//! System and assistant messages are not context: instructions and earlier answers are not
//! evidence to quote.

use crate::chat::{ChatMessage, Role};

/// The line that opens a node block (the one `manage_context_budget` writes).
pub(crate) use crate::budget::NODE_HEADER as NODE_MARKER;

/// The node a context line belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NodeInfo {
    pub(crate) id: Option<String>,
    pub(crate) path: Option<String>,
}

/// One line of context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContextLine {
    /// Index into [`ParsedRequest::nodes`]; `None` for a line outside node blocks.
    pub(crate) node: Option<usize>,
    /// The line, without its line ending.
    pub(crate) text: String,
}

/// The question and the context of a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ParsedRequest {
    pub(crate) question: String,
    pub(crate) nodes: Vec<NodeInfo>,
    /// Non-blank context lines, in the order they appear.
    pub(crate) lines: Vec<ContextLine>,
}

/// `Some(title)` for a markdown heading line (`#`s, a space, a title).
fn heading(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    let rest = trimmed.trim_start_matches('#');
    let hashes = trimmed.len() - rest.len();
    ((1..=6).contains(&hashes) && rest.starts_with(' ')).then(|| rest.trim())
}

/// Whether a heading title introduces the question.
fn is_question_heading(title: &str) -> bool {
    let title = title.trim_end_matches(':').trim().to_lowercase();
    title.starts_with("user") || title.starts_with("question")
}

/// Where the question of `text` is: the line range under its last question heading.
fn question_range(lines: &[&str]) -> Option<(usize, usize)> {
    let start = lines.iter().rposition(|l| heading(l).is_some_and(is_question_heading))?;
    let end =
        lines.iter().enumerate().skip(start + 1).find(|(_, l)| heading(l).is_some()).map_or(lines.len(), |(i, _)| i);
    Some((start, end))
}

impl ParsedRequest {
    /// Parses the messages of a request.
    pub(crate) fn parse(messages: &[ChatMessage]) -> Self {
        let mut parsed = ParsedRequest::default();
        let last_user = messages.iter().rposition(|m| m.role == Role::User);
        let mut loose_question = Vec::new();
        for (index, message) in messages.iter().enumerate() {
            if !matches!(message.role, Role::User | Role::Tool) {
                continue;
            }
            let lines: Vec<&str> = message.content.lines().collect();
            let is_last_user = Some(index) == last_user;
            let question = if is_last_user { question_range(&lines) } else { None };
            if let Some((start, end)) = question {
                parsed.question = lines.get(start + 1..end).unwrap_or_default().join("\n").trim().to_owned();
            }
            let mut current: Option<usize> = None;
            let mut in_header = false;
            for (i, line) in lines.iter().enumerate() {
                if question.is_some_and(|(start, end)| i >= start && i < end) {
                    current = None;
                    continue;
                }
                // The blocks of a packed tool result (`turn::DocumentFormat`'s default template).
                if let Some(id) = line.trim().strip_prefix("<document id=\"").and_then(|r| r.strip_suffix("\">")) {
                    parsed.nodes.push(NodeInfo { id: Some(id.to_owned()), path: None });
                    current = Some(parsed.nodes.len() - 1);
                    in_header = false;
                    continue;
                }
                if line.trim() == "</document>" {
                    current = None;
                    continue;
                }
                if line.trim() == NODE_MARKER {
                    parsed.nodes.push(NodeInfo::default());
                    current = Some(parsed.nodes.len() - 1);
                    in_header = true;
                    continue;
                }
                if in_header && let Some(node) = current.and_then(|n| parsed.nodes.get_mut(n)) {
                    let trimmed = line.trim();
                    if trimmed == "text:" {
                        in_header = false;
                        continue;
                    }
                    if let Some(id) = trimmed.strip_prefix("id:") {
                        node.id = Some(id.trim().to_owned());
                        continue;
                    }
                    if let Some(path) = trimmed.strip_prefix("path:").or_else(|| trimmed.strip_prefix("source:")) {
                        node.path = Some(path.trim().to_owned());
                        continue;
                    }
                    if trimmed.starts_with("language:") || trimmed.starts_with("compact:") || trimmed.is_empty() {
                        continue;
                    }
                    // A header without `text:`: the body starts here.
                    in_header = false;
                }
                if current.is_none() && heading(line).is_some() {
                    continue;
                }
                if line.trim().is_empty() {
                    continue;
                }
                if current.is_none() && is_last_user && question.is_none() {
                    loose_question.push(*line);
                    continue;
                }
                parsed.lines.push(ContextLine { node: current, text: (*line).to_owned() });
            }
        }
        if parsed.question.is_empty() {
            parsed.question = loose_question.join("\n").trim().to_owned();
        }
        parsed
    }

    /// The node of a line.
    pub(crate) fn node_of(&self, line: &ContextLine) -> Option<&NodeInfo> {
        line.node.and_then(|n| self.nodes.get(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, text: &str) -> String {
        format!("{NODE_MARKER}\nid: {id}\npath: src/{id}\nlanguage: sql\ncompact: false\ntext:\n{text}")
    }

    #[test]
    fn context_and_question_under_headings() {
        let user = format!(
            "### Context:\n{}\n\n{}\n\n### User:\nWhich procedure sums orders?\n",
            node("a.sql", "CREATE PROCEDURE usp_Sum\n\nAS SELECT SUM(x)"),
            node("b.cs", "class B {}")
        );
        let parsed = ParsedRequest::parse(&[ChatMessage::system("Answer."), ChatMessage::user(user)]);
        assert_eq!(parsed.question, "Which procedure sums orders?");
        let ids: Vec<Option<&str>> = parsed.nodes.iter().map(|n| n.id.as_deref()).collect();
        assert_eq!(ids, [Some("a.sql"), Some("b.cs")]);
        assert_eq!(parsed.nodes[0].path.as_deref(), Some("src/a.sql"));
        let lines: Vec<(Option<usize>, &str)> = parsed.lines.iter().map(|l| (l.node, l.text.as_str())).collect();
        assert_eq!(
            lines,
            [(Some(0), "CREATE PROCEDURE usp_Sum"), (Some(0), "AS SELECT SUM(x)"), (Some(1), "class B {}")]
        );
    }

    #[test]
    fn without_headings_loose_text_of_the_last_user_message_is_the_question() {
        let messages = [
            ChatMessage::user("earlier note about totals"),
            ChatMessage::tool_result("c1", node("t.sql", "SELECT total FROM t")),
            ChatMessage::assistant("an earlier answer"),
            ChatMessage::user(format!("What is the total?\n{}", node("u.sql", "SELECT 1\nfooter line"))),
        ];
        let parsed = ParsedRequest::parse(&messages);
        assert_eq!(parsed.question, "What is the total?");
        let texts: Vec<&str> = parsed.lines.iter().map(|l| l.text.as_str()).collect();
        // Text after a node's `text:` belongs to that node up to the next marker or question heading.
        assert_eq!(texts, ["earlier note about totals", "SELECT total FROM t", "SELECT 1", "footer line"]);
        assert_eq!(parsed.lines[0].node, None);
        assert_eq!(parsed.node_of(&parsed.lines[3]).and_then(|n| n.id.as_deref()), Some("u.sql"));
    }

    #[test]
    fn headings_are_recognised_strictly() {
        assert_eq!(heading("### User:"), Some("User:"));
        assert_eq!(heading("#hashtag"), None);
        assert_eq!(heading("####### seven"), None);
        assert!(is_question_heading("Question"));
        assert!(!is_question_heading("Context:"));
    }
}
