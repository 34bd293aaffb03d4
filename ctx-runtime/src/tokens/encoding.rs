//! Encodings and models: which BPE a model uses and how large its window is.
//!
//! Both answers come from tiktoken-rs's own model tables (`get_tokenizer`, `get_context_size`),
//! never from a table typed here, so they follow the crate when it learns new models.

use std::fmt;
use std::str::FromStr;

use crate::error::TokenError;

/// A byte-pair encoding ctx can count with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// GPT-3.5 / GPT-4 encoding.
    Cl100kBase,
    /// GPT-4o / o-series / GPT-4.1 / GPT-5 encoding.
    O200kBase,
}

impl Encoding {
    /// All encodings, in a stable order.
    pub const ALL: [Encoding; 2] = [Encoding::Cl100kBase, Encoding::O200kBase];

    /// The encoding's canonical name (`cl100k_base`).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::O200kBase => "o200k_base",
        }
    }

    /// The encoding a model uses, from tiktoken-rs's model table.
    pub fn for_model(model: &str) -> Result<Encoding, TokenError> {
        use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};
        match get_tokenizer(model) {
            Some(Tokenizer::Cl100kBase) => Ok(Encoding::Cl100kBase),
            Some(Tokenizer::O200kBase) | Some(Tokenizer::O200kHarmony) => Ok(Encoding::O200kBase),
            // r50k/p50k models are legacy completion models whose windows are too small to
            // matter here; treating them as unknown is better than counting with the wrong BPE.
            _ => Err(TokenError::UnknownModel { model: model.to_owned() }),
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Encoding {
    type Err = TokenError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cl100k_base" => Ok(Encoding::Cl100kBase),
            "o200k_base" => Ok(Encoding::O200kBase),
            _ => Err(TokenError::UnknownEncoding { name: s.to_owned(), expected: "cl100k_base, o200k_base" }),
        }
    }
}

/// What the tokenizer crate's tables know about a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// The model name as given.
    pub model: String,
    /// Its encoding.
    pub encoding: Encoding,
    /// Its context window (prompt + completion), in tokens.
    pub context_window: usize,
}

impl ModelInfo {
    /// Looks a model up. An unknown model, or one whose window the table does not know, is an
    /// error: ctx never guesses a window.
    pub fn lookup(model: &str) -> Result<ModelInfo, TokenError> {
        let encoding = Encoding::for_model(model)?;
        let context_window = tiktoken_rs::model::get_context_size(model)
            .ok_or_else(|| TokenError::UnknownModel { model: model.to_owned() })?;
        Ok(ModelInfo { model: model.to_owned(), encoding, context_window })
    }

    /// Looks a model up, but uses `window` when given (for fine-tunes, proxies and local models
    /// whose window differs from the table's). The encoding must still be known.
    pub fn lookup_with_window(model: &str, window: Option<usize>) -> Result<ModelInfo, TokenError> {
        match window {
            Some(context_window) => {
                Ok(ModelInfo { model: model.to_owned(), encoding: Encoding::for_model(model)?, context_window })
            }
            None => Self::lookup(model),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_resolve_from_the_crate_table() {
        let m = ModelInfo::lookup("gpt-4o").unwrap();
        assert_eq!(m.encoding, Encoding::O200kBase);
        assert_eq!(m.context_window, 128_000);
        let m = ModelInfo::lookup("gpt-4").unwrap();
        assert_eq!((m.encoding, m.context_window), (Encoding::Cl100kBase, 8192));
        assert_eq!(ModelInfo::lookup("gpt-3.5-turbo").unwrap().encoding, Encoding::Cl100kBase);
    }

    #[test]
    fn unknown_model_is_an_error_never_a_default() {
        let err = ModelInfo::lookup("llama3.2:3b").unwrap_err();
        assert!(matches!(err, TokenError::UnknownModel { .. }));
        assert!(err.to_string().contains("llama3.2:3b"));
        // An explicit window does not make an unknown encoding known.
        assert!(ModelInfo::lookup_with_window("llama3.2:3b", Some(8192)).is_err());
        assert_eq!(ModelInfo::lookup_with_window("gpt-4o", Some(1000)).unwrap().context_window, 1000);
    }

    #[test]
    fn encoding_names_round_trip() {
        for e in Encoding::ALL {
            assert_eq!(e.name().parse::<Encoding>().unwrap(), e);
        }
        assert!("p50k".parse::<Encoding>().is_err());
    }
}
