//! [`NodeFrame`]: how a node is wrapped in the context. The default is the spec's `--- NODE ---`
//! header ([`format_node`](super::format_node)), byte for byte; a pipeline may set its own
//! template with `settings { node_frame: "…" }`.
//!
//! A template is text with placeholders `{id}`, `{path}`, `{language}`, `{compact}` and `{text}`;
//! `{{` and `}}` are literal braces. `{text}` must appear exactly once (a frame that drops the
//! text, or repeats it, is a mistake), and any other `{name}` is an error naming the closest
//! placeholder. Placeholder values other than the text have their control characters escaped
//! (`\n`), as in the default header, so a node cannot forge another node's frame; `{path}` is
//! empty when the node has none. Budgets count the framed text, whatever the frame: every count
//! `manage_context_budget` makes is of the rendered context, and the compile-time check of the
//! evidence budget counts this frame's own text, `top_k` times, with the model's tokenizer
//! (`frame_tokens`, `check_evidence_budget`), never an assumed size. The
//! offline model (`llm::offline`) recognises nodes by the default header only; with another
//! frame it reads the context as plain text and cites no node ids.

use std::fmt;

use crate::state::NodeText;

use super::format::{format_node_as, push_header_value};

/// The placeholders a template may use.
pub const FRAME_PLACEHOLDERS: [&str; 5] = ["id", "path", "language", "compact", "text"];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Id,
    Path,
    Language,
    Compact,
    Text,
}

/// How nodes are wrapped before they join the context.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct NodeFrame {
    /// `None`: the spec's `--- NODE ---` header.
    parts: Option<Vec<Part>>,
    template: Option<String>,
}

impl fmt::Debug for NodeFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.template {
            None => f.write_str("NodeFrame(--- NODE ---)"),
            Some(t) => write!(f, "NodeFrame({t:?})"),
        }
    }
}

/// Why a frame template is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// No `{text}`.
    #[error("the node frame has no `{{text}}`: the node's text would not be in the context")]
    MissingText,
    /// `{text}` more than once.
    #[error("the node frame has `{{text}}` {0} times: each node's text would be in the context {0} times")]
    RepeatedText(usize),
    /// `{name}` is not a placeholder.
    #[error("unknown placeholder `{{{name}}}` in the node frame{}", suggestion.map(|s| format!("; did you mean `{{{s}}}`?")).unwrap_or_default())]
    UnknownPlaceholder {
        /// The name written.
        name: String,
        /// The closest placeholder.
        suggestion: Option<&'static str>,
    },
    /// A `{` without its `}` or a lone `}`.
    #[error("unbalanced brace in the node frame at byte {0}; write `{{{{` or `}}}}` for a literal brace")]
    Unbalanced(usize),
}

impl NodeFrame {
    /// The spec's `--- NODE ---` header.
    pub fn spec() -> Self {
        Self::default()
    }

    /// A frame from a template (see the module documentation).
    ///
    /// ```
    /// use ctx::budget::NodeFrame;
    /// use ctx::state::NodeText;
    ///
    /// let frame = NodeFrame::parse("<doc id=\"{id}\" path=\"{path}\">\n{text}\n</doc>")?;
    /// let node = NodeText::new("a", "body").with_path("a.md");
    /// assert_eq!(frame.render(&node, "markdown", false, "body"), "<doc id=\"a\" path=\"a.md\">\nbody\n</doc>");
    /// assert!(NodeFrame::parse("{id}: {txt}").is_err());
    /// # Ok::<(), ctx::budget::FrameError>(())
    /// ```
    pub fn parse(template: &str) -> Result<Self, FrameError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let bytes = template.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'{' if bytes.get(i + 1) == Some(&b'{') => {
                    literal.push('{');
                    i += 2;
                }
                b'}' if bytes.get(i + 1) == Some(&b'}') => {
                    literal.push('}');
                    i += 2;
                }
                b'{' => {
                    let close = template[i..].find('}').ok_or(FrameError::Unbalanced(i))?;
                    let name = &template[i + 1..i + close];
                    let part = match name {
                        "id" => Part::Id,
                        "path" => Part::Path,
                        "language" => Part::Language,
                        "compact" => Part::Compact,
                        "text" => Part::Text,
                        other => {
                            let suggestion = crate::validation::did_you_mean_by(
                                other,
                                FRAME_PLACEHOLDERS,
                                crate::validation::Likeness::Typo,
                            );
                            return Err(FrameError::UnknownPlaceholder { name: other.to_owned(), suggestion });
                        }
                    };
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(part);
                    i += close + 1;
                }
                b'}' => return Err(FrameError::Unbalanced(i)),
                _ => {
                    // Copy one whole character.
                    let len = template[i..].chars().next().map_or(1, char::len_utf8);
                    literal.push_str(&template[i..i + len]);
                    i += len;
                }
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        match parts.iter().filter(|p| **p == Part::Text).count() {
            0 => Err(FrameError::MissingText),
            1 => Ok(NodeFrame { parts: Some(parts), template: Some(template.to_owned()) }),
            n => Err(FrameError::RepeatedText(n)),
        }
    }

    /// The template, or `None` for the spec's header.
    pub fn template(&self) -> Option<&str> {
        self.template.as_deref()
    }

    /// `text` (the node's text, possibly compacted) in this frame.
    pub fn render(&self, node: &NodeText, language: &str, compact: bool, text: &str) -> String {
        let Some(parts) = &self.parts else {
            return format_node_as(node, language, compact, text);
        };
        let mut out = String::with_capacity(text.len() + 64);
        for part in parts {
            match part {
                Part::Literal(s) => out.push_str(s),
                Part::Id => push_header_value(&mut out, &node.id),
                Part::Path => push_header_value(&mut out, node.source().unwrap_or("")),
                Part::Language => push_header_value(&mut out, language),
                Part::Compact => out.push_str(if compact { "true" } else { "false" }),
                Part::Text => out.push_str(text),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_checked_and_rendered() {
        let node = NodeText::new("a\nb", "t").with_path("x.md");
        let f = NodeFrame::parse("{{{id}}} [{language}/{compact}] {path}\n{text}").unwrap();
        assert_eq!(f.render(&node, "markdown", true, "T"), "{a\\nb} [markdown/true] x.md\nT");
        assert_eq!(NodeFrame::parse("{id}"), Err(FrameError::MissingText));
        assert_eq!(NodeFrame::parse("{text}{text}"), Err(FrameError::RepeatedText(2)));
        assert_eq!(
            NodeFrame::parse("{txt}").unwrap_err().to_string(),
            "unknown placeholder `{txt}` in the node frame; did you mean `{text}`?"
        );
        assert_eq!(NodeFrame::parse("{text} {oops"), Err(FrameError::Unbalanced(7)));
        assert_eq!(NodeFrame::parse("{text} }"), Err(FrameError::Unbalanced(7)));
        let spec = NodeFrame::spec();
        assert_eq!(spec.render(&node, "sql", false, "T"), format_node_as(&node, "sql", false, "T"));
        assert_eq!(spec.template(), None);
    }
}
