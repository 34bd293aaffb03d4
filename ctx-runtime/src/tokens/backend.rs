//! Tokenizer backends: one trait, two implementations.
//!
//! [`BpeBackend`] (bpe-openai) is the one ctx counts with: in our measurements it produced the
//! same token sequences as tiktoken-rs, is linear on every input and never panicked, where
//! tiktoken-rs's regex overflows its backtracking stack on a ~1 MB whitespace run and turns
//! superlinear on long runs without spaces. [`TiktokenBackend`] is kept for the differential test
//! and the benchmarks, behind the same trait, with its panic turned into an error.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::encoding::Encoding;
use crate::error::TokenError;

/// A tokenizer: counts, encodes and decodes ordinary text (special-token text such as
/// `<|endoftext|>` is always ordinary text).
pub trait TokenizerBackend: Send + Sync + fmt::Debug {
    /// A stable id that identifies the vocabulary (it keys the count cache).
    fn id(&self) -> &str;

    /// Exact number of tokens of `text`.
    fn count(&self, text: &str) -> Result<usize, TokenError>;

    /// `Some(count)` when `text` has at most `limit` tokens, `None` otherwise. Implementations
    /// stop as soon as the limit is passed.
    fn count_up_to(&self, text: &str, limit: usize) -> Result<Option<usize>, TokenError> {
        let n = self.count(text)?;
        Ok((n <= limit).then_some(n))
    }

    /// The token ids of `text`.
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenError>;

    /// The text of `ids`; an error when they do not form valid UTF-8.
    fn decode(&self, ids: &[u32]) -> Result<String, TokenError>;
}

/// The linear-time backend (bpe-openai). ctx's default.
#[derive(Clone, Copy)]
pub struct BpeBackend {
    encoding: Encoding,
    tokenizer: &'static bpe_openai::Tokenizer,
    id: &'static str,
}

impl BpeBackend {
    /// The backend for `encoding`. The vocabulary is loaded once per process.
    pub fn new(encoding: Encoding) -> Self {
        let (tokenizer, id) = match encoding {
            Encoding::Cl100kBase => (bpe_openai::cl100k_base(), "bpe-openai/cl100k_base"),
            Encoding::O200kBase => (bpe_openai::o200k_base(), "bpe-openai/o200k_base"),
        };
        BpeBackend { encoding, tokenizer, id }
    }
}

impl fmt::Debug for BpeBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BpeBackend").field("encoding", &self.encoding).finish()
    }
}

impl TokenizerBackend for BpeBackend {
    fn id(&self) -> &str {
        self.id
    }

    fn count(&self, text: &str) -> Result<usize, TokenError> {
        Ok(self.tokenizer.count(text))
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Result<Option<usize>, TokenError> {
        let normalized = self.tokenizer.normalize(text);
        Ok(self.tokenizer.count_till_limit(&normalized, limit))
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenError> {
        Ok(self.tokenizer.encode(text))
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenError> {
        // bpe panics on ids outside the vocabulary; check first so decode never panics.
        let vocab = self.tokenizer.bpe.num_tokens();
        if ids.iter().any(|&id| id as usize >= vocab) {
            return Err(TokenError::Decode { encoding: self.encoding.name().to_owned() });
        }
        self.tokenizer.decode(ids).ok_or_else(|| TokenError::Decode { encoding: self.encoding.name().to_owned() })
    }
}

/// tiktoken-rs (`encode_ordinary`), for differential tests and benchmarks.
///
/// tiktoken-rs can panic on pathological input (a whitespace run of about 1 MB exhausts its
/// regex's backtracking stack); this backend reports that as [`TokenError::Backend`].
#[derive(Clone, Copy)]
pub struct TiktokenBackend {
    encoding: Encoding,
    bpe: &'static tiktoken_rs::CoreBPE,
    id: &'static str,
}

impl TiktokenBackend {
    /// The backend for `encoding`.
    pub fn new(encoding: Encoding) -> Self {
        let (bpe, id) = match encoding {
            Encoding::Cl100kBase => (tiktoken_rs::cl100k_base_singleton(), "tiktoken-rs/cl100k_base"),
            Encoding::O200kBase => (tiktoken_rs::o200k_base_singleton(), "tiktoken-rs/o200k_base"),
        };
        TiktokenBackend { encoding, bpe, id }
    }

    fn guarded<T>(&self, f: impl FnOnce() -> T) -> Result<T, TokenError> {
        catch_unwind(AssertUnwindSafe(f)).map_err(|panic| TokenError::Backend {
            backend: self.id.to_owned(),
            reason: panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "panicked".to_owned()),
        })
    }
}

impl fmt::Debug for TiktokenBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TiktokenBackend").field("encoding", &self.encoding).finish()
    }
}

impl TokenizerBackend for TiktokenBackend {
    fn id(&self) -> &str {
        self.id
    }

    fn count(&self, text: &str) -> Result<usize, TokenError> {
        self.guarded(|| self.bpe.encode_ordinary(text).len())
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenError> {
        self.guarded(|| self.bpe.encode_ordinary(text))
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenError> {
        let bytes = self
            .guarded(|| self.bpe.decode_bytes(ids).ok())?
            .ok_or_else(|| TokenError::Decode { encoding: self.encoding.name().to_owned() })?;
        String::from_utf8(bytes).map_err(|_| TokenError::Decode { encoding: self.encoding.name().to_owned() })
    }
}
