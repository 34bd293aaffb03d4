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

pub mod code;
pub(crate) mod markdown;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::tokens::{Encoding, TokenCounter, TokenError};

/// How a document is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChunkKind {
    /// By heading sections.
    Markdown,
    /// By top-level items.
    Code,
    /// By tokens, with overlap.
    Text,
}

/// The smallest chunk size accepted: no character is longer than 4 bytes, and no token shorter
/// than 1 byte, so a size of at least this always fits one character and chunking progresses.
pub const MIN_CHUNK_TOKENS: usize = 8;

/// The extensions read as code unless [`ChunkOptions::kinds`] says otherwise.
pub const CODE_EXTENSIONS: &[&str] = &[
    "rs", "cs", "csx", "sql", "py", "js", "mjs", "cjs", "jsx", "ts", "tsx", "java", "kt", "go", "c", "h", "cpp", "hpp",
    "cc", "swift", "rb", "php", "scala", "fs", "vb",
];

/// How documents are chunked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChunkOptions {
    /// The most tokens a chunk may count (at least [`MIN_CHUNK_TOKENS`]).
    pub max_tokens: usize,
    /// How many tokens a text chunk repeats from the end of the one before (below `max_tokens`).
    pub overlap_tokens: usize,
    /// Extension (lowercase, no dot) → kind, overriding the defaults (`md`/`markdown` →
    /// markdown, [`CODE_EXTENSIONS`] → code, anything else → text).
    pub kinds: BTreeMap<String, ChunkKind>,
    /// The encoding `Bm25Index::from_dir` (feature `bm25`) counts with when it chunks; a
    /// [`Chunker`] built with [`Chunker::new`] uses its own counter instead.
    pub encoding: Encoding,
}

impl ChunkOptions {
    /// Chunks of at most `max_tokens`, text overlap of a tenth of that, default kinds, o200k.
    pub fn new(max_tokens: usize) -> Self {
        ChunkOptions {
            max_tokens,
            overlap_tokens: max_tokens / 10,
            kinds: BTreeMap::new(),
            encoding: Encoding::O200kBase,
        }
    }

    /// These options with another text overlap.
    #[must_use]
    pub fn with_overlap(mut self, overlap_tokens: usize) -> Self {
        self.overlap_tokens = overlap_tokens;
        self
    }

    /// These options with files of `extension` cut as `kind`.
    #[must_use]
    pub fn with_kind(mut self, extension: &str, kind: ChunkKind) -> Self {
        self.kinds.insert(extension.trim_start_matches('.').to_ascii_lowercase(), kind);
        self
    }

    /// These options counting with `encoding` (for indexes built from options).
    #[must_use]
    pub fn with_encoding(mut self, encoding: Encoding) -> Self {
        self.encoding = encoding;
        self
    }

    /// The kind for a path, by its extension.
    pub fn kind_for(&self, path: &str) -> ChunkKind {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let ext = match name.rfind('.') {
            Some(dot) if dot > 0 => name[dot + 1..].to_ascii_lowercase(),
            _ => String::new(),
        };
        if let Some(kind) = self.kinds.get(&ext) {
            return *kind;
        }
        match ext.as_str() {
            "md" | "markdown" => ChunkKind::Markdown,
            e if CODE_EXTENSIONS.contains(&e) => ChunkKind::Code,
            _ => ChunkKind::Text,
        }
    }
}

/// Why chunking could not be set up or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChunkError {
    /// `max_tokens` below [`MIN_CHUNK_TOKENS`].
    #[error("chunk size max_tokens = {max_tokens} is below the minimum of {MIN_CHUNK_TOKENS} tokens")]
    SizeTooSmall {
        /// The size asked for.
        max_tokens: usize,
    },
    /// `overlap_tokens` not below `max_tokens`: windows would not advance.
    #[error("chunk overlap_tokens = {overlap_tokens} must be below max_tokens = {max_tokens}")]
    OverlapTooLarge {
        /// The overlap asked for.
        overlap_tokens: usize,
        /// The size.
        max_tokens: usize,
    },
    /// Counting failed.
    #[error(transparent)]
    Tokens(#[from] TokenError),
}

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

/// Cuts documents into [`Chunk`]s with a real tokenizer.
#[derive(Debug, Clone)]
pub struct Chunker {
    counter: TokenCounter,
    options: ChunkOptions,
}

/// A byte range of the document with an optional title, before ids are given.
pub(crate) struct Piece {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) title: Option<String>,
    /// The markdown slug; `None` for code and text pieces.
    pub(crate) slug: Option<String>,
}

impl Chunker {
    /// A chunker counting with `counter`; the options are checked.
    pub fn new(counter: TokenCounter, options: ChunkOptions) -> Result<Self, ChunkError> {
        if options.max_tokens < MIN_CHUNK_TOKENS {
            return Err(ChunkError::SizeTooSmall { max_tokens: options.max_tokens });
        }
        if options.overlap_tokens >= options.max_tokens {
            return Err(ChunkError::OverlapTooLarge {
                overlap_tokens: options.overlap_tokens,
                max_tokens: options.max_tokens,
            });
        }
        Ok(Chunker { counter, options })
    }

