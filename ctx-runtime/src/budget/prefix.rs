//! The context rendered so far, and the exact token count a threshold check needs.
//!
//! A `threshold` rule compares the count of the context rendered with the raw candidate appended
//! against its trigger, once per node. Counting that whole string each time is quadratic in the
//! batch (a thousand nodes over half a million tokens: tens of seconds). The rendered prefix is
//! instead kept as a [`CountedText`] of the blocks so far *followed by the separator* — the very
//! text the next block is appended to — so the count with a candidate appended costs the
//! candidate and the last pieces before it ([`CountedText::tokens_with`]), and pushing a block
//! costs that block. It is exact whatever the blocks hold: a block starting with spaces, `/` or a
//! combining mark merges pieces across the separator, and the incremental count re-splits from
//! the last piece such a join can change. Backends that cannot count incrementally (a remote
//! tokenizer, a model's own files) recount the whole text, as they would without it.

use crate::state::CONTEXT_BLOCK_SEPARATOR;
use crate::tokens::{CountedText, TokenCounter, TokenError};

/// The text a next block is appended to.
enum Open {
    /// Counted as it grows (threshold rules will ask).
    Counted(Box<CountedText>),
    /// Not counted: no rule asks.
    Plain(String),
}

/// `context_blocks` rendered so far, grown one block at a time exactly as
/// [`render_context_blocks`](crate::state::render_context_blocks) joins them.
pub(crate) struct Prefix<'c> {
    /// The blocks joined by the separator, then the separator once there is a block.
    open: Open,
    blocks: usize,
    counter: &'c TokenCounter,
}

impl<'c> Prefix<'c> {
    /// The prefix made of `blocks` blocks already rendered to `text`. `counted`: whether
    /// [`Prefix::exceeds_with`] will be asked (without threshold rules, blocks are not counted).
    pub(crate) fn new(
        mut text: String,
        blocks: usize,
        counter: &'c TokenCounter,
        counted: bool,
    ) -> Result<Self, TokenError> {
        if blocks > 0 {
            text.push_str(CONTEXT_BLOCK_SEPARATOR);
        }
        let open =
            if counted { Open::Counted(Box::new(CountedText::with_text(counter, text)?)) } else { Open::Plain(text) };
        Ok(Prefix { open, blocks, counter })
    }

    fn open_text(&self) -> &str {
        match &self.open {
            Open::Counted(counted) => counted.as_str(),
            Open::Plain(text) => text,
        }
    }

    /// The rendered text.
    pub(crate) fn text(&self) -> &str {
        let open = self.open_text();
        let separator = if self.blocks > 0 { CONTEXT_BLOCK_SEPARATOR.len() } else { 0 };
        &open[..open.len() - separator]
    }

    /// Appends a block. On error the prefix is unchanged.
    pub(crate) fn push(&mut self, block: &str) -> Result<(), TokenError> {
        match &mut self.open {
            // One append, so that a failed count leaves the text as it was.
            Open::Counted(counted) => {
                counted.push_str(&format!("{block}{CONTEXT_BLOCK_SEPARATOR}"))?;
            }
            Open::Plain(text) => {
                text.push_str(block);
                text.push_str(CONTEXT_BLOCK_SEPARATOR);
            }
        }
        self.blocks += 1;
        Ok(())
    }

    /// Whether the prefix with `block` appended has more than `limit` tokens.
    pub(crate) fn exceeds_with(&mut self, block: &str, limit: usize) -> Result<bool, TokenError> {
        match &mut self.open {
            Open::Counted(counted) => Ok(counted.tokens_with(block)? > limit),
            Open::Plain(text) => Ok(!self.counter.fits(&format!("{text}{block}"), limit)?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::render_context_blocks;
    use crate::tokens::Encoding;

    #[test]
    fn incremental_rendering_matches_the_renderer() {
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        for counted in [true, false] {
            for blocks in [vec![], vec![String::new()], vec!["a".to_owned(), String::new(), " b\n".to_owned()]] {
                let mut p = Prefix::new(String::new(), 0, &counter, counted).unwrap();
                for b in &blocks {
                    p.push(b).unwrap();
                }
                assert_eq!(p.text(), render_context_blocks(&blocks));
                let mut extended = blocks.clone();
                extended.push("x".into());
                let n = counter.count(&render_context_blocks(&extended)).unwrap();
                assert!(p.exceeds_with("x", n - 1).unwrap() && !p.exceeds_with("x", n).unwrap());
                assert_eq!(p.text(), render_context_blocks(&blocks));
            }
        }
    }

    #[test]
    fn the_count_is_exact_through_unclean_blocks() {
        for encoding in Encoding::ALL {
            let counter = TokenCounter::for_encoding(encoding);
            let existing = vec!["Summary:\n\n  indented  ".to_owned(), "x/".to_owned()];
            let mut p = Prefix::new(render_context_blocks(&existing), existing.len(), &counter, true).unwrap();
            let mut all = existing.clone();
            for block in ["/divider", "   spaced", "", "--- NODE ---\ntext:\n1 2 3", "\u{300}mark"] {
                p.push(block).unwrap();
                all.push(block.to_owned());
                let node = "--- NODE ---\nid: n\ntext:\nSELECT 1";
                let mut candidate = all.clone();
                candidate.push(node.to_owned());
                let n = counter.count(&render_context_blocks(&candidate)).unwrap();
                assert!(p.exceeds_with(node, n - 1).unwrap() && !p.exceeds_with(node, n).unwrap(), "{block:?}");
            }
        }
    }
}
