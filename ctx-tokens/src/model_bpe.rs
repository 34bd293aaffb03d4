//! Exact counting for the byte-level BPE models of model files (Llama 3, Qwen 2 and 3, GPT-2,
//! SmolLM, StarCoder) on ctx's own scanners, merge and piece cache, with no regex engine.
//!
//! `tokenizers` counts these models at 2–3 MB/s: a fancy-regex split, then a merge per word with a
//! heap of candidate pairs. A model's tokenizer is recognised here from the `tokenizer.json` (or
//! the one ctx writes for a GGUF file, `hf.rs`) when every stage is one ctx reproduces exactly:
//!
//! - no normalizer, truncation or padding; added tokens without `lstrip`, `rstrip` or
//!   `single_word` (they are cut out first, as `tokenizers` does: leftmost-longest, the tokens
//!   marked `normalized: false` in a first pass and the others in the gaps it leaves);
//! - a pre-tokenizer whose pattern has a scanner (`pretokenize.rs`): `Split` on Llama 3's or
//!   Qwen 2's regex followed by `ByteLevel` without its regex, `ByteLevel` with its regex
//!   (GPT-2), or `Digits` one by one followed by it (SmolLM, StarCoder); never a prefix space;
//! - a BPE model over the 256 byte-level characters, no dropout, no subword prefix or suffix; a
//!   byte with no token of its own (StarCoder, Refact and SmolLM2 lack a few) is left out of the
//!   word as `tokenizers` leaves it out, unless an unknown token or byte fallback stands in for it.
//!
//! Anything else keeps the `tokenizers` path (`HfTokenizer` says which with
//! [`HfTokenizer::counts_natively`](super::HfTokenizer::counts_natively)).
//!
//! The merge is the model's own, from its merge list: `tokenizers` and llama.cpp merge the pair
//! of adjacent parts whose merge comes first in the list, leftmost first on a tie, and only pairs
//! the list names (a token the list cannot reach is never produced, unlike a rank file where
//! any concatenation that is a token merges). Where a list names a pair twice, the later rank
//! counts, as `tokenizers` builds its map. With `ignore_merges` (Llama 3) a piece that is a token
//! is that token, as both do.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fmt;

use aho_corasick::{AhoCorasick, MatchKind};
use quick_cache::DefaultHashBuilder;
use serde_json::Value;

use super::pieces::{PieceCache, PieceCounter, PieceVocab, pack};
use super::pretokenize::{Pattern, Pieces};
use tables::{PairTable, ShortSet};

/// Llama 3's pre-tokenizer regex (`tokenizer.ggml.pre = llama-bpe`), cl100k_base's.
pub(super) const LLAMA3_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Qwen 2's (`tokenizer.ggml.pre = qwen2`): Llama 3's with one digit per piece.
pub(super) const QWEN2_REGEX: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Pieces up to this many bytes are merged in arrays on the stack; longer ones with a heap,
/// unless they are a few runs of one repeated byte (`runs.rs`: merged run by run).
const SMALL: usize = 64;

/// No merge for this pair.
const NONE: u64 = u64::MAX;

/// A byte the vocabulary has no token for: `tokenizers` (with no unknown token) leaves its
/// character out of the word, and its neighbours become adjacent.
const NO_TOKEN: u32 = u32::MAX;

/// The byte-level BPE of one model file: its pattern, byte tokens, merge list and added tokens,
/// and its own piece cache.
pub(crate) struct ModelBpe {
    pattern: Pattern,
    ignore_merges: bool,
    /// The token of each byte, [`NO_TOKEN`] for a byte the vocabulary lacks.
    byte_ids: [u32; 256],
    /// Whether some byte has no token (StarCoder's vocabulary lacks `0xC0`, `0xC1`, `0xF1` and
    /// `0xF5` to `0xFF`; SmolLM2's also a few control characters).
    missing_bytes: bool,
    /// `(left << 32 | right)` to `(rank << 32 | merged)`.
    merges: PairTable,
    merge_count: usize,
    /// The same for two byte tokens, by the two bytes (`a << 8 | b`): the first lookups of every
    /// merge, one table read instead of a hash probe (512 KiB).
    byte_pairs: Box<[u64]>,
    /// With `ignore_merges`: every token by its bytes, packed as the piece cache packs pieces
    /// up to 15 bytes, as a byte string above.
    short_tokens: ShortSet,
    long_tokens: HashSet<Box<[u8]>, DefaultHashBuilder>,
    /// The added tokens' passes, in order: `normalized: false`, then the others.
    specials: Vec<AhoCorasick>,
    cache: PieceCache,
}

