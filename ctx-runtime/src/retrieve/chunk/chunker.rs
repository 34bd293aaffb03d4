//! What every way of cutting shares: the options and errors of chunking, the [`Chunker`] with its
//! size test and its token windows, and the packing of line or item ranges into pieces that fit.
//!
//! The markdown and code cutters stand on this file and `mod.rs` dispatches to them, so nothing
//! here reaches back into `mod.rs` or into a cutter.

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

/// Cuts documents into [`Chunk`](super::Chunk)s with a real tokenizer.
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
