//! Recompute the contract only when its inputs change.
//!
//! A [`Fingerprint`] is a 128-bit XXH3 over everything the check reads: the pipeline definition
//! (after `extends` are merged; raw source files can be added too), the prompt texts, the model
//! configuration, the settings with their resolved policy, and the tokenizer and chat format.
//! [`ContractCache`] keeps the outcome per fingerprint.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use quick_cache::sync::Cache;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

use super::{ContractError, ContractReport};
use crate::config::{ModelConfig, Settings};
use crate::pipeline::definition::PipelineDef;
use crate::tokens::TokenCounter;
use crate::validation::ConfigIssue;

/// A digest of the contract's inputs. Equal inputs give equal fingerprints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Fingerprint(pub u128);

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl Fingerprint {
    /// The fingerprint of one pipeline's contract inputs. `prompts` holds the texts of prompts
    /// that are provided at load time (the definition already holds the inline ones).
    pub fn of(
        def: &PipelineDef,
        prompts: &BTreeMap<String, String>,
        model: &ModelConfig,
        settings: &Settings,
        counter: &TokenCounter,
    ) -> Result<Fingerprint, ContractError> {
        let mut b = FingerprintBuilder::new().pipeline(def)?;
        for (key, text) in prompts {
            b = b.prompt(key, text);
        }
        Ok(b.model(model).settings(settings).counter(counter).finish())
    }
}

/// Builds a [`Fingerprint`] from parts. Each part is written with a tag and a length, so two
/// different sequences of parts cannot produce the same byte stream.
#[derive(Clone)]
pub struct FingerprintBuilder {
    hasher: Xxh3,
}

impl fmt::Debug for FingerprintBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FingerprintBuilder").finish_non_exhaustive()
    }
}

impl Default for FingerprintBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl FingerprintBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        FingerprintBuilder { hasher: Xxh3::new() }
    }

    fn part(&mut self, tag: u8, bytes: &[u8]) {
        self.hasher.update(&[tag]);
        self.hasher.update(&(bytes.len() as u64).to_le_bytes());
        self.hasher.update(bytes);
    }

    /// The pipeline definition (its serde form, which covers every field).
    pub fn pipeline(mut self, def: &PipelineDef) -> Result<Self, ContractError> {
        // Serialized whole, then hashed in one call: the serializer's many small writes would
        // each pay the hasher's per-call cost.
        let json = serde_json::to_vec(def).map_err(|e| ContractError::Fingerprint { reason: e.to_string() })?;
        self.part(b'P', &json);
        Ok(self)
    }

    /// A source file the definition was read from (a pipeline YAML, an `extends` file).
    #[must_use]
    pub fn source_file(mut self, name: &str, contents: &[u8]) -> Self {
        self.part(b'F', name.as_bytes());
        self.part(b'f', contents);
        self
    }

    /// An option of the check that changes its outcome (`key` names it; the value is text).
    #[must_use]
    pub fn option(mut self, key: &str, value: &str) -> Self {
        self.part(b'X', key.as_bytes());
        self.part(b'x', value.as_bytes());
        self
    }

    /// A prompt's key and text.
    #[must_use]
    pub fn prompt(mut self, key: &str, text: &str) -> Self {
        self.part(b'K', key.as_bytes());
        self.part(b'T', text.as_bytes());
        self
    }

    /// The model configuration.
    #[must_use]
    pub fn model(mut self, model: &ModelConfig) -> Self {
        self.part(b'M', model.model.as_deref().unwrap_or_default().as_bytes());
        self.part(b'm', &[u8::from(model.model.is_some())]);
        self.part(b'W', &(model.context_window as u64).to_le_bytes());
        self.part(b'O', &optional(model.max_tokens));
        self.part(b'E', model.encoding.name().as_bytes());
        self
    }

    /// The validated settings, including the resolved policy (which may come from the
    /// environment or `config.json`, not only from the definition).
    #[must_use]
    pub fn settings(mut self, settings: &Settings) -> Self {
        self.part(b'C', &(settings.max_context_tokens as u64).to_le_bytes());
        self.part(b'H', &optional(settings.max_history_tokens));
        self.part(b'S', &(settings.safety_margin_tokens as u64).to_le_bytes());
        self.part(b'L', settings.policy.name().as_bytes());
        // The inputs' budgets are terms of the inequality too.
        self.part(b'Q', &optional(settings.max_question_tokens));
        self.part(b'V', &optional(settings.max_variable_tokens));
        self
    }

    /// The tokenizer and chat format the prompts are counted with.
    #[must_use]
    pub fn counter(mut self, counter: &TokenCounter) -> Self {
        self.part(b'B', counter.backend_id().as_bytes());
        self.part(b'R', format!("{:?}", counter.format()).as_bytes());
        self
    }

    /// The fingerprint of everything added.
    pub fn finish(self) -> Fingerprint {
        Fingerprint(self.hasher.digest128())
    }
}

