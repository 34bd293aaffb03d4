//! The context rendered so far, and the exact token count a threshold check needs.
//!
//! A `threshold` rule compares the count of the context rendered with the raw candidate appended
//! against its trigger, once per node. Counting that whole string each time is quadratic in the
//! batch (a thousand nodes over half a million tokens: tens of seconds). For the tokenizers ctx
//! ships, the count of the whole is instead obtained *exactly* from per-block counts, because
//! their pre-tokenizer provably splits the text at every block boundary:
//!
//! **Claim.** For the cl100k_base and o200k_base pre-tokenization patterns, if `A` ends with
//! `"\n\n"` and `Y` starts with a character that is neither whitespace nor `/`, the pieces of
//! `A + Y` are the pieces of `A` followed by the pieces of `Y`; so, BPE running inside pieces,
//! `count(A + Y) = count(A) + count(Y)`.
//!
//! **Why.** No alternative of either pattern matches a line break followed by such a character:
//! contractions, letters and digits never contain `\r`/`\n` (the optional leading character of
//! the letter alternatives excludes them), the punctuation alternative only *ends* with a run of
//! `\r`/`\n` (o200k: `\r`, `\n` or `/`, hence the `/` exclusion), and the whitespace alternatives
//! contain only whitespace. So some piece ends exactly where `Y` starts, and from there the
//! pieces are found on `Y`'s own text (the patterns have no look-behind; `\s+$` and the one-char
//! look-ahead of `\s+(?!\S)` only act inside a whitespace run, which ends at `Y`'s first
//! character in both strings). Before that point the final whitespace run of `A` is matched by
//! `\s*[\r\n]+` — the first alternative that applies, in `A` alone and in `A + Y` — and what
//! precedes it does not see past it.
//!
//! Blocks are joined by `"\n\n"` and every formatted node starts with `--- NODE ---`, so
//! `count(P + SEP + node) = count(P + SEP) + count(node)` and `count(P + SEP)` grows by
//! `count(block + SEP)` per block. Each block is counted once (and cached); a block that does not
//! start cleanly (a divider starting with a space or `/`, an empty block) is folded in by
//! counting the whole prefix. Other backends (a remote tokenizer, a custom BPE) always count the
//! whole rendered candidate, with early exit. The identity is checked against the direct count in
//! debug builds and by the `block_boundaries_split_pieces` property test (`tests/manage_budget_props.rs`)
//! on hostile inputs, for both encodings and both backends.

use crate::state::CONTEXT_BLOCK_SEPARATOR;
use crate::tokens::TokenCounter;
use crate::tokens::TokenError;

/// Backends that pre-tokenize with the cl100k_base / o200k_base patterns.
const SPLITTING_BACKENDS: [&str; 4] =
    ["bpe-openai/cl100k_base", "bpe-openai/o200k_base", "tiktoken-rs/cl100k_base", "tiktoken-rs/o200k_base"];

/// Whether `counter` provably splits pieces at a block boundary followed by a clean start.
pub(crate) fn splits_at_block_boundaries(counter: &TokenCounter) -> bool {
    CONTEXT_BLOCK_SEPARATOR == "\n\n" && SPLITTING_BACKENDS.contains(&counter.backend_id())
}

/// Whether a block starts with a character after which a block boundary is a piece boundary.
pub(crate) fn starts_cleanly(block: &str) -> bool {
    block.chars().next().is_some_and(|c| !c.is_whitespace() && c != '/')
}

/// `context_blocks` rendered so far, grown one block at a time exactly as
/// [`render_context_blocks`](crate::state::render_context_blocks) joins them.
pub(crate) struct Prefix<'c> {
    text: String,
    blocks: usize,
    counter: &'c TokenCounter,
    /// `count(text + SEP)` (0 when there is no block yet), when the backend splits at block
    /// boundaries.
    with_separator: Option<usize>,
}

impl<'c> Prefix<'c> {
    /// The prefix made of `blocks` blocks already rendered to `text`. `counted`: whether
    /// [`Prefix::exceeds_with`] will be asked (without threshold rules, blocks are not counted).
    pub(crate) fn new(
        text: String,
        blocks: usize,
        counter: &'c TokenCounter,
        counted: bool,
    ) -> Result<Self, TokenError> {
        let with_separator = if counted && splits_at_block_boundaries(counter) {
            Some(if blocks == 0 { 0 } else { counter.count(&format!("{text}{CONTEXT_BLOCK_SEPARATOR}"))? })
        } else {
            None
        };
        Ok(Prefix { text, blocks, counter, with_separator })
    }

    /// The rendered text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Appends a block.
    pub(crate) fn push(&mut self, block: &str) -> Result<(), TokenError> {
        if let Some(tokens) = self.with_separator {
            self.with_separator = Some(if self.blocks == 0 || starts_cleanly(block) {
                tokens + self.counter.count(&format!("{block}{CONTEXT_BLOCK_SEPARATOR}"))?
            } else {
                let sep = CONTEXT_BLOCK_SEPARATOR;
                self.counter.count(&format!("{}{sep}{block}{sep}", self.text))?
            });
        }
        if self.blocks > 0 {
            self.text.push_str(CONTEXT_BLOCK_SEPARATOR);
        }
        self.text.push_str(block);
        self.blocks += 1;
        Ok(())
    }

    /// Whether the prefix with `block` appended has more than `limit` tokens.
    pub(crate) fn exceeds_with(&mut self, block: &str, limit: usize) -> Result<bool, TokenError> {
        if let Some(tokens) = self.with_separator
            && starts_cleanly(block)
        {
            let total = tokens + self.counter.count(block)?;
            #[cfg(debug_assertions)]
            {
                let counter = self.counter;
                let direct = self.with_block(block, |text| counter.count(text))?;
                debug_assert_eq!(total, direct, "block-boundary additivity failed for {:?}", counter.backend_id());
            }
            return Ok(total > limit);
        }
        let counter = self.counter;
        Ok(!self.with_block(block, |text| counter.fits(text, limit))?)
    }

    /// Runs `f` on the text with `block` appended, then removes it again.
    pub(crate) fn with_block<T>(&mut self, block: &str, f: impl FnOnce(&str) -> T) -> T {
        let (len, blocks) = (self.text.len(), self.blocks);
        if self.blocks > 0 {
            self.text.push_str(CONTEXT_BLOCK_SEPARATOR);
        }
        self.text.push_str(block);
        let result = f(&self.text);
        self.text.truncate(len);
        self.blocks = blocks;
        result
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
        for blocks in [vec![], vec![String::new()], vec!["a".to_owned(), String::new(), " b\n".to_owned()]] {
            let mut p = Prefix::new(String::new(), 0, &counter, true).unwrap();
            for b in &blocks {
                p.push(b).unwrap();
            }
            assert_eq!(p.text(), render_context_blocks(&blocks));
            let with = p.with_block("x", str::to_owned);
            let mut extended = blocks.clone();
            extended.push("x".into());
            assert_eq!(with, render_context_blocks(&extended));
            assert_eq!(p.text(), render_context_blocks(&blocks));
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
