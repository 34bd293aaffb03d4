//! The codes of errors defined on a floor below ctx-spec, where the registry cannot be named:
//! `ctx_tokens::TokenError`. The trait is ctx-spec's, so the impl may live here.

use ctx_tokens::TokenError;

use super::{Code, ErrorCode};

impl ErrorCode for TokenError {
    fn code(&self) -> Code {
        match self {
            TokenError::UnknownModel { .. } => Code::UnknownModel,
            TokenError::UnknownEncoding { .. } => Code::UnknownEncoding,
            TokenError::Backend { .. } => Code::TokenizerBackend,
            TokenError::Decode { .. } => Code::TokenDecode,
            TokenError::TemplateUnsupported { .. } => Code::ChatTemplateUnsupported,
            TokenError::ModelFile { .. } => Code::ModelFile,
            TokenError::TemplateRender { .. } => Code::ChatTemplateRender,
            TokenError::UncountedReasoning { .. } => Code::ReasoningUncounted,
            // The enum is `#[non_exhaustive]` to its users, so this match needs an arm for
            // variants it cannot see. There are none: ctx-tokens is pinned to this crate's
            // version, and its test `every_variant_has_a_code_in_ctx_spec` stops compiling when a
            // variant is added, until the variant gets its arm above.
            _ => Code::TokenizerBackend,
        }
    }
}

#[cfg(test)]
mod tests {
    use ctx_tokens::{Encoding, ModelInfo, TokenCounter};

    use super::*;

    #[test]
    fn token_errors_carry_their_codes() {
        for name in ["gpt-4o-typo", "GPT-4o", "o1x"] {
            assert_eq!(ModelInfo::lookup(name).unwrap_err().code(), "UNKNOWN_MODEL", "{name}");
        }
        assert_eq!("cl100k".parse::<Encoding>().unwrap_err().code(), "UNKNOWN_ENCODING");
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        assert_eq!(counter.decode(&[u32::MAX]).unwrap_err().code(), "TOKEN_DECODE");
    }
}
