//! Tokenizer backends: one trait, two implementations.
//!
//! [`BpeBackend`] is the one ctx counts with, on its own copy of the OpenAI vocabularies
//! (`openai_vocab.rs`), its own scanners and its own merge: it produces the same token sequences
//! as tiktoken-rs (the differential test in `tests/differential.rs` checks this on a corpus
//! and on generated strings, and the unit tests check against bpe-openai too), it is at most
//! O(n log n) on every input and it never panicked in our tests, where tiktoken-rs 0.12 overflows
//! its regex's backtracking stack on a ~1 MB whitespace run and turns superlinear on long runs
//! without spaces. `TiktokenBackend` (internal feature `__tiktoken`) is kept for the differential
//! test and the benchmarks, behind the same trait.
//!
//! Both backends turn a panic inside the tokenizer crate into [`TokenError::Backend`], so no input
//! can unwind through ctx.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::encoding::Encoding;
use super::incremental::{self, CountCheckpoint};
use super::openai_vocab::{self, OpenAiVocab};
use super::parallel::{self, Threads};
use super::pieces::{self, PieceCache, PieceCounter};
use crate::TokenError;

/// A tokenizer: counts, encodes and decodes text. The OpenAI backends read special-token text
/// such as `<|endoftext|>` as ordinary text (as OpenAI's API does with message contents); the
/// backends of template-driven servers (`RemoteTokenizer`, `HfTokenizer`) read it as the special
/// token, as those servers do when they tokenize a rendered prompt.
pub trait TokenizerBackend: Send + Sync + fmt::Debug {
    /// A stable id that identifies the vocabulary (it keys the count cache).
    fn id(&self) -> &str;

    /// Exact number of tokens of `text`.
    fn count(&self, text: &str) -> Result<usize, TokenError>;

    /// `Some(count)` when `text` has at most `limit` tokens, `None` otherwise. Implementations
    /// stop as soon as the answer is known; the default counts everything.
    fn count_up_to(&self, text: &str, limit: usize) -> Result<Option<usize>, TokenError> {
        let n = self.count(text)?;
        Ok((n <= limit).then_some(n))
    }

    /// The token ids of `text`.
    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenError>;

    /// The text of `ids`; an error when they do not form valid UTF-8 or are not in the vocabulary.
    fn decode(&self, ids: &[u32]) -> Result<String, TokenError>;

    /// The byte length of the longest token in the vocabulary, when known.
    ///
    /// It gives a sound lower bound without tokenizing: a text of `n` bytes has at least
    /// `n.div_ceil(max_token_bytes)` tokens. `None` (the default) means no bound is known.
    fn max_token_bytes(&self) -> Option<usize> {
        None
    }

    /// Whether a text never has more tokens than bytes, so a text of at most `n` bytes fits in
    /// `n` tokens without being counted ([`super::TokenCounter::fits`]). True of byte-level
    /// vocabularies (the default); false for a tokenizer whose normalizer adds text
    /// (SentencePiece's `▁` prefix makes one byte two tokens) and for an estimate that raises
    /// counts by a margin.
    fn at_most_one_token_per_byte(&self) -> bool {
        true
    }

    /// Counts `text`, which extends the text `from` was taken of (`text` starts with it). The
    /// default counts `text` from the start; a backend that knows where appending stops
    /// changing its tokenization re-counts only from there ([`BpeBackend`] does). A checkpoint
    /// that cannot belong to `text` (longer, or not on a character boundary) is ignored.
    fn count_appended(&self, text: &str, from: CountCheckpoint) -> Result<CountCheckpoint, TokenError> {
        let _ = from;
        Ok(CountCheckpoint::whole(text.len(), self.count(text)?))
    }
}

/// Runs `f`, turning a panic of the tokenizer crate into [`TokenError::Backend`].
///
/// The tokenizers hold no state that a panic could leave half-updated (their tables are
/// immutable statics), so resuming after one is sound.
pub(super) fn guarded<T>(backend: &str, f: impl FnOnce() -> T) -> Result<T, TokenError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| TokenError::Backend {
        backend: backend.to_owned(),
        reason: panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "the tokenizer panicked".to_owned()),
    })
}

