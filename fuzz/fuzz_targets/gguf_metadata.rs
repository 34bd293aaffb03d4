//! GGUF metadata on any bytes: a typed error naming the file, or metadata whose accessors answer;
//! never a panic, never an allocation larger than the input could hold.

#![no_main]

use ctx_runtime::tokens::{GgufError, GgufMetadata};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    // Also as a valid header followed by the fuzzer's bytes, so the entries get exercised.
    let mut framed = b"GGUF\x03\0\0\0\0\0\0\0\0\0\0\0".to_vec();
    framed.extend_from_slice(&(bytes.first().copied().unwrap_or(1) as u64 % 8).to_le_bytes());
    framed.extend_from_slice(bytes);
    for input in [bytes, framed.as_slice()] {
        match GgufMetadata::parse(input, "fuzz.gguf") {
            Ok(meta) => {
                let _ = (meta.context_length(), meta.chat_template(), meta.architecture());
                let _ = (meta.strings("tokenizer.ggml.tokens"), meta.ints("tokenizer.ggml.token_type"));
                let _ = meta.token_text("tokenizer.ggml.bos_token_id");
            }
            Err(e) => {
                let named = match &e {
                    GgufError::Format { path, .. } | GgufError::Io { path, .. } => path == "fuzz.gguf",
                    _ => false,
                };
                assert!(named, "a parse error names the file: {e}");
            }
        }
    }
});
