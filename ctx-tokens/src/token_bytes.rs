//! The bytes of every token of one OpenAI vocabulary, by rank ([`TokenBytes`]), decompressed from
//! the copy embedded in ctx-tokens (`ctx-tokens/data/*.tokens.zlib`; `openai_vocab.rs` says where
//! it comes from and when it is read).
//!
//! A leaf: the rank index (`merge.rs`) is built over these bytes, and the vocabulary
//! (`openai_vocab.rs`) owns that index, so the bytes sit below both.

use super::encoding::Encoding;

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

/// The token bytes of `encoding`, decompressed from the copy embedded in ctx-tokens.
///
/// # Panics
///
/// When the embedded copy is damaged, which the tests rule out for the files shipped (a panic
/// under a backend call becomes [`TokenError::Backend`](super::TokenError::Backend)).
pub(crate) fn token_bytes(encoding: Encoding) -> TokenBytes {
    let packed = match encoding {
        Encoding::Cl100kBase => CL100K_BASE,
        Encoding::O200kBase => O200K_BASE,
    };
    TokenBytes::decompress(packed)
        .unwrap_or_else(|reason| panic!("ctx's embedded {} vocabulary is damaged: {reason}", encoding.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_layout_is_refused() {
        let layout = |n: u32, lengths: &[u8], bytes: &[u8]| [&n.to_le_bytes()[..], lengths, bytes].concat();
        assert!(TokenBytes::from_layout(layout(2, &[1, 2], b"abc")).is_some());
        // Too few bytes, too many, a token of no bytes, lengths cut short, no count at all.
        assert!(TokenBytes::from_layout(layout(2, &[1, 2], b"ab")).is_none());
        assert!(TokenBytes::from_layout(layout(2, &[1, 2], b"abcd")).is_none());
        assert!(TokenBytes::from_layout(layout(2, &[0, 3], b"abc")).is_none());
        assert!(TokenBytes::from_layout(layout(9, &[1, 2], b"abc")).is_none());
        assert!(TokenBytes::from_layout(vec![1, 0]).is_none());
        assert!(TokenBytes::decompress(b"not zlib at all").is_err());
        let tokens = TokenBytes::from_layout(layout(2, &[1, 2], b"abc")).expect("well formed");
        assert_eq!(tokens.iter().collect::<Vec<_>>(), [&b"a"[..], b"bc"]);
    }
}