/// The longest token of `encoding`, in bytes (128 for both encodings), read from the vocabulary
/// itself rather than typed here.
fn longest_token(encoding: Encoding) -> usize {
    openai_vocab::vocab(encoding).longest().max(1)
}

/// ctx's own backend for the OpenAI encodings. ctx's default.
///
/// It counts piece by piece through the encoding's process-wide [`PieceCache`] (each distinct
/// pre-tokenizer piece is merged once). A text of at least
/// [`PARALLEL_MIN_BYTES`](super::PARALLEL_MIN_BYTES) is counted on several threads when more than
/// one core is free as its count starts: as many as are free, at most one per 128 KiB of text
/// (on two idle cores that halves the time of a megabyte; `tokens/parallel` in
/// `benches/tokens.rs`). On Linux a free core is one of the machine's online CPUs that no other
/// runnable thread occupies at that moment (`/proc/loadavg`), within the cores this process may
/// use (its CPU affinity and cgroup quota); elsewhere every core the process may use counts as
/// free, at most 8. The choice costs one read of `/proc/loadavg`, microseconds beside the
/// milliseconds of such a count, and short texts never pay it. The count is the same on any
/// number of threads.
///
/// The number is a setting: [`Self::with_threads`] in code, or the environment variable
/// [`THREADS_ENV`](super::THREADS_ENV) (`CTX_TOKENS_THREADS`) for every backend whose code does
/// not set it, as a service pins it (`CTX_TOKENS_THREADS=1`: one thread always; `4`: at most
/// four, whatever the machine is doing; `auto`, `0` or unset: by the free cores).
#[derive(Clone, Copy)]
pub struct BpeBackend {
    encoding: Encoding,
    id: &'static str,
    pieces: &'static PieceCache,
    threads: Threads,
}

impl BpeBackend {
    /// The backend for `encoding`. The vocabulary is loaded once per process, when the first
    /// text is tokenized: a backend whose counts all come from a cache never loads it (the
    /// `pipeline!` macro, whose saved counts spare each `cargo check` the load).
    pub fn new(encoding: Encoding) -> Self {
        let id = match encoding {
            Encoding::Cl100kBase => "ctx/cl100k_base",
            Encoding::O200kBase => "ctx/o200k_base",
        };
        let slot = match encoding {
            Encoding::Cl100kBase => 0,
            Encoding::O200kBase => 1,
        };
        BpeBackend { encoding, id, pieces: pieces::shared_cache(slot), threads: Threads::FromEnv }
    }

    /// This backend counting a text of at least [`PARALLEL_MIN_BYTES`](super::PARALLEL_MIN_BYTES)
    /// on at most `threads` threads (one per 128 KiB of text at most), whatever the machine is
    /// doing; 0 chooses at each count by the cores free then. Either way this backend does not
    /// read [`THREADS_ENV`](super::THREADS_ENV).
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = Threads::from_count(threads);
        self
    }

    /// The threads a count of a text of `bytes` bytes would start on now: 1 below
    /// [`PARALLEL_MIN_BYTES`](super::PARALLEL_MIN_BYTES), else as [`Self::with_threads`] or
    /// [`THREADS_ENV`](super::THREADS_ENV) set, or as many as the cores free at this moment.
    /// For a service's logs and for benchmarks; [`TokenizerBackend::count`] chooses again.
    ///
    /// # Errors
    ///
    /// [`TokenError::Backend`] when [`THREADS_ENV`](super::THREADS_ENV) holds a value that is not
    /// a setting (and the code did not set the number); this backend's counts then fail with it.
    pub fn threads_for(&self, bytes: usize) -> Result<usize, TokenError> {
        self.threads.for_text(bytes).map_err(|reason| TokenError::Backend { backend: self.id.to_owned(), reason })
    }

    /// The encoding's process-wide piece cache, shared by every `BpeBackend` of this encoding.
    pub fn piece_cache(&self) -> &'static PieceCache {
        self.pieces
    }

    /// The encoding this backend counts with.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The vocabulary, loaded on first use.
    fn tokenizer(&self) -> &'static OpenAiVocab {
        openai_vocab::vocab(self.encoding)
    }

    fn decode_error(&self) -> TokenError {
        TokenError::Decode { encoding: self.encoding.name().to_owned() }
    }
}

