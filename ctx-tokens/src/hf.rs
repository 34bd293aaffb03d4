//! Tokenizers from model files: a Hugging Face `tokenizer.json`, or the tokenizer embedded in a
//! GGUF file, run by the `tokenizers` crate (feature `hf`).
//!
//! **Special tokens are parsed.** A server that renders a chat template (llama.cpp and
//! llama-cpp-python, vLLM, TGI) tokenizes the rendered prompt with its special tokens
//! recognised: `<|im_start|>` in the template — or in a message's content — is one token. This
//! backend counts every text that way (the added tokens of `tokenizer.json`; the CONTROL and
//! USER_DEFINED tokens of a GGUF vocabulary), so the count of a rendered prompt is the count the
//! server reports, and unlike the OpenAI backends, special-token text in a document is counted
//! as the special token it will become. No BOS/EOS is added: the chat templates write them.
//!
//! **A GGUF tokenizer** is rebuilt from `tokenizer.ggml.*`: the vocabulary, the merges, the token
//! types and the pre-tokenizer named by `tokenizer.ggml.pre`, mapped to the same split rules
//! llama.cpp applies for that name (`llama-vocab.cpp`). Byte-level BPE vocabularies
//! (`tokenizer.ggml.model = gpt2`: SmolLM2, Llama 3, Qwen 2, GPT-2 and StarCoder families) are
//! supported; a SentencePiece vocabulary (`llama`) or an unknown pre-tokenizer is refused with
//! an error naming it, never counted with a guess — use the model's `tokenizer.json` instead.

use std::fmt;
use std::path::Path;

use serde_json::{Value, json};
use xxhash_rust::xxh3::xxh3_64;

use std::sync::Arc;

use super::backend::{TokenizerBackend, guarded};
use super::gguf::{GgufError, GgufMetadata};
use super::model_bpe::ModelBpe;
use super::pieces::PieceCache;
use crate::TokenError;

/// The GGUF token types (`llama_token_type`) that are split out of text as one token.
const TOKEN_TYPE_CONTROL: i64 = 3;
const TOKEN_TYPE_USER_DEFINED: i64 = 4;

/// A tokenizer of a model file.
#[derive(Clone)]
pub struct HfTokenizer {
    id: String,
    tokenizer: tokenizers::Tokenizer,
    /// The byte of each byte-level character, when the decoder is byte-level (strict decoding).
    byte_level: bool,
    longest: Option<usize>,
    at_most_one_token_per_byte: bool,
    specials: Vec<String>,
    /// ctx's own scanners, merge and piece cache, when they reproduce this tokenizer exactly.
    native: Option<Arc<ModelBpe>>,
}

impl fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HfTokenizer").field("id", &self.id).field("specials", &self.specials.len()).finish()
    }
}

fn file_error(path: &Path, reason: impl Into<String>) -> TokenError {
    TokenError::ModelFile { path: path.display().to_string(), reason: reason.into() }
}

impl From<GgufError> for TokenError {
    fn from(e: GgufError) -> Self {
        let path = match &e {
            GgufError::Io { path, .. }
            | GgufError::Format { path, .. }
            | GgufError::Missing { path, .. }
            | GgufError::Type { path, .. } => path.clone(),
        };
        TokenError::ModelFile { path, reason: e.to_string() }
    }
}

