//! ctx's own copy of the OpenAI vocabularies cl100k_base and o200k_base, read at first use.
//!
//! The token bytes of both encodings are embedded in ctx-tokens (`ctx-tokens/data/*.tokens.zlib`,
//! written once by `scripts/openai-vocab.py` from OpenAI's public rank files; their origin and
//! licence are in `ctx-tokens/data/README.md`). An encoding is decompressed and indexed the first
//! time a text is counted with it — a process that counts with o200k alone never reads cl100k —
//! into the token bytes by rank ([`TokenBytes`]) and the rank index the merge runs on
//! ([`Ranks`]). Nothing is built at compile time: no build script, no tables in the binary beyond
//! the 0.4 + 1.0 MB of compressed tokens.
//!
//! Counting and encoding are ctx's own: the encoding's pattern as a scanner (`pretokenize.rs`),
//! then tiktoken's merge inside each piece on the rank index (`merge.rs`). The tests compare
//! every rank with bpe-openai's and tiktoken-rs's tables, and counts and token sequences with
//! theirs (`openai_vocab/tests.rs`, `merge/tests.rs`, `tests/differential.rs`).

use std::sync::OnceLock;

use super::encoding::Encoding;
use super::merge::Ranks;
use super::pretokenize::{Pattern, Pieces};

/// cl100k_base's tokens in rank order (`scripts/openai-vocab.py` gives the layout).
static CL100K_BASE: &[u8] = include_bytes!("../data/cl100k_base.tokens.zlib");
/// o200k_base's.
static O200K_BASE: &[u8] = include_bytes!("../data/o200k_base.tokens.zlib");

/// No decompressed vocabulary is larger (o200k_base's is 1.6 MB): a bound against a damaged file.
const MAX_LAYOUT_BYTES: usize = 8 << 20;

/// The bytes of every token of one vocabulary, by rank (a token's rank is its id).
pub struct TokenBytes {
    /// The decompressed layout: count, lengths, then the tokens' bytes.
    data: Box<[u8]>,
    /// `starts[r]..starts[r + 1]`: where token `r`'s bytes are in `data`.
    starts: Box<[u32]>,
}

impl std::fmt::Debug for TokenBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenBytes").field("tokens", &self.len()).finish()
    }
}

impl TokenBytes {
    /// Reads the layout `scripts/openai-vocab.py` writes (after decompression): the number of
    /// tokens `n` (u32, little-endian), `n` lengths of one byte, then the tokens one after the
    /// other. `None` when the bytes do not have that shape.
    fn from_layout(data: Vec<u8>) -> Option<Self> {
        let (count, rest) = data.split_first_chunk::<4>()?;
        let n = usize::try_from(u32::from_le_bytes(*count)).ok()?;
        let lengths = rest.get(..n)?;
        let mut starts = Vec::with_capacity(n + 1);
        let mut at = 4 + n;
        for &len in lengths {
            starts.push(u32::try_from(at).ok()?);
            at += usize::from(len);
        }
        starts.push(u32::try_from(at).ok()?);
        if at != data.len() || lengths.contains(&0) {
            return None;
        }
        Some(TokenBytes { data: data.into_boxed_slice(), starts: starts.into_boxed_slice() })
    }

    /// Decompresses and reads an embedded vocabulary.
    fn decompress(packed: &[u8]) -> Result<Self, String> {
        let data = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(packed, MAX_LAYOUT_BYTES)
            .map_err(|e| format!("it does not decompress ({:?})", e.status))?;
        Self::from_layout(data).ok_or_else(|| "its layout is not count, lengths, tokens".to_owned())
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether there is no token (never, for an embedded vocabulary).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of token `rank`, `None` past the last token.
    #[inline]
    pub fn get(&self, rank: u32) -> Option<&[u8]> {
        let r = usize::try_from(rank).ok()?;
        let (&start, &end) = (self.starts.get(r)?, self.starts.get(r + 1)?);
        self.data.get(start as usize..end as usize)
    }

    /// The tokens' bytes, in rank order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.starts.windows(2).map(|w| &self.data[w[0] as usize..w[1] as usize])
    }

    /// Bytes held (the layout and the starts).
    pub fn memory_bytes(&self) -> usize {
        self.data.len() + self.starts.len() * 4
    }
}

/// One OpenAI encoding as ctx counts and encodes with it: its pattern and its rank index (which
/// owns the token bytes).
pub(crate) struct OpenAiVocab {
    encoding: Encoding,
    ranks: Ranks,
}

impl std::fmt::Debug for OpenAiVocab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiVocab").field("encoding", &self.encoding).field("ranks", &self.ranks).finish()
    }
}

/// The token bytes of `encoding`, decompressed from the copy embedded in ctx-tokens.
///
/// # Panics
///
/// When the embedded copy is damaged, which the tests rule out for the files shipped (a panic
/// under a backend call becomes [`TokenError::Backend`](super::TokenError::Backend)).
pub(super) fn token_bytes(encoding: Encoding) -> TokenBytes {
    let packed = match encoding {
        Encoding::Cl100kBase => CL100K_BASE,
        Encoding::O200kBase => O200K_BASE,
    };
    TokenBytes::decompress(packed)
        .unwrap_or_else(|reason| panic!("ctx's embedded {} vocabulary is damaged: {reason}", encoding.name()))
}

/// The process-wide vocabulary of `encoding`, read and indexed on the first call for it.
pub(crate) fn vocab(encoding: Encoding) -> &'static OpenAiVocab {
    static LOADED: [OnceLock<OpenAiVocab>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = match encoding {
        Encoding::Cl100kBase => &LOADED[0],
        Encoding::O200kBase => &LOADED[1],
    };
    slot.get_or_init(|| OpenAiVocab { encoding, ranks: Ranks::new(token_bytes(encoding)) })
}

impl OpenAiVocab {
    /// The encoding's pre-tokenizer pattern.
    #[inline]
    pub(super) fn pattern(&self) -> Pattern {
        self.encoding.into()
    }

    /// The pieces of `text`, by the encoding's scanner.
    #[inline]
    pub(super) fn split<'a>(&self, text: &'a str) -> Pieces<'a> {
        Pieces::new(self.pattern(), text)
    }

    /// The rank index (and, through it, the token bytes).
    #[inline]
    pub(super) fn ranks(&self) -> &Ranks {
        &self.ranks
    }

    /// Exactly tiktoken's count of one piece.
    #[inline]
    pub(super) fn count_piece(&self, piece: &[u8]) -> usize {
        self.ranks.count(piece)
    }

    /// The byte length of the longest token.
    pub(super) fn longest(&self) -> usize {
        self.ranks.longest()
    }

    /// Exactly tiktoken's `encode_ordinary`: the token ids of `text`, special-token text read as
    /// ordinary text.
    pub(super) fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::with_capacity(text.len() / 4 + 1);
        for piece in self.split(text) {
            self.ranks.encode_piece(piece.as_bytes(), &mut ids);
        }
        ids
    }

    /// The text of `ids`; `None` when an id is not a token or the bytes are not UTF-8.
    pub(super) fn decode(&self, ids: &[u32]) -> Option<String> {
        let tokens = self.ranks.tokens();
        let mut bytes = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            bytes.extend_from_slice(tokens.get(id)?);
        }
        String::from_utf8(bytes).ok()
    }
}

#[cfg(test)]
mod tests;
