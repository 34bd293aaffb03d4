//! Errors of token counting and model/encoding resolution. Their error codes (`TOKEN_DECODE`, …)
//! are given by ctx-spec's registry, which implements its `ErrorCode` for this type.

/// Errors of token counting and model/encoding resolution.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The model name is not in ctx's model table ([`crate::MODEL_TABLE`]).
    #[error(
        "unknown model `{model}`: its encoding and context window are not in ctx's OpenAI model table{}; \
         give the encoding and `context_window` explicitly",
        suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default()
    )]
    UnknownModel {
        /// The model name as given.
        model: String,
        /// The closest known name, when one is close.
        suggestion: Option<String>,
    },
    /// The encoding name is not one ctx can count with.
    #[error("unknown encoding `{name}`: expected one of {expected}")]
    UnknownEncoding {
        /// The encoding name as given.
        name: String,
        /// The accepted names, comma-separated.
        expected: &'static str,
    },
    /// A tokenizer backend failed (for example a remote tokenize endpoint).
    #[error("tokenizer backend `{backend}` failed: {reason}")]
    Backend {
        /// The backend's id.
        backend: String,
        /// What went wrong.
        reason: String,
    },
    /// A chat template cannot render part of a request (tool schemas, tool calls, names), so the
    /// server would drop it without the model ever seeing it.
    #[error("chat template `{template}` cannot render {what}; the server would drop it silently")]
    TemplateUnsupported {
        /// The template's name.
        template: String,
        /// What it cannot render, and where.
        what: String,
    },
    /// A model file (tokenizer.json, tokenizer_config.json, GGUF) cannot be read or used.
    #[error("model file `{path}`: {reason}")]
    ModelFile {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A model's chat template failed to render a request (a syntax error, or the template's own
    /// `raise_exception`, such as "roles must alternate user/assistant").
    #[error("chat template `{template}` failed: {reason}")]
    TemplateRender {
        /// The template's name.
        template: String,
        /// The engine's or the template's words.
        reason: String,
    },
    /// An assistant message carries an OpenAI Responses reasoning item with `encrypted_content`
    /// but no count of the reasoning tokens it holds (`ChatMessage::reasoning_tokens`), which no
    /// local tokenizer can see.
    #[error(
        "reasoning item `{item}` carries encrypted reasoning that no local tokenizer can count, and its message has \
         no `reasoning_tokens`; set it to the reasoning tokens the server reported for the reply that produced it"
    )]
    UncountedReasoning {
        /// The item's `id`.
        item: String,
    },
    /// Token ids that do not decode to UTF-8 text.
    #[error("token ids do not decode to valid UTF-8 under `{encoding}`")]
    Decode {
        /// The encoding used.
        encoding: String,
    },
}

#[cfg(test)]
mod tests {
    use super::TokenError;

    /// A new variant stops this test compiling, on purpose: give it its code in ctx-spec's
    /// `codes/foreign.rs` (whose match cannot list it, the enum being `#[non_exhaustive]` there),
    /// then add it here.
    #[test]
    fn every_variant_has_a_code_in_ctx_spec() {
        let all = [
            TokenError::UnknownModel { model: "m".into(), suggestion: None },
            TokenError::UnknownEncoding { name: "e".into(), expected: "cl100k_base, o200k_base" },
            TokenError::Backend { backend: "b".into(), reason: "r".into() },
            TokenError::TemplateUnsupported { template: "t".into(), what: "tools".into() },
            TokenError::ModelFile { path: "p".into(), reason: "r".into() },
            TokenError::TemplateRender { template: "t".into(), reason: "r".into() },
            TokenError::Decode { encoding: "cl100k_base".into() },
            TokenError::UncountedReasoning { item: "rs_1".into() },
        ];
        for error in &all {
            match error {
                TokenError::UnknownModel { .. }
                | TokenError::UnknownEncoding { .. }
                | TokenError::Backend { .. }
                | TokenError::TemplateUnsupported { .. }
                | TokenError::ModelFile { .. }
                | TokenError::TemplateRender { .. }
                | TokenError::Decode { .. }
                | TokenError::UncountedReasoning { .. } => assert!(!error.to_string().is_empty()),
            }
        }
    }
}