impl fmt::Debug for ModelBpe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelBpe")
            .field("pattern", &self.pattern)
            .field("merges", &self.merge_count)
            .field("ignore_merges", &self.ignore_merges)
            .field("memory_bytes", &self.memory_bytes())
            .finish()
    }
}

/// GPT-2's byte-to-character table: printable Latin-1 bytes stand for themselves, the 68 others
/// for U+0100 onwards in byte order.
pub(super) fn byte_chars() -> [char; 256] {
    let printable = |b: u32| (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
    let mut chars = ['\0'; 256];
    let mut next = 256;
    for (b, c) in (0u32..).zip(chars.iter_mut()) {
        let n = if printable(b) {
            b
        } else {
            next += 1;
            next - 1
        };
        *c = char::from_u32(n).unwrap_or('\0');
    }
    chars
}

/// The bytes a byte-level token stands for; `None` when a character is not one of the 256.
fn token_bytes(token: &str, byte_of: &HashMap<char, u8>) -> Option<Vec<u8>> {
    token.chars().map(|c| byte_of.get(&c).copied()).collect()
}

fn is_null_or_empty(v: Option<&Value>) -> bool {
    v.is_none_or(|v| v.is_null() || v.as_str() == Some(""))
}

/// `ByteLevel` with no prefix space, its own regex on or off.
fn is_byte_level(pre: &Value, use_regex: bool) -> bool {
    pre.get("type").and_then(Value::as_str) == Some("ByteLevel")
        // `tokenizers` defaults both to true when absent.
        && pre.get("add_prefix_space").and_then(Value::as_bool) == Some(false)
        && pre.get("use_regex").and_then(Value::as_bool).unwrap_or(true) == use_regex
}

/// The scanner of a `tokenizer.json` pre-tokenizer, when ctx has one.
pub(super) fn pattern_of(pre: &Value) -> Option<Pattern> {
    if is_byte_level(pre, true) {
        return Some(Pattern::Gpt2);
    }
    if pre.get("type").and_then(Value::as_str) != Some("Sequence") {
        return None;
    }
    let [first, second] = pre.get("pretokenizers").and_then(Value::as_array)?.as_slice() else { return None };
    match first.get("type").and_then(Value::as_str)? {
        "Digits" if first.get("individual_digits").and_then(Value::as_bool) == Some(true) => {
            is_byte_level(second, true).then_some(Pattern::Gpt2Digits)
        }
        "Split"
            if first.get("behavior").and_then(Value::as_str) == Some("Isolated")
                && first.get("invert").and_then(Value::as_bool) == Some(false)
                && is_byte_level(second, false) =>
        {
            match first.pointer("/pattern/Regex").and_then(Value::as_str)? {
                LLAMA3_REGEX => Some(Pattern::Cl100k),
                QWEN2_REGEX => Some(Pattern::Qwen2),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A merge of the list: `"a b"` or `["a", "b"]`.
fn merge_pair(merge: &Value) -> Option<(&str, &str)> {
    match merge {
        Value::String(s) => s.split_once(' '),
        Value::Array(pair) => match pair.as_slice() {
            [Value::String(a), Value::String(b)] => Some((a, b)),
            _ => None,
        },
        _ => None,
    }
}

impl ModelBpe {
    /// The model of a `tokenizer.json`, or why ctx cannot count it on its own.
    pub(crate) fn from_spec(spec: &Value) -> Result<Self, String> {
        for key in ["normalizer", "truncation", "padding"] {
            if !spec.get(key).is_none_or(Value::is_null) {
                return Err(format!("it has a {key}"));
            }
        }
        let pattern = spec
            .get("pre_tokenizer")
            .and_then(pattern_of)
            .ok_or("its pre-tokenizer is not one ctx has a scanner for")?;
        let model = spec.get("model").ok_or("it has no model")?;
        if model.get("type").and_then(Value::as_str) != Some("BPE") {
            return Err("its model is not BPE".to_owned());
        }
        if !model.get("dropout").is_none_or(Value::is_null)
            || !is_null_or_empty(model.get("continuing_subword_prefix"))
            || !is_null_or_empty(model.get("end_of_word_suffix"))
        {
            return Err("its BPE has dropout or a subword prefix or suffix".to_owned());
        }
        let ignore_merges = model.get("ignore_merges").and_then(Value::as_bool).unwrap_or(false);
        let vocab: HashMap<&str, u32> = model
            .get("vocab")
            .and_then(Value::as_object)
            .ok_or("its model has no vocabulary")?
            .iter()
            .map(|(token, id)| Some((token.as_str(), u32::try_from(id.as_u64()?).ok()?)))
            .collect::<Option<_>>()
            .ok_or("a token id is not a number")?;
        let chars = byte_chars();
        let mut byte_ids = [NO_TOKEN; 256];
        for (id, c) in byte_ids.iter_mut().zip(chars) {
            if let Some(&found) = vocab.get(c.encode_utf8(&mut [0; 4]) as &str) {
                *id = found;
            }
        }
        let missing_bytes = byte_ids.contains(&NO_TOKEN);
        // Bytes without a token are left out only when nothing stands in for them.
        if missing_bytes
            && (!is_null_or_empty(model.get("unk_token"))
                || model.get("byte_fallback").and_then(Value::as_bool) == Some(true))
        {
            return Err("a byte has no token, and its BPE has an unknown token or byte fallback for it".to_owned());
        }
        let list = model.get("merges").and_then(Value::as_array).ok_or("its model has no merge list")?;
        // Token ids fit below `u32::MAX`, which marks a free slot of the pair table.
        if vocab.values().any(|&id| id == u32::MAX) {
            return Err("a token id is too large".to_owned());
        }
        let mut merges = PairTable::with_capacity(list.len());
        let mut joined = String::new();
        for (rank, merge) in list.iter().enumerate() {
            let (a, b) = merge_pair(merge).ok_or("a merge is not two tokens")?;
            joined.clear();
            joined.push_str(a);
            joined.push_str(b);
            let (Some(&a), Some(&b), Some(&new)) = (vocab.get(a), vocab.get(b), vocab.get(joined.as_str())) else {
                return Err("a merge names a token out of the vocabulary".to_owned());
            };
            let rank = u32::try_from(rank).map_err(|_| "too many merges")?;
            merges.insert(u64::from(a) << 32 | u64::from(b), u64::from(rank) << 32 | u64::from(new));
        }
        let mut byte_pairs = vec![NONE; 1 << 16].into_boxed_slice();
        for (a, &left) in byte_ids.iter().enumerate().filter(|(_, id)| **id != NO_TOKEN) {
            for (b, &right) in byte_ids.iter().enumerate().filter(|(_, id)| **id != NO_TOKEN) {
                byte_pairs[a << 8 | b] = merges.get(u64::from(left) << 32 | u64::from(right), NONE);
            }
        }
        let mut short_tokens = ShortSet::with_capacity(if ignore_merges { vocab.len() } else { 0 });
        let mut long_tokens = HashSet::with_hasher(DefaultHashBuilder::default());
        if ignore_merges {
            let byte_of: HashMap<char, u8> = chars.iter().zip(0u8..=255).map(|(&c, b)| (c, b)).collect();
            for token in vocab.keys() {
                match token_bytes(token, &byte_of) {
                    Some(bytes) if bytes.is_empty() => {}
                    Some(bytes) if bytes.len() <= 15 => short_tokens.insert(pack(&bytes)),
                    Some(bytes) => drop(long_tokens.insert(bytes.into_boxed_slice())),
                    None => {}
                }
            }
        }
        let specials = Self::specials(spec)?;
        Ok(ModelBpe {
            pattern,
            ignore_merges,
            byte_ids,
            missing_bytes,
            merges,
            merge_count: list.len(),
            byte_pairs,
            short_tokens,
            long_tokens,
            specials,
            cache: PieceCache::new(PieceCache::DEFAULT_SHORT_ENTRIES, PieceCache::DEFAULT_LONG_BYTES),
        })
    }

    /// The matchers of the added tokens, one per pass that has tokens.
    fn specials(spec: &Value) -> Result<Vec<AhoCorasick>, String> {
        let mut passes: [Vec<&str>; 2] = [Vec::new(), Vec::new()];
        for added in spec.get("added_tokens").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
            let flag = |key: &str| added.get(key).and_then(Value::as_bool).unwrap_or(false);
            if flag("lstrip") || flag("rstrip") || flag("single_word") {
                return Err("an added token strips spaces or matches single words only".to_owned());
            }
            let content = added.get("content").and_then(Value::as_str).unwrap_or("");
            if content.is_empty() {
                return Err("an added token is empty".to_owned());
            }
            // `normalized` defaults to true for tokens that are not special.
            let normalized = added.get("normalized").and_then(Value::as_bool).unwrap_or(!flag("special"));
            passes[usize::from(normalized)].push(content);
        }
        passes
            .iter()
            .filter(|tokens| !tokens.is_empty())
            .map(|tokens| {
                AhoCorasick::builder().match_kind(MatchKind::LeftmostLongest).build(tokens).map_err(|e| e.to_string())
            })
            .collect()
    }

    /// Bytes held by the merge's tables (the piece cache aside).
    pub(crate) fn memory_bytes(&self) -> usize {
        let long: usize = self.long_tokens.iter().map(|t| t.len() + 16).sum();
        self.merges.memory_bytes() + self.byte_pairs.len() * 8 + self.short_tokens.memory_bytes() + long
    }

    /// The scanner this model cuts by.
    pub(super) fn pattern(&self) -> Pattern {
        self.pattern
    }

    /// Exactly `tokenizers`' count of `text` (added tokens recognised, nothing added around it).
    pub(crate) fn count(&self, text: &str) -> usize {
        let mut counter = PieceCounter::new(self, &self.cache, text.len());
        self.count_pass(&mut counter, text, 0)
    }

    /// This model's piece cache.
    pub(crate) fn piece_cache(&self) -> &PieceCache {
        &self.cache
    }

    /// `text` cut at the added tokens of pass `pass` and the later ones, each one token.
    fn count_pass(&self, counter: &mut PieceCounter<'_, Self>, text: &str, pass: usize) -> usize {
        let Some(matcher) = self.specials.get(pass) else { return counter.count(text) };
        let (mut total, mut at) = (0, 0);
        for found in matcher.find_iter(text) {
            total += self.count_pass(counter, &text[at..found.start()], pass + 1) + 1;
            at = found.end();
        }
        total + self.count_pass(counter, &text[at..], pass + 1)
    }

    #[inline]
    fn pair(&self, left: u32, right: u32) -> u64 {
        self.merges.get(u64::from(left) << 32 | u64::from(right), NONE)
    }

    /// Whether `piece` is a token, under `ignore_merges`.
    fn is_token(&self, piece: &[u8]) -> bool {
        if piece.len() <= 15 { self.short_tokens.contains(pack(piece)) } else { self.long_tokens.contains(piece) }
    }

    /// Whether `piece` (at most 15 bytes, packed as `key` by `pieces::pack`) counts one token
    /// without a merge: under `ignore_merges`, a piece of two or more bytes that is a token.
    #[inline]
    pub(super) fn is_one_token_packed(&self, piece: &[u8], key: u128) -> bool {
        self.ignore_merges && piece.len() > 1 && self.short_tokens.contains(key)
    }

    /// The number of tokens `piece` merges into.
    pub(super) fn count_piece(&self, piece: &[u8]) -> usize {
        // `tokenizers` looks the whole word up before leaving out the characters it has no
        // token for.
        if piece.len() > 1 && self.ignore_merges && self.is_token(piece) {
            return 1;
        }
        if self.missing_bytes && piece.iter().any(|&b| self.byte_ids[usize::from(b)] == NO_TOKEN) {
            let kept: Vec<u8> = piece.iter().copied().filter(|&b| self.byte_ids[usize::from(b)] != NO_TOKEN).collect();
            return self.merge(&kept);
        }
        self.merge(piece)
    }

    /// The number of tokens the merges leave of `piece`, every byte of which has a token.
    fn merge(&self, piece: &[u8]) -> usize {
        if let Some(n) = self.merge_runs_if_few(piece) {
            return n;
        }
        self.merge_parts(piece)
    }

    /// The same, part by part (whatever the piece is made of).
    fn merge_parts(&self, piece: &[u8]) -> usize {
        match piece.len() {
            0 | 1 => piece.len(),
            n if n <= SMALL => self.merge_small(piece),
            _ => self.merge_long(piece),
        }
    }

    /// The merges of the pairs `(a, b)` and `(b, c)` (looked up together, see
    /// [`PairTable::get2`]).
    #[inline]
    fn pairs_around(&self, a: u32, b: u32, c: u32) -> (u64, u64) {
        let key = |l: u32, r: u32| u64::from(l) << 32 | u64::from(r);
        self.merges.get2(key(a, b), key(b, c), NONE)
    }

    /// The merge with the parts in an array: a scan for the leftmost lowest-ranked pair, one
    /// merge, its two neighbouring pairs looked up again.
    fn merge_small(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        let mut ids = [0u32; SMALL];
        let mut pairs = [NONE; SMALL];
        for (id, &b) in ids.iter_mut().zip(piece) {
            *id = self.byte_ids[usize::from(b)];
        }
        for (pair, bytes) in pairs.iter_mut().zip(piece.windows(2)) {
            *pair = self.byte_pairs[usize::from(bytes[0]) << 8 | usize::from(bytes[1])];
        }
        let mut parts = n;
        while parts > 1 {
            let (mut best, mut at) = (NONE, 0);
            // Rank in the high half: the smallest value is the first merge of the list, and a
            // strict comparison keeps the leftmost of equal ones.
            for (i, &p) in pairs[..parts - 1].iter().enumerate() {
                if p < best {
                    (best, at) = (p, i);
                }
            }
            if best == NONE {
                break;
            }
            ids[at] = best as u32;
            ids.copy_within(at + 2..parts, at + 1);
            pairs.copy_within(at + 1..parts - 1, at);
            parts -= 1;
            match (at > 0, at + 1 < parts) {
                (true, true) => (pairs[at - 1], pairs[at]) = self.pairs_around(ids[at - 1], ids[at], ids[at + 1]),
                (true, false) => pairs[at - 1] = self.pair(ids[at - 1], ids[at]),
                (false, true) => pairs[at] = self.pair(ids[at], ids[at + 1]),
                (false, false) => {}
            }
        }
        parts
    }

    /// The same merge for long pieces: parts in a linked list, candidate pairs in a heap by
    /// (rank, position). `current[i]` is the merge of the pair that starts at part `i` now
    /// ([`NONE`] when there is none or the part is gone), kept up to date at every merge, so a
    /// candidate left stale by an earlier merge is told by one comparison, without looking its
    /// pair up again: a rank is one merge of the list, so an equal rank is the same pair.
    fn merge_long(&self, piece: &[u8]) -> usize {
        // Rank and position in one word while positions fit in 32 bits (a piece under 4 GiB).
        if u32::try_from(piece.len()).is_ok() {
            self.merge_heap(
                piece,
                |rank, at| Reverse(u64::from(rank) << 32 | at as u64),
                |Reverse(key)| ((key >> 32) as u32, key as u32 as usize),
            )
        } else {
            self.merge_heap(piece, |rank, at| Reverse((rank, at)), |Reverse(key)| key)
        }
    }

    fn merge_heap<K: Ord>(
        &self,
        piece: &[u8],
        key: impl Fn(u32, usize) -> K,
        open: impl Fn(K) -> (u32, usize),
    ) -> usize {
        const END: usize = usize::MAX;
        let rank = |merge: u64| (merge >> 32) as u32;
        let n = piece.len();
        let mut ids: Vec<u32> = piece.iter().map(|&b| self.byte_ids[usize::from(b)]).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut next: Vec<usize> = (1..=n).map(|i| if i == n { END } else { i }).collect();
        let mut current: Vec<u64> = piece
            .windows(2)
            .map(|b| self.byte_pairs[usize::from(b[0]) << 8 | usize::from(b[1])])
            .chain([NONE])
            .collect();
        let mut heap: BinaryHeap<K> =
            current.iter().enumerate().filter(|&(_, &p)| p != NONE).map(|(i, &p)| key(rank(p), i)).collect();
        let mut parts = n;
        while let Some(top) = heap.pop() {
            let (r, at) = open(top);
            let merge = current[at];
            if merge == NONE || rank(merge) != r {
                continue;
            }
            // A pair has a right part: `current[at]` is NONE otherwise.
            let right = next[at];
            ids[at] = merge as u32;
            current[right] = NONE;
            next[at] = next[right];
            if next[at] != END {
                prev[next[at]] = at;
            }
            parts -= 1;
            let (left, after) = (prev[at], next[at]);
            let (before, q) = match (left != END, after != END) {
                (true, true) => self.pairs_around(ids[left], ids[at], ids[after]),
                (true, false) => (self.pair(ids[left], ids[at]), NONE),
                (false, true) => (NONE, self.pair(ids[at], ids[after])),
                (false, false) => (NONE, NONE),
            };
            if left != END {
                current[left] = before;
                if before != NONE {
                    heap.push(key(rank(before), left));
                }
            }
            current[at] = q;
            if q != NONE {
                heap.push(key(rank(q), at));
            }
        }
        parts
    }
}

impl PieceVocab for ModelBpe {
    #[inline]
    fn split<'t>(&self, text: &'t str) -> Pieces<'t> {
        Pieces::new(self.pattern(), text)
    }

    #[inline]
    fn is_one_token(&self, piece: &[u8], key: u128) -> bool {
        self.is_one_token_packed(piece, key)
    }

    /// A byte with a token is that token (a missing byte is left out, and counts 0).
    #[inline]
    fn is_byte_token(&self, byte: u8) -> bool {
        self.byte_ids[usize::from(byte)] != NO_TOKEN
    }

    #[inline]
    fn count_piece(&self, piece: &[u8]) -> usize {
        ModelBpe::count_piece(self, piece)
    }
}

mod runs;
mod tables;
#[cfg(test)]
mod tests;