impl fmt::Debug for BpeBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BpeBackend").field("encoding", &self.encoding).field("threads", &self.threads).finish()
    }
}

impl TokenizerBackend for BpeBackend {
    fn id(&self) -> &str {
        self.id
    }

    fn count(&self, text: &str) -> Result<usize, TokenError> {
        // cl100k and o200k do not normalize: the pieces of the text as given are what tiktoken
        // merges.
        let threads = self.threads_for(text.len())?;
        guarded(self.id, || {
            if threads > 1 {
                parallel::count_parallel(self.tokenizer(), self.pieces, text, threads)
            } else {
                PieceCounter::new(self.tokenizer(), self.pieces, text.len()).count(text)
            }
        })
    }

    /// Counts piece by piece (pre-tokenizer pieces are counted independently, so their counts
    /// add up exactly) and stops as soon as the pieces counted so far plus the least the rest
    /// can cost exceed `limit`.
    fn count_up_to(&self, text: &str, limit: usize) -> Result<Option<usize>, TokenError> {
        // One thread, but a wrong thread setting fails here as in `count`, never only sometimes.
        self.threads_for(0)?;
        let counted = guarded(self.id, || {
            let longest = longest_token(self.encoding);
            let mut counter = PieceCounter::new(self.tokenizer(), self.pieces, text.len());
            let mut consumed = 0usize;
            let mut rest = text.len();
            for piece in self.tokenizer().split(text) {
                // The rest has at least ceil(rest / longest) tokens; ceil(r / l) > k iff r > k·l.
                if consumed > limit || rest > (limit - consumed).saturating_mul(longest) {
                    return Some(None);
                }
                consumed += counter.piece(piece);
                rest = rest.checked_sub(piece.len())?;
            }
            // Pieces always cover the whole text; if they did not, the count would be short.
            (rest == 0).then_some((consumed <= limit).then_some(consumed))
        })?;
        counted.ok_or_else(|| TokenError::Backend {
            backend: self.id.to_owned(),
            reason: "the pre-tokenizer did not cover the whole text".to_owned(),
        })
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenError> {
        guarded(self.id, || self.tokenizer().encode(text))
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenError> {
        // An id outside the vocabulary, or bytes that are not UTF-8, decode to nothing.
        guarded(self.id, || self.tokenizer().decode(ids))?.ok_or_else(|| self.decode_error())
    }

    fn max_token_bytes(&self) -> Option<usize> {
        Some(longest_token(self.encoding))
    }

    /// Re-splits from the last piece an append could change (see [`CountedText`](super::CountedText)).
    fn count_appended(&self, text: &str, from: CountCheckpoint) -> Result<CountCheckpoint, TokenError> {
        self.threads_for(0)?;
        let from = if from.fits_within(text) { from } else { CountCheckpoint::default() };
        guarded(self.id, || incremental::advance(self.tokenizer(), self.pieces, text, from))
    }
}

/// tiktoken-rs (`encode_ordinary`), for ctx's own differential tests and benchmarks (internal
/// feature `__tiktoken`, not for users).
///
/// tiktoken-rs panics on pathological input (a whitespace run of about 1 MB exhausts its
/// regex's backtracking stack); this backend reports that as [`TokenError::Backend`].
#[cfg(feature = "__tiktoken")]
#[cfg_attr(docsrs, doc(cfg(feature = "__tiktoken")))]
#[derive(Clone, Copy)]
pub struct TiktokenBackend {
    encoding: Encoding,
    bpe: &'static tiktoken_rs::CoreBPE,
    id: &'static str,
}

#[cfg(feature = "__tiktoken")]
impl TiktokenBackend {
    /// The backend for `encoding`.
    pub fn new(encoding: Encoding) -> Self {
        let (bpe, id) = match encoding {
            Encoding::Cl100kBase => (tiktoken_rs::cl100k_base_singleton(), "tiktoken-rs/cl100k_base"),
            Encoding::O200kBase => (tiktoken_rs::o200k_base_singleton(), "tiktoken-rs/o200k_base"),
        };
        TiktokenBackend { encoding, bpe, id }
    }

    /// The encoding this backend counts with.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    fn decode_error(&self) -> TokenError {
        TokenError::Decode { encoding: self.encoding.name().to_owned() }
    }
}

#[cfg(feature = "__tiktoken")]
impl fmt::Debug for TiktokenBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TiktokenBackend").field("encoding", &self.encoding).finish()
    }
}

