//! Chunkers: a document cut into pieces that each fit a token size, so retrieval ranks and
//! returns the part of a file that answers, not a whole file that may not fit the evidence budget.
//!
//! Three ways to cut, chosen by file extension ([`ChunkOptions::kind_for`]):
//! * [`ChunkKind::Markdown`]: one chunk per heading section (an ATX heading `#`…`######` and what
//!   follows it up to the next heading). Lines inside a fenced code block (backticks or tildes) are never taken
//!   for headings, so a `# comment` in a shell snippet does not start a section. The chunk's
//!   title is its heading path (`Install > From source`). A section larger than the size is cut
//!   further at blank lines between paragraphs (a fenced block counts as one paragraph), and a
//!   paragraph still larger is cut at token boundaries.
//! * [`ChunkKind::Code`]: cut before every line that starts a top-level item at column 0 (see
//!   [`code`] for the exact rule), with the comments and attributes right above an item kept
//!   with it; consecutive small items are merged while the merged text fits, a larger item is
//!   cut at line ends, and a line still larger at token boundaries.
//! * [`ChunkKind::Text`]: windows of at most the size, cut at token boundaries, each starting
//!   `overlap_tokens` before the end of the previous one so that a sentence cut in two is whole
//!   in one of them.
//!
//! Every chunk is a slice of the document (`&text[chunk.start..chunk.end]`), chunks come in
//! document order, the first starts at 0 and the last ends at the end; markdown and code chunks
//! meet exactly (joined, they are the document), text chunks overlap by at most
//! `overlap_tokens`. Each chunk counts at most `max_tokens` with the real tokenizer.
//!
//! ```
//! use ctx::retrieve::{ChunkOptions, Chunker};
//! use ctx::tokens::TokenCounter;
//!
//! let chunker = Chunker::new(TokenCounter::for_model("gpt-4o")?, ChunkOptions::new(200))?;
//! let doc = "# Guide\nIntro.\n## Install\nRun `cargo add ctx`.\n";
//! let chunks = chunker.chunk("docs/guide.md", doc)?;
//! assert_eq!(chunks.len(), 2);
//! assert_eq!(chunks[1].id, "docs/guide.md#install");
//! assert_eq!(chunks[1].title.as_deref(), Some("Guide > Install"));
//! assert_eq!((chunks[1].start_line, chunks[1].end_line), (3, 4));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod chunker;
pub mod code;
pub(crate) mod markdown;
#[cfg(test)]
mod tests;

use chunker::Piece;
pub use chunker::{CODE_EXTENSIONS, ChunkError, ChunkKind, ChunkOptions, Chunker, MIN_CHUNK_TOKENS};

/// One piece of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Chunk {
    /// A stable id: `path#heading-slug` for a markdown section (`-2`, `-3`… for repeated slugs,
    /// `/part-2`… for the pieces of a cut section), `path#chunk-N` (from 1) otherwise.
    pub id: String,
    /// The document's path.
    pub path: String,
    /// The heading path of a markdown section, the first line of a code chunk.
    pub title: Option<String>,
    /// The chunk's text: `&document[start..end]`.
    pub text: String,
    /// Byte offset of the first byte in the document.
    pub start: usize,
    /// Byte offset after the last byte.
    pub end: usize,
    /// Line of the first byte (from 1).
    pub start_line: usize,
    /// Line of the last byte (from 1).
    pub end_line: usize,
    /// Its exact token count.
    pub tokens: usize,
}

// The dispatch over the kinds of cut, written here above the cutters it calls (`chunker.rs`
// holds the rest of the chunker, which the cutters use).
impl Chunker {
    /// `text` (the document at `path`) cut with the kind [`ChunkOptions::kind_for`] gives.
    pub fn chunk(&self, path: &str, text: &str) -> Result<Vec<Chunk>, ChunkError> {
        self.chunk_as(self.options().kind_for(path), path, text)
    }

    /// `text` cut as `kind`. An empty document has no chunks.
    pub fn chunk_as(&self, kind: ChunkKind, path: &str, text: &str) -> Result<Vec<Chunk>, ChunkError> {
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let pieces = match kind {
            ChunkKind::Markdown => markdown::pieces(self, text)?,
            ChunkKind::Code => code::pieces(self, text)?,
            ChunkKind::Text => self.windows(text, 0, text.len(), self.options().overlap_tokens)?,
        };
        self.finish(path, text, pieces)
    }

    /// Gives the pieces their ids, lines and counts.
    fn finish(&self, path: &str, text: &str, pieces: Vec<Piece>) -> Result<Vec<Chunk>, ChunkError> {
        let mut used = std::collections::BTreeSet::new();
        let mut chunks = Vec::with_capacity(pieces.len());
        for (i, piece) in pieces.into_iter().enumerate() {
            let fragment = match &piece.slug {
                Some(slug) => {
                    // A repeated heading gets `-2`, `-3`…, skipping any a real heading took.
                    let mut candidate = slug.clone();
                    let mut n = 1;
                    while used.contains(&candidate) {
                        n += 1;
                        candidate = format!("{slug}-{n}");
                    }
                    candidate
                }
                None => format!("chunk-{}", i + 1),
            };
            used.insert(fragment.clone());
            let slice = &text[piece.start..piece.end];
            chunks.push(Chunk {
                id: format!("{path}#{fragment}"),
                path: path.to_owned(),
                title: piece.title,
                text: slice.to_owned(),
                start: piece.start,
                end: piece.end,
                start_line: line_of(text, piece.start),
                end_line: line_of(text, piece.end.saturating_sub(1).max(piece.start)),
                tokens: self.counter().count(slice)?,
            });
        }
        Ok(chunks)
    }
}

/// The line (from 1) holding byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    1 + text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count()
}