    /// A chunker counting with the process-wide counter of `options.encoding`.
    pub fn from_options(options: ChunkOptions) -> Result<Self, ChunkError> {
        Self::new(TokenCounter::for_encoding(options.encoding), options)
    }

    /// The options.
    pub fn options(&self) -> &ChunkOptions {
        &self.options
    }

    /// The counter.
    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// `text` (the document at `path`) cut with the kind [`ChunkOptions::kind_for`] gives.
    pub fn chunk(&self, path: &str, text: &str) -> Result<Vec<Chunk>, ChunkError> {
        self.chunk_as(self.options.kind_for(path), path, text)
    }

    /// `text` cut as `kind`. An empty document has no chunks.
    pub fn chunk_as(&self, kind: ChunkKind, path: &str, text: &str) -> Result<Vec<Chunk>, ChunkError> {
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let pieces = match kind {
            ChunkKind::Markdown => markdown::pieces(self, text)?,
            ChunkKind::Code => code::pieces(self, text)?,
            ChunkKind::Text => self.windows(text, 0, text.len(), self.options.overlap_tokens)?,
        };
        self.finish(path, text, pieces)
    }

    /// Whether `text[start..end]` fits the size.
    pub(crate) fn fits(&self, text: &str, start: usize, end: usize) -> Result<bool, ChunkError> {
        Ok(self.counter.count_up_to(&text[start..end], self.options.max_tokens)?.is_some())
    }

    /// `text[start..end]` cut into windows of at most the size at token boundaries, each
    /// starting `overlap` tokens before the end of the one before (0: they meet exactly).
    pub(crate) fn windows(
        &self,
        text: &str,
        start: usize,
        end: usize,
        overlap: usize,
    ) -> Result<Vec<Piece>, ChunkError> {
        let max = self.options.max_tokens;
        let mut pieces = Vec::new();
        let mut at = start;
        while at < end {
            let rest = &text[at..end];
            let prefix = self.counter.truncate_to(rest, max)?;
            // `truncate_to` returns a prefix of `rest`; at least one character fits any size of
            // MIN_CHUNK_TOKENS or more, which `new` checked.
            let mut len = prefix.len();
            if len == 0 || !rest.is_char_boundary(len) {
                len = rest.chars().next().map_or(rest.len(), char::len_utf8);
            }
            let piece_end = at + len;
            pieces.push(Piece { start: at, end: piece_end, title: None, slug: None });
            if piece_end >= end {
                break;
            }
            let back = if overlap > 0 { self.overlap_start(&text[at..piece_end], overlap)? } else { len };
            // The next window must start after this one's start, or chunking would not end.
            at += if back == 0 { len } else { back };
        }
        Ok(pieces)
    }

    /// The byte offset in `window` where its last `overlap` tokens start, moved forward to a
    /// character boundary.
    fn overlap_start(&self, window: &str, overlap: usize) -> Result<usize, ChunkError> {
        let ids = self.counter.encode(window)?;
        let mut keep = ids.len().saturating_sub(overlap);
        while keep < ids.len() {
            if let Ok(head) = self.counter.decode(&ids[..keep])
                && window.starts_with(&head)
            {
                return Ok(head.len());
            }
            keep += 1;
        }
        Ok(window.len())
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
                tokens: self.counter.count(slice)?,
            });
        }
        Ok(chunks)
    }
}

/// The line (from 1) holding byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    1 + text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count()
}

/// The byte offsets where each line of `text[start..end]` starts, `start` first.
pub(crate) fn line_starts(text: &str, start: usize, end: usize) -> Vec<usize> {
    let mut starts = vec![start];
    for (i, b) in text.as_bytes()[start..end].iter().enumerate() {
        if *b == b'\n' && start + i + 1 < end {
            starts.push(start + i + 1);
        }
    }
    starts
}

/// Greedily merges consecutive ranges `bounds[i]..bounds[i + 1]` while the merged text fits;
/// a single range that does not fit is cut with `split_large`.
pub(crate) fn pack(
    chunker: &Chunker,
    text: &str,
    bounds: &[usize],
    split_large: &mut dyn FnMut(usize, usize) -> Result<Vec<Piece>, ChunkError>,
) -> Result<Vec<Piece>, ChunkError> {
    let mut pieces = Vec::new();
    let mut open: Option<(usize, usize)> = None;
    for pair in bounds.windows(2) {
        let (s, e) = (pair[0], pair[1]);
        if let Some((os, _)) = open {
            if chunker.fits(text, os, e)? {
                open = Some((os, e));
                continue;
            }
            if let Some((os, oe)) = open.take() {
                pieces.push(Piece { start: os, end: oe, title: None, slug: None });
            }
        }
        if chunker.fits(text, s, e)? {
            open = Some((s, e));
        } else {
            pieces.extend(split_large(s, e)?);
        }
    }
    if let Some((os, oe)) = open {
        pieces.push(Piece { start: os, end: oe, title: None, slug: None });
    }
    Ok(pieces)
}