impl HfTokenizer {
    /// The tokenizer in a Hugging Face `tokenizer.json`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, TokenError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| file_error(path, format!("cannot read it: {e}")))?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Self::from_json_bytes(&bytes, &format!("hf/{name}@{:016x}", xxh3_64(&bytes)), path)
    }

    /// The tokenizer of `tokenizer.json` text; `id` keys the count cache and `path` names the
    /// origin in errors.
    pub fn from_json_bytes(bytes: &[u8], id: &str, path: &Path) -> Result<Self, TokenError> {
        let spec: Value =
            serde_json::from_slice(bytes).map_err(|e| file_error(path, format!("not a tokenizer.json: {e}")))?;
        let tokenizer = guarded(id, || tokenizers::Tokenizer::from_bytes(bytes))?
            .map_err(|e| file_error(path, format!("not a tokenizer.json the tokenizers crate accepts: {e}")))?;
        Ok(Self::new(id.to_owned(), tokenizer, &spec))
    }

    /// The tokenizer embedded in a GGUF file's metadata (`tokenizer.ggml.*`).
    pub fn from_gguf(meta: &GgufMetadata) -> Result<Self, TokenError> {
        let path = meta.path();
        let spec = gguf_tokenizer_json(meta)?;
        let text = spec.to_string();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let id = format!("gguf/{name}@{:016x}", xxh3_64(text.as_bytes()));
        let tokenizer = guarded(&id, || tokenizers::Tokenizer::from_bytes(text.as_bytes()))?
            .map_err(|e| file_error(path, format!("its tokenizer metadata does not build a tokenizer: {e}")))?;
        Ok(Self::new(id, tokenizer, &spec))
    }

    fn new(id: String, tokenizer: tokenizers::Tokenizer, spec: &Value) -> Self {
        let byte_level = spec.pointer("/decoder/type").and_then(Value::as_str) == Some("ByteLevel");
        let specials: Vec<String> = spec
            .get("added_tokens")
            .and_then(Value::as_array)
            .map(|added| {
                added.iter().filter_map(|t| t.get("content").and_then(Value::as_str)).map(str::to_owned).collect()
            })
            .unwrap_or_default();
        // A text of n bytes has at least n / longest tokens only when no normalizer can shrink
        // the text and no pre-tokenizer drops part of it: byte-level tokenizers without a
        // normalizer, whose tokens each stand for as many bytes as their characters.
        let bounded = byte_level
            && spec.get("normalizer").is_none_or(Value::is_null)
            && spec.get("pre_tokenizer").is_some_and(only_byte_level_splits);
        let longest = bounded.then(|| {
            let vocab = tokenizer.get_vocab(true);
            vocab.keys().map(|t| t.chars().count()).chain(specials.iter().map(String::len)).max().unwrap_or(1).max(1)
        });
        let native = ModelBpe::from_spec(spec).ok().map(Arc::new);
        HfTokenizer { id, tokenizer, byte_level, longest, at_most_one_token_per_byte: bounded, specials, native }
    }

    /// Whether this tokenizer counts on ctx's own pre-tokenizer scanners, merge and piece cache
    /// (byte-level BPE models with the pre-tokenizers of Llama 3, Qwen 2, GPT-2 or digits then
    /// GPT-2: 15 to 25 times faster on a cold count), rather than through the `tokenizers`
    /// crate. Either way the count is `tokenizers`' own; which models take which path is listed
    /// in the guide's model chapter.
    pub fn counts_natively(&self) -> bool {
        self.native.is_some()
    }

    /// The piece cache of the native path (each distinct piece is merged once per tokenizer),
    /// `None` on the `tokenizers` path. Bounded as the OpenAI encodings' caches are.
    pub fn piece_cache(&self) -> Option<&PieceCache> {
        self.native.as_deref().map(ModelBpe::piece_cache)
    }

    /// The added (special) tokens, each counted as one token in any text.
    pub fn special_tokens(&self) -> &[String] {
        &self.specials
    }

    /// The wrapped tokenizer.
    pub fn tokenizer(&self) -> &tokenizers::Tokenizer {
        &self.tokenizer
    }

    fn fail(&self, reason: impl fmt::Display) -> TokenError {
        TokenError::Backend { backend: self.id.clone(), reason: reason.to_string() }
    }

    fn decode_error(&self) -> TokenError {
        TokenError::Decode { encoding: self.id.clone() }
    }

    /// Byte-level decoding done here, strictly: a cut inside a multi-byte character is an error,
    /// where the crate's decoder would put U+FFFD in its place.
    fn decode_byte_level(&self, ids: &[u32]) -> Result<String, TokenError> {
        let mut bytes = Vec::new();
        for &id in ids {
            let token = self.tokenizer.id_to_token(id).ok_or_else(|| self.decode_error())?;
            if self.specials.contains(&token) {
                bytes.extend_from_slice(token.as_bytes());
                continue;
            }
            for c in token.chars() {
                bytes.push(byte_of_char(c).ok_or_else(|| self.decode_error())?);
            }
        }
        String::from_utf8(bytes).map_err(|_| self.decode_error())
    }
}