#[cfg(feature = "__tiktoken")]
impl TokenizerBackend for TiktokenBackend {
    fn id(&self) -> &str {
        self.id
    }

    fn count(&self, text: &str) -> Result<usize, TokenError> {
        guarded(self.id, || self.bpe.encode_ordinary(text).len())
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenError> {
        guarded(self.id, || self.bpe.encode_ordinary(text))
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenError> {
        let bytes = guarded(self.id, || self.bpe.decode_bytes(ids).ok())?.ok_or_else(|| self.decode_error())?;
        String::from_utf8(bytes).map_err(|_| self.decode_error())
    }

    fn max_token_bytes(&self) -> Option<usize> {
        // The same vocabulary as ctx's own (the unit tests check they agree, rank by rank).
        Some(longest_token(self.encoding))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_token_is_read_from_the_vocabulary() {
        for e in Encoding::ALL {
            let longest = longest_token(e);
            let tokens = openai_vocab::vocab(e).ranks().tokens();
            assert!(tokens.iter().any(|t| t.len() == longest), "{e}: no token of {longest} bytes");
            assert!(tokens.iter().all(|t| t.len() <= longest));
            assert_eq!(longest, 128, "{e}");
        }
    }

    #[test]
    fn count_up_to_is_exact_at_every_limit_around_the_count() {
        let b = BpeBackend::new(Encoding::Cl100kBase);
        let text = "fn main() {\n    println!(\"héllo, wörld\");\n}\n\n\n   trailing   ";
        let n = b.count(text).unwrap();
        for limit in 0..n + 3 {
            let want = (n <= limit).then_some(n);
            assert_eq!(b.count_up_to(text, limit).unwrap(), want, "limit {limit}");
        }
    }

    #[test]
    fn both_backends_decode_what_they_encode() {
        for e in Encoding::ALL {
            #[cfg_attr(not(feature = "__tiktoken"), allow(unused_mut))]
            let mut backends: Vec<Box<dyn TokenizerBackend>> = vec![Box::new(BpeBackend::new(e))];
            #[cfg(feature = "__tiktoken")]
            backends.push(Box::new(TiktokenBackend::new(e)));
            for backend in &backends {
                let text = "naïve café — 東京 🦀 <|endoftext|>";
                assert_eq!(backend.decode(&backend.encode(text).unwrap()).unwrap(), text);
                assert!(matches!(
                    backend.decode(&[u32::MAX]),
                    Err(TokenError::Decode { .. } | TokenError::Backend { .. })
                ));
            }
        }
    }

    #[test]
    fn a_token_cut_inside_a_character_does_not_decode() {
        let b = BpeBackend::new(Encoding::Cl100kBase);
        // One CJK character that cl100k splits into two byte-level tokens.
        let ids = b.encode("誕").unwrap();
        assert!(ids.len() > 1, "{ids:?}");
        assert!(matches!(b.decode(&ids[..1]), Err(TokenError::Decode { .. })));
    }
}
