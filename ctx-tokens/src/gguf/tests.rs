use proptest::prelude::*;

use super::*;

/// Builds GGUF bytes: the test's own writer, independent of the reader.
#[derive(Default)]
struct Writer {
    entries: Vec<u8>,
    count: u64,
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

impl Writer {
    fn key(&mut self, key: &str, ty: u32) -> &mut Vec<u8> {
        self.count += 1;
        put_str(&mut self.entries, key);
        self.entries.extend_from_slice(&ty.to_le_bytes());
        &mut self.entries
    }

    fn string(mut self, key: &str, value: &str) -> Self {
        put_str(self.key(key, 8), value);
        self
    }

    fn u32(mut self, key: &str, value: u32) -> Self {
        self.key(key, 4).extend_from_slice(&value.to_le_bytes());
        self
    }

    fn bool(mut self, key: &str, value: bool) -> Self {
        self.key(key, 7).push(u8::from(value));
        self
    }

    fn strings(mut self, key: &str, items: &[&str]) -> Self {
        let out = self.key(key, 9);
        out.extend_from_slice(&8u32.to_le_bytes());
        out.extend_from_slice(&(items.len() as u64).to_le_bytes());
        for s in items {
            put_str(out, s);
        }
        self
    }

    fn i32s(mut self, key: &str, items: &[i32]) -> Self {
        let out = self.key(key, 9);
        out.extend_from_slice(&5u32.to_le_bytes());
        out.extend_from_slice(&(items.len() as u64).to_le_bytes());
        for n in items {
            out.extend_from_slice(&n.to_le_bytes());
        }
        self
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&2u64.to_le_bytes()); // tensors (never read)
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.entries);
        out.extend_from_slice(&[0xAB; 64]); // tensor infos and weights, which are not read
        out
    }
}

fn sample() -> Vec<u8> {
    Writer::default()
        .string("general.architecture", "llama")
        .u32("llama.context_length", 8192)
        .bool("tokenizer.ggml.add_bos_token", false)
        .string("tokenizer.ggml.model", "gpt2")
        .strings("tokenizer.ggml.tokens", &["<s>", "a", "b", "ab", "é"])
        .i32s("tokenizer.ggml.token_type", &[3, 1, 1, 1, 1])
        .u32("tokenizer.ggml.bos_token_id", 0)
        .string("tokenizer.chat_template", "{{ messages[0].content }}")
        .bytes()
}

#[test]
fn reads_the_metadata_it_was_given() {
    let m = GgufMetadata::parse(&sample(), "model.gguf").unwrap();
    assert_eq!((m.version(), m.tensor_count(), m.entries().len()), (3, 2, 8));
    assert_eq!(m.architecture().unwrap(), Some("llama"));
    assert_eq!(m.context_length().unwrap(), Some(8192));
    assert_eq!(m.bool("tokenizer.ggml.add_bos_token").unwrap(), Some(false));
    assert_eq!(m.strings("tokenizer.ggml.tokens").unwrap(), ["<s>", "a", "b", "ab", "é"]);
    assert_eq!(m.ints("tokenizer.ggml.token_type").unwrap(), [3, 1, 1, 1, 1]);
    assert_eq!(m.token_text("tokenizer.ggml.bos_token_id").unwrap(), Some("<s>"));
    assert_eq!(m.chat_template().unwrap(), Some("{{ messages[0].content }}"));
    assert_eq!(m.str("absent").unwrap(), None);
}

#[test]
fn wrong_types_and_missing_keys_are_errors_naming_file_and_key() {
    let m = GgufMetadata::parse(&sample(), "dir/model.gguf").unwrap();
    let err = m.str("llama.context_length").unwrap_err();
    assert!(matches!(err, GgufError::Type { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("dir/model.gguf") && text.contains("llama.context_length"), "{text}");
    let err = m.strings("tokenizer.ggml.merges").unwrap_err();
    assert!(matches!(err, GgufError::Missing { .. }) && err.to_string().contains("tokenizer.ggml.merges"));
    assert!(m.ints("tokenizer.ggml.tokens").is_err());
}

#[test]
fn every_truncation_is_a_format_error_at_an_offset() {
    let bytes = sample();
    let metadata_end = bytes.len() - 64;
    for cut in 0..metadata_end {
        let err = GgufMetadata::parse(&bytes[..cut], "cut.gguf").unwrap_err();
        assert!(matches!(err, GgufError::Format { .. }), "cut at {cut}: {err}");
        assert!(err.to_string().contains("cut.gguf"), "{err}");
    }
    // The tensors are never read: the metadata alone is enough.
    assert!(GgufMetadata::parse(&bytes[..metadata_end], "m.gguf").is_ok());
}

#[test]
fn bad_headers_are_refused() {
    let mut bytes = sample();
    bytes[0] = b'X';
    assert!(GgufMetadata::parse(&bytes, "m").unwrap_err().to_string().contains("GGUF"));
    let mut bytes = sample();
    bytes[4..8].copy_from_slice(&1u32.to_le_bytes());
    assert!(GgufMetadata::parse(&bytes, "m").unwrap_err().to_string().contains("version 1"));
    // A huge declared length is refused before anything is allocated.
    let mut bytes = sample();
    bytes[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(GgufMetadata::parse(&bytes, "m").unwrap_err().to_string().contains("declared"));
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let err = GgufMetadata::read("/nonexistent/ctx/model.gguf").unwrap_err();
    assert!(matches!(err, GgufError::Io { .. }) && err.to_string().contains("/nonexistent/ctx/model.gguf"));
}

#[test]
fn arrays_nested_too_deep_are_refused() {
    let mut w = Writer::default();
    let out = w.key("deep", 9);
    for _ in 0..MAX_DEPTH + 2 {
        out.extend_from_slice(&9u32.to_le_bytes());
        out.extend_from_slice(&1u64.to_le_bytes());
    }
    let err = GgufMetadata::parse(&w.bytes(), "m").unwrap_err();
    assert!(err.to_string().contains("nest"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = GgufMetadata::parse(&bytes, "random.gguf");
        let mut with_magic = b"GGUF\x03\0\0\0".to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = GgufMetadata::parse(&with_magic, "random.gguf");
    }

    #[test]
    fn mutated_files_never_panic(edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = sample();
        for (at, byte) in edits {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        if let Ok(m) = GgufMetadata::parse(&bytes, "mutated.gguf") {
            // Whatever was read, the accessors answer without panicking.
            let _ = (m.context_length(), m.chat_template(), m.strings("tokenizer.ggml.tokens"));
            let _ = m.token_text("tokenizer.ggml.bos_token_id");
        }
    }
}