/// An optional count as bytes: a presence flag, then the value (0 when absent), so that `None`
/// and every `Some` differ without arithmetic that could overflow.
fn optional(value: Option<usize>) -> [u8; 9] {
    let mut bytes = [0u8; 9];
    if let Some(v) = value {
        bytes[0] = 1;
        bytes[1..].copy_from_slice(&(v as u64).to_le_bytes());
    }
    bytes
}

/// The outcome of one contract check.
pub type ContractOutcome = Result<ContractReport, Vec<ConfigIssue>>;

/// Hit/miss counters of a [`ContractCache`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContractCacheStats {
    /// Checks answered from the cache.
    pub hits: u64,
    /// Checks that ran.
    pub misses: u64,
}

/// Contract outcomes by [`Fingerprint`]: a check runs again only when an input changed.
/// Thread-safe and bounded.
///
/// Failed checks are kept too: the same inputs fail the same way. `auto_clamp` warnings are
/// logged when a check runs; a cached report still lists its clamps.
pub struct ContractCache {
    outcomes: Cache<Fingerprint, Arc<ContractOutcome>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl fmt::Debug for ContractCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContractCache").field("len", &self.outcomes.len()).field("stats", &self.stats()).finish()
    }
}

impl Default for ContractCache {
    fn default() -> Self {
        Self::new(Self::DEFAULT_ENTRIES)
    }
}

impl ContractCache {
    /// Outcomes kept by [`ContractCache::default`] (pipelines × configurations).
    pub const DEFAULT_ENTRIES: usize = 256;

    /// The process-wide cache that loading and validating pipelines use
    /// (`LoadedPipeline::load` (ctx-runtime),
    /// [`validate_definition`](crate::pipeline::validate_definition)), of
    /// [`Self::DEFAULT_ENTRIES`] outcomes.
    pub fn shared() -> &'static ContractCache {
        static SHARED: std::sync::OnceLock<ContractCache> = std::sync::OnceLock::new();
        SHARED.get_or_init(ContractCache::default)
    }

    /// A cache of at most `entries` outcomes.
    pub fn new(entries: usize) -> Self {
        ContractCache { outcomes: Cache::new(entries.max(1)), hits: AtomicU64::new(0), misses: AtomicU64::new(0) }
    }

    /// The outcome for `fingerprint`, running `check` only when it is not cached.
    pub fn get_or_check(
        &self,
        fingerprint: Fingerprint,
        check: impl FnOnce() -> ContractOutcome,
    ) -> Arc<ContractOutcome> {
        if let Some(found) = self.outcomes.get(&fingerprint) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return found;
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let outcome = Arc::new(check());
        self.outcomes.insert(fingerprint, Arc::clone(&outcome));
        outcome
    }

    /// Hit/miss counters since creation.
    pub fn stats(&self) -> ContractCacheStats {
        ContractCacheStats { hits: self.hits.load(Ordering::Relaxed), misses: self.misses.load(Ordering::Relaxed) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    #[test]
    fn extreme_limits_fingerprint_without_overflow_and_stay_distinct() {
        // `usize::MAX + 1` used to overflow here (a panic in debug builds).
        let model =
            |max_tokens| ModelConfig { model: None, context_window: 8192, max_tokens, encoding: Encoding::Cl100kBase };
        let print = |max_tokens| FingerprintBuilder::new().model(&model(max_tokens)).finish();
        let all = [print(None), print(Some(0)), print(Some(usize::MAX))];
        assert!(all[0] != all[1] && all[1] != all[2] && all[0] != all[2]);
    }
}
