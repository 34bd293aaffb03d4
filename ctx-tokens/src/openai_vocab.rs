//! ctx's own copy of the OpenAI vocabularies cl100k_base and o200k_base, read at first use.
//!
//! The token bytes of both encodings are embedded in ctx-tokens (`ctx-tokens/data/*.tokens.zlib`,
//! written once by `scripts/openai-vocab.py` from OpenAI's public rank files; their origin and
//! licence are in `ctx-tokens/data/README.md`). An encoding is decompressed and indexed the first
//! time a text is counted with it — a process that counts with o200k alone never reads cl100k —
//! into the token bytes by rank ([`TokenBytes`](super::TokenBytes), `token_bytes.rs`) and the
//! rank index the merge runs on ([`Ranks`]). Nothing is built at compile time: no build script,
//! no tables in the binary beyond the 0.4 + 1.0 MB of compressed tokens.
//!
//! Counting and encoding are ctx's own: the encoding's pattern as a scanner (`pretokenize.rs`),
//! then tiktoken's merge inside each piece on the rank index (`merge.rs`). The tests compare
//! every rank with bpe-openai's and tiktoken-rs's tables, and counts and token sequences with
//! theirs (`openai_vocab/tests.rs`, `merge/tests.rs`, `tests/differential.rs`).

use std::sync::OnceLock;

use super::encoding::Encoding;
use super::merge::Ranks;
use super::pieces::PieceVocab;
use super::pretokenize::{Pattern, Pieces};
use super::token_bytes::token_bytes;

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

// Written with the vocabulary, not the merge: the process-wide index is the one the vocabulary
// loads and owns.
impl Ranks {
    /// The process-wide index of `encoding`, loaded on first use.
    pub fn shared(encoding: Encoding) -> &'static Self {
        vocab(encoding).ranks()
    }
}

impl PieceVocab for OpenAiVocab {
    #[inline]
    fn split<'t>(&self, text: &'t str) -> Pieces<'t> {
        OpenAiVocab::split(self, text)
    }

    #[inline]
    fn is_one_token(&self, piece: &[u8], key: u128) -> bool {
        self.ranks.is_token_packed(piece, key)
    }

    #[inline]
    fn is_byte_token(&self, byte: u8) -> bool {
        self.ranks.is_byte_token(byte)
    }

    #[inline]
    fn count_piece(&self, piece: &[u8]) -> usize {
        OpenAiVocab::count_piece(self, piece)
    }

    /// `is_one_token` is the whole piece's rank lookup, so a piece it turned away is no token:
    /// what [`Ranks::count_inline`] needs.
    #[inline]
    fn count_short_piece(&self, piece: &[u8], key: u128) -> usize {
        self.ranks.count_inline(piece, key)
    }
}

#[cfg(test)]
mod tests;