/// Whether a pre-tokenizer only splits (never drops or rewrites text before byte-level mapping).
fn only_byte_level_splits(pre: &Value) -> bool {
    match pre.get("type").and_then(Value::as_str) {
        Some("ByteLevel" | "Digits") => true,
        Some("Split") => pre.get("behavior").and_then(Value::as_str) != Some("Removed"),
        Some("Sequence") => {
            pre.get("pretokenizers").and_then(Value::as_array).is_some_and(|all| all.iter().all(only_byte_level_splits))
        }
        _ => false,
    }
}

/// The inverse of GPT-2's byte-to-character table: printable Latin-1 bytes stand for
/// themselves, the 68 others for U+0100 onwards in byte order.
fn byte_of_char(c: char) -> Option<u8> {
    let n = u32::from(c);
    let printable = |b: u32| (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
    if n < 256 {
        return if printable(n) { u8::try_from(n).ok() } else { None };
    }
    let k = n - 256;
    (0u32..256).filter(|&b| !printable(b)).nth(usize::try_from(k).ok()?).and_then(|b| u8::try_from(b).ok())
}

impl TokenizerBackend for HfTokenizer {
    fn id(&self) -> &str {
        &self.id
    }

    fn count(&self, text: &str) -> Result<usize, TokenError> {
        if let Some(native) = &self.native {
            return guarded(&self.id, || native.count(text));
        }
        let encoding = guarded(&self.id, || self.tokenizer.encode_fast(text, false))?.map_err(|e| self.fail(e))?;
        Ok(encoding.len())
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>, TokenError> {
        let encoding = guarded(&self.id, || self.tokenizer.encode_fast(text, false))?.map_err(|e| self.fail(e))?;
        Ok(encoding.get_ids().to_vec())
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenError> {
        if self.byte_level {
            return self.decode_byte_level(ids);
        }
        if ids.iter().any(|&id| self.tokenizer.id_to_token(id).is_none()) {
            return Err(self.decode_error());
        }
        let text = guarded(&self.id, || self.tokenizer.decode(ids, false))?.map_err(|e| self.fail(e))?;
        // The crate decodes a cut character as U+FFFD; that is not a prefix of any text.
        if text.contains('\u{FFFD}') { Err(self.decode_error()) } else { Ok(text) }
    }

    fn max_token_bytes(&self) -> Option<usize> {
        self.longest
    }

    fn at_most_one_token_per_byte(&self) -> bool {
        self.at_most_one_token_per_byte
    }
}

/// The split rules llama.cpp applies for a `tokenizer.ggml.pre` name, as a `tokenizer.json`
/// pre-tokenizer, and whether whole words found in the vocabulary skip the merges
/// (llama.cpp's `ignore_merges`, set for Llama 3).
fn pre_tokenizer_for(pre: &str) -> Option<(Value, bool)> {
    use super::model_bpe::{LLAMA3_REGEX as LLAMA3, QWEN2_REGEX as QWEN2};
    let byte_level = |use_regex: bool| json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": use_regex});
    let split = |regex: &str| {
        json!([
            {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": false},
            byte_level(false)
        ])
    };
    Some(match pre {
        "gpt-2" | "gpt2" => (byte_level(true), false),
        // Digits one by one, then GPT-2's split (llama.cpp's STARCODER group).
        "smollm" | "starcoder" | "refact" | "command-r" | "codeshell" | "exaone" | "minerva" => (
            json!({"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true}, byte_level(true)]}),
            false,
        ),
        "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "pixtral" => {
            (json!({"type": "Sequence", "pretokenizers": split(LLAMA3)}), true)
        }
        "qwen2" | "deepseek-r1-qwen" | "megrez" => (json!({"type": "Sequence", "pretokenizers": split(QWEN2)}), false),
        _ => return None,
    })
}

/// A `tokenizer.json` equivalent of a GGUF file's tokenizer metadata.
pub(super) fn gguf_tokenizer_json(meta: &GgufMetadata) -> Result<Value, TokenError> {
    let path = meta.path();
    let model =
        meta.str("tokenizer.ggml.model")?.ok_or_else(|| file_error(path, "it has no `tokenizer.ggml.model`"))?;
    if model != "gpt2" {
        return Err(file_error(
            path,
            format!(
                "its tokenizer is `tokenizer.ggml.model = {model}`; ctx reads byte-level BPE (`gpt2`) tokenizers \
                 from GGUF files: give the model's tokenizer.json instead"
            ),
        ));
    }
    let pre = meta.str("tokenizer.ggml.pre")?.unwrap_or("default");
    let (pre_tokenizer, ignore_merges) = pre_tokenizer_for(pre).ok_or_else(|| {
        file_error(
            path,
            format!(
                "its pre-tokenizer `tokenizer.ggml.pre = {pre}` is not one ctx knows the split rules of \
                 (gpt2, smollm/starcoder, llama3/llama-bpe, qwen2); give the model's tokenizer.json instead"
            ),
        )
    })?;
    let tokens = meta.strings("tokenizer.ggml.tokens")?;
    let types = match meta.get("tokenizer.ggml.token_type") {
        Some(_) => meta.ints("tokenizer.ggml.token_type")?,
        None => Vec::new(),
    };
    if !types.is_empty() && types.len() != tokens.len() {
        return Err(file_error(path, format!("it has {} tokens but {} token types", tokens.len(), types.len())));
    }
    let mut vocab = serde_json::Map::with_capacity(tokens.len());
    let mut added = Vec::new();
    for (id, token) in tokens.iter().enumerate() {
        vocab.insert((*token).to_owned(), json!(id));
        let ty = types.get(id).copied().unwrap_or(1);
        if ty == TOKEN_TYPE_CONTROL || ty == TOKEN_TYPE_USER_DEFINED {
            added.push(json!({
                "id": id, "content": token, "single_word": false, "lstrip": false, "rstrip": false,
                "normalized": false, "special": ty == TOKEN_TYPE_CONTROL,
            }));
        }
    }
    if vocab.len() != tokens.len() {
        return Err(file_error(path, "its vocabulary lists a token twice"));
    }
    let merges: Vec<Value> = meta
        .strings("tokenizer.ggml.merges")?
        .iter()
        .map(|m| {
            m.split_once(' ')
                .map(|(a, b)| json!([a, b]))
                .ok_or_else(|| file_error(path, format!("the merge `{m}` is not two tokens separated by a space")))
        })
        .collect::<Result<_, _>>()?;
    Ok(json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {
            "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": ignore_merges,
            "vocab": vocab, "merges": merges,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_table_inverts_gpt2s() {
        // 'Ġ' is the space, 'Ċ' the newline, '!' itself; every byte has exactly one character.
        assert_eq!(byte_of_char('Ġ'), Some(b' '));
        assert_eq!(byte_of_char('Ċ'), Some(b'\n'));
        assert_eq!(byte_of_char('!'), Some(b'!'));
        assert_eq!(byte_of_char(' '), None);
        let mut seen: Vec<u8> = (0u32..512).filter_map(char::from_u32).filter_map(byte_of_char).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 256);
    }

    #[test]
    fn unknown_pre_tokenizers_are_not_guessed() {
        assert!(pre_tokenizer_for("smollm").is_some());
        assert!(pre_tokenizer_for("some-new-model").is_none());
    }
}
